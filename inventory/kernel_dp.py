"""The DP's minimise-over-orders pass, compiled (numba): one read of the continuation, no copies.

For every reduced state (a, rest) with order room cap[a, rest] (-1 = state above the position bound):

    U(a, rest) = c[a] + min( W[a, rest, 0],  K + min_{1 <= q <= cap} W[a, rest, q] ),

and the smallest minimising q (q = 0 unless ordering is better by more than 1e-12, as in the numpy
reference `dp._min_over_orders`). W is read in its natural layout (orders contiguous), so the transposed
copy the numpy pass needs disappears, and c(A) is added in the same pass.

`convolved_backup` is the whole L >= 2 backup for the transition matrices of stock that only demand
depletes (lost sales, no perishing, lowest stock 0): M[a, j] = p[a - j] for 1 <= j <= a, the rest of row a
at j = 0. There the continuation of next-pipeline shift x2 is a partial convolution,

    W[a, x2] = tail[a] F[x2] + sum_{d < a} p[d] F[a + x2 - d],

and every state on the diagonal n = a + x2 shares the running sum over d: walking d up once per diagonal
gives all of them. That is ~(A + Q) A row operations a backup instead of the dense product's Q A^2
multiply-adds (23x fewer at Zipkin L = 4), and W is consumed row by row, never stored. Given a policy's
orders it evaluates them instead (exact policy evaluation, `dp.evaluate_policy`).

Small DPs skip this module (and numba's start-up) until the work pays for it: `inventory.compiled`.
"""

from __future__ import annotations

import numba
import numpy as np

BIG = 1e15  # = dp.BIG: the value of a state outside the bounds


@numba.njit(cache=True, nogil=True, inline="always")
def _row_min(w, k_max, K):
    """(best, q): min of w[0] and K + min_{1 <= k <= k_max} w[k], the smallest minimising k."""
    best = w[0]
    arg = 0
    run = np.inf
    run_q = 0
    for k in range(1, k_max + 1):
        if w[k] < run:
            run = w[k]
            run_q = k
    if run + K < best - 1e-12:
        best = run + K
        arg = run_q
    return best, arg


@numba.njit(cache=True, nogil=True)
def _fused(W, cap, K, c, val, q):
    A, C, _ = W.shape
    for a in range(A):
        for j in range(C):
            k_max = cap[a, j]
            if k_max < 0:
                val[a, j] = c[a] + BIG
                q[a, j] = 0
                continue
            best, arg = _row_min(W[a, j], k_max, K)
            val[a, j] = c[a] + best
            q[a, j] = arg


@numba.njit(cache=True, nogil=True)
def _convolved(Fpad, p, tail, cap, K, c, Q, policy, val, q):
    A = tail.size
    cols = Fpad.shape[1]
    inner = cols // Q
    run = np.empty(cols)
    w = np.empty(cols)
    for n in range(A + Q - 1):  # the diagonal a + x2 = n
        a_lo = max(0, n - Q + 1)
        a_hi = min(A - 1, n)
        run[:] = 0.0
        for a in range(a_hi + 1):
            if a > 0:  # run = sum_{d < a} p[d] F[n - d]
                pd = p[a - 1]
                row = Fpad[n - a + 1]
                for k in range(cols):
                    run[k] += pd * row[k]
            if a < a_lo:
                continue
            x2 = n - a
            ta = tail[a]
            base = Fpad[x2]
            for k in range(cols):
                w[k] = run[k] + ta * base[k]
            for i in range(inner):
                j = x2 * inner + i
                k_max = cap[a, j]
                if k_max < 0:
                    val[a, j] = c[a] + BIG
                    q[a, j] = 0
                    continue
                if policy is None:  # pruned at compile time: optimise, or evaluate the given orders
                    best, arg = _row_min(w[i * Q:(i + 1) * Q], k_max, K)
                else:
                    arg = min(max(policy[a, j], 0), k_max)
                    best = w[i * Q + arg] + (K if arg > 0 else 0.0)
                val[a, j] = c[a] + best
                q[a, j] = arg


def convolved_backup(Fpad: np.ndarray, p: np.ndarray, tail: np.ndarray, cap: np.ndarray, K: float, c: np.ndarray,
                     Q: int, policy: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(U, q) of shape (A, cols) for the padded relative values Fpad (A + Q, cols), demand pmf p (A,), lumped
    column tail (A,), order room cap (A, cols); orders are the last axis of cols (cols = inner * Q). With
    `policy` (A, cols) the given orders (clamped to the room) are evaluated instead of optimised."""
    A = tail.size
    val = np.empty((A, Fpad.shape[1]))
    q = np.empty((A, Fpad.shape[1]), dtype=np.int64)
    if policy is not None:
        policy = np.ascontiguousarray(policy, dtype=np.int64)
    _convolved(np.ascontiguousarray(Fpad), p, tail, cap, float(K), c, Q, policy, val, q)
    return val, q


def fused_min_into(W: np.ndarray, cap: np.ndarray, K: float, c: np.ndarray, val: np.ndarray, q: np.ndarray) -> None:
    """`fused_min` writing into (possibly strided) views val, q; W (A, n, Q) C-contiguous, cap (A, n)."""
    _fused(W, cap, float(K), c, val, q)


def fused_min(W: np.ndarray, cap: np.ndarray, K: float, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(U, q) of shape (A, rest) for W (A, rest, Q), cap (A, rest) int64, setup cost K, c (A,)."""
    W = np.ascontiguousarray(W, dtype=np.float64)
    val = np.empty(cap.shape)
    q = np.empty(cap.shape, dtype=np.int64)
    _fused(W, np.ascontiguousarray(cap, dtype=np.int64), float(K), np.ascontiguousarray(c, dtype=np.float64),
           val, q)
    return val, q
