"""The periodic-review dynamics: the one implementation of the rules.

State at the start of period t: on-hand I and pipeline (x1..xL), x1 arriving this period.
Each period:
  1. the order q is chosen from the state, then capped: q <= max_order and the inventory position after
     ordering, I + x1 + ... + xL + q, never above max_inventory;
  2. the oldest order x1 arrives (with L = 0 the new order itself arrives), so A = I + x1 units are available;
  3. demand D is served; the period costs  H*1{q>0} + h*(A - D)^+ + b*(D - A)^+;
  4. the next on-hand is
        lost sale, non-perishable : (A - D)^+
        backlog,  non-perishable  :  A - D              (negative = customers waiting, charged b every period)
        lost sale, perishable     :  0                  (unsold units spoil at the end of the day)
        backlog,  perishable      :  min(A - D, 0)      (leftovers spoil, the backlog stays)
     and the pipeline shifts: (x2..xL, q).
Every function is elementwise numpy so Monte Carlo, the exact DP and the RL environment share it whatever the
array shape; pipeline bookkeeping (shift vs ring buffer) is the caller's, the rules are here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inventory.problem import Problem


def inventory_position(on_hand, pipeline) -> np.ndarray:
    """I + x1 + ... + xL; `pipeline` has the lead-time axis last."""
    pipeline = np.asarray(pipeline)
    return np.asarray(on_hand) + (pipeline.sum(axis=-1) if pipeline.shape[-1:] != (0,) else 0)


def order_room(position, max_order: int, max_inventory: int) -> np.ndarray:
    """The largest order the caps allow: <= max_order, and position after ordering <= capacity."""
    return np.clip(max_inventory - np.asarray(position), 0, max_order)


def cap_order(raw, position, max_order: int, max_inventory: int) -> np.ndarray:
    """The order actually placed: a non-negative integer within `order_room`."""
    room = order_room(position, max_order, max_inventory)
    return np.clip(np.rint(np.asarray(raw, dtype=float)).astype(np.int64), 0, room)


def settle(available, demand, lost_sales: bool, perishable: bool):
    """Serve demand from what is available.

    Returns (next_on_hand, held, short, sold): held = units left after demand (charged h), short = units
    short after demand (charged b: lost units, or the whole waiting backlog), sold = demand met from stock now.
    """
    net = np.asarray(available) - np.asarray(demand)
    held = np.maximum(net, 0)
    short = np.maximum(-net, 0)
    sold = np.asarray(demand) - np.minimum(short, demand)
    if lost_sales:
        next_on_hand = np.zeros_like(held) if perishable else held
    else:
        next_on_hand = np.minimum(net, 0) if perishable else net
    return next_on_hand, held, short, sold


def period_cost(order, held, short, problem: Problem) -> np.ndarray:
    return (
        problem.setup_cost * (np.asarray(order) > 0)
        + problem.holding_cost * np.asarray(held)
        + problem.penalty_cost * np.asarray(short)
    )


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
    """One period from an explicit state; pipeline shape (..., L), oldest (arriving) first."""
    on_hand = np.asarray(on_hand, dtype=np.int64)
    pipeline = np.asarray(pipeline, dtype=np.int64).reshape(on_hand.shape + (problem.lead_time,))
    q = cap_order(raw_order, inventory_position(on_hand, pipeline), problem.max_order, problem.max_inventory)
    q = np.broadcast_to(q, on_hand.shape)
    if problem.lead_time == 0:
        arrival = q
        new_pipeline = pipeline
    else:
        arrival = pipeline[..., 0]
        new_pipeline = np.concatenate([pipeline[..., 1:], q[..., None]], axis=-1)
    nxt, held, short, sold = settle(on_hand + arrival, demand, problem.lost_sales, problem.perishable)
    return Step(nxt, new_pipeline, q, period_cost(q, held, short, problem), held, short, sold)


def initial_state(problem: Problem, shape=()) -> tuple[np.ndarray, np.ndarray]:
    on_hand = np.full(shape, problem.initial_inventory, dtype=np.int64)
    return on_hand, np.zeros(tuple(shape) + (problem.lead_time,), dtype=np.int64)
