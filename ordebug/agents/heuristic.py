"""The strong baseline: IIS-guided, anomaly-ranked, restorative repairs.

Why restorative: an agent cannot see the original optimum, but the cheapest change that restores
feasibility *and* the objective is usually to undo the modelling error itself. So the agent looks at
each IIS member next to its *siblings* (rows/columns with the same name pattern) and proposes the edit
that makes it look like them again: flip a sense back, undo a decimal slip in a right-hand side or a
row scale, restore a coefficient's sign, a bound, or continuity, or drop a duplicated row. Candidates
are tried best-first, each costing one ``solve``; generic relaxations are the last resort.
Without an IIS (ablation) the same scoring runs over the whole model, which ranks worse.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ordebug.agents.base import iis_elements
from ordebug.agents.twins import twin_row_slips, twin_sign_slips
from ordebug.env import DebugEnv, family, fine_family
from ordebug.model import INF

MAX_SIBLINGS = 40
MAX_SCAN_ROWS = 400  # rows scored when no IIS is available
MAX_ODD_SIGNS = 1
MAX_TWIN_ROWS = 2
TWIN_EVIDENCE_MIN = 0.6  # e.g. one axis with 3+ twins agreeing, or a lone twin confirmed by the other axis
WHOLE_MODEL_FAMILY = 0.5  # a row family holding this share of all rows is the model's numbering, not a kind  # sign disagreements in one row beyond which they are the row's pattern, not an error


@dataclass(order=True)
class Candidate:
    score: float
    element: str = field(compare=False)
    actions: list[dict] = field(compare=False, default_factory=list)
    label: str = field(compare=False, default="")


@dataclass
class Plan:
    """What the agent concluded before repairing: the conflict it reports, the repairs to try best-first,
    the suspects' ranking, and the raw get_iis answer (with the certificate shares)."""
    conflict: list[str]
    candidates: list[Candidate]
    ranking: list[str]
    iis: dict


class HeuristicAgent:
    name = "heuristic"

    def __init__(self, use_iis: bool = True):
        self.use_iis = use_iis
        self._seen: dict[tuple, dict] = {}

    # ------------------------------------------------------------------ helpers over the env
    def _look(self, env: DebugEnv, action: dict) -> dict:
        """A read-only env step (inspect/list), asked once per plan: the model does not change while
        planning, and re-reading the same siblings for every IIS member made large MIPs take 160,000
        steps (a minute) per episode."""
        key = tuple(sorted(action.items()))
        if key not in self._seen:
            self._seen[key] = env.step(action)
        return self._seen[key]

    def _rows(self, env: DebugEnv, names: list[str]) -> dict[str, dict]:
        out = {}
        for n in names:
            r = self._look(env, {"op": "inspect_row", "name": n})
            if "error" not in r:
                out[n] = dict(r)  # plan() annotates these; the cached answer stays as read
        return out

    def _by_fine_family(self, op_list: str, pattern: str, members: list[str]) -> dict[str, list[str]]:
        """A family's members grouped by fine family, once per plan (a bound IIS of 3,759 columns asked
        for it per member: 15 million regex calls)."""
        key = ("fine", op_list, pattern)
        if key not in self._seen:
            groups: dict[str, list[str]] = {}
            for n in members:
                groups.setdefault(fine_family(n), []).append(n)
            self._seen[key] = groups
        return self._seen[key]

    def _family_share(self, env: DebugEnv, name: str) -> float:
        """The share of the model's rows in this row's name family."""
        members = self._look(env, {"op": "list_rows", "family_pattern": family(name)})["rows"]
        return len(members) / max(1, env.model.num_rows)

    def _row_signs(self, row: dict) -> dict[str, tuple[int, int]]:
        """Per column family, the row's (non-positive, positive) coefficient counts; once per plan (a diet
        row has 400 coefficients and is every other row's sibling)."""
        key = ("signs", row["row"])
        if key not in self._seen:
            counts: dict[str, list[int]] = {}
            for c, v in row["coefs"].items():
                counts.setdefault(family(c), [0, 0])[v > 0] += 1
            self._seen[key] = {fam: (neg, pos) for fam, (neg, pos) in counts.items()}
        return self._seen[key]

    def _column_family(self, col: str, col_rows: dict[str, float], fam: str) -> tuple[np.ndarray, np.ndarray]:
        """The column's non-zero entries in rows of family `fam`: (row names, |coefficients|), once per plan."""
        key = ("colfam", col, fam)
        if key not in self._seen:
            pairs = [(r, abs(x)) for r, x in col_rows.items() if x != 0 and family(r) == fam]
            self._seen[key] = (np.array([r for r, _ in pairs], dtype=object),
                               np.array([a for _, a in pairs], dtype=float))
        return self._seen[key]

    def _siblings(self, env: DebugEnv, name: str, kind: str) -> list[dict]:
        op_list, op_insp, key = ("list_rows", "inspect_row", "rows") if kind == "row" else ("list_cols", "inspect_col", "cols")
        members = self._look(env, {"op": op_list, "family_pattern": family(name)})[key]
        fine = [n for n in self._by_fine_family(op_list, family(name), members).get(fine_family(name), [])
                if n != name]
        names = fine if (kind == "col" and len(fine) >= 2) else [n for n in members if n != name]
        out = []
        for n in names[:MAX_SIBLINGS]:
            r = self._look(env, {"op": op_insp, "name": n})
            if "error" not in r:
                out.append(r)
        return out

    # ------------------------------------------------------------------ candidate generation
    def _row_candidates(self, env: DebugEnv, row: dict, conflict_rows: dict[str, dict]) -> list[Candidate]:
        name, el = row["row"], f"row:{row['row']}"
        sibs = self._siblings(env, name, "row")
        cands: list[Candidate] = []
        sense, rhs, coefs = row["sense"], float(row["rhs"]), row["coefs"]
        if len(sibs) >= 2:
            senses = Counter(s["sense"] for s in sibs)
            maj, cnt = senses.most_common(1)[0]
            frac = cnt / len(sibs)
            if maj != sense and frac >= 0.75 and maj in ("L", "G", "E") and sense in ("L", "G", "E"):
                # A "family" that is most of the model (NETLIB's numbered rows) mixes constraint kinds: a
                # minority sense there is normal, so the evidence drops below a decimal slip's.
                whole = self._family_share(env, name) >= WHOLE_MODEL_FAMILY
                cands.append(Candidate((1.3 if whole else 3.0) + frac, el,
                                       [{"op": "set_sense", "row": name, "sense": maj}], "sense"))
            # Decimal slip in the right-hand side.
            srhs = np.array([abs(float(s["rhs"])) for s in sibs if abs(float(s["rhs"])) > 0])
            # Only outside the siblings' own range: real models' right-hand sides spread over decades
            # (p0033's R rows), where "10x the median" is no evidence of a slip.
            if rhs != 0 and srhs.size >= 2 and not srhs.min() <= abs(rhs) <= srhs.max():
                lr = math.log10(abs(rhs) / float(np.median(srhs)))
                k = round(lr)
                if k != 0 and abs(lr - k) < 0.5:
                    cands.append(Candidate(2.0 + (0.5 - abs(lr - k)), el,
                                           [{"op": "set_rhs", "row": name, "value": rhs * 10.0 ** -k}], "rhs-slip"))
            # Row scaled by a power of ten.
            mine = np.median(np.abs(list(coefs.values()))) if coefs else 0.0
            smed = np.array([np.median(np.abs(list(s["coefs"].values()))) for s in sibs if s["coefs"]])
            if mine > 0 and smed.size >= 2 and np.median(smed) > 0:
                lr = math.log10(mine / float(np.median(smed)))
                k = round(lr)
                if k != 0 and abs(lr - k) < 0.35:
                    cands.append(Candidate(2.2 + (0.35 - abs(lr - k)), el,
                                           [{"op": "scale_row", "row": name, "factor": 10.0 ** -k}], "scale"))
            # A coefficient whose sign disagrees with the same column family in sibling rows.
            sign_by_fam: dict[str, list[int]] = {}  # column family -> [non-positive, positive] counts
            for s in sibs:
                for fam, (neg, pos) in self._row_signs(s).items():
                    acc = sign_by_fam.setdefault(fam, [0, 0])
                    acc[0] += neg
                    acc[1] += pos
            odd_signs = []
            for c, v in coefs.items():
                acc = sign_by_fam.get(family(c))
                if acc and sum(acc) >= 3:
                    maj_pos = acc[1] > acc[0]  # a tie has frac 0.5 and proposes nothing
                    frac = max(acc) / sum(acc)
                    if (v > 0) != maj_pos and frac >= 0.8:
                        odd_signs.append((c, v, frac))
            # One slip flips one sign: a row where several coefficients disagree with the siblings is a row
            # of another pattern (p0033's R119 has 8), and its "evidence" would outrank the real error.
            if len(odd_signs) <= MAX_ODD_SIGNS:
                for c, v, frac in odd_signs:
                    cands.append(Candidate(3.0 + frac, el, [{"op": "set_coef", "row": name, "col": c, "value": -v}],
                                           "coef-sign"))
        # Same-row sign outlier among coefficients of one column family (rows without siblings).
        by_fam: dict[str, list[tuple[str, float]]] = {}
        for c, v in coefs.items():
            by_fam.setdefault(family(c), []).append((c, v))
        for items in by_fam.values():
            if len(items) >= 3:
                pos = [c for c, v in items if v > 0]
                neg = [c for c, v in items if v < 0]
                odd = pos if len(pos) == 1 else (neg if len(neg) == 1 else [])
                for c in odd:
                    cands.append(Candidate(2.4, el, [{"op": "set_coef", "row": name, "col": c, "value": -coefs[c]}],
                                           "coef-sign-row"))
        # A duplicate of another row (found through a shared column), with a rarer name pattern: an added,
        # contradictory row. Column-wise magnitudes also reveal a row scaled by a power of ten.
        others = dict(conflict_rows)
        logs = []
        for c, v in list(coefs.items())[:MAX_SIBLINGS]:
            col_rows = self._look(env, {"op": "inspect_col", "name": c}).get("rows", {})
            # Only rows of the same family share units; other rows' magnitudes say nothing about scale.
            peer_names, peer_abs = self._column_family(c, col_rows, family(name))
            peer = peer_abs[peer_names != name]
            if peer.size and v != 0:
                logs.append(math.log10(abs(v) / float(np.median(peer))))
            if c == next(iter(coefs)):
                for r in col_rows:
                    if r not in others and r != name:
                        info = self._look(env, {"op": "inspect_row", "name": r})
                        if "error" not in info:
                            others[r] = info
        if len(logs) >= 2:
            lr = float(np.median(logs))
            k = round(lr)
            if k != 0 and abs(lr - k) < 0.3 and float(np.std(logs)) < 0.5:
                cands.append(Candidate(2.3 + (0.3 - abs(lr - k)), el,
                                       [{"op": "scale_row", "row": name, "factor": 10.0 ** -k}], "scale-colwise"))
        for other, info in others.items():
            if other != name and info["coefs"] == coefs:
                n_mine = len(self._look(env, {"op": "list_rows", "family_pattern": family(name)})["rows"])
                n_other = len(self._look(env, {"op": "list_rows", "family_pattern": family(other)})["rows"])
                if n_mine < n_other or (n_mine == n_other and len(name) > len(other)):
                    cands.append(Candidate(3.9, el, [{"op": "drop_row", "row": name}], "duplicate"))
        # Generic decimal-slip repairs in the loosening direction (no sibling evidence needed); the IIS
        # side tells which direction loosens an equality.
        side = row.get("iis_side") or {"L": "upper", "G": "lower"}.get(sense, "lower")
        if rhs != 0 and sense in ("L", "G", "E"):
            for k, sc in ((1, 0.8), (2, 0.5), (3, 0.3)):
                looser = rhs * (10.0 ** k if (side == "upper") == (rhs > 0) else 10.0 ** -k)
                cands.append(Candidate(sc, el, [{"op": "set_rhs", "row": name, "value": looser}], f"loosen-x{k}"))
        if sense in ("L", "G"):
            cands.append(Candidate(0.35, el, [{"op": "set_sense", "row": name, "sense": "G" if sense == "L" else "L"}],
                                   "flip"))
        cands.append(Candidate(0.05, el, [{"op": "drop_row", "row": name}], "drop"))
        return cands

    def _col_candidates(self, env: DebugEnv, col: str, side: str | None) -> list[Candidate]:
        info = self._look(env, {"op": "inspect_col", "name": col})
        if "error" in info:
            return []
        el = f"col:{col}"
        sibs = self._siblings(env, col, "col")
        cands: list[Candidate] = []
        if len(sibs) >= 2 and side is not None:
            vals = [s[side] for s in sibs]
            mode, cnt = Counter(vals).most_common(1)[0]
            frac = cnt / len(vals)
            mine = info[side]
            if mine != mode and frac >= 0.6:
                cands.append(Candidate(3.0 + frac, el, [{"op": "set_bound", "col": col, "side": side, "value": mode}],
                                       "bound-mode"))
            elif mine != mode and isinstance(mine, float):
                # Only an outlier by an order of magnitude (or of the wrong sign) is evidence of an error.
                finite = np.array([float(v) for v in vals if isinstance(v, float)])
                if finite.size >= 2:
                    med = float(np.median(finite))
                    outside = mine < finite.min() or mine > finite.max()
                    far = (mine == 0) != (med == 0) or (mine * med < 0) or \
                        (mine != 0 and med != 0 and abs(math.log10(abs(mine) / abs(med))) >= 0.5)
                    if outside and far:
                        cands.append(Candidate(1.5, el, [{"op": "set_bound", "col": col, "side": side, "value": med}],
                                               "bound-median"))
        if side is not None:
            cands.append(Candidate(0.1, el, [{"op": "set_bound", "col": col, "side": side,
                                              "value": -INF if side == "lower" else INF}], "free-bound"))
        return cands

    def _integrality_candidates(self, env: DebugEnv, rows: dict[str, dict], flagged: bool) -> list[Candidate]:
        odd: list[str] = []
        ints: list[str] = []
        for row in rows.values():
            for c in row["coefs"]:
                info = self._look(env, {"op": "inspect_col", "name": c})
                if not info.get("integer") or c in ints:
                    continue
                ints.append(c)
                sibs = self._look(env, {"op": "list_cols", "family_pattern": family(c)})["cols"][:MAX_SIBLINGS]
                cont = sum(1 for n in sibs if not self._look(env, {"op": "inspect_col", "name": n}).get("integer"))
                if sibs and cont / len(sibs) >= 0.5 and c not in odd:
                    odd.append(c)
        out = []
        if odd:
            out.append(Candidate(3.8, f"col:{odd[0]}", [{"op": "set_integrality", "col": c, "integer": False}
                                                        for c in odd], "integrality"))
        if flagged and ints and ints != odd:
            # The IIS says integrality is part of the conflict: relaxing it is the smallest change.
            out.append(Candidate(1.2, f"col:{ints[0]}", [{"op": "set_integrality", "col": c, "integer": False}
                                                         for c in ints], "integrality-iis"))
        return out

    @staticmethod
    def _twin_candidates(env: DebugEnv, rows: dict[str, dict]) -> list[Candidate]:
        """Sign slips seen through twin rows and columns (`ordebug.agents.twins`); found by both a row's
        and a column's twins is the strongest evidence of a flipped sign this agent has."""
        found: dict[tuple[str, str], list] = {}
        for slip in twin_sign_slips(env.model, list(rows)):
            found.setdefault((slip.row, slip.col), []).append(slip)
        strong = {}
        for (row, col), slips in found.items():
            # The best evidence on each axis, added: a row's twins and the column's twins are independent.
            total = sum(max((s.weight for s in slips if s.by == axis), default=0.0) for axis in ("row", "col"))
            if total >= TWIN_EVIDENCE_MIN:
                strong[(row, col)] = (total, slips[0].value)
        # One slip flips one sign: several odd coefficients in one row make a row of another pattern, and
        # odd rows all over a large conflict (greenbea's 586-member IIS) mean the shapes do not repeat cleanly.
        per_row = Counter(row for row, _ in strong)
        if len(per_row) > MAX_TWIN_ROWS:
            return []
        out = []
        for (row, col), (total, value) in strong.items():
            if per_row[row] <= MAX_ODD_SIGNS:
                out.append(Candidate(2.6 + total, f"row:{row}", [{"op": "set_coef", "row": row, "col": col,
                                                                  "value": -value}], "coef-sign-twins"))
        for slip in twin_row_slips(env.model, list(rows)):
            if slip.weight >= TWIN_EVIDENCE_MIN:
                action = ({"op": "set_sense", "row": slip.row, "sense": slip.value} if slip.kind == "sense" else
                          {"op": "scale_row", "row": slip.row, "factor": slip.value})
                out.append(Candidate(3.0 + slip.weight, f"row:{slip.row}", [action], f"{slip.kind}-twins"))
        return out

    # ------------------------------------------------------------------ ranking
    @staticmethod
    def _with_certificate(cands: list[Candidate], shares: dict[str, float]) -> list[Candidate]:
        """Combine structural unusualness (the sibling score) with the Farkas certificate's evidence.

        Strong structural evidence (score >= 1) gets a bonus of up to 0.6 by the member's share of the
        contradiction (it breaks ties between equally odd members); generic repairs (score < 1, no
        structural evidence) are scaled by (0.25 + share), so the member carrying the contradiction is
        loosened first instead of the first member in IIS order.
        """
        if not shares:
            return cands
        out = []
        for c in cands:
            share = float(shares.get(c.element, 0.0))
            if c.score >= 1.0:
                score = c.score + 0.6 * share
            elif c.label == "drop":
                score = c.score * (0.25 + share)
            else:  # the share leads: a member carrying half the contradiction before members carrying none
                score = 0.5 * c.score + 0.5 * share
            out.append(Candidate(score, c.element, c.actions, c.label))
        return out

    @staticmethod
    def _ranking(cands: list[Candidate]) -> list[str]:
        """Suspect elements best-first: the order in which the agent probes them."""
        return list(dict.fromkeys(c.element for c in sorted(cands, reverse=True)))

    # ------------------------------------------------------------------ episode
    def plan(self, env: DebugEnv) -> Plan:
        """Diagnose without repairing: the IIS (one solver call), every candidate repair scored by the
        structural and certificate evidence, best-first and without repeats."""
        self._seen = {}
        conflict: list[str] = []
        iis: dict = {}
        if self.use_iis and env.allow_iis:
            iis = env.step({"op": "get_iis"})
        if iis.get("rows") or iis.get("col_bounds"):
            conflict = iis_elements(iis)
            row_names = [r for r, _ in iis["rows"]]
            col_sides = [(c, s) for c, s in iis["col_bounds"]]
        else:
            row_names = self._look(env, {"op": "list_rows"})["rows"][:MAX_SCAN_ROWS]
            col_sides = []
        rows = self._rows(env, row_names)
        for r, side in iis.get("rows", []):
            if r in rows:
                rows[r]["iis_side"] = side
        cands: list[Candidate] = []
        for row in rows.values():
            cands += self._row_candidates(env, row, rows)
        for c, s in col_sides:
            cands += self._col_candidates(env, c, s)
        cands += self._twin_candidates(env, rows)
        if iis.get("integrality") or (not conflict and env.model.is_mip):
            cands += self._integrality_candidates(env, rows, bool(iis.get("integrality")))
        if not conflict:
            cands = [c for c in cands if c.score >= 1.0] + sorted([c for c in cands if c.score < 1.0],
                                                                 reverse=True)[:10]
        cands = self._with_certificate(cands, iis.get("certificate") or {})
        unique: dict[str, Candidate] = {}
        for cand in sorted(cands, reverse=True):
            unique.setdefault(repr(cand.actions), cand)
        return Plan(conflict, list(unique.values()), self._ranking(cands), iis)

    @staticmethod
    def attempt(env: DebugEnv, cand: Candidate) -> tuple[dict, int]:
        """Apply a candidate's edits and solve once: (the solve's answer, how many edits took effect).
        The edits stay in force; the caller undoes them when the solve was not optimal."""
        applied = sum("error" not in env.step(action) for action in cand.actions)
        return env.step({"op": "solve"}), applied

    def run(self, env: DebugEnv) -> None:
        if env.instance.meta.get("track") == "resilience":
            from ordebug.resilience import ResilienceHeuristic

            return ResilienceHeuristic().run(env)
        plan = self.plan(env)
        for cand in plan.candidates:
            if env.calls_left < 1:
                break
            res, applied = self.attempt(env, cand)
            if res.get("status") == "optimal":
                env.step({"op": "diagnose", "root_cause": [cand.element], "conflict": plan.conflict,
                          "ranking": [cand.element] + [e for e in plan.ranking if e != cand.element]})
                env.step({"op": "submit"})
                return
            for _ in range(applied):
                env.step({"op": "undo"})
        env.step({"op": "diagnose", "root_cause": [plan.candidates[0].element] if plan.candidates else [],
                  "conflict": plan.conflict, "ranking": plan.ranking})
        env.step({"op": "submit"})
