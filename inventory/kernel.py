"""The compiled Monte Carlo kernel: the `inventory.dynamics` rules under numba, state kept in place.

Layout. Demand is period-major, D[t, r] (T x R, C-contiguous), so period t of every replication is one
contiguous row. The loops run periods outer, policies, then replications inner; the state (on-hand I, ring
buffer of the pipeline, units in transit) lives in (P, R) arrays allocated once, so a period allocates
nothing. Only totals are kept: sum of held units, of short units, of setups, and, when the caller asks for
detail, of units sold, of stock-out periods and of demand; the cost is priced once from them with the linear
`dynamics.cost`. Without detail the extra totals are None and numba compiles a specialisation without
their loads and stores: a period runs about a quarter faster (benchmarks/bench_montecarlo.py), and the
search and scoring read only the cost.

The rules are not re-written here: `room`, `capped`, `arrival`, `settle` (inventory.dynamics) and the policy
rules (inventory.policies.RULES) are the same Python functions the numpy reference calls elementwise,
compiled by numba for scalars. `tests/test_inventory_kernel.py` checks the totals are identical to the
numpy reference (`montecarlo.simulate_reference`) on every variant.

Two entry points:
  * `run_rule`: a stationary position rule ((s,S), base-stock, (s,Q), (R,Q), constant; P parameter sets),
    the whole horizon in one call; `threads` > 1 splits the replications over threads (numba prange);
  * `Stepper`: one compiled period at a time for any other policy (a DP table, a network, an agent's rule);
    the policy is asked once per period for the orders of all (P, R) states (the vectorised policy interface
    of `inventory.policies`), the kernel applies caps, arrival, settlement and bookkeeping.
Compilation is cached on disk (numba cache=True): the first call in a fresh environment compiles (about
1-3 s per signature, see docs/performance.md), later processes load the machine code in milliseconds.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange, types
from numba.extending import overload

from inventory import dynamics
from inventory.policies import RULES, kernel_params

_jit = numba.njit(cache=True, nogil=True)
# The rules and the tallies are inlined at numba's IR level (inline="always", on overloads too): a
# process that compiles the kernel itself (fresh install, CI, a new Ray worker's cache) did not get LLVM to
# inline calls across separately compiled functions, and ran the kernel 5x slower than a process that
# loaded it from the on-disk cache (numba 0.68; benchmarks/bench_montecarlo.py measures both).
_jin = numba.njit(cache=True, nogil=True, inline="always")
_room = _jin(dynamics.room)
_clamp = _jin(dynamics.clamp)
_whole_units = _jin(dynamics.whole_units)
_arrival = _jin(dynamics.arrival)
_settle = _jin(dynamics.settle)
_ss, _bs, _sq, _rq, _const = (_jin(rule) for rule in RULES)


def _place(raw, allowed):
    """The order placed: `dynamics.clamp` for whole-unit raw orders, `dynamics.capped` (rint first) otherwise."""
    return int(dynamics.capped(raw, allowed))


@overload(_place)  # not inlined either: inlined, numba 0.68 gave wrong totals
def _place_compiled(raw, allowed):
    if isinstance(raw, (types.Integer, types.Boolean)):
        return lambda raw, allowed: np.int64(_clamp(raw, allowed))
    return lambda raw, allowed: np.int64(_clamp(_whole_units(raw), allowed))


def _tally(total, r, x):
    """total[r] += x; nothing when the total is not kept (None)."""
    total[r] += x


def _rows(total, p, r0, r1):
    """Row p, replications r0..r1-1 of a (P, R) total; None when the total is not kept."""
    return total[p, r0:r1]


def _zero(total, r0, r1):
    """Zero replications r0..r1-1 of a (P, R) total; nothing when the total is not kept."""
    total[:, r0:r1] = 0


@overload(_tally, inline="always")
def _tally_compiled(total, r, x):
    if isinstance(total, types.NoneType):  # decided at compile time: no branch in the inner loop
        return lambda total, r, x: None
    return _tally


@overload(_rows, inline="always")
def _rows_compiled(total, p, r0, r1):
    if isinstance(total, types.NoneType):
        return lambda total, p, r0, r1: None
    return _rows


@overload(_zero)  # not inlined: inlined, numba 0.68 gave wrong totals (tests/test_inventory_kernel.py caught it)
def _zero_compiled(total, r0, r1):
    if isinstance(total, types.NoneType):
        return lambda total, r0, r1: None
    return _zero


@numba.njit(cache=True, nogil=True, inline="always")
def _book(r, qr, d, on, head, transit, L, lost, perish, held, short, setups, sold, outs):
    """Replication r with placed order qr: arrival, settlement, pipeline bookkeeping and totals.

    Branch-free in L: the ring slot `head` holds the order placed L periods ago; it is read, then overwritten
    with q. With L = 0 the arrival is q itself (`dynamics.arrival`), and in-transit stays zero. Inlined into
    the order loops, so a period is one pass over the replications.
    """
    arrived = _arrival(qr, head[r], L)
    transit[r] += qr - arrived
    head[r] = qr
    nxt, h, s, sd = _settle(on[r] + arrived, np.int64(d[r]), lost, perish)
    on[r] = nxt
    held[r] += h
    short[r] += s
    setups[r] += qr > 0
    _tally(sold, r, sd)
    _tally(outs, r, s > 0)


@_jit
def _period_rule(code, a, b, d, on, head, transit, L, imax, qmax, lost, perish, held, short, setups, sold, outs):
    """One period of rule `code` (policies.RULES) with parameters (a, b) for one policy row, all replications.

    One loop per rule (not a branch inside one loop): the branch-free loop bodies vectorise."""
    if code == 0:
        for r in range(on.size):
            y = on[r] + transit[r]
            _book(r, _place(_ss(y, a, b), _room(y, qmax, imax)), d, on, head, transit, L, lost, perish,
                  held, short, setups, sold, outs)
    elif code == 1:
        for r in range(on.size):
            y = on[r] + transit[r]
            _book(r, _place(_bs(y, a, b), _room(y, qmax, imax)), d, on, head, transit, L, lost, perish,
                  held, short, setups, sold, outs)
    elif code == 2:
        for r in range(on.size):
            y = on[r] + transit[r]
            _book(r, _place(_sq(y, a, b), _room(y, qmax, imax)), d, on, head, transit, L, lost, perish,
                  held, short, setups, sold, outs)
    elif code == 3:
        for r in range(on.size):
            y = on[r] + transit[r]
            _book(r, _place(_rq(y, a, b), _room(y, qmax, imax)), d, on, head, transit, L, lost, perish,
                  held, short, setups, sold, outs)
    else:
        for r in range(on.size):
            y = on[r] + transit[r]
            _book(r, _place(_const(y, a, b), _room(y, qmax, imax)), d, on, head, transit, L, lost, perish,
                  held, short, setups, sold, outs)


@_jit
def _period_raw(raw, d, on, head, transit, L, imax, qmax, lost, perish, held, short, setups, sold, outs):
    """One period for raw orders raw[r] (any policy), one policy row, all replications."""
    for r in range(on.size):
        _book(r, _place(raw[r], _room(on[r] + transit[r], qmax, imax)), d, on, head, transit, L, lost, perish,
              held, short, setups, sold, outs)


@_jit
def _restart_totals(r0, r1, held, short, setups, sold, outs, demand):
    """Zero the totals of replications r0..r1-1: called once, when the first counted period starts, so the
    warm-up periods run through the same loops and are then forgotten."""
    for x in (held, short, setups):
        x[:, r0:r1] = 0
    _zero(sold, r0, r1)
    _zero(outs, r0, r1)
    _zero(demand, r0, r1)


def _add_demand(d, demand):
    """demand[r] += d[r]: the per-replication demand total (a detail total: fill rates need it), taken while
    the period's row is in cache; nothing when it is not kept."""
    for r in range(d.size):
        demand[r] += d[r]


@overload(_add_demand, inline="always")
def _add_demand_compiled(d, demand):
    if isinstance(demand, types.NoneType):
        return lambda d, demand: None
    return _add_demand


@_jit
def _horizon(code, D, r0, r1, a, b, on, ring, transit, L, imax, qmax, lost, perish, warmup,
             held, short, setups, sold, outs, demand):
    """The whole horizon for every policy row and the replications r0..r1-1: periods outer, replications inner.

    State and totals are (P, R) (ring (L, P, R)); the replication range is a view, so nothing is copied."""
    for t in range(D.shape[0]):
        if t == warmup:
            _restart_totals(r0, r1, held, short, setups, sold, outs, demand)
        slot = t % L if L > 0 else 0
        d = D[t, r0:r1]
        _add_demand(d, _rows(demand, 0, r0, r1))
        for p in range(a.size):
            _period_rule(code, a[p], b[p], d, on[p, r0:r1], ring[slot, p, r0:r1], transit[p, r0:r1], L, imax, qmax,
                         lost, perish, held[p, r0:r1], short[p, r0:r1], setups[p, r0:r1],
                         _rows(sold, p, r0, r1), _rows(outs, p, r0, r1))


@_jit
def _run_serial(code, D, a, b, on, ring, transit, L, imax, qmax, lost, perish, warmup, block,
                held, short, setups, sold, outs, demand):
    """All replications in one range (`block` is unused: the serial loop needs no cache blocking)."""
    _horizon(code, D, 0, D.shape[1], a, b, on, ring, transit, L, imax, qmax, lost, perish, warmup,
             held, short, setups, sold, outs, demand)


@numba.njit(cache=True, nogil=True, parallel=True)
def _run_parallel(code, D, a, b, on, ring, transit, L, imax, qmax, lost, perish, warmup, block,
                  held, short, setups, sold, outs, demand):
    """Ranges of `block` replications shared out over numba's threads (prange); ranges write disjoint columns."""
    R = D.shape[1]
    for k in prange(-(-R // block)):
        _horizon(code, D, k * block, min(R, (k + 1) * block), a, b, on, ring, transit, L, imax, qmax, lost,
                 perish, warmup, held, short, setups, sold, outs, demand)


@_jit
def _step_all(t, raw, D, on, ring, transit, L, imax, qmax, lost, perish, warmup,
              held, short, setups, sold, outs, demand):
    """Period t for every policy row, raw orders (P, R) given by the policy."""
    if t == warmup:
        _restart_totals(0, D.shape[1], held, short, setups, sold, outs, demand)
    slot = t % L if L > 0 else 0
    _add_demand(D[t], _rows(demand, 0, 0, D.shape[1]))
    for p in range(on.shape[0]):
        _period_raw(raw[p], D[t], on[p], ring[slot, p], transit[p], L, imax, qmax, lost, perish,
                    held[p], short[p], setups[p], _rows(sold, p, 0, D.shape[1]), _rows(outs, p, 0, D.shape[1]))


@numba.njit(cache=True, nogil=True)
def sample_transposed(u, cdf, guide, out):
    """out[t, r] = min{k : cdf[k] > u[r, t]} by guide table (`inventory.sampling`); u is (R, T), out (T, R)."""
    R, T = u.shape
    m = guide.size
    n = cdf.size - 1
    block = 16
    for r0 in range(0, R, block):
        r1 = min(R, r0 + block)
        for t in range(T):
            for r in range(r0, r1):
                x = u[r, t]
                j = min(np.int64(x * m), m - 1)
                k = guide[j]
                while k < n and cdf[k] <= x:
                    k += 1
                out[t, r] = k


class Totals:
    """Per-(policy, replication) totals over the counted periods, and the state arrays the kernel updates."""

    def __init__(self, P: int, R: int, L: int, initial: int, detail: bool = True):
        self.on = np.full((P, R), initial, dtype=np.int64)
        self.ring = np.zeros((max(L, 1), P, R), dtype=np.int64)
        self.transit = np.zeros((P, R), dtype=np.int64)
        self.held = np.zeros((P, R), dtype=np.int64)
        self.short = np.zeros((P, R), dtype=np.int64)
        self.setups = np.zeros((P, R), dtype=np.int64)
        self.sold = np.zeros((P, R), dtype=np.int64) if detail else None
        self.outs = np.zeros((P, R), dtype=np.int64) if detail else None
        self.demand_rows = np.zeros((1, R), dtype=np.int64) if detail else None  # over the counted periods

    def state(self):
        return self.on, self.ring, self.transit

    def sums(self):
        return self.held, self.short, self.setups, self.sold, self.outs

    @property
    def demand(self) -> np.ndarray | None:
        """Demand per replication over the counted periods (R,); None without detail."""
        return None if self.demand_rows is None else self.demand_rows[0]

    def pipeline(self, t: int, L: int) -> np.ndarray:
        """The ring buffer as (P, R, L), oldest (arriving this period) first."""
        if L == 0:
            return np.zeros(self.on.shape + (0,), dtype=np.int64)
        idx = [(t + i) % L for i in range(L)]
        return np.moveaxis(self.ring[idx], 0, -1)


def _problem_args(problem):
    return (problem.lead_time, problem.max_inventory, problem.max_order, problem.lost_sales, problem.perishable)


BLOCK = 1024  # replications per parallel task (at least): enough work per task to hide the thread start


def run_rule(problem, D: np.ndarray, code: int, a: np.ndarray, b: np.ndarray, warmup: int = 0,
             threads: int = 1, detail: bool = True) -> Totals:
    """Simulate policy rule `code` with parameter rows (a[p], b[p]) on period-major demand D (T, R).

    One thread runs all replications as one range. `threads` > 1 splits them into ranges of at least BLOCK
    (two per thread) run in parallel. Replications are independent, so the totals do not depend on the split.
    Without `detail` the sold, stock-out and demand totals are None.
    """
    D = np.ascontiguousarray(D)
    a, b = kernel_params(a), kernel_params(b)
    if a.dtype != b.dtype:
        a, b = a.astype(np.float64), b.astype(np.float64)
    T, R = D.shape
    tot = Totals(a.size, R, problem.lead_time, problem.initial_inventory, detail)
    parallel = threads > 1 and R > BLOCK
    block = max(BLOCK, -(-R // (2 * threads))) if parallel else R
    args = (int(code), D, a, b, *tot.state(), *_problem_args(problem), int(warmup), max(block, 1), *tot.sums(), tot.demand_rows)
    if parallel:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        _run_parallel(*args)
    else:
        _run_serial(*args)
    return tot


class Stepper:
    """One compiled period at a time, for policies the kernel cannot evaluate itself."""

    def __init__(self, problem, D: np.ndarray, P: int, warmup: int = 0, detail: bool = True):
        self.problem, self.D, self.warmup = problem, np.ascontiguousarray(D), int(warmup)
        self.tot = Totals(P, self.D.shape[1], problem.lead_time, problem.initial_inventory, detail)

    def position(self) -> np.ndarray:
        return self.tot.on + self.tot.transit

    def advance(self, t: int, raw_orders: np.ndarray) -> None:
        raw = np.asarray(raw_orders)
        raw = raw.astype(np.int64) if raw.dtype.kind in "iub" else raw.astype(np.float64)
        raw = np.ascontiguousarray(np.broadcast_to(raw, self.tot.on.shape))
        _step_all(int(t), raw, self.D, *self.tot.state(), *_problem_args(self.problem), self.warmup,
                  *self.tot.sums(), self.tot.demand_rows)
