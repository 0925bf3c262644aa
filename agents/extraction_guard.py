"""What the extraction agent refuses to read: too long, empty, no words, not English.

A message the reader cannot trust must not change the table (precision over recall), and must not crash the
agent: the agent answers with a polite re-ask built from `check_message`'s reason. The checks are cheap and
linear in the message length; the length cap also bounds the work of everything after it.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MAX_MESSAGE_CHARS", "check_message"]

#: A manager's answer is a few sentences; ten times that is still accepted.
MAX_MESSAGE_CHARS = 2000

# English function words and the domain's most common words: an English message of three or more words
# almost always contains one of them; French, German, Spanish, ... messages almost never do.
_ENGLISH = set("""
a about above after again all also always am an and any are around as at be because been before being below
between both but by can could did do does doing don't down during each every few for from had has have having he
her here his how i i'd i'll i'm i've if in into is isn't it it's its just let's like many maybe me more most much
my no nor not now of off often on once one only or other our out over per please same she should so some such
than that that's the their them then there these they they're this those through to too two under until up us
very was we we'd we'll we're we've were what when where which while who why will with would yes you you're your
day days week weeks month months year years unit units order orders sell sells sold customers stock delivery
cost costs about roughly usually sure thanks thank ok okay yeah nope yep right wrong fine hi hello
""".split())
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def check_message(message: object) -> str | None:
    """None when the message can be read; else the reason, phrased to the manager."""
    if not isinstance(message, str):
        return "I couldn't read that message."
    if len(message) > MAX_MESSAGE_CHARS:
        return (f"That message is too long for me to read reliably ({len(message):,} characters; the limit is "
                f"{MAX_MESSAGE_CHARS:,}). Could you answer in a sentence or two? Nothing was changed.")
    text = message.strip()
    if not text:
        return "I didn't get any text there."
    words = _WORD.findall(text.lower())
    if not words and not re.search(r"\d", text):
        return "I couldn't find any words or numbers in that message."
    letters = [c for c in text if c.isalpha()]
    non_latin = sum(1 for c in letters if not unicodedata.name(c, "").startswith("LATIN"))
    if letters and non_latin / len(letters) > 0.3:
        return "Sorry, I can only read English."
    if len(words) >= 3 and not any(w in _ENGLISH for w in words):
        return "Sorry, I can only read English."
    return None
