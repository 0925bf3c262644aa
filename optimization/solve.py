"""`askopt solve` on the service: which methods `--method` names, and the two views of the answer (JSON, text).

The computation is `optimization.service.optimize`; this module only chooses methods and shapes its result, so
`askopt solve`, `askopt optimize`, serving and the study cannot drift apart.
"""

from __future__ import annotations

from inventory.policies import Policy
from inventory.problem import Problem
from inventory.spec import ParameterTable
from optimization.service import OptimizationConfig, OptimizationResult, PolicyScore, optimize

METHODS = ("ss", "dp", "all")
_SERVICE_METHODS = {"ss": ("ss",), "dp": ("dp",), "all": ("ss", "dp")}
# the JSON names of the candidates, kept from the first release of the `--json` contract
_JSON_NAMES = {"ss": "best_ss", "dp": "dp_optimal"}


def solve_problem(
    problem: Problem,
    method: str = "all",
    objective: str = "finite",
    extra: list[tuple[str, Policy]] | None = None,
    replications: int = 2000,
    seed: int = 0,
    dp_max_work: float | None = None,
) -> OptimizationResult:
    """Best (s,S), the DP optimum where tractable, and every `extra` policy scored on the same replications.

    `dp_max_work`: the DP's flop budget, bound doublings included (a server passes its limit; the DP then
    answers "bounded" instead of widening past it); default OptimizationConfig's."""
    if method not in METHODS:
        raise ValueError(f"--method: {method!r} is not allowed; allowed: {', '.join(METHODS)}")
    budget = {} if dp_max_work is None else {"dp_max_work": dp_max_work}
    config = OptimizationConfig(dqn=False, objective=objective, replications=replications, seed=seed,
                                write_artifacts=False, **budget)
    return optimize(problem, methods=_SERVICE_METHODS[method], config=config, extra=extra)


def _policy_json(sc: PolicyScore) -> dict:
    return {
        "name": _JSON_NAMES.get(sc.name, sc.name) if sc.role == "candidate" else sc.name,
        "params": sc.params,
        "label": sc.label,
        "mean_cost": sc.mean_cost,
        "std_cost": sc.std_cost,
        "stderr": sc.stderr,
        "objective": sc.objective,
        "fill_rate": sc.fill_rate,
    }


def solve_json(result: OptimizationResult) -> dict:
    """The `askopt solve --json` object (README: "Solving")."""
    return {
        "objective": result.objective,
        "best_ss": result.ss_search,
        "dp": result.dp,
        "winner": _JSON_NAMES.get(result.winner.name, result.winner.name) if result.winner else None,
        "policies": [_policy_json(sc) for sc in result.scores + result.extra_scores],
        "notes": list(result.notes),
    }


def format_report(result: OptimizationResult) -> str:
    """The human-readable answer: the parameter table, the best (s,S), the DP optimum, the comparison."""
    unit = "per period" if result.objective == "average" else f"total over {result.problem.horizon} days"
    lines = ["Parameter table", ParameterTable.from_problem(result.problem).to_csv().rstrip(), ""]
    if result.ss_search:
        b = result.ss_search
        exact = f", exact {b['exact_cost']:.2f}" if b["exact_cost"] is not None else ""
        lines.append(f"Best (s,S): s={b['s']}, S={b['S']}  cost {b['cost']:.2f} {unit} (Monte Carlo{exact})")
    if result.dp:
        d = result.dp
        if d["status"] == "solved":
            gap = f"; best (s,S) is {d['ss_gap_pct']:.2f}% above it" if "ss_gap_pct" in d else ""
            lines.append(f"DP optimum: {d['optimal_cost']:.2f} {unit} ({d['states']} states, {d['seconds']:.2f}s){gap}")
        else:
            reason = d.get("reason") or f"{d['states']} states"
            status = "" if reason.startswith(d["status"]) else f"{d['status']}: "
            lines.append(f"DP: {status}{reason} (Monte Carlo search only)")
    rows = [_policy_json(sc) for sc in result.scores + result.extra_scores]
    wn = max([len("policy")] + [len(p["name"]) for p in rows]) + 2
    wl = max([len("rule")] + [len(p["label"]) for p in rows]) + 2
    lines += ["", f"{'policy':<{wn}}{'rule':<{wl}}{'mean cost':>12}{'std':>10}{'L(pi)':>12}{'fill':>8}"]
    for pol in rows:
        lines.append(
            f"{pol['name']:<{wn}}{pol['label']:<{wl}}{pol['mean_cost']:>12.2f}{pol['std_cost']:>10.2f}"
            f"{pol['objective']:>12.2f}{pol['fill_rate']:>8.3f}"
        )
    return "\n".join(lines)
