"""How a store manager says each fact: the imitator's own templates (independent of the extraction corpus).

`say(field, problem, style, rng)` renders one fact of the hidden ground truth; `Style` carries the episode's
noise for that field (imprecise, units, jargon, a deliberately wrong value for contradictions, the lost-sale /
backlog confusion). The ground truth itself is never modified: noise lives only in the words.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from agents.imitator.habits import round_within
from inventory.problem import Problem

__all__ = ["Style", "say", "fmt_money", "fmt_num"]


@dataclass
class Style:
    precise: bool = True
    units: str = "day"  # day | week | month | year (demand and holding cost)
    jargon: bool = False
    wrong: bool = False  # a contradiction: say a different value
    confused: bool = False  # lost sale said with a per-day penalty (or vice versa)
    terse: bool = False
    rounded: bool = False  # unsure a moment ago: round like a person, within the scoring tolerance


def fmt_num(x: float) -> str:
    if abs(x - round(x)) < 1e-9:
        return str(int(round(x)))
    return f"{x:.2f}".rstrip("0").rstrip(".")


def fmt_money(x: float) -> str:
    if x < 1 and x > 0 and abs(x * 100 - round(x * 100)) < 1e-9:
        return f"{int(round(x * 100))} cents"
    return f"${x:.2f}" if abs(x - round(x)) > 1e-9 else f"${int(round(x))}"


def _nice(x: float) -> float:
    """Round like people do: 7.3 -> 7, 0.27 -> 0.3, 43 -> 45, 128 -> 130."""
    if x <= 0:
        return x
    mag = 10 ** math.floor(math.log10(x))
    step = mag / 2 if x / mag < 5 else mag
    return round(round(x / step) * step, 6)


def _pick(rng: np.random.Generator, options: list[str]) -> str:
    return options[int(rng.integers(len(options)))]


def _wrong_int(x: int, rng: np.random.Generator, minimum: int = 1) -> int:
    factor = float(rng.choice([0.5, 0.67, 1.5, 2.0]))
    y = max(minimum, int(round(x * factor)))
    return y if y != x else x + max(1, x // 2)


def say(field: str, p: Problem, style: Style, rng: np.random.Generator) -> str:
    """One sentence stating `field` of `p` in the given style."""
    fn = _SAYERS[field]
    return fn(p, style, rng)


def _horizon(p: Problem, s: Style, rng: np.random.Generator) -> str:
    h = _wrong_int(p.horizon, rng, 7) if s.wrong else p.horizon
    if s.terse:
        return f"{h} days."
    if not s.precise:
        lo, hi = (h - 10, h) if rng.random() < 0.5 else (h, h + 10)
        return _pick(rng, [f"Somewhere between {lo} and {hi} days, I'd say.", f"Probably {lo} or {hi} days."])
    if s.units != "day" and h % 30 == 0:
        n = h // 30
        return _pick(rng, [f"We plan {n} month{'s' if n > 1 else ''} ahead.", f"Let's plan for {n} months."])
    if s.units != "day" and h % 7 == 0:
        return f"About {h // 7} weeks - we plan {h // 7} weeks ahead."
    return _pick(rng, [f"We usually plan {h} days ahead.", f"Let's plan for the next {h} days.",
                       f"A {h}-day horizon works for us."])


def _demand_type(p: Problem, s: Style, rng: np.random.Generator) -> str:
    if p.demand.kind == "deterministic":
        return _pick(rng, ["It's the same every day, like clockwork.", "Constant - a standing order, same each day."])
    return _pick(rng, ["It varies from day to day.", "It's random; some days are busy, some are quiet.",
                       "Never the same two days in a row, it fluctuates."])


def _demand(p: Problem, s: Style, rng: np.random.Generator) -> str:
    d = p.demand
    scale = float(rng.choice([0.6, 1.6])) if s.wrong else 1.0
    if d.kind == "deterministic":
        n = int(round(d.mean_param * scale))
        return _pick(rng, [f"Exactly {n} units every day.", f"We sell {n} a day, every day, no more no less."])
    if d.kind == "uniform":
        lo, hi = int(round(d.low * scale)), int(round(d.high * scale))
        if s.jargon:
            return f"Uniform between {lo} and {hi} units a day."
        return _pick(rng, [f"Anywhere between {lo} and {hi} a day, any number in that range is equally likely.",
                           f"Somewhere from {lo} to {hi} units a day, evenly spread."])
    mean = d.mean_param * scale
    sd = d.sd_param * scale if d.kind == "normal" else None
    if not s.precise:
        mean = _nice(mean)
        sd = _nice(sd) if sd else sd
    elif s.rounded:
        mean = round_within(mean, 0.08)
        sd = _nice(sd) if sd else sd
    days = {"day": 1, "week": 7, "month": 30}.get(s.units, 1)
    if days != 1:
        m = fmt_num(round_within(round(mean * days), 0.05))
        if sd is None:
            return _pick(rng, [f"About {m} a {s.units}.", f"We sell roughly {m} units per {s.units}."])
        sw = fmt_num(_nice(sd * math.sqrt(days)))
        return _pick(rng, [f"About {m} a {s.units}, give or take {sw}.",
                           f"Roughly {m} units per {s.units}, plus or minus {sw}."])
    m = fmt_num(round(mean, 2))
    if sd is None:
        if s.jargon:
            return _pick(rng, [f"Poisson with a mean of {m} per day.", f"It's Poisson, about {m} a day."])
        return _pick(rng, [f"We sell about {m} a day on average.", f"On average {m} units a day.",
                           f"Roughly {m} per day, it's random."])
    sds = fmt_num(round(sd, 2))
    if s.jargon:
        return f"Normally distributed, mean {m} per day and standard deviation {sds}."
    return _pick(rng, [f"About {m} a day, give or take {sds}.", f"On average {m} units a day, plus or minus {sds}.",
                       f"Average daily demand is {m} with a standard deviation of {sds}."])


def _perish(p: Problem, s: Style, rng: np.random.Generator) -> str:
    if p.perishable:
        return _pick(rng, ["Yes, whatever we don't sell spoils by the end of the day.",
                           "Yes, it's perishable - it has to be thrown away at night."])
    return _pick(rng, ["No, it keeps fine, nothing goes bad.", "No, it's not perishable.",
                       "No, they don't expire."])


def _transition(p: Problem, s: Style, rng: np.random.Generator) -> str:
    lost = p.lost_sales if not s.confused else True
    if lost:
        return _pick(rng, ["They go elsewhere - the sale is lost.", "Customers won't wait, they buy elsewhere.",
                           "It's a lost sale, they leave."])
    return _pick(rng, ["They wait for the next delivery, we backorder it.", "Customers wait until we restock.",
                       "We take a backorder and fill it when stock arrives."])


def _holding(p: Problem, s: Style, rng: np.random.Generator) -> str:
    h = p.holding_cost * (float(rng.choice([0.5, 2.0])) if s.wrong else 1.0)
    if not s.precise:
        h = _nice(h)
    elif s.rounded:
        h = round_within(h, 0.04)
    days = {"day": 1, "week": 7, "month": 30, "year": 365}[s.units]
    if days != 1:  # nobody says "$25.55 per unit per year": round, but stay within the 5% cost tolerance
        return f"It costs us about {fmt_money(round_within(h * days, 0.04))} per unit per {s.units} to keep it in stock."
    return _pick(rng, [f"Holding one costs about {fmt_money(h)} per unit per day.",
                       f"{fmt_money(h)} per unit per day for storage and capital.",
                       f"Keeping a unit in stock costs us {fmt_money(h)} a day."])


def _penalty(p: Problem, s: Style, rng: np.random.Generator) -> str:
    pen = p.penalty_cost * (float(rng.choice([0.5, 2.0])) if s.wrong else 1.0)
    if not s.precise:
        pen = _nice(pen)
    elif s.rounded:
        pen = round_within(pen, 0.04)
    per_day = (not p.lost_sales) or s.confused  # a confused manager says 'lost sale' yet prices shortages per day
    if per_day:
        return _pick(rng, [f"About {fmt_money(pen)} per unit per day that a customer waits.",
                           f"Each unit on backorder costs us {fmt_money(pen)} a day in goodwill."])
    return _pick(rng, [f"We lose about {fmt_money(pen)} on every unit we can't sell.",
                       f"Each lost sale costs us {fmt_money(pen)}.", f"{fmt_money(pen)} per lost unit."])


def _setup(p: Problem, s: Style, rng: np.random.Generator) -> str:
    k = p.setup_cost * (2.0 if s.wrong else 1.0) + (5.0 if s.wrong and p.setup_cost == 0 else 0.0)
    if k == 0:
        return _pick(rng, ["No, there's no fixed fee per order.", "Ordering is free for us."])
    if not s.precise:
        k = _nice(k)
    elif s.rounded:
        k = round_within(k, 0.04)
    return _pick(rng, [f"Yes, {fmt_money(k)} per order, whatever the size.",
                       f"Every delivery costs a flat {fmt_money(k)}.", f"The supplier charges {fmt_money(k)} per order."])


def _lead(p: Problem, s: Style, rng: np.random.Generator) -> str:
    lead = _wrong_int(p.lead_time, rng, 1) if s.wrong else p.lead_time
    if not s.precise and lead >= 1:
        lo, hi = (lead - 1, lead) if (rng.random() < 0.5 and lead > 1) else (lead, lead + 1)
        return f"Usually {lo} or {hi} days."
    if lead == 0:
        return "Same day, the supplier is next door."
    if s.units != "day" and lead % 7 == 0:
        n = lead // 7
        return f"It takes {n} week{'s' if n > 1 else ''} for an order to arrive."
    if lead == 1:
        return _pick(rng, ["Next day.", "Orders arrive the next day."])
    return _pick(rng, [f"It takes {lead} days for an order to arrive.", f"Deliveries show up {lead} days after I order.",
                       f"Lead time is {lead} days."])


def _max_inv(p: Problem, s: Style, rng: np.random.Generator) -> str:
    m = _wrong_int(p.max_inventory, rng, 2) if s.wrong else p.max_inventory
    if not s.precise:
        return f"Between {max(1, m - 5)} and {m + 5} units, I think."
    return _pick(rng, [f"We can store at most {m} units.", f"Our storage holds {m} units.",
                       f"There's room for {m} units, no more."])


def _max_order(p: Problem, s: Style, rng: np.random.Generator) -> str:
    m = _wrong_int(p.max_order, rng, 1) if s.wrong else p.max_order
    m = min(m, p.max_inventory) if s.wrong else m
    if not s.precise:
        return f"Between {max(1, m - 5)} and {m + 5} units per order, roughly."
    return _pick(rng, [f"The supplier won't ship more than {m} units at a time.", f"At most {m} units per order.",
                       f"The largest order we can place is {m} units."])


def _risk(p: Problem, s: Style, rng: np.random.Generator) -> str:
    r = p.risk_tolerance
    if s.precise or s.jargon:
        return _pick(rng, [f"I'd say {fmt_num(r)}.", f"Put me at {fmt_num(r)} on that scale.", f"{fmt_num(r)}."])
    if r <= -7:
        return "I'm very risk averse."
    if r <= -3:
        return "I'm cautious, I like to play it safe."
    if r < 0:
        return "A bit on the cautious side."
    if r == 0:
        return "Neutral, I just want the lowest average cost."
    if r <= 2:
        return f"Slightly willing to take risks, maybe {fmt_num(r)}."
    if r <= 6:
        return f"I don't mind taking some risks - call it {fmt_num(r)}."
    return "I'm very aggressive, I love risk."


_SAYERS = {
    "time_horizon": _horizon,
    "demand_type": _demand_type,
    "demand_distribution": _demand,
    "perishability": _perish,
    "state_transition_model": _transition,
    "holding_cost": _holding,
    "penalty_cost": _penalty,
    "setup_cost": _setup,
    "lead_time": _lead,
    "max_inventory": _max_inv,
    "max_order": _max_order,
    "risk_tolerance": _risk,
}
