"""The policies' contract on the numpy path: the cases mutation testing (mutmut on inventory/policies.py) found
unchecked by the fast tests (docs/architecture.md, "Mutation testing"): parameter vectors as (P, 1) columns,
the kernel forms the compiled kernels dispatch on, labels and params, the state-policy reshaping, and every
form and error of the --evaluate spec parser."""

import numpy as np
import pytest

from inventory.policies import (
    RULES,
    BaseStockPolicy,
    ConstantPolicy,
    Policy,
    PolicySpecError,
    RQPolicy,
    SQPolicy,
    SSPolicy,
    StatePolicy,
    base_stock_rule,
    const_rule,
    parse_policy_spec,
    rq_rule,
    sq_rule,
    ss_rule,
)

POSITION = np.array([[0, 5, 9, 10], [0, 5, 9, 10]])  # (P = 2 parameter rows, R = 4 replications)


def test_parameter_vectors_act_row_by_row():
    assert SSPolicy(s=[6, 10], S=[20, 25]).order_from_position(POSITION, 0).tolist() == [[20, 15, 0, 0],
                                                                                         [25, 20, 16, 0]]
    assert BaseStockPolicy(S=[4, 9]).order_from_position(POSITION, 0).tolist() == [[4, 0, 0, 0], [9, 4, 0, 0]]
    assert SQPolicy(s=[6, 10], Q=[3, 7]).order_from_position(POSITION, 0).tolist() == [[3, 3, 0, 0],
                                                                                      [7, 7, 7, 0]]
    rq = RQPolicy(R=[10, 10], Q=[4, 0]).order_from_position(POSITION, 0)  # Q = 0 is read as 1
    assert rq.dtype == np.int64 and rq.tolist() == [[12, 8, 4, 0], [10, 5, 1, 0]]
    assert ConstantPolicy(q=[0, 3]).order_from_position(POSITION, 0).tolist() == [[0] * 4, [3] * 4]


def test_kernel_forms_name_the_rule_and_broadcast_the_parameters():
    code, a, b = SSPolicy(s=3, S=[5, 6]).kernel_form()
    assert RULES[code] is ss_rule and a.tolist() == [3.0, 3.0] and b.tolist() == [5.0, 6.0]
    assert a.dtype == b.dtype == np.float64 and a.flags["C_CONTIGUOUS"] and b.flags["C_CONTIGUOUS"]
    code, a, b = BaseStockPolicy(S=[7, 8]).kernel_form()
    assert RULES[code] is base_stock_rule and a.tolist() == [7.0, 8.0] and b.tolist() == [0.0, 0.0]
    code, a, b = SQPolicy(s=[2], Q=9).kernel_form()
    assert RULES[code] is sq_rule and (a.tolist(), b.tolist()) == ([2.0], [9.0])
    code, a, b = RQPolicy(R=[10, 12], Q=[0, 3]).kernel_form()
    assert RULES[code] is rq_rule and (a.tolist(), b.tolist()) == ([10.0, 12.0], [1.0, 3.0])
    code, a, b = ConstantPolicy(q=4).kernel_form()
    assert RULES[code] is const_rule and (a.tolist(), b.tolist()) == ([4.0], [0.0])
    assert StatePolicy(fn=lambda on, pipe, t: on).kernel_form() is None


def test_labels_and_params():
    assert SSPolicy([1, 2], [5, 6]).label(1) == "(s=2, S=6)" and SSPolicy(1, 5).params() == {"s": 1, "S": 5}
    assert BaseStockPolicy([3, 4]).label(1) == "base-stock S=4" and BaseStockPolicy(3).params() == {"S": 3}
    assert SQPolicy([1, 2], [7, 8]).label(1) == "(s=2, Q=8)" and SQPolicy(1, 7).params() == {"s": 1, "Q": 7}
    assert RQPolicy([9, 10], [2, 3]).label(1) == "(R=10, Q=3) multiples"
    assert RQPolicy(9, 2).params() == {"R": 9, "Q": 2}
    assert ConstantPolicy([0, 5]).label(1) == "constant q=5" and ConstantPolicy(5).params() == {"q": 5}
    assert Policy().label() == "policy" and Policy().params() == {} and Policy().size == 1
    one = [SSPolicy(1, 5), BaseStockPolicy(3), SQPolicy(1, 7), RQPolicy(9, 2), ConstantPolicy(5)]
    assert [p.label() for p in one] == ["(s=1, S=5)", "base-stock S=3", "(s=1, Q=7)", "(R=9, Q=2) multiples",
                                        "constant q=5"]  # the default row is the first
    sp = StatePolicy(fn=lambda on, pipe, t: on, title="DP optimal", meta={"states": 12})
    assert sp.label(3) == "DP optimal" and sp.params() == {"states": 12} and sp.params() is not sp.meta


def test_state_policy_sees_flat_states_and_answers_in_the_states_shape():
    seen = {}

    def fn(on, pipe, t):
        seen["shapes"] = (on.shape, pipe.shape, t)
        return on + pipe.sum(axis=1) + t

    on = np.arange(6).reshape(2, 3)
    pipe = np.ones((2, 3, 2), np.int64)
    out = StatePolicy(fn=fn).order_from_state(on, pipe, 4)
    assert seen["shapes"] == ((6,), (6, 2), 4)
    assert out.shape == (2, 3) and out.tolist() == [[6, 7, 8], [9, 10, 11]]


@pytest.mark.parametrize("spec,policy", [
    ("ss:40,65", SSPolicy(40, 65)), ("SS : 5 , 5", SSPolicy(5, 5)), ("sq:3,30", SQPolicy(3, 30)),
    ("rq:12,4", RQPolicy(12, 4)), ("rq:12,0", RQPolicy(12, 1)), ("bs:0", BaseStockPolicy(0)),
    ("const:4", ConstantPolicy(4)), ("ss:1.0,9", SSPolicy(1, 9)),
])
def test_every_spec_form(spec, policy):
    assert parse_policy_spec(spec) == policy


@pytest.mark.parametrize("spec,message", [
    ("ss", "cannot read policy 'ss'; allowed forms: ss:s,S | sq:s,Q | rq:R,Q | bs:S | const:q"),
    ("ss:1..2,3", "parameters must be whole numbers separated by commas, got 'ss:1..2,3'; allowed forms: ss:s,S"),
    ("ss:1 2,30", "parameters must be whole numbers separated by commas, got 'ss:1 2,30'"),  # not (12, 30)
    ("ss:2.7,30", "parameters must be whole numbers separated by commas, got 'ss:2.7,30'"),  # not truncated to 2
    ("ss:1,2,", "parameters must be whole numbers separated by commas, got 'ss:1,2,'"),
    ("xx:1", "unknown policy type 'xx'; allowed forms: ss:s,S"),
    ("rq:1", "rq takes 2 number(s), got 'rq:1'"),
    ("bs:1,2", "bs takes 1 number(s), got 'bs:1,2'"),
    ("ss:-1,4", "parameters must be >= 0, got 'ss:-1,4'"),
    ("ss:65,40", "(s,S) needs s <= S, got 'ss:65,40'"),
])
def test_bad_specs_say_what_is_allowed(spec, message):
    with pytest.raises(PolicySpecError) as err:
        parse_policy_spec(spec)
    assert str(err.value).startswith("--evaluate: " + message)


def test_levels_beyond_int64_order_like_the_capacity():
    """Advice parsed from a garbled dialogue said "order up to 111111111111111120396815433971561152905216": the
    study's scoring crashed (numpy cannot round an object array). Any level above the capacity orders up to it."""
    from inventory import dp
    from inventory.demand import Demand
    from inventory.montecarlo import demand_matrix, evaluate, simulate
    from inventory.policies import SSPolicy
    from inventory.problem import Problem

    p = Problem(horizon=8, demand=Demand.poisson(4), lost_sales=True, holding_cost=1, penalty_cost=9, setup_cost=5,
                lead_time=1, max_inventory=20, max_order=20)
    huge, at_cap = SSPolicy(5, 111111111111111120396815433971561152905216), SSPolicy(5, 20)
    a, b = evaluate(p, [huge, at_cap], replications=200)
    assert a.mean_cost == b.mean_cost and a.std_cost == b.std_cost
    D = demand_matrix(p, 50)
    for backend in ("numba", "numpy", "torch"):
        assert np.array_equal(simulate(p, huge, D, backend=backend).cost, simulate(p, at_cap, D, backend=backend).cost)
    exact_huge, exact_cap = dp.evaluate_policy(p, huge), dp.evaluate_policy(p, at_cap)
    assert (exact_huge.optimal_cost, exact_huge.states) == (exact_cap.optimal_cost, exact_cap.states)
