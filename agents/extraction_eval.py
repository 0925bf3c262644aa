"""Field-level accuracy of the offline reader on the hand-written utterance corpus.

The corpus (agents/data/reader_train/extraction_corpus.jsonl) holds manager utterances written independently of the
imitator's templates, each with the question it answers and the table updates it should produce. Flags
(`_unknown`, `_clarify` = demand_period / ambiguous / contradiction / demand_spread, `_penalty_per_day`, `_correction`,
`_invalid`) count as fields too, so "it asked for a clarification when it should" is scored like a value.
Spurious fields count as errors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from agents.extraction_guard import check_message
from agents.extraction_rules import ParseResult, parse_utterance
from agents.imitator.scoring import values_match
from inventory.problem import ParameterError
from inventory.spec import normalise_value

__all__ = ["CorpusReport", "DEFAULT_CORPUS", "HeldoutReport", "evaluate_corpus", "evaluate_heldout", "parsed_fields",
           "reader", "verify_checksums"]

DEFAULT_CORPUS = Path(__file__).resolve().parent / "data" / "reader_train" / "extraction_corpus.jsonl"


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


def reader(backend=None):
    """`read(text, context) -> ParseResult`: the offline rules, or any extraction backend (e.g. the LLM one,
    through an OpenAI-compatible endpoint) asked through a fresh agent whose open question is `context`."""
    def read(text: str, context: str | None) -> ParseResult:
        # the agent refuses what it cannot trust (empty, too long, not English) before any reader sees it, and a
        # refused message changes nothing: score what the agent stores, not what a reader would have guessed
        if check_message(text) is not None:
            return ParseResult()
        if backend is None:
            return parse_utterance(text, context)
        from agents.extraction import ExtractionAgent

        agent = ExtractionAgent(backend)
        agent.asking = context
        agent.transcript.append(("user", text))
        return backend.propose(agent, text)

    return read


def evaluate_corpus(path: str | Path = DEFAULT_CORPUS, backend=None) -> CorpusReport:
    report = CorpusReport()
    read = reader(backend)
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        got = parsed_fields(read(item["utterance"], item.get("question_context")))
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


@dataclass
class HeldoutReport:
    """Blind held-out scoring: expected fields right, fields that must be asked back, values nobody said."""

    utterances: int = 0
    expected: int = 0  # fields with a stated value
    expected_right: int = 0
    ask: int = 0  # fields the text leaves unsure: must not be stored
    ask_right: int = 0
    invented: int = 0  # fields stored that the text does not state
    failures: list[dict] = field(default_factory=list)

    @property
    def fields(self) -> int:
        return self.expected + self.ask

    @property
    def accuracy(self) -> float:
        return (self.expected_right + self.ask_right) / self.fields if self.fields else 0.0

    def summary(self) -> str:
        return (f"{self.utterances} utterances: fields right {self.accuracy:.1%} "
                f"({self.expected_right + self.ask_right}/{self.fields}; stated {self.expected_right}/"
                f"{self.expected}, asked back {self.ask_right}/{self.ask}), invented values {self.invented}")


def exact_match(name: str, got, expected) -> bool:
    """The held-out set's rule: the same canonical value, numbers within 1e-6 relative (no imitator tolerance)."""
    if got is None:
        return False
    try:
        g, t = normalise_value(name, got), normalise_value(name, expected)
    except (ParameterError, ValueError):
        return False
    close = lambda a, b: abs(float(a) - float(b)) <= 1e-6 * max(1.0, abs(float(b)))  # noqa: E731
    if name == "demand_distribution":
        return g.kind == t.kind and close(g.mean_param, t.mean_param) and close(g.sd_param, t.sd_param) \
            and g.low == t.low and g.high == t.high
    if isinstance(t, int | float) and not isinstance(t, bool):
        return close(g, t)
    return g == t


def evaluate_heldout(path: str | Path, backend=None) -> HeldoutReport:
    """Score `{"text", "fields": {name: value}, "ask": [name, ...]}` lines, read with no open question.

    A stated field is right when the reader proposes the same value (`exact_match`: 1e-6 relative, as the set's
    PROCEDURE.md asks); an `ask` field is right when the reader stores no value for it (it is asked back); any
    other stored field is an invented value.
    """
    report = HeldoutReport()
    read = reader(backend)
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        result = read(item["text"], item.get("question_context"))
        stored = dict(result.values)
        expected, ask = item.get("fields", {}), list(item.get("ask", []))
        report.utterances += 1
        bad: dict[str, object] = {}
        for name, value in expected.items():
            ok = exact_match(name, stored.get(name), value)
            report.expected += 1
            report.expected_right += ok
            if not ok:
                bad[name] = {"got": stored.get(name), "expected": value}
        for name in ask:
            ok = name not in stored
            report.ask += 1
            report.ask_right += ok
            if not ok:
                bad[name] = {"got": stored.get(name), "expected": "ask"}
        for name in stored:
            if name not in expected and name not in ask:
                report.invented += 1
                bad[name] = {"got": stored[name], "expected": None}
        if bad:
            report.failures.append({"id": item.get("id"), "wrong": bad})
    return report


def verify_checksums(folder: str | Path) -> dict[str, str]:
    """{file: sha256} after checking every line of the folder's SHA256SUMS; raises ValueError on a mismatch."""
    import hashlib

    folder = Path(folder)
    out = {}
    for line in (folder / "SHA256SUMS").read_text().splitlines():
        if not line.strip():
            continue
        digest, name = line.split()[0], line.split()[-1].lstrip("*")
        actual = hashlib.sha256((folder / name).read_bytes()).hexdigest()
        if actual != digest:
            raise ValueError(f"{name}: sha256 {actual} does not match SHA256SUMS ({digest}); the set changed")
        out[name] = digest
    return out


def main(argv: list[str] | None = None) -> int:
    """Score a held-out-format dev file (`{"text", "fields", "ask"}` lines) with the offline reader.

        .venv/bin/python -m agents.extraction_eval agents/data/reader_train/extraction_dev_issue10.jsonl [-v]

    Only for dev sets: a blind set is scored once, through benchmarks/bench_extraction.py --heldout.
    """
    import argparse
    import sys

    ap = argparse.ArgumentParser(description="score a held-out-format extraction dev file")
    ap.add_argument("path")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each wrong field (id, got, expected)")
    args = ap.parse_args(argv)
    if not Path(args.path).is_file():
        print(f"path: {args.path} is not a file", file=sys.stderr)
        return 2
    report = evaluate_heldout(args.path)
    print(report.summary())
    if args.verbose:
        for f in report.failures:
            print(f"  {f['id']}: {f['wrong']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
