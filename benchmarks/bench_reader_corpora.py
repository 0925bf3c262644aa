"""Leave-one-corpus-out for the offline reader: each writer corpus read by a learned reader fitted without it.

    .venv/bin/python benchmarks/bench_reader_corpora.py [--corpora a,b,c]

The writer corpora (agents/data/reader_train/extraction_train_*.jsonl, advice_train_*.jsonl) were written by
sessions that never saw the code; the rules were fixed on them, so this is an estimate between a dev figure and a
blind one (the blind sets in tests/data/heldout_v* are the real test). Prints, per corpus, the rules alone and the
rules with the learned reader (fields right, invented values), the advice parser's score, and the totals.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents import extraction_rules as rules  # noqa: E402
from agents.extraction_eval import evaluate_heldout  # noqa: E402
from agents.extraction_learned import TRAIN_DIR, LearnedReader  # noqa: E402
from agents.policy_parser_eval import evaluate_advice  # noqa: E402
from evaluation.progress import progress_bar  # noqa: E402

ADVICE_DIR = TRAIN_DIR.parent / "advice_train"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default="", help="letters of the corpora to leave out in turn (default: all)")
    args = ap.parse_args(argv)
    corpora = sorted(TRAIN_DIR.glob("extraction_train_*.jsonl"))
    if args.corpora:
        wanted = {f"extraction_train_{c.strip()}.jsonl" for c in args.corpora.split(",")}
        unknown = wanted - {p.name for p in corpora}
        if unknown:
            print(f"corpora: {', '.join(sorted(unknown))} not found; allowed: "
                  f"{', '.join(p.stem[-1] for p in corpora)}", file=sys.stderr)
            return 2
        corpora = [p for p in corpora if p.name in wanted]
    every = sorted(TRAIN_DIR.glob("*.jsonl"))
    total = {"rules": [0, 0, 0], "learned": [0, 0, 0], "advice": [0, 0]}
    print("| corpus | messages | rules alone | with the learned reader | advice |")
    print("|---|---|---|---|---|")
    bar = progress_bar(len(corpora), desc="corpora (one fit each)")
    try:
        for path in corpora:
            rules.use_learned_reader(None)
            alone = evaluate_heldout(path)
            rules.use_learned_reader(LearnedReader.fit([p for p in every if p != path]))
            learned = evaluate_heldout(path)
            advice_path = ADVICE_DIR / path.name.replace("extraction_", "advice_")
            advice = evaluate_advice(advice_path) if advice_path.exists() else None
            for key, r in (("rules", alone), ("learned", learned)):
                total[key][0] += r.expected_right + r.ask_right
                total[key][1] += r.fields
                total[key][2] += r.invented
            advice_cell = "-"
            if advice is not None:
                total["advice"][0] += advice.right
                total["advice"][1] += advice.texts
                advice_cell = f"{advice.accuracy:.1%} ({advice.right}/{advice.texts})"
            print(f"| {path.stem[-1].upper()} | {alone.utterances} | {alone.accuracy:.1%}, {alone.invented} invented | "
                  f"{learned.accuracy:.1%}, {learned.invented} invented | {advice_cell} |", flush=True)
            bar.update()
    finally:
        bar.close()
        rules._learned_override.clear()
    for key in ("rules", "learned"):
        right, fields, invented = total[key]
        print(f"{key}: {right}/{fields} = {right / fields:.1%} of fields right, {invented} invented")
    right, n = total["advice"]
    if n:
        print(f"advice: {right}/{n} = {right / n:.1%} (tuned on these: not an estimate)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
