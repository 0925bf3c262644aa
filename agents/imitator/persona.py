"""The offline Human Imitator: a boundedly rational store manager played from hidden ground truth.

It opens with a short narrative (the business context plus a few facts), then answers whatever it is asked,
revealing a fact only when asked (or when it volunteers one). Noise comes from the persona profile, drawn once
per episode from the seed: fields it does not know at first, imprecise numbers, demand or holding costs in
weekly/monthly units, a later contradiction, the lost-sale/backlog confusion, volunteered facts, chit-chat
and impatience. Clarifications are answered truthfully and precisely - the manager knows the business, he is
just not careful - so a good interviewer can always recover the truth, and `score_extraction` measures how
much of it the interviewer actually got.
"""

from __future__ import annotations

import re

import numpy as np

from agents.imitator.habits import Habits, chitchat, opening_sentence
from agents.imitator.phrasing import Style, say
from agents.imitator.profile import PersonaProfile, get_profile
from agents.imitator.topics import asked_topics, clarification_kind
from inventory.problem import Problem
from inventory.spec import PARAMETERS

__all__ = ["HumanImitator"]

_NUMERIC = ("time_horizon", "demand_distribution", "holding_cost", "penalty_cost", "setup_cost", "lead_time",
            "max_inventory", "max_order", "risk_tolerance")
_CONTRADICTABLE = ("time_horizon", "lead_time", "holding_cost", "setup_cost", "max_inventory", "demand_distribution")
_OPENING_POOL = ("demand_distribution", "perishability", "lead_time", "state_transition_model", "holding_cost",
                 "setup_cost", "max_inventory", "time_horizon")
_UNKNOWN = ["Hmm, I'm not sure.", "Honestly, I don't know.", "No idea, to be honest.", "I'd have to check, not sure."]
_IMPATIENT = ["Can we speed this up?", "Is this going to take much longer?", "Okay, quickly:"]


class HumanImitator:
    """Plays the manager of `ground_truth`; `opening()` once, then `reply(agent_message)` per turn."""

    def __init__(self, ground_truth: Problem, context: str = "", profile: str | PersonaProfile = "typical",
                 seed: int = 0) -> None:
        self.ground_truth = ground_truth
        self.context = context.strip()
        self.profile = get_profile(profile)
        self.seed = seed
        rng = np.random.default_rng(seed)
        self.rng = rng
        pr = self.profile
        self.unknown_fields = {f for f in _NUMERIC if rng.random() < pr.p_unknown}
        self.imprecise_fields = {f for f in _NUMERIC if rng.random() < pr.p_imprecise}
        self.units: dict[str, str] = {}
        if ground_truth.demand.kind in ("poisson", "normal") and rng.random() < pr.p_wrong_units:
            self.units["demand_distribution"] = str(rng.choice(["week", "month"]))
        if rng.random() < pr.p_wrong_units:
            self.units["holding_cost"] = str(rng.choice(["week", "month", "year"]))
        if rng.random() < pr.p_wrong_units:
            self.units["time_horizon"] = "month"
            self.units["lead_time"] = "week"
        self.jargon = bool(rng.random() < pr.p_jargon)
        self.confused = bool(rng.random() < pr.p_confusion)
        self.contradiction_field: str | None = None
        if rng.random() < pr.p_contradiction:
            self.contradiction_field = str(rng.choice(_CONTRADICTABLE))
        self.contradiction_turn = int(rng.integers(2, 8))
        self.contradicted = False
        self.revealed: set[str] = set()
        self.asked: dict[str, int] = {}
        self.turn = 0
        self.said: list[str] = []
        # drawn last so that the draws above (and thus every existing (profile, seed) manager's facts) are unchanged
        self.habits = Habits.draw(self.profile.name, self.profile.habits, rng)
        self.hedged: set[str] = set()  # fields answered "not sure" first: the next answer is rounded

    # ---- the two calls -----------------------------------------------------------------------------------
    def opening(self) -> str:
        k = min(self.profile.opening_facts, len(_OPENING_POOL))
        fields = [str(f) for f in self.rng.choice(_OPENING_POOL, size=k, replace=False)] if k else []
        fields = [f for f in fields if f not in self.unknown_fields]
        parts = [f"Hi. {opening_sentence(self.context)}" if self.context
                 else "Hi, I run a small shop and need help with ordering."]
        for f in sorted(fields, key=PARAMETERS.index):
            parts.append(self._say(f))
            self.revealed.add(f)
        if self.rng.random() < self.profile.verbosity:
            parts.append(chitchat(self.habits, self.rng))
        return self._record(" ".join(parts))

    def reply(self, agent_message: str) -> str:
        """Answer one consultant message (a question, a clarification, or advice)."""
        self.turn += 1
        if "Is all of this right?" in agent_message:  # the extraction agent's read-back of the whole table
            return self._record(self._check_readback(agent_message))
        pr = self.profile
        impatient = self.turn > pr.patience_turns and self.rng.random() < pr.impatience
        kind = clarification_kind(agent_message)
        topics = asked_topics(agent_message)
        parts: list[str] = []
        if impatient:
            parts.append(str(self.rng.choice(_IMPATIENT)))
        if kind is not None and (topics or kind != "value"):
            parts.append(self._clarify(kind, topics))
        elif topics:
            parts.append(self._answer(topics[0], terse=impatient))
        elif "?" in agent_message:
            parts.append("I'm not sure what you mean - could you ask that differently?")
        else:
            parts.append(str(self.rng.choice(["Okay.", "Sounds good.", "Alright, thanks."])))
        if not impatient:
            self._decorate(parts, topics[:1])
        return self._record(self.habits.apply(" ".join(p for p in parts if p), self.rng))

    def _check_readback(self, message: str) -> str:
        """A careful look at the read-back: 'yes', or the first wrong line corrected precisely."""
        from agents.extraction import parse_readback
        from agents.imitator.scoring import values_match
        from inventory.spec import problem_values

        truth = problem_values(self.ground_truth)
        shown = parse_readback(message)
        wrong = [f for f in PARAMETERS if f in shown and not values_match(f, shown[f], truth[f])]
        if not wrong:
            return "Yes, that's all correct."
        self.revealed.add(wrong[0])
        return "No - " + _lower_first(self._say(wrong[0], precise=True))

    # ---- answering ---------------------------------------------------------------------------------------
    def _answer(self, field: str, terse: bool = False) -> str:
        n = self.asked.get(field, 0) + 1
        self.asked[field] = n
        if field in self.unknown_fields and n == 1:
            self.hedged.add(field)
            return str(self.rng.choice(_UNKNOWN))
        if field in self.revealed or n > 1:  # asked again: the manager tries harder (and rounds if he was unsure)
            return self._say(field, precise=True, rounded=field in self.hedged)
        self.revealed.add(field)
        return self._say(field, terse=terse)

    def _clarify(self, kind: str, topics: list[str]) -> str:
        p = self.ground_truth
        if kind == "demand_period":
            return "The days are independent of each other; one day doesn't affect the next."
        if kind == "lost_sale_penalty":
            if p.lost_sales:
                return "They leave, it's a lost sale - that cost is per lost unit, not per day."
            return "They wait actually, it's a backlog - the cost is per unit per day they wait."
        if kind == "max_order_capacity":
            return (f"Storage holds {p.max_inventory} units and the largest order is {p.max_order} units.")
        if kind == "demand_type":
            return f"{self._say('demand_type', precise=True)} {self._say('demand_distribution', precise=True)}"
        field = topics[0]
        self.revealed.add(field)
        return self._say(field, precise=True)

    def _say(self, field: str, precise: bool = False, terse: bool = False, wrong: bool = False,
             rounded: bool = False) -> str:
        style = Style(
            precise=precise or field not in self.imprecise_fields,
            units="day" if precise else self.units.get(field, "day"),
            jargon=self.jargon,
            wrong=wrong,
            confused=self.confused and not precise and field in ("state_transition_model", "penalty_cost"),
            terse=terse,
            rounded=rounded,
        )
        if precise and field == "penalty_cost":
            style.confused = False
        return say(field, self.ground_truth, style, self.rng)

    def _decorate(self, parts: list[str], answered: list[str]) -> None:
        pr = self.profile
        cf = self.contradiction_field
        if (cf and not self.contradicted and cf in self.revealed and cf not in answered
                and self.turn >= self.contradiction_turn):
            self.contradicted = True
            parts.append("Oh, and one more thing: " + _lower_first(self._say(cf, wrong=True)))
        elif self.rng.random() < pr.p_volunteer:
            pool = [f for f in _OPENING_POOL if f not in self.revealed and f not in self.unknown_fields
                    and f not in answered]
            if pool:
                f = str(self.rng.choice(pool))
                self.revealed.add(f)
                parts.append("Also, " + _lower_first(self._say(f)))
        if self.rng.random() < pr.verbosity * 0.5:
            parts.append(chitchat(self.habits, self.rng))

    def _record(self, text: str) -> str:
        self.said.append(text)
        return text


def _lower_first(s: str) -> str:
    if s and not re.match(r"^(?:I\b|I'|\$)", s):
        return s[0].lower() + s[1:]
    return s
