"""Dialogue drivers: imitator <-> extraction agent (for studies and benchmarks) and the full consultant.

`run_hybrid_dialogue` is what the study runs hundreds of times on Ray: a pure function of (ground truth,
context, persona, seed, extractor) that interviews the imitator to termination and scores the table field by
field, without optimisation (the study optimises separately). `Consultant` chains the three agents for the
interactive CLI: extraction -> optimisation -> interpretation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.extraction import ACTION_TERMINATE, ExtractionAgent, ExtractionBackend
from agents.imitator.persona import HumanImitator
from agents.imitator.profile import PersonaProfile
from agents.imitator.scoring import score_extraction
from inventory.problem import ParameterError, Problem
from inventory.spec import ParameterTable

__all__ = ["Consultant", "DialogueResult", "run_hybrid_dialogue"]


@dataclass
class DialogueResult:
    table: ParameterTable
    problem: Problem | None
    status: str  # "complete" | "max_turns" | "failed"
    reason: str
    turns: int  # agent messages after the opening (questions + clarifications + the final summary)
    transcript: list[tuple[str, str]] = field(default_factory=list)  # ("agent" | "user", text)
    field_scores: dict[str, bool] = field(default_factory=dict)
    clarifications: int = 0

    @property
    def accuracy(self) -> float:
        return sum(self.field_scores.values()) / len(self.field_scores) if self.field_scores else 0.0


def run_hybrid_dialogue(ground_truth: Problem, context: str, persona: str | PersonaProfile, seed: int,
                        extractor: ExtractionBackend | None = None, max_turns: int = 40,
                        confirm: bool = True, imitator=None) -> DialogueResult:
    """Imitator <-> extraction agent until TERMINATE, `max_turns` agent turns, or an error (status "failed").

    `extractor` is a backend (default: the offline rules); an LLM backend's `LLMError` ends the dialogue as
    "failed" with the error as reason rather than raising, so one bad episode does not sink a study.
    `confirm` keeps the read-back before TERMINATE (the imitator checks it against its truth).
    `imitator`: who plays the manager (anything with `opening()` / `reply(text)`, e.g. an
    `LLMHumanImitator.at_endpoint`); default the offline persona simulator for `persona` and `seed`.
    """
    if max_turns < 1:
        raise ValueError(f"max_turns must be >= 1, got {max_turns}")
    if imitator is None:
        imitator = HumanImitator(ground_truth, context, persona, seed)
    agent = ExtractionAgent(extractor, confirm=confirm)
    agent.start()
    message = imitator.opening()
    status, reason, turns, clar = "max_turns", f"no termination within {max_turns} turns", 0, 0
    try:
        while turns < max_turns:
            turn = agent.step(message)
            turns += 1
            if turn.action == ACTION_TERMINATE:
                status, reason = "complete", "all parameters defined and consistent"
                break
            clar += turn.action == "ASK_CLARIFICATION"
            message = imitator.reply(turn.message)
    except Exception as exc:  # an LLM outage or a backend bug: record it, keep the study going
        status, reason = "failed", f"{type(exc).__name__}: {exc}"
    problem = None
    if status == "complete":
        try:
            problem = agent.table.to_problem()
        except ParameterError as exc:  # cannot happen for a terminated agent; recorded, never hidden
            status, reason = "failed", str(exc)
    return DialogueResult(table=agent.table, problem=problem, status=status, reason=reason, turns=turns,
                          transcript=list(agent.transcript), field_scores=score_extraction(agent.table, ground_truth),
                          clarifications=clar)


class Consultant:
    """The whole system for one manager: interview, optimise, then explain and answer questions.

    `send(text)` returns the system's reply; `stage` moves extraction -> interpretation. `optimize` is a
    callable `(problem, out_dir) -> OptimizationResult` (default: the Optimization Agent without DQN, so the
    CLI answers in seconds); artefacts go to `out_dir`.
    """

    def __init__(self, extractor: ExtractionBackend | None = None, interpreter_factory: Callable[[Any], Any] | None
                 = None, optimize: Callable[[Problem, Path | None], Any] | None = None,
                 out_dir: str | Path | None = None, on_status: Callable[[str], None] | None = None) -> None:
        from agents.interpretation import InterpretationAgent

        self.extraction = ExtractionAgent(extractor)
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self._interpreter_factory = interpreter_factory or (lambda result: InterpretationAgent(result))
        self._optimize = optimize or _default_optimize
        self._on_status = on_status or (lambda _msg: None)
        self.interpreter: Any = None
        self.result: Any = None
        self.stage = "extraction"

    def start(self) -> str:
        return self.extraction.start().message

    def send(self, text: str) -> str:
        if self.stage == "extraction":
            turn = self.extraction.step(text)
            if turn.action != ACTION_TERMINATE:
                return turn.message
            problem = self.extraction.problem()
            if self.out_dir is not None:
                self.extraction.save(self.out_dir)
            self._on_status(turn.message)
            self.result = self._optimize(problem, self.out_dir)
            self.interpreter = self._interpreter_factory(self.result)
            if getattr(self.interpreter, "optimize", False) is None:  # what-if questions re-run the same service
                self.interpreter.optimize = lambda p: self._optimize(p, None)
            self.stage = "interpretation"
            return self.interpreter.start()
        from agents.extraction_guard import check_message
        from agents.interpretation import ensure_closing

        refusal = check_message(text)
        if refusal is not None:  # never a traceback, never a changed state: a polite re-ask
            return ensure_closing(f"{refusal} You can ask how much to order today, why the levels are what they "
                                  f"are, or 'what if' a number changes.")
        reply = self.interpreter.ask(text)
        if self.out_dir is not None:
            self.interpreter.save(self.out_dir)
        return reply

    def transcript(self) -> list[tuple[str, str]]:
        out = list(self.extraction.transcript)
        if self.interpreter is not None:
            out.extend(self.interpreter.transcript)
        return out


def _default_optimize(problem: Problem, out_dir: Path | None):
    from optimization.service import OptimizationAgent, OptimizationConfig

    cfg = OptimizationConfig(dqn=False, replications=500, search_replications=200,
                             write_artifacts=out_dir is not None)
    return OptimizationAgent(cfg).run(problem, out_dir=out_dir)
