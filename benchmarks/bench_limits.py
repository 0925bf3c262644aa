"""Are `optimization.limits` estimates safe? Plausible /v1/solve problems of every size, priced, then solved.

Draws the same family of problems as `bench_fuzz_http.py`'s plausible bodies (horizon <= 400, capacity <= 3000,
lead time <= 10, replications <= 100, every method and objective), prices each with `limits.check`, and runs every
accepted one in a fresh child process exactly as the consultant's isolator does (`_solve_task`), measuring the
child's CPU seconds and peak RSS. Prints, per run, the estimate next to the measurement, and at the end the number
of accepted problems over 30 s of CPU or 2 GiB (targets: 0) and the worst measured/estimated ratio.

    .venv/bin/python benchmarks/bench_limits.py --n 60 --seed 0

Problems are drawn biased to the large end (half of them have an estimate above a quarter of the time limit),
because small problems cannot miss.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MAX_SECONDS = 30.0
MAX_RSS = 2 * 2**30


def draw(rng: np.random.Generator) -> dict:
    """One plausible /v1/solve body (the ranges of bench_fuzz_http's `plausible_solve`)."""
    kind = rng.integers(4)
    if kind == 0:
        dist = f"poisson({rng.uniform(0.01, 80):.3g})"
    elif kind == 1:
        dist = f"normal({rng.uniform(0, 60):.3g}, {rng.uniform(0.1, 30):.3g})"
    elif kind == 2:
        a = int(rng.integers(0, 41))
        dist = f"uniform({a}, {a + int(rng.integers(0, 41))})"
    else:
        xs = rng.integers(0, 61, size=int(rng.integers(1, 31)))
        dist = f"empirical([{', '.join(map(str, xs))}])"
    params = {
        "time_horizon": int(rng.integers(1, 401)), "demand_type": "random", "demand_distribution": dist,
        "perishability": "non_perishable", "state_transition_model": str(rng.choice(["lost_sale", "backlog"])),
        "holding_cost": float(rng.uniform(0, 20)), "penalty_cost": float(rng.uniform(0, 200)),
        "setup_cost": float(rng.uniform(0, 500)), "lead_time": int(rng.integers(0, 11)),
        "max_inventory": int(rng.integers(1, 3001)), "max_order": int(rng.integers(1, 1501)),
        "risk_tolerance": int(rng.choice([0, 1, 2])),
    }
    return {"params": params, "replications": int(rng.integers(2, 101)),
            "method": str(rng.choice(["ss", "dp", "all"])), "objective": str(rng.choice(["finite", "average"])),
            "seed": int(rng.integers(0, 2**32 - 1))}


def price(body: dict):
    """(problem, estimate) or (None, refusal text)."""
    from inventory.spec import ParameterTable
    from optimization.limits import Plan, ResourceLimitError, check
    from serving.consultant_app import SOLVE_METHODS

    try:
        problem = ParameterTable.from_json(body["params"]).to_problem()
    except Exception as exc:  # noqa: BLE001 - a 400 in the app: not this benchmark's concern
        return None, f"400 {exc}"
    try:
        est = check(problem, Plan(SOLVE_METHODS[body["method"]], body["replications"], 0, body["objective"]))
    except ResourceLimitError as exc:
        return None, f"422 {exc.field}"
    return problem, est


def _run(conn, body: dict) -> None:
    from inventory.spec import ParameterTable
    from serving.consultant_app import _solve_task

    problem = ParameterTable.from_json(body["params"]).to_problem()
    t0 = time.process_time()
    _solve_task(problem, body["method"], body["objective"], [], body["replications"], body["seed"])
    conn.send((time.process_time() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0))
    conn.close()


def measure(body: dict, timeout: float) -> tuple[float, float, bool]:
    """CPU seconds of the solve, peak RSS of the child, and whether it was stopped at the timeout.

    A stopped child reports nothing: its CPU and memory are NaN (forkserver children are not this process's
    children, so getrusage cannot see them), and it counts as over the time target."""
    ctx = mp.get_context("forkserver")
    parent, child = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_run, args=(child, body))
    p.start()
    child.close()
    cpu = rss = float("nan")
    stopped = not parent.poll(timeout)
    if stopped:
        p.kill()
    else:
        cpu, rss = parent.recv()
    p.join()
    return float(cpu), float(rss), stopped


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=60, help="accepted problems to solve")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pool", type=int, default=4000, help="problems drawn and priced to pick from")
    ap.add_argument("--timeout", type=float, default=90.0, help="stop a solve after this many wall seconds")
    ap.add_argument("--json", default=None, help="write every record here")
    args = ap.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    accepted, refused = [], 0
    for _ in range(args.pool):
        body = draw(rng)
        problem, est = price(body)
        if problem is None:
            refused += 1
            continue
        accepted.append((est.seconds, est.memory_bytes, body))
    accepted.sort(key=lambda x: -x[0])
    big = [a for a in accepted if a[0] > MAX_SECONDS / 4]
    half = args.n // 2
    chosen = big[:half] + [accepted[i] for i in rng.choice(len(accepted), size=args.n - min(half, len(big)),
                                                           replace=False)]
    print(f"priced {args.pool}: {refused} refused, {len(accepted)} accepted ({len(big)} estimated over "
          f"{MAX_SECONDS / 4:.1f} s); solving {len(chosen)}", flush=True)
    records = []
    for i, (est_s, est_b, body) in enumerate(chosen):
        cpu, rss, stopped = measure(body, args.timeout)
        rec = {"est_seconds": est_s, "est_bytes": est_b, "cpu_seconds": cpu, "peak_rss": rss,
               "stopped": stopped, **body}
        records.append(rec)
        p = body["params"]
        seen = f"stopped at {args.timeout:.0f} s wall" if stopped else f"cpu {cpu:6.1f} s {rss / 2**20:5.0f} MiB"
        print(f"[{i + 1}/{len(chosen)}] est {est_s:6.1f} s {est_b / 2**20:6.0f} MiB | {seen} | {body['method']:3} {body['objective']:7} T={p['time_horizon']}"
              f" L={p['lead_time']} cap={p['max_inventory']} {p['demand_distribution'][:24]}"
              f" K={p['setup_cost']:.0f} reps={body['replications']}", flush=True)
    over_t = [r for r in records if r["cpu_seconds"] > MAX_SECONDS or r["stopped"]]
    over_m = [r for r in records if r["peak_rss"] > MAX_RSS]
    done = [r for r in records if not r["stopped"]] or records
    worst = max(done, key=lambda r: r["cpu_seconds"] / max(r["est_seconds"], 0.5))
    print(f"accepted problems over {MAX_SECONDS:.0f} s CPU: {len(over_t)} of {len(records)} (target 0); "
          f"{len(records) - len(done)} stopped; slowest finished {max(r['cpu_seconds'] for r in done):.1f} s; worst measured/estimated "
          f"{worst['cpu_seconds'] / max(worst['est_seconds'], 0.5):.2f} (estimates floored at 0.5 s); "
          f"over 2 GiB RSS: {len(over_m)} (target 0), largest {max(r['peak_rss'] for r in done) / 2**20:.0f} MiB")
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=1))
    return 1 if over_t or over_m else 0


if __name__ == "__main__":
    sys.exit(main())
