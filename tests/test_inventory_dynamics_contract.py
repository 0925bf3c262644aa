"""The dynamics' array contract: the cases mutation testing (mutmut on inventory/dynamics.py) found unchecked.

Each test names what a mutant got away with before it existed (docs/architecture.md, "Mutation testing"):
integer state and orders whatever the input dtype, the setup charged from an order of one unit, the pipeline
shifted per row in a batch, one state with many candidate orders, flat pipelines reshaped to the state's
shape, the held units reported, and the two helpers no dynamics test called.
"""

import numpy as np
import pytest

from inventory.dynamics import (
    cap_order,
    expected_period_cost,
    initial_state,
    inventory_position,
    period_cost,
    settle,
    step,
)


def test_orders_and_state_stay_whole_units_whatever_the_input_dtype(make_problem):
    assert cap_order(np.array([2.4, 2.6, 7]), 0, 8, 20).dtype == np.int64
    assert cap_order(np.array([2.4, 2.6, 7]), 0, 8, 20).tolist() == [2, 3, 7]
    st = step(make_problem(), 3.0, [1.0, 2.0], 4.0, 2)  # (demand is taken as given: a float demand gives float stock)
    assert st.on_hand.dtype == st.pipeline.dtype == st.order.dtype == np.int64
    assert (int(st.on_hand), st.pipeline.tolist(), int(st.order)) == (2, [2, 4], 4)


def test_a_one_unit_order_pays_the_setup(make_problem):
    p = make_problem(setup_cost=5.0, holding_cost=0.0, penalty_cost=0.0)
    assert period_cost(np.array([0, 1, 2]), 0, 0, p).tolist() == [0.0, 5.0, 5.0]


def test_batched_pipeline_shifts_row_by_row(make_problem):
    p = make_problem(lead_time=2)
    on, pipe = np.array([3, 0, 7]), np.array([[1, 2], [0, 5], [4, 0]])
    st = step(p, on, pipe, np.array([4, 1, 0]), np.array([2, 9, 1]))
    assert st.pipeline.shape == (3, 2)
    assert st.pipeline.tolist() == [[2, 4], [5, 1], [0, 0]]
    for i in range(3):
        one = step(p, on[i], pipe[i], [4, 1, 0][i], [2, 9, 1][i])
        assert st.pipeline[i].tolist() == one.pipeline.tolist() and int(st.held[i]) == int(one.held)


def test_one_state_many_candidate_orders(make_problem):
    """What the counterfactual update does: every order from one state, one call."""
    p = make_problem(lead_time=1, max_inventory=12)
    st = step(p, 3, [4], np.arange(8), 5)
    assert st.order.tolist() == [0, 1, 2, 3, 4, 5, 5, 5]  # position 7: at most 5 more fit
    assert st.pipeline.tolist() == [[q] for q in [0, 1, 2, 3, 4, 5, 5, 5]]
    assert (st.on_hand == 2).all() and st.cost.tolist() == [2.0] + [7.0] * 7


def test_a_flat_pipeline_is_read_as_the_states_pipelines(make_problem):
    p = make_problem(lead_time=2)
    st = step(p, np.array([3, 5]), [1, 2, 3, 4], 0, 0)  # rows (1, 2) and (3, 4)
    assert st.on_hand.tolist() == [4, 8] and st.pipeline.tolist() == [[2, 0], [4, 0]]


def test_held_units_are_reported(make_problem):
    st = step(make_problem(lead_time=0), np.array([6, 1]), np.zeros((2, 0)), 0, 4)
    assert st.held.tolist() == [2, 0] and st.short.tolist() == [0, 3] and st.sold.tolist() == [4, 1]


def test_inventory_position_with_and_without_a_pipeline():
    assert inventory_position(np.array([3, -2]), np.zeros((2, 0), np.int64)).tolist() == [3, -2]
    assert inventory_position(np.array([3, -2]), np.array([[1], [4]])).tolist() == [4, 2]
    assert inventory_position(3, [1, 2, 3]).tolist() == 9


@pytest.mark.parametrize("lost,perishable", [(True, False), (False, False), (True, True), (False, True)])
def test_expected_period_cost_is_the_pmf_weighted_settle(lost, perishable, make_problem):
    p = make_problem(lost_sales=lost, perishable=perishable, holding_cost=1.5, penalty_cost=7.0, setup_cost=100.0)
    pmf = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
    available = np.array([-2, 0, 1, 3, 6])
    got = expected_period_cost(p, available, pmf)
    for a, g in zip(available, got, strict=True):
        _, held, short, _ = settle(a, np.arange(5), lost, perishable)
        assert g == pytest.approx(float(pmf @ (1.5 * held + 7.0 * short)))  # no setup in the DP's c(A)
    assert got[3] == pytest.approx(1.5 * (0.1 * 3 + 0.2 * 2 + 0.3 * 1) + 7.0 * 0.15)


def test_initial_state_shapes_and_values(make_problem):
    on, pipe = initial_state(make_problem(lead_time=3, initial_inventory=7), (4,))
    assert on.tolist() == [7] * 4 and pipe.shape == (4, 3) and not pipe.any()
    assert on.dtype == pipe.dtype == np.int64
    on, pipe = initial_state(make_problem(lead_time=0, initial_inventory=2))
    assert on.shape == () and int(on) == 2 and pipe.shape == (0,)


def test_fractional_demand_is_refused_and_whole_float_demand_is_counted_in_units(make_problem):
    from inventory.dynamics import step as one_step

    p = make_problem()
    with pytest.raises(ValueError, match="demand: must be whole units"):
        one_step(p, 5, [0] * p.lead_time, 0, 2.5)
    whole = one_step(p, 5, [0] * p.lead_time, 0, 2.0)
    assert whole.on_hand.dtype == np.int64 and whole.on_hand == one_step(p, 5, [0] * p.lead_time, 0, 2).on_hand
