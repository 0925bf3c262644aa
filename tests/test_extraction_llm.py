"""The LLM extraction backend against a real local HTTP server (ScriptedOpenAIServer), never a mock."""

import json

from llm_server import ScriptedOpenAIServer

from agents.extraction import ACTION_CLARIFY, ACTION_NEXT, ExtractionAgent
from agents.extraction_llm import ExtractionReply, LLMExtractor
from agents.prompts import extraction_system_prompt
from inventory.spec import PARAMETERS
from llm.client import LLMClient, LLMConfig


def _reply(table: dict, action="ASK_NEXT_QUESTION", prompt="How long is the lead time?", corrections=()):
    cells = {p: {"value": None, "status": "undefined"} for p in PARAMETERS}
    cells.update({k: {"value": v, "status": s} for k, (v, s) in table.items()})
    return json.dumps({"reasoning": "r", "updated_table": cells, "corrections": list(corrections),
                       "action": action, "next_prompt": prompt})


def _agent(srv):
    client = LLMClient(LLMConfig(base_url=srv.base_url, model="scripted", max_retries=0))
    a = ExtractionAgent(LLMExtractor(client))
    a.start()
    return a


def test_prompt_is_the_papers_json_contract():
    text = extraction_system_prompt()
    for word in ("updated_table", "next_prompt", "ASK_CLARIFICATION", "TERMINATE", "risk_tolerance LAST", "sqrt(7)"):
        assert word in text
    reply = ExtractionReply.model_validate_json(_reply({"lead time": ("3", "defined")}))
    assert reply.updated_table["lead_time"].value == "3"  # names are canonicalised


def test_llm_values_pass_the_validator_and_bad_ones_are_rejected():
    with ScriptedOpenAIServer([
        _reply({"time_horizon": ("90 days", "defined"), "holding_cost": ("-1", "defined")}),
    ]) as srv:
        a = _agent(srv)
        t = a.step("We plan 90 days and holding is minus one dollar")
        assert a.table.get("time_horizon") == 90
        assert a.table.status("holding_cost") == "undefined"  # the validator refused it
        assert t.action == ACTION_CLARIFY and "holding cost" in t.message
        sent = srv.requests[0]
        assert sent["response_format"] == {"type": "json_object"}
        assert "Information Extraction Agent" in sent["messages"][0]["content"]
        assert "We plan 90 days" in sent["messages"][-1]["content"]


def test_llm_prompt_used_when_it_agrees_and_repair_on_bad_json():
    with ScriptedOpenAIServer([
        "not json at all",
        _reply({"time_horizon": (90, "defined")}, prompt="Is your demand random or the same every day?"),
    ]) as srv:
        a = _agent(srv)
        t = a.step("90 days")
        assert t.action == ACTION_NEXT and t.message == "Is your demand random or the same every day?"
        assert len(srv.requests) == 2 and "not valid" in srv.requests[1]["messages"][-1]["content"]


def test_llm_flagged_conflict_then_resolution():
    with ScriptedOpenAIServer([
        _reply({"time_horizon": (90, "defined")}),
        _reply({"time_horizon": (90, "conflict")}, action="ASK_CLARIFICATION",
               prompt="You said 90 days and now 30 days: (1) 90 (2) 30?"),
        _reply({"time_horizon": (30, "defined")}, corrections=["time_horizon"]),
    ]) as srv:
        a = _agent(srv)
        a.step("90 days")
        t = a.step("30 days")
        assert t.action == ACTION_CLARIFY and t.message.startswith("You said 90 days")
        assert a.table.status("time_horizon") == "conflict"
        t = a.step("30, sorry")
        assert a.table.get("time_horizon") == 30 and a.table.status("time_horizon") == "defined"
        assert t.action == ACTION_NEXT and srv.remaining == 0


def test_unflagged_change_by_llm_is_still_a_conflict():
    with ScriptedOpenAIServer([_reply({"lead_time": (3, "defined")}), _reply({"lead_time": (5, "defined")})]) as srv:
        a = _agent(srv)
        a.step("3 days")
        t = a.step("5 days")
        assert t.action == ACTION_CLARIFY and "3 days" in t.message and "5 days" in t.message
