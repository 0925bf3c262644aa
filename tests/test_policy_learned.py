"""The learned advice model (agents.policy_learned): where it speaks, that it is precise, and the parser's fallback."""

import json

import pytest

from agents import policy_parser
from agents.policy_learned import ADVICE_TRAIN_DIR, LearnedAdvice, learned_advice, training_examples
from agents.policy_parser import normalise_advice, parse_policy
from agents.policy_parser_eval import heldout_ok


@pytest.fixture
def rules_only():
    policy_parser.LEARNED_ADVICE = False
    yield
    policy_parser.LEARNED_ADVICE = True


def test_labels_are_recovered_by_value():
    rows, labels = training_examples(sorted(ADVICE_TRAIN_DIR.glob("*.jsonl")), normalise_advice)
    assert len(rows) == len(labels) > 1500
    assert {"s", "S", "Q", "none"} <= set(labels)


@pytest.mark.parametrize("text, kind, params", [
    # phrasings the rules do not know, written for this test
    ("Reordering threshold = 14 jars; replenishment = 40 jars.", "sq", {"s": 14, "Q": 40}),
])
def test_the_fallback_reads_what_the_rules_miss(text, kind, params, rules_only):
    assert parse_policy(text).status == "unparseable"  # the rules alone
    policy_parser.LEARNED_ADVICE = True
    p = parse_policy(text)
    assert (p.status, p.kind, p.params) == ("ok", kind, params) and "learned advice model" in p.reason


@pytest.mark.parametrize("text", [
    "Option A: reorder at 20, order up to 60. Option B: reorder at 30, order up to 70.",  # no pick: stays open
    "Order up to capacity whenever the inventory position is below 25.",  # the capacity is needed
    "Thanks for the numbers: demand is about 12 a day and the lead time 3 days.",  # facts, no policy
    "It depends on your margins; I can't recommend numbers yet.",
    "Top-up level 60, trigger 14.",  # one number in doubt: nothing read rather than half a policy
    "Your reorder point should sit at 22 units and each replenishment should be 60 units.",  # 60: S or Q?
    "Reorder point: 22 units. Each restock: 60 units.",  # 60: Q at p = 0.63 since corpus S, under the 0.7 bar
])
def test_the_fallback_never_invents_a_policy(text):
    # ("... each replenishment should be 60 units" was read as Q until corpus R: S and Q are now 0.45 / 0.47, so the
    # fallback stays silent on it, as it should on a number in doubt; "Each restock: 60" was read as Q until corpus S)
    assert parse_policy(text).status == "unparseable"


def test_no_corpus_advice_without_a_policy_gets_one():
    model = learned_advice()
    assert isinstance(model, LearnedAdvice)
    for path in sorted(ADVICE_TRAIN_DIR.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            if item["policy"]["type"] == "none":
                assert heldout_ok(item["policy"], parse_policy(item["text"]))[0], item["id"]
