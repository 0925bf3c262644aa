"""Fuzz the command line: >= 10,000 generated inputs across the commands this area owns (solve, optimize, study,
report, demo), counting tracebacks and inputs over the resource limits (targets: 0 and 0).

Inputs are mutations of a valid call: a parameter file with one field replaced by a hostile value (negative
money in every spelling, NaN/inf/1e999, huge and tiny numbers, nested objects, long text, bad demand
strings), a corrupt file (deep nesting, binary, truncated, oversize, a directory, /dev/zero, missing), option
values (negative, zero, huge, non-numeric, duplicates) and --out targets (an existing file, a path under a
file, an unwritable directory).

How they run:
  * in process, `experiments.cli.main(argv)`, in worker processes (fork) with resource guards: CPU seconds
    per input (> 30 s counts as over the limit; CPU rather than wall time so a loaded machine does not
    count), a hard 120 s wall-clock stop, and the worker's peak RSS after each input (> 2 GiB is over);
  * inputs that pass validation are handed to the service: the service call is recorded instead of run
    (the property is the validation), except every `--full-every`-th accepted `solve`, which really runs
    (limits.check has priced it first) under the same guards;
  * a sample (`--subprocess-sample`) of the refused inputs and accepted solves as real
    `python -m experiments.cli` subprocesses under the same limits: no "Traceback" on stderr, exit 0 or 2.

    .venv/bin/python benchmarks/bench_fuzz.py [--n 10000] [--workers 2] [--subprocess-sample 30] [--no-check]

Exit status 1 when a traceback or an over-limit input was seen, unless --no-check.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MAX_SECONDS = 30.0  # CPU seconds per input (user + sys): the same figure on an idle and on a loaded machine
WALL_STOP = 120.0  # hard per-input stop (wall clock), counted as over the limit
MAX_RSS_BYTES = 2 * 2**30
BASE = {
    "time_horizon": "30 days", "demand_type": "random", "demand_distribution": "poisson(4)",
    "perishability": "non_perishable", "state_transition_model": "lost_sale", "holding_cost": 0.5,
    "penalty_cost": 3, "setup_cost": 2, "lead_time": 1, "max_inventory": 30, "max_order": 15,
    "risk_tolerance": 0,
}
HOSTILE_VALUES = [
    "-$5", "\u22125", "minus 5", "(5)", "($5)", "$-5", "negative 5", "\uff0d5", "1e999", "-1e999", "nan", "NaN",
    "inf", "Infinity", 1e300, -1e300, 1e-300, 10**30, 2**63, -(2**63), 0, -1, 1.5, True, None, "", " ", "x" * 10_000,
    "\x00", "\ud7ff" * 50, "5 weeks", "1e9 days", "3-5", "five", {"a": {"b": 5}}, [1, 2, 3], [[1]], {"value": "-5"},
    "poisson(3e9)", "poisson(1e999)", "poisson(nan)", "normal(1e308, 1e308)", "uniform(0,1e12)", "uniform(5,1)",
    "empirical([1e999])", "empirical([nan])", "empirical(/dev/zero)", "empirical(/etc/shadow)", "empirical([])",
    "weibull(2)", "poisson(", "poisson()", "poisson(1,2,3)", "x" + " " * 50_000 + "y", "empirical([" + "1," * 5000 + "1])",
    "lost sale", "backlog", "perishable", "random", "deterministic", 1e9, 1e10, 3650, 3651, 100000, 365,
]
OPTION_VALUES = ["nan", "inf", "-inf", "1e999", "-1", "0", "1", "2", "3", "100", "2000", "100000", "1000000000",
                 "99999999999999999999999", "", "x", "1.5", "A,A", "A,B", "A,Z", "a,b,c", "Z", "all", "ss", "dp",
                 "average", "finite", "torch", "rllib", "ss:5,20", "bs:9", "bs:99999999999999999999", "ss:9",
                 "mixed", "typical", "nobody", "random", "paper-cells"]
COMMAND_OPTIONS = {
    "solve": ["--replications", "--seed", "--evaluate", "--objective", "--method"],
    "optimize": ["--replications", "--seed", "--dqn-steps", "--dqn-seconds", "--trainer"],
    "study": ["--instances", "--trials", "--seed", "--treatments", "--replications", "--max-turns", "--num-cpus",
              "--units-per-task", "--persona", "--design", "--name"],
    "report": [],
    "demo": ["--instances", "--trials", "--num-cpus"],
}


class Accepted(Exception):
    """Raised where the service would start: the input passed every check."""


def make_files(tmp: Path, rng: random.Random, k: int) -> Path:
    """A parameter file: the valid base with hostile fields, or a corrupt file."""
    kind = rng.random()
    path = tmp / f"p{k}.json"
    if kind < 0.55:
        data = dict(BASE)
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            data[rng.choice(list(BASE) + ["horizon", "h", "capacity", "colour", "Holding Cost"])] = rng.choice(HOSTILE_VALUES)
        path.write_text(json.dumps(data))
    elif kind < 0.65:
        path = tmp / f"p{k}.csv"
        rows = ["Parameter,Value,Unit,Status"]
        for name, value in BASE.items():
            if rng.random() < 0.2:
                value = rng.choice(HOSTILE_VALUES)
            status = rng.choice(["defined"] * 8 + ["conflict", "undefined", "weird", ""])
            rows.append(f"{name},\"{value}\",,{status}")
        path.write_text("\n".join(rows) + "\n")
    elif kind < 0.70:
        path.write_text(json.dumps(BASE))  # valid: the accepted path
    else:
        corrupt = rng.choice(["deep", "deepobj", "binary", "truncated", "empty", "list", "huge", "nul", "bom", "nanjson"])
        text = {
            "deep": "[" * 50_000 + "]" * 50_000,
            "deepobj": '{"a":' * 50_000 + "1" + "}" * 50_000,
            "binary": None,
            "truncated": json.dumps(BASE)[: rng.randint(1, 100)],
            "empty": "",
            "list": json.dumps([BASE]),
            "huge": json.dumps({**BASE, "pad": "x" * (2 * 2**20)}),
            "nul": "Parameter,Value\x00\nholding_cost,1\n",
            "bom": "\ufeff" + json.dumps(BASE),
            "nanjson": json.dumps({**BASE, "holding_cost": float("nan"), "penalty_cost": float("inf")}),
        }[corrupt]
        if text is None:
            path.write_bytes(bytes(rng.randrange(256) for _ in range(200)))
        else:
            path.write_text(text)
    return path


def make_argv(tmp: Path, rng: random.Random, k: int) -> list[str]:
    command = rng.choices(list(COMMAND_OPTIONS), weights=(45, 20, 20, 10, 5))[0]
    argv = [command]
    if command in ("solve", "optimize"):
        target = rng.random()
        argv.append(str(make_files(tmp, rng, k)) if target < 0.9 else rng.choice(
            [str(tmp), "/dev/zero", str(tmp / "missing.json"), "/proc/self/mem", ""]))
    if command == "report":
        run = tmp / f"run{k}"
        run.mkdir()
        choice = rng.choice(["noconfig", "badjson", "deep", "wrongtype", "dupes", "empty_units", "missing", "dirconfig"])
        if choice == "noconfig":
            (run / "config.json").write_text(json.dumps({"instances": 3}))
        elif choice == "badjson":
            (run / "config.json").write_text("{not json")
        elif choice == "deep":
            (run / "config.json").write_text("[" * 50_000 + "]" * 50_000)
        elif choice == "wrongtype":
            (run / "config.json").write_text(json.dumps({"config": {"treatments": 5, "instances": "x"}}))
        elif choice == "dupes":
            (run / "config.json").write_text(json.dumps({"config": {"treatments": ["A", "A"]}}))
        elif choice == "empty_units":
            (run / "config.json").write_text(json.dumps({"config": {"instances": 2}}))
        elif choice == "dirconfig":
            (run / "config.json").mkdir()
        argv.append(str(run) if choice != "missing" else str(tmp / "nope"))
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        opts = COMMAND_OPTIONS[command]
        if opts:
            argv += [rng.choice(opts), rng.choice(OPTION_VALUES)]
    if command != "report":
        out = rng.random()
        if out < 0.8:
            argv += ["--out", str(tmp / f"out{k}")]
        elif out < 0.9:
            argv += ["--out", str(tmp / "afile")]
        else:
            argv += ["--out", rng.choice([str(tmp / "afile" / "sub"), "/proc/askopt_fuzz", ""])]
    if rng.random() < 0.02:
        argv.append(rng.choice(["--bogus", "--json", "-h"]))
    return argv


def _install_stubs(full_every: int, counter: dict) -> None:
    """Service calls raise Accepted, except every full_every-th accepted solve, which runs for real."""
    import evaluation.runner
    import experiments.demo
    import optimization.service
    import optimization.solve

    real_solve = optimization.solve.solve_problem

    def solve(*a, **k):
        counter["accepted_solve"] = counter.get("accepted_solve", 0) + 1
        if full_every and counter["accepted_solve"] % full_every == 0:
            counter["full_runs"] = counter.get("full_runs", 0) + 1
            return real_solve(*a, **k)
        raise Accepted

    def stop(*a, **k):
        raise Accepted

    optimization.solve.solve_problem = solve
    optimization.service.OptimizationAgent.run = stop
    evaluation.runner.run_study = stop
    experiments.demo.run_demo = stop


def _alarm(signum, frame):
    raise TimeoutError("over the per-input time limit")


def run_chunk(argvs: list[list[str]], full_every: int, result_path: str) -> None:
    """Worker: run each argv in process under the guards; write one JSON record per input."""
    import contextlib
    import io
    import traceback

    from experiments.cli import main

    counter: dict = {}
    _install_stubs(full_every, counter)
    signal.signal(signal.SIGALRM, _alarm)
    with open(result_path, "w") as out:
        for argv in argvs:
            err, sink = io.StringIO(), io.StringIO()
            t0 = time.perf_counter()
            ru0 = resource.getrusage(resource.RUSAGE_SELF)
            rec = {"argv": [a[:80] for a in argv]}
            signal.setitimer(signal.ITIMER_REAL, WALL_STOP)
            try:
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(sink):
                    code = main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 2
            except Accepted:
                code = "accepted"
            except TimeoutError:
                code = "timeout"
            except BaseException as exc:  # noqa: BLE001 - the thing being counted
                code = "traceback"
                rec["exception"] = f"{type(exc).__name__}: {str(exc)[:200]}"
                rec["where"] = traceback.format_exc().splitlines()[-3:]
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            rec["code"] = code
            ru1 = resource.getrusage(resource.RUSAGE_SELF)
            rec["seconds"] = round(time.perf_counter() - t0, 4)
            rec["cpu"] = round(ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime, 4)
            rec["peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            rec["stderr"] = err.getvalue()[-300:]
            rec["full"] = counter.get("full_runs", 0)
            out.write(json.dumps(rec) + "\n")
            out.flush()


def run_subprocess_sample(argvs: list[list[str]]) -> list[dict]:
    out = []
    for argv in argvs:
        t0 = time.perf_counter()
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            proc = subprocess.run([sys.executable, "-m", "experiments.cli", *argv], cwd=ROOT, capture_output=True,
                                  text=True, timeout=WALL_STOP)
            code, err = proc.returncode, proc.stderr
        except subprocess.TimeoutExpired:
            code, err = "timeout", ""
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        peak = ru1.ru_maxrss * 1024
        cpu = ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime
        out.append({"argv": [a[:80] for a in argv], "code": code, "seconds": round(time.perf_counter() - t0, 3),
                    "cpu": round(cpu, 3),
                    "traceback": "Traceback" in err, "peak_rss_children": peak, "stderr": err[-300:]})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="generated inputs run in process")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--full-every", type=int, default=20, help="every Nth accepted solve really runs (0: none)")
    ap.add_argument("--subprocess-sample", type=int, default=30)
    ap.add_argument("--json", default=None, help="write the records here")
    ap.add_argument("--no-check", action="store_true")
    args = ap.parse_args(argv)

    rng = random.Random(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="bench_fuzz_"))
    (tmp / "afile").write_text("x")
    t0 = time.perf_counter()
    argvs = [make_argv(tmp, rng, k) for k in range(args.n)]
    gen_s = time.perf_counter() - t0
    chunks = [argvs[i:: args.workers] for i in range(args.workers)]
    pids, paths = [], []
    t0 = time.perf_counter()
    for i, chunk in enumerate(chunks):
        path = str(tmp / f"result{i}.jsonl")
        paths.append(path)
        pid = os.fork()
        if pid == 0:
            try:
                run_chunk(chunk, args.full_every, path)
            finally:
                os._exit(0)
        pids.append(pid)
    died = 0
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        died += int(os.waitstatus_to_exitcode(status) != 0)
    wall = time.perf_counter() - t0
    per_worker = [[json.loads(line) for line in open(p)] if os.path.exists(p) else [] for p in paths]
    records = [r for rs in per_worker for r in rs]
    lost = args.n - len(records)  # a worker killed (e.g. by the OOM killer) loses the rest of its chunk

    # the sample re-runs refused inputs and accepted solves as real processes (an accepted study, demo or
    # optimize is a legitimate long job, not a malformed input)
    pool = [r["argv"] for r in records if r["code"] == 2 or (r["code"] == "accepted" and r["argv"][0] == "solve")]
    sample = run_subprocess_sample(rng.sample(pool, min(args.subprocess_sample, len(pool))))

    from collections import Counter

    by_cmd = Counter(r["argv"][0] if r["argv"] else "" for r in records)
    codes = Counter(str(r["code"]) for r in records)
    tracebacks = [r for r in records if r["code"] == "traceback"]
    bad_codes = [r for r in records if r["code"] not in (0, 2, "accepted", "traceback", "timeout")]
    slow = [r for r in records if r["code"] == "timeout" or r["cpu"] > MAX_SECONDS]
    heavy = [r for r in records if r["peak_rss"] > MAX_RSS_BYTES]
    multi_line = [r for r in records if r["code"] == 2 and r["stderr"].startswith("askopt: error:")
                  and r["stderr"].count("\n") != 1]
    sub_tb = [s for s in sample if s["traceback"] or s["code"] not in (0, 2)]
    sub_over = [s for s in sample if s["code"] == "timeout" or s["cpu"] > MAX_SECONDS
                or s["peak_rss_children"] > MAX_RSS_BYTES]
    full = sum(rs[-1]["full"] for rs in per_worker if rs)  # each worker counts its own real runs
    print(f"bench_fuzz: {len(records)} inputs in process ({gen_s:.1f} s to generate, {wall:.1f} s to run on "
          f"{args.workers} workers, load {os.getloadavg()[0]:.1f}), {len(sample)} as subprocesses")
    print(f"  by command: {dict(by_cmd)}")
    print(f"  outcomes: {dict(codes)}  (accepted = validated and handed to the service; 0 = ran; 2 = refused)")
    print(f"  accepted solves run for real: {full} (every {args.full_every}th)")
    print(f"  slowest input {max((r['cpu'] for r in records), default=0):.2f} s CPU "
          f"({max((r['seconds'] for r in records), default=0):.2f} s wall); worker peak RSS "
          f"{max((r['peak_rss'] for r in records), default=0) / 2**20:.0f} MiB; subprocess peak RSS "
          f"{max((s['peak_rss_children'] for s in sample), default=0) / 2**20:.0f} MiB; slowest subprocess "
          f"{max((s['seconds'] for s in sample if isinstance(s['seconds'], float)), default=0):.1f} s")
    print(f"  tracebacks: {len(tracebacks)} in process, {len(sub_tb)} in subprocesses (target 0)")
    print(f"  over {MAX_SECONDS:.0f} CPU s ({WALL_STOP:.0f} s wall) or {MAX_RSS_BYTES / 2**30:.0f} GiB: {len(slow) + len(heavy) + len(sub_over)} "
          f"(target 0); unexpected exit codes: {len(bad_codes)}; multi-line errors: {len(multi_line)}; "
          f"inputs lost to a dead worker: {lost}")
    for r in (tracebacks + bad_codes + slow + heavy + multi_line)[:10]:
        print(f"    {r['code']}: {' '.join(r['argv'])[:160]} :: {r.get('exception') or r['stderr'][:160]}")
    for s in (sub_tb + sub_over)[:5]:
        print(f"    subprocess {s['code']}: {' '.join(s['argv'])[:160]} :: {s['stderr'][-160:]}")
    if args.json:
        Path(args.json).write_text(json.dumps({"records": records, "sample": sample}, default=str))
    failures = len(tracebacks) + len(bad_codes) + len(slow) + len(heavy) + len(sub_tb) + len(sub_over) + lost \
        + len(multi_line) + died
    if failures and not args.no_check:
        print(f"FAILED: {failures} inputs broke a target", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
