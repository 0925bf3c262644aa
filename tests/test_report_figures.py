"""The report's figures with one extreme instance present (B at ~1000x the oracle): log/symlog axes keep the
other points readable, every figure has a caption with its point count (issue 17)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from test_report import make_rows

from evaluation import report_figures as rf


def extreme_rows() -> pd.DataFrame:
    df = pd.DataFrame(make_rows())
    mask = (df["instance_id"] == "i0003") & (df["treatment"] == "B")
    df.loc[mask, ["mc_objective", "mc_cost"]] = 90_000.0  # ~1000x the oracle: A's reduction over B is ~+99.9%
    df.loc[mask, "opt_gap"] = 90_000.0 / 85.0 - 1
    mask_c = (df["instance_id"] == "i0005") & (df["treatment"] == "A")
    df.loc[mask_c, ["mc_objective", "mc_cost"]] = 20_000.0  # and A itself far off once: reductions << -100%
    return df


def test_figures_stay_readable_with_an_extreme_instance(tmp_path):
    df = extreme_rows()
    figs = {f.name: f for f in rf.all_figures(df, tmp_path)}
    assert set(figs) == {"ecdf_cost_reduction.png", "relative_cost.png", "cell_heatmap.png",
                         "cost_vs_dp_optimum.png"}
    for f in figs.values():
        assert (tmp_path / f.name).stat().st_size > 5_000
        assert "Points:" in f.caption and any(ch.isdigit() for ch in f.caption.split("Points:")[1])
    # the ratios span 3 decades: a linear axis would flatten every ordinary unit at the bottom
    assert figs["relative_cost.png"].yscale == "log" and figs["cost_vs_dp_optimum.png"].yscale == "log"
    assert figs["ecdf_cost_reduction.png"].xscale == "symlog" and "symlog" in figs["ecdf_cost_reduction.png"].caption
    assert "Points: 47 units" in figs["relative_cost.png"].caption  # 48 units minus the failed one


def test_ecdf_is_linear_without_extremes(tmp_path):
    f = rf.ecdf_reduction(pd.DataFrame(make_rows()), tmp_path)
    assert f.xscale == "linear" and "A vs B: 8, A vs C: 8, B vs C: 8 instances" in f.caption


def test_heatmap_colour_is_clipped_but_text_is_exact(tmp_path):
    df = extreme_rows()
    f = rf.cell_heatmap(df, tmp_path)
    assert "3 cells" in f.caption
    # no figure draws anything when there are no pairs
    empty = df[df["treatment"] == "A"]
    assert rf.ecdf_reduction(empty, tmp_path) is None and rf.cell_heatmap(empty, tmp_path) is None
    assert rf.dp_ratio(df.assign(opt_gap=np.nan), tmp_path) is None
