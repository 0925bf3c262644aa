"""The parameter specification table: the Information Extraction Agent's explicit memory.

Twelve parameters, each with a value, a unit and a status (undefined / defined / conflict). Values arrive as
the strings people, generators and LLMs write ("90 days", "$0.50/unit/day", "poisson(6)", "lost sale"); each
is normalised on entry so the table only ever holds values the core can use, and a complete table converts to
an immutable `Problem` after the cross-field checks.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from inventory.demand import Demand, DemandError, parse_demand
from inventory.problem import ParameterError, Problem

PARAMETERS = (
    "time_horizon",
    "demand_type",
    "demand_distribution",
    "perishability",
    "state_transition_model",
    "holding_cost",
    "penalty_cost",
    "setup_cost",
    "lead_time",
    "max_inventory",
    "max_order",
    "risk_tolerance",
)

UNITS = {
    "time_horizon": "days",
    "demand_type": "",
    "demand_distribution": "units/day",
    "perishability": "",
    "state_transition_model": "",
    "holding_cost": "$/unit/day",
    "penalty_cost": "$/unit",
    "setup_cost": "$/order",
    "lead_time": "days",
    "max_inventory": "units",
    "max_order": "units",
    "risk_tolerance": "scale -10..10",
}

DESCRIPTIONS = {
    "time_horizon": "planning horizon in days",
    "demand_type": "random or deterministic daily demand",
    "demand_distribution": "poisson(mean), normal(mean, sd), uniform(low, high), a number, or empirical(file.csv)",
    "perishability": "perishable (unsold units spoil at the end of the day) or non_perishable",
    "state_transition_model": "lost_sale (unmet demand is lost) or backlog (customers wait)",
    "holding_cost": "cost of keeping one unit in stock for one day",
    "penalty_cost": "cost per unit short (per lost unit, or per unit per day waiting under backlog)",
    "setup_cost": "fixed cost of placing an order",
    "lead_time": "days between placing an order and receiving it",
    "max_inventory": "storage capacity: inventory position never exceeds it",
    "max_order": "largest single order",
    "risk_tolerance": "-10 (very risk averse) .. 10 (risk seeking)",
}

STATUSES = ("undefined", "defined", "conflict")


@dataclass
class Row:
    value: object = None
    unit: str = ""
    status: str = "undefined"


@dataclass
class ParameterTable:
    """Mutable table; `set` normalises and validates a single field, `to_problem` the whole."""

    rows: dict[str, Row] = field(default_factory=lambda: {p: Row(unit=UNITS[p]) for p in PARAMETERS})
    base_dir: Path | None = None  # where empirical(file.csv) paths are resolved

    # ---- single fields ----------------------------------------------------------------------------
    def get(self, name: str):
        return self._row(name).value

    def status(self, name: str) -> str:
        return self._row(name).status

    def set(self, name: str, value, unit: str | None = None) -> object:
        """Normalise and store a value (status defined); raises ParameterError naming the field."""
        row = self._row(name)
        normalised = normalise_value(name, value, self.base_dir)
        row.value = normalised
        row.unit = unit or UNITS[name]
        row.status = "defined"
        return normalised

    def mark_conflict(self, name: str) -> None:
        self._row(name).status = "conflict"

    def clear(self, name: str) -> None:
        row = self._row(name)
        row.value, row.status = None, "undefined"

    def _row(self, name: str) -> Row:
        if name not in self.rows:
            raise ParameterError("parameter", name, f"allowed: {', '.join(PARAMETERS)}")
        return self.rows[name]

    # ---- whole table -------------------------------------------------------------------------------
    def undefined(self) -> list[str]:
        return [p for p in PARAMETERS if self.rows[p].status == "undefined"]

    def conflicts(self) -> list[str]:
        return [p for p in PARAMETERS if self.rows[p].status == "conflict"]

    def is_complete(self) -> bool:
        return not self.undefined() and not self.conflicts()

    def copy(self) -> ParameterTable:
        return ParameterTable({k: Row(r.value, r.unit, r.status) for k, r in self.rows.items()}, self.base_dir)

    def as_dict(self) -> dict[str, object]:
        return {p: self.rows[p].value for p in PARAMETERS}

    def to_problem(self) -> Problem:
        """The validated Problem; raises ParameterError on a missing, conflicting or inconsistent field."""
        for p in self.conflicts():
            raise ParameterError(p, format_value(p, self.rows[p].value), "is in conflict; resolve it first")
        for p in self.undefined():
            raise ParameterError(p, None, "is undefined; it must be defined")
        return problem_from_values(self.as_dict(), self.base_dir)

    # ---- formats ------------------------------------------------------------------------------------
    def to_csv(self, path: Path | None = None) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["Parameter", "Value", "Unit", "Status"])
        for p in PARAMETERS:
            r = self.rows[p]
            w.writerow([p, format_value(p, r.value), r.unit, r.status])
        text = buf.getvalue()
        if path is not None:
            Path(path).write_text(text)
        return text

    def to_json(self) -> dict:
        return {p: format_value(p, self.rows[p].value) for p in PARAMETERS if self.rows[p].value is not None}

    @classmethod
    def from_csv(cls, source, base_dir: Path | None = None, allow_files: bool | None = None) -> ParameterTable:
        """Read the agent's `Parameter,Value,Unit,Status` file (a path or the CSV text). Each value goes through
        the one schema (`inventory.schema`); `allow_files=False` refuses empirical(file)."""
        from inventory.schema import validate_values

        text, base = _read_source(source, base_dir)
        table = cls(base_dir=base)
        try:
            reader = csv.DictReader(io.StringIO(text))
            need = {"Parameter", "Value"}
            if not reader.fieldnames or not need <= {str(f).strip() for f in reader.fieldnames}:
                raise ParameterError("csv header", reader.fieldnames, "must have columns Parameter,Value,Unit,Status")
            records = list(reader)
        except csv.Error as exc:
            raise ParameterError("csv", str(exc), "is not a readable Parameter,Value,Unit,Status table") from None
        for raw in records:
            rec = {k.strip(): (v if isinstance(v, str) else "").strip() for k, v in raw.items() if k}
            name = canonical_name(rec.get("Parameter", ""))
            status = (rec.get("Status") or "defined").lower() or "defined"
            if status not in STATUSES:
                raise ParameterError(f"{name}.Status", status, f"allowed: {', '.join(STATUSES)}")
            value = rec.get("Value", "")
            if status == "undefined" or value == "":
                continue
            table.set(name, validate_values({name: value}, base, allow_files)[name], rec.get("Unit") or None)
            if status == "conflict":
                table.mark_conflict(name)
        return table

    @classmethod
    def from_json(cls, source, base_dir: Path | None = None, allow_files: bool | None = None) -> ParameterTable:
        """Read a JSON object {parameter: value} (a dict, a path or JSON text); null means undefined. The shape
        and every value go through the one schema (`inventory.schema.ParametersIn`)."""
        from inventory.schema import loads_json, validate_values

        if isinstance(source, dict):
            data, base = source, base_dir
        else:
            text, base = _read_source(source, base_dir)
            data = loads_json(text)
        table = cls(base_dir=base)
        for name, value in validate_values(data, base, allow_files).items():
            table.set(name, value)
        return table

    @classmethod
    def from_problem(cls, problem: Problem) -> ParameterTable:
        table = cls()
        for name, value in problem_values(problem).items():
            table.set(name, value)
        return table


# ---- value normalisation ------------------------------------------------------------------------------

_NAME_ALIASES = {
    "horizon": "time_horizon",
    "t": "time_horizon",
    "demand": "demand_distribution",
    "distribution": "demand_distribution",
    "perishable": "perishability",
    "transition": "state_transition_model",
    "state_transition": "state_transition_model",
    "lost_sale_or_backlog": "state_transition_model",
    "holding": "holding_cost",
    "h": "holding_cost",
    "penalty": "penalty_cost",
    "stockout_cost": "penalty_cost",
    "shortage_cost": "penalty_cost",
    "p": "penalty_cost",
    "setup": "setup_cost",
    "fixed_cost": "setup_cost",
    "ordering_cost": "setup_cost",
    "k": "setup_cost",
    "lead": "lead_time",
    "l": "lead_time",
    "capacity": "max_inventory",
    "max_inv": "max_inventory",
    "max_order_quantity": "max_order",
    "risk": "risk_tolerance",
    "lambda": "risk_tolerance",
    # keys seen in managers' pasted exports and tool output
    "lead_days": "lead_time",
    "lead_time_days": "lead_time",
    "order_fee": "setup_cost",
    "order_cost": "setup_cost",
    "delivery_fee": "setup_cost",
    "storage_cap": "max_inventory",
    "shelf_cap": "max_inventory",
    "shelf_capacity": "max_inventory",
    "fixed_order_cost": "setup_cost",
    "storage_capacity": "max_inventory",
    "max_stock": "max_inventory",
    "horizon_days": "time_horizon",
}


def canonical_name(name: str) -> str:
    key = re.sub(r"[^a-z0-9]+", "_", str(name).strip().lower()).strip("_")
    key = _NAME_ALIASES.get(key, key)
    if key not in PARAMETERS:
        raise ParameterError("parameter", name, f"allowed: {', '.join(PARAMETERS)}")
    return key


_NUMBER = re.compile(r"[-+]?(?:\d+(?:,\d{3})*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_PERIOD_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
# every dash people (and word processors) write for "minus": hyphen-minus, U+2212, figure/en/em dash, small
# and full-width hyphen-minus
_MINUS_SIGNS = str.maketrans({c: "-" for c in "\u2212\u2012\u2013\u2014\ufe63\uff0d"})
_CURRENCY = r"(?:[$\u20ac\u00a3\u00a5]|usd|eur|gbp|dollars?)"
# a sign written before the number: "-$5", "- 5", "minus 5", "negative $5"
_NEGATIVE_PREFIX = re.compile(rf"(?:-|\bminus|\bnegative)\s*{_CURRENCY}?\s*$", re.I)
# accounting negatives: "(5)", "($5)", "$(5)"
_PAREN_OPEN = re.compile(rf"(?:^|[\s:=]|{_CURRENCY})\(\s*{_CURRENCY}?\s*$", re.I)
MAX_TEXT_CHARS = 200  # one table value as text (demand strings have their own limit in inventory.demand)
MAX_MAGNITUDE = 1e9  # no count, duration or per-unit amount of this model is larger


def read_number(name: str, value) -> float:
    """The signed, finite number in a table value, or ParameterError naming the field.

    Text is read as people write it: "$0.50/unit/day", "1,200", "3 weeks". Negatives are read as negatives in
    every spelling ("-$5", "\u22125", "minus 5", accounting "(5)"), so a field that must be >= 0 refuses them
    instead of silently dropping the sign. Infinities, NaN and numbers beyond +-1e9 are refused here, once, so
    no solver ever sees them.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ParameterError(name, _clip(value), "must be a number (or text holding one)")
    if isinstance(value, (int, float)):
        try:
            x = float(value)
        except OverflowError:
            x = math.inf
    else:
        if len(value) > MAX_TEXT_CHARS:
            raise ParameterError(name, _clip(value), f"is longer than {MAX_TEXT_CHARS} characters; give one number")
        text = value.translate(_MINUS_SIGNS)
        m = _NUMBER.search(text)
        if not m:
            if re.search(r"\b(?:nan|inf(?:inity)?)\b", text, re.I):
                raise ParameterError(name, value, "must be a finite number")
            raise ParameterError(name, value, "must contain a number")
        x = float(m.group(0).replace(",", ""))
        before, after = text[: m.start()], text[m.end():]
        if x > 0 and not m.group(0).startswith(("-", "+")):
            if _NEGATIVE_PREFIX.search(before) or (_PAREN_OPEN.search(before) and after.lstrip().startswith(")")):
                x = -x
    if not math.isfinite(x):
        raise ParameterError(name, _clip(value), "must be a finite number")
    if abs(x) > MAX_MAGNITUDE:
        raise ParameterError(name, _clip(value), f"must be between -{MAX_MAGNITUDE:g} and {MAX_MAGNITUDE:g}")
    return x


def _clip(value, n: int = 60):
    """A value short enough to quote in a one-line error."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= n else text[:n] + "..."


def _days(name: str, value) -> int:
    """A duration in whole days; '3 weeks' -> 21, '2 months' -> 60."""
    x = read_number(name, value)
    text = str(value).lower()
    for unit, days in _PERIOD_DAYS.items():
        if re.search(rf"\b{unit}s?\b", text):
            x *= days
            break
    if x != int(x) or x < 0:
        raise ParameterError(name, value, "must be a whole, non-negative number of days")
    if x > MAX_MAGNITUDE:
        raise ParameterError(name, value, f"must be at most {MAX_MAGNITUDE:g} days")
    return int(x)


def _whole(name: str, value, minimum: int) -> int:
    x = read_number(name, value)
    if x != int(x) or x < minimum:
        raise ParameterError(name, value, f"must be a whole number >= {minimum}")
    return int(x)


def normalise_value(name: str, value, base_dir: Path | None = None, allow_files: bool | None = None):
    """The canonical value of one field, or ParameterError naming the field and what is allowed.
    `allow_files=False` refuses empirical(file) demand (request data); None: the process default."""
    if name == "time_horizon":
        days = _days(name, value)
        if days < 1:
            raise ParameterError(name, value, "must be at least 1 day")
        return days
    if name == "lead_time":
        if isinstance(value, float) and not (math.isfinite(value) and value == int(value)):
            raise ParameterError(name, value, "must be a whole number of days >= 0")
        return _days(name, value)
    if name in ("max_inventory", "max_order"):
        return _whole(name, value, 1)
    if name in ("holding_cost", "penalty_cost", "setup_cost"):
        x = read_number(name, value)
        if x < 0:
            raise ParameterError(name, value, "must be a number >= 0 (costs cannot be negative)")
        return x
    if name == "risk_tolerance":
        x = read_number(name, value)
        if not -10 <= x <= 10:
            raise ParameterError(name, value, "must be in [-10, 10] (-10 very risk averse, 10 risk seeking)")
        return x
    if name == "demand_type":
        s = str(value).strip().lower()
        if s in ("random", "stochastic", "uncertain", "variable", "random demand"):
            return "random"
        if s in ("deterministic", "fixed", "constant", "known", "deterministic demand"):
            return "deterministic"
        raise ParameterError(name, value, "allowed: random, deterministic")
    if name == "demand_distribution":
        try:
            return parse_demand(value, base_dir, allow_files)
        except DemandError as exc:
            raise ParameterError(name, value, str(exc).split(": ", 1)[-1]) from None
    if name == "perishability":
        if isinstance(value, bool):
            return "perishable" if value else "non_perishable"
        s = re.sub(r"[\s\-]+", "_", str(value).strip().lower())
        if s in ("perishable", "yes", "true", "perishable_goods"):
            return "perishable"
        if s in ("non_perishable", "nonperishable", "not_perishable", "no", "false", "durable", "none"):
            return "non_perishable"
        raise ParameterError(name, value, "allowed: perishable, non_perishable")
    if name == "state_transition_model":
        s = re.sub(r"[\s\-]+", "_", str(value).strip().lower())
        if s in ("lost_sale", "lost_sales", "lost", "lostsale", "lost_sale_model"):
            return "lost_sale"
        if s in ("backlog", "backlogging", "backorder", "backorders", "back_order", "backlogged"):
            return "backlog"
        raise ParameterError(name, value, "allowed: lost_sale, backlog")
    raise ParameterError("parameter", name, f"allowed: {', '.join(PARAMETERS)}")


def format_value(name: str, value) -> str:
    if value is None:
        return ""
    if isinstance(value, Demand):
        return value.describe()
    if isinstance(value, float) and value.is_integer() and name not in ("holding_cost", "penalty_cost", "setup_cost"):
        return str(int(value))
    if isinstance(value, float):
        short = f"{value:g}"  # a table written and read back must give the same Problem
        return short if float(short) == value else repr(value)
    return str(value)


def problem_from_values(values: dict, base_dir: Path | None = None) -> Problem:
    """Cross-field checks, then the immutable Problem."""
    v = {name: normalise_value(name, values[name], base_dir) for name in PARAMETERS}
    demand: Demand = v["demand_distribution"]
    if v["demand_type"] == "deterministic" and demand.kind != "deterministic":
        if demand.std > 0:
            raise ParameterError(
                "demand_distribution",
                demand.describe(),
                "demand_type is deterministic, so give a single number of units per day (no distribution)",
            )
        demand = Demand.deterministic(round(demand.mean))
    if v["demand_type"] == "random" and demand.kind == "deterministic":
        raise ParameterError(
            "demand_type", "random", f"demand_distribution is the fixed number {demand.describe()}; "
            "set demand_type to deterministic or give a distribution"
        )
    if v["max_order"] > v["max_inventory"]:
        raise ParameterError(
            "max_order", v["max_order"], f"must be <= max_inventory ({v['max_inventory']})"
        )
    return Problem(
        horizon=v["time_horizon"],
        demand=demand,
        lost_sales=v["state_transition_model"] == "lost_sale",
        holding_cost=v["holding_cost"],
        penalty_cost=v["penalty_cost"],
        setup_cost=v["setup_cost"],
        lead_time=v["lead_time"],
        max_inventory=v["max_inventory"],
        max_order=v["max_order"],
        risk_tolerance=v["risk_tolerance"],
        perishable=v["perishability"] == "perishable",
    )


def problem_values(problem: Problem) -> dict[str, object]:
    """The table's twelve values for a Problem (the inverse of `problem_from_values`)."""
    return {
        "time_horizon": problem.horizon,
        "demand_type": "random" if problem.demand.kind != "deterministic" else "deterministic",
        "demand_distribution": problem.demand,
        "perishability": "perishable" if problem.perishable else "non_perishable",
        "state_transition_model": problem.transition,
        "holding_cost": problem.holding_cost,
        "penalty_cost": problem.penalty_cost,
        "setup_cost": problem.setup_cost,
        "lead_time": problem.lead_time,
        "max_inventory": problem.max_inventory,
        "max_order": problem.max_order,
        "risk_tolerance": problem.risk_tolerance,
    }


def load_problem(path, allow_files: bool | None = None) -> Problem:
    """A Problem from a CSV table or a JSON object file, chosen by content. The file must be a regular file
    under `inventory.schema.MAX_PARAMS_BYTES` (a directory, /dev/zero or a pipe is refused by name)."""
    from inventory.schema import read_params_file

    p = Path(path)
    text = read_params_file(p)
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        return ParameterTable.from_json(text, base_dir=p.parent, allow_files=allow_files).to_problem()
    return ParameterTable.from_csv(text, base_dir=p.parent, allow_files=allow_files).to_problem()


def _read_source(source, base_dir: Path | None) -> tuple[str, Path | None]:
    if isinstance(source, Path) or (isinstance(source, str) and "\n" not in source and len(source) < 4096
                                    and Path(source).suffix.lower() in (".csv", ".json")):
        from inventory.schema import read_params_file

        p = Path(source)
        return read_params_file(p), base_dir or p.parent
    return str(source), base_dir
