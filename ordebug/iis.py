"""Irreducible infeasible subsystems (IIS) on top of HiGHS, verified by deletion.

Pipeline (each step only runs when the previous one did not give a verified IIS):

1. HiGHS ``getIis`` with ``iis_strategy = kIisStrategyIrreducible`` (the "find a true IIS" strategy of the
   HiGHS docs) under ``iis_time_limit``. HiGHS 1.15 returns reducible sets on some NETLIB models
   (cplex2, klein1-3, qual, vol1) and times out on large ones (bgindy, gosh), so its answer is a
   *candidate*, never trusted as is.
2. Elastic filter candidate: solve the elastic LP ``min sum(p+n) s.t. L <= Ax + p - n <= U`` with column
   bounds hard; its optimal duals are a Farkas certificate whose support (rows with non-zero dual,
   columns with non-zero reduced cost) is an infeasible subsystem.
3. Deletion filter (Chinneck) on the candidate, accelerated by bisection (QuickXplain, Junker 2004): a
   member is dropped for good when the system stays infeasible without it. The result is then
   *verified*: the subsystem is infeasible and removing any single member makes it feasible.

MIPs whose LP relaxation is infeasible get an IIS of the relaxation (an infeasible subsystem of the MIP
too). MIPs infeasible only because of integrality use PySCIPOpt's ``generateIIS`` when the optional
``scip`` extra is installed and otherwise the same deletion filter with MIP feasibility checks.

A *member* is one side of one constraint: ``("row", i, "lower")`` is ``a_i x >= L_i``; ``("col", j,
"upper")`` is ``x_j <= u_j``. The subsystem of a member set keeps only those sides (all other row and
column bounds infinite); integrality of the involved columns is kept when reasoning about a MIP.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import highspy
import numpy as np
import scipy.sparse as sp

from ordebug.model import INF, LinearModel
from ordebug.solver import new_highs, solve, solver_version

Member = tuple[str, int, str]  # (kind "row"|"col", index, side "lower"|"upper")

IIS_STRATEGY = int(highspy.IisStrategy.kIisStrategyIrreducible)
ORACLE_PRESOLVE = "on"

_UNDECIDED = (highspy.HighsModelStatus.kUnboundedOrInfeasible, highspy.HighsModelStatus.kUnknown,
              highspy.HighsModelStatus.kSolveError)


@dataclass
class IISResult:
    """An IIS (or the reason there is none) in a form that serialises to JSON."""

    status: str  # infeasible | feasible | unknown
    rows: list[list[str]] = field(default_factory=list)  # [[row name, side]]
    col_bounds: list[list[str]] = field(default_factory=list)  # [[column name, side]]
    irreducible: bool = False
    seconds: float = 0.0
    method: str = ""
    integrality: bool = False  # True when integrality is part of the conflict (LP relaxation feasible)
    solver: str = ""
    settings: dict = field(default_factory=dict)
    members: list[Member] = field(default_factory=list, repr=False)

    def to_json(self) -> dict:
        return {"status": self.status, "rows": self.rows, "col_bounds": self.col_bounds,
                "irreducible": self.irreducible, "seconds": round(self.seconds, 4), "method": self.method,
                "integrality": self.integrality, "solver": self.solver}

    @property
    def size(self) -> int:
        return len(self.rows) + len(self.col_bounds)

    def elements(self) -> set[str]:
        """Element keys ``row:NAME`` / ``col:NAME`` used by the metrics (side-insensitive)."""
        return {f"row:{r}" for r, _ in self.rows} | {f"col:{c}" for c, _ in self.col_bounds}


def _lp_from(csc: sp.csc_matrix, cl: np.ndarray, cu: np.ndarray, rl: np.ndarray, ru: np.ndarray,
             cost: np.ndarray | None = None) -> highspy.HighsLp:
    """A HighsLp (zero objective unless `cost`) from a column-wise matrix and bounds."""
    m, n = csc.shape
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, m
    lp.col_cost_ = np.zeros(n) if cost is None else cost
    lp.col_lower_, lp.col_upper_, lp.row_lower_, lp.row_upper_ = cl, cu, rl, ru
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, m
    lp.a_matrix_.start_ = csc.indptr.astype(np.int32)
    lp.a_matrix_.index_ = csc.indices.astype(np.int32)
    lp.a_matrix_.value_ = csc.data.astype(float)
    return lp


class _Deadline:
    def __init__(self, seconds: float):
        self.end = time.perf_counter() + seconds

    def left(self) -> float:
        return self.end - time.perf_counter()

    def passed(self) -> bool:
        return self.left() <= 0


class SubsystemOracle:
    """Answers "is this member set infeasible?" by solving the subsystem LP/MIP with HiGHS."""

    def __init__(self, model: LinearModel, use_integrality: bool, deadline: _Deadline):
        self.model = model
        self.csc = model.A.tocsc()
        self.use_integrality = use_integrality and model.is_mip
        self.deadline = deadline
        self.calls = 0
        self.unknown = False

    def infeasible(self, members: list[Member]) -> bool:
        """True if infeasible; an undecided solve (time limit) counts as feasible, so members are kept."""
        m = self.model
        rows = sorted({i for k, i, _ in members if k == "row"})
        sub = m.A[rows] if rows else sp.csr_matrix((0, m.num_cols))
        cols = set(np.unique(sub.indices).tolist()) | {j for k, j, _ in members if k == "col"}
        cols = sorted(cols)
        rpos = {i: p for p, i in enumerate(rows)}
        cpos = {j: p for p, j in enumerate(cols)}
        rl = np.full(len(rows), -INF)
        ru = np.full(len(rows), INF)
        cl = np.full(len(cols), -INF)
        cu = np.full(len(cols), INF)
        for kind, idx, side in members:
            if kind == "row":
                if side == "lower":
                    rl[rpos[idx]] = m.row_lower[idx]
                else:
                    ru[rpos[idx]] = m.row_upper[idx]
            else:
                if side == "lower":
                    cl[cpos[idx]] = m.col_lower[idx]
                else:
                    cu[cpos[idx]] = m.col_upper[idx]
        if np.any(cl > cu) or np.any(rl > ru):
            return True
        self.calls += 1
        left = self.deadline.left()
        if left <= 0:
            self.unknown = True
            return False
        csc = sub[:, cols].tocsc() if rows else sp.csc_matrix((0, len(cols)))
        h = new_highs(time_limit=max(left, 0.05))
        h.setOptionValue("presolve", ORACLE_PRESOLVE)
        lp = _lp_from(csc, cl, cu, rl, ru)
        if self.use_integrality and m.integer[cols].any():
            lp.integrality_ = [highspy.HighsVarType.kInteger if m.integer[j] else highspy.HighsVarType.kContinuous
                               for j in cols]
        h.passModel(lp)
        h.run()
        st = h.getModelStatus()
        # Presolve cannot always separate infeasible from unbounded, and badly scaled NETLIB models
        # (vol1, qual, klein3, refinery) sometimes end in kUnknown/kSolveError: retry without presolve,
        # then decide LPs by the elastic subsystem, which is always feasible and bounded.
        if st in _UNDECIDED:
            h.clearSolver()
            h.setOptionValue("presolve", "off")
            h.run()
            st = h.getModelStatus()
        if st in _UNDECIDED and not lp.integrality_:
            verdict = _elastic_verdict(lp, max(self.deadline.left(), 0.05))
            if verdict is not None:
                return verdict
        if st == highspy.HighsModelStatus.kInfeasible:
            return True
        if st not in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kModelEmpty,
                      highspy.HighsModelStatus.kUnbounded):
            self.unknown = True
        return False


def _elastic_verdict(lp: highspy.HighsLp, time_limit: float, tol: float = 1e-6) -> bool | None:
    """Infeasible iff the least total row violation exceeds `tol`; None if even that is undecided."""
    m, n = lp.num_row_, lp.num_col_
    rl, ru = np.asarray(lp.row_lower_), np.asarray(lp.row_upper_)
    A = sp.csc_matrix((np.asarray(lp.a_matrix_.value_), np.asarray(lp.a_matrix_.index_),
                       np.asarray(lp.a_matrix_.start_)), shape=(m, n))
    E = sp.hstack([A, sp.identity(m), -sp.identity(m)], format="csc")
    el = highspy.HighsLp()
    el.num_col_, el.num_row_ = n + 2 * m, m
    el.col_cost_ = np.concatenate([np.zeros(n), np.ones(2 * m)])
    el.col_lower_ = np.concatenate([np.asarray(lp.col_lower_), np.zeros(2 * m)])
    el.col_upper_ = np.concatenate([np.asarray(lp.col_upper_), np.full(2 * m, INF)])
    el.row_lower_, el.row_upper_ = rl, ru
    el.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    el.a_matrix_.num_col_, el.a_matrix_.num_row_ = n + 2 * m, m
    el.a_matrix_.start_ = E.indptr.astype(np.int32)
    el.a_matrix_.index_ = E.indices.astype(np.int32)
    el.a_matrix_.value_ = E.data.astype(float)
    h = new_highs(time_limit=time_limit)
    h.passModel(el)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    return bool(h.getInfo().objective_function_value > tol)


def quickxplain(oracle: SubsystemOracle, members: list[Member]) -> list[Member]:
    """Minimal infeasible subset of `members` (assumed infeasible) by QuickXplain's bisection.

    Equivalent to Chinneck's deletion filter in outcome (an irreducible set) but needs
    O(k log(n/k)) subsystem solves instead of n, which matters for candidates of hundreds of members.
    """

    def qx(background: list[Member], delta: bool, cand: list[Member]) -> list[Member]:
        if delta and oracle.infeasible(background):
            return []
        if len(cand) == 1:
            return list(cand)
        half = len(cand) // 2
        c1, c2 = cand[:half], cand[half:]
        x2 = qx(background + c1, bool(c1), c2)
        x1 = qx(background + x2, bool(x2), c1)
        return x1 + x2

    if not members:
        return []
    return qx([], False, list(members))


def deletion_verify(oracle: SubsystemOracle, members: list[Member]) -> tuple[bool, list[Member]]:
    """Chinneck's deletion test: infeasible as a whole, feasible without any single member.

    Returns (irreducible, members that could be removed while staying infeasible).
    """
    if not oracle.infeasible(members):
        return False, []
    removable = [mem for k, mem in enumerate(members) if oracle.infeasible(members[:k] + members[k + 1:])]
    return (not removable and not oracle.unknown), removable


def deletion_filter(oracle: SubsystemOracle, members: list[Member]) -> tuple[list[Member], bool]:
    """Chinneck's deletion filter: one pass, dropping each member whose removal keeps infeasibility.

    The pass doubles as the irreducibility proof: every kept member was shown necessary for a superset
    of the final set, and a subsystem of a feasible system is feasible. The flag is True only when the
    set is infeasible and every test was decided (no time-limit or numerically undecided solve).
    """
    current = list(members)
    if not oracle.infeasible(current):
        return current, False
    k = 0
    while k < len(current):
        trial = current[:k] + current[k + 1:]
        if trial and oracle.infeasible(trial):
            current = trial
        else:
            k += 1
    return current, not oracle.unknown


def warm_deletion_filter(oracle: SubsystemOracle, members: list[Member]) -> tuple[list[Member], bool]:
    """The deletion filter on one HiGHS instance: relaxing a member is a bound change, and the dual
    simplex hot-starts from the previous basis, which is several times faster than rebuilding the
    subsystem for each test. Undecided solves fall back to the cold `oracle`."""
    m = oracle.model
    current = list(members)
    if not oracle.infeasible(current):
        return current, False
    rows = sorted({i for k, i, _ in current if k == "row"})
    sub = m.A[rows] if rows else sp.csr_matrix((0, m.num_cols))
    cols = sorted(set(np.unique(sub.indices).tolist()) | {j for k, j, _ in current if k == "col"})
    rpos = {i: p for p, i in enumerate(rows)}
    cpos = {j: p for p, j in enumerate(cols)}
    rl, ru = np.full(len(rows), -INF), np.full(len(rows), INF)
    cl, cu = np.full(len(cols), -INF), np.full(len(cols), INF)
    for kind, idx, side in current:
        arr = (rl if side == "lower" else ru) if kind == "row" else (cl if side == "lower" else cu)
        pos = rpos[idx] if kind == "row" else cpos[idx]
        src_arr = (m.row_lower if side == "lower" else m.row_upper) if kind == "row" else \
            (m.col_lower if side == "lower" else m.col_upper)
        arr[pos] = src_arr[idx]
    csc = sub[:, cols].tocsc() if rows else sp.csc_matrix((0, len(cols)))
    h = new_highs(time_limit=max(oracle.deadline.left(), 0.05))
    h.setOptionValue("presolve", "off")
    h.passModel(_lp_from(csc, cl, cu, rl, ru))
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kInfeasible:
        return deletion_filter(oracle, current)

    def set_side(kind: str, pos: int, side: str, value: float) -> None:
        if kind == "row":
            if side == "lower":
                rl[pos] = value
            else:
                ru[pos] = value
            h.changeRowBounds(pos, rl[pos], ru[pos])
        else:
            if side == "lower":
                cl[pos] = value
            else:
                cu[pos] = value
            h.changeColBounds(pos, cl[pos], cu[pos])

    k = 0
    while k < len(current):
        if oracle.deadline.passed():
            return current, False
        kind, idx, side = current[k]
        pos = rpos[idx] if kind == "row" else cpos[idx]
        old = (rl if side == "lower" else ru)[pos] if kind == "row" else (cl if side == "lower" else cu)[pos]
        set_side(kind, pos, side, -INF if side == "lower" else INF)
        oracle.calls += 1
        h.setOptionValue("time_limit", max(oracle.deadline.left(), 0.05))
        h.run()
        st = h.getModelStatus()
        trial = current[:k] + current[k + 1:]
        if st in _UNDECIDED or st == highspy.HighsModelStatus.kTimeLimit:
            infeasible = bool(trial) and oracle.infeasible(trial)
        else:
            infeasible = st == highspy.HighsModelStatus.kInfeasible
        if infeasible and trial:
            current = trial
        else:
            set_side(kind, pos, side, old)
            k += 1
    return current, not oracle.unknown


def _highs_candidate(model: LinearModel, time_limit: float) -> tuple[list[Member] | None, str]:
    h = new_highs(time_limit=max(time_limit, 0.1))
    lp = model.to_highs_lp()
    lp.integrality_ = []  # HiGHS reasons on the LP relaxation anyway; be explicit.
    h.passModel(lp)
    h.setOptionValue("iis_strategy", IIS_STRATEGY)
    h.setOptionValue("iis_time_limit", float(max(time_limit, 0.1)))
    status, iis = h.getIis()
    # An invalid (unfinished) HiGHS set may still be infeasible: the oracle decides, so keep it as a candidate.
    if status == highspy.HighsStatus.kError or (len(iis.row_index_) + len(iis.col_index_) == 0):
        return None, f"highs:{status.name}"
    members: list[Member] = []
    for i, b in zip(iis.row_index_, iis.row_bound_, strict=False):
        members += _sides("row", int(i), int(b), model.row_lower[i], model.row_upper[i])
    for j, b in zip(iis.col_index_, iis.col_bound_, strict=False):
        members += _sides("col", int(j), int(b), model.col_lower[j], model.col_upper[j])
    return members, f"highs:{status.name}"


def _sides(kind: str, idx: int, bound: int, lo: float, up: float) -> list[Member]:
    out: list[Member] = []
    if bound in (2, 4) and lo > -INF:
        out.append((kind, idx, "lower"))
    if bound in (3, 4) and up < INF:
        out.append((kind, idx, "upper"))
    return out


def elastic_candidate(model: LinearModel, time_limit: float, tol: float = 1e-9) -> list[Member] | None:
    """Support of the elastic LP's optimal duals (a Farkas certificate) as a candidate infeasible set."""
    m, n = model.num_rows, model.num_cols
    lo_f = model.row_lower > -INF
    up_f = model.row_upper < INF
    p_rows = np.nonzero(lo_f)[0]
    n_rows = np.nonzero(up_f)[0]
    P = sp.csr_matrix((np.ones(len(p_rows)), (p_rows, np.arange(len(p_rows)))), shape=(m, len(p_rows)))
    N = sp.csr_matrix((-np.ones(len(n_rows)), (n_rows, np.arange(len(n_rows)))), shape=(m, len(n_rows)))
    k = len(p_rows) + len(n_rows)
    el = LinearModel(
        name="elastic", row_names=list(model.row_names),
        col_names=list(model.col_names) + [f"__e{t}" for t in range(k)],
        A=sp.hstack([model.A, P, N], format="csr"), row_lower=model.row_lower, row_upper=model.row_upper,
        col_lower=np.concatenate([model.col_lower, np.zeros(k)]),
        col_upper=np.concatenate([model.col_upper, np.full(k, INF)]),
        cost=np.concatenate([np.zeros(n), np.ones(k)]), integer=np.zeros(n + k, dtype=bool),
    )
    res = solve(el, time_limit=max(time_limit, 0.1), want_duals=True)
    if not res.optimal or res.row_dual is None or res.objective is None or res.objective <= 0:
        return None
    scale = max(1.0, float(np.abs(res.row_dual).max()))
    members: list[Member] = []
    for i in np.nonzero(np.abs(res.row_dual) > tol * scale)[0]:
        side = "lower" if res.row_dual[i] > 0 else "upper"
        if side == "lower" and not lo_f[i]:
            side = "upper"
        if side == "upper" and not up_f[i]:
            side = "lower"
        members.append(("row", int(i), side))
    cd = res.col_dual[:n]
    for j in np.nonzero(np.abs(cd) > tol * scale)[0]:
        side = "lower" if cd[j] > 0 else "upper"
        bound = model.col_lower[j] if side == "lower" else model.col_upper[j]
        if abs(bound) < INF:
            members.append(("col", int(j), side))
    return members


def _widen(model: LinearModel, members: list[Member]) -> list[Member]:
    """Add every finite side of the rows/columns touched by `members` (repairs wrong dual signs)."""
    out: set[Member] = set(members)
    rows = {i for k, i, _ in members if k == "row"}
    for i in rows:
        if model.row_lower[i] > -INF:
            out.add(("row", i, "lower"))
        if model.row_upper[i] < INF:
            out.add(("row", i, "upper"))
    cols = set(np.unique(model.A[sorted(rows)].indices).tolist()) if rows else set()
    cols |= {j for k, j, _ in members if k == "col"}
    for j in cols:
        if model.col_lower[j] > -INF:
            out.add(("col", j, "lower"))
        if model.col_upper[j] < INF:
            out.add(("col", j, "upper"))
    return sorted(out)


def _all_members(model: LinearModel) -> list[Member]:
    out: list[Member] = []
    for i in range(model.num_rows):
        if model.row_lower[i] > -INF:
            out.append(("row", i, "lower"))
        if model.row_upper[i] < INF:
            out.append(("row", i, "upper"))
    for j in range(model.num_cols):
        if model.col_lower[j] > -INF:
            out.append(("col", j, "lower"))
        if model.col_upper[j] < INF:
            out.append(("col", j, "upper"))
    return out


def _order_for_filter(model: LinearModel, members: list[Member]) -> list[Member]:
    # Bounds first, rows last: QuickXplain tends to keep the members near the end of its list, and a
    # conflict explained by constraints is more useful to a modeller than one made of bounds.
    return sorted(members, key=lambda mem: (0 if mem[0] == "col" else 1, mem[1], mem[2]))


def _result(model: LinearModel, status: str, members: list[Member], irreducible: bool, t0: float,
            method: str, integrality: bool = False) -> IISResult:
    rows, cols = [], []
    for kind, idx, side in sorted(members, key=lambda mm: (mm[0] != "row", mm[1], mm[2])):
        if kind == "row":
            rows.append([model.row_names[idx], side])
        else:
            cols.append([model.col_names[idx], side])
    return IISResult(status=status, rows=rows, col_bounds=cols, irreducible=irreducible,
                     seconds=time.perf_counter() - t0, method=method, integrality=integrality,
                     solver=solver_version(), settings={"iis_strategy": IIS_STRATEGY}, members=list(members))


def compute_iis(model: LinearModel, time_limit: float = 10.0, use_scip: bool | None = None) -> IISResult:
    """IIS of an infeasible model, verified irreducible by deletion when the time limit allows."""
    t0 = time.perf_counter()
    deadline = _Deadline(time_limit)
    relax = solve(model, time_limit=time_limit, relax_integrality=True)
    if relax.status == "optimal" or relax.status == "unbounded":
        if not model.is_mip:
            return _result(model, "feasible", [], False, t0, "solve")
        full = solve(model, time_limit=max(deadline.left(), 0.1))
        if full.status in ("optimal", "unbounded"):
            return _result(model, "feasible", [], False, t0, "solve")
        if full.status != "infeasible":
            return _result(model, "unknown", [], False, t0, f"solve:{full.status}")
        return _integrality_iis(model, deadline, t0, use_scip)
    if relax.status not in ("infeasible", "unbounded_or_infeasible"):
        return _result(model, "unknown", [], False, t0, f"solve:{relax.status}")

    oracle = SubsystemOracle(model, use_integrality=False, deadline=deadline)
    cand, how = _highs_candidate(model, time_limit=0.25 * time_limit)
    if cand is not None and len(cand) <= 60:
        ok, _ = deletion_verify(oracle, cand)
        if ok:
            return _result(model, "infeasible", cand, True, t0, "highs")
    # The elastic dual support is a near-minimal certificate: filter it directly. Widened or HiGHS sets
    # carry many redundant members, so bisection (QuickXplain) shrinks them first.
    near_minimal = False
    method = "highs+deletion"
    if cand is None or len(cand) > 60 or not oracle.infeasible(cand):
        el = elastic_candidate(model, time_limit=max(deadline.left(), 0.1))
        method, near_minimal = "elastic+deletion", True
        if el is not None and not oracle.infeasible(el):
            el, near_minimal = _widen(model, el), False
        if el is None or not oracle.infeasible(el):
            if cand is not None and oracle.infeasible(cand):
                el, method = cand, "highs+deletion"
            else:
                return _result(model, "infeasible", [], False, t0, "none")
        cand = el
    ordered = _order_for_filter(model, cand)
    reduced = ordered if near_minimal else quickxplain(oracle, ordered)
    reduced, ok = warm_deletion_filter(oracle, reduced)
    return _result(model, "infeasible", reduced, ok, t0, method)


def _integrality_iis(model: LinearModel, deadline: _Deadline, t0: float, use_scip: bool | None) -> IISResult:
    if use_scip is not False:
        try:
            from ordebug.scip_iis import scip_iis  # lazy: PySCIPOpt is an optional extra
        except ImportError:
            if use_scip:
                raise
        else:
            res = scip_iis(model, deadline.left())
            if res is not None:
                members, irreducible = res
                return _result(model, "infeasible", members, irreducible, t0, "scip", integrality=True)
    oracle = SubsystemOracle(model, use_integrality=True, deadline=deadline)
    members = _order_for_filter(model, _all_members(model))
    reduced = quickxplain(oracle, members)
    reduced, ok = deletion_filter(oracle, reduced)
    return _result(model, "infeasible", reduced, ok, t0, "mip-deletion", integrality=True)


def subsystem_infeasible(model: LinearModel, elements: set[str], use_integrality: bool = True,
                         time_limit: float = 10.0) -> bool:
    """Is the subsystem made of all sides of the named elements (``row:X``/``col:Y``) infeasible?

    Used by the diagnosis metric to credit *any* conflict set an agent reports, not only the stored IIS.
    """
    members: list[Member] = []
    for el in elements:
        kind, _, name = el.partition(":")
        if kind == "row" and model.has_row(name):
            i = model.row(name)
            members += [("row", i, s) for s, v in (("lower", model.row_lower[i]), ("upper", model.row_upper[i]))
                        if abs(v) < INF]
        elif kind == "col" and model.has_col(name):
            j = model.col(name)
            members += [("col", j, s) for s, v in (("lower", model.col_lower[j]), ("upper", model.col_upper[j]))
                        if abs(v) < INF]
    if not members:
        return False
    return SubsystemOracle(model, use_integrality, _Deadline(time_limit)).infeasible(members)
