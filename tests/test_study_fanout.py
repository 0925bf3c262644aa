"""LLM studies fanned out against the emulator (a real local HTTP server) on a local Ray: more dialogues in
flight than CPUs, token and cost columns in the parquet, the cluster-wide rate limiter, a dialogue actor
killed mid-run, the budget stop and --resume finishing without lost or duplicated rows."""

from __future__ import annotations

import pandas as pd
import pytest
import ray

from evaluation.runner import load_results, run_study
from evaluation.study import StudyConfig, plan_study
from evaluation.study_units import USAGE_COLUMNS
from llm.ratelimit import RateLimit
from serving.llm_emulator import EmulatorServer

try:
    from tests.fault_injection import FaultyRunner
except ImportError:  # pytest's default rootdir-less import mode puts tests/ itself on sys.path
    from fault_injection import FaultyRunner

PRICES = {"*": {"prompt_per_million": 1.0, "completion_per_million": 4.0}}


@pytest.fixture(scope="module")
def env():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    with EmulatorServer({"latency_mean": 0.25, "latency_sigma": 0.0}) as srv:
        yield srv
    ray.shutdown()


def llm_config(srv, name: str, instances: int = 2, **kw) -> StudyConfig:
    return StudyConfig(name=name, instances=instances, trials=1, replications=200, opt_replications=200,
                       opt_search_replications=100, max_turns=30, prices=PRICES,
                       llm={"base_url": srv.base_url, "model": "auto", "max_retries": 3}, **kw)


def test_dialogues_fan_out_beyond_the_cpus_with_tokens_in_the_parquet(env, tmp_path):
    srv = env
    before = srv.stats()
    cfg = llm_config(srv, "fan", instances=2)
    s = run_study(cfg, tmp_path / "fan", progress=False, max_concurrent_dialogues=16)
    df = load_results(tmp_path / "fan").set_index("unit_id")
    assert s.mode == "fanout" and s.executed == 6 and s.infra_failures == 0 and (df["status"] == "ok").all()
    # all 6 dialogues were waiting on the model at once on a 2-CPU Ray, and the server saw them overlap
    assert s.peak_dialogues == 6 > s.num_cpus == 2
    assert srv.stats()["max_in_flight"] >= 4
    assert sum(a["max_concurrent"] for a in s.actors) >= 4 and all(a["rss_max_mb"] > 0 for a in s.actors)
    # per-unit accounting: every unit's calls and tokens, matching the server's own counts
    assert set(USAGE_COLUMNS) <= set(df.columns)
    assert (df["llm_calls"] > 0).all() and (df["prompt_tokens"] > 0).all() and (df["completion_tokens"] > 0).all()
    after = srv.stats()
    assert df["llm_calls"].sum() == after["ok"] - before.get("ok", 0)
    assert df["prompt_tokens"].sum() == after["prompt_tokens"] - before.get("prompt_tokens", 0)
    expected = (df["prompt_tokens"] * 1.0 + df["completion_tokens"] * 4.0) / 1e6
    assert df["cost_usd"].to_numpy() == pytest.approx(expected.to_numpy())
    assert s.cost_usd == pytest.approx(df["cost_usd"].sum())
    assert (df["model_seconds"] >= 0.25 * df["llm_calls"] * 0.9).all()  # each call waited the latency
    # B talks 8 questions + advice, each judged: the per-treatment pattern of a real run
    assert (df.loc[df["treatment"] == "B", "llm_calls"] >= 10).all()


def test_rate_limiter_actor_spaces_the_whole_cluster(env, tmp_path):
    srv = env
    cfg = llm_config(srv, "limited", instances=1, treatments=("B", "C"))
    rpm = 240  # one send every 0.25 s across both dialogues
    s = run_study(cfg, tmp_path / "lim", progress=False, max_concurrent_dialogues=8, rate_limit=RateLimit(rpm=rpm))
    df = load_results(tmp_path / "lim")
    calls = int(df["llm_calls"].sum())
    assert (df["status"] == "ok").all() and df["limiter_seconds"].sum() > 0
    assert s.seconds >= (calls - 1) * 60 / rpm * 0.95  # never faster than the limit


def test_killed_dialogue_actor_and_budget_stop_then_resume(env, tmp_path, tmp_path_factory):
    srv = env
    cfg = llm_config(srv, "crash", instances=3, treatments=("B", "C"))
    out = tmp_path / "crash"
    markers = tmp_path_factory.mktemp("markers")
    # the actor running i0000-B-t0 dies once mid-dialogue; every dialogue it held is rescheduled
    faults = FaultyRunner(crash_once=("i0000-B-t0",), marker_dir=markers, delay=0.3)
    s = run_study(cfg, out, progress=False, max_concurrent_dialogues=2, runner=faults, budget_usd=1e-9)
    assert (markers / "crashed-crash-i0000-B-t0").exists()
    # the budget stops new batches once the first dialogues report their cost: the other batches are left
    assert s.budget_stopped and s.executed == 2
    first = load_results(out)
    assert (first["status"] == "ok").all()
    again = run_study(cfg, out, resume=True, progress=False, max_concurrent_dialogues=8, runner=faults)
    assert again.skipped == 2 and again.executed == 4 and not again.budget_stopped
    rows = pd.concat([pd.read_parquet(f) for f in (out / "units").glob("batch-*.parquet")])
    assert sorted(rows["unit_id"]) == sorted(u.unit_id for u in plan_study(cfg).units)  # each unit exactly once
    assert (rows["status"] == "ok").all()


@pytest.mark.slow
def test_kill_9_of_the_driver_then_resume_loses_and_duplicates_nothing(env, tmp_path):
    """`askopt study` against the emulator, SIGKILLed (with the Ray it started) once a batch has landed;
    `--resume` writes exactly the missing units."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    srv = env
    out = tmp_path / "killed"
    askopt = str(Path(sys.executable).parent / "askopt")
    cmd = [askopt, "study", "--instances", "4", "--treatments", "B,C", "--replications", "200", "--out", str(out),
           "--llm-base-url", srv.base_url, "--model", "auto", "--max-concurrent-dialogues", "2", "--num-cpus", "2",
           "--no-progress", "--no-dashboard"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_ADDRESS")}  # not this test's Ray
    log = open(tmp_path / "study.log", "w")
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=log, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + 900  # Ray start-up alone took 60 s on a loaded 2-core machine
    while not list((out / "units").glob("batch-*.parquet")) and time.monotonic() < deadline:
        assert proc.poll() is None, (tmp_path / "study.log").read_text()[-2000:]
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver and every process it started (its own local Ray)
    proc.wait()
    log.close()
    landed = {f.name for f in (out / "units").glob("batch-*.parquet")}
    assert 1 <= len(landed) < 4  # killed mid-run (a half-written .tmp file is never read)
    from evaluation.study import read_config

    cfg = read_config(out)
    s = run_study(cfg, out, resume=True, progress=False, max_concurrent_dialogues=4)
    rows = pd.concat([pd.read_parquet(f) for f in (out / "units").glob("batch-*.parquet")])
    assert s.skipped == 2 * len(landed) and s.executed == 8 - 2 * len(landed)
    assert sorted(rows["unit_id"]) == sorted(u.unit_id for u in plan_study(cfg).units)  # each exactly once
