"""`askopt repair MODEL`: the modeller's tool. Models written here by hand (no siblings, two conflicts,
unbounded), sabotaged generated models with a known original, and the CLI's files, JSON and exit codes."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp

from experiments.cli import main
from ordebug.model import INF, LinearModel
from ordebug.repair import _round_outward, repair_model
from ordebug.solver import solve
from ordebug.testing import data_file, small_instance


def _model(rows: list[tuple[str, dict[str, float], float, float]], cols: dict[str, tuple[float, float]],
           cost: dict[str, float] | None = None, name: str = "handmade") -> LinearModel:
    names = list(cols)
    a = np.array([[coefs.get(c, 0.0) for c in names] for _, coefs, _, _ in rows])
    return LinearModel(name, [r[0] for r in rows], names, sp.csr_matrix(a), np.array([r[2] for r in rows]),
                       np.array([r[3] for r in rows]), np.array([lo for lo, _ in cols.values()]),
                       np.array([up for _, up in cols.values()]),
                       np.array([(cost or {}).get(c, 1.0) for c in names]), np.zeros(len(names), dtype=bool))


def test_a_row_without_siblings_gets_the_smallest_relaxation_not_a_drop():
    # x + y >= 30 with x, y <= 10 (and a feasible side row): the least change is demand 20, not a drop.
    m = _model([("demand", {"x": 1, "y": 1}, 30, INF), ("mix", {"x": 1, "y": -1}, -INF, 5)],
               {"x": (0, 10), "y": (0, 10)})
    report, fixed = repair_model(m)
    assert report.status == "repaired" and fixed is not None
    assert report.chosen.label == "min-shift" and report.chosen.kind == "relax"
    assert report.chosen.actions == [{"op": "set_rhs", "row": "demand", "value": 20.0, "side": "lower"}]
    assert "from 30 to 20" in report.chosen.words
    assert all(opt.kind != "drop" for opt in [report.chosen] + report.alternatives[:1])
    assert solve(fixed).optimal and math.isclose(solve(fixed).objective, 20.0)
    # The certificate in words names the members as written, the heaviest first.
    assert report.certificate[0].startswith("These 3 conditions")
    assert any("demand: x + y >= 30" in line for line in report.certificate)
    md = report.to_markdown()
    assert "## Diagnosis" in md and "Proposed: **change the right-hand side of row demand from 30 to 20**" in md


@pytest.mark.parametrize("operator", ["tighten_rhs", "flip_sense", "conflicting_bound"])
def test_sabotaged_generated_models_are_restored_with_the_original_objective(operator):
    inst = small_instance("production", operator, seed=1) or small_instance("transportation", operator, seed=1)
    assert inst is not None
    report, fixed = repair_model(inst.model, reference_objective=inst.original_objective)
    assert report.status == "repaired"
    assert set(inst.root) & ({report.chosen.element} | set(report.chosen.changed))
    assert report.chosen.objective_preservation is not None and report.chosen.objective_preservation >= 0.99
    assert solve(fixed).optimal
    best_op = max(o.objective_preservation for o in [report.chosen] + report.alternatives)
    assert report.chosen.objective_preservation == best_op or report.chosen.kind == "restore"
    root_rank = [s["element"] for s in report.suspects].index(inst.root[0]) + 1 if inst.root[0] in \
        [s["element"] for s in report.suspects] else None
    assert root_rank is not None and root_rank <= 3


def test_a_model_with_two_conflicts_is_repaired_one_conflict_at_a_time():
    m = _model([("a", {"x": 1}, 5, INF), ("b", {"y": 1}, 8, INF), ("c", {"x": 1, "y": 1}, -INF, 100)],
               {"x": (0, 2), "y": (0, 3)})
    report, fixed = repair_model(m)
    assert report.status == "repaired" and len(report.earlier) == 1
    assert solve(fixed).optimal
    assert {report.earlier[0]["element"], report.chosen.element} <= {"row:a", "row:b", "col:x", "col:y"}
    assert "more than one conflict" in report.to_markdown()


def test_feasible_and_unbounded_models_are_reported_not_repaired():
    report, fixed = repair_model(LinearModel.from_mps(data_file("afiro")))
    assert report.status == "feasible" and fixed is None and "nothing to repair" in report.note
    unbounded = _model([("r", {"x": 1}, 1, INF)], {"x": (0, INF)}, cost={"x": -1.0})
    report, fixed = repair_model(unbounded)
    assert report.status == "not_infeasible" and report.solve_status == "unbounded" and fixed is None


def test_bad_arguments_name_the_field():
    m = LinearModel.from_mps(data_file("galenet"))
    with pytest.raises(ValueError, match="budget"):
        repair_model(m, budget=1)
    with pytest.raises(ValueError, match="options"):
        repair_model(m, options=0)
    with pytest.raises(ValueError, match="reference_objective"):
        repair_model(m, reference_objective=math.nan)


def test_outward_rounding_never_moves_back_into_the_conflict():
    assert _round_outward(1.9999999997, "lower") == 2.0
    assert _round_outward(1.857142857, "upper") == pytest.approx(1.85715)
    assert _round_outward(1.857142857, "lower") == pytest.approx(1.85714)
    assert _round_outward(-1234.56789, "upper") >= -1234.56789
    assert _round_outward(0.0, "lower") == 0.0


def test_cli_writes_the_repaired_model_and_report(tmp_path, capsys):
    out = tmp_path / "fixed.mps"
    assert main(["repair", str(data_file("woodinfe")), "--out", str(out), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)  # stdout is JSON only: no solver banner
    assert payload["status"] == "repaired" and payload["out"] == str(out)
    assert payload["chosen"]["words"] and payload["suspects"] and payload["certificate"]
    assert solve(LinearModel.from_mps(out)).optimal
    report = (tmp_path / "fixed.mps.report.md").read_text()
    assert report.startswith("# Repair report: woodinfe") and "fixed.mps" in report
    lp = tmp_path / "fixed.lp"
    assert main(["repair", str(data_file("galenet")), "--out", str(lp), "--report", str(tmp_path / "r.md")]) == 0
    assert "Proposed:" in capsys.readouterr().out and solve(LinearModel.from_mps(lp)).optimal
    assert (tmp_path / "r.md").exists()


def test_cli_exit_codes_and_bad_input(tmp_path, capsys):
    assert main(["repair", str(data_file("afiro"))]) == 0
    assert "nothing to repair" in capsys.readouterr().out
    assert main(["repair", str(data_file("galenet")), "--out", str(tmp_path / "x.txt")]) == 2
    assert "--out" in capsys.readouterr().err
    assert main(["repair", str(tmp_path / "missing.mps")]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["repair", str(data_file("galenet")), "--budget", "1"]) == 2
    assert "--budget" in capsys.readouterr().err
    unb = tmp_path / "unbounded.mps"
    _model([("r", {"x": 1}, 1, INF)], {"x": (0, INF)}, cost={"x": -1.0}).to_mps(unb)
    assert main(["repair", str(unb)]) == 4
    assert "unbounded" in capsys.readouterr().out
    # Two columns whose bounds cross and a budget for one attempt: nothing repairs it (the elastic
    # relaxation moves rows only): exit 1, the diagnosis still printed.
    crossed = tmp_path / "crossed.mps"
    _crossed_bounds().to_mps(crossed)
    assert main(["repair", str(crossed), "--budget", "2"]) == 1
    assert "## Diagnosis" in capsys.readouterr().out


def test_infinite_bounds_in_actions_are_put_in_words():
    from ordebug.repair import action_words

    m = _model([("r", {"x": 1}, 1, INF)], {"x": (0, 5)})
    assert action_words(m, {"op": "set_bound", "col": "x", "side": "upper", "value": "inf"}) == \
        "set the upper bound of column x from 5 to inf"


def test_more_conflicts_than_the_budget_get_the_elastic_relaxation():
    # Eight independent conflicts (demand_k: x_k >= 10 + k against x_k <= 8), budget for only a few rounds:
    # the one-edit rounds run out, the elastic relaxation moves each demand side to 8 in one solve.
    k = 8
    rows = [(f"demand_{i}", {f"x{i}": 1.0}, 10.0 + i, INF) for i in range(k)]
    rows.append(("total", {f"x{i}": 1.0 for i in range(k)}, -INF, 1000.0))
    m = _model(rows, {f"x{i}": (0.0, 8.0) for i in range(k)})
    report, fixed = repair_model(m, budget=4)
    assert report.status == "repaired" and fixed is not None
    assert report.chosen.label == "elastic" and report.chosen.kind == "relax"
    moved = {a["row"]: a["value"] for e in report.earlier for a in e["actions"]}
    moved |= {a["row"]: a["value"] for a in report.chosen.actions}
    assert set(moved) == {f"demand_{i}" for i in range(k)}
    assert all(v == 8.0 for v in moved.values())
    assert "total" not in moved and solve(fixed).optimal and math.isclose(solve(fixed).objective, 8.0 * k)


def _crossed_bounds() -> LinearModel:
    return _model([("r", {"x": 1.0, "y": 1.0}, 4.0, 5.0)], {"x": (3.0, 1.0), "y": (2.0, 1.0)})


def test_columns_whose_bounds_cross_are_beyond_the_elastic_relaxation():
    # lower > upper on two columns: one bound edit per attempt cannot fix both within 3 solver calls, and
    # moving row sides cannot fix a column: reported as not repaired with the diagnosis, not a crash.
    report, fixed = repair_model(_crossed_bounds(), budget=3)
    assert report.status == "not_repaired" and fixed is None and report.chosen is None
    assert "No combination" in report.note and report.iis.get("col_bounds")
