"""The report's figures: one style, log or symlog axes where costs span decades, a caption per figure.

Each function draws one PNG into `out` and returns a `Figure` record (file name, caption with the number of
points, the axes scales) or None when there is nothing to plot. Why these plots: an ECDF shows every
instance's reduction without binning choices; relative cost and the DP ratio sit on log axes so one instance
at 100x the oracle does not flatten the others; the heatmap gives each cell's mean reduction with its interval.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from evaluation import stats as st  # noqa: E402

COLORS = {"A": "#1b6ca8", "B": "#e07b39", "C": "#3a9a5b"}
COMPARISON_COLORS = {("A", "B"): "#e07b39", ("A", "C"): "#3a9a5b", ("B", "C"): "#7d5ba6"}
STYLE = {"figure.dpi": 110, "font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10, "legend.fontsize": 9,
         "xtick.labelsize": 9, "ytick.labelsize": 9, "axes.grid": True, "grid.alpha": 0.3,
         "axes.spines.top": False, "axes.spines.right": False}


@dataclass
class Figure:
    name: str
    caption: str
    xscale: str = "linear"
    yscale: str = "linear"
    extra: dict = field(default_factory=dict)


def _save(fig, out: Path, name: str) -> None:
    fig.tight_layout()
    fig.savefig(out / name)
    plt.close(fig)


def _log_ticks(ax) -> None:
    """Readable labels on a log ratio axis: 1x, 2x, 5x, 10x ... (and 0.5x below 1)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _symlog_ticks(ax, lo: float) -> None:
    """Symlog x axis (linear within +/-100%): ticks at 0, +/-50, +/-100 and each decade below -100."""
    ticks = [t for t in (-50.0, 0.0, 50.0, 100.0)]
    d = -100.0
    while d >= lo * 1.0001 or d == -100.0:
        ticks.append(d)
        d *= 10
    ax.set_xticks(sorted(ticks))
    ax.set_xticklabels([f"{t:+.0f}%" if t else "0" for t in sorted(ticks)], rotation=30, ha="right")


def _symlog_needed(values_pct: np.ndarray) -> bool:
    return bool(len(values_pct)) and float(np.nanmin(values_pct)) < -100.0


def ecdf_reduction(df: pd.DataFrame, out: Path, value: str = "mc_objective") -> Figure | None:
    """ECDF of the per-instance (trials averaged) cost reduction, one step line per comparison."""
    series = {}
    for a, b in (("A", "B"), ("A", "C"), ("B", "C")):
        per = st.per_instance(st.paired(df, a, b, value))
        if len(per):
            series[(a, b)] = 100 * np.sort(per["reduction"].to_numpy())
    if not series:
        return None
    allv = np.concatenate(list(series.values()))
    symlog = _symlog_needed(allv)
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(6.4, 3.8))
        for (a, b), v in series.items():
            y = np.arange(1, len(v) + 1) / len(v)
            ax.step(v, y, where="post", color=COMPARISON_COLORS[(a, b)], lw=1.8,
                    label=f"{a} vs {b} (n = {len(v)} instances)")
        ax.axvline(0, color="k", lw=0.8)
        if symlog:
            ax.set_xscale("symlog", linthresh=100)
            _symlog_ticks(ax, float(np.nanmin(allv)))
            ax.set_xlim(right=110)  # a reduction cannot pass +100%
        ax.set_xlabel("cost reduction, (cost of second - cost of first) / cost of second (%)"
                      + (" [symlog axis]" if symlog else ""))
        ax.set_ylabel("share of instances at or below (fraction)")
        ax.set_ylim(0, 1.02)
        ax.legend(loc="upper left")
        ax.set_title("Per-instance cost reduction (ECDF)")
        _save(fig, out, "ecdf_cost_reduction.png")
    n = ", ".join(f"{a} vs {b}: {len(v)}" for (a, b), v in series.items())
    return Figure("ecdf_cost_reduction.png",
                  "Empirical CDF of the per-instance cost reduction (trials averaged) of the first treatment over "
                  f"the second; right of 0 = the first is cheaper. Points: {n} instances."
                  + (" The x axis is symlog (linear within +/-100%) because some reductions are below -100%."
                     if symlog else ""), xscale="symlog" if symlog else "linear")


def relative_cost(df: pd.DataFrame, out: Path, value: str = "mc_objective") -> Figure | None:
    """Each unit's cost over the oracle (s,S) cost, per cell and treatment, on a log axis (box + points)."""
    ref = "oracle_objective" if value == "mc_objective" else "oracle_cost"
    ok = df[(df["status"] == "ok") & df[value].notna() & (df[ref] > 0)]
    if ok.empty:
        return None
    ok = ok.assign(rel=ok[value] / ok[ref])
    cells = sorted(ok["cell"].unique())
    treatments = sorted(ok["treatment"].unique())
    width = 0.8 / len(treatments)
    rng = np.random.default_rng(0)
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(min(10.0, max(6.4, 1.1 * len(cells) + 2)), 4.0))
        for j, t in enumerate(treatments):
            pos = [i + (j - (len(treatments) - 1) / 2) * width for i in range(len(cells))]
            data = [ok[(ok["cell"] == c) & (ok["treatment"] == t)]["rel"].to_numpy() for c in cells]
            keep = [(p, d) for p, d in zip(pos, data, strict=True) if len(d)]
            if not keep:
                continue
            bp = ax.boxplot([d for _, d in keep], positions=[p for p, _ in keep], widths=width * 0.8,
                            showfliers=False, patch_artist=True)
            for box in bp["boxes"]:
                box.set(facecolor=COLORS.get(t, "grey"), alpha=0.35)
            for p, d in keep:
                ax.scatter(p + rng.uniform(-width / 4, width / 4, len(d)), d, s=9, color=COLORS.get(t, "grey"),
                           alpha=0.8, zorder=3)
            ax.scatter([], [], color=COLORS.get(t, "grey"), label=f"{t}")
        ax.set_yscale("log")
        _log_ticks(ax)
        ax.axhline(1, color="k", lw=0.8)
        ax.set_xticks(range(len(cells)))
        ax.set_xticklabels(cells, rotation=20 if len(cells) > 4 else 0, ha="right" if len(cells) > 4 else "center")
        ax.set_xlabel("cell (demand distribution - lead time band)")
        ax.set_ylabel("cost / oracle (s,S) cost (ratio, log axis)")
        ax.legend(title="treatment", loc="upper left", bbox_to_anchor=(1.01, 1.0))
        ax.set_title("Relative cost per unit")
        _save(fig, out, "relative_cost.png")
    lo, hi = float(ok["rel"].min()), float(ok["rel"].max())
    return Figure("relative_cost.png",
                  f"Each unit's cost divided by the oracle (s,S) cost on the true problem, per cell and treatment "
                  f"(boxes: quartiles; dots: units), log axis; 1 = the oracle. Points: {len(ok)} units "
                  f"(range {lo:.3g}x to {hi:.3g}x).", yscale="log")


def cell_heatmap(df: pd.DataFrame, out: Path, value: str = "mc_objective") -> Figure | None:
    """Mean per-instance cost reduction (%) per cell x comparison, annotated with the bootstrap interval."""
    comps = [("A", "B"), ("A", "C"), ("B", "C")]
    cells = sorted(df["cell"].dropna().unique())
    mat = np.full((len(cells), len(comps)), np.nan)
    notes = [["" for _ in comps] for _ in cells]
    npts = 0
    for j, (a, b) in enumerate(comps):
        p = st.paired(df, a, b, value)
        for i, c in enumerate(cells):
            per = st.per_instance(p[p["cell"] == c]) if len(p) else pd.DataFrame()
            if len(per):
                m = 100 * per["reduction"].mean()
                lo, hi = st.bootstrap_mean_ci(per["reduction"].to_numpy())
                mat[i, j] = m
                ci = f"\n[{100 * lo:+.0f}, {100 * hi:+.0f}]" if not np.isnan(lo) else ""
                notes[i][j] = f"{m:+.1f}%{ci}\nn={len(per)}"
                npts += len(per)
    if np.all(np.isnan(mat)):
        return None
    lim = max(5.0, min(100.0, float(np.nanmax(np.abs(mat)))))
    with plt.rc_context({**STYLE, "axes.grid": False}):
        fig, ax = plt.subplots(figsize=(7.0, 0.6 * len(cells) + 1.8))
        im = ax.imshow(np.clip(mat, -lim, lim), cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
        for i in range(len(cells)):
            for j in range(len(comps)):
                dark = not np.isnan(mat[i, j]) and abs(mat[i, j]) > 0.55 * lim
                ax.text(j, i, notes[i][j] or "no pairs", ha="center", va="center", fontsize=8,
                        color="white" if dark else "black")
        ax.set_xticks(range(len(comps)))
        ax.set_xticklabels([f"{a} vs {b}" for a, b in comps])
        ax.set_yticks(range(len(cells)))
        ax.set_yticklabels(cells)
        ax.set_xlabel("comparison (first treatment over second)")
        ax.set_ylabel("cell (demand - lead time)")
        cb = fig.colorbar(im, ax=ax)
        cb.set_label(f"mean reduction (%), clipped at +/-{lim:.0f}")
        ax.set_title("Mean cost reduction per cell")
        _save(fig, out, "cell_heatmap.png")
    return Figure("cell_heatmap.png",
                  "Mean per-instance cost reduction (mean of ratios, trials averaged) per cell and comparison with "
                  f"its 95% bootstrap interval (over instances); blue = the first treatment is cheaper. Points: "
                  f"{npts} instance-comparisons in {len(cells)} cells.")


def dp_ratio(df: pd.DataFrame, out: Path) -> Figure | None:
    """Each policy's exact expected cost over the DP optimum, per treatment, where the DP is tractable."""
    ok = df[(df["status"] == "ok") & df["opt_gap"].notna()] if "opt_gap" in df else pd.DataFrame()
    if ok.empty:
        return None
    ok = ok.assign(ratio=1 + ok["opt_gap"])
    treatments = sorted(ok["treatment"].unique())
    rng = np.random.default_rng(1)
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        for j, t in enumerate(treatments):
            v = ok[ok["treatment"] == t]["ratio"].to_numpy()
            ax.scatter(j + rng.uniform(-0.15, 0.15, len(v)), v, s=14, color=COLORS.get(t, "grey"), alpha=0.8)
            ax.plot([j - 0.3, j + 0.3], [np.median(v)] * 2, color="k", lw=1.5)
        ax.set_yscale("log")
        _log_ticks(ax)
        ax.axhline(1, color="k", lw=0.8, ls="--")
        ax.set_xticks(range(len(treatments)))
        ax.set_xticklabels([f"{t} (n = {int((ok['treatment'] == t).sum())})" for t in treatments])
        ax.set_xlabel("treatment")
        ax.set_ylabel("cost / DP optimum (ratio, log axis)")
        ax.set_title("Cost against the DP optimum")
        _save(fig, out, "cost_vs_dp_optimum.png")
    return Figure("cost_vs_dp_optimum.png",
                  "Each unit's exact expected cost divided by the risk-neutral DP optimum, on the instances where "
                  f"the DP is tractable (dots: units; bar: median), log axis; 1 = optimal. Points: {len(ok)} units "
                  f"on {ok['instance_id'].nunique()} instances.", yscale="log")


def all_figures(df: pd.DataFrame, out: Path) -> list[Figure]:
    out = Path(out)
    figs = [ecdf_reduction(df, out), relative_cost(df, out), cell_heatmap(df, out), dp_ratio(df, out)]
    return [f for f in figs if f is not None]
