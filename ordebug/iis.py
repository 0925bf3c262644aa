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
# HiGHS' getIis does not honour iis_time_limit on large models (107 s for a 2.5 s limit on a 200k-row
# chain with highspy 1.16): above this many rows it is not asked, the elastic candidate is used instead.
HIGHS_IIS_MAX_ROWS = 20_000

_UNDECIDED = (highspy.HighsModelStatus.kUnboundedOrInfeasible, highspy.HighsModelStatus.kUnknown,
              highspy.HighsModelStatus.kSolveError)


@dataclass
class IISResult:
    """An IIS (or the reason there is none) in a form that serialises to JSON."""

    # feasible | infeasible (an IIS; `irreducible` says whether verified) | time_limit (the budget ran out:
    # `rows`/`col_bounds` are the smallest subsystem verified infeasible so far, not irreducible) | unknown
    status: str
    rows: list[list[str]] = field(default_factory=list)  # [[row name, side]]
    col_bounds: list[list[str]] = field(default_factory=list)  # [[column name, side]]
    irreducible: bool = False
    seconds: float = 0.0
    method: str = ""
    integrality: bool = False  # True when integrality is part of the conflict (LP relaxation feasible)
    solver: str = ""
    settings: dict = field(default_factory=dict)
    members: list[Member] = field(default_factory=list, repr=False)
    verified_infeasible: bool = False  # the reported subsystem was itself shown infeasible by a solve

    def to_json(self) -> dict:
        return {"status": self.status, "rows": self.rows, "col_bounds": self.col_bounds,
                "irreducible": self.irreducible, "verified_infeasible": self.verified_infeasible,
                "seconds": round(self.seconds, 4), "method": self.method,
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
    def __init__(self, seconds: float, start: float | None = None):
        self.end = (time.perf_counter() if start is None else start) + seconds

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
        self.timed_out = False
        self.best: list[Member] | None = None  # smallest member set shown infeasible so far

    def note_infeasible(self, members: list[Member]) -> None:
        if members and (self.best is None or len(members) < len(self.best)):
            self.best = list(members)

    def infeasible(self, members: list[Member]) -> bool:
        verdict = self._infeasible(members)
        if verdict:
            self.note_infeasible(members)
        return verdict

    def _infeasible(self, members: list[Member]) -> bool:
        """True if infeasible; an undecided solve (time limit) counts as feasible, so members are kept."""
        if self.deadline.passed():
            self.unknown = self.timed_out = True
            return False
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
            self.unknown = self.timed_out = True
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
            self.timed_out |= st == highspy.HighsModelStatus.kTimeLimit or self.deadline.passed()
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
        if oracle.timed_out:  # the caller falls back to oracle.best; stop recursing
            return list(cand)
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
            oracle.timed_out = True
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
            oracle.note_infeasible(current)
        else:
            if st == highspy.HighsModelStatus.kTimeLimit:
                oracle.timed_out = oracle.unknown = True
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
    scored = elastic_certificate(model, time_limit, tol)
    return None if scored is None else list(scored)


def elastic_certificate(model: LinearModel, time_limit: float, tol: float = 1e-9) -> dict[Member, float] | None:
    """Members in the support of the elastic LP's optimal duals, each with its dual's magnitude.

    The duals y of ``min sum(p+n) s.t. L <= Ax + p - n <= U`` (column bounds hard) are a Farkas
    certificate: y^T A x is bounded by the members' sides while y^T b says otherwise. A member's |y| is
    how much of the contradiction it carries, which is what the diagnosis ranks by. Built directly as
    a HighsLp without names: on a 200k-row model the named LinearModel cost more than the solve.
    """
    m, n = model.num_rows, model.num_cols
    lo_f = model.row_lower > -INF
    up_f = model.row_upper < INF
    p_rows = np.nonzero(lo_f)[0]
    n_rows = np.nonzero(up_f)[0]
    k = len(p_rows) + len(n_rows)
    P = sp.csc_matrix((np.ones(len(p_rows)), (p_rows, np.arange(len(p_rows)))), shape=(m, len(p_rows)))
    N = sp.csc_matrix((-np.ones(len(n_rows)), (n_rows, np.arange(len(n_rows)))), shape=(m, len(n_rows)))
    E = sp.hstack([model.A.tocsc(), P, N], format="csc")
    E.sort_indices()
    lp = _lp_from(E, np.concatenate([model.col_lower, np.zeros(k)]), np.concatenate([model.col_upper, np.full(k, INF)]),
                  model.row_lower, model.row_upper, cost=np.concatenate([np.zeros(n), np.ones(k)]))
    t0 = time.perf_counter()
    h = new_highs(time_limit=max(time_limit, 0.05))
    h.passModel(lp)
    h.run()
    if h.getModelStatus() == highspy.HighsModelStatus.kUnboundedOrInfeasible:  # cannot be: retry unpresolved
        h.setOptionValue("presolve", "off")
        h.setOptionValue("time_limit", max(time_limit - (time.perf_counter() - t0), 0.05))
        h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    sol = h.getSolution()
    if not sol.dual_valid or h.getInfo().objective_function_value <= 0:
        return None
    row_dual = np.asarray(sol.row_dual, dtype=float)
    cd = np.asarray(sol.col_dual, dtype=float)[:n]
    scale = max(1.0, float(np.abs(row_dual).max()))
    members: dict[Member, float] = {}
    for i in np.nonzero(np.abs(row_dual) > tol * scale)[0]:
        side = "lower" if row_dual[i] > 0 else "upper"
        if side == "lower" and not lo_f[i]:
            side = "upper"
        if side == "upper" and not up_f[i]:
            side = "lower"
        members[("row", int(i), side)] = float(abs(row_dual[i]))
    for j in np.nonzero(np.abs(cd) > tol * scale)[0]:
        side = "lower" if cd[j] > 0 else "upper"
        bound = model.col_lower[j] if side == "lower" else model.col_upper[j]
        if abs(bound) < INF:
            members[("col", int(j), side)] = float(abs(cd[j]))
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
    """Every finite side of every row and column (vectorised: 400k members on a 200k-row model)."""
    out: list[Member] = []
    for kind, lo, up in (("row", model.row_lower, model.row_upper), ("col", model.col_lower, model.col_upper)):
        out += [(kind, int(i), "lower") for i in np.nonzero(lo > -INF)[0]]
        out += [(kind, int(i), "upper") for i in np.nonzero(up < INF)[0]]
    return sorted(out)


def _order_for_filter(model: LinearModel, members: list[Member]) -> list[Member]:
    # Bounds first, rows last: QuickXplain tends to keep the members near the end of its list, and a
    # conflict explained by constraints is more useful to a modeller than one made of bounds.
    return sorted(members, key=lambda mem: (0 if mem[0] == "col" else 1, mem[1], mem[2]))


def _result(model: LinearModel, status: str, members: list[Member], irreducible: bool, t0: float,
            method: str, integrality: bool = False, verified_infeasible: bool | None = None) -> IISResult:
    rn, cn = model.row_names, model.col_names
    rows = [[rn[i], side] for i, side in sorted((i, side) for kind, i, side in members if kind == "row")]
    cols = [[cn[j], side] for j, side in sorted((j, side) for kind, j, side in members if kind == "col")]
    if verified_infeasible is None:
        verified_infeasible = status == "infeasible" and bool(members)
    return IISResult(status=status, rows=rows, col_bounds=cols, irreducible=irreducible,
                     seconds=time.perf_counter() - t0, method=method, integrality=integrality,
                     solver=solver_version(), settings={"iis_strategy": IIS_STRATEGY}, members=list(members),
                     verified_infeasible=verified_infeasible)


def _timeout(model: LinearModel, oracle: SubsystemOracle | None, whole_infeasible: bool, t0: float,
             method: str) -> IISResult:
    """The budget ran out: the smallest subsystem shown infeasible so far (the whole model if nothing
    smaller was), never an empty answer that reads like "no conflict"."""
    best = oracle.best if oracle is not None else None
    if best is None and whole_infeasible:
        best = _all_members(model)
    return _result(model, "time_limit", best or [], False, t0, f"{method}+time_limit",
                   verified_infeasible=best is not None)


def compute_iis(model: LinearModel, time_limit: float = 10.0, use_scip: bool | None = None,
                started: float | None = None) -> IISResult:
    """IIS of an infeasible model, verified irreducible by deletion when the time limit allows.

    `started` (a ``time.perf_counter()`` value) lets a caller count work done before, such as reading
    the file, against `time_limit`. When the limit is reached the status is ``time_limit`` and the
    answer is the smallest subsystem verified infeasible so far (``irreducible: false``).
    """
    t0 = time.perf_counter() if started is None else started
    # Keep back the time it takes to turn a whole-model answer into names (~1 s per 250k rows+columns).
    reserve = min(0.2 * time_limit, 4e-6 * (model.num_rows + model.num_cols))
    deadline = _Deadline(time_limit - reserve, t0)
    relax = solve(model, time_limit=max(deadline.left(), 0.05), relax_integrality=True)
    if relax.status == "optimal" or relax.status == "unbounded":
        if not model.is_mip:
            return _result(model, "feasible", [], False, t0, "solve")
        full = solve(model, time_limit=max(deadline.left(), 0.1))
        if full.status in ("optimal", "unbounded"):
            return _result(model, "feasible", [], False, t0, "solve")
        if full.status == "time_limit" or deadline.passed():
            return _timeout(model, None, False, t0, "solve")
        if full.status != "infeasible":
            return _result(model, "unknown", [], False, t0, f"solve:{full.status}")
        return _integrality_iis(model, deadline, t0, use_scip)
    if relax.status == "time_limit" or (relax.status not in ("infeasible", "unbounded_or_infeasible")
                                        and deadline.passed()):
        return _timeout(model, None, False, t0, "solve")
    if relax.status not in ("infeasible", "unbounded_or_infeasible"):
        return _result(model, "unknown", [], False, t0, f"solve:{relax.status}")
    whole = relax.status == "infeasible"

    oracle = SubsystemOracle(model, use_integrality=False, deadline=deadline)
    cand = None
    if model.num_rows <= HIGHS_IIS_MAX_ROWS:
        cand, _ = _highs_candidate(model, time_limit=0.25 * max(deadline.left(), 0.0))
    if cand is not None and len(cand) <= 60:
        ok, _ = deletion_verify(oracle, cand)
        if ok:
            return _result(model, "infeasible", cand, True, t0, "highs")
    if oracle.timed_out or deadline.passed():
        return _timeout(model, oracle, whole, t0, "highs")
    # The elastic dual support is a near-minimal certificate: filter it directly. Widened or HiGHS sets
    # carry many redundant members, so bisection (QuickXplain) shrinks them first.
    near_minimal = False
    method = "highs+deletion"
    if cand is None or len(cand) > 60 or not oracle.infeasible(cand):
        el = elastic_candidate(model, time_limit=max(deadline.left(), 0.05))
        method, near_minimal = "elastic+deletion", True
        if el is not None and not oracle.infeasible(el):
            el, near_minimal = _widen(model, el), False
        if el is None or not oracle.infeasible(el):
            if cand is not None and oracle.infeasible(cand):
                el, method = cand, "highs+deletion"
            elif oracle.timed_out or deadline.passed():
                return _timeout(model, oracle, whole, t0, "elastic")
            else:
                return _result(model, "unknown", [], False, t0, "none")
        cand = el
    ordered = _order_for_filter(model, cand)
    reduced = ordered if near_minimal else quickxplain(oracle, ordered)
    if oracle.timed_out:
        return _timeout(model, oracle, whole, t0, method)
    reduced, ok = warm_deletion_filter(oracle, reduced)
    if ok:
        return _result(model, "infeasible", reduced, True, t0, method)
    if oracle.timed_out or deadline.passed():
        return _timeout(model, oracle, whole, t0, method)
    # Numerically undecided solves: report the smallest verified-infeasible set, not irreducible.
    best = oracle.best or reduced
    return _result(model, "infeasible", best, False, t0, method, verified_infeasible=oracle.best is not None)


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
    if not oracle.timed_out:
        reduced, ok = deletion_filter(oracle, reduced)
        if ok:
            return _result(model, "infeasible", reduced, True, t0, "mip-deletion", integrality=True)
    if oracle.timed_out or deadline.passed():
        res = _timeout(model, oracle, True, t0, "mip-deletion")
    else:
        res = _result(model, "infeasible", oracle.best or reduced, False, t0, "mip-deletion",
                      verified_infeasible=oracle.best is not None)
    res.integrality = True
    return res


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


def certificate_shares(model: LinearModel, members: list[Member], time_limit: float = 5.0) -> dict[str, float]:
    """Each IIS element's share of the Farkas contradiction, ``|y_k b_k| / sum |y b|``, keyed ``row:NAME``.

    The elastic LP of the subsystem (only its members' sides) gives multipliers y with y^T A = 0-ish
    on the free directions and y^T b > 0: the side values b_k whose terms dominate y^T b carry the
    contradiction. A sabotaged right-hand side or bound moved out of reach dominates; a faithful
    member contributes a small share. Empty when the certificate cannot be computed in time.
    """
    if not members:
        return {}
    rows = sorted({i for k, i, _ in members if k == "row"})
    sub_a = model.A[rows] if rows else sp.csr_matrix((0, model.num_cols))
    cols = sorted(set(np.unique(sub_a.indices).tolist()) | {j for k, j, _ in members if k == "col"})
    rpos = {i: p for p, i in enumerate(rows)}
    cpos = {j: p for p, j in enumerate(cols)}
    rl, ru = np.full(len(rows), -INF), np.full(len(rows), INF)
    cl, cu = np.full(len(cols), -INF), np.full(len(cols), INF)
    for kind, idx, side in members:
        if kind == "row":
            (rl if side == "lower" else ru)[rpos[idx]] = (model.row_lower if side == "lower" else model.row_upper)[idx]
        else:
            (cl if side == "lower" else cu)[cpos[idx]] = (model.col_lower if side == "lower" else model.col_upper)[idx]
    sub = LinearModel("iis", [model.row_names[i] for i in rows], [model.col_names[j] for j in cols],
                      sub_a[:, cols] if rows else sp.csr_matrix((0, len(cols))), rl, ru, cl, cu,
                      np.zeros(len(cols)), np.zeros(len(cols), dtype=bool))
    cert = elastic_certificate(sub, time_limit)
    terms: dict[str, float] = {}
    if cert:
        for (kind, p, side), y in cert.items():
            if kind == "row":
                b = (sub.row_lower if side == "lower" else sub.row_upper)[p]
                key = f"row:{sub.row_names[p]}"
            else:
                b = (sub.col_lower if side == "lower" else sub.col_upper)[p]
                key = f"col:{sub.col_names[p]}"
            terms[key] = terms.get(key, 0.0) + abs(y * b) + 1e-12 * y
    if not terms:
        return {}
    total = sum(terms.values()) or 1.0
    return {k: v / total for k, v in terms.items()}
