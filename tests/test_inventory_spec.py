"""Parameter table: parsing the forms people and LLMs write, validation naming the field."""

import json

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
