"""Issue 9, OR-Debug side: the IIS time limit is a promise (distinct status, best verified subsystem,
non-zero exit), numbers HiGHS would accept silently (NaN) are refused by name, and `--out` naming a
file fails before any work."""

from __future__ import annotations

import json

import numpy as np
import scipy.sparse as sp

from experiments.cli import main
from ordebug.iis import SubsystemOracle, _Deadline, compute_iis
from ordebug.model import INF, LinearModel


def _chain(n: int) -> LinearModel:
    """x_{i+1} - x_i >= 1, x_0 >= 0, x_n <= 1: its only IIS is the whole chain (n rows + 2 bounds)."""
    r = np.repeat(np.arange(n), 2)
    c = np.stack([np.arange(n) + 1, np.arange(n)], 1).ravel()
    A = sp.csr_matrix((np.tile([1.0, -1.0], n), (r, c)), shape=(n, n + 1))
    cl, cu = np.full(n + 1, -INF), np.full(n + 1, INF)
    cl[0], cu[-1] = 0.0, 1.0
    return LinearModel("chain", [f"r{i}" for i in range(n)], [f"x{j}" for j in range(n + 1)], A, np.ones(n),
                       np.full(n, INF), cl, cu, np.zeros(n + 1), np.zeros(n + 1, bool))


def test_time_limit_returns_best_verified_infeasible_subsystem_not_irreducible():
    # 20k members cannot be filtered in 3 s (one solve each), but the first solves fit even on a busy box.
    model = _chain(20000)
    res = compute_iis(model, time_limit=3.0)
    assert res.status == "time_limit" and not res.irreducible
    assert res.verified_infeasible and res.size > 0
    assert SubsystemOracle(model, False, _Deadline(60)).infeasible(res.members)
    js = res.to_json()
    assert js["status"] == "time_limit" and js["verified_infeasible"] is True
    # With time to spare the same model gets its true (whole-chain) IIS.
    small = _chain(8)
    full = compute_iis(small, time_limit=30)
    assert full.status == "infeasible" and full.irreducible and len(full.rows) == 8


def test_iis_cli_time_limit_exit_code_3(tmp_path, capsys):
    path = tmp_path / "chain.mps"
    _chain(20000).to_mps(path)
    assert main(["iis", str(path), "--time-limit", "3", "--json"]) == 3
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "time_limit" and out["irreducible"] is False and out["rows"]
    assert main(["iis", str(path), "--time-limit", "3"]) == 3
    text = capsys.readouterr().out
    assert "time limit" in text and "NOT irreducible" in text and "more (use --json" in text
    for bad in ("0", "nan", "inf", "-1"):
        assert main(["iis", str(path), "--time-limit", bad]) == 2
        assert "--time-limit must be" in capsys.readouterr().err


def test_nan_coefficient_is_refused_naming_row_and_column(tmp_path, capsys):
    mps = ("NAME t\nROWS\n N obj\n L c1\n L c2\nCOLUMNS\n x obj 1 c1 1\n x c2 nan\n y obj 1 c1 1\n"
           "RHS\n rhs c1 -1\nBOUNDS\n UP bnd x 1\nENDATA\n")
    path = tmp_path / "nan.mps"
    path.write_text(mps)
    assert main(["iis", str(path), "--json"]) == 2
    err = capsys.readouterr().err
    assert "'x'" in err and "'c2'" in err and "nan" in err and "Traceback" not in err
    path.write_text(mps.replace("x c2 nan", "x c2 1").replace("UP bnd x 1", "UP bnd x nan"))
    assert main(["iis", str(path)]) == 2
    capsys.readouterr()
    # NaN bounds built in code are refused too, naming the column.
    m = _chain(3)
    m.col_lower[1] = np.nan  # chain: x1 has no finite lower bound, so the NaN is the only one
    try:
        LinearModel(m.name, m.row_names, m.col_names, m.A, m.row_lower, m.row_upper, m.col_lower, m.col_upper,
                    m.cost, m.integer)
    except ValueError as exc:
        assert "'x1'" in str(exc) and "lower bound" in str(exc)
    else:
        raise AssertionError("NaN bound accepted")


def test_bench_out_naming_a_file_fails_before_any_work(tmp_path, capsys):
    target = tmp_path / "taken.txt"
    target.write_text("keep me")
    assert main(["bench", "ordebug", "--out", str(target), "--no-ray"]) == 2
    assert "--out must be a directory" in capsys.readouterr().err
    assert target.read_text() == "keep me" and len(list(tmp_path.iterdir())) == 1
