"""Sabotage operators, environment, metrics and the heuristic / drop-all agents on small generated models."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ordebug.agents.drop_all import DropAllAgent
from ordebug.agents.heuristic import HeuristicAgent
from ordebug.env import DebugEnv, diff_elements, family
from ordebug.generators import FAMILIES, generate
from ordebug.metrics import episode_metrics, leaderboard
from ordebug.sabotage import OPERATORS, apply_sabotage
from ordebug.solver import solve
from ordebug.testing import small_instance

CASES = [("inventory", "tighten_rhs"), ("inventory", "integrality"), ("inventory", "conflicting_bound"),
         ("transportation", "contradictory_row"), ("diet", "scale_row"), ("production", "flip_coef_sign")]


@pytest.mark.parametrize("fam", sorted(FAMILIES))
def test_every_family_is_feasible_and_named(fam):
    m = generate(fam, "small", seed=1)
    assert solve(m).optimal
    assert len(set(m.row_names)) == m.num_rows
    assert sum(family(n) != n for n in m.row_names) >= m.num_rows - 2  # indexed families, few singletons


def test_generator_rejects_bad_family_and_size():
    with pytest.raises(ValueError, match="family must be one of"):
        generate("nope")
    with pytest.raises(ValueError, match="size must be one of"):
        generate("diet", "huge")
    with pytest.raises(ValueError, match="operator must be one of"):
        apply_sabotage(generate("diet"), "nope")


@pytest.mark.parametrize("fam,op", CASES)
def test_sabotage_makes_model_infeasible_and_iis_contains_root(fam, op):
    inst = small_instance(fam, op)
    assert inst is not None, f"{op} found no infeasible edit on {fam}"
    assert solve(inst.model).status == "infeasible"
    assert solve(inst.original).optimal
    assert inst.iis_contains_root and inst.iis["irreducible"]
    assert inst.original_objective == pytest.approx(solve(inst.original).objective)
    assert inst.solver.startswith("highspy") and "iis_time_limit" in inst.settings


def test_integrality_sabotage_keeps_lp_relaxation_feasible():
    inst = small_instance("inventory", "integrality")
    assert solve(inst.model, relax_integrality=True).optimal
    assert inst.iis["integrality"]


def test_env_counts_only_solver_calls_and_enforces_budget():
    inst = small_instance("inventory", "tighten_rhs")
    env = DebugEnv(inst, budget=2)
    env.step({"op": "inspect_row", "name": inst.model.row_names[0]})
    env.step({"op": "list_rows"})
    assert env.log.solver_calls == 0
    assert env.step({"op": "solve"})["status"] == "infeasible"
    assert env.step({"op": "get_iis"})["rows"]
    assert "budget" in env.step({"op": "solve"})["error"]
    assert env.log.solver_calls == 2
    assert "op must be one of" in env.step({"op": "explode"})["error"]


def test_family_listing_matches_a_full_scan_across_drops_and_undo():
    inst = small_instance("inventory", "tighten_rhs")
    env = DebugEnv(inst)

    def scan(kind):
        names = env.model.row_names if kind == "rows" else env.model.col_names
        return {f: [n for n in names if family(n) == f] for f in {family(n) for n in names}}

    for kind, op in (("rows", "list_rows"), ("cols", "list_cols")):
        for fam, members in scan(kind).items():
            assert env.step({"op": op, "family_pattern": fam})[kind] == members
    row = inst.model.row_names[0]
    before = env.step({"op": "list_rows", "family_pattern": family(row)})["rows"]
    env.step({"op": "drop_row", "row": row})
    after = env.step({"op": "list_rows", "family_pattern": family(row)})["rows"]
    assert row in before and row not in after and after == scan("rows").get(family(row), [])
    env.step({"op": "undo"})
    assert env.step({"op": "list_rows", "family_pattern": family(row)})["rows"] == before


def test_column_entries_match_scipy_after_edits():
    inst = small_instance("inventory", "tighten_rhs")
    env = DebugEnv(inst)
    row = inst.model.row_names[0]
    env.step({"op": "scale_row", "row": row, "factor": 3.0})  # an in-place edit of the CSR data
    m = env.model
    for j in range(m.num_cols):
        ref = m.A.getcol(j).tocoo()
        rows, vals = m.col_entries(j)
        assert sorted(zip(rows.tolist(), vals.tolist(), strict=True)) == sorted(zip(ref.row.tolist(), ref.data.tolist(), strict=True))
        info = env.step({"op": "inspect_col", "name": m.col_names[j]})
        assert info["rows"] == {m.row_names[i]: float(v) for i, v in zip(ref.row, ref.data, strict=True)}


def test_iis_ablation_switch_and_undo():
    inst = small_instance("inventory", "tighten_rhs")
    env = DebugEnv(inst, allow_iis=False)
    assert "disabled" in env.step({"op": "get_iis"})["error"] and env.log.solver_calls == 0
    row = inst.edit["row"]
    env.step({"op": "set_rhs", "row": row, "value": inst.edit["before"]})
    assert diff_elements(inst.model, env.model)[0] == {f"row:{row}"}
    env.step({"op": "undo"})
    assert diff_elements(inst.model, env.model)[0] == set()


def _run(agent, inst, **kw):
    env = DebugEnv(inst, **kw)
    agent.run(env)
    return episode_metrics(inst, env.log)


@pytest.mark.parametrize("fam,op", CASES)
def test_heuristic_recovers_rationally(fam, op):
    m = _run(HeuristicAgent(), small_instance(fam, op))
    assert m["RR@5"] == 1.0
    assert m["DA"] == 1.0
    assert m["OP"] >= 0.99 and m["FP"] >= 0.95 and m["rational"] == 1.0
    assert m["iis_ok"] == 1.0 and m["iis_recall"] == 1.0


def test_drop_all_recovers_but_is_not_rational():
    rows = [_run(DropAllAgent(), small_instance(f, o)) for f, o in CASES]
    assert np.mean([r["recovered"] for r in rows]) >= 0.8
    assert np.mean([r["rational"] for r in rows]) < 0.5
    assert np.mean([r["FP"] for r in rows]) < 0.8
    assert all(r["DA"] < 1.0 for r in rows if r["recovered"])


def test_exact_restoration_scores_perfectly_and_dropping_scores_low():
    inst = small_instance("inventory", "tighten_rhs")
    env = DebugEnv(inst)
    env.step({"op": "set_rhs", "row": inst.edit["row"], "value": inst.edit["before"]})
    env.step({"op": "solve"})
    env.step({"op": "diagnose", "root_cause": inst.root, "conflict": sorted(inst.iis_elements)})
    good = episode_metrics(inst, env.log)
    assert good["OP"] == pytest.approx(1.0) and good["FP"] == 1.0 and good["TE"] == 1.0 and good["DA"] == 1.0
    env = DebugEnv(inst)
    for r, _ in inst.iis["rows"]:
        env.step({"op": "drop_row", "row": r})
    env.step({"op": "solve"})
    env.step({"op": "diagnose", "root_cause": sorted(inst.iis_elements)})
    bad = episode_metrics(inst, env.log)
    assert bad["recovered"] and bad["FP"] < 0.5 and bad["rational"] == 0.0
    assert bad["DA"] == pytest.approx(1.0 / len(inst.iis_elements))


def test_leaderboard_aggregates_and_counts_failures():
    df = pd.DataFrame([
        {"agent": "a", "split": "s", "RR@5": 1.0, "RR@10": 1.0, "RR@20": 1.0, "DA": 1.0, "OP": 1.0, "TE": 0.5,
         "FP": 1.0, "rational": 1.0, "error": ""},
        {"agent": "a", "split": "s", "RR@5": math.nan, "DA": 0.0, "error": "boom"},
    ])
    board = leaderboard(df)
    row = board.iloc[0]
    assert row["n"] == 2 and row["failed"] == 1
    assert row["RR@5"] == 0.5 and row["rational"] == 0.5


def test_all_operators_are_registered():
    assert len(OPERATORS) == 8
    for op in OPERATORS:
        out = apply_sabotage(generate("inventory", "small", seed=1), op, seed=3)
        assert out is None or solve(out[0]).status == "infeasible"


def test_synthetic_split_is_built_to_a_per_operator_quota():
    """Rounds retry only the operators still short, on the (family, size) pairs that yielded them."""
    from experiments.ordebug_run import _build_synthetic_quota

    plan = [("inventory", "small", "drop_bound", 0), ("diet", "small", "drop_bound", 1),
            ("diet", "small", "tighten_rhs", 2)]
    insts = _build_synthetic_quota(plan, per_operator=3, use_ray=False, progress=False)
    by_op = {op: [i for i in insts if i.operator == op] for op in ("drop_bound", "tighten_rhs")}
    assert len(by_op["drop_bound"]) >= 3 and len(by_op["tighten_rhs"]) >= 3
    # drop_bound only applies to the inventory family (negative lower bounds): later rounds stay there.
    assert {i.source for i in by_op["drop_bound"]} == {"inventory-small"}
    assert len({i.instance_id for i in insts}) == len(insts)


def test_progress_lines_and_heartbeat_off_a_terminal():
    import io
    import time

    from ordebug.progress import Progress

    buf = io.StringIO()  # not a TTY: plain lines, and a heartbeat while one item takes long
    with Progress(3, "work", True, every=0.1, stream=buf) as bar:
        time.sleep(0.35)
        bar.update(3)
    lines = buf.getvalue().splitlines()
    assert lines[0] == "work: 0/3 in 0s started" and lines[-1].startswith("work: 3/3 in ")
    assert any("(working)" in line for line in lines)
    quiet = io.StringIO()
    with Progress(3, "work", False, every=0.1, stream=quiet) as bar:
        bar.update(3)
    assert quiet.getvalue() == ""
