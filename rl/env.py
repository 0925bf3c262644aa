"""The inventory problem as a gymnasium environment (one copy) and its registration.

Every rule comes from `inventory.dynamics.step`; this module only keeps the state, draws demand and encodes
observations (`rl.features`). Episode = the problem's horizon (terminated, not truncated: the time step is
part of the observation, so the last period is a real terminal state). Action = order quantity 0..max_order;
the capacity cap is applied by the dynamics, so an infeasible order is placed capped.
"""

from __future__ import annotations

from collections.abc import Mapping

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from inventory import dynamics
from inventory.demand import Demand
from inventory.problem import Problem
from rl.features import Normalisation, default_normalisation, encode

ENV_ID = "askopt/Inventory-v0"


def default_problem() -> Problem:
    """The reference instance (lost sales, L=2, Poisson(5), h=1, p=9), used when no problem is given."""
    return Problem(horizon=60, demand=Demand.poisson(5), lost_sales=True, holding_cost=1.0, penalty_cost=9.0,
                   setup_cost=0.0, lead_time=2, max_inventory=60, max_order=20)


def resolve_problem(problem) -> Problem:
    """A Problem from a Problem, its `to_dict()` form, or None (the reference instance)."""
    if problem is None:
        return default_problem()
    if isinstance(problem, Problem):
        return problem
    if isinstance(problem, Mapping):
        return Problem.from_dict(dict(problem))
    raise TypeError(f"problem: expected Problem or its dict form, got {type(problem).__name__}")


def observation_space(problem: Problem, norm: Normalisation) -> spaces.Box:
    L = problem.lead_time
    top = problem.max_inventory / norm.inventory_scale
    # backlog can at most accumulate the whole horizon's demand
    floor = 0.0 if problem.lost_sales else -problem.horizon * problem.demand.support_max(1e-9) / norm.inventory_scale
    low = np.array([floor] + [0.0] * L + [floor, 0.0], dtype=np.float32)
    high = np.array([top] + [problem.max_order / norm.inventory_scale] * L + [top, 1.0], dtype=np.float32)
    return spaces.Box(low=low, high=high, dtype=np.float32)


class InventoryEnv(gym.Env):
    """Single-item periodic review. Construct with `problem=` (Problem or dict), or RLlib-style with an
    env_config mapping {"problem": ..., "normalisation": {...}}.

    reset(options={"demands": seq}) replays the given demand sequence instead of sampling (used to check the
    environment against the Monte Carlo simulator on identical random numbers).
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, config: Mapping | None = None, problem=None, normalisation=None, render_mode=None):
        config = dict(config or {})
        self.problem = resolve_problem(problem if problem is not None else config.get("problem"))
        norm = normalisation if normalisation is not None else config.get("normalisation")
        if isinstance(norm, Mapping):
            norm = Normalisation.from_dict(norm)
        self.norm: Normalisation = norm or default_normalisation(self.problem)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode: {render_mode!r} is not allowed; allowed: ansi")
        self.render_mode = render_mode
        self.observation_space = observation_space(self.problem, self.norm)
        self.action_space = spaces.Discrete(self.problem.max_order + 1)
        self._on_hand, self._pipeline = dynamics.initial_state(self.problem, ())
        self._t = 0
        self._replay: np.ndarray | None = None

    # state accessors (raw units) ------------------------------------------------------------------
    @property
    def state(self) -> tuple[int, np.ndarray, int]:
        return int(self._on_hand), self._pipeline.copy(), self._t

    def _obs(self) -> np.ndarray:
        return encode(self.norm, self._on_hand, self._pipeline[None, :], self._t)[0]

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._on_hand, self._pipeline = dynamics.initial_state(self.problem, ())
        self._t = 0
        demands = (options or {}).get("demands")
        if demands is not None:
            demands = np.asarray(demands, dtype=np.int64).reshape(-1)
            if demands.size < self.problem.horizon or np.any(demands < 0):
                raise ValueError(f"options.demands: need {self.problem.horizon} non-negative integers")
        self._replay = demands
        return self._obs(), {"t": 0}

    def step(self, action):
        if self._t >= self.problem.horizon:
            raise RuntimeError("step() called after the episode ended; call reset()")
        if not self.action_space.contains(action):
            action = int(np.asarray(action).reshape(()))
            if not self.action_space.contains(action):
                raise ValueError(f"action: {action!r} is not allowed; allowed: 0..{self.problem.max_order}")
        if self._replay is not None:
            demand = int(self._replay[self._t])
        else:
            demand = int(self.problem.demand.sample(self.np_random, ()))
        st = dynamics.step(self.problem, self._on_hand, self._pipeline, int(action), demand)
        self._on_hand, self._pipeline = st.on_hand, st.pipeline
        self._t += 1
        cost = float(st.cost)
        info = {"cost": cost, "order": int(st.order), "demand": demand, "held": int(st.held),
                "short": int(st.short), "t": self._t}
        terminated = self._t >= self.problem.horizon
        return self._obs(), -cost / self.norm.reward_scale, terminated, False, info

    def render(self):
        if self.render_mode == "ansi":
            return f"t={self._t} on_hand={int(self._on_hand)} pipeline={self._pipeline.tolist()}"
        return None


def register_env() -> None:
    """Register `askopt/Inventory-v0` with gymnasium (idempotent)."""
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="rl.env:InventoryEnv")


register_env()
