"""The study's statistics on the tidy unit table (one row per instance x treatment x trial).

Definitions (used by the report and the docs):

* cost: by default the problem's objective L(pi) = E[cost] + exp(-lambda) Std[cost] (`mc_objective`; the risk
  tolerance is one of the owner's parameters), else the expected total cost (`mc_cost`); both Monte Carlo on
  the TRUE problem with common random numbers per instance. Reduction of A over X = (cost_X - cost_A)/cost_X.
* pairs: (instance, trial) where both treatments produced a policy (status ok); failures are reported apart.
* win rate: share of pairs where cost_A < cost_X (ties, e.g. the same policy, are not wins).
* pass^k (tau-bench style): per instance with n trials of which c succeed, C(c,k)/C(n,k), averaged.
"""

from __future__ import annotations

import json
import math
from math import comb

import numpy as np
import pandas as pd
from scipy import stats

QUARTILE_FIELDS = ("holding_cost", "penalty_cost", "max_order", "setup_cost", "max_inventory")


METRICS = {"objective": "mc_objective", "cost": "mc_cost"}


def paired(df: pd.DataFrame, a: str, b: str, value: str = "mc_objective") -> pd.DataFrame:
    """One row per (instance, trial) with both treatments ok: cost_a, cost_b, reduction, plus instance columns."""
    ok = df[(df["status"] == "ok") & df[value].notna()]
    left = ok[ok["treatment"] == a].set_index(["instance_id", "trial"])
    right = ok[ok["treatment"] == b].set_index(["instance_id", "trial"])
    idx = left.index.intersection(right.index)
    out = left.loc[idx].copy()
    out["cost_a"] = left.loc[idx, value]
    out["cost_b"] = right.loc[idx, value]
    out["reduction"] = (out["cost_b"] - out["cost_a"]) / out["cost_b"]
    out["win"] = out["cost_a"] < out["cost_b"]
    return out.reset_index()


def reduction_summary(pairs: pd.DataFrame) -> dict:
    r = pairs["reduction"]
    return {
        "n": int(len(r)),
        "mean": float(r.mean()) if len(r) else math.nan,
        "sd": float(r.std(ddof=1)) if len(r) > 1 else math.nan,
        "win_rate": float(pairs["win"].mean()) if len(r) else math.nan,
    }


def by_cell(pairs: pd.DataFrame) -> dict[str, dict]:
    return {cell: reduction_summary(g) for cell, g in pairs.groupby("cell")}


def paired_test(df: pd.DataFrame, a: str, b: str, value: str = "mc_objective") -> dict:
    """Paired t-test (and Wilcoxon) of per-instance mean costs of two treatments (trials averaged)."""
    p = paired(df, a, b, value)
    per = p.groupby("instance_id")[["cost_a", "cost_b"]].mean()
    out = {"n": int(len(per)), "mean_a": float(per["cost_a"].mean()) if len(per) else math.nan,
           "mean_b": float(per["cost_b"].mean()) if len(per) else math.nan,
           "t": math.nan, "p": math.nan, "wilcoxon_p": math.nan}
    if len(per) >= 2 and not np.allclose(per["cost_a"], per["cost_b"]):
        t = stats.ttest_rel(per["cost_a"], per["cost_b"])
        out.update(t=float(t.statistic), p=float(t.pvalue))
        try:
            out["wilcoxon_p"] = float(stats.wilcoxon(per["cost_a"], per["cost_b"]).pvalue)
        except ValueError:
            pass
    return out


def quartile_analysis(df: pd.DataFrame, a: str = "A", b: str = "B", fields=QUARTILE_FIELDS,
                      value: str = "mc_objective") -> pd.DataFrame:
    """Instances in the top vs bottom quartile of A's gain over B; Welch t-test per instance feature."""
    p = paired(df, a, b, value)
    if p.empty:
        return pd.DataFrame()
    gain = p.groupby("instance_id")["reduction"].mean()
    feats = df.drop_duplicates("instance_id").set_index("instance_id").loc[gain.index, list(fields)]
    q1, q3 = gain.quantile(0.25), gain.quantile(0.75)
    top, bottom = feats[gain >= q3], feats[gain <= q1]
    rows = []
    for f in fields:
        t = p_val = math.nan
        if len(top) >= 2 and len(bottom) >= 2 and (top[f].std() > 0 or bottom[f].std() > 0):
            res = stats.ttest_ind(top[f], bottom[f], equal_var=False)
            t, p_val = float(res.statistic), float(res.pvalue)
        rows.append({"feature": f, "top_mean": float(top[f].mean()), "bottom_mean": float(bottom[f].mean()),
                     "welch_t": t, "p": p_val, "n_top": len(top), "n_bottom": len(bottom)})
    return pd.DataFrame(rows)


def optimality_gaps(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for t, g in df[df["status"] == "ok"].groupby("treatment"):
        ex = g["opt_gap"].dropna()
        orc = g["oracle_gap"].dropna()
        orc_cost = g["oracle_gap_cost"].dropna() if "oracle_gap_cost" in g else pd.Series(dtype=float)
        rows.append({"treatment": t, "n_exact": len(ex), "exact_gap_mean": ex.mean() if len(ex) else math.nan,
                     "exact_gap_median": ex.median() if len(ex) else math.nan,
                     "exact_gap_max": ex.max() if len(ex) else math.nan, "n": len(orc),
                     "oracle_gap_mean": orc.mean() if len(orc) else math.nan,
                     "oracle_gap_median": orc.median() if len(orc) else math.nan,
                     "oracle_cost_gap_mean": orc_cost.mean() if len(orc_cost) else math.nan})
    return pd.DataFrame(rows)


def field_accuracy(df: pd.DataFrame, treatment: str = "A") -> pd.DataFrame:
    """Per parameter: share of A's dialogues whose extracted value matched the truth (field_scores)."""
    scores = [json.loads(s) for s in df.loc[df["treatment"] == treatment, "field_scores"] if s and s != "{}"]
    if not scores:
        return pd.DataFrame(columns=["field", "accuracy", "n"])
    frame = pd.DataFrame(scores)
    return pd.DataFrame({"field": frame.columns, "accuracy": frame.mean().values, "n": frame.count().values})


def turns_summary(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby("treatment")["turns"]
    return pd.DataFrame({"mean": g.mean(), "median": g.median(), "max": g.max(), "n": g.count()}).reset_index()


def pass_hat_k(successes: pd.Series, instance: pd.Series, k: int) -> float:
    """tau-bench pass^k: mean over instances of C(c,k)/C(n,k)."""
    vals = []
    for _, s in successes.groupby(instance):
        n, c = len(s), int(s.sum())
        if n >= k:
            vals.append(comb(c, k) / comb(n, k))
    return float(np.mean(vals)) if vals else math.nan


def pass_table(df: pd.DataFrame, tolerance: float = 0.05) -> pd.DataFrame:
    """Success = a policy whose cost is within `tolerance` of the oracle (s,S) cost; pass^k for k = 1..trials."""
    trials = int(df["trial"].max()) + 1 if len(df) else 0
    rows = []
    for t, g in df.groupby("treatment"):
        success = (g["status"] == "ok") & (g["oracle_gap"] <= tolerance)
        row = {"treatment": t}
        for k in range(1, trials + 1):
            row[f"pass^{k}"] = pass_hat_k(success, g["instance_id"], k)
        rows.append(row)
    return pd.DataFrame(rows)


def failure_table(df: pd.DataFrame) -> pd.DataFrame:
    f = df[df["status"] != "ok"].copy()
    if f.empty:
        return pd.DataFrame(columns=["treatment", "stage", "reason", "count"])
    f["reason_short"] = f["reason"].str.replace(r"\d+(\.\d+)?", "N", regex=True).str.slice(0, 90)
    return (f.groupby(["treatment", "stage", "reason_short"]).size().reset_index(name="count")
            .rename(columns={"reason_short": "reason"}).sort_values(["treatment", "count"], ascending=[True, False]))
