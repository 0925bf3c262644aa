"""Monte Carlo engine: agrees with the step-by-step dynamics, common random numbers, statistics."""

import numpy as np
import pytest

from inventory.demand import Demand
from inventory.dynamics import initial_state, step
from inventory.montecarlo import composite_objective, demand_matrix, evaluate, simulate, summarise
from inventory.policies import (
    BaseStockPolicy,
    ConstantPolicy,
    RQPolicy,
    SQPolicy,
    SSPolicy,
    StatePolicy,
    parse_policy_spec,
)
from inventory.problem import Problem


def problem(**kw):
    base = dict(horizon=40, demand=Demand.poisson(4), lost_sales=True, holding_cost=0.5, penalty_cost=4.0,
                setup_cost=3.0, lead_time=3, max_inventory=30, max_order=12, initial_inventory=5)
    base.update(kw)
    return Problem(**base)


@pytest.mark.parametrize("lost,perish,L", [(True, False, 3), (False, False, 2), (True, True, 1), (False, True, 0)])
def test_ring_buffer_engine_equals_step_loop(lost, perish, L):
    p = problem(lost_sales=lost, perishable=perish, lead_time=L)
    D = demand_matrix(p, 7, seed=3)
    pol = SSPolicy(s=np.array([6, 10]), S=np.array([20, 25]))
    sim = simulate(p, pol, D)
    for i, (s, S) in enumerate([(6, 20), (10, 25)]):
        on, pipe = initial_state(p, (7,))
        total = np.zeros(7)
        for t in range(p.horizon):
            ip = on + pipe.sum(axis=1)
            raw = np.where(ip < s, S - ip, 0)
            st = step(p, on, pipe, raw, D[:, t])
            total += st.cost
            on, pipe = st.on_hand, st.pipeline
        np.testing.assert_allclose(sim.cost[i], total)


def test_state_policy_path_equals_position_path():
    p = problem()
    D = demand_matrix(p, 11, seed=4)
    a = simulate(p, SSPolicy(s=8, S=22), D)

    def fn(on, pipe, t):
        ip = on + pipe.sum(axis=1)
        return np.where(ip < 8, 22 - ip, 0)

    b = simulate(p, StatePolicy(fn=fn), D)
    np.testing.assert_array_equal(a.cost, b.cost)


def test_common_random_numbers_and_seeds():
    p = problem()
    e1 = evaluate(p, [SSPolicy(8, 22), BaseStockPolicy(18)], replications=200, seed=5)
    e2 = evaluate(p, [SSPolicy(8, 22), BaseStockPolicy(18)], replications=200, seed=5)
    e3 = evaluate(p, [SSPolicy(8, 22)], replications=200, seed=6)
    assert [e.mean_cost for e in e1] == [e.mean_cost for e in e2]
    assert e3[0].mean_cost != e1[0].mean_cost


def test_statistics_on_deterministic_demand():
    # demand 2/day, L=0, base-stock 2: every day order 2 (setup 3), sell 2, nothing held, nothing lost
    p = problem(demand=Demand.deterministic(2), lead_time=0, initial_inventory=0, horizon=10)
    (ev,) = evaluate(p, [BaseStockPolicy(2)], replications=5)
    assert ev.mean_cost == pytest.approx(30.0) and ev.std_cost == 0
    assert ev.fill_rate == 1.0 and ev.stockout_rate == 0.0 and ev.order_frequency == 1.0
    (never,) = evaluate(p, [ConstantPolicy(0)], replications=5)
    assert never.mean_cost == pytest.approx(10 * 2 * 4.0) and never.fill_rate == 0 and never.stockout_rate == 1


def test_composite_objective_weights_std_by_risk():
    assert composite_objective(100, 10, 0) == pytest.approx(110)
    assert composite_objective(100, 10, -2) == pytest.approx(100 + np.exp(2) * 10)
    p = problem(risk_tolerance=-3)
    sim = simulate(p, SSPolicy(8, 22), demand_matrix(p, 50))
    row = summarise(p, sim)[0]
    assert row["objective"] == pytest.approx(row["mean_cost"] + np.exp(3) * row["std_cost"])


def test_policy_rules():
    pos = np.array([[0, 5, 9, 10]])
    assert SSPolicy(10, 20).order_from_position(pos, 0).tolist() == [[20, 15, 11, 0]]
    assert SQPolicy(10, 7).order_from_position(pos, 0).tolist() == [[7, 7, 7, 0]]
    assert RQPolicy(10, 4).order_from_position(pos, 0).tolist() == [[12, 8, 4, 0]]
    assert BaseStockPolicy(9).order_from_position(pos, 0).tolist() == [[9, 4, 0, 0]]


def test_policy_specs():
    assert parse_policy_spec("ss:40,65") == SSPolicy(40, 65)
    assert parse_policy_spec("sq:30,30") == SQPolicy(30, 30)
    assert parse_policy_spec("bs:18") == BaseStockPolicy(18)
    assert parse_policy_spec("const:4") == ConstantPolicy(4)
    for bad in ("ss:65,40", "xx:1", "ss:1", "ss:a,b"):
        with pytest.raises(ValueError, match="--evaluate"):
            parse_policy_spec(bad)


def test_average_objective_reports_per_period():
    p = problem()
    fin = evaluate(p, [SSPolicy(8, 22)], replications=100)[0]
    avg = evaluate(p, [SSPolicy(8, 22)], replications=100, objective="average")[0]
    assert avg.mean_cost < fin.mean_cost / 10  # per period, not a 40-day total
    with pytest.raises(ValueError, match="objective"):
        evaluate(p, [SSPolicy(8, 22)], objective="weekly")
