"""Sweep tests (issue 10): the offline reader on phrasings nobody hand-wrote.

`tests/phrasing_sweep.py` builds messages from random trades, item nouns, number formats (digits, words,
dozens), currencies ($, EUR, GBP, "bucks", "quid", cents, "4 dollars 50"), rate periods (converted to per day),
clause joiners (". ", "; ", ", and ", " - ") and never-value distractors (years, phone and street numbers,
staff and van counts, margins). The properties: every stated field is read exactly, nothing else is stored,
fields the text leaves open are asked back (not stored), and a distractor never changes the reading.
Hypothesis draws the seeds (derandomised, so a failure reproduces).
"""

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from phrasing_sweep import CLAUSES, TRADES, _join, ask_clause, distractor, manager_sample, never_sample

from agents.extraction import ACTION_CLARIFY, ExtractionAgent
from agents.extraction_eval import DEFAULT_CORPUS, evaluate_heldout, exact_match
from agents.extraction_rules import parse_utterance

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
FAST = settings(max_examples=150, deadline=None, derandomize=True)


def _wrong(sample, values) -> dict:
    bad = {k: (values.get(k), v) for k, v in sample.fields.items() if not exact_match(k, values.get(k), v)}
    bad.update({k: (values[k], "ask") for k in sample.ask if k in values})
    bad.update({k: (v, None) for k, v in values.items() if k not in sample.fields and k not in sample.ask})
    return bad


@FAST
@given(SEEDS)
def test_random_messages_are_read_exactly_and_nothing_is_invented(seed):
    s = manager_sample(random.Random(seed))
    bad = _wrong(s, parse_utterance(s.text).values)
    assert not bad, f"{s.text!r}: {bad}"


@FAST
@given(SEEDS)
def test_never_values_are_never_stored(seed):
    s = never_sample(random.Random(seed))
    r = parse_utterance(s.text)
    assert r.values == {} and not r.conflicts and not r.ambiguous, f"{s.text!r}: {r.values} {r.ambiguous}"


@settings(max_examples=100, deadline=None, derandomize=True)
@given(SEEDS)
def test_a_distractor_does_not_change_the_reading(seed):
    rng = random.Random(seed)
    trade, item = rng.choice(TRADES)
    clauses = [make(rng, item)[0] for make in rng.sample(CLAUSES, rng.randint(1, 3))]
    text = _join(rng, clauses)
    noisy = f"{distractor(rng, trade)} {text}" if rng.random() < 0.5 else f"{text} {distractor(rng, trade)}"
    assert parse_utterance(noisy).values == parse_utterance(text).values, noisy


@settings(max_examples=60, deadline=None, derandomize=True)
@given(SEEDS)
def test_an_ambiguous_mention_is_asked_back_by_the_agent_never_stored(seed):
    rng = random.Random(seed)
    _, item = rng.choice(TRADES)
    text, _, ask = ask_clause(rng, item)
    agent = ExtractionAgent()
    agent.start()
    turn = agent.step(text[0].upper() + text[1:] + ".")
    for name in ask:
        assert agent.table.status(name) != "defined", f"{text!r} stored {name}={agent.table.get(name)}"
    if "risk_tolerance" not in ask:  # a verbal risk attitude is simply asked later, on the scale
        assert turn.action == ACTION_CLARIFY, (text, turn.action, turn.message)


def test_two_candidate_costs_are_a_clarification_in_dollars_resolved_by_a_value():
    agent = ExtractionAgent()
    agent.start()
    turn = agent.step("The order fee is 5 dollars, maybe 6.")
    assert turn.action == ACTION_CLARIFY and "$5 per order" in turn.message and "$6 per order" in turn.message
    assert agent.table.status("setup_cost") != "defined"
    agent.step("6")
    assert agent.table.get("setup_cost") == 6


def test_per_pallet_cost_is_divided_by_the_pallet_size_and_said_back():
    r = parse_utterance("Storage is $45 per pallet per month; a pallet holds 50 units.")
    assert abs(r.values["holding_cost"] - 0.03) < 1e-9 and "max_order" not in r.values
    assert any("per pallet" in n for n in r.notes)
    # without the pallet's size the per-unit cost is unknown: not stored
    assert "holding_cost" not in parse_utterance("Storage is $45 per pallet per month.").values
    # a pallet size with no per-pallet cost is still an order limit when asked
    assert parse_utterance("One pallet per order, and a pallet is 60 units.", "max_order").values == {"max_order": 60}


def test_risk_words_are_mapped_only_as_the_answer_to_the_scale_question():
    assert "risk_tolerance" not in parse_utterance("We're quite cautious, to be honest.").values
    assert parse_utterance("We're quite cautious, to be honest.", "risk_tolerance").values["risk_tolerance"] == -5
    assert "risk_tolerance" not in parse_utterance("Risk tolerance 15.").values
    assert parse_utterance("Risk: somewhere between -2 and 2.").ambiguous == {"risk_tolerance": (-2.0, 2.0)}
    assert parse_utterance("Risk? Minus seven.").values == {"risk_tolerance": -7}


def test_issue10_dev_sets_are_read_right_with_nothing_invented():
    report = evaluate_heldout(DEFAULT_CORPUS.parent / "extraction_dev_issue10.jsonl")
    assert report.invented == 0 and report.accuracy == 1.0, report.failures
    for name, least in (("extraction_dev2_issue10.jsonl", 0.98), ("extraction_dev3_issue10.jsonl", 0.98),
                        ("extraction_dev4_issue10.jsonl", 0.95)):  # the misses left are listed in docs/dialogue.md
        report = evaluate_heldout(DEFAULT_CORPUS.parent / name)
        assert report.invented == 0 and report.accuracy >= least, report.failures
