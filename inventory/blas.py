"""BLAS threads for the DP's backups.

The backups' matrix products are small to medium (e.g. 54 x 54 times 54 x 9,261 at L = 4); OpenBLAS's worker
threads cost more than they give on a shared 2-core machine (measured here, CPU time of a Zipkin L = 4 solve:
2.0 s single-threaded against 8.3 s with the default threads under load). `single_threaded_blas` limits the
calling thread only (OpenBLAS >= 0.3.27 `openblas_set_num_threads_local`, restored on exit) and is a no-op when
numpy's OpenBLAS does not offer it. Apart from the compiled kernels so that a small DP never loads numba.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os
from contextlib import contextmanager

import numpy as np


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
