"""Early stopping shared by the torch trainer, the RLlib run and the Tune stopper."""

from rl.early_stop import Patience
from rl.rllib_train import GreedyPlateauStopper


def test_a_new_best_is_kept_but_only_a_real_improvement_restarts_the_count():
    p = Patience(rel_tol=1e-3)
    assert p.update(100.0) and (p.best, p.since) == (100.0, 0)
    assert p.update(99.95) and (p.best, p.since) == (99.95, 1)  # better, but by less than 0.1%
    assert not p.update(120.0) and (p.best, p.since) == (99.95, 2)
    assert p.update(90.0) and (p.best, p.since) == (90.0, 0)
    q = Patience(abs_tol=1e-9)
    q.update(5.0)
    assert not q.update(5.0 - 1e-12)  # within the absolute tolerance: not a new best


def test_tune_stopper_counts_per_trial():
    stop = GreedyPlateauStopper(max_steps=10**9, patience=2)
    for cost in (10.0, 11.0):
        assert not stop("a", {"greedy_cost": cost, "num_env_steps_sampled_lifetime": 100})
    assert not stop("b", {"greedy_cost": 50.0, "num_env_steps_sampled_lifetime": 100})  # its own count
    assert stop("a", {"greedy_cost": 12.0, "num_env_steps_sampled_lifetime": 100})  # two without progress
    assert stop("b", {"greedy_cost": 1.0, "num_env_steps_sampled_lifetime": 10**9})  # the step budget
