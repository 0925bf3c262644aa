"""The step environment: an agent debugs one infeasible instance through a budget of solver calls.

Only ``solve`` and ``get_iis`` are solver calls (they count against the budget and for TE). Inspecting
rows/columns and editing the model are free: they are what a modeller does in an editor. The episode
log holds everything the metrics need (edits, the last optimal solution, the diagnosis).
"""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass, field

import numpy as np

from ordebug.iis import certificate_shares, compute_iis
from ordebug.instances import Instance
from ordebug.model import INF, LinearModel
from ordebug.solver import solve

_DIGITS = re.compile(r"\d+")
_LAST_DIGITS = re.compile(r"\d+(?!.*\d)")
SOLVER_OPS = ("solve", "get_iis")
FREE_OPS = ("inspect_row", "inspect_col", "list_rows", "list_cols", "set_rhs", "set_sense", "set_bound",
            "set_coef", "scale_row", "drop_row", "set_integrality", "undo", "diagnose", "submit")
ALL_OPS = SOLVER_OPS + FREE_OPS
EDIT_OPS = ("set_rhs", "set_sense", "set_bound", "set_coef", "scale_row", "drop_row", "set_integrality")


@functools.lru_cache(maxsize=1 << 20)
def family(name: str) -> str:
    """Name pattern shared by sibling rows/columns: digits replaced by '#' (``cap_t3`` -> ``cap_t#``).
    Cached: the agents ask it for the same names millions of times per episode on large models."""
    return _DIGITS.sub("#", name)


@functools.lru_cache(maxsize=1 << 20)
def fine_family(name: str) -> str:
    """Only the last number replaced (``inv_p1_t3`` -> ``inv_p1_t#``): siblings of the same product."""
    return _LAST_DIGITS.sub("#", name)


def _fmt(v: float) -> float | str:
    return "inf" if v >= INF else ("-inf" if v <= -INF else float(v))


@dataclass
class StepRecord:
    step: int
    op: str
    args: dict
    solver_call: int  # solver calls used after this step
    result: dict
    seconds: float


@dataclass
class EpisodeLog:
    instance_id: str
    steps: list[StepRecord] = field(default_factory=list)
    solver_calls: int = 0
    recovered_at: int | None = None  # solver-call index of the first optimal solve
    final_objective: float | None = None
    final_x: np.ndarray | None = None
    edited: dict[str, list[str]] = field(default_factory=dict)  # element key -> ops applied
    dropped_rows: set[str] = field(default_factory=set)
    diagnosis_root: list[str] = field(default_factory=list)
    diagnosis_conflict: list[str] = field(default_factory=list)
    diagnosis_ranking: list[str] = field(default_factory=list)  # suspects best-first (root-rank metric)
    iis_calls: int = 0
    final_edited: dict[str, list[str]] = field(default_factory=dict)  # edits in force at the last optimal solve
    final_dropped: set[str] = field(default_factory=set)
    done: bool = False
    error: str = ""


class DebugEnv:
    """Gym-like but dict-based: ``obs = env.step({"op": "solve"})``."""

    def __init__(self, instance: Instance, budget: int = 20, allow_iis: bool = True, iis_time_limit: float = 10.0,
                 solve_time_limit: float = 30.0):
        if budget < 1:
            raise ValueError(f"budget must be >= 1, got {budget}")
        self.instance = instance
        self.model: LinearModel = instance.model.copy()
        self.budget = budget
        self.allow_iis = allow_iis
        self.iis_time_limit = iis_time_limit
        self.solve_time_limit = solve_time_limit
        self.log = EpisodeLog(instance.instance_id)
        self._history: list[LinearModel] = []
        self._pristine = True  # model unchanged since reset: the stored IIS is still valid

    # ------------------------------------------------------------------ public API
    @property
    def calls_left(self) -> int:
        return self.budget - self.log.solver_calls

    def describe(self) -> dict:
        """What the agent is told at the start (no solver call)."""
        m = self.model
        return {"instance_id": self.instance.instance_id, "model": m.name, "rows": m.num_rows, "cols": m.num_cols,
                "integer_cols": int(m.integer.sum()), "objective_sense": "max" if m.maximize else "min",
                "status": "infeasible", "budget": self.budget, "iis_available": self.allow_iis,
                "row_families": _family_counts(m.row_names), "col_families": _family_counts(m.col_names),
                **({"levers": self.instance.meta["levers"]} if self.instance.meta.get("levers") else {})}

    def step(self, action: dict) -> dict:
        t0 = time.perf_counter()
        op = action.get("op") if isinstance(action, dict) else None
        args = {k: v for k, v in action.items() if k != "op"} if isinstance(action, dict) else {}
        if op not in ALL_OPS:
            result = {"error": f"op must be one of {list(ALL_OPS)}, got {op!r}"}
        elif self.log.done:
            result = {"error": "episode is over"}
        else:
            try:
                result = getattr(self, f"_{op}")(**args)
            except (ValueError, TypeError, KeyError) as exc:
                result = {"error": str(exc)}
        self.log.steps.append(StepRecord(len(self.log.steps), str(op), _jsonable(args), self.log.solver_calls,
                                         result, time.perf_counter() - t0))
        return result

    # ------------------------------------------------------------------ solver calls
    def _charge(self) -> dict | None:
        if self.log.solver_calls >= self.budget:
            return {"error": "solver-call budget exhausted"}
        self.log.solver_calls += 1
        return None

    def _solve(self) -> dict:
        if (err := self._charge()) is not None:
            return err
        res = solve(self.model, time_limit=self.solve_time_limit)
        out = {"status": res.status, "objective": res.objective, "solver_calls": self.log.solver_calls}
        if res.optimal:
            if self.log.recovered_at is None:
                self.log.recovered_at = self.log.solver_calls
            self.log.final_objective = res.objective
            self.log.final_x = res.x
            changed, dropped = diff_elements(self.instance.model, self.model)
            self.log.final_edited = {k: self.log.edited.get(k, ["?"]) for k in changed}
            self.log.final_dropped = dropped
        return out

    def _get_iis(self) -> dict:
        if not self.allow_iis:
            return {"error": "get_iis is disabled in this run (IIS ablation)"}
        if (err := self._charge()) is not None:
            return err
        self.log.iis_calls += 1
        if self._pristine and self.instance.iis.get("rows") is not None and self.instance.iis.get("status") == "infeasible":
            iis = self.instance.iis
        else:
            iis = compute_iis(self.model, time_limit=self.iis_time_limit).to_json()
        return {"status": iis["status"], "rows": iis["rows"], "col_bounds": iis["col_bounds"],
                "irreducible": iis["irreducible"], "integrality": iis.get("integrality", False),
                "certificate": self._certificate(iis), "solver_calls": self.log.solver_calls}

    def _certificate(self, iis: dict) -> dict[str, float]:
        """Farkas shares of the IIS members (see `certificate_shares`), part of what get_iis returns."""
        m = self.model
        members = [("row", m.row(r), side) for r, side in iis.get("rows", []) if m.has_row(r)]
        members += [("col", m.col(c), side) for c, side in iis.get("col_bounds", []) if m.has_col(c)]
        try:
            return {k: round(float(v), 4) for k, v in certificate_shares(m, members).items()}
        except Exception:  # noqa: BLE001 - evidence is optional; the IIS itself stands
            return {}

    # ------------------------------------------------------------------ free inspection
    def _inspect_row(self, name: str) -> dict:
        m = self.model
        i = m.row(name)
        cols, vals = m.row_entries(i)
        return {"row": name, "sense": m.sense(i), "lower": _fmt(m.row_lower[i]), "upper": _fmt(m.row_upper[i]),
                "rhs": m.rhs(i), "family": family(name),
                "coefs": {m.col_names[j]: float(v) for j, v in zip(cols, vals, strict=True)}}

    def _inspect_col(self, name: str) -> dict:
        m = self.model
        j = m.col(name)
        rows, vals = m.col_entries(j)
        return {"col": name, "lower": _fmt(m.col_lower[j]), "upper": _fmt(m.col_upper[j]), "cost": float(m.cost[j]),
                "integer": bool(m.integer[j]), "family": family(name),
                "rows": {m.row_names[i]: float(v) for i, v in zip(rows, vals, strict=True)}}

    def _list_rows(self, family_pattern: str | None = None) -> dict:
        names = self.model.row_names
        return {"rows": self._family_members("rows", names, family_pattern) if family_pattern else names}

    def _list_cols(self, family_pattern: str | None = None) -> dict:
        names = self.model.col_names
        return {"cols": self._family_members("cols", names, family_pattern) if family_pattern else names}

    def _family_members(self, kind: str, names: list[str], pattern: str) -> list[str]:
        """Names of one family, from an index built once per name list: an agent asks for the siblings of
        every suspect, and scanning 10,000 column names with a regex per request made a single episode on a
        MIPLIB-size model run for an hour. The index holds its list, so `is` plus the length proves it current
        (edits that drop a row shrink the list; undo swaps in another model's list)."""
        cache = self.__dict__.setdefault("_family_index", {})
        held = cache.get(kind)
        if held is None or held[0] is not names or held[1] != len(names):
            index: dict[str, list[str]] = {}
            for n in names:
                index.setdefault(family(n), []).append(n)
            held = cache[kind] = (names, len(names), index)
        return list(held[2].get(pattern, ()))

    # ------------------------------------------------------------------ edits (free)
    def _edit(self, key: str, op: str) -> None:
        if key in set(self.instance.meta.get("locked", [])):
            raise ValueError(f"{key} is disrupted and locked; use the levers in describe()['levers']")
        self._history.append(self.model.copy())
        self.log.edited.setdefault(key, []).append(op)
        self._pristine = False

    def _set_rhs(self, row: str, value: float, side: str = "auto") -> dict:
        m = self.model
        i = m.row(row)
        if side not in ("auto", "lower", "upper", "both"):
            raise ValueError(f"side must be one of auto, lower, upper, both; got {side!r}")
        value = float(value)
        s = m.sense(i)
        if side == "auto":
            side = {"L": "upper", "G": "lower", "E": "both", "R": "lower", "N": "upper"}[s]
        self._edit(f"row:{row}", "set_rhs")
        if side in ("lower", "both"):
            m.row_lower[i] = value
        if side in ("upper", "both"):
            m.row_upper[i] = value
        if m.row_lower[i] > m.row_upper[i]:
            m.row_lower[i], m.row_upper[i] = m.row_upper[i], m.row_lower[i]
        return {"ok": True, "row": self._inspect_row(row)}

    def _set_sense(self, row: str, sense: str) -> dict:
        m = self.model
        i = m.row(row)
        if sense not in ("L", "G", "E"):
            raise ValueError(f"sense must be one of L, G, E; got {sense!r}")
        b = m.rhs(i)
        self._edit(f"row:{row}", "set_sense")
        m.row_lower[i], m.row_upper[i] = {"L": (-INF, b), "G": (b, INF), "E": (b, b)}[sense]
        return {"ok": True, "row": self._inspect_row(row)}

    def _set_bound(self, col: str, side: str, value: float) -> dict:
        m = self.model
        j = m.col(col)
        if side not in ("lower", "upper"):
            raise ValueError(f"side must be one of lower, upper; got {side!r}")
        value = _parse_num(value)
        self._edit(f"col:{col}", "set_bound")
        (m.col_lower if side == "lower" else m.col_upper)[j] = value
        return {"ok": True, "col": self._inspect_col(col)}

    def _set_coef(self, row: str, col: str, value: float) -> dict:
        m = self.model
        self._edit(f"row:{row}", "set_coef")
        m.set_coef(m.row(row), m.col(col), float(value))
        return {"ok": True, "row": self._inspect_row(row)}

    def _scale_row(self, row: str, factor: float) -> dict:
        m = self.model
        i = m.row(row)
        factor = float(factor)
        if factor == 0:
            raise ValueError("factor must be non-zero")
        self._edit(f"row:{row}", "scale_row")
        m.A.data[m.A.indptr[i]:m.A.indptr[i + 1]] *= factor
        return {"ok": True, "row": self._inspect_row(row)}

    def _drop_row(self, row: str) -> dict:
        m = self.model
        i = m.row(row)
        self._edit(f"row:{row}", "drop_row")
        m.delete_rows([i])
        self.log.dropped_rows.add(row)
        return {"ok": True, "dropped": row}

    def _set_integrality(self, col: str, integer: bool) -> dict:
        m = self.model
        j = m.col(col)
        self._edit(f"col:{col}", "set_integrality")
        m.integer[j] = bool(integer)
        return {"ok": True, "col": self._inspect_col(col)}

    def _undo(self) -> dict:
        """Revert the last edit (free). The edit record is kept: FP judges the state at the last solve."""
        if not self._history:
            return {"error": "nothing to undo"}
        self.model = self._history.pop()
        self.log.dropped_rows = {r for r in self.log.dropped_rows if not self.model.has_row(r)}
        if not self._history:
            self._pristine = True
        return {"ok": True}

    def _diagnose(self, root_cause: list[str] | str, conflict: list[str] | None = None,
                  ranking: list[str] | None = None) -> dict:
        roots = [root_cause] if isinstance(root_cause, str) else list(root_cause)
        for r in roots + list(conflict or []) + list(ranking or []):
            if not isinstance(r, str) or not (r.startswith("row:") or r.startswith("col:")):
                raise ValueError(f"diagnosis elements must look like 'row:NAME' or 'col:NAME', got {r!r}")
        self.log.diagnosis_root = roots
        self.log.diagnosis_conflict = list(conflict or [])
        self.log.diagnosis_ranking = list(ranking or [])
        return {"ok": True}

    def _submit(self) -> dict:
        self.log.done = True
        return {"ok": True, "recovered": self.log.recovered_at is not None}


def diff_elements(before: LinearModel, after: LinearModel) -> tuple[set[str], set[str]]:
    """Element keys that differ between two versions of a model (edits in force), and dropped rows.

    Computed from the models, not the action log, so undone edits do not count.
    """
    changed: set[str] = set()
    dropped = {r for r in before.row_names if not after.has_row(r)}
    keep = [i for i, r in enumerate(before.row_names) if after.has_row(r)]
    idx = np.array([after.row(before.row_names[i]) for i in keep], dtype=int)
    keep = np.array(keep, dtype=int)
    if keep.size:
        bounds_diff = (before.row_lower[keep] != after.row_lower[idx]) | (before.row_upper[keep] != after.row_upper[idx])
        coef_diff = abs(before.A[keep] - after.A[idx]).sum(axis=1).A1 > 0
        changed |= {f"row:{before.row_names[i]}" for i in keep[bounds_diff | coef_diff]}
    added = [r for r in after.row_names if not before.has_row(r)]
    changed |= {f"row:{r}" for r in added}
    cdiff = (before.col_lower != after.col_lower) | (before.col_upper != after.col_upper) | (before.integer != after.integer)
    changed |= {f"col:{before.col_names[j]}" for j in np.nonzero(cdiff)[0]}
    changed |= {f"row:{r}" for r in dropped}
    return changed, dropped


def _family_counts(names: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for n in names:
        f = family(n)
        out[f] = out.get(f, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: -kv[1])[:30])


def _parse_num(value) -> float:
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("inf", "+inf", "infinity"):
            return INF
        if v in ("-inf", "-infinity"):
            return -INF
    return float(value)


def _jsonable(args: dict) -> dict:
    return {k: (v if isinstance(v, (int, float, str, bool, list, type(None))) else str(v)) for k, v in args.items()}
