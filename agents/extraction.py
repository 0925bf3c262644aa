"""Information Extraction Agent: interviews the manager until the parameter table is complete and consistent.

The `ParameterTable` is the explicit memory and the only authoritative state. A backend (offline rules or an
LLM) *proposes* updates from the latest message; this module decides what enters the table: every value goes
through the core's validator (`normalise_value`, then `to_problem` for cross-field rules), conflicts are
detected here with the same rules whatever the backend, and the next action is chosen from the table:

* ASK_CLARIFICATION while a conflict is open (naming both values and offering numbered choices),
* ASK_NEXT_QUESTION while a field is undefined (risk tolerance always last),
* TERMINATE when `to_problem()` succeeds - so the solver never sees an invalid table.

Conflict rules (each becomes a `Clarification` with options):
restated value, lost sale + per-day penalty, weekly/monthly demand with a spread (conversion choice),
max_order > max_inventory, deterministic type with a spread (or random type with a plain number), impossible
numbers (the validator's error), "2 or 3 days"-style answers (two candidates, for any numeric field: also
"5 dollars, maybe 6" and a risk range; asked, never averaged), and a contradiction inside
one message (a field given two different values, e.g. "they wait ... they won't wait": ask, never pick one).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agents.extraction_guard import check_message
from agents.extraction_rules import ParseResult, parse_utterance
from agents.extraction_text import normalise_text
from agents.prompts import HINTS, OPENING, QUESTION_VARIANTS, QUESTIONS
from inventory.demand import Demand
from inventory.problem import ParameterError, Problem
from inventory.spec import PARAMETERS, ParameterTable, format_value, normalise_value

__all__ = [
    "ACTION_CLARIFY",
    "ACTION_CONFIRM",
    "ACTION_NEXT",
    "ACTION_TERMINATE",
    "AgentTurn",
    "Clarification",
    "ExtractionAgent",
    "ExtractionBackend",
    "Option",
    "Proposal",
    "RuleBasedExtractor",
    "QUESTION_ORDER",
    "parse_readback",
    "readback",
]

ACTION_NEXT = "ASK_NEXT_QUESTION"
ACTION_CLARIFY = "ASK_CLARIFICATION"
ACTION_TERMINATE = "TERMINATE"
#: Before TERMINATE: the whole table read back in plain words, waiting for the manager's yes (or a correction).
ACTION_CONFIRM = "ASK_CONFIRMATION"
#: The order questions are asked in; risk tolerance is always last (the paper's rule).
QUESTION_ORDER = tuple(p for p in PARAMETERS if p != "risk_tolerance") + ("risk_tolerance",)
LABELS = {
    "time_horizon": "planning horizon",
    "demand_type": "demand type",
    "demand_distribution": "daily demand",
    "perishability": "perishability",
    "state_transition_model": "stock-out rule",
    "holding_cost": "holding cost",
    "penalty_cost": "shortage penalty",
    "setup_cost": "fixed ordering (setup) cost",
    "lead_time": "lead time",
    "max_inventory": "storage capacity (max inventory)",
    "max_order": "maximum order size",
    "risk_tolerance": "risk tolerance",
}
_MAX_CLARIFY_ATTEMPTS = 3
_MAX_UNKNOWN = 2
# Fallbacks used only after a manager twice says they do not know; announced in the reply, never silent.
DEFAULTS = {
    "time_horizon": 90, "demand_type": "random", "perishability": "non_perishable",
    "state_transition_model": "lost_sale", "setup_cost": 0.0, "lead_time": 1, "risk_tolerance": 0.0,
}


@dataclass
class Proposal(ParseResult):
    """A backend's reading of one message; the agent validates it before anything enters the table."""

    reasoning: str = ""
    flagged: dict[str, str] = field(default_factory=dict)  # LLM-detected conflicts: field -> explanation
    corrections: list[str] = field(default_factory=list)  # fields the user explicitly corrected
    backend_action: str | None = None
    backend_prompt: str | None = None


class ExtractionBackend(Protocol):
    name: str

    def propose(self, agent: ExtractionAgent, message: str) -> Proposal: ...


class RuleBasedExtractor:
    """The offline backend: `agents.extraction_rules` reads numbers, units and keywords (stand-in for the LLM)."""

    name = "offline-rules"

    def propose(self, agent: ExtractionAgent, message: str) -> Proposal:
        parsed = parse_utterance(message, agent.asking, agent.table.as_dict())
        return Proposal(**parsed.__dict__, reasoning=f"rules read {sorted(parsed.values) or 'nothing'}")


@dataclass
class Option:
    """One way to resolve a clarification: the label shown, the table updates it implies, words that pick it."""

    label: str
    updates: dict[str, Any]
    keywords: str = ""  # regex
    value_of: str | None = None  # the field whose stated value selects this option


@dataclass
class Clarification:
    kind: str
    fields: list[str]
    message: str
    options: list[Option] = field(default_factory=list)
    attempts: int = 0
    mean: float | None = None  # demand_spread: the daily mean already given

    def render(self) -> str:
        if not self.options:
            return self.message
        opts = " ".join(f"({i}) {o.label}" for i, o in enumerate(self.options, 1))
        return f"{self.message} {opts}. Which is right?"


@dataclass
class AgentTurn:
    action: str
    message: str
    reasoning: str = ""
    updated: dict[str, str] = field(default_factory=dict)
    asking: str | None = None


def _same(name: str, a: Any, b: Any) -> bool:
    if isinstance(a, Demand) or isinstance(b, Demand):
        return format_value(name, a) == format_value(name, b)
    if isinstance(a, float | int) and isinstance(b, float | int):
        return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(b)))
    return a == b


def _show(name: str, value: Any) -> str:
    text = format_value(name, value)
    if name in ("holding_cost",):
        return f"${text} per unit per day"
    if name == "penalty_cost":
        return f"${text} per unit"
    if name == "setup_cost":
        return f"${text} per order"
    if name in ("time_horizon", "lead_time"):
        return f"{text} day" if text == "1" else f"{text} days"
    if name in ("max_inventory", "max_order"):
        return f"{text} units"
    if name == "demand_distribution":
        return f"{text} units per day"
    return text.replace("_", " ")


# how keyword values are offered and recognised when one message states both
_CHOICE_LABELS = {
    ("state_transition_model", "backlog"): "backlog: customers wait for back-ordered units",
    ("state_transition_model", "lost_sale"): "lost sale: customers who find you out of stock go elsewhere",
    ("perishability", "perishable"): "perishable: unsold units spoil",
    ("perishability", "non_perishable"): "not perishable: unsold units keep",
    ("demand_type", "random"): "random: demand varies from day to day",
    ("demand_type", "deterministic"): "deterministic: the same demand every day",
}
_CHOICE_WORDS = {
    ("state_transition_model", "backlog"): r"backlog|back[\s-]?order|\bwait|come back|patient",
    ("state_transition_model", "lost_sale"): r"lost|leave|elsewhere|don't wait|won't wait|gone|competitor",
    ("perishability", "perishable"): r"\bperishable|spoil|expire|go(?:es)? bad|go(?:es)? off",
    ("perishability", "non_perishable"): r"non[\s-]?perishable|not perishable|\bkeeps?\b|doesn't|don't|never",
    ("demand_type", "random"): r"random|vari|fluctuat|not the same",
    ("demand_type", "deterministic"): r"determin|\bfixed\b|constant|same every|exactly",
}
_ORDINALS = {"first": 1, "1st": 1, "one": 1, "second": 2, "2nd": 2, "two": 2, "third": 3, "3rd": 3, "three": 3,
             "former": 1, "latter": 2, "a": 1, "b": 2, "c": 3}


class ExtractionAgent:
    """One interview. `start()` gives the opening; `step(message)` consumes a reply and returns the next turn."""

    def __init__(self, backend: ExtractionBackend | None = None, table: ParameterTable | None = None,
                 on_log: Callable[[str, str], None] | None = None, confirm: bool = True) -> None:
        self.backend: ExtractionBackend = backend or RuleBasedExtractor()
        self.confirm = confirm  # read the table back and wait for a yes before TERMINATE
        self.confirming = False
        self.table = table or ParameterTable()
        self.asking: str | None = None
        self.pending: list[Clarification] = []
        self.transcript: list[tuple[str, str]] = []
        self.done = False
        self.last_action: str | None = None
        self._unknown_count: dict[str, int] = {}
        self._penalty_per_day = False
        self._on_log = on_log
        self._backend_turn: tuple[str | None, str | None] = (None, None)

    # ---- public API -------------------------------------------------------------------------------------
    def start(self) -> AgentTurn:
        turn = AgentTurn(ACTION_NEXT, OPENING, reasoning="opening", asking=None)
        self._say(turn.message)
        self.last_action = turn.action
        return turn

    def step(self, message: str) -> AgentTurn:
        """Read one user message, update the table through the validator, and choose the next action."""
        if self.done:
            raise RuntimeError("the interview has terminated; start a new ExtractionAgent")
        self._log("user", message if isinstance(message, str) else repr(message))
        refusal = check_message(message)
        if refusal is not None:  # never read, never changes the table: a polite re-ask of the open question
            return self._emit(AgentTurn(self.last_action or ACTION_NEXT, f"{refusal} {self._current_question()}",
                                        reasoning="message not read: " + refusal, asking=self.asking))
        prefix: list[str] = []
        updated: dict[str, str] = {}
        reasoning = ""
        if self.confirming and not self.pending:
            turn = self._confirm_reply(message, updated, prefix)
            if turn is not None:
                return self._emit(turn)
            reasoning = "correction at the read-back"
        elif self.pending and self.pending[0].kind != "llm":
            clar = self.pending[0]
            resolved = self._resolve(clar, message, updated)
            # whatever else the message says (an answer to an earlier question, a volunteered fact) is read too
            self._extra_facts(message, clar, updated, prefix)
            if resolved is None:
                clar.attempts += 1
                if clar.attempts >= _MAX_CLARIFY_ATTEMPTS and clar.options:
                    self._apply_option(clar.options[0], updated)
                    self.pending.remove(clar)
                    prefix.append(f"I'll go with ({1}) {clar.options[0].label} for now; you can correct it later.")
                elif not updated:
                    return self._emit(AgentTurn(ACTION_CLARIFY, "Sorry, I didn't catch which one. " + clar.render(),
                                                reasoning="clarification not resolved", asking=self.asking))
            else:
                if clar in self.pending:
                    self.pending.remove(clar)
                reasoning = f"clarification resolved: {resolved}"
        else:
            proposal = self.backend.propose(self, message)
            reasoning = proposal.reasoning
            self._apply(proposal, updated, prefix)
            self._backend_turn = (proposal.backend_action, proposal.backend_prompt)
        self._cross_checks()
        return self._emit(self._next_turn(prefix, updated, reasoning))

    def _current_question(self) -> str:
        if self.pending:
            return self.pending[0].render()
        if self.confirming:
            return readback(self.table)
        if self.asking is not None:
            return self.question(self.asking)
        return "Could you tell me about your business and the product you want to plan orders for?"

    def _extra_facts(self, message: str, clar: Clarification, updated: dict[str, str], prefix: list[str]) -> None:
        """Values for *other* fields in a clarification answer are read, not dropped (offline reader only)."""
        if not isinstance(self.backend, RuleBasedExtractor):
            return
        parsed = parse_utterance(message, None, self.table.as_dict())
        skip = set(clar.fields) | {"demand_type", "demand_distribution"} if clar.kind.startswith("demand") \
            else set(clar.fields)
        values = {k: v for k, v in parsed.values.items() if k not in skip and k not in updated
                  and self.table.status(k) == "undefined"}
        if not values:
            return
        extra = Proposal(values=values, notes=parsed.notes)
        self._apply(extra, updated, prefix)

    def _confirm_reply(self, message: str, updated: dict[str, str], prefix: list[str]) -> AgentTurn | None:
        """The answer to the read-back: yes -> TERMINATE; corrections are applied (then read back again)."""
        text = message.lower().strip()
        proposal = self.backend.propose(self, message)
        has_values = bool(proposal.values) or bool(proposal.conflicts) or proposal.demand_period is not None \
            or bool(proposal.ambiguous) or proposal.demand_mean is not None
        if not has_values and _AFFIRM.search(text) and not _DENY.search(text):
            self.confirming = False
            return self._terminate(prefix, updated, "confirmed by the manager")
        if not has_values:
            return AgentTurn(ACTION_CONFIRM, "What should I change? Tell me the field and the right value, e.g. "
                             "'the lead time is 5 days'. Or say 'yes' if everything is right.",
                             "read-back not confirmed", updated, None)
        proposal.correction = True  # at the read-back every stated value is a correction
        self._apply(proposal, updated, prefix)
        return None

    def problem(self) -> Problem:
        return self.table.to_problem()

    def save(self, out_dir: str | Path) -> tuple[Path, Path]:
        """Write `extracted_params.csv` and `conversation_log.txt` (the paper's two artefacts)."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        csv_path = out / "extracted_params.csv"
        self.table.to_csv(csv_path)
        log_path = out / "conversation_log.txt"
        log_path.write_text("".join(f"{who.upper()}: {text}\n\n" for who, text in self.transcript), encoding="utf-8")
        return csv_path, log_path

    # ---- applying proposals ----------------------------------------------------------------------------
    def _apply(self, p: Proposal, updated: dict[str, str], prefix: list[str]) -> None:
        if p.question and self.asking:
            prefix.append(f"Good question: {LABELS[self.asking]} is the {_describe(self.asking)}.")
        if p.unknown and self.asking:
            n = self._unknown_count.get(self.asking, 0) + 1
            self._unknown_count[self.asking] = n
            if n >= _MAX_UNKNOWN and self.asking in DEFAULTS:
                self.table.set(self.asking, DEFAULTS[self.asking])
                updated[self.asking] = format_value(self.asking, self.table.get(self.asking))
                prefix.append(f"No problem - I'll assume {_show(self.asking, self.table.get(self.asking))} for "
                              f"the {LABELS[self.asking]}; tell me if you'd like something else.")
            else:
                prefix.append(f"No problem, a rough estimate is fine. {HINTS.get(self.asking, '')}".strip())
        values = dict(p.values)
        prefix.extend(f"{n}." for n in p.notes if "per unit per" in n or " is " in n)
        for clar in [c for c in self.pending if c.kind == "llm"]:
            answered = [f for f in clar.fields if f in values and f not in p.flagged]
            if answered or (clar.fields[0] not in p.flagged and p.backend_action != ACTION_CLARIFY):
                for f in answered:
                    self._force(f, values.pop(f), updated)
                for f in clar.fields:
                    if self.table.status(f) == "conflict":
                        self.table.rows[f].status = "defined" if self.table.get(f) is not None else "undefined"
                self.pending.remove(clar)
        # the transition the message implies, for the lost-sale / per-day-penalty rule
        if "penalty_cost" in values:
            self._penalty_per_day = p.penalty_per_day
        for name in sorted(values, key=lambda n: PARAMETERS.index(n)):
            self._offer(name, values[name], p.correction or name in p.corrections, updated)
        for name in sorted(p.conflicts, key=lambda n: PARAMETERS.index(n) if n in PARAMETERS else 99):
            self._contradiction(name, p.conflicts[name], p.correction or name in p.corrections, updated)
        for name, why in p.flagged.items():
            if name not in PARAMETERS or any(name in c.fields for c in self.pending):
                continue
            if self.table.status(name) != "undefined":
                self.table.mark_conflict(name)
            self.pending.append(Clarification("llm", [name], p.backend_prompt or why))
        if p.demand_period is not None:
            d = p.demand_period
            self.pending.append(Clarification(
                "demand_period", ["demand_distribution"],
                f"You gave demand per {d.period} ({d.describe()}). To turn that into daily demand I need to know "
                f"how the days relate:",
                [Option(f"the days are independent of each other: about {d.independent()} per day "
                        f"(the {d.period}'s spread divided by the square root of {d.days})",
                        {"demand_distribution": d.independent(), "demand_type": "random"},
                        r"independ|square root|sqrt|\u221a|separate|own|unrelated"),
                 Option(f"plain scaling, the whole {d.period} moves together: about {d.scaled()} per day "
                        f"(everything divided by {d.days})",
                        {"demand_distribution": d.scaled(), "demand_type": "random"},
                        r"scal|divide everything|together|proportional|plain|same every day")]))
        if p.demand_mean is not None and "demand_distribution" not in values \
                and not any(c.kind.startswith("demand") for c in self.pending):
            self._ask_spread(p.demand_mean, p.demand_spread_cue or self.table.get("demand_type") == "random")
        for name, (lo, hi) in p.ambiguous.items():
            whole = name in ("time_horizon", "lead_time", "max_inventory", "max_order")
            # costs and risk: two candidates ("5 dollars, maybe 6") are asked too, never averaged
            lo_i, hi_i = (int(round(lo)), int(round(hi))) if whole else (round(lo, 6), round(hi, 6))
            need = "one whole number" if whole else "one value"
            self.pending.append(Clarification(
                "ambiguous", [name], f"You said {_show(name, lo_i)} to {_show(name, hi_i)} for the "
                f"{LABELS[name]}; I need {need}.",
                [Option(_show(name, lo_i), {name: lo_i}, value_of=name),
                 Option(_show(name, hi_i), {name: hi_i}, value_of=name)]))

    def _ask_spread(self, mean: float, varies: bool) -> None:
        """A daily mean without a spread: how demand varies decides the policy, so it is asked, not assumed."""
        m = _fmt_num(mean)
        n = max(0, round(mean))
        if varies:
            message = (f"You said about {m} a day and that it varies. How much does it swing - for example "
                       f"'give or take 4', or 'between {max(0, n - 4)} and {n + 4}'? If you can't say, choose:")
        else:
            message = f"You said about {m} a day. Is that the same every day, or does it vary? Choose, or give " \
                      f"me the spread (e.g. 'give or take 4'):"
        options = [Option(f"it varies the way walk-in customers do: {m} a day on average, sometimes more, "
                          f"sometimes less (a Poisson pattern)",
                          {"demand_type": "random", "demand_distribution": f"poisson({m})"},
                          r"random|vary|varies|variable|average|about|around|roughly|poisson|walk|depends|"
                          r"swing|up and down|changes|differ|not the same|never the same")]
        if not varies:
            options.insert(0, Option(f"exactly {n} every day (deterministic)",
                                     {"demand_type": "deterministic", "demand_distribution": str(n)},
                                     r"same every|exactly|fixed|constant|always|determin|every day the same|steady"))
        self.pending.append(Clarification("demand_spread", ["demand_distribution"], message, options,
                                          mean=mean))

    def _offer(self, name: str, raw: Any, correction: bool, updated: dict[str, str]) -> None:
        try:
            value = normalise_value(name, raw, self.table.base_dir)
        except ParameterError as exc:
            self._invalid(name, raw, exc)
            return
        status = self.table.status(name)
        if status == "defined" and not _same(name, self.table.get(name), value):
            if correction:
                self.table.set(name, value)
                updated[name] = format_value(name, value)
                self._drop_pending(name)
                return
            old = self.table.get(name)
            self.table.mark_conflict(name)
            if any(name in c.fields and c.kind == "restated" for c in self.pending):
                return
            self.pending.append(Clarification(
                "restated", [name],
                f"Earlier you said the {LABELS[name]} is {_show(name, old)}, and now {_show(name, value)}.",
                [Option(_show(name, old), {name: old}, value_of=name),
                 Option(_show(name, value), {name: value}, value_of=name)]))
            return
        if status == "conflict":
            return  # an open clarification decides this field
        if status == "defined":
            return  # restated with the same value: nothing new
        self.table.set(name, value)
        updated[name] = format_value(name, value)

    def _contradiction(self, name: str, raws: list[Any], correction: bool, updated: dict[str, str]) -> None:
        """One message gave `name` two (or more) different values: ask which, never pick one silently."""
        if name not in PARAMETERS:
            return
        values: list[Any] = []
        for raw in raws:
            try:
                value = normalise_value(name, raw, self.table.base_dir)
            except ParameterError:
                continue  # an impossible reading is not a candidate
            if not any(_same(name, value, v) for v in values):
                values.append(value)
        if len(values) == 1:
            self._offer(name, values[0], correction, updated)
            return
        if not values or any(name in c.fields for c in self.pending):
            return
        if self.table.status(name) != "undefined":
            self.table.mark_conflict(name)
        if name == "state_transition_model":
            message = ("In the same message you said customers wait for back-ordered units (backlog) and that "
                       "they don't wait and buy elsewhere (lost sale).")
        else:
            shown = " and as ".join(_show(name, v) for v in values)
            message = f"In the same message you gave the {LABELS[name]} as {shown}."
        self.pending.append(Clarification(
            "contradiction", [name], message,
            [Option(_CHOICE_LABELS.get((name, v), _show(name, v)) if isinstance(v, str) else _show(name, v),
                    {name: v}, _CHOICE_WORDS.get((name, v), ""), value_of=name) for v in values]))

    def _invalid(self, name: str, raw: Any, exc: ParameterError) -> None:
        options: list[Option] = []
        if name == "risk_tolerance":
            try:
                x = float(re.findall(r"[-+]?\d+(?:\.\d+)?", str(raw))[0])
                clamp = max(-10.0, min(10.0, x))
                options = [Option(f"use {format_value(name, clamp)}, the end of the scale", {name: clamp},
                                  r"\bend\b|\buse\b|\bok\b|\byes\b|max|min|fine", value_of=name)]
            except (IndexError, ValueError):
                pass
        self.pending.append(Clarification(
            "invalid_value", [name],
            f"I can't use {raw!s} for the {LABELS[name]}: {exc.allowed}. Could you give me the {LABELS[name]} "
            f"again?" + (" Or:" if options else ""), options))

    def _drop_pending(self, name: str) -> None:
        self.pending = [c for c in self.pending if name not in c.fields]

    # ---- cross-field rules --------------------------------------------------------------------------------
    def _cross_checks(self) -> None:
        t = self.table
        defined = {p for p in PARAMETERS if t.status(p) == "defined"}
        kinds = {c.kind for c in self.pending}
        if {"max_order", "max_inventory"} <= defined and t.get("max_order") > t.get("max_inventory") \
                and "max_order_above_capacity" not in kinds:
            mo, mi = t.get("max_order"), t.get("max_inventory")
            t.mark_conflict("max_order")
            self.pending.append(Clarification(
                "max_order_above_capacity", ["max_order", "max_inventory"],
                f"The largest order ({mo} units) is above your storage capacity ({mi} units), and an order can "
                f"never make stock exceed capacity.",
                [Option(f"cap the order size at the capacity, {mi} units", {"max_order": mi},
                        r"\bcap\b|lower the order|reduce the order|order size|keep (?:the )?capacity"),
                 Option(f"the capacity is really {mo} units", {"max_inventory": mo, "max_order": mo},
                        r"capacity is|raise|increase|more (?:storage|space)|bigger")]))
        if {"demand_type", "demand_distribution"} <= defined and "type_vs_distribution" not in kinds:
            dtype, dist = t.get("demand_type"), t.get("demand_distribution")
            if dtype == "deterministic" and dist.kind != "deterministic" and dist.std > 0:
                t.mark_conflict("demand_type")
                n = max(0, round(dist.mean))
                self.pending.append(Clarification(
                    "type_vs_distribution", ["demand_type", "demand_distribution"],
                    f"You described demand as deterministic (the same every day), but also gave a spread "
                    f"({dist.describe()}).",
                    [Option(f"demand is random: {dist.describe()} per day",
                            {"demand_type": "random", "demand_distribution": dist},
                            r"random|varies|vary|spread|distribution|fluctuat|not the same"),
                     Option(f"demand is fixed at {n} units every day",
                            {"demand_type": "deterministic", "demand_distribution": str(n)},
                            r"fixed|determin|constant|same every|exactly|always")]))
            elif dtype == "random" and dist.kind == "deterministic":
                t.mark_conflict("demand_type")
                n = dist.describe()
                self.pending.append(Clarification(
                    "type_vs_distribution", ["demand_type", "demand_distribution"],
                    f"You said demand is random, but gave a single fixed number ({n} per day).",
                    [Option(f"demand is fixed at {n} units every day",
                            {"demand_type": "deterministic", "demand_distribution": n},
                            r"fixed|determin|constant|same every|exactly|always"),
                     Option(f"demand is random, about {n} a day on average (Poisson)",
                            {"demand_type": "random", "demand_distribution": f"poisson({n})"},
                            r"random|varies|vary|average|fluctuat|about|around")]))
        if "state_transition_model" in defined and "penalty_cost" in defined and self._penalty_per_day \
                and t.get("state_transition_model") == "lost_sale" and "lost_sale_penalty_per_day" not in kinds:
            pen = format_value("penalty_cost", t.get("penalty_cost"))
            t.mark_conflict("state_transition_model")
            self.pending.append(Clarification(
                "lost_sale_penalty_per_day", ["state_transition_model", "penalty_cost"],
                f"You said customers who find you out of stock are lost (lost sale), but you gave the shortage "
                f"penalty per unit per day (${pen}), which is how waiting customers are charged (backlog).",
                [Option(f"backlog: customers wait, and each unit waiting costs ${pen} per day",
                        {"state_transition_model": "backlog"},
                        r"backlog|backorder|wait|come back|per day"),
                 Option(f"lost sale: customers leave, and each lost unit costs ${pen} once",
                        {"state_transition_model": "lost_sale"},
                        r"lost|leave|elsewhere|don't wait|won't wait|once|gone")]))
        if self.table.is_complete() and not self.pending:
            try:
                self.table.to_problem()
            except ParameterError as exc:
                name = exc.field if exc.field in PARAMETERS else "demand_distribution"
                self.table.mark_conflict(name)
                self.pending.append(Clarification(
                    "invalid_value", [name], f"Something doesn't fit: {exc}. Could you give me the {LABELS[name]} "
                    "again?"))

    # ---- clarifications -----------------------------------------------------------------------------------
    def _resolve(self, clar: Clarification, message: str, updated: dict[str, str]) -> str | None:
        text = message.lower()
        choice = _ordinal(text, len(clar.options))
        if choice is None and clar.kind == "demand_spread":
            fresh = self._spread_answer(clar, message)
            if fresh is not None:
                for name, value in fresh.items():
                    self._force(name, value, updated)
                return "demand spread given"
        if choice is None:
            hits = [i for i, o in enumerate(clar.options) if o.keywords and re.search(o.keywords, text)]
            if len(hits) == 1:
                choice = hits[0]
        context = clar.fields[0]
        parsed = parse_utterance(message, context, self.table.as_dict()) if choice is None else None
        if parsed is not None and clar.kind == "lost_sale_penalty_per_day":
            trans = parsed.values.get("state_transition_model")
            if trans:
                choice = next(i for i, o in enumerate(clar.options)
                              if o.updates["state_transition_model"] == trans)
        if choice is None and clar.kind == "max_order_above_capacity" and parsed is not None \
                and "max_inventory" in parsed.values:  # "storage holds 95 and the largest order is 30"
            self._force("max_inventory", parsed.values["max_inventory"], updated)
            if "max_order" in parsed.values:
                self._force("max_order", parsed.values["max_order"], updated)
            if self.table.get("max_order") > self.table.get("max_inventory"):
                self._force("max_order", self.table.get("max_inventory"), updated)
            return "new capacity"
        if choice is None and parsed is not None and context in parsed.values:
            try:
                new = normalise_value(context, parsed.values[context], self.table.base_dir)
            except ParameterError:
                new = None
            if new is not None:
                for i, o in enumerate(clar.options):
                    if o.value_of == context and _same(context, normalise_value(context, o.updates[context]), new):
                        choice = i
                        break
                else:  # a fresh value answers the question too
                    if clar.kind in ("restated", "ambiguous", "invalid_value", "max_order_above_capacity",
                                     "contradiction"):
                        self._force(context, new, updated)
                        return f"new value for {context}"
        if choice is None and clar.kind == "max_order_above_capacity" and parsed is not None:
            if "max_inventory" in parsed.values:
                self._force("max_inventory", parsed.values["max_inventory"], updated)
                self._force("max_order", min(self.table.get("max_order"), self.table.get("max_inventory")), updated)
                return "new capacity"
        if choice is None:
            return None
        self._apply_option(clar.options[choice], updated)
        return clar.options[choice].label

    def _spread_answer(self, clar: Clarification, message: str) -> dict[str, Any] | None:
        """'give or take 3' (normal around the mean already given), 'between 5 and 13', or a whole new law."""
        norm = normalise_text(message)
        m = _SPREAD_ONLY.search(norm)
        if m and clar.mean is not None:
            return {"demand_type": "random", "demand_distribution": f"normal({_fmt_num(clar.mean)}, {m.group(1)})"}
        parsed = parse_utterance(message, "demand_distribution", self.table.as_dict())
        if "demand_distribution" in parsed.values:
            dist = str(parsed.values["demand_distribution"])
            return {"demand_type": "random" if "(" in dist else "deterministic", "demand_distribution": dist}
        return None

    def _apply_option(self, option: Option, updated: dict[str, str]) -> None:
        for name, value in option.updates.items():
            self._force(name, value, updated)
        if "state_transition_model" in option.updates:
            self._penalty_per_day = False  # the manager has said how the penalty is charged

    def _force(self, name: str, value: Any, updated: dict[str, str]) -> None:
        if self.table.status(name) == "defined":
            try:
                if _same(name, self.table.get(name), normalise_value(name, value, self.table.base_dir)):
                    return  # already so: nothing to note
            except ParameterError:
                pass
        try:
            self.table.set(name, value)
        except ParameterError as exc:
            self._invalid(name, value, exc)
            return
        updated[name] = format_value(name, self.table.get(name))
        if name == "penalty_cost":
            self._penalty_per_day = False

    # ---- choosing the next turn ---------------------------------------------------------------------------
    def _next_param(self) -> str | None:
        return next((p for p in QUESTION_ORDER if self.table.status(p) == "undefined"), None)

    def _next_turn(self, prefix: list[str], updated: dict[str, str], reasoning: str) -> AgentTurn:
        turn = self._core_turn(prefix, updated, reasoning)
        action, prompt = self._backend_turn
        self._backend_turn = (None, None)
        if prompt and action == turn.action and action != ACTION_TERMINATE:
            # the LLM's own wording, when it agrees with the table about what to do next (risk still last)
            if turn.asking == "risk_tolerance" or "risk" not in prompt.lower():
                if action == ACTION_NEXT or (self.pending and self.pending[0].kind == "llm"):
                    turn.message = prompt
        return turn

    def _core_turn(self, prefix: list[str], updated: dict[str, str], reasoning: str) -> AgentTurn:
        confirm = ""
        if updated:
            parts = [f"{LABELS[n]} = {_show(n, self.table.get(n))}" for n in PARAMETERS if n in updated]
            confirm = "Noted: " + "; ".join(parts) + "."
        lead = " ".join(x for x in [confirm, *prefix] if x)
        if self.pending:
            clar = self.pending[0]
            self.asking = clar.fields[0]
            return AgentTurn(ACTION_CLARIFY, f"{lead} {clar.render()}".strip(), reasoning, updated, self.asking)
        nxt = self._next_param()
        if nxt is not None:
            self.asking = nxt
            return AgentTurn(ACTION_NEXT, f"{lead} {self.question(nxt)}".strip(), reasoning, updated, nxt)
        if self.confirm:
            self.confirming = True
            self.asking = None
            return AgentTurn(ACTION_CONFIRM, f"{lead} {readback(self.table)}".strip(), reasoning or "read-back",
                             updated, None)
        return self._terminate(prefix, updated, reasoning, lead)

    def _terminate(self, prefix: list[str], updated: dict[str, str], reasoning: str, lead: str = "") -> AgentTurn:
        problem = self.table.to_problem()
        self.done = True
        self.confirming = False
        self.asking = None
        if self.confirm:
            return AgentTurn(ACTION_TERMINATE, f"{lead} Thank you - I'll now compute the best ordering policy.".strip(),
                             reasoning or str(problem.horizon), updated, None)
        summary = "; ".join(f"{LABELS[n]}: {_show(n, self.table.get(n))}" for n in PARAMETERS)
        return AgentTurn(ACTION_TERMINATE, f"{lead} Thank you, I have everything I need - {summary}. "
                         f"I'll now compute the best ordering policy.".strip(), reasoning or str(problem.horizon),
                         updated, None)

    def question(self, name: str) -> str:
        if name == "demand_distribution" and self.table.get("demand_type") == "deterministic":
            return QUESTION_VARIANTS[("demand_distribution", "deterministic")]
        if name == "penalty_cost" and self.table.status("state_transition_model") == "defined":
            return QUESTION_VARIANTS[("penalty_cost", self.table.get("state_transition_model"))]
        return QUESTIONS[name]

    def _emit(self, turn: AgentTurn) -> AgentTurn:
        self.last_action = turn.action
        self._say(turn.message)
        return turn

    def _say(self, text: str) -> None:
        self._log("agent", text)

    def _log(self, who: str, text: str) -> None:
        self.transcript.append((who, text))
        if self._on_log is not None:
            self._on_log(who, text)


_AFFIRM = re.compile(r"^\W*(?:yes|yep|yeah|yup|ya|sure|correct|right|that'?s (?:all )?(?:right|correct|it)|"
                     r"all (?:good|correct|right)|looks (?:good|right|fine)|perfect|confirm\w*|ok(?:ay)?|fine|"
                     r"exactly|spot on|go ahead|all of it)\b")
_DENY = re.compile(r"\b(?:no|nope|not|wrong|incorrect|change|mistake|isn't|aren't)\b")
_SPREAD_ONLY = re.compile(r"(?:give or take|plus or minus|\+/-|standard deviation(?: of| is)?|\bsd\b(?: of| is)?|"
                          r"by about|by around|by|swings? (?:by )?(?:about |around )?)\s*(\d+(?:\.\d+)?)")
_GLOSS = {
    ("state_transition_model", "lost_sale"): "customers who find you out of stock buy elsewhere",
    ("state_transition_model", "backlog"): "customers wait for the next delivery",
    ("perishability", "perishable"): "unsold units spoil at the end of the day",
    ("perishability", "non_perishable"): "unsold units keep",
    ("demand_type", "random"): "it varies from day to day",
    ("demand_type", "deterministic"): "the same every day",
}


def _fmt_num(x: float) -> str:
    return str(int(round(x))) if abs(x - round(x)) < 1e-9 else f"{x:.2f}".rstrip("0").rstrip(".")


def _plain(name: str, value: Any) -> str:
    """A table value with a plain-words gloss after ' - ' (the part before it is the value itself)."""
    shown = _show(name, value)
    gloss = _GLOSS.get((name, value))
    if name == "demand_distribution" and isinstance(value, Demand):
        gloss = {"poisson": f"on average {_fmt_num(value.mean)} a day, varying like walk-in customers",
                 "normal": f"on average {_fmt_num(value.mean_param)} a day, give or take {_fmt_num(value.sd_param)}",
                 "uniform": "any number in that range equally likely",
                 "deterministic": "the same every day"}.get(value.kind)
    if name == "risk_tolerance":
        gloss = "on the scale from -10 (very risk averse) to 10 (risk seeking), 0 neutral"
    return f"{shown} - {gloss}" if gloss else shown


def readback(table: ParameterTable) -> str:
    """The whole table in plain words, one line per field, ending with the confirmation question."""
    lines = "\n".join(f"- {LABELS[n]}: {_plain(n, table.get(n))}" for n in PARAMETERS)
    return ("Before I compute the policy, please check what I have:\n" + lines +
            "\nIs all of this right? Say 'yes', or tell me what to change (e.g. 'no, the lead time is 5 days').")


_READBACK_LINE = re.compile(r"^- (?P<label>[^:\n]+): (?P<value>.+)$", re.M)


def parse_readback(text: str) -> dict[str, str]:
    """{field: value as text} from a `readback` message (for simulated managers that check it)."""
    by_label = {v: k for k, v in LABELS.items()}
    out: dict[str, str] = {}
    for m in _READBACK_LINE.finditer(text):
        name = by_label.get(m.group("label").strip())
        if name is None:
            continue
        value = m.group("value").split(" - ")[0].strip()
        if name in ("state_transition_model", "perishability", "demand_type"):
            value = value.replace(" ", "_")
        elif name == "demand_distribution":
            value = value.replace(" units per day", "")
        else:
            num = re.search(r"-?\d+(?:\.\d+)?", value)
            value = num.group(0) if num else value
        out[name] = value
    return out


def _describe(name: str) -> str:
    from inventory.spec import DESCRIPTIONS

    return DESCRIPTIONS[name]


def _ordinal(text: str, n: int) -> int | None:
    m = re.match(r"^\W*(?:option\s*|choice\s*|number\s*|#)?\(?([1-9])\)?\W*(?:$|[.,!)]|\s(?!day|week|month|unit|"
                 r"\$|dollar|cent))", text)
    if m and 1 <= int(m.group(1)) <= n:
        return int(m.group(1)) - 1
    m = re.search(r"\b(?:the\s+)?(first|second|third|1st|2nd|3rd|former|latter)\b(?:\s+(?:one|option|choice))?",
                  text)
    if m and re.search(r"\b(?:the\s+)?(?:first|second|third|1st|2nd|3rd|former|latter)\s*(?:one|option|choice)?\s*"
                       r"(?:is|please|\.|,|!|$)", text):
        i = _ORDINALS[m.group(1)] - 1
        if i < n:
            return i
    return None
