"""Capped base-stock and the DQN-vs-heuristics comparison used beyond the DP's reach."""

import numpy as np

from inventory.demand import Demand
from inventory.montecarlo import demand_matrix, simulate
from inventory.policies import BaseStockPolicy, StatePolicy
from inventory.problem import Problem
from rl.heuristics import CappedBaseStockPolicy, best_capped_base_stock, compare_with_heuristics, heuristics


def _p(**kw) -> Problem:
    base = dict(horizon=30, demand=Demand.poisson(4), lost_sales=True, holding_cost=1.0, penalty_cost=9.0,
                setup_cost=0.0, lead_time=6, max_inventory=60, max_order=12)
    base.update(kw)
    return Problem(**base)


def test_capped_base_stock_is_the_rule_min_S_minus_y_r():
    p = _p()
    d = demand_matrix(p, 300, seed=1)
    S, r = np.array([30, 34, 34]), np.array([5, 6, 12])
    vec = simulate(p, CappedBaseStockPolicy(S=S, r=r), d, detailed=False).cost.mean(axis=1)
    for i in range(3):
        def fn(on_hand, pipeline, t, S=S[i], r=r[i]):
            return np.minimum(np.maximum(S - (on_hand + pipeline.sum(axis=1)), 0), r)
        ref = simulate(p, StatePolicy(fn=fn), d, detailed=False).cost[0].mean()
        assert vec[i] == ref
    # r = the order cap is plain base-stock
    bs = simulate(p, BaseStockPolicy(S=34), d, detailed=False).cost[0].mean()
    assert vec[2] == bs


def test_capped_base_stock_beats_base_stock_at_long_lead_times():
    p = _p(penalty_cost=4.0)
    S, r, cost = best_capped_base_stock(p, seed=0, screen_reps=150, final_reps=600)
    assert 1 <= r < p.max_order
    d = demand_matrix(p, 600, seed=1)
    bs = simulate(p, BaseStockPolicy(S=np.arange(0, 61)), d, detailed=False).cost.mean(axis=1).min()
    assert cost < bs


def test_comparison_does_not_pick_a_dqn_that_is_not_better():
    p = _p(lead_time=7)
    cands = heuristics(p, seed=0)
    bs = next(pol for k, pol in cands.items() if k.startswith("base-stock"))

    def same_as_base_stock(on_hand, pipeline, t):
        return np.maximum(bs.S - (on_hand + pipeline.sum(axis=1)), 0)

    cmp = compare_with_heuristics(p, StatePolicy(fn=same_as_base_stock), cands, replications=800, seed=3)
    assert not cmp.dqn_wins  # a "DQN" that is base-stock never beats the best heuristic
    assert cmp.gap_pct >= -1e-9
    assert set(cmp.costs) == {"DQN", *cands}
