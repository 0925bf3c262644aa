"""A solver-independent linear/mixed-integer model with named rows and columns.

Why a separate type instead of passing `highspy.Highs` objects around: sabotage operators, the step
environment and the metrics all need to copy, edit and compare models cheaply (and ship them to Ray
workers by pickling), which a live solver object does not allow. Rows are ranged, ``row_lower <= A x <=
row_upper``, exactly as HiGHS stores them, so a row's "sense" is derived from which sides are finite.
"""

from __future__ import annotations

import copy
import os
import tempfile
from dataclasses import dataclass, field

import highspy
import numpy as np
import scipy.sparse as sp

from ordebug.highs import quiet_highs

INF = highspy.kHighsInf
SENSES = ("L", "G", "E", "R", "N")  # <=, >=, ==, ranged, free


def _is_inf(value: float) -> bool:
    return bool(abs(value) >= INF)


@dataclass
class LinearModel:
    """min/max c^T x + offset  s.t.  row_lower <= A x <= row_upper, col_lower <= x <= col_upper, x_j integer."""

    name: str
    row_names: list[str]
    col_names: list[str]
    A: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    cost: np.ndarray
    integer: np.ndarray  # bool per column
    maximize: bool = False
    offset: float = 0.0
    _row_idx: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    _col_idx: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.A = sp.csr_matrix(self.A, dtype=float)
        m, n = self.A.shape
        for fld, size in (("row_lower", m), ("row_upper", m), ("col_lower", n), ("col_upper", n), ("cost", n)):
            arr = np.asarray(getattr(self, fld), dtype=float).copy()
            if arr.shape != (size,):
                raise ValueError(f"LinearModel.{fld} must have length {size}, got shape {arr.shape}")
            setattr(self, fld, arr)
        self.integer = np.asarray(self.integer, dtype=bool).copy()
        if self.integer.shape != (n,):
            raise ValueError(f"LinearModel.integer must have length {n}")
        if len(self.row_names) != m or len(self.col_names) != n:
            raise ValueError("LinearModel.row_names/col_names must match the matrix shape")
        self.row_names = list(self.row_names)
        self.col_names = list(self.col_names)
        self._reindex()
        self.check_numbers()

    def check_numbers(self) -> None:
        """Refuse NaN anywhere and infinite coefficients/costs, naming the first offending row/column.

        Why here: HiGHS reads ``nan`` from an MPS file without complaint, and a NaN coefficient makes
        every subsystem solve meaningless, so an IIS computed on it would be "verified" nonsense.
        Infinite bounds and row sides are legal (they mean "no bound")."""
        bad = np.nonzero(~np.isfinite(self.A.data))[0]
        if bad.size:
            k = int(bad[0])
            i = int(np.searchsorted(self.A.indptr, k, side="right") - 1)
            j = int(self.A.indices[k])
            raise ValueError(f"coefficient of column {self.col_names[j]!r} in row {self.row_names[i]!r} is "
                             f"{self.A.data[k]}; coefficients must be finite numbers")
        for fld, names, what in (("cost", self.col_names, "objective coefficient of column"),
                                 ("row_lower", self.row_names, "lower side of row"),
                                 ("row_upper", self.row_names, "upper side of row"),
                                 ("col_lower", self.col_names, "lower bound of column"),
                                 ("col_upper", self.col_names, "upper bound of column")):
            arr = getattr(self, fld)
            bad = np.nonzero(~np.isfinite(arr) if fld == "cost" else np.isnan(arr))[0]
            if bad.size:
                raise ValueError(f"{what} {names[int(bad[0])]!r} is {arr[int(bad[0])]}; it must be "
                                 f"{'a finite number' if fld == 'cost' else 'a number (inf allowed)'}")
        if not np.isfinite(self.offset):
            raise ValueError(f"objective offset is {self.offset}; it must be a finite number")

    def _reindex(self) -> None:
        self._row_idx = {name: i for i, name in enumerate(self.row_names)}
        self._col_idx = {name: j for j, name in enumerate(self.col_names)}
        if len(self._row_idx) != len(self.row_names):
            raise ValueError("LinearModel.row_names must be unique")
        if len(self._col_idx) != len(self.col_names):
            raise ValueError("LinearModel.col_names must be unique")

    # ----------------------------------------------------------------- basic facts
    @property
    def num_rows(self) -> int:
        return self.A.shape[0]

    @property
    def num_cols(self) -> int:
        return self.A.shape[1]

    @property
    def is_mip(self) -> bool:
        return bool(self.integer.any())

    def row(self, name: str) -> int:
        try:
            return self._row_idx[name]
        except KeyError:
            raise ValueError(f"unknown row {name!r}") from None

    def col(self, name: str) -> int:
        try:
            return self._col_idx[name]
        except KeyError:
            raise ValueError(f"unknown column {name!r}") from None

    def has_row(self, name: str) -> bool:
        return name in self._row_idx

    def has_col(self, name: str) -> bool:
        return name in self._col_idx

    def sense(self, i: int) -> str:
        lo, up = self.row_lower[i], self.row_upper[i]
        if _is_inf(lo) and _is_inf(up):
            return "N"
        if _is_inf(lo):
            return "L"
        if _is_inf(up):
            return "G"
        return "E" if lo == up else "R"

    def rhs(self, i: int) -> float:
        """The finite side a modeller would call the right-hand side (lower side of ranged rows)."""
        s = self.sense(i)
        return float(self.row_upper[i] if s == "L" else self.row_lower[i]) if s != "N" else 0.0

    def row_entries(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        start, end = self.A.indptr[i], self.A.indptr[i + 1]
        return self.A.indices[start:end].copy(), self.A.data[start:end].copy()

    def col_entries(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, values) of column j, read off the CSR arrays in one vectorised pass: no column slice is built
        (scipy's getcol on a CSR matrix cost ~1 ms on MIPLIB-size models, and agents inspect columns by the
        hundred), and no cached CSC copy can go stale after an in-place edit."""
        at = np.flatnonzero(self.A.indices == j)
        return np.searchsorted(self.A.indptr, at, side="right") - 1, self.A.data[at].copy()

    def copy(self) -> LinearModel:
        return copy.deepcopy(self)

    # ----------------------------------------------------------------- edits
    def set_coef(self, i: int, j: int, value: float) -> None:
        """Set A[i, j]; rebuilds the CSR structure only when the sparsity pattern changes."""
        start, end = self.A.indptr[i], self.A.indptr[i + 1]
        hits = np.nonzero(self.A.indices[start:end] == j)[0]
        if hits.size:
            self.A.data[start + hits[0]] = value
            return
        lil = self.A.tolil()
        lil[i, j] = value
        self.A = lil.tocsr()

    def add_row(self, name: str, cols: np.ndarray, vals: np.ndarray, lower: float, upper: float) -> int:
        if name in self._row_idx:
            raise ValueError(f"row {name!r} already exists")
        new = sp.csr_matrix((np.asarray(vals, float), (np.zeros(len(cols), int), np.asarray(cols, int))),
                            shape=(1, self.num_cols))
        self.A = sp.vstack([self.A, new], format="csr")
        self.row_lower = np.append(self.row_lower, lower)
        self.row_upper = np.append(self.row_upper, upper)
        self.row_names.append(name)
        self._row_idx[name] = self.num_rows - 1
        return self.num_rows - 1

    def delete_rows(self, rows: list[int]) -> None:
        keep = np.setdiff1d(np.arange(self.num_rows), np.asarray(rows, int))
        self.A = self.A[keep]
        self.row_lower = self.row_lower[keep]
        self.row_upper = self.row_upper[keep]
        self.row_names = [self.row_names[i] for i in keep]
        self._reindex()

    # ----------------------------------------------------------------- HiGHS bridge
    def to_highs_lp(self) -> highspy.HighsLp:
        lp = highspy.HighsLp()
        csc = self.A.tocsc()
        csc.sort_indices()
        lp.num_col_ = self.num_cols
        lp.num_row_ = self.num_rows
        lp.col_cost_ = self.cost
        lp.col_lower_ = self.col_lower
        lp.col_upper_ = self.col_upper
        lp.row_lower_ = self.row_lower
        lp.row_upper_ = self.row_upper
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.num_col_ = self.num_cols
        lp.a_matrix_.num_row_ = self.num_rows
        lp.a_matrix_.start_ = csc.indptr.astype(np.int32)
        lp.a_matrix_.index_ = csc.indices.astype(np.int32)
        lp.a_matrix_.value_ = csc.data.astype(float)
        lp.col_names_ = list(self.col_names)
        lp.row_names_ = list(self.row_names)
        lp.offset_ = float(self.offset)
        lp.sense_ = highspy.ObjSense.kMaximize if self.maximize else highspy.ObjSense.kMinimize
        lp.model_name_ = self.name
        if self.is_mip:
            lp.integrality_ = [highspy.HighsVarType.kInteger if b else highspy.HighsVarType.kContinuous
                               for b in self.integer]
        return lp

    @classmethod
    def from_highs_lp(cls, lp: highspy.HighsLp, name: str = "") -> LinearModel:
        m, n = lp.num_row_, lp.num_col_
        mat = lp.a_matrix_
        if mat.format_ == highspy.MatrixFormat.kColwise:
            A = sp.csc_matrix((np.asarray(mat.value_), np.asarray(mat.index_), np.asarray(mat.start_)),
                              shape=(m, n)).tocsr()
        else:
            A = sp.csr_matrix((np.asarray(mat.value_), np.asarray(mat.index_), np.asarray(mat.start_)),
                              shape=(m, n))
        integ = np.zeros(n, dtype=bool)
        if len(lp.integrality_):
            integ = np.array([v == highspy.HighsVarType.kInteger for v in lp.integrality_], dtype=bool)
        rnames = list(lp.row_names_) or [f"R{i}" for i in range(m)]
        cnames = list(lp.col_names_) or [f"C{j}" for j in range(n)]
        return cls(
            name=name or lp.model_name_ or "model", row_names=rnames, col_names=cnames, A=A,
            row_lower=np.asarray(lp.row_lower_), row_upper=np.asarray(lp.row_upper_),
            col_lower=np.asarray(lp.col_lower_), col_upper=np.asarray(lp.col_upper_),
            cost=np.asarray(lp.col_cost_), integer=integ,
            maximize=lp.sense_ == highspy.ObjSense.kMaximize, offset=float(lp.offset_),
        )

    @classmethod
    def from_mps(cls, path: str | os.PathLike) -> LinearModel:
        """Read an MPS (or LP) file; raises ValueError with the file name when HiGHS cannot read it."""
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(2, "No such file", path)
        h = quiet_highs()
        status = h.readModel(path)
        if status == highspy.HighsStatus.kError or h.getNumCol() == 0 and os.path.getsize(path) > 0 \
                and not _looks_like_empty_model(path):
            raise ValueError(f"cannot read model file {path!r}: HiGHS could not parse it as MPS/LP")
        name = os.path.splitext(os.path.basename(path))[0]
        return cls.from_highs_lp(h.getLp(), name=name)

    def to_mps(self, path: str | os.PathLike) -> None:
        h = quiet_highs()
        h.passModel(self.to_highs_lp())
        status = h.writeModel(os.fspath(path))
        if status == highspy.HighsStatus.kError:
            raise ValueError(f"cannot write model to {os.fspath(path)!r}")

    def to_mps_text(self) -> str:
        with tempfile.TemporaryDirectory() as tmp:
            p = os.path.join(tmp, "m.mps")
            self.to_mps(p)
            with open(p) as fh:
                return fh.read()

    @classmethod
    def from_mps_text(cls, text: str, name: str = "model") -> LinearModel:
        with tempfile.TemporaryDirectory() as tmp:
            p = os.path.join(tmp, f"{name}.mps")
            with open(p, "w") as fh:
                fh.write(text)
            return cls.from_mps(p)

    def summary(self) -> dict:
        return {"name": self.name, "rows": self.num_rows, "cols": self.num_cols, "nonzeros": int(self.A.nnz),
                "integer_cols": int(self.integer.sum()), "sense": "max" if self.maximize else "min"}


def _looks_like_empty_model(path: str) -> bool:
    """An MPS file with a NAME and no columns is legal; anything else with zero columns is unreadable."""
    with open(path, errors="replace") as fh:
        head = fh.read(4096).upper()
    return "ROWS" in head and "COLUMNS" in head
