"""Extraction benchmark: offline extraction agent vs. the offline imitator, per persona preset, plus the
utterance corpora.

    .venv/bin/python benchmarks/bench_extraction.py [--dialogues 200] [--study-seed bench]

For each preset, `--dialogues` ground truths come from the study's problem generator (instance i of
`--study-seed`), the imitator plays each with seed i, and `run_hybrid_dialogue` runs to termination. It
prints per-field accuracy, mean accuracy, completion rate, dialogue length (agent turns) and clarifications,
then the field accuracy on the tuning corpus and on the dev set (extraction_holdout.jsonl: written after the
parser and held out at first, but its misses have since been used to improve it, so it is no longer unseen).
Everything is offline and deterministic.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.dialogue import run_hybrid_dialogue  # noqa: E402
from agents.extraction_eval import DEFAULT_CORPUS, evaluate_corpus  # noqa: E402
from agents.generator import generate_instance  # noqa: E402
from inventory.spec import PARAMETERS  # noqa: E402

DEV_SET = DEFAULT_CORPUS.with_name("extraction_holdout.jsonl")
SHORT = {"time_horizon": "T", "demand_type": "type", "demand_distribution": "demand", "perishability": "perish",
         "state_transition_model": "trans", "holding_cost": "h", "penalty_cost": "p", "setup_cost": "K",
         "lead_time": "L", "max_inventory": "Imax", "max_order": "qmax", "risk_tolerance": "risk"}


def run(presets: list[str], n: int, study_seed: str) -> list[dict]:
    instances = [generate_instance(study_seed, i) for i in range(n)]
    rows = []
    for preset in presets:
        t0 = time.perf_counter()
        results = [run_hybrid_dialogue(inst.problem, inst.context, preset, seed=i) for i, inst in enumerate(instances)]
        secs = time.perf_counter() - t0
        per_field = {f: sum(r.field_scores[f] for r in results) / n for f in PARAMETERS}
        turns = [r.turns for r in results]
        rows.append({
            "preset": preset, "n": n, "accuracy": statistics.mean(r.accuracy for r in results),
            "all_correct": sum(all(r.field_scores.values()) for r in results) / n,
            "complete": sum(r.status == "complete" for r in results) / n,
            "turns_mean": statistics.mean(turns), "turns_median": statistics.median(turns), "turns_max": max(turns),
            "clarifications": statistics.mean(r.clarifications for r in results),
            "ms_per_dialogue": 1000 * secs / n, "per_field": per_field})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dialogues", type=int, default=200)
    ap.add_argument("--study-seed", default="bench")
    ap.add_argument("--presets", default="expert,typical,vague")
    args = ap.parse_args(argv)
    rows = run(args.presets.split(","), args.dialogues, args.study_seed)
    print(f"# {args.dialogues} dialogues per preset, generator study seed {args.study_seed!r}, offline backend\n")
    print("| preset | field accuracy | all 12 correct | completed | turns mean / median / max | clarifications "
          "| ms/dialogue |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['preset']} | {r['accuracy']:.1%} | {r['all_correct']:.1%} | {r['complete']:.1%} | "
              f"{r['turns_mean']:.1f} / {r['turns_median']:.0f} / {r['turns_max']} | {r['clarifications']:.2f} | "
              f"{r['ms_per_dialogue']:.1f} |")
    print("\nper-field accuracy:\n")
    print("| preset | " + " | ".join(SHORT[f] for f in PARAMETERS) + " |")
    print("|---|" + "---|" * len(PARAMETERS))
    for r in rows:
        print(f"| {r['preset']} | " + " | ".join(f"{100 * r['per_field'][f]:.0f}" for f in PARAMETERS) + " |")
    for name, path in (("tuning corpus", DEFAULT_CORPUS), ("dev set", DEV_SET)):
        if path.exists():
            print(f"\n{name} ({path.name}): {evaluate_corpus(path).summary()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
