"""The paper's two worked examples and the end-to-end LLM's advice for them."""

from __future__ import annotations

from inventory.demand import Demand
from inventory.policies import Policy, SQPolicy, SSPolicy
from inventory.problem import Problem
from optimization.solve import format_report, solve_json, solve_problem

_COMMON = dict(horizon=90, lost_sales=True, holding_cost=0.5, setup_cost=3.0, risk_tolerance=3.0)

EXAMPLES: dict[str, Problem] = {
    "bike_shop": Problem(demand=Demand.poisson(8), penalty_cost=2.83, lead_time=10, max_inventory=80,
                         max_order=25, **_COMMON),
    "phone_chargers": Problem(demand=Demand.poisson(6), penalty_cost=2.75, lead_time=4, max_inventory=80,
                              max_order=30, **_COMMON),
}

# What an end-to-end LLM (GPT-4o in the paper) recommended for each.
LLM_ADVICE: dict[str, tuple[str, Policy]] = {
    "bike_shop": ("llm_advice (s=40,S=65)", SSPolicy(s=40, S=65)),
    "phone_chargers": ("llm_advice reorder at 30 by 30", SQPolicy(s=30, Q=30)),
}


def solve_report(problem: Problem, extra_policies: list[tuple[str, Policy]], method: str = "all") -> str:
    report = solve_problem(problem, method=method, extra=extra_policies)
    text = format_report(report)
    policies = solve_json(report)["policies"]
    ours = next(p for p in policies if p["name"] == "best_ss")
    lines = [text]
    for label, _ in extra_policies:
        theirs = next(p for p in policies if p["name"] == label)
        extra = 100 * (theirs["mean_cost"] - ours["mean_cost"]) / ours["mean_cost"]
        lines.append(f"-> {label} costs {extra:+.1f}% against askopt's best (s,S) on the same demand paths")
    return "\n".join(lines)


def examples_report() -> str:
    parts = []
    for name, problem in EXAMPLES.items():
        parts.append(f"=== Paper example: {name.replace('_', ' ')} ===")
        parts.append(solve_report(problem, [LLM_ADVICE[name]]))
        parts.append("")
    return "\n".join(parts)
