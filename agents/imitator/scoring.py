"""Field-by-field scoring of an extracted parameter table against the imitator's hidden ground truth.

Tolerances say what "extracted correctly" means for a decision: whole-number fields must be exact, costs
within 5% (a manager's "about 50 cents" for 0.52 is right), risk tolerance within one point of the -10..10
scale, and demand must have the right family with the mean within 10% (the optimiser is far more sensitive to
the level than to the exact spread).
"""

from __future__ import annotations

import math

from inventory.demand import Demand, parse_demand
from inventory.problem import Problem
from inventory.spec import PARAMETERS, ParameterTable, normalise_value, problem_values

__all__ = ["TOLERANCES", "score_extraction", "values_match", "accuracy"]

TOLERANCES = {
    "cost_rel": 0.05,
    "risk_abs": 1.0,
    "demand_mean_rel": 0.10,
}


def _close(a: float, b: float, rel: float) -> bool:
    if b == 0:
        return abs(a) < 1e-9
    return abs(a - b) <= rel * abs(b) + 1e-9


def values_match(name: str, got, truth) -> bool:
    """Whether an extracted value counts as correct for `truth` (both in any form `normalise_value` reads)."""
    if got is None:
        return False
    try:
        g = normalise_value(name, got)
        t = normalise_value(name, truth)
    except ValueError:
        return False
    if name in ("holding_cost", "penalty_cost", "setup_cost"):
        return _close(float(g), float(t), TOLERANCES["cost_rel"])
    if name == "risk_tolerance":
        return abs(float(g) - float(t)) <= TOLERANCES["risk_abs"] + 1e-9
    if name == "demand_distribution":
        gd, td = parse_demand(g), parse_demand(t)
        assert isinstance(gd, Demand) and isinstance(td, Demand)
        if gd.kind != td.kind:
            return False
        gm, tm = _mean(gd), _mean(td)
        return _close(gm, tm, TOLERANCES["demand_mean_rel"])
    return g == t


def _mean(d: Demand) -> float:
    if d.kind == "normal":
        return d.mean_param  # the parameter, not the mean of the rounded-and-floored law
    return float(d.mean)


def score_extraction(table: ParameterTable, ground_truth: Problem) -> dict[str, bool]:
    """{field: extracted correctly} for all twelve fields; undefined or conflicting fields score False."""
    truth = problem_values(ground_truth)
    out: dict[str, bool] = {}
    for name in PARAMETERS:
        if table.status(name) != "defined":
            out[name] = False
            continue
        out[name] = values_match(name, table.get(name), truth[name])
    return out


def accuracy(scores: dict[str, bool]) -> float:
    return sum(scores.values()) / len(scores) if scores else math.nan
