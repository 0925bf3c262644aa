"""Monte Carlo evaluation, vectorised over policies x replications, with common random numbers.

All policies see the same demand paths, so differences between them are not blurred by sampling noise
(common random numbers; Law 2015, "Simulation Modeling and Analysis", ch. 11). For policy pi with P
parameter rows and R replications of T periods, replication r of row p totals

    C_pr = sum_{t >= warmup} K 1{q_t > 0} + h H_t + b B_t      (the rules and the formula: inventory.dynamics)

and `summarise` reports the mean, standard deviation and standard error of C_pr over r.

Backends (`simulate(..., backend=)`), all giving identical totals on the same demand:
  * "numba" (default): the compiled kernel `inventory.kernel`, periods outer, replications inner, state in
    place, optionally `threads` > 1 over replications;
  * "numpy": `simulate_reference`, the readable reference: one vectorised period at a time over (P, R);
  * "torch": `inventory.kernel_torch`, the same period loop on torch tensors (CUDA when present) for very
    large replication counts; `kernel_torch.choose_backend` picks.
Demand comes from `inventory.sampling` (inverse-CDF tables, period-major storage, stream version
`RANDOM_STREAM_VERSION`, recorded in every `Evaluation`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from inventory import dynamics
from inventory.compiled import compiled_pays, reference_timed
from inventory.policies import Policy
from inventory.problem import Problem
from inventory.sampling import RANDOM_STREAM_VERSION, demand_paths

if TYPE_CHECKING:
    import pandas as pd

BACKENDS = ("numba", "numpy", "torch")
TORCH_MIN_WORK = 10_000_000  # policy rows x replications x periods above which a GPU beats the CPU kernel


def gpu_present() -> bool:
    """A CUDA device is visible, checked without importing torch unless the device nodes exist."""
    import os
    import sys

    if "torch" not in sys.modules and not os.path.exists("/dev/nvidiactl"):
        return False
    try:
        import torch

        return bool(torch.cuda.is_available())
    except ImportError:
        return False


def choose_backend(requested: str | None = None, work: int = 0) -> str:
    """The Monte Carlo backend: `requested` when given, else torch on a GPU for very large runs, else numba
    once it pays for its start-up (`inventory.compiled`), else the numpy reference (identical totals).

    `work` = policy rows x replications x periods of the run; torch (CUDA) is chosen automatically only when
    a GPU is present and work >= TORCH_MIN_WORK (below that the CPU kernel finishes before a GPU launch pays).
    """
    if requested is not None:
        if requested not in BACKENDS:
            raise ValueError(f"backend: {requested!r} is not allowed; allowed: {', '.join(BACKENDS)}")
        return requested
    if work >= TORCH_MIN_WORK and gpu_present():
        return "torch"
    return "numba" if compiled_pays(work, "inventory.kernel") else "numpy"


def demand_matrix(problem: Problem, replications: int, periods: int | None = None, seed: int = 0) -> np.ndarray:
    """Common random numbers: the (R, T) demand every policy is evaluated on.

    A transposed view of period-major storage (T, R): `demands[:, t]` is contiguous and `demands.T` is the
    kernels' layout without a copy. Replication r's path does not depend on R (see `inventory.sampling`).
    """
    periods = periods or problem.horizon
    if compiled_pays(replications * periods, "inventory.kernel"):
        return demand_paths(problem.demand, replications, periods, seed).T
    with reference_timed():
        return demand_paths(problem.demand, replications, periods, seed, compiled=False).T


@dataclass
class SimResult:
    """Per-(policy, replication) totals; costs are totals over the counted periods."""

    cost: np.ndarray  # (P, R)
    held: np.ndarray
    short: np.ndarray
    orders: np.ndarray
    sold: np.ndarray | None
    stockout_periods: np.ndarray | None
    demand: np.ndarray | None  # (R,) total demand per replication over counted periods, when detailed
    periods: int


def simulate(
    problem: Problem,
    policy: Policy,
    demands: np.ndarray,
    warmup: int = 0,
    detailed: bool = True,
    backend: str | None = None,
    threads: int = 1,
) -> SimResult:
    """Run `policy` (P parameter sets) on every demand path of `demands` and total each run's costs.

    Every run starts from (I_0, 0..0) and follows the rules of `inventory.dynamics` period by period: the
    policy's raw order from the state, capped to q_t <= min(q_max, (I_max - y_t)^+) (y_t the inventory
    position), arrival of x_1 (or of q_t when L = 0), demand D_t served from A_t = I_t + x_1, the rest lost or
    backlogged. Row p of the policy and path r total, over the counted periods t = warmup..T-1,

        C_pr = sum_t K 1{q_t > 0} + h H_t + b B_t,   H_t = (A_t - D_t)^+,   B_t = (D_t - A_t)^+

    (B_t counts lost units under lost sales, the whole waiting backlog under backorders). All P rows see the
    same R paths (common random numbers), so their differences carry no sampling noise from the demand.

    Parameters
    ----------
    problem : Problem
        Costs h, b, K, lead time L, caps q_max and I_max, initial on-hand I_0, lost sales / backlog,
        perishability.
    policy : Policy
        P parameter rows (e.g. `SSPolicy(s=[...], S=[...])` is the whole grid at once).
    demands : ndarray of int, shape (R, T)
        One demand path per row (`demand_matrix` draws them).
    warmup : int
        Leading periods simulated but not counted (long-run averages start from a warmed-up state).
    detailed : bool
        Also return units sold, stock-out periods and demand per path (the fill rate needs them). Without
        them the kernel keeps three totals fewer and runs about a quarter faster.
    backend : {"numba", "numpy", "torch"}, optional
        The compiled kernel, the readable reference, or torch tensors (see the module docstring); None lets
        `choose_backend` pick (numba unless a GPU is present and the run is very large). Totals are identical.
    threads : int
        Threads of the numba kernel over replications.

    Returns
    -------
    SimResult
        `cost`, `held`, `short`, `orders` (P, R) totals over the `periods` counted periods, `sold`,
        `stockout_periods` and `demand` (R,) the demand per path when `detailed`. Averages per period are
        `cost / periods`.

    Raises
    ------
    ValueError
        `backend` not among the allowed values.

    References
    ----------
    Law, A. M. (2015). Simulation Modeling and Analysis, 5th ed., ch. 11 (common random numbers).
    Zheng, Y.-S. & Federgruen, A. (1991), Operations Research 39(4) (the exact (s,S) cost used below).

    Examples
    --------
    Constant demand 3, lost sales, L = 0, h = 1, b = 4, K = 1, four periods, base-stock levels 2 and 5 on the
    same path: S = 2 loses one unit a period (4 x 4 + 4 setups = 20), S = 5 keeps two (4 x 2 + 4 = 12):

    >>> import numpy as np
    >>> from inventory.demand import Demand
    >>> from inventory.policies import BaseStockPolicy, SSPolicy
    >>> from inventory.problem import Problem
    >>> p = Problem(horizon=4, demand=Demand.poisson(3), lost_sales=True, holding_cost=1, penalty_cost=4,
    ...             setup_cost=1, lead_time=0, max_inventory=20, max_order=20)
    >>> sim = simulate(p, BaseStockPolicy(S=[2, 5]), np.array([[3, 3, 3, 3]]))
    >>> [float(c) for c in sim.cost[:, 0]], [int(b) for b in sim.short[:, 0]]
    ([20.0, 12.0], [4, 0])

    Backorders, Poisson(6), h = 1, b = 4, K = 5, L = 0: the (s,S) = (5, 10) policy (reorder when y < 5) is
    Zheng & Federgruen's optimum, long-run average cost 8.0341; 1,000 paths of 500 counted periods agree
    within three standard errors:

    >>> q = p.with_(horizon=50, demand=Demand.poisson(6), lost_sales=False, setup_cost=5, max_inventory=100,
    ...             max_order=100)
    >>> sim = simulate(q, SSPolicy(5, 10), demand_matrix(q, replications=1000, periods=600, seed=0), warmup=100)
    >>> g = sim.cost[0] / sim.periods
    >>> round(float(g.mean()), 2), bool(abs(g.mean() - 8.0341) < 3 * g.std(ddof=1) / np.sqrt(g.size))
    (8.04, True)
    """
    backend = choose_backend(backend, policy.size * int(np.size(demands)))
    if backend == "numpy":
        with reference_timed():
            return simulate_reference(problem, policy, demands, warmup, detailed)
    D = np.ascontiguousarray(np.asarray(demands).T, dtype=np.int32)  # (T, R): free for demand_matrix output; one
    # dtype, so numba compiles one specialisation
    if backend == "torch":
        from inventory.kernel_torch import simulate_torch

        return _result(problem, demands, warmup, detailed, *simulate_torch(problem, policy, D, warmup))
    tot = _simulate_numba(problem, policy, D, warmup, threads, detailed)
    return _result(problem, demands, warmup, detailed, *tot.sums(), demand=tot.demand)


def _simulate_numba(problem: Problem, policy: Policy, D: np.ndarray, warmup: int, threads: int, detailed: bool):
    from inventory import kernel

    form = policy.kernel_form()
    if form is not None:
        return kernel.run_rule(problem, D, *form, warmup=warmup, threads=threads, detail=detailed)
    stepper = kernel.Stepper(problem, D, policy.size, warmup, detail=detailed)
    L = problem.lead_time
    for t in range(D.shape[0]):
        if policy.needs_state:
            raw = policy.order_from_state(stepper.tot.on, stepper.tot.pipeline(t, L), t)
        else:
            raw = policy.order_from_position(stepper.position(), t)
        stepper.advance(t, raw)
    return stepper.tot


def simulate_reference(
    problem: Problem, policy: Policy, demands: np.ndarray, warmup: int = 0, detailed: bool = True
) -> SimResult:
    """The numpy reference: one period at a time, vectorised over (P, R), a ring buffer for the pipeline.

    Slot t mod L of the ring receives the order placed at t and is read again at t + L, so a period costs
    O(1) array operations whatever the lead time. Every rule is a `dynamics` call.
    """
    R, T = demands.shape
    P = policy.size
    L = problem.lead_time
    D = np.ascontiguousarray(np.asarray(demands).T)  # period-major: row t is contiguous
    on_hand = np.full((P, R), problem.initial_inventory, dtype=np.int64)
    ring = np.zeros((max(L, 1), P, R), dtype=np.int64)
    in_transit = np.zeros((P, R), dtype=np.int64)
    sums = [np.zeros((P, R), dtype=np.int64) for _ in range(5)]  # held, short, setups, sold, stock-outs
    for t in range(T):
        position = on_hand + in_transit
        if policy.needs_state:
            raw = np.asarray(policy.order_from_state(on_hand, _ordered_pipeline(ring, t, L), t))
        else:
            raw = np.asarray(policy.order_from_position(position, t))
        allowed = dynamics.order_room(position, problem.max_order, problem.max_inventory)
        q = np.broadcast_to(dynamics.capped(raw.astype(np.float64), allowed), (P, R)).astype(np.int64)
        slot = t % L if L else 0
        head = ring[slot]
        available = on_hand + dynamics.arrival(q, head, L)
        if L:
            in_transit += q - head
            ring[slot] = q
        on_hand, held, short, sold = dynamics.settle(available, D[t], problem.lost_sales, problem.perishable)
        if t >= warmup:
            for acc, x in zip(sums, (held, short, q > 0, sold, short > 0), strict=True):
                acc += x
    return _result(problem, demands, warmup, detailed, *sums)


def _result(problem, demands, warmup, detailed, held, short, setups, sold, outs, demand=None) -> SimResult:
    """`demand`: the per-replication demand totals when the caller has them (the kernel totals them while
    each period's demand row is in cache; summing the (R, T) view afterwards costs ~40% of a kernel run)."""
    if detailed and demand is None:
        demand = np.asarray(demands)[:, warmup:].sum(axis=1)
    return SimResult(
        cost=dynamics.cost_of(setups, held, short, problem),
        held=held,
        short=short,
        orders=setups,
        sold=sold if detailed else None,
        stockout_periods=outs if detailed else None,
        demand=demand if detailed else None,
        periods=demands.shape[1] - warmup,
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
    random_stream: int = RANDOM_STREAM_VERSION  # inventory.sampling stream the figures were drawn from

    def as_row(self) -> dict:
        row = {k: v for k, v in self.__dict__.items() if k != "params"}
        row["params"] = ",".join(f"{k}={v}" for k, v in self.params.items())
        return row


def _fill_rate(sold: np.ndarray, demand: np.ndarray) -> float:
    return float(sold.sum() / max(float(demand.sum()), 1e-12))


def summarise(problem: Problem, sim: SimResult, per_period: bool = False) -> list[dict]:
    """Statistics per policy row of a simulation (totals, or per period when `per_period`)."""
    scale = 1.0 / sim.periods if per_period else 1.0
    cost = sim.cost * scale
    R = cost.shape[1]
    mean = cost.mean(axis=1)
    std = cost.std(axis=1, ddof=1) if R > 1 else np.zeros_like(mean)
    out = []
    for i in range(cost.shape[0]):
        out.append(
            {
                "mean_cost": float(mean[i]),
                "std_cost": float(std[i]),
                "stderr": float(std[i] / math.sqrt(R)),
                "objective": float(composite_objective(mean[i], std[i], problem.risk_tolerance)),
                "fill_rate": _fill_rate(sim.sold[i], sim.demand) if sim.sold is not None else float("nan"),
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
    backend: str | None = None,
    threads: int = 1,
) -> list[Evaluation]:
    """Score policies on the same random numbers; `objective` finite (total over horizon) or average.

    `backend` / `threads` as in `simulate`; the figures do not depend on them.
    """
    if objective not in ("finite", "average"):
        raise ValueError(f"objective: {objective!r} is not allowed; allowed: finite, average")
    if objective == "finite":
        warmup, periods = 0, problem.horizon
    else:
        warmup, periods = average_run_length(problem)
    demands = demand_matrix(problem, replications, warmup + periods, seed)
    results = []
    for policy in policies:
        sim = simulate(problem, policy, demands, warmup=warmup, backend=backend, threads=threads)
        for i, stats in enumerate(summarise(problem, sim, per_period=objective == "average")):
            params = {k: _scalar(v, i) for k, v in policy.params().items()}
            results.append(Evaluation(name=policy.label(i), params=params, **stats))
    return results


def evaluations_frame(evals: list[Evaluation]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame([e.as_row() for e in evals])


def _scalar(v, i):
    a = np.atleast_1d(v)
    if a.dtype.kind not in "iuf":
        return v
    x = a[i] if a.size > 1 else a[0]
    return int(x) if float(x).is_integer() else float(x)
