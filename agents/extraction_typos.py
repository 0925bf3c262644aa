"""Typo-tolerant keywords: "delivrey" -> "delivery", "aprox" -> "approx", "perishible" -> "perishable".

The reader's cue phrases are exact words; a manager typing fast misspells them. Before the cue phrases run, every
unknown word of five or more letters is compared with the reader's keyword vocabulary by Damerau-Levenshtein
distance (rapidfuzz): one edit for words of 5-7 letters, two for longer ones, same first letter, and the match
must be unique. Words an English dictionary knows (pyspellchecker's frequency list) are never touched, so
"actually" does not become "annually" and "shell" stays "shell": a wrong correction is worse than a missed one.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rapidfuzz import process
from rapidfuzz.distance import DamerauLevenshtein
from spellchecker import SpellChecker

__all__ = ["fix_typos", "KEYWORDS"]

#: Words the reader's cue phrases depend on (targets of a correction).
KEYWORDS = tuple(sorted(set("""
delivery deliveries deliver delivered delivers arrive arrives arrived arrival approx approximately around
roughly perishable perishables spoil spoils spoiled expire expires expired inventory capacity shelves shelf
storage stockroom storeroom warehouse supplier suppliers wholesaler distributor order orders ordered ordering
holding penalty shortage shortages backorder backorders backordered backlog customers customer elsewhere
competitor competitors demand average deviation standard between horizon planning setup fixed random
deterministic constant weekly monthly daily yearly annually dollars cents maximum minimum truck pallet risk
averse cautious conservative aggressive neutral lost sales sells selling usually typically sometimes thousand
hundred twenty thirty forty fifty sixty seventy eighty ninety eleven twelve thirteen fourteen fifteen sixteen
seventeen eighteen nineteen three seven eight units items pieces boxes bottles crates shipment shipping
transit arrives receive received takes business weeks months years lead fridge freezer cooler limit limited
capped storing store stores holds carry carrying thrown throw waste wasted discard leave leaves buying
somewhere another instead waiting patient penalize penalty goodwill margin profit unmet unfilled missed
month week year order customer supply supplies deliveries quarter shelving storing storage
morning tomorrow overnight poisson distribution normal uniform
""".split())))
# common words one edit away from a keyword: never corrected
_PROTECTED = set("""
shell sever fifth sixth ninth tenth eighth seventh third fourth other others order older bolder holder folder
hunted winter waiter writer elder solder sales scales stale stole seller sellers cellar dollar collar mouths
moths hours house horse there three these those where while white wield fielded trucks truce stores stories
stare share spare spore spoke shore short sport units unity unite untied items itemise boxer board aware
waited waits wider wiser leaves lower limits limbs limp thrown throne holds hold fold folds pallets palette
fixes mixed boxes loves lover cooler colder delver driver rivers lead leads load loads weeks weekly meeks
""".split())
_TOKEN = re.compile(r"[a-z]+")


@lru_cache(maxsize=1)
def _english():
    """The dictionary's word list (loaded once, ~1 s)."""
    return SpellChecker(distance=1).word_frequency


@lru_cache(maxsize=8192)
def _correct(word: str) -> str:
    if len(word) < 5 or word in KEYWORDS or word in _PROTECTED or word in _english():
        return word
    limit = 1 if len(word) <= 7 else 2
    candidates = [k for k in KEYWORDS if k[0] == word[0] and abs(len(k) - len(word)) <= limit and len(k) >= 5]
    if not candidates:
        return word
    candidates = [k for k in candidates if not (k.startswith(word) or word.startswith(k))]  # inflections
    if not candidates:
        return word
    hits = process.extract(word, candidates, scorer=DamerauLevenshtein.distance, score_cutoff=limit, limit=2)
    if not hits:
        return word
    if len(hits) > 1 and hits[1][1] == hits[0][1]:
        return word  # two keywords equally close: not sure, leave it
    return hits[0][0]


def fix_typos(text: str) -> str:
    """`text` (lower-case) with misspelt keywords replaced; everything else unchanged, positions may shift."""
    return _TOKEN.sub(lambda m: _correct(m.group(0)), text)
