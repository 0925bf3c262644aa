"""Reinforcement learning for the inventory problem (see docs/rl.md).

`rl.tune_per_instance(problems, ...)` trains one DQN per instance in parallel through Ray Tune (imported lazily:
`import rl` and the deployed recommender never import Ray).
"""


def __getattr__(name):
    if name in ("tune_per_instance", "train_rllib_dqn", "RLlibSettings"):
        from rl import rllib_train

        return getattr(rllib_train, name)
    raise AttributeError(f"module 'rl' has no attribute {name!r}")
