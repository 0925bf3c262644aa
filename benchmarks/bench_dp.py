"""Exact DP against published optima, with solve times.

Zipkin (2008), "Old and new methods for lost-sales inventory systems", Operations Research 56(5): optimal
long-run average cost for Poisson(5) demand, h = 1, lost-sales penalty p, lead time L (no setup, no caps).
Prints our optimum, the published value, the difference and the seconds per solve.

Run: .venv/bin/python benchmarks/bench_dp.py
"""

from __future__ import annotations

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


def main() -> int:
    worst = 0.0
    print(f"{'L':>2} {'p':>3} {'askopt':>9} {'Zipkin':>7} {'diff':>7} {'states':>8} {'sec':>6}")
    for L, row in ZIPKIN.items():
        for p, published in row.items():
            prob = Problem(horizon=50, demand=Demand.poisson(5), lost_sales=True, holding_cost=1,
                           penalty_cost=p, setup_cost=0, lead_time=L, max_inventory=200, max_order=200)
            t0 = time.perf_counter()
            r = dp.solve(prob, objective="average")
            sec = time.perf_counter() - t0
            diff = r.optimal_cost - published
            worst = max(worst, abs(diff))
            print(f"{L:>2} {p:>3} {r.optimal_cost:9.4f} {published:7.2f} {diff:+7.4f} {r.states:>8} {sec:6.2f}")
    print(f"\nlargest |difference| {worst:.4f} (published values have 2 decimals: target <= 0.005, "
          f"ratio {worst / 0.005:.2f}); load {os.getloadavg()[0]:.2f}")
    return 0 if worst <= 0.005 else 1


if __name__ == "__main__":
    sys.exit(main())
