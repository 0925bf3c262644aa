"""The dynamics against hand-computed traces, one per variant."""

import numpy as np
import pytest

from inventory.demand import Demand
from inventory.dynamics import cap_order, settle, step
from inventory.problem import Problem


def make(**kw):
    base = dict(horizon=5, demand=Demand.poisson(3), lost_sales=True, holding_cost=1.0, penalty_cost=10.0,
                setup_cost=5.0, lead_time=2, max_inventory=20, max_order=8)
    base.update(kw)
    return Problem(**base)


def run_trace(p, on_hand, pipeline, orders, demands):
    out = []
    for q, d in zip(orders, demands, strict=True):
        s = step(p, on_hand, pipeline, q, d)
        out.append((int(s.order), float(s.cost), int(s.on_hand), [int(x) for x in np.atleast_1d(s.pipeline)]))
        on_hand, pipeline = s.on_hand, s.pipeline
    return out


def test_lost_sales_lead_time_two():
    p = make()
    # start I=4, pipeline (3, 0): x1=3 arrives now
    trace = run_trace(p, 4, [3, 0], orders=[5, 0, 0], demands=[2, 9, 1])
    # t0: order 5 (setup 5); available 7, demand 2 -> left 5 (h 5): cost 10; pipeline (0, 5)
    # t1: no order; available 5+0, demand 9 -> 4 lost (40): cost 40; on-hand 0; pipeline (5, 0)
    # t2: no order; available 0+5, demand 1 -> 4 left (4): cost 4; pipeline (0, 0)
    assert trace == [(5, 10.0, 5, [0, 5]), (0, 40.0, 0, [5, 0]), (0, 4.0, 4, [0, 0])]


def test_backlog_penalty_accrues_every_period_a_unit_waits():
    p = make(lost_sales=False, lead_time=1)
    trace = run_trace(p, 2, [0], orders=[0, 0, 6], demands=[5, 1, 0])
    # t0: available 2, demand 5 -> backlog 3 (30); t1: available -3, demand 1 -> backlog 4 (40)
    # t2: order 6 (setup 5) arrives next period; available -4 -> still 4 waiting (40) -> 45
    assert trace == [(0, 30.0, -3, [0]), (0, 40.0, -4, [0]), (6, 45.0, -4, [6])]
    s = step(p, -4, [6], 0, 1)  # the 6 arrive, clear the 4 waiting, 1 sold, 1 left
    assert int(s.on_hand) == 1 and float(s.cost) == 1.0


def test_perishable_lost_sale_spoils_leftovers():
    p = make(perishable=True, lead_time=0)
    trace = run_trace(p, 0, [], orders=[6, 6], demands=[4, 9])
    # L=0: order arrives before demand. t0: 6 available, demand 4 -> 2 held (2) + setup 5 = 7, then spoil
    # t1: 6 available, demand 9 -> 3 lost (30) + setup 5 = 35
    assert trace == [(6, 7.0, 0, []), (6, 35.0, 0, [])]


def test_perishable_backlog_keeps_backlog_spoils_stock():
    p = make(perishable=True, lost_sales=False, lead_time=0)
    trace = run_trace(p, 0, [], orders=[0, 5, 5], demands=[3, 1, 1])
    # t0: backlog 3 (30); t1: 5 arrive: -3+5=2, demand 1 -> 1 left (1) + setup 5 -> spoil to 0
    # t2: 5 arrive, demand 1 -> 4 left (4) + setup 5 = 9
    assert trace == [(0, 30.0, -3, []), (5, 6.0, 0, []), (5, 9.0, 0, [])]


def test_lead_time_zero_order_arrives_before_demand():
    p = make(lead_time=0)
    s = step(p, 0, [], 5, 5)
    assert int(s.sold) == 5 and int(s.short) == 0 and float(s.cost) == 5.0  # only the setup


def test_caps_max_order_and_capacity():
    p = make(max_inventory=20, max_order=8)
    assert int(cap_order(15, 2, p.max_order, p.max_inventory)) == 8  # max_order
    assert int(cap_order(15, 17, p.max_order, p.max_inventory)) == 3  # position 17 + 3 = capacity
    assert int(cap_order(-4, 0, p.max_order, p.max_inventory)) == 0
    assert int(cap_order(5, 25, p.max_order, p.max_inventory)) == 0
    s = step(p, 10, [6, 2], 50, 0)  # position 18 -> only 2 more fit
    assert int(s.order) == 2 and list(s.pipeline) == [2, 2]


def test_settle_is_elementwise():
    nxt, held, short, sold = settle(np.array([5, 5, -2]), np.array([3, 8, 1]), lost_sales=False, perishable=False)
    assert nxt.tolist() == [2, -3, -3] and held.tolist() == [2, 0, 0]
    assert short.tolist() == [0, 3, 3] and sold.tolist() == [3, 5, 0]


@pytest.mark.parametrize("lost", [True, False])
def test_step_vectorised_matches_scalar(lost):
    p = make(lost_sales=lost)
    rng = np.random.default_rng(1)
    on = rng.integers(0, 6, 50)
    pipe = rng.integers(0, 4, (50, 2))
    q = rng.integers(0, 10, 50)
    d = rng.integers(0, 9, 50)
    vec = step(p, on, pipe, q, d)
    for i in range(50):
        one = step(p, on[i], pipe[i], q[i], d[i])
        assert float(one.cost) == vec.cost[i] and int(one.on_hand) == vec.on_hand[i]
