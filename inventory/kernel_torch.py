"""The Monte Carlo kernel on torch tensors (CUDA when present) for very large replication counts.

Same layout and loop as the numpy reference (`montecarlo.simulate_reference`): periods outer, all (P, R)
states advanced by one vectorised period at a time, the pipeline as a ring buffer. On a GPU each period is a
handful of kernel launches over P x R states, which pays once P x R is in the millions; on a CPU the numba
kernel is faster, and this backend exists there only so the tests can prove identical totals.

The rules are not re-written: the functions of `inventory.dynamics` and the policy rules of
`inventory.policies` are re-bound with `np` pointing at a small torch namespace (`_TorchNumpy`: minimum,
maximum, rint, ceil), so the code that runs is the same source text as the reference's. Rounding is
half-to-even on both sides (np.rint, torch.round).
"""

from __future__ import annotations

import types

import numpy as np
import torch

from inventory import dynamics, policies
from inventory.policies import Policy
from inventory.problem import Problem


class _TorchNumpy:
    """The four numpy functions the rules use, for torch tensors (python scalars allowed on either side)."""

    @staticmethod
    def maximum(a, b):
        if not torch.is_tensor(a):
            a, b = b, a
        if not torch.is_tensor(a):
            return max(a, b)
        return torch.clamp(a, min=b) if not torch.is_tensor(b) else torch.maximum(a, b)

    @staticmethod
    def minimum(a, b):
        if not torch.is_tensor(a):
            a, b = b, a
        if not torch.is_tensor(a):
            return min(a, b)
        return torch.clamp(a, max=b) if not torch.is_tensor(b) else torch.minimum(a, b)

    @staticmethod
    def rint(x):
        return torch.round(x) if torch.is_tensor(x) else np.rint(x)

    @staticmethod
    def ceil(x):
        return torch.ceil(x) if torch.is_tensor(x) else np.ceil(x)


def _rebind(module, names: tuple[str, ...]) -> types.SimpleNamespace:
    """The named functions of `module` with `np` -> _TorchNumpy, calling each other's re-bound versions."""
    env = dict(vars(module))
    env["np"] = _TorchNumpy
    out = {}
    for name in names:
        fn = getattr(module, name)
        out[name] = env[name] = types.FunctionType(fn.__code__, env, fn.__name__, fn.__defaults__, fn.__closure__)
    return types.SimpleNamespace(**out)


_dyn = _rebind(dynamics, ("room", "clamp", "whole_units", "capped", "arrival", "settle"))
_rules = _rebind(policies, tuple(rule.__name__ for rule in policies.RULES))
_RULES = tuple(getattr(_rules, rule.__name__) for rule in policies.RULES)
# the same rules for other torch code (the RLlib module's action mask and exploration, `rl.rllib_counterfactual`)
tensor_dynamics, tensor_policies = _dyn, _rules


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _param(x: np.ndarray, device) -> torch.Tensor:
    """(P, 1) parameter column: int64 when whole numbers (the loop stays in integers), else float64."""
    return torch.tensor(policies.kernel_params(x).reshape(-1, 1), device=device)  # a copy, as before


def simulate_torch(problem: Problem, policy: Policy, D: np.ndarray, warmup: int = 0, device=None):
    """Totals (held, short, setups, sold, stock-out periods), each (P, R) numpy int64, on period-major D (T, R)."""
    device = torch.device(device) if device is not None else default_device()
    T, R = D.shape
    P = policy.size
    L = problem.lead_time
    dt = torch.int64
    Dt = torch.as_tensor(np.ascontiguousarray(D), device=device).to(dt)
    on = torch.full((P, R), problem.initial_inventory, dtype=dt, device=device)
    ring = torch.zeros((max(L, 1), P, R), dtype=dt, device=device)
    transit = torch.zeros((P, R), dtype=dt, device=device)
    sums = [torch.zeros((P, R), dtype=dt, device=device) for _ in range(5)]
    form = policy.kernel_form()
    if form is not None:
        rule, a, b = _RULES[form[0]], _param(form[1], device), _param(form[2], device)
    for t in range(T):
        position = on + transit
        if form is not None:
            raw = rule(position, a, b)
        else:
            raw = _ask(policy, on, transit, ring, position, t, L, device)
        allowed = _dyn.room(position, problem.max_order, problem.max_inventory)
        if raw.dtype.is_floating_point:
            q = _dyn.capped(raw, allowed).to(dt)
        else:
            q = _dyn.clamp(raw.to(dt), allowed)
        q = q.expand(P, R)
        slot = t % L if L else 0
        head = ring[slot]
        arrived = _dyn.arrival(q, head, L)
        available = on + arrived
        transit += q - arrived
        ring[slot] = q  # after `available`: head is a view of this slot
        on, held, short, sold = _dyn.settle(available, Dt[t], problem.lost_sales, problem.perishable)
        if t >= warmup:
            for acc, x in zip(sums, (held, short, q > 0, sold, short > 0), strict=True):
                acc += x
    return tuple(s.cpu().numpy() for s in sums)


def _ask(policy: Policy, on, transit, ring, position, t: int, L: int, device) -> torch.Tensor:
    """Orders from a policy the tensors cannot evaluate (a DP table, a network): asked on numpy states."""
    if policy.needs_state:
        pipe = np.zeros(tuple(on.shape) + (0,), dtype=np.int64) if L == 0 else np.moveaxis(
            ring[[(t + i) % L for i in range(L)]].cpu().numpy(), 0, -1)
        raw = np.asarray(policy.order_from_state(on.cpu().numpy(), pipe, t))
    else:
        raw = np.asarray(policy.order_from_position(position.cpu().numpy(), t))
    return torch.as_tensor(raw if raw.dtype.kind == "f" else raw.astype(np.int64), device=device)
