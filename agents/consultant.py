"""End-to-end consultants: the study's baselines (treatment B talks with the owner, C reads the true file).

Two implementations behind one result type (`ConsultantResult`):

* LLM consultant (`run_llm_consultant`, `llm_consult_with_parameters`): the paper-style prompts from
  `agents.study_prompts`; B alternates consultant turns with the human imitator until the judge says the
  reply holds an actionable policy (or `max_turns`), C answers once from the parameter CSV (one nudge if the
  judge finds no policy).
* Textbook consultant (`TEXTBOOK_NAME`): the offline stand-in for the LLM. It does what such advice typically
  is: reorder point = lead-time demand + z * sigma * sqrt(L) safety stock (z from the critical ratio p/(p+h),
  95% service when the costs are unknown), then either order up to capacity or order a round batch (EOQ
  rounded to 5, within the order limit). B asks the imitator plain questions and reads the answers with a
  small field reader; C gets the true parameters. Either way the result is advice TEXT, which goes through
  the same policy parser as an LLM's advice.

This formula is the only policy computed outside the Optimization Agent, because it is the baseline being
measured.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from agents.judge import judge_reply
from agents.policy_parser import ParsedPolicy, parse_policy
from inventory.problem import Problem
from inventory.spec import ParameterTable

TEXTBOOK_NAME = "textbook consultant (offline stand-in for the LLM)"

QUESTIONS: tuple[tuple[str, str], ...] = (
    ("demand", "How many units do you sell on a typical day, and how much does that vary from day to day?"),
    ("lead_time", "How many days does it take from placing an order until it arrives?"),
    ("holding_cost", "What does it cost you to keep one unit in stock for a day (or a year)?"),
    ("penalty_cost", "What does it cost you when a customer wants a unit and you have none?"),
    ("setup_cost", "Is there a fixed cost each time you place an order, regardless of size?"),
    ("max_inventory", "How many units can you store at most?"),
    ("max_order", "What is the largest order you can place at once?"),
    ("transition", "When you run out, do customers wait for the item or buy elsewhere?"),
)


@dataclass
class ConsultantResult:
    """What a consultant said and how the study reads it."""

    advice: str
    parsed: ParsedPolicy
    status: str  # "complete" | "max_turns" | "failed"
    turns: int
    transcript: list[tuple[str, str]] = field(default_factory=list)
    known: dict = field(default_factory=dict)  # what B learned (textbook) / empty for the LLM
    consultant: str = TEXTBOOK_NAME
    reason: str = ""


# ---- textbook advice ----------------------------------------------------------------------------------------------


@dataclass
class Facts:
    """What the consultant believes about the business; None = unknown."""

    mean: float | None = None
    sd: float | None = None
    lead_time: int | None = None
    holding_cost: float | None = None
    penalty_cost: float | None = None
    setup_cost: float | None = None
    max_inventory: int | None = None
    max_order: int | None = None
    lost_sales: bool | None = None

    @classmethod
    def from_problem(cls, p: Problem) -> Facts:
        return cls(p.demand.mean, p.demand.std, p.lead_time, p.holding_cost, p.penalty_cost, p.setup_cost,
                   p.max_inventory, p.max_order, p.lost_sales)


def _round5(x: float) -> int:
    return int(max(5, 5 * round(x / 5)))


def textbook_numbers(f: Facts, style: str = "auto") -> dict:
    """The textbook formula; returns r (reorder point, ordered at or below), and S or Q, plus the pieces."""
    mean = f.mean if f.mean is not None else 5.0
    sd = f.sd if f.sd is not None else math.sqrt(max(mean, 0.0))
    lead = f.lead_time if f.lead_time is not None else 3
    if f.holding_cost and f.penalty_cost is not None and f.holding_cost + f.penalty_cost > 0:
        ratio = f.penalty_cost / (f.penalty_cost + f.holding_cost)
    else:
        ratio = 0.95
    z = float(np.clip(stats.norm.ppf(min(max(ratio, 1e-6), 1 - 1e-6)), 0.0, 2.33))
    ltd = mean * lead
    safety = z * sd * math.sqrt(lead)
    r = int(round(ltd + safety))
    if f.setup_cost and f.holding_cost:
        batch = _round5(math.sqrt(2 * f.setup_cost * mean / f.holding_cost))
    else:
        batch = _round5(7 * mean)  # about a week of demand
    if f.max_order:
        batch = min(batch, int(f.max_order))
    if f.max_inventory:
        r = min(r, int(f.max_inventory) - 1)
    if style == "auto":
        style = "batch" if (f.setup_cost or 0) > 0 else "up_to"
    S = int(f.max_inventory) if f.max_inventory else r + batch
    return {"ltd": ltd, "safety": safety, "z": z, "r": r, "Q": batch, "S": max(S, r + 1), "style": style}


def textbook_advice(f: Facts, variant: int = 0, style: str = "auto") -> str:
    """Advice text in one of several phrasings (the parser must read them all)."""
    n = textbook_numbers(f, style)
    r, S, Q = n["r"], n["S"], n["Q"]
    why = (f"Your lead-time demand is about {n['ltd']:.0f} units; a safety stock of {n['safety']:.0f} units "
           f"(z = {n['z']:.2f}) covers the variability.")
    if n["style"] == "up_to":
        forms = (
            f"{why} Recommended policy: when your inventory position (on hand plus on order) falls to {r} units "
            f"or below, order up to {S} units.",
            f"{why} Use an (s, S) policy with s = {r + 1} and S = {S}: whenever the inventory position is below "
            f"{r + 1}, order enough to bring it up to {S}.",
            f"{why}\nReorder point: {r} units (order when the inventory position reaches it).\n"
            f"Order-up-to level: {S} units.",
        )
    else:
        forms = (
            f"{why} Recommended policy: when the inventory position drops to {r} units or fewer, order {Q} units.",
            f"{why}\nReorder point: {r} units. Order quantity: {Q} units. Place an order whenever the inventory "
            f"position falls to the reorder point.",
            f"{why} Use an (R, Q) policy with (R, Q) = ({r + 1}, {Q}): when the inventory position is below "
            f"{r + 1}, order {Q} units.",
        )
    return forms[variant % len(forms)]


# ---- reading the owner's answers (offline) --------------------------------------------------------------------

_NUM = re.compile(r"\$?\s*(\d+(?:,\d{3})*(?:\.\d+)?)")


def _numbers(text: str) -> list[tuple[float, str]]:
    """(value, following words) for each number, word numbers included when the dialogue helpers exist."""
    try:
        from agents.extraction_text import normalise_text

        text = normalise_text(text)
    except Exception:  # noqa: BLE001 - the helpers are optional; plain digits still work
        pass
    out = []
    for m in _NUM.finditer(text):
        out.append((float(m.group(1).replace(",", "")), text[m.end(): m.end() + 30].lower()))
    return out


def _per_day(value: float, tail: str, whole: str) -> float:
    ctx = tail + " " + whole
    if re.search(r"\b(?:year|annual|annually|yearly)\b", ctx):
        return value / 365
    if re.search(r"\bmonth", ctx):
        return value / 30
    if re.search(r"\bweek", ctx):
        return value / 7
    return value


_TABLE_FIELD = {"demand": "demand_distribution", "transition": "state_transition_model"}


def _read_with_rules(field_name: str, answer: str, facts: Facts) -> bool:
    """The dialogue system's offline extraction parser, for the asked field only; True when it set the field."""
    try:
        from agents.extraction_rules import parse_utterance
        from inventory.spec import normalise_value
    except ImportError:
        return False
    param = _TABLE_FIELD.get(field_name, field_name)
    try:
        res = parse_utterance(answer or "", context=param)
        raw = res.values.get(param)
        if raw is None and param == "demand_distribution" and res.demand_period is not None:
            raw = res.demand_period.independent()
        if raw is None:
            return False
        value = normalise_value(param, raw)
    except ValueError:
        return False
    if param == "demand_distribution":
        facts.mean, facts.sd = float(value.mean), float(value.std)
    elif param == "state_transition_model":
        facts.lost_sales = value == "lost_sale"
    else:
        setattr(facts, field_name, value)
    return True


def read_answer(field_name: str, answer: str, facts: Facts, item_cost: float | None = None) -> None:
    """Update `facts` from one plain answer: the dialogue system's offline parser when it reads the asked
    field, else a small reader of our own; leaves the field unknown when neither finds a usable value."""
    if _read_with_rules(field_name, answer, facts):
        return
    low = (answer or "").lower()
    nums = _numbers(answer or "")
    if field_name == "transition":
        if re.search(r"\bwait|back-?order|backlog|come back|reserve|pre-?order", low):
            facts.lost_sales = False
        elif re.search(r"\blost|elsewhere|leave|walk|go somewhere|competitor|lose", low):
            facts.lost_sales = True
        return
    if not nums:
        return
    if field_name == "demand":
        vals = [v for v, tail in nums if not re.match(r"\s*(?:%|percent|days?|weeks?)", tail)]
        if not vals:
            return
        if re.search(r"between|from\s+\d|\d\s*(?:-|to)\s*\d", low) and len(vals) >= 2:
            lo, hi = vals[0], vals[1]
            facts.mean, facts.sd = (lo + hi) / 2, (hi - lo + 1) / math.sqrt(12)
        else:
            facts.mean = vals[0]
            if len(vals) >= 2 and re.search(r"give or take|plus or minus|\+/-|std|standard deviation|sd", low):
                facts.sd = vals[1]
            if re.search(r"exactly|always|every day the same|fixed|constant", low):
                facts.sd = 0.0
        return
    value, tail = nums[0]
    if field_name == "lead_time":
        mult = 7 if re.match(r"\s*weeks?", tail) else 1
        facts.lead_time = int(round(value * mult))
    elif field_name in ("holding_cost", "penalty_cost", "setup_cost"):
        if re.search(r"\bno\b|nothing|free|zero|none", low) and field_name == "setup_cost" and value == 0:
            facts.setup_cost = 0.0
            return
        if "%" in tail or "percent" in tail:
            if item_cost:
                value = value / 100 * item_cost
            else:
                return
        setattr(facts, field_name, _per_day(value, tail, low) if field_name == "holding_cost" else value)
    elif field_name in ("max_inventory", "max_order"):
        setattr(facts, field_name, int(round(value)))


def run_textbook_consultant(imitator, seed: int = 0, max_turns: int = 40) -> ConsultantResult:
    """Treatment B offline: plain questions, a field reader, the textbook formula, advice text, parser verdict."""
    transcript: list[tuple[str, str]] = []
    opening = imitator.opening()
    transcript.append(("owner", opening))
    facts = Facts()
    turns = 0
    for name, question in QUESTIONS:
        if turns >= max_turns - 1:
            break
        transcript.append(("consultant", question))
        answer = imitator.reply(question)
        transcript.append(("owner", answer))
        read_answer(name, answer, facts)
        turns += 1
    advice = textbook_advice(facts, variant=seed % 3, style="up_to" if seed % 2 == 0 else "batch")
    transcript.append(("consultant", advice))
    turns += 1
    verdict = judge_reply(advice, None, facts.max_inventory)
    parsed = parse_policy(advice, capacity=facts.max_inventory)
    status = "complete" if verdict.actionable else "max_turns"
    return ConsultantResult(advice, parsed, status, turns, transcript, known=facts.__dict__.copy(),
                            reason="" if verdict.actionable else verdict.reason)


def textbook_with_parameters(problem: Problem, seed: int = 0) -> ConsultantResult:
    """Treatment C offline: the formula on the true parameters."""
    facts = Facts.from_problem(problem)
    advice = textbook_advice(facts, variant=seed % 3, style="up_to" if seed % 2 == 0 else "batch")
    parsed = parse_policy(advice, capacity=problem.max_inventory)
    return ConsultantResult(advice, parsed, "complete", 1, [("consultant", advice)], known=facts.__dict__.copy())


# ---- LLM consultant -----------------------------------------------------------------------------------------------


def run_llm_consultant(imitator, client, judge_client=None, max_turns: int = 20) -> ConsultantResult:
    """Treatment B with an LLM: talk until the judge finds an actionable policy in a consultant reply."""
    from agents.study_prompts import CONSULTANT_NUDGE, CONSULTANT_SYSTEM

    judge_client = judge_client or client
    opening = imitator.opening()
    messages = [{"role": "system", "content": CONSULTANT_SYSTEM}, {"role": "user", "content": opening}]
    transcript = [("owner", opening)]
    reply = ""
    for turn in range(1, max_turns + 1):
        if turn == max_turns:
            messages.append({"role": "user", "content": CONSULTANT_NUDGE})
        reply = client.chat(messages).content or ""
        messages.append({"role": "assistant", "content": reply})
        transcript.append(("consultant", reply))
        verdict = judge_reply(reply, judge_client)
        if verdict.actionable:
            return ConsultantResult(reply, parse_policy(reply), "complete", turn, transcript,
                                    consultant="llm", reason=verdict.reason)
        answer = imitator.reply(reply)
        messages.append({"role": "user", "content": answer})
        transcript.append(("owner", answer))
    return ConsultantResult(reply, parse_policy(reply), "max_turns", max_turns, transcript, consultant="llm",
                            reason=f"no actionable policy after {max_turns} turns")


def llm_consult_with_parameters(problem: Problem, context: str, client, judge_client=None) -> ConsultantResult:
    """Treatment C with an LLM: the true parameter file in the prompt; one nudge if no policy is stated."""
    from agents.study_prompts import (
        CONSULTANT_NUDGE,
        CONSULTANT_WITH_PARAMETERS_SYSTEM,
        CONSULTANT_WITH_PARAMETERS_USER,
    )

    judge_client = judge_client or client
    csv_text = ParameterTable.from_problem(problem).to_csv()
    messages = [
        {"role": "system", "content": CONSULTANT_WITH_PARAMETERS_SYSTEM},
        {"role": "user", "content": CONSULTANT_WITH_PARAMETERS_USER.format(context=context, parameters=csv_text)},
    ]
    transcript: list[tuple[str, str]] = []
    reply = ""
    for turn in (1, 2):
        reply = client.chat(messages).content or ""
        transcript.append(("consultant", reply))
        verdict = judge_reply(reply, judge_client, problem.max_inventory)
        if verdict.actionable:
            return ConsultantResult(reply, parse_policy(reply, capacity=problem.max_inventory), "complete", turn,
                                    transcript, consultant="llm", reason=verdict.reason)
        messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": CONSULTANT_NUDGE}]
    return ConsultantResult(reply, parse_policy(reply, capacity=problem.max_inventory), "max_turns", 2, transcript,
                            consultant="llm", reason="no actionable policy after a nudge")
