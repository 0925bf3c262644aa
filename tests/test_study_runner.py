"""The study sweep on a local Ray: parquet rows per unit, resume redoes nothing, failures become rows,
worker deaths are retried, seeds make a unit reproducible outside Ray; the CLI around it."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import ray

from agents.generator import generate_instance
from evaluation.runner import StudyError, StudyMetrics, load_results, run_study
from evaluation.scoring import score_outcomes
from evaluation.study import StudyConfig, plan_study
from evaluation.study_units import USAGE_COLUMNS, run_unit
from experiments import cli

try:
    from tests.fault_injection import FaultyRunner
except ImportError:  # pytest's default rootdir-less import mode puts tests/ itself on sys.path
    from fault_injection import FaultyRunner


@pytest.fixture(scope="module")
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def tiny(name: str, **kw) -> StudyConfig:
    return StudyConfig(name=name, instances=3, trials=1, replications=300, opt_replications=300,
                       opt_search_replications=200, max_turns=30, **kw)


@pytest.fixture(scope="module")
def tiny_run(local_ray, tmp_path_factory):
    out = tmp_path_factory.mktemp("study") / "tiny"
    markers = tmp_path_factory.mktemp("markers")
    cfg = tiny("tiny")
    faults = FaultyRunner(fail_units=("i0001-B-t0",), crash_once=("i0002-C-t0",), marker_dir=markers)
    summary = run_study(cfg, out, progress=False, runner=faults)
    assert (markers / "crashed-tiny-i0002-C-t0").exists()  # the worker really died once
    return cfg, out, summary


def test_tiny_study_writes_one_row_per_unit(tiny_run):
    cfg, out, s = tiny_run
    df = load_results(out)
    assert s.executed == 9 and s.skipped == 0 and s.infra_failures == 0
    assert len(df) == 9 and set(df["treatment"]) == {"A", "B", "C"}
    assert json.loads((out / "config.json").read_text())["config"]["instances"] == 3
    assert len(list((out / "units").glob("batch-*.parquet"))) == 3  # one batch per instance
    ok = df[df["status"] == "ok"]
    assert (ok["mc_cost"] > 0).all() and ok["oracle_cost"].notna().all()
    # C and B are the textbook stand-in, scored on the truth with the instance's common random numbers
    assert set(ok.loc[ok["treatment"] != "A", "consultant"]) == {"textbook consultant (offline stand-in for the LLM)"}
    assert df.groupby("instance_id")["score_seed"].nunique().eq(1).all()
    # offline units make no model calls: the accounting columns exist and are zero
    assert set(USAGE_COLUMNS) <= set(df.columns) and (df[list(USAGE_COLUMNS)] == 0).all().all()
    assert s.mode == "tasks" and s.cost_usd == 0


def test_failing_unit_is_a_row_and_the_sweep_goes_on(tiny_run):
    _, out, s = tiny_run
    df = load_results(out).set_index("unit_id")
    assert df.loc["i0001-B-t0", "status"] == "failed"
    assert "forced failure" in df.loc["i0001-B-t0", "reason"] and df.loc["i0001-B-t0", "stage"] == "exception"
    assert df.loc["i0001-C-t0", "status"] == "ok"
    # the worker that died on i0002-C-t0 was retried by Ray: the unit is an ordinary ok row, not a failure
    assert df.loc["i0002-C-t0", "status"] == "ok"
    assert s.failed == int((df["status"] == "failed").sum()) == 1


def test_resume_redoes_nothing_finished(tiny_run):
    cfg, out, _ = tiny_run
    before = sorted(p.name for p in (out / "units").glob("*.parquet"))
    again = run_study(cfg, out, resume=True, progress=False)
    assert again.executed == 0 and again.skipped == 9 and again.batches == 0
    assert sorted(p.name for p in (out / "units").glob("*.parquet")) == before
    with pytest.raises(StudyError, match="--resume"):
        run_study(cfg, out, progress=False)
    with pytest.raises(StudyError, match="replications"):
        run_study(StudyConfig(**{**cfg.__dict__, "replications": 50}), out, resume=True, progress=False)


def test_killed_run_resumes_only_the_missing_units(local_ray, tmp_path):
    cfg = tiny("partial", treatments=("B", "C"))
    out = tmp_path / "partial"
    run_study(cfg, out, progress=False)
    files = sorted((out / "units").glob("batch-*.parquet"))
    lost = pd.read_parquet(files[0])["unit_id"].tolist()
    files[0].unlink()  # as if the run had been killed before this batch landed
    again = run_study(cfg, out, resume=True, progress=False)
    assert again.executed == len(lost) == 2 and again.skipped == 4
    assert sorted(load_results(out)["unit_id"]) == sorted(u.unit_id for u in plan_study(cfg).units)


def test_a_unit_reruns_identically_outside_ray(tiny_run):
    cfg, out, _ = tiny_run
    row = load_results(out).set_index("unit_id").loc["i0002-C-t0"]
    plan = plan_study(cfg)
    unit = next(u for u in plan.units if u.unit_id == "i0002-C-t0")
    inst = generate_instance(cfg.seed_key, 2)
    again = score_outcomes(inst, [run_unit(unit, inst, cfg)], cfg)[0]
    assert again["mc_cost"] == row["mc_cost"] and again["policy_label"] == row["policy_label"]


def test_metrics_track_gaps():
    m = StudyMetrics("m", total=4)
    rows = [{"instance_id": "i0", "trial": 0, "treatment": t, "status": "ok", "mc_cost": c}
            for t, c in (("A", 90.0), ("B", 100.0), ("C", 120.0))]
    m.record(rows + [{"instance_id": "i1", "trial": 0, "treatment": "B", "status": "failed", "mc_cost": float("nan")}])
    assert m.done == 4
    assert m.gaps["A_vs_B"] == pytest.approx(0.1) and m.gaps["A_vs_C"] == pytest.approx(0.25)


def test_cli_study_report_and_bad_input(tiny_run, tmp_path, capsys):
    _, out, _ = tiny_run
    assert cli.main(["study", "--instances", "0", "--out", str(tmp_path / "x")]) == 2
    assert cli.main(["study", "--instances", "2", "--treatments", "A,Z", "--out", str(tmp_path / "x")]) == 2
    assert cli.main(["study", "--persona", "nobody", "--out", str(tmp_path / "x")]) == 2
    assert cli.main(["report", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.count("askopt: error:") == 4 and "treatments" in err and "persona" in err
    assert cli.main(["report", str(out)]) == 0
    assert (out / "report" / "report.md").exists() and "report.md" in capsys.readouterr().out
    assert cli.main(["submit"]) == 2
