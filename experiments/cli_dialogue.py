"""`askopt consult` (interactive chat with the whole system) and `askopt simulate` (imitator vs. the system).

Offline by default (rule-based extraction, template interpretation: stand-ins for the LLMs); pass
`--llm-base-url/--model` to use a chat model for both agents. `consult` reads stdin line by line, so it works
piped, and stops on EOF or "quit".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from llm.client import LLMClient, LLMError, add_llm_arguments, config_from_args

__all__ = ["register", "run_consult", "run_simulate"]

_QUIT = {"quit", "exit", ":q", "bye"}


def _user_error(message: str) -> Exception:
    from experiments.cli import UserInputError

    return UserInputError(message)


def register(subparsers: argparse._SubParsersAction) -> None:
    c = subparsers.add_parser("consult", help="chat with the consultant (extraction -> optimisation -> "
                                               "interpretation); offline unless an LLM is given")
    c.add_argument("--out", default="runs/consult", help="folder for extracted_params.csv, conversation_log.txt, "
                                                         "interpret.txt and the optimiser's artefacts")
    c.add_argument("--dqn", action="store_true", help="also train a DQN in the optimisation step (slow)")
    add_llm_arguments(c)
    c.set_defaults(handler=_consult_handler)

    s = subparsers.add_parser("simulate", help="run the offline human imitator against the consultant and print "
                                                "the dialogue and the resulting policy")
    s.add_argument("--persona", default="typical", help="imitator preset: expert, typical or vague")
    s.add_argument("--seed", type=int, default=0, help="imitator seed (its noise draws)")
    s.add_argument("--instance", type=int, default=0, help="generator instance index (the hidden ground truth)")
    s.add_argument("--max-turns", type=int, default=40)
    s.add_argument("--no-optimize", action="store_true", help="stop after extraction")
    s.add_argument("--out", default=None, help="optional folder for the artefacts")
    add_llm_arguments(s)
    s.set_defaults(handler=_simulate_handler)


def _client(args: argparse.Namespace) -> LLMClient | None:
    try:
        cfg = config_from_args(args)
    except ValueError as exc:
        raise _user_error(str(exc)) from None
    if not getattr(args, "llm_base_url", None) and not getattr(args, "llm_model", None):
        return None  # offline by default, whatever the environment says
    if not cfg.is_configured:
        raise _user_error("--model needs --llm-base-url or an API key (ASKOPT_LLM_API_KEY / OPENAI_API_KEY)")
    return LLMClient(cfg)


def _backends(client: LLMClient | None):
    if client is None:
        return None, None
    from agents.extraction_llm import LLMExtractor
    from agents.interpretation import LLMInterpreter

    return LLMExtractor(client), LLMInterpreter(client)


def _optimizer(dqn: bool):
    def run(problem, out_dir):
        from optimization.service import OptimizationAgent, OptimizationConfig

        cfg = OptimizationConfig(dqn=dqn, replications=500, search_replications=200,
                                 write_artifacts=out_dir is not None)
        return OptimizationAgent(cfg).run(problem, out_dir=out_dir)

    return run


def run_consult(stdin: TextIO, stdout: TextIO, out_dir: str | Path | None = "runs/consult", dqn: bool = False,
                client: LLMClient | None = None, optimize=None) -> int:
    """The interactive loop (separated from argparse so tests can drive it with any text streams)."""
    from agents.dialogue import Consultant
    from agents.interpretation import InterpretationAgent

    extractor, interp_backend = _backends(client)
    consultant = Consultant(
        extractor=extractor,
        interpreter_factory=lambda result: InterpretationAgent(result, backend=interp_backend),
        optimize=optimize or _optimizer(dqn), out_dir=out_dir,
        on_status=lambda msg: print(f"consultant> {msg}\n(optimising...)", file=stdout, flush=True))

    def say(text: str) -> None:
        print(f"consultant> {text}", file=stdout, flush=True)

    say(consultant.start())
    for raw in stdin:
        line = raw.strip()
        if line.lower() in _QUIT:
            break
        print(f"you> {line}", file=stdout) if not stdin.isatty() else None
        try:
            say(consultant.send(line))  # an empty or unreadable line gets a polite re-ask from the agents
        except LLMError as exc:
            print(f"askopt: LLM error: {exc}", file=sys.stderr)
            return 1
        except Exception as exc:  # never a traceback in front of the manager: the turn is dropped, the chat goes on
            say(f"Sorry, I couldn't process that ({type(exc).__name__}: {exc}). Could you put it differently?")
        if consultant.interpreter is not None and consultant.interpreter.finished:
            break
    if out_dir is not None and consultant.stage == "extraction" and consultant.extraction.transcript:
        consultant.extraction.save(out_dir)  # keep the partial interview too
    say("Goodbye.")
    return 0


def _consult_handler(args: argparse.Namespace) -> int:
    return run_consult(sys.stdin, sys.stdout, out_dir=args.out, dqn=args.dqn, client=_client(args))


def run_simulate(persona: str, seed: int, instance: int, max_turns: int, optimize: bool, out_dir: str | None,
                 client: LLMClient | None, stdout: TextIO) -> int:
    from agents.dialogue import run_hybrid_dialogue
    from agents.generator import generate_instance
    from agents.imitator import PERSONAS
    from agents.interpretation import InterpretationAgent

    if persona not in PERSONAS:
        raise _user_error(f"--persona: {persona!r} is not allowed; allowed: {', '.join(PERSONAS)}")
    if max_turns < 1:
        raise _user_error(f"--max-turns: {max_turns} is not allowed; must be >= 1")
    if instance < 0:
        raise _user_error(f"--instance: {instance} is not allowed; must be >= 0")
    inst = generate_instance(0, instance)
    extractor, interp_backend = _backends(client)
    result = run_hybrid_dialogue(inst.problem, inst.context, persona, seed, extractor=extractor,
                                 max_turns=max_turns)
    for who, text in result.transcript:
        print(f"{'consultant' if who == 'agent' else 'manager'}> {text}", file=stdout)
    wrong = [k for k, ok in result.field_scores.items() if not ok]
    print(f"\n[status={result.status} turns={result.turns} field accuracy={result.accuracy:.0%}"
          + (f" wrong={','.join(wrong)}" if wrong else "") + "]", file=stdout)
    if out_dir:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        result.table.to_csv(Path(out_dir) / "extracted_params.csv")
        (Path(out_dir) / "conversation_log.txt").write_text(
            "".join(f"{w.upper()}: {t}\n\n" for w, t in result.transcript), encoding="utf-8")
    if result.problem is None or not optimize:
        return 0 if result.status == "complete" else 1
    opt = _optimizer(False)(result.problem, Path(out_dir) if out_dir else None)
    agent = InterpretationAgent(opt, backend=interp_backend)
    print(f"\nconsultant> {agent.start()}", file=stdout)
    if out_dir:
        agent.save(out_dir)
    return 0


def _simulate_handler(args: argparse.Namespace) -> int:
    return run_simulate(args.persona, args.seed, args.instance, args.max_turns, not args.no_optimize, args.out,
                        _client(args), sys.stdout)
