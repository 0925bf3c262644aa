"""Episode metrics and the leaderboard. Definitions are in docs/ordebug.md; this is their one implementation.

* RR@k: recovered (a ``solve`` returned OPTIMAL) within k solver calls.
* DA: share of the agent's named root causes that are the ground-truth edited element
  (``1/|suspects|`` if the truth is among them, else 0): naming everything dilutes the credit.
* IIS credit (``iis_ok``): the agent's reported conflict set is an infeasible subsystem of the given model
  that contains the root cause -- *any* IIS counts, not only the stored one; ``iis_recall`` is the
  share of the stored IIS elements it names.
* OP = max(0, 1 - |Z_rec - Z_orig| / max(|Z_orig|, 1)); 0 when not recovered, NaN without Z_orig (wild).
* TE = 1 / (solver calls up to recovery); 0 when not recovered.
* FP: over R = (stored IIS elements U elements the agent changed) restricted to elements of the original
  model, the share that is *kept*: not dropped and satisfied in its original form by the recovered
  solution. Dropping a row always breaks it; loosening breaks it when the solution uses the slack.
* rational recovery: recovered within the budget with OP >= 0.99 and FP >= 0.95 (FP only on wild).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ordebug.env import EpisodeLog
from ordebug.iis import subsystem_infeasible
from ordebug.instances import Instance
from ordebug.model import INF, LinearModel

RR_KS = (5, 10, 20)
OP_RATIONAL = 0.99
FP_RATIONAL = 0.95
LEADERBOARD_COLUMNS = ["agent", "split", "n", "RR@5", "RR@10", "RR@20", "DA", "OP", "TE", "FP", "rational", "failed"]


def _row_kept(orig: LinearModel, name: str, x: np.ndarray, tol: float = 1e-6) -> bool:
    i = orig.row(name)
    cols, vals = orig.row_entries(i)
    act = float(vals @ x[cols])
    lo, up = orig.row_lower[i], orig.row_upper[i]
    ok_lo = lo <= -INF or act >= lo - tol * (1 + abs(lo))
    ok_up = up >= INF or act <= up + tol * (1 + abs(up))
    return bool(ok_lo and ok_up)


def _col_kept(orig: LinearModel, name: str, x: np.ndarray, tol: float = 1e-6) -> bool:
    j = orig.col(name)
    v = x[j]
    lo, up = orig.col_lower[j], orig.col_upper[j]
    if lo > -INF and v < lo - tol * (1 + abs(lo)):
        return False
    if up < INF and v > up + tol * (1 + abs(up)):
        return False
    return not (orig.integer[j] and abs(v - round(v)) > 1e-5)


def fidelity(instance: Instance, log: EpisodeLog) -> tuple[float, int, int]:
    """(FP, kept, |R|) as defined in the module docstring."""
    if log.final_x is None:
        return 0.0, 0, 0
    orig = instance.original or instance.model
    universe = instance.iis_elements | set(log.final_edited)
    if instance.original is None:
        # No pre-error model (published instances): the named error element is wrong as given, so its
        # given form is no reference; the rest of the model is.
        universe -= set(instance.root)
    ref = []
    for el in universe:
        kind, _, name = el.partition(":")
        if (kind == "row" and orig.has_row(name)) or (kind == "col" and orig.has_col(name)):
            ref.append((kind, name))
    if not ref:
        return 1.0, 0, 0
    kept = 0
    for kind, name in ref:
        if kind == "row":
            kept += (name not in log.final_dropped) and _row_kept(orig, name, log.final_x)
        else:
            kept += _col_kept(orig, name, log.final_x)
    return kept / len(ref), kept, len(ref)


def objective_preservation(z: float, z0: float) -> float:
    """OP of a recovered model's objective `z` against the intended objective `z0` (module docstring)."""
    return max(0.0, 1.0 - abs(z - z0) / max(abs(z0), 1.0))


def root_rank(truth: set[str], ranking: list[str]) -> tuple[float, float]:
    """(1-based rank of the first true root element in the agent's suspect ranking, its reciprocal).

    The ranking-quality metric: how many suspects an agent would probe before the real error. A root
    missing from the ranking ranks last + 1 (reciprocal 0); NaN when there is no ground truth (wild) or
    the agent gave no ranking."""
    ranked = list(dict.fromkeys(ranking))
    if not truth or not ranked:
        return math.nan, math.nan
    for k, el in enumerate(ranked, start=1):
        if el in truth:
            return float(k), 1.0 / k
    return float(len(ranked) + 1), 0.0


def episode_metrics(instance: Instance, log: EpisodeLog, check_conflict: bool = True) -> dict:
    """One leaderboard row's worth of numbers for one episode."""
    recovered = log.recovered_at is not None
    calls = log.recovered_at if recovered else None
    row: dict = {"instance_id": instance.instance_id, "recovered": recovered, "calls_to_recover": calls,
                 "solver_calls": log.solver_calls, "iis_calls": log.iis_calls}
    for k in RR_KS:
        row[f"RR@{k}"] = float(recovered and calls <= k)
    truth = set(instance.root)
    if truth:
        suspects = list(dict.fromkeys(log.diagnosis_root))
        row["DA"] = (1.0 / len(suspects)) if suspects and truth & set(suspects) else 0.0
    else:
        row["DA"] = math.nan
    row["root_rank"], row["root_rr"] = root_rank(truth, log.diagnosis_ranking)
    conflict = set(log.diagnosis_conflict)
    stored = instance.iis_elements
    row["iis_recall"] = len(conflict & stored) / len(stored) if stored else math.nan
    if conflict and check_conflict:
        contains = (not truth) or bool(truth & conflict) or _integrality_root_in(instance, conflict)
        row["iis_ok"] = float(contains and subsystem_infeasible(instance.model, conflict, time_limit=10.0))
    else:
        row["iis_ok"] = 0.0 if truth else math.nan
    z0 = instance.original_objective
    if z0 is None:
        row["OP"] = math.nan
    elif recovered and log.final_objective is not None:
        row["OP"] = objective_preservation(log.final_objective, z0)
    else:
        row["OP"] = 0.0
    row["TE"] = 1.0 / calls if recovered and calls else 0.0
    fp, kept, ref = fidelity(instance, log)
    row.update(FP=fp, fp_kept=kept, fp_ref=ref)
    op_ok = True if math.isnan(row["OP"]) else row["OP"] >= OP_RATIONAL
    row["rational"] = float(recovered and op_ok and fp >= FP_RATIONAL)
    row["final_objective"] = log.final_objective
    row["original_objective"] = z0
    row["edited"] = ";".join(sorted(log.final_edited))
    row["dropped"] = len(log.final_dropped)
    row["diagnosis"] = ";".join(log.diagnosis_root)
    return row


def _integrality_root_in(instance: Instance, conflict: set[str]) -> bool:
    """An integrality root (columns) is 'in' a conflict made of the rows those columns appear in."""
    if instance.operator != "integrality":
        return False
    m = instance.model
    for el in conflict:
        kind, _, name = el.partition(":")
        if kind == "row" and m.has_row(name):
            cols, _ = m.row_entries(m.row(name))
            if {f"col:{m.col_names[j]}" for j in cols} & set(instance.root):
                return True
    return False


def leaderboard(df: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """Aggregate episode rows into leaderboard rows (mean of each metric; failed episodes count as 0)."""
    by = by or ["agent", "split"]
    if df.empty:
        return pd.DataFrame(columns=by + [c for c in LEADERBOARD_COLUMNS if c not in by])
    d = df.copy()
    d["failed"] = d.get("error", pd.Series([""] * len(d))).fillna("").astype(str).ne("").astype(float)
    metric_cols = ["RR@5", "RR@10", "RR@20", "DA", "OP", "TE", "FP", "rational"]
    for c in metric_cols:
        if c not in d:
            d[c] = np.nan
    # A failed episode did not recover: RR/TE/FP/rational count as 0 (DA/OP stay as recorded).
    fail = d["failed"] > 0
    for c in ("RR@5", "RR@10", "RR@20", "TE", "FP", "rational"):
        d.loc[fail, c] = d.loc[fail, c].fillna(0.0)
    extras = [c for c in ("root_rr", "root_rank", "service_level", "bottleneck_found") if c in d and d[c].notna().any()]
    metric_cols = metric_cols + extras
    g = d.groupby(by, dropna=False)
    out = g[metric_cols].mean()
    out["n"] = g.size()
    out["failed"] = g["failed"].sum().astype(int)
    out = out.reset_index()
    return out[by + ["n"] + metric_cols + ["failed"]]


def format_table(board: pd.DataFrame) -> str:
    shown = board.copy()
    for c in ("RR@5", "RR@10", "RR@20", "DA", "OP", "TE", "FP", "rational", "root_rr", "root_rank", "service_level",
              "bottleneck_found"):
        if c in shown:
            shown[c] = shown[c].map(lambda v: "  n/a" if pd.isna(v) else f"{v:5.3f}")
    return shown.to_string(index=False)
