"""Study benchmarks: `askopt demo` wall time, 70 instances x 3 treatments, and 1- vs 2-CPU scaling.

Each measurement runs the real CLI in a fresh process (its own local Ray), so Ray start-up is included, as a
user would see it. The machine's load average is recorded before and after (shared machines skew timings).

    .venv/bin/python benchmarks/bench_study.py demo            # target: < 300 s
    .venv/bin/python benchmarks/bench_study.py full            # 70 instances x A,B,C, 1 trial; target: < 1800 s
    .venv/bin/python benchmarks/bench_study.py scaling   # 70 x 3 treatments x 3 trials on 1 and 2 CPUs
    .venv/bin/python benchmarks/bench_study.py scoring   # the 70 instances' scoring work, kernels vs numpy
    .venv/bin/python benchmarks/bench_study.py all

Prints one JSON object per measurement (and writes them to --json if given) and exits 1 when a target is
missed (demo < 300 s, full < 1800 s, scaling: 2 CPUs faster than 1), unless --no-check.
LLM fan-out (dialogues waiting on a model) is measured by benchmarks/bench_fanout.py.

`scoring` times the per-instance scoring work of the 70-instance study (`evaluation.scoring.score_outcomes`
with no units: the DP optimum, the oracle (s,S) search and its Monte Carlo score) in one process, once with
the compiled kernels and once pinned to the numpy references (ASKOPT_COMPILED=never), and prints the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASKOPT = str(Path(sys.executable).parent / "askopt")


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ, **(env or {})})
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return seconds, proc.stdout


def bench_demo(work: Path) -> dict:
    before = load()
    seconds, out = timed([ASKOPT, "demo", "--out", str(work / "demo"), "--fresh"])
    return {"bench": "demo", "seconds": round(seconds, 1), "target_s": 300, "load_before": before,
            "load_after": load(), "headline": [ln for ln in out.splitlines() if ln.startswith("A over")]}


def bench_study(work: Path, name: str, instances: int, cpus: int | None, trials: int = 1) -> dict:
    out = work / name
    shutil.rmtree(out, ignore_errors=True)
    cmd = [ASKOPT, "study", "--instances", str(instances), "--trials", str(trials), "--out", str(out),
           "--no-progress", "--no-dashboard"]
    if cpus:
        cmd += ["--num-cpus", str(cpus)]
    before = load()
    seconds, stdout = timed(cmd)
    return {"bench": name, "instances": instances, "trials": trials, "units": instances * 3 * trials,
            "cpus": cpus, "seconds": round(seconds, 1), "load_before": before, "load_after": load(),
            "summary": stdout.strip().splitlines()[0] if stdout.strip() else ""}


def scoring_seconds(instances: int) -> float:
    """The scoring work of `instances` study instances in this process (run as a child per mode)."""
    from agents.generator import generate_instances
    from evaluation.scoring import score_outcomes
    from evaluation.study import StudyConfig

    config = StudyConfig(instances=instances)
    todo = generate_instances(config.instances, config.seed_key, config.design)
    t0 = time.perf_counter()
    for instance in todo:
        score_outcomes(instance, [], config)
    return time.perf_counter() - t0


def bench_scoring(instances: int) -> dict:
    seconds = {}
    for mode in ("auto", "never"):
        _, out = timed([sys.executable, __file__, "scoring-child", "--full-instances", str(instances)],
                       env={"ASKOPT_COMPILED": mode})
        seconds[mode] = float(out.split()[-1])
    ratio = round(seconds["never"] / seconds["auto"], 2)
    return {"bench": "scoring", "instances": instances, "kernels_s": round(seconds["auto"], 1),
            "numpy_references_s": round(seconds["never"], 1), "speedup": ratio, "load_after": load()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("demo", "full", "scaling", "scoring", "all", "scoring-child"))
    ap.add_argument("--instances", type=int, default=70, help="instances for the scaling study")
    ap.add_argument("--trials", type=int, default=3, help="trials for the scaling study")
    ap.add_argument("--full-instances", type=int, default=70)
    ap.add_argument("--json", default=None, help="append results to this JSON-lines file")
    ap.add_argument("--keep", action="store_true", help="keep the run directories (printed)")
    ap.add_argument("--no-check", action="store_true", help="report only; exit 0 even on a missed target")
    args = ap.parse_args(argv)
    if args.what == "scoring-child":
        print(scoring_seconds(args.full_instances))
        return 0
    work = Path(tempfile.mkdtemp(prefix="bench_study_"))
    results = []
    if args.what in ("demo", "all"):
        r = bench_demo(work)
        r["ok"] = r["seconds"] < r["target_s"]
        results.append(r)
    if args.what in ("full", "all"):
        r = bench_study(work, "full", args.full_instances, cpus=2)
        r["target_s"] = 1800
        r["ok"] = r["seconds"] < r["target_s"]
        results.append(r)
    if args.what in ("scaling", "all"):
        one = bench_study(work, "scaling-1cpu", args.instances, cpus=1, trials=args.trials)
        two = bench_study(work, "scaling-2cpu", args.instances, cpus=2, trials=args.trials)
        ratio = round(one["seconds"] / two["seconds"], 2)
        results += [one, two, {"bench": "scaling", "instances": args.instances, "trials": args.trials,
                               "time_ratio_1cpu_over_2cpu": ratio, "target_ratio": "> 1", "ok": ratio > 1}]
    if args.what in ("scoring", "all"):
        results.append(bench_scoring(args.full_instances))
    for r in results:
        print(json.dumps(r))
    if args.json:
        with open(args.json, "a") as f:
            for r in results:
                f.write(json.dumps(r) + "\n")
    if args.keep:
        print(f"runs kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    missed = [r["bench"] for r in results if r.get("ok") is False]
    if missed:
        print(f"missed targets: {', '.join(missed)}", file=sys.stderr)
    return 1 if missed and not args.no_check else 0


if __name__ == "__main__":
    sys.exit(main())
