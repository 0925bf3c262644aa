"""LLM usage and cost per treatment: the report's accounting table, summed from the per-unit columns.

Every unit row carries its own LLM accounting (`evaluation.study_units.USAGE_COLUMNS`: calls, retries, 429s,
prompt/completion tokens, seconds waiting on the model and on the client-side limiter, cost from the
study's price table). Offline units have zeros, so an offline study's table says "no model calls".
"""

from __future__ import annotations

import pandas as pd

from evaluation.study_units import USAGE_COLUMNS


def usage_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per treatment (and in total): units, model calls, retries, 429s, tokens, model seconds, USD."""
    if df.empty or not set(USAGE_COLUMNS) <= set(df.columns):
        return pd.DataFrame()
    sums = df.groupby("treatment")[list(USAGE_COLUMNS)].sum()
    sums.insert(0, "units", df.groupby("treatment").size())
    total = sums.sum().to_frame("all").T
    out = pd.concat([sums, total])
    out["calls_per_unit"] = out["llm_calls"] / out["units"]
    out["usd_per_unit"] = out["cost_usd"] / out["units"]
    out = out.reset_index(names="treatment")
    for c in ("units", "llm_calls", "llm_failed_calls", "llm_retries", "llm_rate_limited", "prompt_tokens",
              "completion_tokens"):
        out[c] = out[c].astype(int)
    return out


def usage_section(df: pd.DataFrame, md) -> list[str]:
    """The report's markdown lines (`md` renders a frame, the report's own table function)."""
    table = usage_table(df)
    if table.empty:
        return []
    if int(table["llm_calls"].sum()) == 0:
        return ["## LLM usage and cost", "", "No model calls (offline stand-ins).", ""]
    return ["## LLM usage and cost", "",
            "Summed from the per-unit columns: calls (successful), retries (429s included), tokens as the server "
            "counted them, model_seconds (time inside model calls, retries and backoff included), "
            "limiter_seconds (waiting for the client-side rate limiter), cost_usd (the study's price table; "
            "0 for models it does not list).", "", md(table, ".4g")]
