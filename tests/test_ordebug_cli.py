"""CLI (`askopt iis`, `askopt bench ordebug`), the Ray runner with resume, the LLM agent against a real
local OpenAI-compatible server, and the resilience track."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from experiments.cli import main
from experiments.ordebug_run import run_benchmark
from ordebug.env import DebugEnv
from ordebug.metrics import episode_metrics
from ordebug.testing import data_file, small_instance

REPO = Path(__file__).resolve().parents[1]


def test_iis_cli_json_on_infeasible_model(capsys):
    assert main(["iis", str(data_file("itest2")), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "infeasible" and out["irreducible"] is True
    assert len(out["rows"]) == 3 and all(len(r) == 2 for r in out["rows"])
    assert out["seconds"] >= 0 and out["col_bounds"] == [["X1", "lower"]]


def test_iis_cli_text_and_feasible_model(capsys):
    assert main(["iis", str(data_file("galenet"))]) == 0
    assert "verified irreducible" in capsys.readouterr().out
    assert main(["iis", str(data_file("afiro"))]) == 0
    assert "feasible" in capsys.readouterr().out
    assert main(["iis", str(data_file("afiro")), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "feasible"


def test_iis_cli_bad_input_is_one_line_exit_2(tmp_path, capsys):
    bad = tmp_path / "junk.mps"
    bad.write_text("hello\n")
    assert main(["iis", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "junk.mps" in err and "Traceback" not in err
    assert main(["iis", str(tmp_path / "missing.mps")]) == 2
    assert "not found" in capsys.readouterr().err


def test_iis_console_script_subprocess():
    exe = Path(sys.executable).parent / "askopt"
    if not exe.exists():
        pytest.skip("askopt console script not installed")
    proc = subprocess.run([str(exe), "iis", str(data_file("woodinfe")), "--json"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["irreducible"] is True


@pytest.mark.parametrize("argv,needle", [
    (["--agent", "nobody"], "--agent must be one of"),
    (["--split", "moon"], "--split must be one of"),
    (["--iis", "maybe"], "--iis must be on or off"),
    (["--by", "colour"], "--by must be one of"),
    (["--per-model", "0"], "--per-model must be >= 1"),
    (["--seeds", "/nonexistent/dir"], "--seeds must be a directory"),
])
def test_bench_rejects_bad_arguments(argv, needle, capsys, tmp_path):
    assert main(["bench", "ordebug", "--out", str(tmp_path), *argv]) == 2
    assert needle in capsys.readouterr().err


def test_llm_agent_without_configuration_fails_cleanly(monkeypatch, capsys, tmp_path):
    for var in ("ASKOPT_LLM_BASE_URL", "ASKOPT_LLM_MODEL", "ASKOPT_LLM_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    assert main(["bench", "ordebug", "--agent", "llm", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "ASKOPT_LLM_BASE_URL" in err and err.count("\n") == 0


def test_bench_from_user_seeds_json_and_resume(tmp_path, capsys):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    shutil.copy(data_file("afiro"), seeds / "afiro.mps")
    out = tmp_path / "out"
    argv = ["bench", "ordebug", "--agent", "drop", "--seeds", str(seeds), "--per-model", "2", "--out", str(out),
            "--no-ray", "--json"]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 1
    assert set(rows[0]) >= {"RR@5", "RR@10", "RR@20", "DA", "OP", "TE", "FP", "rational", "n"}
    assert rows[0]["n"] == 2 and rows[0]["split"] == "custom"
    first = pd.read_parquet(out / "episodes.parquet")
    assert len(first) == 2 and first["episode_id"].is_unique
    logs = sorted((out / "logs").glob("*.jsonl"))  # per-episode step logs
    assert len(logs) == 2
    steps = [json.loads(line) for line in logs[0].read_text().splitlines()]
    assert steps and {"step", "op", "args", "solver_calls", "result"} <= set(steps[0])
    assert any(s["op"] == "solve" for s in steps)
    # Rerun: nothing is redone (same rows, same timings).
    assert main(argv) == 0
    capsys.readouterr()
    again = pd.read_parquet(out / "episodes.parquet")
    assert len(again) == 2 and list(again["seconds"]) == list(first["seconds"])


def test_ray_runner_batches_episodes_and_records_failures(tmp_path):
    insts = [small_instance("inventory", "tighten_rhs"), small_instance("diet", "scale_row"),
             small_instance("transportation", "contradictory_row")]
    broken = small_instance("inventory", "integrality")
    broken = type(broken)(**{**broken.__dict__, "instance_id": "broken", "model": None})
    df = run_benchmark(insts + [broken], "heuristic", tmp_path, use_ray=True, progress=False)
    assert len(df) == 4
    ok = df[df["instance_id"] != "broken"]
    assert (ok["error"] == "").all() and ok["rational"].mean() == 1.0
    bad = df[df["instance_id"] == "broken"].iloc[0]
    assert bad["error"] and not bad["recovered"]


def _llm_server():
    """tests/llm_server.py is importable as `llm_server` (rootdir-relative) or `tests.llm_server`."""
    import llm.client  # noqa: F401
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        import llm_server
    finally:
        sys.path.pop(0)
    return llm_server


def test_llm_agent_zero_and_few_shot_against_scripted_server():
    server_mod = _llm_server()
    from llm.client import LLMConfig
    from ordebug.agents.llm_agent import LLMAgent

    inst = small_instance("inventory", "tighten_rhs")
    row, before = inst.edit["row"], inst.edit["before"]
    script = [
        {"tool_calls": [{"name": "get_iis", "arguments": {}}]},
        {"tool_calls": [{"name": "inspect_row", "arguments": {"name": row}}]},
        {"tool_calls": [{"name": "set_rhs", "arguments": {"row": row, "value": before}}]},
        {"tool_calls": [{"name": "solve", "arguments": {}}]},
        {"tool_calls": [{"name": "diagnose", "arguments": {"root_cause": [f"row:{row}"], "conflict": [f"row:{row}"]}},
                        {"name": "submit", "arguments": {}}]},
    ]
    for few_shot in (False, True):
        with server_mod.ScriptedOpenAIServer(list(script)) as srv:
            env = DebugEnv(inst)
            LLMAgent(LLMConfig(base_url=srv.base_url, model="scripted"), few_shot=few_shot).run(env)
            assert len(srv.requests) == 5
            system = srv.requests[0]["messages"][0]["content"]
            assert ("Example." in system) == few_shot
            assert {t["function"]["name"] for t in srv.requests[0]["tools"]} >= {"solve", "get_iis", "drop_row"}
            # The tool result of get_iis went back to the model.
            assert any(m.get("role") == "tool" and "rows" in m["content"] for m in srv.requests[1]["messages"])
        m = episode_metrics(inst, env.log)
        assert m["recovered"] and m["calls_to_recover"] == 2 and m["DA"] == 1.0 and m["rational"] == 1.0


def test_llm_agent_survives_unknown_tools_and_plain_answers():
    server_mod = _llm_server()
    from llm.client import LLMConfig
    from ordebug.agents.llm_agent import LLMAgent

    inst = small_instance("diet", "scale_row")
    script = [{"tool_calls": [{"name": "teleport", "arguments": {}}]}, "I give up."]
    with server_mod.ScriptedOpenAIServer(script) as srv:
        env = DebugEnv(inst)
        LLMAgent(LLMConfig(base_url=srv.base_url, model="scripted")).run(env)
        assert "unknown tool" in srv.requests[1]["messages"][-1]["content"]
    assert env.log.done and env.log.recovered_at is None
    assert episode_metrics(inst, env.log)["RR@20"] == 0.0


def test_resilience_track_heuristic_keeps_service_and_finds_bottleneck():
    from ordebug.agents.drop_all import DropAllAgent
    from ordebug.agents.heuristic import HeuristicAgent
    from ordebug.resilience import build_resilience, resilience_metrics

    insts = build_resilience(n=3, seed=0)
    assert insts and all(i.meta["track"] == "resilience" and i.meta["levers"] for i in insts)
    # All three disruption types break a plan, lane loss included (capacity on the surviving lanes).
    assert {i.operator for i in insts} == {"plant_outage", "lane_loss", "demand_spike"}
    for inst in insts:
        env = DebugEnv(inst)
        locked = inst.root[0].split(":", 1)[1]
        if inst.root[0].startswith("col:"):
            assert "locked" in env.step({"op": "set_bound", "col": locked, "side": "upper", "value": 99})["error"]
        HeuristicAgent().run(env)
        res = resilience_metrics(inst, env.log)
        assert env.log.recovered_at is not None and res["bottleneck_found"] == 1.0
        env2 = DebugEnv(inst)
        DropAllAgent().run(env2)
        assert res["service_level"] >= resilience_metrics(inst, env2.log)["service_level"]


def test_shared_data_dir_env_override(monkeypatch, tmp_path):
    from ordebug.instances import shared_data_dir

    monkeypatch.setenv("ASKOPT_SHARED_DATA", str(tmp_path))
    assert shared_data_dir() == tmp_path
    monkeypatch.delenv("ASKOPT_SHARED_DATA")
    assert shared_data_dir() == REPO.parent / "shared" / "data"
    assert os.path.isabs(shared_data_dir())


def test_bench_on_instances_in_the_published_layout(tmp_path, capsys):
    """`--instances DIR`: dataset.json + models/*.mps as the OR-Debug-Bench authors publish them."""
    root = tmp_path / "published"
    (root / "models").mkdir(parents=True)
    problems = []
    for k, (fam, op) in enumerate([("inventory", "tighten_rhs"), ("diet", "scale_row")]):
        inst = small_instance(fam, op)
        inst.model.to_mps(root / "models" / f"p{k}.mps")
        problems.append({"problem_id": f"p{k}", "model_file": f"models/p{k}.mps", "error_type": op,
                         "target_name": inst.edit["row"], "iis_constraints": [r for r, _ in inst.iis["rows"]],
                         "original_objective": inst.original_objective})
    (root / "dataset.json").write_text(json.dumps(problems))
    out = tmp_path / "out"
    assert main(["bench", "ordebug", "--instances", str(root), "--out", str(out), "--no-ray", "--json",
                 "--quiet"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["split"] == "external" and rows[0]["n"] == 2 and rows[0]["RR@5"] == 1.0
    assert rows[0]["DA"] == 1.0 and rows[0]["rational"] == 1.0
    (root / "dataset.json").write_text("{not json")
    assert main(["bench", "ordebug", "--instances", str(root), "--out", str(out), "--no-ray"]) == 2
    assert "dataset.json" in capsys.readouterr().err
