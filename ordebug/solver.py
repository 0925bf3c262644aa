"""One place that calls HiGHS to solve a `LinearModel`, so settings are uniform and recorded.

Every instance stores `SOLVER_SETTINGS` and `solver_version()`: a benchmark label is only reproducible
if the solver that produced it is known.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import highspy
import numpy as np

from ordebug.highs import highs_version, quiet_highs
from ordebug.model import LinearModel

SOLVER_SETTINGS: dict[str, object] = {
    "presolve": "on",
    "threads": 1,
    "random_seed": 0,
    "mip_rel_gap": 1e-6,
    "primal_feasibility_tolerance": 1e-7,
}

_STATUS = {
    highspy.HighsModelStatus.kOptimal: "optimal",
    highspy.HighsModelStatus.kInfeasible: "infeasible",
    highspy.HighsModelStatus.kUnbounded: "unbounded",
    highspy.HighsModelStatus.kUnboundedOrInfeasible: "unbounded_or_infeasible",
    highspy.HighsModelStatus.kTimeLimit: "time_limit",
    highspy.HighsModelStatus.kIterationLimit: "iteration_limit",
    highspy.HighsModelStatus.kModelEmpty: "optimal",
}


def solver_version() -> str:
    return f"highspy {highs_version()}"


@dataclass
class SolveResult:
    status: str  # optimal | infeasible | unbounded | unbounded_or_infeasible | time_limit | error
    objective: float | None
    x: np.ndarray | None
    seconds: float
    row_dual: np.ndarray | None = None
    col_dual: np.ndarray | None = None

    @property
    def optimal(self) -> bool:
        return self.status == "optimal"


def new_highs(time_limit: float | None = None) -> highspy.Highs:
    h = quiet_highs()
    for key, value in SOLVER_SETTINGS.items():
        h.setOptionValue(key, value)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    return h


def solve(model: LinearModel, time_limit: float = 30.0, relax_integrality: bool = False,
          want_duals: bool = False) -> SolveResult:
    """Solve `model`; infeasible/unbounded are results, not exceptions."""
    t0 = time.perf_counter()
    h = new_highs(time_limit)
    lp = model.to_highs_lp()
    if relax_integrality and model.is_mip:
        lp.integrality_ = []
    h.passModel(lp)
    h.run()
    status = _STATUS.get(h.getModelStatus(), "error")
    if status == "unbounded_or_infeasible":
        # Presolve cannot always tell these apart; one solve without it settles the status.
        h.setOptionValue("presolve", "off")
        h.setOptionValue("time_limit", max(time_limit - (time.perf_counter() - t0), 0.05))  # one budget in all
        h.run()
        status = _STATUS.get(h.getModelStatus(), "error")
    x = obj = rd = cd = None
    if status == "optimal":
        sol = h.getSolution()
        x = np.asarray(sol.col_value, dtype=float)
        obj = float(h.getInfo().objective_function_value)
        if want_duals and sol.dual_valid:
            rd = np.asarray(sol.row_dual, dtype=float)
            cd = np.asarray(sol.col_dual, dtype=float)
    return SolveResult(status, obj, x, time.perf_counter() - t0, rd, cd)


def row_activity(model: LinearModel, x: np.ndarray) -> np.ndarray:
    return model.A @ x
