"""Many copies of the inventory environment stepped at once in numpy: one gymnasium `VectorEnv`.

Why: N copies of `InventoryEnv` in gymnasium's SyncVectorEnv cost N Python `step` calls (each a scalar
`dynamics.step`) per vector step; here all copies advance in lock step (same period t), so one `dynamics.step`
call on (N,) arrays moves them all. With hundreds of copies a period costs a few tens of microseconds, far below
one network forward pass, so sampling is never the bottleneck of training. The same class serves the torch
trainer (`rl.dqn_torch`), the DQN's cost-to-go rollouts (`rl.artifacts`) and RLlib's env runner (created by
`rl.rllib_env.make_env`, taken as is with `gym_env_vectorize_mode="vector_entry_point"`).

gymnasium API (1.x): `single_observation_space` / `single_action_space` and their batched forms, `reset(seed=,
options=)` -> (obs, info), `step(actions)` -> (obs, reward, terminated, truncated, info). Autoreset is
gymnasium's NEXT_STEP mode (what RLlib expects, `metadata["autoreset_mode"]`): the step that reaches the horizon
returns the terminal observation with `terminated` all True, and the next `step` call returns the first
observation of the new episodes (its actions are ignored, reward 0, info {}); calling `reset()` instead is
equivalent. Infos carry each copy's realised `demand`, `cost` and placed `order` (the counterfactual replay
needs the demand), with gymnasium's `_key` masks. `reset(options={"demands": D})` replays the (N, T) demand rows
D instead of sampling (as `InventoryEnv` does with one row), to compare with the Monte Carlo simulator on the
same random numbers; an autoreset replays the same rows again.
"""

from __future__ import annotations

from collections.abc import Mapping

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import batch_space

from inventory import dynamics
from inventory.problem import Problem
from rl.env import observation_space
from rl.features import Normalisation, default_normalisation, encode, obs_dim, order_room


class VectorInventoryEnv(gym.vector.VectorEnv):
    """N synchronous copies; demand drawn from the generator seeded at construction (or by `reset(seed=)`).

    The raw state is public for the trainers: `on_hand` (N,), `pipeline` (N, L), `t`; `room()` gives the
    largest order the caps allow in each copy.
    """

    metadata = {"autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP}

    def __init__(self, problem: Problem, num_envs: int, seed: int = 0, normalisation: Normalisation | None = None):
        if not (isinstance(num_envs, int) and not isinstance(num_envs, bool) and num_envs >= 1):
            raise ValueError(f"num_envs: {num_envs!r} is not allowed; must be a whole number >= 1")
        self.problem = problem
        self.num_envs = num_envs
        self.norm = normalisation or default_normalisation(problem)
        self.obs_dim = obs_dim(problem)
        self.n_actions = problem.max_order + 1
        self.single_observation_space = observation_space(problem, self.norm)
        self.single_action_space = gym.spaces.Discrete(self.n_actions)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.rng = np.random.default_rng(seed)
        self._demands: np.ndarray | None = None
        self._all = np.ones(num_envs, bool)
        self._restart()

    # ---- gymnasium API ---------------------------------------------------------------------------
    def reset(self, *, seed=None, options: Mapping | None = None) -> tuple[np.ndarray, dict]:
        """Start new episodes; `seed` re-seeds the demand generator, `options={"demands": D}` replays rows D."""
        if seed is not None:
            self.rng = np.random.default_rng(seed if np.isscalar(seed) else list(seed))
        demands = (options or {}).get("demands")
        if demands is not None:
            demands = np.asarray(demands)
            if demands.shape != (self.num_envs, self.problem.horizon):
                raise ValueError(f"demands: shape {demands.shape} is not allowed; need "
                                 f"({self.num_envs}, {self.problem.horizon})")
        self._demands = demands
        return self._restart(), {}

    def step(self, actions):
        """One period for all copies (or, after the horizon, the NEXT_STEP autoreset)."""
        n = self.num_envs
        if self._ended:
            return self._restart(), np.zeros(n, np.float32), np.zeros(n, bool), np.zeros(n, bool), {}
        if self._demands is not None:
            demand = self._demands[:, self.t]
        else:
            demand = self.problem.demand.sample(self.rng, (n,))
        st = dynamics.step(self.problem, self.on_hand, self.pipeline, np.asarray(actions).reshape(n), demand)
        self.on_hand, self.pipeline = st.on_hand, st.pipeline
        self.t += 1
        self.episode_cost += st.cost
        self._ended = self.t >= self.problem.horizon
        info = {"demand": np.asarray(demand), "_demand": self._all, "cost": st.cost, "_cost": self._all,
                "order": st.order, "_order": self._all}
        reward = (-st.cost / self.norm.reward_scale).astype(np.float32)
        return self.obs(), reward, np.full(n, self._ended), np.zeros(n, bool), info

    # ---- raw state for the trainers --------------------------------------------------------------
    def obs(self) -> np.ndarray:
        return encode(self.norm, self.on_hand, self.pipeline, self.t)

    def room(self) -> np.ndarray:
        """(N,) largest feasible order in the current states."""
        return order_room(self.problem, self.on_hand, self.pipeline)

    def _restart(self) -> np.ndarray:
        self.on_hand, self.pipeline = dynamics.initial_state(self.problem, (self.num_envs,))
        self.t = 0
        self.episode_cost = np.zeros(self.num_envs)
        self._ended = False
        return self.obs()
