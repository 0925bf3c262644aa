"""The few special functions the demand laws need, without importing scipy.special for small supports.

`import scipy.special` costs 0.3-0.5 s (its array-API layer), more than `askopt solve` computes on a small
problem. Up to `SMALL` support points these use the standard library's math.lgamma / math.erfc /
statistics.NormalDist elementwise (against scipy's ufuncs: the normal CDF within 4e-14 relative, the Poisson pmf
within 6e-11 relative at k near 20,000, where both lgammas carry ~1e-11 absolute rounding; the Poisson quantile
identical except where scipy's own 1 - tail rounding decides: tests/test_inventory_special.py); above it,
where the work dwarfs the import, scipy.special itself.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

SMALL = 20_000  # support points below which the stdlib elementwise path runs
_SQRT2 = math.sqrt(2.0)


def poisson_pmf(k: np.ndarray, mu: float) -> np.ndarray:
    """P(X = k) for X ~ Poisson(mu), k = 0, 1, ... (an integer array)."""
    if k.size > SMALL:
        from scipy import special

        return np.exp(special.xlogy(k, mu) - special.gammaln(k + 1) - mu)
    log_mu = math.log(mu) if mu > 0 else -math.inf
    return np.exp(np.array([(x * log_mu if x else 0.0) - math.lgamma(x + 1.0) - mu for x in k.tolist()], dtype=float))


def normal_cdf(x: np.ndarray) -> np.ndarray:
    """The standard normal CDF, elementwise."""
    if x.size > SMALL:
        from scipy import special

        return special.ndtr(x)
    return np.array([0.5 * math.erfc(-v / _SQRT2) for v in x.tolist()], dtype=float)


def normal_isf(tail: float) -> float:
    """z with P(Z > z) = tail for the standard normal."""
    return -NormalDist().inv_cdf(tail)


def poisson_isf(tail: float, mu: float) -> int:
    """The smallest k with P(X > k) <= tail, X ~ Poisson(mu): scipy.stats.poisson.isf(tail, mu).

    Small means sum the upper tail exactly from the pmf (the same answer as scipy's except where P(X > k) and
    `tail` agree to rounding); large ones compute it as scipy does (its _ppf at 1 - tail from scipy.special)."""
    top = int(mu + 40.0 * math.sqrt(mu) + 40)  # the mass above is below 1e-300
    if top <= SMALL:
        p = poisson_pmf(np.arange(top + 1), mu)
        above = np.append(np.cumsum(p[::-1])[::-1][1:], 0.0)  # above[k] = P(k < X <= top)
        return int(np.argmax(above <= tail))
    from scipy import special

    q = 1.0 - tail
    vals = math.ceil(special.pdtrik(q, mu)) if math.isfinite(special.pdtrik(q, mu)) else math.nan
    if not math.isfinite(vals):  # beyond the special functions' range (means near 1e12): a safe upper bound
        return int(mu + 40 * math.sqrt(mu)) + 1
    below = max(vals - 1, 0)
    return int(below if special.pdtr(below, mu) >= q else vals)
