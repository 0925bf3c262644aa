"""The DP's minimise-over-orders pass, compiled (numba): one read of the continuation, no copies.

For every reduced state (a, rest) with order room cap[a, rest] (-1 = state above the position bound):

    U(a, rest) = c[a] + min( W[a, rest, 0],  K + min_{1 <= q <= cap} W[a, rest, q] ),

and the smallest minimising q (q = 0 unless ordering is better by more than 1e-12, as in the numpy
reference `dp._min_over_orders`). W is read in its natural layout (orders contiguous), so the transposed
copy the numpy pass needs disappears, and c(A) is added in the same pass.

Small DPs skip this module (and numba's start-up) until the work pays for it: `inventory.compiled`.
"""

from __future__ import annotations

import numba
import numpy as np

BIG = 1e15  # = dp.BIG: the value of a state outside the bounds


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
            w = W[a, j]
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
            val[a, j] = c[a] + best
            q[a, j] = arg


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
