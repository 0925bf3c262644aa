"""The offline reader on the hand-written corpus and on phrasing the corpus does not contain."""

import json

import pytest

from agents.extraction_eval import DEFAULT_CORPUS, evaluate_corpus, parsed_fields
from agents.extraction_rules import parse_utterance
from agents.extraction_text import normalise_text, scan_quantities, words_to_number

# measured 100.0% on the tuning corpus and 76.9% on the held-out corpus (never tuned on); floors leave room
CORPUS_FLOOR = 0.95
HOLDOUT_FLOOR = 0.70


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


def test_holdout_field_accuracy_floor():
    report = evaluate_corpus(DEFAULT_CORPUS.with_name("extraction_holdout.jsonl"))
    print(report.summary())
    assert report.utterances >= 40 and report.accuracy >= HOLDOUT_FLOOR


@pytest.mark.parametrize("phrase,value", [("a hundred and fifty", 150), ("twenty-five", 25), ("two thousand", 2000),
                                          ("eleven", 11), ("banana", None)])
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
