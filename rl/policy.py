"""A Q-network as an `inventory.policies.StatePolicy`: one batched forward pass per simulated period.

This is how the DQN enters the same Monte Carlo evaluator (common random numbers) as (s,S), base-stock and the
DP policy, both for early stopping during training and for the final arbitration.
"""

from __future__ import annotations

import numpy as np
import torch

from inventory.policies import StatePolicy
from inventory.problem import Problem
from rl.features import Normalisation, encode, order_room
from rl.network import QNetwork, masked_argmax


class GreedyQ:
    """Callable fn(on_hand (N,), pipeline (N, L), t) -> orders (N,): the capacity-masked greedy action."""

    def __init__(self, net: QNetwork, norm: Normalisation, problem: Problem):
        self.net, self.norm, self.problem = net, norm, problem

    def q_values(self, on_hand, pipeline, t) -> torch.Tensor:
        obs = torch.from_numpy(encode(self.norm, on_hand, pipeline, t))
        with torch.inference_mode():
            return self.net(obs)

    def act(self, on_hand, pipeline, t) -> tuple[np.ndarray, np.ndarray]:
        q = self.q_values(on_hand, pipeline, t)
        action, value = masked_argmax(q, order_room(self.problem, on_hand, pipeline))
        return action.numpy(), value.numpy()

    def __call__(self, on_hand, pipeline, t) -> np.ndarray:
        return self.act(on_hand, pipeline, t)[0]


def q_state_policy(net: QNetwork, norm: Normalisation, problem: Problem, title: str = "DQN (greedy)") -> StatePolicy:
    """The network as a StatePolicy (numeric meta only: the evaluator summarises params as numbers)."""
    return StatePolicy(fn=GreedyQ(net, norm, problem), title=title)
