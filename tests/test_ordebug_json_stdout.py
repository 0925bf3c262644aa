"""Every `--json` command of askopt, run as a real subprocess: stdout must be exactly one JSON document.

Why a subprocess: HiGHS writes its banner with C-level writes to file descriptor 1, which pytest's
`capsys` never sees; only a child process's real stdout shows it (highspy 1.16 broke this once).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ordebug.testing import data_file

PARAMS = {
    "time_horizon": "30 days", "demand_type": "random", "demand_distribution": "poisson(4)",
    "perishability": "non_perishable", "state_transition_model": "lost_sale", "holding_cost": 0.5,
    "penalty_cost": 3, "setup_cost": 2, "lead_time": 1, "max_inventory": 30, "max_order": 15,
    "risk_tolerance": 0,
}


def _askopt(*argv: str, timeout: float = 180) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "askopt"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-c", "import sys; from experiments.cli import main; "
                                                                 "sys.exit(main())"]
    return subprocess.run(cmd + list(argv), capture_output=True, text=True, timeout=timeout)


def _json_stdout(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Running HiGHS" not in proc.stdout
    return json.loads(proc.stdout)  # the whole of stdout, not its last line


@pytest.mark.parametrize("name", ["itest2", "afiro", "p0033"])
def test_iis_json_stdout_is_pure_json(name):
    out = _json_stdout(_askopt("iis", str(data_file(name)), "--json"))
    assert out["status"] == ("infeasible" if name == "itest2" else "feasible")
    assert out["solver"].startswith("highspy ")


def test_bench_ordebug_no_ray_json_stdout_is_pure_json(tmp_path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    shutil.copy(data_file("afiro"), seeds / "afiro.mps")
    proc = _askopt("bench", "ordebug", "--agent", "heuristic", "--seeds", str(seeds), "--per-model", "1",
                   "--out", str(tmp_path / "out"), "--no-ray", "--json")
    rows = _json_stdout(proc)
    assert isinstance(rows, list) and rows[0]["n"] == 1
    # Progress goes to stderr even when it is not a terminal (no silent minutes in CI logs).
    assert "ordebug heuristic iis=on: 1/1" in proc.stderr and "building " in proc.stderr


def test_solve_and_optimize_json_stdout_is_pure_json(tmp_path):
    params = tmp_path / "params.json"
    params.write_text(json.dumps(PARAMS))
    solved = _json_stdout(_askopt("solve", str(params), "--json", "--method", "dp", "--replications", "50",
                                  "--out", str(tmp_path / "s")))
    assert solved["dp"]["status"] == "solved"
    optimized = _json_stdout(_askopt("optimize", str(params), "--json", "--no-dqn", "--replications", "50",
                                     "--out", str(tmp_path / "o")))
    assert isinstance(optimized, dict) and optimized
