"""The heuristics a DQN has to beat where the DP cannot reach (long lead times, fixed order costs, variants),
and the common-random-numbers comparison that decides whether it does.

Capped base-stock (Xin 2021, "Understanding the performance of capped base-stock policies in lost-sales
inventory models"): order min((S - y)^+, r). Under lost sales with long lead times it is close to optimal
where plain base-stock over-orders; it is not in `inventory.policies`, so it is written here as a `Policy`
(vectorised over parameter pairs, evaluated by the same Monte Carlo engine).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from inventory.montecarlo import demand_matrix, simulate
from inventory.policies import BaseStockPolicy, Policy, SSPolicy, StatePolicy, _col, base_stock_rule
from inventory.problem import Problem
from inventory.search import best_base_stock, grid_limit, search_ss


@dataclass(frozen=True)
class CappedBaseStockPolicy(Policy):
    """Order min((S - y)^+, r), y the inventory position; S and r may be arrays (P parameter pairs)."""

    S: object = 0
    r: object = 1
    name: ClassVar[str] = "capped_base_stock"

    @property
    def size(self) -> int:
        return int(np.broadcast(np.atleast_1d(self.S), np.atleast_1d(self.r)).size)

    def order_from_position(self, position, t):
        S, r = np.broadcast_arrays(np.atleast_1d(self.S), np.atleast_1d(self.r))
        return np.minimum(base_stock_rule(position, _col(S)), _col(r)).astype(np.int64)  # the rule, capped at r

    def params(self):
        return {"S": self.S, "r": self.r}

    def label(self, i: int = 0) -> str:
        S, r = np.broadcast_arrays(np.atleast_1d(self.S), np.atleast_1d(self.r))
        return f"capped base-stock (S={int(S[i])}, r={int(r[i])})"


def best_capped_base_stock(problem: Problem, seed: int = 0, screen_reps: int = 200, final_reps: int = 2000,
                           leaders: int = 8) -> tuple[int, int, float]:
    """(S, r, mean cost): every pair S in 0..grid limit, r in 1..max_order screened on common random numbers,
    the leaders re-scored on fresh ones."""
    hi = grid_limit(problem)
    S, r = np.meshgrid(np.arange(0, hi + 1), np.arange(1, problem.order_cap + 1), indexing="ij")
    S, r = S.reshape(-1), r.reshape(-1)
    d = demand_matrix(problem, screen_reps, seed=seed)
    cost = simulate(problem, CappedBaseStockPolicy(S=S, r=r), d, detailed=False).cost.mean(axis=1)
    top = np.argsort(cost)[:leaders]
    d2 = demand_matrix(problem, final_reps, seed=seed + 1)
    cost2 = simulate(problem, CappedBaseStockPolicy(S=S[top], r=r[top]), d2, detailed=False).cost.mean(axis=1)
    i = int(np.argmin(cost2))
    return int(S[top][i]), int(r[top][i]), float(cost2[i])


@dataclass
class HeuristicComparison:
    """DQN vs the best heuristic on the same demand paths (paired), per-policy mean costs."""

    costs: dict[str, float]  # mean total cost per policy label
    best_heuristic: str
    gap_pct: float  # (DQN - best heuristic) / best heuristic * 100 (negative: the DQN is cheaper)
    gap_se_pct: float  # standard error of the paired difference, same units
    dqn_wins: bool  # the DQN is cheaper by more than two standard errors
    replications: int

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def heuristics(problem: Problem, seed: int = 0) -> dict[str, Policy]:
    """The best (s,S), base-stock and capped base-stock found on search random numbers (seed)."""
    ss = search_ss(problem, seed=seed)
    bs = best_base_stock(problem, seed=seed)
    S, r, _ = best_capped_base_stock(problem, seed=seed)
    return {f"(s={ss.s}, S={ss.S})": SSPolicy(s=ss.s, S=ss.S), f"base-stock (S={bs.S})": BaseStockPolicy(S=bs.S),
            f"capped base-stock (S={S}, r={r})": CappedBaseStockPolicy(S=S, r=r)}


def compare_with_heuristics(problem: Problem, dqn: StatePolicy, candidates: dict[str, Policy] | None = None,
                            replications: int = 4000, seed: int = 0) -> HeuristicComparison:
    """Score the DQN and the heuristics on fresh common random numbers (seed + 999, never the search's)."""
    candidates = candidates if candidates is not None else heuristics(problem, seed)
    d = demand_matrix(problem, replications, seed=seed + 999)
    dqn_cost = simulate(problem, dqn, d, detailed=False).cost[0]
    per = {name: simulate(problem, pol, d, detailed=False).cost[0] for name, pol in candidates.items()}
    best = min(per, key=lambda k: per[k].mean())
    diff = dqn_cost - per[best]
    ref = per[best].mean()
    gap = float(diff.mean() / ref * 100)
    se = float(diff.std(ddof=1) / math.sqrt(diff.size) / ref * 100)
    costs = {"DQN": float(dqn_cost.mean()), **{k: float(v.mean()) for k, v in per.items()}}
    return HeuristicComparison(costs, best, gap, se, gap < -2 * se, replications)
