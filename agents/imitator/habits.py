"""What makes the simulated manager read like a person rather than a script.

Issue 14 found the simulator repetitive: the same five chit-chat lines across seeds, numbers kept to the cent
after "not sure", and openings that were a noun phrase ("Hi. An auto parts store that sells ..."). This module
holds the fixes, each drawn from the episode's seeded generator so one (profile, seed) is still one manager:

- `Habits.draw`: per-episode lexical habits (a filler opener, a hedge tag, a sign-off) from the persona's pool;
- `chitchat`: small talk assembled from templates with episode-specific slots (years open, staff, weekday...);
- `round_within`: how people round ("about $25" for 25.55) while staying inside the scoring tolerance, so
  rounding never turns a right answer into a wrong one;
- `opening_sentence`: the business context turned into a whole first-person sentence.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Habits", "chitchat", "opening_sentence", "round_within"]

# persona -> (openers, tags, sign-offs); "custom" profiles (tests, ablations) get none
_POOLS: dict[str, tuple[list[str], list[str], list[str]]] = {
    "expert": (["So,", "Right,", "Precisely:", "Okay -"], [", roughly speaking", ", on average", ""],
               ["Happy to give more detail.", "Let me know if you need the exact data."]),
    "typical": (["Well,", "So,", "Let me think.", "Okay,", "Right,"], [", I think", ", more or less", ""],
                ["Hope that helps.", "Does that make sense?", "Anything else?"]),
    "vague": (["Um,", "Hmm,", "Well,", "Honestly,", "Oh,", "I guess"], [", I guess", ", kind of", ", you know", ""],
              ["Sorry, numbers aren't my thing.", "I'm winging it a bit here.", "Don't quote me on that."]),
}
_NAMES = ["Maria", "Tom", "Priya", "Luis", "Anna", "Kofi", "Jen", "Sam", "Omar", "Mei"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
_CHAT_TEMPLATES = [
    "We've been open for {years} years now.",
    "{name} usually handles the orders, I just sign off.",
    "{day}s are always the busiest for us.",
    "It's been a hectic {span}, sorry if I'm a bit scattered.",
    "We had a rough {season} but things are picking up.",
    "My {relative} started this shop, I took over {years} years ago.",
    "I do the books myself on {day} evenings.",
    "Thanks for taking the time, by the way.",
    "Our last supplier was a nightmare, this one is better.",
    "We're a small team, just {staff} of us.",
    "Honestly I've been meaning to sort this out for a while.",
    "The shop next door keeps undercutting us, so every bit counts.",
    "I mostly go by gut feeling, to be honest.",
    "We tried a spreadsheet once, it didn't last.",
]


@dataclass
class Habits:
    """One manager's verbal tics, fixed for the episode."""

    opener: str = ""
    tag: str = ""
    sign_off: str = ""
    rate: float = 0.0  # per reply: how often a tic shows
    slots: dict[str, str] = field(default_factory=dict)

    @classmethod
    def draw(cls, persona: str, rate: float, rng: np.random.Generator) -> Habits:
        slots = {"years": str(int(rng.integers(2, 31))), "name": str(rng.choice(_NAMES)),
                 "day": str(rng.choice(_DAYS)), "span": str(rng.choice(["week", "month", "quarter"])),
                 "season": str(rng.choice(["winter", "summer", "spring", "autumn"])),
                 "relative": str(rng.choice(["father", "mother", "aunt", "uncle", "grandfather"])),
                 "staff": str(rng.choice(["two", "three", "four", "five"]))}
        if persona not in _POOLS or rate <= 0:
            return cls(slots=slots)
        openers, tags, sign_offs = _POOLS[persona]
        return cls(opener=str(rng.choice(openers)), tag=str(rng.choice(tags)), sign_off=str(rng.choice(sign_offs)),
                   rate=rate, slots=slots)

    def apply(self, text: str, rng: np.random.Generator) -> str:
        """Maybe put the manager's tics around one reply (never inside numbers, never changing a value)."""
        if self.rate <= 0 or not text:
            return text
        if self.opener and rng.random() < self.rate:
            text = f"{self.opener} {_lower_first(text)}"
        if self.tag and rng.random() < self.rate * 0.5:
            text = re.sub(r"\.$", f"{self.tag}.", text, count=1)
        if self.sign_off and rng.random() < self.rate * 0.3:
            text = f"{text} {self.sign_off}"
        return text


def chitchat(habits: Habits, rng: np.random.Generator) -> str:
    return _CHAT_TEMPLATES[int(rng.integers(len(_CHAT_TEMPLATES)))].format(**habits.slots)


def round_within(x: float, rel: float) -> float:
    """The coarsest human rounding of `x` (1 significant figure, halves, 2 significant figures, cents) that stays
    within `rel` of it: 25.55 -> 25 at 4%, 4.1 -> 4 at 8%, 0.27 -> 0.27 at 4%."""
    if x <= 0 or not math.isfinite(x):
        return x
    mag = 10 ** math.floor(math.log10(x))
    for step in (mag, mag / 2, mag / 10, mag / 20, mag / 100):
        y = round(round(x / step) * step, 6)
        if y > 0 and abs(y - x) <= rel * x:
            return y
    return round(x, 2)


def opening_sentence(context: str) -> str:
    """'An auto parts store that sells X; unmet demand is lost.' -> 'I run an auto parts store that sells X;
    unmet demand is lost.' A context that already is a sentence with a subject is kept; always ends with a stop."""
    text = context.strip()
    if not text:
        return ""
    m = re.match(r"^(A|An|The)\s+(.*)$", text)
    if m:
        text = f"I run {m.group(1).lower()} {m.group(2)}"
    if text[-1] not in ".!?":
        text += "."
    return text


def _lower_first(s: str) -> str:
    if s and not re.match(r"^(?:I\b|I'|\$|[A-Z]{2})", s):
        return s[0].lower() + s[1:]
    return s
