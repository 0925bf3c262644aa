"""Policy Interpretation Agent: the two scenarios, the DQN tool, the closing question, the archive."""

import pytest
from llm_server import ScriptedOpenAIServer

from agents.interpretation import InterpretationAgent, LLMInterpreter, parse_state
from agents.prompts import CLOSING_QUESTION
from inventory.demand import Demand
from inventory.problem import Problem
from llm.client import LLMClient, LLMConfig

PROBLEM = Problem(horizon=90, demand=Demand.poisson(6), lost_sales=True, holding_cost=0.5, penalty_cost=5.0,
                  setup_cost=20.0, lead_time=2, max_inventory=80, max_order=50, risk_tolerance=0.0)


class FakeRecommender:
    def __init__(self):
        self.calls = []

    def recommend_order(self, current_inventory, current_time_step, pipeline_orders=()):
        self.calls.append((current_inventory, current_time_step, list(pipeline_orders)))
        if len(pipeline_orders) != 2:
            raise ValueError("pipeline_orders must have 2 entries")
        return {"recommended_order": 17, "q_value": -1.5}


@pytest.fixture
def ss_result(make_score, make_result):
    """An (s,S) winner."""
    ss = make_score("ss", "(s=40, S=65)", {"s": 40, "S": 65}, 450.0)
    return make_result(PROBLEM, [ss], ss, ss, 0.0)


@pytest.fixture
def dqn_result(make_score, make_result):
    """A DQN winner, its best (s,S) 7.1% dearer."""
    ss = make_score("ss", "(s=40, S=65)", {"s": 40, "S": 65}, 450.0)
    dqn = make_score("dqn", "DQN (greedy)", {}, 420.0)
    return make_result(PROBLEM, [dqn, ss], dqn, ss, 7.1, runner_up=ss)


def test_ss_scenario_explains_s_and_S_in_daily_terms(tmp_path, ss_result):
    agent = InterpretationAgent(ss_result)
    first = agent.start()
    assert "s = 40" in first and "S = 65" in first
    assert "check your stock each morning" in first and "falls below 40" in first and "up to 65" in first
    assert first.endswith(CLOSING_QUESTION)
    assert agent.ask("What does s mean?").endswith(CLOSING_QUESTION)
    assert "$450.00" in agent.ask("How much will this cost me?")
    agent.ask("no thanks")
    assert agent.finished
    text = agent.save(tmp_path).read_text()
    assert (tmp_path / "interpret.txt").exists() and "USER: How much will this cost me?" in text


def test_dqn_scenario_asks_for_state_calls_tool_and_offers_ss(dqn_result):
    rec = FakeRecommender()
    agent = InterpretationAgent(dqn_result, recommender=rec)
    first = agent.start()
    assert "on-demand expert" in first and "inventory" in first and "7.1%" in first
    reply = agent.ask("I have 12 units on hand, it's day 5, and on order are 10 and 0")
    assert rec.calls == [(12, 5, [10, 0])] and "17 units" in reply and reply.endswith(CLOSING_QUESTION)
    reply = agent.ask("Hmm, I don't trust a black box. Is there a simple rule?")
    assert "falls below 40" in reply and "7.1% more" in reply
    assert agent.tool_calls[0]["result"]["recommended_order"] == 17


def test_the_dqn_explanation_names_the_opening_orders_when_they_were_rechosen(dqn_result):
    agent = InterpretationAgent(dqn_result, recommender=FakeRecommender())
    agent.start()
    assert "empty shelf" not in agent.ask("How does it work?")  # no opening in the training summary
    dqn_result.dqn_training = {"trainer": "torch", "opening": {"applied": True, "opening": [14, 6]}}
    reply = agent.ask("How does it work?")
    assert "first 2 orders" in reply and "day 0: 14, day 1: 6" in reply and "falls below 40" in reply
    dqn_result.dqn_training["opening"] = {"applied": False, "reason": "backlog"}
    assert "empty shelf" not in agent.ask("How does it work?")


def test_parse_state_forms():
    assert parse_state("inventory 5, day 3, pipeline 1, 2", 2) == {
        "current_inventory": 5, "current_time_step": 3, "pipeline_orders": [1, 2]}
    assert parse_state("7 10 3 4", 2) == {"current_inventory": 7, "current_time_step": 10, "pipeline_orders": [3, 4]}
    assert parse_state("what does it cost?", 2) is None


def test_llm_interpreter_uses_the_tool_loop(dqn_result):
    rec = FakeRecommender()
    script = [
        "It's an on-demand expert. Tell me your inventory, day and pipeline.",
        {"tool_calls": [{"name": "calculate_dqn_order",
                         "arguments": {"current_inventory": 12, "current_time_step": 5, "pipeline_orders": [10, 0]}}]},
        "Order 17 units today. Do you have any other questions?",
    ]
    with ScriptedOpenAIServer(script) as srv:
        client = LLMClient(LLMConfig(base_url=srv.base_url, model="scripted", max_retries=0))
        agent = InterpretationAgent(dqn_result, backend=LLMInterpreter(client),
                                    recommender=rec)
        assert agent.start().endswith(CLOSING_QUESTION)  # appended when the model forgets
        assert agent.ask("12 on hand, day 5, 10 and 0 on order") == "Order 17 units today. Do you have any other questions?"
        assert rec.calls == [(12, 5, [10, 0])]
        assert srv.requests[0]["tools"][0]["function"]["name"] == "calculate_dqn_order"
        assert "7.1% more" in srv.requests[0]["messages"][0]["content"]
        tool_msg = srv.requests[2]["messages"][-1]
        assert tool_msg["role"] == "tool" and '"recommended_order": 17' in tool_msg["content"]


def test_llm_interpreter_ss_scenario_has_the_order_and_what_if_tools(ss_result):
    with ScriptedOpenAIServer(["Order up to 65 when below 40."]) as srv:
        client = LLMClient(LLMConfig(base_url=srv.base_url, model="scripted", max_retries=0))
        agent = InterpretationAgent(ss_result, backend=LLMInterpreter(client))
        assert agent.start() == f"Order up to 65 when below 40. {CLOSING_QUESTION}"
        names = [t["function"]["name"] for t in srv.requests[0]["tools"]]
        assert names == ["calculate_order", "what_if"] and "calculate_dqn_order" not in names
