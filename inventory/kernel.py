"""The compiled Monte Carlo kernel: the `inventory.dynamics` rules under numba, state kept in place.

Layout. Demand is period-major, D[t, r] (T x R, C-contiguous), so period t of every replication is one
contiguous row. The loops run periods outer, policies, then replications inner; the state (on-hand I, ring
buffer of the pipeline, units in transit) lives in (P, R) arrays allocated once, so a period allocates
nothing. Only totals are kept: sum of held units, of short units, of setups, of units sold, of stock-out
periods; the cost is priced once from them with the linear `dynamics.cost`.

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
from inventory.policies import RULES

_jit = numba.njit(cache=True, nogil=True)
_room = _jit(dynamics.room)
_clamp = _jit(dynamics.clamp)
_whole_units = _jit(dynamics.whole_units)
_arrival = _jit(dynamics.arrival)
_settle = _jit(dynamics.settle)
_ss, _bs, _sq, _rq, _const = (_jit(rule) for rule in RULES)


def _place(raw, allowed):
    """The order placed: `dynamics.clamp` for whole-unit raw orders, `dynamics.capped` (rint first) otherwise."""
    return int(dynamics.capped(raw, allowed))


@overload(_place)
def _place_compiled(raw, allowed):
    if isinstance(raw, (types.Integer, types.Boolean)):
        return lambda raw, allowed: np.int64(_clamp(raw, allowed))
    return lambda raw, allowed: np.int64(_clamp(_whole_units(raw), allowed))


@_jit
def _orders_rule(code, a, b, on, transit, imax, qmax, q):
    """q[r] = the placed order of rule `code` (policies.RULES) with parameters (a, b) at position on + transit."""
    if code == 0:
        for r in range(q.size):
            y = on[r] + transit[r]
            q[r] = _place(_ss(y, a, b), _room(y, qmax, imax))
    elif code == 1:
        for r in range(q.size):
            y = on[r] + transit[r]
            q[r] = _place(_bs(y, a, b), _room(y, qmax, imax))
    elif code == 2:
        for r in range(q.size):
            y = on[r] + transit[r]
            q[r] = _place(_sq(y, a, b), _room(y, qmax, imax))
    elif code == 3:
        for r in range(q.size):
            y = on[r] + transit[r]
            q[r] = _place(_rq(y, a, b), _room(y, qmax, imax))
    else:
        for r in range(q.size):
            y = on[r] + transit[r]
            q[r] = _place(_const(y, a, b), _room(y, qmax, imax))


@_jit
def _orders_raw(raw, on, transit, imax, qmax, q):
    """q[r] = the placed order for a raw order raw[r] at position on + transit."""
    for r in range(q.size):
        q[r] = _place(raw[r], _room(on[r] + transit[r], qmax, imax))


@_jit
def _serve(q, d, on, head, transit, L, lost, perish, held, short, setups, sold, outs):
    """Arrival, settlement, pipeline bookkeeping and totals for placed orders q (one policy row, all r).

    Branch-free in L: the ring slot `head` holds the order placed L periods ago; it is read, then overwritten
    with q. With L = 0 the arrival is q itself (`dynamics.arrival`), and in-transit stays zero.
    """
    for r in range(q.size):
        qr = q[r]
        arrived = _arrival(qr, head[r], L)
        transit[r] += qr - arrived
        head[r] = qr
        nxt, h, s, sd = _settle(on[r] + arrived, np.int64(d[r]), lost, perish)
        on[r] = nxt
        held[r] += h
        short[r] += s
        setups[r] += qr > 0
        sold[r] += sd
        outs[r] += s > 0


@_jit
def _horizon(code, D, r0, a, b, on, ring, transit, L, imax, qmax, lost, perish, warmup, held, short, setups, sold,
             outs):
    """The whole horizon for every policy row of one block of replications r0.. r0 + B - 1 (B = on.shape[1]):
    periods outer, replications inner. Warm-up periods are totalled into scratch rows that are then dropped,
    so the inner loops never branch."""
    B = on.shape[1]
    q = np.empty(B, dtype=np.int64)
    scratch = np.zeros((5, B), dtype=np.int64)
    for t in range(D.shape[0]):
        slot = t % L if L > 0 else 0
        d = D[t, r0:r0 + B]
        for p in range(a.size):
            _orders_rule(code, a[p], b[p], on[p], transit[p], imax, qmax, q)
            if t >= warmup:
                _serve(q, d, on[p], ring[slot, p], transit[p], L, lost, perish,
                       held[p], short[p], setups[p], sold[p], outs[p])
            else:
                _serve(q, d, on[p], ring[slot, p], transit[p], L, lost, perish,
                       scratch[0], scratch[1], scratch[2], scratch[3], scratch[4])


@_jit
def _run_serial(code, D, a, b, on, ring, transit, L, imax, qmax, lost, perish, warmup,
                held, short, setups, sold, outs):
    """Blocks of replications one after the other; state and totals are (blocks, P, B) (ring (blocks, L, P, B))."""
    B = on.shape[2]
    for k in range(on.shape[0]):
        _horizon(code, D, k * B, a, b, on[k], ring[k], transit[k], L, imax, qmax, lost, perish, warmup,
                 held[k], short[k], setups[k], sold[k], outs[k])


@numba.njit(cache=True, nogil=True, parallel=True)
def _run_parallel(code, D, a, b, on, ring, transit, L, imax, qmax, lost, perish, warmup,
                  held, short, setups, sold, outs):
    """The blocks shared out over numba's threads (prange)."""
    B = on.shape[2]
    for k in prange(on.shape[0]):
        _horizon(code, D, k * B, a, b, on[k], ring[k], transit[k], L, imax, qmax, lost, perish, warmup,
                 held[k], short[k], setups[k], sold[k], outs[k])


@_jit
def _step_all(t, raw, D, on, ring, transit, L, imax, qmax, lost, perish, warmup,
              held, short, setups, sold, outs, q, scratch):
    """Period t for every policy row, raw orders (P, R) given by the policy; q, scratch: work rows (R,), (5, R)."""
    slot = t % L if L > 0 else 0
    for p in range(on.shape[0]):
        _orders_raw(raw[p], on[p], transit[p], imax, qmax, q)
        if t >= warmup:
            _serve(q, D[t], on[p], ring[slot, p], transit[p], L, lost, perish,
                   held[p], short[p], setups[p], sold[p], outs[p])
        else:
            _serve(q, D[t], on[p], ring[slot, p], transit[p], L, lost, perish,
                   scratch[0], scratch[1], scratch[2], scratch[3], scratch[4])


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

    def __init__(self, P: int, R: int, L: int, initial: int):
        self.on = np.full((P, R), initial, dtype=np.int64)
        self.ring = np.zeros((max(L, 1), P, R), dtype=np.int64)
        self.transit = np.zeros((P, R), dtype=np.int64)
        self.held = np.zeros((P, R), dtype=np.int64)
        self.short = np.zeros((P, R), dtype=np.int64)
        self.setups = np.zeros((P, R), dtype=np.int64)
        self.sold = np.zeros((P, R), dtype=np.int64)
        self.outs = np.zeros((P, R), dtype=np.int64)

    def state(self):
        return self.on, self.ring, self.transit

    def sums(self):
        return self.held, self.short, self.setups, self.sold, self.outs

    def pipeline(self, t: int, L: int) -> np.ndarray:
        """The ring buffer as (P, R, L), oldest (arriving this period) first."""
        if L == 0:
            return np.zeros(self.on.shape + (0,), dtype=np.int64)
        idx = [(t + i) % L for i in range(L)]
        return np.moveaxis(self.ring[idx], 0, -1)


def _problem_args(problem):
    return (problem.lead_time, problem.max_inventory, problem.max_order, problem.lost_sales, problem.perishable)


def _params(x) -> np.ndarray:
    """Whole-number parameters as int64 (the loop then stays in integers), anything else as float64."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    return x.astype(np.int64) if np.all(np.isfinite(x)) and np.all(x == np.rint(x)) else x


BLOCK = 1024  # replications per cache block: a block's ~10 state and total rows stay in L1/L2


def run_rule(problem, D: np.ndarray, code: int, a: np.ndarray, b: np.ndarray, warmup: int = 0,
             threads: int = 1) -> Totals:
    """Simulate policy rule `code` with parameter rows (a[p], b[p]) on period-major demand D (T, R).

    Replications run in blocks of BLOCK (the last one padded with zero demand, then dropped): the state and
    totals of a block fit the core's cache while it runs through the horizon; `threads` > 1 runs blocks in
    parallel. Blocks are independent, so the totals do not depend on BLOCK or threads.
    """
    D = np.ascontiguousarray(D)
    a, b = _params(a), _params(b)
    if a.dtype != b.dtype:
        a, b = a.astype(np.float64), b.astype(np.float64)
    T, R = D.shape
    P, L = a.size, problem.lead_time
    B = min(BLOCK, R)
    nb = -(-R // B)
    if nb * B != R:
        D = np.concatenate([D, np.zeros((T, nb * B - R), dtype=D.dtype)], axis=1)
    on = np.full((nb, P, B), problem.initial_inventory, dtype=np.int64)
    ring = np.zeros((nb, max(L, 1), P, B), dtype=np.int64)
    transit = np.zeros((nb, P, B), dtype=np.int64)
    sums = [np.zeros((nb, P, B), dtype=np.int64) for _ in range(5)]
    args = (int(code), D, a, b, on, ring, transit, *_problem_args(problem), int(warmup), *sums)
    if threads > 1 and nb > 1:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        _run_parallel(*args)
    else:
        _run_serial(*args)
    tot = Totals(P, 0, L, problem.initial_inventory)

    def unblock(x):
        return np.ascontiguousarray(x.transpose(1, 0, 2).reshape(P, nb * B)[:, :R])

    tot.on, tot.transit = unblock(on), unblock(transit)
    tot.held, tot.short, tot.setups, tot.sold, tot.outs = (unblock(x) for x in sums)
    return tot


class Stepper:
    """One compiled period at a time, for policies the kernel cannot evaluate itself."""

    def __init__(self, problem, D: np.ndarray, P: int, warmup: int = 0):
        self.problem, self.D, self.warmup = problem, np.ascontiguousarray(D), int(warmup)
        self.tot = Totals(P, self.D.shape[1], problem.lead_time, problem.initial_inventory)
        self.q = np.empty(self.D.shape[1], dtype=np.int64)
        self.scratch = np.zeros((5, self.D.shape[1]), dtype=np.int64)

    def position(self) -> np.ndarray:
        return self.tot.on + self.tot.transit

    def advance(self, t: int, raw_orders: np.ndarray) -> None:
        raw = np.asarray(raw_orders)
        raw = raw.astype(np.int64) if raw.dtype.kind in "iub" else raw.astype(np.float64)
        raw = np.ascontiguousarray(np.broadcast_to(raw, self.tot.on.shape))
        _step_all(int(t), raw, self.D, *self.tot.state(), *_problem_args(self.problem), self.warmup,
                  *self.tot.sums(), self.q, self.scratch)
