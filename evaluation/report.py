"""The study report: markdown with the paper's tables plus ours, and PNG plots beside it (Agg backend).

`write_report(run_dir)` reads runs/NAME/units/*.parquet and config.json and writes runs/NAME/report/report.md
(+ *.png). Tables: cost reduction and win rate of A over B and over C, overall and by cell (with the paper's
cells: normal vs poisson at lead time 7, lead time 1 vs 7 under poisson); B vs C paired test; top vs bottom
quartile of A's gain over B with Welch tests on holding cost, penalty, max order, setup cost, capacity; the
optimality gap of each treatment; field-level extraction accuracy; dialogue turns; pass^k; failure reasons.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from evaluation import stats as st  # noqa: E402
from evaluation.study import TREATMENT_NAMES, read_config  # noqa: E402
from evaluation.usage import usage_section  # noqa: E402

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


def _reduction_rows(df: pd.DataFrame, value: str = "mc_objective") -> pd.DataFrame:
    rows = []
    for other in ("B", "C"):
        p = st.paired(df, "A", other, value)
        if p.empty:
            continue
        groups = [("all", p)] + list(p.groupby("cell"))
        for cell, g in groups:
            s = st.reduction_summary(g)
            rows.append({"comparison": f"A over {other}", "cell": cell, "pairs": s["n"],
                         "mean reduction": _pct(s["mean"]), "sd": _pct(s["sd"]).lstrip("+"),
                         "win rate": _num(s["win_rate"], ".0%")})
    return pd.DataFrame(rows)


def _paper_cells(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for other in ("B", "C"):
        p = st.paired(df, "A", other)
        if p.empty:
            continue
        comps = [("lead time 7: normal", (p["lead_time"] == 7) & (p["demand_kind"] == "normal")),
                 ("lead time 7: poisson", (p["lead_time"] == 7) & (p["demand_kind"] == "poisson")),
                 ("poisson: lead time 1", (p["lead_time"] == 1) & (p["demand_kind"] == "poisson")),
                 ("poisson: lead time 7", (p["lead_time"] == 7) & (p["demand_kind"] == "poisson"))]
        for name, mask in comps:
            s = st.reduction_summary(p[mask])
            rows.append({"comparison": f"A over {other}", "cell": name, "pairs": s["n"],
                         "mean reduction": _pct(s["mean"]), "sd": _pct(s["sd"]).lstrip("+"),
                         "win rate": _num(s["win_rate"], ".0%")})
    return pd.DataFrame(rows)


def _plots(df: pd.DataFrame, out: Path) -> list[str]:
    names = []
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for other, color in (("B", "tab:orange"), ("C", "tab:green")):
        p = st.paired(df, "A", other)
        if not p.empty:
            ax.hist(100 * p["reduction"], bins=20, alpha=0.6, label=f"A over {other}", color=color)
    ax.axvline(0, color="k", lw=0.8)
    ax.set_xlabel("cost reduction (%)")
    ax.set_ylabel("pairs")
    ax.legend()
    ax.set_title("Cost reduction of the hybrid system")
    fig.tight_layout()
    fig.savefig(out / "cost_reduction_hist.png", dpi=110)
    plt.close(fig)
    names.append("cost_reduction_hist.png")

    ok = df[df["status"] == "ok"]
    if not ok.empty:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        rel = ok.assign(rel=ok["mc_objective"] / ok["oracle_objective"])
        table = rel.groupby(["cell", "treatment"])["rel"].mean().unstack("treatment")
        table.plot.bar(ax=ax)
        ax.axhline(1, color="k", lw=0.8)
        ax.set_ylabel("L(pi) / oracle (s,S) L(pi)")
        ax.set_title("Mean relative cost by cell")
        fig.tight_layout()
        fig.savefig(out / "relative_cost_by_cell.png", dpi=110)
        plt.close(fig)
        names.append("relative_cost_by_cell.png")

    p = st.paired(df, "A", "B")
    if not p.empty:
        fig, ax = plt.subplots(figsize=(4.5, 4.5))
        ax.scatter(p["cost_b"], p["cost_a"], s=12)
        lim = [0, max(p["cost_a"].max(), p["cost_b"].max()) * 1.05]
        ax.plot(lim, lim, "k--", lw=0.8)
        ax.set_xlabel("cost of B")
        ax.set_ylabel("cost of A")
        ax.set_title("A vs B per pair")
        fig.tight_layout()
        fig.savefig(out / "a_vs_b_scatter.png", dpi=110)
        plt.close(fig)
        names.append("a_vs_b_scatter.png")
    return names


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
              f"- mode: {'offline (no LLM endpoint)' if config.offline else 'LLM: ' + str(config.llm.get('model'))}"]
    for t in config.treatments:
        name = TREATMENT_NAMES[t]
        if t in ("B", "C") and consultants:
            name += f" -- consultant: {', '.join(consultants)}"
        lines.append(f"- treatment {t}: {name}")
    lines.append("")

    headline: dict = {}
    lines += ["## Cost reduction of A (hybrid) over B and C", "", _md(_reduction_rows(df))]
    lines += ["### On expected cost only (risk term left out)", "", _md(_reduction_rows(df, "mc_cost"))]
    for other in ("B", "C"):
        headline[f"A_vs_{other}"] = st.reduction_summary(st.paired(df, "A", other))
        headline[f"A_vs_{other}_expected_cost"] = st.reduction_summary(st.paired(df, "A", other, "mc_cost"))
    pc = _paper_cells(df)
    lines += ["### The paper's cells", "", "(normal vs poisson at lead time 7; lead time 1 vs 7 under poisson; "
              "empty unless the study has such instances, e.g. `--design paper-cells`)", "", _md(pc)]

    bc = st.paired_test(df, "B", "C")
    headline["B_vs_C"] = bc
    lines += ["## B vs C (does the dialogue cost the end-to-end consultant?)", "",
              f"Per-instance mean cost (trials averaged), n = {bc['n']}: B {_num(bc['mean_a'], '.1f')}, "
              f"C {_num(bc['mean_b'], '.1f')}; paired t = {_num(bc['t'])}, p = {_num(bc['p'])}; "
              f"Wilcoxon p = {_num(bc['wilcoxon_p'])}.", ""]

    qa = st.quartile_analysis(df)
    lines += ["## Where the hybrid gains most: top vs bottom quartile of A's gain over B", "",
              "Welch t-tests on instance features.", "", _md(qa)]

    lines += ["## Optimality gap", "",
              "exact: (exact expected cost - risk-neutral DP optimum)/optimum where the DP is tractable (position "
              "policies); oracle: (L(pi) - L of the oracle best (s,S) on the truth)/oracle, every instance "
              "(oracle_cost_gap: the same on expected cost). The oracle is what A would get from a perfect dialogue; "
              "a negative gap means the policy beat the oracle's (noisy, search-based) choice.", "",
              _md(st.optimality_gaps(df))]
    fa = st.field_accuracy(df)
    headline["field_accuracy"] = float(fa["accuracy"].mean()) if not fa.empty else math.nan
    lines += ["## Field-level extraction accuracy (A)", "", _md(fa)]
    lines += ["## Dialogue turns", "", _md(st.turns_summary(df))]
    lines += ["## pass^k over imitator seeds", "",
              "success = a policy within 5% of the oracle (s,S) cost; pass^k = mean over instances of C(c,k)/C(n,k).",
              "", _md(st.pass_table(df))]
    ft = st.failure_table(df)
    headline["failures"] = int((df["status"] != "ok").sum())
    lines += ["## Failures", "", _md(ft)]
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
    images = _plots(df, out)
    text += "\n## Plots\n\n" + "\n".join(f"![{n}]({n})" for n in images) + "\n"
    path = out / "report.md"
    path.write_text(text)
    return path
