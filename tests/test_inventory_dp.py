"""Exact DP: brute force, published optima, stockpyl's exact (s,S), ordering DP <= (s,S) <= heuristics."""

import functools

import numpy as np
import pytest

from inventory import dp
from inventory.demand import Demand
from inventory.dynamics import step
from inventory.montecarlo import evaluate
from inventory.policies import BaseStockPolicy, SQPolicy, SSPolicy
from inventory.problem import Problem
from inventory.search import search_ss


def tiny(**kw):
    base = dict(horizon=4, demand=Demand.poisson(1.5), lost_sales=True, holding_cost=1, penalty_cost=4,
                setup_cost=2, lead_time=1, max_inventory=6, max_order=3, initial_inventory=1)
    base.update(kw)
    return Problem(**base)


def brute_force(p: Problem) -> float:
    """Expectimax over every order in every reachable state, using only `dynamics.step`."""
    pmf = p.demand.pmf(p.demand.support_max(1e-14))

    @functools.lru_cache(None)
    def V(t, on_hand, pipe):
        if t == p.horizon:
            return 0.0
        best = np.inf
        room = min(p.max_order, max(p.max_inventory - on_hand - sum(pipe), 0))
        for q in range(room + 1):
            total = 0.0
            for d, pr in enumerate(pmf):
                if pr > 1e-15:
                    s = step(p, on_hand, np.array(pipe, dtype=np.int64), q, d)
                    total += pr * (float(s.cost) + V(t + 1, int(s.on_hand), tuple(int(x) for x in s.pipeline)))
            best = min(best, total)
        return best

    return V(0, p.initial_inventory, (0,) * p.lead_time)


@pytest.mark.parametrize(
    "kw",
    [
        dict(lead_time=0), dict(lead_time=1), dict(lead_time=2),
        dict(lost_sales=False, lead_time=2, horizon=3), dict(perishable=True, lead_time=1),
        dict(lost_sales=False, perishable=True, lead_time=1), dict(demand=Demand.uniform(0, 3), setup_cost=0),
    ],
)
def test_dp_equals_brute_force(kw):
    p = tiny(**kw)
    r = dp.solve(p)
    assert r.status == "solved"
    assert r.optimal_cost == pytest.approx(brute_force(p), abs=1e-7)


# Zipkin (2008), "Old and new methods for lost-sales inventory systems", Oper. Res. 56(5), Table:
# optimal average cost, Poisson(5) demand, h = 1, lost-sales penalty p, lead time L.
ZIPKIN = {(1, 4): 4.04, (1, 9): 5.44, (1, 19): 6.68, (1, 39): 7.84,
          (2, 4): 4.40, (2, 9): 6.09, (2, 19): 7.66, (2, 39): 9.11,
          (3, 4): 4.60, (3, 39): 10.04}


@pytest.mark.parametrize("L,pen", sorted(ZIPKIN))
def test_lost_sales_optimum_matches_published(L, pen):
    p = Problem(horizon=50, demand=Demand.poisson(5), lost_sales=True, holding_cost=1, penalty_cost=pen,
                setup_cost=0, lead_time=L, max_inventory=200, max_order=200)
    r = dp.solve(p, objective="average")
    assert r.status == "solved"
    assert r.optimal_cost == pytest.approx(ZIPKIN[(L, pen)], abs=0.006)


@pytest.mark.parametrize("h,b,K,mu", [(1, 4, 5, 6), (1, 9, 20, 4), (0.5, 3, 10, 8)])
def test_search_and_dp_agree_with_stockpyl_exact_ss(h, b, K, mu):
    ss = pytest.importorskip("stockpyl.ss")
    s_ref, S_ref, g_ref = ss.s_s_discrete_exact(h, b, K, True, mu)
    p = Problem(horizon=50, demand=Demand.poisson(mu), lost_sales=False, holding_cost=h, penalty_cost=b,
                setup_cost=K, lead_time=0, max_inventory=150, max_order=150)
    # stockpyl orders when the position is at or below s; ours strictly below
    exact_ref = dp.evaluate_policy(p, SSPolicy(int(s_ref) + 1, int(S_ref)), objective="average").optimal_cost
    assert exact_ref == pytest.approx(g_ref, rel=1e-6)
    assert dp.solve(p, objective="average").optimal_cost == pytest.approx(g_ref, rel=1e-6)
    found = search_ss(p, objective="average")
    found_exact = dp.evaluate_policy(p, found.policy, objective="average").optimal_cost
    assert found_exact <= g_ref * 1.005


def test_ordering_dp_then_ss_then_heuristics():
    p = Problem(horizon=30, demand=Demand.poisson(4), lost_sales=True, holding_cost=0.5, penalty_cost=5,
                setup_cost=3, lead_time=2, max_inventory=40, max_order=15, initial_inventory=8)
    opt = dp.solve(p)
    found = search_ss(p)
    ss_exact = dp.evaluate_policy(p, found.policy).optimal_cost
    heuristics = [BaseStockPolicy(16), SQPolicy(12, 15), SSPolicy(5, 30)]
    heur_exact = [dp.evaluate_policy(p, h).optimal_cost for h in heuristics]
    assert opt.optimal_cost <= ss_exact + 1e-9
    assert all(ss_exact <= h + 1e-9 for h in heur_exact)


def test_exact_policy_evaluation_matches_monte_carlo():
    p = Problem(horizon=25, demand=Demand.normal(5, 2), lost_sales=False, holding_cost=1, penalty_cost=6,
                setup_cost=4, lead_time=2, max_inventory=40, max_order=20, initial_inventory=10)
    pol = SSPolicy(14, 26)
    exact = dp.evaluate_policy(p, pol).optimal_cost
    (mc,) = evaluate(p, [pol], replications=20000, seed=1)
    assert exact == pytest.approx(mc.mean_cost, abs=4 * mc.stderr)
    lost = p.with_(lost_sales=True)
    exact_l = dp.evaluate_policy(lost, pol).optimal_cost
    (mc_l,) = evaluate(lost, [pol], replications=20000, seed=1)
    assert exact_l == pytest.approx(mc_l.mean_cost, abs=4 * mc_l.stderr)


def test_dp_policy_simulates_to_its_value():
    p = tiny(horizon=12, max_inventory=12, max_order=6, lead_time=2)
    r = dp.solve(p)
    (mc,) = evaluate(p, [r.policy], replications=20000, seed=2)
    assert r.optimal_cost == pytest.approx(mc.mean_cost, abs=4 * mc.stderr)


def test_intractable_answers_fast_with_state_count():
    p = Problem(horizon=365, demand=Demand.poisson(8), lost_sales=True, holding_cost=0.5, penalty_cost=2.8,
                setup_cost=3, lead_time=10, max_inventory=80, max_order=25)
    r = dp.solve(p)
    assert r.status == "intractable" and r.states > 10**9 and r.optimal_cost is None
    assert r.seconds < 2
    assert "intractable" in r.reason


def test_backlog_long_lead_time_is_tractable_by_position():
    p = Problem(horizon=60, demand=Demand.poisson(6), lost_sales=False, holding_cost=1, penalty_cost=9,
                setup_cost=5, lead_time=7, max_inventory=100, max_order=50, initial_inventory=40)
    r = dp.solve(p)
    assert r.status == "solved"
    found = search_ss(p)
    assert r.optimal_cost <= dp.evaluate_policy(p, found.policy).optimal_cost + 1e-9


def test_absurd_lead_time_is_intractable_not_a_crash():
    p = Problem(horizon=90, demand=Demand.poisson(5), lost_sales=True, holding_cost=0.5, penalty_cost=3,
                setup_cost=1, lead_time=4380, max_inventory=60, max_order=30)
    r = dp.solve(p)
    assert r.status == "intractable" and r.states > 10**1000
    assert dp.evaluate_policy(p, BaseStockPolicy(30)).status == "intractable"


# ---- the compiled passes against their numpy references, and the statuses ----------------------------------


@pytest.mark.parametrize("mode", ["always", "never"])  # the compiled passes, and the numpy path small DPs take
@pytest.mark.parametrize("kw", [dict(lead_time=2), dict(lead_time=3, setup_cost=4), dict(lead_time=1),
                                dict(lead_time=2, lost_sales=False, perishable=True)])
def test_fused_passes_equal_numpy_reference(kw, mode):
    from inventory.compiled import forced

    p = tiny(max_inventory=14, max_order=5, **kw)
    b = dp._cap_bounds(p, dp.Bounds(0 if p.lost_sales else -4, 12, 5))
    m = dp._build(p, b)
    F = np.random.default_rng(0).random((b.A, m.rest_sum.size)) * 10
    W = dp._continuation(m, F)
    ref_v, ref_q = dp._best_order_reference(m, W, m.c)
    with forced(mode):
        v, q = dp._best_order(m, W, None, m.c)
        v2, q2 = dp._backup(m, F)  # L >= 2: one shift at a time, no W array
    np.testing.assert_array_equal(v, ref_v)
    np.testing.assert_array_equal(q, ref_q)
    assert np.any(ref_q > 0) and (p.lead_time < 2 or np.any(m.cap < 0))  # orders and infeasible states exercised
    np.testing.assert_allclose(v2, ref_v, rtol=1e-13)
    np.testing.assert_array_equal(q2, ref_q)


@pytest.mark.parametrize("kw, convolved", [
    (dict(lead_time=2), True),
    (dict(lead_time=3, setup_cost=4, demand=Demand.poisson(3.5)), True),
    (dict(lead_time=3, demand=Demand.uniform(1, 4)), True),
    (dict(lead_time=2, perishable=True), True),  # next on-hand always 0: p = 0, only the lumped column
    (dict(lead_time=2, lost_sales=False, perishable=True), False),
])
def test_convolved_backup_equals_the_dense_product(kw, convolved):
    """The partial-convolution backup (lost sales from stock 0) gives the dense backup's values and orders."""
    from inventory.compiled import forced
    from inventory.kernel_dp import convolved_backup

    p = tiny(max_inventory=14, max_order=5, **kw)
    b = dp._cap_bounds(p, dp.Bounds(0 if p.lost_sales else -4, 12, 5))
    m = dp._build(p, b)
    assert (m.convolution is not None) == convolved
    if not convolved:
        return
    pmf, tail = m.convolution
    A = b.A
    rebuilt = np.tril(pmf[np.clip(np.subtract.outer(np.arange(A), np.arange(A)), 0, A - 1)])
    rebuilt[:, 0] = tail
    np.testing.assert_array_equal(rebuilt, m.M)  # the form it found is M itself
    F = np.random.default_rng(1).random((b.A, m.rest_sum.size)) * 10
    with forced("always"):
        ref_v, ref_q = dp._backup_by_shift(m, F)
    v, q = convolved_backup(np.vstack([F, np.full((b.Q, F.shape[1]), dp.BIG)]), pmf, tail, m.cap, m.K, m.c, b.Q)
    assert np.any(m.cap < 0) and np.any(ref_q > 0)  # infeasible states and orders exercised
    np.testing.assert_allclose(v, ref_v, rtol=1e-13)
    np.testing.assert_array_equal(q, ref_q)
    # a fixed policy (orders beyond the room and negative ones included) is evaluated the same way
    policy_q = np.random.default_rng(2).integers(-2, b.Q + 3, size=m.cap.shape)
    with forced("never"):
        ref_v, ref_q = dp._backup(m, F, policy_q)
    with forced("always"):
        v, q = dp._backup(m, F, policy_q)
    np.testing.assert_allclose(v, ref_v, rtol=1e-13)
    np.testing.assert_array_equal(q, ref_q)


def test_bounded_status_when_explicit_bounds_bind():
    p = Problem(horizon=15, demand=Demand.poisson(6), lost_sales=True, holding_cost=0.2, penalty_cost=20,
                setup_cost=0, lead_time=1, max_inventory=200, max_order=200, initial_inventory=0)
    r = dp.solve(p, bounds=dp.Bounds(0, 6, 3))  # far below what the optimum orders
    assert r.status == "bounded" and r.gap is None and "bound" in r.reason
    wide = dp.solve(p)
    assert wide.status == "solved" and r.optimal_cost > wide.optimal_cost  # the truncated answer is worse
    d = r.as_dict()
    assert d["status"] == "bounded" and d["gap"] is None and d["reason"] == r.reason


def test_bounded_after_the_last_doubling_reports_the_doubling_gain(monkeypatch):
    p = Problem(horizon=15, demand=Demand.poisson(6), lost_sales=True, holding_cost=0.2, penalty_cost=20,
                setup_cost=0, lead_time=1, max_inventory=200, max_order=200, initial_inventory=0)
    small = dp.Bounds(0, 4, 2)
    first = dp.solve(p, bounds=small)
    second = dp.solve(p, bounds=dp.Bounds(0, 8, 4))
    monkeypatch.setattr(dp, "default_bounds", lambda _p: small)  # start tight, allow one doubling
    r = dp.solve(p, doublings=1)
    assert first.status == second.status == "bounded"
    assert r.status == "bounded" and r.bounds == {"lo": 0, "hi": 8, "qmax": 4}
    assert r.optimal_cost == pytest.approx(second.optimal_cost)
    assert r.gap == pytest.approx(first.optimal_cost - second.optimal_cost) and r.gap > 0


def test_the_work_budget_covers_the_bound_doublings():
    """A server's DP budget (max_work) is for the whole solve: once a doubling would pass it, the last solve is
    reported "bounded" with the reason, instead of widening on (this backlog DP needs four doublings, 5 s)."""
    p = Problem(horizon=30, demand=Demand.normal(43.7, 3.53), lost_sales=False, holding_cost=18.9, penalty_cost=127,
                setup_cost=123, lead_time=5, max_inventory=1639, max_order=871)
    first = dp.state_count(p, dp._cap_bounds(p, dp.default_bounds(p)))[1] * p.horizon
    r = dp.solve(p, max_work=3 * first)
    assert r.status == "bounded" and "over the DP's budget" in r.reason
    assert r.bounds == dp._bounds_dict(dp._cap_bounds(p, dp.default_bounds(p)))  # the first bounds, solved once
    assert dp.solve(p, max_work=first / 2).status == "intractable"


def test_not_converged_status_reports_the_odoni_bounds():
    p = Problem(horizon=50, demand=Demand.poisson(5), lost_sales=True, holding_cost=1, penalty_cost=9,
                setup_cost=0, lead_time=2, max_inventory=200, max_order=200)
    r = dp.solve(p, objective="average", max_iter=3)
    assert r.status == "not converged" and r.gap > 0 and r.policy is not None
    assert abs(r.optimal_cost - 6.09) <= r.gap / 2 + 0.01  # Zipkin's value lies within the reported bounds
    ok = dp.solve(p, objective="average")
    assert ok.status == "solved" and ok.gap is None
    ev = dp.evaluate_policy(p.with_(max_inventory=40, max_order=40), BaseStockPolicy(16), objective="average",
                            max_iter=2)
    assert ev.status == "not converged" and ev.gap > 0


def test_average_cost_converges_on_a_periodic_chain():
    """Near-deterministic demand and a large setup cost make the (s,S) chain cycle; undamped value iteration
    oscillated for 20,000 backups here ("not converged", 11 s). The damped iteration converges, and the value is
    the long-run cost a simulation sees."""
    p = Problem(horizon=208, demand=Demand.uniform(32, 34), lost_sales=True, holding_cost=13.58, penalty_cost=21.17,
                setup_cost=476.7, lead_time=1, max_inventory=400, max_order=300)
    r = dp.solve(p, objective="average", max_iter=2_000)
    assert r.status == "solved", r.reason
    ev = dp.evaluate_policy(p, SSPolicy(40, 140), objective="average", max_iter=2_000)
    assert ev.status == "solved", ev.reason
    assert r.optimal_cost <= ev.optimal_cost + 1e-6
    (mc,) = evaluate(p.with_(horizon=4000), [SSPolicy(40, 140)], replications=200, seed=3)
    assert ev.optimal_cost == pytest.approx(mc.mean_cost / 4000, rel=0.01)


def test_warm_start_after_doubling_gives_the_same_optimum_in_fewer_backups():
    p = Problem(horizon=50, demand=Demand.poisson(5), lost_sales=True, holding_cost=1, penalty_cost=9,
                setup_cost=0, lead_time=2, max_inventory=200, max_order=200)
    b = dp._cap_bounds(p, dp.default_bounds(p))
    cold = dp._solve_with(p, b, "average", 1e-7, 20_000)
    small = dp.Bounds(b.lo, b.hi - 4, b.qmax - 2)
    warm_from = dp._solve_with(p, small, "average", 1e-7, 20_000)
    counts = []
    for warm in (None, dp._embed(warm_from.F, small, b, p)):
        n = [0]
        orig = dp._backup

        def counting(*a, _orig=orig, _n=n, **k):
            _n[0] += 1
            return _orig(*a, **k)

        dp._backup = counting
        try:
            sol = dp._solve_with(p, b, "average", 1e-7, 20_000, warm)
        finally:
            dp._backup = orig
        assert sol.cost == pytest.approx(cold.cost, abs=1e-6)
        counts.append(n[0])
    assert counts[1] < counts[0]
