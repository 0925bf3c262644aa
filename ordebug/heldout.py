"""The held-out split: real models the heuristic agent was never tuned on, frozen before its first score.

Why these models: the agent's rules were tuned on the synthetic families and on sabotaged copies of the
NETLIB/MIPLIB 3 models in ``shared/data/netlib`` and ``miplib3`` (the ``netlib`` split). The 29 NETLIB
infeasible models in ``shared/data/netlib-infeas`` were only ever used as the ``wild`` split, with no
injected error. Here each of them (up to `MAX_ROWS` rows) is first made feasible (drop the rows of an IIS,
free the bounds of an IIS without rows, repeat), and that feasible version is then sabotaged with the
project's operators. Models, structure and names are new to the agent's rules.

Freezing: ``ordebug/data/heldout.json`` lists the model files with their SHA-256, the seed and the number
of instances per model, and a checksum over that list. It was written and committed before the split was
first scored; `load_frozen` refuses to build from files that do not match it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from ordebug.iis import compute_iis
from ordebug.instances import Instance, build_from_model, seed_models, shared_data_dir
from ordebug.model import INF, LinearModel
from ordebug.solver import solve

FROZEN = Path(__file__).resolve().parent / "data" / "heldout.json"
# The instances themselves (ids and a digest of each sabotaged model), frozen after the second build: the
# build's solver time limits make the instance list depend on the machine's speed, so the model list alone
# did not make two scores comparable.
FROZEN_INSTANCES = Path(__file__).resolve().parent / "data" / "heldout_instances.json"
MAX_ROWS = 6000
SEED = 11
PER_MODEL = 3


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _checksum(entries: list[dict], seed: int, per_model: int) -> str:
    blob = json.dumps({"models": entries, "seed": seed, "per_model": per_model}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def freeze(directory: str | os.PathLike | None = None, path: Path = FROZEN, max_rows: int = MAX_ROWS) -> dict:
    """Write the held-out list (run once, before the first score; committed with the repo)."""
    d = Path(directory) if directory else shared_data_dir() / "netlib-infeas"
    entries = []
    for f in seed_models(d):
        model = LinearModel.from_mps(f)
        if model.num_rows <= max_rows:
            entries.append({"file": f.name, "sha256": _sha256(f), "rows": model.num_rows, "cols": model.num_cols})
    doc = {"source": "shared/data/netlib-infeas (made feasible, then sabotaged)", "seed": SEED,
           "per_model": PER_MODEL, "max_rows": max_rows, "models": entries,
           "checksum": _checksum(entries, SEED, PER_MODEL)}
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return doc


def load_frozen(directory: str | os.PathLike | None = None, path: Path = FROZEN) -> tuple[dict, list[Path]]:
    """The frozen list and the model files, after checking the list's checksum and every file's hash."""
    doc = json.loads(path.read_text())
    if _checksum(doc["models"], doc["seed"], doc["per_model"]) != doc["checksum"]:
        raise ValueError(f"held-out list {path} does not match its checksum: it was edited after freezing")
    d = Path(directory) if directory else shared_data_dir() / "netlib-infeas"
    files = []
    for entry in doc["models"]:
        f = d / entry["file"]
        if not f.is_file():
            raise ValueError(f"held-out model {f} is missing (set ASKOPT_SHARED_DATA)")
        if _sha256(f) != entry["sha256"]:
            raise ValueError(f"held-out model {f} differs from the frozen one (sha256 mismatch)")
        files.append(f)
    return doc, files


def instance_digest(inst: Instance) -> str:
    """SHA-256 of the sabotaged model as MPS text: two builds gave the same instance iff these agree."""
    return hashlib.sha256(inst.model.to_mps_text().encode()).hexdigest()


def freeze_instances(insts: list[Instance], path: Path = FROZEN_INSTANCES) -> dict:
    """Write the instance list of a build (run once; committed with the repo)."""
    entries = [{"instance_id": i.instance_id, "operator": i.operator, "sha256": instance_digest(i)}
               for i in sorted(insts, key=lambda i: i.instance_id)]
    blob = json.dumps(entries, sort_keys=True)
    doc = {"instances": entries, "checksum": hashlib.sha256(blob.encode()).hexdigest()}
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return doc


def select_frozen(insts: list[Instance], path: Path = FROZEN_INSTANCES) -> tuple[list[Instance], dict]:
    """The built instances that are on the frozen list with the same model, in the list's order, and what
    did not match: `missing` (not built here, e.g. a slower machine hit a time limit), `changed` (built
    with a different model), `extra` (built here, not on the list: left out)."""
    doc = json.loads(path.read_text())
    blob = json.dumps(doc["instances"], sort_keys=True)
    if hashlib.sha256(blob.encode()).hexdigest() != doc["checksum"]:
        raise ValueError(f"held-out instance list {path} does not match its checksum: it was edited after freezing")
    built = {i.instance_id: i for i in insts}
    kept, missing, changed = [], [], []
    for entry in doc["instances"]:
        inst = built.get(entry["instance_id"])
        if inst is None:
            missing.append(entry["instance_id"])
        elif instance_digest(inst) != entry["sha256"]:
            changed.append(entry["instance_id"])
        else:
            kept.append(inst)
    listed = {e["instance_id"] for e in doc["instances"]}
    return kept, {"frozen": len(listed), "kept": len(kept), "missing": missing, "changed": changed,
                  "extra": sorted(set(built) - listed)}


def make_feasible(model: LinearModel, rounds: int = 12, time_limit: float = 10.0) -> LinearModel | None:
    """Drop IIS rows (or free IIS bounds when an IIS has no rows) until the model solves to optimality."""
    m = model.copy()
    for _ in range(rounds):
        res = solve(m, time_limit=60.0)
        if res.optimal:
            return m
        if res.status not in ("infeasible", "unbounded_or_infeasible"):
            return None
        iis = compute_iis(m, time_limit=time_limit)
        if iis.status not in ("infeasible", "time_limit") or not iis.members:
            return None
        rows = sorted({i for k, i, _ in iis.members if k == "row"})
        if rows:
            m.delete_rows(rows)
        else:
            for _k, j, side in iis.members:
                (m.col_lower if side == "lower" else m.col_upper)[j] = -INF if side == "lower" else INF
    return m if solve(m, time_limit=60.0).optimal else None


def build_heldout_item(path: str | os.PathLike, per_model: int = PER_MODEL, seed: int = SEED) -> list[Instance]:
    model = LinearModel.from_mps(path)
    fixed = make_feasible(model)
    if fixed is None or fixed.num_rows == 0 or not np.isfinite(fixed.cost).all():
        return []
    fixed.name = model.name
    return build_from_model(fixed, per_model, split="heldout", seed=seed)
