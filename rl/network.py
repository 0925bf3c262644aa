"""The Q-network as plain torch (no Ray): what is trained by `rl.dqn_torch`, what RLlib's Q-module is converted
into, and what the deployed recommender loads from `dqn_weights.pth`.

An MLP from the observation to one Q-value per order quantity 0..max_order. The greedy action is the argmax
over the orders the caps allow (`rl.features.order_room`), so the recommendation is always placed as is.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "silu": nn.SiLU}


class QNetwork(nn.Module):
    """obs (N, d) -> Q (N, n_actions). State-dict keys: body.{2i}.weight/bias for hidden layer i, head.*."""

    def __init__(self, obs_dim: int, n_actions: int, hidden: tuple[int, ...] = (64, 64), activation: str = "relu"):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation: {activation!r} is not allowed; allowed: {', '.join(ACTIVATIONS)}")
        layers: list[nn.Module] = []
        width = obs_dim
        for h in hidden:
            layers += [nn.Linear(width, h), ACTIVATIONS[activation]()]
            width = h
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, n_actions)
        self.obs_dim, self.n_actions = obs_dim, n_actions
        self.hidden, self.activation = tuple(hidden), activation

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(obs))

    def spec(self) -> dict:
        return {"obs_dim": self.obs_dim, "n_actions": self.n_actions, "hidden": list(self.hidden),
                "activation": self.activation}


def masked_argmax(q: torch.Tensor, room: torch.Tensor | np.ndarray | None) -> tuple[torch.Tensor, torch.Tensor]:
    """(action, q_value) maximising Q over actions 0..room per row (all actions when room is None)."""
    if room is not None:
        room = torch.as_tensor(room, dtype=torch.long, device=q.device).reshape(-1, 1)
        idx = torch.arange(q.shape[1], device=q.device).reshape(1, -1)
        q = q.masked_fill(idx > room, float("-inf"))
    value, action = q.max(dim=1)
    return action, value
