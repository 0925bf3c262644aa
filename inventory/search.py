"""(s,S) and base-stock search by Monte Carlo.

The full grid 0 <= s < S <= max_inventory has ~5,000 points at capacity 100; simulating all of it at a
useful number of replications takes tens of seconds. The search instead screens cheaply and spends
replications where they matter:
  1. a coarse lattice over the whole grid, on a small common-random-number sample;
  2. successively finer lattices around the best few points (step 3, then 1), widening a window again if
     its best point lands on the window's edge;
  3. the leaders re-evaluated on fresh, larger replications: the reported cost is that unbiased figure,
     not the (optimistically biased) screening minimum.
Candidates are ranked by expected cost (criterion="mean") or by L(pi) (criterion="objective").
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from inventory.montecarlo import average_run_length, composite_objective, demand_matrix, simulate
from inventory.policies import BaseStockPolicy, SSPolicy
from inventory.problem import Problem


@dataclass
class SSSearchResult:
    s: int
    S: int
    mean_cost: float
    std_cost: float
    stderr: float
    objective_value: float  # L(pi) on the fresh replications
    seconds: float
    evaluated: int  # distinct (s,S) pairs simulated during screening
    objective: str = "finite"
    leaders: list[dict] = field(default_factory=list)

    @property
    def policy(self) -> SSPolicy:
        return SSPolicy(s=self.s, S=self.S)


@dataclass
class BaseStockResult:
    S: int
    mean_cost: float
    std_cost: float
    stderr: float
    objective_value: float
    seconds: float

    @property
    def policy(self) -> BaseStockPolicy:
        return BaseStockPolicy(S=self.S)


def _run_length(problem: Problem, objective: str) -> tuple[int, int]:
    if objective not in ("finite", "average"):
        raise ValueError(f"objective: {objective!r} is not allowed; allowed: finite, average")
    return (0, problem.horizon) if objective == "finite" else average_run_length(problem)


class _Scorer:
    """Simulates candidate pairs on one demand sample, caching results so no pair is simulated twice."""

    def __init__(self, problem: Problem, demands: np.ndarray, warmup: int, criterion: str):
        self.problem, self.demands, self.warmup, self.criterion = problem, demands, warmup, criterion
        self.scores: dict[tuple[int, int], float] = {}
        self.periods = demands.shape[1] - warmup

    def score(self, pairs: list[tuple[int, int]]) -> None:
        todo = sorted({p for p in pairs if p not in self.scores})
        if not todo:
            return
        arr = np.array(todo)
        sim = simulate(self.problem, SSPolicy(s=arr[:, 0], S=arr[:, 1]), self.demands, self.warmup, detailed=False)
        cost = sim.cost / (self.periods if self.warmup else 1)
        mean = cost.mean(axis=1)
        value = mean
        if self.criterion == "objective":
            value = composite_objective(mean, cost.std(axis=1, ddof=1), self.problem.risk_tolerance)
        for pair, v in zip(todo, value, strict=True):
            self.scores[pair] = float(v)

    def best(self, k: int) -> list[tuple[int, int]]:
        return sorted(self.scores, key=self.scores.get)[:k]


def _lattice(s_values, S_values, Imax: int) -> list[tuple[int, int]]:
    return [(s, S) for s in s_values for S in S_values if 0 <= s < S <= Imax]


def _window(center: tuple[int, int], radius: int, step: int, Imax: int) -> list[tuple[int, int]]:
    s0, S0 = center
    offsets = range(-radius, radius + 1, step)
    return _lattice([s0 + d for d in offsets], [S0 + d for d in offsets], Imax)


def search_ss(
    problem: Problem,
    objective: str = "finite",
    criterion: str = "mean",
    seed: int = 0,
    screen_reps: int = 64,
    final_reps: int = 2000,
    leaders: int = 10,
    coarse_points: int = 13,
) -> SSSearchResult:
    """Best (s,S) with 0 <= s < S <= max_inventory under the problem's caps."""
    if criterion not in ("mean", "objective"):
        raise ValueError(f"criterion: {criterion!r} is not allowed; allowed: mean, objective")
    t0 = time.perf_counter()
    warmup, periods = _run_length(problem, objective)
    Imax = problem.max_inventory
    scorer = _Scorer(problem, demand_matrix(problem, screen_reps, warmup + periods, seed), warmup, criterion)

    step = max(1, math.ceil(Imax / (coarse_points - 1)))
    grid = sorted(set(range(0, Imax + 1, step)) | {Imax})
    scorer.score(_lattice(grid, grid, Imax))
    while step > 1:
        finer = max(1, step // 3)
        for center in scorer.best(3):
            _refine(scorer, center, step, finer, Imax)
        step = finer

    top = scorer.best(leaders)
    fresh = demand_matrix(problem, final_reps, warmup + periods, seed + 7_919)
    arr = np.array(top)
    sim = simulate(problem, SSPolicy(s=arr[:, 0], S=arr[:, 1]), fresh, warmup, detailed=False)
    cost = sim.cost / (periods if warmup else 1)
    mean, std = cost.mean(axis=1), cost.std(axis=1, ddof=1)
    value = mean if criterion == "mean" else composite_objective(mean, std, problem.risk_tolerance)
    i = int(np.argmin(value))
    rows = [
        {"s": int(s), "S": int(S), "mean_cost": float(m), "std_cost": float(sd)}
        for (s, S), m, sd in zip(top, mean, std, strict=True)
    ]
    return SSSearchResult(
        s=int(arr[i, 0]),
        S=int(arr[i, 1]),
        mean_cost=float(mean[i]),
        std_cost=float(std[i]),
        stderr=float(std[i] / math.sqrt(final_reps)),
        objective_value=float(composite_objective(mean[i], std[i], problem.risk_tolerance)),
        seconds=time.perf_counter() - t0,
        evaluated=len(scorer.scores),
        objective=objective,
        leaders=rows,
    )


def _refine(scorer: _Scorer, center: tuple[int, int], radius: int, step: int, Imax: int) -> None:
    """Score a finer window around `center`; follow the best point while it sits on the window's edge."""
    for _ in range(4):
        scorer.score(_window(center, radius, step, Imax))
        window = set(_window(center, radius, step, Imax))
        best = min(window, key=scorer.scores.get)
        on_edge = abs(best[0] - center[0]) >= radius or abs(best[1] - center[1]) >= radius
        if not on_edge or best == center:
            return
        center = best


def best_base_stock(
    problem: Problem,
    objective: str = "finite",
    criterion: str = "mean",
    seed: int = 0,
    screen_reps: int = 256,
    final_reps: int = 2000,
) -> BaseStockResult:
    """Best order-up-to level S in 0..max_inventory (all levels screened, the leaders re-evaluated)."""
    t0 = time.perf_counter()
    warmup, periods = _run_length(problem, objective)
    levels = np.arange(problem.max_inventory + 1)
    scale = periods if warmup else 1

    def scores(levels_, reps, s):
        d = demand_matrix(problem, reps, warmup + periods, s)
        cost = simulate(problem, BaseStockPolicy(S=levels_), d, warmup, detailed=False).cost / scale
        mean, std = cost.mean(axis=1), cost.std(axis=1, ddof=1)
        value = mean if criterion == "mean" else composite_objective(mean, std, problem.risk_tolerance)
        return value, mean, std

    value, _, _ = scores(levels, screen_reps, seed)
    top = levels[np.argsort(value)[:5]]
    value, mean, std = scores(top, final_reps, seed + 7_919)
    i = int(np.argmin(value))
    return BaseStockResult(
        S=int(top[i]),
        mean_cost=float(mean[i]),
        std_cost=float(std[i]),
        stderr=float(std[i] / math.sqrt(final_reps)),
        objective_value=float(composite_objective(mean[i], std[i], problem.risk_tolerance)),
        seconds=time.perf_counter() - t0,
    )
