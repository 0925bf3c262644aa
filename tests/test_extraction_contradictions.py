"""One message that states two different values for a field: the agent asks, it never picks one silently."""

import pytest

from agents.extraction import ACTION_CLARIFY, ACTION_NEXT, ExtractionAgent
from agents.extraction_rules import parse_utterance

BOTH = "Customers will wait for back-ordered units. Customers won't wait, they buy elsewhere."


def _agent(*messages):
    a = ExtractionAgent()
    a.start()
    turns = [a.step(m) for m in messages]
    return a, turns


def test_parser_reports_both_transitions_instead_of_picking_one():
    r = parse_utterance(BOTH, "state_transition_model")
    assert "state_transition_model" not in r.values
    assert r.conflicts == {"state_transition_model": ["backlog", "lost_sale"]}


def test_lost_sale_and_backlog_in_one_message_asks_naming_both():
    a, turns = _agent(BOTH)
    t = turns[-1]
    assert t.action == ACTION_CLARIFY
    assert "backlog" in t.message and "lost sale" in t.message and "(1)" in t.message and "(2)" in t.message
    assert a.table.status("state_transition_model") == "undefined"
    t = a.step("they leave, it's a lost sale")
    assert a.table.get("state_transition_model") == "lost_sale" and not a.pending
    assert t.action == ACTION_NEXT


@pytest.mark.parametrize("answer,expected", [("1", "backlog"), ("the second one", "lost_sale"),
                                             ("They wait for the next delivery, we backorder it.", "backlog")])
def test_transition_contradiction_resolves_by_ordinal_or_words(answer, expected):
    a, _ = _agent(BOTH)
    a.step(answer)
    assert a.table.get("state_transition_model") == expected


def test_contradiction_in_the_opening_with_other_facts_keeps_the_other_facts():
    a, turns = _agent("A shop that sells lamps; customers will wait for back-ordered units. Let's plan for the "
                      "next 90 days. Customers won't wait, they buy elsewhere.")
    assert turns[-1].action == ACTION_CLARIFY and a.table.get("time_horizon") == 90


def test_two_numbers_for_one_field_ask_with_both_values():
    a, turns = _agent("The lead time is 3 days. Delivery takes 6 days.")
    t = turns[-1]
    assert t.action == ACTION_CLARIFY and "3 days" in t.message and "6 days" in t.message
    a.step("6 days")
    assert a.table.get("lead_time") == 6 and not a.pending
    b, _ = _agent("The lead time is 3 days. Delivery takes 6 days.")
    b.step("actually it's 4")  # a fresh value answers it too
    assert b.table.get("lead_time") == 4


def test_perishability_contradiction_and_a_defined_field():
    a, turns = _agent("Yes, it goes bad overnight. It never expires.")  # (a life of days is asked, not a contradiction)
    assert turns[-1].action == ACTION_CLARIFY and "perishable" in turns[-1].message
    a.step("2")
    assert a.table.get("perishability") == "non_perishable"
    # a field already in the table is put in conflict until the manager says which value holds
    b, turns = _agent("Lead time is 2 days.", "The lead time is 3 days. Delivery takes 6 days.")
    assert turns[-1].action == ACTION_CLARIFY and b.table.status("lead_time") == "conflict"
    b.step("6 days")
    assert b.table.get("lead_time") == 6 and b.table.status("lead_time") == "defined"


def test_correction_inside_one_message_takes_the_later_value():
    r = parse_utterance("We plan 30 days, sorry, I meant 45 days.", "time_horizon")
    assert r.values == {"time_horizon": 45} and not r.conflicts and r.correction
    r = parse_utterance("They wait. Actually no, they leave.", "state_transition_model")
    assert r.values == {"state_transition_model": "lost_sale"} and not r.conflicts


@pytest.mark.parametrize("text, expected", [
    # a short reason between the cue and the new figure
    ("The delivery charge was 30 pounds, no, they put it up, now 35 pounds a delivery.", {"setup_cost": 35}),
    ("Horizon 60 days. Wait, no, the season got longer, now 75 days.", {"time_horizon": 75}),
    # the correction opens the next sentence
    ("The fee per shipment is $12... Sorry, $14.", {"setup_cost": 14}),
    ("Lead time is 4 days. Oops, 5.", {"lead_time": 5}),
])
def test_correction_with_a_reason_or_in_the_next_sentence_replaces_the_number(text, expected):
    r = parse_utterance(text)
    assert {k: r.values[k] for k in expected} == expected and not r.conflicts
    assert "state_transition_model" not in r.values  # "wait" here is the speaker's, not customers waiting


def test_a_new_sentence_with_its_own_field_is_not_a_correction():
    r = parse_utterance("Lead time is 4 days. Holding is 2 a day.")
    assert r.values["lead_time"] == 4 and r.values["holding_cost"] == 2
    r = parse_utterance("If we're out they wait. The fee is 20 per order.")
    assert r.values["state_transition_model"] == "backlog" and r.values["setup_cost"] == 20


def test_a_courier_figure_per_order_is_its_fee():
    assert parse_utterance("courier 9 per order, 3 day wait").values["setup_cost"] == 9
    assert parse_utterance("the van brings 40 per order").values["max_order"] == 40


def test_same_figure_said_twice_is_not_a_contradiction():
    assert not parse_utterance("We plan about 3 months, so 90 days.").conflicts
    r = parse_utterance("The holding cost is $1 per unit per month, so about 3 cents a day.")
    assert not r.conflicts and abs(r.values["holding_cost"] - 1 / 30) < 1e-4
    # a number said without a keyword (chit-chat) neither overrides nor contradicts the answer
    r = parse_utterance("We usually plan 60 days ahead. I've got 3 kids, ha.", "time_horizon")
    assert r.values == {"time_horizon": 60} and not r.conflicts
