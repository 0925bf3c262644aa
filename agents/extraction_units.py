"""Cost rates in the manager's period -> per day, with pint doing the arithmetic and a sentence saying so.

Managers quote holding costs per week, month or year ("$1.50 a month to keep one on the shelf"); the model needs
$ per unit per day. The conversion is a unit conversion, so it is done by a unit library (pint) rather than a
table of divisors, and the agent repeats it back ("$1.50 per unit per month is $0.05 per unit per day (a month
counted as 30 days)") so the manager can object. The shop calendar is explicit: a month is 30 days, a quarter 90 and a year
365, the convention the rest of askopt (and the imitator) uses; pint's own month (365.25/12 days) is not used.
"""

from __future__ import annotations

from functools import lru_cache

import pint

__all__ = ["PERIOD_DAYS", "per_day", "rate_note"]

PERIOD_DAYS = {"hour": 1 / 24, "day": 1, "week": 7, "fortnight": 14, "month": 30, "quarter": 90, "year": 365}
_PINT_PERIOD = {"hour": "hour", "day": "day", "week": "week", "fortnight": "fortnight", "month": "shop_month",
                "quarter": "shop_quarter", "year": "shop_year"}


@lru_cache(maxsize=1)
def _registry() -> pint.UnitRegistry:
    """Built once per process (pint's default registry takes a moment to load)."""
    ureg = pint.UnitRegistry()
    ureg.define("dollar = [currency] = usd = buck")
    ureg.define("stock_unit = [stock] = item")
    ureg.define("shop_month = 30 * day")
    ureg.define("shop_quarter = 90 * day")
    ureg.define("shop_year = 365 * day")
    return ureg


@lru_cache(maxsize=8)
def _factor(period: str) -> float:
    """pint's conversion of $1 per unit per `period` to $ per unit per day (computed once per period)."""
    ureg = _registry()
    q = ureg.Quantity(1.0, f"dollar / stock_unit / {_PINT_PERIOD[period]}")
    return float(q.to("dollar / stock_unit / day").magnitude)


def per_day(value: float, period: str) -> float:
    """`value` dollars per unit per `period` as dollars per unit per day."""
    if period not in PERIOD_DAYS:
        raise ValueError(f"period: {period!r} is not allowed; allowed: {', '.join(PERIOD_DAYS)}")
    if period == "day":
        return float(value)
    return float(value) * _factor(period)


def _money(x: float) -> str:
    if x >= 1 or x == 0:
        return f"${x:,.2f}"
    return f"${x:.4f}".rstrip("0").rstrip(".") if round(x, 2) != x else f"${x:.2f}"


def rate_note(label: str, value: float, period: str) -> str:
    """The sentence the agent says back after converting a rate."""
    if period == "hour":  # a cold store's hourly bill: 24 hours a day
        return (f"{label} of {_money(value)} per unit per hour is {_money(per_day(value, period))} per unit per day: "
                f"{_money(value)} x 24")
    days = PERIOD_DAYS[period]
    calendar = {"month": " (a month counted as 30 days)", "quarter": " (a quarter counted as 90 days)",
                "year": " (a year counted as 365 days)"}.get(period, "")
    return (f"{label} of {_money(value)} per unit per {period} is {_money(per_day(value, period))} per unit per day"
            f"{calendar}: {_money(value)} / {days}")
