"""Policy Interpretation Agent: turns the Optimization Agent's result into advice a manager can act on.

The paper's two scenarios:

* (s,S) wins (or base-stock / the exact DP, which we also phrase as rules): explain s and S in plain words and
  day-to-day terms ("check your stock each morning; when stock on hand plus on order falls below 40, order
  enough to bring it to 65").
* DQN wins: present it as an on-demand expert, ask for current inventory, day and pipeline, call the
  `calculate_dqn_order` tool (backed by `OptimizationResult.recommender()`), and offer the (s,S) alternative
  with its % extra cost when the manager is skeptical.

Every reply ends with "Do you have any other questions?" and the dialogue is archived as `interpret.txt`.
Two backends: `TemplateInterpreter` (offline stand-in for the LLM: templates + keyword intents) and
`LLMInterpreter` (OpenAI tool calling through `llm.client.run_tool_loop`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from agents.prompts import CLOSING_QUESTION, INTERPRETATION_SYSTEM_PROMPT
from llm.client import LLMClient, run_tool_loop

__all__ = ["DQN_TOOL", "ORDER_TOOL", "WHAT_IF_TOOL", "InterpretationAgent", "LLMInterpreter", "TemplateInterpreter",
           "ensure_closing", "never_orders", "parse_state"]

DQN_TOOL = {
    "type": "function",
    "function": {
        "name": "calculate_dqn_order",
        "description": "Recommended order quantity from the trained DQN policy for the current state.",
        "parameters": {
            "type": "object",
            "properties": {
                "current_inventory": {"type": "integer", "description": "units on hand now (negative = backlog)"},
                "current_time_step": {"type": "integer", "description": "day of the plan, 0 = first day"},
                "pipeline_orders": {"type": "array", "items": {"type": "integer"},
                                    "description": "orders placed but not received, oldest (arriving next) first"},
            },
            "required": ["current_inventory", "current_time_step", "pipeline_orders"],
        },
    },
}


ORDER_TOOL = {
    "type": "function",
    "function": {
        "name": "calculate_order",
        "description": "How many units to order now under the recommended policy, given the stock on hand and the "
                       "units already ordered but not received. Always use this for 'how much should I order'.",
        "parameters": {
            "type": "object",
            "properties": {
                "on_hand": {"type": "integer", "description": "units on hand now (negative = owed to customers)"},
                "in_transit": {"type": "integer", "description": "units ordered earlier and not yet received"},
            },
            "required": ["on_hand", "in_transit"],
        },
    },
}
WHAT_IF_TOOL = {
    "type": "function",
    "function": {
        "name": "what_if",
        "description": "Re-run the optimisation with some problem parameters changed and return the old and new "
                       "policy and expected cost. Keys are parameter names (lead_time, holding_cost, penalty_cost, "
                       "setup_cost, max_inventory, max_order, demand_distribution, state_transition_model, "
                       "time_horizon, risk_tolerance, perishability, demand_type).",
        "parameters": {
            "type": "object",
            "properties": {"changes": {"type": "object", "description": "parameter name -> new value"}},
            "required": ["changes"],
        },
    },
}


def ensure_closing(text: str) -> str:
    """The paper's rule: every reply ends by inviting more questions."""
    text = (text or "").rstrip()
    if text.endswith(CLOSING_QUESTION):
        return text
    return f"{text} {CLOSING_QUESTION}".strip()


def _money(x: float) -> str:
    return f"${x:,.2f}"


def scenario(result: Any) -> str:
    return "dqn" if result.winner.name == "dqn" else "ss"


def presented(result: Any) -> Any:
    """The rule the manager is told to follow: the winner if it is a simple rule, else the best (s,S)."""
    return result.winner if result.winner.name in ("ss", "base_stock") else result.best_ss


def never_orders(result: Any) -> bool:
    """(s=0, S) or S=0 under lost sales: the stock position never falls below the trigger, so no order is placed."""
    w = presented(result)
    trigger = w.params.get("s", w.params.get("S", 0) + 1 if w.name == "base_stock" else 0)
    if w.name == "base_stock":
        return int(w.params["S"]) <= 0
    return result.problem.lost_sales and int(trigger) <= 0


def _never_text(result: Any) -> str:
    p = result.problem
    return (f"In plain words: never order. With these numbers (holding ${p.holding_cost:g} per unit per day, a lost "
            f"sale ${p.penalty_cost:g}, ${p.setup_cost:g} per order) restocking costs more than the sales it saves, "
            f"so the cheapest plan is to sell what you have and not reorder. If that sounds wrong, one of the costs "
            f"is probably off - ask me 'what if' with the right number")


def _opening_text(r) -> str:
    """The first orders from an empty shelf, when the Optimization Agent re-chose them by simulation."""
    opening = ((r.dqn_training or {}).get("opening") or {})
    orders = opening.get("opening") or []
    if not opening.get("applied") or not orders:
        return ""
    days = ", ".join(f"day {t}: {a}" for t, a in enumerate(orders))  # day 0 = the first day, as the tool counts
    return (f" Starting from an empty shelf, the first {len(orders)} orders ({days}) are placed before anything is "
            f"on the shelf, so they were checked one by one against every alternative in simulation.")


def _residual_text(r) -> str:
    """The order offsets after the opening, when simulation found some that clearly lower the cost."""
    residual = ((r.dqn_training or {}).get("residual") or {})
    if not residual.get("kept_after_check"):
        return ""
    saved = residual.get("own_cost", 0.0) - residual.get("improved_cost", 0.0)
    return (f" After training, the network's orders were nudged by a unit or two where simulation showed it "
            f"leaning the same way (for example in the last days whose deliveries still arrive in time); "
            f"that saved about ${saved:,.2f} over the plan on the test runs.")


def rule_text(result: Any) -> str:
    """The winning (or best simple) rule in day-to-day words."""
    p = result.problem
    w = presented(result)
    if never_orders(result):
        return _never_text(result)
    cap = f" (an order can be at most {p.max_order} units, so if you need more, order {p.max_order})"
    if w.name == "base_stock":
        S = int(w.params["S"])
        return (f"check your stock each morning and order enough to bring stock on hand plus on order back up to "
                f"{S} units{cap}")
    s, S = int(w.params["s"]), int(w.params["S"])
    return (f"check your stock each morning; when stock on hand plus what is already on order falls below {s}, "
            f"order enough to bring it up to {S}{cap}")


def _cost_line(result: Any, score: Any) -> str:
    p = result.problem
    return (f"it is expected to cost about {_money(score.mean_cost)} over the {p.horizon}-day plan "
            f"({_money(score.mean_cost / p.horizon)} a day on average)")


def parse_state(text: str, lead_time: int) -> dict[str, Any] | None:
    """Current inventory, day and pipeline from a free-text answer, or None if something is missing.

    Reads labelled numbers ("inventory 12", "day 5", "on order: 10, 0, 5"); with three or more bare numbers
    and no labels it takes inventory, day, then the pipeline. A short pipeline is padded with zeros in front
    (nothing older is on the way), which the reply mentions.
    """
    low = text.lower()
    nums = lambda s: [int(float(x)) for x in re.findall(r"-?\d+(?:\.\d+)?", s)]  # noqa: E731
    inv = re.search(r"(?:inventory|on hand|in stock|stock|have)\D{0,20}?(-?\d+)", low)
    day = re.search(r"(?:day|time step|step|period)\D{0,8}?(\d+)|(\d+)(?:st|nd|rd|th)? day", low)
    pipe = re.search(r"(?:pipeline|on order|in transit|outstanding|orders?)\b[^0-9\-]{0,25}((?:-?\d+\s*(?:,|and|\s)\s*)*"
                     r"-?\d+)", low)
    no_pipe = re.search(r"nothing (?:on order|in transit|coming)|no (?:orders|pipeline)|none on order", low)
    state: dict[str, Any] = {}
    if inv:
        state["current_inventory"] = int(inv.group(1))
    if day:
        state["current_time_step"] = int(day.group(1) or day.group(2))
    if pipe:
        state["pipeline_orders"] = nums(pipe.group(1))
    elif no_pipe or lead_time == 0:
        state["pipeline_orders"] = []
    if len(state) < 3:
        values = nums(low)
        if not (inv or day or pipe) and len(values) >= 2 + (lead_time > 0):
            state = {"current_inventory": values[0], "current_time_step": values[1],
                     "pipeline_orders": values[2:]}
        else:
            return None if not {"current_inventory", "current_time_step"} <= set(state) else {
                **state, "pipeline_orders": state.get("pipeline_orders", [])}
    return state


class InterpreterBackend(Protocol):
    def start(self, agent: InterpretationAgent) -> str: ...

    def ask(self, agent: InterpretationAgent, question: str) -> str: ...


class InterpretationAgent:
    """Holds the result, the DQN tool and the archive; a backend writes the words."""

    def __init__(self, result: Any, backend: InterpreterBackend | None = None, recommender: Any = None,
                 optimize: Callable[[Any], Any] | None = None) -> None:
        self.result = result
        self.optimize = optimize  # problem -> OptimizationResult, for what-if questions (the optimisation service)
        self.pending_intent: str | None = None  # "order_now" while waiting for the stock numbers
        self.partial_stock: Any = None  # what the manager already said about the stock (agents.intents.StockState)
        self.last_what_if: Any = None  # the re-optimised result of the latest what-if
        self.scenario = scenario(result)
        self._recommender = recommender
        self.backend: InterpreterBackend = backend or TemplateInterpreter()
        self.transcript: list[tuple[str, str]] = []
        self.tool_calls: list[dict[str, Any]] = []
        self.finished = False

    @property
    def recommender(self) -> Any:
        if self._recommender is None and self.scenario == "dqn":
            self._recommender = self.result.recommender()
        return self._recommender

    def calculate_dqn_order(self, current_inventory: int, current_time_step: int,
                            pipeline_orders: list[int] | None = None) -> dict[str, Any]:
        """The tool: the trained DQN's recommendation (errors are raised for the caller to report)."""
        rec = self.recommender
        if rec is None:
            raise RuntimeError("no trained DQN is available for this problem; use the (s,S) rule instead")
        out = dict(rec.recommend_order(current_inventory, current_time_step, list(pipeline_orders or [])))
        self.tool_calls.append({"arguments": {"current_inventory": current_inventory,
                                              "current_time_step": current_time_step,
                                              "pipeline_orders": list(pipeline_orders or [])}, "result": out})
        return out

    def calculate_order(self, on_hand: int, in_transit: int = 0) -> dict[str, Any]:
        """The tool: today's order under the presented rule (the policy object from the optimiser, capped by the
        project's one capacity rule). For a DQN winner the DQN tool answers instead (it needs the pipeline)."""
        import numpy as np

        from inventory.dynamics import cap_order

        r = self.result
        w = presented(r)
        policy = r.policy_for(w.name)
        position = int(on_hand) + int(in_transit)
        raw = policy.order_from_position(np.array([[position]], dtype=float), 0)
        order = int(cap_order(raw, np.array([[position]]), r.problem.max_order, r.problem.max_inventory)
                    .reshape(-1)[0])
        out = {"on_hand": int(on_hand), "in_transit": int(in_transit), "position": position, "order": order,
               "policy": w.label, "params": dict(w.params)}
        self.tool_calls.append({"tool": "calculate_order", "arguments": {"on_hand": on_hand, "in_transit": in_transit},
                                "result": out})
        return out

    def what_if(self, changes: dict[str, Any]) -> dict[str, Any]:
        """The tool: re-optimise with `changes` applied (through the optimisation service) and compare."""
        from inventory.spec import normalise_value, problem_from_values, problem_values

        if not changes:
            raise ValueError("changes: give at least one parameter and its new value")
        values = problem_values(self.result.problem)
        for name, value in changes.items():
            if name not in values:
                raise ValueError(f"changes: {name!r} is not a parameter; allowed: {', '.join(values)}")
            values[name] = normalise_value(name, value)
        if "demand_distribution" in changes and "demand_type" not in changes:
            values["demand_type"] = "deterministic" if values["demand_distribution"].kind == "deterministic" \
                else "random"
        problem = problem_from_values(values)
        new = (self.optimize or _default_optimize)(problem)
        old_w, new_w = presented(self.result), presented(new)
        out = {"changes": {k: str(v) for k, v in changes.items()},
               "old": {"policy": old_w.label, "mean_cost": old_w.mean_cost, "params": dict(old_w.params)},
               "new": {"policy": new_w.label, "mean_cost": new_w.mean_cost, "params": dict(new_w.params)},
               "new_never_orders": never_orders(new)}
        self.tool_calls.append({"tool": "what_if", "arguments": {"changes": out["changes"]}, "result": out})
        self.last_what_if = new
        return out

    def start(self) -> str:
        return self._log_agent(ensure_closing(self.backend.start(self)))

    def ask(self, question: str) -> str:
        self.transcript.append(("user", question))
        return self._log_agent(ensure_closing(self.backend.ask(self, question)))

    def save(self, out_dir: str | Path) -> Path:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        path = out / "interpret.txt"
        path.write_text("".join(f"{who.upper()}: {text}\n\n" for who, text in self.transcript), encoding="utf-8")
        return path

    def _log_agent(self, text: str) -> str:
        self.transcript.append(("agent", text))
        return text


_SKEPTIC = re.compile(r"don't trust|do not trust|not sure (?:about|i trust)|skeptic|sceptic|black box|simpler|"
                      r"simple rule|rule of thumb|why should i|alternative|can't follow|too complicated|instead|"
                      r"rather have|prefer a|without the (?:ai|model)")
_DONE = re.compile(r"^\W*(?:no|nope|that's all|that is all|nothing(?: else)?|no thanks|no, thanks|i'm good|all good|"
                   r"thanks,? that's it|bye|quit|exit)\W*$")


def _default_optimize(problem: Any) -> Any:
    from optimization.service import OptimizationAgent, OptimizationConfig

    return OptimizationAgent(OptimizationConfig(dqn=False, replications=500, search_replications=200)).run(problem)


class TemplateInterpreter:
    """Offline stand-in for the interpretation LLM: fixed templates and keyword intents, honest about limits."""

    def start(self, agent: InterpretationAgent) -> str:
        r = agent.result
        if agent.scenario == "dqn":
            pct = r.ss_extra_cost_pct
            return (f"The best policy for your problem is a trained reinforcement-learning agent (a DQN): think of it "
                    f"as an on-demand expert you consult each day, and it beat the best simple reorder rule by "
                    f"{pct:.1f}% on average cost. To get today's recommendation, tell me your current inventory on "
                    f"hand, today's day number in the plan (0 = first day), and the orders already placed but not "
                    f"yet received, oldest first ({r.problem.lead_time} numbers).")
        w = r.winner if r.winner.name in ("ss", "base_stock") else r.best_ss
        intro = "The best policy for your problem is"
        if r.winner.name == "dp":
            intro = (f"The exact optimal policy is a table of decisions by stock level; the best simple rule costs "
                     f"{r.ss_extra_cost_pct:.1f}% more on average but is easy to follow:")
        if w.name == "base_stock":
            head = f"{intro} an order-up-to policy with level S = {int(w.params['S'])}."
        else:
            s, S = int(w.params["s"]), int(w.params["S"])
            head = (f"{intro} an (s,S) policy with s = {s} (the reorder point) and S = {S} (the order-up-to "
                    f"level).")
        if never_orders(r):
            return f"{head} {rule_text(r)}; {_cost_line(r, w)}."
        return f"{head} In day-to-day terms: {rule_text(r)}; {_cost_line(r, w)}."

    def ask(self, agent: InterpretationAgent, question: str) -> str:
        from agents.intents import classify, parse_changes, parse_stock
        from inventory.spec import problem_values

        r, q = agent.result, question.lower().strip()
        intent = classify(question)
        if intent.kind == "done":
            agent.finished = True
            return "You're welcome - good luck with your orders!"
        if agent.scenario == "dqn":
            if intent.kind == "skeptic":
                return (f"That's fair. If you prefer a simple rule you can follow by hand: {rule_text(r)} "
                        f"(s = {int(r.best_ss.params['s'])}, S = {int(r.best_ss.params['S'])}). It costs about "
                        f"{r.ss_extra_cost_pct:.1f}% more on average than the DQN expert.")
            state = parse_state(question, r.problem.lead_time)
            if state is not None:
                pipe = list(state["pipeline_orders"])
                note = ""
                if len(pipe) < r.problem.lead_time:
                    note = f" (I assumed nothing older is on the way: pipeline {[0] * (r.problem.lead_time - len(pipe)) + pipe})"
                    pipe = [0] * (r.problem.lead_time - len(pipe)) + pipe
                try:
                    out = agent.calculate_dqn_order(state["current_inventory"], state["current_time_step"], pipe)
                except Exception as exc:  # bad numbers: say what is wrong
                    return f"I couldn't compute that: {exc}."
                return (f"With {state['current_inventory']} units on hand on day {state['current_time_step']} and "
                        f"{sum(pipe)} units on the way{note}, the expert recommends ordering "
                        f"{out['recommended_order']} units today.")
        stock = parse_stock(question)
        if intent.kind == "order_now" or (agent.pending_intent == "order_now" and intent.kind == "other"
                                          and (stock.on_hand is not None or stock.in_transit is not None)):
            if agent.scenario == "dqn":
                return ("The DQN expert needs your inventory on hand, today's day number in the plan and the orders "
                        "on the way, oldest first - tell me those and I'll ask it.")
            if stock.on_hand is None or stock.in_transit is None:
                agent.pending_intent = "order_now"
                agent.partial_stock = stock if stock.on_hand is not None or stock.in_transit is not None else None
                missing = "how many units you have on hand" if stock.on_hand is None else ""
                if stock.in_transit is None:
                    missing += (" and " if missing else "") + "how many are already on order but not yet delivered"
                return f"To tell you today's order I need {missing} (say 0 if none)."
            agent.pending_intent = None
            return _order_answer(agent, stock.on_hand, stock.in_transit)
        if agent.pending_intent == "order_now" and intent.kind == "other":
            prev = agent.partial_stock
            if prev is not None:
                merged = (stock.on_hand if stock.on_hand is not None else prev.on_hand,
                          stock.in_transit if stock.in_transit is not None else prev.in_transit)
                nums = re.findall(r"-?\d+", question)
                if merged[1] is None and len(nums) == 1:
                    merged = (merged[0], int(nums[0]))
                if merged[0] is None and len(nums) == 1:
                    merged = (int(nums[0]), merged[1])
                if None not in merged:
                    agent.pending_intent = None
                    return _order_answer(agent, merged[0], merged[1])
        if intent.kind == "what_if":
            changes = parse_changes(question, problem_values(r.problem))
            if not changes:
                return ("Which number would change, and to what? For example 'what if the lead time were 5 days' "
                        "or 'what if customers don't wait'.")
            try:
                out = agent.what_if(changes)
            except Exception as exc:  # an impossible value: say which and why
                return f"I can't re-run that: {exc}."
            return _what_if_answer(agent, out)
        if intent.kind == "service":
            w = presented(r)
            fill = getattr(w, "fill_rate", float("nan"))
            if fill == fill:
                return (f"With the recommended rule you meet about {100 * fill:.1f}% of demand from stock (the fill "
                        f"rate, over simulated plans of {r.problem.horizon} days); the rest is "
                        f"{'lost' if r.problem.lost_sales else 'delivered late'}. The level balances a shortage cost "
                        f"of ${r.problem.penalty_cost:g} per unit against ${r.problem.holding_cost:g} per unit per "
                        f"day of holding.")
            return "The optimiser did not record a fill rate for this policy."
        if intent.kind == "cost":
            w = presented(r)
            extra = "" if w is r.winner else (f" The exact optimal table ({r.winner.name}) would cost "
                                              f"{_money(r.winner.mean_cost)}.")
            return f"Following the rule, {_cost_line(r, w)} (mean over simulated plans).{extra}"
        if intent.kind == "why" and agent.scenario != "dqn":
            return _why_answer(r)
        if intent.kind in ("why",) or re.search(r"explain|how does|what does|what is s|reorder point|order[- ]up[- ]to|"
                                                r"mean", q):
            if agent.scenario == "dqn":
                return ("The DQN looks at your stock on hand, what is on order and the day, and picks the order "
                        "that minimised expected total cost in thousands of simulated plans."
                        f"{_opening_text(r)}{_residual_text(r)} As a simple rule: {rule_text(r)}.")
            return (f"s is the reorder point: the level of stock on hand plus on order below which you order; S is "
                    f"the level you order up to. In practice: {rule_text(r)}. Counting what is already on order "
                    f"avoids ordering twice while a delivery is on its way.")
        if intent.kind == "compare":
            lines = [f"{s.name} {s.label}: mean cost {_money(s.mean_cost)}" for s in r.scores]
            return "The policies I compared: " + "; ".join(lines) + "."
        if agent.scenario == "dqn":
            return ("I can give you today's order from the DQN expert: tell me your inventory on hand, the day "
                    "number and the orders on the way (oldest first).")
        return ("I can tell you how much to order today (give me your stock on hand and on order), explain the "
                f"levels, or re-run the plan with a changed number ('what if ...'). The rule again: {rule_text(r)}.")


def _order_answer(agent: InterpretationAgent, on_hand: int, in_transit: int) -> str:
    out = agent.calculate_order(on_hand, in_transit)
    r = agent.result
    w = presented(r)
    pos = out["position"]
    head = f"With {on_hand} on hand and {in_transit} on order, your stock position is {pos}"
    if never_orders(r):
        return f"{head}. Order 0 units: the recommended policy never orders ({_never_text(r)})."
    if out["order"] == 0:
        trigger = w.params.get("s")
        why = f"not below the reorder point {int(trigger)}" if trigger is not None else \
            f"already at or above the order-up-to level {int(w.params['S'])}"
        return f"{head}, {why}, so order 0 units today."
    target = int(w.params["S"])
    capped = out["order"] < target - pos
    note = f" (the most one order may bring, given the order limit {r.problem.max_order} and the capacity " \
           f"{r.problem.max_inventory})" if capped else ""
    return f"{head}, below the reorder point, so order {out['order']} units now to bring it up to {target}{note}."


def _why_answer(r: Any) -> str:
    p = r.problem
    w = presented(r)
    mu = p.demand.mean
    cover = p.lead_time + 1
    need = mu * cover
    ratio = p.penalty_cost / (p.penalty_cost + p.holding_cost) if p.penalty_cost + p.holding_cost > 0 else 0.0
    parts = [f"It comes from your numbers. You sell about {mu:g} a day and an order takes {p.lead_time} day(s) to "
             f"arrive, so an order placed today has to cover about {cover} days of sales, roughly {need:.0f} units."]
    if never_orders(r):
        parts.append(_never_text(r) + ".")
        return " ".join(parts)
    if "s" in w.params:
        s_, S_ = int(w.params["s"]), int(w.params["S"])
        buffer = s_ - need
        parts.append(f"The reorder point {s_} is that cover {'plus' if buffer >= 0 else 'minus'} a buffer of "
                     f"{abs(buffer):.0f} units, because a shortage costs ${p.penalty_cost:g} per unit while holding "
                     f"one costs ${p.holding_cost:g} a day (so {100 * ratio:.0f}% of the weight is on not running "
                     f"short).")
        parts.append(f"The gap up to S = {S_} ({S_ - s_} units) is how much you order at a time: with "
                     f"${p.setup_cost:g} per order, ordering in batches saves fees, limited by the order cap "
                     f"{p.max_order} and the capacity {p.max_inventory}.")
    else:
        parts.append(f"The order-up-to level {int(w.params['S'])} is that cover plus a buffer against busy days, "
                     f"since a shortage costs ${p.penalty_cost:g} per unit and holding ${p.holding_cost:g} a day.")
    return " ".join(parts)


def _what_if_answer(agent: InterpretationAgent, out: dict[str, Any]) -> str:
    from agents.extraction import LABELS

    change = ", ".join(f"{LABELS.get(k, k)} = {str(v).replace('_', ' ')}" for k, v in out["changes"].items())
    old, new = out["old"], out["new"]
    diff = new["mean_cost"] - old["mean_cost"]
    never = " - that new policy means never ordering" if out["new_never_orders"] else ""
    return (f"I re-ran the optimisation with {change}. Before: {old['policy']}, expected cost "
            f"{_money(old['mean_cost'])} over the plan. After: {new['policy']}, expected cost "
            f"{_money(new['mean_cost'])} ({'+' if diff >= 0 else '-'}{_money(abs(diff))}){never}.")


class LLMInterpreter:
    """The paper's interpretation LLM with the `calculate_dqn_order` tool (OpenAI tool calling)."""

    def __init__(self, client: LLMClient, max_steps: int = 6) -> None:
        self.client = client
        self.max_steps = max_steps
        self.messages: list[dict[str, Any]] = []

    def _system(self, agent: InterpretationAgent) -> str:
        r = agent.result
        data = {"winner": r.winner.as_dict() if hasattr(r.winner, "as_dict") else vars(r.winner),
                "best_ss": r.best_ss.as_dict() if hasattr(r.best_ss, "as_dict") else vars(r.best_ss),
                "scores": [s.as_dict() if hasattr(s, "as_dict") else vars(s) for s in r.scores],
                "ss_extra_cost_pct": r.ss_extra_cost_pct}
        return INTERPRETATION_SYSTEM_PROMPT.format(problem=json.dumps(r.problem.to_dict()),
                                                   result=json.dumps(data, default=str),
                                                   extra=f"{r.ss_extra_cost_pct:.1f}% more")

    def _handlers(self, agent: InterpretationAgent) -> dict[str, Callable[..., Any]]:
        return {"calculate_dqn_order": agent.calculate_dqn_order, "calculate_order": agent.calculate_order,
                "what_if": agent.what_if}

    def start(self, agent: InterpretationAgent) -> str:
        self.messages = [{"role": "system", "content": self._system(agent)},
                         {"role": "user", "content": "Please explain the recommended ordering policy to me."}]
        return self._run(agent)

    def ask(self, agent: InterpretationAgent, question: str) -> str:
        if _DONE.match(question.lower().strip()):
            agent.finished = True
        self.messages.append({"role": "user", "content": question})
        return self._run(agent)

    def _run(self, agent: InterpretationAgent) -> str:
        tools = [DQN_TOOL, WHAT_IF_TOOL] if agent.scenario == "dqn" else [ORDER_TOOL, WHAT_IF_TOOL]
        reply, self.messages = run_tool_loop(self.client, self.messages, tools, self._handlers(agent),
                                             max_steps=self.max_steps)
        text = reply.content or ""
        if never_orders(agent.result) and "never order" not in text.lower():
            text = f"{text} {_never_text(agent.result)}.".strip()  # said plainly whatever the model wrote
        return text
