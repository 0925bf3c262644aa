"""The fast torch DQN learns, and its artifacts round-trip through the torch-only recommender."""

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from inventory.demand import Demand
from inventory.montecarlo import evaluate
from inventory.policies import BaseStockPolicy
from inventory.problem import Problem
from rl.artifacts import DQNRecommender, RecommendationInputError
from rl.dqn_torch import DQNConfig, train_dqn
from rl.features import default_normalisation, obs_dim
from rl.network import QNetwork
from rl.policy import q_state_policy


def _small(**kw) -> Problem:
    base = dict(horizon=20, demand=Demand.poisson(3), lost_sales=True, holding_cost=1.0, penalty_cost=9.0,
                setup_cost=0.0, lead_time=1, max_inventory=30, max_order=8)
    base.update(kw)
    return Problem(**base)


@pytest.fixture(scope="module")
def trained():
    p = _small()
    cfg = DQNConfig(total_steps=24_000, time_budget_s=60, num_envs=32, eval_every=4_000, eval_replications=200,
                    learning_starts=1_000, updates_per_step=2, min_steps=24_000, seed=1)
    return p, train_dqn(p, cfg)


@pytest.mark.slow  # the `trained` fixture: 24k DQN steps, 28-51 s measured
def test_short_training_improves_over_untrained_policy(trained):
    p, tr = trained
    torch.manual_seed(1)
    untrained = QNetwork(obs_dim(p), p.max_order + 1)
    norm = default_normalisation(p)
    ev = evaluate(p, [q_state_policy(untrained, norm, p), tr.state_policy(), BaseStockPolicy(S=np.arange(0, 15))],
                  replications=1000, seed=77)
    untrained_cost, dqn_cost = ev[0].mean_cost, ev[1].mean_cost
    best_bs = min(e.mean_cost for e in ev[2:])
    assert dqn_cost < 0.7 * untrained_cost
    assert dqn_cost < 1.05 * best_bs  # a short run is already close to the best base-stock
    assert tr.info["steps"] >= 4_000 and tr.history and tr.info["updates"] > 0


@pytest.mark.slow  # the `trained` fixture: 24k DQN steps, 28-51 s measured
def test_artifacts_round_trip(trained, tmp_path):
    p, tr = trained
    tr.save(tmp_path)
    cfg = json.loads((tmp_path / "config.json").read_text())
    assert cfg["lead_time"] == 1 and cfg["state_dim"] == obs_dim(p) and cfg["action_dim"] == p.max_order + 1
    assert set(cfg["normalisation"]) == {"inventory_scale", "time_scale", "reward_scale"}
    sd = torch.load(tmp_path / "dqn_weights.pth", weights_only=True)
    assert all(isinstance(v, torch.Tensor) for v in sd.values())  # a plain state_dict
    rec = DQNRecommender.load(tmp_path)
    in_memory = DQNRecommender.from_network(tr.net, tr.problem, tr.norm)
    assert in_memory.recommend_order(4, 3, [2]) == rec.recommend_order(4, 3, [2])
    rng = np.random.default_rng(0)
    for _ in range(25):
        on, pipe, t = int(rng.integers(0, 15)), [int(rng.integers(0, 8))], int(rng.integers(0, p.horizon))
        out = rec.recommend_order(on, t, pipe)
        action = tr.state_policy().fn(np.array([on]), np.array([pipe]), t)[0]
        assert out["recommended_order"] == int(action)
        assert isinstance(out["q_value"], float)
        assert 0 <= out["recommended_order"] <= min(p.max_order, p.max_inventory - on - sum(pipe))
    # same policy in the evaluator, loaded or in memory
    e1, e2 = evaluate(p, [rec.state_policy(), tr.state_policy()], replications=200, seed=3)
    assert e1.mean_cost == e2.mean_cost


@pytest.mark.slow  # the `trained` fixture: 24k DQN steps, 28-51 s measured
def test_recommender_loads_without_ray(trained, tmp_path):
    _, tr = trained
    tr.save(tmp_path)
    code = (
        "import sys; from rl.artifacts import DQNRecommender; "
        f"r = DQNRecommender.load({str(tmp_path)!r}); out = r.recommend_order(2, 0, [1]); "
        "assert 'ray' not in sys.modules, 'ray imported'; print(out['recommended_order'])"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().isdigit()


@pytest.mark.parametrize(
    "args, field",
    [
        ((-1, 0, [0]), "current_inventory"),
        ((31, 0, [0]), "current_inventory"),
        ((2.5, 0, [0]), "current_inventory"),
        (("3", 0, [0]), "current_inventory"),
        ((2, -1, [0]), "current_time_step"),
        ((2, 20, [0]), "current_time_step"),
        ((2, 0, []), "pipeline_orders"),
        ((2, 0, [1, 2]), "pipeline_orders"),
        ((2, 0, [-1]), r"pipeline_orders\[0\]"),
        ((2, 0, [9]), r"pipeline_orders\[0\]"),
        ((25, 0, [8]), "pipeline_orders"),
        ((2, 0, "5"), "pipeline_orders"),
    ],
)
def test_recommend_order_validation(args, field):
    """Validation does not depend on the weights: an untrained network, so no training is waited for."""
    p = _small()
    rec = DQNRecommender.from_network(QNetwork(obs_dim(p), p.max_order + 1), p, default_normalisation(p))
    with pytest.raises(RecommendationInputError, match=field):
        rec.recommend_order(*args)


def test_recommender_missing_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="config.json"):
        DQNRecommender.load(tmp_path)


@pytest.mark.slow  # the `trained` fixture: 24k DQN steps, 28-51 s measured
def test_expected_cost_to_go_by_rollouts(trained, tmp_path):
    p, tr = trained
    tr.save(tmp_path)
    rec = DQNRecommender.load(tmp_path)
    # last period, nothing on hand or arriving: all demand is lost whatever is ordered -> p * E[D] = 27
    last = rec.expected_cost_to_go(0, p.horizon - 1, [0], replications=4000)
    assert abs(last["mean"] - 9.0 * 3) < 4 * last["stderr"]
    # from the initial state it is the policy's expected total cost (the Monte Carlo evaluator's figure)
    start = rec.expected_cost_to_go(0, 0, [0], replications=2000, seed=5)
    ev = evaluate(p, [rec.state_policy()], replications=2000, seed=6)[0]
    assert abs(start["mean"] - ev.mean_cost) < 4 * np.hypot(start["stderr"], ev.stderr)
    with pytest.raises(RecommendationInputError, match="replications"):
        rec.expected_cost_to_go(0, 0, [0], replications=1)
