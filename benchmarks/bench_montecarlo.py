"""Monte Carlo throughput: the compiled kernel against the numpy reference, on the same demand.

Instance (issue 18): (s,S) = (24, 64), lost sales, Poisson(8) demand, T = 365, R = 10,000 replications
(3.65 M period-replications), L = 2, h = 0.5, b = 2.8, K = 3, caps 80 / 40. Both engines run on one demand
matrix; the per-replication costs must be identical. Each timing is the best of `--repeats` runs (wall
clock; the CPU time of that run is printed beside it, since this machine is shared).

Also measured: the kernel freshly compiled in a child process with an empty numba cache (NUMBA_CACHE_DIR
set to a new folder), since a process that compiles the kernel must run it as fast as one that loads it
from the cache (numba 0.68 did not inline calls across separately compiled functions in the process that
compiled them: 5x slower, until the kernel's helpers were inlined at numba's IR level). Also: the sampling of that demand matrix (numpy's `Generator.poisson`, stream v1, against the
inverse-CDF table of `inventory.sampling`, stream v2), a 2-thread kernel run, and the first-call latency of
the kernel in this process (numba loads the compiled code from its on-disk cache, or compiles it).

Target: kernel (one thread, cached and freshly compiled) >= 10x the numpy reference's throughput. Exits 1 if missed (or if the costs
differ) unless --no-check.

Run: .venv/bin/python benchmarks/bench_montecarlo.py [--replications 10000] [--repeats 5] [--no-check]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from inventory.demand import Demand  # noqa: E402
from inventory.montecarlo import demand_matrix, simulate, simulate_reference  # noqa: E402
from inventory.policies import SSPolicy  # noqa: E402
from inventory.problem import Problem  # noqa: E402

TARGET = 10.0


def best_of(fn, repeats: int):
    """(result, best wall seconds, CPU seconds of that run)."""
    best, cpu, out = float("inf"), 0.0, None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall = time.perf_counter() - t0
        if wall < best:
            best, cpu = wall, time.process_time() - c0
    return out, best, cpu


def instance():
    p = Problem(horizon=365, demand=Demand.poisson(8), lost_sales=True, holding_cost=0.5, penalty_cost=2.8,
                setup_cost=3, lead_time=2, max_inventory=80, max_order=40)
    return p, SSPolicy(s=24, S=64)


def fresh_kernel_seconds(replications: int, repeats: int) -> float:
    """Best kernel seconds in a child process that compiles the kernel itself (empty numba cache)."""
    with tempfile.TemporaryDirectory() as cache:
        out = subprocess.run([sys.executable, __file__, "--kernel-only", "--replications", str(replications),
                              "--repeats", str(repeats)], env={**os.environ, "NUMBA_CACHE_DIR": cache},
                             capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replications", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-check", action="store_true", help="report only; never fail on the target")
    ap.add_argument("--kernel-only", action="store_true", help="print only the best kernel seconds (used for the "
                    "freshly compiled child)")
    args = ap.parse_args(argv)
    if args.kernel_only:
        p, pol = instance()
        D = demand_matrix(p, args.replications, seed=1)
        simulate(p, pol, D[:2], detailed=False, backend="numba")  # compile (or load) outside the timing
        print(best_of(lambda: simulate(p, pol, D, detailed=False, backend="numba"), args.repeats)[1])
        return 0

    p, pol = instance()
    R, T = args.replications, p.horizon
    cells = R * T

    t0 = time.perf_counter()
    D = demand_matrix(p, R, seed=1)
    first_sample = time.perf_counter() - t0
    t0 = time.perf_counter()
    simulate(p, pol, D[:2])
    first_kernel = time.perf_counter() - t0

    _, t_v1, _ = best_of(lambda: np.random.default_rng(1).poisson(8.0, size=(R, T)), args.repeats)
    _, t_v2, _ = best_of(lambda: demand_matrix(p, R, seed=1), args.repeats)
    ref, t_ref, c_ref = best_of(lambda: simulate_reference(p, pol, D, detailed=False), max(1, args.repeats // 2))
    ker, t_ker, c_ker = best_of(lambda: simulate(p, pol, D, detailed=False, backend="numba"), args.repeats)
    t_fresh = fresh_kernel_seconds(args.replications, args.repeats)
    par, t_par, c_par = best_of(lambda: simulate(p, pol, D, detailed=False, threads=2), args.repeats)

    identical = bool(np.array_equal(ref.cost, ker.cost) and np.array_equal(ref.cost, par.cost))
    ratio = t_ref / t_ker
    print(f"instance: (s,S)=(24,64), lost sales, Poisson(8), T={T}, R={R:,} ({cells / 1e6:.2f} M period-replications)")
    print(f"{'engine':<34}{'seconds':>9}{'cpu s':>8}{'M cells/s':>11}")
    for name, t, c in (("numpy reference (simulate_reference)", t_ref, c_ref), ("numba kernel, 1 thread", t_ker, c_ker),
                       ("numba kernel, 2 threads", t_par, c_par),
                       ("numba kernel, 1 thread, fresh compile", t_fresh, float("nan"))):
        print(f"{name:<34}{t:9.4f}{c:8.3f}{cells / t / 1e6:11.1f}")
    print(f"sampling the demand matrix: Generator.poisson {t_v1:.4f} s ({t_v1 / cells * 1e9:.1f} ns/draw), "
          f"inverse-CDF table {t_v2:.4f} s ({t_v2 / cells * 1e9:.1f} ns/draw, uniforms included)")
    print(f"first call in this process: demand_matrix {first_sample:.3f} s, kernel {first_kernel:.3f} s "
          "(numba cache load or compile)")
    print(f"mean cost {ker.cost.mean():.2f}; per-replication costs identical across engines: {identical}")
    print(f"kernel / numpy reference throughput: {ratio:.1f}x (target >= {TARGET:.0f}x: ratio to target "
          f"{ratio / TARGET:.2f}); freshly compiled: {t_ref / t_fresh:.1f}x; 2 threads: {t_ref / t_par:.1f}x; "
          f"load {os.getloadavg()[0]:.2f}")
    ok = identical and min(ratio, t_ref / t_fresh) >= TARGET
    if not ok and not args.no_check:
        print("TARGET MISSED" if identical else "COSTS DIFFER")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
