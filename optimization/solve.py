"""`askopt solve`: search, exact DP and side-by-side scoring of any advice, on one set of random numbers."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from inventory import dp
from inventory.montecarlo import evaluate
from inventory.policies import Policy, SSPolicy
from inventory.problem import Problem
from inventory.search import search_ss
from inventory.spec import ParameterTable

METHODS = ("ss", "dp", "all")


@dataclass
class SolveReport:
    problem: Problem
    objective: str
    best_ss: dict | None = None
    dp: dict | None = None
    policies: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"objective": self.objective, "best_ss": self.best_ss, "dp": self.dp, "policies": self.policies}


def solve_problem(
    problem: Problem,
    method: str = "all",
    objective: str = "finite",
    extra: list[tuple[str, Policy]] | None = None,
    replications: int = 2000,
    seed: int = 0,
) -> SolveReport:
    """Best (s,S), DP optimum where tractable, and every policy scored on the same replications."""
    if method not in METHODS:
        raise ValueError(f"--method: {method!r} is not allowed; allowed: {', '.join(METHODS)}")
    report = SolveReport(problem, objective)
    named: list[tuple[str, Policy]] = []
    if method in ("ss", "all"):
        found = search_ss(problem, objective=objective, seed=seed)
        exact = dp.evaluate_policy(problem, found.policy, objective=objective)
        report.best_ss = {
            "s": found.s,
            "S": found.S,
            "cost": found.mean_cost,
            "exact_cost": exact.optimal_cost,
            "seconds": round(found.seconds, 3),
        }
        named.append(("best_ss", SSPolicy(s=found.s, S=found.S)))
    if method in ("dp", "all"):
        result = dp.solve(problem, objective=objective)
        report.dp = result.as_dict()
        if result.status == "solved":
            named.append(("dp_optimal", result.policy))
        elif result.reason:
            report.dp["reason"] = result.reason
    for label, policy in extra or []:
        named.append((label, policy))
    evals = evaluate(problem, [p for _, p in named], replications=replications, seed=seed + 1, objective=objective)
    for (label, policy), ev in zip(named, evals, strict=True):
        report.policies.append(
            {
                "name": label,
                "params": ev.params if not policy.needs_state else {},
                "label": ev.name,
                "mean_cost": ev.mean_cost,
                "std_cost": ev.std_cost,
                "stderr": ev.stderr,
                "objective": ev.objective,
                "fill_rate": ev.fill_rate,
            }
        )
    if report.dp and report.dp.get("optimal_cost") is not None and report.best_ss:
        ss_exact = report.best_ss["exact_cost"]
        if ss_exact is not None:
            report.dp["ss_gap_pct"] = 100 * (ss_exact - report.dp["optimal_cost"]) / abs(report.dp["optimal_cost"])
    return report


def write_artifacts(report: SolveReport, out_dir: Path) -> None:
    """deployment_artifacts/: config.json and policy_evaluation_results.csv."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    p = report.problem
    config = {
        "problem": p.to_dict(),
        "lead_time": p.lead_time,
        "max_inventory": p.max_inventory,
        "max_order": p.max_order,
        "horizon": p.horizon,
        "state_dim": 2 + p.lead_time,
        "action_dim": p.max_order + 1,
        "objective": report.objective,
        "best_ss": report.best_ss,
        "dp": report.dp,
    }
    (out_dir / "config.json").write_text(json.dumps(config, indent=2, default=str))
    rows = []
    for pol in report.policies:
        rows.append(
            {
                "policy": pol["name"],
                "label": pol["label"],
                "s": pol["params"].get("s"),
                "S": pol["params"].get("S"),
                "mean_cost": pol["mean_cost"],
                "std_cost": pol["std_cost"],
                "objective": pol["objective"],
            }
        )
    if report.dp and report.dp.get("optimal_cost") is not None:
        rows.append({"policy": "dp_exact_optimum", "label": "exact DP optimum", "mean_cost": report.dp["optimal_cost"]})
    pd.DataFrame(rows).to_csv(out_dir / "policy_evaluation_results.csv", index=False)


def format_report(report: SolveReport) -> str:
    """The human-readable answer: the parameter table, the best (s,S), the DP optimum, the comparison."""
    unit = "per period" if report.objective == "average" else f"total over {report.problem.horizon} days"
    lines = ["Parameter table", ParameterTable.from_problem(report.problem).to_csv().rstrip(), ""]
    if report.best_ss:
        b = report.best_ss
        exact = f", exact {b['exact_cost']:.2f}" if b["exact_cost"] is not None else ""
        lines.append(f"Best (s,S): s={b['s']}, S={b['S']}  cost {b['cost']:.2f} {unit} (Monte Carlo{exact})")
    if report.dp:
        d = report.dp
        if d["status"] == "solved":
            gap = f"; best (s,S) is {d['ss_gap_pct']:.2f}% above it" if "ss_gap_pct" in d else ""
            lines.append(f"DP optimum: {d['optimal_cost']:.2f} {unit} ({d['states']} states, {d['seconds']:.2f}s){gap}")
        else:
            lines.append(f"DP: intractable: {d['states']} states (Monte Carlo search only)")
    wn = max([len("policy")] + [len(p["name"]) for p in report.policies]) + 2
    wl = max([len("rule")] + [len(p["label"]) for p in report.policies]) + 2
    lines += ["", f"{'policy':<{wn}}{'rule':<{wl}}{'mean cost':>12}{'std':>10}{'L(pi)':>12}{'fill':>8}"]
    for pol in report.policies:
        lines.append(
            f"{pol['name']:<{wn}}{pol['label']:<{wl}}{pol['mean_cost']:>12.2f}{pol['std_cost']:>10.2f}"
            f"{pol['objective']:>12.2f}{pol['fill_rate']:>8.3f}"
        )
    return "\n".join(lines)
