"""RLlib DQN through Ray Tune: two instances train in parallel, and the shipped artifacts act like RLlib."""

import numpy as np
import pytest
import torch

from inventory.demand import Demand
from inventory.problem import Problem
from rl.artifacts import DQNRecommender
from rl.features import encode
from rl.rllib_train import RLlibSettings, load_module_from_checkpoint, tune_dqn


def _p(L: int) -> Problem:
    # max_inventory large enough that the capacity mask never binds in the states compared below
    return Problem(horizon=20, demand=Demand.poisson(3), lost_sales=True, holding_cost=1.0, penalty_cost=9.0,
                   setup_cost=0.0, lead_time=L, max_inventory=60, max_order=8)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    settings = RLlibSettings(total_steps=2_000, steps_per_iteration=1_000, learning_starts=500,
                             eval_replications=100, patience=5, seed=3)
    return tune_dqn({"L1": _p(1), "L2": _p(2)}, settings, storage_path=tmp_path_factory.mktemp("ray_results"))


def test_two_instances_train_in_parallel(outcomes):
    assert [o.name for o in outcomes] == ["L1", "L2"]
    for o in outcomes:
        assert o.error is None
        assert o.checkpoint is not None and o.net is not None
        assert o.steps >= 2_000  # stopped by the step budget
        assert np.isfinite(o.greedy_cost) and o.greedy_cost > 0
    (a0, a1), (b0, b1) = outcomes[0].window, outcomes[1].window
    assert a0 < b1 and b0 < a1, "the two trials did not overlap in time"


def test_artifacts_act_like_rllib(outcomes, tmp_path):
    o = outcomes[1]
    o.trained().save(tmp_path)
    rec = DQNRecommender.load(tmp_path)
    module = load_module_from_checkpoint(o.checkpoint)
    rng = np.random.default_rng(0)
    for _ in range(30):
        on, pipe, t = int(rng.integers(0, 20)), rng.integers(0, 9, size=2).tolist(), int(rng.integers(0, 20))
        obs = torch.from_numpy(encode(o.norm, [on], [pipe], t))
        rllib_action = int(module.forward_inference({"obs": obs})["actions"][0])
        out = rec.recommend_order(on, t, pipe)
        assert out["recommended_order"] == rllib_action
        with torch.no_grad():
            q_rllib = module.compute_q_values({"obs": obs})["qf_preds"][0]
        assert out["q_value"] == pytest.approx(float(q_rllib.max()), rel=1e-5, abs=1e-6)
