"""The demand laws' special functions (stdlib path for small supports) against scipy.special."""

import math

import numpy as np
import pytest
from scipy import special, stats

from inventory.special import SMALL, normal_cdf, normal_isf, poisson_isf, poisson_pmf


@pytest.mark.parametrize("mu", [0.05, 1.0, 5.0, 47.3, 777.7, 9000.0])
def test_poisson_pmf_matches_scipy(mu):
    k = np.arange(min(SMALL, int(mu + 40 * math.sqrt(mu) + 40)))
    ref = np.exp(special.xlogy(k, mu) - special.gammaln(k + 1) - mu)
    mine = poisson_pmf(k, mu)
    live = ref > 1e-300
    np.testing.assert_allclose(mine[live], ref[live], rtol=1e-10)
    assert abs(mine.sum() - ref.sum()) < 1e-10 and abs(mine.sum() - 1.0) < 1e-10


def test_normal_cdf_and_quantile_match_scipy():
    x = np.linspace(-12, 12, 4001)
    np.testing.assert_allclose(normal_cdf(x), special.ndtr(x), rtol=1e-13, atol=1e-300)
    for tail in (1e-13, 1e-12, 1e-6, 0.01, 0.3):
        assert normal_isf(tail) == pytest.approx(-special.ndtri(tail), rel=1e-14)


def test_poisson_quantile_matches_scipy_except_its_rounding_ties():
    """scipy inverts at q = 1 - tail, which carries 1.1e-16 of absolute rounding: where P(X > k) is that close
    to `tail` it may answer one step early. Ours sums the upper tail directly; everywhere else the two agree."""
    rng = np.random.default_rng(0)
    mus = np.concatenate([rng.uniform(0.01, 60, 600), rng.uniform(60, 3000, 200), [1.0, 5.0, 8.0, 13000.0]])
    differ = 0
    for tail in (1e-13, 1e-12, 1e-6):
        for mu in mus:
            mine, ref = poisson_isf(tail, mu), int(stats.poisson.isf(tail, mu))
            assert stats.poisson.sf(mine, mu) <= tail * (1 + 1e-9)  # ours is a valid quantile
            if mine != ref:
                differ += 1
                assert mine == ref + 1 and abs(stats.poisson.sf(ref, mu) - tail) <= 2.3e-16 * 1.01, (tail, mu)
    assert differ <= len(mus) // 20
    assert poisson_isf(1e-12, 1e6) == int(stats.poisson.isf(1e-12, 1e6))  # large means: scipy's own routine
