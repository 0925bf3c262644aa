"""Shared fixtures: a small problem factory, and real result objects for the agents' tests.

Tests of the dialogue roles need an optimisation result without running an optimisation. They get the real
`optimization.service.PolicyScore` / `OptimizationResult` types (not hand-copied stand-ins that can drift from
them), filled with the given figures; the objective is L(pi) computed by `montecarlo.composite_objective`, as
the service computes it.
"""

from __future__ import annotations

import pytest

from inventory.demand import Demand
from inventory.montecarlo import composite_objective
from inventory.problem import Problem
from optimization.service import OptimizationResult, PolicyScore


def policy_score(name: str, label: str, params: dict, mean_cost: float, std_cost: float = 10.0,
                 risk_tolerance: float = 0.0, **extra) -> PolicyScore:
    """A scored candidate with objective L(pi) = mean + exp(-lambda) std."""
    objective = float(composite_objective(mean_cost, std_cost, risk_tolerance))
    return PolicyScore(name=name, label=label, params=dict(params), mean_cost=float(mean_cost),
                       std_cost=float(std_cost), objective=objective, **extra)


def optimization_result(problem: Problem, scores: list[PolicyScore], winner: PolicyScore,
                        best_ss: PolicyScore | None, ss_extra_cost_pct: float | None = 0.0,
                        runner_up: PolicyScore | None = None, **extra) -> OptimizationResult:
    """A result as the service returns it, without DP, artifacts or a trained network."""
    return OptimizationResult(problem=problem, scores=list(scores), winner=winner, runner_up=runner_up,
                              best_ss=best_ss, ss_extra_cost_pct=ss_extra_cost_pct, dp=None, artifacts_dir=None,
                              seconds=0.0, **extra)


@pytest.fixture
def make_score():
    """`make_score(name, label, params, mean_cost, std_cost=10, risk_tolerance=0)` -> a real PolicyScore."""
    return policy_score


@pytest.fixture
def make_result():
    """`make_result(problem, scores, winner, best_ss, ss_extra_cost_pct=0)` -> a real OptimizationResult."""
    return optimization_result


SMALL_PROBLEM = dict(horizon=5, demand=Demand.poisson(3), lost_sales=True, holding_cost=1.0, penalty_cost=10.0,
                     setup_cost=5.0, lead_time=2, max_inventory=20, max_order=8)


@pytest.fixture
def make_problem():
    """`make_problem(**overrides)` -> a small lost-sales Problem (T 5, Poisson(3), h 1, b 10, K 5, L 2, caps 20/8)
    with the given fields replaced: hand-checkable traces need small numbers."""
    return lambda **overrides: Problem(**{**SMALL_PROBLEM, **overrides})
