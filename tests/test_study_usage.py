"""The report's LLM usage table: per-treatment sums of the per-unit accounting columns, and the CLI flags
that set the price table, the rate limit and the budget."""

from __future__ import annotations

import pandas as pd
import pytest

from evaluation.study_units import USAGE_COLUMNS
from evaluation.usage import usage_section, usage_table
from experiments import cli
from experiments.cli_study import config_from_cli


def rows(treatment: str, calls: int, cost: float) -> dict:
    return {"treatment": treatment, **{c: 0 for c in USAGE_COLUMNS}, "llm_calls": calls, "prompt_tokens": 10 * calls,
            "completion_tokens": 2 * calls, "cost_usd": cost}


def test_usage_table_sums_per_treatment_and_overall():
    df = pd.DataFrame([rows("A", 12, 0.03), rows("A", 10, 0.02), rows("B", 18, 0.01)])
    t = usage_table(df).set_index("treatment")
    assert t.loc["A", "units"] == 2 and t.loc["A", "llm_calls"] == 22 and t.loc["A", "prompt_tokens"] == 220
    assert t.loc["all", "llm_calls"] == 40 and t.loc["all", "cost_usd"] == pytest.approx(0.06)
    assert t.loc["B", "calls_per_unit"] == 18 and t.loc["A", "usd_per_unit"] == pytest.approx(0.025)
    text = "\n".join(usage_section(df, lambda d, f: d.to_string()))
    assert "## LLM usage and cost" in text and "price table" in text
    offline = pd.DataFrame([rows("A", 0, 0.0)])
    assert usage_section(offline, lambda d, f: "") == ["## LLM usage and cost", "", "No model calls (offline "
                                                                                     "stand-ins).", ""]
    assert usage_table(pd.DataFrame()).empty


def test_cli_price_table_and_fanout_flags(tmp_path, capsys):
    args = cli.build_parser().parse_args(["study", "--out", str(tmp_path / "x"), "--price", "gpt-4o=2.5,10",
                                          "--price", "*=0.1,0.4", "--max-concurrent-dialogues", "256",
                                          "--llm-rpm", "600", "--budget-usd", "5"])
    cfg = config_from_cli(args)
    assert cfg.prices == {"gpt-4o": {"prompt_per_million": 2.5, "completion_per_million": 10.0},
                          "*": {"prompt_per_million": 0.1, "completion_per_million": 0.4}}
    assert args.max_concurrent_dialogues == 256 and args.llm_rpm == 600 and args.budget_usd == 5
    out = str(tmp_path / "y")
    assert cli.main(["study", "--out", out, "--price", "gpt-4o=cheap"]) == 2
    assert cli.main(["study", "--out", out, "--max-concurrent-dialogues", "-1"]) == 2
    assert cli.main(["study", "--out", out, "--budget-usd", "0"]) == 2
    assert cli.main(["study", "--out", out, "--llm-rpm", "-5"]) == 2
    err = capsys.readouterr().err
    for flag in ("--price", "--max-concurrent-dialogues", "--budget-usd", "--llm-rpm"):
        assert flag in err
