"""IIS of integrality-caused MIP infeasibility with PySCIPOpt (optional ``scip`` extra).

Imported lazily by `ordebug.iis`; importing this module raises ImportError when PySCIPOpt is missing,
which the caller treats as "use the HiGHS deletion filter instead".
"""

from __future__ import annotations

import numpy as np
import pyscipopt  # noqa: F401 - the ImportError is the signal that the extra is not installed

from ordebug.model import INF, LinearModel

Member = tuple[str, int, str]


def _to_scip(model: LinearModel, time_limit: float):
    s = pyscipopt.Model(model.name)
    s.hideOutput()
    s.setParam("limits/time", max(float(time_limit), 0.1))
    inf = s.infinity()
    xs = []
    for j, name in enumerate(model.col_names):
        lb = -inf if model.col_lower[j] <= -INF else float(model.col_lower[j])
        ub = inf if model.col_upper[j] >= INF else float(model.col_upper[j])
        xs.append(s.addVar(name=name, lb=lb, ub=ub, vtype="I" if model.integer[j] else "C"))
    for i, name in enumerate(model.row_names):
        cols, vals = model.row_entries(i)
        expr = pyscipopt.quicksum(float(v) * xs[j] for j, v in zip(cols, vals, strict=True))
        lo, up = model.row_lower[i], model.row_upper[i]
        lhs = None if lo <= -INF else float(lo)
        rhs = None if up >= INF else float(up)
        if lhs is not None and rhs is not None:
            s.addCons(expr == lhs if lhs == rhs else pyscipopt.Expr() + lhs <= expr, name=name)
            if lhs != rhs:
                s.addCons(expr <= rhs, name=f"{name}__upper")
        elif lhs is not None:
            s.addCons(expr >= lhs, name=name)
        elif rhs is not None:
            s.addCons(expr <= rhs, name=name)
    return s


def scip_iis(model: LinearModel, time_limit: float) -> tuple[list[Member], bool] | None:
    """(members, irreducible) from SCIP's IIS finder, verified by the MIP deletion filter; None on failure."""
    from ordebug.iis import SubsystemOracle, _Deadline, deletion_filter

    try:
        s = _to_scip(model, time_limit)
        iis = s.generateIIS()
        sub = iis.getSubscip()
    except Exception:  # noqa: BLE001 - any SCIP failure falls back to the HiGHS filter
        return None
    members: list[Member] = []
    for cons in sub.getConss():
        name = cons.name.removesuffix("__upper")  # ranged rows are split in two for SCIP
        if model.has_row(name):
            i = model.row(name)
            if model.row_lower[i] > -INF:
                members.append(("row", i, "lower"))
            if model.row_upper[i] < INF:
                members.append(("row", i, "upper"))
    big = sub.infinity()
    for var in sub.getVars():
        if not model.has_col(var.name):
            continue
        j = model.col(var.name)
        if var.getLbOriginal() > -big and model.col_lower[j] > -INF:
            members.append(("col", j, "lower"))
        if var.getUbOriginal() < big and model.col_upper[j] < INF:
            members.append(("col", j, "upper"))
    if not members:
        return None
    oracle = SubsystemOracle(model, use_integrality=True, deadline=_Deadline(max(time_limit, 1.0)))
    reduced, ok = deletion_filter(oracle, sorted(set(members), key=lambda m: (m[0] != "col", m[1], m[2])))
    return reduced, bool(ok and np.size(reduced))
