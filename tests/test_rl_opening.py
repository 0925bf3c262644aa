"""Rollout improvement of the opening orders (rl.opening): where it applies, that it never loses on its own
numbers, and that the wrapped policy changes only the opening's own states."""

import numpy as np

from inventory import policies
from inventory.demand import Demand
from inventory.montecarlo import demand_matrix, simulate
from inventory.policies import StatePolicy
from inventory.problem import Problem
from rl.opening import OpeningPolicy, improve_opening, opening_states


def _problem(**kw) -> Problem:
    base = dict(horizon=20, demand=Demand.poisson(4), lost_sales=True, holding_cost=1.0, penalty_cost=9.0,
                setup_cost=0.0, lead_time=2, max_inventory=40, max_order=12)
    base.update(kw)
    return Problem(**base)


def _base_stock(S: int):
    return lambda on, pipe, t: policies.base_stock_rule(on + pipe.sum(axis=1), S)


def test_the_opening_states_do_not_depend_on_demand():
    p = _problem(lead_time=3)
    states = opening_states(p, [5, 2, 7])
    assert [int(on[0]) for on, _ in states] == [0, 0, 0]
    assert [pipe[0].tolist() for _, pipe in states] == [[0, 0, 0], [0, 0, 5], [0, 5, 2]]


def test_a_poor_opening_is_improved_and_never_made_worse():
    p = _problem()
    base = _base_stock(30)  # far too high: orders 12 (the cap) twice at the start
    orders, info = improve_opening(p, base, replications=400, seed=1)
    assert info["applied"] and info["own_opening"] == [12, 12]
    assert info["improved_cost"] < info["own_cost"]
    assert orders != info["own_opening"]
    # the search's figure holds on fresh numbers too
    d = demand_matrix(p, 2000, seed=77)
    own = simulate(p, StatePolicy(fn=base), d, detailed=False).cost[0].mean()
    new = simulate(p, StatePolicy(fn=OpeningPolicy(p, base, orders)), d, detailed=False).cost[0].mean()
    assert new < own


def test_the_wrapper_changes_only_the_openings_own_states():
    p = _problem()
    base = _base_stock(10)
    wrapped = OpeningPolicy(p, base, [3, 4])
    on = np.array([0, 0, 2])
    pipe = np.array([[0, 0], [0, 1], [0, 0]])
    assert wrapped(on, pipe, 0).tolist() == [3] + base(on, pipe, 0)[1:].tolist()
    assert wrapped(np.array([0]), np.array([[0, 3]]), 1).tolist() == [4]
    assert wrapped(np.array([0]), np.array([[0, 3]]), 2).tolist() == base(np.array([0]), np.array([[0, 3]]), 2).tolist()


def test_no_opening_where_it_depends_on_demand():
    for p in (_problem(lost_sales=False), _problem(initial_inventory=5), _problem(lead_time=0)):
        orders, info = improve_opening(p, _base_stock(10), replications=50)
        assert orders == [] and not info["applied"]
        assert OpeningPolicy(p, _base_stock(10), orders)(np.array([0]), np.zeros((1, p.lead_time), int), 0).tolist() \
            == _base_stock(10)(np.array([0]), np.zeros((1, p.lead_time), int), 0).tolist()
