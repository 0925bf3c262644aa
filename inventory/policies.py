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


# ---- the ordering rules, written once --------------------------------------------------------------------------
# Arithmetic and np.maximum / np.ceil only, so the same bodies run on numpy arrays (the classes below), are
# compiled by numba for the Monte Carlo kernel (`inventory.kernel`) and run on torch tensors
# (`inventory.kernel_torch`). `position` is the inventory position y = I + x1 + ... + xL before ordering.


def ss_rule(position, s, S):
    """(s,S) (Scarf 1960): order S - y when y < s.

    >>> ss_rule(np.array([3, 4, 5, 9]), 5, 10).tolist()
    [7, 6, 0, 0]
    """
    return (position < s) * (S - position)


def base_stock_rule(position, S, _unused=0):
    """Order up to S: (S - y)^+."""
    return np.maximum(S - position, 0)


def sq_rule(position, s, Q):
    """(s,Q): order the batch Q when y < s."""
    return (position < s) * Q


def rq_rule(position, R, Q):
    """(R,Q) with multiples: the fewest batches of Q that bring y to R, ceil((R - y)^+ / Q) Q.

    >>> rq_rule(np.array([0, 7, 10, 12]), 10, 4).tolist()
    [12.0, 4.0, 0.0, 0.0]
    """
    return np.ceil(np.maximum(R - position, 0) / Q) * Q


def const_rule(position, q, _unused=0):
    """The same order every period."""
    return q + 0 * position


# kernel codes: index into this tuple (the kernels dispatch on it; keep the order)
RULES = (ss_rule, base_stock_rule, sq_rule, rq_rule, const_rule)


def _col(x) -> np.ndarray:
    """Parameters as a (P, 1) column so they broadcast over replications.

    Whole numbers beyond int64 (advice can say "order up to 10^40") would make an object array that numpy's
    rounding rejects; as float64 they order exactly what any level above the capacity orders."""
    a = np.atleast_1d(np.asarray(x))
    if a.dtype == object:
        a = a.astype(np.float64)
    return a.reshape(-1, 1)


def kernel_params(x) -> np.ndarray:
    """A rule's parameters for the compiled kernels: int64 when whole numbers (the loop then stays in integers),
    else float64 (so are levels beyond int64: float64 orders exactly what any level above the capacity orders)."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    whole = np.all(np.isfinite(x)) and np.all(x == np.rint(x)) and np.all(np.abs(x) < 2.0**62)
    return x.astype(np.int64) if whole else x


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

    def kernel_form(self) -> tuple[int, np.ndarray, np.ndarray] | None:
        """(rule code in RULES, first parameter (P,), second parameter (P,)) for the compiled kernels, or None
        when the policy is not one of the stationary position rules (the kernels then ask it period by period)."""
        return None


def _pair(code: int, a, b) -> tuple[int, np.ndarray, np.ndarray]:
    a, b = np.atleast_1d(np.asarray(a, dtype=np.float64)), np.atleast_1d(np.asarray(b, dtype=np.float64))
    return code, np.ascontiguousarray(np.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape))), \
        np.ascontiguousarray(np.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape)))


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
        return ss_rule(position, _col(self.s), _col(self.S))

    def kernel_form(self):
        return _pair(0, self.s, self.S)

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
        return base_stock_rule(position, _col(self.S))

    def kernel_form(self):
        return _pair(1, self.S, 0)

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
        return sq_rule(position, _col(self.s), _col(self.Q))

    def kernel_form(self):
        return _pair(2, self.s, self.Q)

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
        return rq_rule(position, _col(self.R), np.maximum(_col(self.Q), 1)).astype(np.int64)

    def kernel_form(self):
        return _pair(3, self.R, np.maximum(np.asarray(self.Q), 1))

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
        return np.broadcast_to(const_rule(position, _col(self.q)), position.shape)

    def kernel_form(self):
        return _pair(4, self.q, 0)

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
    """`ss:s,S`, `sq:s,Q`, `rq:R,Q`, `bs:S`, `const:q` -> a Policy (the CLI's --evaluate).

    >>> parse_policy_spec("ss: 20, 45").label()
    '(s=20, S=45)'
    >>> parse_policy_spec("ss:45,20")
    Traceback (most recent call last):
    ...
    inventory.policies.PolicySpecError: --evaluate: (s,S) needs s <= S, got 'ss:45,20'
    """
    m = re.fullmatch(r"\s*([a-z]+)\s*:\s*([-\d.,\s]+)", str(spec).lower())
    forms = "ss:s,S | sq:s,Q | rq:R,Q | bs:S | const:q"
    if not m:
        raise PolicySpecError(f"--evaluate: cannot read policy {spec!r}; allowed forms: {forms}")
    kind = m.group(1)
    parts = [x.strip() for x in m.group(2).split(",")]
    if not all(re.fullmatch(r"-?\d+(\.0*)?", x) for x in parts):  # "1 2" is not 12, "2.7" is not 2
        raise PolicySpecError(f"--evaluate: parameters must be whole numbers separated by commas, got {spec!r}; "
                              f"allowed forms: {forms}")
    nums = [int(float(x)) for x in parts]
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
