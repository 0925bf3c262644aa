"""Scoring a batch of units on the ground truth: Monte Carlo with common random numbers, exact DP where tractable.

Every policy is simulated on the TRUE problem (never on what a dialogue extracted), on the same demand matrix
for every unit of an instance (seed = `score_seed(instance)`), so A-vs-B differences are not sampling noise.
Where the exact DP is tractable under the study's state budget we also record the optimum and each policy's
exact expected cost (position policies), giving a noise-free optimality gap. As a reference on every instance
we score the Optimization Agent's best (s,S) on the true problem ("oracle (s,S)": what A would get from a
perfect dialogue; the agent picks it by the problem's objective L(pi)).

Two yardsticks per row: `mc_cost` (expected total cost) and `mc_objective` = L(pi) = E[cost] +
exp(-lambda) Std[cost], the problem's own objective under its risk tolerance, which is what the Optimization
Agent minimises and what the report compares by default. The DP optimum is risk-neutral, so `opt_gap` is an
expected-cost gap.
"""

from __future__ import annotations

import math
import time

from agents.generator import Instance
from evaluation.study import StudyConfig, score_seed
from evaluation.study_units import UnitOutcome, outcome_json
from inventory import dp
from inventory.montecarlo import evaluate
from inventory.policies import SSPolicy


def instance_columns(instance: Instance) -> dict:
    p = instance.problem
    return {
        "instance_id": instance.instance_id,
        "instance_index": instance.index,
        "cell": instance.cell,
        "context": instance.context,
        "demand": p.demand.describe(),
        "demand_kind": p.demand.kind,
        "demand_mean": float(p.demand.mean),
        "demand_std": float(p.demand.std),
        "lost_sales": bool(p.lost_sales),
        "holding_cost": float(p.holding_cost),
        "penalty_cost": float(p.penalty_cost),
        "setup_cost": float(p.setup_cost),
        "lead_time": int(p.lead_time),
        "max_inventory": int(p.max_inventory),
        "max_order": int(p.max_order),
        "risk_tolerance": float(p.risk_tolerance),
        "horizon": int(p.horizon),
        "item_cost": float(instance.item_cost),
        "critical_ratio": float(instance.critical_ratio),
    }


def references(instance: Instance, config: StudyConfig) -> dict:
    """Per-instance references: DP optimum (if tractable) and the oracle best (s,S) on the truth."""
    from optimization.service import OptimizationAgent, OptimizationConfig

    truth = instance.problem
    t0 = time.perf_counter()
    opt = dp.solve(truth, max_states=config.dp_max_states, max_work=config.dp_max_work)
    res = OptimizationAgent(OptimizationConfig(
        dqn=False, use_dp=False, write_artifacts=False, seed=score_seed(config, instance.instance_id),
        replications=config.opt_replications, search_replications=config.opt_search_replications)).run(truth)
    oracle = SSPolicy(int(res.best_ss.params["s"]), int(res.best_ss.params["S"]))
    return {
        "dp_status": opt.status,
        "dp_states": int(opt.states),
        "opt_cost": float(opt.optimal_cost) if opt.optimal_cost is not None else math.nan,
        "oracle_policy": oracle,
        "oracle_label": res.best_ss.label,
        "ref_seconds": time.perf_counter() - t0,
    }


def score_outcomes(instance: Instance, outcomes: list[UnitOutcome], config: StudyConfig) -> list[dict]:
    """One tidy row per unit (failed units included, with NaN costs)."""
    truth = instance.problem
    ref = references(instance, config)
    seed = score_seed(config, instance.instance_id)
    oracle_ev = evaluate(truth, [ref["oracle_policy"]], replications=config.replications, seed=seed)[0]
    base = {**instance_columns(instance), "study": config.name, "dp_status": ref["dp_status"],
            "dp_states": ref["dp_states"], "opt_cost": ref["opt_cost"], "oracle_policy": ref["oracle_label"],
            "oracle_cost": float(oracle_ev.mean_cost), "oracle_objective": float(oracle_ev.objective),
            "score_seed": seed, "replications": config.replications}
    rows = []
    for o in outcomes:
        row = {**base, "treatment": o.unit.treatment, "trial": o.unit.trial, **outcome_json(o),
               "mc_cost": math.nan, "mc_std": math.nan, "mc_stderr": math.nan, "mc_objective": math.nan,
               "fill_rate": math.nan, "exact_cost": math.nan, "opt_gap": math.nan, "oracle_gap": math.nan,
               "oracle_gap_cost": math.nan}
        if o.status == "ok" and o.policy is not None:
            try:
                ev = evaluate(truth, [o.policy], replications=config.replications, seed=seed)[0]
                row.update(mc_cost=float(ev.mean_cost), mc_std=float(ev.std_cost), mc_stderr=float(ev.stderr),
                           mc_objective=float(ev.objective), fill_rate=float(ev.fill_rate))
                row["oracle_gap"] = (row["mc_objective"] - row["oracle_objective"]) / row["oracle_objective"]
                row["oracle_gap_cost"] = (row["mc_cost"] - row["oracle_cost"]) / row["oracle_cost"]
                if ref["dp_status"] == "solved" and not o.policy.needs_state and o.policy.name != "periodic":
                    ex = dp.evaluate_policy(truth, o.policy, max_states=config.dp_max_states,
                                            max_work=config.dp_max_work)
                    if ex.status == "solved" and ex.optimal_cost is not None:
                        row["exact_cost"] = float(ex.optimal_cost)
                        row["opt_gap"] = (row["exact_cost"] - ref["opt_cost"]) / ref["opt_cost"]
            except Exception as exc:  # noqa: BLE001 - e.g. a state policy built for another lead time
                row.update(status="failed", stage="scoring", reason=f"{type(exc).__name__}: {exc}"[:500])
        rows.append(row)
    return rows
