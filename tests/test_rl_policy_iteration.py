"""Rollout policy iteration on a trained network (rl.policy_iteration): the rollouts are the shared dynamics on
common random numbers, the fine-tuning moves the decisions next to the greedy order and leaves the rest, a
network that leans one way is corrected on numbers the search never saw, and nothing ships that fails its check."""

import time

import numpy as np
import pytest
import torch
from rl_search_cases import small_problem

from inventory import dynamics
from inventory.montecarlo import demand_matrix, simulate
from inventory.policies import StatePolicy
from rl.dqn_torch import DQNConfig, training_budget
from rl.features import default_normalisation, encode, obs_dim
from rl.network import QNetwork
from rl.policy import GreedyQ
from rl.policy_iteration import (
    CHUNK_STATES,
    RolloutSettings,
    fit_differences,
    improve_network,
    rollout_savings,
)
from rl.rllib_train import RLlibSettings


def _base_stock_net(p, S: int, seed: int = 0) -> QNetwork:
    """A Q-network whose greedy order is (about) order-up-to-S: fitted to Q(s, a) = -|position + a - S|."""
    torch.manual_seed(seed)
    norm = default_normalisation(p)
    rng = np.random.default_rng(seed)
    n = 6000
    on = rng.integers(0, 20, n)
    pipe = rng.integers(0, 8, (n, p.lead_time))
    t = rng.integers(0, p.horizon, n)
    pos = on + pipe.sum(axis=1)
    q = -np.abs(pos[:, None] + np.arange(p.max_order + 1)[None, :] - S).astype(np.float32) / 4
    X, Y = torch.from_numpy(encode(norm, on, pipe, t)), torch.from_numpy(q)
    net = QNetwork(obs_dim(p), p.max_order + 1)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    for _ in range(300):
        loss = ((net(X) - Y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return net.eval()


def _cost(p, fn, seed=77, paths=3000) -> float:
    return float(simulate(p, StatePolicy(fn=fn), demand_matrix(p, paths, seed=seed), detailed=False).cost[0].mean())


def _by_hand(p, policy, on0, pipe0, t0, first, dem, periods):
    """Mean total cost over the paths of `dem` (paths, periods): order `first`, then `policy`, by dynamics.step."""
    total = np.zeros(dem.shape[0])
    o, pp = np.full(dem.shape[0], on0), np.tile(pipe0, (dem.shape[0], 1))
    for k in range(periods):
        order = np.full(dem.shape[0], first) if k == 0 else policy(o, pp, None)
        st = dynamics.step(p, o, pp, order, dem[:, k])
        total, o, pp = total + st.cost, st.on_hand, st.pipeline
    return total.mean()


def test_rollout_savings_are_the_dynamics_on_common_demand():
    p = small_problem(horizon=12)
    S = 11
    policy = lambda on, pipe, t: np.clip(S - on - pipe.sum(axis=1), 0, p.max_order)  # noqa: E731  (arrays of t)
    on, pipe, t = np.array([0, 6, 30]), np.array([[0, 0], [3, 2], [5, 5]]), np.array([3, 9, 5])
    a0, savings, done = rollout_savings(p, policy, on, pipe, t, paths=5, horizon=4, seed=3)
    assert a0.tolist() == [11, 0, 0] and done == 3 and (savings[:, 1] == 0).all()
    assert np.isinf(savings[1, 0]) and np.isinf(savings[2, 0])  # no order below 0
    assert np.isinf(savings[2, 2])  # position 40 = max_inventory: no room for one more
    # by hand on the same five demand paths (horizon capped at T - t = 3 for state 1)
    dem = demand_matrix(p, 3 * 5, periods=4, seed=3).reshape(3, 5, 4)
    assert savings[0, 0] == pytest.approx(_by_hand(p, policy, 0, [0, 0], 3, 10, dem[0], 4)
                                          - _by_hand(p, policy, 0, [0, 0], 3, 11, dem[0], 4))
    assert savings[1, 2] == pytest.approx(_by_hand(p, policy, 6, [3, 2], 9, 1, dem[1], 3)
                                          - _by_hand(p, policy, 6, [3, 2], 9, 0, dem[1], 3))


@pytest.mark.parametrize("lead_time, lost_sales", [(1, True), (2, True), (3, False)])
def test_dropping_paths_where_the_branches_meet_leaves_the_savings_exact(lead_time, lost_sales):
    """A base-stock rule makes the three branches meet after L + 1 periods on most paths; those paths stop being
    simulated, and the savings still equal the full simulation by hand, state by state, under both variants."""
    p = small_problem(horizon=30, lead_time=lead_time, lost_sales=lost_sales)
    S = 5 * (lead_time + 1)
    policy = lambda on, pipe, t: np.clip(S - on - pipe.sum(axis=1), 0, p.max_order)  # noqa: E731
    rng = np.random.default_rng(lead_time)
    n, paths, horizon = 12, 7, 9
    on, pipe, t = rng.integers(0, 12, n), rng.integers(0, 5, (n, lead_time)), rng.integers(0, 20, n)
    a0, savings, _ = rollout_savings(p, policy, on, pipe, t, paths=paths, horizon=horizon, seed=5)
    dem = demand_matrix(p, n * paths, periods=horizon, seed=5).reshape(n, paths, horizon)
    for i in range(n):
        periods = min(horizon, p.horizon - t[i])
        greedy = _by_hand(p, policy, on[i], pipe[i], t[i], a0[i], dem[i], periods)
        for j, d in ((0, -1), (2, 1)):
            if np.isfinite(savings[i, j]):
                assert savings[i, j] == pytest.approx(
                    _by_hand(p, policy, on[i], pipe[i], t[i], a0[i] + d, dem[i], periods) - greedy)


def test_the_rollouts_and_the_rounds_stop_at_the_deadline():
    p = small_problem(horizon=30)
    norm = default_normalisation(p)
    net = _base_stock_net(p, 10)
    policy = GreedyQ(net, norm, p)
    n = 3 * CHUNK_STATES
    rng = np.random.default_rng(0)
    on, pipe, t = rng.integers(0, 12, n), rng.integers(0, 5, (n, 2)), rng.integers(3, 25, n)
    a0, savings, done = rollout_savings(p, policy, on, pipe, t, paths=4, horizon=6, seed=1, until=0.0)
    assert done == CHUNK_STATES and savings.shape == (CHUNK_STATES, 3) and a0.size == CHUNK_STATES  # first chunk only
    full = rollout_savings(p, policy, on, pipe, t, paths=4, horizon=6, seed=1)[1]
    assert np.array_equal(full[:CHUNK_STATES], savings)  # the chunks are the same computation
    same, info = improve_network(p, net, norm, 3, RolloutSettings(states=2000), deadline=time.perf_counter() - 1)
    assert same is net and not info["applied"] and info["rounds"] == [
        {"kept_after_check": False, "reason": "time budget", "seconds_left": info["rounds"][0]["seconds_left"]}]
    assert info["rounds"][0]["seconds_left"] < 0


def test_fitting_moves_the_neighbours_of_the_greedy_order_and_keeps_the_rest():
    p = small_problem(horizon=20)
    norm = default_normalisation(p)
    net = _base_stock_net(p, 12)
    rng = np.random.default_rng(1)
    n = 4000
    on, pipe, t = rng.integers(0, 8, n), rng.integers(0, 4, (n, 2)), rng.integers(3, 18, n)
    obs = encode(norm, on, pipe, t)
    a0 = GreedyQ(net, norm, p)(on, pipe, t)
    inner = (a0 >= 1) & (a0 < p.max_order)
    target = np.tile([-0.5, 0.5], (n, 1)).astype(np.float64)  # one more unit is better by half a unit of Q
    tuned = fit_differences(net, obs, a0, target, np.ones((n, 2), bool), RolloutSettings(epochs=30), seed=0)
    a1 = GreedyQ(tuned, norm, p)(on, pipe, t)
    assert (a1[inner] > a0[inner]).mean() > 0.95 and (a1[inner] == a0[inner] + 1).mean() > 0.6  # up, mostly by one
    with torch.no_grad():
        q0, q1 = net(torch.from_numpy(obs)), tuned(torch.from_numpy(obs))
    far = (np.arange(p.max_order + 1)[None, :] < a0[:, None] - 3)  # orders well below the greedy one
    d0 = (q0 - q0.gather(1, torch.from_numpy(a0)[:, None])).numpy()
    d1 = (q1 - q1.gather(1, torch.from_numpy(a0)[:, None])).numpy()
    assert np.abs(d1 - d0)[far].mean() < 0.25  # the rest of the shape stays


def test_a_network_that_orders_too_little_is_corrected_on_fresh_numbers():
    p = small_problem(horizon=30)
    norm = default_normalisation(p)
    best = min(range(10, 25), key=lambda s: _cost(p, GreedyQ(_base_stock_net(p, s), norm, p), paths=400))
    net = _base_stock_net(p, best - 4)  # leans low everywhere
    tuned, info = improve_network(p, net, norm, t_from=3, settings=RolloutSettings(states=6000), seed=1)
    assert info["applied"] and info["rounds"][0]["kept_after_check"] and tuned is not net
    assert info["rounds"][0]["higher_better"] > info["rounds"][0]["lower_better"]
    assert _cost(p, GreedyQ(tuned, norm, p)) < _cost(p, GreedyQ(net, norm, p))  # numbers it never saw


def test_nothing_ships_that_fails_its_check_and_zero_switches_it_off():
    p = small_problem(horizon=20)
    norm = default_normalisation(p)
    net = _base_stock_net(p, 10)
    same, info = improve_network(p, net, norm, 3, RolloutSettings(states=2000, rounds=2, z=1e9), seed=0)
    assert same is net and not info["applied"] and info["rounds_kept"] == 0
    assert len(info["rounds"]) == 1 and not info["rounds"][0]["kept_after_check"]  # a failed round ends it
    same, info = improve_network(p, net, norm, 3, RolloutSettings(states=0))
    assert same is net and info == {"applied": False, "reason": "switched off"}


def test_settings_are_checked_and_the_budget_keeps_time_for_the_searches():
    with pytest.raises(ValueError, match="rollout_states: -1 is not allowed"):
        DQNConfig(rollout_states=-1)
    with pytest.raises(ValueError, match="search_reserve_s"):
        RLlibSettings(search_reserve_s=-5)
    with pytest.raises(ValueError, match="rounds"):
        RolloutSettings(rounds=-1)
    assert training_budget(60.0, 20.0, True) == 40.0 and training_budget(60.0, 20.0, False) == 60.0
    assert training_budget(30.0, 20.0, True) == 15.0 and training_budget(None, 20.0, True) is None
    assert RLlibSettings().training_seconds == 40.0
    assert RLlibSettings(rollout_states=0, opening_replications=0, residual_replications=0).training_seconds == 60.0
