"""The `askopt` command line.

Each feature area owns a small module exposing `register(subparsers)`; this file only wires them, so
areas can grow without editing a shared file. Bad input exits with code 2 and a one-line error.

Start-up cost: `main` imports only the module that owns the command being run (`askopt solve` never loads
Ray, openai or the serving stack); `askopt --help` imports none and lists the commands from `COMMANDS`.
`tests/test_cli_solve.py` checks that table against what each module registers, so the two cannot drift.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# command -> (module that registers it, the one-line summary `askopt --help` shows)
COMMANDS: dict[str, tuple[str, str]] = {
    "solve": ("experiments.cli_solve",
              "best (s,S), exact DP optimum and policy comparison for a parameter table"),
    "optimize": ("experiments.cli_optimize",
                 "search (s,S), base-stock, exact DP and a DQN; score all by L(pi) and write deployment artifacts"),
    "consult": ("experiments.cli_dialogue",
                "chat with the consultant (extraction -> optimisation -> interpretation); offline unless an LLM "
                "is given"),
    "simulate": ("experiments.cli_dialogue",
                 "run the offline human imitator against the consultant and print the dialogue and the resulting "
                 "policy"),
    "study": ("experiments.cli_study", "run the A/B/C study (hybrid vs end-to-end consultants) on Ray"),
    "report": ("experiments.cli_study", "write the study report (markdown + plots) for a run directory"),
    "submit": ("experiments.cli_study", "submit a command (e.g. `askopt study ...`) as a Ray job"),
    "demo": ("experiments.cli_study", "the main job: paper examples + a small offline study + its report"),
    "bench": ("experiments.cli_ordebug", "run benchmarks"),
    "iis": ("experiments.cli_ordebug", "irreducible infeasible subsystem of a model"),
    "repair": ("experiments.cli_ordebug",
               "diagnose an infeasible LP/MIP and write the least-damaging repair and a short report"),
    "imitator": ("experiments.cli_imitator",
                 "the fine-tuned Human Imitator: corpus -> LoRA SFT -> fidelity metrics -> merged model -> serve"),
    "serve": ("experiments.cli_serve",
              "run a Ray Serve HTTP app (OpenAI-compatible imitator, consultant API, LLM emulator)"),
    "web": ("experiments.cli_web", "the consultant's web page (chat, policy plot, order form, downloads) on Ray Serve"),
    "keys": ("experiments.cli_keys", "create, list or revoke API keys (stored hashed in the sessions database)"),
    "sessions": ("experiments.cli_web", "export data-collection sessions as prompt-response JSONL for the imitator"),
}
# Modules that add sub-commands, in listing order; a missing one is skipped so partial installs still run.
COMMAND_MODULES = tuple(dict.fromkeys(module for module, _ in COMMANDS.values()))


class UserInputError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def _register(subparsers, name: str) -> bool:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            return False
        raise
    module.register(subparsers)
    return True


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The full parser (every module imported); with a known `command`, only the module that registers it; with
    an unknown or empty one, every command listed by name and summary from COMMANDS (`askopt --help`, and
    argparse's "invalid choice" message), no module imported."""
    parser = argparse.ArgumentParser(
        prog="askopt",
        description="LLM + operations-research decision support for inventory control.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    if command is None:
        for name in COMMAND_MODULES:
            _register(subparsers, name)
        return parser
    owner = COMMANDS[command][0] if command in COMMANDS else None
    if owner is not None and _register(subparsers, owner):
        return parser  # the other commands are not needed to run this one
    for name, (_module, summary) in COMMANDS.items():
        if name not in subparsers.choices:
            subparsers.add_parser(name, help=summary)
    return parser


def _command_of(argv: list[str]) -> str:
    """The sub-command named in argv ("" when none): the first word that is not an option."""
    for word in argv:
        if word == "--":
            return ""
        if not word.startswith("-"):
            return word
    return ""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_of(argv))
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 0
    try:
        return int(args.handler(args) or 0)
    except UserInputError as exc:
        print(f"askopt: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # validation errors from the domain core name the field
        print(f"askopt: error: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"askopt: error: file not found: {exc.filename or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
