"""Property tests (hypothesis) for every input path the CLI owns: the parameter table (dicts, JSON text, CSV
text), the demand strings, money in every spelling, and `askopt` argument vectors. The property is always the
same: a value is either accepted and normalised, or refused with one line naming the field; nothing else
(no traceback, no other exception type, no silent sign flip). The long run is benchmarks/bench_fuzz.py."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inventory.demand import Demand, DemandError, parse_demand
from inventory.problem import ParameterError
from inventory.spec import PARAMETERS, ParameterTable

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ALIASES = ["horizon", "h", "p", "k", "lead", "capacity", "lambda", "demand", "Holding Cost", "risk"]
BASE = {
    "time_horizon": 30, "demand_type": "random", "demand_distribution": "poisson(4)",
    "perishability": "non_perishable", "state_transition_model": "lost_sale", "holding_cost": 0.5,
    "penalty_cost": 3, "setup_cost": 2, "lead_time": 1, "max_inventory": 30, "max_order": 15,
    "risk_tolerance": 0,
}
FIELDS = set(PARAMETERS) | {"parameter", "json", "csv", "csv header"} | {f"{p}.Status" for p in PARAMETERS}

numbers = st.one_of(st.integers(min_value=-(10**30), max_value=10**30), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([1e999, -1e999, float("nan"), 10**400, 1e-300, 0, -0.0, 2**63]))
money_text = st.builds(lambda pre, x, post: f"{pre}{x}{post}",
                       st.sampled_from(["", "$", "-$", "\u2212", "minus ", "(", "($", "USD ", "negative ", "~", "about "]),
                       st.one_of(st.integers(0, 10**12).map(str), st.floats(0, 1e6).map(lambda f: f"{f:.2f}"),
                                 st.sampled_from(["1e999", "nan", "inf", "1,200", ".5"])),
                       st.sampled_from(["", ")", "/unit/day", " per order", " dollars", ")/unit"]))
scalars = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=40), money_text,
                    st.sampled_from(["poisson(6)", "normal(10, 5)", "uniform(0, 1e12)", "3 weeks", "lost sale",
                                     "perishable", "random", "empirical([1, 2, 3])", "empirical(/dev/zero)"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                      max_leaves=8)
keys = st.one_of(st.sampled_from(list(PARAMETERS) + ALIASES), st.text(max_size=12))


def _is_field_error(exc: BaseException) -> bool:
    msg = str(exc)
    return isinstance(exc, ParameterError) and "\n" not in msg and len(msg) < 400 and exc.field in FIELDS


@FAST
@given(st.dictionaries(keys, values, max_size=14))
def test_any_table_is_accepted_or_refused_by_field(data):
    try:
        table = ParameterTable.from_json(data, allow_files=False)
    except ParameterError as exc:
        assert _is_field_error(exc), exc
        return
    try:
        problem = table.to_problem()
    except ParameterError as exc:
        assert _is_field_error(exc), exc
        return
    assert problem.holding_cost >= 0 and math.isfinite(problem.holding_cost)


@FAST
@given(st.sampled_from(list(PARAMETERS)), values)
def test_any_single_value_over_a_valid_table(field, value):
    try:
        problem = ParameterTable.from_json({**BASE, field: value}, allow_files=False).to_problem()
    except ParameterError as exc:
        assert _is_field_error(exc), exc
    else:
        for cost in ("holding_cost", "penalty_cost", "setup_cost"):
            assert 0 <= getattr(problem, cost) <= 1e9


@FAST
@given(money_text)
def test_money_never_changes_sign(text):
    """Accepted money equals what was written; anything written as negative is refused."""
    negative = any(s in text for s in ("-", "\u2212", "minus", "negative")) or ("(" in text and ")" in text)
    try:
        value = ParameterTable().set("setup_cost", text)
    except ParameterError as exc:
        assert exc.field == "setup_cost"
        return
    assert not negative or value == 0, (text, value)
    assert value >= 0


@FAST
@given(st.text(max_size=200))
def test_any_csv_text_is_read_or_refused(text):
    try:
        ParameterTable.from_csv("Parameter,Value,Unit,Status\n" + text, allow_files=False)
    except ParameterError as exc:
        assert _is_field_error(exc), exc


@FAST
@given(st.text(max_size=300))
def test_any_json_text_is_read_or_refused(text):
    try:
        ParameterTable.from_json(text if text.strip() else "{}", allow_files=False)
    except ParameterError as exc:
        assert _is_field_error(exc), exc


demand_args = st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr),
                                 st.integers(-(10**15), 10**15).map(str),
                                 st.sampled_from(["1e999", "nan", "-inf", "\u22125", "abc", "", "[1,2]"])),
                       max_size=4).map(", ".join)
demand_text = st.one_of(
    st.builds(lambda name, args: f"{name}({args})",
              st.sampled_from(["poisson", "normal", "uniform", "empirical", "gaussian", "fixed", "weibull", "",
                               " Poisson ", "pois son"]), demand_args),
    st.text(max_size=60),
    st.builds(lambda args: f"empirical([{args}])", demand_args),
)


@FAST
@given(demand_text)
def test_any_demand_string_is_a_model_or_a_named_refusal(text):
    try:
        d = parse_demand(text, allow_files=False)
    except DemandError as exc:
        assert str(exc).startswith("demand_distribution:") and "\n" not in str(exc) and len(str(exc)) < 400
        return
    assert isinstance(d, Demand) and parse_demand(d.describe()) == d  # the canonical form reads back


@FAST
@given(st.sampled_from(["poisson", "normal", "uniform"]), st.floats(0, 1e6), st.floats(0, 1e3))
def test_valid_demands_round_trip(kind, a, b):
    text = {"poisson": f"poisson({a})", "normal": f"normal({a}, {b})", "uniform": f"uniform({int(b)}, {int(b + a)})"}
    d = parse_demand(text[kind])
    assert parse_demand(d.describe()) == d


# ---- argument vectors: every askopt command this area owns, stopped at the service boundary ---------------------

OPTION_VALUES = st.one_of(st.integers(-(10**12), 10**12).map(str), st.sampled_from(
    ["nan", "inf", "-1", "0", "1e999", "", "x", "1.5", "2", "A,A", "A,B", "Z", "all", "average", "ss:5,20", "bs:9"]))
SOLVE_OPTS = ["--replications", "--seed", "--evaluate", "--objective", "--method", "--out"]
OPTIMIZE_OPTS = ["--replications", "--seed", "--dqn-steps", "--dqn-seconds", "--trainer", "--out"]
STUDY_OPTS = ["--instances", "--trials", "--seed", "--treatments", "--replications", "--max-turns", "--num-cpus",
              "--units-per-task", "--persona", "--design", "--out"]


@pytest.fixture
def stubbed(monkeypatch, tmp_path):
    """The service calls recorded instead of run: the property is about validation, not the solvers."""
    import evaluation.runner
    import optimization.service
    import optimization.solve

    calls = []
    monkeypatch.setattr(optimization.solve, "solve_problem", lambda *a, **k: calls.append("solve") or _Stop())
    monkeypatch.setattr(optimization.service.OptimizationAgent, "run", lambda *a, **k: calls.append("opt") or _Stop())
    monkeypatch.setattr(evaluation.runner, "run_study", lambda *a, **k: calls.append("study") or _Stop())
    params = tmp_path / "params.json"
    params.write_text(json.dumps(BASE))
    (tmp_path / "afile").write_text("x")
    return calls, params, tmp_path


class _Stop(Exception):
    """Raised by the result of a stubbed service call: validation passed and work would start."""

    def __getattr__(self, name):
        raise _Stop()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(st.sampled_from(["solve", "optimize", "study", "report"]),
       st.lists(st.tuples(st.sampled_from(sorted(set(SOLVE_OPTS + OPTIMIZE_OPTS + STUDY_OPTS))), OPTION_VALUES),
                max_size=4),
       st.sampled_from(["params", "dir", "afile", "missing", "devzero"]))
def test_argument_vectors_exit_0_or_2_with_one_line(stubbed, capsys, command, options, target):
    from experiments.cli import main

    calls, params, tmp = stubbed
    paths = {"params": str(params), "dir": str(tmp), "afile": str(tmp / "afile"), "missing": str(tmp / "nope"),
             "devzero": "/dev/zero"}
    argv = [command] + ([paths[target]] if command in ("solve", "optimize", "report") else [])
    for opt, value in options:
        argv += [opt, paths["afile"] if opt == "--out" and value == "x" else str(tmp / "o") if opt == "--out" else value]
    if command in ("optimize", "study") and "--out" not in argv:
        argv += ["--out", str(tmp / "o2")]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse: unknown option / bad type; its own two-line usage message
        code = exc.code
    except _Stop:
        code = 0  # validated and handed to the service
    err = capsys.readouterr().err
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in err
    if code == 2 and err.startswith("askopt: error:"):
        assert err.count("\n") == 1, err


@FAST
@given(st.floats(0, 1e6), st.floats(0, 1e3), st.floats(-10, 10))
def test_a_table_written_and_read_back_is_the_same_problem(mean, h, risk):
    """to_csv/from_csv and to_json/from_json keep every digit (a 6-digit format once turned poisson(100.9375)
    into poisson(100.938))."""
    problem = ParameterTable.from_json({**BASE, "demand_distribution": f"poisson({mean!r})", "holding_cost": h,
                                        "risk_tolerance": risk}).to_problem()
    table = ParameterTable.from_problem(problem)
    assert ParameterTable.from_csv(table.to_csv()).to_problem() == problem
    assert ParameterTable.from_json(table.to_json()).to_problem() == problem
