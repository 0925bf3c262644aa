"""Treatments B and C: the textbook stand-in gives parseable advice; the LLM paths and the judge run against a
real local OpenAI-compatible server (ScriptedOpenAIServer)."""

from __future__ import annotations

import pytest

from agents.consultant import (
    TEXTBOOK_NAME,
    Facts,
    llm_consult_with_parameters,
    run_llm_consultant,
    run_textbook_consultant,
    textbook_advice,
    textbook_numbers,
    textbook_with_parameters,
)
from agents.generator import generate_instances
from agents.imitator import HumanImitator
from agents.judge import judge_reply, read_verdict
from agents.policy_parser import parse_policy
from llm.client import LLMClient, LLMConfig

try:
    from tests.llm_server import ScriptedOpenAIServer
except ImportError:  # pytest's rootdir-less import mode puts tests/ itself on sys.path
    from llm_server import ScriptedOpenAIServer  # type: ignore[no-redef]

INSTANCES = generate_instances(40, "consultant-tests")


def client(srv) -> LLMClient:
    return LLMClient(LLMConfig(base_url=srv.base_url, model="scripted", max_retries=0, timeout=5.0))


@pytest.mark.parametrize("style", ["up_to", "batch"])
def test_textbook_advice_parses_to_the_formula(style):
    for inst in INSTANCES:
        facts = Facts.from_problem(inst.problem)
        n = textbook_numbers(facts, style)
        for variant in range(3):
            p = parse_policy(textbook_advice(facts, variant, style), capacity=inst.problem.max_inventory)
            assert p.ok, p.reason
            want = {"s": n["r"] + 1, "S": n["S"]} if style == "up_to" else {"s": n["r"] + 1, "Q": n["Q"]}
            assert p.params == want


def test_textbook_formula_is_the_textbook_one():
    f = Facts(mean=8, sd=2, lead_time=4, holding_cost=0.5, penalty_cost=4.5, setup_cost=0, max_inventory=100,
              max_order=40)
    n = textbook_numbers(f, "up_to")
    assert n["z"] == pytest.approx(1.2816, abs=1e-3)  # critical ratio 0.9
    assert n["r"] == round(8 * 4 + 1.2816 * 2 * 2) and n["S"] == 100


def test_textbook_b_talks_with_the_imitator_and_c_reads_the_truth():
    inst = INSTANCES[0]
    b = run_textbook_consultant(HumanImitator(inst.problem, inst.context, "expert", 3), seed=3)
    assert b.consultant == TEXTBOOK_NAME and b.status == "complete" and b.turns >= 8
    assert b.parsed.actionable and b.transcript[0][0] == "owner"
    c = textbook_with_parameters(inst.problem, seed=3)
    assert c.parsed.ok and c.known["lead_time"] == inst.problem.lead_time


def test_llm_consultant_b_stops_when_the_judge_says_yes():
    inst = INSTANCES[1]
    script = [
        "Thanks! How many units do you sell per day, and how long does delivery take?",  # consultant
        '{"actionable": false, "reason": "only questions"}',  # judge
        "Got it. When your inventory position falls below 24 units, order up to 70 units.",  # consultant
        "yes - it states a reorder point and an order-up-to level",  # judge
    ]
    with ScriptedOpenAIServer(script) as srv:
        res = run_llm_consultant(HumanImitator(inst.problem, inst.context, "typical", 1), client(srv))
        assert len(srv.requests) == 4
        second = srv.requests[2]["messages"]
        assert second[0]["role"] == "system" and "consultant" in second[0]["content"]
        assert second[-1]["role"] == "user"  # the imitator's answer went back to the consultant
    assert res.status == "complete" and res.turns == 2 and res.consultant == "llm"
    assert res.parsed.params == {"s": 24, "S": 70}


def test_llm_consultant_c_sees_the_parameter_file_and_gets_one_nudge():
    inst = INSTANCES[2]
    script = ["It depends on your service goals.", "no", "Use (s, S) = (20, 60).", "yes"]
    with ScriptedOpenAIServer(script) as srv:
        res = llm_consult_with_parameters(inst.problem, inst.context, client(srv))
        assert "max_inventory" in srv.requests[0]["messages"][1]["content"]
    assert res.status == "complete" and res.turns == 2 and res.parsed.params == {"s": 20, "S": 60}


def test_llm_consultant_b_gives_up_after_max_turns():
    inst = INSTANCES[3]
    script = ["Tell me more?", "no", "And your costs?", "no"]
    with ScriptedOpenAIServer(script) as srv:
        res = run_llm_consultant(HumanImitator(inst.problem, inst.context, "typical", 1), client(srv), max_turns=2)
    assert res.status == "max_turns" and not res.parsed.ok


def test_judge_reading_and_fallback():
    assert read_verdict('{"actionable": true, "reason": "r"}') == (True, "r")
    assert read_verdict("No, it only asks questions.")[0] is False
    assert read_verdict("maybe") is None
    assert judge_reply("Order 8 units every day.").actionable  # offline: the parser's verdict
    assert not judge_reply("What is your lead time?").actionable
    with ScriptedOpenAIServer(["I am not sure what you mean"]) as srv:
        v = judge_reply("When stock is below 10 order up to 40.", client(srv))
    assert v.source == "parser" and v.actionable and "unreadable" in v.reason


def test_study_unit_uses_the_llm_endpoint_and_records_llm_errors():
    from evaluation.scoring import score_outcomes
    from evaluation.study import StudyConfig, plan_study
    from evaluation.study_units import run_unit

    with ScriptedOpenAIServer(["Recommendation: (s, S) = (20, 60).", '{"actionable": true, "reason": "s,S"}',
                               {"error": "model overloaded", "status": 400}]) as srv:
        cfg = StudyConfig(name="llm-unit", instances=1, treatments=("C",), replications=100,
                          llm={"base_url": srv.base_url, "model": "scripted", "max_retries": 0, "timeout": 5.0})
        plan = plan_study(cfg)
        inst, unit = plan.instances[0], plan.units[0]
        ok = run_unit(unit, inst, cfg)
        failed = run_unit(unit, inst, cfg)  # the server now answers with an error
    assert ok.status == "ok" and ok.consultant == "llm" and ok.policy_params == {"s": 20, "S": 60}
    assert failed.status == "failed" and failed.stage == "llm" and "overloaded" in failed.reason
    rows = score_outcomes(inst, [ok, failed], cfg)
    assert rows[0]["mc_objective"] > 0 and rows[1]["mc_objective"] != rows[1]["mc_objective"]  # NaN for failed
