"""Monte Carlo evaluation, vectorised over policies x replications, with common random numbers.

All policies see the same demand matrix (R x T), so differences between them are not blurred by sampling
noise. The pipeline is a ring buffer (slot t mod L receives the order placed at t and is read again at t+L),
so a period costs O(1) array operations whatever the lead time; the rules themselves come from
`inventory.dynamics`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from inventory.dynamics import settle
from inventory.policies import Policy
from inventory.problem import Problem


def demand_matrix(problem: Problem, replications: int, periods: int | None = None, seed: int = 0) -> np.ndarray:
    """Common random numbers: the (R, T) demand every policy is evaluated on."""
    rng = np.random.default_rng(seed)
    return problem.demand.sample(rng, (replications, periods or problem.horizon))


@dataclass
class SimResult:
    """Per-(policy, replication) totals; costs are totals over the counted periods."""

    cost: np.ndarray  # (P, R)
    held: np.ndarray
    short: np.ndarray
    orders: np.ndarray
    sold: np.ndarray | None
    stockout_periods: np.ndarray | None
    demand: np.ndarray  # (R,) total demand per replication over counted periods
    periods: int


def simulate(
    problem: Problem,
    policy: Policy,
    demands: np.ndarray,
    warmup: int = 0,
    detailed: bool = True,
) -> SimResult:
    """Run `policy` (P parameter sets) on every row of `demands` (R, T); the first `warmup` periods are not counted."""
    R, T = demands.shape
    P = policy.size
    L = problem.lead_time
    Imax, qmax = problem.max_inventory, problem.max_order
    lost, perish = problem.lost_sales, problem.perishable
    dt = np.int32

    on_hand = np.full((P, R), problem.initial_inventory, dtype=dt)
    ring = np.zeros((max(L, 1), P, R), dtype=dt)
    in_transit = np.zeros((P, R), dtype=dt)
    held_sum = np.zeros((P, R), dtype=np.int64)
    short_sum = np.zeros((P, R), dtype=np.int64)
    order_cnt = np.zeros((P, R), dtype=np.int32)
    sold_sum = np.zeros((P, R), dtype=np.int64) if detailed else None
    out_cnt = np.zeros((P, R), dtype=np.int32) if detailed else None
    room = np.empty((P, R), dtype=dt)

    for t in range(T):
        d = demands[:, t]  # (R,), broadcast over policies
        position = on_hand + in_transit
        if policy.needs_state:
            order = np.asarray(policy.order_from_state(on_hand, _ordered_pipeline(ring, t, L), t))
        else:
            order = policy.order_from_position(position, t)
        # caps: order <= max_order and position after ordering <= capacity (same rule as dynamics.cap_order)
        np.subtract(Imax, position, out=room)
        np.clip(room, 0, qmax, out=room)
        q = np.clip(np.rint(order) if order.dtype.kind == "f" else order, 0, room).astype(dt)
        if L == 0:
            available = on_hand + q
        else:
            slot = t % L
            arriving = ring[slot]
            available = on_hand + arriving
            in_transit += q - arriving
            ring[slot] = q
        on_hand, held, short, sold = settle(available, d, lost, perish)
        on_hand = on_hand.astype(dt, copy=False)
        if t >= warmup:
            held_sum += held
            short_sum += short
            order_cnt += q > 0
            if detailed:
                sold_sum += sold
                out_cnt += short > 0
    cost = (
        problem.holding_cost * held_sum + problem.penalty_cost * short_sum + problem.setup_cost * order_cnt
    )
    return SimResult(
        cost=cost,
        held=held_sum,
        short=short_sum,
        orders=order_cnt,
        sold=sold_sum,
        stockout_periods=out_cnt,
        demand=demands[:, warmup:].sum(axis=1),
        periods=T - warmup,
    )


def _ordered_pipeline(ring: np.ndarray, t: int, L: int) -> np.ndarray:
    """The ring buffer as (P, R, L), oldest (arriving this period) first."""
    if L == 0:
        return np.zeros(ring.shape[1:] + (0,), dtype=ring.dtype)
    idx = [(t + i) % L for i in range(L)]
    return np.moveaxis(ring[idx], 0, -1)


def composite_objective(mean, std, risk_tolerance: float):
    """L(pi) = E[cost] + exp(-lambda) * Std[cost]."""
    return np.asarray(mean) + math.exp(-risk_tolerance) * np.asarray(std)


@dataclass
class Evaluation:
    """Summary of one policy; costs are totals over the horizon (finite) or per period (average)."""

    name: str
    params: dict
    mean_cost: float
    std_cost: float
    stderr: float
    objective: float
    fill_rate: float
    stockout_rate: float
    avg_on_hand: float
    order_frequency: float
    replications: int

    def as_row(self) -> dict:
        row = {k: v for k, v in self.__dict__.items() if k != "params"}
        row["params"] = ",".join(f"{k}={v}" for k, v in self.params.items())
        return row


def summarise(problem: Problem, sim: SimResult, per_period: bool = False) -> list[dict]:
    """Statistics per policy row of a simulation (totals, or per period when `per_period`)."""
    scale = 1.0 / sim.periods if per_period else 1.0
    cost = sim.cost * scale
    R = cost.shape[1]
    mean = cost.mean(axis=1)
    std = cost.std(axis=1, ddof=1) if R > 1 else np.zeros_like(mean)
    total_demand = max(float(sim.demand.sum()), 1e-12)
    out = []
    for i in range(cost.shape[0]):
        out.append(
            {
                "mean_cost": float(mean[i]),
                "std_cost": float(std[i]),
                "stderr": float(std[i] / math.sqrt(R)),
                "objective": float(composite_objective(mean[i], std[i], problem.risk_tolerance)),
                "fill_rate": float(sim.sold[i].sum() / total_demand) if sim.sold is not None else float("nan"),
                "stockout_rate": float(sim.stockout_periods[i].mean() / sim.periods)
                if sim.stockout_periods is not None
                else float("nan"),
                "avg_on_hand": float(sim.held[i].mean() / sim.periods),
                "order_frequency": float(sim.orders[i].mean() / sim.periods),
                "replications": R,
            }
        )
    return out


def average_run_length(problem: Problem) -> tuple[int, int]:
    """(warm-up, counted periods) used for the long-run average objective."""
    warmup = max(50, 5 * (problem.lead_time + 1))
    return warmup, max(problem.horizon, 1000)


def evaluate(
    problem: Problem,
    policies: list[Policy],
    replications: int = 1000,
    seed: int = 0,
    objective: str = "finite",
) -> list[Evaluation]:
    """Score policies on the same random numbers; `objective` finite (total over horizon) or average."""
    if objective not in ("finite", "average"):
        raise ValueError(f"objective: {objective!r} is not allowed; allowed: finite, average")
    if objective == "finite":
        warmup, periods = 0, problem.horizon
    else:
        warmup, periods = average_run_length(problem)
    demands = demand_matrix(problem, replications, warmup + periods, seed)
    results = []
    for policy in policies:
        sim = simulate(problem, policy, demands, warmup=warmup)
        for i, stats in enumerate(summarise(problem, sim, per_period=objective == "average")):
            params = {k: _scalar(v, i) for k, v in policy.params().items()}
            results.append(Evaluation(name=policy.label(i), params=params, **stats))
    return results


def evaluations_frame(evals: list[Evaluation]) -> pd.DataFrame:
    return pd.DataFrame([e.as_row() for e in evals])


def _scalar(v, i):
    a = np.atleast_1d(v)
    if a.dtype.kind not in "iuf":
        return v
    x = a[i] if a.size > 1 else a[0]
    return int(x) if float(x).is_integer() else float(x)
