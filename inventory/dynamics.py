"""The periodic-review dynamics: the one implementation of the rules.

State at the start of period t: on-hand I_t and pipeline (x_1..x_L), x_1 arriving this period.
Each period:
  1. the order q_t is chosen from the state, then capped (`room`):
        q_t <= q_max   and   I_t + x_1 + ... + x_L + q_t <= I_max            (max_order, max_inventory);
  2. arrival (`arrival`): the oldest order x_1 arrives (with L = 0 the new order itself arrives), so
        A_t = I_t + x_1   units are available;
  3. demand D_t is served (`settle`): held H_t = (A_t - D_t)^+, short B_t = (D_t - A_t)^+, and the period costs
        c_t = K 1{q_t > 0} + h H_t + b B_t                                       (`cost`);
  4. the next on-hand is (`settle`)
        lost sale, non-perishable : (A_t - D_t)^+
        backlog,  non-perishable  :  A_t - D_t     (negative = customers waiting, charged b every period)
        lost sale, perishable     :  0             (unsold units spoil at the end of the day)
        backlog,  perishable      :  min(A_t - D_t, 0)   (leftovers spoil, the backlog stays)
     and the pipeline shifts: (x_2..x_L, q_t)   (`transition`).
This is the standard single-item periodic-review model (Zipkin 2000, "Foundations of Inventory Management",
ch. 6-9; lost sales as in Zipkin 2008, Oper. Res. 56(5); Bijvank & Vis 2011, EJOR 215 for the variants).

Two layers, one set of formulas:
  * the *rules* (`room`, `clamp` / `capped`, `arrival`, `settle`, `cost`) are written with arithmetic and `np.minimum` /
    `np.maximum` / `np.rint` only, so the very same function bodies run elementwise on numpy arrays of states
    (Monte Carlo reference, exact DP, RL environments), are compiled by numba for the scalar kernel
    (`inventory.kernel`), and run on torch tensors with `np` rebound (`inventory.kernel_torch`);
  * the public helpers (`order_room`, `cap_order`, `period_cost`, `step`, ...) wrap them for callers.
Pipeline bookkeeping (shift vs ring buffer) is the caller's; the rules are here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inventory.problem import Problem

# ---------------------------------------------------------------------------------------------------
# The rules (numba-compilable bodies: arithmetic and np.minimum / np.maximum / np.rint only)
# ---------------------------------------------------------------------------------------------------


def room(position, max_order, max_inventory):
    """The order cap: the largest order allowed, min(q_max, (I_max - position)^+).

    >>> room(np.array([0, 25, 38, 45]), 20, 40).tolist()   # q_max = 20 binds, then I_max = 40, then nothing
    [20, 15, 2, 0]
    """
    return np.minimum(np.maximum(max_inventory - position, 0), max_order)


def clamp(order, allowed):
    """A whole-unit order placed within the cap: 0 <= q <= allowed."""
    return np.minimum(np.maximum(order, 0), allowed)


def whole_units(raw):
    """A raw (possibly fractional) order rounded to whole units, halves to even."""
    return np.rint(raw)


def capped(raw, allowed):
    """The order actually placed from a raw (possibly fractional or negative) order: `whole_units`, then `clamp`."""
    return clamp(whole_units(raw), allowed)


def arrival(order, oldest_in_pipeline, lead_time):
    """Units arriving this period: the order itself when L = 0, else the oldest pipeline entry x_1."""
    return order if lead_time == 0 else oldest_in_pipeline


def settle(available, demand, lost_sales, perishable):
    """Serve demand D from the available A.

    Returns (next_on_hand, held, short, sold): held = (A - D)^+ (charged h), short = (D - A)^+ (charged b:
    lost units, or the whole waiting backlog), sold = demand met from stock now. Unmet demand is dropped
    (lost sale) or carried as negative stock (backlog); perishable stock keeps only its negative part.

    >>> [x.tolist() for x in settle(np.array([5, 2, -1]), np.array([3, 4, 2]), False, False)]  # backlog
    [[2, -2, -3], [2, 0, 0], [0, 2, 3], [3, 2, 0]]
    >>> [x.tolist() for x in settle(np.array([5, 2]), np.array([3, 4]), True, True)]  # lost sales, perishable
    [[0, 0], [2, 0], [0, 2], [3, 2]]
    """
    net = available - demand
    held = np.maximum(net, 0)
    short = held - net
    sold = demand - np.minimum(short, demand)
    kept = held if lost_sales else net
    next_on_hand = np.minimum(kept, 0) if perishable else kept
    return next_on_hand, held, short, sold


def cost(setups, held, short, setup_cost, holding_cost, penalty_cost):
    """The cost formula K * setups + h * held + b * short.

    Linear in (setups, held, short), so it prices one period (setups = 1{q > 0}) and whole-horizon totals
    (sums of each) alike: Monte Carlo sums the three counts and prices them once.
    """
    return setup_cost * setups + holding_cost * held + penalty_cost * short


# ---------------------------------------------------------------------------------------------------
# Public helpers on numpy arrays
# ---------------------------------------------------------------------------------------------------


def inventory_position(on_hand, pipeline) -> np.ndarray:
    """I + x1 + ... + xL; `pipeline` has the lead-time axis last."""
    pipeline = np.asarray(pipeline)
    return np.asarray(on_hand) + (pipeline.sum(axis=-1) if pipeline.shape[-1:] != (0,) else 0)


def order_room(position, max_order: int, max_inventory: int) -> np.ndarray:
    """The largest order the caps allow: <= max_order, and position after ordering <= capacity."""
    return room(np.asarray(position), max_order, max_inventory)


def cap_order(raw, position, max_order: int, max_inventory: int) -> np.ndarray:
    """The order actually placed: a non-negative integer within `order_room`."""
    allowed = order_room(position, max_order, max_inventory)
    return capped(np.asarray(raw, dtype=float), allowed).astype(np.int64)


def period_cost(order, held, short, problem: Problem) -> np.ndarray:
    """c = K 1{q > 0} + h held + b short for one period."""
    return cost_of(np.asarray(order) > 0, np.asarray(held), np.asarray(short), problem)


def cost_of(setups, held, short, problem: Problem):
    """`cost` with the problem's K, h, b (setups may be indicators or counts)."""
    return cost(setups, held, short, problem.setup_cost, problem.holding_cost, problem.penalty_cost)


def transition(on_hand, pipeline, order, demand, problem: Problem):
    """Arrival, settlement and pipeline shift for an already capped `order` (shapes broadcast; pipeline (..., L)).

    Returns (next_on_hand, next_pipeline, held, short, sold).
    """
    L = problem.lead_time
    head = pipeline[..., 0] if L else None
    available = on_hand + arrival(order, head, L)
    nxt, held, short, sold = settle(available, demand, problem.lost_sales, problem.perishable)
    new_pipeline = pipeline if L == 0 else np.concatenate([pipeline[..., 1:], order[..., None]], axis=-1)
    return nxt, new_pipeline, held, short, sold


def expected_period_cost(problem: Problem, available, pmf: np.ndarray) -> np.ndarray:
    """E[h H + b B | A = available] under the demand pmf on 0..len(pmf)-1 (no setup): the DP's one-period cost."""
    d = np.arange(pmf.size)
    _, held, short, _ = settle(np.asarray(available)[..., None], d, problem.lost_sales, problem.perishable)
    return cost_of(0, held, short, problem) @ pmf


@dataclass(frozen=True)
class Step:
    on_hand: np.ndarray
    pipeline: np.ndarray
    order: np.ndarray
    cost: np.ndarray
    held: np.ndarray
    short: np.ndarray
    sold: np.ndarray


def step(problem: Problem, on_hand, pipeline, raw_order, demand) -> Step:
    """One period from an explicit state; pipeline shape (..., L), oldest (arriving) first.

    Lost sales, L = 1, h = 1, b = 4, K = 2, caps q_max = 10, I_max = 12: on-hand 3 with 4 arriving, a raw
    order of 9 is cut to 12 - 7 = 5; 7 units meet demand 9, 2 are lost: cost K + b 2 = 10.

    >>> from inventory.demand import Demand
    >>> p = Problem(horizon=5, demand=Demand.poisson(5), lost_sales=True, holding_cost=1, penalty_cost=4,
    ...             setup_cost=2, lead_time=1, max_inventory=12, max_order=10)
    >>> st = step(p, 3, [4], 9, 9)
    >>> int(st.order), int(st.on_hand), st.pipeline.tolist(), float(st.cost), int(st.short)
    (5, 0, [5], 10.0, 2)
    """
    on_hand = np.asarray(on_hand, dtype=np.int64)
    pipeline = np.asarray(pipeline, dtype=np.int64).reshape(on_hand.shape + (problem.lead_time,))
    demand = np.asarray(demand)
    if demand.dtype.kind not in "iub":  # stock is counted in whole units: 2.5 demanded units is an input error
        if not np.all(np.isfinite(demand)) or np.any(demand != np.rint(demand)):
            raise ValueError(f"demand: must be whole units, got {demand.ravel()[:3].tolist()}")
        demand = demand.astype(np.int64)
    q = cap_order(raw_order, inventory_position(on_hand, pipeline), problem.max_order, problem.max_inventory)
    q = np.broadcast_to(q, np.broadcast_shapes(q.shape, on_hand.shape))
    on_b = np.broadcast_to(on_hand, q.shape)
    pipe_b = np.broadcast_to(pipeline, q.shape + (problem.lead_time,))
    nxt, new_pipeline, held, short, sold = transition(on_b, pipe_b, q, np.asarray(demand), problem)
    return Step(nxt, new_pipeline, q, period_cost(q, held, short, problem), held, short, sold)


def initial_state(problem: Problem, shape=()) -> tuple[np.ndarray, np.ndarray]:
    on_hand = np.full(shape, problem.initial_inventory, dtype=np.int64)
    return on_hand, np.zeros(tuple(shape) + (problem.lead_time,), dtype=np.int64)
