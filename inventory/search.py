"""(s,S) and base-stock search: exact where exact evaluation is tractable, Monte Carlo otherwise.

The grid. Candidate levels are bounded by what demand can use, not by the capacity: the DP's demand-quantile
bound on the inventory position ((L+1)-period demand quantile plus one EOQ-cycle order when K > 0, the same
`dp.default_bounds`), under max_inventory. A capacity far above demand therefore leaves the grid, and the
answer, unchanged. If the best point presses on the bound, the bound is doubled (up to the capacity) and the
search continues, so the bound never decides the answer.

Exact path (backorders, not perishable). The cost charged in period t+L depends only on the inventory position
y after ordering in period t, so an (s,S) policy is a Markov chain on the position and its cost is computed
exactly (no simulation noise):
  - long-run average: the renewal formula of Zheng & Federgruen (1991),
    c(s,S) = [K + sum_{j=0}^{S-s} m(j) G(S-j)] / sum_{j=0}^{S-s} m(j), evaluated for every pair of the
    bounded grid at once (O(grid) work);
  - finite horizon: backward recursion vectorised over policies, over the whole bounded grid when that is
    affordable, otherwise over the stationary leaders plus a coarse lattice refined around the best points
    (exact scores, so refinement is not misled by noise).
With criterion="objective" (L(pi) includes the cost's standard deviation, which the exact path does not give),
the exact leaders and the Monte Carlo search's leaders are re-scored together on fresh replications.

Monte Carlo path (lost sales, perishable, or exact evaluation too large): screen cheaply and spend
replications where they matter:
  1. a coarse lattice over the bounded grid, on a small common-random-number sample;
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

from inventory import dp, dynamics
from inventory.montecarlo import average_run_length, composite_objective, demand_matrix, simulate
from inventory.policies import BaseStockPolicy, SSPolicy
from inventory.problem import Problem

WIDENINGS = 6  # bound doublings allowed when the best point presses on the demand bound
EXHAUSTIVE_FLOPS = 5e8  # exact recursion: score the whole bounded grid below this much work (~0.5 s)
GUIDED_FLOPS = 1e10  # exact recursion: guided exact search below this much work, Monte Carlo above
GUIDED_PAIRS = 400  # pairs a guided exact search typically scores (for the work estimate)
AVERAGE_MAX_GRID = 4000  # average-cost exact: largest grid limit (memory ~ limit^2 floats)


@dataclass
class SSSearchResult:
    s: int
    S: int
    mean_cost: float  # the exact cost on the exact path, the fresh-replication mean otherwise
    std_cost: float  # always from fresh Monte Carlo replications (nan if none were run)
    stderr: float  # of mean_cost: 0 when it is exact
    objective_value: float  # L(pi): mean_cost + exp(-lambda) * std_cost
    seconds: float
    evaluated: int  # distinct (s,S) pairs scored
    objective: str = "finite"
    leaders: list[dict] = field(default_factory=list)
    method: str = "monte_carlo"  # "exact" | "monte_carlo"
    exact_cost: float | None = None  # exact expected cost of (s,S) when the exact path ran
    grid_limit: int = 0  # largest S the search allowed (demand bound, widened if pressed, <= max_inventory)

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


def grid_limit(problem: Problem) -> int:
    """Largest order-up-to level worth screening before any widening: the DP's demand-quantile bound on the
    inventory position, under max_inventory (at least 1 so the grid is never empty)."""
    return max(1, min(problem.max_inventory, dp.default_bounds(problem).hi))


def _presses(level: int, hi: int, problem: Problem) -> bool:
    """Does a best level sit on a bound that is tighter than the capacity?"""
    return hi < problem.max_inventory and level >= hi - 1


def _widen(hi: int, problem: Problem) -> int:
    return min(problem.max_inventory, 2 * hi)


# ---------------------------------------------------------------------------------------------------------------
# Monte Carlo screening
# ---------------------------------------------------------------------------------------------------------------


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


def _lattice(s_values, S_values, hi: int) -> list[tuple[int, int]]:
    return [(s, S) for s in s_values for S in S_values if 0 <= s < S <= hi]


def _window(center: tuple[int, int], radius: int, step: int, hi: int) -> list[tuple[int, int]]:
    s0, S0 = center
    offsets = range(-radius, radius + 1, step)
    return _lattice([s0 + d for d in offsets], [S0 + d for d in offsets], hi)


def _coarse(hi: int, points: int) -> tuple[list[tuple[int, int]], int]:
    step = max(1, math.ceil(hi / (points - 1)))
    grid = sorted(set(range(0, hi + 1, step)) | {hi})
    return _lattice(grid, grid, hi), step


def _coarse_to_fine(score, best, hi: int, coarse_points: int) -> None:
    """Coarse lattice over 0..hi, then finer windows (step / 3 each round) around the 3 best points."""
    pairs, step = _coarse(hi, coarse_points)
    score(pairs)
    while step > 1:
        finer = max(1, step // 3)
        for center in best(3):
            _refine(score, center, step, finer, hi)
        step = finer


def _refine(score, center: tuple[int, int], radius: int, step: int, hi: int) -> None:
    """Score a finer window around `center`; follow the best point while it sits on the window's edge."""
    for _ in range(4):
        window = _window(center, radius, step, hi)
        scores = score(window)
        best = min(window, key=scores.get)
        on_edge = abs(best[0] - center[0]) >= radius or abs(best[1] - center[1]) >= radius
        if not on_edge or best == center:
            return
        center = best


def _mc_leaders(problem: Problem, objective: str, criterion: str, seed: int, screen_reps: int, leaders: int,
                coarse_points: int) -> tuple[list[tuple[int, int]], int, int]:
    """Monte Carlo screening over the bounded grid; returns (leaders, pairs screened, grid limit)."""
    warmup, periods = _run_length(problem, objective)
    scorer = _Scorer(problem, demand_matrix(problem, screen_reps, warmup + periods, seed), warmup, criterion)

    def score(pairs):
        scorer.score(pairs)
        return scorer.scores

    hi = grid_limit(problem)
    for _ in range(WIDENINGS + 1):
        _coarse_to_fine(score, scorer.best, hi, coarse_points)
        if not _presses(scorer.best(1)[0][1], hi, problem):
            break
        hi = _widen(hi, problem)
    return scorer.best(leaders), len(scorer.scores), hi


def _fresh(problem: Problem, pairs: list[tuple[int, int]], objective: str, seed: int, reps: int):
    """(mean, std) of each pair's cost on fresh replications (common to all pairs)."""
    warmup, periods = _run_length(problem, objective)
    arr = np.array(pairs)
    fresh = demand_matrix(problem, reps, warmup + periods, seed + 7_919)
    sim = simulate(problem, SSPolicy(s=arr[:, 0], S=arr[:, 1]), fresh, warmup, detailed=False)
    cost = sim.cost / (periods if warmup else 1)
    return cost.mean(axis=1), cost.std(axis=1, ddof=1)


# ---------------------------------------------------------------------------------------------------------------
# Exact evaluation on the inventory position (backorders, not perishable)
# ---------------------------------------------------------------------------------------------------------------


class _Exact:
    """Exact costs of (s,S) pairs with S <= hi: the position chain of `dp` on levels lo..hi."""

    def __init__(self, problem: Problem, hi: int, objective: str):
        self.problem, self.hi, self.objective = problem, hi, objective
        lo, top = dp.default_bounds(problem).lo, max(hi, problem.initial_inventory)
        self.b = dp.Bounds(lo, top, min(problem.max_order, top - lo))  # larger orders are cut by hi - x anyway
        self.G, self.M = dp._position_model(problem, self.b)  # expected period cost by position, one-period moves
        self.scores: dict[tuple[int, int], float] = {}
        self.capped: dict[tuple[int, int], float] = {}  # exact average costs where max_order can cut an order

        # E V(y - D) as a one-sided convolution along positions (scipy.ndimage, single-threaded C: faster than
        # V @ M.T at these sizes and not slowed by BLAS thread oversubscription). w[d] = P(D = d), the last
        # entry the tail; the "nearest" edge repeats V(lo) on the left, exactly where M lumps the backlog
        # beyond the truncation. Weights below 1e-12 are dropped (they move V by < 1e-10 relative); the floor's
        # lump is often a rounding residual (1 - sum of the pmf, 1e-16 .. 1e-13) that would stretch the kernel over every
        # position (uniform(14, 52), L = 4: 727 weights instead of 39, a 60 s search instead of 3 s).
        w = self.M[-1, ::-1]
        keep = np.nonzero(w > 1e-12)[0]
        w = w[: keep[-1] + 1] if keep.size else w[:1]
        self.weights = np.append(w, 0.0) if w.size % 2 == 0 else w  # odd length: the origin below is valid

    def _expect(self, V: np.ndarray) -> np.ndarray:
        """H[p, y] = E V[p, y - D] (y - D floored at lo): the product V @ M.T, as a convolution."""
        from scipy.ndimage import convolve1d

        return convolve1d(V, self.weights, axis=1, mode="nearest", origin=-(self.weights.size // 2))

    @property
    def states(self) -> int:
        return self.b.A

    def score(self, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], float]:
        todo = sorted({p for p in pairs if p not in self.scores})
        for i in range(0, len(todo), 2048):
            chunk = np.array(todo[i:i + 2048])
            if self.objective == "finite":
                values = self._finite(chunk[:, 0], chunk[:, 1])
            else:
                values = self.average_rvi(chunk[:, 0], chunk[:, 1])
            for pair, v in zip(todo[i:i + 2048], values, strict=True):
                self.scores[pair] = float(v)
        return self.scores

    def best(self, k: int) -> list[tuple[int, int]]:
        return sorted(self.scores, key=self.scores.get)[:k]

    def _moves(self, s: np.ndarray, S: np.ndarray):
        """(setup cost by position, index of the position after ordering) for each policy, caps applied."""
        p, b = self.problem, self.b
        x = np.arange(b.lo, b.hi + 1)[None, :]
        q = (x < s[:, None]) * (S[:, None] - x)
        q = dynamics.clamp(q, dynamics.room(x, p.max_order, b.hi))  # the caps, from the one rule (b.hi <= capacity)
        return dynamics.cost_of(q > 0, 0, 0, p), x + q - b.lo  # the setup term of the one cost formula

    def average_rvi(self, s: np.ndarray, S: np.ndarray, tol: float = 1e-9, max_iter: int = 50_000) -> np.ndarray:
        """Long-run average cost of each policy by relative value iteration (Odoni bounds), caps applied:
        the recursion of `dp.evaluate_policy(objective="average")`, vectorised over policies."""
        order, y = self._moves(s, S)
        V = np.zeros((s.size, self.b.A))
        g = np.full(s.size, np.nan)
        live = np.arange(s.size)  # policies not yet converged
        tau, widths = 1.0, []  # damped once the widest live bound stalls (a periodic chain: dp.rvi_damping)
        for _ in range(max_iter):
            rows = np.arange(live.size)[:, None]
            V_new = order[live] + (self.G + self._expect(V))[rows, y[live]]
            diff = V_new - V
            lo, hi = diff.min(axis=1), diff.max(axis=1)
            done = hi - lo <= tol * np.maximum(1.0, np.abs(hi))
            g[live[done]] = (lo[done] + hi[done]) / 2
            widths.append(float((hi - lo).max()))
            tau = dp.rvi_damping(tau, widths)
            V_new = V_new if tau == 1.0 else (1.0 - tau) * V + tau * V_new
            V = (V_new - V_new[:, :1])[~done]
            live = live[~done]
            if live.size == 0:
                break
        g[live] = ((lo + hi) / 2)[~done]
        return g

    def _finite(self, s: np.ndarray, S: np.ndarray) -> np.ndarray:
        """Total expected cost over the horizon minus the policy-independent first L periods.

        V_t(x) = K 1{order} + [G(y) if the order arrives within the horizon] + E V_{t+1}(y - D), y = x + q(x):
        the same recursion as `dp.evaluate_policy`, vectorised over the P policies.
        """
        p, b = self.problem, self.b
        order, y = self._moves(s, S)
        rows = np.arange(s.size)[:, None]
        V = np.zeros((s.size, b.A))
        for t in range(p.horizon - 1, -1, -1):
            H = self._expect(V)  # E V(y - D) by y
            if t + p.lead_time <= p.horizon - 1:
                H += self.G
            V = order + H[rows, y]
        return V[:, p.initial_inventory - b.lo]

    def average_table(self) -> np.ndarray:
        """c[s, S] for 0 <= s < S <= hi (inf elsewhere), by the Zheng-Federgruen renewal formula."""
        p, b, hi = self.problem, self.b, self.hi
        pmf = p.demand.pmf(hi + 1)  # exact on 0..hi (the tail is lumped beyond)
        p0 = pmf[0]
        if p0 >= 1.0:  # no demand ever: one order and then nothing but holding at the order-up-to level
            m = np.zeros(hi + 1)
            m[0] = np.inf
        else:
            m = np.zeros(hi + 1)  # renewal mass: expected periods at cumulative demand j within a cycle
            m[0] = 1.0 / (1.0 - p0)
            for j in range(1, hi + 1):
                m[j] = pmf[1:j + 1] @ m[j - 1::-1] / (1.0 - p0)
        G = self.G[-b.lo:-b.lo + hi + 1]  # G(y) for y = 0..hi
        levels = np.arange(hi + 1)
        j = levels[None, :]
        S = levels[:, None]
        with np.errstate(invalid="ignore"):
            terms = np.where(j <= S, m[None, :] * G[np.clip(S - j, 0, hi)], 0.0)  # [S, j] = m(j) G(S - j)
        num = np.cumsum(terms, axis=1)  # [S, n] = sum_{j <= n} m(j) G(S - j)
        den = np.cumsum(m)
        n = S - levels[None, :]  # [S, s] -> S - s
        valid = n >= 1
        nn = np.clip(n, 0, hi)
        with np.errstate(invalid="ignore", divide="ignore"):
            table = (p.setup_cost + np.take_along_axis(num, nn, axis=1)) / den[nn]
        table = np.where(valid, table, np.inf)  # [S, s]
        return table.T  # [s, S]


RVI_SWEEPS = 300  # work estimate for one relative-value-iteration evaluation, in backups


def _backup_work(problem: Problem, hi: int) -> float:
    """Work of one exact backup for one policy: positions x demand values (see _Exact._expect)."""
    A = max(hi, problem.initial_inventory) - dp.default_bounds(problem).lo + 1
    return float(A * min(A, problem.demand.support_max(1e-13) + 1))


def _exact_tractable(problem: Problem, objective: str) -> bool:
    if problem.lost_sales or problem.perishable:
        return False
    hi = grid_limit(problem)
    if objective == "average" and not _caps_reachable(problem, hi, dp.default_bounds(problem).lo):
        return hi <= AVERAGE_MAX_GRID // 2
    backups = problem.horizon if objective == "finite" else RVI_SWEEPS
    return GUIDED_PAIRS * backups * _backup_work(problem, hi) <= GUIDED_FLOPS


def _caps_reachable(problem: Problem, hi: int, lo: int) -> bool:
    """Can max_order cut an order S - x (x >= lo, S <= hi)? The renewal formula assumes it never does."""
    return hi - problem.max_order > lo


def _caps_negligible(ex: _Exact, table: np.ndarray, leaders: int, rel: float = 1e-6) -> bool:
    """Does max_order leave the renewal formula's leaders unchanged to `rel`? (It only bites deep in the
    backlog, with negligible probability, in most problems.) The exact, capped values of those leaders are
    kept in ex.capped."""
    wide = [tuple(int(v) for v in np.unravel_index(i, table.shape)) for i in np.argsort(table, axis=None)[:4 * leaders]]
    capped = [pr for pr in wide if pr[1] - ex.problem.max_order > ex.b.lo]
    if not capped:
        return True
    values = ex.average_rvi(*np.array(capped).T)
    ex.capped = dict(zip(capped, values.tolist(), strict=True))
    renewal = np.array([table[pr] for pr in capped])
    return bool(np.all(np.abs(values - renewal) <= rel * np.abs(renewal)))


def _exact_search(problem: Problem, objective: str, leaders: int, coarse_points: int):
    """Best (s,S) by exact costs over the bounded grid, widened while the best presses on the bound.

    Average cost with caps out of reach: the renewal formula over every pair (exhaustive). Otherwise every
    pair scored by the exact recursion when affordable, else the renewal formula's 32 leaders plus a
    coarse-to-fine lattice and a step-1 polish, all scored exactly. Returns (leaders, exact costs, pairs
    scored, grid limit).
    """
    hi = grid_limit(problem)
    for _ in range(WIDENINGS + 1):
        ex = _Exact(problem, hi, objective)
        table = ex.average_table()
        backups = problem.horizon if objective == "finite" else RVI_SWEEPS
        renewal_exact = objective == "average" and (
            not _caps_reachable(problem, hi, ex.b.lo) or _caps_negligible(ex, table, leaders))
        if renewal_exact:
            order = np.argsort(table, axis=None)[:leaders]
            top = [tuple(int(v) for v in np.unravel_index(i, table.shape)) for i in order]
            ex.scores = {pr: float(table[pr]) for pr in top}
            ex.scores.update(ex.capped)  # where max_order could cut an order: the exact value with the cap
            evaluated = int(np.isfinite(table).sum())
        elif hi * (hi + 1) // 2 * backups * ex.states * ex.weights.size <= EXHAUSTIVE_FLOPS:
            ss, SS = np.triu_indices(hi + 1, 1)
            ex.score(list(zip(ss.tolist(), SS.tolist(), strict=True)))
            evaluated = len(ex.scores)
        else:
            seeds = np.argsort(table, axis=None)[:32]
            ex.score([tuple(int(v) for v in np.unravel_index(i, table.shape)) for i in seeds])
            _coarse_to_fine(ex.score, ex.best, hi, coarse_points)
            for center in ex.best(3):  # polish: step-1 neighbourhoods, following a best point on the edge
                _refine(ex.score, center, 2, 1, hi)
            evaluated = len(ex.scores)
        best = ex.best(1)[0]
        if not _presses(best[1], hi, problem) or (renewal_exact and 2 * hi > AVERAGE_MAX_GRID):
            break
        hi = _widen(hi, problem)
    top = ex.best(leaders)
    costs = [ex.scores[pr] for pr in top]
    if objective == "finite":  # add the policy-independent first L periods, from dp's evaluation of the winner
        offset = dp._evaluate_position(problem, ex.b, SSPolicy(*top[0]), "finite", 1e-8, 50_000) - costs[0]
        costs = [c + offset for c in costs]
    return top, costs, evaluated, hi


# ---------------------------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------------------------


def search_ss(
    problem: Problem,
    objective: str = "finite",
    criterion: str = "mean",
    seed: int = 0,
    screen_reps: int = 64,
    final_reps: int = 2000,
    leaders: int = 10,
    coarse_points: int = 13,
    exact: bool | None = None,
) -> SSSearchResult:
    """Best (s,S) policy, 0 <= s < S <= max_inventory, under the problem's caps: order S - y when y < s.

    The policy is applied to the inventory position y = I + x_1 + ... + x_L before ordering, and the order is
    then capped by the dynamics (`dynamics.room`), so the winner is the best *capped* (s,S) policy. Candidates
    are ranked by the expected cost C(s,S) (criterion "mean") or by the risk-adjusted objective

        L(pi) = E[C] + exp(-lambda) Std[C]                                   (criterion "objective"),

    lambda the problem's risk tolerance. Where the position chain is exact (backorders, not perishable) the
    long-run average cost of every pair of the bounded grid comes from the renewal formula of Zheng &
    Federgruen (1991),

        c(s,S) = [K + sum_{j=0}^{S-s} m(j) G(S - j)] / sum_{j=0}^{S-s} m(j),

    with G(y) = E[h (y - D_L)^+ + b (D_L - y)^+] the expected holding/backorder cost L periods after
    ordering up to y (D_L the demand over L + 1 periods) and m the renewal mass function of the demand
    (m(0) = 1/(1 - p(0)), m(j) = sum_{i=1}^{j} p(i) m(j - i) / (1 - p(0)): the expected number of periods a
    cycle spends at cumulative demand j; the sums run to S - s because this search reorders when y < s).
    The finite-horizon cost comes from a backward recursion vectorised over policies. Elsewhere (lost sales, perishable, or too large) a Monte Carlo search
    screens a coarse lattice on common random numbers, refines around the leaders and re-scores them on
    fresh replications (see the module docstring).

    Parameters
    ----------
    problem : Problem
        Demand D, h, b, K, lead time L, caps q_max and I_max, horizon T, risk tolerance lambda.
    objective : {"finite", "average"}
        Expected total cost over T periods from the initial state, or long-run average cost per period.
    criterion : {"mean", "objective"}
        Rank by E[C] or by L(pi).
    seed : int
        Seed of the common random numbers (screening; the fresh re-scoring uses derived seeds).
    screen_reps, final_reps : int
        Replications per screened pair and for the final re-scoring of the leaders. On the exact path with
        criterion "mean" the fresh replications only estimate the winner's std_cost (final_reps=0 skips them;
        std_cost is then nan).
    leaders : int
        How many of the best screened pairs are re-scored.
    coarse_points : int
        Lattice points per axis of the first (coarse) screening grid.
    exact : bool, optional
        None: exact wherever tractable; False: always Monte Carlo; True: exact or a ValueError naming why not.

    Returns
    -------
    SSSearchResult
        s, S, `mean_cost` (exact where the exact path ran: `stderr` = 0 and `exact_cost` set), `std_cost`,
        `objective_value` L(pi), the leaders table, `method` ("exact" | "monte_carlo") and `grid_limit`.

    Raises
    ------
    ValueError
        `objective` or `criterion` not among the allowed values, or exact=True on a lost-sales or perishable
        problem.

    References
    ----------
    Zheng, Y.-S. & Federgruen, A. (1991). Finding optimal (s,S) policies is about as simple as evaluating a
    single policy. Operations Research 39(4), 654-665. Scarf, H. (1960). The optimality of (S,s) policies in
    the dynamic inventory problem. Zipkin, P. (2000). Foundations of Inventory Management, ch. 6.

    Examples
    --------
    Backorders, L = 0, Poisson(6) demand, h = 1, b = 4, K = 5, long-run average cost: Zheng & Federgruen's
    algorithm (as implemented by stockpyl, `s_s_discrete_exact(1, 4, 5, True, 6)`) gives s = 4, S = 10,
    g = 8.0341; it reorders when y <= s, this search when y < s, so the same policy is (s, S) = (5, 10) here:

    >>> from inventory.demand import Demand
    >>> from inventory.problem import Problem
    >>> p = Problem(horizon=50, demand=Demand.poisson(6), lost_sales=False, holding_cost=1, penalty_cost=4,
    ...             setup_cost=5, lead_time=0, max_inventory=100, max_order=100)
    >>> r = search_ss(p, objective="average", final_reps=0)
    >>> (r.s, r.S, round(r.mean_cost, 4), r.method)
    (5, 10, 8.0341, 'exact')
    >>> search_ss(p, criterion="median")
    Traceback (most recent call last):
    ...
    ValueError: criterion: 'median' is not allowed; allowed: mean, objective
    """
    if criterion not in ("mean", "objective"):
        raise ValueError(f"criterion: {criterion!r} is not allowed; allowed: mean, objective")
    _run_length(problem, objective)
    t0 = time.perf_counter()
    use_exact = _exact_tractable(problem, objective) if exact is None else bool(exact)
    if use_exact and (problem.lost_sales or problem.perishable):
        raise ValueError("exact: the exact (s,S) search needs backorders without perishability")
    if not use_exact:
        top, evaluated, hi = _mc_leaders(problem, objective, criterion, seed, screen_reps, leaders, coarse_points)
        exact_costs = None
    else:
        top, costs, evaluated, hi = _exact_search(problem, objective, leaders, coarse_points)
        exact_costs = dict(zip(top, costs, strict=True))
        if criterion == "objective":  # L(pi) needs the std: let the Monte Carlo leaders compete too
            mc_top, mc_eval, _ = _mc_leaders(problem, objective, criterion, seed, screen_reps, leaders, coarse_points)
            top = top + [pr for pr in mc_top if pr not in exact_costs]
            evaluated += mc_eval
    if exact_costs is not None and criterion == "mean":
        # the exact argmin is the answer; fresh replications only report its std (final_reps=0: not at all)
        mean = np.array([exact_costs[pr] for pr in top])
        std = np.full(len(top), np.nan)
        if final_reps >= 2:
            std[0] = _fresh(problem, top[:1], objective, seed, final_reps)[1][0]
    else:
        mean, std = _fresh(problem, top, objective, seed, final_reps)
    if exact_costs is not None:  # the exact mean replaces the sample mean wherever it is known
        mean = np.array([exact_costs.get(pr, m) for pr, m in zip(top, mean, strict=True)])
    value = mean if criterion == "mean" else composite_objective(mean, std, problem.risk_tolerance)
    i = int(np.argmin(value))
    rows = [
        {"s": int(s), "S": int(S), "mean_cost": float(m), "std_cost": float(sd)}
        for (s, S), m, sd in zip(top, mean, std, strict=True)
    ]
    s_best, S_best = top[i]
    exact_best = exact_costs.get(top[i]) if exact_costs is not None else None
    if exact_costs is not None and exact_best is None:  # a Monte Carlo leader won on L(pi): score it exactly
        ex = _Exact(problem, max(hi, S_best), objective)
        exact_best = (dp._evaluate_position(problem, ex.b, SSPolicy(s_best, S_best), objective, 1e-8, 50_000))
    return SSSearchResult(
        s=int(s_best),
        S=int(S_best),
        mean_cost=float(exact_best if exact_best is not None else mean[i]),
        std_cost=float(std[i]),
        stderr=0.0 if exact_best is not None else float(std[i] / math.sqrt(max(final_reps, 1))),
        objective_value=float(composite_objective(
            exact_best if exact_best is not None else mean[i], std[i], problem.risk_tolerance)),
        seconds=time.perf_counter() - t0,
        evaluated=evaluated,
        objective=objective,
        leaders=rows,
        method="exact" if exact_costs is not None else "monte_carlo",
        exact_cost=None if exact_best is None else float(exact_best),
        grid_limit=hi,
    )


def best_base_stock(
    problem: Problem,
    objective: str = "finite",
    criterion: str = "mean",
    seed: int = 0,
    screen_reps: int = 256,
    final_reps: int = 2000,
) -> BaseStockResult:
    """Best order-up-to level S in 0..grid limit (all levels screened, the leaders re-evaluated); the limit is
    the demand bound of `grid_limit`, doubled while the best level presses on it, never above max_inventory."""
    t0 = time.perf_counter()
    warmup, periods = _run_length(problem, objective)
    scale = periods if warmup else 1

    def scores(levels_, reps, s):
        d = demand_matrix(problem, reps, warmup + periods, s)
        cost = simulate(problem, BaseStockPolicy(S=levels_), d, warmup, detailed=False).cost / scale
        mean, std = cost.mean(axis=1), cost.std(axis=1, ddof=1)
        value = mean if criterion == "mean" else composite_objective(mean, std, problem.risk_tolerance)
        return value, mean, std

    hi = grid_limit(problem)
    for _ in range(WIDENINGS + 1):
        levels = np.arange(hi + 1)
        value, _, _ = scores(levels, screen_reps, seed)
        if not _presses(int(levels[np.argmin(value)]), hi, problem):
            break
        hi = _widen(hi, problem)
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
