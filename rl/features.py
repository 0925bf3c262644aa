"""Observation encoding and scaling shared by the environments, both trainers and the deployed loader.

One definition, numpy only (no torch, no Ray), so what the network saw in training is exactly what the
recommender feeds it at inference. The observation is the state the dynamics define (on-hand, pipeline,
time step) plus the inventory position I + x1 + ... + xL: the position is a sum the network would otherwise
have to learn, and it is the quantity the near-optimal base-stock and (s,S) policies act on, so giving it
explicitly speeds learning a lot. Everything is divided by an inventory scale near the (L+1)-period demand
level so inputs are O(1); time is t / horizon.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from inventory import dynamics
from inventory.problem import Problem


@dataclass(frozen=True)
class Normalisation:
    """The numbers that turn a raw state into the network input and a cost into a reward."""

    inventory_scale: float  # on-hand, pipeline and position are divided by this
    time_scale: float  # t is divided by this (the horizon)
    reward_scale: float  # reward = -cost / reward_scale

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Normalisation:
        return cls(float(d["inventory_scale"]), float(d["time_scale"]), float(d["reward_scale"]))


def default_normalisation(problem: Problem) -> Normalisation:
    """Inventory scale: mean + 3 sd of demand over lead time + 1 periods (capped at capacity); reward scale:
    the cost of one standard deviation of demand at the larger unit cost, plus one setup, so that one period's
    reward is O(1) and an episode's return O(horizon)."""
    d = problem.demand
    L1 = problem.lead_time + 1
    level = d.mean * L1 + 3.0 * d.std * math.sqrt(L1)
    inventory_scale = float(max(1.0, min(problem.max_inventory, level)))
    unit = max(problem.holding_cost, problem.penalty_cost, 1e-6)
    reward_scale = float(max(1e-6, unit * max(d.std, 1.0) + problem.setup_cost))
    return Normalisation(inventory_scale, float(problem.horizon), reward_scale)


def obs_dim(problem: Problem) -> int:
    """on-hand, L pipeline entries, position, time."""
    return problem.lead_time + 3


def encode(norm: Normalisation, on_hand, pipeline, t) -> np.ndarray:
    """Raw states (N,), (N, L), t (scalar or (N,)) -> float32 observations (N, L + 3)."""
    on_hand = np.asarray(on_hand, dtype=np.float64).reshape(-1)
    n = on_hand.size
    pipeline = np.asarray(pipeline, dtype=np.float64).reshape(n, -1)
    position = on_hand + pipeline.sum(axis=1)
    t = np.broadcast_to(np.asarray(t, dtype=np.float64), (n,))
    out = np.empty((n, pipeline.shape[1] + 3), dtype=np.float32)
    out[:, 0] = on_hand / norm.inventory_scale
    out[:, 1 : 1 + pipeline.shape[1]] = pipeline / norm.inventory_scale
    out[:, -2] = position / norm.inventory_scale
    out[:, -1] = t / norm.time_scale
    return out


def order_room(problem: Problem, on_hand, pipeline) -> np.ndarray:
    """Largest order the caps allow in each state (max_order, and position after ordering <= max_inventory).

    Used to mask the greedy action, so the network's recommendation is always an order that is placed as is.
    """
    on_hand = np.asarray(on_hand).reshape(-1)
    pipeline = np.asarray(pipeline).reshape(on_hand.size, -1)
    position = on_hand + pipeline.sum(axis=1)
    return dynamics.order_room(position, problem.max_order, problem.max_inventory).astype(np.int64)


def decode(norm: Normalisation, obs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Observations (N, L + 3) -> raw (on_hand (N,), pipeline (N, L), t (N,)), the inverse of `encode`.

    Exact for integer states (float32 keeps about 7 significant digits; states here are at most thousands).
    RLlib's replay stores observations, and the counterfactual update needs the raw state to step it.
    """
    obs = np.asarray(obs, dtype=np.float64)
    obs = obs.reshape(-1, obs.shape[-1])
    on_hand = np.rint(obs[:, 0] * norm.inventory_scale).astype(np.int64)
    pipeline = np.rint(obs[:, 1:-2] * norm.inventory_scale).astype(np.int64)
    t = np.rint(obs[:, -1] * norm.time_scale).astype(np.int64)
    return on_hand, pipeline, t
