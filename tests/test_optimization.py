"""The Optimization Agent: candidates, risk arbitration, artifacts, CLI."""

import json

import pandas as pd
import pytest

from experiments.cli import main as cli_main
from inventory.demand import Demand
from inventory.montecarlo import evaluate
from inventory.problem import Problem
from inventory.spec import ParameterTable
from optimization.service import (
    FINAL_SEED_OFFSET,
    OptimizationAgent,
    OptimizationConfig,
    OptimizationResult,
    PolicyScore,
)


def _p(**kw) -> Problem:
    base = dict(horizon=20, demand=Demand.poisson(3), lost_sales=True, holding_cost=1.0, penalty_cost=9.0,
                setup_cost=0.0, lead_time=1, max_inventory=30, max_order=8)
    base.update(kw)
    return Problem(**base)


def test_no_dqn_path_scores_every_candidate(tmp_path):
    p = _p()
    res = OptimizationAgent(OptimizationConfig(dqn=False, replications=600)).run(p, out_dir=tmp_path)
    assert isinstance(res, OptimizationResult)
    names = [s.name for s in res.scores]
    assert names == ["ss", "base_stock", "dp"]
    assert all(isinstance(s, PolicyScore) for s in res.scores)
    assert res.winner.objective == min(s.objective for s in res.scores)
    assert res.runner_up is not None and res.runner_up.objective >= res.winner.objective
    assert res.best_ss.name == "ss" and set(res.best_ss.params) == {"s", "S"}
    assert res.best_ss.params["s"] <= res.best_ss.params["S"]
    expected = 0.0 if res.winner is res.best_ss else (
        (res.best_ss.objective - res.winner.objective) / abs(res.winner.objective) * 100)
    assert res.ss_extra_cost_pct == pytest.approx(expected)
    assert res.dp["status"] == "solved" and res.dp["optimal_cost"] > 0
    # the DP policy's simulated cost agrees with the exact optimum (fresh replications, within noise)
    dp_score = next(s for s in res.scores if s.name == "dp")
    assert abs(dp_score.mean_cost - res.dp["optimal_cost"]) < 4 * dp_score.stderr + 1e-9
    table = pd.read_csv(tmp_path / "policy_evaluation_results.csv")
    assert {"policy", "mean_cost", "std_cost", "s", "S", "objective"} <= set(table.columns)
    assert "dp_optimum_exact" in set(table["policy"])
    assert res.recommender() is None  # no DQN trained
    # every score has its policy object; re-evaluating it on the same seed reproduces the score
    for sc in res.scores:
        (again,) = evaluate(p, [res.policy_for(sc.name)], replications=600, seed=FINAL_SEED_OFFSET)
        assert again.mean_cost == pytest.approx(sc.mean_cost)
    with pytest.raises(KeyError, match="dqn"):
        res.policy_for("dqn")


def test_risk_arbitration_prefers_low_variance_when_risk_averse():
    p = _p(horizon=60, demand=Demand.poisson(5), setup_cost=20.0, max_inventory=60, max_order=20)
    cfg = OptimizationConfig(dqn=False, replications=800)
    averse = OptimizationAgent(cfg).run(p.with_(risk_tolerance=-10.0))
    seeking = OptimizationAgent(cfg).run(p.with_(risk_tolerance=10.0))
    assert averse.winner.std_cost == min(s.std_cost for s in averse.scores)
    assert seeking.winner.mean_cost == min(s.mean_cost for s in seeking.scores)
    assert averse.winner.name != seeking.winner.name  # lambda changed the decision
    for res in (averse, seeking):
        w = res.problem.risk_weight()
        for s in res.scores:
            assert s.objective == pytest.approx(s.mean_cost + w * s.std_cost)


def test_dqn_path_writes_artifacts(tmp_path):
    p = _p()
    cfg = OptimizationConfig(dqn=True, dqn_steps=12_000, dqn_seconds=45, replications=500)
    res = OptimizationAgent(cfg).run(p, out_dir=tmp_path)
    assert [s.name for s in res.scores] == ["ss", "base_stock", "dp", "dqn"]
    for name in ("config.json", "dqn_weights.pth", "policy_evaluation_results.csv"):
        assert (tmp_path / name).exists(), name
    cfg_json = json.loads((tmp_path / "config.json").read_text())
    assert cfg_json["lead_time"] == 1 and cfg_json["max_inventory"] == 30 and cfg_json["horizon"] == 20
    table = pd.read_csv(tmp_path / "policy_evaluation_results.csv")
    assert {"dqn", "ss"} <= set(table["policy"])
    ss_row = table[table["policy"] == "ss"].iloc[0]
    assert int(ss_row["s"]) == res.best_ss.params["s"] and int(ss_row["S"]) == res.best_ss.params["S"]
    rec = res.recommender()
    out = rec.recommend_order(current_inventory=3, current_time_step=0, pipeline_orders=[2])
    assert 0 <= out["recommended_order"] <= 8 and isinstance(out["q_value"], float)
    assert res.dqn_training["steps"] > 0 and res.dqn_training["trainer"] == "torch"
    dqn = next(s for s in res.scores if s.name == "dqn")
    bs = next(s for s in res.scores if s.name == "base_stock")
    worse = dqn.objective > bs.objective
    assert worse == any("worse than base-stock" in n for n in res.notes)  # said honestly when it is
    opening = res.dqn_training["opening"]  # the shipped opening is in the artifacts and said when it changed
    assert cfg_json["opening_orders"] == (opening["opening"] if opening["applied"] else [])
    assert (opening["applied"] and opening["opening"] != opening["own_opening"]) == any(
        "re-chosen by rollouts" in n for n in res.notes)


def test_cli_optimize(tmp_path, capsys):
    params = tmp_path / "params.csv"
    ParameterTable.from_problem(_p()).to_csv(params)
    out = tmp_path / "out"
    assert cli_main(["optimize", str(params), "--out", str(out), "--no-dqn", "--replications", "300"]) == 0
    assert (out / "policy_evaluation_results.csv").exists()
    assert "winner" in capsys.readouterr().out
    assert cli_main(["optimize", str(tmp_path / "missing.csv"), "--out", str(out), "--no-dqn"]) == 2
    assert cli_main(["optimize", str(params), "--out", str(out), "--dqn-steps", "0"]) == 2
    err = capsys.readouterr().err
    assert "--dqn-steps" in err and err.count("\n") == 2  # one line per error


def test_config_validation():
    with pytest.raises(ValueError, match="dqn_trainer"):
        OptimizationConfig(dqn_trainer="tf")
    with pytest.raises(ValueError, match="replications"):
        OptimizationConfig(replications=1)
    with pytest.raises(TypeError, match="problem"):
        OptimizationAgent(OptimizationConfig(dqn=False)).run({"horizon": 3})


def test_solve_and_optimize_write_one_schema(tmp_path):
    """`askopt solve` and `askopt optimize` write config.json and the CSV through one module: same keys, columns."""
    from optimization.artifacts import CSV_COLUMNS, SCHEMA_VERSION, read_config

    params = tmp_path / "params.csv"
    ParameterTable.from_problem(_p()).to_csv(params)
    a, b = tmp_path / "solve", tmp_path / "optimize"
    assert cli_main(["solve", str(params), "--out", str(a), "--replications", "200"]) == 0
    assert cli_main(["optimize", str(params), "--out", str(b), "--no-dqn", "--replications", "200"]) == 0
    ca, cb = (json.loads((d / "config.json").read_text()) for d in (a, b))
    assert ca.keys() == cb.keys()
    assert ca["schema_version"] == cb["schema_version"] == SCHEMA_VERSION
    assert ca["state_dim"] == cb["state_dim"] == _p().lead_time + 3
    for d in (a, b):
        assert tuple(pd.read_csv(d / "policy_evaluation_results.csv").columns) == CSV_COLUMNS
        assert read_config(d).best_ss["s"] <= read_config(d).best_ss["S"]
    ta, tb = (pd.read_csv(d / "policy_evaluation_results.csv") for d in (a, b))
    assert "dp_optimum_exact" in set(ta["policy"]) and "dp_optimum_exact" in set(tb["policy"])
    bad = tmp_path / "old"
    bad.mkdir()
    (bad / "config.json").write_text(json.dumps({**ca, "schema_version": "askopt-deployment/1"}))
    with pytest.raises(ValueError, match="schema_version"):
        read_config(bad)
