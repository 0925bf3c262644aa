"""The study report: markdown + a self-contained HTML copy, with the paper's tables and ours, and PNG figures.

`write_report(run_dir)` reads runs/NAME/units/*.parquet and config.json and writes runs/NAME/report/report.md,
report.html and the figures (evaluation/report_figures.py). Tables: the paper's Table 5 (A vs B and A vs C:
overall, by demand distribution at lead time 7, by lead time under Poisson) with bootstrap and Wilson
intervals and the paired tests; B vs C; the paper's Table 6 (top vs bottom quartile of A's gain over B, Welch
tests); optimality gaps in percent; field-level extraction accuracy; dialogue turns; pass^k; failures; LLM
usage. A footnote defines every statistic (mean of ratios vs ratio of means).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from evaluation import stats as st
from evaluation.report_figures import all_figures
from evaluation.report_html import write_html
from evaluation.study import TREATMENT_NAMES, read_config
from evaluation.usage import usage_section

REPORT_DIR = "report"


def _pct(x: float) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:+.1f}%"


def _num(x, fmt: str = ".3g") -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def _md(df: pd.DataFrame, floatfmt: str = ".3g") -> str:
    if df is None or df.empty:
        return "_(no data)_\n"
    cols = list(df.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            cells.append(_num(v, floatfmt) if isinstance(v, float) else str(v).replace("|", "/"))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _ci(lo: float, hi: float) -> str:
    return "n/a" if lo is None or math.isnan(lo) else f"[{100 * lo:+.1f}%, {100 * hi:+.1f}%]"


def _p(x: float) -> str:
    return "n/a" if x is None or math.isnan(x) else ("< 0.001" if x < 0.001 else f"{x:.3f}")


def _pe(x: float) -> str:
    """A p-value in running text: '= 0.157' or '< 0.001'."""
    v = _p(x)
    return v if v.startswith("<") else f"= {v}"


def _comparison_row(label: str, comp: str, s: dict) -> dict:
    return {"Comparison": comp, "Subset": label, "Pairs (instances)": f"{s['n']} ({s['instances']})",
            "Mean cost reduction": _pct(s["mean"]), "95% CI (bootstrap)": _ci(*s["mean_ci"]),
            "SD": _pct(s["sd"]).lstrip("+"), "Ratio of means": _pct(s["ratio_of_means"]),
            "Win rate": _num(s["win_rate"], ".0%"),
            "95% CI (Wilson)": "n/a" if math.isnan(s["win_ci"][0]) else
            f"[{s['win_ci'][0]:.0%}, {s['win_ci'][1]:.0%}]",
            "Wilcoxon p": _p(s["wilcoxon_p"]), "Paired t p": _p(s["t_p"])}


def table5(df: pd.DataFrame, value: str = "mc_objective", comparisons=(("A", "B"), ("A", "C"))) -> pd.DataFrame:
    """The paper's Table 5 layout, one row per (comparison, subset); every subset is listed once."""
    rows = []
    for a, b in comparisons:
        for label, p in st.table5_rows(st.paired(df, a, b, value)):
            rows.append(_comparison_row(label, f"{a} vs {b}", st.comparison(p)))
    return pd.DataFrame(rows)


def by_cell_table(df: pd.DataFrame, value: str = "mc_objective") -> pd.DataFrame:
    """The same statistics per cell of the design (only shown when the cells are not Table 5's subsets)."""
    rows = []
    for a, b in (("A", "B"), ("A", "C")):
        p = st.paired(df, a, b, value)
        for cell, g in (p.groupby("cell") if len(p) else []):
            rows.append(_comparison_row(str(cell), f"{a} vs {b}", st.comparison(g)))
    return pd.DataFrame(rows)


def _gap_table(df: pd.DataFrame) -> pd.DataFrame:
    g = st.optimality_gaps(df)
    if g.empty:
        return g
    return pd.DataFrame({
        "Treatment": g["treatment"], "Units with DP optimum": g["n_exact"],
        "Gap to DP optimum, mean": g["exact_gap_mean"].map(_pct),
        "Gap to DP optimum, median": g["exact_gap_median"].map(_pct),
        "Gap to DP optimum, max": g["exact_gap_max"].map(_pct), "Units": g["n"],
        "Gap to oracle (s,S), mean": g["oracle_gap_mean"].map(_pct),
        "Gap to oracle (s,S), median": g["oracle_gap_median"].map(_pct),
        "Expected-cost gap to oracle, mean": g["oracle_cost_gap_mean"].map(_pct)})


FOOTNOTE = (
    "**Statistics.** Cost reduction of X over Y on a pair (instance, trial) = (cost_Y - cost_X) / cost_Y, shown "
    "in percent. *Mean cost reduction* = the mean of these ratios over pairs (a **mean of ratios**: every "
    "instance weighs the same; the figures' per-cell heatmap and ECDF use it too, trials averaged per "
    "instance). *Ratio of means* = 1 - sum(cost_X) / sum(cost_Y) over the same pairs: dominated by the "
    "expensive instances; reported only in the Table 5 column of that name. The two differ when reductions vary "
    "with the size of the cost; a mean of relative costs (cost/oracle) well above 1 can coexist with a positive "
    "mean reduction because ratios above 1 are unbounded while reductions are capped at 100%. *SD* = standard "
    "deviation of the per-pair reduction. *95% CI (bootstrap)* = percentile bootstrap (scipy.stats.bootstrap, "
    f"{st.BOOTSTRAP_RESAMPLES} resamples, fixed seed) of the mean reduction, resampling instances (trials "
    "averaged per instance, so the pairs of one instance stay together); n/a below "
    f"{st.MIN_BOOTSTRAP_INSTANCES} instances. *Win rate* = share of pairs with "
    "cost_X < cost_Y (ties are not wins), with its *Wilson* score interval. *Wilcoxon p* = two-sided Wilcoxon "
    "signed-rank test that the per-instance reduction is centred on 0 (the test we rely on: robust to one "
    "extreme instance); *Paired t p* = paired t-test on per-instance mean costs. Table 6's p-value = Welch's "
    "t-test between the top and bottom quartile of per-instance gain.")


def build_report(df: pd.DataFrame, config, title: str = "Study report") -> tuple[str, dict]:
    """The markdown text and a dict of the headline numbers (for tests and benchmarks)."""
    consultants = sorted({c for c in df.get("consultant", pd.Series(dtype=str)).dropna() if c and c != "askopt"})
    lines = [f"# {title}: {config.name}", ""]
    lines += [f"- instances: {df['instance_id'].nunique()}, trials: {config.trials}, design: {config.design}, "
              f"persona: {config.persona}, units: {len(df)} ({int((df['status'] == 'ok').sum())} ok, "
              f"{int((df['status'] != 'ok').sum())} failed)",
              "- cost = the problem's objective L(pi) = E[total cost] + exp(-risk tolerance) * Std[total cost] "
              f"(the owner's risk tolerance is one of the parameters), Monte Carlo on the TRUE problem, "
              f"{config.replications} replications with common random numbers per instance; reduction of A over X "
              "= (cost_X - cost_A)/cost_X. The same table on expected cost alone follows it.",
              f"- mode: {_mode(config)}"]
    for t in config.treatments:
        name = TREATMENT_NAMES[t]
        if t in ("B", "C") and consultants:
            name += f" -- consultant: {', '.join(consultants)}"
        lines.append(f"- treatment {t}: {name}")
    lines.append("")

    headline: dict = {}
    t5 = table5(df)
    lines += ["## Table 5: cost reduction of A (hybrid) over B and C", "",
              "Rows: overall; by demand distribution at lead time 7; by lead time under Poisson demand (the "
              "Poisson, lead time 7 row belongs to both groups and is listed once). Subsets with no pairs are "
              "left out. Statistics are defined in the footnote below the table.", "", _md(t5), "", FOOTNOTE, ""]
    cells = by_cell_table(df)
    if not cells.empty and set(df["cell"].dropna()) - {"poisson-L1", "poisson-L7", "normal-L7"}:
        lines += ["### By cell of the design", "", _md(cells)]
    lines += ["### On expected cost only (risk term left out)", "", _md(table5(df, "mc_cost"))]
    for other in ("B", "C"):
        headline[f"A_vs_{other}"] = st.comparison(st.paired(df, "A", other))
        headline[f"A_vs_{other}_expected_cost"] = st.comparison(st.paired(df, "A", other, "mc_cost"))

    bc = st.paired_test(df, "B", "C")
    bcs = st.comparison(st.paired(df, "B", "C"))
    headline["B_vs_C"] = dict(bc, **{"reduction": bcs})
    lines += ["## B vs C (does the dialogue cost the end-to-end consultant?)", "",
              f"Per-instance mean cost (trials averaged), n = {bc['n']} instances: B {_num(bc['mean_a'], '.1f')}, "
              f"C {_num(bc['mean_b'], '.1f')}; paired t = {_num(bc['t'])}, p {_pe(bc['p'])}; "
              f"Wilcoxon signed-rank p {_pe(bc['wilcoxon_p'])} (the paper reports p = 0.66). Mean cost reduction "
              f"of B over C {_pct(bcs['mean'])} (95% CI {_ci(*bcs['mean_ci'])}), win rate "
              f"{_num(bcs['win_rate'], '.0%')}.", ""]

    lines += ["## Table 6: where the hybrid gains most (top vs bottom quartile of A's gain over B)", "",
              "Instances ranked by their mean cost reduction of A over B (trials averaged); mean of each "
              "feature in the top and bottom quartile, Welch's t-test p-value.", "", _md(st.table6(df))]

    lines += ["## Optimality gap", "",
              "Gap to DP optimum: (exact expected cost - risk-neutral DP optimum) / optimum where the DP is "
              "tractable (position policies). Gap to oracle: (L(pi) - L of the oracle best (s,S) on the truth) / "
              "oracle, every unit (expected-cost gap: the same on expected cost). The oracle is what A would get "
              "from a perfect dialogue; a negative gap means the policy beat the oracle's (noisy, search-based) "
              "choice. All gaps are means of ratios.", "", _md(_gap_table(df))]
    fa = st.field_accuracy(df)
    headline["field_accuracy"] = float(fa["accuracy"].mean()) if not fa.empty else math.nan
    lines += ["## Field-level extraction accuracy (A)", "",
              _md(fa.assign(accuracy=fa["accuracy"].map(lambda v: _num(v, ".1%"))).rename(
                  columns={"field": "Field", "accuracy": "Accuracy (% of A's dialogues)", "n": "Dialogues"}))]
    lines += ["## Dialogue turns", "", _md(st.turns_summary(df).rename(columns={
        "treatment": "Treatment", "mean": "Mean turns", "median": "Median turns", "max": "Max turns",
        "n": "Units"}))]
    lines += ["## pass^k over imitator seeds", "",
              "success = a policy within 5% of the oracle (s,S) cost; pass^k = mean over instances of C(c,k)/C(n,k).",
              "", _md(st.pass_table(df).rename(columns={"treatment": "Treatment"}))]
    ft = st.failure_table(df)
    headline["failures"] = int((df["status"] != "ok").sum())
    lines += ["## Failures", "", _md(ft.rename(columns={"treatment": "Treatment", "stage": "Stage",
                                                      "reason": "Reason", "count": "Units"}))]
    lines += usage_section(df, _md)
    return "\n".join(lines), headline


def completeness(run_dir: Path, df: pd.DataFrame | None = None) -> tuple[int, int]:
    """(finished units, planned units = instances x trials x treatments) of a run directory."""
    from evaluation.runner import load_results

    config = read_config(Path(run_dir))
    df = load_results(Path(run_dir)) if df is None else df
    done = int(df["unit_id"].nunique()) if not df.empty else 0
    return done, config.instances * config.trials * len(config.treatments)


def write_report(run_dir: Path) -> Path:
    from evaluation.runner import load_results

    run_dir = Path(run_dir)
    if not (run_dir / "config.json").exists():
        raise FileNotFoundError(str(run_dir / "config.json"))
    config = read_config(run_dir)
    df = load_results(run_dir)
    if df.empty:
        raise ValueError(f"report: {run_dir} has no finished units yet")
    out = run_dir / REPORT_DIR
    out.mkdir(parents=True, exist_ok=True)
    text, _ = build_report(df, config)
    done, expected = completeness(run_dir, df)
    if done < expected:  # an interrupted run: say so at the top, before any number
        title, rest = text.split("\n", 1)
        text = (f"{title}\n\n**Partial run: {done} of {expected} units finished** (the tables below cover only "
                f"those; `askopt study ... --resume` finishes it).\n{rest}")
    for old in out.glob("*.png"):  # figures of an older report version must not linger beside the new ones
        old.unlink()
    figures = all_figures(df, out)
    text += "\n## Figures\n\n" + "\n".join(
        f"![Figure {i}: {f.name}]({f.name})\n\n*Figure {i}.* {f.caption}\n" for i, f in enumerate(figures, 1))
    path = out / "report.md"
    path.write_text(text)
    write_html(text, out, path.with_suffix(".html"))
    return path


def _mode(config) -> str:
    """Which roles ran on a model endpoint: the consultant/extraction LLM and the imitator."""
    if config.offline:
        return "offline (no LLM endpoint)"
    parts = [f"LLM: {config.llm.get('model')}"] if config.llm else []
    if config.imitator:
        parts.append(f"imitator endpoint: {config.imitator.get('model')} at {config.imitator.get('base_url')}")
    return "; ".join(parts)
