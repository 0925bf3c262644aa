"""Rollout improvement after the opening: order offsets by inventory position, and in the last periods that
still receive an order, chosen on common random numbers.

Why: with the opening fixed (rl.opening), what is left of a trained DQN's gap to the DP optimum is spread over
the steady periods and the end of the horizon. Measured on eight trained networks (docs/rl.md), two systematic
errors remain that a few numbers can correct: the network leans the same way over a range of inventory positions
(at L = 4 it orders up to one unit too much at low positions and too little at high ones), and it under-orders in
the last period whose order still arrives (the start and the end are slivers of the replay, where its
Q-differences are least accurate). So the shipped policy is the network's order plus

* in the steady periods (after the opening, before the end window): an offset per inventory-position bucket
  (BUCKETS buckets at quantiles of the positions the policy itself visits);
* in the END_PERIODS last periods whose order arrives before the horizon: an offset per period;

clamped to what the caps allow. With a setup cost only orders the network places are adjusted (an offset never
creates an order that pays a setup, nor cancels one). Orders placed in the last L periods arrive after the
horizon and are left alone.

The offsets are found like the opening: coordinate search over offsets of +-1 and +-2 on common random numbers,
a change kept only when cheaper by more than 2 paired standard errors, at most MAX_SIMULATIONS simulations; the
result must then beat the policy without offsets by 2 paired standard errors on fresh paths, or no offsets ship.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from inventory import dynamics
from inventory.montecarlo import demand_matrix
from inventory.problem import Problem
from rl.crn_search import clearly_cheaper, path_costs, search_replications, stacked_path_costs
from rl.opening import OpeningPolicy

RESIDUAL_SEED_OFFSET = 47_111  # search numbers, apart from validation, scoring and the opening's
RESIDUAL_CHECK_SEED_OFFSET = 83_207  # fresh numbers on which the offsets must still win
PILOT_SEED_OFFSET = 12_007  # a short run of the policy that places the position buckets
BUCKETS = 6
END_PERIODS = 4
DELTAS = (-1, 1, -2, 2)
MAX_OFFSET = 5  # |offset| in units: a correction of the network, not a different policy
MAX_SIMULATIONS = 300
PILOT_PATHS = 500


@dataclass
class Residual:
    """Offsets added to the base policy's orders (config.json "residual"; empty offsets: nothing changes)."""

    steady_from: int  # first period with position offsets (after the opening)
    end_from: int  # first of the end periods; offsets by period from here to arrive_until - 1
    arrive_until: int  # horizon - lead time: orders from here on arrive after the horizon
    edges: list[int] = field(default_factory=list)  # position bucket k holds edges[k-1] <= position < edges[k]
    offsets: list[int] = field(default_factory=list)  # len(edges) + 1
    end_offsets: list[int] = field(default_factory=list)  # one per period in end_from..arrive_until-1
    only_placed: bool = False  # setup cost > 0: adjust only orders the base places

    @property
    def changes_anything(self) -> bool:
        return any(self.offsets) or any(self.end_offsets)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d, problem: Problem) -> Residual:
        """From config.json, checked against the problem; the message names the field and what is allowed."""
        allowed = ("an object with whole numbers steady_from <= end_from <= arrive_until <= horizon, increasing "
                   f"edges, len(edges) + 1 offsets and arrive_until - end_from end_offsets, each within "
                   f"-{MAX_OFFSET}..{MAX_OFFSET}, and only_placed true/false")
        try:
            r = cls(**{k: d[k] for k in ("steady_from", "end_from", "arrive_until", "edges", "offsets",
                                         "end_offsets", "only_placed")})
            ints = [r.steady_from, r.end_from, r.arrive_until, *r.edges, *r.offsets, *r.end_offsets]
            ok = (all(isinstance(x, int) and not isinstance(x, bool) for x in ints)
                  and isinstance(r.only_placed, bool)
                  and 0 <= r.steady_from <= r.end_from <= r.arrive_until <= problem.horizon
                  and list(r.edges) == sorted(set(r.edges)) and len(r.offsets) == len(r.edges) + 1
                  and len(r.end_offsets) == r.arrive_until - r.end_from
                  and all(abs(x) <= MAX_OFFSET for x in [*r.offsets, *r.end_offsets]))
        except (KeyError, TypeError):
            ok = False
        if not ok:
            raise ValueError(f"config.json residual: {d!r} is not allowed; {allowed}")
        return r


def windows(problem: Problem, steady_from: int) -> tuple[int, int, int]:
    """(steady_from, end_from, arrive_until): the end window is the END_PERIODS last periods whose order arrives
    before the horizon; the steady window runs from the opening's end up to it."""
    arrive_until = max(0, problem.horizon - problem.lead_time)
    end_from = max(steady_from, arrive_until - END_PERIODS)
    return min(steady_from, end_from), end_from, arrive_until


@dataclass
class ResidualPolicy:
    """fn(on_hand, pipeline, t) -> orders: `base`'s orders plus the residual's offsets where they apply."""

    problem: Problem
    base: Callable
    residual: Residual | None = None

    def __call__(self, on_hand, pipeline, t) -> np.ndarray:
        return self.adjust(self.base(on_hand, pipeline, t), on_hand, pipeline, t)

    def adjust(self, orders, on_hand, pipeline, t) -> np.ndarray:
        """`base`'s orders with the residual's offset where it applies (capped as the dynamics cap an order)."""
        out = np.asarray(orders).reshape(-1).astype(np.int64)
        r = self.residual
        if r is None or not r.steady_from <= t < r.arrive_until:
            return out
        position = dynamics.inventory_position(np.asarray(on_hand).reshape(-1), np.asarray(pipeline).reshape(out.size, -1))
        if t < r.end_from:
            shift = np.asarray(r.offsets, dtype=np.int64)[np.searchsorted(r.edges, position, side="right")]
        else:
            shift = np.full(out.size, r.end_offsets[t - r.end_from], dtype=np.int64)
        if not shift.any():
            return out
        room = dynamics.order_room(position, self.problem.max_order, self.problem.max_inventory)
        moved = np.clip(out + shift, 0, room)
        if r.only_placed:
            moved = np.where(out > 0, np.maximum(moved, 1), 0)
        return moved


def describe_residual(r: Residual) -> str:
    """The offsets in words, for the agent's notes and the explanation ("+1 unit when the inventory position is
    below 21 (periods 5-51); +1 in period 55")."""
    parts = []
    for k, off in enumerate(r.offsets):
        if off:
            lo = r.edges[k - 1] if k > 0 else None
            hi = r.edges[k] if k < len(r.edges) else None
            where = (f"below {hi}" if lo is None else f"{lo} or more" if hi is None else f"{lo}-{hi - 1}")
            parts.append(f"{off:+d} unit(s) when the inventory position is {where} "
                         f"(periods {r.steady_from}-{r.end_from - 1})")
    parts += [f"{off:+d} unit(s) in period {r.end_from + k}" for k, off in enumerate(r.end_offsets) if off]
    return "; ".join(parts) if parts else "none"


def shipped_policy(problem: Problem, network: Callable, opening: list[int], residual: Residual | None) -> Callable:
    """What ships, as one state-policy callable: the network's orders, the opening's in the opening's states, then
    the residual's offsets (the two never touch the same period: the offsets start after the opening)."""
    policy = OpeningPolicy(problem, network, list(opening)) if opening else network
    return ResidualPolicy(problem, policy, residual) if residual is not None else policy


def _position_edges(problem: Problem, base: Callable, steady: tuple[int, int], seed: int) -> list[int]:
    """Bucket edges at quantiles of the positions `base` visits in the steady window (a short pilot run)."""
    seen: list[np.ndarray] = []

    def spy(on_hand, pipeline, t):
        orders = base(on_hand, pipeline, t)
        if steady[0] <= t < steady[1]:
            on = np.asarray(on_hand).reshape(-1)
            seen.append(dynamics.inventory_position(on, np.asarray(pipeline).reshape(on.size, -1)))
        return orders

    paths = search_replications(problem, PILOT_PATHS)
    path_costs(problem, spy, demand_matrix(problem, paths, seed=seed + PILOT_SEED_OFFSET))
    if not seen:
        return []
    cuts = np.percentile(np.concatenate(seen), np.linspace(0, 100, BUCKETS + 1)[1:-1])
    return sorted({int(round(c)) for c in cuts})


def improve_residual(problem: Problem, base: Callable, steady_from: int, replications: int = 2000, seed: int = 0,
                     sweeps: int = 3, z: float = 2.0) -> tuple[Residual | None, dict]:
    """Offsets for `base` (a state-policy callable: the network with its opening) by rollouts on common random
    numbers; (None, info) when none is clearly better on the search numbers and again on fresh ones.

    `steady_from` is the first period after the opening (0 when the opening is not fixed)."""
    steady_from, end_from, arrive_until = windows(problem, steady_from)
    if arrive_until <= steady_from:
        return None, {"applied": False, "reason": "no period after the opening receives an order before the horizon"}
    edges = _position_edges(problem, base, (steady_from, end_from), seed) if end_from > steady_from else []
    current = Residual(steady_from, end_from, arrive_until, edges, [0] * (len(edges) + 1),
                       [0] * (arrive_until - end_from), only_placed=problem.setup_cost > 0)
    paths = search_replications(problem, replications)
    demands = demand_matrix(problem, paths, seed=seed + RESIDUAL_SEED_OFFSET)
    own = best = path_costs(problem, base, demands)
    simulations = 1
    coordinates = [("offsets", k) for k in range(len(current.offsets) if edges else 0)] + \
                  [("end_offsets", k) for k in range(len(current.end_offsets))]
    for _ in range(sweeps):
        changed = False
        for name, k in coordinates:
            trials = []
            for delta in DELTAS:  # the first clearly cheaper one is taken: all known now, one stacked simulation
                values = list(getattr(current, name))
                if abs(values[k] + delta) > MAX_OFFSET or simulations + len(trials) >= MAX_SIMULATIONS:
                    continue
                values[k] += delta
                trials.append(Residual(**{**current.as_dict(), name: values}))
            if not trials:
                continue
            costs = stacked_path_costs(problem, base, [ResidualPolicy(problem, base, r).adjust for r in trials],
                                       demands)
            for trial, cost in zip(trials, costs, strict=True):
                simulations += 1
                if clearly_cheaper(cost, best, z):
                    current, best, changed = trial, cost, True
                    break
        if not changed or simulations >= MAX_SIMULATIONS:
            break
    info = {"applied": True, "searched": current.as_dict(), "search_replications": paths,
            "simulations": simulations, "budget_used_up": simulations >= MAX_SIMULATIONS,
            "own_cost": float(own.mean()), "improved_cost": float(best.mean())}
    kept = False
    if current.changes_anything:
        check = demand_matrix(problem, paths, seed=seed + RESIDUAL_CHECK_SEED_OFFSET)
        kept = clearly_cheaper(path_costs(problem, ResidualPolicy(problem, base, current), check),
                               path_costs(problem, base, check), z)
    info["kept_after_check"] = kept
    if not kept:
        info["improved_cost"] = info["own_cost"]
    return (current if kept else None), info
