"""Many copies of the inventory environment stepped at once in numpy, for fast sampling.

All copies advance in lock step (same period t), so one `dynamics.step` call on (N,) arrays moves them all
and the whole batch resets together at the horizon. With hundreds of copies a period costs a few tens of
microseconds, far below one network forward pass, so sampling is never the bottleneck of training.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inventory import dynamics
from inventory.problem import Problem
from rl.features import Normalisation, default_normalisation, encode, obs_dim, order_room


@dataclass
class VecStep:
    obs: np.ndarray  # (N, d) observation after the step (the first of a new episode when done)
    reward: np.ndarray  # (N,) -cost / reward_scale
    done: bool  # the horizon was reached (all copies)
    terminal_obs: np.ndarray  # (N, d) the last observation of the finished episode (== obs when not done)
    cost: np.ndarray  # (N,) raw period cost
    order: np.ndarray  # (N,) order actually placed (after caps)
    demand: np.ndarray  # (N,) the demand drawn this period


class VectorInventoryEnv:
    """N synchronous copies; demand drawn from the generator seeded at construction (or `demands` rows)."""

    def __init__(self, problem: Problem, num_envs: int, seed: int = 0, normalisation: Normalisation | None = None):
        if not (isinstance(num_envs, int) and num_envs >= 1):
            raise ValueError(f"num_envs: {num_envs!r} is not allowed; must be a whole number >= 1")
        self.problem = problem
        self.num_envs = num_envs
        self.norm = normalisation or default_normalisation(problem)
        self.obs_dim = obs_dim(problem)
        self.n_actions = problem.max_order + 1
        self.rng = np.random.default_rng(seed)
        self._demands: np.ndarray | None = None
        self.reset()

    def reset(self, demands: np.ndarray | None = None) -> np.ndarray:
        """Start new episodes; `demands` (N, T) replays given demand rows instead of sampling."""
        self.on_hand, self.pipeline = dynamics.initial_state(self.problem, (self.num_envs,))
        self.t = 0
        self.episode_cost = np.zeros(self.num_envs)
        if demands is not None:
            demands = np.asarray(demands)
            if demands.shape != (self.num_envs, self.problem.horizon):
                raise ValueError(f"demands: shape {demands.shape} is not allowed; need "
                                 f"({self.num_envs}, {self.problem.horizon})")
        self._demands = demands
        return self.obs()

    def obs(self) -> np.ndarray:
        return encode(self.norm, self.on_hand, self.pipeline, self.t)

    def room(self) -> np.ndarray:
        """(N,) largest feasible order in the current states."""
        return order_room(self.problem, self.on_hand, self.pipeline)

    def step(self, actions: np.ndarray) -> VecStep:
        if self._demands is not None:
            demand = self._demands[:, self.t]
        else:
            demand = self.problem.demand.sample(self.rng, (self.num_envs,))
        st = dynamics.step(self.problem, self.on_hand, self.pipeline, actions, demand)
        self.on_hand, self.pipeline = st.on_hand, st.pipeline
        self.t += 1
        self.episode_cost += st.cost
        reward = -st.cost / self.norm.reward_scale
        done = self.t >= self.problem.horizon
        terminal = self.obs()
        self.last_episode_cost = self.episode_cost.copy() if done else None
        obs = self.reset() if done and self._demands is None else terminal
        return VecStep(obs, reward.astype(np.float32), done, terminal, st.cost, st.order, np.asarray(demand))
