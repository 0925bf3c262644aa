"""The DP's minimise-over-orders pass, compiled (numba): one read of the continuation, no copies.

For every reduced state (a, rest) with order room cap[a, rest] (-1 = state above the position bound):

    U(a, rest) = c[a] + min( W[a, rest, 0],  K + min_{1 <= q <= cap} W[a, rest, q] ),

and the smallest minimising q (q = 0 unless ordering is better by more than 1e-12, as in the numpy
reference `dp._min_over_orders`). W is read in its natural layout (orders contiguous), so the transposed
copy the numpy pass needs disappears, and c(A) is added in the same pass.

BLAS threads. The backups' matrix products are small to medium (e.g. 54 x 54 times 54 x 9,261 at L = 4);
OpenBLAS's worker threads cost more than they give on a shared 2-core machine (measured here, CPU time of a
Zipkin L = 4 solve: 2.0 s single-threaded against 8.3 s with the default threads under load).
`single_threaded_blas` limits the calling thread only (OpenBLAS >= 0.3.27 `openblas_set_num_threads_local`,
restored on exit) and is a no-op when numpy's OpenBLAS does not offer it.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os
from contextlib import contextmanager

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



@functools.lru_cache(maxsize=1)
def _openblas_local():
    """numpy's bundled OpenBLAS `openblas_set_num_threads_local`, or None."""
    try:
        libdir = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
        for path in glob.glob(os.path.join(libdir, "libscipy_openblas*.so")):
            fn = getattr(ctypes.CDLL(path), "openblas_set_num_threads_local", None)
            if fn is not None:
                fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
                return fn
    except OSError:
        return None
    return None


@contextmanager
def single_threaded_blas():
    """BLAS calls from this thread run on one thread inside the block."""
    fn = _openblas_local()
    if fn is None:
        yield
        return
    previous = fn(1)
    try:
        yield
    finally:
        fn(previous)
