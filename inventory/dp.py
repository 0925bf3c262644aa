"""Exact dynamic programming: finite-horizon value iteration, long-run average cost (relative value
iteration), and exact evaluation of any stationary policy.

State reduction. With state (I, x1..xL) and x1 arriving before this period's demand, everything that
happens this period depends on I and x1 only through A = I + x1. So the value function lives on
(A, x2..xL): one dimension fewer than the full state, and one Bellman backup is, for each value of the next
state's first pipeline entry, a single matrix product with the transition matrix M[A, next on-hand] built
by `dynamics.settle` itself (no second copy of the rules).

Bounds. System stock and order size are bounded by demand quantiles (no fixed tiny caps): the inventory
position never needs to exceed the (L+1)-period demand quantile plus one order, and an order never needs to
exceed the demand quantile over an EOQ cycle. If the optimal policy ever sits on such a bound, the bound is
doubled and the problem solved again, so the bounds never decide the answer. Backlog is truncated at a deep
demand quantile (mass below is lumped). Past `max_states` / `max_work`, the answer is "intractable: N states".

Backlog without perishability has an exact one-dimensional reduction: the cost charged in period t+L is a
function of the inventory position after ordering in period t, so the DP runs on the position alone
(any lead time).

Equations (reduced state s = (A, x2..xL), A = on-hand + arriving order, q the order placed now):
    V_t(A, x2..xL) = c(A) + min_{0 <= q <= room} [ K 1{q > 0} + E V_{t+1}(I'(A, D) + x2, x3..xL, q) ]
with c(A) = E[h (A - D)^+ + b (D - A)^+] and I' the next on-hand (`dynamics.settle`), room the order cap
(`dynamics.room`). The long-run average cost g solves h(s) + g = T h(s) (relative value iteration, with the
Odoni bounds min_s (T h - h) <= g <= max_s (T h - h) as the stopping rule; Puterman 1994, sec. 8.5).
References: Zipkin (2008), "Old and new methods for lost-sales inventory systems", Oper. Res. 56(5);
Zipkin (2000), "Foundations of Inventory Management", ch. 9; Bijvank & Vis (2011), EJOR 215.

Statuses: "solved" (the optimum does not press on a bound tighter than the problem's own caps, and RVI met
its tolerance); "bounded" (after the last bound doubling, or when the next doubling is intractable, the
optimum still presses on a bound: `gap` estimates the cost still to gain, the improvement the last doubling
gave); "not converged" (RVI stopped at max_iter: `optimal_cost` is the midpoint of the Odoni bounds and
`gap` their width, which bounds the error); "intractable".

Speed. The minimise-over-orders pass is a compiled kernel (`_fused_min`, numba) that reads the continuation
W[a, rest, q] in place (no transposed copy) and adds c(A); the numpy `_min_over_orders` stays as the
reference it is tested against. When M is a partial convolution (lost sales from stock 0: M[a, j] =
p(a - j), the rest lumped at 0; detected on the built M), an L >= 2 backup is `kernel_dp.convolved_backup`:
the states on one diagonal a + x2 share one running sum over demand, ~Q A row operations instead of the
dense products' Q A^2 (5x faster at Zipkin L = 4), the same values to ~1e-16 and the same orders (tested). Average-cost solves after a bound doubling start from the previous relative
values embedded in the larger grid (warm start).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from inventory.compiled import compiled_pays, reference_timed
from inventory.dynamics import clamp, cost_of, expected_period_cost, order_room, settle, whole_units
from inventory.policies import Policy, StatePolicy
from inventory.problem import Problem
from inventory.special import poisson_isf

BIG = 1e15
TAIL = 1e-7
DAMPING = 0.7  # relative value iteration once stalled: share of the new backup per step (_relative_value_iteration)
STALL_WINDOW = 20  # backups over which the Odoni bound width must halve, else the iteration is damped


class Intractable(Exception):
    def __init__(self, states: int, reason: str):
        self.states, self.reason = states, reason
        super().__init__(f"intractable: {_short(states)} states ({reason})")


STATUSES = ("solved", "bounded", "not converged", "intractable")


@dataclass
class DPResult:
    status: str  # one of STATUSES (see the module docstring)
    states: int
    optimal_cost: float | None
    seconds: float
    objective: str = "finite"
    policy: Policy | None = None
    reason: str = ""
    bounds: dict = field(default_factory=dict)
    gap: float | None = None  # "bounded": estimated cost still to gain; "not converged": Odoni bound width

    def as_dict(self) -> dict:
        d = {
            "status": self.status,
            "states": _reportable(int(self.states)),
            "optimal_cost": self.optimal_cost,
            "seconds": round(self.seconds, 4),
        }
        if self.status in ("bounded", "not converged"):
            d["gap"] = self.gap
            d["reason"] = self.reason
        return d


# ---------------------------------------------------------------------------------------------------
# Demand helpers
# ---------------------------------------------------------------------------------------------------


def _pmf_n(problem: Problem, n: int, upto: int) -> np.ndarray:
    """pmf of demand summed over n periods, on 0..upto, tail lumped at upto."""
    base = problem.demand.pmf(max(1, problem.demand.support_max(1e-14)))
    out = np.array([1.0])
    for _ in range(n):
        out = np.convolve(out, base)
    res = np.zeros(upto + 1)
    m = min(out.size, upto + 1)
    res[:m] = out[:m]
    res[-1] += max(0.0, 1.0 - res.sum())
    return res


def _quantile_n(problem: Problem, n: int, tail: float = TAIL) -> int:
    d = problem.demand
    if d.kind == "poisson":
        return poisson_isf(tail, n * d.mean_param) + 1 if d.mean_param > 0 else 0
    p = _pmf_n(problem, n, n * d.support_max(1e-12) + 1)
    return int(np.searchsorted(np.cumsum(p), 1 - tail)) + 1


@dataclass(frozen=True)
class Bounds:
    lo: int  # lowest on-hand / available value (negative = backlog)
    hi: int  # highest inventory position
    qmax: int  # largest order considered

    @property
    def A(self) -> int:
        return self.hi - self.lo + 1

    @property
    def Q(self) -> int:
        return self.qmax + 1


def batch_periods(problem: Problem) -> int:
    """Periods of demand one order may need to cover (twice the EOQ cycle): sizes the order bound.

    Public so `optimization.limits` can price the demand convolutions `default_bounds` performs before any work.
    """
    mu = max(problem.demand.mean, 1e-9)
    h = max(problem.holding_cost, 1e-9)
    return 1 + math.ceil(2 * math.sqrt(2 * problem.setup_cost / (h * mu))) if problem.setup_cost > 0 else 1


def default_bounds(problem: Problem) -> Bounds:
    L = problem.lead_time
    eoq_periods = batch_periods(problem)
    q_bound = min(problem.max_order, max(1, _quantile_n(problem, eoq_periods, 1e-6)))
    # without a setup cost the order-up-to level never needs more than the lead-time demand quantile
    batch = q_bound if problem.setup_cost > 0 else 0
    hi = min(problem.max_inventory, _quantile_n(problem, L + 1, 1e-6) + batch)
    hi = max(hi, problem.initial_inventory)
    q_bound = min(q_bound, hi)
    lo = 0 if problem.lost_sales else -_quantile_n(problem, L + 1, 1e-9)
    return Bounds(lo, hi, q_bound)


def _cap_bounds(problem: Problem, b: Bounds) -> Bounds:
    hi = min(problem.max_inventory, b.hi)
    return Bounds(b.lo, hi, min(problem.max_order, b.qmax, hi - b.lo))


# ---------------------------------------------------------------------------------------------------
# Model: transition matrix and one-period cost from the shared dynamics
# ---------------------------------------------------------------------------------------------------


@dataclass
class _Model:
    problem: Problem
    b: Bounds
    M: np.ndarray  # (A, A): P(next on-hand = j | available = a)
    c: np.ndarray  # (A,): expected holding + penalty cost given available a
    rest_sum: np.ndarray  # (Q^(L-1),): x2+..+xL for each flattened rest index
    K: float
    cap: np.ndarray | None = None  # (A, rest): the order room, -1 where the state is above the position bound
    # (p, tail) when M[a, j] = p[a - j] for 1 <= j <= a and tail = M[:, 0] (stock only demand depletes) and
    # L >= 2: the backup is then a partial convolution (`kernel_dp.convolved_backup`); else None
    convolution: tuple[np.ndarray, np.ndarray] | None = None

    def __post_init__(self):
        if self.cap is None:
            self.cap = _order_caps(self.b, self.rest_sum)


def _convolution_form(M: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(p, tail) if M is lower triangular with M[a, j] = p[a - j] for j >= 1 (exactly), else None.

    True of lost sales without perishing from a lowest stock of 0: the next on-hand is a - D, with every
    D >= a lumped at 0. Checked on the built matrix rather than assumed from the flags, so the fast backup
    is taken only when it computes the same sums."""
    A = M.shape[0]
    p = M[A - 1, ::-1].copy()  # p[d] = M[A - 1, A - 1 - d]
    p[A - 1] = 0.0  # the lumped column is not part of the convolution
    a, j = np.indices(M.shape)
    expected = np.where((j >= 1) & (j <= a), p[np.clip(a - j, 0, A - 1)], 0.0)
    if not np.array_equal(np.where(j >= 1, M, 0.0), expected):
        return None
    return np.ascontiguousarray(p), np.ascontiguousarray(M[:, 0])


def _order_caps(b: Bounds, rest_sum: np.ndarray) -> np.ndarray:
    """Largest order per reduced state (`dynamics.order_room` under the DP's bounds), -1 if infeasible."""
    position = np.arange(b.lo, b.hi + 1)[:, None] + rest_sum[None, :]
    return np.where(position <= b.hi, order_room(position, b.qmax, b.hi), -1).astype(np.int64)


def _build(problem: Problem, b: Bounds) -> _Model:
    A = b.A
    values = np.arange(b.lo, b.hi + 1)
    dmax = max(problem.demand.support_max(1e-13), b.hi - b.lo + 1)
    p = problem.demand.pmf(dmax)
    d = np.arange(dmax + 1)
    nxt, _, _, _ = settle(values[:, None], d[None, :], problem.lost_sales, problem.perishable)
    nxt = np.clip(nxt, b.lo, b.hi) - b.lo  # backlog beyond the truncation is lumped at the floor
    M = np.zeros((A, A))
    rows = np.broadcast_to(np.arange(A)[:, None], nxt.shape)
    np.add.at(M, (rows, nxt), np.broadcast_to(p, nxt.shape))
    c = expected_period_cost(problem, values, p)
    L = problem.lead_time
    if L >= 2:
        grids = np.indices((b.Q,) * (L - 1)).reshape(L - 1, -1)
        rest_sum = grids.sum(axis=0)
    else:
        rest_sum = np.zeros(1, dtype=np.int64)
    return _Model(problem, b, M, c, rest_sum, problem.setup_cost,
                  convolution=_convolution_form(M) if L >= 2 else None)


def state_count(problem: Problem, b: Bounds | None = None) -> tuple[int, int, int]:
    """(states, work per backup in flops, memory entries) of the reduced DP under bounds b.

    Exact integers: with long lead times these numbers are astronomically large and must not overflow.
    """
    b = b or _cap_bounds(problem, default_bounds(problem))
    L = problem.lead_time
    if not problem.lost_sales and not problem.perishable:  # position DP: M @ V (A x A), then the order (A x Q)
        return b.A, b.A * b.A + b.A * b.Q, b.A * b.Q
    if L == 0:
        return b.A, b.A * b.A * b.Q, b.A * b.Q
    states = b.A * b.Q ** (L - 1)
    return states, b.A * b.A * b.Q**L, b.A * b.Q**L


# ---------------------------------------------------------------------------------------------------
# Bellman backup (general state, L >= 1 and L == 0)
# ---------------------------------------------------------------------------------------------------


def _continuation(m: _Model, F: np.ndarray) -> np.ndarray:
    """W[a, rest, q] = E F(next on-hand + first pipeline entry, remaining pipeline, q).

    F has shape (A, Q^(L-1)) over (available, x2..xL). The next state's available stock is the next
    on-hand plus its first pipeline entry (x2, or the new order q when L = 1). All shifts go through one
    matrix product: X[j, shift, c] = F[j + shift, c] is gathered from a sliding window, then W = M @ X.
    """
    A, Q = m.b.A, m.b.Q
    cols = F.shape[1]
    Fpad = np.vstack([F, np.full((Q, cols), BIG)])
    windows = np.lib.stride_tricks.sliding_window_view(Fpad, A, axis=0)[:Q]  # (Q, cols, A): [shift, c, j]
    X = np.ascontiguousarray(windows.transpose(2, 0, 1)).reshape(A, Q * cols)
    W = m.M @ X  # (A, Q * cols) = [a, shift, c]
    return W.reshape(A, -1, Q)  # (a, [x2..xL], q): the shift is x2 (L >= 2) or q (L = 1)


def _best_order(m: _Model, W: np.ndarray, policy_q: np.ndarray | None = None, c: np.ndarray | None = None):
    """c[a] + min over feasible q of K*1{q>0} + W[a, rest, q] (or the given orders); returns (value, q).

    Infeasible states (above the position bound) get c + BIG. The minimisation runs in the fused compiled
    pass; `c` defaults to zeros.
    """
    cap = m.cap
    c = np.zeros(cap.shape[0]) if c is None else c
    if policy_q is not None:
        q = clamp(policy_q, np.maximum(cap, 0))
        val = np.take_along_axis(W, q[..., None], axis=-1)[..., 0] + m.K * (q > 0)
        val = np.where(cap >= 0, val, BIG)
        return c[:, None] + val, np.where(cap >= 0, q, 0)
    if not compiled_pays(W.size, "inventory.kernel_dp"):
        with reference_timed():
            return _best_order_reference(m, W, c)
    from inventory.kernel_dp import fused_min

    return fused_min(W, cap, m.K, c)


def _best_order_reference(m: _Model, W: np.ndarray, c: np.ndarray | None = None):
    """The numpy reference of the fused pass (tests): same value and the same (smallest) minimising q."""
    cap = m.cap
    c = np.zeros(cap.shape[0]) if c is None else c
    val, q = _min_over_orders(W, np.maximum(cap, 0), m.K)
    return c[:, None] + np.where(cap >= 0, val, BIG), np.where(cap >= 0, q, 0)


def _min_over_orders(W: np.ndarray, cap: np.ndarray, K: float) -> tuple[np.ndarray, np.ndarray]:
    """min over 0 <= q <= cap of K*1{q>0} + W[..., q], and the smallest minimising q.

    One running-minimum pass over order sizes on whole (state x pipeline) slices: each state reads off its
    answer when the pass reaches its own cap, so no per-state prefix arrays are stored.
    """
    Wq = np.ascontiguousarray(np.moveaxis(W, -1, 1))  # (A, Q, rest): each order size a contiguous slab
    best = Wq[:, 0].copy()
    q = np.zeros(cap.shape, dtype=np.int64)
    run = np.full(cap.shape, np.inf)
    run_q = np.zeros(cap.shape, dtype=np.int64)
    for k in range(1, Wq.shape[1]):
        wk = Wq[:, k]
        better = wk < run
        np.copyto(run, wk, where=better)
        np.copyto(run_q, k, where=better)
        done = (cap == k) & (run + K < best - 1e-12)
        np.copyto(best, run + K, where=done)
        np.copyto(q, run_q, where=done)
    return best, q


def _backup(m: _Model, F_next: np.ndarray, policy_q=None):
    """One Bellman backup on the reduced state; returns (F, q table)."""
    p = m.problem
    if p.lead_time == 0:
        return _backup_l0(m, F_next[:, 0], policy_q)
    if p.lead_time >= 2 and m.convolution is not None and compiled_pays(m.cap.size * m.b.Q, "inventory.kernel_dp"):
        from inventory.kernel_dp import convolved_backup

        Fpad = np.vstack([F_next, np.full((m.b.Q, F_next.shape[1]), BIG)])
        return convolved_backup(Fpad, *m.convolution, m.cap, m.K, m.c, m.b.Q, policy_q)
    if p.lead_time >= 2 and policy_q is None:
        return _backup_by_shift(m, F_next)
    with reference_timed():  # numpy time counts towards loading the kernels (inventory.compiled)
        W = _continuation(m, F_next)
    return _best_order(m, W, policy_q, m.c)


def _backup_by_shift(m: _Model, F: np.ndarray):
    """The optimising backup for L >= 2, one next-pipeline shift x2 at a time.

    For shift x2 the continuation of every state (a, x2, x3..xL) and order q is one product
    Wx = M @ F[x2 : x2 + A] (rows of F are contiguous: no gathered copy), read at once by the fused compiled
    minimisation; Wx (A x Q^(L-1)) is reused across shifts, so the full W (Q times larger) never exists.
    Identical to `_best_order(m, _continuation(m, F), None, m.c)` (tested).
    """
    A, Q = m.b.A, m.b.Q
    cols = F.shape[1]
    inner = cols // Q  # states of (x3..xL)
    Fpad = np.vstack([F, np.full((Q, cols), BIG)])
    val = np.empty((A, cols))
    q = np.empty((A, cols), dtype=np.int64)
    Wx = np.empty((A, cols))
    if not compiled_pays(A * cols * Q, "inventory.kernel_dp"):
        with reference_timed():
            for x2 in range(Q):
                np.matmul(m.M, Fpad[x2:x2 + A], out=Wx)
                part = slice(x2 * inner, (x2 + 1) * inner)
                v, k = _min_over_orders(Wx.reshape(A, inner, Q), np.maximum(m.cap[:, part], 0), m.K)
                val[:, part] = m.c[:, None] + np.where(m.cap[:, part] >= 0, v, BIG)
                q[:, part] = np.where(m.cap[:, part] >= 0, k, 0)
        return val, q
    from inventory.kernel_dp import fused_min_into

    for x2 in range(Q):
        np.matmul(m.M, Fpad[x2:x2 + A], out=Wx)  # Wx[a, (x3..xL, q)]
        part = slice(x2 * inner, (x2 + 1) * inner)
        fused_min_into(Wx.reshape(A, inner, Q), m.cap[:, part], m.K, m.c, val[:, part], q[:, part])
    return val, q


def _backup_l0(m: _Model, V_next: np.ndarray, policy_q=None):
    """L = 0: the order arrives before demand, so cost and transition depend on y = I + q."""
    b = m.b
    G = m.c + m.M @ V_next  # (A,) by y
    Gpad = np.concatenate([G, np.full(b.Q, BIG)])
    on_hand = np.arange(b.A)
    W = Gpad[on_hand[:, None] + np.arange(b.Q)[None, :]]  # (A, Q): W[I, q] = G(I + q)
    val, q = _best_order(m, W[:, None, :], None if policy_q is None else policy_q)
    return val, q


# ---------------------------------------------------------------------------------------------------
# Position-only backlog DP (exact for non-perishable backlog, any lead time)
# ---------------------------------------------------------------------------------------------------


def _position_model(problem: Problem, b: Bounds):
    L = problem.lead_time
    values = np.arange(b.lo, b.hi + 1)
    dmax = max(problem.demand.support_max(1e-13) * (L + 1), b.hi - b.lo + 1)
    pL = _pmf_n(problem, L + 1, dmax)
    G = expected_period_cost(problem, values, pL)  # charged L periods later, by the position after ordering
    p1 = problem.demand.pmf(max(problem.demand.support_max(1e-13), b.hi - b.lo + 1))
    d1 = np.arange(p1.size)
    nxt, _, _, _ = settle(values[:, None], d1[None, :], False, False)  # backlog: the position moves by -D
    nxt = np.clip(nxt, b.lo, b.hi) - b.lo  # beyond the truncation lumped at the floor
    M = np.zeros((b.A, b.A))
    np.add.at(M, (np.broadcast_to(np.arange(b.A)[:, None], nxt.shape), nxt), np.broadcast_to(p1, nxt.shape))
    return G, M


def _position_backup(problem, b, G, M, V_next, policy_q=None, active=True):
    """V(x) = min_q K*1{q>0} + G(x+q) + E V(x+q-D), q <= min(qmax, hi - x)."""
    if not active:  # orders placed now never arrive within the horizon
        return M @ V_next, np.zeros(b.A, dtype=np.int64)
    H = G + M @ V_next  # by y
    Hpad = np.concatenate([H, np.full(b.Q, BIG)])
    W = Hpad[np.arange(b.A)[:, None] + np.arange(b.Q)[None, :]]
    m = _Model(problem, b, M, np.zeros(b.A), np.zeros(1, dtype=np.int64), problem.setup_cost)
    val, q = _best_order(m, W[:, None, :], policy_q)
    return val[:, 0], q[:, 0]


# ---------------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------------


def solve(
    problem: Problem,
    objective: str = "finite",
    max_states: int = 3_000_000,
    max_work: float = 2.5e11,
    bounds: Bounds | None = None,
    tol: float = 1e-7,
    max_iter: int = 20_000,
    doublings: int = 8,
) -> DPResult:
    r"""Optimal expected cost and an optimal policy of the periodic-review problem, by dynamic programming.

    The value function lives on the reduced state s = (A, x_2..x_L), A = I + x_1 the stock available this
    period (see the module docstring). With c(A) = E[h (A - D)^+ + b (D - A)^+] and I'(A, D) the next on-hand
    (`dynamics.settle`: lost sales, backlog, perishable), the finite-horizon recursion is

        V_T = 0,
        V_t(A, x_2..x_L) = c(A) + min_{0 <= q <= r(s)} { K 1{q > 0} + E_D V_{t+1}(I'(A, D) + x_2, x_3..x_L, q) },

    where r(s) = min(q_max, (I_max - y)^+) is the order cap on the inventory position y (`dynamics.room`).
    For the long-run average cost g the stationary equation h(s) + g = (T h)(s) is solved by relative value
    iteration (Puterman 1994, sec. 8.5.5), stopped when the Odoni bounds
    min_s [(T h)(s) - h(s)] <= g <= max_s [(T h)(s) - h(s)] are within `tol` (relative) of each other.

    Parameters
    ----------
    problem : Problem
        Horizon T, demand distribution D, holding cost h, penalty b (per lost unit, or per backlogged unit
        per period), setup cost K, lead time L, caps q_max (max_order) and I_max (max_inventory), initial
        on-hand I_0, and the lost-sales / backlog and perishability rules.
    objective : {"finite", "average"}
        "finite": min E[sum_{t<T} c_t] from (I_0, 0..0); "average": the optimal long-run average cost g
        per period (the initial state does not matter).
    max_states, max_work : int, float
        Tractability ceilings on the reduced state count and on the flops of the whole solve, the bound
        doublings included; beyond them at the first bounds the result is "intractable" (nothing is computed),
        at a later doubling "bounded" (the last solve within the budget, and its gap).
    bounds : Bounds, optional
        Explicit truncation (lowest stock, highest position, largest order), solved once. By default
        `default_bounds` (demand quantiles, not the caps) is used and doubled, up to `doublings` times,
        while the optimal policy presses on it, so the truncation never decides the answer.
    tol, max_iter : float, int
        Stopping rule of relative value iteration ("average" only).
    doublings : int
        How many times the default bounds may be doubled.

    Returns
    -------
    DPResult
        `status` "solved"; "bounded" (the optimum still presses on the truncation after the last doubling:
        `gap` = the improvement the last doubling gave, an estimate of what wider bounds could still gain);
        "not converged" (relative value iteration stopped at `max_iter`: `optimal_cost` is the midpoint of the
        Odoni bounds, `gap` their width, so |g - optimal_cost| <= gap / 2); or "intractable" (`states` = the
        full state count, no cost). `policy` is the optimal state policy (a table on the truncated grid).

    Raises
    ------
    ValueError
        When `objective` is not "finite" or "average".

    References
    ----------
    Zipkin, P. (2008). Old and new methods for lost-sales inventory systems. Operations Research 56(5),
    1256-1263 (Table 1: optimal average costs, reproduced to 0.005 in tests/test_inventory_dp.py and
    benchmarks/bench_dp.py). Zipkin, P. (2000). Foundations of Inventory Management, ch. 9. Bijvank, M. &
    Vis, I. F. A. (2011). Lost-sales inventory theory: a review. EJOR 215(1), 1-13. Puterman, M. L. (1994).
    Markov Decision Processes, sec. 8.5.

    Examples
    --------
    Zipkin (2008), Table 1: lost sales, Poisson(5) demand, h = 1, p = 4, lead time L = 1, optimal long-run
    average cost 4.04 (no setup cost, caps far above demand):

    >>> from inventory.demand import Demand
    >>> from inventory.problem import Problem
    >>> p = Problem(horizon=50, demand=Demand.poisson(5), lost_sales=True, holding_cost=1, penalty_cost=4,
    ...             setup_cost=0, lead_time=1, max_inventory=200, max_order=200)
    >>> r = solve(p, objective="average")
    >>> r.status, round(r.optimal_cost, 2)
    ('solved', 4.04)
    >>> solve(p, objective="discounted")
    Traceback (most recent call last):
    ...
    ValueError: objective: 'discounted' is not allowed; allowed: finite, average
    """
    if objective not in ("finite", "average"):
        raise ValueError(f"objective: {objective!r} is not allowed; allowed: finite, average")
    from inventory.blas import single_threaded_blas

    with single_threaded_blas():
        return _solve(problem, objective, max_states, max_work, bounds, tol, max_iter, doublings)


def _solve(problem, objective, max_states, max_work, bounds, tol, max_iter, doublings) -> DPResult:
    t0 = time.perf_counter()
    b = _cap_bounds(problem, bounds or default_bounds(problem))
    sol, prev, states, prev_b = None, None, 0, None
    why = "explicit bounds" if bounds is not None else "bounds could not be widened further"
    spent = 0.0  # max_work is for the whole solve: the doublings share it
    for attempt in range(doublings + 1):
        try:
            states, work = _check_tractable(problem, b, objective, max_states, max_work - spent)
        except Intractable as exc:
            if sol is None:
                return DPResult("intractable", exc.states, None, time.perf_counter() - t0, objective,
                                reason=str(exc))
            # the wider bounds are out of reach: report the last solve as bounded, and why
            b, why = prev_b, f"wider bounds are over the DP's budget: the {exc.reason} (max_states, max_work)"
            break
        warm = None if sol is None else _embed(sol.F, prev_b, b, problem)
        prev, sol, prev_b = sol, _solve_with(problem, b, objective, tol, max_iter, warm), b
        spent += work
        if not sol.converged:
            return DPResult("not converged", states, sol.cost, time.perf_counter() - t0, objective, sol.policy,
                            reason=f"relative value iteration stopped after {max_iter} backups; the average cost "
                                   f"is within +-{sol.width / 2:.3g} of the reported value",
                            bounds=_bounds_dict(b), gap=sol.width)
        if not sol.hit:
            return DPResult("solved", states, sol.cost, time.perf_counter() - t0, objective, sol.policy,
                            bounds=_bounds_dict(b))
        if bounds is not None or attempt == doublings:
            break
        b = _cap_bounds(problem, Bounds(b.lo * 2, b.hi * 2, b.qmax * 2))
    gap = None if prev is None else abs(prev.cost - sol.cost)
    return DPResult("bounded", states, sol.cost, time.perf_counter() - t0, objective, sol.policy,
                    reason=f"the optimal policy still presses on a truncation bound ({why}); the cost is an upper "
                           "bound on the optimum" + ("" if gap is None else f", the last doubling gained {gap:.3g}"),
                    bounds=_bounds_dict(b), gap=gap)


def _bounds_dict(b: Bounds) -> dict:
    return {"lo": b.lo, "hi": b.hi, "qmax": b.qmax}


def _embed(F: np.ndarray | None, old: Bounds, new: Bounds, problem: Problem) -> np.ndarray | None:
    """Warm start: relative values on the old grid carried to the new one (nearest old state; states that
    were outside the old bounds start from the largest finite old value)."""
    if F is None:
        return None
    F = np.where(F < BIG / 10, F, np.nan)
    F = np.where(np.isnan(F), np.nanmax(F) if np.any(np.isfinite(F)) else 0.0, F)
    a = np.clip(np.arange(new.lo, new.hi + 1) - old.lo, 0, old.A - 1)
    L = problem.lead_time
    if F.ndim == 1 or _position_mode(problem):
        return F.reshape(old.A, -1)[a, 0].reshape(-1) if F.ndim == 1 else F[a]
    if L <= 1:
        return F[a]
    grid = np.indices((new.Q,) * (L - 1)).reshape(L - 1, -1)
    r = np.ravel_multi_index(tuple(np.clip(grid, 0, old.qmax)), (old.Q,) * (L - 1))
    return F[np.ix_(a, r)]


def _check_tractable(problem, b, objective, max_states, max_work) -> tuple[int, float]:
    """(states, flops of one solve under b), or Intractable when either exceeds what is left of the budget."""
    states, work, memory = state_count(problem, b)
    total_work = work * (problem.horizon if objective == "finite" else 300)
    if states > max_states or memory > 4 * max_states or total_work > max_work:
        full = _full_state_count(problem, b)
        raise Intractable(full, f"reduced DP needs {_short(states)} states, {_short(total_work)} flops")
    return states, float(total_work)


def _short(n: int) -> str:
    return f"{float(n):.3g}" if n.bit_length() < 1000 else f"~10^{int(n.bit_length() * 0.30103)}"


def _reportable(n: int) -> int | float:
    """State counts for JSON: exact below 10^18, a float (capped at 1e308) beyond."""
    return int(n) if n < 10**18 else (float(n) if n.bit_length() < 1020 else 1e308)


def _full_state_count(problem: Problem, b: Bounds) -> int:
    """Size of the (on-hand, pipeline) state space under the bounds, for the intractable message."""
    return int(b.A * b.Q ** problem.lead_time)


def _position_mode(problem: Problem) -> bool:
    return not problem.lost_sales and not problem.perishable


@dataclass
class _Solution:
    cost: float
    policy: StatePolicy
    tables: np.ndarray
    hit: bool  # the optimal policy presses on a bound tighter than the problem's caps
    F: np.ndarray | None = None  # average cost: the relative values (warm start for wider bounds)
    converged: bool = True
    width: float = 0.0  # average cost: Odoni bound width at the stop


def _solve_with(problem: Problem, b: Bounds, objective: str, tol: float, max_iter: int,
                warm: np.ndarray | None = None) -> _Solution:
    if _position_mode(problem):
        return _solve_position(problem, b, objective, tol, max_iter, warm)
    m = _build(problem, b)
    cols = m.rest_sum.size
    start = problem.initial_inventory - b.lo
    if objective == "finite":
        F = np.zeros((b.A, cols))
        tables = np.zeros((problem.horizon, b.A, cols), dtype=np.int32)
        for t in range(problem.horizon - 1, -1, -1):
            F, q = _backup(m, F)
            tables[t] = q
        cost = float(F[start, 0])
        policy = _table_policy(problem, b, tables, stationary=False)
        return _Solution(cost, policy, tables, _bound_hit(problem, b, tables, m.rest_sum))
    F = np.zeros((b.A, cols)) if warm is None else warm.reshape(b.A, cols)
    r = _relative_value_iteration(lambda F_: _backup(m, F_), F, tol, max_iter)
    policy = _table_policy(problem, b, r.q[None], stationary=True)
    return _Solution(r.g, policy, r.q[None], _bound_hit(problem, b, r.q[None], m.rest_sum), r.F, r.converged,
                     r.width)


@dataclass
class _RVI:
    g: float
    q: np.ndarray
    F: np.ndarray
    converged: bool
    width: float


def rvi_damping(tau: float, widths: list[float]) -> float:
    """The share of the new backup in the next relative-value-iteration step: 1 until the Odoni bound width
    stalls (not halved over STALL_WINDOW backups), DAMPING from then on (see _relative_value_iteration)."""
    if tau == 1.0 and len(widths) > STALL_WINDOW and widths[-1] > 0.5 * widths[-1 - STALL_WINDOW]:
        return DAMPING
    return tau


def _relative_value_iteration(backup, F, tol, max_iter) -> _RVI:
    """Average cost g with Odoni bounds; the reference state is (lowest available, empty pipeline).

    Each backup T F gives min_s (T F - F)(s) <= g <= max_s (T F - F)(s); stop when the width is within
    tol (relative to max(1, |g|)). Returns converged=False, and the last bounds, after max_iter backups.

    When the bound width stops shrinking (not halved over STALL_WINDOW backups), the iterate moves only part of
    the way from then on, F <- (1 - DAMPING) F + DAMPING T F (Puterman's aperiodicity transformation, 8.5.4: same
    optimal policies, gain scaled by DAMPING, so the bounds above stay those of the original problem). Why:
    near-deterministic demand makes the chain under an (s,S)-like policy periodic, and plain value iteration then
    oscillates for ever (uniform(32, 34), L = 1: 20,000 backups, not converged; with the switch: 48). Damping from
    the start would cost fast-mixing problems up to twice the backups (Zipkin L = 1: 13 -> 26).
    """
    q, lo, hi = None, -np.inf, np.inf
    tau, widths = 1.0, []
    for _ in range(max_iter):
        TF, q = backup(F)
        ok = TF < BIG / 10
        diff = (TF - F)[ok]
        lo, hi = float(diff.min()), float(diff.max())
        if hi - lo <= tol * max(1.0, abs(hi)):
            return _RVI((lo + hi) / 2, q, F, True, hi - lo)
        widths.append(hi - lo)
        tau = rvi_damping(tau, widths)
        F_new = TF if tau == 1.0 else np.where(ok & (F < BIG / 10), (1.0 - tau) * F + tau * TF, TF)
        F = np.where(ok, F_new - F_new.flat[0], F_new)
    return _RVI((lo + hi) / 2, q, F, False, hi - lo)


def _solve_position(problem, b, objective, tol, max_iter, warm=None) -> _Solution:
    G, M = _position_model(problem, b)
    L = problem.lead_time
    start = problem.initial_inventory - b.lo
    if objective == "finite":
        T = problem.horizon
        # periods 0..L-1 are decided by the initial state (nothing ordered arrives in time)
        pre = 0.0
        for k in range(min(L, T)):
            pk = _pmf_n(problem, k + 1, problem.demand.support_max(1e-13) * (k + 1) + problem.initial_inventory + 1)
            pre += float(expected_period_cost(problem, problem.initial_inventory, pk))
        V = np.zeros(b.A)
        tables = np.zeros((T, b.A, 1), dtype=np.int32)
        for t in range(T - 1, -1, -1):
            V, q = _position_backup(problem, b, G, M, V, active=t + L <= T - 1)
            tables[t, :, 0] = q
        cost = pre + float(V[start])
        policy = _position_policy(problem, b, tables, stationary=False)
        return _Solution(cost, policy, tables, _bound_hit_position(problem, b, tables))
    V = np.zeros(b.A) if warm is None else warm.reshape(b.A)
    r = _relative_value_iteration(lambda V_: _position_backup(problem, b, G, M, V_), V, tol, max_iter)
    tables = r.q.reshape(1, b.A, 1)
    return _Solution(r.g, _position_policy(problem, b, tables, stationary=True), tables,
                     _bound_hit_position(problem, b, tables), r.F, r.converged, r.width)


def _bound_hit(problem: Problem, b: Bounds, tables: np.ndarray, rest_sum: np.ndarray) -> bool:
    """Did the optimal policy press against a bound that is tighter than the problem's own caps?"""
    values = np.arange(b.lo, b.hi + 1)[None, :, None]
    position_after = values + rest_sum[None, None, :] + tables
    ordered = tables > 0
    hit_q = b.qmax < problem.max_order and bool(np.any(tables >= b.qmax))
    hit_hi = b.hi < problem.max_inventory and bool(np.any(ordered & (position_after >= b.hi)))
    return hit_q or hit_hi


def _bound_hit_position(problem, b, tables) -> bool:
    return _bound_hit(problem, b, tables, np.zeros(1, dtype=np.int64))


def _table_policy(problem: Problem, b: Bounds, tables: np.ndarray, stationary: bool) -> StatePolicy:
    L = problem.lead_time
    Q = b.Q

    def fn(on_hand, pipeline, t):
        on_hand = np.asarray(on_hand)
        pipeline = np.asarray(pipeline).reshape(on_hand.size, L)
        a = on_hand + (pipeline[:, 0] if L >= 1 else 0)
        a_idx = np.clip(a - b.lo, 0, b.A - 1)
        if L >= 2:
            rest = np.clip(pipeline[:, 1:], 0, Q - 1)
            r_idx = np.ravel_multi_index(tuple(rest.T), (Q,) * (L - 1))
        else:
            r_idx = np.zeros(on_hand.size, dtype=np.int64)
        tt = 0 if stationary else min(int(t), tables.shape[0] - 1)
        return tables[tt, a_idx, r_idx]

    return StatePolicy(fn=fn, title="DP optimal" + (" (stationary)" if stationary else ""),
                       meta={"policy": "dp_table", "stationary": stationary})


def _position_policy(problem: Problem, b: Bounds, tables: np.ndarray, stationary: bool) -> StatePolicy:
    def fn(on_hand, pipeline, t):
        x = np.asarray(on_hand) + np.asarray(pipeline).reshape(np.asarray(on_hand).size, -1).sum(axis=1)
        idx = np.clip(x - b.lo, 0, b.A - 1)
        tt = 0 if stationary else min(int(t), tables.shape[0] - 1)
        return tables[tt, idx, 0]

    return StatePolicy(fn=fn, title="DP optimal" + (" (stationary)" if stationary else ""),
                       meta={"policy": "dp_table", "stationary": stationary})


def evaluate_policy(
    problem: Problem,
    policy: Policy,
    objective: str = "finite",
    max_states: int = 3_000_000,
    max_work: float = 4e10,
    tol: float = 1e-8,
    max_iter: int = 50_000,
) -> DPResult:
    """Exact expected cost of a stationary inventory-position policy ((s,S), base-stock, (s,Q), ...).

    No simulation noise: this is what the search and heuristics are scored against where tractable.
    """
    if objective not in ("finite", "average"):
        raise ValueError(f"objective: {objective!r} is not allowed; allowed: finite, average")
    if policy.needs_state:
        raise ValueError("policy: exact evaluation needs an inventory-position policy ((s,S), bs, sq, rq, const)")
    t0 = time.perf_counter()
    base = default_bounds(problem)
    hi = reachable_position_bound(problem, policy, base.lo)
    b = _cap_bounds(problem, Bounds(base.lo, hi, problem.max_order))
    try:
        states, _work = _check_tractable(problem, b, objective, max_states, max_work)
    except Intractable as exc:
        return DPResult("intractable", exc.states, None, time.perf_counter() - t0, objective, reason=str(exc))
    from inventory.blas import single_threaded_blas

    rvi: dict = {}
    with single_threaded_blas():
        if _position_mode(problem):
            cost = _evaluate_position(problem, b, policy, objective, tol, max_iter, rvi)
        else:
            cost = _evaluate_general(problem, b, policy, objective, tol, max_iter, rvi)
    if not rvi.get("converged", True):
        return DPResult("not converged", states, cost, time.perf_counter() - t0, objective, gap=rvi["width"],
                        reason=f"relative value iteration stopped after {max_iter} backups; the average cost is "
                               f"within +-{rvi['width'] / 2:.3g} of the reported value")
    return DPResult("solved", states, cost, time.perf_counter() - t0, objective)


def reachable_position_bound(problem: Problem, policy: Policy, lo: int = 0) -> int:
    """The largest inventory position the policy can ever reach from the initial state.

    Demand only lowers the position and an order raises it to p + q(p), so the reachable positions are bounded by
    the fixed point M = max(I0, max_{lo <= p <= M} p + q(p)). For (s,S) that is max(I0, S): exact evaluation then
    sizes its state space by the policy, not by a capacity of 10^6 that the policy never uses.
    """
    cap = int(problem.max_inventory)
    bound = min(cap, max(int(problem.initial_inventory), 0))
    while True:
        positions = np.arange(lo, bound + 1, dtype=np.int64)
        reach = int((positions + _orders_by_position(policy, positions)).max())
        new = min(cap, max(bound, reach))
        if new == bound:
            return bound
        bound = new


def _orders_by_position(policy: Policy, positions: np.ndarray) -> np.ndarray:
    """Whole-unit orders by position, clipped to [0, 2^53] before the int64 cast: a level like 10^40 (garbled
    advice) would otherwise wrap around; every caller caps orders by the room anyway."""
    q = policy.order_from_position(positions.reshape(1, -1), 0)
    return np.asarray(np.clip(whole_units(q), 0, 2.0**53), dtype=np.int64).reshape(positions.shape)


def _evaluate_general(problem, b, policy, objective, tol, max_iter, rvi: dict | None = None) -> float:
    m = _build(problem, b)
    values = np.arange(b.lo, b.hi + 1)[:, None]
    L = problem.lead_time
    position = values + (m.rest_sum[None, :] if L >= 1 else 0)
    q_pol = _orders_by_position(policy, position)
    cols = m.rest_sum.size
    start = problem.initial_inventory - b.lo
    if objective == "finite":
        F = np.zeros((b.A, cols))
        for _ in range(problem.horizon):
            F, _q = _backup(m, F, q_pol)
        return float(F[start, 0])
    r = _relative_value_iteration(lambda F_: _backup(m, F_, q_pol), np.zeros((b.A, cols)), tol, max_iter)
    if rvi is not None:
        rvi.update(converged=r.converged, width=r.width)
    return r.g


def _evaluate_position(problem, b, policy, objective, tol, max_iter, rvi: dict | None = None) -> float:
    """Exact cost of a position policy on the backlog position chain; `rvi` (average) receives convergence."""
    G, M = _position_model(problem, b)
    positions = np.arange(b.lo, b.hi + 1)
    q_pol = _orders_by_position(policy, positions)[:, None]
    L = problem.lead_time
    if objective == "finite":
        T = problem.horizon
        pre = 0.0
        for k in range(min(L, T)):
            pk = _pmf_n(problem, k + 1, problem.demand.support_max(1e-13) * (k + 1) + problem.initial_inventory + 1)
            pre += float(expected_period_cost(problem, problem.initial_inventory, pk))
        V = np.zeros(b.A)
        for t in range(T - 1, -1, -1):
            active = t + L <= T - 1
            if active:
                V, _q = _position_backup(problem, b, G, M, V, q_pol)
            else:  # the policy still orders (and pays setup) even though nothing arrives in time
                q_now = clamp(_orders_by_position(policy, positions), order_room(positions, b.qmax, b.hi))
                V = cost_of(q_now > 0, 0, 0, problem) + _shift_position(M, V, q_now, b)
        return pre + float(V[problem.initial_inventory - b.lo])
    r = _relative_value_iteration(lambda V_: _position_backup(problem, b, G, M, V_, q_pol), np.zeros(b.A), tol,
                                  max_iter)
    if rvi is not None:
        rvi.update(converged=r.converged, width=r.width)
    return r.g


def _shift_position(M, V, q, b) -> np.ndarray:
    """E V(x + q(x) - D) for the inactive tail periods."""
    y = np.clip(np.arange(b.A) + q, 0, b.A - 1)
    return (M @ V)[y]
