"""Resource limits decided before work starts (optimization.limits) and no file access from request data."""

import pytest

from inventory.demand import DemandError, parse_demand
from inventory.spec import ParameterTable
from optimization.limits import Plan, ResourceLimitError, check, estimate

GT = {
    "time_horizon": 60, "demand_type": "random", "demand_distribution": "poisson(6)",
    "perishability": "non_perishable", "state_transition_model": "lost_sale", "holding_cost": 0.4,
    "penalty_cost": 3.0, "setup_cost": 2, "lead_time": 2, "max_inventory": 60, "max_order": 30,
    "risk_tolerance": 1,
}


def _problem(**changes):
    return ParameterTable.from_json({**GT, **changes}).to_problem()


def test_the_example_is_priced_and_allowed():
    est = check(_problem(), Plan(("ss", "dp"), replications=2000))
    assert est.dp_states == 1891  # inventory.dp.state_count under its default bounds, reused
    assert est.mc_cells["final_scoring"] == 2 * 2000 * 60
    assert 0 < est.seconds < 30 and est.memory_bytes < 2**30


@pytest.mark.parametrize("changes, field", [
    ({"demand_distribution": "poisson(3e9)"}, "demand_distribution"),
    ({"demand_distribution": "uniform(0, 1000000000000)"}, "demand_distribution"),
    ({"max_inventory": 1_000_000, "max_order": 100}, "max_inventory"),
    ({"time_horizon": 1_000_000_000}, "time_horizon"),
    ({"lead_time": 100_000}, "lead_time"),
    ({"demand_distribution": "normal(10, 2)", "holding_cost": 0, "setup_cost": 50}, "holding_cost"),
])
def test_refusals_name_the_field_and_cost_nothing(changes, field):
    import time

    t0 = time.perf_counter()
    with pytest.raises(ResourceLimitError) as info:
        check(_problem(**changes), Plan())
    assert info.value.field == field and str(info.value).startswith(field + ":")
    assert "limit" in str(info.value)
    assert time.perf_counter() - t0 < 1.0  # priced by arithmetic, not by trying


def test_replications_and_policies_are_limited():
    with pytest.raises(ResourceLimitError, match="^replications:"):
        check(_problem(), Plan(("ss",), replications=10_000_000))
    with pytest.raises(ResourceLimitError, match="^evaluate:"):
        check(_problem(), Plan(("ss",), extra_policies=10_000))
    with pytest.raises(ValueError, match="methods"):
        estimate(_problem(), Plan(("dqn",)))


def test_cells_grow_with_capacity_and_horizon():
    small, big = estimate(_problem()), estimate(_problem(max_inventory=600))
    assert big.mc_cells["base_stock_screen"] > 9 * small.mc_cells["base_stock_screen"]
    longer = estimate(_problem(time_horizon=120))
    assert longer.mc_cells["final_scoring"] == 2 * small.mc_cells["final_scoring"]


def test_empirical_files_refused_when_not_allowed(tmp_path):
    (tmp_path / "h.csv").write_text("3\n4\n5\n")
    assert parse_demand("empirical(h.csv)", base_dir=tmp_path).values == (3, 4, 5)
    with pytest.raises(DemandError, match="inline"):
        parse_demand("empirical(h.csv)", base_dir=tmp_path, allow_files=False)
    assert parse_demand("empirical([3, 4, 5])", allow_files=False).values == (3, 4, 5)
    with pytest.raises(DemandError, match="not a regular file"):
        parse_demand("empirical(/dev/zero)")
    with pytest.raises(DemandError, match="not a regular file"):
        parse_demand(f"empirical({tmp_path})")
