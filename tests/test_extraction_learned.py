"""The learned second reader: labels recovered by value, a deterministic fit, and where it may speak."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents import extraction_rules as rules
from agents.extraction_learned import (
    NUMBER_LABELS,
    LearnedReader,
    _number_label,
    learned_reader,
    number_features,
    training_examples,
)
from agents.extraction_text import normalise_text, scan_quantities


def _qs(text: str):
    padded = " " + normalise_text(text).strip() + " "
    return padded, scan_quantities(padded)


def test_labels_are_recovered_by_value_after_the_period_conversion():
    padded, qs = _qs("keeping a sack costs 2.10 a week and the loft takes 90 sacks")
    labels = [_number_label(q, {"holding_cost": 0.3, "max_inventory": 90}, []) for q in qs]
    assert labels == ["holding_cost", "max_inventory"]
    # a value that fits two fields teaches nothing either way; a value that fits none is a "none" example
    _, qs = _qs("the van brings 40 and the shelf holds 40, we opened in 2011")
    assert [_number_label(q, {"max_order": 40, "max_inventory": 40}, []) for q in qs] == [None, None, "none"]


def test_features_stay_inside_the_clause_and_read_nearest_words_first():
    padded, qs = _qs("the chiller holds 80 kg and the mill sends 12 per load")
    first = number_features(padded, qs[0])
    assert "l1:hold" in first and "l2:chiller" in first
    assert "lc:mill" not in first and "rc:mill" not in first  # the other clause is only in the far window
    assert "rf:mill" in first


def _write(tmp_path, rows):
    path = tmp_path / "train.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_fit_is_deterministic_and_learns_a_verb_it_was_shown(tmp_path):
    rows = []
    for i, (place, verb) in enumerate([("cellar", "stores"), ("yard", "has room for"), ("loft", "takes"),
                                       ("shed", "stores"), ("cage", "has room for"), ("bay", "takes")] * 3):
        n = 30 + 7 * i
        rows.append({"id": f"c{i}", "text": f"the {place} {verb} {n} sacks", "fields": {"max_inventory": n}})
        rows.append({"id": f"o{i}", "text": f"the mill sends {n + 1} sacks a load at most",
                     "fields": {"max_order": n + 1}})
        rows.append({"id": f"l{i}", "text": f"it turns up {i % 5 + 2} days after I ring",
                     "fields": {"lead_time": i % 5 + 2}})
    path = _write(tmp_path, rows)
    a, b = LearnedReader.fit([path]), LearnedReader.fit([path])
    assert np.array_equal(a.numbers.weights, b.numbers.weights)
    padded, qs = _qs("the garage has room for 75 sacks")
    field, p, _ = a.number_field(padded, qs[0], None, ("demand_distribution", "max_inventory", "max_order"))
    assert field == "max_inventory" and p > 0.5
    # a field outside `allowed` is never returned, however likely
    field, _, _ = a.number_field(padded, qs[0], None, ("max_order",))
    assert field in (None, "max_order")


def test_the_shipped_model_trains_on_every_corpus_and_covers_every_label():
    reader = learned_reader()
    rows, labels, keyword = training_examples(sorted(rules_train_dir().glob("*.jsonl")))
    assert set(labels) == set(NUMBER_LABELS)
    assert len(rows) > 1000
    assert set(keyword["state_transition_model"][1]) == {"none", "lost_sale", "backlog"}
    assert reader.numbers.classes == NUMBER_LABELS


def rules_train_dir():
    from agents.extraction_learned import TRAIN_DIR
    return TRAIN_DIR


@pytest.fixture
def rules_only():
    rules.use_learned_reader(None)
    yield
    rules._learned_override.clear()


def test_the_learned_reader_fills_what_the_rules_leave_and_is_off_on_request(rules_only):
    text = "the customer ends up at the shop across town if we have none"
    assert rules.parse_utterance(text).values == {}  # no rule phrase for it
    rules._learned_override.clear()
    assert rules.parse_utterance(text).values == {"state_transition_model": "lost_sale"}


def test_the_learned_reader_never_stores_a_number_against_its_kind():
    # a duration is never a cost or a capacity, money never a lead time, whatever the words around it say
    values = rules.parse_utterance("honestly it's a slog, 6 days door to door from the mill").values
    assert values == {"lead_time": 6}
    values = rules.parse_utterance("the mill wants 35 dollars every time we ring them for a load").values
    assert not set(values) & {"lead_time", "time_horizon", "max_inventory", "max_order"}


def test_the_fitted_reader_is_cached_under_a_fingerprint_of_corpora_and_code(tmp_path, monkeypatch):
    from agents import extraction_learned as learned

    corpus = _write(tmp_path, [{"id": "x1", "text": "the loft takes 90 sacks", "fields": {"max_inventory": 90}},
                               {"id": "x2", "text": "it turns up 3 days after I ring", "fields": {"lead_time": 3}}])
    small = LearnedReader.fit([corpus])
    paths = sorted(learned.TRAIN_DIR.glob("*.jsonl"))
    monkeypatch.setenv("ASKOPT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    import pickle
    (tmp_path / "cache" / f"learned-reader-{learned._fingerprint(paths)}.pkl").write_bytes(pickle.dumps(small))
    learned.learned_reader.cache_clear()
    try:
        assert learned.learned_reader().numbers.vocab == small.numbers.vocab  # loaded, not refitted
    finally:
        learned.learned_reader.cache_clear()
    # any change to a corpus gives another fingerprint, so a stale model is never loaded
    (tmp_path / "edited").mkdir()
    changed = tmp_path / "edited" / corpus.name  # same name, one digit different
    changed.write_text(corpus.read_text().replace("90", "91"))
    assert learned._fingerprint([corpus]) != learned._fingerprint([changed])
