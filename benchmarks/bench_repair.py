"""`askopt repair` on models a modeller might bring: how often it repairs, how, how fast, and (where the
intended model is known) whether the proposed repair keeps the objective and the constraints.

* wild: the 29 NETLIB infeasible models as published (no injected error, several have more than one
  conflict): repaired count, conflicts broken per model, the chosen repair's class and FP, seconds.
* netlib / synthetic: sabotaged models whose original optimum is known: the share of proposals with
  OP >= 0.99 and FP >= 0.95 ("rational", as in the benchmark), and whether the proposal edits the
  sabotaged element. These splits are the heuristic's development data, not the frozen held-out split.

Usage: .venv/bin/python benchmarks/bench_repair.py [--splits wild,netlib] [--out results/ordebug-bench]
       [--limit N] [--json FILE]
Needs ../shared/data (or ASKOPT_SHARED_DATA).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd  # noqa: E402

from experiments.ordebug_run import build_split  # noqa: E402
from ordebug.env import EpisodeLog  # noqa: E402
from ordebug.metrics import fidelity  # noqa: E402
from ordebug.progress import Progress  # noqa: E402
from ordebug.repair import repair_model  # noqa: E402
from ordebug.solver import solve  # noqa: E402


def run_split(split: str, out: str, limit: int | None) -> pd.DataFrame:
    insts = build_split(split, out, limit=limit)
    rows = []
    bar = Progress(len(insts), f"askopt repair on {split}")
    for inst in insts:
        t0 = time.perf_counter()
        try:
            report, fixed = repair_model(inst.model, reference_objective=inst.original_objective)
        except Exception as exc:  # noqa: BLE001 - one model's failure is a row, the sweep goes on
            rows.append({"split": split, "instance": inst.instance_id, "rows": inst.model.num_rows,
                         "status": f"error: {type(exc).__name__}: {exc}", "seconds": time.perf_counter() - t0})
            bar.update(1)
            continue
        chosen = report.chosen
        rows.append({
            "split": split, "instance": inst.instance_id, "rows": inst.model.num_rows, "status": report.status,
            "conflicts_broken_first": len(report.earlier), "kind": chosen.kind if chosen else None,
            "label": chosen.label if chosen else None, "FP": chosen.constraints_kept if chosen else None,
            "FP_vs_original": benchmark_fp(inst, fixed, chosen) if chosen and inst.original is not None else None,
            "OP": chosen.objective_preservation if chosen else None,
            "hits_root": bool(chosen and set(inst.root) & ({chosen.element} | set(chosen.changed))) if inst.root else None,
            "solver_calls": report.solver_calls, "seconds": round(time.perf_counter() - t0, 3)})
        bar.update(1)
    bar.close()
    return pd.DataFrame(rows)


def benchmark_fp(inst, fixed, chosen) -> float | None:
    """The benchmark's FP (docs/ordebug.md): judged against the model before the error, which the repair
    tool never sees (its own FP can only compare with the model it was given)."""
    res = solve(fixed)
    if not res.optimal:
        return None
    log = EpisodeLog(inst.instance_id, final_x=res.x, final_edited={el: [] for el in chosen.changed},
                     final_dropped=set(chosen.dropped))
    return fidelity(inst, log)[0]


def summarise(df: pd.DataFrame) -> dict:
    rep = df[df.status == "repaired"]
    out = {"n": len(df), "repaired": len(rep), "multi_conflict": int((rep.conflicts_broken_first > 0).sum()),
           "kinds": rep.kind.value_counts().to_dict(), "FP_mean": round(float(rep.FP.mean()), 3) if len(rep) else None,
           "seconds_median": float(df.seconds.median()), "seconds_max": float(df.seconds.max())}
    if df.OP.notna().any():
        ok = (rep.OP >= 0.99) & (rep.FP_vs_original >= 0.95)
        out.update(FP_vs_original_mean=round(float(rep.FP_vs_original.mean()), 3), rational=round(float(ok.sum() / len(df)), 3), hits_root=round(float(rep.hits_root.mean()), 3))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--splits", default="wild,netlib", type=lambda v: [x for x in v.split(",") if x])
    ap.add_argument("--out", default="results/ordebug-bench", help="instance cache folder (shared with bench_ordebug)")
    ap.add_argument("--limit", type=int, default=None, help="first N instances per split")
    ap.add_argument("--json", default=None, help="also write the summaries to this JSON file")
    args = ap.parse_args(argv)
    summaries = {}
    for split in args.splits:
        df = run_split(split, args.out, args.limit)
        Path(args.out).mkdir(parents=True, exist_ok=True)
        df.to_parquet(Path(args.out) / f"repair_{split}.parquet")
        summaries[split] = summarise(df)
        print(f"\n{split}:")
        print(df.drop(columns=["split"]).to_string(index=False))
        print(json.dumps(summaries[split]))
    if args.json:
        Path(args.json).write_text(json.dumps(summaries, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
