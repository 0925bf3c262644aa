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

# English function words: every English message of a few words has some; a message in another language that
# borrows "delivery" or "order" still has almost none of them
_ENGLISH_FUNCTION = set("""
a about above after again all also always am an and any are around as at be because been before being below
between both but by can could did do does doing don't down during each every few for from had has have having he
her here his how i i'd i'll i'm i've if in into is isn't it it's its just let's like many maybe me more most much
my no nor not now of off often on once one only or other our out over per please same she should so some such
than that that's the their them then there these they they're this those through to too two under until up us
very was we we'd we'll we're we've were what when where which while who why will with would yes you you're your
""".split())
# ... and the domain's most common words, which short English answers ("Storage limit: 60 crates") may lack too
_ENGLISH = _ENGLISH_FUNCTION | set("""
day days week weeks month months year years unit units order orders sell sells sold customers stock delivery
cost costs about roughly usually sure thanks thank ok okay yeah nope yep right wrong fine hi hello
""".split())
# function and everyday words of the languages managers have written in, none of them an English word: two of
# them outnumbering the English function words twice over (or one, with no English word at all) mark a message
# as foreign; a few foreign words in an English sentence ("15 000 FCFA par commande") do not
_FOREIGN = set("""
le les des du est et pour avec une dans sur sont nous vous ils mais pas cette jours jour semaine livraison commande
coût chaque très je il elle qui que au aux par
der das und ist mit für nicht ein eine wir auf von zu tage tag woche wochen lieferung bestellung kostet jede
pro stück
el los las y es para con por del su días semana entrega pedido cada cuesta tarda tarde
il gli di è della sono giorni settimana consegna ordine ogni costa
os um uma não são dias custa com em
het een en voor niet dagen levering bestelling kost elke
w z jest się nie dni trwa koszt dostawa zamówienia zamówienie każde trzy
là của và các những ngày giao hàng phí đặt nghìn đồng thời gian
ang ng sa mga ay araw bawat tatlong kami namin
dan yang ke untuk dengan adalah hari setiap biaya pesan tidak sampai
kwa ya wa siku kila gharama ni
ve bir bu için gün her sipariş maliyet
szia nap napot darab darabot és egy hogy nem
ja ei päivää päivä euroa viisi kolme toimitus kestää dny týden tři pět kusů trvá skladu dodávka objednávka
är och att det som inte kostar dagar frakten leveranstiden leveranstid kronor beställning
""".split())
# script and embedding tags: pasted markup or an injection attempt, never a manager's sentence
_MARKUP = re.compile(r"<\s*/?\s*(?:script|iframe|object|embed|svg|style|img)\b|\bjavascript\s*:|^\s*[=+@]\s*cmd\s*\||<!(?:DOCTYPE|ENTITY)\b|"
                     r"<%|\$\(\s*(?:curl|wget|rm|sh|bash|nc|python)\b|\brm\s+-rf\b", re.IGNORECASE | re.M)
# an attempt to steer the reader instead of describing the shop: prompt and template injection
_INJECTION = re.compile(r"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+|the\s+)?(?:previous|prior|above|earlier)\s+"
                        r"(?:instructions|prompts?|rules)|\$\{jndi:|\{\{[^{}]{0,40}\}\}|\{%[^%]{0,40}%\}|"
                        # a role tag, a mode switch, an "admin override", a pasted tool result or chat turn
                        r"^\W{0,3}\[\s*(?:system|admin|administrator|developer|assistant|tool|root)(?:\s+(?:override|message|note|instructions?|mode))?\s*\]|"
                        r"\byou\s+are\s+now\s+(?:in\s+)?(?:[\w-]+\s+)?mode\b|\byou\s+are\s+now\s+(?:in\s+)?[\w-]*mode\b|"
                        r"\b(?:overwritten|overridden|overruled|reset)\s+by\s+(?:the\s+|an?\s+)?(?:admin|administrator|system|"
                        r"developer|operator)\b|\b(?:system|admin|developer)\s+override\b|"
                        r"[\"'](?:tool_result|tool_output|function_result|tool_calls?)[\"']\s*:|"
                        r"[\"']role[\"']\s*:\s*[\"'](?:system|tool|assistant|developer)[\"']|"
                        # an instruction hidden in an HTML comment, a claimed developer's authority
                        r"<!--[^>]{0,200}\b(?:assistant|system|store|set|ignore)\b|"
                        r"\bi(?:'m|\s+am)\s+the\s+(?:developer|admin|administrator|owner|maker)\s+of\s+(?:askopt|this\s+(?:app|system|bot|"
                        r"assistant|tool))\b|\bi\s+authori[sz]e\s+you\s+to\b|"
                        r"\b(?:disregard|ignore|forget)\s+(?:everything|all)\s+(?:before|above|said\s+before)\b|"
                        r"\bnew\s+instructions?\s+from\s+the\s+(?:operator|admin|administrator|system|developer)\b|"
                        r"\bpretend\s+(?:you\s+are|you'?re|to\s+be)\b|\bact\s+as\s+my\b|"
                        r"\b(?:translate|summari[sz]e|rewrite)\s+(?:the\s+)?following\b.{0,80}?\b(?:apply|execute|run|store|save)\s+it\b",
                        re.IGNORECASE | re.MULTILINE)
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
    words = [w for w in _WORD.findall(text.lower()) if any(ch.isalpha() for ch in w)]  # not "①" list markers
    if not words and not re.search(r"\d", text):
        return "I couldn't find any words or numbers in that message."
    if _INJECTION.search(text):
        return "I can only take facts about your stock and costs, not instructions. Nothing was changed."
    if _MARKUP.search(text):
        return "That looks like code or web markup rather than a message. Could you say it in words? Nothing was changed."
    letters = [c for c in text if c.isalpha()]
    greek = [c for c in letters if unicodedata.name(c, "").startswith("GREEK")]
    if len(greek) <= 3:  # "μ = 18, σ = 3": notation, not Greek
        letters = [c for c in letters if c not in greek]
    non_latin = sum(1 for c in letters if not unicodedata.name(c, "").startswith("LATIN"))
    if letters and non_latin / len(letters) > 0.3:
        return "Sorry, I can only read English."
    # a word with letters English does not use ("szállítási", "zamówienia") counts as foreign too
    listed = sum(w in _FOREIGN for w in words)
    foreign = listed + sum(w not in _FOREIGN and not w.isascii() and len(w) > 1 for w in words)  # not "μ", "σ"
    english = sum(w in _ENGLISH_FUNCTION for w in words)
    if len(words) >= 3 and ((foreign >= 2 and foreign > 2 * english)
                            or (listed >= 1 and not any(w in _ENGLISH for w in words))):
        return "Sorry, I can only read English."
    return None
