"""Benchmark instances: a sabotaged (infeasible) model plus everything needed to score a repair.

An instance is kept only if the sabotaged model is infeasible and its stored IIS contains the edited
element. It records the edit (ground truth), the IIS, the solver version and settings, and the
original optimum (for the objective-preservation metric).
"""

from __future__ import annotations

import os
import pickle
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ordebug.generators import FAMILIES, generate
from ordebug.iis import compute_iis
from ordebug.model import LinearModel
from ordebug.progress import Progress
from ordebug.sabotage import OPERATORS, apply_sabotage
from ordebug.solver import SOLVER_SETTINGS, solve, solver_version

SPLITS = ("synthetic", "netlib", "wild", "heldout", "resilience", "custom")


def shared_data_dir() -> Path:
    """``$ASKOPT_SHARED_DATA`` or ``<repo root>/../shared/data`` (how CI lays the checkout out)."""
    env = os.environ.get("ASKOPT_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1].parent / "shared" / "data"


def size_tier(rows: int) -> str:
    return "small" if rows < 100 else ("medium" if rows < 1000 else "large")


def iis_tier(size: int) -> str:
    return "small" if size <= 3 else ("medium" if size <= 10 else "large")


@dataclass
class Instance:
    instance_id: str
    split: str
    source: str  # generator family or seed file name
    model: LinearModel = field(repr=False)
    operator: str = ""
    root: list[str] = field(default_factory=list)
    edit: dict = field(default_factory=dict)
    description: str = ""
    original_objective: float | None = None
    iis: dict = field(default_factory=dict)
    iis_contains_root: bool = False
    solver: str = ""
    settings: dict = field(default_factory=dict)
    size_tier: str = ""
    iis_tier: str = ""
    meta: dict = field(default_factory=dict)  # track-specific extras (resilience levers, ...)
    original: LinearModel | None = field(default=None, repr=False)  # pre-sabotage model (None: wild)

    @property
    def iis_elements(self) -> set[str]:
        return {f"row:{r}" for r, _ in self.iis.get("rows", [])} | {f"col:{c}" for c, _ in self.iis.get("col_bounds", [])}

    def manifest_row(self) -> dict:
        row = {k: v for k, v in asdict(self).items() if k not in ("model", "original", "iis", "edit", "settings", "meta", "root")}
        row.update(rows=self.model.num_rows, cols=self.model.num_cols, mip=self.model.is_mip,
                   root=";".join(self.root), iis_size=len(self.iis_elements),
                   iis_irreducible=bool(self.iis.get("irreducible")), iis_seconds=self.iis.get("seconds"))
        return row


def _iis_covers_root(model: LinearModel, iis: dict, root: list[str]) -> bool:
    elements = {f"row:{r}" for r, _ in iis.get("rows", [])} | {f"col:{c}" for c, _ in iis.get("col_bounds", [])}
    if any(r in elements for r in root):
        return True
    # Integrality roots are columns whose integrality (not bounds) is in conflict: they show up as
    # columns of the IIS rows.
    cols = set()
    for name, _ in iis.get("rows", []):
        js, _ = model.row_entries(model.row(name))
        cols |= {f"col:{model.col_names[j]}" for j in js}
    return any(r in cols for r in root)


def make_instance(model: LinearModel, operator: str, split: str, source: str, seed: int,
                  iis_time_limit: float = 10.0, base=None) -> Instance | None:
    """Sabotage a feasible `model` with `operator`; None when it does not yield a usable instance."""
    base = base if base is not None else solve(model, time_limit=60.0)
    if not base.optimal:
        return None
    out = apply_sabotage(model, operator, seed=seed, base=base)
    if out is None:
        return None
    bad, sab = out
    iis = compute_iis(bad, time_limit=iis_time_limit)
    if iis.status != "infeasible" or not iis.members:
        return None
    iis_json = iis.to_json()
    covers = _iis_covers_root(bad, iis_json, sab.root)
    if not covers:
        return None
    return Instance(
        instance_id=f"{split}:{source}:{operator}:{seed}", split=split, source=source, model=bad,
        operator=operator, root=sab.root, edit=sab.edit, description=sab.description,
        original_objective=base.objective, iis=iis_json, iis_contains_root=covers, solver=solver_version(),
        settings={**SOLVER_SETTINGS, "iis_time_limit": iis_time_limit, "iis_strategy": iis.settings.get("iis_strategy")},
        size_tier=size_tier(model.num_rows), iis_tier=iis_tier(iis.size), original=model,
    )


def synthetic_plan(sizes: tuple[str, ...] = ("small", "medium"), seed: int = 0,
                   large_families: tuple[str, ...] = ("inventory", "production", "diet")) -> list[tuple]:
    """(family, size, operator, seed) tuples of the synthetic split; large models for a few families."""
    plan = []
    for fam in FAMILIES:
        fam_sizes = list(sizes) + (["large"] if fam in large_families and "large" not in sizes else [])
        for size in fam_sizes:
            for k, op in enumerate(OPERATORS):
                plan.append((fam, size, op, seed * 1000 + k))
    return plan


def build_synthetic_item(item: tuple) -> Instance | None:
    fam, size, op, s = item
    model = generate(fam, size, seed=s % 1000 + 1)
    return make_instance(model, op, "synthetic", f"{fam}-{size}", seed=s)


def seed_models(directory: str | os.PathLike) -> list[Path]:
    d = Path(directory)
    if not d.is_dir():
        raise ValueError(f"--seeds must be a directory of MPS files, got {str(d)!r}")
    files = sorted(p for p in d.iterdir() if p.suffix.lower() in (".mps", ".lp") or p.name.lower().endswith(".mps.gz"))
    if not files:
        raise ValueError(f"--seeds directory {str(d)!r} holds no .mps files")
    return files


def build_from_seed_file(path: str | os.PathLike, per_model: int, split: str, seed: int = 0,
                         operators: tuple[str, ...] = OPERATORS) -> list[Instance]:
    """Up to `per_model` instances from one feasible model, cycling through the operators."""
    return build_from_model(LinearModel.from_mps(path), per_model, split, seed, operators)


def build_from_model(model: LinearModel, per_model: int, split: str, seed: int = 0,
                     operators: tuple[str, ...] = OPERATORS) -> list[Instance]:
    base = solve(model, time_limit=60.0)
    if not base.optimal:
        return []
    out: list[Instance] = []
    rng = np.random.default_rng(seed)
    ops = [operators[k] for k in rng.permutation(len(operators))]
    k = 0
    while len(out) < per_model and k < 3 * len(ops):
        op = ops[k % len(ops)]
        inst = make_instance(model, op, split, model.name, seed=seed * 1000 + k, base=base)
        if inst is not None and inst.instance_id not in {i.instance_id for i in out}:
            out.append(inst)
        k += 1
    return out


def build_wild(directory: str | os.PathLike | None = None, iis_time_limit: float = 10.0,
               names: list[str] | None = None, progress: bool = True) -> list[Instance]:
    """The in-the-wild split: models infeasible as published (no injected edit, no original optimum)."""
    d = Path(directory) if directory else shared_data_dir() / "netlib-infeas"
    files = seed_models(d)
    if names:
        files = [f for f in files if f.stem in names]
    out = []
    bar = Progress(len(files), "wild IIS", progress and len(files) >= 5)
    for f in files:
        bar.update()
        model = LinearModel.from_mps(f)
        iis = compute_iis(model, time_limit=iis_time_limit)
        if iis.status != "infeasible":
            continue
        out.append(Instance(instance_id=f"wild:{model.name}", split="wild", source=model.name, model=model,
                            iis=iis.to_json(), solver=solver_version(),
                            settings={**SOLVER_SETTINGS, "iis_time_limit": iis_time_limit},
                            size_tier=size_tier(model.num_rows), iis_tier=iis_tier(iis.size)))
    return out


def save_instances(instances: list[Instance], path: str | os.PathLike) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        pickle.dump(instances, fh)
    pd.DataFrame([i.manifest_row() for i in instances]).to_parquet(path.with_suffix(".manifest.parquet"))


def load_instances(path: str | os.PathLike) -> list[Instance]:
    with open(path, "rb") as fh:
        return pickle.load(fh)


ERROR_TYPES = {  # the published OR-Debug-Bench error_type names -> our operators (unknown names kept as given)
    "flip_sense": "flip_sense", "sense_flip": "flip_sense", "tighten_rhs": "tighten_rhs", "rhs": "tighten_rhs",
    "conflicting_bound": "conflicting_bound", "bound": "conflicting_bound", "flip_coef_sign": "flip_coef_sign",
    "coefficient": "flip_coef_sign", "scale_row": "scale_row", "drop_bound": "drop_bound",
    "contradictory_row": "contradictory_row", "contradictory_constraint": "contradictory_row",
    "integrality": "integrality",
}


def load_published(directory: str | os.PathLike, iis_time_limit: float = 10.0) -> list[Instance]:
    """Instances in the published OR-Debug-Bench layout: ``dataset.json`` (a list, or ``{"problems": [...]}``)
    with problem_id, model_file, error_type, target_name, iis_constraints, original_objective; MPS files
    under ``models/``. The target is matched to a row first, then a column. The stored IIS is ours
    (with sides, which the published list lacks); the published ``iis_constraints`` are kept in
    ``meta["published_iis"]``."""
    import json

    d = Path(directory)
    index = d / "dataset.json"
    if not index.is_file():
        raise ValueError(f"--instances must be a folder with dataset.json (and models/); {str(index)!r} not found")
    try:
        doc = json.loads(index.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"--instances: cannot read {str(index)!r}: {exc}") from None
    items = doc.get("problems", doc.get("instances")) if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        raise ValueError(f"--instances: {str(index)!r} must hold a list of problems")
    out: list[Instance] = []
    for k, item in enumerate(items):
        if not isinstance(item, dict) or "model_file" not in item:
            raise ValueError(f"--instances: problem #{k} in dataset.json needs a model_file")
        path = Path(item["model_file"])
        path = path if path.is_absolute() else (d / path if (d / path).is_file() else d / "models" / path.name)
        model = LinearModel.from_mps(path)
        target = str(item.get("target_name") or "")
        root = [f"row:{target}"] if model.has_row(target) else ([f"col:{target}"] if model.has_col(target) else [])
        published = [str(n) for n in item.get("iis_constraints") or []]
        iis = compute_iis(model, time_limit=iis_time_limit).to_json()
        z0 = item.get("original_objective")
        op = str(item.get("error_type") or "")
        out.append(Instance(
            instance_id=f"external:{item.get('problem_id', k)}", split="external", source=path.stem, model=model,
            operator=ERROR_TYPES.get(op, op), root=root, edit={"kind": op, "target": target},
            original_objective=float(z0) if isinstance(z0, (int, float)) else None, iis=iis,
            iis_contains_root=bool(set(root) & ({f"row:{r}" for r, _ in iis.get("rows", [])}
                                                | {f"col:{c}" for c, _ in iis.get("col_bounds", [])})),
            solver=solver_version(), settings=dict(SOLVER_SETTINGS), size_tier=size_tier(model.num_rows),
            iis_tier=iis_tier(len(iis.get("rows", [])) + len(iis.get("col_bounds", []))),
            meta={"published_iis": published}))
    return out
