"""The offline Human Imitator: presets, knobs, answering other consultants, ground truth kept apart."""

import re

import pytest
from llm_server import ScriptedOpenAIServer

from agents.dialogue import run_hybrid_dialogue
from agents.generator import generate_instance
from agents.imitator import PERSONAS, HumanImitator, PersonaProfile, score_extraction, values_match
from agents.imitator.topics import asked_topics
from agents.prompts import QUESTIONS
from inventory.demand import Demand
from inventory.problem import Problem
from inventory.spec import ParameterTable
from llm.client import LLMClient, LLMConfig

TRUTH = Problem(horizon=90, demand=Demand.normal(10, 3), lost_sales=False, holding_cost=0.5, penalty_cost=4.0,
                setup_cost=20.0, lead_time=3, max_inventory=80, max_order=40, risk_tolerance=-3.0)
BASE = PersonaProfile(name="plain", opening_facts=0, verbosity=0.0)


def _answers(profile, question, seeds=range(40), truth=TRUTH):
    return [HumanImitator(truth, "A toy shop.", profile, s).reply(question) for s in seeds]


def test_presets_exist_and_validate():
    assert {"expert", "typical", "vague"} <= set(PERSONAS)
    with pytest.raises(ValueError, match="p_unknown"):
        PersonaProfile(p_unknown=1.5)


def test_same_seed_same_manager_and_truth_untouched():
    a = HumanImitator(TRUTH, "ctx", "vague", 7)
    b = HumanImitator(TRUTH, "ctx", "vague", 7)
    qs = list(QUESTIONS.values())
    assert [a.opening()] + [a.reply(q) for q in qs] == [b.opening()] + [b.reply(q) for q in qs]
    assert a.ground_truth == TRUTH


def test_reveals_only_what_is_asked():
    im = HumanImitator(TRUTH, "A toy shop.", BASE, 0)
    assert im.opening() == "Hi. I run a toy shop."
    answer = im.reply("How many days pass between placing an order and receiving it?")
    assert "3" in answer and "$" not in answer and im.revealed == {"lead_time"}


@pytest.mark.parametrize("question,expected", [
    ("What is your average daily demand?", "demand_distribution"),
    ("How long does delivery take?", "lead_time"),
    ("What does it cost you to hold one unit for a day?", "holding_cost"),
    ("What does it cost you when a customer wants a unit and you have none?", "penalty_cost"),
    ("Is there a fixed cost each time you place an order, regardless of size?", "setup_cost"),
    ("How many units can you store at most?", "max_inventory"),
    ("What is the largest order you can place at once?", "max_order"),
    ("When you run out, do customers wait for the item or buy elsewhere?", "state_transition_model"),
    ("Noted: lead time = 3 days. Over how many days should we plan?", "time_horizon"),
])
def test_plain_questions_are_understood(question, expected):
    assert asked_topics(question)[0] == expected
    assert HumanImitator(TRUTH, "", BASE, 0).reply(question) != ""


def test_knob_unknown():
    assert not any("sure" in a or "know" in a or "idea" in a for a in _answers(BASE, QUESTIONS["lead_time"]))
    unsure = _answers(BASE.with_(p_unknown=1.0), QUESTIONS["lead_time"])
    assert all(re.search(r"sure|know|idea", a) for a in unsure)


def test_knob_imprecise():
    assert not any(re.search(r"\d or \d", a) for a in _answers(BASE, QUESTIONS["lead_time"]))
    assert all(re.search(r"\d or \d", a) for a in _answers(BASE.with_(p_imprecise=1.0), QUESTIONS["lead_time"]))


def test_knob_wrong_units():
    q = QUESTIONS["demand_distribution"]
    assert not any(re.search(r"week|month", a) for a in _answers(BASE, q))
    assert all(re.search(r"week|month", a) for a in _answers(BASE.with_(p_wrong_units=1.0), q))


def test_knob_contradiction():
    def run(profile, seed):
        im = HumanImitator(TRUTH, "", profile, seed)
        return " ".join(im.reply(q) for q in list(QUESTIONS.values()) * 2)
    plain = [run(BASE, s) for s in range(10)]
    contra = [run(BASE.with_(p_contradiction=1.0), s) for s in range(10)]
    assert not any("one more thing" in t for t in plain)
    assert all("one more thing" in t for t in contra)


def test_knob_confusion():
    q = QUESTIONS["state_transition_model"]
    assert not any(re.search(r"lost|elsewhere|leave", a) for a in _answers(BASE, q))  # truth is backlog
    assert all(re.search(r"lost|elsewhere|leave", a) for a in _answers(BASE.with_(p_confusion=1.0), q))


def test_knob_volunteer_jargon_verbosity_impatience():
    q = QUESTIONS["lead_time"]
    assert all("Also," in a for a in _answers(BASE.with_(p_volunteer=1.0), q))
    assert all("Also," not in a for a in _answers(BASE, q))
    dq = QUESTIONS["demand_distribution"]
    assert all(re.search(r"[Nn]ormal", a) for a in _answers(BASE.with_(p_jargon=1.0), dq))
    assert len(" ".join(_answers(BASE.with_(verbosity=1.0), q))) > len(" ".join(_answers(BASE, q)))
    im = HumanImitator(TRUTH, "", BASE.with_(impatience=1.0, patience_turns=0), 0)
    assert re.search(r"speed|longer|quickly", im.reply(q))
    opening_lengths = [len(HumanImitator(TRUTH, "x", BASE.with_(opening_facts=k), 1).opening()) for k in (0, 4)]
    assert opening_lengths[0] < opening_lengths[1]


def test_clarifications_answered_truthfully():
    im = HumanImitator(TRUTH, "", PERSONAS["vague"], 3)
    ans = im.reply("Earlier you said the lead time is 6 days, and now 3 days. (1) 6 days (2) 3 days. Which is right?")
    assert "3" in ans
    ans = im.reply("You said customers who find you out of stock are lost (lost sale), but you gave the shortage "
                   "penalty per unit per day ($4), which is how waiting customers are charged (backlog). "
                   "(1) backlog (2) lost sale. Which is right?")
    assert "backlog" in ans


def test_score_extraction_tolerances():
    t = ParameterTable.from_problem(TRUTH)
    assert all(score_extraction(t, TRUTH).values())
    t.set("holding_cost", 0.52)  # 4% off: fine
    t.set("penalty_cost", 4.4)  # 10% off: wrong
    t.set("risk_tolerance", -2)
    t.set("demand_distribution", "normal(10.8, 9)")  # family + mean within 10%
    t.set("lead_time", 4)
    t.clear("max_order")
    s = score_extraction(t, TRUTH)
    assert s["holding_cost"] and not s["penalty_cost"] and s["risk_tolerance"] and s["demand_distribution"]
    assert not s["lead_time"] and not s["max_order"]
    assert not values_match("demand_distribution", "poisson(10)", "normal(10, 3)")


def test_presets_order_by_difficulty():
    acc, turns = {}, {}
    for name in ("expert", "vague"):
        results = [run_hybrid_dialogue(generate_instance(1, i).problem, generate_instance(1, i).context, name, i)
                   for i in range(25)]
        acc[name] = sum(r.accuracy for r in results) / len(results)
        turns[name] = sum(r.turns for r in results) / len(results)
    assert acc["expert"] >= acc["vague"] and turns["expert"] < turns["vague"]


def test_llm_imitator_against_scripted_server():
    from agents.imitator import LLMHumanImitator

    with ScriptedOpenAIServer(["Hi, I run a toy shop.", "About 3 days."]) as srv:
        client = LLMClient(LLMConfig(base_url=srv.base_url, model="scripted", max_retries=0))
        im = LLMHumanImitator(client, TRUTH, "A toy shop.", "vague", seed=5)
        assert im.opening() == "Hi, I run a toy shop."
        assert im.reply("How long is the lead time?") == "About 3 days."
        system = srv.requests[0]["messages"][0]["content"]
        assert "lead_time,3" in system and "vague" in system and "A toy shop." in system
        assert srv.requests[1]["messages"][-1] == {"role": "user", "content": "How long is the lead time?"}
        assert srv.requests[1]["seed"] == 5
