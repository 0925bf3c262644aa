"""The speed-ups of the searches after training change no answer: the greedy network run once per distinct state,
all candidates of a coordinate in one stacked simulation, and the time budget the searches keep."""

import numpy as np
import pytest
import torch
from rl_search_cases import base_stock_fn, small_problem

from inventory.montecarlo import demand_matrix
from rl import policy as rl_policy
from rl.crn_search import path_costs, stacked_path_costs
from rl.dqn_torch import TrainedDQN
from rl.features import default_normalisation, obs_dim
from rl.network import QNetwork
from rl.opening import OpeningPolicy
from rl.policy import GreedyQ
from rl.residual import Residual, ResidualPolicy


def _net(p, seed=0) -> QNetwork:
    torch.manual_seed(seed)
    return QNetwork(obs_dim(p), p.max_order + 1).eval()


@pytest.mark.parametrize("lost_sales", [True, False])
def test_the_network_runs_once_per_distinct_state_with_the_same_orders_and_values(lost_sales, monkeypatch):
    p = small_problem(horizon=40, lost_sales=lost_sales)
    policy = GreedyQ(_net(p), default_normalisation(p), p)
    rng = np.random.default_rng(0)
    n = 5000
    on = rng.integers(-15 if not lost_sales else 0, 20, n)  # backlog: negative on-hand
    pipe = rng.integers(0, 6, (n, p.lead_time))
    t = rng.integers(0, 40, n)
    rows = []
    monkeypatch.setattr(policy, "q_values", lambda o, pp, tt, f=policy.q_values: rows.append(np.size(o)) or f(o, pp, tt))
    a, v = policy.act(on, pipe, t)
    distinct = np.unique(np.column_stack([on, pipe, t]), axis=0).shape[0]
    assert rows == [distinct] and distinct < n  # one forward pass over the distinct states only
    monkeypatch.setattr(rl_policy, "DISTINCT_MIN_ROWS", 10**9)  # the plain forward pass over every row
    a_all, v_all = policy.act(on, pipe, t)
    assert np.array_equal(a, a_all) and np.allclose(v, v_all, rtol=0, atol=1e-6)
    a_scalar_t = policy.act(on, pipe, 7)[0]  # a scalar period, as the Monte Carlo evaluator passes it
    monkeypatch.setattr(rl_policy, "DISTINCT_MIN_ROWS", 512)
    assert np.array_equal(policy.act(on, pipe, 7)[0], a_scalar_t)


def test_states_too_wide_for_one_key_or_not_whole_numbers_are_left_as_they_are():
    n = 1000
    on = np.arange(n, dtype=np.int64)
    huge = np.stack([np.zeros(n, np.int64), np.full(n, 2**40)], axis=1)  # ranges whose product overflows 62 bits
    huge[0] = [2**40, 0]
    assert rl_policy._distinct_states(on, huge, np.arange(n)) is None
    assert rl_policy._distinct_states(on.astype(float), np.zeros((n, 1)), 0) is None
    first, inverse = rl_policy._distinct_states(on % 7, np.zeros((n, 2), np.int64), 3)
    assert first.size == 7 and np.array_equal((on % 7)[first][inverse], on % 7)


def test_a_stacked_simulation_gives_each_candidate_its_own_costs():
    p = small_problem(horizon=25)
    base = GreedyQ(_net(p, 1), default_normalisation(p), p)
    demands = demand_matrix(p, 300, seed=4)
    openings = [OpeningPolicy(p, base, orders) for orders in ([3, 4, 5], [0, 12, 1], [7, 7, 7])]
    residuals = [ResidualPolicy(p, base, Residual(3, 20, 23, [8, 12], offs, [1, -1, 0], False))
                 for offs in ([0, 1, -1], [2, 0, 0])]
    candidates = openings + residuals
    stacked = stacked_path_costs(p, base, [c.adjust for c in candidates], demands)
    alone = np.array([path_costs(p, c, demands) for c in candidates])
    assert stacked.shape == (5, 300) and np.array_equal(stacked, alone)
    assert len({round(float(row.mean()), 6) for row in stacked}) == 5  # the candidates do differ


def test_the_searches_keep_their_time_budget_and_say_what_they_skipped():
    p = small_problem(horizon=30)
    trained = TrainedDQN(p, _net(p, 2), default_normalisation(p), "torch")
    trained.improve_after_training(2000, 400, 400, seed=0, seconds=0.0)
    assert trained.info["opening"] == {"skipped": "time budget"}
    assert trained.info["residual"] == {"skipped": "time budget"}
    assert trained.info["policy_iteration"]["rounds"][0]["reason"] == "time budget"
    assert trained.opening == [] and trained.residual is None and trained.trained_net is None
    free = TrainedDQN(p, _net(p, 2), default_normalisation(p), "torch")
    free.improve_after_training(0, 400, 0, seed=0, seconds=None)
    assert "skipped" not in free.info["opening"] and free.info["opening"]["applied"]


def test_base_stock_callables_still_work_in_a_stacked_run():
    p = small_problem(horizon=20)
    base = base_stock_fn(12)
    d = demand_matrix(p, 200, seed=2)
    adjust = [OpeningPolicy(p, base, [a, 5]).adjust for a in (0, 6, 12)]
    alone = np.array([path_costs(p, OpeningPolicy(p, base, [a, 5]), d) for a in (0, 6, 12)])
    assert np.array_equal(stacked_path_costs(p, base, adjust, d), alone)
