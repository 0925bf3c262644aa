"""`askopt solve`: table, JSON contract, --evaluate, artifacts, and one-line errors for bad input."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from experiments.cli import main

PARAMS = {
    "time_horizon": "30 days", "demand_type": "random", "demand_distribution": "poisson(4)",
    "perishability": "non_perishable", "state_transition_model": "lost_sale", "holding_cost": 0.5,
    "penalty_cost": 3, "setup_cost": 2, "lead_time": 1, "max_inventory": 30, "max_order": 15,
    "risk_tolerance": 0,
}


@pytest.fixture
def params(tmp_path):
    path = tmp_path / "params.json"
    path.write_text(json.dumps(PARAMS))
    return path


def test_json_contract_and_artifacts(params, tmp_path, capsys):
    out = tmp_path / "art"
    code = main(["solve", str(params), "--json", "--evaluate", "ss:5,20", "--evaluate", "bs:9",
                 "--out", str(out), "--replications", "300"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["objective"] == "finite"
    assert set(data["best_ss"]) >= {"s", "S", "cost", "exact_cost"}
    assert data["dp"]["status"] == "solved" and data["dp"]["states"] > 0
    assert {"status", "states", "optimal_cost", "seconds"} <= set(data["dp"])
    names = [p["name"] for p in data["policies"]]
    assert names == ["best_ss", "dp_optimal", "ss:5,20", "bs:9"]
    for p in data["policies"]:
        assert {"name", "params", "mean_cost", "std_cost", "objective"} <= set(p)
    assert data["dp"]["optimal_cost"] <= data["best_ss"]["exact_cost"] + 1e-9
    assert data["policies"][2]["params"] == {"s": 5, "S": 20}
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["lead_time"] == 1 and cfg["action_dim"] == 16
    table = pd.read_csv(out / "policy_evaluation_results.csv")
    assert "ss" in set(table["policy"]) and "dp_optimum_exact" in set(table["policy"])


def test_average_objective_reports_per_period(params, capsys, tmp_path):
    assert main(["solve", str(params), "--json", "--objective", "average", "--method", "ss",
                 "--out", str(tmp_path / "a"), "--replications", "100"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["objective"] == "average" and data["dp"] is None
    assert data["best_ss"]["cost"] < 20  # per period, not a 30-day total


def test_csv_input_and_human_output(tmp_path, capsys):
    from inventory.spec import ParameterTable

    csv_path = tmp_path / "extracted_params.csv"
    ParameterTable.from_json(PARAMS).to_csv(csv_path)
    assert main(["solve", str(csv_path), "--out", str(tmp_path / "o"), "--replications", "100"]) == 0
    text = capsys.readouterr().out
    assert "Best (s,S)" in text and "DP optimum" in text and "Parameter,Value,Unit,Status" in text


@pytest.mark.parametrize(
    "change,fragment",
    [
        ({"holding_cost": -1}, "holding_cost"),
        ({"risk_tolerance": 12}, "risk_tolerance"),
        ({"max_order": 99}, "max_order"),
        ({"demand_distribution": "weibull(2)"}, "demand_distribution"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, change, fragment):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**PARAMS, **change}))
    proc = subprocess.run([sys.executable, "-m", "experiments.cli", "solve", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and fragment in proc.stderr and "Traceback" not in proc.stderr


def test_bad_policy_spec_and_missing_file(params, tmp_path, capsys):
    assert main(["solve", str(params), "--evaluate", "ss:9"]) == 2
    assert "--evaluate" in capsys.readouterr().err
    assert main(["solve", str(tmp_path / "nope.csv")]) == 2
    assert "not found" in capsys.readouterr().err


def test_paper_examples_beat_the_end_to_end_llm_advice():
    from experiments.examples import EXAMPLES, LLM_ADVICE
    from optimization.solve import solve_json, solve_problem

    for name, problem in EXAMPLES.items():
        label, advice = LLM_ADVICE[name]
        report = solve_problem(problem, method="ss", extra=[(label, advice)], replications=500)
        policies = solve_json(report)["policies"]
        ours = next(p for p in policies if p["name"] == "best_ss")
        theirs = next(p for p in policies if p["name"] == label)
        assert ours["mean_cost"] < 0.85 * theirs["mean_cost"]  # the paper's point: the LLM's advice costs more


def test_out_naming_a_file_fails_before_any_work(params, tmp_path, capsys, monkeypatch):
    import optimization.solve

    def never(*a, **k):  # the solver must not be reached
        raise AssertionError("work started")

    monkeypatch.setattr(optimization.solve, "solve_problem", never)
    existing = tmp_path / "taken"
    existing.write_text("x")
    assert main(["solve", str(params), "--out", str(existing)]) == 2
    assert "--out" in capsys.readouterr().err
    assert main(["optimize", str(params), "--out", str(existing / "sub")]) == 2
    assert "--out" in capsys.readouterr().err


@pytest.mark.parametrize("argv, fragment", [
    (["solve", "{dir}"], "PARAMS"),
    (["solve", "{params}", "--seed", "-1"], "--seed"),
    (["solve", "{params}", "--replications", "1"], "--replications"),
    (["solve", "{params}", "--evaluate", "bs:99999999999999999999"], "--evaluate"),
    (["optimize", "{params}", "--out", "{dir}/o", "--dqn-seconds", "nan"], "--dqn-seconds"),
    (["optimize", "{params}", "--out", "{dir}/o", "--dqn-steps", "0"], "--dqn-steps"),
])
def test_cli_numbers_and_paths_are_one_line_errors(params, tmp_path, capsys, argv, fragment):
    argv = [a.format(dir=tmp_path, params=params) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err


def test_resource_estimate_refuses_before_work(tmp_path, capsys):
    path = tmp_path / "long.json"
    path.write_text(json.dumps({**PARAMS, "time_horizon": 3650}))
    assert main(["solve", str(path), "--replications", "100000", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.startswith("askopt: error: --replications:")
    path.write_text(json.dumps({**PARAMS, "time_horizon": 1e9}))
    assert main(["solve", str(path), "--out", str(tmp_path / "o")]) == 2
    assert "time_horizon" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_help_lists_every_command_without_importing_them():
    """`askopt --help` reads experiments.cli.COMMANDS; each module must register exactly its commands there."""
    import argparse
    import importlib

    from experiments import cli_solve
    from experiments.cli import COMMANDS
    from optimization.solve import METHODS

    assert cli_solve.METHODS == METHODS
    for module in sorted({m for m, _ in COMMANDS.values()}):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError:
            continue
        sub = argparse.ArgumentParser().add_subparsers()
        mod.register(sub)
        registered = {a.dest: a.help for a in sub._choices_actions}
        expected = {name: summary for name, (m, summary) in COMMANDS.items() if m == module}
        assert registered == expected, module
    code = ("import sys\nfrom experiments.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('pandas', 'scipy', 'openai', 'ray', 'torch') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and all(name in proc.stdout for name in COMMANDS)
    assert proc.stdout.strip().endswith("[]")
