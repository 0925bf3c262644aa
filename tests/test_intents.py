"""The consultation after the policy: intents answered from this problem's numbers and the tools (offline and
through the LLM backend on the scripted local server)."""

from dataclasses import asdict, dataclass, field

import pytest
from llm_server import ScriptedOpenAIServer

from agents.dialogue import Consultant
from agents.intents import classify, parse_changes, parse_stock
from agents.interpretation import InterpretationAgent, LLMInterpreter, never_orders
from agents.prompts import CLOSING_QUESTION
from inventory.demand import Demand
from inventory.policies import SSPolicy
from inventory.problem import Problem
from inventory.spec import problem_values
from llm.client import LLMClient, LLMConfig

PROBLEM = Problem(horizon=60, demand=Demand.poisson(6), lost_sales=False, holding_cost=0.5, penalty_cost=5.0,
                  setup_cost=20.0, lead_time=2, max_inventory=80, max_order=50, risk_tolerance=0.0)


@dataclass
class Score:  # the shape of optimization.service.PolicyScore
    name: str
    label: str
    params: dict
    mean_cost: float
    std_cost: float = 10.0
    objective: float = 0.0
    fill_rate: float = 0.953

    def as_dict(self):
        return asdict(self)


@dataclass
class Result:  # the shape of optimization.service.OptimizationResult (what the interpreter uses)
    problem: Problem
    scores: list
    winner: Score
    best_ss: Score
    ss_extra_cost_pct: float
    policies: dict = field(default_factory=dict)

    def policy_for(self, name):
        return self.policies[name]


def _result(problem=PROBLEM, s=20, S=45, cost=300.0):
    sc = Score("ss", f"(s={s}, S={S})", {"s": s, "S": S}, cost)
    return Result(problem, [sc], sc, sc, 0.0, {"ss": SSPolicy(s, S)})


PHRASINGS = [
    ("How many should I order now? I have 12 on hand and 5 on order.", 28),
    ("what should I order today - 3 units in stock, 10 in transit", 32),
    ("We've got 30 left on the shelf and nothing on order, how much do I buy?", 0),
    ("How much to order? There are 8 here and 0 coming.", 37),
    ("Should I place an order? I still have nine, with four on the way.", 32),
]


@pytest.mark.parametrize("question,expected", PHRASINGS)
def test_how_much_now_is_the_tool_number(question, expected):
    agent = InterpretationAgent(_result())
    agent.start()
    reply = agent.ask(question)
    call = agent.tool_calls[-1]
    assert call["tool"] == "calculate_order" and call["result"]["order"] == expected
    assert f"order {expected} units" in reply and reply.endswith(CLOSING_QUESTION)


def test_how_much_now_asks_for_missing_stock_then_answers():
    agent = InterpretationAgent(_result())
    assert "on order" in agent.ask("how many should I order now?") and not agent.tool_calls
    assert "order 33 units" in agent.ask("12 on hand, nothing on order")


def test_order_is_capped_by_the_projects_capacity_rule():
    agent = InterpretationAgent(_result(s=20, S=45), )
    out = agent.calculate_order(-30, 0)  # 30 owed to waiting customers: S - position = 75 > max order 50
    assert out["order"] == 50


def test_why_uses_this_problems_numbers():
    agent = InterpretationAgent(_result())
    reply = agent.ask("why is that level so high?")
    assert "6 a day" in reply and "2 day" in reply and "$5" in reply and "20" in reply and "45" in reply


def test_service_level_and_cost():
    agent = InterpretationAgent(_result())
    assert "95.3%" in agent.ask("What service level does this give me?")
    assert "$300.00" in agent.ask("what will it cost?")


def test_what_if_reoptimises_and_shows_old_and_new():
    seen = []

    def fake_optimize(problem):
        seen.append(problem)
        return _result(problem, s=30, S=70, cost=410.0)

    agent = InterpretationAgent(_result(), optimize=fake_optimize)
    reply = agent.ask("what if customers don't wait?")
    assert seen[-1].lost_sales is True and seen[-1].lead_time == 2
    assert "(s=20, S=45)" in reply and "(s=30, S=70)" in reply and "$300.00" in reply and "$410.00" in reply
    agent.ask("And what if the lead time were 5 days?")
    assert seen[-1].lead_time == 5
    agent.ask("what if demand doubles?")
    assert seen[-1].demand.mean == pytest.approx(12)
    assert "Which number" in agent.ask("what if things change?")


def test_never_order_is_said_plainly():
    lost = Problem(horizon=60, demand=Demand.poisson(2), lost_sales=True, holding_cost=3.0, penalty_cost=1.0,
                   setup_cost=50.0, lead_time=1, max_inventory=20, max_order=20)
    r = _result(lost, s=0, S=8)
    assert never_orders(r)
    agent = InterpretationAgent(r)
    assert "never order" in agent.start()
    assert "Order 0 units" in agent.ask("how many should I order now? 3 on hand, none on order")


def test_parsers_of_stock_and_changes():
    assert (parse_stock("I have 12 units on hand and 5 on order").on_hand, parse_stock(
        "I have 12 units on hand and 5 on order").in_transit) == (12, 5)
    assert parse_stock("nothing on order, 7 in stock").in_transit == 0
    assert parse_changes("what if the holding cost were $1 per unit per day?", problem_values(PROBLEM)) == {
        "holding_cost": 1}
    assert classify("what if lead time is 4?").kind == "what_if"
    assert classify("how many do I order today?").kind == "order_now"


@pytest.mark.parametrize("message", ["", "x" * 10_240, "\U0001F600", "Combien dois-je commander aujourd'hui"])
def test_hostile_input_after_the_policy_is_a_polite_reask(message):
    c = Consultant()
    c.stage, c.interpreter = "interpretation", InterpretationAgent(_result())
    reply = c.send(message)
    assert reply.endswith(CLOSING_QUESTION) and "order" in reply and not c.interpreter.tool_calls


def test_llm_backend_calls_the_order_and_what_if_tools():
    seen = []

    def fake_optimize(problem):
        seen.append(problem)
        return _result(problem, s=25, S=60, cost=350.0)

    script = [
        "Order up to 45 when below 20.",
        {"tool_calls": [{"name": "calculate_order", "arguments": {"on_hand": 12, "in_transit": 5}}]},
        "Order 28 units now.",
        {"tool_calls": [{"name": "what_if", "arguments": {"changes": {"lead_time": 4}}}]},
        "With a 4-day lead time the rule becomes (s=25, S=60).",
    ]
    with ScriptedOpenAIServer(script) as srv:
        client = LLMClient(LLMConfig(base_url=srv.base_url, model="scripted", max_retries=0))
        agent = InterpretationAgent(_result(), backend=LLMInterpreter(client), optimize=fake_optimize)
        agent.start()
        assert agent.ask("12 on hand, 5 on order: how many now?").startswith("Order 28 units now.")
        tool_msg = srv.requests[2]["messages"][-1]
        assert tool_msg["role"] == "tool" and '"order": 28' in tool_msg["content"]
        agent.ask("what if delivery takes 4 days?")
        assert seen[-1].lead_time == 4 and '"mean_cost": 350.0' in srv.requests[4]["messages"][-1]["content"]
