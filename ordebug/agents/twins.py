"""Sign slips seen through twins: rows (or columns) whose coefficient magnitudes match entry by entry.

Why: a coefficient sign flip is invisible to name-based siblings when the names carry no pattern (NETLIB's
numbered rows ``000087``) or when the siblings mix signs by position (a flow row ``in - out``, a link row
``x_k - x_{k+11}``). Structure carries it instead: models repeat the same row shape many times (same
sense, same |coefficients| in column order), and a repeated shape has one sign pattern. A row whose signs
differ from its twins' common pattern in exactly one place points at that coefficient; a column compared
with its own twins (same |coefficients| in row order) confirms which of a row's coefficients it is.
Only the shape is compared, never names, so this works on any model a user brings.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ordebug.model import LinearModel

MAX_ENTRIES = 40  # longer rows/columns rarely repeat exactly, and their keys cost more than they tell
MIN_TWINS = 1
MIN_SHARE = 0.75


@dataclass(frozen=True)
class SignSlip:
    """Evidence that one coefficient's sign disagrees with its twins': flipping it restores their pattern."""
    row: str
    col: str
    value: float
    weight: float  # share of the twins agreeing, discounted for few twins (n / (n + 1)); halved when weak
    twins: int
    by: str  # "row" or "col": which shape found it
    kind: str  # "pattern" | "position" (one coefficient named) | "count" (the number of positives is off by one)


def _shapes(mat: sp.csr_matrix, lengths: set[int], extra: list) -> dict[int, list[tuple[int, tuple, np.ndarray]]]:
    """Line index -> the lines (rows of `mat`) sharing its shape: (index, sign pattern, entry positions),
    over the lines whose length is in `lengths`."""
    groups: dict[tuple, list[tuple[int, tuple, np.ndarray]]] = defaultdict(list)
    nnz = np.diff(mat.indptr)
    for i in np.nonzero(np.isin(nnz, list(lengths)))[0]:
        lo, hi = mat.indptr[i], mat.indptr[i + 1]
        order = np.argsort(mat.indices[lo:hi], kind="stable")
        vals = mat.data[lo:hi][order]
        key = (extra[i], tuple(float(f"{abs(v):.6g}") for v in vals))
        groups[key].append((int(i), tuple(bool(v > 0) for v in vals), mat.indices[lo:hi][order]))
    return {i: lines for lines in groups.values() for i, _, _ in lines}


def _evidence(lines: list, me: int) -> list[tuple[int, float, int, str]]:
    """(position, weight, twins, kind) for each coefficient of line `me` whose flip its twins support."""
    mine = next(p for i, p, _ in lines if i == me)
    others = [p for i, p, _ in lines if i != me]
    n = len(others)
    if n < MIN_TWINS:
        return []
    few = n / (n + 1)
    pattern, count = Counter(others).most_common(1)[0]
    diff = [k for k, (a, b) in enumerate(zip(mine, pattern, strict=True)) if a != b]
    if count / n >= MIN_SHARE and len(diff) == 1:
        return [(diff[0], few * count / n, n, "pattern")]
    # Position by position: twins whose whole patterns vary (a flow row's in/out arcs) may still agree on
    # one position, where this line alone disagrees.
    against = [sum(p[k] != mine[k] for p in others) / n for k in range(len(mine))]
    odd = [k for k, a in enumerate(against) if a >= MIN_SHARE]
    if len(odd) == 1:
        return [(odd[0], few * against[odd[0]], n, "position")]
    # The number of positive entries: twins that agree on it but not on where they sit (arcs in and out of
    # a node) name no single coefficient, only the side to flip; weak evidence, for the other axis to confirm.
    positives, count = Counter(sum(p) for p in others).most_common(1)[0]
    step = positives - sum(mine)
    if count / n >= MIN_SHARE and abs(step) == 1:
        return [(k, 0.5 * few * count / n, n, "count") for k, s in enumerate(mine) if s == (step < 0)]
    return []


def twin_sign_slips(model: LinearModel, rows: list[str]) -> list[SignSlip]:
    """Evidence of sign slips among the coefficients of `rows` (an IIS's rows), by row and by column twins."""
    idx = [model.row(r) for r in rows if model.has_row(r)]
    if not idx:
        return []
    csr = model.A.tocsr()
    csc_t = model.A.tocsc().T.tocsr()  # columns as lines
    mine = set(idx)
    senses = [model.sense(i) for i in range(model.num_rows)]
    row_twins = _shapes(csr, {int(csr.indptr[i + 1] - csr.indptr[i]) for i in idx} - {0} & set(range(1, MAX_ENTRIES + 1)),
                        senses)
    cols = sorted({int(j) for i in idx for j in csr.indices[csr.indptr[i]:csr.indptr[i + 1]]})
    col_twins = _shapes(csc_t, {int(csc_t.indptr[j + 1] - csc_t.indptr[j]) for j in cols} & set(range(1, MAX_ENTRIES + 1)),
                        list(model.integer))
    out: list[SignSlip] = []
    for axis, lines_of, items in (("row", row_twins, idx), ("col", col_twins, cols)):
        for line in items:
            lines = lines_of.get(line)
            if not lines:
                continue
            positions = next(ix for li, _, ix in lines if li == line)
            for pos, weight, n, kind in _evidence(lines, line):
                i, j = (line, int(positions[pos])) if axis == "row" else (int(positions[pos]), line)
                if i in mine:
                    out.append(SignSlip(model.row_names[i], model.col_names[j], float(model.A[i, j]), weight, n,
                                        axis, kind))
    return out


@dataclass(frozen=True)
class RowSlip:
    """Evidence that a whole row differs from its twins: its sense, or its scale by a power of ten."""
    row: str
    kind: str  # "sense" | "scale"
    value: object  # the twins' sense ("L"/"G"/"E"), or the factor that makes the row look like them
    weight: float
    twins: int


def _signed_key(mat: sp.csr_matrix, i: int, scale: float = 1.0) -> tuple:
    lo, hi = mat.indptr[i], mat.indptr[i + 1]
    order = np.argsort(mat.indices[lo:hi], kind="stable")
    return tuple(mat.indices[lo:hi][order].tolist()), tuple(float(f"{v * scale:.6g}") for v in mat.data[lo:hi][order])


def twin_row_slips(model: LinearModel, rows: list[str]) -> list[RowSlip]:
    """Rows of `rows` whose sense, or scale, differs from rows with the same coefficients.

    Twins here share the signed coefficients in column order but not the columns (a node's balance row,
    a period's capacity row): the key is the value sequence alone. A row with no twin of its own sense
    whose twins agree on another sense was probably flipped; a row with no twin at its own scale whose
    coefficients, divided by 10^k, match a repeated shape was probably entered in other units.
    """
    idx = [model.row(r) for r in rows if model.has_row(r)]
    csr = model.A.tocsr()
    nnz = np.diff(csr.indptr)
    lengths = {int(nnz[i]) for i in idx} & set(range(1, MAX_ENTRIES + 1))
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i in np.nonzero(np.isin(nnz, list(lengths)))[0]:
        groups[_signed_key(csr, int(i))[1]].append(int(i))
    out: list[RowSlip] = []
    for i in idx:
        if int(nnz[i]) not in lengths:
            continue
        values = _signed_key(csr, i)[1]
        others = [k for k in groups[values] if k != i]
        sense = model.sense(i)
        if others:
            senses = Counter(model.sense(k) for k in others)
            mode, count = senses.most_common(1)[0]
            # Only "<=" against ">=": an equality among inequalities of one shape is ordinary (adlittle's
            # sums of three ones), and so is an inequality among equalities.
            if sense not in senses and count / len(others) >= MIN_SHARE and {mode, sense} == {"L", "G"}:
                n = len(others)
                out.append(RowSlip(model.row_names[i], "sense", mode, n / (n + 1) * count / n, n))
            continue  # a row with twins at its own scale is not a scaled row
        for k in (1, -1, 2, -2):
            twins = [t for t in groups.get(tuple(float(f"{v * 10.0 ** -k:.6g}") for v in values), [])
                     if model.sense(t) == sense]
            if len(twins) >= 2:
                n = len(twins)
                out.append(RowSlip(model.row_names[i], "scale", 10.0 ** -k, n / (n + 1), n))
                break
    return out
