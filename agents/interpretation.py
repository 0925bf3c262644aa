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

__all__ = ["DQN_TOOL", "InterpretationAgent", "LLMInterpreter", "TemplateInterpreter", "ensure_closing",
           "parse_state"]

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


def rule_text(result: Any) -> str:
    """The winning (or best simple) rule in day-to-day words."""
    p = result.problem
    w = result.winner if result.winner.name in ("ss", "base_stock") else result.best_ss
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

    def __init__(self, result: Any, backend: InterpreterBackend | None = None, recommender: Any = None) -> None:
        self.result = result
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
        return f"{head} In day-to-day terms: {rule_text(r)}; {_cost_line(r, w)}."

    def ask(self, agent: InterpretationAgent, question: str) -> str:
        r, q = agent.result, question.lower().strip()
        if _DONE.match(q):
            agent.finished = True
            return "You're welcome - good luck with your orders!"
        if agent.scenario == "dqn":
            if _SKEPTIC.search(q):
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
        if re.search(r"\bcost|expens|how much will", q):
            w = r.winner
            return f"With the recommended policy {_cost_line(r, w)} (mean over simulated plans)."
        if re.search(r"\bwhy\b|explain|how does|what does|what is s|reorder point|order[- ]up[- ]to|mean", q):
            if agent.scenario == "dqn":
                return ("The DQN looks at your stock on hand, what is on order and the day, and picks the order "
                        "that minimised expected total cost in thousands of simulated plans. As a simple rule: "
                        f"{rule_text(r)}.")
            return (f"s is the reorder point: the level of stock on hand plus on order below which you order; S is "
                    f"the level you order up to. In practice: {rule_text(r)}. Counting what is already on order "
                    f"avoids ordering twice while a delivery is on its way.")
        if re.search(r"compare|other polic|alternativ|base[- ]stock|runner", q):
            lines = [f"{s.name} {s.label}: mean cost {_money(s.mean_cost)}" for s in r.scores]
            return "The policies I compared: " + "; ".join(lines) + "."
        if agent.scenario == "dqn":
            return ("I can give you today's order from the DQN expert: tell me your inventory on hand, the day "
                    "number and the orders on the way (oldest first).")
        return f"I can explain the policy, its costs, or the alternatives. The rule again: {rule_text(r)}."


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
        return {"calculate_dqn_order": agent.calculate_dqn_order}

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
        tools = [DQN_TOOL] if agent.scenario == "dqn" else []
        if tools:
            reply, self.messages = run_tool_loop(self.client, self.messages, tools, self._handlers(agent),
                                                 max_steps=self.max_steps)
        else:
            reply = self.client.chat(self.messages)
            self.messages.append(reply.to_message())
        return reply.content or ""
