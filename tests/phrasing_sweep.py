"""Randomised manager phrasings and advice texts for the sweep tests (issue 10): words the reader never saw.

Every sample is built from templates with a random trade, item noun, number format (digits, words, "a dozen"),
currency format ($4.50, 4.50 dollars, 4 dollars 50, 4.50 euros, 450 cents, five quid), rate period (day, week,
month, year; converted per PROCEDURE.md: 7, 30, 365 days), clause joiner (". ", ", and ", " - ", run-on) and
never-value distractors (years, phone numbers, staff and van counts, margins, street numbers). Each sample
carries its labels in the held-out format, so `agents.extraction_eval.exact_match` scores it and an "invented"
value is one the text does not state. Advice samples carry `heldout_ok` labels.

    .venv/bin/python tests/phrasing_sweep.py [--n 400] [--seed 7]   # accuracy of the current reader on a sweep
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

TRADES = [("bakery", "loaves"), ("bike shop", "inner tubes"), ("pharmacy", "boxes of plasters"),
          ("hardware store", "bags of screws"), ("florist", "bouquets"), ("pet store", "bags of dog food"),
          ("bookshop", "copies"), ("cafe", "muffins"), ("garden centre", "pots"), ("electronics shop", "chargers"),
          ("toy shop", "puzzles"), ("auto parts store", "oil filters"), ("vet clinic", "packs of wormer"),
          ("newsagent", "magazines"), ("timber merchant", "planks")]
SINGULAR = {"loaves": "loaf", "inner tubes": "inner tube", "boxes of plasters": "box of plasters",
            "bags of screws": "bag of screws", "bouquets": "bouquet", "bags of dog food": "bag of dog food",
            "copies": "copy", "muffins": "muffin", "pots": "pot", "chargers": "charger", "puzzles": "puzzle",
            "oil filters": "oil filter", "packs of wormer": "pack of wormer", "magazines": "magazine",
            "planks": "plank"}
_WORDS = {0: "zero", 1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight",
          9: "nine", 10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen", 14: "fourteen", 15: "fifteen",
          16: "sixteen", 17: "seventeen", 18: "eighteen", 19: "nineteen", 20: "twenty", 30: "thirty", 40: "forty",
          50: "fifty", 60: "sixty", 70: "seventy", 80: "eighty", 90: "ninety"}
PERIOD_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


def words(n: int) -> str:
    """English words for 0..999 ("a hundred and twenty", "forty-five")."""
    if n < 20 or (n < 100 and n % 10 == 0):
        return _WORDS[n]
    if n < 100:
        return f"{_WORDS[n - n % 10]}-{_WORDS[n % 10]}"
    head = "a hundred" if n // 100 == 1 else f"{_WORDS[n // 100]} hundred"
    return head if n % 100 == 0 else f"{head} and {words(n % 100)}"


def num(rng: random.Random, n: int) -> str:
    """A whole number as digits, words, or (for 12 / 24) dozens."""
    r = rng.random()
    if n == 12 and r < 0.2:
        return "a dozen"
    if n == 24 and r < 0.2:
        return "two dozen"
    if r < 0.45 and n < 1000:
        return words(n)
    if n >= 1000 and r < 0.6:
        return f"{n:,}"
    return str(n)


def money(rng: random.Random, v: float) -> str:
    """$4.50, 4.50 dollars, 4 dollars 50, 4.50 euros, EUR sign, pounds, 450 cents, whole-number words."""
    cents = round(v * 100)
    whole = cents % 100 == 0
    forms = [f"${v:.2f}", f"{v:.2f} dollars", f"\u20ac{v:.2f}", f"\u00a3{v:.2f}", f"{v:.2f} euros"]
    if whole:
        d = cents // 100
        forms += [f"${d}", f"{d} dollars", f"{words(d)} dollars", f"{d} bucks", f"{words(d)} quid", f"{d} euros"]
    elif cents >= 100:
        forms += [f"{cents // 100} dollars {cents % 100:02d}"]
    if cents < 100:
        forms += [f"{cents} cents", f"{words(cents)} cents"]
    return rng.choice(forms)


@dataclass
class Sample:
    text: str
    fields: dict = field(default_factory=dict)
    ask: list = field(default_factory=list)
    kind: str = ""


# ---- one clause per field -----------------------------------------------------------------------------------------
def _lead(rng, item):
    if rng.random() < 0.3:
        w = rng.randint(1, 3)
        return f"{rng.choice(['delivery takes', 'restocking takes', 'the supplier needs'])} {num(rng, w)} " \
               f"week{'s' if w > 1 else ''}", {"lead_time": 7 * w}
    d = rng.randint(1, 12)
    lead = rng.choice(["delivery takes", "the lead time is", "orders arrive after", "it takes",
                       "our supplier takes", "restocking takes"])
    return f"{lead} {num(rng, d)} day{'s' if d > 1 else ''}", {"lead_time": d}


def _horizon(rng, item):
    unit, mult = rng.choice([("days", 1), ("weeks", 7), ("months", 30)])
    n = rng.randint(2, 12) if unit != "days" else rng.choice([30, 45, 60, 90, 120])
    verb = rng.choice(["we plan for", "let's plan for", "we plan", "the planning horizon is"])
    return f"{verb} {num(rng, n)} {unit}", {"time_horizon": n * mult}


def _capacity(rng, item):
    n = rng.choice([40, 60, 75, 80, 120, 150, 200, 250, 300, 450])
    place = rng.choice(["the stockroom", "the shelf", "the back room", "the warehouse", "the storeroom"])
    verb = rng.choice(["can hold", "holds", "fits", "takes", "has room for"])
    return f"{place} {verb} {num(rng, n)} {item}", {"max_inventory": n}


def _max_order(rng, item):
    n = rng.choice([20, 25, 30, 40, 50, 60, 100])
    form = rng.choice([f"the supplier won't send more than {num(rng, n)} {item} per order",
                       f"the wholesaler caps each order at {num(rng, n)}",
                       f"the van can carry at most {num(rng, n)} {item}",
                       f"we can order at most {num(rng, n)} at a time"])
    return form, {"max_order": n}


def _holding(rng, item):
    period = rng.choice(["day", "day", "week", "month", "year"])
    per_day = rng.choice([0.05, 0.1, 0.2, 0.25, 0.5]) if period != "year" else rng.choice([0.1, 0.2])
    v = round(per_day * PERIOD_DAYS[period], 2)
    one = SINGULAR[item]
    rate = rng.choice([f"a {period}", f"per {period}", f"each {period}"]) if period != "day" else \
        rng.choice(["a day", "per day", "each day"])
    form = rng.choice([f"keeping one {one} in stock costs {money(rng, v)} {rate}",
                       f"holding costs {money(rng, v)} per unit per {period}",
                       f"it costs us {money(rng, v)} {rate} to store each {one}"])
    return form, {"holding_cost": round(v / PERIOD_DAYS[period], 6)}


def _setup(rng, item):
    v = rng.choice([5, 7.5, 10, 12, 15, 20, 25, 40, 60])
    form = rng.choice([f"each order costs {money(rng, v)} in fees", f"the delivery fee is {money(rng, v)} per order",
                       f"every delivery costs us a flat {money(rng, v)}",
                       f"placing an order costs {money(rng, v)}"])
    return form, {"setup_cost": v}


def _penalty(rng, item):
    v = rng.choice([1.5, 2, 3, 4.5, 6, 8, 10])
    one = SINGULAR[item]
    form = rng.choice([f"each sale we miss costs us {money(rng, v)} in lost profit",
                       f"a stockout costs {money(rng, v)} per unit short",
                       f"we lose {money(rng, v)} of margin on every {one} we can't sell"])
    return form, {"penalty_cost": v}


def _transition(rng, item):
    if rng.random() < 0.5:
        form = rng.choice(["if we run out, customers go to the shop down the road",
                           "when we're out, people just buy it elsewhere", "customers won't wait, they leave",
                           "if it's not on the shelf they order it online instead", "the sale is simply lost"])
        return form, {"state_transition_model": "lost_sale"}
    form = rng.choice(["if we run out, customers wait for the next delivery",
                       "when we're out, people put their name on a list and come back",
                       "customers are happy to wait for a back-order",
                       "we take their number and call them when it arrives"])
    return form, {"state_transition_model": "backlog"}


def _perish(rng, item):
    if rng.random() < 0.5:
        form = rng.choice([f"whatever {item} are left at closing get thrown out",
                           "leftovers spoil by the end of the day", "unsold stock goes in the bin every evening"])
        return form, {"perishability": "perishable"}
    # "the X keep for years" is a finite shelf life: the held-out conventions (v4 PROCEDURE.md) ask about it
    form = rng.choice(["nothing ever expires", f"the {item} never go off", "nothing is thrown away",
                       "the stock doesn't go off"])
    return form, {"perishability": "non_perishable"}


def _risk(rng, item):
    r = rng.randint(-10, 10)
    text = rng.choice([str(r) if r <= 0 else f"+{r}", ("minus " + words(-r)) if r < 0 else words(r)])
    return f"our risk tolerance is {text}", {"risk_tolerance": r}


def _demand(rng, item):
    m = rng.randint(3, 40)
    choice = rng.random()
    if choice < 0.3:
        return (f"we sell exactly {num(rng, m)} {item} a day, every day, like clockwork",
                {"demand_type": "deterministic", "demand_distribution": m})
    if choice < 0.55:
        return (f"demand is Poisson, about {num(rng, 7 * m)} {item} a week",
                {"demand_type": "random", "demand_distribution": f"poisson({m})"})
    sd = rng.randint(1, max(1, m // 3))
    return (f"we sell about {num(rng, m)} {item} a day, give or take {num(rng, sd)}",
            {"demand_type": "random", "demand_distribution": f"normal({m}, {sd})"})


CLAUSES = [_lead, _horizon, _capacity, _max_order, _holding, _setup, _penalty, _transition, _perish, _risk, _demand]
# fields that can share a sentence without two numbers of the same kind competing for one keyword
_FIELDS_OF = {f: f.__name__ for f in CLAUSES}


# ---- never values and asks ------------------------------------------------------------------------------------------
def distractor(rng: random.Random, trade: str) -> str:
    return rng.choice([
        f"We've been open since {rng.randint(1975, 2019)}.",
        f"We opened in {rng.randint(1975, 2019)} and it's a family {trade}.",
        f"We have {num(rng, rng.randint(2, 9))} staff.",
        f"We run {num(rng, rng.randint(2, 4))} delivery vans.",
        f"Call me on 555 {rng.randint(1000, 9999)} if anything is unclear.",
        f"Our margin is about {rng.randint(15, 45)}% on most lines.",
        f"The shop is at {rng.randint(3, 240)} Station Road.",
        f"Prices went up {rng.randint(2, 9)}% this year.",
        f"Last year, {rng.randint(2019, 2025)}, was a good one.",
        f"We're a {trade} with {num(rng, rng.randint(2, 6))} tills.",
        "Thanks for taking the time!",
    ])


def ask_clause(rng: random.Random, item: str) -> tuple[str, dict, list]:
    k = rng.randrange(6)
    if k == 0:
        a = rng.randint(2, 6)
        return f"delivery takes {num(rng, a)} or {num(rng, a + 1)} days", {}, ["lead_time"]
    if k == 1:
        a = rng.choice([60, 80, 100])
        return f"the shelves hold between {a} and {a + 20} {item}", {}, ["max_inventory"]
    if k == 2:
        return "some customers wait for a back-order, others just leave", {}, ["state_transition_model"]
    if k == 3:
        m = rng.randint(5, 60)
        return f"we sell about {num(rng, m)} {item} a day", {}, ["demand_type", "demand_distribution"]
    if k == 4:
        v = rng.choice([5, 8, 12])
        return f"the order fee is {money(rng, v)}, maybe {v + 1}", {}, ["setup_cost"]
    return rng.choice(["we're fairly cautious about risk", "we like to take a few risks",
                       "we're quite risk-averse"]), {}, ["risk_tolerance"]


def _join(rng: random.Random, clauses: list[str]) -> str:
    out = clauses[0][0].upper() + clauses[0][1:]
    for c in clauses[1:]:
        sep = rng.choice([". ", ". ", "; ", ", and ", " - "])
        nxt = c[0].upper() + c[1:] if sep == ". " else c
        out += sep + nxt
    return out + rng.choice([".", ".", "!", ""])


def manager_sample(rng: random.Random, max_fields: int = 3, p_distractor: float = 0.4, p_ask: float = 0.2) -> Sample:
    """One message: 1..max_fields clauses (distinct fields), maybe a never-value distractor, maybe an ask."""
    trade, item = rng.choice(TRADES)
    makers = rng.sample(CLAUSES, rng.randint(1, max_fields))
    clauses, fields, ask = [], {}, []
    for make in makers:
        text, f = make(rng, item)
        clauses.append(text)
        fields.update(f)
    if rng.random() < p_ask:
        text, _f, a = ask_clause(rng, item)
        if not set(a) & set(fields) and not ({"demand_type", "demand_distribution"} & set(a) and _demand in makers):
            clauses.append(text)
            ask = a
    rng.shuffle(clauses)
    msg = _join(rng, clauses)
    if rng.random() < p_distractor:
        d = distractor(rng, trade)
        msg = f"{d} {msg}" if rng.random() < 0.5 else f"{msg} {d}"
    return Sample(msg, fields, ask, "+".join(m.__name__ for m in makers))


def never_sample(rng: random.Random) -> Sample:
    """Only distractors: nothing may be stored."""
    trade, _ = rng.choice(TRADES)
    return Sample(" ".join(distractor(rng, trade) for _ in range(rng.randint(1, 3))), {}, [], "never")


# ---- advice ---------------------------------------------------------------------------------------------------------
def advice_sample(rng: random.Random) -> tuple[str, dict]:
    """One advice text with its label (held-out conventions)."""
    s = rng.randint(5, 40)
    S = s + rng.randint(10, 60)
    Q = rng.randint(10, 50)
    n = lambda v: num(rng, v) if rng.random() < 0.3 else str(v)  # noqa: E731
    basis_txt, basis = rng.choice([("inventory position", "position"), ("on-hand plus on-order stock", "position"),
                                   ("on\u2011hand and on\u2011order stock", "position"),
                                   ("stock counting what's on order", "position"),
                                   ("on-hand stock", "on_hand"), ("shelf count", "on_hand"), ("stock", None)])
    k = rng.randrange(9)
    lab: dict
    if k == 0:
        t = rng.choice([f"When your {basis_txt} falls below {n(s)}, order up to {n(S)}.",
                        f"Reorder point: {n(s)} units. Order-up-to level: {n(S)} units.",
                        f"Use s = {s} and S = {S}.",
                        f"- Reorder point (s): {s}\n- Order-up-to level (S): {S}",
                        f"| parameter | value |\n|---|---|\n| s | {s} |\n| S | {S} |"])
        lab = {"type": "ss", "s": s, "S": S}
    elif k == 1:
        t = rng.choice([f"Order {n(Q)} units whenever the {basis_txt} drops below {n(s)}.",
                        f"Reorder point {n(s)}, order quantity {n(Q)}.",
                        f"When the {basis_txt} is under {n(s)}, order {n(Q)} units."])
        lab = {"type": "sq", "s": s, "Q": Q}
    elif k == 2:
        t = rng.choice([f"Every day, order up to {n(S)}.", f"Use a base-stock level of {n(S)}."])
        lab = {"type": "base_stock", "S": S}
    elif k == 3:
        day = rng.choice(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"])
        t = rng.choice([f"Every {day}, order {n(Q)} units.", f"Order up to {n(S)} every {day}.",
                        f"{day}s: order {n(Q)} units."])
        lab = {"type": "periodic", "every_days": 7, **({"S": S} if "up to" in t else {"Q": Q})}
    elif k == 4:
        phrase, days = rng.choice([("every other day", 2), ("fortnightly", 14), ("every two weeks", 14),
                                   ("once a month", 30), ("every 3 days", 3), ("every 10 days", 10)])
        t = rng.choice([f"Order {n(Q)} units {phrase}.", f"{phrase.capitalize()}, order up to {n(S)}."])
        lab = {"type": "periodic", "every_days": days, **({"S": S} if "up to" in t else {"Q": Q})}
    elif k == 5:
        lo = s
        hi = s + rng.choice([2, 4, 5])
        mid = (lo + hi + 1) // 2
        t = f"Reorder at around {lo}-{hi} units and order up to {S}."
        lab = {"type": "ss", "s": mid, "S": S, "range": [lo, hi], "range_field": "s"}
    elif k == 6:
        cap = S - rng.randint(5, 20)
        t = rng.choice([f"Your storage capacity is {cap} units. Reorder below {s} and order up to {S}.",
                        f"Order up to {S} when stock drops below {s} (you can store {cap} units)."])
        lab = {"type": "infeasible", "reason": "S above stated capacity"}
    elif k == 7:
        s2, S2 = s + 3, S + 5
        t = rng.choice([f"Option A: s = {s}, S = {S}. Option B: s = {s2}, S = {S2}. I recommend option B.",
                        f"Two choices: (a) s={s2}, S={S2} (b) s={s}, S={S}. Recommended: (a)."])
        lab = {"type": "ss", "s": s2, "S": S2}
    else:
        t = rng.choice(["It depends on many factors; monitor sales and adjust as you go.",
                        "I need more data before I can recommend anything.",
                        "Let me get back to you next week with numbers."])
        lab = {"type": "none"}
    if basis and lab["type"] in ("ss", "sq") and basis_txt in t:
        lab["basis"] = basis
    return t, lab


def main(argv: list[str] | None = None) -> int:
    import argparse

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from agents.extraction_eval import exact_match
    from agents.extraction_rules import parse_utterance
    from agents.policy_parser import parse_policy
    from agents.policy_parser_eval import heldout_ok

    ap = argparse.ArgumentParser(description="accuracy of the offline reader and parser on a random sweep")
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    right = total = invented = asked = ask_total = 0
    for i in range(args.n):
        smp = manager_sample(rng) if i % 5 else never_sample(rng)
        got = parse_utterance(smp.text).values
        bad = {}
        for k, v in smp.fields.items():
            total += 1
            ok = exact_match(k, got.get(k), v)
            right += ok
            if not ok:
                bad[k] = (got.get(k), v)
        for k in smp.ask:
            ask_total += 1
            asked += k not in got
            if k in got:
                bad[k] = (got[k], "ask")
        for k in got:
            if k not in smp.fields and k not in smp.ask:
                invented += 1
                bad[k] = (got[k], None)
        if bad and args.verbose:
            print(f"  {smp.text!r}: {bad}")
    print(f"extraction sweep seed {args.seed}, {args.n} messages: fields right "
          f"{(right + asked) / (total + ask_total):.1%} (stated {right}/{total}, asked back {asked}/{ask_total}), "
          f"invented values {invented}")
    ok = 0
    for _ in range(args.n // 2):
        text, lab = advice_sample(rng)
        good, why = heldout_ok(lab, parse_policy(text))
        ok += good
        if not good and args.verbose:
            print(f"  {text!r}: {why}")
    print(f"advice sweep seed {args.seed}, {args.n // 2} texts: policy right {ok / (args.n // 2):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
