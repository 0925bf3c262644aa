"""Sabotage operators: realistic modelling errors that turn a feasible model infeasible.

Each operator proposes candidate edits in random order and keeps the first that makes the model
infeasible (one solve each, capped by `max_tries`). The returned `Sabotage` is the ground truth: which
element was edited, its value before and after, and the *root-cause elements* (``row:NAME`` or
``col:NAME``) the diagnosis metric compares against.

Choices where the issue text is silent (see docs/ordebug.md):

* ``tighten_rhs`` is a decimal slip (x10, x100, x1000 or the inverse, the smallest that takes the
  right-hand side past its reach), so the intended value is recoverable in principle and the objective
  preservation metric is meaningful.
* ``drop_bound`` removes a negative lower bound (backorders, net positions, free variables) so the
  variable falls back to the solver default ``x >= 0``: the bound that "kept the model feasible".
* ``integrality`` makes the continuous columns of an equality row with integer coefficients and a
  fractional right-hand side integer: the LP relaxation stays feasible, the MIP cannot be.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ordebug.model import INF, LinearModel
from ordebug.solver import SolveResult, solve

OPERATORS = ("flip_sense", "tighten_rhs", "conflicting_bound", "flip_coef_sign", "scale_row", "drop_bound",
             "contradictory_row", "integrality")


@dataclass
class Sabotage:
    operator: str
    root: list[str]  # element keys the diagnosis must name (any one of them)
    edit: dict = field(default_factory=dict)  # kind, target, before, after ...
    description: str = ""


@dataclass
class _Ctx:
    model: LinearModel
    base: SolveResult
    rng: np.random.Generator
    max_tries: int
    time_limit: float


def _infeasible(model: LinearModel, time_limit: float) -> bool:
    res = solve(model, time_limit=time_limit)
    return res.status == "infeasible"


def _reach(model: LinearModel, cols: np.ndarray, vals: np.ndarray, maximize: bool, time_limit: float) -> float | None:
    """max/min of sum(vals * x[cols]) over the LP relaxation of `model` (None when unbounded/failed)."""
    probe = model.copy()
    probe.cost = np.zeros(model.num_cols)
    probe.cost[cols] = vals
    probe.maximize = maximize
    probe.offset = 0.0
    res = solve(probe, time_limit=time_limit, relax_integrality=True)
    return res.objective if res.optimal else None


def _inequality_rows(m: LinearModel) -> list[int]:
    return [i for i in range(m.num_rows) if m.sense(i) in ("L", "G") and m.A.indptr[i + 1] > m.A.indptr[i]]


def _order(ctx: _Ctx, items: list) -> list:
    idx = ctx.rng.permutation(len(items))
    return [items[k] for k in idx]


def flip_sense(ctx: _Ctx) -> tuple[LinearModel, Sabotage] | None:
    m = ctx.model
    # A row binding at the optimum stays satisfiable when flipped (a x* = b), so try the rows with the
    # largest relative slack first: those are the ones whose flipped direction is out of reach.
    rows = _inequality_rows(m)
    if ctx.base.x is not None and rows:
        act = m.A @ ctx.base.x
        slack = np.array([abs(act[i] - m.rhs(i)) / (1.0 + abs(m.rhs(i))) for i in rows])
        noise = ctx.rng.random(len(rows)) * 1e-3
        rows = [rows[k] for k in np.argsort(-(slack + noise))]
    for i in rows[: ctx.max_tries]:
        new = m.copy()
        s = m.sense(i)
        b = m.rhs(i)
        new.row_lower[i], new.row_upper[i] = (b, INF) if s == "L" else (-INF, b)
        if _infeasible(new, ctx.time_limit):
            name = m.row_names[i]
            return new, Sabotage("flip_sense", [f"row:{name}"],
                                 {"kind": "sense", "row": name, "before": s, "after": "G" if s == "L" else "L"},
                                 f"sense of row {name} flipped from {s} to {'G' if s == 'L' else 'L'}")
    return None


def tighten_rhs(ctx: _Ctx) -> tuple[LinearModel, Sabotage] | None:
    m = ctx.model
    rows = [i for i in range(m.num_rows) if m.sense(i) in ("L", "G", "E") and abs(m.rhs(i)) > 1e-9]
    for i in _order(ctx, rows)[: ctx.max_tries]:
        s, b = m.sense(i), m.rhs(i)
        # Tightening direction: a <= row wants a smaller rhs, a >= row a larger one; equalities try both.
        factors = {"L": [10.0 ** -k if b > 0 else 10.0 ** k for k in (1, 2, 3)],
                   "G": [10.0 ** k if b > 0 else 10.0 ** -k for k in (1, 2, 3)],
                   "E": [10.0, 0.1, 100.0, 0.01, 1000.0, 0.001]}[s]
        for f in factors:
            new = m.copy()
            nb = float(np.round(b * f, 10))
            if s == "L":
                new.row_upper[i] = nb
            elif s == "G":
                new.row_lower[i] = nb
            else:
                new.row_lower[i] = new.row_upper[i] = nb
            if _infeasible(new, ctx.time_limit):
                name = m.row_names[i]
                return new, Sabotage("tighten_rhs", [f"row:{name}"],
                                     {"kind": "rhs", "row": name, "before": b, "after": nb, "factor": f},
                                     f"right-hand side of {name} changed {b:g} -> {nb:g} (decimal slip x{f:g})")
    return None


def conflicting_bound(ctx: _Ctx) -> tuple[LinearModel, Sabotage] | None:
    m = ctx.model
    cols = [j for j in range(m.num_cols) if m.A.getcol(j).nnz > 0]
    for j in _order(ctx, cols)[: ctx.max_tries]:
        # Raise the lower bound past the largest value the rest of the model allows, or else lower the
        # upper bound below the smallest one.
        hi = _reach(m, np.array([j]), np.array([1.0]), True, ctx.time_limit)
        if hi is not None and hi < m.col_upper[j] - 1e-9:
            side, value = "lower", float(np.round(hi + max(1.0, 0.5 * abs(hi)), 1))
            if value > m.col_upper[j]:
                continue
        else:
            lo = _reach(m, np.array([j]), np.array([1.0]), False, ctx.time_limit)
            if lo is None or lo <= m.col_lower[j] + 1e-6:
                continue
            side, value = "upper", float(np.round(max(m.col_lower[j], lo - max(1.0, 0.5 * abs(lo))), 1))
            if value >= lo - 1e-6:
                continue
        new = m.copy()
        arr, old_arr = (new.col_lower, m.col_lower) if side == "lower" else (new.col_upper, m.col_upper)
        arr[j] = value
        if _infeasible(new, ctx.time_limit):
            name = m.col_names[j]
            return new, Sabotage("conflicting_bound", [f"col:{name}"],
                                 {"kind": "bound", "col": name, "side": side, "before": float(old_arr[j]),
                                  "after": value},
                                 f"{side} bound of {name} changed {old_arr[j]:g} -> {value:g}, out of its reach")
    return None


def flip_coef_sign(ctx: _Ctx) -> tuple[LinearModel, Sabotage] | None:
    m = ctx.model
    coo = m.A.tocoo()
    entries = [(int(i), int(j), float(v)) for i, j, v in zip(coo.row, coo.col, coo.data, strict=True) if v != 0]
    if ctx.base.x is not None and entries:
        # A flip moves the row's activity by 2|a_ij x*_j|: try the entries that carry most of their row at
        # the optimum first (random order found an infeasible flip on 1 of 17 synthetic models).
        x = np.abs(ctx.base.x)
        act = np.abs(m.A) @ x
        impact = np.array([abs(v) * x[j] / (1e-9 + act[i]) for i, j, v in entries])
        impact += ctx.rng.random(len(entries)) * 1e-3
        entries = [entries[k] for k in np.argsort(-impact)]
    else:
        entries = _order(ctx, entries)
    for i, j, v in entries[: ctx.max_tries]:
        new = m.copy()
        new.set_coef(i, j, -v)
        if _infeasible(new, ctx.time_limit):
            r, c = m.row_names[i], m.col_names[j]
            return new, Sabotage("flip_coef_sign", [f"row:{r}"],
                                 {"kind": "coef", "row": r, "col": c, "before": v, "after": -v},
                                 f"coefficient of {c} in {r} flipped {v:g} -> {-v:g}")
    return None


def scale_row(ctx: _Ctx) -> tuple[LinearModel, Sabotage] | None:
    m = ctx.model
    for i in _order(ctx, _inequality_rows(m) + [i for i in range(m.num_rows) if m.sense(i) == "E"])[: ctx.max_tries]:
        for f in (10.0, 0.1, 100.0, 0.01):
            new = m.copy()
            start, end = new.A.indptr[i], new.A.indptr[i + 1]
            new.A.data[start:end] *= f
            if _infeasible(new, ctx.time_limit):
                name = m.row_names[i]
                return new, Sabotage("scale_row", [f"row:{name}"],
                                     {"kind": "scale", "row": name, "factor": f},
                                     f"coefficients of {name} scaled by {f:g} (unit error), right-hand side not")
    return None


def drop_bound(ctx: _Ctx) -> tuple[LinearModel, Sabotage] | None:
    m = ctx.model
    cols = [j for j in range(m.num_cols) if m.col_lower[j] < 0 and m.col_upper[j] > 0]
    # Prefer columns that are negative at the original optimum: that bound is what kept the model feasible.
    x = ctx.base.x if ctx.base.x is not None else np.zeros(m.num_cols)
    neg = [j for j in cols if x[j] < -1e-7]
    for j in (_order(ctx, neg) + _order(ctx, [j for j in cols if j not in set(neg)]))[: ctx.max_tries]:
        new = m.copy()
        new.col_lower[j] = 0.0
        if _infeasible(new, ctx.time_limit):
            name = m.col_names[j]
            before = float(m.col_lower[j])
            return new, Sabotage("drop_bound", [f"col:{name}"],
                                 {"kind": "bound", "col": name, "side": "lower", "before": before, "after": 0.0},
                                 f"lower bound {before:g} of {name} dropped (defaults to 0)")
    return None


def contradictory_row(ctx: _Ctx) -> tuple[LinearModel, Sabotage] | None:
    m = ctx.model
    for i in _order(ctx, _inequality_rows(m))[: ctx.max_tries]:
        cols, vals = m.row_entries(i)
        s = m.sense(i)
        # Duplicate the row with the opposite sense and a level past what the model can reach.
        reach = _reach(m, cols, vals, maximize=(s == "L"), time_limit=ctx.time_limit)
        if reach is None:
            continue
        margin = max(1.0, 0.25 * abs(reach))
        new = m.copy()
        name = f"{m.row_names[i]}_dup"
        if new.has_row(name):
            continue
        level = float(np.round(reach + margin if s == "L" else reach - margin, 1))
        lo, up = (level, INF) if s == "L" else (-INF, level)
        new.add_row(name, cols, vals, lo, up)
        if _infeasible(new, ctx.time_limit):
            return new, Sabotage("contradictory_row", [f"row:{name}"],
                                 {"kind": "new_row", "row": name, "copy_of": m.row_names[i],
                                  "sense": "G" if s == "L" else "L", "rhs": level},
                                 f"new row {name} copies {m.row_names[i]} with the opposite sense and rhs {level:g}")
    return None


def integrality(ctx: _Ctx) -> tuple[LinearModel, Sabotage] | None:
    m = ctx.model
    cand = []
    for i in range(m.num_rows):
        if m.sense(i) != "E":
            continue
        cols, vals = m.row_entries(i)
        b = m.rhs(i)
        if len(cols) == 0 or abs(b - round(b)) < 1e-6 or not np.allclose(vals, np.round(vals)):
            continue
        if m.integer[cols].all():
            continue
        cand.append(i)
    for i in _order(ctx, cand)[: ctx.max_tries]:
        cols, _ = m.row_entries(i)
        new = m.copy()
        made = [int(j) for j in cols if not m.integer[j]]
        new.integer[made] = True
        relax = solve(new, time_limit=ctx.time_limit, relax_integrality=True)
        if relax.optimal and _infeasible(new, ctx.time_limit):
            names = [m.col_names[j] for j in made]
            return new, Sabotage("integrality", [f"col:{c}" for c in names],
                                 {"kind": "integrality", "cols": names, "row": m.row_names[i]},
                                 f"columns {', '.join(names)} of {m.row_names[i]} made integer; "
                                 f"rhs {m.rhs(i):g} is fractional")
    return None


_OPS: dict[str, Callable[[_Ctx], tuple[LinearModel, Sabotage] | None]] = {
    "flip_sense": flip_sense, "tighten_rhs": tighten_rhs, "conflicting_bound": conflicting_bound,
    "flip_coef_sign": flip_coef_sign, "scale_row": scale_row, "drop_bound": drop_bound,
    "contradictory_row": contradictory_row, "integrality": integrality,
}


def apply_sabotage(model: LinearModel, operator: str, seed: int = 0, base: SolveResult | None = None,
                   max_tries: int | None = None, time_limit: float = 20.0) -> tuple[LinearModel, Sabotage] | None:
    """Apply `operator` to a copy of a feasible `model`; None when no candidate made it infeasible.

    `max_tries` (candidate solves) defaults to 30 on models under 1000 rows and 8 above.
    """
    if operator not in _OPS:
        raise ValueError(f"operator must be one of {list(OPERATORS)}, got {operator!r}")
    if max_tries is None:
        max_tries = 30 if model.num_rows < 1000 else 8
    base = base if base is not None else solve(model, time_limit=time_limit)
    ctx = _Ctx(model, base, np.random.default_rng(seed), max_tries, time_limit)
    return _OPS[operator](ctx)
