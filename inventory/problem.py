"""The immutable, validated inventory problem every solver works on."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

from inventory.demand import Demand, parse_demand

TRANSITIONS = ("lost_sale", "backlog")


class ParameterError(ValueError):
    """A parameter value outside what the model allows; the message names field, value and what is allowed."""

    def __init__(self, field: str, value, allowed: str):
        self.field = field
        self.value = value
        self.allowed = allowed
        shown = repr(value)
        if len(shown) > 80:  # one line, whatever was sent (a 1 MB string is quoted by its start)
            shown = shown[:77] + "..."
        super().__init__(f"{field}: {shown} is not allowed; {allowed}")


@dataclass(frozen=True)
class Problem:
    """A single-item periodic-review problem (the paper's appendix A model).

    Costs are per period (day): holding per unit left after demand, penalty per unit short (per lost unit
    under lost sales; per unit waiting, every period it waits, under backlog), setup per order placed.
    """

    horizon: int
    demand: Demand
    lost_sales: bool
    holding_cost: float
    penalty_cost: float
    setup_cost: float
    lead_time: int
    max_inventory: int
    max_order: int
    risk_tolerance: float = 0.0
    perishable: bool = False
    initial_inventory: int = 0

    def __post_init__(self) -> None:
        validate_problem(self)

    @property
    def transition(self) -> str:
        return "lost_sale" if self.lost_sales else "backlog"

    @property
    def order_cap(self) -> int:
        """The largest single order the caps can ever allow."""
        return min(self.max_order, self.max_inventory)

    def risk_weight(self) -> float:
        """exp(-lambda): the weight on cost standard deviation in L(pi)."""
        return math.exp(-self.risk_tolerance)

    def with_(self, **changes) -> Problem:
        return replace(self, **changes)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["demand"] = self.demand.describe()
        d["state_transition_model"] = self.transition
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Problem:
        d = dict(d)
        d.pop("state_transition_model", None)
        d["demand"] = parse_demand(d["demand"])
        return cls(**d)


def _require(cond: bool, field: str, value, allowed: str) -> None:
    if not cond:
        raise ParameterError(field, value, allowed)


def _is_int(x) -> bool:
    return isinstance(x, (int,)) and not isinstance(x, bool)


def validate_problem(p: Problem) -> None:
    """Every rule the solvers rely on, checked once at construction."""
    _require(_is_int(p.horizon) and p.horizon >= 1, "time_horizon", p.horizon, "must be a whole number of days >= 1")
    _require(isinstance(p.demand, Demand), "demand_distribution", p.demand, "must be a Demand model")
    _require(isinstance(p.lost_sales, bool), "state_transition_model", p.lost_sales, "allowed: lost_sale, backlog")
    for name in ("holding_cost", "penalty_cost", "setup_cost"):
        v = getattr(p, name)
        _require(
            isinstance(v, (int, float)) and math.isfinite(v) and v >= 0, name, v, "must be a number >= 0"
        )
    _require(
        _is_int(p.lead_time) and p.lead_time >= 0, "lead_time", p.lead_time, "must be a whole number of days >= 0"
    )
    _require(
        _is_int(p.max_inventory) and p.max_inventory >= 1,
        "max_inventory",
        p.max_inventory,
        "must be a whole number of units >= 1",
    )
    _require(_is_int(p.max_order) and p.max_order >= 1, "max_order", p.max_order, "must be a whole number of units >= 1")
    _require(
        p.max_order <= p.max_inventory,
        "max_order",
        p.max_order,
        f"must be <= max_inventory ({p.max_inventory})",
    )
    _require(
        isinstance(p.risk_tolerance, (int, float)) and -10 <= p.risk_tolerance <= 10,
        "risk_tolerance",
        p.risk_tolerance,
        "must be a number in [-10, 10]",
    )
    _require(isinstance(p.perishable, bool), "perishability", p.perishable, "allowed: perishable, non_perishable")
    _require(
        _is_int(p.initial_inventory) and 0 <= p.initial_inventory <= p.max_inventory,
        "initial_inventory",
        p.initial_inventory,
        f"must be a whole number in [0, max_inventory={p.max_inventory}]",
    )
