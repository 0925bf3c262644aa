"""Parameter table: parsing the forms people and LLMs write, validation naming the field."""

import json
from pathlib import Path

import pytest

from inventory.demand import Demand, parse_demand
from inventory.problem import ParameterError, Problem
from inventory.spec import PARAMETERS, ParameterTable, load_problem

BIKE = {
    "time_horizon": "90 days",
    "demand_type": "random",
    "demand_distribution": "poisson(8)",
    "perishability": "non-perishable",
    "state_transition_model": "lost sale",
    "holding_cost": "$0.50/unit/day",
    "penalty_cost": "$2.83 per lost unit",
    "setup_cost": 3,
    "lead_time": "10 days",
    "max_inventory": "80 units",
    "max_order": 25,
    "risk_tolerance": "3",
}


def test_json_string_forms_give_the_problem():
    p = ParameterTable.from_json(BIKE).to_problem()
    assert p.horizon == 90 and p.lead_time == 10 and p.max_inventory == 80 and p.max_order == 25
    assert p.demand == Demand.poisson(8)
    assert p.lost_sales is True and p.perishable is False
    assert p.holding_cost == pytest.approx(0.5) and p.penalty_cost == pytest.approx(2.83)
    assert p.setup_cost == 3 and p.risk_tolerance == 3


def test_csv_round_trip(tmp_path):
    table = ParameterTable.from_json(BIKE)
    path = tmp_path / "extracted_params.csv"
    table.to_csv(path)
    text = path.read_text().splitlines()
    assert text[0] == "Parameter,Value,Unit,Status"
    assert len(text) == 1 + len(PARAMETERS)
    again = ParameterTable.from_csv(path)
    assert again.to_problem() == table.to_problem()
    assert load_problem(path) == table.to_problem()


def test_csv_statuses_are_respected():
    csv_text = "Parameter,Value,Unit,Status\ntime_horizon,90,days,defined\nlead_time,,days,undefined\n" \
               "holding_cost,0.5,$/unit/day,conflict\n"
    t = ParameterTable.from_csv(csv_text)
    assert t.status("time_horizon") == "defined" and t.get("time_horizon") == 90
    assert t.status("lead_time") == "undefined"
    assert t.status("holding_cost") == "conflict"
    assert "holding_cost" in t.conflicts() and not t.is_complete()
    with pytest.raises(ParameterError, match="holding_cost"):
        t.to_problem()


@pytest.mark.parametrize(
    "text,expected",
    [
        ("poisson(6)", Demand.poisson(6)),
        ("Poisson( 6 )", Demand.poisson(6)),
        ("normal(10, 5)", Demand.normal(10, 5)),
        ("uniform(10,20)", Demand.uniform(10, 20)),
        ("12", Demand.deterministic(12)),
        (7, Demand.deterministic(7)),
        ([3, 4, 5, 4], Demand.empirical([3, 4, 5, 4])),
        ("empirical([1, 2, 2])", Demand.empirical([1, 2, 2])),
    ],
)
def test_demand_forms(text, expected):
    assert parse_demand(text) == expected


def test_empirical_history_file(tmp_path):
    (tmp_path / "sales.csv").write_text("date,sales\n2024-01-01,4\n2024-01-02,6\n2024-01-03,5\n")
    d = parse_demand("empirical(sales.csv)", base_dir=tmp_path)
    assert d.kind == "empirical" and d.values == (4, 6, 5)
    assert d.mean == pytest.approx(5.0)
    pmf = d.pmf()
    assert pmf.sum() == pytest.approx(1.0) and pmf[5] == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    "field,value,fragment",
    [
        ("holding_cost", "-1", "holding_cost"),
        ("penalty_cost", -2.5, "penalty_cost"),
        ("risk_tolerance", 11, "[-10, 10]"),
        ("risk_tolerance", "-10.5", "risk_tolerance"),
        ("lead_time", 2.5, "lead_time"),
        ("lead_time", "-1", "lead_time"),
        ("demand_distribution", "gamma(3, 2)", "allowed: poisson"),
        ("demand_distribution", "normal(10, -5)", "sd"),
        ("state_transition_model", "sometimes", "lost_sale, backlog"),
        ("perishability", "maybe", "perishable, non_perishable"),
        ("demand_type", "chaotic", "random, deterministic"),
        ("max_inventory", 0, "max_inventory"),
    ],
)
def test_bad_values_name_the_field(field, value, fragment):
    with pytest.raises(ParameterError) as exc:
        ParameterTable().set(field, value)
    assert field in str(exc.value) and fragment in str(exc.value)


def test_cross_field_rules():
    bad = dict(BIKE, max_order=100)
    with pytest.raises(ParameterError, match="max_order.*max_inventory"):
        ParameterTable.from_json(bad).to_problem()
    det = dict(BIKE, demand_type="deterministic", demand_distribution="normal(8, 2)")
    with pytest.raises(ParameterError, match="demand_distribution.*deterministic"):
        ParameterTable.from_json(det).to_problem()
    rnd = dict(BIKE, demand_type="random", demand_distribution="8")
    with pytest.raises(ParameterError, match="demand_type"):
        ParameterTable.from_json(rnd).to_problem()
    ok = dict(BIKE, demand_type="deterministic", demand_distribution="8")
    assert ParameterTable.from_json(ok).to_problem().demand == Demand.deterministic(8)


def test_missing_field_is_reported():
    partial = {k: v for k, v in BIKE.items() if k != "lead_time"}
    t = ParameterTable.from_json(partial)
    assert t.undefined() == ["lead_time"]
    with pytest.raises(ParameterError, match="lead_time.*undefined"):
        t.to_problem()


def test_problem_rejects_invalid_directly_and_round_trips_dict():
    with pytest.raises(ParameterError, match="max_order"):
        Problem(horizon=10, demand=Demand.poisson(3), lost_sales=True, holding_cost=1, penalty_cost=2,
                setup_cost=0, lead_time=1, max_inventory=10, max_order=11)
    p = ParameterTable.from_json(BIKE).to_problem()
    assert Problem.from_dict(json.loads(json.dumps(p.to_dict()))) == p


def test_units_convert_durations():
    t = ParameterTable()
    assert t.set("time_horizon", "3 months") == 90
    assert t.set("lead_time", "2 weeks") == 14
    assert t.set("time_horizon", "1 year") == 365


# ---- the input schema (inventory.schema): signs, non-finite numbers, shapes, files ----------------------------

@pytest.mark.parametrize("spelling", ["-$5", "\u22125", "minus 5", "(5)", "($5)", "$-5", "negative 5", "\uff0d5"])
def test_negative_money_is_refused_in_every_spelling(spelling):
    for field in ("holding_cost", "penalty_cost", "setup_cost"):
        with pytest.raises(ParameterError, match=f"^{field}:.*>= 0"):
            ParameterTable.from_json(dict(BIKE, **{field: spelling}))


def test_signs_read_as_written_where_negatives_are_allowed():
    t = ParameterTable()
    assert t.set("risk_tolerance", "minus 3") == -3
    assert t.set("risk_tolerance", "\u22122") == -2
    assert t.set("holding_cost", "$0.50/unit/day") == 0.5
    assert t.set("penalty_cost", "5 (five dollars)") == 5


@pytest.mark.parametrize("value", [1e999, float("nan"), "1e999", "nan", "inf", 10**400, "1e300"])
def test_non_finite_and_huge_numbers_are_refused(value):
    with pytest.raises(ParameterError, match="^holding_cost:.*(finite|between)"):
        ParameterTable.from_json(dict(BIKE, holding_cost=value))


@pytest.mark.parametrize("field", ["lead_time", "time_horizon", "max_inventory", "max_order"])
@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_non_finite_whole_numbers_are_refused_by_name(field, value):
    with pytest.raises(ParameterError, match=f"^{field}:"):
        ParameterTable.from_json(dict(BIKE, **{field: value}))


@pytest.mark.parametrize("demand", ["poisson(1e999)", "poisson(nan)", "normal(1e308, 1e308)", "empirical([1e999])",
                                    "empirical([nan])", "uniform(0, 1e13)", [1, float("inf")]])
def test_non_finite_demand_is_refused_by_name(demand):
    with pytest.raises(ParameterError, match="^demand_distribution:"):
        ParameterTable.from_json(dict(BIKE, demand_distribution=demand))


def test_demand_parsing_is_linear_in_the_text():
    import time

    from inventory.demand import DemandError, parse_demand

    t0 = time.perf_counter()
    with pytest.raises(DemandError, match="cannot read"):
        parse_demand("x" + " " * 500_000 + "y")  # a backtracking regex took minutes here
    assert time.perf_counter() - t0 < 1.0


@pytest.mark.parametrize("data, field", [
    ({**BIKE, "holding_cost": {"a": {"b": 5}}}, "holding_cost"),
    ({**BIKE, "lead_time": [1, 2]}, "lead_time"),
    ({**BIKE, "colour": "red"}, "parameter"),
    ([1, 2, 3], "json"),
])
def test_shape_errors_name_the_field(data, field):
    with pytest.raises(ParameterError) as info:
        ParameterTable.from_json(data)
    assert info.value.field == field


def test_params_files_are_checked_before_reading(tmp_path):
    from inventory.schema import MAX_PARAMS_BYTES

    for path, fragment in [(tmp_path, "directory"), (Path("/dev/zero"), "regular file"),
                           (tmp_path / "nope.json", "not found")]:
        with pytest.raises(ParameterError, match=fragment):
            load_problem(path)
    big = tmp_path / "big.json"
    big.write_text(" " * (MAX_PARAMS_BYTES + 1))
    with pytest.raises(ParameterError, match="bytes"):
        load_problem(big)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ParameterError, match="nested too deeply"):
        load_problem(deep)
    binary = tmp_path / "bin.csv"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ParameterError, match="PARAMS.*UTF-8"):
        load_problem(binary)
    huge_field = tmp_path / "field.csv"
    huge_field.write_text("Parameter,Value\nholding_cost," + "1" * 200_000 + "\n")
    with pytest.raises(ParameterError, match="^csv"):
        load_problem(huge_field)


def test_error_messages_stay_one_short_line():
    with pytest.raises(ParameterError) as info:
        ParameterTable.from_json(dict(BIKE, demand_type="x" * 100_000))
    assert len(str(info.value)) < 300 and "\n" not in str(info.value)


def _same_law(pmf, ref, tail):
    """pmf to 1e-10 relative; the lumped last entry is 1 - sum(rest), whose rounding is ~ n * eps absolute, so
    it is compared with the exact tail mass `tail` (scipy's own lump clips that noise at 0)."""
    import numpy as np

    np.testing.assert_allclose(pmf[:-1], ref[:-1], rtol=1e-10, atol=1e-300)
    assert abs(pmf[-1] - tail) <= pmf.size * 4.5e-16


def test_demand_laws_match_scipy_stats():
    """inventory.demand computes its laws without scipy for small supports (inventory.special: start-up cost);
    they must match scipy.stats: the same support (but for scipy's own 1 - tail rounding ties) and the pmf to
    1e-10 relative."""
    import numpy as np
    from scipy import stats

    rng = np.random.default_rng(7)
    for mu in np.concatenate([rng.uniform(0, 3000, 60), [0.5, 4, 8, 37.3, 150]]):
        d = Demand.poisson(mu)
        ref_n = int(stats.poisson.isf(1e-12, mu)) + 1
        assert d.support_max() == ref_n or (d.support_max() == ref_n + 1
                                            and abs(stats.poisson.sf(ref_n - 1, mu) - 1e-12) < 2.4e-16)
        k = np.arange(d.support_max() + 1)
        _same_law(d.pmf(), stats.poisson.pmf(k, mu), stats.poisson.sf(k[-1] - 1, mu))
    for m, sd in zip(rng.uniform(0, 500, 30), rng.uniform(0.01, 100, 30), strict=True):
        d = Demand.normal(m, sd)
        n = max(0, int(np.ceil(m + stats.norm.isf(1e-12) * sd)) + 1)
        assert d.support_max() == n
        k = np.arange(n + 1)
        ref = stats.norm.cdf(k + 0.5, m, sd) - stats.norm.cdf(k - 0.5, m, sd)
        ref[0] = stats.norm.cdf(0.5, m, sd)
        _same_law(d.pmf(), ref, stats.norm.sf(k[-1] - 0.5, m, sd))
