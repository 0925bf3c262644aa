"""Sweep tests (issue 10): the advice parser on texts nobody hand-wrote, plus invariances.

`tests/phrasing_sweep.advice_sample` draws (s,S), (s,Q), base-stock, weekday and every-n-days schedules,
ranges (midpoint recorded), self-contradicting capacities (infeasible), several options with a
recommendation, and hedging (no policy), with numbers as digits or words and several stock bases. Each is
scored by `agents.policy_parser_eval.heldout_ok`, the held-out sets' own rule.
"""

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from phrasing_sweep import advice_sample

from agents.policy_parser import parse_policy, recommended_part
from agents.policy_parser_eval import evaluate_advice, heldout_ok

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)

def _assert_reads(text, kind, stated_s, params, basis):
    """The advice parses as `kind` with the stated reorder point, these parameters and this basis."""
    parsed = parse_policy(text)
    assert parsed.status == "ok" and parsed.kind == kind and parsed.stated_s == stated_s, parsed
    assert {k: parsed.params[k] for k in params} == params and parsed.basis == basis



@settings(max_examples=200, deadline=None, derandomize=True)
@given(SEEDS)
def test_random_advice_is_parsed_by_the_held_out_rule(seed):
    text, label = advice_sample(random.Random(seed))
    good, why = heldout_ok(label, parse_policy(text))
    assert good, f"{text!r}: {why}"


@pytest.mark.parametrize("hyphen", ["-", "\u2010", "\u2011", "\u2012", "\u2013", " "])
def test_on_hand_plus_on_order_is_the_position_whatever_the_hyphen(hyphen):
    text = f"When on{hyphen}hand plus on{hyphen}order stock falls below 20, order up to 60."
    p = parse_policy(text)
    assert (p.status, p.kind, p.basis, p.stated_s, p.params["S"]) == ("ok", "ss", "position", 20, 60)


@pytest.mark.parametrize("text,kind,days", [
    ("Order 30 units every Thursday.", "Q", 7), ("Saturdays: order up to 90.", "S", 7),
    ("Every other day, order 12.", "Q", 2), ("Fortnightly, order up to 200.", "S", 14),
    ("Order 50 every second week.", "Q", 14), ("Once a month, order 300 units.", "Q", 30),
    ("Every 4 weeks order up to 500.", "S", 28), ("Order 15 units every five days.", "Q", 5),
])
def test_schedules_become_periodic_rules(text, kind, days):
    p = parse_policy(text)
    assert p.kind == "periodic" and p.params["T"] == days and kind in p.params, (text, p.label(), p.reason)


@pytest.mark.parametrize("text", [
    "Your storage capacity is 80 units. Reorder point 89, order up to 120.",  # s above the stated capacity
    "You can store 60 units. Order up to 75 when stock falls below 20.",  # S above it
    "The maximum order is 40 units. Order 50 units when stock falls below 15.",  # Q above the stated cap
    "Capacity is 100 and the reorder point I computed is 110; order up to 100.",
])
def test_advice_contradicting_its_own_limits_is_infeasible_with_the_reason(text):
    p = parse_policy(text)
    assert p.status == "infeasible" and "above" in p.reason, (text, p.status, p.reason)


def test_order_up_to_exactly_the_stated_capacity_is_feasible():
    p = parse_policy("You can store 100 units. Reorder at 40 and order up to 100.")
    assert p.status == "ok" and p.params["S"] == 100


def test_the_recommended_option_is_chosen_and_the_choice_recorded():
    text = "Option A: s = 10, S = 40. Option B: s = 15, S = 50. I recommend option B."
    part, note = recommended_part(text)
    assert "s = 10" not in part and "option b" in note
    p = parse_policy(text)
    assert p.params == {"s": 15, "S": 50} and "recommended" in p.reason
    # several options and no recommendation: never a silent pick
    assert parse_policy("Option A: s = 10, S = 40. Option B: s = 15, S = 50.").status == "unparseable"


@pytest.mark.parametrize("text", [
    "It depends on many factors; monitor sales and adjust.", "Let me get back to you next week.",
    "I'd hedge: maybe reorder at 20, maybe 30, hard to tell.", "Hard to say without more data.",
])
def test_hedging_is_no_policy(text):
    assert parse_policy(text).status == "unparseable"


@pytest.mark.parametrize("name", [f"advice_dev{n}_issue10.jsonl" for n in ("", "2", "3", "4")])
def test_issue10_advice_dev_sets_stay_right(name):
    report = evaluate_advice(Path(__file__).parent / "data" / name)
    assert report.accuracy == 1.0, report.misses


ADVICE_TRAIN = sorted((Path(__file__).parent.parent / "agents" / "data" / "advice_train").glob("*.jsonl"))


# measured floors: corpora A-L 92.5-100%; M and N (first scores 62% and 66%, 2026-11-25) 90% and 92%; R (120 texts,
# most in other languages; first score 45%, 54/120, 2026-11-25) 90%; S (120 texts, two thirds LLM-style markdown;
# first score 71.7%, 86/120, 2026-11-29; one class fixed so far: conditional alternatives with no pick) 79%
ADVICE_FLOOR = {"advice_train_m.jsonl": 0.90, "advice_train_n.jsonl": 0.92, "advice_train_r.jsonl": 0.90,
                "advice_train_s.jsonl": 0.95}


@pytest.mark.parametrize("path", ADVICE_TRAIN, ids=lambda p: p.name)
def test_advice_corpora_written_blind_to_the_code_stay_read(path):
    # nineteen writers who never saw the parser (docs/dialogue.md)
    report = evaluate_advice(path)
    assert report.accuracy >= ADVICE_FLOOR.get(path.name, 0.925), report.misses


@pytest.mark.parametrize("text, params", [
    ("| Policy | s | S | Expected cost |\n|---|---|---|---|\n| A | 10 | 40 | 5.20 |\n| B | 14 | 44 | 4.90 |\n\n"
     "Policy B has the lower cost, so that's my pick.", {"s": 14, "S": 44}),
    # a table of alternatives without option names, the pick stated in the prose
    ("| Fill rate | Reorder point |\n|---|---|\n| 90% | 14 |\n| 95% | 17 |\n| 99% | 22 |\n\n"
     "For a product that costs you the sale when it is missing, take 95%: reorder point 17, and order up to 60.",
     {"s": 17, "S": 60}),
])
def test_a_table_of_options_with_a_pick_gives_the_picked_row(text, params):
    p = parse_policy(text)
    assert p.status == "ok" and p.params == params, p.reason


@pytest.mark.parametrize("text", [
    "Two ways to go:\n- If the festival runs, reorder at 30 and order 90.\n- If it is cancelled, 15 and 45 is plenty.\n"
    "Let me know which scenario you expect.",
    "It depends on the weather. When it's hot, order up to 80 each Friday. When it's cold, up to 50. Your call.",
])
def test_policies_under_conditions_left_to_the_manager_are_no_policy(text):
    p = parse_policy(text)
    assert p.status == "unparseable" and "none picked" in p.reason


def test_a_condition_that_only_restates_the_rule_is_still_read():
    p = parse_policy("If the bin drops to 12, order 30. When sales pick up, keep ordering 30 whenever it hits 12.")
    assert p.status == "ok" and p.kind == "sq" and p.params["Q"] == 30


# the working names several values, a closing section states the policy (phrasings written here, not a corpus's)
@pytest.mark.parametrize("text, params", [
    ("Cover for the lead time: 5 x 3 = 15, plus 6 safety stock gives s = 21. S would be 21 + EOQ = 95, but the "
     "shelf takes 80, so stop there.\n\n## Final policy\nWhen the position is below 21, order up to 80.",
     {"s": 21, "S": 80}),
    ("**Working.** Demand over the lead time is 12; buffer 4 -> reorder point 16. EOQ is about 52, call it 50.\n\n"
     "**Bottom line:** reorder at 16, order 50 each time.", {"s": 16, "Q": 50}),
    ("Recommended: reorder point 30, order quantity 90.\n\nEdit: the van only carries 70, so make the order "
     "quantity 70 instead of 90. The reorder point stays at 30.", {"s": 30, "Q": 70}),
])
def test_a_closing_statement_settles_the_values_named_in_the_working(text, params):
    p = parse_policy(text)
    assert p.status == "ok" and p.params == params, p.reason


def test_a_summary_with_values_the_text_never_reached_is_a_contradiction_not_a_pick():
    text = ("## Advice\nSet the reorder point at 12 and order up to 40.\n\n## Summary\n- Reorder point: 18\n"
            "- Order quantity: 30 each time")
    assert parse_policy(text).status == "unparseable"


@pytest.mark.parametrize("text, params", [
    ("| | s | S |\n|---|---|---|\n| Option A | 8 | 30 |\n| **Option B (recommended)** | 10 | 36 |\n| Option C | 12 | 44 |",
     {"s": 10, "S": 36}),
    ("| Plan | s | S |\n|---|---|---|\n| A | 8 | 30 |\n| B \u2705 | 10 | 36 |\n\nB is the one to use.", {"s": 10, "S": 36}),
    ("Option A: s = 8, S = 30. Option B: s = 10, S = 36. I recommend option A.\n\nUpdate: since the cellar is "
     "damp, go with **option B** instead.", {"s": 10, "S": 36}),
])
def test_the_marked_or_revised_option_is_the_pick(text, params):
    p = parse_policy(text)
    assert p.status == "ok" and p.params == params, p.reason


@pytest.mark.parametrize("text, params", [
    ("Order 45 when you get to 20. Oops, typo: order 40 not 45.", {"s": 21, "Q": 40}),
    ("Keep the reorder point at 25 and order 70; on reflection order 60 instead of 70.", {"s": 25, "Q": 60}),
])
def test_a_value_corrected_in_place_replaces_the_wrong_one(text, params):
    p = parse_policy(text)
    assert p.status == "ok" and p.params == params, p.reason


@pytest.mark.parametrize("text, T", [
    ("Fortnightly, on Mondays: order up to 90.", 14),
    ("Every Wednesday -- sorry, only Wednesdays, not Wednesdays and Saturdays -- top up to 50.", 7),
])
def test_schedules_with_a_day_and_a_fortnight_or_a_struck_day(text, T):
    p = parse_policy(text)
    assert p.status == "ok" and p.kind == "periodic" and p.params["T"] == T, p.label()


def test_a_numbered_list_marker_is_no_order_size():
    text = "Your supplier caps an order at 50, so that is the order size:\n\n1. Reorder point: 12 units.\n2. Order quantity: 50."
    p = parse_policy(text)
    assert p.status == "ok" and p.params == {"s": 12, "Q": 50}, p.reason


@pytest.mark.parametrize("text, why", [
    ("Storage: 50 cases.\nReorder point 10, order quantity 70.", "order quantity 70 is above the capacity"),
    ('The solver returned {"s": 30, "S": 260, "max_inventory": 200}. Use s = 30 and S = 260.', "order-up-to level 260"),
    ("| Input | Value |\n|---|---|\n| Freezer capacity | 90 bags |\n\nReorder at 100 bags, order 40.", "reorder point 100"),
    ("The van carries 25 crates max per trip. Reorder at 10 crates and order 35 each time.", "order quantity 35"),
])
def test_limits_written_as_labels_tables_or_tool_output_make_the_advice_infeasible(text, why):
    p = parse_policy(text)
    assert p.status == "infeasible" and why in p.reason, (p.status, p.reason)


@pytest.mark.parametrize("text, params", [
    ("Whenever you have fewer than 14 jars, order enough to get back to 40.", {"s": 14, "S": 40}),
    ("Sales are exactly 30 a day and the dairy comes every morning: a standing daily order of 30.", {"q": 30}),
    ("Your fridge holds 24 trays and the baker brings at most 8 per trip. Reorder when you're down to 8, order up to 24; "
     "going from 8 to 24 takes two trips.", {"s": 9, "S": 24}),
    ("If you want a 5% stock-out risk, P(lead-time demand > s) < 5% gives s = 22; order up to 60.", {"s": 22, "S": 60}),
])
def test_triggers_rates_and_trips_are_told_apart(text, params):
    p = parse_policy(text)
    assert p.status == "ok" and p.params == params, (p.label(), p.reason)


def test_a_delivery_day_is_not_a_second_order_day():
    p = parse_policy("Every Monday, order enough to bring the shelf up to 45. The van then arrives Wednesday afternoon.")
    assert p.status == "ok" and p.kind == "periodic" and p.params == {"T": 7, "S": 45}, p.label()


@pytest.mark.parametrize("text, label", [
    ("Par stock 45, and reorder when you drop below 15.", "ss(s=15, S=45)"),
    ("Keep a par of 24 and top the fridge up to par every morning.", "base_stock(S=24)"),
    ("Every Thursday bring the shelf back up to a par of 36.", "periodic(T=7, S=36)"),
])
def test_a_par_level_is_an_order_up_to_level(text, label):
    assert parse_policy(text).label() == label


@pytest.mark.parametrize("text, kind, params", [
    ('{"status": "ok", "result": {"policy": "sS", "s": 25, "S": 90, "basis": "inventory_position", "cost": 12.5}}',
     "ss", {"s": 25, "S": 90}),
    ('Solver says: {"reorder_point": 14, "order_quantity": 50}', "sq", {"s": 14, "Q": 50}),
    ("Order every fourth day, enough to bring stock up to 120.", "periodic", {"T": 4, "S": 120}),
])
def test_tool_json_and_ordinal_schedules(text, kind, params):
    parsed = parse_policy(text)
    assert parsed.kind == kind and {k: parsed.params[k] for k in params} == params, parsed


def test_a_capacity_inside_the_tool_json_still_applies():
    parsed = parse_policy('```json\n{"s": 50, "S": 200, "max_inventory": 150}\n```\nUse s = 50 and S = 200.')
    assert parsed.status == "infeasible", parsed


@pytest.mark.parametrize("text, s, S, basis", [
    ("```python\ndef qty(pos):\n    if pos <= 35:\n        return 90 - pos\n    return 0\n```", 35, 90, "position"),
    ("SELECT CASE WHEN on_hand <= 8 THEN 30 - on_hand ELSE 0 END FROM stock;", 8, 30, "on_hand"),
    ("Cell D2: =IF(C2<=12, 48-C2, 0)", 12, 48, "position"),
    (r"Order $S - X_t = 70 - X_t$ ... i.e. if $X_t \le 20$, order $70 - X_t$.", 20, 70, "position"),
])
def test_an_s_S_rule_written_as_code(text, s, S, basis):
    parsed = parse_policy(text)
    assert parsed.kind == "ss" and parsed.stated_s == s and parsed.params["S"] == S and parsed.basis == basis, parsed


def test_thousands_with_a_k_and_swedish():
    parsed = parse_policy("Reorder at 2,5k units and order 6k each time.")
    assert parsed.kind == "sq" and parsed.stated_s == 2500 and parsed.params["Q"] == 6000
    parsed = parse_policy("Beställ upp till 80 när lagret når 20 stycken.")
    assert parsed.kind == "ss" and parsed.stated_s == 20 and parsed.params["S"] == 80


@pytest.mark.parametrize("text, kind, stated_s, params", [
    ("Run a two-bin system with 25 per bin.", "sq", 25, {"Q": 25}),
    ("Only reorder once you have completely run out, then order 10.", "sq", 0, {"Q": 10}),
    ("x = 0..9 -> order up to 32\nx = 10.. -> order 0", "ss", 9, {"S": 32}),
    ("Bestill 30 esker når lageret er nede i 10.", "sq", 10, {"Q": 30}),
    ("Zamawiaj do poziomu 90 sztuk, gdy zapas spadnie do 25.", "ss", 25, {"S": 90}),
])
def test_two_bin_run_out_state_tables_norwegian_and_polish(text, kind, stated_s, params):
    parsed = parse_policy(text)
    assert parsed.kind == kind and parsed.stated_s == stated_s, parsed
    assert {k: parsed.params[k] for k in params} == params


@pytest.mark.parametrize("text, kind, stated_s, params", [
    ("Reorder at 20 and order 80 each time. Actually, with the holiday rush, make the reorder point 30 instead; "
     "keep the order quantity at 80.", "sq", 30, {"Q": 80}),
    ("Reorder at 15 and order up to 60. Sorry, that was for the other item: for the mugs it should be reorder at 25 "
     "and order up to 75.", "ss", 25, {"S": 75}),
    ("reorder pt 8, qty 24. sorry typo: reorder pt 11", "sq", 11, {"Q": 24}),
    ("1. Lead-time demand: 40 a day x 3 days = 120.\n2. Safety stock: 1.65 x 12 = 19.8, so 20; reorder point "
     "120 + 20 = 140.\n3. EOQ = 610, capped at the supplier's 500.\nSo: when stock drops to 140, order 500.", "sq", 140,
     {"Q": 500}),
    ("EOQ comes out near 1,830, which is more than the shelf likes, so I'd go with cases of 400 instead: "
     "**reorder at 300, order 800 (two cases)** each time.", "sq", 300, {"Q": 800}),
])
def test_corrections_and_closing_lines_of_worked_advice(text, kind, stated_s, params):
    parsed = parse_policy(text)
    assert parsed.kind == kind and parsed.stated_s == stated_s, parsed
    assert {k: parsed.params[k] for k in params} == params


@pytest.mark.parametrize("text, kind, stated_s, params, basis", [
    # a diff of a config: the removed line is gone, the unchanged quantity stands
    ("--- a/policy.yaml\n+++ b/policy.yaml\n-reorder_point: 12\n+reorder_point: 16\n order_qty: 36", "sq", 16, {"Q": 36},
     "position"),
    ("sku,kind,s,S,basis\nmug-7,minmax,6,22,on_hand", "ss", 6, {"S": 22}, "on_hand"),
    ("Three ways to run it:\n- s=40, S=90\n- s=55, S=120  <- my pick\n- s=70, S=150", "ss", 55, {"S": 120}, "position"),
    ('{"advice": "periodic", "review_interval_days": 14, "order_quantity": 70, "horizon_days": 180}', "periodic", None,
     {"T": 14, "Q": 70}, "position"),
    ("Telli 40 pakki iga kord, kui laos on alles 12 pakki või vähem.", "sq", 12, {"Q": 40}, "position"),
    ("cartons: when u get to 9 order up 2 30. dont count whats on order, only count the shelf", "ss", 9, {"S": 30}, "on_hand"),
    ("Order 25 crates whenever the crates on hand plus the crates on order reach 18.", "sq", 18, {"Q": 25}, "position"),
])
def test_advice_written_as_data_a_marked_pick_estonian_and_counting_bases(text, kind, stated_s, params, basis):
    _assert_reads(text, kind, stated_s, params, basis)


def test_a_single_config_line_in_worked_prose_is_not_read_as_the_whole_policy():
    parsed = parse_policy("**Reorder point**\n\ns = 4·2 + 6 = 14\n\n**Order-up-to level**\n\nS = 50\n")
    assert parsed.kind == "ss" and parsed.stated_s == 14 and parsed.params["S"] == 50


@pytest.mark.parametrize("text, closing", [
    ("Lead-time demand 3 x 5 = 15, safety stock 5, so s = 20. EOQ = sqrt(2 x 3 x 30 / 0.05) = 60.0, but the shelf "
     "takes 45.\n\n**Recommended policy:** when stock falls to 20 jars, order 25.", (20, 25)),
    ("Daily use 4; lead time 3 days; safety 3; reorder point 15. EOQ = 44.7.\n\n**Rule:** order 40 whenever you're "
     "down to 15.", (15, 40)),
])
def test_a_bold_labelled_policy_line_closes_the_worked_answer(text, closing):
    parsed = parse_policy(text)
    assert parsed.kind == "sq" and (parsed.stated_s, parsed.params["Q"]) == closing, parsed


@pytest.mark.parametrize("text, why", [
    ("Your rack holds 60 tins of polish and the supplier takes 5 days, so use s = 20 and S = 70.", "capacity the advice itself states (60)"),
    ("Reorder at 10 kg and order 35 kg. That is more than your 30 kg freezer can hold, but the price is better.",
     "capacity the advice itself states (30)"),
    ("Order 50 boxes when you reach 20. I know the van carries 40 at most, but 50 covers the wait.", "maximum order the advice itself states (40)"),
    ("Every Monday order 60 sacks. (The barge's limit is 50 sacks a trip.)", "maximum order the advice itself states (50)"),
])
def test_a_policy_beyond_a_limit_the_advice_itself_states_is_infeasible(text, why):
    parsed = parse_policy(text)
    assert parsed.status == "infeasible" and why in parsed.reason, parsed


@pytest.mark.parametrize("text, kind, stated_s, params", [
    ("The printer takes a fortnight and charges £25 per run. Order 80 when you're down to 35.", "sq", 35, {"Q": 80}),
    ("Lead-time demand is 60. Hold a safety stock of about 20 on top of that: reorder at 80 and order 200.", "sq", 80,
     {"Q": 200}),
])
def test_a_lead_time_a_fee_or_a_safety_stock_is_never_a_stated_capacity(text, kind, stated_s, params):
    parsed = parse_policy(text)
    assert parsed.status == "ok" and parsed.kind == kind and parsed.stated_s == stated_s, parsed
    assert {k: parsed.params[k] for k in params} == params


@pytest.mark.parametrize("text, kind, stated_s, params, basis", [
    ("### Plan\n- Reorder point: **14 tubs**\n- Order quantity: **40 tubs**\n\n**Update:** I mistyped the reorder point "
     "- it should be **18**, not 14. The order quantity stays at 40.", "sq", 18, {"Q": 40}, "position"),
    ("Reorder point = 6 x 2 + 4.1 = 16.1 → **round up to 17**.\n\nOrder quantity (EOQ, rounded to a full tray of 24): "
     "**72**.", "sq", 17, {"Q": 72}, "position"),
    ("```ts\n// counts what's on the shelf only (not deliveries still on the road)\nconst REORDER_POINT = 7;\n"
     "const ORDER_UP_TO = 25;\n```", "ss", 7, {"S": 25}, "on_hand"),
    ("Keep two bins of 30. When one bin is empty, order another bin's worth.", "sq", 30, {"Q": 30}, "position"),
    ("Only order when you've completely run out, and then order 15.", "sq", 0, {"Q": 15}, "position"),
    ("order 20 every tues, keep it simple", "periodic", None, {"T": 7, "Q": 20}, "position"),
    ("Go by what's in the shop, not what's still at the mill, and when it's down to 11, order 33.", "sq", 11, {"Q": 33},
     "on_hand"),
    ("Standing order: 18 crates, weekly on Mondays.", "periodic", None, {"T": 7, "Q": 18}, "position"),
])
def test_updates_rounding_arrows_code_constants_bins_and_weekday_abbreviations(text, kind, stated_s, params, basis):
    _assert_reads(text, kind, stated_s, params, basis)


def test_a_range_said_as_anything_from_to_is_a_range():
    parsed = parse_policy("Reorder at 12; the order-up-to level can be anything from 50 to 60.")
    assert parsed.kind == "ss" and parsed.stated_s == 12 and 50 <= parsed.params["S"] <= 60 and "range" in parsed.reason


@pytest.mark.parametrize("text, kind, stated_s, params, basis", [
    ('{"tool_calls": [{"function": {"name": "get_sales", "arguments": "{\\"days\\": 60}"}}, {"function": {"name": '
     '"set_policy", "arguments": "{\\"policy\\": \\"sS\\", \\"s\\": 9, \\"S\\": 35, \\"basis\\": \\"on_hand\\"}"}}]}',
     "ss", 9, {"S": 35}, "on_hand"),
    ('[{"option": "A", "s": 6, "Q": 20, "recommended": false}, {"option": "B", "s": 9, "Q": 20, "recommended": true}]',
     "sq", 9, {"Q": 20}, "position"),
    ('```sh\nif [ "$stock" -le 7 ]; then\n  place_order --qty 25\nfi\n```', "sq", 7, {"Q": 25}, "position"),
    ("```rust\nfn reorder(position: i32) -> i32 {\n    if position <= 16 {\n        return 48\n    }\n    0\n}\n```",
     "sq", 16, {"Q": 48}, "position"),
    ("```\nDAILY:\n    n = count_bins()    # shelf only, ignore open orders\n    IF n <= 10:\n        ORDER (35 - n)\n```",
     "ss", 10, {"S": 35}, "on_hand"),
    ("+-----------+----------------+\n| Stock     | Action         |\n+-----------+----------------+\n"
     "| 0 - 8     | order up to 30 |\n| 9 and up  | do nothing     |\n+-----------+----------------+", "ss", 8, {"S": 30},
     "position"),
    ("Count only what's physically on the shelf: when it's 12 or less, order up to 40.", "ss", 12, {"S": 40},
     "on_hand"),
])
def test_nested_tool_arguments_a_marked_json_option_shell_and_return_branches_ascii_state_tables(text, kind, stated_s,
                                                                                                 params, basis):
    _assert_reads(text, kind, stated_s, params, basis)


def test_two_bold_options_without_a_pick_are_no_policy():
    parsed = parse_policy("Two choices:\n\n1. **Reorder at 5, order 15**: less cash tied up.\n2. **Reorder at 9, order 30**: "
                          "fewer deliveries.\n\nWhich suits you depends on your cash.")
    assert parsed.status != "ok"


def test_a_per_trip_limit_a_tanker_brings_makes_a_bigger_weekly_order_infeasible():
    parsed = parse_policy("Order 1,800 litres every Friday. The tanker brings 1,500 max a trip.")
    assert parsed.status == "infeasible" and "1500" in parsed.reason


@pytest.mark.parametrize("text, kind, stated_s, params, basis", [
    ("```rust\nconst REORDER_POINT: u32 = 14;\nconst ORDER_UP_TO: u32 = 60;\n```", "ss", 14, {"S": 60}, "position"),
    ("```swift\nlet reorderPoint = 6\nlet orderQuantity = 18\n```\nUse the shelf count only; don't add deliveries that "
     "haven't arrived.", "sq", 6, {"Q": 18}, "on_hand"),
    ("| Policy | s | S | Score |\n|---|---|---|---|\n| Lean | 4 | 15 | 7/10 |\n| Steady ⭐ | 7 | 22 | 9/10 |\n"
     "| Safe | 10 | 30 | 8/10 |", "ss", 7, {"S": 22}, "position"),
    ("Reorder at 8, order 30. Hold on, those were last year's numbers. This year: reorder at 11, order 36.", "sq", 11,
     {"Q": 36}, "position"),
    ("An r of 9 and a Q of 27 should do.", "sq", 9, {"Q": 27}, "position"),
    ("Min/max: 15 and 45.", "ss", 15, {"S": 45}, "position"),
    ("Don't reorder until the last one's gone, then get 12 in.", "sq", 0, {"Q": 12}, "position"),
    ("Order a gross when you're down to two dozen.", "sq", 24, {"Q": 144}, "position"),
    ("Once you hit the twenty mark, order up to sixty.", "ss", 20, {"S": 60}, "position"),
    ("Comandați 30 de bucăți ori de câte ori stocul scade la 9.", "sq", 9, {"Q": 30}, "position"),
])
def test_typed_constants_starred_word_rows_hold_on_symbols_min_max_gross_marks_and_romanian(text, kind, stated_s,
                                                                                          params, basis):
    _assert_reads(text, kind, stated_s, params, basis)


def test_a_declined_recommendation_with_an_adverb_is_no_policy_and_only_ships_is_a_limit():
    assert parse_policy("Without your sales I can't responsibly recommend a reorder point. Share the last six weeks "
                        "of sales?").status == "unparseable"
    parsed = parse_policy("The mill only ships 25 per order, so order 40 whenever you drop below 8.")
    assert parsed.status == "infeasible" and "(25)" in parsed.reason


@pytest.mark.parametrize("text, kind, stated_s, params, basis", [
    ("```csharp\n// shelf count only; deliveries in transit are ignored\nint Order(int shelfCount) => shelfCount <= 7 ? "
     "30 - shelfCount : 0;\n```", "ss", 7, {"S": 30}, "on_hand"),
    ("```dart\nint reorder(int stock) => stock <= 4 ? 16 : 0;\n```", "sq", 4, {"Q": 16}, "position"),
    ("**Key points**\n\n**When:** every Thursday morning\n**How much:** 60 boxes, the same every week", "periodic", None,
     {"T": 7, "Q": 60}, "position"),
    ("just count whats on the shelves not whats coming. when its 12 or less order 36", "sq", 12, {"Q": 36}, "on_hand"),
    ("Only order once you've sold the very last one, and then get 8.", "sq", 0, {"Q": 8}, "position"),
    ("Objednejte 25 kusů, kdykoli zásoba klesne na 7 kusů.", "sq", 7, {"Q": 25}, "position"),
])
def test_ternaries_key_takeaways_racks_last_one_sold_and_czech(text, kind, stated_s, params, basis):
    _assert_reads(text, kind, stated_s, params, basis)


def test_wont_put_more_than_n_into_one_order_is_a_stated_limit():
    parsed = parse_policy("I know the importer won't put more than 40 sheets into one order, but order 55 sheets whenever "
                          "the rack drops to 20.")
    assert parsed.status == "infeasible" and "(40)" in parsed.reason
