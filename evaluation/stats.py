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


# ---- intervals and the paper's Table 5 / Table 6 (issue 17) -------------------------------------------------

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 17
MIN_BOOTSTRAP_INSTANCES = 5  # below this a percentile bootstrap is only the spread of a handful of values


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion k/n (stays inside [0, 1] and is sensible at 0 or n wins)."""
    if n <= 0:
        return (math.nan, math.nan)
    z = stats.norm.ppf(0.5 + confidence / 2)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def bootstrap_mean_ci(values, confidence: float = 0.95, seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """Percentile bootstrap (scipy.stats.bootstrap) of the mean of per-instance values: the resampling unit is
    the instance (trials are averaged first by the caller), so pairs of one instance never split."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if len(v) < MIN_BOOTSTRAP_INSTANCES:
        return (math.nan, math.nan)
    if np.allclose(v, v[0]):
        return (float(v[0]), float(v[0]))
    res = stats.bootstrap((v,), np.mean, confidence_level=confidence, n_resamples=BOOTSTRAP_RESAMPLES,
                          method="percentile", random_state=np.random.default_rng(seed))
    return (float(res.confidence_interval.low), float(res.confidence_interval.high))


def per_instance(pairs: pd.DataFrame) -> pd.DataFrame:
    """Trials averaged per instance: cost_a, cost_b, reduction (mean of the trials' reductions), win share."""
    if pairs.empty:
        return pd.DataFrame(columns=["cost_a", "cost_b", "reduction", "win"])
    return pairs.groupby("instance_id")[["cost_a", "cost_b", "reduction", "win"]].mean()


def comparison(pairs: pd.DataFrame) -> dict:
    """Everything Table 5 shows for one comparison and one row (pairs from `paired`).

    mean/sd: over pairs (instance x trial) of (cost_X - cost_A)/cost_X, i.e. a mean of ratios; its 95% interval
    is a bootstrap over instances (trials averaged). ratio_of_means: 1 - sum(cost_A)/sum(cost_X) over the same
    pairs (dominated by the expensive instances). win rate: share of pairs with cost_A < cost_X, Wilson interval.
    test: Wilcoxon signed-rank on the per-instance reductions (robust to one extreme instance), and a paired
    t-test on per-instance mean costs beside it."""
    s = reduction_summary(pairs)
    per = per_instance(pairs)
    wins = int(pairs["win"].sum()) if len(pairs) else 0
    out = dict(s, instances=int(len(per)), wins=wins)
    out["mean_ci"] = bootstrap_mean_ci(per["reduction"].to_numpy()) if len(per) else (math.nan, math.nan)
    out["win_ci"] = wilson(wins, s["n"])
    out["ratio_of_means"] = (float(1 - pairs["cost_a"].sum() / pairs["cost_b"].sum()) if len(pairs)
                             else math.nan)
    out["wilcoxon_p"] = out["t_p"] = math.nan
    if len(per) >= 2 and not np.allclose(per["reduction"], 0):
        try:
            out["wilcoxon_p"] = float(stats.wilcoxon(per["reduction"]).pvalue)
        except ValueError:
            pass
        if not np.allclose(per["cost_a"], per["cost_b"]):
            out["t_p"] = float(stats.ttest_rel(per["cost_a"], per["cost_b"]).pvalue)
    return out


def table5_rows(pairs: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The paper's Table 5 rows: overall; by demand distribution at lead time 7; by lead time under Poisson.
    Poisson at lead time 7 belongs to both groups and is listed once. Rows without pairs are left out."""
    if pairs.empty:
        return []
    kind, lead = pairs["demand_kind"], pairs["lead_time"]
    rows = [("Overall", pairs),
            ("Normal demand, lead time 7", pairs[(kind == "normal") & (lead == 7)]),
            ("Poisson demand, lead time 7", pairs[(kind == "poisson") & (lead == 7)]),
            ("Poisson demand, lead time 1", pairs[(kind == "poisson") & (lead == 1)])]
    return [(name, p) for name, p in rows if len(p)]


FEATURE_NAMES = {"holding_cost": "Holding cost ($/unit/period)", "penalty_cost": "Penalty cost ($/unit short)",
                 "max_order": "Max order (units)", "setup_cost": "Setup cost ($/order)",
                 "max_inventory": "Capacity (units)"}


def table6(df: pd.DataFrame, a: str = "A", b: str = "B", value: str = "mc_objective") -> pd.DataFrame:
    """The paper's Table 6: instance features in the top vs bottom quartile of A's gain over B (per-instance
    mean reduction), with the Welch t-test p-value; human feature names."""
    q = quartile_analysis(df, a, b, value=value)
    if q.empty:
        return q
    return pd.DataFrame({"Feature": [FEATURE_NAMES.get(f, f) for f in q["feature"]],
                         "Top quartile mean": q["top_mean"], "Bottom quartile mean": q["bottom_mean"],
                         "Welch t": q["welch_t"], "p-value": q["p"],
                         "Instances (top / bottom)": [f"{t} / {b_}" for t, b_ in
                                                      zip(q["n_top"], q["n_bottom"], strict=True)]})
