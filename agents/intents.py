"""The questions managers ask after the policy, recognised and answered from this problem's numbers.

Intents: how much to order now (given on-hand and in-transit stock -> the policy tool's number), why this level
(the problem's demand, lead time and costs), what if a parameter changes (re-optimised through the optimisation
service, old vs new policy and cost), what it costs, what service level it gives. The words are matched here;
numbers always come from the Optimization Agent's result or from a tool on `InterpretationAgent` - this module
never computes a policy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.extraction_text import replace_number_words

__all__ = ["Intent", "StockState", "classify", "parse_changes", "parse_stock"]


@dataclass
class StockState:
    on_hand: int | None  # negative = units owed to waiting customers (backlog)
    in_transit: int | None  # total already ordered, not yet received


@dataclass
class Intent:
    kind: str  # order_now | what_if | why | cost | service | compare | skeptic | done | other
    text: str


_RX = [
    ("done", r"^\W*(?:no|nope|that's all|that is all|nothing(?: else)?|no thanks|no, thanks|i'm good|all good|"
             r"thanks,? that's it|bye|quit|exit)\W*$"),
    ("what_if", r"\bwhat if\b|\bwhat happens if\b|\bsuppose\b|\bwhat would\b[^?]*\bif\b|\band if\b|\bif instead\b|"
                r"\bwhat about if\b|\bhow would\b[^?]*\bchange\b[^?]*\bif\b"),
    ("order_now", r"how (?:many|much)\b[^?]*\b(?:order|buy|get in|purchase|reorder)|what (?:should|do|must) i "
                  r"(?:order|buy)|should i (?:order|buy|place)|(?:order|buy)\w* (?:now|today|this morning)|need to "
                  r"order|do i order|how many now|what's my order|what is my order|how much to order|"
                  r"quantity (?:now|today)|order size (?:now|today)|how many units? (?:now|today)|place an order"),
    ("service", r"service level|fill rate|\bin stock\b[^?]*(?:how often|percent|%)|how often[^?]*(?:run out|out of "
                r"stock|short)|stock[\s-]?outs?|availability|percent of (?:demand|customers|sales)|run out"),
    ("why", r"\bwhy\b|how come|explain|reason|so high|so low|where does[^?]*come from|how did you get"),
    ("cost", r"\bcost|expens|how much will|spend|budget|\bpay\b"),
    ("compare", r"compare|other polic|alternativ|base[- ]stock|runner|options"),
]
_COMPILED = [(k, re.compile(r)) for k, r in _RX]
_SKEPTIC = re.compile(r"don't trust|do not trust|not sure (?:about|i trust)|skeptic|sceptic|black box|simpler|"
                      r"simple rule|rule of thumb|why should i|can't follow|too complicated|rather have|prefer a|"
                      r"without the (?:ai|model)")


def classify(question: str) -> Intent:
    q = question.lower().strip()
    if _SKEPTIC.search(q):
        return Intent("skeptic", question)
    for kind, rx in _COMPILED:
        if rx.search(q):
            return Intent(kind, question)
    return Intent("other", question)


_N = r"(-?\d+)"
_UNIT = r"(?:\s+(?:units?|items?|pieces|of them|\w+s))?"
_ON_HAND = [
    re.compile(_N + _UNIT + r"\s+(?:on hand|in stock|on the shel\w+|left|in the (?:store|shop|back|stockroom)|here|"
               r"sitting\b)"),
    re.compile(r"(?:on hand|in stock|stock level|inventory)\s*(?:is|of|:|=|at)?\s*(?:about\s+)?" + _N),
    re.compile(r"\b(?:i|we)\s+(?:have|got|hold|still have|currently have|'ve got)\s+(?:about\s+|only\s+|just\s+)?"
               + _N + r"(?!\s*(?:units?\s+)?(?:on order|in transit|on the way|coming|ordered|arriving|due))"),
    re.compile(r"(?:there are|there's)\s+" + _N + r"(?!\s*(?:units?\s+)?(?:on order|in transit|on the way|coming))"),
]
_OWED = re.compile(_N + _UNIT + r"\s+(?:back-?ordered|owed|on backorder|waiting)")
_TRANSIT = [
    re.compile(_N + _UNIT + r"\s+(?:already\s+)?(?:in transit|on order|on the way|coming|arriving|due|ordered|"
               r"incoming|en route|in the pipeline|outstanding)"),
    re.compile(r"(?:in transit|on order|on the way|incoming|coming in|pipeline|outstanding|already ordered)\s*"
               r"(?:is|are|of|:|=)?\s*(?:about\s+)?" + _N),
]
_NOTHING_COMING = re.compile(r"nothing (?:is )?(?:on order|in transit|coming|on the way|ordered)|no (?:orders?|units?|"
                             r"deliver\w*) (?:are )?(?:pending|outstanding|on the way|coming|in transit|on order)|"
                             r"none (?:on order|in transit|coming)|nothing (?:already )?(?:ordered|outstanding)")


def parse_stock(text: str) -> StockState:
    """On-hand and in-transit units from a manager's sentence; None for what it does not say."""
    low = replace_number_words(text.lower())
    on_hand = in_transit = None
    used: set[int] = set()
    for rx in _TRANSIT:
        m = rx.search(low)
        if m:
            in_transit, _ = int(m.group(1)), used.add(m.start(1))
            break
    if in_transit is None and _NOTHING_COMING.search(low):
        in_transit = 0
    for rx in _ON_HAND:
        for m in rx.finditer(low):
            if m.start(1) not in used:
                on_hand = int(m.group(1))
                break
        if on_hand is not None:
            break
    owed = _OWED.search(low)
    if owed and on_hand is None:
        on_hand = -int(owed.group(1))
    return StockState(on_hand, in_transit)


_FIELD_WORDS = [
    ("lead_time", r"lead[\s-]?time|deliver\w*|takes? \d+ days|arriv\w*"),
    ("holding_cost", r"holding|storage cost|to hold|to keep"),
    ("penalty_cost", r"penalt\w*|shortage cost|lost sale costs?|each lost|stock-?out cost"),
    ("setup_cost", r"setup|set-up|order(?:ing)? (?:fee|cost)|per order|delivery fee"),
    ("max_inventory", r"capacity|storage space|shelves|room for|store up to|hold up to"),
    ("max_order", r"max(?:imum)? order|order limit|largest order|caps? (?:each|the|orders?)"),
]
_SCALE = re.compile(r"(?:demand|sales|we sell|customers)[^?.]*?\b(doubles?|doubled|triples?|tripled|halves|halved|"
                    r"(?:goes|went|rises?|grows?|increases?|jumps?) (?:up )?by (\d+)\s*%|(?:drops?|falls?|decreases?|goes "
                    r"down) by (\d+)\s*%)")


def parse_changes(text: str, problem_values: dict) -> dict:
    """The parameter changes a what-if question describes, as raw values for the table (may be empty)."""
    from agents.extraction_rules import parse_utterance
    from inventory.demand import Demand

    changes: dict = {}
    m = _SCALE.search(text.lower())
    if m:
        word = m.group(1)
        factor = 2.0 if word.startswith("doubl") else 3.0 if word.startswith("tripl") else 0.5 if \
            word.startswith("halv") else 1 + int(m.group(2)) / 100 if m.group(2) else 1 - int(m.group(3)) / 100
        d: Demand = problem_values["demand_distribution"]
        changes["demand_distribution"] = _scale_demand(d, factor)
    # the question's content is the hypothetical's facts: read it as a statement (the reader leaves questions'
    # keywords alone, "what if customers don't wait?" would otherwise change nothing)
    parsed = parse_utterance(text.replace("?", "."), None, problem_values)
    for name, value in parsed.values.items():
        if name == "demand_type" and "demand_distribution" not in parsed.values:
            continue
        changes.setdefault(name, value)
    if parsed.demand_mean is not None and "demand_distribution" not in changes:
        d = problem_values["demand_distribution"]
        changes["demand_distribution"] = _scale_demand(d, parsed.demand_mean / max(d.mean, 1e-9))
    for name, values in parsed.conflicts.items():
        changes.setdefault(name, values[-1])
    if not changes:  # "what if the lead time were 5?": a bare number next to a field's words
        low = text.lower()
        num = re.search(r"(-?\d+(?:\.\d+)?)", replace_number_words(low))
        for name, rx in _FIELD_WORDS:
            if num and re.search(rx, low):
                changes[name] = num.group(1)
                break
    return changes


def _scale_demand(d, factor: float) -> str:
    if d.kind == "poisson":
        return f"poisson({d.mean * factor:g})"
    if d.kind == "normal":
        return f"normal({d.mean_param * factor:g}, {d.sd_param * factor:g})"
    if d.kind == "uniform":
        return f"uniform({round(d.low * factor)}, {round(d.high * factor)})"
    return f"{round(d.mean * factor)}"
