"""Advice in other languages read through English (agents.foreign_words): number words of nine languages, the
ordering vocabulary, and English text left exactly as it was."""

import pytest

from agents.foreign_words import looks_foreign, replace_foreign_numbers, to_english, words_value
from agents.policy_parser import parse_policy
from agents.policy_parser_eval import heldout_ok


@pytest.mark.parametrize("words, value", [
    ("seratus", 100), ("dua puluh lima", 25), ("dua belas", 12), ("tiga ratus", 300), ("seribu dua ratus", 1200),
    ("einhundertfünfzig", 150), ("fünfundzwanzig", 25), ("zweitausend", 2000), ("vijfentwintig", 25),
    ("trois cents", 300), ("quatre-vingt-dix", 90), ("soixante-dix", 70), ("septante", 70), ("vingt et un", 21),
    ("doscientos cincuenta", 250), ("treinta y cinco", 35), ("mil quinientos", 1500), ("cento e vinte", 120),
    ("mia moja na ishirini", 120), ("elfu mbili", 2000), ("hamsini", 50),
    ("iki yüz elli", 250), ("on beş", 15), ("bin", 1000),
])
def test_number_words(words, value):
    parts = [t for t in words.replace("-", " ").split()]
    from agents.foreign_words import _split_germanic  # compounds are split before they are valued

    if len(parts) == 1 and _split_germanic(parts[0]):
        parts = _split_germanic(parts[0])
    assert words_value(parts) == value


def test_numbers_in_text_and_words_that_are_also_names():
    assert replace_foreign_numbers("pesan seratus lembar") == "pesan 100 lembar"
    assert replace_foreign_numbers("bestellen Sie einhundertfünfzig Stück") == "bestellen Sie 150 Stück"
    assert replace_foreign_numbers("botellas de Lima") == "botellas de Lima"  # a city, alone
    assert replace_foreign_numbers("setiap tiga hari") == "setiap 3 hari"  # a number before a unit of time


@pytest.mark.parametrize("text", [
    "Order once on Monday, due by the 3rd; the shipment is en route.",
    "Sorry, reorder at 20 and order up to 60. Her Monday delivery is late; Otto said 15 Sept.",
    "When it falls to 12, order 30 (don't let the stock die down to zero).",
])
def test_english_is_left_as_it_was(text):
    assert not looks_foreign(text) and to_english(text) == text


@pytest.mark.parametrize("text, policy", [
    ("Cuando el inventario físico baje a 40 cajas, pida 120 cajas. No cuente lo que está en camino.",
     {"type": "sq", "s": 40, "Q": 120, "basis": "on_hand"}),
    ("Quand il ne reste que trente sacs, commandez-en cent vingt.", {"type": "sq", "s": 30, "Q": 120}),
    ("Sobald der physische Bestand unter 50 Stück fällt, bestellen Sie bis auf 200 Stück.",
     {"type": "ss", "s": 50, "S": 200, "basis": "on_hand"}),
    ("Setiap hari Kamis pesan 60 karung beras.", {"type": "periodic", "every_days": 7, "Q": 60}),
    ("Kila siku agiza magunia thelathini.", {"type": "periodic", "every_days": 1, "Q": 30}),
    ("Her Pazartesi 80 kilo un sipariş verin.", {"type": "periodic", "every_days": 7, "Q": 80}),
    ("Ponto de pedido 1.200 garrafas, quantidade de pedido 3.000 garrafas.", {"type": "sq", "s": 1200, "Q": 3000}),
    ("Cada dos semanas, pida lo suficiente para llevar su posición de inventario a 500 unidades.",
     {"type": "periodic", "every_days": 14, "S": 500, "basis": "position"}),
])
def test_advice_in_other_languages_parses(text, policy):
    """Scored as the held-out sets are (`heldout_ok`: a trigger "falls to 40" may be read as s = 40 or 41)."""
    r = parse_policy(text)
    ok, why = heldout_ok(policy, r)
    assert ok, (why, r.status, r.kind, r.params, r.basis)


def test_an_acknowledged_capacity_in_another_language_makes_the_advice_infeasible():
    r = parse_policy("Punto de pedido 20, pedir hasta 95. Ya sé que la bodega solo admite 80 llantas.")
    assert r.status == "infeasible" and "80" in r.reason
