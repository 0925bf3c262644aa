"""Deployment artifacts: the one place that names the files and fixes their schema.

`askopt solve`, `askopt optimize`, the dialogue and serving all write through `write_artifacts`, so a script reading
`config.json` or `policy_evaluation_results.csv` sees one schema whichever command produced it. The schema is
versioned (`SCHEMA_VERSION`); `read_config` refuses a file of another version with a message naming it.

When a DQN was trained, rl's own `config.json` fields (network, normalisation, observation: what
`rl.artifacts.DQNRecommender.load` needs) are kept at the top level beside ours, so the torch-only loader keeps
working on the same file.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

import pydantic

from rl.features import obs_dim

if TYPE_CHECKING:
    from optimization.service import OptimizationResult, PolicyScore

SCHEMA_VERSION = "askopt-deployment/2"
CONFIG_FILE = "config.json"
RESULTS_FILE = "policy_evaluation_results.csv"
WEIGHTS_FILE = "dqn_weights.pth"
DP_ROW = "dp_optimum_exact"  # the CSV row carrying the DP's exact optimal expected cost
CSV_COLUMNS = ("policy", "label", "role", "s", "S", "mean_cost", "std_cost", "stderr", "objective", "fill_rate",
               "winner")


class DeploymentConfig(pydantic.BaseModel):
    """config.json: the problem, the dimensions a DQN deployment needs, and what was found."""

    model_config = pydantic.ConfigDict(extra="allow")  # rl's DQN fields ride along when a DQN was trained

    schema_version: str = SCHEMA_VERSION
    problem: dict
    lead_time: int
    max_inventory: int
    max_order: int
    horizon: int
    state_dim: int  # the DQN observation: on-hand, L pipeline entries, position, time (L + 3)
    action_dim: int  # orders 0..max_order
    objective: str
    methods: list[str]
    winner: dict | None
    best_ss: dict | None  # s, S, Monte Carlo cost, exact cost (None where intractable), seconds
    dp: dict | None
    dqn_trained: bool


def build_config(result: OptimizationResult) -> DeploymentConfig:
    p = result.problem
    return DeploymentConfig(
        problem=p.to_dict(),
        lead_time=p.lead_time,
        max_inventory=p.max_inventory,
        max_order=p.max_order,
        horizon=p.horizon,
        state_dim=obs_dim(p),
        action_dim=p.max_order + 1,
        objective=result.objective,
        methods=[s.name for s in result.scores],
        winner=result.winner.as_dict() if result.winner else None,
        best_ss=result.ss_search,
        dp=result.dp,
        dqn_trained=result.trained_dqn is not None,
    )


def results_table(result: OptimizationResult) -> list[dict]:
    """One row per scored policy (candidates, then outside advice), plus the DP's exact optimum when solved.

    Plain rows written with the csv module: `askopt solve` should not pay pandas' import to write ten lines."""

    def row(sc: PolicyScore) -> dict:
        return {
            "policy": sc.name, "label": sc.label, "role": sc.role,
            "s": sc.params.get("s"), "S": sc.params.get("S"),
            "mean_cost": round(sc.mean_cost, 4), "std_cost": round(sc.std_cost, 4), "stderr": round(sc.stderr, 4),
            "objective": round(sc.objective, 4),
            "fill_rate": round(sc.fill_rate, 4) if math.isfinite(sc.fill_rate) else None,
            "winner": sc is result.winner,
        }

    rows = [row(sc) for sc in result.scores + result.extra_scores]
    if result.dp and result.dp.get("optimal_cost") is not None and result.dp.get("status") == "solved":
        rows.append({"policy": DP_ROW, "label": "exact DP optimal expected cost", "role": "reference",
                     "mean_cost": round(float(result.dp["optimal_cost"]), 4), "stderr": 0.0, "winner": False})
    return [{c: r.get(c) for c in CSV_COLUMNS} for r in rows]


def write_artifacts(result: OptimizationResult, out_dir: Path) -> Path:
    """config.json, policy_evaluation_results.csv and (when a DQN was trained) dqn_weights.pth in `out_dir`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rl_fields: dict = {}
    if result.trained_dqn is not None:
        result.trained_dqn.save(out)  # writes the weights and rl's loader fields
        rl_fields = json.loads((out / CONFIG_FILE).read_text())
    config = {**rl_fields, **build_config(result).model_dump()}
    (out / CONFIG_FILE).write_text(json.dumps(config, indent=2, default=_json_default))
    with (out / RESULTS_FILE).open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(CSV_COLUMNS))
        writer.writeheader()
        writer.writerows({k: ("" if v is None else v) for k, v in row.items()} for row in results_table(result))
    return out


def read_config(out_dir: Path) -> DeploymentConfig:
    """config.json of a deployment folder, validated against this schema version."""
    path = Path(out_dir) / CONFIG_FILE
    data = json.loads(path.read_text())
    if data.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"{path}: schema_version {data.get('schema_version')!r} is not allowed; "
                         f"expected {SCHEMA_VERSION!r}")
    return DeploymentConfig.model_validate(data)


def _json_default(x):
    if hasattr(x, "item"):
        return x.item()
    return str(x)
