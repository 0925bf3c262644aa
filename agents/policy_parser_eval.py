"""Scoring advice texts against labels in the held-out format (`{"text", "policy": {"type", ...}}`).

One rule for every advice set: the blind held-out sets (benchmarks/bench_parser.py --heldout) and the dev set
written for issue 10 (tests/data/advice_dev_issue10.jsonl) are scored by the same `heldout_ok`, so a dev figure
and a held-out figure mean the same thing.

    .venv/bin/python -m agents.policy_parser_eval tests/data/advice_dev_issue10.jsonl [-v]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from agents.policy_parser import ParsedPolicy, parse_policy

__all__ = ["AdviceReport", "evaluate_advice", "heldout_ok"]


def heldout_ok(expected: dict, p: ParsedPolicy) -> tuple[bool, str]:
    """(right, why not) for one advice text labelled by the held-out conventions (PROCEDURE.md).

    `type` none -> "unparseable", infeasible -> "infeasible", otherwise status ok with the same kind and
    parameters (the reorder point compared as written, `ParsedPolicy.stated_s`; periodic: `every_days` = T; a
    periodic rule with every_days 1 may come out as "constant"); `basis` is checked when given; for a `range` on
    `range_field` the parser must pick a value inside the range and record the choice in its reason.
    """
    kind = expected["type"]
    if kind == "none":
        return p.status == "unparseable", f"expected no policy, got {p.status} {p.label()}"
    if kind == "infeasible":
        return p.status == "infeasible", f"expected infeasible, got {p.status} {p.label()} ({p.reason})"
    if p.status != "ok":
        return False, f"expected {kind}, got {p.status}: {p.reason}"
    got = dict(p.params)
    if p.stated_s is not None:  # the set records the reorder point as written, without our strict-trigger shift
        got["s" if "s" in got else "R"] = p.stated_s
        if "R" in got:
            got["s"] = got.pop("R")
    want = {k: expected[k] for k in ("s", "S", "Q") if k in expected}
    if kind == "periodic":
        want["T"] = expected["every_days"]
        if p.kind == "constant" and expected["every_days"] == 1:
            got = {"T": 1, "Q": got.get("q")}
        elif p.kind != "periodic":
            return False, f"expected periodic, got {p.label()}"
    elif kind == "sq":
        if p.kind != "sq":
            return False, f"expected sq, got {p.label()}"
        got = {"s": got.get("s"), "Q": got.get("Q")}
    elif p.kind != kind:
        return False, f"expected {kind}, got {p.label()}"
    got.pop("cap", None)
    if "range" in expected:
        field_, (lo, hi) = expected["range_field"], expected["range"]
        chosen = got.get(field_)
        if chosen is None or not lo <= chosen <= hi or "range" not in p.reason:
            return False, f"range {lo}-{hi} for {field_}: got {p.label()} ({p.reason or 'no choice recorded'})"
        want.pop(field_, None)
        got.pop(field_, None)
    for k, v in want.items():
        if got.get(k) != v:
            return False, f"expected {k}={v}, got {p.label()}"
    if "basis" in expected and p.basis != expected["basis"]:
        return False, f"expected basis {expected['basis']}, got {p.basis}"
    return True, ""


@dataclass
class AdviceReport:
    texts: int = 0
    right: int = 0
    misses: list[tuple[str, str]] = field(default_factory=list)  # (id, why)

    @property
    def accuracy(self) -> float:
        return self.right / self.texts if self.texts else 0.0

    def summary(self) -> str:
        return f"{self.texts} advice texts: policy right {self.accuracy:.1%} ({self.right}/{self.texts})"


def evaluate_advice(path: str | Path) -> AdviceReport:
    """Parse every text of a held-out-format advice file (capacity unknown to the parser) and score it."""
    report = AdviceReport()
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        good, why = heldout_ok(item["policy"], parse_policy(item["text"]))
        report.texts += 1
        report.right += good
        if not good:
            report.misses.append((item.get("id", "?"), why))
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", help="a JSONL file of {text, policy} lines (a dev set; never a blind set while tuning)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each miss (id and why)")
    args = ap.parse_args(argv)
    if not Path(args.path).is_file():
        print(f"path: {args.path} is not a file", file=sys.stderr)
        return 2
    report = evaluate_advice(args.path)
    print(report.summary())
    if args.verbose:
        for ident, why in report.misses:
            print(f"  miss {ident}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
