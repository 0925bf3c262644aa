"""Counterfactual all-action DQN targets: the one implementation used by the torch trainer and the RLlib Learner.

Demand does not depend on the order, so one replayed (state, demand) gives the next state of *every*
feasible order through `inventory.dynamics.step`; all Q(s, a) are regressed on
    y(s, a) = r(s, a, D) + gamma * 1{t + 1 < T} * max_{a' <= room(s'(a))} Q_target(s'(a), a')
with the same demand D. The policy only needs the differences between actions, and with common demand
those carry almost no sampling noise (textbook DQN sees each action's value through independent returns).

What replay has to carry for this: the raw state (on-hand, pipeline, t) and the demand realised in that
period (`rl.rllib_counterfactual` stores both; `rl.dqn_torch` keeps them in its flat buffer).

Split in two so both trainers share it:
* `counterfactual_transitions` (numpy): the B x A next states, rewards, liveness and the valid-action mask;
* `all_action_loss` (torch): the masked regression given Q(s, .) and the target-network values of the next
  states (each trainer runs its own networks: a `QNetwork` pair, or RLlib's module and its target module).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from inventory import dynamics
from inventory.problem import Problem
from rl.features import Normalisation, encode, order_room
from rl.network import masked_argmax

LOSSES = ("huber", "mse")


@dataclass
class Counterfactuals:
    """Every order's transition from B replayed (state, demand) pairs (A = max_order + 1 actions)."""

    next_obs: torch.Tensor  # (B * A, d) encoded next state of order a from state b (row b * A + a)
    next_room: np.ndarray  # (B * A,) largest feasible order in each next state (masks the target max)
    reward: torch.Tensor  # (B, A) -cost / reward_scale
    alive: torch.Tensor  # (B, A) 1 when the next state is not terminal (t + 1 < horizon)
    valid: torch.Tensor  # (B, A) bool: order a is feasible in state b (a <= room)

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.reward.shape)


def counterfactual_transitions(problem: Problem, norm: Normalisation, on_hand, pipeline, t, demand) -> Counterfactuals:
    """Apply every order 0..max_order to each replayed state with its own demand (the shared dynamics)."""
    on = np.asarray(on_hand, dtype=np.int64).reshape(-1)
    B, A, L = on.size, problem.max_order + 1, problem.lead_time
    pipe = np.asarray(pipeline, dtype=np.int64).reshape(B, L)
    t = np.asarray(t, dtype=np.int64).reshape(B)
    dem = np.asarray(demand, dtype=np.int64).reshape(B)
    on_b = np.broadcast_to(on[:, None], (B, A))
    pipe_b = np.broadcast_to(pipe[:, None, :], (B, A, L))
    st = dynamics.step(problem, on_b, pipe_b, np.arange(A)[None, :], dem[:, None])
    room = order_room(problem, on, pipe)
    nxt_on, nxt_pipe = st.on_hand.reshape(-1), st.pipeline.reshape(B * A, L)
    t_next = np.repeat(t + 1, A)
    return Counterfactuals(
        next_obs=torch.from_numpy(encode(norm, nxt_on, nxt_pipe, t_next)),
        next_room=order_room(problem, nxt_on, nxt_pipe),
        reward=torch.from_numpy((-st.cost / norm.reward_scale).astype(np.float32)),
        alive=torch.from_numpy((t_next < problem.horizon).astype(np.float32)).reshape(B, A),
        valid=torch.from_numpy(np.arange(A)[None, :] <= room[:, None]),
    )


def all_action_targets(cf: Counterfactuals, q_next_target: torch.Tensor, gamma: float,
                       q_next_online: torch.Tensor | None = None) -> torch.Tensor:
    """y (B, A) from the target network's Q on the next states; double Q when the online Q is given."""
    B, A = cf.shape
    with torch.no_grad():
        if q_next_online is not None:
            a_star, _ = masked_argmax(q_next_online, cf.next_room)
            v_next = q_next_target.gather(1, a_star[:, None]).squeeze(1)
        else:
            _, v_next = masked_argmax(q_next_target, cf.next_room)
        return cf.reward + gamma * cf.alive * v_next.reshape(B, A)


def demand_support(problem: Problem, tail: float = 1e-4) -> tuple[np.ndarray, np.ndarray]:
    """Demand values and their probabilities for expected targets: the law's pmf up to its `tail` quantile,
    the last value carrying the rest of the upper tail (probabilities sum to 1)."""
    upto = max(1, problem.demand.support_max(tail))
    return np.arange(upto + 1, dtype=np.int64), problem.demand.pmf(upto).astype(np.float32)


def expected_transitions(problem: Problem, norm: Normalisation, on_hand, pipeline, t,
                         support: tuple[np.ndarray, np.ndarray]) -> Counterfactuals:
    """Every order's transition under every demand value of `support`: B states become B x K rows (state b,
    demand k at row b * K + k), so the targets can average over the demand law instead of one draw."""
    values, _ = support
    on = np.asarray(on_hand, dtype=np.int64).reshape(-1)
    B, K = on.size, values.size
    pipe = np.asarray(pipeline, dtype=np.int64).reshape(B, problem.lead_time)
    return counterfactual_transitions(problem, norm, np.repeat(on, K), np.repeat(pipe, K, axis=0),
                                      np.repeat(np.asarray(t, dtype=np.int64).reshape(B), K), np.tile(values, B))


def expected_all_action_loss(q: torch.Tensor, cf: Counterfactuals, probs: np.ndarray, q_next_target: torch.Tensor,
                             gamma: float, kind: str = "huber", q_next_online: torch.Tensor | None = None) -> torch.Tensor:
    """The counterfactual loss with exact expectations over demand (`expected_transitions`):
    y(s, a) = sum_k P(D = k) [r(s, a, k) + gamma max Q_target(s'(a, k), .)]; the sampled-demand noise in
    the target's level is gone, not only in the action differences."""
    BK, A = cf.shape
    K = probs.size
    y = all_action_targets(cf, q_next_target, gamma, q_next_online).reshape(BK // K, K, A)
    y = (y * torch.from_numpy(probs)[None, :, None]).sum(dim=1)
    valid = cf.valid.reshape(BK // K, K, A)[:, 0, :]
    return regression_loss(kind, q[valid], y[valid])


def regression_loss(kind: str, q: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if kind == "mse":
        return nn.functional.mse_loss(q, y)
    if kind == "huber":
        return nn.functional.smooth_l1_loss(q, y)
    raise ValueError(f"loss: {kind!r} is not allowed; allowed: {', '.join(LOSSES)}")


def all_action_loss(q: torch.Tensor, cf: Counterfactuals, q_next_target: torch.Tensor, gamma: float,
                    kind: str = "huber", q_next_online: torch.Tensor | None = None) -> torch.Tensor:
    """The counterfactual loss: every feasible Q(s, a) against its same-demand target (infeasible masked)."""
    y = all_action_targets(cf, q_next_target, gamma, q_next_online)
    return regression_loss(kind, q[cf.valid], y[cf.valid])
