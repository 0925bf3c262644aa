"""Ordering policies, each evaluable on whole batches of states at once.

A policy object may hold one parameter set or a vector of P of them (e.g. the whole (s,S) grid); the Monte
Carlo engine evaluates states of shape (P, R). Policies that only look at the inventory position implement
`order_from_position`; those that need the full state (a DP table, a neural network) set
`needs_state = True` and implement `order_from_state`. Caps are applied by the dynamics, never here, so each
policy is automatically its "capped form".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np


class PolicySpecError(ValueError):
    pass


def _col(x) -> np.ndarray:
    """Parameters as a (P, 1) column so they broadcast over replications."""
    return np.atleast_1d(np.asarray(x)).reshape(-1, 1)


@dataclass(frozen=True)
class Policy:
    name: ClassVar[str] = "policy"
    needs_state: ClassVar[bool] = False

    @property
    def size(self) -> int:
        return 1

    def order_from_position(self, position: np.ndarray, t: int) -> np.ndarray:  # (P, R) -> (P, R)
        raise NotImplementedError

    def params(self) -> dict:
        return {}

    def label(self, i: int = 0) -> str:
        return self.name


@dataclass(frozen=True)
class SSPolicy(Policy):
    """(s,S): when the inventory position is below s, order up to S."""

    s: object = 0
    S: object = 0
    name: ClassVar[str] = "ss"

    @property
    def size(self) -> int:
        return np.atleast_1d(self.s).size

    def order_from_position(self, position, t):
        s, S = _col(self.s), _col(self.S)
        return np.where(position < s, S - position, 0)

    def params(self):
        return {"s": self.s, "S": self.S}

    def label(self, i: int = 0) -> str:
        return f"(s={int(np.atleast_1d(self.s)[i])}, S={int(np.atleast_1d(self.S)[i])})"


@dataclass(frozen=True)
class BaseStockPolicy(Policy):
    """Order up to S every period."""

    S: object = 0
    name: ClassVar[str] = "base_stock"

    @property
    def size(self) -> int:
        return np.atleast_1d(self.S).size

    def order_from_position(self, position, t):
        return np.maximum(_col(self.S) - position, 0)

    def params(self):
        return {"S": self.S}

    def label(self, i: int = 0) -> str:
        return f"base-stock S={int(np.atleast_1d(self.S)[i])}"


@dataclass(frozen=True)
class SQPolicy(Policy):
    """(s,Q): when the inventory position is below s, order the fixed batch Q."""

    s: object = 0
    Q: object = 0
    name: ClassVar[str] = "sq"

    @property
    def size(self) -> int:
        return np.atleast_1d(self.s).size

    def order_from_position(self, position, t):
        return np.where(position < _col(self.s), _col(self.Q), 0)

    def params(self):
        return {"s": self.s, "Q": self.Q}

    def label(self, i: int = 0) -> str:
        return f"(s={int(np.atleast_1d(self.s)[i])}, Q={int(np.atleast_1d(self.Q)[i])})"


@dataclass(frozen=True)
class RQPolicy(Policy):
    """(R,Q) with multiples: when the position is below R, order the fewest batches of Q that reach R."""

    R: object = 0
    Q: object = 1
    name: ClassVar[str] = "rq"

    @property
    def size(self) -> int:
        return np.atleast_1d(self.R).size

    def order_from_position(self, position, t):
        R, Q = _col(self.R), np.maximum(_col(self.Q), 1)
        batches = np.ceil(np.maximum(R - position, 0) / Q)
        return (batches * Q).astype(np.int64)

    def params(self):
        return {"R": self.R, "Q": self.Q}

    def label(self, i: int = 0) -> str:
        return f"(R={int(np.atleast_1d(self.R)[i])}, Q={int(np.atleast_1d(self.Q)[i])}) multiples"


@dataclass(frozen=True)
class ConstantPolicy(Policy):
    """Order the same quantity every period."""

    q: object = 0
    name: ClassVar[str] = "const"

    @property
    def size(self) -> int:
        return np.atleast_1d(self.q).size

    def order_from_position(self, position, t):
        return np.broadcast_to(_col(self.q), position.shape)

    def params(self):
        return {"q": self.q}

    def label(self, i: int = 0) -> str:
        return f"constant q={int(np.atleast_1d(self.q)[i])}"


@dataclass(frozen=True)
class StatePolicy(Policy):
    """Any callable on the full state: fn(on_hand (N,), pipeline (N, L), t) -> orders (N,).

    Used for the DQN (one batched forward pass per period) and for DP tables.
    """

    fn: Callable | None = None
    title: str = "state policy"
    meta: dict = field(default_factory=dict)
    name: ClassVar[str] = "state"
    needs_state: ClassVar[bool] = True

    def label(self, i: int = 0) -> str:
        return self.title

    def order_from_state(self, on_hand: np.ndarray, pipeline: np.ndarray, t: int) -> np.ndarray:
        flat_on = on_hand.reshape(-1)
        flat_pipe = pipeline.reshape(flat_on.size, -1)
        return np.asarray(self.fn(flat_on, flat_pipe, t)).reshape(on_hand.shape)

    def params(self):
        return dict(self.meta)


def parse_policy_spec(spec: str) -> Policy:
    """`ss:s,S`, `sq:s,Q`, `rq:R,Q`, `bs:S`, `const:q` -> a Policy (the CLI's --evaluate)."""
    m = re.fullmatch(r"\s*([a-z]+)\s*:\s*([-\d.,\s]+)", str(spec).lower())
    forms = "ss:s,S | sq:s,Q | rq:R,Q | bs:S | const:q"
    if not m:
        raise PolicySpecError(f"--evaluate: cannot read policy {spec!r}; allowed forms: {forms}")
    kind = m.group(1)
    try:
        nums = [int(float(x)) for x in m.group(2).replace(" ", "").split(",") if x]
    except ValueError:
        raise PolicySpecError(f"--evaluate: non-numeric parameter in {spec!r}; allowed forms: {forms}") from None
    arity = {"ss": 2, "sq": 2, "rq": 2, "bs": 1, "const": 1}
    if kind not in arity:
        raise PolicySpecError(f"--evaluate: unknown policy type {kind!r}; allowed forms: {forms}")
    if len(nums) != arity[kind]:
        raise PolicySpecError(f"--evaluate: {kind} takes {arity[kind]} number(s), got {spec!r}")
    if any(n < 0 for n in nums):
        raise PolicySpecError(f"--evaluate: parameters must be >= 0, got {spec!r}")
    if kind == "ss":
        if nums[0] > nums[1]:
            raise PolicySpecError(f"--evaluate: (s,S) needs s <= S, got {spec!r}")
        return SSPolicy(s=nums[0], S=nums[1])
    if kind == "sq":
        return SQPolicy(s=nums[0], Q=nums[1])
    if kind == "rq":
        return RQPolicy(R=nums[0], Q=max(1, nums[1]))
    if kind == "bs":
        return BaseStockPolicy(S=nums[0])
    return ConstantPolicy(q=nums[0])
