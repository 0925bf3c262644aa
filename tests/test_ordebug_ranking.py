"""Diagnosis that ranks: Farkas shares of IIS members, the root-rank metric, the heuristic's ranking."""

from __future__ import annotations

import math

import pytest

from ordebug.agents.heuristic import HeuristicAgent
from ordebug.env import DebugEnv
from ordebug.iis import certificate_shares, compute_iis
from ordebug.metrics import episode_metrics, root_rank
from ordebug.testing import small_instance


def test_root_rank_metric():
    assert root_rank({"row:a"}, ["row:b", "row:a", "row:a"]) == (2.0, 0.5)
    assert root_rank({"row:z"}, ["row:b", "row:a"]) == (3.0, 0.0)
    assert all(math.isnan(v) for v in root_rank(set(), ["row:a"]))
    assert all(math.isnan(v) for v in root_rank({"row:a"}, []))


@pytest.mark.parametrize("family,operator", [("inventory", "tighten_rhs"), ("production", "conflicting_bound"),
                                             ("transportation", "contradictory_row")])
def test_certificate_puts_the_sabotaged_element_first(family, operator):
    inst = small_instance(family, operator)
    res = compute_iis(inst.model)
    shares = certificate_shares(inst.model, res.members)
    assert shares and abs(sum(shares.values()) - 1.0) < 1e-6
    assert set(shares) <= res.elements()
    assert max(shares, key=shares.get) in inst.root


def test_heuristic_reports_a_ranking_with_the_root_first():
    inst = small_instance("inventory", "tighten_rhs")
    env = DebugEnv(inst)
    iis = env.step({"op": "get_iis"})
    assert iis["certificate"] and max(iis["certificate"], key=iis["certificate"].get) in inst.root
    env = DebugEnv(inst)
    HeuristicAgent().run(env)
    m = episode_metrics(inst, env.log)
    assert env.log.diagnosis_ranking and m["root_rank"] == 1.0 and m["root_rr"] == 1.0


def _rows_model(rows: list[tuple[str, dict[str, float], float, float]], ub: dict[str, float],
                lb: dict[str, float] | None = None):
    import numpy as np
    import scipy.sparse as sp

    from ordebug.model import INF, LinearModel

    rows = [(n, coefs, lo if lo > -1e29 else -INF, up if up < 1e29 else INF) for n, coefs, lo, up in rows]  # 1e30: none
    cols = sorted({c for _, coefs, _, _ in rows for c in coefs})
    a = np.array([[coefs.get(c, 0.0) for c in cols] for _, coefs, _, _ in rows])
    return LinearModel("m", [r[0] for r in rows], cols, sp.csr_matrix(a), np.array([r[2] for r in rows]),
                       np.array([r[3] for r in rows]), np.array([(lb or {}).get(c, 0.0) for c in cols]),
                       np.array([ub.get(c, 1e6) for c in cols]),
                       np.ones(len(cols)), np.zeros(len(cols), dtype=bool))


def _labels(model, element: str) -> set[str]:
    from ordebug.instances import Instance

    plan = HeuristicAgent().plan(DebugEnv(Instance(instance_id="t", split="t", source="t", model=model)))
    return {c.label for c in plan.candidates if c.element == element}


@pytest.mark.parametrize("sibling_rhs,expect_slip", [((10, 11, 9, 10, 12), True), ((1, 5, 300, 2000, 9), False)])
def test_a_decimal_slip_needs_a_right_hand_side_outside_the_siblings_range(sibling_rhs, expect_slip):
    # dem_5: x5 >= 100 against x5 <= 20. Siblings at 9-12 make 100 a slip of 10x; siblings spread from 1 to
    # 2,000 make it an ordinary value (real models' right-hand sides span decades).
    rows = [(f"dem_{k}", {f"x{k}": 1.0}, float(v), 1e30) for k, v in enumerate(sibling_rhs)]
    rows.append(("dem_5", {"x5": 1.0}, 100.0, 1e30))
    labels = _labels(_rows_model(rows, {"x5": 20.0}), "row:dem_5")
    assert ("rhs-slip" in labels) == expect_slip


@pytest.mark.parametrize("n_odd,expect_sign", [(1, True), (3, False)])
def test_a_sign_slip_is_one_coefficient_not_a_row_of_another_pattern(n_odd, expect_sign):
    # Six sibling rows bal_k: +y_k0 + y_k1 + y_k2 <= 10; in bal_6 n_odd of the three signs are flipped, and
    # with the bound y_60 >= 30 (as lower bounds via rows) the model is infeasible.
    rows = [(f"bal_{k}", {f"y{k}0": 1.0, f"y{k}1": 1.0, f"y{k}2": 1.0}, -1e30, 10.0) for k in range(6)]
    coefs = {f"y6{j}": (-1.0 if j < n_odd else 1.0) for j in range(3)}
    rows.append(("bal_6", coefs, 15.0, 1e30))  # >= 15 with the flipped terms pulling it down
    rows.append(("cap_6", {f"y6{j}": 1.0 for j in range(3)}, -1e30, 12.0))
    model = _rows_model(rows, {})
    labels = _labels(model, "row:bal_6")
    assert ("coef-sign" in labels) == expect_sign


def test_without_structural_evidence_the_heaviest_member_is_probed_first():
    # No siblings anywhere (every name distinct), so every candidate is generic; the member that carries the
    # largest share of the Farkas contradiction must lead, not the first row whose sense could be flipped
    # (kb2: the sabotaged bound carried 50 % and was probed 14th).
    from ordebug.instances import Instance

    # x <= 4, x = y, y >= w, w >= 5: the bounds carry 4/9 and 5/9 of the contradiction, the rows none.
    rows = [("bal", {"x": 1.0, "y": -1.0}, 0.0, 0.0), ("dem", {"y": 1.0, "w": -1.0}, 0.0, 1e30)]
    model = _rows_model(rows, {"x": 4.0}, lb={"w": 5.0})
    plan = HeuristicAgent().plan(DebugEnv(Instance(instance_id="t", split="t", source="t", model=model)))
    shares = plan.iis["certificate"]
    assert all(c.score < 1.0 for c in plan.candidates)
    first = next(c for c in plan.candidates if c.label != "drop")
    assert shares[first.element] == max(shares.values()) > 0


def _numbered_flow_model(flip: int | None):
    """Six numbered rows 00000k: x_k - y_k - z_k = 5 (x_k <= 100, y, z >= 0): names carry no family,
    only the repeated shape does. Row `flip` has x_k's sign flipped, which no non-negative x, y, z can meet."""
    rows = []
    for k in range(6):
        sign = -1.0 if k == flip else 1.0
        rows.append((f"{k:06d}", {f"{10 * k + 1:06d}": sign, f"{10 * k + 2:06d}": -1.0,
                                  f"{10 * k + 3:06d}": -1.0}, 5.0, 5.0))
    return _rows_model(rows, {f"{10 * k + 1:06d}": 100.0 for k in range(6)})


def test_twins_name_the_flipped_coefficient_where_names_carry_no_pattern():
    from ordebug.agents.twins import twin_sign_slips

    slips = twin_sign_slips(_numbered_flow_model(3), ["000003"])
    assert {(s.row, s.col) for s in slips} == {("000003", "000031")}
    assert slips[0].by == "row" and slips[0].twins == 5 and slips[0].weight > 0.8
    assert twin_sign_slips(_numbered_flow_model(None), ["000003"]) == []  # agreeing twins: no evidence


def test_twins_that_disagree_among_themselves_are_no_evidence():
    from ordebug.agents.twins import _evidence

    # The twins agree neither on a pattern, nor on a position, nor on how many entries are positive.
    lines = [(0, (False, False, False), None), (1, (True, False, False), None), (2, (False, True, True), None),
             (3, (False, False, True), None)]
    assert _evidence(lines, 0) == []
    # Twins that agree on how many entries are positive (one), not where: weak evidence for each entry.
    lines = [lines[0], lines[1], (2, (False, True, False), None), lines[3], (4, (True, False, False), None)]
    weak = _evidence(lines, 0)
    assert {k for k, *_ in weak} == {0, 1, 2} and all(kind == "count" and w < 0.5 for _, w, _, kind in weak)


def test_heuristic_restores_a_sign_on_numbered_rows_first_and_rationally():
    from ordebug.instances import Instance
    from ordebug.solver import solve

    original, model = _numbered_flow_model(None), _numbered_flow_model(3)
    inst = Instance(instance_id="t", split="t", source="t", model=model, operator="flip_coef_sign",
                    root=["row:000003"], original=original, original_objective=solve(original).objective,
                    iis=compute_iis(model).to_json())
    env = DebugEnv(inst)
    agent = HeuristicAgent()
    assert agent.plan(DebugEnv(inst)).candidates[0].label == "coef-sign-twins"
    agent.run(env)
    m = episode_metrics(inst, env.log)
    assert m["rational"] == 1.0 and m["calls_to_recover"] == 2 and m["DA"] == 1.0


def test_twins_restore_a_flipped_sense_and_a_row_in_other_units():
    from ordebug.agents.twins import twin_row_slips

    # Five rows x_k + 2 y_k >= 4 (numbered names); row 000002 is "<=" with x2 >= 5 fixed: its twins say ">=".
    rows = [(f"{k:06d}", {f"{10 * k + 1:06d}": 1.0, f"{10 * k + 2:06d}": 2.0}, 4.0, 1e30) for k in range(5)]
    flipped = [r if r[0] != "000002" else (r[0], r[1], -1e30, 4.0) for r in rows]
    slips = twin_row_slips(_rows_model(flipped, {}), ["000002"])
    assert [(s.row, s.kind, s.value) for s in slips] == [("000002", "sense", "G")]
    # Row 000003 entered in tenths: 10 x + 20 y >= 4 has no twin of its own, four at a tenth of its scale.
    scaled = [r if r[0] != "000003" else (r[0], {c: 10 * v for c, v in r[1].items()}, 4.0, 1e30) for r in rows]
    slips = twin_row_slips(_rows_model(scaled, {}), ["000003", "000001"])
    assert [(s.row, s.kind, s.value) for s in slips] == [("000003", "scale", 0.1)]
