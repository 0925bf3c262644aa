"""Which parameter a consultant's message asks about, by keywords.

The imitator must answer whoever talks to it: our extraction agent, the study's textbook consultant ("What is
your average daily demand?", "How long does delivery take?") or an LLM. Rules are ordered from specific to
generic so that "How many days pass between placing an order and receiving it?" is a lead-time question even
though it mentions ordering, and "What does it cost you when a customer wants a unit and you have none?" is
about the shortage penalty, not about what happens to the customer.
"""

from __future__ import annotations

import re

__all__ = ["asked_topics", "clarification_kind", "focus"]

_COST = r"cost|price|charge|fee|pay|\$|expens|how much (?:money|do you lose|does it)|penalt|lose"
_RULES: list[tuple[str, str]] = [
    ("risk_tolerance", r"\brisk|averse|-10\b"),
    ("lead_time", r"lead[\s-]?time|how (?:long|many days)[^?.]*(?:deliver|arriv|receiv|take|come|get)|"
                  r"between placing an order and|until it arrives|from (?:placing|ordering)[^?.]*arriv|"
                  r"how (?:soon|quickly)[^?.]*(?:arriv|deliver)|delivery (?:time|take)"),
    ("holding_cost", rf"(?:{_COST})[^?.]*(?:hold|keep|stor|carry|in stock for)|holding|carrying cost|"
                     r"(?:hold|keep|stor)\w*[^?.]*(?:cost|per unit per day)"),
    ("penalty_cost", rf"shortage|penalt|stock[\s-]?out[^?.]*cost|(?:{_COST})[^?.]*(?:short|lost|run out|"
                     r"out of stock|have none|don't have|miss|wait|leaves)|lost (?:sale|unit)s? cost|"
                     r"each lost unit"),
    ("setup_cost", rf"set[\s-]?up|fixed (?:cost|fee|charge)|(?:{_COST})[^?.]*(?:per order|each order|"
                   r"place an order|placing an order|each time you (?:place|order))|ordering cost|order cost"),
    ("max_order", r"largest (?:single )?order|maximum order|max(?:imum)? order|order at once|order limit|"
                  r"biggest order|most you can order|order size"),
    ("max_inventory", r"capacity|store at most|storage space|how many (?:units )?(?:can|could) you (?:store|hold|"
                      r"keep|fit)|max(?:imum)? inventory|room for|space for"),
    ("state_transition_model", r"lost sale|backlog|back[\s-]?order|(?:run|are) out[^?.]*(?:wait|elsewhere|leave)|"
                               r"customers? (?:wait|leave|go elsewhere|buy elsewhere)|wait for|buy elsewhere"),
    ("perishability", r"perish|spoil|expire|shelf life|go(?:es)? bad|go off|throw(?:n)? away"),
    ("demand_distribution", r"how many (?:units )?(?:do|does|would) (?:you|customers)[^?.]*(?:sell|buy)|"
                            r"average (?:daily )?demand|how much do you sell"),
    ("demand_type", r"random[^?.]*determin|determin[^?.]*random|same every day|same number every day|"
                    r"demand (?:type|random)|is (?:your )?(?:daily )?demand random"),
    ("demand_distribution", r"demand|how many (?:units )?(?:do|does|would) (?:you|customers)[^?.]*(?:sell|buy)|"
                            r"\bsell\b|\bsales\b|typical day|per day on average|how much does that vary"),
    ("time_horizon", r"horizon|how (?:many days|long|far)[^?.]*plan|plan(?:ning)? (?:for|ahead|period)|"
                     r"how far ahead|period should"),
]
_RX = [(p, re.compile(r)) for p, r in _RULES]


_ACK = re.compile(r"^\s*(?:noted|got it|thanks|thank you|great|ok|okay|perfect|understood|alright)\b")


def focus(message: str) -> str:
    """The part of a message that asks something: acknowledgements ("Noted: lead time = 6 days.") dropped,
    question sentences preferred."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", message.strip()) if s]
    kept = [s for s in sentences if not _ACK.match(s.lower())] or sentences
    questions = [s for s in kept if "?" in s]
    if questions and _topics(" ".join(questions)):
        return " ".join(questions)
    return " ".join(kept)


def asked_topics(message: str) -> list[str]:
    """Parameters the message asks about, most specific first (empty when it asks nothing we know)."""
    return _topics(focus(message))


def _topics(message: str) -> list[str]:
    text = message.lower()
    found: list[str] = []
    for param, rx in _RX:
        if rx.search(text) and param not in found:
            found.append(param)
    return found


def clarification_kind(message: str) -> str | None:
    """Recognise the clarification patterns a careful consultant uses (ours, or an LLM's)."""
    text = focus(message).lower()
    if re.search(r"independ|square root|sqrt|\u221a", text) and re.search(r"per (?:week|month)|weekly|monthly", text):
        return "demand_period"
    if "lost sale" in text and "backlog" in text and re.search(r"per (?:unit )?per day|per day", text) \
            and re.search(r"penalt|cost", text):
        return "lost_sale_penalty"
    if re.search(r"(?:largest|max\w*) order[^.]*(?:above|exceed|more than|larger than)[^.]*(?:capacity|storage)",
                 text):
        return "max_order_capacity"
    if re.search(r"determin[^.]*(?:spread|vari|random)|random[^.]*(?:single|fixed) number", text):
        return "demand_type"
    if re.search(r"earlier you said|you said[^.]*and now|which is (?:right|correct)|which one|did you mean|"
                 r"i can't use|i need one whole number|doesn't fit|confirm", text):
        return "value"
    return None
