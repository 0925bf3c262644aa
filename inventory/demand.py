"""Daily demand models.

Demand is integer units per period, so every model exposes both a sampler (for Monte Carlo, with a caller
supplied generator so common random numbers are the caller's choice) and an exact probability mass
function (for dynamic programming). Normal demand is the normal rounded to the nearest unit and floored at
zero; the pmf is that rounded law, so simulation and DP agree exactly.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from inventory.special import normal_cdf, normal_isf, poisson_isf, poisson_pmf

DEMAND_KINDS = ("poisson", "normal", "uniform", "deterministic", "empirical")
MAX_HISTORY_BYTES = 16 * 2**20  # empirical(file.csv): regular files up to this size only
MAX_DEMAND_CHARS = 2**20  # a demand string (an inline empirical list of ~100,000 days fits)
MAX_DEMAND_NUMBER = 1e12  # any parameter or observation; optimization.limits refuses far smaller supports
_FILE_ACCESS = True  # process default for empirical(file); servers call forbid_file_access() at start-up


def forbid_file_access() -> None:
    """From now on this process never reads a file named in a demand string (servers: request data is
    untrusted; `empirical([...])` with inline numbers still works)."""
    global _FILE_ACCESS
    _FILE_ACCESS = False


class DemandError(ValueError):
    """A demand description that cannot be turned into a model."""


@dataclass(frozen=True)
class Demand:
    """One demand law per period, i.i.d. over periods.

    kind: poisson(mean) | normal(mean, sd) | uniform(low, high), integers low..high inclusive |
    deterministic(value) | empirical(values), sampled with replacement from the observed days.
    """

    kind: str
    mean_param: float = 0.0
    sd_param: float = 0.0
    low: int = 0
    high: int = 0
    values: tuple[int, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.kind not in DEMAND_KINDS:
            raise DemandError(
                f"demand_distribution: unknown distribution {self.kind!r}; allowed: {', '.join(DEMAND_KINDS)}"
            )
        if self.kind in ("poisson", "normal", "deterministic") and (
            not math.isfinite(self.mean_param) or self.mean_param < 0
        ):
            raise DemandError(f"demand_distribution: mean must be a non-negative number, got {self.mean_param}")
        if self.kind == "normal" and (not math.isfinite(self.sd_param) or self.sd_param < 0):
            raise DemandError(f"demand_distribution: sd must be >= 0, got {self.sd_param}")
        if self.kind == "uniform" and not (0 <= self.low <= self.high):
            raise DemandError(
                f"demand_distribution: uniform(low, high) needs 0 <= low <= high, got ({self.low}, {self.high})"
            )
        if self.kind == "deterministic" and self.mean_param != int(self.mean_param):
            raise DemandError(
                f"demand_distribution: deterministic demand must be a whole number of units, got {self.mean_param}"
            )
        if self.kind == "empirical":
            if len(self.values) == 0:
                raise DemandError("demand_distribution: empirical demand needs at least one observed value")
            if min(self.values) < 0:
                raise DemandError("demand_distribution: observed demands must be >= 0")

    # ---- constructors -------------------------------------------------------------------------
    @classmethod
    def poisson(cls, mean: float) -> Demand:
        return cls("poisson", mean_param=float(mean))

    @classmethod
    def normal(cls, mean: float, sd: float) -> Demand:
        return cls("normal", mean_param=float(mean), sd_param=float(sd))

    @classmethod
    def uniform(cls, low: int, high: int) -> Demand:
        return cls("uniform", low=int(low), high=int(high))

    @classmethod
    def deterministic(cls, value: float) -> Demand:
        return cls("deterministic", mean_param=float(value))

    @classmethod
    def empirical(cls, values) -> Demand:
        try:
            xs = [float(v) for v in values]
        except (TypeError, ValueError):
            raise DemandError("demand_distribution: observed demands must be numbers") from None
        if not all(math.isfinite(x) and abs(x) <= MAX_DEMAND_NUMBER for x in xs):
            raise DemandError(f"demand_distribution: observed demands must be finite numbers within "
                              f"+-{MAX_DEMAND_NUMBER:g}")
        return cls("empirical", values=tuple(int(round(x)) for x in xs))

    # ---- laws ---------------------------------------------------------------------------------
    def support_max(self, tail: float = 1e-12) -> int:
        """Largest demand with mass above `tail` (all mass for bounded laws)."""
        if self.kind == "poisson":
            return poisson_isf(tail, self.mean_param) + 1 if self.mean_param > 0 else 0
        if self.kind == "normal":
            return max(0, int(math.ceil(self.mean_param + normal_isf(tail) * self.sd_param)) + 1)
        if self.kind == "uniform":
            return self.high
        if self.kind == "deterministic":
            return int(self.mean_param)
        return max(self.values)

    def pmf(self, upto: int | None = None) -> np.ndarray:
        """P(D = k) for k = 0..upto, the last entry holding the whole upper tail P(D >= upto)."""
        n = self.support_max() if upto is None else int(upto)
        k = np.arange(n + 1)
        if self.kind == "poisson":
            p = poisson_pmf(k, self.mean_param)
        elif self.kind == "normal":
            if self.sd_param == 0:
                p = (k == int(round(self.mean_param))).astype(float)
            else:
                upper = normal_cdf((k + 0.5 - self.mean_param) / self.sd_param)
                lower = normal_cdf((k - 0.5 - self.mean_param) / self.sd_param)
                lower[0] = 0.0  # everything below 0.5 rounds/floors to zero
                p = upper - lower
        elif self.kind == "uniform":
            p = ((k >= self.low) & (k <= self.high)) / (self.high - self.low + 1)
        elif self.kind == "deterministic":
            p = (k == int(self.mean_param)).astype(float)
        else:
            counts = np.bincount(np.asarray(self.values), minlength=max(self.values) + 1).astype(float)
            p = np.zeros(n + 1)
            m = min(n + 1, counts.size)
            p[:m] = counts[:m]
            p /= counts.sum()
        p = np.asarray(p, dtype=float)
        p[-1] = max(0.0, 1.0 - p[:-1].sum())  # lump the tail so the vector sums to one
        return p

    @property
    def mean(self) -> float:
        if self.kind in ("poisson", "deterministic"):
            return self.mean_param
        if self.kind == "uniform":
            return (self.low + self.high) / 2
        if self.kind == "empirical":
            return float(np.mean(self.values))
        p = self.pmf()
        return float(np.arange(p.size) @ p)

    @property
    def std(self) -> float:
        if self.kind == "poisson":
            return math.sqrt(self.mean_param)
        if self.kind == "deterministic":
            return 0.0
        if self.kind == "uniform":
            n = self.high - self.low + 1
            return math.sqrt((n * n - 1) / 12)
        if self.kind == "empirical":
            return float(np.std(self.values))
        p = self.pmf()
        k = np.arange(p.size)
        return float(math.sqrt(max(0.0, (k * k) @ p - (k @ p) ** 2)))

    @property
    def is_random(self) -> bool:
        return self.kind != "deterministic" and self.std > 0

    def sample(self, rng: np.random.Generator, shape) -> np.ndarray:
        """Integer demands of the given shape (int32)."""
        if self.kind == "poisson":
            out = rng.poisson(self.mean_param, size=shape)
        elif self.kind == "normal":
            out = np.maximum(0, np.rint(rng.normal(self.mean_param, self.sd_param, size=shape)))
        elif self.kind == "uniform":
            out = rng.integers(self.low, self.high + 1, size=shape)
        elif self.kind == "deterministic":
            out = np.full(shape, int(self.mean_param))
        else:
            out = rng.choice(np.asarray(self.values), size=shape, replace=True)
        return out.astype(np.int32)

    def describe(self) -> str:
        """The canonical string form, which `parse_demand` reads back."""
        if self.kind == "poisson":
            return f"poisson({_num(self.mean_param)})"
        if self.kind == "normal":
            return f"normal({_num(self.mean_param)}, {_num(self.sd_param)})"
        if self.kind == "uniform":
            return f"uniform({self.low}, {self.high})"
        if self.kind == "deterministic":
            return _num(self.mean_param)
        return "empirical([" + ", ".join(str(v) for v in self.values) + "])"


def _num(x: float) -> str:
    """Short when exact ("6", "2.5"), else every digit: describe() must read back as the same Demand."""
    if float(x).is_integer():
        return str(int(x))
    short = f"{x:g}"
    return short if float(short) == x else repr(float(x))


_CALL_NAME = re.compile(r"[a-zA-Z_ ]+")


def _call(s: str) -> tuple[str, str] | None:
    """("name", "inner") for "name(inner)", in linear time (a backtracking regex was quadratic on long
    runs of spaces), or None."""
    i = s.find("(")
    if i <= 0 or not s.endswith(")") or not _CALL_NAME.fullmatch(s[:i]) or not s[:i].strip():
        return None
    return s[:i].strip(), s[i + 1: -1]
_ALIASES = {
    "poisson": "poisson",
    "pois": "poisson",
    "normal": "normal",
    "gaussian": "normal",
    "norm": "normal",
    "uniform": "uniform",
    "unif": "uniform",
    "deterministic": "deterministic",
    "constant": "deterministic",
    "fixed": "deterministic",
    "empirical": "empirical",
    "history": "empirical",
}


def parse_demand(text, base_dir: Path | None = None, allow_files: bool | None = None) -> Demand:
    """Read the string forms a generator, an LLM or a user writes.

    Accepts "poisson(6)", "normal(10, 5)", "uniform(10,20)", a bare number (deterministic),
    "empirical(path.csv)", "empirical([3,4,5])" or a list of observed daily demands.
    `allow_files=False` (or `forbid_file_access()` for the whole process) refuses empirical(path).
    """
    if isinstance(text, Demand):
        return text
    if isinstance(text, (list, tuple, np.ndarray)):
        return Demand.empirical(text)
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return Demand.deterministic(_finite(text, repr(text)))
    if not isinstance(text, str) or not text.strip():
        raise DemandError(f"demand_distribution: expected a distribution string, got {_q(text)}")
    if len(text) > MAX_DEMAND_CHARS:
        raise DemandError(f"demand_distribution: the text is {len(text)} characters; at most {MAX_DEMAND_CHARS}")
    s = text.strip()
    try:
        x = float(s)
    except ValueError:
        pass
    else:
        return Demand.deterministic(_finite(x, text))
    m = _call(s)
    if not m:
        raise DemandError(
            f"demand_distribution: cannot read {_q(text)}; write e.g. poisson(6), normal(10, 5), "
            "uniform(10, 20), a number, or empirical(history.csv)"
        )
    name = _ALIASES.get(m[0].lower())
    if name is None:
        raise DemandError(
            f"demand_distribution: unknown distribution {_q(m[0])}; allowed: {', '.join(DEMAND_KINDS)}"
        )
    inner = m[1].strip()
    if name == "empirical":
        if inner.startswith("["):
            return Demand.empirical(_numbers(inner.strip("[]"), text))
        if not (_FILE_ACCESS if allow_files is None else allow_files):
            raise DemandError("demand_distribution: empirical(file) is not accepted here; give the observed "
                              "daily demands inline, e.g. empirical([3, 4, 5])")
        return Demand.empirical(read_demand_history(_resolve(inner.strip("'\""), base_dir)))
    args = _numbers(inner, text)
    arity = {"poisson": 1, "normal": 2, "uniform": 2, "deterministic": 1}[name]
    if len(args) != arity:
        raise DemandError(f"demand_distribution: {name} takes {arity} number(s), got {_q(text)}")
    if name == "poisson":
        return Demand.poisson(args[0])
    if name == "normal":
        return Demand.normal(args[0], args[1])
    if name == "uniform":
        lo, hi = args
        if lo != int(lo) or hi != int(hi):
            raise DemandError(f"demand_distribution: uniform bounds must be whole units, got {_q(text)}")
        return Demand.uniform(int(lo), int(hi))
    return Demand.deterministic(args[0])


def _q(text, n: int = 60) -> str:
    """A quoted value short enough for a one-line error."""
    r = repr(text)
    return r if len(r) <= n else r[: n - 3] + "..."


def _finite(x, text) -> float:
    """x as a float, refused (naming the field) when NaN, infinite or beyond +-MAX_DEMAND_NUMBER."""
    try:
        x = float(x)
    except OverflowError:
        x = math.inf
    if not math.isfinite(x) or abs(x) > MAX_DEMAND_NUMBER:
        raise DemandError(f"demand_distribution: numbers must be finite and within +-{MAX_DEMAND_NUMBER:g}, "
                          f"got {_q(text)}")
    return x


def _numbers(inner: str, text: str) -> list[float]:
    parts = [p for p in re.split(r"[,\s;]+", inner.strip()) if p]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise DemandError(f"demand_distribution: non-numeric argument in {_q(text)}") from None
    return [_finite(v, text) for v in values]


def _resolve(path: str, base_dir: Path | None) -> Path:
    p = Path(path).expanduser()
    if not p.is_absolute() and base_dir is not None:
        p = Path(base_dir) / p
    return p


def read_demand_history(path: Path) -> list[float]:
    """Observed daily demands from a CSV: one number per row, or a column named demand/sales/units."""
    path = Path(path)
    if not path.exists():
        raise DemandError(f"demand_distribution: sales history file not found: {path}")
    if not path.is_file():
        raise DemandError(f"demand_distribution: sales history {path} is not a regular file")
    if path.stat().st_size > MAX_HISTORY_BYTES:
        raise DemandError(f"demand_distribution: sales history {path} is larger than {MAX_HISTORY_BYTES} bytes")
    with path.open(newline="") as fh:
        rows = [r for r in csv.reader(fh) if r and any(c.strip() for c in r)]
    if not rows:
        raise DemandError(f"demand_distribution: sales history {path} is empty")
    col = 0
    header = [c.strip().lower() for c in rows[0]]
    if not _is_number(rows[0][0]) or (len(rows[0]) > 1 and not all(_is_number(c) for c in rows[0])):
        for name in ("demand", "sales", "units", "quantity", "qty"):
            if name in header:
                col = header.index(name)
                break
        else:
            col = len(header) - 1
        rows = rows[1:]
    try:
        values = [float(r[col]) for r in rows]
    except (ValueError, IndexError):
        raise DemandError(f"demand_distribution: sales history {path} has a non-numeric entry") from None
    if not values:
        raise DemandError(f"demand_distribution: sales history {path} has no observations")
    return values


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False
