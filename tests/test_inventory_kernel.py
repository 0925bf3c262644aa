"""Compiled (numba) and torch kernels against the numpy reference: identical totals on every variant."""

import os
import time
from dataclasses import dataclass

import numpy as np
import pytest

from inventory.demand import Demand
from inventory.montecarlo import choose_backend, demand_matrix, evaluate, simulate, simulate_reference
from inventory.policies import (
    BaseStockPolicy,
    ConstantPolicy,
    Policy,
    RQPolicy,
    SQPolicy,
    SSPolicy,
    StatePolicy,
)
from inventory.problem import Problem
from inventory.sampling import RANDOM_STREAM_VERSION, demand_paths, inverse_cdf_table, invert


def problem(**kw):
    base = dict(horizon=30, demand=Demand.poisson(5), lost_sales=True, holding_cost=0.5, penalty_cost=4.0,
                setup_cost=3.0, lead_time=2, max_inventory=40, max_order=15, initial_inventory=6)
    base.update(kw)
    return Problem(**base)


VARIANTS = [
    dict(lost_sales=True, perishable=False, lead_time=2),
    dict(lost_sales=False, perishable=False, lead_time=3),
    dict(lost_sales=True, perishable=True, lead_time=1),
    dict(lost_sales=False, perishable=True, lead_time=0),
    dict(lost_sales=True, lead_time=0),
    dict(lost_sales=False, lead_time=1, max_inventory=14, max_order=4),  # both caps bind often
]

POLICIES = [
    SSPolicy(s=np.array([4, 9, 14]), S=np.array([12, 25, 30])),
    BaseStockPolicy(S=np.array([8, 15, 60])),
    SQPolicy(s=np.array([6, 10]), Q=np.array([7, 20])),
    RQPolicy(R=np.array([9, 13]), Q=np.array([4, 6])),
    ConstantPolicy(q=np.array([0, 5, 7])),
    SSPolicy(s=np.array([7.5]), S=np.array([20.5])),  # fractional parameters: rounded orders, float path
]


@dataclass(frozen=True)
class PeriodicUpTo(Policy):
    """A position policy the kernels do not know (no kernel_form): asked period by period."""

    S: int = 15

    def order_from_position(self, position, t):
        return np.where(t % 3 == 0, np.maximum(self.S - position, 0), 0)


def _on_hand_rule(on, pipe, t):
    """A state-dependent policy: reacts to on-hand and to the newest pipeline entry separately."""
    newest = pipe[:, -1] if pipe.shape[1] else 0
    return np.where(on < 6, 12 - on - newest // 2, 0) + 0.5 * (t % 2)


def _totals(sim):
    return (sim.cost, sim.held, sim.short, sim.orders, sim.sold, sim.stockout_periods)


def _assert_identical(a, b):
    for x, y in zip(_totals(a), _totals(b), strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: ",".join(f"{k}={v[k]}" for k in v))
def test_numba_kernel_equals_numpy_reference(variant):
    p = problem(**variant)
    D = demand_matrix(p, 23, seed=1)
    for pol in POLICIES + [PeriodicUpTo(), StatePolicy(fn=_on_hand_rule)]:
        ref = simulate_reference(p, pol, D)
        _assert_identical(simulate(p, pol, D, backend="numba"), ref)
    ref = simulate_reference(p, POLICIES[0], D, warmup=7)
    _assert_identical(simulate(p, POLICIES[0], D, warmup=7, backend="numba"), ref)


@pytest.mark.parametrize("variant", VARIANTS[:4], ids=str)
def test_blocks_and_two_threads_equal_the_reference(variant):
    from inventory.kernel import BLOCK

    p = problem(**variant)
    D = demand_matrix(p, 2 * BLOCK + 37, seed=2)  # two threads: three ranges of replications, the last short
    for pol in POLICIES[:2]:
        ref = simulate_reference(p, pol, D)
        _assert_identical(simulate(p, pol, D, threads=1, backend="numba"), ref)
        _assert_identical(simulate(p, pol, D, threads=2, backend="numba"), ref)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: ",".join(f"{k}={v[k]}" for k in v))
def test_torch_backend_equals_numpy_reference(variant):
    import torch  # noqa: F401  (a core dependency: an import error must fail, not skip)
    p = problem(**variant)
    D = demand_matrix(p, 17, seed=3)
    for pol in POLICIES + [PeriodicUpTo(), StatePolicy(fn=_on_hand_rule)]:
        _assert_identical(simulate(p, pol, D, backend="torch"), simulate_reference(p, pol, D))


def test_backend_choice(monkeypatch):
    from inventory import compiled
    from inventory.compiled import (
        COMPILED_MIN_WORK,
        REFERENCE_BUDGET_S,
        compiled_pays,
        forced,
        reference_timed,
    )

    monkeypatch.setitem(compiled._state, "seconds", 0.0)  # as in a fresh process

    assert choose_backend("numpy") == "numpy" and choose_backend("torch") == "torch"
    with forced("always"):
        assert choose_backend(None, work=10) == "numba"  # small runs stay on the CPU, whatever the hardware
    with forced("never"):
        assert choose_backend(None, work=10**12) == "numpy"
    # auto: a kernel already loaded is used, and so is one for a call too big for numpy; else numpy, timed,
    # until the process has spent its budget on it
    assert compiled_pays(1, "numpy")
    assert compiled_pays(COMPILED_MIN_WORK, "askopt_no_such_kernel")
    assert not compiled_pays(10, "askopt_no_such_kernel")
    with reference_timed():
        time.sleep(REFERENCE_BUDGET_S)
    assert compiled_pays(10, "askopt_no_such_kernel")
    with pytest.raises(ValueError, match="mode"):
        forced("sometimes").__enter__()
    with pytest.raises(ValueError, match="backend"):
        choose_backend("cuda")
    p = problem()
    with pytest.raises(ValueError, match="backend"):
        simulate(p, SSPolicy(5, 20), demand_matrix(p, 3), backend="gpu")


def test_compiled_mode_from_the_environment():
    """ASKOPT_COMPILED pins the choice for a process (and the Ray workers that inherit it); a bad value names
    the variable and the allowed values."""
    import subprocess
    import sys

    code = ("from inventory.compiled import compiled_pays; from inventory.montecarlo import choose_backend; "
            "print(compiled_pays(10**12, 'x'), choose_backend(None, work=10**12))")
    run = lambda mode: subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,  # noqa: E731
                                      env={**os.environ, "ASKOPT_COMPILED": mode})
    assert run("never").stdout.split() == ["False", "numpy"]
    assert run("always").stdout.split() == ["True", "numba"]
    bad = run("sometimes")
    assert bad.returncode != 0 and "ASKOPT_COMPILED: 'sometimes' is not allowed; allowed: auto, always, never" in bad.stderr


def test_evaluate_records_the_random_stream():
    p = problem()
    (ev,) = evaluate(p, [SSPolicy(8, 22)], replications=50, seed=4)
    assert ev.random_stream == RANDOM_STREAM_VERSION == 2
    assert ev.as_row()["random_stream"] == 2


LAWS = [Demand.poisson(8), Demand.poisson(0.3), Demand.normal(10, 3), Demand.normal(2, 4), Demand.uniform(3, 9),
        Demand.empirical([0, 0, 2, 5, 5, 5, 11]), Demand.deterministic(4)]


@pytest.mark.parametrize("law", LAWS, ids=lambda d: d.describe())
def test_table_sampler_equals_reference_inversion(law):
    fast = demand_paths(law, 300, 50, seed=9)
    slow = demand_paths(law, 300, 50, seed=9, compiled=False)
    assert fast.shape == (50, 300) and fast.dtype == np.int32 and fast.flags.c_contiguous
    np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("law", LAWS[:6], ids=lambda d: d.describe())
def test_table_sampler_follows_the_law(law):
    """Frequencies of 200,000 draws against the pmf the DP uses: every cell within 5 standard errors."""
    x = demand_paths(law, 2000, 100, seed=11).ravel()
    pmf = law.pmf(law.support_max(1e-15))
    freq = np.bincount(x, minlength=pmf.size)[: pmf.size] / x.size
    se = np.sqrt(pmf * (1 - pmf) / x.size) + 1e-9
    assert np.all(np.abs(freq - pmf) <= 5 * se + 1e-6)
    assert x.mean() == pytest.approx(law.mean, abs=5 * law.std / np.sqrt(x.size) + 1e-9)


def test_sampler_edges_and_prefix_stability():
    cdf, guide = inverse_cdf_table(Demand.poisson(8))
    assert cdf[-1] == 1.0 and np.all(np.diff(cdf) >= 0) and guide.size == 4 * cdf.size
    from inventory.kernel import sample_transposed

    u = np.array([[0.0, np.nextafter(1.0, 0.0), cdf[3], np.nextafter(cdf[3], 0.0)]])
    out = np.empty((4, 1), dtype=np.int32)
    sample_transposed(u, cdf, guide, out)
    assert out.ravel().tolist() == invert(cdf, u.ravel()).tolist()
    assert out[0, 0] == 0 and out[2, 0] == 4 and out[3, 0] == 3  # F(3) itself maps to 4: D = min{k : F(k) > u}
    # replication r's path does not depend on how many replications are drawn
    np.testing.assert_array_equal(demand_paths(Demand.poisson(8), 5, 40, seed=3),
                                  demand_paths(Demand.poisson(8), 50, 40, seed=3)[:, :5])


def test_common_random_numbers_across_laws():
    """Inversion is monotone in U: on the same seed a stochastically larger law gives larger demand draw by draw."""
    small = demand_paths(Demand.poisson(5), 100, 30, seed=5)
    large = demand_paths(Demand.poisson(7), 100, 30, seed=5)
    assert np.all(large >= small) and large.sum() > small.sum()
