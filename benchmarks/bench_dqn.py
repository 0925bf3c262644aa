"""DQN speed/quality benchmark on lost-sales instances with lead times 1..4 (Poisson(5), h=1, p=9).

For each lead time: train the DQN (torch trainer by default, or RLlib) under a wall-clock budget, then score
the greedy DQN, the exact DP policy and the best base-stock level on the same fresh common random numbers.
Prints training seconds, DQN cost, DP optimum, best base-stock cost, the gap to the DP optimum and the ratio
to the targets (gap / 1 %, seconds / 60 s).

    .venv/bin/python benchmarks/bench_dqn.py                       # L = 1..4, torch trainer, 60 s budget
    .venv/bin/python benchmarks/bench_dqn.py --lead-times 2 --trainer rllib --steps 20000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inventory import dp  # noqa: E402
from inventory.demand import Demand  # noqa: E402
from inventory.montecarlo import demand_matrix, simulate  # noqa: E402
from inventory.policies import BaseStockPolicy, StatePolicy  # noqa: E402
from inventory.problem import Problem  # noqa: E402

TARGET_GAP_PCT = 1.0
TARGET_SECONDS = 60.0


def instance(L: int, horizon: int) -> Problem:
    return Problem(horizon=horizon, demand=Demand.poisson(5), lost_sales=True, holding_cost=1.0, penalty_cost=9.0,
                   setup_cost=0.0, lead_time=L, max_inventory=60, max_order=20)


def best_base_stock(problem: Problem, demands: np.ndarray) -> tuple[int, np.ndarray]:
    levels = np.arange(0, problem.max_inventory + 1)
    sim = simulate(problem, BaseStockPolicy(S=levels), demands, detailed=False)
    i = int(np.argmin(sim.cost.mean(axis=1)))
    return int(levels[i]), sim.cost[i]


def train(problem: Problem, args, base_stock_level: int):
    if args.trainer == "rllib":
        from rl.rllib_train import RLlibSettings, train_rllib_dqn

        s = RLlibSettings(total_steps=args.steps or 60_000, time_budget_s=args.seconds, seed=args.seed)
        return train_rllib_dqn(problem, settings=s)
    from rl.dqn_torch import DQNConfig, train_dqn

    cfg = DQNConfig(time_budget_s=args.seconds, seed=args.seed, targets=args.targets)
    if args.steps:
        cfg.total_steps = args.steps
    return train_dqn(problem, cfg, progress=args.progress, base_stock_level=base_stock_level)


def run_one(L: int, args) -> dict:
    problem = instance(L, args.horizon)
    t = time.perf_counter()
    sol = dp.solve(problem)
    dp_seconds = time.perf_counter() - t
    search_demands = demand_matrix(problem, 2000, seed=args.seed + 1)
    S_bs, _ = best_base_stock(problem, search_demands)
    trained = train(problem, args, S_bs)
    train_seconds = float(trained.info["seconds"])

    demands = demand_matrix(problem, args.replications, seed=args.seed + 999)  # fresh common random numbers
    dqn_cost = simulate(problem, trained.state_policy(), demands, detailed=False).cost[0]
    _, bs_cost = best_base_stock(problem, demands)  # best level re-picked on the scoring numbers (optimistic)
    row = {
        "lead_time": L,
        "horizon": problem.horizon,
        "trainer": trained.trainer,
        "train_seconds": round(train_seconds, 1),
        "steps": trained.info.get("steps"),
        "stop": trained.info.get("stop_reason"),
        "dqn_cost": float(dqn_cost.mean()),
        "dqn_stderr": float(dqn_cost.std(ddof=1) / math.sqrt(dqn_cost.size)),
        "base_stock_S": S_bs,
        "base_stock_cost": float(bs_cost.mean()),
        "dp_status": sol.status,
        "dp_seconds": round(dp_seconds, 1),
    }
    if sol.status == "solved":
        dp_sim = simulate(problem, StatePolicy(fn=sol.policy.fn), demands, detailed=False).cost[0]
        diff = dqn_cost - dp_sim  # paired: same demand paths
        row.update({
            "dp_optimum": float(sol.optimal_cost),
            "dp_policy_sim": float(dp_sim.mean()),
            "gap_pct": float((dqn_cost.mean() - sol.optimal_cost) / sol.optimal_cost * 100),
            "gap_paired_pct": float(diff.mean() / dp_sim.mean() * 100),
            "gap_paired_se_pct": float(diff.std(ddof=1) / math.sqrt(diff.size) / dp_sim.mean() * 100),
            "base_stock_gap_pct": float((bs_cost.mean() - sol.optimal_cost) / sol.optimal_cost * 100),
        })
    row["dqn_vs_base_stock_pct"] = float((dqn_cost.mean() / bs_cost.mean() - 1) * 100)
    row["gap_ratio"] = row.get("gap_pct", math.nan) / TARGET_GAP_PCT
    row["time_ratio"] = train_seconds / TARGET_SECONDS
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lead-times", type=int, nargs="+", default=[1, 2, 3, 4])
    ap.add_argument("--horizon", type=int, default=60)
    ap.add_argument("--seconds", type=float, default=TARGET_SECONDS, help="training wall-clock budget")
    ap.add_argument("--steps", type=int, default=0, help="environment step budget (0: trainer default)")
    ap.add_argument("--trainer", choices=("torch", "rllib"), default="torch")
    ap.add_argument("--targets", choices=("all_actions", "sampled"), default="all_actions",
                    help="torch trainer: counterfactual all-action targets or textbook sampled targets")
    ap.add_argument("--replications", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None, help="also write the rows as JSON")
    ap.add_argument("--progress", action="store_true")
    args = ap.parse_args(argv)

    load = os.getloadavg()
    print(f"# load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (cpus: {os.cpu_count()})")
    rows = []
    header = (f"{'L':>2} {'trainer':>8} {'train s':>8} {'steps':>8} {'DQN':>9} {'DP opt':>9} {'base-stk':>9} "
              f"{'gap %':>7} {'paired %':>12} {'bs gap %':>8} {'gap/1%':>7} {'s/60s':>6}")
    print(header)
    for L in args.lead_times:
        r = run_one(L, args)
        rows.append(r)
        paired = f"{r.get('gap_paired_pct', math.nan):.2f}±{r.get('gap_paired_se_pct', math.nan):.2f}"
        print(f"{L:>2} {r['trainer']:>8} {r['train_seconds']:>8.1f} {r['steps']:>8} {r['dqn_cost']:>9.2f} "
              f"{r.get('dp_optimum', math.nan):>9.2f} {r['base_stock_cost']:>9.2f} {r.get('gap_pct', math.nan):>7.2f} "
              f"{paired:>12} {r.get('base_stock_gap_pct', math.nan):>8.2f} {r['gap_ratio']:>7.2f} "
              f"{r['time_ratio']:>6.2f}", flush=True)
    load = os.getloadavg()
    print(f"# load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
