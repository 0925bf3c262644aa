"""The Information Extraction Agent's table discipline: validation, conflict rules, clarifications, ending."""

from agents.extraction import (
    ACTION_CLARIFY,
    ACTION_CONFIRM,
    ACTION_NEXT,
    ACTION_TERMINATE,
    QUESTION_ORDER,
    ExtractionAgent,
)
from inventory.spec import ParameterTable

FULL = [
    "We plan 90 days ahead.", "It varies from day to day.", "About 6 a day on average, Poisson.", "No, nothing spoils.",
    "They buy elsewhere.", "$0.50 per unit per day", "$5 per lost unit", "$20 per order", "3 days",
    "We can store 60 units.", "At most 40 units per order.", "-2", "yes",
]


def _agent_with(*messages):
    a = ExtractionAgent()
    a.start()
    turns = [a.step(m) for m in messages]
    return a, turns


def test_full_interview_terminates_with_valid_problem_and_risk_last(tmp_path):
    a, turns = _agent_with(*FULL)
    asked = [t.asking for t in turns if t.action == ACTION_NEXT]
    assert asked == list(QUESTION_ORDER[1:])  # time_horizon was asked by the first answer's turn
    assert asked[-1] == "risk_tolerance"
    assert turns[-1].action == ACTION_TERMINATE and a.done
    p = a.problem()
    assert (p.horizon, p.demand.describe(), p.lost_sales, p.lead_time, p.max_order, p.risk_tolerance) == (
        90, "poisson(6)", True, 3, 40, -2.0)
    csv_path, log_path = a.save(tmp_path)
    assert ParameterTable.from_csv(csv_path).to_problem() == p
    assert "USER: -2" in log_path.read_text()


def test_restated_value_asks_with_both_values_and_resolves_by_value():
    a, turns = _agent_with("We plan 90 days ahead.", "It varies.", "we plan for 30 days")
    t = turns[-1]
    assert t.action == ACTION_CLARIFY and "90 days" in t.message and "30 days" in t.message and "(2)" in t.message
    assert a.table.status("time_horizon") == "conflict"
    t = a.step("90 is right")
    assert a.table.get("time_horizon") == 90 and a.table.status("time_horizon") == "defined"
    assert t.action == ACTION_NEXT


def test_explicit_correction_is_not_a_conflict():
    a, turns = _agent_with("We plan 90 days ahead.", "Actually, the horizon is 60 days.")
    assert turns[-1].action == ACTION_NEXT and a.table.get("time_horizon") == 60


def test_lost_sale_with_per_day_penalty_is_a_conflict():
    a, turns = _agent_with("They leave, it's a lost sale.", "Each shortage costs us $2 per unit per day.")
    t = turns[-1]
    assert t.action == ACTION_CLARIFY and "lost sale" in t.message and "backlog" in t.message
    a.step("they wait, it's a backlog really")
    assert a.table.get("state_transition_model") == "backlog" and not a.pending


def test_weekly_demand_offers_both_conversions():
    a, turns = _agent_with("About 70 a week, give or take 14.")
    t = turns[-1]
    assert t.action == ACTION_CLARIFY and "square root" in t.message and "divided by 7" in t.message
    a.step("2")
    assert a.table.get("demand_distribution").describe() == "normal(10, 2)"
    a2, _ = _agent_with("About 70 a week, give or take 14.")
    a2.step("the days are independent")
    assert a2.table.get("demand_distribution").describe() == "normal(10, 5.29)"


def test_max_order_above_capacity():
    a, turns = _agent_with("Our order limit is 90 but we can only store 70.")
    t = turns[-1]
    assert t.action == ACTION_CLARIFY and "90" in t.message and "70" in t.message
    a.step("1")
    assert a.table.get("max_order") == 70 and a.table.get("max_inventory") == 70


def test_deterministic_type_with_spread():
    a, turns = _agent_with("Demand is exactly 10 a day, give or take 3.")
    assert turns[-1].action == ACTION_CLARIFY and "deterministic" in turns[-1].message
    a.step("it's random actually")
    assert a.table.get("demand_type") == "random" and a.table.get("demand_distribution").kind == "normal"


def test_impossible_numbers_never_enter_the_table():
    a, turns = _agent_with("We plan 90 days.", "random", "about 6 a day, poisson", "no", "lost sale",
                           "-0.3 per unit per day")
    assert turns[-1].action == ACTION_CLARIFY and "holding cost" in turns[-1].message
    assert a.table.status("holding_cost") == "undefined"
    a.step("0.3 per unit per day")
    assert a.table.get("holding_cost") == 0.3
    b, turns = _agent_with(*FULL[:-2], "15")
    assert turns[-1].action == ACTION_CLARIFY and b.table.status("risk_tolerance") == "undefined"
    assert b.step("ok, use the end of the scale").action == ACTION_CONFIRM
    assert b.step("yes").action == ACTION_TERMINATE
    assert b.problem().risk_tolerance == 10


def test_ambiguous_whole_number_is_clarified():
    a, turns = _agent_with("We plan 90 days.", "random", "about 6 a day, poisson", "no", "lost sale", "$0.5 per unit per day",
                           "$5 per lost unit", "$20 per order", "2 or 3 days")
    assert turns[-1].action == ACTION_CLARIFY and "(1) 2 days" in turns[-1].message
    a.step("3 days")
    assert a.table.get("lead_time") == 3


def test_unknown_twice_falls_back_to_announced_default():
    a, turns = _agent_with("We plan 90 days.", "random", "about 6 a day, poisson", "no", "lost sale", "$0.5 per unit per day",
                           "$5 per lost unit", "not sure", "no idea")
    assert "rough estimate" in turns[-2].message
    assert a.table.get("setup_cost") == 0.0 and "assume" in turns[-1].message


def test_unresolved_clarification_is_repeated_then_defaulted():
    a, _ = _agent_with("We plan 90 days ahead.", "we plan for 30 days")
    t = a.step("hmm")
    assert t.action == ACTION_CLARIFY and t.message.startswith("Sorry")
    a.step("whatever")
    a.step("dunno")
    assert a.table.get("time_horizon") == 90 and not a.pending


def test_capacity_restated_in_the_clarification_resolves_it():
    a, turns = _agent_with("We can store 4 units.", "At most 30 units per order.")
    assert turns[-1].action == ACTION_CLARIFY and "above your storage capacity" in turns[-1].message
    a.step("Storage holds 95 units and the largest order is 30 units.")
    assert (a.table.get("max_inventory"), a.table.get("max_order")) == (95, 30) and not a.pending
