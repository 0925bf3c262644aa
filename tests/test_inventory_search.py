"""The (s,S) search finds the best (s,S) (exactly scored) within 0.5%."""

import numpy as np
import pytest

from inventory import dp
from inventory.demand import Demand
from inventory.policies import SSPolicy
from inventory.problem import Problem
from inventory.search import best_base_stock, search_ss


@pytest.mark.parametrize("lost,L", [(False, 3), (True, 1)])
def test_search_within_half_percent_of_exhaustive_exact(lost, L):
    p = Problem(horizon=40, demand=Demand.poisson(3), lost_sales=lost, holding_cost=0.4, penalty_cost=3.5,
                setup_cost=4, lead_time=L, max_inventory=30, max_order=15, initial_inventory=10)
    found = search_ss(p, seed=3)
    found_exact = dp.evaluate_policy(p, found.policy).optimal_cost
    best = min(
        dp.evaluate_policy(p, SSPolicy(s, S)).optimal_cost
        for s in range(0, 30) for S in range(s + 1, 31)
    )
    assert found_exact <= best * 1.005
    assert 0 <= found.s < found.S <= p.max_inventory
    assert found.stderr > 0 and found.evaluated < 465  # screened less than the full grid


def test_search_criterion_objective_prefers_low_variance_when_risk_averse():
    p = Problem(horizon=60, demand=Demand.normal(6, 3), lost_sales=True, holding_cost=0.3, penalty_cost=3,
                setup_cost=2, lead_time=2, max_inventory=60, max_order=30, risk_tolerance=-10)
    by_mean = search_ss(p, criterion="mean")
    by_obj = search_ss(p, criterion="objective")
    assert by_obj.objective_value <= by_mean.objective_value + 1e-9
    assert by_obj.std_cost <= by_mean.std_cost + 1e-9


def test_best_base_stock_and_validation():
    p = Problem(horizon=30, demand=Demand.poisson(5), lost_sales=False, holding_cost=1, penalty_cost=9,
                setup_cost=0, lead_time=1, max_inventory=40, max_order=40)
    bs = best_base_stock(p)
    exact = {S: dp.evaluate_policy(p, SSPolicy(S, S) if S else SSPolicy(0, 1)).optimal_cost for S in (bs.S,)}
    assert 8 <= bs.S <= 20 and np.isfinite(exact[bs.S])
    with pytest.raises(ValueError, match="criterion"):
        search_ss(p, criterion="median")
