"""DQN benchmark: the RLlib counterfactual learner against the DP optimum and against the torch trainer.

Three parts (issue 13's targets; each prints its measured ratio against the target):

quality   lost sales, Poisson(5), h=1, p=9 (the Zipkin cells p = 4, 9, 19, 39 with --penalties), L = 1..4:
          RLlib (counterfactual Learner) and the torch trainer, each under the same wall-clock budget on one
          core. Gap of the greedy policy to the exact DP optimum (10,000 fresh common random numbers), and the
          time each trainer's validation curve first comes within 1 % of the DP policy's cost on the same
          validation numbers. RLlib runs share one local Ray started before the first run; Ray start and the
          algorithm build ("setup s") are reported apart, not charged to the training budget. "gap %" is the
          shipped policy's: the network after rollout policy iteration (`rl.policy_iteration`, "pi s"), with its
          opening orders re-chosen by rollouts (`rl.opening`, "open s") and its order offsets after the opening
          (`rl.residual`, "resid s"), all of which both trainers run after training within the time budget;
          "net gap %" is the network as trained, alone. Targets: RLlib gap <= 0.5 %, RLlib train + searches
          seconds <= 60, RLlib time-to-1 % <= 1.5 x torch's (validation curves of the network as trained).
scaling   8 instances through `rl.tune_per_instance` (2 trials at a time, 1 CPU each, fixed step budget) vs one
          instance alone. Target: 8 finish within 4.5 x the time of one.
beyond    12 generated instances with L = 6..10 (lost sales / backlog, perishable, fixed order costs), out of
          the DP's reach: DQN vs the best of (s,S), base-stock and capped base-stock on common random numbers
          (paired gap +- standard error), and the pick rule (the DQN only when cheaper by 2 standard errors on
          the arbitration numbers) checked on fresh numbers: never picked when worse.

    .venv/bin/python benchmarks/bench_dqn.py                          # all parts
    .venv/bin/python benchmarks/bench_dqn.py --parts quality --lead-times 1 2 --seconds 60
    .venv/bin/python benchmarks/bench_dqn.py --parts quality --trainers torch   # torch trainer only
Exit status 1 when a target is missed (unless --no-check).
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

TARGET_GAP_PCT = 0.5
TARGET_SECONDS = 60.0
TARGET_TIME_TO_1PCT_RATIO = 1.5
TARGET_SCALING = 4.5


def instance(L: int, horizon: int, penalty: float = 9.0) -> Problem:
    return Problem(horizon=horizon, demand=Demand.poisson(5), lost_sales=True, holding_cost=1.0,
                   penalty_cost=penalty, setup_cost=0.0, lead_time=L, max_inventory=60, max_order=20)


def best_base_stock(problem: Problem, demands: np.ndarray) -> tuple[int, np.ndarray]:
    levels = np.arange(0, problem.max_inventory + 1)
    sim = simulate(problem, BaseStockPolicy(S=levels), demands, detailed=False)
    i = int(np.argmin(sim.cost.mean(axis=1)))
    return int(levels[i]), sim.cost[i]


def train(trainer: str, problem: Problem, args, base_stock_level: int):
    if trainer == "torch":
        from rl.dqn_torch import DQNConfig, train_dqn

        cfg = DQNConfig(time_budget_s=args.seconds, seed=args.seed)
        if args.steps:
            cfg.total_steps = args.steps
        return train_dqn(problem, cfg, base_stock_level=base_stock_level)
    from rl.rllib_train import RLlibSettings, train_rllib_dqn

    if trainer == "rllib":  # the counterfactual Learner (default settings)
        s = RLlibSettings(time_budget_s=args.seconds, seed=args.seed)
    else:  # "rllib-textbook": RLlib's own DQN
        s = RLlibSettings.textbook(time_budget_s=args.seconds, seed=args.seed)
    if args.steps:
        s.total_steps = args.steps
    return train_rllib_dqn(problem, settings=s, base_stock_level=base_stock_level)


def time_to(history: list[dict], level: float) -> float:
    """Seconds at the first validation evaluation at or below `level` (inf when never)."""
    for h in history:
        if h["val_cost"] <= level:
            return float(h["seconds"])
    return math.inf


def run_quality(L: int, args, penalty: float) -> list[dict]:
    from rl.dqn_torch import VALIDATION_SEED_OFFSET

    problem = instance(L, args.horizon, penalty)
    t = time.perf_counter()
    sol = dp.solve(problem)
    dp_seconds = time.perf_counter() - t
    S_bs, _ = best_base_stock(problem, demand_matrix(problem, 2000, seed=args.seed + 1))
    demands = demand_matrix(problem, args.replications, seed=args.seed + 999)  # fresh common random numbers
    _, bs_cost = best_base_stock(problem, demands)
    dp_sim = simulate(problem, StatePolicy(fn=sol.policy.fn), demands, detailed=False).cost[0]
    rows = []
    for trainer in args.trainers:
        trained = train(trainer, problem, args, S_bs)
        # the DP policy on the trainer's own validation numbers: the curve's 1 % line (common random numbers)
        val_reps = int(trained.info.get("validation_replications", 400))
        val_d = demand_matrix(problem, val_reps, seed=args.seed + VALIDATION_SEED_OFFSET)
        dp_val = float(simulate(problem, StatePolicy(fn=sol.policy.fn), val_d, detailed=False).cost[0].mean())
        dqn_cost = simulate(problem, trained.state_policy(), demands, detailed=False).cost[0]  # what ships
        net_cost = simulate(problem, trained.trained_network_policy(), demands, detailed=False).cost[0]
        diff = dqn_cost - dp_sim
        open_seconds = float(trained.info.get("opening", {}).get("seconds", 0.0))
        residual_seconds = float(trained.info.get("residual", {}).get("seconds", 0.0))
        pi_seconds = float(trained.info.get("policy_iteration", {}).get("seconds", 0.0))
        rows.append({
            "lead_time": L, "penalty": penalty, "trainer": trained.trainer,
            "train_seconds": float(trained.info["seconds"]), "setup_seconds": trained.info.get("setup_seconds"),
            "steps": trained.info.get("steps"), "stop": trained.info.get("stop_reason"),
            "dqn_cost": float(dqn_cost.mean()), "dp_optimum": float(sol.optimal_cost), "dp_seconds": dp_seconds,
            "base_stock_cost": float(bs_cost.mean()),
            "gap_pct": float((dqn_cost.mean() - sol.optimal_cost) / sol.optimal_cost * 100),
            "gap_paired_pct": float(diff.mean() / dp_sim.mean() * 100),
            "gap_paired_se_pct": float(diff.std(ddof=1) / math.sqrt(diff.size) / dp_sim.mean() * 100),
            "base_stock_gap_pct": float((bs_cost.mean() - sol.optimal_cost) / sol.optimal_cost * 100),
            "time_to_1pct": time_to(trained.history, 1.01 * dp_val),
            "opening": trained.opening, "opening_seconds": open_seconds,
            "residual": trained.residual.as_dict() if trained.residual is not None else None,
            "residual_seconds": residual_seconds, "pi_seconds": pi_seconds,
            "pi_rounds_kept": trained.info.get("policy_iteration", {}).get("rounds_kept", 0),
            "network_gap_pct": float((net_cost.mean() - sol.optimal_cost) / sol.optimal_cost * 100),
            "history": trained.history,
        })
    return rows


def quality(args) -> tuple[list[dict], list[str]]:
    print(f"{'L':>2} {'p':>4} {'trainer':>20} {'train s':>8} {'setup s':>7} {'steps':>8} {'DQN':>9} {'DP opt':>9} "
          f"{'gap %':>6} {'paired %':>11} {'bs gap %':>8} {'t->1% s':>8} {'pi s':>5} {'open s':>6} {'resid s':>7} "
          f"{'net gap %':>9}")
    rows, missed = [], []
    if any(t.startswith("rllib") for t in args.trainers):
        ensure_ray(1)  # one local Ray for every RLlib run (as a service would have); its start is not charged
    for penalty in args.penalties:
        for L in args.lead_times:
            group = run_quality(L, args, penalty)
            for r in group:
                rows.append(r)
                paired = f"{r['gap_paired_pct']:.2f}±{r['gap_paired_se_pct']:.2f}"
                print(f"{L:>2} {penalty:>4g} {r['trainer']:>20} {r['train_seconds']:>8.1f} "
                      f"{(r['setup_seconds'] or 0):>7.1f} {r['steps']:>8} {r['dqn_cost']:>9.2f} {r['dp_optimum']:>9.2f} "
                      f"{r['gap_pct']:>6.2f} {paired:>11} {r['base_stock_gap_pct']:>8.2f} {r['time_to_1pct']:>8.1f} "
                      f"{r['pi_seconds']:>5.1f} {r['opening_seconds']:>6.1f} {r['residual_seconds']:>7.1f} "
                      f"{r['network_gap_pct']:>9.2f}",
                      flush=True)
            by = {r["trainer"]: r for r in group}
            rl_row = by.get("rllib-counterfactual")
            if rl_row is not None:
                ratio_gap = rl_row["gap_pct"] / TARGET_GAP_PCT
                seconds = (rl_row["train_seconds"] + rl_row["pi_seconds"] + rl_row["opening_seconds"]
                           + rl_row["residual_seconds"])
                ratio_sec = seconds / TARGET_SECONDS
                print(f"   target L={L} p={penalty:g}: RLlib gap / 0.5% = {ratio_gap:.2f}, seconds / 60 = {ratio_sec:.2f}",
                      end="")
                if ratio_gap > 1:
                    missed.append(f"L={L} p={penalty:g} RLlib gap {rl_row['gap_pct']:.2f}% > {TARGET_GAP_PCT}%")
                if ratio_sec > 1.02:  # the budget is checked between iterations
                    missed.append(f"L={L} p={penalty:g} RLlib {seconds:.0f} s > {TARGET_SECONDS:.0f} s")
                if "torch" in by:
                    tt, tr = by["torch"]["time_to_1pct"], rl_row["time_to_1pct"]
                    if not (math.isfinite(tt) or math.isfinite(tr)):
                        ratio = math.nan  # neither came within 1 % in its budget: no ratio (the gap is reported)
                    else:
                        ratio = tr / tt if math.isfinite(tt) else 0.0
                    print(f", time-to-1% RLlib / torch = {ratio:.2f} ({tr:.1f} s / {tt:.1f} s)", end="")
                    if ratio > TARGET_TIME_TO_1PCT_RATIO or (math.isnan(ratio) and rl_row["gap_pct"] > 1):
                        missed.append(f"L={L} p={penalty:g} RLlib time-to-1% {ratio:.2f} x torch's")
                print(flush=True)
    if any(t.startswith("rllib") for t in args.trainers):
        import ray

        ray.shutdown()
    return rows, missed


def ensure_ray(num_cpus: int, attempts: int = 10) -> None:
    """One local Ray for the Tune parts; retried because its start times out when the machine is overloaded."""
    import ray

    for i in range(attempts):
        if ray.is_initialized():
            return
        try:
            ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
        except Exception as e:  # noqa: BLE001 - Ray raises a bare Exception on a start-up timeout
            print(f"# ray start failed ({e}); retry {i + 1}/{attempts}", flush=True)
            ray.shutdown()
            time.sleep(5)
    if not ray.is_initialized():
        raise RuntimeError("Ray did not start")


def scaling(args) -> tuple[dict, list[str]]:
    from rl.rllib_train import RLlibSettings, tune_per_instance

    s = RLlibSettings(total_steps=args.scaling_steps, time_budget_s=None, patience=10**6, seed=args.seed)
    problems = {f"L{1 + i % 4}_{i}": instance(1 + i % 4, args.horizon) for i in range(8)}
    ensure_ray(2)  # started once, not charged to either timing
    t = time.perf_counter()
    tune_per_instance({"L2_single": instance(2, args.horizon)}, s, max_concurrent=1,
                      storage_path=args.storage)
    one = time.perf_counter() - t
    t = time.perf_counter()
    tune_per_instance(problems, s, max_concurrent=2, storage_path=args.storage)
    eight = time.perf_counter() - t
    ratio = eight / one
    print(f"scaling: 1 instance {one:.1f} s, 8 instances on 2 cores {eight:.1f} s: ratio {ratio:.2f} "
          f"(target <= {TARGET_SCALING}; {args.scaling_steps} steps per trial)", flush=True)
    missed = [f"scaling {ratio:.2f} x > {TARGET_SCALING} x"] if ratio > TARGET_SCALING else []
    return {"one_s": one, "eight_s": eight, "ratio": ratio, "steps_per_trial": args.scaling_steps}, missed


def beyond_instances(n: int, seed: int, horizon: int) -> dict[str, Problem]:
    """n instances with L = 6..10 cycling through lost sales / backlog, perishable and fixed order costs."""
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(n):
        L = 6 + i % 5
        variant = ("lost_sales", "backlog", "perishable", "setup")[i % 4]
        mean = float(rng.choice([3, 4, 5]))
        p = float(rng.choice([4, 9, 19]))
        out[f"b{i}_L{L}_{variant}"] = Problem(
            horizon=horizon, demand=Demand.poisson(mean), lost_sales=variant != "backlog", holding_cost=1.0,
            penalty_cost=p, setup_cost=10.0 if variant == "setup" else 0.0, lead_time=L,
            max_inventory=int(mean * (L + 1) * 2 + 20), max_order=int(mean * 3), perishable=variant == "perishable")
    return out


def beyond(args) -> tuple[list[dict], list[str]]:
    from rl.heuristics import compare_with_heuristics, heuristics
    from rl.rllib_train import RLlibSettings, tune_per_instance

    problems = beyond_instances(args.beyond_instances, args.seed, args.horizon)
    cands = {name: heuristics(p, seed=args.seed) for name, p in problems.items()}
    levels = {}
    for name, c in cands.items():
        bs = next(pol for k, pol in c.items() if k.startswith("base-stock"))
        levels[name] = int(bs.S)
    s = RLlibSettings(time_budget_s=args.seconds, seed=args.seed)
    ensure_ray(2)
    t = time.perf_counter()
    trained = tune_per_instance(problems, s, max_concurrent=2, storage_path=args.storage, base_stock_levels=levels)
    wall = time.perf_counter() - t
    rows, missed = [], []
    print(f"{'instance':>22} {'DQN':>9} {'best heuristic':>34} {'gap %':>14} {'picked':>9} {'fresh gap %':>14}")
    for name, p in problems.items():
        pick = compare_with_heuristics(p, trained[name].state_policy(), cands[name], args.replications // 2,
                                       seed=args.seed + 17)  # arbitration numbers
        fresh = compare_with_heuristics(p, trained[name].state_policy(), cands[name], args.replications // 2,
                                        seed=args.seed + 31)  # verification numbers
        picked = "DQN" if pick.dqn_wins else "heuristic"
        worse = picked == "DQN" and fresh.gap_pct > 2 * fresh.gap_se_pct
        if worse:
            missed.append(f"{name}: DQN picked but worse on fresh numbers ({fresh.gap_pct:.2f}%)")
        rows.append({"instance": name, "problem": p.to_dict(), "steps": trained[name].info.get("steps"),
                     "pick": pick.as_dict(), "fresh": fresh.as_dict(), "picked": picked, "worse_when_picked": worse})
        print(f"{name:>22} {pick.costs['DQN']:>9.2f} {pick.best_heuristic[:26]:>26} {pick.costs[pick.best_heuristic]:>7.2f} "
              f"{pick.gap_pct:>7.2f}±{pick.gap_se_pct:<5.2f} {picked:>9} {fresh.gap_pct:>7.2f}±{fresh.gap_se_pct:<5.2f}",
              flush=True)
    gaps = np.array([r["fresh"]["gap_pct"] for r in rows])
    wins = sum(r["fresh"]["dqn_wins"] for r in rows)
    print(f"beyond DP: mean gap DQN vs best heuristic {gaps.mean():.2f}% ± {gaps.std(ddof=1) / math.sqrt(gaps.size):.2f} "
          f"(standard error over {gaps.size} instances); DQN better by > 2 SE on {wins}/{gaps.size}; "
          f"picked {sum(r['picked'] == 'DQN' for r in rows)}; never picked when worse: {not missed}; "
          f"Tune wall {wall:.0f} s", flush=True)
    return rows, missed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", nargs="+", choices=("quality", "scaling", "beyond"),
                    default=["quality", "scaling", "beyond"])
    ap.add_argument("--lead-times", type=int, nargs="+", default=[1, 2, 3, 4])
    ap.add_argument("--penalties", type=float, nargs="+", default=[9.0], help="Zipkin cells: 4 9 19 39")
    ap.add_argument("--trainers", nargs="+", choices=("rllib", "torch", "rllib-textbook"), default=["rllib", "torch"])
    ap.add_argument("--horizon", type=int, default=60)
    ap.add_argument("--seconds", type=float, default=TARGET_SECONDS, help="training wall-clock budget")
    ap.add_argument("--steps", type=int, default=0, help="environment step budget (0: trainer default)")
    ap.add_argument("--scaling-steps", type=int, default=12_000)
    ap.add_argument("--beyond-instances", type=int, default=12)
    ap.add_argument("--replications", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--storage", type=Path, default=Path("/tmp/askopt_bench_dqn"), help="Tune storage")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows as JSON")
    ap.add_argument("--no-check", action="store_true", help="exit 0 even when a target is missed")
    args = ap.parse_args(argv)
    args.trainers = [t for t in args.trainers]

    load = os.getloadavg()
    print(f"# load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (cpus: {os.cpu_count()})", flush=True)
    out, missed = {}, []
    if "quality" in args.parts:
        out["quality"], m = quality(args)
        missed += m
    if "scaling" in args.parts:
        out["scaling"], m = scaling(args)
        missed += m
    if "beyond" in args.parts:
        out["beyond"], m = beyond(args)
        missed += m
    load = os.getloadavg()
    print(f"# load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, default=str))
    if missed:
        print("MISSED: " + "; ".join(missed))
        return 0 if args.no_check else 1
    print("all targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
