"""Start-up cost of the command line: `askopt --help` and `askopt solve` on a small problem, end to end.

Targets (issue 18): `askopt --help` <= 0.4 s, `askopt solve` (small problem) <= 0.8 s. Each command runs as a
fresh subprocess `--repeats` times (median reported; the first solve run also warms numba's on-disk cache, so
it is reported apart). Beside the end-to-end times the run prints:
  * the bare interpreter (`python -c pass`): what any command pays before askopt's first import (site
    packages' .pth hooks included);
  * which heavy modules each command imports and their cumulative import time (`python -X importtime`).

    .venv/bin/python benchmarks/bench_startup.py [--repeats 5] [--cpu] [--no-check] [--json PATH]

Wall and CPU time (user + sys) are both printed; `--cpu` checks the targets on CPU time, the figure that
carries over to an idle machine when the machine is shared (these commands are single-threaded). Exit status 1
when a target is missed, unless --no-check. Timings depend on machine load: run twice.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"help": 0.4, "solve": 0.8}
HEAVY = ("scipy.stats", "pandas", "numba", "openai", "ray", "torch", "matplotlib", "pyarrow", "pydantic",
         "inventory.kernel", "highspy")
SMALL = {
    "time_horizon": "30 days", "demand_type": "random", "demand_distribution": "poisson(4)",
    "perishability": "non_perishable", "state_transition_model": "lost_sale", "holding_cost": 0.5,
    "penalty_cost": 3, "setup_cost": 2, "lead_time": 1, "max_inventory": 30, "max_order": 15,
    "risk_tolerance": 0,
}


def _run(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds user + sys) of one fresh process."""
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr[-500:]}")
    return dt, ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime


def _imports(argv: list[str]) -> dict[str, float]:
    """Cumulative import seconds of the heavy modules a command loads (python -X importtime)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", *argv[1:]], cwd=ROOT, capture_output=True, text=True)
    out: dict[str, float] = {}
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or line.count("|") < 2:
            continue
        _, cum, name = line.split("|", 2)
        name = name.strip()
        if name in HEAVY and name not in out:
            try:
                out[name] = int(cum.strip()) / 1e6
            except ValueError:
                continue
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--cpu", action="store_true",
                    help="check the targets against CPU time (user + sys) instead of wall time: on a shared, loaded "
                    "machine that is the figure an idle machine would show for these single-threaded commands")
    ap.add_argument("--json", default=None, help="write the figures here")
    args = ap.parse_args(argv)

    py = sys.executable
    tmp = Path(tempfile.mkdtemp(prefix="bench_startup_"))
    params = tmp / "small.json"
    params.write_text(json.dumps(SMALL))
    commands = {
        "python": [py, "-c", "pass"],
        "help": [py, "-m", "experiments.cli", "--help"],
        "solve": [py, "-m", "experiments.cli", "solve", str(params), "--json", "--replications", "200",
                  "--out", str(tmp / "out")],
    }
    first_solve = _run(commands["solve"])[0]  # compiles into numba's cache if this environment never ran it
    runs = {name: [_run(cmd) for _ in range(args.repeats)] for name, cmd in commands.items()}
    wall = {name: [w for w, _ in rs] for name, rs in runs.items()}
    cpu = {name: [c for _, c in rs] for name, rs in runs.items()}
    times = cpu if args.cpu else wall
    med = {name: statistics.median(ts) for name, ts in times.items()}
    cpu_med = {name: statistics.median(ts) for name, ts in cpu.items()}
    wall_med = {name: statistics.median(ts) for name, ts in wall.items()}
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    print(f"askopt start-up, {args.repeats} runs each (median; min..max), load average {load:.1f} "
          f"on {os.cpu_count()} CPUs; targets checked on {'CPU' if args.cpu else 'wall'} time")
    print(f"  {'python -c pass':<16}{med['python']:7.3f} s   ({min(times['python']):.3f}..{max(times['python']):.3f})"
          "   the interpreter alone (site .pth hooks included)")
    result = {"load": load, "first_solve_s": first_solve, "median_s": med, "wall_median_s": wall_med,
              "cpu_median_s": cpu_med, "runs_wall_s": wall, "runs_cpu_s": cpu, "targets_s": TARGETS,
              "checked_on": "cpu" if args.cpu else "wall"}
    missed = []
    for name in ("help", "solve"):
        ratio = med[name] / TARGETS[name]
        ok = ratio <= 1.0
        missed += [] if ok else [name]
        print(f"  {'askopt ' + name:<16}{med[name]:7.3f} s   ({min(times[name]):.3f}..{max(times[name]):.3f})"
              f"   target {TARGETS[name]} s: ratio {ratio:.2f} {'ok' if ok else 'MISSED'}; "
              f"{med[name] - med['python']:.3f} s above the bare interpreter; wall {wall_med[name]:.3f} s, "
              f"CPU {cpu_med[name]:.3f} s")
        result[f"ratio_{name}"] = ratio
    print(f"  first solve in this environment (numba cache cold if never run): {first_solve:.3f} s")
    for name in ("help", "solve"):
        imp = _imports(commands[name])
        result[f"imports_{name}"] = imp
        shown = ", ".join(f"{k} {v:.2f}s" for k, v in sorted(imp.items(), key=lambda kv: -kv[1])) or "none"
        print(f"  heavy imports of askopt {name}: {shown}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    if missed and not args.no_check:
        print(f"MISSED: {', '.join(missed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
