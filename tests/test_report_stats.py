"""Golden tests for the report's statistics on a hand-built results table with known answers (issue 17)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from test_report import make_rows

from evaluation import stats as st
from evaluation.report import build_report, table5
from evaluation.report_compare import compare_table, difference_ci
from evaluation.study import StudyConfig


def test_wilson_interval_known_values():
    lo, hi = st.wilson(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4) and hi == pytest.approx(0.9433, abs=1e-4)
    assert st.wilson(0, 10) == (0.0, pytest.approx(0.2775, abs=1e-4))
    assert st.wilson(15, 15)[1] == 1.0 and st.wilson(15, 15)[0] == pytest.approx(0.7961, abs=1e-4)
    assert all(math.isnan(x) for x in st.wilson(0, 0))


def test_bootstrap_interval():
    assert st.bootstrap_mean_ci([0.2] * 5) == (0.2, 0.2)  # no spread, no interval
    assert all(math.isnan(x) for x in st.bootstrap_mean_ci([0.3, 0.5, 0.1, 0.2]))  # < 5 instances: none
    v = np.linspace(-1, 1, 41)  # mean 0, sd 0.594: the normal-theory half-width is 1.96 * sd / sqrt(41) = 0.182
    lo, hi = st.bootstrap_mean_ci(v)
    assert lo < 0 < hi and (hi - lo) / 2 == pytest.approx(0.182, rel=0.15)
    assert st.bootstrap_mean_ci(v) == (lo, hi)  # fixed seed: the report is reproducible


def test_comparison_has_the_known_values():
    df = pd.DataFrame(make_rows())
    s = st.comparison(st.paired(df, "A", "B"))
    # A costs 91 (objective), B 101 + 10 i; B of instance 0 trial 1 failed
    pairs = [(i, t) for i in range(8) for t in range(2) if (i, t) != (0, 1)]
    red = [(10 + 10 * i) / (101 + 10 * i) for i, _ in pairs]
    assert s["n"] == 15 and s["instances"] == 8 and s["wins"] == 15
    assert s["mean"] == pytest.approx(np.mean(red)) and s["sd"] == pytest.approx(np.std(red, ddof=1))
    assert s["ratio_of_means"] == pytest.approx(1 - 91 * 15 / sum(101 + 10 * i for i, _ in pairs))
    assert s["win_rate"] == 1.0 and s["win_ci"] == st.wilson(15, 15)
    assert s["wilcoxon_p"] == pytest.approx(2 / 2**8)  # exact test, all 8 instance reductions positive
    per = [(10 + 10 * i) / (101 + 10 * i) for i in range(8)]
    lo, hi = s["mean_ci"]
    assert lo < np.mean(per) < hi and min(per) <= lo and hi <= max(per)


def test_table5_rows_and_names():
    df = pd.DataFrame(make_rows())
    t = table5(df)
    assert list(t["Subset"][t["Comparison"] == "A vs B"]) == [
        "Overall", "Normal demand, lead time 7", "Poisson demand, lead time 7", "Poisson demand, lead time 1"]
    assert not t.duplicated(["Comparison", "Subset"]).any()
    normal = t[(t["Comparison"] == "A vs C") & (t["Subset"] == "Normal demand, lead time 7")].iloc[0]
    assert normal["Pairs (instances)"] == "4 (2)"  # instances 2 and 5, two trials each
    want = np.mean([(20 + 10 * i) / (111 + 10 * i) for i in (2, 5)])
    assert normal["Mean cost reduction"] == f"{100 * want:+.1f}%" and normal["Win rate"] == "100%"
    assert normal["95% CI (bootstrap)"] == "n/a"  # 2 instances: no bootstrap interval
    assert "welch_t" not in " ".join(t.columns) and all("%" in v for v in t["Mean cost reduction"])


def test_table6_and_b_vs_c():
    df = pd.DataFrame(make_rows())
    t6 = st.table6(df).set_index("Feature")
    assert list(t6.index) == ["Holding cost ($/unit/period)", "Penalty cost ($/unit short)", "Max order (units)",
                              "Setup cost ($/order)", "Capacity (units)"]
    # the gain of A over B grows with i: top quartile = instances 6, 7; bottom = 0, 1
    assert t6.loc["Holding cost ($/unit/period)", "Top quartile mean"] == pytest.approx(0.75)
    assert t6.loc["Holding cost ($/unit/period)", "Bottom quartile mean"] == pytest.approx(0.15)
    # max order 26, 27 vs 20, 21: Welch t = 6 / sqrt(0.25 + 0.25) = 8.485 on 2 df, two-sided p = 0.0136
    assert t6.loc["Max order (units)", "Welch t"] == pytest.approx(8.485, abs=1e-3)
    assert t6.loc["Max order (units)", "p-value"] == pytest.approx(0.01361, abs=1e-4)
    text, head = build_report(df, StudyConfig(name="g", instances=8, trials=2))
    assert "Table 5" in text and "Table 6" in text and "Ratio of means" in text and "mean of ratios" in text
    assert head["B_vs_C"]["n"] == 8 and head["B_vs_C"]["p"] < 1e-6
    assert head["B_vs_C"]["reduction"]["win_rate"] == 1.0  # B (100 + 10 i) always cheaper than C (110 + 10 i)


def test_run_comparison_differences():
    df = pd.DataFrame(make_rows())
    same = compare_table(df, df).set_index(["Comparison", "Subset"])
    assert same.loc[("A vs B", "Overall"), "Difference (run 2 - run 1)"] == "+0.0 pp"
    assert same.loc[("A vs B", "Overall"), "95% CI (bootstrap)"] == "[+0.0, +0.0] pp"
    assert same.loc[("A vs B", "Overall"), "Pairing"] == "paired by instance"
    df2 = df.copy()
    df2.loc[df2["treatment"] == "A", "mc_objective"] *= 0.5  # A twice as cheap: every reduction grows
    d = compare_table(df, df2).set_index(["Comparison", "Subset"]).loc[("A vs C", "Overall")]
    per1 = np.array([(20 + 10 * i) / (111 + 10 * i) for i in range(8)])
    per2 = np.array([(111 + 10 * i - 45.5) / (111 + 10 * i) for i in range(8)])
    assert d["Difference (run 2 - run 1)"] == f"{100 * (per2 - per1).mean():+.1f} pp"
    a, lo, hi, how = difference_ci(pd.Series(per1), pd.Series(per2), paired=False)
    assert how == "independent runs" and lo < a < hi


def test_cli_report_two_runs(tmp_path, capsys):
    from evaluation.runner import write_batch
    from evaluation.study import write_config
    from experiments import cli

    rows = make_rows()
    for name in ("one", "two"):
        write_config(tmp_path / name, StudyConfig(name=name, instances=8, trials=2))
        for i in range(8):
            write_batch(tmp_path / name, [r for r in rows if r["instance_id"] == f"i{i:04d}"])
    assert cli.main(["report", str(tmp_path / "one"), str(tmp_path / "two")]) == 0
    out = tmp_path / "one" / "report" / "compare-two.md"
    assert str(out) in capsys.readouterr().out
    text = out.read_text()
    assert "| A vs B | Overall |" in text and "+0.0 pp" in text and "paired by instance" in text
    assert out.with_suffix(".html").is_file()
    assert cli.main(["report", str(tmp_path / "one"), str(tmp_path / "missing")]) == 2
    assert "RUN_B" in capsys.readouterr().err
