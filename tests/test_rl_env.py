"""The gymnasium environment and its vectorised form follow the core's rules exactly."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from inventory.demand import Demand
from inventory.montecarlo import demand_matrix, simulate
from inventory.policies import BaseStockPolicy, StatePolicy
from inventory.problem import Problem
from rl.env import ENV_ID, InventoryEnv
from rl.features import default_normalisation, encode
from rl.vec_env import VectorInventoryEnv


def _problem(**kw) -> Problem:
    base = dict(horizon=12, demand=Demand.poisson(4), lost_sales=True, holding_cost=1.0, penalty_cost=9.0,
                setup_cost=2.0, lead_time=2, max_inventory=25, max_order=10)
    base.update(kw)
    return Problem(**base)


def test_registered_env_passes_gymnasium_checker():
    env = gym.make(ENV_ID)
    check_env(env.unwrapped, skip_render_check=True)
    obs, _ = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert env.action_space.n == env.unwrapped.problem.max_order + 1


def test_checker_on_backlog_and_zero_lead_time():
    for p in (_problem(lost_sales=False), _problem(lead_time=0)):
        check_env(InventoryEnv(problem=p), skip_render_check=True)


@pytest.mark.parametrize("kw", [{}, {"lost_sales": False}, {"lead_time": 0}, {"perishable": True},
                                {"max_inventory": 12, "max_order": 6}])
def test_env_matches_monte_carlo_simulator_on_same_demands(kw):
    """Total cost of a base-stock policy in the env == montecarlo.simulate on the same demand rows."""
    p = _problem(**kw)
    S = 14
    demands = demand_matrix(p, replications=5, seed=11)
    sim = simulate(p, BaseStockPolicy(S=S), demands)
    env = InventoryEnv(problem=p)
    for r in range(demands.shape[0]):
        env.reset(options={"demands": demands[r]})
        total, done = 0.0, False
        while not done:
            on_hand, pipeline, _ = env.state
            action = max(S - (on_hand + int(pipeline.sum())), 0)
            action = min(action, p.max_order)
            _, reward, done, trunc, info = env.step(action)
            assert not trunc
            total += info["cost"]
            assert reward == pytest.approx(-info["cost"] / env.norm.reward_scale)
        assert total == pytest.approx(float(sim.cost[0, r]))


def test_vector_env_matches_simulator_with_state_policy():
    """Many copies at once, a state-dependent policy, same demand matrix -> identical per-row costs."""
    p = _problem(lead_time=3, setup_cost=0.0)
    demands = demand_matrix(p, replications=64, seed=5)

    def rule(on_hand, pipeline, t):  # arbitrary state-dependent rule, exercises the full pipeline
        return np.clip(16 - on_hand - pipeline.sum(axis=1) + (pipeline[:, 0] % 3) - (t % 2), 0, 30)

    sim = simulate(p, StatePolicy(fn=rule), demands)
    venv = VectorInventoryEnv(p, num_envs=64)
    venv.reset(options={"demands": demands})
    total = np.zeros(64)
    for _ in range(p.horizon):
        _, _, terminated, truncated, info = venv.step(rule(venv.on_hand, venv.pipeline, venv.t))
        total += info["cost"]
    np.testing.assert_allclose(total, sim.cost[0])
    assert terminated.all() and not truncated.any()


def test_vector_env_is_a_gymnasium_vector_env_like_sync_copies():
    """The numpy-vectorised env is a real gymnasium VectorEnv: batched spaces, NEXT_STEP autoreset, and step for
    step the same observations, rewards and terminations as gymnasium's own SyncVectorEnv over InventoryEnv copies
    on the same demands; gymnasium's RecordEpisodeStatistics (which reads the autoreset mode) sees the returns."""
    from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    p = _problem(lead_time=1)
    n = 3
    row = demand_matrix(p, replications=1, seed=2)[0]
    venv = VectorInventoryEnv(p, num_envs=n)
    assert isinstance(venv, VectorEnv) and venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    sync = SyncVectorEnv([lambda: InventoryEnv(problem=p) for _ in range(n)])
    assert venv.single_observation_space == sync.single_observation_space
    assert venv.single_action_space == sync.single_action_space
    assert venv.observation_space == sync.observation_space and venv.action_space == sync.action_space
    obs, _ = venv.reset(seed=0, options={"demands": np.tile(row, (n, 1))})
    ref, _ = sync.reset(seed=0, options={"demands": row})
    np.testing.assert_array_equal(obs, ref)
    rng = np.random.default_rng(0)
    for t in range(p.horizon + 1):  # the last call is the autoreset step
        actions = rng.integers(0, p.max_order + 1, size=n)
        got, ref = venv.step(actions), sync.step(actions)
        for a, b in zip(got[:4], ref[:4], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6)
        assert venv.observation_space.contains(got[0])
        assert got[2].all() == (t == p.horizon - 1)
    assert (got[1] == 0).all() and not got[2].any()  # NEXT_STEP: the new episodes' first observation

    stats = RecordEpisodeStatistics(VectorInventoryEnv(p, num_envs=n, seed=4))
    stats.reset()
    total = np.zeros(n)
    for _ in range(p.horizon):
        *_, info = stats.step(np.full(n, 4))
        total += info["cost"]
    np.testing.assert_allclose(info["episode"]["r"], -total / stats.unwrapped.norm.reward_scale, rtol=1e-5)
    assert (info["episode"]["l"] == p.horizon).all()


def test_observation_encoding_and_sampling():
    p = _problem()
    env = InventoryEnv(problem=p)
    obs, _ = env.reset(seed=0)
    norm = default_normalisation(p)
    np.testing.assert_allclose(obs, encode(norm, [0], [[0, 0]], 0)[0])
    obs, _, _, _, info = env.step(7)
    on_hand, pipeline, t = env.state
    assert t == 1 and pipeline.tolist() == [0, 7] and info["order"] == 7
    assert obs[-2] == pytest.approx((on_hand + 7) / norm.inventory_scale)  # inventory position feature
    assert obs[-1] == pytest.approx(1 / p.horizon)
    # the capacity cap is the dynamics': ordering above the room is placed capped
    p2 = _problem(max_inventory=8, max_order=8)
    env2 = InventoryEnv(problem=p2)
    env2.reset(seed=0)
    _, _, _, _, info = env2.step(8)
    _, _, _, _, info = env2.step(8)
    assert info["order"] == 0


def test_episode_length_is_horizon_and_seeding_is_reproducible():
    p = _problem()
    costs = []
    for _ in range(2):
        env = InventoryEnv(problem=p)
        env.reset(seed=42)
        steps, done, c = 0, False, 0.0
        while not done:
            _, _, done, _, info = env.step(5)
            steps += 1
            c += info["cost"]
        costs.append(c)
        assert steps == p.horizon
        with pytest.raises(RuntimeError):
            env.step(0)
    assert costs[0] == costs[1]
    with pytest.raises(ValueError, match="action"):
        InventoryEnv(problem=p).step(p.max_order + 1)
