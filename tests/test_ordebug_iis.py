"""Model I/O and IIS: HiGHS + deletion-filter verification on small real models."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ordebug.iis import SubsystemOracle, _Deadline, compute_iis, quickxplain
from ordebug.instances import shared_data_dir
from ordebug.model import INF, LinearModel
from ordebug.testing import data_file


def _assert_irreducible(model: LinearModel, res) -> None:
    oracle = SubsystemOracle(model, use_integrality=res.integrality, deadline=_Deadline(30))
    assert oracle.infeasible(res.members)
    for k in range(len(res.members)):
        assert not oracle.infeasible(res.members[:k] + res.members[k + 1:]), res.members[k]


@pytest.mark.parametrize("name,rows", [("itest2", 3), ("galenet", 2), ("woodinfe", 1)])
def test_iis_of_small_netlib_infeasible_is_verified_irreducible(name, rows):
    model = LinearModel.from_mps(data_file(name))
    res = compute_iis(model, time_limit=10)
    assert res.status == "infeasible"
    assert res.irreducible
    assert len(res.rows) == rows
    _assert_irreducible(model, res)
    js = res.to_json()
    assert set(js) >= {"status", "rows", "col_bounds", "irreducible", "seconds"}
    assert all(side in ("lower", "upper") for _, side in js["rows"] + js["col_bounds"])


def test_feasible_model_has_no_iis():
    res = compute_iis(LinearModel.from_mps(data_file("afiro")))
    assert res.status == "feasible" and res.rows == [] and not res.irreducible


def test_mps_round_trip_keeps_names_bounds_and_integrality(tmp_path):
    m = LinearModel.from_mps(data_file("p0033"))
    assert m.is_mip and m.num_rows == 16 and m.num_cols == 33
    p = tmp_path / "p.mps"
    m.to_mps(p)
    m2 = LinearModel.from_mps(p)
    assert m2.row_names == m.row_names and m2.col_names == m.col_names
    assert np.array_equal(m2.integer, m.integer)
    assert np.allclose(m2.A.toarray(), m.A.toarray())
    assert np.array_equal(m2.row_upper, m.row_upper)


def test_unreadable_file_raises_value_error(tmp_path):
    bad = tmp_path / "bad.mps"
    bad.write_text("this is not an mps file\n")
    with pytest.raises(ValueError, match="bad.mps"):
        LinearModel.from_mps(bad)


def _tiny_conflict() -> LinearModel:
    # x + y >= 10, x <= 3, y <= 4  (conflict), plus an unrelated row z <= 5
    import scipy.sparse as sp

    A = sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    return LinearModel(name="tiny", row_names=["need", "other"], col_names=["x", "y", "z"], A=A,
                       row_lower=np.array([10.0, -INF]), row_upper=np.array([INF, 5.0]),
                       col_lower=np.zeros(3), col_upper=np.array([3.0, 4.0, INF]), cost=np.ones(3),
                       integer=np.zeros(3, bool))


def test_iis_names_the_rows_and_bounds_in_conflict():
    res = compute_iis(_tiny_conflict())
    assert res.rows == [["need", "lower"]]
    assert sorted(res.col_bounds) == [["x", "upper"], ["y", "upper"]]
    assert res.irreducible


def test_quickxplain_removes_redundant_members():
    m = _tiny_conflict()
    oracle = SubsystemOracle(m, False, _Deadline(10))
    members = [("row", 1, "upper"), ("col", 2, "lower"), ("row", 0, "lower"), ("col", 0, "upper"),
               ("col", 1, "upper"), ("col", 0, "lower")]
    assert sorted(quickxplain(oracle, members)) == [("col", 0, "upper"), ("col", 1, "upper"), ("row", 0, "lower")]


def test_integrality_conflict_found_when_lp_relaxation_is_feasible():
    import scipy.sparse as sp

    # x + y = 2.5 with x, y integer: LP feasible, MIP infeasible.
    m = LinearModel(name="int", row_names=["sum", "free"], col_names=["x", "y"],
                    A=sp.csr_matrix(np.array([[1.0, 1.0], [1.0, -1.0]])), row_lower=np.array([2.5, -10.0]),
                    row_upper=np.array([2.5, 10.0]), col_lower=np.zeros(2), col_upper=np.full(2, 10.0),
                    cost=np.zeros(2), integer=np.ones(2, bool))
    res = compute_iis(m, use_scip=False)
    assert res.status == "infeasible" and res.integrality
    assert {r for r, _ in res.rows} == {"sum"}  # both sides of the equality are needed
    assert res.irreducible


@pytest.mark.skipif(not (shared_data_dir() / "netlib-infeas" / "klein1.mps").exists(),
                    reason="shared data folder not present")
def test_reducible_highs_set_is_filtered_on_klein1():
    model = LinearModel.from_mps(shared_data_dir() / "netlib-infeas" / "klein1.mps")
    res = compute_iis(model, time_limit=10)
    assert res.irreducible
    _assert_irreducible(model, res)
    assert os.path.basename(str(model.name)) == "klein1"


def test_scip_iis_for_integrality_when_the_extra_is_installed():
    pytest.importorskip("pyscipopt")
    import scipy.sparse as sp

    m = LinearModel(name="int", row_names=["sum"], col_names=["x", "y"], A=sp.csr_matrix(np.array([[1.0, 1.0]])),
                    row_lower=np.array([2.5]), row_upper=np.array([2.5]), col_lower=np.zeros(2),
                    col_upper=np.full(2, 10.0), cost=np.zeros(2), integer=np.ones(2, bool))
    res = compute_iis(m, use_scip=True)
    assert res.method == "scip" and res.irreducible and {r for r, _ in res.rows} == {"sum"}
