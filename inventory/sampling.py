"""Demand sampling for Monte Carlo: inverse-CDF tables on uniforms, stored period-major.

Every integer demand law the package knows (Poisson, rounded normal, uniform, empirical; deterministic is a
one-point table) is sampled by inversion: with F the law's CDF on 0..n (the upper tail beyond
n = `Demand.support_max(TAIL)` lumped at n, mass < 1e-15) and U ~ Uniform[0, 1),

    D = F^{-1}(U) = min{ k : F(k) > U }.

Inversion is exact for the tabulated law (the very pmf the exact DP uses), monotone in U (so common random
numbers stay aligned across laws and policies), and cheap: a guide table (Chen & Asau 1974; Devroye 1986,
"Non-Uniform Random Variate Generation", sec. III.2.4) turns the search into one lookup and, on average,
less than one comparison. `rng.poisson` costs about 50 ns a draw here; the table about 4 ns.

Random stream. `demand_paths` draws U from `np.random.default_rng(seed).random((R, T))` (replication-major,
so replication r's path is the same whatever R) and stores demand period-major: an array of shape (T, R),
C-contiguous, so the kernels read one contiguous row per period. Version 2 of the stream (this module)
replaced numpy's `Generator.poisson / normal / integers / choice` draws on an (R, T) array (version 1): the
same seed now gives different (equally distributed) demand, so Monte Carlo figures moved within their
standard errors. Results carry `RANDOM_STREAM_VERSION` so a figure can be traced to the stream it came from.
"""

from __future__ import annotations

import functools

import numpy as np

from inventory.demand import Demand

RANDOM_STREAM_VERSION = 2
TAIL = 1e-15  # upper-tail mass lumped into the last table entry
GUIDE = 4  # guide-table cells per table entry


@functools.lru_cache(maxsize=256)
def inverse_cdf_table(demand: Demand) -> tuple[np.ndarray, np.ndarray]:
    """(cdf, guide): cdf[k] = P(D <= k) on 0..n with cdf[n] = 1 exactly; guide[j] = min{k : cdf[k] > j / m}.

    Cached per law (Demand is frozen and hashable); the arrays are read-only.
    """
    pmf = demand.pmf(demand.support_max(TAIL))
    cdf = np.cumsum(pmf)
    cdf[-1] = 1.0
    cdf = np.minimum(cdf, 1.0)
    m = GUIDE * cdf.size
    guide = np.searchsorted(cdf, np.arange(m) / m, side="right").astype(np.int64)
    cdf.flags.writeable = False
    guide.flags.writeable = False
    return cdf, guide


def invert(cdf: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The numpy reference: min{k : cdf[k] > u} by binary search."""
    return np.minimum(np.searchsorted(cdf, u, side="right"), cdf.size - 1).astype(np.int32)


def uniforms(replications: int, periods: int, seed: int) -> np.ndarray:
    """The (R, T) uniforms of stream version 2."""
    return np.random.default_rng(seed).random((replications, periods))


def demand_paths(demand: Demand, replications: int, periods: int, seed: int = 0, compiled: bool = True) -> np.ndarray:
    """Period-major demand (T, R), int32: row t holds period t of every replication.

    `compiled` uses the numba guide-table sampler; `compiled=False` the numpy reference (identical output).
    """
    if demand.kind == "deterministic":
        return np.full((periods, replications), int(demand.mean_param), dtype=np.int32)
    u = uniforms(replications, periods, seed)
    cdf, guide = inverse_cdf_table(demand)
    if compiled:
        from inventory.kernel import sample_transposed

        out = np.empty((periods, replications), dtype=np.int32)
        sample_transposed(u, cdf, guide, out)
        return out
    return np.ascontiguousarray(invert(cdf, u).T)
