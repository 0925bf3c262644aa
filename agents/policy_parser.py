"""Free-text inventory advice -> an evaluable policy, or an honest "could not".

The end-to-end consultants (treatments B and C) answer in prose; to score them on the ground truth we need the
policy as an object. This parser reads the forms consultants actually write:

* (s,S): "when the inventory position falls below 20, order up to 60", "(s, S) = (20, 60)", "min 20 / max 60"
* (s,Q): "reorder 30 units when stock drops to 15 or less", "(R, Q) = (30, 25)" (a fixed batch per trigger)
* (R,Q) with multiples: "... order in multiples of 10 to get back above 30"
* base-stock: "base-stock level 45", "every day, order up to 45"
* constant: "order 8 units every day"; periodic: "every 7 days order up to 70" / "order 40 every week",
  weekdays ("every Friday", "Tuesdays") = 7, "every other day" = 2, fortnightly / "every second week" = 14,
  "once a month" = 30
* layout: markdown tables ("| s | 18 |", or one option per row under an "s | S" header), bullet and numbered
  lists, formulas whose intermediate numbers are dropped ("= 41.4, so s = 42" records 42)
* several options: the recommended one ("I recommend option B", "Recommended: (c)", "Policy B ... my pick");
  sentences that call a policy "not recommended" are left out; options without a recommendation stay
  "unparseable"
* caps: "never order more than 25" (wraps the policy), "order up to capacity" (needs the capacity)
* triggers: "below / under / less than N" -> our strict trigger (order when position < N): s = N;
  "at or below / to / reaches / N or fewer / <= N" -> s = N + 1 (ours triggers strictly below).
  A bare "reorder point 20" or "s = 20" is read as the (s,S) notation itself: order when below 20.
* basis: the inventory position by default; "on hand / on the shelf / physical stock" (without "on order",
  "in transit", "position") switches to an on-hand trigger, evaluated as a `StatePolicy` that ignores the
  pipeline -- which is what such advice literally says, and why it is often costly.

It never guesses silently: a range ("reorder around 20-25") is resolved to its midpoint rounded half up and the
choice is recorded in `reason`; two different values for the same role, a trigger without an order quantity,
hedging, or no policy at all give status "unparseable" with the reason. A reorder point above the capacity, an
order-up-to level below the reorder point, and advice that contradicts a limit it states itself (S above "your
storage capacity is 100", Q above "the van carries at most 30") give "infeasible" with the reason. Both keep
the text.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace

import numpy as np

from agents.extraction_text import replace_number_words
from agents.foreign_words import to_english
from inventory.policies import (
    BaseStockPolicy,
    ConstantPolicy,
    Policy,
    RQPolicy,
    SQPolicy,
    SSPolicy,
    StatePolicy,
)

STATUSES = ("ok", "unparseable", "infeasible")
KINDS = ("ss", "sq", "rq", "base_stock", "constant", "periodic")

NUM = r"(\d+(?:\.\d+)?)"
APPROX = r"(?:(?:about|around|approximately|roughly|some|somewhere|anywhere|between|in\s+the|within|~|≈)\s*){0,3}"
NOT_TIME = r"(?!\s*(?:-|–|to)?\s*(?:days?|weeks?|months?|hours?|times?|%|percent|dollars|cents|am\b|pm\b))"
CONNECT = r"(?:\s*(?:of|at|is|=|:|to|works\s+out\s+(?:to|at)|comes?\s+(?:out\s+)?(?:to|at)|came\s+out\s+(?:to|at)|should\s+be|be|set\s+at|set\s+to|(?:may|can|could|will|would|should)\s+be(?:\s+(?:fixed|set|kept|held))?(?:\s+(?:at|to))?|fixed\s+at|around|about|approximately|equal\s+to|->|→|would\s+be|will\s+be|roughly|~|level|point|\(s\)|\(r\)|\(S\)|\(Q\)))*\s*"


@dataclass
class ParsedPolicy:
    """The parser's verdict on one advice text (status, policy, and why)."""

    status: str
    text: str
    kind: str | None = None
    params: dict = field(default_factory=dict)
    basis: str = "position"
    reason: str = ""
    policy: Policy | None = None
    stated_s: int | None = None  # the reorder point as written ("at or below 20" -> 20; params hold s = 21)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def actionable(self) -> bool:
        """A concrete numeric rule was stated (even an infeasible one): the offline judge's verdict."""
        return self.status in ("ok", "infeasible")

    def label(self) -> str:
        if self.kind is None:
            return self.status
        inner = ", ".join(f"{k}={v}" for k, v in self.params.items())
        onhand = " on-hand" if self.basis == "on_hand" else ""
        return f"{self.kind}({inner}){onhand}"

    def as_row(self) -> dict:
        return {
            "parse_status": self.status,
            "policy_kind": self.kind or "",
            "policy_params": json.dumps(self.params, sort_keys=True),
            "policy_basis": self.basis,
            "parse_reason": self.reason,
        }


# ---- policies the plain classes cannot express ----------------------------------------------------------------


@dataclass(frozen=True)
class CappedPolicy(Policy):
    """Any position policy with an advice-level cap on each order (on top of the problem's own caps)."""

    inner: Policy = None  # type: ignore[assignment]
    cap: int = 0
    name = "capped"

    def order_from_position(self, position, t):
        return np.minimum(self.inner.order_from_position(position, t), self.cap)

    def params(self):
        return {**self.inner.params(), "cap": self.cap}

    def label(self, i: int = 0) -> str:
        return f"{self.inner.label(i)} cap {self.cap}"


@dataclass(frozen=True)
class PeriodicPolicy(Policy):
    """Review every T periods (t % T == 0): order up to S, or order Q; nothing in between."""

    T: int = 1
    S: int | None = None
    Q: int | None = None
    name = "periodic"

    def order_from_position(self, position, t):
        if t % self.T:
            return np.zeros_like(position)
        if self.S is not None:
            return np.maximum(self.S - position, 0)
        return np.full_like(position, self.Q)

    def params(self):
        return {k: v for k, v in (("T", self.T), ("S", self.S), ("Q", self.Q)) if v is not None}

    def label(self, i: int = 0) -> str:
        return "periodic " + ", ".join(f"{k}={v}" for k, v in self.params().items())


class OnHandTrigger:
    """StatePolicy callable: apply a position rule to the on-hand stock only (pipeline ignored). Picklable."""

    def __init__(self, inner: Policy):
        self.inner = inner

    def __call__(self, on_hand, pipeline, t):
        return self.inner.order_from_position(np.asarray(on_hand).reshape(1, -1), t).reshape(-1)


# ---- extraction --------------------------------------------------------------------------------------------------


@dataclass
class _Found:
    value: float
    pos: int
    strict: bool | None = None  # for triggers: True below, False at-or-below, None bare


_ON_HAND = re.compile(r"on[\s-]?hand|physical\s+(?:[\w-]+\s+)?only|\bcount\s+(?:the\s+)?[\w-]+\s+only\b|(?:only\s+)?the\s+stock\s+in\s+the\s+(?:shop|store)|on\s+the\s+shel(?:f|ves)|physical(?:ly)?\s+(?:stock|inventory|count|have|hold|in|on|there)|"
                      r"shelf\s+(?:stock|count)|in\s+the\s+(?:stockroom|fridge|freezer|cooler|back\s?room)|"
                      r"(?:have|left)\s+in\s+the\s+(?:store|shop)|count\s+only\s+what|only\s+what(?:'s|\s+is)\s+(?:on|in)|"
                      r"\bcount\s+(?:in|on)\s+the\s+(?!way\b)[a-z]+|"
                      r"\b(?:count|counting|only)\s+(?:at\s+)?(?:the\s+)?(?:[\w-]+\s+){0,3}?(?:on|in)\s+the\s+(?:[\w-]+\s+)?(?:rack|shelf|shelves|"
                      r"cupboard|cabinet|drawer|bin|safe|shop|store|room|fridge|freezer|locker|case|tank|cage|van|warehouse|godown|"
                      r"storeroom|stockroom|shed|depot|yard|cellar|pantry)\b|\bcount\s+alone\b|\bshelf\s+only\b|"
                      r"\bignore\s+(?:the\s+|any\s+)?(?:open|pending|outstanding)\s+orders\b|"
                      # "ignore what's on order, just count the cupboard"
                      r"\bgo\s+by\s+what(?:'s|\s+is)\s+(?:in|on)\s+the\b|"
                      r"\b(?:just|only)\s+count\s+(?:the|your|what'?s\s+(?:in|on)\s+the)\s+(?:[\w-]+\s+)?(?:rack|shelf|shelves|cupboard|"
                      r"cabinet|drawer|bin|shop|store|room|fridge|freezer|cooler|shed|cellar|pantry|stockroom|storeroom|warehouse)s?\b")
_POSITION = re.compile(r"inventory[\s-]+position|on[\s-]+order|in[\s-]+transit|outstanding|pipeline|incoming|"
                       r"already[\s-]+ordered|position|on[\s-]+the[\s-]+way|en[\s-]+route|not\s+yet\s+(?:arrived|received)|"
                       r"already\s+(?:on\s+(?:the|a)\s+(?:bus|truck|boat|ship|lorry|van|road|plane)|shipped|dispatched|sent|in\s+the\s+post)")

_VERB = (r"(?:falls?|fallen|falling|drops?|dropped|dropping|goes|go|gets?|is|are|'re|reaches|reach|reached|hits?|declines?"
         r"|dips?|sinks?|runs?\s+down|comes?\s+down|down|sits|stands|stays|remains|arriv(?:es|ing|ed)|totals?|add\s+up)")
_TRIGGER = re.compile(
    _VERB + r"\s+(?:(?P<le>to\s+or\s+(?:below|under|less\s+than)|at\s+or\s+(?:below|under|less\s+than)|equal\s+to\s+or\s+(?:below|less\s+than)"
    r"|no\s+more\s+than|not\s+above|at\s+most)|(?P<lt>below|under|beneath|less\s+than|lower\s+than|fewer\s+than|short\s+of)"
    r"|(?P<at>to|at|equal\s+to|exactly))\s+" + APPROX + NUM
    + r"(?P<orless>\s*(?:units?|items?|pieces|[a-z]+)?\s*or\s+(?:below|less|fewer|lower|under))?"
)
_TRIGGER_HIT = re.compile(r"(?:(?<=you\s)reach|(?<=they\s)reach|(?<=we\s)reach|(?<=order\s)reach|(?<=[a-z]{3}s\s)reach|reaches|reached|hits?|touches|gets\s+down\s+to|(?:you'?re|you\s+are|we'?re|we\s+are|it'?s|"
                          r"it\s+is|they'?re|they\s+are)\s+down\s+to|shows?|showing|reads?|counts?\s+(?:only\s+)?)\s+"
                          + APPROX + NUM)
# "only order when they're completely gone, then order 12": a reorder point of 0
_TRIGGER_GONE = re.compile(r"(?:when|once|after|until)\s+(?:they'?re|they\s+are|it'?s|it\s+is|the\s+\w+\s+(?:is|are)|you'?re|you\s+are|"
                           r"we'?re|we\s+are)\s+(?:completely\s+|totally\s+|all\s+|fully\s+)?(?:gone|out|sold\s+out|empty|finished|"
                           r"used\s+up)\b|(?:when|once|after|until)\s+(?:you|we)\s+(?:have|has)\s+nothing\s+(?:left|in\s+stock)")
_REORDER_AT = re.compile(r"re-?order(?:\s+(?!at\b|around\b|near\b|about\b|when\b|if\b)[a-z-]+){0,3}?\s+(?:somewhere\s+)?"
                         r"(?:at|around|near|about|between)\s+" + APPROX + NUM + NOT_TIME)
# "set the trigger at 16 units and the batch at 48"
_TRIGGER_AT = re.compile(r"\btrigger(?:\s+(?:point|level))?\s+(?:at|of|to|=|:)\s*" + APPROX + NUM)
_BATCH_AT = re.compile(r"\b(?:batch|lot)(?:\s+size)?\s+(?:at|of|to|=|:)\s*" + APPROX + NUM)
_RANGE_BETWEEN = re.compile(
    r"(?:point|level|reorder|order|up\s+to|target|quantity|batch|trigger|threshold)\b[^.;\n]{0,30}?between\s+(?:about\s+)?\d"
)
_AT_REORDER_POINT = re.compile(
    r"(?:falls?|drops?|reaches|reach|hits?|gets\s+down|comes\s+down|declines?)\s+(?:to\s+)?(?:or\s+below\s+)?"
    r"(?:(?:the|your)\s+re-?order\s+point|it\b|this\s+(?:level|point|number)|that\s+(?:level|point|number))"
)
_BELOW_REORDER_POINT = re.compile(r"(?:below|under|less\s+than)\s+(?:the|your)\s+re-?order\s+point")
_TRIGGER_BARE_LT = re.compile(r"(?:if|when|whenever|once|while|as\s+soon\s+as)\s+(?:it'?s\s+|it\s+is\s+|that'?s\s+|that\s+is\s+|"
                              r"this\s+is\s+|it\s+gets\s+|it\s+goes\s+|that\s+gets\s+|that\s+goes\s+|we'?re\s+|you'?re\s+|"
                              r"we\s+are\s+|you\s+are\s+|stock\s+is\s+|inventory\s+is\s+|there\s+are\s+)?(?:below|under|"
                              r"less\s+than|fewer\s+than)\s+" + APPROX + NUM)
_TRIGGER_ORLESS = re.compile(
    r"(?:inventory|stock|position|level|on[\s-]?hand|you\s+have|we\s+have|there\s+are|down\s+to|only|you\s+see|you\s+count|"
    r"you\s+find)\D{0,30}?" + r"\b" + NUM
    + r"\s*(?:(?:units?|items?|pieces|[a-z]+)\s+){0,3}?or\s+(?:fewer|less|below|lower|under)\b"
)
_TRIGGER_IS_ORLESS = re.compile(r"(?:\bis|\bare|'s|\bhits?|\breaches|\bsits\s+at|\bat)\s+" + NUM
                                + r"\s*(?:[a-z]+\s+)?or\s+(?:fewer|less|below|lower|under)\b")
_TRIGGER_LEAD_LT = re.compile(r"(?:^|[:;,.(\n]\s*)(?:below|under|fewer\s+than|less\s+than)\s+" + APPROX + NUM)  # "...: below 50, order"
_TRIGGER_NOUN_LT = re.compile(r"(?:stock|inventory|position|level|count|on[\s-]hand|pipeline|in\s+stock|in[\s-]transit|on[\s-]order|"
                              r"total|combined|together)\s+(?:is\s+|of\s+)?(?:below|under|less\s+than|"
                              r"lower\s+than|fewer\s+than)\s+" + APPROX + NUM)
_TRIGGER_HAVE_LT = re.compile(r"\b(?:you|we|they|i)\s+(?:have|hold|keep|carry|get\s+down\s+to)\s+(?:fewer|less)\s+than\s+"
                              + APPROX + NUM + NOT_TIME)  # "whenever you have fewer than 18 bottles"
_TRIGGER_LEFT = re.compile(r"(?:have|has|with|are|'re)\s+(?:only\s+)?" + APPROX + NUM + r"(?:\s*(?:-|to)\s*\d+)?" + r"\s*(?:units?|items?|[a-z]+)?\s+(?:or\s+(?:fewer|less)\s+)?left")
# "reorder when the stock is around 12-15": a trigger said with an approximate level
_TRIGGER_IS_ABOUT = re.compile(r"\b(?:when|once|whenever|if)\b[^.;\n]{0,40}?\b(?:stock|inventory|level|count|position)\s+(?:is|are|gets|reaches|"
                               r"sits)\s+(?:at\s+)?(?:around|about|roughly|approximately|near)\s+" + APPROX + NUM)
_TRIGGER_SYMBOL = re.compile(r"(?:position|inventory|stock|ip|level|on[\s-]?hand|transit|on[\s-]?order|pipeline|total|state|count|\)|\bx)"
                             r"\s*(?P<op><=|≤|=<|<)\s*" + NUM + r"(?!\.?\d|\s*%)")  # not "P(D > s) < 1%"
_REORDER_POINT = re.compile(
    r"(?:re-?order(?:ing)?|trigger|minimum|min)[\s-]+(?:point|level|threshold|trigger|stock\s+level|inventory\s+level)s?"
    r"(?:\s*\((?:s|r|rop)\))?(?:\s+(?:i|we)\s+(?:computed|calculated|got|derived|found|suggest|recommend))?"
    + CONNECT + APPROX + NUM
)
# "min 15 / max 50": a min/max pair is (s, S)
_MIN_MAX = re.compile(r"\bmin(?:imum)?\s*[=:]?\s*" + NUM + r"\s*(?:units?)?\s*(?:/|,|;|and|-)\s*max(?:imum)?\s*[=:]?\s*" + NUM)
_MIN_EQ = re.compile(r"\bmin(?:imum)?(?:\s*[=:]|\s+(?:at|of|to|is))\s*" + NUM)

_UPTO_VERB = re.compile(
    r"(?:order|ordering|replenish|restock|refill|fill|filled|top|topping|topped|bring|brings|bringing|brought|raise|raising|raised|"
    r"build|rebuild|back|reset|restore|stock|get)"
    r"(?:\s+(?:it|inventory|stock|the\s+(?:inventory|stock|position|level)|your\s+(?:inventory|stock|position)|the\s+inventory\s+position|"
    r"position|enough|units|back))*(?:\s+(?!to\b|up\b|comes?\b|came\b|works?\b|is\b|was\b|be\b)[a-z]+){0,3}?(?:\s+right)?"
    r"(?:[\s-]+up)?(?:\s+(?:daily|weekly|each\s+day|every\s+day|every\s+morning))?[\s-]+to(?:\s+(?:reach|hit|get\s+to|make))?"
    r"(?:\s+(?:a|the|an|your|its))?(?:\s+(?:target|level|total|max(?:imum)?|capacity|stock\s+level|inventory\s+level|position))*"
    r"(?:\s+(?:of|at|=|:))?\s*(?:\(S\)\s*(?:of|=|:)?\s*)?" + APPROX + NUM
)
_UPTO_NAMED = re.compile(
    r"(?:order[\s-]+up[\s-]+to|up[\s-]+to|target|max(?:imum)?)[\s-]+(?:stock\s+|inventory\s+)?(?:level|position|stock)s?"
    r"(?:\s*\(S\))?" + CONNECT + APPROX + NUM
)
# "order enough that on-hand and on-order together reach 26", "reorder @ 9, up to 30"
_UPTO_REACH = re.compile(r"\b(?:order|buy|get|bring\s+in)\s+enough\b[^.;\n]{0,60}?\b(?:reach|reaches|get\s+to|hit|make|have|has|hold|holds)\s+"
                         + APPROX + NUM + r"|(?:^|[,;]\s*)up\s+to\s+" + NUM + NOT_TIME
                         # "order until you have 60 again"
                         + r"|\b(?:order|buy|restock|refill)\w*\s+until\s+(?:you|we|it|the\s+\w+)\s+(?:have|has|hold|holds|reach|reaches|"
                         r"get\s+(?:back\s+)?to|are\s+at|is\s+at|are\s+back\s+at)\s+(?:again\s+)?" + APPROX + NUM)
# a par level is an order-up-to level: "par of 40", "par stock: 60", "back to a par somewhere between 45 and 55"
_UPTO_PAR = re.compile(r"\bpar(?:\s+(?:level|stock))?(?:\s*[=:]|\s+(?:of|at|is|to|be|set\s+at|set\s+to))*\s*" + APPROX + NUM + NOT_TIME +
                       r"|\b(?:up|back)\s+to\s+(?:a\s+|the\s+|your\s+)?par(?:\s+(?:level|stock))?\s+(?:of\s+)?" + APPROX + NUM + NOT_TIME)
_UPTO_LABEL = re.compile(r"order[\s-]+up[\s-]+to(?:\s+level)?(?:\s*\(s\))?\s*(?:[:=]|of|is)\s*" + APPROX + NUM)
_MAX_EQ = re.compile(r"\bmax(?:imum)?(?:\s*[=:]|\s+(?:at|of|to|is))\s*" + NUM + r"(?!\s*(?:units?\s+)?(?:per|each|a)\s+order)")
_CAPACITY = re.compile(
    r"(?:up\s+to|to|fill(?:\s+up)?)\s+(?:the\s+|your\s+|full\s+|its\s+)*(?:full\s+)?(?:storage\s+|warehouse\s+|shelf\s+)?"
    r"(?:capacity|limit|maximum|max)\b(?!\s*(?:order|of\s+\d))"
)
_BASE_STOCK = re.compile(r"base[\s-]*(?:stock|level)(?:\s+(?:level|target|policy))?(?:\s*\(S\))?(?:\s+(?:with|policy))?"
                         r"(?:\s+(?:a|an|the))?(?:\s+(?:target|level))?(?:\s+S)?" + CONNECT + APPROX + NUM)
_KEEP_AT = re.compile(r"keep(?:ing)?\s+(?:the\s+|your\s+)?(?:inventory\s+)?position\s+at\s+" + APPROX + NUM
                      # "keep the kefir between 130 and 140 bottles - every morning order up to that level"
                      + r"|\bkeep\s+(?:the\s+|your\s+)?(?!re-?order|trigger|safety|min)[a-z-]+(?:\s+[a-z-]+){0,3}?\s+(?:somewhere\s+|"
                      r"anywhere\s+)?(?:between|at|around|about)\s+" + APPROX + NUM
                      + r"(?=[^.;\n]*?\bup\s+to\s+(?:that|this|it\b|the\s+same))")
# "hold somewhere between 50 and 55 snorkel sets as your base stock"
_HOLD_AS_BASE = re.compile(r"\b(?:hold|keep|carry)\s+" + APPROX + NUM
                      + r"(?=(?:\s*(?:-|to|and)\s*\d+)?(?:\s+[a-z-]+){0,3}\s+as\s+(?:your|the|a)\s+base[\s-]*stock)")

_QTY = [
    re.compile(r"(?:^|[^-\w])(?:re-?order(?:ing)?|orders?|ordering|purchase|buy|place\s+an\s+order\s+(?:for|of))\s+"
               r"(?:a\s+(?:fixed\s+)?(?:batch|lot|quantity|amount)\s+of\s+|exactly\s+|a\s+fixed\s+|another\s+|in\s+)?"
               + APPROX + NUM + NOT_TIME + r"(?!\s*(?:or\s+(?:fewer|less|below)))"),
    re.compile(r"(?:order|batch|lot|reorder|replenishment|purchase)[\s-]+(?:quantity|size|amount)(?:\s*\(q\))?" + CONNECT + APPROX + NUM),
    re.compile(r"(?:batch(?:es)?|lots?|cases?|pallets?|shipments?|runs?)\s+of\s+" + APPROX + NUM),
    re.compile(NUM + r"(?:\s+(?!or\b|and\b)[a-z]+){0,3}?\s+(?:at\s+a\s+time|per\s+order|each\s+time|every\s+time|per\s+replenishment)"),
    re.compile(r"\b" + NUM + r"[\s-]+units?[\s-]+(?:batch|lot|order)s?\b"),
    re.compile(r"(?<!max )(?<!maximum )(?<!largest )(?<!biggest )orders?\s+of\s+" + APPROX + NUM + NOT_TIME),
    re.compile(r"\bby\s+" + NUM + r"\s*(?:units?|items?|pieces)\b"),
    re.compile(r"\b(?:put\s+)?(?:an?\s+)?order\s+(?:in\s+)?(?:(?:a|each|every|per|on)\s+(?:day|week|fortnight|month|monday|tuesday|"
               r"wednesday|thursday|friday|saturday|sunday)s?\s+)?"
               r"(?:be\s+|is\s+|should\s+be\s+)?for\s+(?:exactly\s+)?"
               + APPROX + NUM + NOT_TIME),  # "put an order in for 24", "one order a month for 900"
    re.compile(r"\border\s+the\s+full\s+" + NUM + NOT_TIME),
    re.compile(r"\b(?:get|ring\s+(?:\w+\s+){0,2}?for|call\s+(?:\w+\s+){0,2}?for|ask\s+(?:\w+\s+){0,2}?for|bring\s+in|buy\s+in|"
               r"deliver|delivers|send|sends)\s+(?:another\s+|exactly\s+|a\s+fresh\s+)?" + APPROX + NUM + NOT_TIME
               + r"(?!\s*(?:or\s+(?:fewer|less|below)))"),
    re.compile(r"\b(?:eoq|economic\s+order\s+quantity)(?:\s*\(q\))?" + CONNECT + APPROX + NUM + NOT_TIME),
    re.compile(r"\bqty\b\s*(?:[:=]|of|is)?\s*" + APPROX + NUM + NOT_TIME),  # "reorder pt 15, qty 40"
    re.compile(r"(?:^|\n)[ \t]*[-*\u2022]?[ \t]*order[ \t]*[:=][ \t]*" + APPROX + NUM + NOT_TIME),  # "- Order: 100 bolts"
    re.compile(r"\banother\s+" + APPROX + NUM + NOT_TIME + r"(?!\s*(?:or\s+(?:fewer|less|below)))"),  # "mill another 60"
    re.compile(r"\bstanding\s+order\s*(?::|of|for|is)?\s*" + APPROX + NUM + NOT_TIME),  # "Standing order: 24 cases, weekly"
]
_MULTIPLES = re.compile(r"multiples?\s+of\s+" + NUM)
_CAP = re.compile(
    r"(?:never\s+(?:order\s+|buy\s+)?more\s+than|no\s+more\s+than|cap(?:ped)?\s+(?:each\s+|the\s+|every\s+)?(?:orders?\s+|it\s+)?(?:at|to)"
    r"|limit(?:ed)?\s+(?:each\s+order\s+|orders?\s+|it\s+)?to|at\s+most)\s+" + NUM + r"(?=\s*(?:units?|items?)?\s*(?:per|each|a|in|at|\.|,|;|$|\)))"
)
_DAILY = re.compile(r"\b(?:every|each|per|a)\s+(?:single\s+)?(?:day|period|morning|evening|review)\b|\bdaily\b")
_EVERY_N = re.compile(r"every\s+(?:(\d+)|(two|three|four|five|six|seven|ten|fourteen)|(third|fourth|fifth|sixth|seventh|"
                      r"tenth|fourteenth|\d+(?:rd|th)))\s+days?|\bevery\s+(other\s+|second\s+)?week\b|\bweekly\b|\bevery\s+(two|2)\s+weeks\b|\bfortnightly\b|\bbi-?weekly\b|\b(?:every|each|once\s+a)\s+(fortnight)\b")
_ORDINALS = {"third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "tenth": 10, "fourteenth": 14}
_EVERY_OTHER_DAY = re.compile(r"\bevery\s+(?:other|second|2nd)\s+day\b|\balternate\s+days\b")
_MONTHLY = re.compile(r"\bonce\s+a\s+month\b|\b(?:one|an?)\s+order\s+(?:a|per|each|every)\s+month\b|\bevery\s+month\b|\beach\s+month\b|\bmonthly\s+(?:order|review|delivery|"
                      r"replenishment|schedule|cycle)|\b(?:order|review|restock|replenish)\w*\s+(?:\w+\s+){0,3}?monthly\b|"
                      r"(?:^|[.;:]\s*)monthly\b")
_EVERY_WEEKS = re.compile(r"\bevery\s+(\d+)\s+weeks\b")
_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "ten": 10, "fourteen": 14}
_RANGE_HIGH = re.compile(r"\s*(?:-|–|—|to|or)\s*\$?(\d+(?:\.\d+)?)(?!\s*(?:days?|weeks?|%))")
# a capacity the advice itself states ("your storage capacity is 80 units", "with room for 80")
_ACK_CAPACITY = re.compile(r"(?:capacity|storage|room\s+for|space\s+for|(?:holds?|takes?|fits?|accommodates?)(?!\s+(?:to|it|a\s+while|an?\s+(?:fortnight|week|month|day|year)|(?:a\s+|the\s+)?safety|time|longer|(?:only\s+)?multiples|\d+\s*(?:days?|weeks?|hours?)))\s+(?:at\s+most|up\s+to|only)?|"
                           r"(?:can|could)\s+(?:only\s+)?(?:store|hold|fit|keep|take))\D{0,25}?"
                           r"(?<![£$€¥₹])(\d+(?:\.\d+)?)(?!\s*(?:days?|weeks?|hours?|months?|years?|minutes?|%|percent|dollars|cents|runs?|trips?|deliveries|orders?|loads?|visits?|times)\b)(?=\s*(?:[^\W\d_]+\s*){0,2}(?:of\s+(?:[^\W\d_]+\s*){1,2})?(?:\.|,|;|\)|\||$|\s-|\u2013|\u2014|and\b|but\b|so\b|with\b|in\b|at\b|max\b|tops\b))|(\d+)[\s-]+units?\s+(?:of\s+)?"
                           r"(?:storage\s+)?capacity|"
                           # "your 90-case shed": a store named by how many it holds
                           r"\b(\d+)-(?!(?:foot|feet|ft|metre|meter|m|sq|square|litre|liter|l|gallon|tonne|ton|kg|cubic|year|day|week|hour|"
                           r"minute|door|seat|person|man)\b)[a-z]+\s+(?:shed|store\s?room|stock\s?room|warehouse|fridge|freezer|cooler|"
                           r"cellar|godown|shelf|rack|cupboard|cabinet|locker|tank|room|space)\b|"
                           # "your 25 kg cooler can hold"
                           r"\b(\d+)\s*(?:[a-z]+\s+)?(?:shed|store\s?room|stock\s?room|warehouse|fridge|freezer|cooler|cellar|"
                           r"shelf|rack|cupboard|cabinet|locker|tank|room|bunker|bin)\s+(?:can|could|will)\s+(?:only\s+)?"
                           r"(?:hold|take|fit|store)\b")
# an order limit the advice itself states ("the supplier's maximum order is 40 units")
_ACK_MAX_ORDER = re.compile(r"(?:max(?:imum)?|largest|biggest)\s+(?:single\s+)?order(?:\s+(?:size|quantity))?(?:\s+(?:is|of|=|:|at))+\s*"
                            + NUM + r"|(?:supplier|vendor|wholesaler|truck|van)\D{0,30}?(?:caps?|limits?)\s+(?:each\s+|every\s+)?"
                            r"orders?\s+(?:at|to)\s+" + NUM + r"|(?:van|truck|lorry|supplier|vendor|wholesaler)\D{0,20}?"
                            r"(?:carries|delivers|brings|sends|takes|ships|accepts)\s+(?:at\s+most|up\s+to|no\s+more\s+than|"
                            r"a\s+maximum\s+of)\s+" + NUM + r"|\b\w+'s\s+(?:max(?:imum)?|limit|cap)(?:\s+order)?\s+(?:is|of|=|:)\s*" + NUM
                            + r"|(?:van|truck|lorry|supplier|vendor|wholesaler)\D{0,20}?(?:carries|delivers|brings|sends|takes|ships)\s+"
                            + NUM + r"(?:\s+[a-z]+)?\s+(?:at\s+most|max(?:imum)?|tops)\b" + r"|\b(?:caps?|capped|limits?|limited)\s+(?:us\s+|each\s+|every\s+|all\s+|the\s+)*"
                            r"(?:orders?|deliveries|shipments?|at)\s+(?:at\s+|to\s+)?" + NUM + r"|(?:won't|will\s+not|doesn't|does\s+not|"
                            r"can't|cannot|don't|do\s+not)\s+(?:take|accept|ship|deliver|send|do|put)\s+(?:orders?\s+|more\s+than\s+)?"
                            r"(?:over|above|more\s+than|bigger\s+than|larger\s+than|beyond)?\s*" + NUM)
_ACK_PER_LOAD = re.compile(r"\b(?:caps?|limits?)\s+(?:each\s+|every\s+|a\s+|the\s+)?(?:orders?|drops?|deliver(?:y|ies)|shipments?|"
                           r"runs?|loads?|trips?|parcels?|batch(?:es)?|consignments?)\s+(?:at|to)\s+" + NUM + r"|\b(?:van|truck|lorry|barge|boat|ship|courier|trailer|ute|pickup|car)\b"
                           r"\D{0,20}?\b(?:takes|carries|holds|fits)\s+(?:only\s+)?" + NUM
                           + r"(?=\s*(?:[a-z]+\s+){0,2}?(?:a|per|each|every)\s+(?:shipment|trip|load|delivery|run|drop|order|crossing))"
                           r"|\b(?:tanker|truck|lorry|van|barge|boat)\b\D{0,20}?\b(?:brings|delivers)\s+(?:only\s+)?" + NUM
                           + r"(?=\s*(?:[a-z]+\s+){0,2}?(?:a|per|each|every)\s+(?:shipment|trip|load|delivery|run|drop))"
                           r"|\b(?:run|order|delivery|load|trip|shipment)\s+(?:cap|limit|max(?:imum)?)\s*:\s*" + NUM
                           + r"|\bmax_?order\"?\s*[:=]\s*" + NUM)
_ACK_PER_ORDER = re.compile(r"\b(?:limit|cap|max(?:imum)?|ceiling)\s+of\s+" + NUM + r"(?=\s*(?:[a-z]+\s+){0,2}?(?:per|a|each|an)\s+order)|"
                            r"\bonly\s+(?:ships|sells|delivers|takes|sends|supplies|does|brings)\s+" + NUM
                            + r"(?=\s*(?:[a-z]+\s+){0,2}?(?:per|a|each|an|in\s+one)\s+(?:order|delivery|trip|load|shipment))|"
                            # "sells at most 1,000 m per order", "will not take more than one parcel of 100 per order"
                            r"\b(?:(?!orders\b|buys\b)[a-z]{2,}s\s+at\s+most\s+|"  # "the mill grinds at most 2 000 kg per run"
                            r"(?:will\s+not|won't|does\s+not|doesn't|do\s+not|don't|cannot|can't)\s+(?:take|accept|sell|ship|deliver|do|"
                            r"make|send|carry|bake|produce)\s+more\s+than\s+(?:[a-z]+\s+){0,3}?)" + NUM
                            + r"(?=\s*(?:[a-z]+\s+){0,2}?(?:per|a|each|an|in\s+one)\s+(?:order|run|batch|delivery|trip|load|shipment))|"
                            r"\b(?:caps?|limits?|restricts?)\s+(?:you|us|me|them)\s+(?:at|to)\s+" + NUM
                            + r"(?=\s*(?:[a-z]+\s+){0,2}?(?:per|a|each|an)\s+order)|"
                            # "your line does 800 per batch at most"
                            r"\b(?:does|makes|produces|runs|bakes|grinds|fills|takes|ships|delivers|carries|handles)\s+" + NUM
                            + r"(?=\s*(?:[a-z]+\s+){0,2}?(?:per|a|each|an|in\s+one)\s+(?:order|run|batch|delivery|trip|load|"
                            r"shipment|parcel)\s+(?:at\s+most|max(?:imum)?|tops)\b)")
# a store that is capped ("with your storeroom capped at 80 cases")
_ACK_ROOM_CAPPED = re.compile(r"\b(?:store\s?room|stock\s?room|storage|warehouse|cellar|shelf|shelves|fridge|freezer|room|space|locker|"
                              r"cupboard|cabinet|safe|rack|tank|cage|yard|container|store)\s+"
                              r"(?:is\s+|being\s+)?(?:capped|limited|maxed(?:\s+out)?)\s+(?:at|to)\s+" + NUM
                              + r"|\b(?:licen[cs]e|permit|legal|fire|safety|storage)\s+(?:limit|cap|maximum)\s+(?:of|is)\s+" + NUM
                              + r"|(?:^|\n)[\s*>-]*(?:cold\s+room|store\s?room|stock\s?room|storage|warehouse|cellar|shelf|shelves|"
                              r"fridge|freezer|cooler|locker|tank|space|capacity)\s*:\s*" + NUM
                              + r"|\bmax_?inventory\"?\s*[:=]\s*" + NUM)  # a tool's output: {"max_inventory": 240}
_NO_POLICY = re.compile(r"\b(?:depends|it\s+is\s+hard\s+to\s+say|(?:cannot|can't)\s+(?:\w+ly\s+)?recommend|need\s+more\s+information)\b")


_CORRECTED = re.compile(r"\b\d+(?:\.\d+)?(?:\s+[a-z]+)?\s*(?:[-,.;()\u2013\u2014\u2026]+\s*)*(?:(?:no\s+wait|no|sorry|oops|typo|correction|"
                        r"actually|wait)\s*[-,.\u2013\u2014\u2026]*\s*)+(?:make\s+(?:that|it)|make\s+[sqr]\s*=|i\s+mean|rather|scratch\s+that,?)?\s*"
                        r"(\d+(?:\.\d+)?)(?=\s|[.,;:)]|$)", re.I)
_ROUNDED = re.compile(r"(\d+\.\d+)\s*(?:[a-z]+\s*){0,2}(?:\([^()\n]{0,60}\)\s*)?(?:(?:->|\u2192|=>)\s*\**\s*(?:round(?:ed)?(?:\s+up|\s+down)?\s+to\s+)?|\u2248|~|[,;]\s*(?:order|use|take|buy)\s+(?=\d)|[,;]?\s*(?:which\s+|so\s+)?(?:(?:i|we|you)'?d\s+|(?:i|we|you)\s+would\s+|"
                      r"you\s+can\s+|let's\s+)?(?:so|i\.e\.|or|rounded(?:\s+up|\s+down)?\s+to|"
                      r"round(?:ed)?\s+(?:it\s+|that\s+|this\s+)?(?:up\s+|down\s+)?to|call\s+it|say|which\s+is)\s*,?\s*"
                      r"(?:about\s+|roughly\s+)?(?:(?:order|use|take|buy)\s+)?)\s*(\d+)(?!\.?\d)", re.I)


_ROUNDED_WHOLE = re.compile(r"\b(\d+)\s*(?:[a-z]+\s*){0,2}[,;]?\s*round(?:ed)?\s+(?:it\s+|that\s+|this\s+)?(?:up\s+|down\s+)?"
                            r"to\s+(\d+)(?!\.?\d)", re.I)


# "Set s = 30 and S = 100. Actually, scratch that, make S = 110", "Every Tuesday and Friday... no, just every
# Tuesday": a role stated on both sides of the last such marker keeps only its later value (and a schedule stated
# after it replaces the one before)
_CORRECTION = re.compile(r"\b(?:scratch\s+that|no\s+wait|wait,?\s+no|on\s+second\s+thought|correction|let\s+me\s+correct|"
                         r"my\s+mistake|i\s+made\s+a\s+mistake|mistake\s+on\s+my\s+part|i\s+was\s+wrong|"
                         r"i\s+got\s+[^.;:\n]{0,30}?\bwrong\b|"
                         r"(?:sorry|oops)\b[^.\n]{0,20}?\b(?:those|these|that)\s+(?:were|was|are)\s+[^.;:\n]{0,60}?[.;:]|"
                         r"sorry\b[^.\n]{0,50}?\b(?:should\s+be|make\s+(?:it|that)|it'?s\s+actually|use)\b|"
                         r"(?:actually|no|sorry|oops)\s*[,.;:\u2026-]+\s*(?:(?:make|let'?s|just|i\s+mean|rather|scratch|it'?s|"
                         r"that\s+should)\b)|(?:\.\.\.|\u2026)\s*(?:no|actually)\b)", re.I)


def _after_correction(found: list[_Found], cut: int | None) -> list[_Found]:
    if cut is None or not any(f.pos >= cut for f in found):
        return found
    return [f for f in found if f.pos >= cut]


_MEANT_NOT = re.compile(r"[.,;\u2026\s-]*\b(?:(?:sorry,?\s+|oops,?\s+)?i\s+meant|(?:sorry|oops)[,:]?\s+(?:[a-z]+[,:]?\s+){0,2}?)"
                        r"(\d+(?:\.\d+)?)[^.\d]{0,25}?,?\s*not\s+(\d+(?:\.\d+)?)\b", re.I)
# "Edit: make the order quantity 120 instead of 150": the earlier 150 was this value, revised
_INSTEAD_OF = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)(?:\s+[a-z]+)?\s+instead\s+of\s+(?:the\s+)?(\d+(?:\.\d+)?)\b", re.I)


def _apply_meant(text: str) -> str:
    """A value corrected in place ("sorry, I meant 8, not 80"; "120 instead of 150"): the wrong one before it
    becomes the right one everywhere, and the correction phrase keeps only the right value."""
    for pattern in (_MEANT_NOT, _INSTEAD_OF):
        for m in list(pattern.finditer(text))[::-1]:
            right, wrong = m.group(1), m.group(2)
            head = re.sub(rf"(?<![\d.]){re.escape(wrong)}(?!\d|\.\d)", right, text[: m.start()])
            keep = "" if pattern is _MEANT_NOT else text[m.start():m.start(2)].rsplit("instead", 1)[0].rstrip()
            text = head + keep + text[m.end():]
    return text


def _rounded(m: re.Match) -> str:
    """ "24.4 -> 25", "31.6, so 32": a computed value and the whole number it was rounded to -> the latter (any
    whole number when the text says "round ... to": "143.6; round it to 150 since they come in bags of 50")."""
    said = re.search(r"round|\b(?:order|use|take|buy)\s+\d", m.group(0), re.I) and 0 < int(m.group(2)) <= 2 * float(m.group(1)) + 10
    if not (said or abs(float(m.group(1)) - int(m.group(2))) < 1):
        return m.group(0)
    verb = re.search(r"\b(order|use|take|buy)\s+\d+$", m.group(0), re.I)  # "56.6, so order 57": keep the verb
    return f"{verb.group(1)} {m.group(2)}" if verb else m.group(2)


_WEEKDAY_NAMES = {"mon": "monday", "tue": "tuesday", "wed": "wednesday", "thu": "thursday", "fri": "friday",
                  "sat": "saturday", "sun": "sunday"}


def _normalise(text: str) -> str:
    text = re.sub(r"\bhalf\s+a\s+dozen\b", "6", text, flags=re.I)
    text = re.sub(r"\b(?:a|one)\s+dozen\b", "12", text, flags=re.I)
    text = re.sub(r"\b(\d+)\s+dozen\b", lambda m: str(12 * int(m.group(1))), replace_number_words(text), flags=re.I)
    text = text.replace("**", "").replace("`", "")
    text = re.sub(r"^([ \t>]*)\d{1,2}[.)][ \t]+(?=[A-Za-z])", r"\1- ", text, flags=re.M)  # "1. Reorder point": a list marker
    text = re.sub(r"\d+(?:\.\d+)?(?:\s*[-+*x×/·]\s*√?\s*\d+(?:\.\d+)?)+\s*(?:=|≈)\s*(?=\d)", "", text)  # "36 + 7.68 = 43.68"
    text = _ROUNDED.sub(_rounded, text)
    text = _apply_meant(text)  # "... 80 bottles ... sorry, I meant 8 bottles, not 80" -> 8 everywhere
    text = _CORRECTED.sub(r"\1", text)  # "order 20 - no, make that 18" -> "order 18": the last value wins
    text = re.sub(r"(?<![A-Za-z])([sSQR])\*", r"\1", text)  # "s* = 3, S* = 11": the optimum's notation
    text = re.sub(r"\b(level|point|quantity|policy)\s+(?:for|from)\s+[a-z' -]{1,30}?(?::|\s+(?=be\s|is\s|should\s|of\s|at\s|=))",
                  r"\1 ", text, flags=re.I)  # "level for X: 20", "point for fan belts be set at 42"
    text = re.sub(r"\s@\s*(?=\d)", " at ", text)  # SMS: "reorder @ 9, order up 2 30"
    text = re.sub(r"\b(?:an?\s+)?([rsSQ])\s+of\s+(?=\d)", r"\1 = ", text)  # "an r of 12 and a Q of 48"
    text = re.sub(r"\bthe\s+(\d+)\s+mark\b", r"\1", text)  # "once you hit the 30 mark"
    text = re.sub(r"\bhow\s+much\s*:\s*(?=\d)", "order ", text, flags=re.I)  # "How much: 120 bags" under "When: every Monday"
    text = re.sub(r"\bmin\s*/\s*max\s*[=:]?\s*(\d+)\s*(?:and|/|,|-|to)\s*(\d+)", r"min \1, max \2", text, flags=re.I)
    text = re.sub(r"\ba\s+gross\b(?!\s+(?:margin|profit|income|revenue|weight|sales))", "144", text, flags=re.I)
    text = re.sub(r"\\(?:Rightarrow|rightarrow|implies|to)\b", "\u2192", text)  # LaTeX "27.4 \Rightarrow 28"
    text = re.sub(r"([sSQRr])\^\*", r"\1", text)  # "Q^*"
    text = re.sub(r"(?<=\d)(\s*,?\s*)not\s+\d+(?:\.\d+)?\b(?!\s*(?:or|%))", r"\1", text)  # "it should be 22, not 27"
    # "Order quantity (EOQ, rounded to a full case of 12): 48": the aside between a role and its value
    text = re.sub(r"((?:re-?order\s+point|order[\s-]+up[\s-]+to(?:\s+level)?|order\s+quantity|base[\s-]+stock))\s*\([^()\n]{0,80}\)"
                  r"\s*(?=[:=])", r"\1", text, flags=re.I)
    text = re.sub(r"\b(every|each|on)\s+(mon|tues?|weds?|thu(?:rs?)?|fri|sat|sun)\b\.?",
                  lambda m: f"{m.group(1)} " + _WEEKDAY_NAMES[m.group(2).lower()[:3]], text, flags=re.I)  # "every sat"
    text = re.sub(r"\b(?:can|could|may|might)\s+be\s+anything\s+from\s+(?=\d)", "somewhere between ", text, flags=re.I)
    text = re.sub(r"\bup\s+2\s+(?=\d)", "up to ", text, flags=re.I)
    text = re.sub(r"\breorder\s+pt\b|\bROP\b", "reorder point", text, flags=re.I)
    text = re.sub(r"\b(re)?ordr\b", r"\1order", text, flags=re.I)
    text = re.sub(r"\b(order)\s+qty\b", r"\1 quantity", text, flags=re.I)
    # "Reorder point = lead-time demand + safety stock = 21": the words of a formula between the name and its value
    text = re.sub(r"((?:re-?order\s+point|order[\s-]+up[\s-]+to(?:\s+level)?|order\s+quantity)\s*=)[^=\d\n]{1,60}=\s*(?=\d)",
                  r"\1 ", text, flags=re.I)
    text = re.sub(r"((?:re-?order\s+point|order[\s-]+up[\s-]+to(?:\s+level)?|order\s+quantity|base[\s-]+stock)\s*=)"
                  r"(?=(?:(?!\.\s)[^=\n;])*?[+×*/·√])(?:(?!\.\s)[^=\n;]){1,80}?[=≈]\s*(?=\d)", r"\1 ", text, flags=re.I)
    text = re.sub(r"(?<![A-Za-z])([sSQR])\s*[=≈]\s*[^=≈\d\n;.\\]{1,40}[=≈→]\s*(?=\d)", r"\1 = ", text)  # "S = s + EOQ ≈ 146"
    text = re.sub(r"(?<![A-Za-z])([sSQR])\s*[≈~]\s*(?=\d)", r"\1 = ", text)  # "S ≈ 110-120"
    text = re.sub(r"\b(EOQ)\s*=\s*(?:(?!\.\s)[^\n;]){1,80}?[=≈]\s*(?=\d+(?:\.\d+)?(?:[,.;\s]|$))", r"\1 = ", text,
                  flags=re.I)  # EOQ = sqrt(..) = 122, within its own sentence
    # "s = 2 x 12 + 1.645 x 3.25 x sqrt(2) = 32": a formula (an operator in it) between the name and its value
    text = re.sub(r"(?<![A-Za-z])([sSQRr])\s*=\s*(?=(?:(?!\.\s)[^=\n;\\])*?(?:[+×*/·√]|sqrt))(?:(?:(?!\.\s)[^=\n;\\]){1,80}?[=≈]\s*){1,3}?"
                  r"(?=\d+(?:\.\d+)?(?:[,.;\s]|$))", r"\1 = ", text)  # (within one sentence: "s = 21. S = 21 + 74 = 95")
    t = re.sub(r"\d+(?:\.\d+)?(?:\s*[-+*x×/]\s*\d+(?:\.\d+)?)+\s*(?:=|≈)\s*(?=\d)", "", text)  # "14 + 25 = 39" -> "39"
    t = t.replace("\u2264", "<=").replace("**", "").replace("`", "")
    t = re.sub(r"[\u2010\u2011\u2012\u2013\u2014\u2212]", "-", t)  # non-breaking, figure, en/em dash, minus
    # a markdown table row "| s | 18 |" or "| Reorder point | 20 |" -> "s = 18."
    t = re.sub(r"^[ \t]*\|?[ \t]*([A-Za-z][A-Za-z ()/'-]{0,40}?)[ \t]*\|[ \t]*(\d+(?:\.\d+)?)[ \t]*(?:units?[ \t]*)?\|?[ \t]*$",
               r"\1 = \2.", t, flags=re.M)
    t = re.sub(r"(?<![\d,.])(\d{1,2})((?:,\d\d)+),(\d{3})(?![\d,])", lambda m: m.group(0).replace(",", ""), t)  # "1,10,000"
    t = re.sub(r"(?<=\d),(?=\d{3}\b)", "", t)
    # "2.000 masks", "2.200 masks": a dot grouping thousands before a unit word (a decimal would not end in 00)
    t = re.sub(r"(?<![\d.,])([1-9]\d{0,2})\.(\d00)(?=\s+[a-z])", r"\1\2", t)
    t = re.sub(r"(?<![\d.,])(\d{1,3})[ \u00a0\u202f](\d{3})(?=\.\d+\s*(?:->|\u2192|=>))", r"\1\2", t)  # "6 909.6 -> 6 910"
    t = re.sub(r"(?<![\d.,])(\d{1,3})[ \u00a0\u202f](\d{3})(?!\d|,\d|\.\d)", r"\1\2", t)  # "1 000" (not "order 12 150 times")
    t = _ROUNDED_WHOLE.sub(r"\2", t)  # "EOQ = 4899 capsules; round down to 4800": the rounded value
    t = re.sub(r"\bbetween\s+(\d+(?:\.\d+)?)\s+and\s+(?=\d)", r"between \1 to ", t)  # "up to between 1200 and 1500": a range
    return t


# a parenthetical aside with words and no numbers right before a number ("raise the inventory position (on-hand and
# on-order) to 130"): dropped before values are bound, so it cannot split a phrase from its number; the basis and
# the schedule are read from the full text. Kept: notation such as "(s, S)" or "(S)" (no word of three letters), a
# trigger's "(or fewer)", and asides elsewhere ("Reorder point: 9 (order when the position reaches it)").
_ASIDE = re.compile(r"\((?=[^()\d]*[a-z]{3})(?![^()]*\b(?:fewer|less|below|under|inclusive|exclusive|or\s+more)\b)[^()\d\n]{3,80}\)(?=\s*(?:up\s+)?(?:to|at|of|by|=|:)?\s*\d)")


class _Extractor:
    def __init__(self, text: str):
        self.orig = _ASIDE.sub(" ", _normalise(text))
        self.low = self.orig.lower()
        self.full_low = _normalise(text).lower()
        self.used: set[int] = set()
        self.notes: list[str] = []  # choices the parser made (ranges), kept in the verdict's reason

    def take(self, m: re.Match, group: int | str) -> _Found | None:
        if isinstance(group, int) and m.group(group) is None:  # a pattern of alternatives: the one that matched
            group = next(g for g in range(1, m.re.groups + 1) if m.group(g) is not None)
        start = m.start(group)
        if start in self.used:
            return None
        self.used.add(start)
        low = float(m.group(group))
        after = _RANGE_HIGH.match(self.low, m.end(group))
        if after is None and re.search(r"between\s+(?:about\s+)?$", self.low[max(0, start - 20):start]):
            after = re.compile(r"\s+and\s+(\d+(?:\.\d+)?)").match(self.low, m.end(group))
        if after is not None:
            high = float(after.group(1))
            if high > low:  # a range: choose its midpoint (half up) and record the choice
                self.used.add(after.start(1))
                mid = math.floor((low + high) / 2 + 0.5)
                self.notes.append(f"range {low:g}-{high:g} given; used the midpoint {mid}")
                return _Found(float(mid), start)
        return _Found(low, start)

    def all(self, pattern: re.Pattern, group: int | str = 1, source: str | None = None) -> list[_Found]:
        out = []
        for m in pattern.finditer(source if source is not None else self.low):
            f = self.take(m, group)
            if f is not None:
                out.append(f)
        return out


def _distinct(found: list[_Found]) -> list[float]:
    """The different values stated for one role; "31.6, so 32" (a computed value, then rounded) is one value."""
    values = sorted({f.value for f in found})
    whole = {v for v in values if v == int(v)}
    return [v for v in values if v in whole or not any(abs(v - w) < 1 for w in whole)]


_OPTION_LABEL = re.compile(r"\b(?:option|plan|alternative|choice|scenario|policy)\s+(?:#\s*)?([a-e1-5])(?![\w.])|"
                           r"\(([a-e1-5])\)|(?:^|\n|\|)\s*([A-E])\)", re.I)
_RECOMMEND = re.compile(r"(?:recommend(?:ed|ation)?|suggest(?:ed|ion)?|go\s+with|choose|pick|prefer(?:red)?|best(?:\s+choice)?"
                        r"(?:\s+is)?|i'?d\s+take)\s*(?:is\s*)?[:\-]?\s*"
                        # the label needs its marker: "option B", "(c)", or a lone "B." at the end ("a policy" is no label)
                        r"(?:(?:option|plan|policy|choice)\s+([a-e1-5])(?![\w])|\(([a-e1-5])\)|([a-e1-5])(?=\s*(?:[.!,;]|$)))", re.I)
_RECOMMEND_AFTER = re.compile(r"\b(?:option|plan|policy|choice)\s+([a-e1-5])\s+(?:is|has|had|was|gives|gave|looks|wins|won|comes|came)\b[^.\n]{0,60}?"
                              r"\b(?:best|my\s+pick|pick|cheapest|lowest|recommend\w*|winner|choice|go\s+with|prefer\w*)",
                              re.I)
_RECOMMEND_LETTER = re.compile(r"\b(?:[Rr]ecommend(?:ed|ation)?|[Ss]uggest(?:ed|ion)?|[Gg]o\s+with|[Cc]hoose|[Pp]ick|[Pp]refer)"
                               r"\s*(?:is\s*)?:?\s*([A-E])\b(?!['\u2019])")
_REJECTED = re.compile(r"not\s+recommended|(?:don't|do\s+not|wouldn't|would\s+not)\s+recommend|advise\s+against|"
                       r"\brejected\b", re.I)


_COLUMN = {"reorder at": "s", "reorder point": "s", "reorder level": "s", "order qty": "Q", "order quantity": "Q",
           "order up to": "S", "order-up-to": "S", "order-up-to level": "S", "order up to level": "S"}


_ROW_MARK = re.compile(r"[*_`\u2190-\u21ff\u2605\u2606\u2705\u2713\u2714\u2b50\U0001F300-\U0001FAFF]")
_ROW_PICKED = re.compile(r"\brecommended\b|\bmy\s+pick\b|\bbest\b|[\u2190\u2605\u2705\u2713\u2714\u2b50]", re.I)


def _table_rows(text: str) -> str:
    """A markdown table whose header names s / S / Q columns -> one sentence per row ("Policy A: s = 10, S = 40.").

    Other columns (costs, service levels) are dropped: they are never policy values.
    """
    lines = text.splitlines()
    out, i = [], 0
    while i < len(lines):
        cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
        keys = {j: _COLUMN.get(c.lower(), c) for j, c in enumerate(cells) if c in ("s", "S", "Q", "R") or c.lower() in _COLUMN}
        if len(cells) >= 3 and keys and i + 1 < len(lines) and re.match(r"^\s*\|?\s*:?-{2,}", lines[i + 1]):
            i += 2
            rows = []
            while i < len(lines) and "|" in lines[i]:
                rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            picked = [r for r in rows if _ROW_PICKED.search(r[0]) and not _REJECTED.search(r[0])]
            word_label = len(picked) == 1 and not re.fullmatch(
                r"(?:option|plan|alternative|choice|scenario|policy)?\s*[a-e1-5]\W*", _ROW_MARK.sub("", picked[0][0]).strip(), re.I)
            for row in picked if word_label else rows:  # a row marked under a word label ("Balanced ⭐"): that row alone
                parts = [f"{keys[j]} = {row[j]}" for j in keys if j < len(row)]
                label = _ROW_MARK.sub("", row[0]).strip()
                label = re.sub(r"\s*\([^()]*\)$", "", label).strip() or row[0]  # "B (recommended)" -> "B"
                out.append(f"Policy {label}: " + ", ".join(parts) + ".")
                if _ROW_PICKED.search(row[0]) and not _REJECTED.search(row[0]):
                    named = re.match(r"(?:option|plan|alternative|choice|scenario|policy)\s", label, re.I)
                    out.append(f"Recommended: {'' if named else 'policy '}{label}.")  # the row the text marks as its pick
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


_REVISED = re.compile(r"\binstead\b|\b(?:update|edit|revised|revision|correction)\b\s*:|\bon\s+second\s+thought|"
                      r"\bactually\b|\bchanged?\s+my\s+(?:mind|recommendation)", re.I)


def _sentence_end(text: str, pos: int) -> int:
    m = re.compile(r"[.!?](?:\s|$)|\n").search(text, pos)
    return m.end() if m else len(text)


def recommended_part(text: str) -> tuple[str, str]:
    """The part of an advice text that holds the recommended policy, and a note on the choice ("" if none).

    "Option A: s=10, S=40. Option B: s=15, S=50. I recommend option B." -> the text before the first option plus
    option B's part; sentences that call a policy "not recommended" are dropped. Without a recommendation
    among several options the whole text is kept (and two values for one role stay "unparseable").
    """
    text = text.replace("**", "")  # "go with **Option C**": emphasis is no part of a label
    labels = [(m.start(), next(g for g in m.groups() if g).lower()) for m in _OPTION_LABEL.finditer(text)]
    rec = [m for m in _RECOMMEND.finditer(text)] + [m for m in _RECOMMEND_AFTER.finditer(text)] + \
        [m for m in _RECOMMEND_LETTER.finditer(text)]
    names = {n for _, n in labels}
    if len(names) >= 2:
        picks = [(r, next(g for g in r.groups() if g).lower()) for r in rec]
        # a revised pick ("Update: ... go with option C instead") overrides the first one; else the first stands
        revised = sorted((pr for pr in picks if _REVISED.search(text[max(0, pr[0].start() - 120):
                                                                    _sentence_end(text, pr[0].end())])),
                         key=lambda pr: pr[0].start())
        for _pick, chosen in revised[::-1] + picks:
            if chosen not in names:
                continue
            inside = lambda pos: any(q.start() <= pos < q.end() for q in rec)  # noqa: E731
            defs = [(pos, n) for pos, n in labels if not inside(pos)]
            starts = [pos for pos, n in defs if n == chosen]
            if not starts or not defs:
                continue
            start = starts[0]
            later = [pos for pos, n in defs if pos > start and n != chosen] + \
                [q.start() for q, n in picks if q.start() > start and n != chosen]  # another option's pick ends it
            end = min(later) if later else len(text)
            return text[:defs[0][0]] + " " + text[start:end], f"option {chosen} of {len(names)} is the recommended one"
    parts = re.split(r"(?<=[.!?])\s+|\n+", text)
    kept = [p for p in parts if not _REJECTED.search(p)]
    if len(kept) < len(parts) and re.search(r"\d", " ".join(kept)):
        return " ".join(kept), "a policy marked as not recommended was left out"
    return text, ""


# "s = 20", "S: 60", and a symbol with a verb: "S comes out at 42", "s works out to 27", "Q should be 50"
_SYMBOL_IS = (r"\s*(?:=|:|\s(?:comes?|came|works?|worked)\s+(?:out\s+)?(?:at|to)|\s(?:should|would|will)\s+be|\sis(?:\s+set\s+(?:at|to))?|"
              r"\s(?:stays|remains)(?:\s+(?:unchanged\s+)?at)?)"
              r"\s*(?:about\s+|around\s+|roughly\s+)?")


def _last_stated(x: _Extractor, pattern: re.Pattern, before: int | None) -> int | None:
    """The last limit `pattern` finds (its first matched group), its number marked as used; else `before`."""
    for m in pattern.finditer(x.low):
        g = next(i for i in range(1, len(m.groups()) + 1) if m.group(i))
        before = int(float(m.group(g)))
        x.used.add(m.start(g))
    return before


def normalise_advice(text: str) -> str:
    """The advice as the parser reads it (numbers in digits, formulas collapsed to their values), lower-cased."""
    return _normalise(replace_number_words(to_english(text or ""))).lower()


# "when it falls to 20 or below", "at 6 or fewer", "when you reach 15": the trigger includes its level
_AT_OR_BELOW = re.compile(r"or\s+(?:less|fewer|below|lower|under)\b|at\s+or\s+below|\breach\w*|\bhits?\b|down\s+to\b|"
                          r"\b(?:falls?|drops?|gets?|goes|comes?\s+down)\s+to\b|<=")


# a hedge ("maybe 20, maybe 30", "hard to tell"): the rules may still read a stated policy, the fallback does not
_HEDGED = re.compile(r"\b(?:maybe|perhaps|hedge|hard\s+to\s+(?:say|tell)|not\s+sure|unsure|can'?t\s+tell|cannot\s+tell)\b")


def _learned_reading(text: str, rules: ParsedPolicy, capacity: int | None) -> ParsedPolicy | None:
    """Where the rules found no policy, the learned advice model's roles, when it is sure of each (else None)."""
    from agents.policy_learned import learned_advice

    low = normalise_advice(recommended_part(_table_rows(replace_number_words(text)))[0])
    if _NO_POLICY.search(low) or _HEDGED.search(low):
        return None
    roles = learned_advice().roles(low)
    if not roles:
        return None
    r = {k: int(round(v)) for k, v in roles.items()}
    s, S, Q = r.get("s"), r.get("S"), r.get("Q")
    period = _period(low)
    if s is not None and (S is not None) != (Q is not None):
        s_eff = s + 1 if _AT_OR_BELOW.search(low) else s
        kind, params = ("ss", {"s": s_eff, "S": S}) if S is not None else ("sq", {"s": s_eff, "Q": Q})
        if (S is not None and S < s_eff) or (Q is not None and Q <= 0):
            return None
    elif s is None and S is not None and Q is None:
        kind, params = ("periodic", {"T": period, "S": S}) if period and period > 1 else ("base_stock", {"S": S})
    elif s is None and Q is not None and S is None and period:
        kind, params = ("periodic", {"T": period, "Q": Q}) if period > 1 else ("constant", {"q": Q})
    else:
        return None
    basis = "position" if kind == "constant" else rules.basis
    note = "read by the learned advice model: " + ", ".join(f"{k} = {v:g}" for k, v in roles.items())
    if capacity is not None and max(params.get("s", 0), params.get("S", 0)) > capacity:
        return ParsedPolicy("infeasible", text, kind=kind, basis=basis, params=params,
                            reason=f"{note}; a level above the capacity ({capacity})")
    return ParsedPolicy("ok", text, kind=kind, params=params, basis=basis, reason=note,
                        policy=build_policy(kind, params, basis), stated_s=s)


def parse_policy(text: str, capacity: int | None = None, max_order: int | None = None) -> ParsedPolicy:
    """Parse one advice text; `capacity` resolves "order up to capacity" and checks feasibility. The phrase rules
    first; where they see several values for one role, the advice's closing statement alone (a "Final policy"
    section, or the prose around a table of alternatives) when it states a whole policy; where they find no
    policy, the learned advice model (`agents.policy_learned`) when it is sure."""
    said = _json_as_words(text or "") or _formula_as_words(text or "") or _shorthand_as_words(text or "") or \
        _code_as_words(text or "") or _branch_as_words(text or "")
    if _K_SUFFIX.search(said or text or ""):  # "reorder at 1,5k litres and order 4k each time"
        said = _K_SUFFIX.sub(lambda m: f"{float(m.group(1).replace(',', '.')) * 1000:g}", said or text)
    rules = _parse_rules(said or text, capacity, max_order)
    if said is not None:
        rules = replace(rules, text=text)
    if rules.status == "unparseable" and rules.reason.startswith(_SEVERAL_VALUES):
        closing = _closing_statement(text or "", capacity, max_order)
        if closing is not None:
            return closing
    if rules.status != "unparseable" or not LEARNED_ADVICE or not rules.reason.startswith(_MISSING_A_PHRASE):
        return rules
    return _learned_reading(text or "", rules, capacity) or rules


# a tool's JSON answer ('{"policy": "sS", "s": 18, "S": 60, "basis": "inventory_position"}'): its keys name the roles
_JSON_ROLES = {"s": "reorder point", "reorder_point": "reorder point", "rop": "reorder point",
               "reorder_level": "reorder point", "S": "order up to", "order_up_to": "order up to",
               "order_up_to_level": "order up to", "base_stock_level": "order up to", "target_level": "order up to",
               "Q": "order quantity", "order_quantity": "order quantity", "lot_size": "order quantity",
               "every_days": "every {} days", "review_period_days": "every {} days", "review_period": "every {} days",
               "max_inventory": "the capacity is {} units", "capacity": "the capacity is {} units",
               "max_order": "the maximum order is {} units", "order_qty": "order quantity", "reorder_qty": "order quantity",
               "order_up_to_point": "order up to",
               "review_every_days": "every {} days", "review_interval_days": "every {} days", "review_days": "every {} days"}
_JSON_BASIS = {"inventory_position": "based on the inventory position", "position": "based on the inventory position",
               "on_hand": "based on on-hand stock only", "on-hand": "based on on-hand stock only"}


def _json_as_words(text: str) -> str | None:
    """The policy in a JSON object as the sentence the phrase rules read, or None when there is no such object."""
    data, start, end = None, -1, -1
    for open_, close in (("{", "}"), ("[", "]")):  # an object, or a list of options
        start, end = text.find(open_), text.rfind(close)
        if 0 <= start < end:
            try:
                data = json.loads(text[start:end + 1])
                break
            except ValueError:
                data = None
    if data is None:
        return None
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, str) and node.lstrip().startswith("{"):  # a tool call's arguments, a JSON string
            try:
                node = json.loads(node)
            except ValueError:
                return
        if isinstance(node, list) and sum(isinstance(i, dict) and i.get("recommended") is True for i in node) == 1:
            node = [i for i in node if isinstance(i, dict) and i.get("recommended") is True]  # the option marked
        if isinstance(node, dict):
            for key, value in node.items():
                role = _JSON_ROLES.get(str(key)) or _JSON_ROLES.get(str(key).lower() if len(str(key)) > 1 else "")
                if role and isinstance(value, (int, float)) and not isinstance(value, bool):
                    found.append(role.format(value) if "{}" in role else f"{role} {value}")
                elif str(key).lower() == "basis" and str(value).lower() in _JSON_BASIS:
                    found.append(_JSON_BASIS[str(value).lower()])
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(data)
    if not any(not f.startswith(("based on", "the capacity", "the maximum")) for f in found):
        return None
    return text[:start] + ". ".join(found) + "." + text[end + 1:]  # the prose around it still counts


# an (s, S) rule written as code: Python "if position <= 1200: return 4000 - position", SQL "CASE WHEN shelf_count
# <= 10 THEN 40 - shelf_count", a spreadsheet "=IF(B7<=25, 100-B7, 0)", LaTeX "if $IP_t \le 14$, order $50 - IP_t$"
_FORMULA = re.compile(r"\b(?:if|when)\s*\(?\s*\$?\s*(?P<var>[A-Za-z_][\w]*)\s*\$?\s*(?:<=|\u2264|\\le(?:q)?\b|<)\s*\$?\s*"
                      r"(?P<s>\d+(?:\.\d+)?)(?P<rest>[^\n]{0,80}?\n?[^\n]{0,80}?)\b(?P<S>\d+(?:\.\d+)?)\s*-\s*\$?\s*(?P=var)\b",
                      re.IGNORECASE)
# shorthand a consultant uses for a whole rule: a two-bin system ("two-bin, 15 per bin": s = Q = the bin), ordering
# only once the stock has run out (s = 0), and a solver's state table ("state 0..14 -> order up to 45": s = 14)
_TWO_BIN = re.compile(r"\b(?:two|2)\s+bins\s+of\s+(\d+)\b()|"
                      r"\btwo[\s-]bin\b[^.\n]{0,60}?\b(\d+)\s*(?:\w+\s+)?(?:per|in each|in every|each|a)\s+bin\b|"
                      r"\b(\d+)\s*(?:\w+\s+)?(?:per|in each|each)\s+bin\b[^.\n]{0,60}?\btwo[\s-]bin\b", re.IGNORECASE)
_RUN_OUT_FIRST = re.compile(r"\b(?:don'?t|do\s+not|never)\s+(?:re)?order\s+(?:until|till|before)\s+(?:the\s+last\s+(?:one|\w+)(?:'s|\s+is|\s+has)"
                            r"\s+(?:gone|sold|been\s+sold)|you(?:'ve|\s+have)\s+(?:run|sold)\s+out)\s*,?\s*(?:and\s+)?then\s+(?:order|get|buy)\s+"
                            r"(\d+)|"
                            r"\b(?:only\s+)?(?:re)?order\s+(?:only\s+)?(?:when|once|after)\s+you(?:'ve|\s+have)\s+sold\s+the\s+(?:very\s+)?"
                            r"last\s+(?:one|\w+)\s*,?\s*(?:and\s+)?then\s+(?:order|get|buy)\s+(\d+)|"
                            r"\b(?:only\s+)?(?:re)?order\s+(?:only\s+)?(?:when|once|after)\s+(?:you(?:'ve| have)?|you're|the stock has)"
                            r"\s+(?:completely\s+|fully\s+|totally\s+)?(?:run|ran)\s+out\b(?:\s+of\s+\w+)?\s*,?\s*(?:and\s+)?then\s+"
                            r"(?:order|get|buy)\s+(\d+)", re.IGNORECASE)
_STATE_TABLE = re.compile(r"(?:\b(?:state|inventory|stock|position|x)\s*=?\s*|(?:^|\n)[ \t]*\|[ \t]*)0\s*(?:\.\.|-|\u2013|to)\s*(\d+)\s*"
                          r"(?:->|\u2192|=>|:|\|)\s*"
                          r"order\s+up\s+to\s+(\d+)", re.IGNORECASE)


def _shorthand_as_words(text: str) -> str | None:
    m = _TWO_BIN.search(text)
    if m:
        n = next(g for g in m.groups() if g)
        return f"When the stock falls to {n}, order {n}."  # the first bin empty: the second bin's n are left
    m = _RUN_OUT_FIRST.search(text)
    if m:
        return f"When the stock falls to 0, order {next(g for g in m.groups() if g)}."
    m = _STATE_TABLE.search(text)
    if m and int(m.group(2)) > int(m.group(1)):
        return f"When the stock falls to {m.group(1)}, order up to {m.group(2)}."  # the states that order
    return None


_K_SUFFIX = re.compile(r"(?<![\w.,])(\d{1,3}(?:[.,]\d)?)k\b")
_ON_HAND_VAR = re.compile(r"shelf|on_?hand|in_?stock|stock_?count|onhand", re.IGNORECASE)


# a unified diff of a config ("-reorder_point = 20 / +reorder_point = 24"): the removed lines are gone
_DIFF = re.compile(r"^(?:---\s+a/|\+\+\+\s+b/|@@\s)", re.M)
# a config line ("reorder_point = 24", "order_qty: 60") whose key names a role
_CONFIG_LINE = re.compile(r"^[ \t]*(?:(?:const|let|var|final|static|int|double|float|export|pub|val)[ \t]+)*[\"']?([A-Za-z_]+)[\"']?"
                          r"(?:[ \t]*:[ \t]*[A-Za-z_]\w*)?[ \t]*[=:][ \t]*(\d+(?:\.\d+)?)[ \t,;]*$", re.M)  # "REORDER_POINT: u32 = 30;"
_CODE_FENCE = re.compile(r"```[^\n]*\n.*?```", re.S)
_COMMENT_LINE = re.compile(r"^[ \t]*(?://|#|--|/\*|\*)[ \t]*([^\d\n]*[A-Za-z][^\d\n]*)$", re.M)
# a pick marked on one line of a list: "2) s=130, S=1,500   <- go with this one"
_PICK_MARK = re.compile(r"^[ \t]*(?:\d+[.)]|[-*\u2022]|\(?[a-z]\))?[ \t]*(.*?\d.*?)[ \t]*(?:<-+|<=+|\u2190|\u27f5)[ \t]*"
                        r"(?:go\s+with|pick|choose|use|take|recommended|my\s+pick|this\s+one|best)", re.I | re.M)
_CSV_ROLES = {"s": "reorder point", "S": "order up to", "Q": "order quantity"}


def _code_as_words(text: str) -> str | None:
    """A policy written as data rather than prose, as the sentence the phrase rules read (None when it is not):
    a diff of a config (only its kept and added lines count), config lines ("reorder_point = 24", "order_qty: 60"), a CSV whose
    header names s / S / Q columns, or a list with one line marked as the pick ("<- go with this one")."""
    pick = _PICK_MARK.findall(text)
    if len(pick) == 1 and len(re.findall(r"^[ \t]*(?:\d+[.)]|[-*\u2022])", text, re.M)) >= 2:
        return pick[0]
    if _DIFF.search(text):
        kept = [ln for ln in text.splitlines() if not ln.startswith("-") and not _DIFF.match(ln)]
        text = "\n".join(ln[1:] if ln.startswith("+") else ln for ln in kept)
    lines = text.strip().splitlines()
    if len(lines) >= 2 and lines[0].count(",") >= 2:
        head = [c.strip() for c in lines[0].split(",")]
        if any(c in _CSV_ROLES for c in head):
            out = []
            for row in lines[1:]:
                cells = dict(zip(head, (c.strip() for c in row.split(",")), strict=False))  # a short row leaves its last cells out
                said = [f"{_CSV_ROLES[k]} {v}" for k, v in cells.items() if k in _CSV_ROLES and re.fullmatch(r"\d+(?:\.\d+)?", v)]
                basis = _JSON_BASIS.get(cells.get("basis", "").lower())
                out.append(", ".join(said + ([basis] if basis else [])) + ".")
            return " ".join(out)
    # named keys only, two or more: "S = 60" alone is a line of a worked answer, not a config; "reorderPoint" too
    found = [(_JSON_ROLES.get(re.sub(r"(?<=[a-z])(?=[A-Z])", "_", k).lower()), v) for k, v in _CONFIG_LINE.findall(text)
             if len(k) > 1]
    said = [role.format(v) if "{}" in role else f"{role} {v}" for role, v in found if role]
    if len(said) < 2:
        return None
    notes = " ".join(c.strip(" */") + "." for c in _COMMENT_LINE.findall(text))  # "// based on the shelf count only"
    prose = _CODE_FENCE.sub(" ", text) if _CODE_FENCE.search(text) else ""  # "Use the shelf count only" after the code
    return ". ".join(said) + ". " + notes + " " + re.sub(r"\d", "", prose)


# a shell test and an order flag: '[ "$stock" -le 12 ] ... place_order --qty 40'
_SHELL_TEST = re.compile(r"\[\s*\"?\$?\{?([A-Za-z_]\w*)\}?\"?\s+-(le|lt)\s+(\d+)\s*\]")
_SHELL_QTY = re.compile(r"--(?:qty|quantity|amount|units)[=\s]+(\d+)")
# a fixed quantity as a conditional expression: "stock <= 6 ? 18 : 0"
_TERNARY_Q = re.compile(r"\b(?P<var>[A-Za-z_]\w*)\s*(?P<op><=|<)\s*(?P<s>\d+)\s*\?\s*(?P<Q>\d+)\s*:\s*0\b")
# a branch that returns a fixed quantity: "if position <= 22 { return 70 }" (an (s, Q) rule)
_RETURN_Q = re.compile(r"\bif\s*\(?\s*(?P<var>[A-Za-z_]\w*)\s*(?P<op><=|<)\s*(?P<s>\d+)\s*\)?\s*(?:\{|:|then)?\s*\n?\s*"
                       r"return\s+(?P<Q>\d+)\b", re.IGNORECASE)


def _branch_as_words(text: str) -> str | None:
    """A rule that orders a fixed quantity, written as code (a shell script, a function), as words; the basis is the
    variable's name or the prose and comments around it."""
    m, q = _SHELL_TEST.search(text), _SHELL_QTY.search(text)
    if m and q:
        var, s = m.group(1), int(m.group(3)) - (1 if m.group(2) == "lt" else 0)
        said = f"When the {var} falls to {s}, order {q.group(1)}."
        return said + " " + text[:m.start()] + " " + text[q.end():]
    m = _RETURN_Q.search(text) or _TERNARY_Q.search(text)
    if m:
        s = int(m.group("s")) - (1 if m.group("op") == "<" else 0)
        return f"When the {m.group('var')} falls to {s}, order {m.group('Q')}. " + text[m.end():]
    return None


# the same rule as a conditional expression: "shelfCount <= 10 ? 45 - shelfCount : 0" (C#, Dart, JS, Swift)
_TERNARY = re.compile(r"\b(?P<var>[A-Za-z_]\w*)\s*(?:<=|<)\s*(?P<s>\d+(?:\.\d+)?)\s*\?\s*(?P<S>\d+(?:\.\d+)?)\s*-\s*(?P=var)\b")


def _formula_as_words(text: str) -> str | None:
    """An (s, S) rule in code as the sentence the phrase rules read (None when there is none): the variable's
    name gives the basis (a shelf or on-hand count is on-hand; anything else, e.g. a position, is the position)."""
    m = _FORMULA.search(text) or _TERNARY.search(text)
    if m is None or float(m.group("S")) <= float(m.group("s")):
        return None
    var = m.group("var")
    basis = "on-hand stock only" if _ON_HAND_VAR.search(var) and "order" not in var.lower() else "inventory position"
    if basis == "inventory position" and not re.search(r"pos|ip\b|pipeline|total|order", var, re.I) \
            and _ON_HAND.search(text.lower()):
        basis = "on-hand stock only"  # "count = physical_count()  # shelf only, ignore open orders"
    return (f"{text[:m.start()]} When the {basis} falls to {m.group('s')}, order up to {m.group('S')}. "
            f"{text[m.end():]}")


_SEVERAL_VALUES = "two different values for the"
# the start of a closing statement: "### Final policy", "Recommended policy:", "**Rule**", "Bottom line:",
# "Edit: make the order quantity 120", "TL;DR"
_CLOSING_HEAD = re.compile(r"^[ \t>#*_-]*(?:(?:my\s+|the\s+|your\s+)?final\b|recommended\b|(?:my\s+)?recommendation\b|"
                           r"(?:the\s+)?rule\b|bottom\s+line\b|tl;?\s?dr\b|in\s+short\b|in\s+summary\b|summary\b|"
                           r"what\s+to\s+do\b|(?:edit|update)\s*:|so\s*:)", re.I | re.M)
# a correction of the advice itself: "Actually, ... make the reorder point 35 instead", "Sorry, I mixed up your two
# products: it should be ...", "sorry typo: reorder pt 12"
_ADVICE_CORRECTION = re.compile(r"(?:^|[.;!?]\s+|\n)\W*(?:actually|sorry|correction|oops|on second thought|scratch that|hold on|hang on|"
                                r"my mistake|let me correct|i mean|wait|update\W|i\s+mistyped|typo\W)", re.I)
_BOLD = re.compile(r"\*\*([^*\n]{6,200})\*\*")
# a line led by a bold label that names the answer: "**Suggested policy:** ...", "**Rule:** ...", "**Policy**: ..."
_BOLD_LABEL = re.compile(r"^[ \t>#*_-]*\*\*[^*\n]{0,30}?\b(?:policy|rule|recommendation|suggestion|answer|plan)\s*:?\*\*\s*:?"
                         r"[ \t]*([^\n]*\d[^\n]*)$", re.I | re.M)
_TABLE_LINE = re.compile(r"^[ \t]*\|.*$\n?", re.M)


def _closing_statement(text: str, capacity: int | None, max_order: int | None) -> ParsedPolicy | None:
    """Where the whole text names several values for one role (the working, the options, a first try), the part
    that closes it: the last closing section, else the prose without its table of alternatives, when that part
    alone states a whole policy. The capacity and maximum order stated anywhere in the text still apply to it."""
    inherited = _stated_limits(_Extractor(recommended_part(_table_rows(replace_number_words(to_english(text))))[0]))
    heads = list(_CLOSING_HEAD.finditer(text))
    parts = []
    if heads and heads[-1].start() > 0:
        head = heads[-1]
        # a summary restates values the working reached; one with new values contradicts it (no policy), unless
        # it says it revises them ("Edit: make it 120")
        known = None if re.search(r"edit|update", head.group(0), re.I) else _numbers(text[:head.start()])
        parts.append((text[head.start():], known, "read the closing statement (the working before it names other values)"))
    if re.search(r"^[ \t]*\|?[ \t]*:?-{3,}", text, re.M):
        parts.append((_TABLE_LINE.sub("", text), None, "read the prose (the table lists alternatives)"))
    labelled = list(_BOLD_LABEL.finditer(text))
    if labelled:  # "**Suggested policy:** when your stock falls to 26 hoods, order 14 more."
        parts.append((labelled[-1].group(1), None, "read the labelled policy line (the working before it names other values)"))
    bold = [m.group(1) for m in _BOLD.finditer(text) if len(re.findall(r"\d+", m.group(1))) >= 2]
    if len(bold) == 1:  # "... so I'd order in boxes of 500 instead: **reorder at 900 cones, order 1,000 (two boxes)**"
        parts.append((bold[-1], None, "read the last bold statement (the working before it names other values)"))
    fixes = list(_ADVICE_CORRECTION.finditer(text))
    if fixes and fixes[-1].start() > 0:
        after = text[fixes[-1].start():]
        parts.append((after, None, "read the correction (the values before it are replaced)"))
        merged = _merge_correction(text[:fixes[-1].start()], after, capacity, max_order, inherited)
        if merged is not None:
            parts.append((merged, None, "read the correction with the values it keeps"))
    for part, known, note in parts:
        got = _parse_rules(part, capacity, max_order, inherited)
        stated = [got.stated_s, got.params.get("S"), got.params.get("Q")]
        if known is not None and any(v is not None and v not in known for v in stated):
            continue
        if got.status in ("ok", "infeasible"):
            got.text, got.reason = text, "; ".join(r for r in (got.reason, note) if r)
            return got
    return None


def _merge_correction(before: str, after: str, capacity: int | None, max_order: int | None,
                      inherited: tuple[int | None, int | None]) -> str | None:
    """A correction that restates one value ("reorder pt 10, qty 30. sorry typo: reorder pt 12"): the policy before
    it with that value replaced, as words the rules read (None when either part is not that simple)."""
    first = _parse_rules(before, capacity, max_order, inherited)
    fix = _Extractor(normalise_advice(after))
    if first.status != "ok" or first.kind not in ("ss", "sq"):
        return None
    s, S, Q = first.stated_s, first.params.get("S"), first.params.get("Q")
    numbers = re.findall(r"\d+(?:\.\d+)?", fix.low)
    if len(numbers) > 1:  # "... should be 22, not 27. The order quantity stays at 60": a kept value restated
        numbers = [n for n in numbers if float(n) not in {float(v) for v in (s, S, Q) if v is not None}]
    if len(numbers) != 1:
        return None
    value = numbers[0]
    if re.search(r"reorder|trigger|\bs\s*=|\brop\b|falls? to|drops? to|down to", fix.low):
        s = value
    elif first.kind == "ss" and re.search(r"up\s+to|\bS\s*=|target|max(?:imum)?\s+level", fix.orig):
        S = value
    elif first.kind == "sq" and re.search(r"quantity|\bqty\b|\bQ\s*=|\border\s+\d", fix.orig, re.I):
        Q = value
    else:
        return None
    return f"Reorder point {s}, order up to {S}." if first.kind == "ss" else f"Reorder point {s}, order quantity {Q}."


def _numbers(text: str) -> set[int]:
    """The whole numbers a text states (as the parser reads them: number words and formulas resolved)."""
    return {int(round(float(v))) for v in re.findall(r"\d+(?:\.\d+)?", normalise_advice(text))}


#: the learned fallback on (experiments and tests switch it off to read the rules alone)
LEARNED_ADVICE = True
# the rules' verdicts where a number was in a phrase they do not know; never where they saw two values for one
# role (options without a pick, contradictions) or a rule that needs the capacity: those stay unparseable
_MISSING_A_PHRASE = ("no ordering rule with numbers", "a reorder point but no order quantity",
                     "an order quantity but no rule for when to order")


# "If tourists come, reorder at 40 ... If the ships skip us, 25 and 60 ... let me know which scenario you expect":
# two or more policies under conditions, the choice left to the manager (no pick, so no policy)
_IF_LED = re.compile(r"(?:^|\n|[.!?]\s)\s*(?:[-*\u2022]|\d+[.)])?\s*(?:\*\*)?(?:if|when|in\s+case)\b(?:\*\*)?[^\n.]*\d")
_LEFT_OPEN = re.compile(r"\b(?:depends\s+on|which\s+(?:scenario|case|one)\s+(?:you|do\s+you)|let\s+me\s+know\s+which|"
                        r"firm\s+it\s+up|your\s+call)\b")


def _conditional_alternatives(low: str) -> bool:
    return len(_IF_LED.findall(low)) >= 2 and bool(_LEFT_OPEN.search(low))


def _stated_limits(x: _Extractor) -> tuple[int | None, int | None]:
    """The capacity and the maximum order the advice itself states (their numbers marked as used)."""
    low = x.low
    stated_capacity = None
    for m in _ACK_CAPACITY.finditer(low):
        g = next(i for i in range(1, len(m.groups()) + 1) if m.group(i))
        if re.search(r"(?:up\s+to|fill(?:\s+up)?\s+to|order\s+to)\s+(?:the\s+|your\s+)?(?:full\s+)?$",
                     low[max(0, m.start() - 20):m.start()]):
            continue  # "order up to the capacity of 80": an order-up-to level, not only a remark
        stated_capacity = int(float(m.group(g)))
        x.used.add(m.start(g))
    stated_capacity = _last_stated(x, _ACK_ROOM_CAPPED, stated_capacity)
    stated_max_order = None
    for pattern in (_ACK_MAX_ORDER, _ACK_PER_LOAD, _ACK_PER_ORDER):
        stated_max_order = _last_stated(x, pattern, stated_max_order)
    return stated_capacity, stated_max_order


def _parse_rules(text: str, capacity: int | None = None, max_order: int | None = None,
                 inherited: tuple[int | None, int | None] = (None, None)) -> ParsedPolicy:
    """The phrase rules alone (on the text read through English when it is written in another language).
    `inherited`: the capacity and maximum order stated elsewhere in the advice, when this is a part of it."""
    text = to_english(text or "")
    part, choice = recommended_part(_table_rows(replace_number_words(text)))
    x = _Extractor(part)
    if choice:
        x.notes.append(choice)
    low = x.low
    full = x.full_low  # asides included: "(on-hand only)" names the basis
    if not choice and _conditional_alternatives(low):
        return ParsedPolicy("unparseable", text, reason="alternatives for different conditions, none picked")
    position = [m for m in _POSITION.finditer(full)
                if not re.search(r"\b(?:not|ignore|ignoring|excluding|without|never mind|don'?t count|do not count|no need to count|leave out)\b[^.;:]{0,35}$", full[max(0, m.start() - 45):m.start()])
                and not re.match(r"\s*(?:\w+\s+){0,2}?(?:are|is)?\s*(?:ignored|excluded|not\s+counted|left\s+out)\b", full[m.end():])]
    basis = "on_hand" if _ON_HAND.search(full) and not position else "position"  # "ignore anything on order": on hand

    stated_capacity, stated_max_order = _stated_limits(x)
    stated_capacity = stated_capacity if stated_capacity is not None else inherited[0]
    stated_max_order = stated_max_order if stated_max_order is not None else inherited[1]
    if capacity is None and stated_capacity is not None:
        capacity = stated_capacity

    # -- notation (case-sensitive: s vs S) -------------------------------------------------------------------------
    trig: list[_Found] = []
    upto: list[_Found] = []
    qty: list[_Found] = []
    kind_hint: str | None = None
    for m in re.finditer(r"\(\s*s\s*,\s*S\s*\)[^()\d]{0,40}\(\s*" + NUM + r"\s*,\s*" + NUM + r"\s*\)", x.orig):
        trig += [f for f in [x.take(m, 1)] if f]
        upto += [f for f in [x.take(m, 2)] if f]
    for m in re.finditer(r"\(\s*[sRr]\s*,\s*Q\s*\)[^()\d]{0,40}\(\s*" + NUM + r"\s*,\s*" + NUM + r"\s*\)", x.orig):
        trig += [f for f in [x.take(m, 1)] if f]
        qty += [f for f in [x.take(m, 2)] if f]
    trig += x.all(re.compile(r"(?<![A-Za-z'\u2019])[sRr]" + _SYMBOL_IS + NUM), source=x.orig)
    upto += x.all(re.compile(r"(?<![A-Za-z'\u2019])S" + _SYMBOL_IS + NUM), source=x.orig)
    qty += x.all(re.compile(r"(?<![A-Za-z'\u2019])Q" + _SYMBOL_IS + NUM), source=x.orig)

    # -- phrases ------------------------------------------------------------------------------------------------------
    for m in _TRIGGER.finditer(low):
        f = x.take(m, 4)
        if f is None:
            continue
        f.strict = bool(m.group("lt")) and not m.group("orless")
        if m.group("at") and re.search(r"\b(?:point|level|trigger)\s*$", low[:m.start()]):
            f.strict = None  # "the reorder point stays at 30": the point's value, not "when stock falls to 30"
        if re.search(r"\b(?:demand|sales|usage|consumption)\s*$", low[:m.start()]):
            x.used.discard(f.pos)  # "demand is exactly 85 per day": how much sells, no trigger
            continue
        trig.append(f)
    for f in x.all(_TRIGGER_HIT):
        f.strict = False
        trig.append(f)
    gone = _TRIGGER_GONE.search(low)
    if gone and not trig:
        trig.append(_Found(0.0, gone.start(), strict=False))
    trig += x.all(_REORDER_AT) + x.all(_TRIGGER_AT)
    for f in x.all(_TRIGGER_BARE_LT) + x.all(_TRIGGER_NOUN_LT) + x.all(_TRIGGER_LEAD_LT) + x.all(_TRIGGER_HAVE_LT):
        f.strict = True
        trig.append(f)
    for f in x.all(_TRIGGER_ORLESS) + x.all(_TRIGGER_IS_ORLESS) + x.all(_TRIGGER_LEFT) + x.all(_TRIGGER_IS_ABOUT):
        f.strict = False
        trig.append(f)
    for m in _TRIGGER_SYMBOL.finditer(low):
        f = x.take(m, 2)
        if f:
            f.strict = m.group("op") == "<"
            trig.append(f)
    for m in _MIN_MAX.finditer(low):
        trig += [f for f in [x.take(m, 1)] if f]
        upto += [f for f in [x.take(m, 2)] if f]
    trig += x.all(_REORDER_POINT) + x.all(_MIN_EQ)

    bases = x.all(_BASE_STOCK) + x.all(_KEEP_AT) + x.all(_HOLD_AS_BASE)
    caps = x.all(_CAP)
    upto += x.all(_UPTO_NAMED) + x.all(_UPTO_LABEL) + x.all(_UPTO_VERB) + x.all(_MAX_EQ)
    upto += x.all(_UPTO_REACH) + x.all(_UPTO_PAR)
    to_capacity = bool(_CAPACITY.search(low))
    multiples = [f for f in x.all(_MULTIPLES) if not re.search(r"\([^()]*$", low[:f.pos])]  # "(comes in multiples of 5)"
    qty += x.all(_BATCH_AT)
    for pat in _QTY:
        qty += x.all(pat)

    if _AT_REORDER_POINT.search(low) and not _BELOW_REORDER_POINT.search(low):
        for f in trig:
            if f.strict is None:
                f.strict = False  # "when it falls to the reorder point": at or below
    cut = max((m.end() for m in _CORRECTION.finditer(low)), default=None)
    trig, upto, qty = _after_correction(trig, cut), _after_correction(upto, cut), _after_correction(qty, cut)
    bases = _after_correction(bases, cut)
    strictness = {f.strict for f in trig if f.strict is not None}
    if len(strictness) > 1:
        return ParsedPolicy("unparseable", text, basis=basis, reason="the trigger is stated both as 'below' and 'at or below'")
    strict = strictness.pop() if strictness else True
    if any(f.value > 0 for f in qty):
        qty = [f for f in qty if f.value > 0]  # "stock >= 10 -> order 0" is the other branch of the rule, not Q
    roles = {"reorder point": _distinct(trig), "order-up-to level": _distinct(upto), "order quantity": _distinct(qty),
             "base-stock level": _distinct(bases), "cap": _distinct(caps), "multiple": _distinct(multiples)}
    for role, values in roles.items():
        if len(values) > 1:
            return ParsedPolicy("unparseable", text, basis=basis,
                                reason=f"two different values for the {role}: {', '.join(f'{v:g}' for v in values)}")
    s_val = roles["reorder point"][0] if trig else None
    S_val = roles["order-up-to level"][0] if upto else None
    Q_val = roles["order quantity"][0] if qty else None
    B_val = roles["base-stock level"][0] if bases else None
    cap = int(round(roles["cap"][0])) if caps else None
    if multiples:
        Q_val = Q_val if Q_val is not None else roles["multiple"][0]
        kind_hint = "rq"
    if S_val is None and to_capacity:
        if capacity is None:
            return ParsedPolicy("unparseable", text, basis=basis, reason="'up to capacity' but the capacity is unknown")
        S_val = float(capacity)
    period = _period(full)
    if cut is not None and _period(low[cut:]) is not None:
        period = _period(low[cut:])

    def r(v: float | None) -> int | None:
        return None if v is None else int(round(v))

    s_i, S_i, Q_i, B_i = r(s_val), r(S_val), r(Q_val), r(B_val)
    if s_i is not None:
        if capacity is not None and s_i > capacity:
            whose = "the capacity the advice itself states" if stated_capacity == capacity else "the capacity"
            return ParsedPolicy("infeasible", text, kind="ss" if S_i is not None else "sq", basis=basis,
                                params={"s": s_i}, reason=f"reorder point {s_i} is above {whose} ({capacity})")
        s_eff = s_i if strict else s_i + 1
        if S_i is not None and stated_capacity is not None and S_i > stated_capacity:
            return ParsedPolicy("infeasible", text, kind="ss", basis=basis, params={"s": s_eff, "S": S_i},
                                reason=f"order-up-to level {S_i} is above the capacity the advice itself states "
                                       f"({stated_capacity})")
        if S_i is None and Q_i is not None and stated_capacity is not None and Q_i > stated_capacity:
            return ParsedPolicy("infeasible", text, kind="sq", basis=basis, params={"s": s_eff, "Q": Q_i},
                                reason=f"order quantity {Q_i} is above the capacity the advice itself states "
                                       f"({stated_capacity}): it cannot be received even into an empty store")
        if S_i is None and Q_i is not None and stated_max_order is not None and Q_i > stated_max_order:
            return ParsedPolicy("infeasible", text, kind="sq", basis=basis, params={"s": s_eff, "Q": Q_i},
                                reason=f"order quantity {Q_i} is above the maximum order the advice itself states "
                                       f"({stated_max_order})")
        if S_i is not None:
            if S_i < s_eff:
                return ParsedPolicy("infeasible", text, kind="ss", basis=basis, params={"s": s_eff, "S": S_i},
                                    reason=f"order-up-to level {S_i} is below the reorder point {s_i}")
            kind, params = "ss", {"s": s_eff, "S": S_i}
        elif Q_i is not None:
            if Q_i <= 0:
                return ParsedPolicy("infeasible", text, kind="sq", basis=basis, params={"s": s_eff, "Q": Q_i},
                                    reason="order quantity is zero")
            kind, params = (kind_hint or "sq"), ({"R": s_eff, "Q": Q_i} if kind_hint == "rq" else {"s": s_eff, "Q": Q_i})
        else:
            return ParsedPolicy("unparseable", text, basis=basis, params={"s": s_eff},
                                reason="a reorder point but no order quantity or order-up-to level")
    elif B_i is not None:
        kind, params = "base_stock", {"S": B_i}
    elif S_i is not None:
        if period and period > 1:
            kind, params = "periodic", {"T": period, "S": S_i}
        else:
            kind, params = "base_stock", {"S": S_i}
    elif Q_i is not None:
        if period and period > 1:
            kind, params = "periodic", {"T": period, "Q": Q_i}
        elif period == 1:
            kind, params = "constant", {"q": Q_i}
        else:
            return ParsedPolicy("unparseable", text, basis=basis, params={"Q": Q_i},
                                reason="an order quantity but no rule for when to order")
    else:
        why = "no ordering rule with numbers" if not _NO_POLICY.search(low) else "the reply declines to give a policy"
        return ParsedPolicy("unparseable", text, basis=basis, reason=why)
    big_s = params.get("S")
    if big_s is not None and stated_capacity is not None and big_s > stated_capacity:
        return ParsedPolicy("infeasible", text, kind=kind, basis=basis, params=params,
                            reason=f"order-up-to level {big_s} is above the capacity the advice itself states "
                                   f"({stated_capacity})")
    q_each = params.get("Q", params.get("q"))
    if q_each is not None and stated_max_order is not None and q_each > stated_max_order:
        return ParsedPolicy("infeasible", text, kind=kind, basis=basis, params=params,
                            reason=f"order quantity {q_each} is above the maximum order the advice itself states "
                                   f"({stated_max_order})")
    if cap is not None and kind in ("ss", "base_stock", "periodic"):
        params["cap"] = cap
    if kind == "constant":
        basis = "position"  # a fixed daily order does not look at stock
    return ParsedPolicy("ok", text, kind=kind, params=params, basis=basis, reason="; ".join(x.notes),
                        policy=build_policy(kind, params, basis), stated_s=s_i)


_WEEKDAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
# the days a schedule names: "every Monday and Thursday", "Tuesdays", "on Fridays" (not "delivers Saturday morning")
_WEEKDAY_LIST = re.compile(rf"(?:\b(?:every|each|on)\s+{_WEEKDAYS}s?|\b{_WEEKDAYS}s\b)(?:\s*(?:,|and|&|or|\+)\s*{_WEEKDAYS}s?\b)*")
_WEEKDAY_SCHEDULE = re.compile(rf"\b(?:every|each|on)\s+{_WEEKDAYS}s?\b|\b{_WEEKDAYS}s\b|\bonce\s+a\s+week\b")


_FORTNIGHTLY = re.compile(r"\bfortnight(?:ly)?\b|\bbi-?weekly\b|\bevery\s+(?:other|second|two|2)\s+weeks?\b")
# "just Tuesdays, not Tuesdays and Fridays": the days named after "not" are no part of the schedule
_NOT_DAYS = re.compile(rf"\bnot\s+(?:on\s+)?{_WEEKDAYS}s?(?:\s*(?:,|and|or|&)\s*{_WEEKDAYS}s?)*")


def _period(low: str) -> int | None:
    low = _NOT_DAYS.sub(" ", low)
    if _EVERY_OTHER_DAY.search(low):
        return 2
    if _FORTNIGHTLY.search(low) and not _EVERY_N.search(low.replace("fortnight", "")):
        return 14  # "fortnightly on Thursdays": the fortnight is the period, the weekday only its day
    if re.search(rf"\bevery\s+(?:other|second|2nd|alternate)\s+{_WEEKDAYS}\b", low):
        return 14
    m = _EVERY_WEEKS.search(low)
    if m:
        return 7 * int(m.group(1))
    if _MONTHLY.search(low):
        return 30
    if _WEEKDAY_SCHEDULE.search(low):
        if len({d for m in _WEEKDAY_LIST.finditer(low) for d in re.findall(_WEEKDAYS, m.group(0))}) > 1:
            return None  # "every Monday and Thursday": not one fixed period
        return 7  # "order 20 every Friday": a weekly review on a fixed day
    m = _EVERY_N.search(low)
    if m:
        if m.group(1):
            return int(m.group(1))
        if m.group(2):
            return _WORDS[m.group(2)]
        if m.group(3):  # "every third day"
            return _ORDINALS.get(m.group(3)) or int(re.sub(r"\D", "", m.group(3)))
        if m.group(4):
            return 14
        if m.group(5) or "fortnight" in m.group(0):
            return 14
        return 7
    return 1 if _DAILY.search(low) else None


def build_policy(kind: str, params: dict, basis: str = "position") -> Policy:
    """The Policy object for a parsed (kind, params, basis)."""
    p = dict(params)
    cap = p.pop("cap", None)
    if kind == "ss":
        pol: Policy = SSPolicy(p["s"], p["S"])
    elif kind == "sq":
        pol = SQPolicy(p["s"], p["Q"])
    elif kind == "rq":
        pol = RQPolicy(p["R"], max(1, p["Q"]))
    elif kind == "base_stock":
        pol = BaseStockPolicy(p["S"])
    elif kind == "constant":
        pol = ConstantPolicy(p["q"])
    elif kind == "periodic":
        pol = PeriodicPolicy(p["T"], p.get("S"), p.get("Q"))
    else:
        raise ValueError(f"kind: {kind!r} is not allowed; allowed: {', '.join(KINDS)}")
    if cap is not None:
        pol = CappedPolicy(pol, int(cap))
    if basis == "on_hand":
        # numeric meta only: montecarlo.evaluate summarises params as numbers
        return StatePolicy(fn=OnHandTrigger(pol), title=f"{pol.label()} on hand", meta=dict(params))
    return pol
