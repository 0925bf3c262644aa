"""Exact DP against published optima, with solve times.

Zipkin (2008), "Old and new methods for lost-sales inventory systems", Operations Research 56(5): optimal
long-run average cost for Poisson(5) demand, h = 1, lost-sales penalty p, lead time L (no setup, no caps).
Prints our optimum, the published value, the difference and the seconds per solve (best of --repeats,
wall clock, with the CPU seconds of that run: the machine is shared).

Targets (issue 18, issue 11): every |difference| <= 0.005 (the published values have 2 decimals); the
slowest L = 3 solve <= 0.030 s and the slowest L = 4 solve <= 1.5 s. Each is printed as a ratio (measured /
target, <= 1 is met); the run exits 1 on a missed target unless --no-check.

Run: .venv/bin/python benchmarks/bench_dp.py [--repeats 2] [--no-check]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from inventory import dp  # noqa: E402
from inventory.demand import Demand  # noqa: E402
from inventory.problem import Problem  # noqa: E402

ZIPKIN = {
    1: {4: 4.04, 9: 5.44, 19: 6.68, 39: 7.84},
    2: {4: 4.40, 9: 6.09, 19: 7.66, 39: 9.11},
    3: {4: 4.60, 9: 6.53, 19: 8.36, 39: 10.04},
    4: {4: 4.73, 9: 6.84, 19: 8.89, 39: 10.79},
}


TIME_TARGETS = {3: 0.030, 4: 1.5}  # seconds, slowest solve of that lead time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="exact DP against Zipkin (2008)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--no-check", action="store_true", help="report only; never fail on a target")
    args = ap.parse_args(argv)
    worst = 0.0
    slowest: dict[int, float] = {}
    print(f"{'L':>2} {'p':>3} {'askopt':>9} {'Zipkin':>7} {'diff':>7} {'states':>8} {'sec':>7} {'cpu':>6} status")
    for L, row in ZIPKIN.items():
        for p, published in row.items():
            prob = Problem(horizon=50, demand=Demand.poisson(5), lost_sales=True, holding_cost=1,
                           penalty_cost=p, setup_cost=0, lead_time=L, max_inventory=200, max_order=200)
            sec, cpu = float("inf"), 0.0
            for _ in range(args.repeats):
                t0, c0 = time.perf_counter(), time.process_time()
                r = dp.solve(prob, objective="average")
                if time.perf_counter() - t0 < sec:
                    sec, cpu = time.perf_counter() - t0, time.process_time() - c0
            slowest[L] = max(slowest.get(L, 0.0), sec)
            diff = r.optimal_cost - published
            worst = max(worst, abs(diff))
            print(f"{L:>2} {p:>3} {r.optimal_cost:9.4f} {published:7.2f} {diff:+7.4f} {r.states:>8} {sec:7.3f} "
                  f"{cpu:6.3f} {r.status}")
    ok = worst <= 0.005
    print(f"\nlargest |difference| {worst:.4f} (target <= 0.005: ratio {worst / 0.005:.2f})")
    for L, target in TIME_TARGETS.items():
        ratio = slowest[L] / target
        ok &= ratio <= 1
        print(f"slowest L = {L} solve {slowest[L]:.3f} s (target <= {target} s: ratio {ratio:.2f})")
    print(f"load {os.getloadavg()[0]:.2f}")
    if not ok and not args.no_check:
        print("TARGET MISSED")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
