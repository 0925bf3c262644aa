"""`askopt report RUN_A RUN_B`: two runs side by side (e.g. the textbook stand-in vs a real LLM, or two seeds).

For each comparison (A vs B, A vs C, B vs C) and Table 5 subset: the mean cost reduction in each run, the
difference (run 2 - run 1) and its 95% bootstrap interval. When the runs share instances (same instance ids,
e.g. the same seed with another consultant) the difference is paired by instance (bootstrap of the
per-instance differences); otherwise the two runs' instances are resampled independently.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from evaluation import stats as st

COMPARISONS = (("A", "B"), ("A", "C"), ("B", "C"))


INSTANCE_KEY = ("instance_id", "demand", "holding_cost", "penalty_cost", "setup_cost", "lead_time", "max_order",
                "max_inventory")


def same_instances(df1: pd.DataFrame, df2: pd.DataFrame) -> bool:
    """True when both runs hold the same instances: same ids AND the same parameters (an id alone is reused by
    every design, so pairing on it would pair different problems)."""
    cols = [c for c in INSTANCE_KEY if c in df1 and c in df2]
    k1 = set(map(tuple, df1[cols].drop_duplicates().astype(str).to_numpy()))
    k2 = set(map(tuple, df2[cols].drop_duplicates().astype(str).to_numpy()))
    return k1 == k2


def difference_ci(per1: pd.Series, per2: pd.Series, paired: bool = True,
                  confidence: float = 0.95) -> tuple[float, float, float, str]:
    """(difference of means run2 - run1, low, high, how): paired by instance when `paired` and the ids match."""
    if len(per1) < 2 or len(per2) < 2:
        return (math.nan, math.nan, math.nan, "too few instances")
    common = per1.index.intersection(per2.index)
    if paired and len(common) == len(per1) == len(per2):
        d = (per2.loc[common] - per1.loc[common]).to_numpy()
        lo, hi = st.bootstrap_mean_ci(d, confidence)
        return (float(d.mean()), lo, hi, "paired by instance")
    res = stats.bootstrap((per1.to_numpy(), per2.to_numpy()), lambda x, y, axis=-1: y.mean(axis) - x.mean(axis),
                          confidence_level=confidence, n_resamples=st.BOOTSTRAP_RESAMPLES, method="percentile",
                          vectorized=True, random_state=np.random.default_rng(st.BOOTSTRAP_SEED))
    return (float(per2.mean() - per1.mean()), float(res.confidence_interval.low),
            float(res.confidence_interval.high), "independent runs")


def compare_table(df1: pd.DataFrame, df2: pd.DataFrame, value: str = "mc_objective") -> pd.DataFrame:
    rows = []
    same = same_instances(df1, df2)
    for a, b in COMPARISONS:
        sub1 = dict(st.table5_rows(st.paired(df1, a, b, value)))
        sub2 = dict(st.table5_rows(st.paired(df2, a, b, value)))
        for label in [k for k in sub1 if k in sub2]:
            per1 = st.per_instance(sub1[label])["reduction"]
            per2 = st.per_instance(sub2[label])["reduction"]
            d, lo, hi, how = difference_ci(per1, per2, same)
            rows.append({"Comparison": f"{a} vs {b}", "Subset": label,
                         "Run 1 mean reduction": f"{100 * per1.mean():+.1f}% (n = {len(per1)})",
                         "Run 2 mean reduction": f"{100 * per2.mean():+.1f}% (n = {len(per2)})",
                         "Difference (run 2 - run 1)": "n/a" if math.isnan(d) else f"{100 * d:+.1f} pp",
                         "95% CI (bootstrap)": "n/a" if math.isnan(lo) else f"[{100 * lo:+.1f}, {100 * hi:+.1f}] pp",
                         "Pairing": how})
    return pd.DataFrame(rows)


def write_comparison(run1: Path, run2: Path, out: Path | None = None) -> Path:
    """Markdown + HTML comparison; default location RUN_1/report/compare-<RUN_2 name>.md."""
    from evaluation.report import _md
    from evaluation.report_html import write_html
    from evaluation.runner import load_results
    from evaluation.study import read_config

    run1, run2 = Path(run1), Path(run2)
    dfs, names = [], []
    for r in (run1, run2):
        if not (r / "config.json").is_file():
            raise FileNotFoundError(str(r / "config.json"))
        df = load_results(r)
        if df.empty:
            raise ValueError(f"report: {r} has no finished units yet")
        dfs.append(df)
        names.append(read_config(r).name)
    out = Path(out) if out else run1 / "report" / f"compare-{run2.name}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join([
        f"# Run comparison: {names[0]} vs {names[1]}", "",
        f"- run 1: {run1} ({dfs[0]['instance_id'].nunique()} instances, {len(dfs[0])} units)",
        f"- run 2: {run2} ({dfs[1]['instance_id'].nunique()} instances, {len(dfs[1])} units)", "",
        "Mean cost reduction = mean over instances of the per-instance (trials averaged) reduction "
        "(cost_second - cost_first)/cost_second, a mean of ratios. Difference in percentage points (pp), 95% "
        f"percentile bootstrap interval ({st.BOOTSTRAP_RESAMPLES} resamples): of the per-instance differences "
        "when both runs have the same instances, else of two independent resamples of instances.", "",
        "## On the objective L(pi)", "", _md(compare_table(dfs[0], dfs[1])),
        "## On expected cost only", "", _md(compare_table(dfs[0], dfs[1], "mc_cost"))])
    out.write_text(text)
    write_html(text, out.parent, out.with_suffix(".html"))
    return out
