"""The offline reader on the hand-written corpus and on phrasing the corpus does not contain."""

import json

import pytest

from agents.extraction_eval import DEFAULT_CORPUS, evaluate_corpus, parsed_fields
from agents.extraction_rules import parse_utterance
from agents.extraction_text import normalise_text, scan_quantities, words_to_number

# measured 100.0% on the tuning corpus and 100.0% on extraction_holdout.jsonl. That file was held out when the
# parser was first written (76.9% then) but its misses were used to develop the parser since, so it is a dev set
# now, not an estimate on unseen phrasing; floors leave room
CORPUS_FLOOR = 0.95
DEV_SET_FLOOR = 0.95


def test_corpus_is_large_and_well_formed():
    rows = [json.loads(line) for line in DEFAULT_CORPUS.read_text().splitlines() if line.strip()]
    assert len(rows) >= 150
    assert len({r["utterance"] for r in rows}) == len(rows)
    assert all(set(r) == {"question_context", "utterance", "expected"} for r in rows)


def test_corpus_field_accuracy_floor():
    report = evaluate_corpus()
    print(report.summary())
    assert report.utterances >= 150
    assert report.accuracy >= CORPUS_FLOOR, report.failures[:10]


def test_holdout_v2_field_accuracy_floor():
    """The independent held-out set (never used for tuning): 93.2% measured; guard against regressions."""
    report = evaluate_corpus(DEFAULT_CORPUS.with_name("extraction_holdout_v2.jsonl"))
    assert report.utterances == 80 and report.accuracy >= 0.90, report.failures


def test_dev_set_field_accuracy_floor():
    report = evaluate_corpus(DEFAULT_CORPUS.with_name("extraction_holdout.jsonl"))
    print(report.summary())
    assert report.utterances >= 40 and report.accuracy >= DEV_SET_FLOOR, report.failures


@pytest.mark.parametrize("phrase,value", [("a hundred and fifty", 150), ("twenty-five", 25), ("two thousand", 2000),
                                          ("eleven", 11), ("twelve", 12), ("banana", None)])
def test_words_to_number(phrase, value):
    assert words_to_number(phrase) == value


def test_quantities_kinds_ranges_and_rates():
    qs = scan_quantities(normalise_text("about 20 cents a day per item, 2 to 3 weeks, 40-50 a week"))
    assert [(q.kind, q.value, q.high, q.period) for q in qs] == [
        ("money", 0.2, None, "day"), ("duration", 14, 21, None), ("bare", 40, 50, "week")]


def test_multi_fact_sentence_assigns_each_number():
    r = parse_utterance("We plan 60 days ahead, the truck charges $150 per delivery, it takes 4 days to arrive "
                        "and the shelf holds 120 units.")
    assert r.values == {"time_horizon": 60, "setup_cost": 150, "lead_time": 4, "max_inventory": 120}


def test_weekly_demand_with_spread_needs_a_conversion_choice():
    r = parse_utterance("around 70 a week, give or take 14", "demand_distribution")
    assert "demand_distribution" not in r.values
    assert r.demand_period is not None
    assert r.demand_period.independent() == "normal(10, 5.29)"
    assert r.demand_period.scaled() == "normal(10, 2)"


def test_flags_unknown_question_correction_and_ambiguity():
    assert parse_utterance("no clue, sorry", "lead_time").unknown
    assert parse_utterance("What do you mean by lead time?", "lead_time").question
    assert parse_utterance("Sorry, I meant 45 days.", "time_horizon").correction
    assert parse_utterance("3 or 4 days", "lead_time").ambiguous == {"lead_time": (3, 4)}


def test_invalid_numbers_are_passed_on_for_the_validator():
    fields = parsed_fields(parse_utterance("minus 2 dollars per unit per day", "holding_cost"))
    assert fields["_invalid"] == ["holding_cost"]


def test_item_price_is_not_a_cost_parameter():
    r = parse_utterance("We buy them at about $40 each and sell for $65.", None)
    assert not {"holding_cost", "penalty_cost", "setup_cost"} & set(r.values)


@pytest.mark.parametrize("text,expected", [
    ("a buck fifty", "$1.50"), ("fifty cents", "50 cents"), ("1.5 dollars", "1.5 dollars"), ("two bucks", "2 bucks"),
    ("three dollars fifty", "$3.50"), ("a dollar twenty-five", "$1.25"), ("two and a half dollars", "2.5 dollars"),
    ("a dozen", "12"), ("two dozen", "24"), ("half a dozen", "6"), ("a couple of days", "2 or 3 days"), ("a couple of boxes", "2 boxes"),
    ("a fortnight", "14 days"), ("minus five", "-5"), ("negative three", "-3"), ("five quid", "5 quid"),
    ("a quarter per unit per day", "$0.25 per unit per day"), ("plan a quarter ahead", "plan 90 days ahead"),
])
def test_money_numbers_and_durations_in_words(text, expected):
    assert normalise_text(text).strip() == expected


def test_money_with_cents_does_not_swallow_a_following_count():
    assert normalise_text("$5 25 units").strip() == "$5 25 units"


@pytest.mark.parametrize("text,context,expected", [
    ("The stockroom can take 250 at most.", "max_inventory", {"max_inventory": 250}),
    ("The backroom holds about 300.", None, {"max_inventory": 300}),
    ("No more than 400 will fit in the back.", "max_inventory", {"max_inventory": 400}),
    ("The truck carries 200 units max.", None, {"max_order": 200}),
    ("The supplier won't send more than 60 at once.", None, {"max_order": 60}),
    ("The van fits 45 units per trip.", "max_order", {"max_order": 45}),
    ("If I order Tuesday it arrives Friday.", None, {"lead_time": 3}),
    ("Monday to Thursday.", "lead_time", {"lead_time": 3}),
    ("Deliveries take about a week.", None, {"lead_time": 7}),
    ("We've been open for 12 years now.", "lead_time", {}),
])
def test_capacity_order_limits_and_lead_times(text, context, expected):
    assert parse_utterance(text, context).values == expected


@pytest.mark.parametrize("text,expected", [
    ("They come back tomorrow for it.", "backlog"), ("We take their number and call them when it arrives.", "backlog"),
    ("They hold on until we restock.", "backlog"), ("They just grab something else.", "lost_sale"),
    ("Most go to the supermarket instead.", "lost_sale"), ("They won't hold on, they leave.", "lost_sale"),
])
def test_customer_behaviour_phrasing(text, expected):
    assert parse_utterance(text, "state_transition_model").values == {"state_transition_model": expected}


@pytest.mark.parametrize("text,expected", [("It's milk.", "perishable"), ("Cut flowers.", "perishable"),
                                           ("Screws and bolts.", "non_perishable"),
                                           ("Detergent, it sits there forever.", "non_perishable"),
                                           ("Bread, but it's frozen and keeps for months.", "non_perishable")])
def test_perishability_from_what_the_goods_are(text, expected):
    assert parse_utterance(text, "perishability").values == {"perishability": expected}


def test_goods_alone_do_not_answer_perishability_unless_asked():
    # the opening names the product; whether it spoils is still asked (a bakery may sell frozen goods)
    assert "perishability" not in parse_utterance("We run a bakery selling bread.", None).values


@pytest.mark.parametrize("text,value", [("minus five", -5), ("Pretty cautious, maybe -6.", -6), ("Neutral.", 0),
                                        ("I'd say negative three.", -3), ("Plus four.", 4)])
def test_risk_in_words(text, value):
    assert parse_utterance(text, "risk_tolerance").values == {"risk_tolerance": value}


def test_hedged_second_value_is_a_range():
    assert parse_utterance("Three days, sometimes four.", "lead_time").ambiguous == {"lead_time": (3, 4)}


def test_hours_minutes_and_distances_are_not_days():
    assert parse_utterance("Delivery takes 48 hours.").values == {"lead_time": 2}
    assert parse_utterance("The supplier is 20 minutes away.").values == {}
