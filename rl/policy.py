"""A Q-network as an `inventory.policies.StatePolicy`: one batched forward pass per simulated period.

This is how the DQN enters the same Monte Carlo evaluator (common random numbers) as (s,S), base-stock and the
DP policy, both for early stopping during training and for the final arbitration, and how the searches after
training (rollouts) follow the network. Thousands of simulated paths sit in a few hundred distinct states in any
one period (1-5 % distinct in the rollouts of rl.policy_iteration), so a large batch is first reduced to its
distinct (on-hand, pipeline, t) rows: the network runs once per distinct state and the answer is the same.
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
        distinct = _distinct_states(on_hand, pipeline, t)
        if distinct is not None:
            first, inverse = distinct
            pipeline = np.asarray(pipeline).reshape(np.size(on_hand), -1)
            t_rows = np.broadcast_to(np.asarray(t), (np.size(on_hand),))
            action, value = self._act(np.asarray(on_hand).reshape(-1)[first], pipeline[first], t_rows[first])
            return action[inverse], value[inverse]
        return self._act(on_hand, pipeline, t)

    def _act(self, on_hand, pipeline, t) -> tuple[np.ndarray, np.ndarray]:
        q = self.q_values(on_hand, pipeline, t)
        action, value = masked_argmax(q, order_room(self.problem, on_hand, pipeline))
        return action.numpy(), value.numpy()

    def __call__(self, on_hand, pipeline, t) -> np.ndarray:
        return self.act(on_hand, pipeline, t)[0]


DISTINCT_MIN_ROWS = 512  # below this a forward pass costs less than finding the distinct states (measured)


def _distinct_states(on_hand, pipeline, t) -> tuple[np.ndarray, np.ndarray] | None:
    """(index of one row per distinct state, inverse map) for a large batch of integer states, else None.

    Each row (on-hand, pipeline..., t) becomes one int64 key in mixed radix over the batch's own ranges; a batch
    whose ranges would overflow 62 bits, or a float state, is left as it is."""
    on = np.asarray(on_hand).reshape(-1)
    if on.size < DISTINCT_MIN_ROWS:
        return None
    cols = [on, *np.asarray(pipeline).reshape(on.size, -1).T, np.broadcast_to(np.asarray(t), on.shape)]
    if not all(np.issubdtype(c.dtype, np.integer) for c in cols):
        return None
    key = np.zeros(on.size, dtype=np.int64)
    stride = 1
    for c in cols:
        lo, hi = int(c.min()), int(c.max())
        if stride * (hi - lo + 1) >= 2**62:
            return None
        key += (c.astype(np.int64) - lo) * stride
        stride *= hi - lo + 1
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def q_state_policy(net: QNetwork, norm: Normalisation, problem: Problem, title: str = "DQN (greedy)") -> StatePolicy:
    """The network as a StatePolicy (numeric meta only: the evaluator summarises params as numbers)."""
    return StatePolicy(fn=GreedyQ(net, norm, problem), title=title)
