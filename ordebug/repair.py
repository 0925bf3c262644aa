"""Repair a user's infeasible LP/MIP: the diagnosis, ranked suspects, the certificate in words, and the
least-damaging repair that restores feasibility, with the repaired model.

Why a separate module from the benchmark: a modeller's file has no ground truth, no sabotage record and
no known optimum. The heuristic agent's diagnosis (`HeuristicAgent.plan`) and its one-edit-then-solve
step (`HeuristicAgent.attempt`) are reused as they are; what differs is the search's end. The benchmark
stops at the first repair that solves; here several working repairs are collected and the least damaging
one is proposed, because a modeller pays for a dropped constraint or a moved objective, not for one more
solve. Damage is judged, in this order, by:

1. the repair's class: restoring an element to what its siblings look like (structural evidence) first,
   then relaxing a right-hand side, a bound, a sense or integrality, and dropping a row last;
2. constraints kept (FP): the share of the IIS's and the edited elements that the repaired solution
   still satisfies in their original form;
3. with ``reference_objective`` (e.g. the last optimum before the model broke), the objective
   preservation OP of the benchmark; without one, the order in which the agent ranked them.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np
import scipy.sparse as sp

from ordebug.agents.heuristic import Candidate, HeuristicAgent
from ordebug.env import DebugEnv
from ordebug.iis import subsystem_infeasible
from ordebug.instances import Instance
from ordebug.metrics import fidelity, objective_preservation
from ordebug.model import INF, LinearModel
from ordebug.solver import solve

CLASS_RANK = {"restore": 0, "relax": 1, "drop": 2}
CLASS_WORDS = {"restore": "restores what the structure around it says (siblings, twin rows or columns, a duplicated row)", "relax": "relaxes the model",
               "drop": "drops a constraint"}
SIDE_SIGN = {"lower": ">=", "upper": "<="}
TERMS_SHOWN = 6
MIN_SHIFT_SUSPECTS = 4  # suspects given a minimal-shift LP each


@dataclass
class RepairOption:
    """One repair that made the model solve."""
    label: str  # the heuristic's repair kind: sense, rhs-slip, scale, coef-sign, bound-mode, drop, ...
    kind: str  # restore | relax | drop
    element: str
    actions: list[dict]
    words: str
    objective: float
    constraints_kept: float  # FP over the IIS and the edited elements
    kept: int
    checked: int
    objective_preservation: float | None = None  # OP against the reference objective, when given
    changed: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    def damage_key(self, probe_order: int) -> tuple:
        op = -self.objective_preservation if self.objective_preservation is not None else 0.0
        return CLASS_RANK[self.kind], -round(self.constraints_kept, 9), op, probe_order


@dataclass
class RepairReport:
    model: str
    rows: int
    cols: int
    integer_cols: int
    status: str  # feasible | repaired | not_repaired | not_infeasible (unbounded, time limit, ...)
    solve_status: str
    iis: dict = field(default_factory=dict)
    suspects: list[dict] = field(default_factory=list)  # element, share of the certificate, best repair score
    certificate: list[str] = field(default_factory=list)  # the contradiction in words
    chosen: RepairOption | None = None
    alternatives: list[RepairOption] = field(default_factory=list)
    earlier: list[dict] = field(default_factory=list)  # edits that broke earlier conflicts (several IISs)
    reference_objective: float | None = None
    solver_calls: int = 0
    seconds: float = 0.0
    note: str = ""

    def to_json(self) -> dict:
        return asdict(self)

    def to_markdown(self) -> str:
        lines = [f"# Repair report: {self.model}", "",
                 f"{self.rows} rows, {self.cols} columns ({self.integer_cols} integer). Solver status of the "
                 f"model as given: **{self.solve_status}**."]
        if self.status in ("feasible", "not_infeasible"):
            return "\n".join(lines + ["", self.note, ""])
        iis = self.iis
        lines += ["", "## Diagnosis", "",
                  f"Irreducible infeasible subsystem: {len(iis.get('rows', []))} rows and "
                  f"{len(iis.get('col_bounds', []))} bounds, "
                  f"{'verified irreducible' if iis.get('irreducible') else 'NOT verified irreducible'}"
                  f"{' (integrality is part of the conflict)' if iis.get('integrality') else ''}.", ""]
        lines += [f"- {c}" for c in self.certificate]
        if self.suspects:
            lines += ["", "Suspects, most likely first:", "", "| rank | element | share of the contradiction |",
                      "|---|---|---|"]
            lines += [f"| {k} | `{s['element']}` | {_pct(s['share'])} |" for k, s in enumerate(self.suspects[:10], 1)]
        lines += ["", "## Repair", ""]
        if self.chosen is None:
            lines.append(self.note or "No repair restored feasibility within the solver-call budget.")
        else:
            if self.earlier:
                lines += ["The model has more than one conflict. Each of these edits broke one of them first:", ""]
                lines += [f"{k}. {e['words']} ({CLASS_WORDS[e['kind']]})" for k, e in enumerate(self.earlier, 1)]
                lines += ["", "and then, for the last conflict:", ""]
            lines += [f"Proposed: **{self.chosen.words}** ({CLASS_WORDS[self.chosen.kind]}).", "",
                      "| repair | class | objective | constraints kept (FP) | OP |", "|---|---|---|---|---|"]
            for opt in [self.chosen] + self.alternatives:
                op = "n/a" if opt.objective_preservation is None else f"{opt.objective_preservation:.3f}"
                lines.append(f"| {opt.words} | {opt.kind} | {opt.objective:.6g} | {opt.constraints_kept:.3f} "
                             f"({opt.kept}/{opt.checked}) | {op} |")
            if self.reference_objective is None:
                lines += ["", "OP needs the objective the model should have (`--reference-objective`); without "
                              "it, options of the same class and FP keep the agent's ranking."]
        lines += ["", f"{self.solver_calls} solver calls, {self.seconds:.2f} s.", ""]
        return "\n".join(lines)


def repair_model(model: LinearModel, budget: int = 20, options: int = 3, time_limit: float = 60.0,
                 reference_objective: float | None = None) -> tuple[RepairReport, LinearModel | None]:
    """Diagnose `model` and return the report and the repaired model (None when nothing was repaired)."""
    if budget < 2:
        raise ValueError(f"budget must be >= 2 solver calls (one IIS, one solve), got {budget}")
    if options < 1:
        raise ValueError(f"options must be >= 1, got {options}")
    if reference_objective is not None and not math.isfinite(reference_objective):
        raise ValueError(f"reference_objective must be a finite number, got {reference_objective}")
    t0 = time.perf_counter()
    report = RepairReport(model.name, model.num_rows, model.num_cols, int(model.integer.sum()), "not_repaired",
                          "", reference_objective=reference_objective)
    first = solve(model, time_limit=time_limit)
    report.solve_status = first.status
    if first.optimal:
        report.status = "feasible"
        report.note = f"The model solves (objective {first.objective:.6g}); there is nothing to repair."
        return _done(report, t0, 1), None
    if first.status != "infeasible":
        report.status = "not_infeasible"
        report.note = (f"The solver did not prove the model infeasible (status {first.status}); a repair "
                       "needs an infeasible model.")
        return _done(report, t0, 1), None

    instance = Instance(instance_id=f"user:{model.name}", split="user", source=model.name, model=model)
    env = DebugEnv(instance, budget=budget, iis_time_limit=max(1.0, time_limit / 4), solve_time_limit=time_limit)
    agent = HeuristicAgent()
    committed: list[RepairOption] = []  # edits that broke an earlier conflict of a model with several
    touched: set[tuple] = set()  # what those edits changed (a coefficient, a row's side or sense, a bound)
    extra_solves = 0
    while env.calls_left >= 2:
        plan = agent.plan(env)
        if not committed:
            _describe_diagnosis(report, model, plan)
        for key in ("rows", "col_bounds"):  # FP is judged over every conflict met, in the user's model
            instance.iis.setdefault(key, []).extend(m for m in plan.iis.get(key, []) if m not in instance.iis[key])
        if not plan.candidates:
            break
        conflict = set(plan.conflict)
        shifts, n = minimal_shift_candidates(env.model, plan, time_limit)
        extra_solves += n
        candidates = sorted(plan.candidates + shifts, reverse=True)
        found: list[tuple[RepairOption, LinearModel, int]] = []
        breaker: Candidate | None = None
        for order, cand in enumerate(candidates):
            if env.calls_left < 1 or len(found) >= options:
                break
            if any(_edit_key(a) in touched for a in cand.actions):
                continue  # undoing an edit that broke an earlier conflict would only bring that conflict back
            before = env.model.copy()
            res, applied = agent.attempt(env, cand)
            if res.get("status") == "optimal":
                found.append((_option(before, cand, env, instance, reference_objective), env.model.copy(), order))
            elif breaker is None and not found and conflict and applied:
                extra_solves += 1
                if not subsystem_infeasible(env.model, conflict, time_limit=time_limit):
                    breaker = cand  # this conflict is gone; another one keeps the model infeasible
                    committed.append(_option_words(before, cand))
                    touched.update(_edit_key(a) for a in cand.actions)
                    break
            for _ in range(applied):
                env.step({"op": "undo"})
        if found:
            found.sort(key=lambda item: item[0].damage_key(item[2]))
            report.status = "repaired"
            report.chosen = found[0][0]
            report.alternatives = [opt for opt, _, _ in found[1:]]
            report.earlier = committed
            return _done(report, t0, env.log.solver_calls + 1 + extra_solves), found[0][1]
        if breaker is None:
            break
    report.earlier = committed
    fallback = _elastic_fallback(env, instance, committed, time_limit, reference_objective)
    extra_solves += fallback[2]
    if fallback[0] is not None:  # the last resort: the smallest total shift of right-hand sides that solves
        report.status = "repaired"
        report.chosen, repaired, report.earlier = fallback[0], fallback[1], fallback[3]
        return _done(report, t0, env.log.solver_calls + 1 + extra_solves), repaired
    elastic = (f" The elastic relaxation of the right-hand sides gave: {', '.join(fallback[4])}."
               if fallback[4] else "")
    report.note = (f"No combination of the candidate repairs restored feasibility within {budget} solver calls"
                   f"{f' (after {len(committed)} conflict(s) were broken)' if committed else ''}; the diagnosis "
                   f"above still names the first conflict.{elastic}")
    return _done(report, t0, env.log.solver_calls + 1 + extra_solves), None


def _edit_key(action: dict) -> tuple:
    """What one edit changes: a coefficient, a row (side, sense, scale, drop), a bound side, or a column's type."""
    op = action["op"]
    if op == "set_coef":
        return ("coef", action["row"], action["col"])
    if op == "set_bound":
        return ("bound", action["col"], action["side"])
    if op == "set_integrality":
        return ("type", action["col"])
    return ("row", action.get("row"))


def _elastic_fallback(env: DebugEnv, instance: Instance, committed: list[dict], time_limit: float,
                      reference: float | None) -> tuple[RepairOption | None, LinearModel | None, int, list[dict], list[str]]:
    """The elastic relaxation on top of the conflicts already broken, and (when some were) on the model as
    given; the one with fewer edits in all wins, since every edit is one more thing the modeller must check.
    Returns (option, repaired model, solves used, the earlier edits it keeps, the statuses of the relaxed
    models that did not solve: "unbounded" means the relaxed rows were what kept the objective bounded)."""
    tries: list[tuple[DebugEnv, list[dict]]] = [(env, committed)]
    if committed:
        tries.append((DebugEnv(instance, budget=2, iis_time_limit=env.iis_time_limit,
                               solve_time_limit=time_limit), []))
    best: tuple | None = None
    solves = 0
    statuses: list[str] = []
    for trial, earlier in tries:
        cand, n = elastic_relaxation_candidate(trial.model, time_limit)
        solves += n if trial is env else n + 1
        if cand is None:
            continue
        before = trial.model.copy()
        trial.budget = max(trial.budget, trial.log.solver_calls + 1)  # its check solve may go past the budget
        res, _ = HeuristicAgent.attempt(trial, cand)
        if res.get("status") != "optimal":
            statuses.append(res.get("status") or res.get("error", "error"))
            continue
        edits = len(cand.actions) + sum(len(e["actions"]) for e in earlier)
        if best is None or edits < best[0]:
            best = (edits, _option(before, cand, trial, instance, reference), trial.model.copy(), earlier)
    if best is None:
        return None, None, solves, committed, statuses
    return best[1], best[2], solves, best[3], statuses


def _describe_diagnosis(report: RepairReport, model: LinearModel, plan) -> None:
    report.iis = {k: plan.iis.get(k) for k in ("status", "rows", "col_bounds", "irreducible", "integrality")}
    shares = plan.iis.get("certificate") or {}
    best_score: dict[str, float] = {}
    for cand in plan.candidates:
        best_score.setdefault(cand.element, cand.score)
    report.suspects = [{"element": el, "share": shares.get(el), "score": round(best_score.get(el, 0.0), 4)}
                       for el in plan.ranking]
    report.certificate = certificate_words(model, plan.iis, shares)


def minimal_shift_candidates(model: LinearModel, plan, time_limit: float,
                             limit: int = MIN_SHIFT_SUSPECTS) -> tuple[list[Candidate], int]:
    """For the top suspects, the smallest move of the IIS member's side that makes the model feasible.

    Drop the member's side and optimise the member's own activity: the best activity reachable is exactly
    where the side can move to (a lower side moves down to the largest reachable activity, an upper side up
    to the smallest). One LP/MIP per suspect; it answers "how far off is this number", which is what a
    modeller asks before deleting anything. Scored just below structural evidence (restore) and above
    the generic decimal loosening. Returns the candidates and the number of solves used."""
    sides = {f"row:{r}": s for r, s in plan.iis.get("rows", [])} | {f"col:{c}": s for c, s in plan.iis.get("col_bounds", [])}
    out: list[Candidate] = []
    solves = 0
    for el in [e for e in plan.ranking if e in sides][:limit]:
        kind, _, name = el.partition(":")
        side = sides[el]
        value = None
        for scope in (model, _subsystem(model, plan.iis)):  # the whole model, else this conflict alone
            res = solve(_activity_probe(scope, kind, name, side), time_limit=time_limit)
            solves += 1
            if res.optimal:
                value = _round_outward(float(res.objective), side)
                break
        if value is None:
            continue
        share = (plan.iis.get("certificate") or {}).get(el, 0.0)
        action = ({"op": "set_rhs", "row": name, "value": value, "side": side} if kind == "row"
                  else {"op": "set_bound", "col": name, "side": side, "value": value})
        out.append(Candidate(0.9 + 0.09 * share, el, [action], "min-shift"))
    return out, solves


def elastic_relaxation_candidate(model: LinearModel, time_limit: float) -> tuple[Candidate | None, int]:
    """Every row side moved by the least total amount that makes the model feasible (one elastic solve).

    ``min sum(p + n)  s.t.  L <= Ax + p - n <= U``, column bounds and integrality kept: the rows with a
    non-zero violation get that side moved to the activity found (rounded outward). This is a
    feasibility relaxation with unit penalties (what solvers call feasRelax), so it repairs models whose
    conflicts are too many for one-edit-per-solve rounds; it is the last resort because it edits
    numbers without structural evidence. Returns the candidate (None when even this is infeasible, e.g.
    a column with lower > upper) and the solves used."""
    m, n = model.num_rows, model.num_cols
    eye = sp.identity(m, format="csr")
    elastic = LinearModel(
        name=f"{model.name}-elastic", row_names=list(model.row_names),
        col_names=list(model.col_names) + [f"_p{i}" for i in range(m)] + [f"_n{i}" for i in range(m)],
        A=sp.hstack([model.A, eye, -eye], format="csr"), row_lower=model.row_lower.copy(),
        row_upper=model.row_upper.copy(),
        col_lower=np.concatenate([model.col_lower, np.zeros(2 * m)]),
        col_upper=np.concatenate([model.col_upper, np.full(2 * m, INF)]),
        cost=np.concatenate([np.zeros(n), np.ones(2 * m)]),
        integer=np.concatenate([model.integer, np.zeros(2 * m, dtype=bool)]))
    res = solve(elastic, time_limit=time_limit)
    if not res.optimal or res.x is None:
        return None, 1
    activity = model.A @ res.x[:n]
    actions = []
    # Violations within the solver's feasibility tolerance (relative to the side) are noise, not repairs.
    tol_lo = 1e-6 * (1.0 + np.abs(np.where(model.row_lower > -INF, model.row_lower, 0.0)))
    tol_up = 1e-6 * (1.0 + np.abs(np.where(model.row_upper < INF, model.row_upper, 0.0)))
    for i in np.nonzero(res.x[n:n + m] > tol_lo)[0]:  # p > 0: the activity sits below the lower side
        actions.append({"op": "set_rhs", "row": model.row_names[i], "side": "lower",
                        "value": _round_outward(float(activity[i]), "lower")})
    for i in np.nonzero(res.x[n + m:] > tol_up)[0]:  # n > 0: above the upper side
        actions.append({"op": "set_rhs", "row": model.row_names[i], "side": "upper",
                        "value": _round_outward(float(activity[i]), "upper")})
    if not actions:
        return None, 1
    sides = {"lower": model.row_lower, "upper": model.row_upper}
    worst = max(actions, key=lambda a: abs(a["value"] - sides[a["side"]][model.row(a["row"])]))
    return Candidate(0.05, f"row:{worst['row']}", actions, "elastic"), 1


def _activity_probe(model: LinearModel, kind: str, name: str, side: str) -> LinearModel:
    """`model` without the member's side, optimising the member's activity towards that side."""
    probe = model.copy()
    probe.cost = np.zeros(probe.num_cols)
    probe.offset = 0.0
    probe.maximize = side == "lower"
    if kind == "row":
        i = probe.row(name)
        (probe.row_lower if side == "lower" else probe.row_upper)[i] = -INF if side == "lower" else INF
        cols, vals = probe.row_entries(i)
        probe.cost[cols] = vals
    else:
        j = probe.col(name)
        (probe.col_lower if side == "lower" else probe.col_upper)[j] = -INF if side == "lower" else INF
        probe.cost[j] = 1.0
    return probe


def _subsystem(model: LinearModel, iis: dict) -> LinearModel:
    """The IIS alone: its rows (both sides as written) and its column bounds, every other bound free."""
    rows = [model.row(r) for r in dict.fromkeys(r for r, _ in iis.get("rows", []))]
    keep = np.zeros(model.num_rows, dtype=bool)
    keep[rows] = True
    sub = model.copy()
    sub.delete_rows(list(np.nonzero(~keep)[0]))
    bounded = {c for c, _ in iis.get("col_bounds", [])}
    for j, c in enumerate(sub.col_names):
        if c not in bounded:
            sub.col_lower[j], sub.col_upper[j] = -INF, INF
    return sub


def _round_outward(value: float, side: str, digits: int = 6) -> float:
    """The reachable activity to `digits` significant digits, rounded away from the conflict so the
    re-solve does not sit on the edge of feasibility (a lower side rounds down, an upper side up)."""
    if value == 0 or not math.isfinite(value):
        return value
    value = float(f"{value:.9g}")  # solver noise (1.9999999997) is not a digit worth keeping
    scale = 10.0 ** (math.floor(math.log10(abs(value))) - digits + 1)
    q = value / scale
    q = round(q) if abs(q - round(q)) < 1e-6 else (math.floor if side == "lower" else math.ceil)(q)
    return float(f"{q * scale:.{digits + 1}g}")  # no binary tail (1.9999900000000002)


def _done(report: RepairReport, t0: float, calls: int) -> RepairReport:
    report.seconds = round(time.perf_counter() - t0, 3)
    report.solver_calls = calls
    return report


def _option(original: LinearModel, cand: Candidate, env: DebugEnv, instance: Instance,
            reference: float | None) -> RepairOption:
    fp, kept, checked = fidelity(instance, env.log)
    z = float(env.log.final_objective)
    return RepairOption(
        label=cand.label, kind=repair_class(cand), element=cand.element, actions=cand.actions,
        words="; ".join(action_words(original, a) for a in cand.actions), objective=z, constraints_kept=fp,
        kept=kept, checked=checked,
        objective_preservation=None if reference is None else objective_preservation(z, reference),
        changed=sorted(env.log.final_edited), dropped=sorted(env.log.final_dropped))


def _option_words(model: LinearModel, cand: Candidate) -> dict:
    return {"words": "; ".join(action_words(model, a) for a in cand.actions), "kind": repair_class(cand),
            "element": cand.element, "actions": cand.actions}


def repair_class(cand: Candidate) -> str:
    """restore: backed by structural evidence (score >= 1: the element's siblings, or for a drop a row that
    duplicates another's coefficients with a contradicting side: removing an added row restores the model);
    drop: removes a row without such evidence; relax: every other edit (right-hand side, bound, sense,
    integrality)."""
    if cand.score >= 1.0:
        return "restore"
    return "drop" if any(a["op"] == "drop_row" for a in cand.actions) else "relax"


def action_words(model: LinearModel, action: dict) -> str:
    op = action["op"]
    if op == "set_rhs":
        i = model.row(action["row"])
        return f"change the right-hand side of row {action['row']} from {_num(model.rhs(i))} to {_num(action['value'])}"
    if op == "set_sense":
        i = model.row(action["row"])
        sym = {"L": "<=", "G": ">=", "E": "="}
        return f"make row {action['row']} '{sym.get(model.sense(i), model.sense(i))}' into '{sym[action['sense']]}'"
    if op == "set_bound":
        j = model.col(action["col"])
        old = (model.col_lower if action["side"] == "lower" else model.col_upper)[j]
        return f"set the {action['side']} bound of column {action['col']} from {_num(old)} to {_num(action['value'])}"
    if op == "set_coef":
        return f"flip the sign of {action['col']}'s coefficient in row {action['row']} (to {_num(action['value'])})"
    if op == "scale_row":
        return f"scale row {action['row']}'s coefficients by {_num(action['factor'])}"
    if op == "drop_row":
        return f"drop row {action['row']}"
    if op == "set_integrality":
        return f"make column {action['col']} {'integer' if action['integer'] else 'continuous'}"
    return str(action)


def certificate_words(model: LinearModel, iis: dict, shares: dict[str, float]) -> list[str]:
    """The contradiction for a reader: each IIS member as written in the model, the members carrying most
    of the Farkas certificate first."""
    members = [("row", r, side) for r, side in iis.get("rows", [])] + \
              [("col", c, side) for c, side in iis.get("col_bounds", [])]
    if not members:
        return ["No infeasible subsystem was found (the IIS search gave no members)."]
    members.sort(key=lambda m: -(shares.get(f"{m[0]}:{m[1]}") or 0.0))
    out = [f"These {len(members)} conditions cannot all hold at once:"]
    for kind, name, side in members[:20]:
        share = shares.get(f"{kind}:{name}")
        tail = f" (carries {_pct(share)} of the contradiction)" if share else ""
        out.append(f"`{_member_text(model, kind, name, side)}`{tail}")
    if len(members) > 20:
        out.append(f"... and {len(members) - 20} more (see the JSON report).")
    if iis.get("integrality"):
        out.append("The LP relaxation is feasible: integrality of the columns above is part of the conflict.")
    return out


def _member_text(model: LinearModel, kind: str, name: str, side: str) -> str:
    if kind == "col":
        j = model.col(name)
        bound = (model.col_lower if side == "lower" else model.col_upper)[j]
        return f"bound {name} {SIDE_SIGN.get(side, side)} {_num(bound)}"
    i = model.row(name)
    cols, vals = model.row_entries(i)
    terms = " ".join(f"{'-' if v < 0 else '+'} {_coef(abs(v))}{model.col_names[j]}"
                     for j, v in list(zip(cols, vals, strict=True))[:TERMS_SHOWN])
    terms = terms[2:] if terms.startswith("+ ") else terms
    if len(cols) > TERMS_SHOWN:
        terms += f" + ... ({len(cols) - TERMS_SHOWN} more)"
    lo, up = model.row_lower[i], model.row_upper[i]
    if side == "lower" or up >= INF:
        rel = f">= {_num(lo)}" if lo != up else f"= {_num(lo)}"
    else:
        rel = f"<= {_num(up)}" if lo != up else f"= {_num(up)}"
    return f"{name}: {terms} {rel}"


def _coef(v: float) -> str:
    return "" if v == 1 else f"{_num(v)} "


def _num(v: float | str) -> str:
    v = float(v)  # the environment writes infinite bounds as "inf" / "-inf"
    if v >= INF:
        return "inf"
    if v <= -INF:
        return "-inf"
    return f"{float(v):.6g}"


def _pct(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.0f}%"
