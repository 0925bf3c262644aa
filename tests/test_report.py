"""The study report: tables and statistics on a hand-built result table with known answers, and the files."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evaluation import stats as st
from evaluation.report import build_report, write_report
from evaluation.runner import write_batch
from evaluation.study import StudyConfig, write_config


def make_rows(n_inst: int = 8, trials: int = 2) -> list[dict]:
    """A costs 90, B 100 (+ noise by instance), C 110; instance features vary so quartiles differ."""
    rows = []
    for i in range(n_inst):
        cell = ["poisson-L1", "poisson-L7", "normal-L7"][i % 3]
        kind, lead = cell.split("-L")
        for trial in range(trials):
            for t, cost in (("A", 90.0), ("B", 100.0 + 10 * i), ("C", 110.0 + 10 * i)):
                failed = t == "B" and i == 0 and trial == 1
                rows.append({
                    "unit_id": f"i{i:04d}-{t}-t{trial}", "instance_id": f"i{i:04d}", "trial": trial, "treatment": t,
                    "cell": cell, "demand_kind": kind, "lead_time": int(lead), "status": "failed" if failed else "ok",
                    "stage": "parse" if failed else "", "reason": "unparseable: a range is given" if failed else "",
                    "mc_cost": np.nan if failed else cost, "mc_objective": np.nan if failed else cost + 1.0,
                    "oracle_cost": 88.0, "oracle_objective": 89.0, "opt_cost": 85.0 if i % 2 else np.nan,
                    "oracle_gap": np.nan if failed else (cost - 88.0) / 89.0,
                    "opt_gap": (cost - 85.0) / 85.0 if i % 2 and not failed else np.nan,
                    "holding_cost": 0.1 * (i + 1), "penalty_cost": 1.0 + i, "max_order": 20 + i, "setup_cost": float(i % 4),
                    "max_inventory": 60 + 5 * i, "turns": 10 if t == "A" else (9 if t == "B" else 1),
                    "field_scores": json.dumps({"lead_time": True, "holding_cost": i % 2 == 0}) if t == "A" else "{}",
                    "consultant": "askopt" if t == "A" else "textbook consultant (offline stand-in for the LLM)",
                })
    return rows


def test_statistics_have_the_known_values():
    df = pd.DataFrame(make_rows())
    p = st.paired(df, "A", "B")
    assert len(p) == 15  # 16 pairs minus the failed B unit
    want = np.mean([(100 + 10 * i - 90) / (101 + 10 * i) for i in range(8) for t in range(2) if (i, t) != (0, 1)])
    s = st.reduction_summary(p)
    assert s["mean"] == pytest.approx(want) and s["win_rate"] == 1.0
    bc = st.paired_test(df, "B", "C")
    assert bc["n"] == 8 and bc["mean_b"] - bc["mean_a"] == pytest.approx(10) and bc["p"] < 1e-6
    q = st.quartile_analysis(df).set_index("feature")
    # gain of A over B grows with i, so the top quartile has the larger holding cost
    assert q.loc["holding_cost", "top_mean"] > q.loc["holding_cost", "bottom_mean"]
    assert q.loc["holding_cost", "p"] < 0.05
    fa = st.field_accuracy(df).set_index("field")["accuracy"]
    assert fa["lead_time"] == 1.0 and fa["holding_cost"] == 0.5
    # pass^k with a 5% tolerance: only A (cost 90 vs oracle 88, gap 2.3%) ever succeeds
    pk = st.pass_table(df).set_index("treatment")
    assert pk.loc["A", "pass^1"] == 1.0 and pk.loc["A", "pass^2"] == 1.0 and pk.loc["B", "pass^1"] == 0.0
    assert st.pass_hat_k(pd.Series([True, False, True]), pd.Series([0, 0, 0]), 2) == pytest.approx(1 / 3)


def test_report_renders_the_tables_and_plots(tmp_path):
    cfg = StudyConfig(name="rep", instances=8, trials=2, design="paper-cells")
    write_config(tmp_path, cfg)
    rows = make_rows()
    for i in range(8):
        write_batch(tmp_path, [r for r in rows if r["instance_id"] == f"i{i:04d}"])
    text, headline = build_report(pd.DataFrame(rows), cfg)
    for heading in ("Table 5: cost reduction of A (hybrid) over B and C", "Table 6", "B vs C",
                    "top vs bottom quartile", "Optimality gap", "Field-level extraction accuracy", "Dialogue turns",
                    "pass^k", "Failures"):
        assert heading in text
    assert "textbook consultant (offline stand-in for the LLM)" in text
    assert "Normal demand, lead time 7" in text and "Poisson demand, lead time 1" in text
    assert "unparseable: a range is given" in text
    assert headline["A_vs_C"]["win_rate"] == 1.0 and headline["failures"] == 1
    path = write_report(tmp_path)
    body = path.read_text()
    pngs = sorted(p.name for p in path.parent.glob("*.png"))
    assert pngs == ["cell_heatmap.png", "cost_vs_dp_optimum.png", "ecdf_cost_reduction.png", "relative_cost.png"]
    assert (path.parent / "report.html").is_file()
    assert all(f"]({name})" in body for name in pngs)
