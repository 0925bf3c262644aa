"""Policy parser: a hand-written corpus of advice texts (written independently of the generator) + semantics."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from agents.policy_parser import CappedPolicy, PeriodicPolicy, build_policy, parse_policy
from inventory.demand import Demand
from inventory.montecarlo import evaluate
from inventory.policies import SQPolicy, SSPolicy, StatePolicy
from inventory.problem import Problem

CORPUS = Path(__file__).parent / "data" / "study_advice_corpus.jsonl"
# Measured: 87 of 87 correct (a dev set: c007 and the three ranges a055/a056/b008 were fixed on it; the ranges'
# expectation changed from "unparseable" to "midpoint chosen and recorded", issue 10). Held-out batches: b***
# scored 9/12 and c*** 7/8 before any parser change for them (docs/study.md).
MEASURED_CORRECT = 87
KNOWN_MISSES: set[str] = set()


def _matches(row: dict) -> bool:
    p = parse_policy(row["text"], capacity=row["capacity"])
    e = row["expected"]
    if p.status != e["status"]:
        return False
    return e["status"] != "ok" or (p.kind == e["kind"] and p.params == e["params"] and p.basis == e["basis"])


def test_corpus_accuracy_is_what_we_measured():
    rows = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    assert len(rows) >= 60
    assert {r["expected"]["status"] for r in rows} == {"ok", "unparseable", "infeasible"}
    misses = {r["id"] for r in rows if not _matches(r)}
    assert len(rows) - len(misses) >= MEASURED_CORRECT
    assert misses <= KNOWN_MISSES


def test_trigger_semantics_below_vs_at_or_below():
    assert parse_policy("When the position falls below 20, order up to 60.").params == {"s": 20, "S": 60}
    assert parse_policy("When the position falls to 20 or below, order up to 60.").params == {"s": 21, "S": 60}
    assert parse_policy("Reorder point 20, order-up-to level 60.").params == {"s": 20, "S": 60}
    p = parse_policy("(s, S) = (40, 65)")
    assert p.ok and p.policy == SSPolicy(40, 65)
    assert parse_policy("Reorder at 30, by 30 units.").policy == SQPolicy(30, 30)


def test_infeasible_and_unparseable_keep_the_text():
    text = "Reorder when the inventory position drops below 120 and order up to 150."
    p = parse_policy(text, capacity=100)
    assert p.status == "infeasible" and "capacity" in p.reason and p.text == text and p.policy is None
    q = parse_policy("Reorder point somewhere between 10 and 20, order up to 50.")
    assert q.status == "ok" and q.params == {"s": 15, "S": 50} and "midpoint 15" in q.reason
    r = parse_policy("Order up to capacity when below 10.")
    assert r.status == "unparseable" and "capacity" in r.reason
    assert parse_policy("Order up to capacity when below 10.", capacity=70).params == {"s": 10, "S": 70}


PROBLEM = Problem(horizon=60, demand=Demand.poisson(5), lost_sales=True, holding_cost=0.2, penalty_cost=1.5,
                  setup_cost=2.0, lead_time=4, max_inventory=80, max_order=40)


def test_on_hand_trigger_is_a_different_policy():
    pos = parse_policy("When the inventory position falls below 25, order 20 units.")
    onh = parse_policy("When the stock on hand falls below 25, order 20 units.")
    assert pos.basis == "position" and onh.basis == "on_hand" and isinstance(onh.policy, StatePolicy)
    a, b = evaluate(PROBLEM, [pos.policy, onh.policy], replications=300, seed=1)
    # ignoring the pipeline re-orders every day while an order is in transit: more orders, more stock
    assert b.order_frequency > a.order_frequency and b.avg_on_hand > a.avg_on_hand


def test_caps_and_periodic_policies_act_as_written():
    capped = build_policy("ss", {"s": 30, "S": 70, "cap": 10})
    assert isinstance(capped, CappedPolicy)
    assert capped.order_from_position(np.array([[0, 29, 30]]), 0).tolist() == [[10, 10, 0]]
    per = PeriodicPolicy(T=7, S=50)
    assert per.order_from_position(np.array([[20]]), 7).tolist() == [[30]]
    assert per.order_from_position(np.array([[20]]), 8).tolist() == [[0]]
    for pol in (capped, per, parse_policy("When on-hand stock is below 5, order 9 units.").policy):
        assert pickle.loads(pickle.dumps(pol)).label() == pol.label()  # travels between Ray tasks


@pytest.mark.parametrize("text", ["", "Thanks, what is your lead time?", "Order 30 units."])
def test_no_rule_is_unparseable(text):
    p = parse_policy(text)
    assert p.status == "unparseable" and not p.actionable and p.reason


def test_issue10_classes():
    """Hyphenated position basis, weekday schedules, number words, computed-then-rounded values, ranges with the
    choice recorded, and a reorder point above the capacity the advice itself acknowledges."""
    p = parse_policy("When your on-hand-and-on-order stock drops below 18, order up to 55.")
    assert (p.params, p.basis) == ({"s": 18, "S": 55}, "position")
    assert parse_policy("When stock on hand falls below 18, order up to 55.").basis == "on_hand"
    p = parse_policy("Place an order for 24 units every Thursday.")
    assert (p.kind, p.params) == ("periodic", {"T": 7, "Q": 24})
    p = parse_policy("Once stock dips under fifteen, reorder up to forty-five.")
    assert p.params == {"s": 15, "S": 45}
    p = parse_policy("The reorder point works out to 27.4, round it to 27, and order up to 80.")
    assert p.params == {"s": 27, "S": 80}
    p = parse_policy("Reorder around 30-36 and order up to 90.")
    assert p.params == {"s": 33, "S": 90} and "30-36" in p.reason and "33" in p.reason
    p = parse_policy("Your storage holds 80 units. Set the reorder point s = 89 and the order-up-to level S = 80.")
    assert p.status == "infeasible" and "89" in p.reason and "80" in p.reason


def test_more_issue10_phrasings():
    assert parse_policy("Every Tuesday, place an order that brings inventory up to 60 units.").params == {
        "T": 7, "S": 60}
    p = parse_policy("Order thirty units whenever fewer than twelve remain on the shelf.")
    assert (p.kind, p.params, p.basis) == ("sq", {"s": 12, "Q": 30}, "on_hand")
    assert parse_policy("Lead-time demand is 18, so the reorder point is 24.4 -> 25. Order up to 70.").params == {
        "s": 25, "S": 70}
    assert parse_policy("Set your min at 12 and your max at 48 (counting units already ordered).").params == {
        "s": 12, "S": 48}
    assert not parse_policy("Each Monday and Thursday order 15.").ok  # two weekdays: no single period


# Classes from the advice writer corpora's misses (agents/data/advice_train), each tested on a wording written for
# this test: a correction in a later clause, a rounded value after "I'd", a symbol with a verb, a trigger on the
# pipeline, a non-native trigger verb, limits per order or on the store stated in passing, a bare option letter,
# a wordy aside between a verb and its number.
@pytest.mark.parametrize("text, status, kind, params, basis", [
    ("Set S = 90 and s = 25. Actually, scratch that, make s = 30.", "ok", "ss", {"s": 30, "S": 90}, "position"),
    ("Every Monday and Thursday... no, just every Thursday: order 50 crates.", "ok", "periodic", {"T": 7, "Q": 50},
     "position"),
    ("s works out to 18.6, which I'd round up to 19, and S comes out at 70.", "ok", "ss", {"s": 19, "S": 70},
     "position"),
    ("Trigger: on-order plus on-hand below 12. Action: order up to 45.", "ok", "ss", {"s": 12, "S": 45}, "position"),
    ("when the stock is arriving to 8 units, make order for 30 units", "ok", "sq", {"s": 9, "Q": 30}, "position"),
    ("The mill has a limit of 60 sacks per order; order 75 sacks when stock falls to 20.", "infeasible", "sq",
     {"s": 21, "Q": 75}, "position"),
    ("The distributor caps us at 40 boxes per order. Order 55 boxes whenever you drop below 10.", "infeasible", "sq",
     {"s": 10, "Q": 55}, "position"),
    ("With the cold room limited to 90 trays, use s = 95 and S = 120.", "infeasible", "ss", {"s": 95}, "position"),
    ("Plan A: (s=5, S=20). Plan B: (s=8, S=25). I recommend B because of the holiday rush.", "ok", "ss",
     {"s": 8, "S": 25}, "position"),
    ("Each morning top the position (what is here plus what is coming) up to 55.", "ok", "base_stock", {"S": 55},
     "position"),
    ("Each morning top up the shelf stock (ignore deliveries on their way) to 55.", "ok", "base_stock", {"S": 55},
     "on_hand"),
    ("Order up to 60 whenever stock falls to 15 (or fewer).", "ok", "ss", {"s": 16, "S": 60}, "position"),
    # from writer corpora M and N (first scores 62% and 66%)
    ("When you're down to 12, ring the mill for 30 more.", "ok", "sq", {"s": 13, "Q": 30}, "position"),
    ("Only order when they're completely gone, then order 8.", "ok", "sq", {"s": 1, "Q": 8}, "position"),
    ("The carrier caps each load at 30 crates, but order 45 whenever you hit 10.", "infeasible", "sq",
     {"s": 11, "Q": 45}, "position"),
    ("Two choices: (1) s = 5, Q = 20; (2) s = 8, Q = 30. Option 2 had the lowest cost and I recommend it.", "ok",
     "sq", {"s": 8, "Q": 30}, "position"),
    ("EOQ works out at 57.3 tins; round it to 60 because they come in sixes. Reorder at 15.", "ok", "sq",
     {"s": 15, "Q": 60}, "position"),
    ("Keep somewhere between 40 and 44 helmets as your base stock.", "ok", "base_stock", {"S": 42}, "position"),
    ("Place an order every Friday for exactly 16 crates.", "ok", "periodic", {"T": 7, "Q": 16}, "position"),
    ("Count only the cylinders in the cage, not the ones on order. At 6 or fewer, order up to 2 000.", "ok", "ss",
     {"s": 7, "S": 2000}, "on_hand"),
    # from writer corpora O, P and Q (first scores 82%, 68%, 82%)
    ("If you see 20 or less in the bin, refill up to 75.", "ok", "ss", {"s": 21, "S": 75}, "position"),
    ("Reorder point 12 rolls; then keep ordering until you have 48 rolls again.", "ok", "ss", {"s": 12, "S": 48},
     "position"),
    ("rop 9, qty 25", "ok", "sq", {"s": 9, "Q": 25}, "position"),
    ("Once we have nothing left, order 30 crates.", "ok", "sq", {"s": 1, "Q": 30}, "position"),
    ("When the stock is down to eleven, bake another thirty.", "ok", "sq", {"s": 12, "Q": 30}, "position"),
    ("Set the reorder point at 70. The order-up-to level could be anywhere between 200 and 215.", "ok", "ss",
     {"s": 70, "S": 208}, "position"),
    ("Order 80 when you hit 30... sorry, order 60, not 80.", "ok", "sq", {"s": 31, "Q": 60}, "position"),
    ("Reorder at 10, order up to 50. Sorry, those were the numbers for the other branch: reorder at 14, order up "
     "to 66.", "ok", "ss", {"s": 14, "S": 66}, "position"),
    ("Reorder at 20, up to 80. Correction: reorder at 24, S stays at 80.", "ok", "ss", {"s": 24, "S": 80},
     "position"),
    ("Restock when the tray count is about 8-10, ordering 25 each time.", "ok", "sq", {"s": 10, "Q": 25}, "position"),
    ("Each morning, keep the milk somewhere between 60 and 70 bottles, ordering up to that level.", "ok",
     "base_stock", {"S": 65}, "position"),
    ("Every Friday order up to 90, counting only what's in the storeroom, not the lorry on the way.", "ok",
     "periodic", {"T": 7, "S": 90}, "on_hand"),
    ("Reorder point: 15 / Order quantity: 40 / Count what is on the shelf plus anything already on the truck.",
     "ok", "sq", {"s": 15, "Q": 40}, "position"),
    ("Given your 50-crate cellar, reorder at 20 and order up to 65.", "infeasible", "ss", {"s": 20, "S": 65},
     "position"),
    ("Our mill grinds at most 2 000 kg per run. Schedule a run of 2 400 kg every Tuesday.", "infeasible",
     "periodic", {"T": 7, "Q": 2400}, "position"),
    ("Storage holds 3.000 bottles; reorder point 3.400 bottles, order quantity 800.", "infeasible", "sq",
     {"s": 3400}, "position"),
    ("Reorder point 25,000 units; order up to 1,50,000 units.", "ok", "ss", {"s": 25000, "S": 150000}, "position"),
    ("Policy from the DP:\nposition <= 14 -> order 35\nposition >= 15 -> order 0", "ok", "sq", {"s": 15, "Q": 35},
     "position"),
    ("Q* = 41.3, so order 45 (cartons come in multiples of 5). Reorder at 12.", "ok", "sq", {"s": 12, "Q": 45},
     "position"),
    ("Q = sqrt(2KD/h) = sqrt(2 x 50 x 20 / 0.4) = 70.7, round to 71. Reorder at 30.", "ok", "sq",
     {"s": 30, "Q": 71}, "position"),
    ("- Trigger: on hand + on order < 40\n- Order: 90 units\n- Review: daily", "ok", "sq", {"s": 40, "Q": 90},
     "position"),
])
def test_advice_classes_from_the_writer_corpora(text, status, kind, params, basis):
    p = parse_policy(text)
    assert (p.status, p.kind, p.params, p.basis) == (status, kind, params, basis), p.reason
