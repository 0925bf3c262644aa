"""Generated feasible model families, from tens to thousands of rows.

Names follow ``<family>_<index>_<index>`` conventions (``cap_r3``, ``bal_p2_t7``) because that is how
modellers write them and because the diagnosis heuristics compare a row with its *siblings* (same name
pattern). Demands carry one decimal so that integrality sabotage (making flow variables integer) can
break a model whose LP relaxation stays feasible. Every generator is checked feasible by the instance
builder, not assumed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from ordebug.model import INF, LinearModel


class _Builder:
    """Collects named columns and rows, then emits a LinearModel."""

    def __init__(self, name: str, maximize: bool = False):
        self.name = name
        self.maximize = maximize
        self.cols: list[str] = []
        self.lb: list[float] = []
        self.ub: list[float] = []
        self.cost: list[float] = []
        self.integer: list[bool] = []
        self.rows: list[str] = []
        self.rl: list[float] = []
        self.ru: list[float] = []
        self.entries: list[tuple[int, int, float]] = []

    def col(self, name: str, cost: float = 0.0, lb: float = 0.0, ub: float = INF, integer: bool = False) -> int:
        self.cols.append(name)
        self.lb.append(lb)
        self.ub.append(ub)
        self.cost.append(cost)
        self.integer.append(integer)
        return len(self.cols) - 1

    def row(self, name: str, terms: list[tuple[int, float]], lower: float = -INF, upper: float = INF) -> int:
        i = len(self.rows)
        self.rows.append(name)
        self.rl.append(lower)
        self.ru.append(upper)
        self.entries += [(i, j, float(v)) for j, v in terms if v != 0]
        return i

    def build(self) -> LinearModel:
        r, c, v = zip(*self.entries, strict=True) if self.entries else ((), (), ())
        A = sp.csr_matrix((v, (r, c)), shape=(len(self.rows), len(self.cols)))
        return LinearModel(name=self.name, row_names=self.rows, col_names=self.cols, A=A,
                           row_lower=np.array(self.rl), row_upper=np.array(self.ru),
                           col_lower=np.array(self.lb), col_upper=np.array(self.ub), cost=np.array(self.cost),
                           integer=np.array(self.integer), maximize=self.maximize)


def _d(rng: np.random.Generator, lo: float, hi: float, size=None) -> np.ndarray:
    """Data with one decimal (fractional on purpose, see module docstring)."""
    return np.round(rng.uniform(lo, hi, size=size), 1)


def production(n_products: int, n_resources: int, seed: int) -> LinearModel:
    """Product-mix LP: maximise profit under resource capacities and minimum contract volumes."""
    rng = np.random.default_rng(seed)
    b = _Builder(f"production_{n_products}x{n_resources}_s{seed}", maximize=True)
    use = _d(rng, 0.5, 4.0, (n_resources, n_products)) * (rng.random((n_resources, n_products)) < 0.6)
    x = [b.col(f"make_p{p}", cost=float(_d(rng, 5, 30)), ub=float(_d(rng, 40, 120))) for p in range(n_products)]
    contract = _d(rng, 1, 8, n_products)
    for r in range(n_resources):
        need = float(use[r] @ contract)
        b.row(f"cap_r{r}", [(x[p], use[r, p]) for p in range(n_products)], upper=round(need * rng.uniform(2, 4), 1))
    for p in range(n_products):
        b.row(f"contract_p{p}", [(x[p], 1.0)], lower=float(contract[p]))
    return b.build()


def transportation(n_sources: int, n_sinks: int, seed: int) -> LinearModel:
    """Classic transportation LP: ship from capacitated sources to sinks with fractional demand."""
    rng = np.random.default_rng(seed)
    b = _Builder(f"transport_{n_sources}x{n_sinks}_s{seed}")
    demand = _d(rng, 10, 60, n_sinks)
    supply = demand.sum() * rng.dirichlet(np.ones(n_sources)) * 1.4 + 5
    lane = float(np.round(demand.max() * 0.8, 1))
    x = {(i, j): b.col(f"ship_s{i}_d{j}", cost=float(_d(rng, 1, 20)), ub=lane)
         for i in range(n_sources) for j in range(n_sinks)}
    for i in range(n_sources):
        b.row(f"supply_s{i}", [(x[i, j], 1.0) for j in range(n_sinks)], upper=float(np.round(supply[i], 1)))
    for j in range(n_sinks):
        b.row(f"demand_d{j}", [(x[i, j], 1.0) for i in range(n_sources)], lower=float(demand[j]),
              upper=float(demand[j]))
    return b.build()


def blending(n_ingredients: int, n_qualities: int, seed: int) -> LinearModel:
    """Blend a batch of fixed size from ingredients within quality windows at least cost."""
    rng = np.random.default_rng(seed)
    b = _Builder(f"blending_{n_ingredients}x{n_qualities}_s{seed}")
    batch = float(_d(rng, 80, 200))
    x = [b.col(f"use_i{i}", cost=float(_d(rng, 1, 10)), ub=round(batch * rng.uniform(0.3, 0.8), 1))
         for i in range(n_ingredients)]
    b.row("batch_total", [(j, 1.0) for j in x], lower=batch, upper=batch)
    content = _d(rng, 0.0, 1.0, (n_qualities, n_ingredients))
    mix = rng.dirichlet(np.ones(n_ingredients))
    for q in range(n_qualities):
        avg = float(content[q] @ mix)
        lo, hi = round(max(avg - 0.15, 0.0), 2), round(avg + 0.15, 2)
        b.row(f"qmin_q{q}", [(x[i], content[q, i] - lo) for i in range(n_ingredients)], lower=0.0)
        b.row(f"qmax_q{q}", [(x[i], content[q, i] - hi) for i in range(n_ingredients)], upper=0.0)
    return b.build()


def diet(n_foods: int, n_nutrients: int, seed: int) -> LinearModel:
    """Stigler-style diet LP: meet nutrient minima and maxima at least cost."""
    rng = np.random.default_rng(seed)
    b = _Builder(f"diet_{n_foods}x{n_nutrients}_s{seed}")
    ref = rng.uniform(0.5, 2.0, n_foods)
    # Serving limits close to the reference diet keep the nutrient maxima out of reach from above.
    x = [b.col(f"serve_f{f}", cost=float(_d(rng, 0.5, 5)), ub=float(np.round(ref[f] * rng.uniform(1.2, 1.6), 1)))
         for f in range(n_foods)]
    content = _d(rng, 0.0, 10.0, (n_nutrients, n_foods)) * (rng.random((n_nutrients, n_foods)) < 0.7)
    for k in range(n_nutrients):
        level = float(content[k] @ ref)
        b.row(f"nutmin_n{k}", [(x[f], content[k, f]) for f in range(n_foods)], lower=round(0.6 * level, 1))
        b.row(f"nutmax_n{k}", [(x[f], content[k, f]) for f in range(n_foods)], upper=round(1.8 * level + 1, 1))
    return b.build()


def assignment(n_agents: int, n_tasks: int, seed: int) -> LinearModel:
    """Generalised assignment MIP: every task to one agent, agent workload capacities."""
    rng = np.random.default_rng(seed)
    b = _Builder(f"assign_{n_agents}x{n_tasks}_s{seed}")
    w = _d(rng, 1, 10, (n_agents, n_tasks))
    x = {(a, t): b.col(f"x_a{a}_t{t}", cost=float(_d(rng, 1, 30)), ub=1.0, integer=True)
         for a in range(n_agents) for t in range(n_tasks)}
    for t in range(n_tasks):
        b.row(f"assign_t{t}", [(x[a, t], 1.0) for a in range(n_agents)], lower=1.0, upper=1.0)
    cap = np.round(w.sum(axis=1) / n_agents * 1.8 + 10, 1)
    for a in range(n_agents):
        b.row(f"load_a{a}", [(x[a, t], w[a, t]) for t in range(n_tasks)], upper=float(cap[a]))
    return b.build()


def knapsack(n_items: int, n_dims: int, seed: int) -> LinearModel:
    """Multi-dimensional knapsack MIP with a minimum number of selected items."""
    rng = np.random.default_rng(seed)
    b = _Builder(f"knapsack_{n_items}x{n_dims}_s{seed}", maximize=True)
    x = [b.col(f"pick_i{i}", cost=float(_d(rng, 5, 50)), ub=1.0, integer=True) for i in range(n_items)]
    w = _d(rng, 1, 20, (n_dims, n_items))
    for k in range(n_dims):
        b.row(f"knap_k{k}", [(x[i], w[k, i]) for i in range(n_items)], upper=round(float(w[k].sum()) * 0.5, 1))
    b.row("min_items", [(j, 1.0) for j in x], lower=float(max(1, n_items // 5)))
    return b.build()


def inventory(n_products: int, n_periods: int, seed: int) -> LinearModel:
    """Multi-period production/inventory plan with limited backorders (negative inventory allowed)."""
    rng = np.random.default_rng(seed)
    b = _Builder(f"inventory_{n_products}x{n_periods}_s{seed}")
    demand = _d(rng, 5, 30, (n_products, n_periods))
    use = _d(rng, 0.5, 2.0, n_products)
    cap = np.round((use @ demand) * rng.uniform(1.15, 1.5, n_periods), 1)
    # Ramp-up: no production in the first period, so the plan *needs* backorders (what a negative
    # inventory lower bound allows; the drop_bound sabotage removes it).
    cap[0] = 0.0
    cap[1:] += np.round(1.2 * float(use @ demand[:, 0]) / max(1, n_periods - 1), 1)
    x = {(p, t): b.col(f"make_p{p}_t{t}", cost=float(_d(rng, 1, 5))) for p in range(n_products) for t in range(n_periods)}
    # Inventory carries no cost so that its negative range (backorders) is not a source of profit.
    inv = {(p, t): b.col(f"inv_p{p}_t{t}", cost=0.0, lb=-float(np.round(demand[p].sum(), 1)),
                         ub=float(_d(rng, 60, 150))) for p in range(n_products) for t in range(n_periods)}
    for p in range(n_products):
        for t in range(n_periods):
            terms = [(x[p, t], 1.0), (inv[p, t], -1.0)]
            if t > 0:
                terms.append((inv[p, t - 1], 1.0))
            b.row(f"bal_p{p}_t{t}", terms, lower=float(demand[p, t]), upper=float(demand[p, t]))
        b.row(f"end_p{p}", [(inv[p, n_periods - 1], 1.0)], lower=0.0)
    for t in range(n_periods):
        b.row(f"cap_t{t}", [(x[p, t], float(use[p])) for p in range(n_products)], upper=float(cap[t]))
    return b.build()


FAMILIES: dict[str, Callable[[int, int, int], LinearModel]] = {
    "production": production,
    "transportation": transportation,
    "blending": blending,
    "diet": diet,
    "assignment": assignment,
    "knapsack": knapsack,
    "inventory": inventory,
}

# (a, b) shape arguments per family and size tier; rows grow from ~10 to ~2000.
SIZES: dict[str, dict[str, tuple[int, int]]] = {
    "production": {"small": (8, 5), "medium": (60, 40), "large": (600, 400)},
    "transportation": {"small": (3, 6), "medium": (20, 40), "large": (40, 400)},
    "blending": {"small": (6, 3), "medium": (40, 30), "large": (300, 300)},
    "diet": {"small": (8, 4), "medium": (60, 40), "large": (400, 400)},
    "assignment": {"small": (3, 6), "medium": (8, 40), "large": (20, 200)},
    "knapsack": {"small": (12, 2), "medium": (40, 6), "large": (80, 20)},
    "inventory": {"small": (2, 6), "medium": (8, 24), "large": (20, 104)},
}


def generate(family: str, size: str = "small", seed: int = 0) -> LinearModel:
    """Build one model of `family` at size tier `size` ("small" | "medium" | "large")."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {sorted(FAMILIES)}, got {family!r}")
    if size not in SIZES[family]:
        raise ValueError(f"size must be one of {sorted(SIZES[family])}, got {size!r}")
    a, b = SIZES[family][size]
    return FAMILIES[family](a, b, seed)
