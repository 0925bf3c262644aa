"""Rollout improvement of the opening orders: the first L + 1 decisions from an empty start, chosen by Monte Carlo.

Why: at L = 3-4 about half of a trained DQN's gap to the DP optimum sits in its first orders (docs/rl.md). From an
empty start under lost sales nothing is on hand until the first order arrives during period L, so the states at
t <= L do not depend on demand (at t = L the pipeline holds the first L orders and the shelf is still empty): the
opening is a fixed sequence of L + 1 orders, visited once per episode, a sliver of the replay,
where the network's Q-differences are least accurate. Because those states are deterministic, the opening can be
improved the way rollout policy improvement works: for each opening period in turn, try the feasible orders (all of
them, or a grid plus neighbours when there are many), follow the trained policy afterwards, and take an order
only when its mean cost on common random numbers is lower by more than 2 paired standard errors (coordinate
descent, two sweeps, a bounded number of simulations). The search starts from the network's own opening, and the
opening found ships only if it also beats the network's own on fresh numbers; otherwise the network's own ships.

Only where the opening is deterministic (initial inventory 0, lost sales, L >= 1); elsewhere `improve_opening`
returns an empty opening and `OpeningPolicy` is the base policy unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from inventory import dynamics
from inventory.montecarlo import demand_matrix
from inventory.problem import Problem
from rl.crn_search import clearly_cheaper, path_costs, search_replications, stacked_path_costs

OPENING_SEED_OFFSET = 31_337  # search numbers apart from validation and final scoring
CHECK_SEED_OFFSET = 61_613  # fresh numbers on which the searched opening must still beat the network's own


def opening_is_deterministic(problem: Problem) -> bool:
    return problem.lead_time >= 1 and problem.lost_sales and problem.initial_inventory == 0


def opening_length(problem: Problem) -> int:
    """Periods whose state is fixed from an empty start: t = 0..L (none when the opening is not fixed)."""
    return min(problem.lead_time + 1, problem.horizon) if opening_is_deterministic(problem) else 0


def opening_states(problem: Problem, orders: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (on-hand, pipeline) the opening visits at t = 0..len(orders)-1 (demand plays no part in them)."""
    on, pipe = dynamics.initial_state(problem, (1,))
    states = []
    for a in orders:
        states.append((on.copy(), pipe.copy()))
        st = dynamics.step(problem, on, pipe, np.array([a]), np.zeros(1, dtype=np.int64))
        on, pipe = st.on_hand, st.pipeline
    return states


@dataclass
class OpeningPolicy:
    """fn(on_hand, pipeline, t) -> orders: the opening's order in its own (deterministic) states, else `base`."""

    problem: Problem
    base: Callable
    orders: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._states = opening_states(self.problem, self.orders)

    def __call__(self, on_hand, pipeline, t) -> np.ndarray:
        return self.adjust(self.base(on_hand, pipeline, t), on_hand, pipeline, t)

    def adjust(self, orders, on_hand, pipeline, t) -> np.ndarray:
        """`base`'s orders with the opening's order in the opening's state of period t."""
        out = np.asarray(orders).copy()
        if t < len(self.orders):
            on0, pipe0 = self._states[t]
            at = (np.asarray(on_hand).reshape(-1) == on0[0]) & np.all(
                np.asarray(pipeline).reshape(out.size, -1) == pipe0[0], axis=1)
            out[at] = self.orders[t]
        return out


def _room(problem: Problem, on_hand: np.ndarray, pipeline: np.ndarray) -> int:
    position = dynamics.inventory_position(on_hand, pipeline)
    return int(dynamics.order_room(position, problem.max_order, problem.max_inventory)[0])


def _path_costs(problem: Problem, base: Callable, orders: list[int], demands: np.ndarray) -> np.ndarray:
    return path_costs(problem, OpeningPolicy(problem, base, orders), demands)


def _candidate_costs(problem: Problem, base: Callable, orders: list[int], t: int, candidates: list[int],
                     demands: np.ndarray) -> np.ndarray:
    """(len(candidates), paths): the opening `orders` with each candidate order at period t."""
    trials = [OpeningPolicy(problem, base, orders[:t] + [a] + orders[t + 1:]).adjust for a in candidates]
    return stacked_path_costs(problem, base, trials, demands)


MAX_CANDIDATES = 41  # orders tried per opening period: all of 0..room when it fits, else a grid plus neighbours
MAX_SIMULATIONS = 400  # simulations per search, whatever the lead time


def _candidates(room: int, current: int) -> list[int]:
    """Every order 0..room when there are few; else an even grid over 0..room and the current order's neighbours,
    so a capacity of 10,000 costs 41 simulations per period, not 10,001."""
    if room + 1 <= MAX_CANDIDATES:
        return list(range(room + 1))
    grid = {int(round(x)) for x in np.linspace(0, room, MAX_CANDIDATES - 6)}
    near = {current + d for d in (-3, -2, -1, 1, 2, 3) if 0 <= current + d <= room}
    return sorted(grid | near)


def improve_opening(problem: Problem, base: Callable, replications: int = 2000, seed: int = 0,
                    sweeps: int = 2, z: float = 2.0) -> tuple[list[int], dict]:
    """Opening orders improved by rollouts of `base` (a state-policy callable) on common random numbers.

    By expected cost, the criterion the network was trained for (the Optimization Agent then scores the whole
    policy by L(pi) like every other candidate). A change is kept only when it is cheaper by more than `z` paired
    standard errors on the search numbers, and the opening found must then beat the network's own by `z` paired
    standard errors on fresh numbers too: the search tries a hundred or more candidates, and the best of them on
    its own numbers is flattered by them (measured: on 2,000 and on 8,000 search paths, openings that lost up to
    0.2 points on fresh numbers). Returns (orders, info): info has the base policy's own opening, its mean cost and
    the improved mean cost on the search numbers (seed + OPENING_SEED_OFFSET), and the check on fresh numbers."""
    if not opening_is_deterministic(problem):
        return [], {"applied": False, "reason": "opening depends on demand (backlog, stock at start or L = 0)"}
    own: list[int] = []
    for t in range(opening_length(problem)):  # the base policy's own opening, as the simulator places it (capped)
        on, pipe = opening_states(problem, own + [0])[t]
        raw = int(np.asarray(base(on, pipe, t)).reshape(-1)[0])
        own.append(int(dynamics.clamp(raw, _room(problem, on, pipe))))
    replications = search_replications(problem, replications)
    demands = demand_matrix(problem, replications, seed=seed + OPENING_SEED_OFFSET)
    orders, best = list(own), _path_costs(problem, base, own, demands)
    start, simulations = float(best.mean()), 1
    for _ in range(sweeps):
        changed = False
        for t in range(opening_length(problem)):
            candidates = _candidates(_room(problem, *opening_states(problem, orders)[t]), orders[t])
            # a trial differs from `orders` only at t, so all of them are known now: one stacked simulation
            costs = dict(zip(candidates, _candidate_costs(problem, base, orders, t, candidates, demands), strict=True))
            for a in candidates:
                if a == orders[t] or simulations >= MAX_SIMULATIONS:
                    continue
                simulations += 1
                if clearly_cheaper(costs[a], best, z):
                    orders, best, changed = orders[:t] + [a] + orders[t + 1:], costs[a], True
        if not changed or simulations >= MAX_SIMULATIONS:
            break
    searched = list(orders)
    check = demand_matrix(problem, replications, seed=seed + CHECK_SEED_OFFSET)
    kept = orders == own or clearly_cheaper(_path_costs(problem, base, orders, check),
                                              _path_costs(problem, base, own, check), z)
    return (orders if kept else own), {
        "applied": True, "own_opening": own, "opening": orders if kept else own, "searched_opening": searched,
        "kept_after_check": kept, "search_replications": replications, "simulations": simulations,
        "budget_used_up": simulations >= MAX_SIMULATIONS, "own_cost": start,
        "improved_cost": float(best.mean()) if kept else start}
