"""Field-level accuracy of the offline reader on the hand-written utterance corpus.

The corpus (tests/data/extraction_corpus.jsonl) holds manager utterances written independently of the
imitator's templates, each with the question it answers and the table updates it should produce. Flags
(`_unknown`, `_clarify` = demand_period / ambiguous / contradiction / demand_spread, `_penalty_per_day`, `_correction`,
`_invalid`) count as fields too, so "it asked for a clarification when it should" is scored like a value.
Spurious fields count as errors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from agents.extraction_rules import ParseResult, parse_utterance
from agents.imitator.scoring import values_match
from inventory.problem import ParameterError
from inventory.spec import normalise_value

__all__ = ["CorpusReport", "DEFAULT_CORPUS", "evaluate_corpus", "parsed_fields"]

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "extraction_corpus.jsonl"


@dataclass
class CorpusReport:
    utterances: int = 0
    fields: int = 0  # expected fields + spurious ones
    correct: int = 0
    spurious: int = 0
    per_field: dict[str, list[int]] = field(default_factory=dict)  # name -> [correct, total]
    failures: list[dict] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return self.correct / self.fields if self.fields else 0.0

    def summary(self) -> str:
        return (f"corpus: {self.utterances} utterances, {self.fields} fields, field accuracy "
                f"{self.accuracy:.1%} ({self.correct}/{self.fields}, {self.spurious} spurious)")


def parsed_fields(result: ParseResult) -> dict[str, object]:
    """The parse as comparable fields: normalised values plus the flags the agent acts on."""
    out: dict[str, object] = {}
    invalid = []
    for name, value in result.values.items():
        try:
            normalise_value(name, value)
            out[name] = value
        except ParameterError:
            invalid.append(name)
    if invalid:
        out["_invalid"] = sorted(invalid)
    if result.unknown:
        out["_unknown"] = True
    if result.demand_period is not None:
        out["_clarify"] = "demand_period"
    elif result.ambiguous:
        out["_clarify"] = "ambiguous"
    elif result.conflicts:
        out["_clarify"] = "contradiction"
    elif result.demand_mean is not None:
        out["_clarify"] = "demand_spread"
    if result.penalty_per_day:
        out["_penalty_per_day"] = True
    if result.correction:
        out["_correction"] = True
    return out


def _match(name: str, got, expected) -> bool:
    if name.startswith("_"):
        return got == expected
    return values_match(name, got, expected)


def evaluate_corpus(path: str | Path = DEFAULT_CORPUS) -> CorpusReport:
    report = CorpusReport()
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        got = parsed_fields(parse_utterance(item["utterance"], item.get("question_context")))
        expected = item["expected"]
        report.utterances += 1
        bad: dict[str, tuple] = {}
        for name, value in expected.items():
            ok = _match(name, got.get(name), value)
            stats = report.per_field.setdefault(name, [0, 0])
            stats[0] += ok
            stats[1] += 1
            report.fields += 1
            report.correct += ok
            if not ok:
                bad[name] = (got.get(name), value)
        for name in got:
            if name not in expected:
                report.spurious += 1
                report.fields += 1
                bad[name] = (got[name], None)
        if bad:
            report.failures.append({"utterance": item["utterance"], "context": item.get("question_context"),
                                    "wrong": {k: {"got": g, "expected": e} for k, (g, e) in bad.items()}})
    return report
