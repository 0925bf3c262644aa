"""The inventory environment for RLlib's env runners as one numpy-vectorised gymnasium `VectorEnv`.

Why: RLlib's default wraps N copies of `InventoryEnv` in a gymnasium SyncVectorEnv, i.e. N Python `step` calls
(each a scalar `dynamics.step`) per vector step; here one `VectorInventoryEnv.step` moves all N copies with one
array call. RLlib's env runner takes it as is with `gym_env_vectorize_mode="vector_entry_point"`.

Autoreset follows gymnasium's NEXT_STEP mode (what RLlib expects): the step that ends the episode returns
the terminal observation, and the next `step` call returns the first observation of the new episodes (its
actions are ignored, reward 0). Infos carry each copy's realised `demand` (and `cost`): the counterfactual
replay needs the demand.
"""

from __future__ import annotations

from collections.abc import Mapping

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import batch_space

from rl.env import InventoryEnv, observation_space, resolve_problem
from rl.features import Normalisation, default_normalisation
from rl.vec_env import VectorInventoryEnv


class InventoryVectorEnv(gym.vector.VectorEnv):
    metadata = {"autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP}

    def __init__(self, config: Mapping | None = None, num_envs: int = 1):
        config = dict(config or {})
        self.problem = resolve_problem(config.get("problem"))
        norm = config.get("normalisation")
        self.norm = Normalisation.from_dict(norm) if isinstance(norm, Mapping) else (
            norm or default_normalisation(self.problem))
        self.num_envs = int(num_envs)
        self.single_observation_space = observation_space(self.problem, self.norm)
        self.single_action_space = gym.spaces.Discrete(self.problem.max_order + 1)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._venv = VectorInventoryEnv(self.problem, self.num_envs, seed=0, normalisation=self.norm)
        self._ended = False
        self._all = np.ones(self.num_envs, bool)

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self._venv.rng = np.random.default_rng(seed if np.isscalar(seed) else list(seed))
        self._ended = False
        return self._venv.reset(), {}

    def step(self, actions):
        n = self.num_envs
        if self._ended:  # NEXT_STEP autoreset: the copies were reset when the horizon was reached
            self._ended = False
            return self._venv.obs(), np.zeros(n, np.float32), np.zeros(n, bool), np.zeros(n, bool), {}
        st = self._venv.step(np.asarray(actions, dtype=np.int64).reshape(n))
        self._ended = st.done
        info = {"demand": np.asarray(st.demand), "_demand": self._all, "cost": st.cost, "_cost": self._all}
        return st.terminal_obs, st.reward, np.full(n, st.done), np.zeros(n, bool), info


ENV_NAME = "askopt-inventory-vector"


def register() -> str:
    """Register `make_env` with Tune's env registry (RLlib takes env creators by registered name; the
    registry reaches Tune's trial processes through Ray). Idempotent; returns the name."""
    from ray.tune.registry import register_env

    register_env(ENV_NAME, make_env)
    return ENV_NAME


def make_env(config: Mapping | None = None):
    """RLlib env creator: the vectorised env when RLlib asks for `num_envs` copies, else one `InventoryEnv`."""
    config = dict(config or {})
    if "num_envs" in config:
        n = int(config.pop("num_envs"))
        return InventoryVectorEnv(config, n)
    return InventoryEnv(config)
