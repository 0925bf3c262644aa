"""Rollout improvement of the opening orders (rl.opening): where it applies, that it never loses on its own
numbers, and that the wrapped policy changes only the opening's own states."""

import numpy as np
from rl_search_cases import base_stock_fn, small_problem

from inventory.montecarlo import demand_matrix, simulate
from inventory.policies import StatePolicy
from inventory.problem import Problem
from rl.opening import OpeningPolicy, improve_opening, opening_states


def _problem(**kw) -> Problem:
    return small_problem(**{"horizon": 20, **kw})


_base_stock = base_stock_fn


def test_the_opening_states_do_not_depend_on_demand():
    p = _problem(lead_time=3)
    states = opening_states(p, [5, 2, 7])
    assert [int(on[0]) for on, _ in states] == [0, 0, 0]
    assert [pipe[0].tolist() for _, pipe in states] == [[0, 0, 0], [0, 0, 5], [0, 5, 2]]
    # t = L: the first order arrives during period L, so the shelf is still empty whatever the demand was
    from inventory import dynamics
    on, pipe = dynamics.initial_state(p, (2,))
    for a in (5, 2, 7):
        st = dynamics.step(p, on, pipe, np.array([a, a]), np.array([0, 9]))
        on, pipe = st.on_hand, st.pipeline
    assert on.tolist() == [0, 0] and pipe.tolist() == [[5, 2, 7], [5, 2, 7]]
    assert opening_states(p, [5, 2, 7, 4])[3][1][0].tolist() == [5, 2, 7]


def test_a_poor_opening_is_improved_and_never_made_worse():
    p = _problem()
    base = _base_stock(30)  # far too high: orders 12 (the cap) twice at the start, then up to 30
    orders, info = improve_opening(p, base, replications=400, seed=1)
    assert info["applied"] and info["own_opening"] == [12, 12, 6]  # t = 2: up to S = 30 (position 24)
    assert info["improved_cost"] < info["own_cost"] and info["kept_after_check"]  # and it held on fresh numbers
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


def _trained(p: Problem, opening_replications: int = 300):
    """An untrained network as a TrainedDQN: the shipping path does not care how good the network is."""
    import torch

    from rl.dqn_torch import TrainedDQN
    from rl.features import default_normalisation, obs_dim
    from rl.network import QNetwork

    torch.manual_seed(0)
    t = TrainedDQN(p, QNetwork(obs_dim(p), p.max_order + 1, (16,), "relu").eval(), default_normalisation(p), "test")
    t.improve_opening(opening_replications, seed=2)
    return t


def test_the_opening_ships_in_the_artifacts_and_the_recommender_follows_it(tmp_path):
    from rl.artifacts import DQNRecommender

    p = _problem(lead_time=3)
    t = _trained(p)
    assert t.info["opening"]["applied"] and len(t.opening) == 4  # t = 0..L: the shelf is empty until L's arrival
    assert t.info["opening"]["improved_cost"] <= t.info["opening"]["own_cost"]
    rec = DQNRecommender.load(t.save(tmp_path / "a"))
    assert rec.opening == t.opening
    d = demand_matrix(p, 300, seed=5)  # shipped policy == trained policy, path by path
    a = simulate(p, t.state_policy(), d, detailed=False).cost[0]
    b = simulate(p, rec.state_policy(), d, detailed=False).cost[0]
    assert np.array_equal(a, b)
    net_only = rec._greedy
    for step, (on, pipe) in enumerate(opening_states(p, t.opening)):  # the opening's own states: its orders
        out = rec.recommend_order(int(on[0]), step, pipe[0].tolist())
        q = net_only.q_values(on, pipe, step)[0]
        assert out["recommended_order"] == t.opening[step] and out["q_value"] == float(q[t.opening[step]])
    # anywhere else: the network's masked argmax
    on, pipe = np.array([0]), np.array([[1, 0, 0]])
    assert rec.recommend_order(0, 1, [1, 0, 0])["recommended_order"] == int(net_only(on, pipe, 1)[0])


def test_zero_replications_keep_the_networks_own_opening_and_old_artifacts_load(tmp_path):
    import json

    from rl.artifacts import DQNRecommender

    p = _problem()
    t = _trained(p, opening_replications=0)
    assert t.opening == [] and "opening" not in t.info
    out = t.save(tmp_path / "a")
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["opening_orders"] == []
    del cfg["opening_orders"]  # artifacts written before the opening shipped
    (out / "config.json").write_text(json.dumps(cfg))
    assert DQNRecommender.load(out).opening == []


def test_bad_opening_orders_and_settings_name_the_field(tmp_path):
    import json

    import pytest

    from rl.artifacts import DQNRecommender
    from rl.dqn_torch import DQNConfig
    from rl.rllib_train import RLlibSettings

    p = _problem()
    out = _trained(p, opening_replications=0).save(tmp_path / "a")
    cfg = json.loads((out / "config.json").read_text())
    for bad in ([1, 2, 3, 4], [13], [-1], "5", [1.5]):  # too long for L = 2, above max_order 12, negative, ...
        cfg["opening_orders"] = bad
        (out / "config.json").write_text(json.dumps(cfg))
        with pytest.raises(ValueError, match=r"opening_orders.*lead_time \+ 1 = 3.*0..12"):
            DQNRecommender.load(out)
    for make in (DQNConfig, RLlibSettings):
        with pytest.raises(ValueError, match="opening_replications"):
            make(opening_replications=-1)


def test_a_saving_within_the_search_noise_does_not_replace_the_networks_order():
    from rl.crn_search import clearly_cheaper as _clearly_cheaper

    rng = np.random.default_rng(0)
    best = rng.normal(500.0, 40.0, size=2000)
    assert not _clearly_cheaper(best.copy(), best, 2.0)  # the same paths
    assert _clearly_cheaper(best - 1.0, best, 2.0)  # one unit cheaper on every path
    noisy = best + rng.normal(-0.5, 30.0, size=best.size)  # 0.5 cheaper on average, SE 0.67: noise
    assert not _clearly_cheaper(noisy, best, 2.0)
    assert _clearly_cheaper(noisy, best, 0.0)  # what the rule without the guard would have taken


def test_the_search_stays_bounded_for_huge_capacities_and_long_leads(monkeypatch):
    import rl.opening as op

    calls = []
    real = op._path_costs
    monkeypatch.setattr(op, "_path_costs", lambda *a: calls.append(a[3].shape) or real(*a))
    p = _problem(lead_time=2, horizon=30, max_inventory=100_000, max_order=10_000)
    orders, info = improve_opening(p, _base_stock(40), replications=50, seed=0)
    assert info["applied"] and len(orders) == 3 and all(0 <= a <= 10_000 for a in orders)
    assert len(calls) <= 2 * 3 * op.MAX_CANDIDATES + 3  # not 2 sweeps x 3 periods x 10,001 orders
    assert op._candidates(10_000, 5_000)[:3] == [0, 294, 588] and 4_999 in op._candidates(10_000, 5_000)
    long_lead = _problem(lead_time=25, horizon=60, max_inventory=600, max_order=60)
    orders, info = improve_opening(long_lead, _base_stock(150), replications=40, seed=0)
    assert len(orders) == 26 and info["simulations"] <= op.MAX_SIMULATIONS
    calls.clear()
    long_horizon = _problem(lead_time=1, horizon=1000, max_order=6)
    orders, info = improve_opening(long_horizon, _base_stock(12), replications=2000, seed=0)
    assert info["search_replications"] == 240 and calls[0][0] == 240  # 240,000 path-periods / 1,000 periods
