"""RLlib (counterfactual Learner) through Ray Tune: two instances train in parallel via `rl.tune_per_instance`
(called by `optimization.service.optimize_many`), the best checkpoints load, and the shipped artifacts act
exactly like the RLlib module."""

import numpy as np
import pytest
import torch

from inventory.demand import Demand
from inventory.problem import Problem
from rl.artifacts import DQNRecommender
from rl.features import encode
from rl.rllib_train import RLlibSettings, load_module_from_checkpoint, module_to_qnetwork

pytestmark = pytest.mark.slow  # two Tune trials of RLlib, 60,000 steps each: 24 s measured on the 2-core machine


def _p(L: int) -> Problem:
    return Problem(horizon=20, demand=Demand.poisson(3), lost_sales=True, holding_cost=1.0, penalty_cost=9.0,
                   setup_cost=0.0, lead_time=L, max_inventory=30, max_order=8)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """The Optimization Agent's batch entry point: the DQNs of both instances train in parallel through Tune.
    60,000 steps (~10 s of training each on this machine), not fewer: with one 0.6 s iteration per trial, a second
    of start-up jitter between the two actors made the trials miss each other (CI failed once that way)."""
    from optimization.service import OptimizationConfig, optimize_many

    out = tmp_path_factory.mktemp("artifacts")
    cfg = OptimizationConfig(dqn=True, dqn_trainer="rllib", dqn_steps=60_000, dqn_seconds=300, use_dp=False,
                             replications=300, seed=3)
    return optimize_many({"L1": _p(1), "L2": _p(2)}, cfg, out_dir=out), out


def test_two_instances_train_in_parallel(results):
    res, out = results
    assert list(res) == ["L1", "L2"]
    for name, r in res.items():
        t = r.trained_dqn
        assert t.trainer == "tune-rllib-counterfactual" and r.dqn_training["trainer"] == t.trainer
        assert t.info["checkpoint"] is not None
        assert 60_000 <= t.info["steps"] < 60_000 + 6_144  # stopped by the step budget, in 6,144-step iterations
        assert np.isfinite(t.info["best_validation_cost"]) and t.info["best_validation_cost"] > 0
        for f in ("config.json", "dqn_weights.pth", "policy_evaluation_results.csv"):
            assert (out / name / f).exists(), f
        # the opening re-chosen by rollouts of the Tune network ships with it (never worse on its search numbers)
        assert t.info["opening"]["applied"] and len(t.opening) == t.problem.lead_time + 1
        assert t.info["opening"]["improved_cost"] <= t.info["opening"]["own_cost"]
        assert DQNRecommender.load(out / name).opening == t.opening
        names = [s.name for s in r.scores]
        assert names == ["ss", "base_stock", "capped_base_stock", "dqn"]  # no DP: capped base-stock joins
        dqn = r.score("dqn")
        best_h = min((s for s in r.scores if s.name != "dqn"), key=lambda s: s.objective)
        worse = dqn.objective > best_h.objective
        assert worse == any("worse than" in n for n in r.notes)  # the agent says so when the DQN loses
        assert (r.winner.name != "dqn") or not worse
    (a0, a1), (b0, b1) = res["L1"].trained_dqn.info["window"], res["L2"].trained_dqn.info["window"]
    # each window runs from the trial's algorithm setup to its last report (float wall-clock seconds)
    assert a0 < a1 and b0 < b1 and a0 > 1e9 and b0 > 1e9
    assert a0 < b1 and b0 < a1, f"the two trials were not alive together: L1 {a0:.1f}-{a1:.1f}, L2 {b0:.1f}-{b1:.1f}"


def test_artifacts_act_like_rllib(results):
    """The RLlib module converts weight for weight into the plain network, and the artifacts ship the policy the
    agent scored (the converted network after rollout policy iteration, with its opening and offsets)."""
    res, out = results
    t = res["L2"].trained_dqn
    rec = DQNRecommender.load(out / "L2")
    module = load_module_from_checkpoint(t.info["checkpoint"])
    converted = module_to_qnetwork(module, t.problem)
    shipped = t.state_policy().fn
    rng = np.random.default_rng(0)
    for _ in range(40):  # includes states where the capacity mask binds (position up to 34 > 30)
        on, pipe, tt = int(rng.integers(0, 19)), rng.integers(0, 9, size=2), int(rng.integers(0, 20))
        if on + pipe.sum() > 30:
            continue
        obs = torch.from_numpy(encode(t.norm, [on], [pipe.tolist()], tt))
        with torch.no_grad():
            q_rllib = module.compute_q_values({"obs": obs})["qf_preds"][0]
            assert converted(obs)[0].tolist() == pytest.approx(q_rllib.tolist(), rel=1e-5, abs=1e-6)
        out_ = rec.recommend_order(on, tt, pipe.tolist())
        assert out_["recommended_order"] == int(shipped(np.array([on]), pipe[None, :], tt)[0])
    assert "policy_iteration" in t.info and t.info["policy_iteration"]["rounds"]  # it ran after the Tune trial


def test_bad_input_names_the_field():
    import rl

    with pytest.raises(TypeError, match=r"problems\['x'\]"):
        rl.tune_per_instance({"x": "not a problem"})
    with pytest.raises(ValueError, match="algorithm"):
        RLlibSettings(algorithm="ppo")


def test_one_actor_trains_trial_after_trial_each_on_its_own_instance(tmp_path):
    """reuse_actors: with one trial at a time the three trials share one actor process (torch and RLlib imported
    once), and each still trains on its own instance from a fresh start (its own normalisation, step count and
    checkpoint)."""
    from rl.features import default_normalisation
    from rl.rllib_train import tune_dqn

    problems = {"a": _p(1), "b": _p(2), "c": _p(3)}
    s = RLlibSettings(total_steps=4_000, time_budget_s=None, patience=10**6, seed=1)
    outs = tune_dqn(problems, s, storage_path=tmp_path, max_concurrent=1)
    assert [o.name for o in outs] == ["a", "b", "c"] and all(o.error is None for o in outs)
    assert len({o.pid for o in outs}) == 1 and outs[0].pid is not None
    for o in outs:
        assert o.problem == problems[o.name] and o.norm == default_normalisation(problems[o.name])
        assert 4_000 <= o.steps < 4_000 + 6_144  # counted from zero, not from the previous trial's steps
    assert len({o.checkpoint for o in outs}) == 3
