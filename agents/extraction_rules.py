"""The offline rule-based reader: free text from a store manager -> proposed parameter-table updates.

It stands in for the extraction LLM when no model is configured, so it has to cope with realistic phrasing
("we go through about 30 boxes a day", "the truck charges a flat $200", "they won't wait, they leave"), not
just templates. It proposes; it never writes the table: `agents.extraction.ExtractionAgent` validates every
proposal with the core (`ParameterTable.set` / `to_problem`) and decides about conflicts.

How it reads: the text is normalised (number words, idioms, currencies; `agents.extraction_text`), split into
sentences, and every number is classified (money / duration / count / bare, with its rate period). Each
number goes to the parameter whose keyword ("anchor") is nearest among the parameters that fit its kind
(money -> costs, durations -> horizon or lead time, ...); a strong suffix ("$50 per order", "$8 per unit
short") wins outright, and numbers without an anchor go to the parameter the agent just asked about. Keyword
parameters (demand type, perishability, lost sale vs backlog, verbal risk attitudes) come from cue phrases
with simple negation handling.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

from agents.extraction_text import Quantity, normalise_text, scan_quantities, split_sentences
from agents.extraction_units import PERIOD_DAYS, per_day, rate_note
from inventory.spec import PARAMETERS, ParameterError, canonical_name

__all__ = ["DemandPeriodChoice", "ParseResult", "parse_utterance", "INTEGER_FIELDS", "NUMERIC_FIELDS"]

INTEGER_FIELDS = ("time_horizon", "lead_time", "max_inventory", "max_order")
MONEY_FIELDS = ("holding_cost", "penalty_cost", "setup_cost")
NUMERIC_FIELDS = (*INTEGER_FIELDS, *MONEY_FIELDS, "risk_tolerance", "demand_distribution")
_PERIOD_DAYS = PERIOD_DAYS


@dataclass
class DemandPeriodChoice:
    """Demand with a spread given per week/month: the daily law depends on an assumption we must ask about.

    Independent days: weekly sd = daily sd * sqrt(7), so daily sd = weekly sd / sqrt(7). Plain scaling (the
    same shock every day of the week): daily sd = weekly sd / 7. Means always divide by the period length.
    """

    period: str
    days: int
    family: str  # normal | uniform
    mean: float
    sd: float
    low: float | None = None
    high: float | None = None

    def independent(self) -> str:
        mean = self.mean / self.days
        sd = self.sd / math.sqrt(self.days)
        return f"normal({_fmt(mean)}, {_fmt(sd)})"

    def scaled(self) -> str:
        if self.family == "uniform" and self.low is not None and self.high is not None:
            return f"uniform({round(self.low / self.days)}, {round(self.high / self.days)})"
        return f"normal({_fmt(self.mean / self.days)}, {_fmt(self.sd / self.days)})"

    def describe(self) -> str:
        if self.family == "uniform":
            return f"between {_fmt(self.low or 0)} and {_fmt(self.high or 0)} per {self.period}"
        return f"about {_fmt(self.mean)} per {self.period}, give or take {_fmt(self.sd)}"


@dataclass
class ParseResult:
    """What one utterance says: raw values for `normalise_value` plus flags the agent must act on."""

    values: dict[str, object] = field(default_factory=dict)
    demand_period: DemandPeriodChoice | None = None
    penalty_per_day: bool = False  # a shortage cost per unit *per day* implies customers wait (backlog)
    unknown: bool = False  # "not sure", "no idea"
    correction: bool = False  # "actually", "sorry, I meant"
    question: bool = False  # the user asked something instead of answering
    ambiguous: dict[str, tuple[float, float]] = field(default_factory=dict)  # "2 or 3 days"
    notes: list[str] = field(default_factory=list)  # unit conversions applied, for the confirmation
    # one message, two different values for a field ("they wait ... they won't wait"): field -> the values in
    # the order said; such a field is left out of `values` and the agent asks which one is right
    conflicts: dict[str, list[object]] = field(default_factory=dict)
    # a daily mean without any word on how demand varies ("we sell about 9 a day"): the agent asks for the
    # spread instead of assuming Poisson; `demand_spread_cue` says the text called it variable ("it swings")
    demand_mean: float | None = None
    demand_spread_cue: bool = False

    @property
    def empty(self) -> bool:
        return not (self.values or self.demand_period or self.ambiguous or self.conflicts
                    or self.demand_mean is not None)


def _fmt(x: float) -> str:
    return str(int(round(x))) if abs(x - round(x)) < 1e-9 else f"{x:.2f}".rstrip("0").rstrip(".")


# ---- anchors: keywords that say which parameter a nearby number belongs to -------------------------------
_ANCHORS: dict[str, str] = {
    "time_horizon": r"horizon|\bplan\w*(?! on\b)|season|\bnext\b|\bahead\b|covering|\bcover\b|look(?:ing)? at|"
                    r"time ?frame|\bperiod\b|\bwindow\b|through the end|(?<!are )(?<!is )coming(?! after| in\b| within)|upcoming|let's do|run for|should run|"
                    r"optimi[sz]e over|over the next|over a\b",
    "lead_time": r"lead[\s-]?times?|\blead\b|com(?:es|ing) (?:after|in|within)|\bdrops? (?:\w+ )?off\b|\bturns? up\b|deliver\w*|arriv\w*|\btakes?\b|\btook\b|\bship\w*|shows? up|get here|\bcomes?\b|"
                 r"turnaround|comes? in|supplier\w*|wholesaler|restock\w*|receiv\w*|to come|replenish\w*|"
                 r"\bneeds?\b(?= \d+ days)|\blands?\b|doorstep|door to door|\bget (?:it|them|the (?:stock|goods|order))\b|"
                 r"distributor|\blag\b|having it on the shelf|(?:have|get|got) it (?:on the shelf|in)\b|"
                 r"from the (?:mainland|factory|depot|mill|warehouse|wholesaler|supplier)|between (?:placing|putting in|"
                 r"sending) (?:the|an|my|our) order",
    "demand_distribution": r"\bsells?\b|\bsold\b|selling|sales|demand\w*|\bbuy\w*|go through|get through|"
                           r"\bmoves?\b|\buses?\b|consum\w*|customers?|\bmean\b|average|\bavg\b|\bwant\w*|"
                           r"\bpoisson\b|\bnormal\w*|uniform\w*",
    "max_inventory": r"capacity|squeeze\w*|\bcram\w*|\bstore\b|storage|\bhold\b|\bholds\b|\bfits?\b|\broom\b|\bspace\b|shel(?:f|ves|ving)|"
                     r"warehouse|cooler|fridge|freezer|back ?room|stock ?room|store ?room|\bin (?:the )?back\b|"
                     r"max(?:imum)?\.?\s*(?:inventory|inv|stock|stk)\b|on hand|stkrm|\bcellar\b|\bracks?\b|\bbays?\b|"
                     # "cap 80", "the shelf cap is 120": a capacity (an order's cap says "order": see max_order)
                     r"(?<!order )\bcap\b(?=\s*(?:is|=|:|of)?\s*\d)(?!\s*(?:is|=|:|of)?\s*[\d.,]+\s*(?:/|per|an?|each)\s*"
                     r"(?:order|po|delivery|drop)\b)|\b(?:could|can) keep\b|\bkeep (?:up to|max(?:imum)?|at most)\b|"
                     r"\bplace for\b|\btops out at\b|accommodat\w*",
    "max_order": r"max(?:imum)?\.?\s*(?:order\w*|ordr|ord|po|q|qty)\b|max(?:imum)? per (?:po|order)|"
                 r"order\s+(?:limit|size|quantity|cap|max\w*|ceiling)|per[\s-]order (?:ceiling|limit|cap|max\w*)|order\s+at most|"
                 r"(?:drop|send|bring|deliver)s? (?:no )?more than|per (?:visit|drop|run|trip|load)\b|"
                 r"order\s+up to|order\s+(?:no\s+)?more than|\bcaps?\b(?!\s*(?:is|=|:|of)?\s*\d)|capped|ship more than|"
                 r"at a time|at once|/\s*(?:order|ordr|po)\b|(?:per|each|a) (?:delivery|shipment|drop|load|run|po)\b|"
                 r"(?:per|each|every|an?|single|one)\s+order\b|biggest order|largest order|truck can carry|"
                 r"order limit|batch(?:es)? of|(?:per|each|every|a|one)\s+(?:batch|ride)\b|max(?:imum)? of|(?<=\d )a time\b|(?<=\d )a load\b|"
                 r"\bthe most (?:the |our |my )?\w+ (?:sends?|delivers?|brings?|ships?|takes?)\b|"
                 # an in-house run: "25 out of one session at the most", "the most I can get out of a firing"
                 r"out of (?:one|a|each|every|the|a single) (?:session|run|batch|firing|bake|load|trip|go|shift)\b|"
                 r"per (?:session|firing|bake|shift)\b|(?:truck|van|lorry|boat|ute)\w* (?:only )?(?:brings?|carries|takes|"
                 r"delivers?) (?:\w+ ){0,3}?(?:max\b|at (?:the )?most)",
    "holding_cost": r"holding|carry\w*|storage|storing|(?<!the )(?<!our )(?<!my )(?<!a )(?<!this )\bstore\b|\bkeep\w*|warehous\w*|\brent\w*|refrigerat\w*|"
                    r"\bspace\b|in stock|sitting|\bsit\b|\bhold\b",
    "penalty_cost": r"penalt\w*|stock[\s-]?outs?|shortages?|\bshort\b|\blost\b|\blose\b|\bloses\b|\blosing\b|\bloss\b|\bmiss\w*|"
                    r"run(?:ning)? out|run(?:s|ning)? (?:dry|low)|sold out|sell out|out of stock|profit|margin|"
                    r"goodwill|\bwait\w*|delay\w*|\blate\b|"
                    r"backorder\w*|unmet|unfilled|unserved|can't serve|cannot serve|turn(?:ed)? away|disappoint\w*|\bempty\b|\bhit\b|"
                    r"(?:can't|cannot|couldn't|can not|unable to|fail to) (?:supply|provide|fill|deliver)\b|"
                    r"\b(?:credit|voucher|discount|refund)\b(?=[^.;]{0,40}\b(?:wait\w*|back-?orders?|short)\b)",
    "setup_cost": r"set[\s-]?up|haul\w*|handling charge|\bthe (?:\w+ )?drop\b|(?<=\d )handling\b|order(?:ing)?\s+costs?|(?:per|each|every|an?)\s+(?:order|delivery|shipment|truck)|"
                  r"plac\w*\s+(?:an\s+)?orders?|\bdelivery\b|deliveries|shipping|shipment|\btruck\b|\bfixed\b|"
                  r"\bflat\b|\bfees?\b|paperwork|admin\w*|ordering|courier\w*|call[\s-]?out|freight|carriage|postage|haulage|"
                  r"(?:per|each|every|an?)\s+(?:restock|run|trip|drop|consignment|pickup|pick-up|collection|load|job)|a pop\b|"
                  r"(?:order|delivery|ordering)\s+charges?",
    "risk_tolerance": r"risk\w*|riskscale|averse|cautious|conservative|aggressive|gambl\w*|\bsafe\b|neutral|"
                      r"\bscale\b|careful|\bbold\b|\b(?:put|mark|set|score) me (?:down )?(?:at|as)\b",
}
_ANCHOR_RE = {p: re.compile(r) for p, r in _ANCHORS.items()}
_KIND_PARAMS = {
    "money": ("holding_cost", "penalty_cost", "setup_cost"),
    "duration": ("time_horizon", "lead_time"),
    "count": ("demand_distribution", "max_inventory", "max_order"),
    "bare": ("time_horizon", "lead_time", "demand_distribution", "max_inventory", "max_order",
             "holding_cost", "penalty_cost", "setup_cost", "risk_tolerance"),
}
_SETUP_SUFFIX = re.compile(r"^\s*(?:\w+\s+){0,4}?(?P<cue>(?:per|each|every|an?|for each|for every|for an?)\s+"
                           r"(?:order|delivery|shipment|truck|time|batch|purchase order|run|trip|drop|drop-off|visit|call-out|"
                           r"consignment|van)\b|flat\b|fixed\b|"
                           r"regardless|no matter|each time|every time|in (?:shipping|paperwork|admin)|por (?:pedido|orden|encomenda|viaje|"
                           r"viagem|entrega|env[ií]o)|par (?:commande|livraison))")
_SETUP_PREFIX = re.compile(r"\b(?:each|every|per)\s+(?:order|delivery|shipment|trip|drop|consignment)\b[^.;,]{0,20}?"
                           r"\b(?:we|i)\s+(?:pay|spend|are charged|get charged)\s*(?:about|around|roughly)?\s*$|"
                           # "each resupply flight costs the programme about $9,000", "every flight order costs 9000"
                           r"\b(?:each|every)\s+(?:[\w-]+\s+){0,2}?(?:order|delivery|shipment|trip|drop|consignment|flight|"
                           r"run|requisition|resupply|load|call-out)s?\s+(?:costs?|carries|runs)\s+(?:[\w-]+\s+){0,3}?"
                           r"(?:about|around|roughly|some)?\s*$")
_COST_WORD = re.compile(r"\bcosts?\b|\bfees?\b|\bcharges?\b|\bprice|penalt|\bpay|\bspend|\bfreight\b|\btransport\b|"
                        r"\bpostage\b|\bcarriage\b|\bcourier\b|\bcst\b|"
                        r"\b(?:holding|set[\s-]?up|shortage|stock[\s-]?out)\s*(?:is|=|:|of)\s")
# a rate charged while a customer waits: the backlog penalty, never a demand rate
_WAIT_COST_CUE = re.compile(r"\bwait\w*|\blate\b|\bback[\s-]?order\w*|\bgoodwill\b|\bcredit\b|\bknock\b|\bdiscount\w*|"
                            r"\bpenalt\w*|\bloaner\b|\buntil (?:it's|it is|they're|the order is) (?:filled|delivered|in)")
_SHORT_PREFIX = re.compile(r"\b(?:every|each|any)\s+(?:[a-z]+\s+){1,2}?(?:(?:we|i)\s+)?(?:(?:can't|cant|cannot|couldn't)\s+[a-z]+|"
                           r"(?:don't|dont|do not)\s+(?:make|serve|sell|supply|fit|fill|get|have)|(?:is |are )?short)\b"
                           r"[^,;.$]{0,25}$")
_LOSS_PREFIX = re.compile(r"\b(?:lose|loses|losing|lost|miss|missed|forgo|give up)\b[^,;]*$")
_PENALTY_SUFFIX = re.compile(r"(?:of (?:profit|margin|goodwill)|in (?:lost )?(?:profit|margin|goodwill))|"
                             r"(?:per|each|every|an?|for each|for every|on each|on every)\s+(?:lost|missed|"
                             r"unit short|sale (?:we|you) miss|unfilled)|\bshort\b|customer waits|\bwaits?\b|"
                             r"\blate\b|\bdelay\w*|in goodwill|lost profit|of profit|\bhit\b|"
                             r"(?:profit|margin|money|sale)s? (?:we|i) (?:lose|miss|forgo)|"
                             r"(?:every|each) time (?:a |the )?(?:someone|somebody|customers?|they|people|a customer) "
                             r"(?:\w+ )?(?:leaves?|walks?|goes|go|can't|cannot|is turned|are turned|misses|miss)")
# "the stockroom can take 250", "the shelves fit 80": a storage place with a verb of capacity right before a count
_STORAGE_PREFIX = re.compile(r"(?:stock ?room|store ?room|back ?room|back room|\bthe back\b|shel(?:f|ves)|warehouse|\byard\b|"
                             r"armaz[ée]m|bodega|galp[óo]n|godown|almac[ée]n|magazyn|entrep[ôo]t|storehouse|store house|"
                             r"\bloft\b|lock-?up|\bgarage\b|"
                             r"storage|cooler|fridges?|freezers?|chillers?|\bsafe\b|walk-in|\bspace\b|\broom\b|cellar|depot|\bshed\b|"
                             r"\bbins?\b|racks?)\b[^,.;]{0,25}?\b(?:can |could |will |would |only |just |really |"
                             r"physically )*(?:take|takes|hold|holds|fit|fits|store|stores|handle|handles|"
                             r"accommodate\w*|manage|manages|has room for|has space for)(?:\s+(?:up to|about|around|"
                             r"roughly|maybe|at most|only|just|a max(?:imum)? of|no more than))*\s*$")
_STORAGE_SUFFIX = re.compile(r"^\s*(?:units?\s+|items?\s+|of them\s+)?(?:in|on)\s+(?:the |our |my )?(?:back|back ?room|"
                             r"stock ?room|store ?room|shel(?:f|ves)|warehouse|storage|cooler|fridge|freezer)\b|"
                             r"^\s*(?:\w+\s+)?(?:will |would |can |could )?(?:fit|fits|go|goes)\s+(?:in|into)\s+"
                             r"(?:the |our |my )?(?:stock ?room|store ?room|back ?room|back|shelf|shelves|warehouse|"
                             r"storage|cooler|fridge|freezer|walk-in)")
# "the truck carries 200", "the supplier sends at most 90": limits of a single order ("pallets of 24 cases", "a pallet
# holds 25" are pack sizes, not limits: a limit needs its own cue, "one pallet per order")
_ORDER_PREFIX = re.compile(r"(?:(?:truck\w*|\bvan\b|lorry|supplier|distributor|wholesaler|vendor|trailer|lancha|\bboat\b|"
                           r"barge|\bute\b|plane|manufacturer|shipment|delivery)\b[^,.;]{0,25}?\b(?:can |could |will |would |only |"
                           r"just |won't |doesn't |don't |never )*(?:takes?|carr(?:y|ies)|fits?|holds?|sends?|"
                           r"delivers?|ships?|brings?|allows?|lets us (?:order|have)|caps? \w+ at|limits? \w+ to|"
                           r"(?:is|are) limited to|(?:is|are) capped at|(?:be|is|are)(?= (?:at most|up to|no more than|a max)))|(?:truck ?load|van ?load)s?\b"
                           r"[^,.;]{0,12}?\b(?:is|are|of|has|have))(?:\s+(?:up to|about|around|roughly|maybe|"
                           r"at most|only|just|a max(?:imum)? of|max(?:imum)?|no more than|more than))*\s*$")
_ITEM_PRICE = re.compile(r"(?:bought|buy|purchase\w*(?! orders?)|pay|paid|sells? (?:them |it )?for|retail\w*|price[sd]?|(?:i|we) charge|"
                         r"item costs?|unit costs?|wholesale)\b[^,;]{0,30}?(?:at|for|of|is)?\s*(?:about|around|"
                         r"roughly)?\s*$")
# "we've been open for 12 years", "started 3 years ago": the shop's history, not a horizon or lead time
_HISTORY_DURATION = re.compile(r"(?:(?:\bopen|in business|been (?:here|around|doing this|at it)|established|founded|started|opened|"
                               r"had (?:the|this) (?:shop|store|place))\b[^,.;]{0,15}?|"
                               # "running for 12 years", "trading the shop for 3": the verb right before, not "running shoes"
                               r"\b(?:running|operating|trading)(?: (?:the|this|our|my) (?:shop|store|business|place))?)"
                               r"(?:\bfor|\bsince|\bin|\s+for|\s+since|\s+in)?(?:\s+(?:about|over|almost|nearly|more than|some))?\s*$")
_OTHER_NOUN = re.compile(r"\s*(?:of us\b|of them (?:work|here)|staff|employees|people|workers|colleagues|assistants|branches|stores|shops|"
                         r"locations|outlets|kids|children|percent|%|times|stars|registers|tills|aisles|minutes?|mins?|"
                         r"hours?|hrs?|miles?|km|kilometers?|kilometres?)\b")
_PERISH_DURATION = re.compile(r"(?:(?:die|wilt|spoil|rot|expire|go(?:es)? (?:bad|off|stale)|shelf life|last|(?:fine|good) for)\w*"
                              r"(?:\s+\w+){0,3}|(?:dead|gone|stale|brown|no good|not good|useless|worthless|unsellable|"
                              r"(?:can'?t|cannot|must not|mustn'?t) (?:be )?(?:sold|sell|kept|keep|given|served|used|eaten)(?: \w+){0,3}?|"
                              r"(?:must|should|has to|have to) be (?:eaten|sold|used|consumed|served)|sits? out"
                              r"(?: (?:for )?more than| longer than| past)?)(?: by| after| the)*)\s*$")


_HOLD_CUE = re.compile(r"\b(?:holding|hold|storage|storing|store it|to store|keep(?:ing)? (?:one|it|each|a|an)|to keep|"
                       r"carrying|insurance|rent|sitting|sits|chill\w*|refrigerat\w*|warehous\w*|shelf space)\b")
_SHELF_LIFE_AFTER = re.compile(r"\s*(?:-\s*)?(?:\w+\s+)?(?:expiry|expiration|shelf[\s-]?life|best[\s-]?before|use[\s-]?by|"
                               r"sell[\s-]?by|life\b|lifespan)")
_WEAK_LEAD = re.compile(r"supplier|wholesaler|restock|receiv|replenish")
# never values: a minimum order quantity ("at least 24 at a time", "MOQ 50") is not the largest order
_MIN_BOUND = re.compile(r"(?:\bat least|\bminimum(?: order)?(?: quantity| size)?(?: of| is)?|\bmin(?:imum)?\.? order\w*"
                        r"(?: of| is)?|\bmoq\b(?: of| is)?|no fewer than|no less than|not less than|"
                        r"(?:won't|will not|doesn't|does not|don't|do not|can't|cannot)\s+(?:take|accept|ship|deliver|do)\s+"
                        r"(?:an?\s+|any\s+)?orders?\s+(?:under|below|smaller than|less than|of less than)|"
                        r"(?:won't|will not|doesn't|does not|don't|do not)\s+(?:send|ship|deliver|sell|supply|take)\s+(?:fewer|less)\s+than)\s*$")
# "3 delivery vans", "2 part-time drivers": counts of things that are not stock (one modifier word allowed)
_OTHER_THINGS = re.compile(r"\s*(?:[a-z-]+\s+)?(?:vans|trucks|lorries|cars|drivers|vehicles|tills|registers|tables|seats|"
                           r"chairs|desks|counters|floors|rooms|stalls|machines|computers|phones|shifts|owners|"
                           r"partners|managers|sites|staff|employees|people|workers|branches|stores|shops)\b")
# a cost per pallet / case: divided by the units in one when the message says how many (PROCEDURE.md)
_CONTAINER = r"(pallet|case|crate|carton|box|pack|tray|bundle|sack|drum|keg)"
_PER_CONTAINER_SUFFIX = re.compile(r"^\s*(?:[a-z]+\s+){0,2}?(?:to\s+(?:store|keep|hold|house)\s+)?(?:per|a|an|each|every|for each|for an?|"
                                   r"for one|one|/)\s*" + _CONTAINER + r"\b")
_PER_CONTAINER_PREFIX = re.compile(r"(?:\b(?:per|each|every|for each|for every|for a|a)\s+|^\s*)" + _CONTAINER
                                   + r"\b[^,.;]{0,40}$|\b" + _CONTAINER + r"\s+(?:storage|holding|rent|warehousing)\b"
                                   r"[^,.;]{0,20}$")
_CONTAINER_SIZE = [
    re.compile(r"\b(\d+)\s+(?:[a-z]+\s+)?(?:to|per|in|on)\s+(?:a|an|each|one|every|the)\s+" + _CONTAINER + r"\b"),
    re.compile(r"\b" + _CONTAINER + r"s?\s+(?:has|holds|is|contains|takes|carries|of|=|:)\s+(?:only\s+|about\s+)?(\d+)\b"),
]


# "30 tubs in one box, so that's our max order", "... so that's the most we can get in one order"
_LIMIT_AFTER = re.compile(r"^[^.;]{0,40}\b(?:that'?s|that is|which is)\s+(?:our|the|my)\s+(?:max(?:imum)?\s+order|order\s+limit|"
                          r"most\s+(?:we|i)\s+can\s+(?:get|order|have)\b)")
_LIMIT_CUE = re.compile(r"(?:more than|at most|up to|max(?:imum)?|limit(?:ed)?(?: to)?|capped at|cap(?: of| is)?|"
                        r"ceiling(?: of| is)?)\s*(?:of\s+)?$")
_ONE_CONTAINER_PER_ORDER = re.compile(r"\b(?:one|1|a single|single)\s+" + _CONTAINER + r"s?\s+(?:per|an?|each|at an?|every)\s+"
                                      r"(?:order|time|delivery|go|drop)\b|\b(?:max(?:imum)?|cap|limit|at most|only|"
                                      r"capped at|limited to)\s*"
                                      r"(?:of\s+|is\s+|:\s*)?(?:one|1|a single)\s+" + _CONTAINER + r"\b")


def _int_if_whole(x: float):
    return int(x) if float(x).is_integer() else x


_DEMAND_WORDS = re.compile(r"demand|\bsell\w*|\bsold\b|\bsales\b|customers?|\bper day\b|\ba day\b|\bdaily\b|"
                           r"go through|\buse\b|\bneed\b")
_ITEM_EACH = re.compile(r"\s*each\b(?!\s+(?:order|delivery|time|drop|run|trip|shipment))")
_ITEM_EACH_BEFORE = re.compile(r"\b(?:are|is|cost|costs|at|for|sell|sells|charge|charges|pay|paid)\s*(?:about|around|roughly)?\s*$")


def _container_sizes(sentences: list[str]) -> tuple[dict[str, float], set[tuple[int, int]]]:
    """{container: units in one} stated anywhere in the message, and where those numbers are (not values)."""
    sizes: dict[str, float] = {}
    where: set[tuple[int, int]] = set()
    for i, sentence in enumerate(sentences):
        padded = " " + sentence + " "
        for rx in _CONTAINER_SIZE:
            for m in rx.finditer(padded):
                num, name = (1, 2) if m.group(1).isdigit() else (2, 1)
                if float(m.group(num)) > 1:
                    sizes[m.group(name)] = float(m.group(num))
                    where.add((i, m.start(num)))
    return sizes, where


def _per_container(q: Quantity) -> str | None:
    m = _PER_CONTAINER_SUFFIX.match(q.suffix) or _PER_CONTAINER_PREFIX.search(q.prefix)
    return m.group(1) if m else None


def _is_year(q: Quantity) -> bool:
    """1998, 2025: a year, never a value (2000 only after "in", "since", ...)."""
    v = q.raw
    if v != int(v) or not 1950 <= v <= 2099 or "," in q.text:
        return False
    return v % 100 != 0 or bool(re.search(r"\b(?:in|since|of|from|until|till|by|year)\s*$", q.prefix))


def _anchors(sentence: str) -> list[tuple[int, int, str]]:
    found = []
    for param, rx in _ANCHOR_RE.items():
        for m in rx.finditer(sentence):
            found.append((m.start(), m.end(), param))
    return found


def _boundaries(sentence: str, a: int, b: int) -> int:
    lo, hi = min(a, b), max(a, b)
    return len(re.findall(r"[,;|]|\band\b|\bbut\b|\bso\b|\s[-/]\s", sentence[lo:hi]))


def _nearest(sentence: str, q: Quantity, anchors: list[tuple[int, int, str]], params: tuple[str, ...]) -> str | None:
    best, best_score = None, float("inf")
    for start, end, param in anchors:
        if param not in params:
            continue
        if param == "lead_time" and q.kind != "duration" and _WEAK_LEAD.match(sentence, start):
            continue  # "the biggest order the supplier accepts is 500": a supplier is not a duration
        if end <= q.start:
            dist = q.start - end
        elif start >= q.end:
            dist = (start - q.end) * 1.5
        else:
            continue
        score = dist + 40 * _boundaries(sentence, q.start if start >= q.end else end, start if start >= q.end else q.start)
        if score < best_score or (score == best_score and best is not None and param != best
                                  and _support(sentence, q, anchors, param) > _support(sentence, q, anchors, best)):
            best, best_score = param, score  # one phrase naming two fields ("per order"): the one the clause names too
    return best


def _support(sentence: str, q: Quantity, anchors: list[tuple[int, int, str]], param: str) -> int:
    """How many phrases in the number's clause name `param` ("courier 12 per order": the courier is a fee)."""
    clause = _clause(sentence, q)
    lo = sentence.find(clause)
    return sum(1 for start, end, p in anchors if p == param and lo <= start and end <= lo + len(clause))


_CORRECTION_GAP = re.compile(r"^\s*(?:[a-z']+\s*)?[,.;:\-\u2013\u2014\u2026]*\s*(?:(?:eh|ah|oh|uh|um|er)\s*[,.]?\s*)?(?:(?:no|sorry|apologies|my apologies|pardon|oops|actually|correction|wait|hang on|"
                             r"hold on|i mean|i meant|make (?:it|that)|or rather|rather|scratch that|my bad|typo|which is|which makes(?: it)?|"
                             r"(?:they'?ve|they have|he'?s|she'?s)\s+(?:put|pushed|bumped)\s+it\s+(?:up|down)|(?:it'?s|it has)\s+gone\s+(?:up|down)|"
                             r"i\.?e\.?|that is)\b"
                             r"[\s,.;:\-\u2013\u2014\u2026!]*){1,3}"
                             # "no, fuel price went up, now 45,000", "wait, that was last year, now 950": a short reason
                             # "sorry, the rep just corrected me, it's 14 days now"
                             r"(?:[a-z' ,]{1,40}?[,.;:\-\u2013\u2014\u2026]+\s*(?:(?:it's\s+|its\s+|it is\s+)?(?:now|these days|"
                             r"this year)\b\s*)?)?"
                             r"(?:it's|its|it is|more like|really|about|to)?\s*$")


def _corrects(sentence: str, last: tuple[str, Quantity] | None, q: Quantity) -> str | None:
    """The field of the number just before when only a correction cue separates the two ("800, no sorry, 850")."""
    if last is None:
        return None
    param, before = last
    if q.kind not in ("bare", before.kind) or param == "demand_distribution":
        return None
    return param if _correction_gap(sentence[before.end: q.start], q) else None


# a restatement replaces the value only in the same units: "7 working days, which is 9 days for us" (9 wins),
# never "400 bags, which is ten pallets" (a count of pallets is not the capacity in bags)
_RESTATE = re.compile(r"\b(?:which is|which makes|i\.?e\.?|that is)\b")


def _correction_gap(gap: str, q: Quantity) -> bool:
    return bool(_CORRECTION_GAP.match(gap)) and not (_RESTATE.search(gap) and q.kind not in ("duration", "money"))


def _moneyish(q: Quantity, sentence: str) -> bool:
    """Money, or a plain number said as a rate or next to a cost word ("1.40 a week to store", "costs 2.40")."""
    return q.kind == "money" or (q.kind == "bare" and (q.period is not None or bool(_COST_WORD.search(_clause(sentence, q)))))


_CLAUSE_CUTS = re.compile(r"[,;:|]|\band\b|\bbut\b|\s[-/]\s")


def _clause(sentence: str, q: Quantity) -> str:
    """The text around `q` up to the nearest clause boundary on each side."""
    left = sentence[: q.start]
    cuts = list(_CLAUSE_CUTS.finditer(left))
    start = cuts[-1].end() if cuts else 0
    m = _CLAUSE_CUTS.search(sentence[q.end:])
    return sentence[start: q.end + (m.start() if m else len(sentence))]


def _context_param(context: str | None, kind: str) -> str | None:
    if context is None:
        return None
    target = "demand_distribution" if context == "demand_type" else context
    if target in _KIND_PARAMS[kind]:
        return target
    return None


def _assign(sentence: str, q: Quantity, anchors: list[tuple[int, int, str]], context: str | None) -> str | None:
    param, _how = _assign_how(sentence, q, anchors, context)
    return param


def _assign_how(sentence: str, q: Quantity, anchors: list[tuple[int, int, str]],
                context: str | None) -> tuple[str | None, str]:
    """The parameter for `q` and how it was chosen: suffix / anchor (the text names it) or context / default."""
    if q.kind == "bare" and -10 <= q.value < 0 and context in (None, "risk_tolerance") \
            and re.search(r"[a-z]{3}", sentence) and not re.match(r"\s*(?:°|degrees?|deg\b|c\b|f\b|celsius|fahrenheit)", q.suffix):
        return "risk_tolerance", "suffix"  # only the risk tolerance is ever negative: "minus eight - I can't afford to run out"
    param = _assign_strong(q, context)
    if param is not None:
        return param, "suffix"
    return _assign_weak(sentence, q, anchors, context)


# terse notes: "lt 3d", "hzn 60 days", "K = 20", "h=0.02", "setup 18", "fee: 7.50" (the key right before the value;
# one-letter keys only with "=" or ":", or opening a segment of a note cut by "/" ("lt 5 d / K 40 / h .08"), so
# "h" and "k" in running text are never read as keys)
_KEY_VALUE = [(re.compile(r"(?:" + p + r")\s*$"), name, kinds) for p, name, kinds in (
    (r"\b(?:lt|lead(?:[\s-]?time)?|leadtime)\s*(?:[:=]|is)?|\bl\s*[:=]|(?:^|[/;|]|\s/)\s*l", "lead_time", ("duration", "bare")),
    (r"\b(?:hzn|hrzn|horizon|horiz)\s*(?:[:=]|is)?|\bt\s*[:=]|(?:^|[/;|]|\s/)\s*t", "time_horizon", ("duration", "bare")),
    (r"\b(?:hc|hld|holding(?:[\s-]?cost)?)\s*(?:[:=]|is)?|\bh\s*[:=]|(?:^|[/;|]|\s/)\s*h", "holding_cost", ("money", "bare")),
    (r"\b(?:pen|penalty(?:[\s-]?cost)?|shortage[\s-]?cost|stock[\s-]?out[\s-]?cost)\s*(?:[:=]|is)?|\b[bp]\s*[:=]|(?:^|[/;|]|\s/)\s*[bp]",
     "penalty_cost", ("money", "bare")),
    (r"\b(?:setup|set-up|set up|sc|ordering[\s-]?cost|ord(?:er)?[\s-]?(?:fee|cost|cst))\s*(?:[:=]|is)?|\bk\s*[:=]|(?:^|[/;|]|\s/)\s*k", "setup_cost",
     ("money", "bare")),
    (r"\b(?:max(?:imum)?[\s-]?inv(?:entory)?|imax|capacity|cap)\s*[:=]|\bcapacity(?: is)?", "max_inventory",
     ("count", "bare")),
    (r"\b(?:max(?:imum)?[\s-]?order(?:[\s-]?(?:size|qty|quantity))?|qmax|order[\s-]?(?:cap|limit))\s*(?:[:=]|is)?",
     "max_order", ("count", "bare")),
)]


# a pasted table, CSV row or JSON pair: "setup_cost,20,USD", '"order_fee": 15.5' (names as `canonical_name` reads them)
# (a comma separates a key from its value only in a row of snake_case names: "4 days lead, £30" is prose)
# (and "order_fee | 22.5" in a pasted query result, "<order_cost currency="vt">2500" in XML)
_FIELD_KEY = re.compile(r"(?:^|[\s{,\"'&?;(])[\"']?(?:([a-z][a-z_]{3,30})[\"']?\s*[:=|]|([a-z]+_[a-z_]+)[\"']?\s*,)\s*$|"
                        r"<([a-z][a-z_]{3,30})(?:\s[^<>]{0,60})?>\s*$")


def _key_value(q: Quantity) -> str | None:
    for rx, name, kinds in _KEY_VALUE:
        if q.kind in kinds and rx.search(q.prefix[-30:]):
            return name
    key = _FIELD_KEY.search(q.prefix[-40:])
    if key and q.kind in ("bare", "money", "count", "duration"):
        try:
            return canonical_name(key.group(1) or key.group(2) or key.group(3))
        except ParameterError:
            return None
    return None


def _assign_strong(q: Quantity, context: str | None) -> str | None:
    key = _key_value(q)
    if key is not None:
        return key
    if q.kind == "count" or (q.kind == "bare" and not q.period and context not in ("lead_time", "time_horizon")):
        if re.search(r"\borders?\s+(?:over|above|bigger than|larger than|of more than|exceeding)\s*$", q.prefix) and \
                re.search(r"\b(?:aren't|are not|isn't|is not|not|can't be|cannot be|won't be)\s+(?:\w+\s+)?"
                          r"(?:accepted|allowed|possible|taken|permitted)", q.suffix):
            return "max_order"  # "orders over 150 units aren't accepted"
        if re.search(r"(?:\bnot|\bnever|n't)\s+(?:be\s+)?(?:\w+\s+)?(?:despatch|dispatch|send|ship|deliver|sell|supply|take|"
                     r"accept|carry|bring)\w*\s+more\s+than\s*$", q.prefix) and re.match(
                     r"\s*(?:[a-z]+\s+)?(?:in\s+(?:a|one)\s+(?:single\s+)?|per\s+|each\s+|a\s+)(?:consignment|order|shipment|"
                     r"delivery|trip|load|run|batch)\b", q.suffix):
            return "max_order"  # "not despatching more than 25,000 sachets in a single consignment"
        if re.search(r"\b(?:one|a|each|per|every)\s+(?:batch|run|bake|load|trip)\s+(?:is|=|makes|takes|holds|gives)\s*"
                     r"(?:up to|max(?:imum)?|at most)?\s*$", q.prefix) and (
                re.match(r"\s*(?:[a-z]+\s+)?(?:max(?:imum)?|at most|tops)\b", q.suffix)
                or re.search(r"(?:up to|max(?:imum)?|at most)\s*$", q.prefix)):
            return "max_order"  # "one batch is 300 jars max": the most made per run
        m = _ORDER_PREFIX.search(q.prefix)
        if m and q.kind == "bare" and re.search(r"(?:supplier|distributor|wholesaler|vendor|manufacturer)\b[^,.;]{0,25}?"
                                               r"\btakes?\b", m.group(0)):
            m = None  # "the supplier takes 4": a time, not a load
        if m and not re.search(r"\b(?:day|week|month|year)s?\b", q.suffix[:12]):
            return "max_order"
        if _STORAGE_PREFIX.search(q.prefix) or _STORAGE_SUFFIX.search(q.suffix):
            return "max_inventory"
    return None


def _assign_weak(sentence: str, q: Quantity, anchors: list[tuple[int, int, str]],
                 context: str | None) -> tuple[str | None, str]:
    kind = q.kind
    if kind == "bare" and q.per_unit and q.period:
        kind = "money"  # "0.5 per unit per day" is a cost even without a currency sign
    if kind == "money" and not q.period and _SHORT_PREFIX.search(q.prefix):
        return "penalty_cost", "prefix"  # "every pizza we can't make costs us £4", "each box short is £4"
    if kind == "money" and not q.period and _SETUP_PREFIX.search(q.prefix[-45:]):
        return "setup_cost", "prefix"  # "each order we pay $2,400 of freight"
    if kind == "money":
        setup, penalty = _SETUP_SUFFIX.search(q.suffix), _PENALTY_SUFFIX.search(q.suffix)
        if penalty and (not setup or penalty.start() < setup.start("cue") or _LOSS_PREFIX.search(q.prefix[-30:])):
            return "penalty_cost", "suffix"  # "$6 of profit every time a customer leaves"
        if setup and re.match(r"^\W*(?:\w+\W+){0,3}?(?:each|every) time\b", q.suffix) and (
                _OUT_COND.search(q.prefix) or _LOST.search(q.prefix)):
            return "penalty_cost", "suffix"  # "if we're out of their size they don't come back, costs us £30 each time"
        if setup:
            return "setup_cost", "suffix"
    if kind == "bare" and q.period and re.search(r"\b(?:holding|carrying|storage|penalty|shortage|stock[\s-]?out)"
                                                 r"(?:\s+costs?)?(?:\s+(?:is|of|at|=|:))?\s*$", q.prefix):
        kind = "money"  # "holding 0.2 a day" is a cost even without a currency sign
    elif kind == "bare" and q.period and _HOLD_CUE.search(_clause(sentence, q)):
        kind = "money"  # "storage is about 0.7 a pair a week", "holding per week 0.14": a cost, not demand
    elif kind == "bare" and q.period and _WAIT_COST_CUE.search(_clause(sentence, q)):
        kind = "money"  # "each one waiting costs us 2 a day in goodwill", "knock 1.50 off for every day they wait"
    elif kind in ("count", "bare") and q.period and not q.per_unit:
        return "demand_distribution", "suffix"  # "20 a day", "42 units a week"
    params = _KIND_PARAMS[kind]
    if q.value == 0 and kind in ("duration", "bare"):
        params = tuple(p for p in params if p != "time_horizon")  # "same day" is a delivery, never a plan of 0 days
    if kind == "bare" and not (q.per_unit or q.period) and context not in MONEY_FIELDS \
            and not _COST_WORD.search(sentence):
        params = tuple(p for p in params if p not in MONEY_FIELDS)  # "we can keep 150" is not $150
    if kind == "money" and q.period:
        params = ("holding_cost", "penalty_cost")  # a fixed fee per order is never charged per day or month
    if kind == "bare" and not q.period and _COST_WORD.search(_clause(sentence, q)):
        params = tuple(p for p in params if p in MONEY_FIELDS) or params  # "order charge 10": money, not days
    if kind == "bare" and not (-10 <= q.value <= 10 or q.value == int(q.value)):
        params = tuple(p for p in params if p != "risk_tolerance")
    if kind in ("bare", "count") and q.value != int(q.value):
        params = tuple(p for p in params if p not in INTEGER_FIELDS)  # 0.05 is never a capacity or a day count
    near = _nearest(sentence, q, anchors, params)
    ctx = _context_param(context, kind)
    if near is not None and kind == "bare" and ctx is not None and near != ctx:
        # a bare answer to a direct question belongs to the question unless the text names another field
        near_strong = any(p == near and (s >= q.end or q.start - e < 25) for s, e, p in anchors)
        return (near, "anchor") if near_strong else (ctx, "context")
    if near is not None:
        return near, "anchor"
    if ctx is not None:
        return ctx, "context"
    if kind == "money" and q.per_unit and q.period:
        return "holding_cost", "suffix"
    return None, "none"


# ---- keyword parameters ------------------------------------------------------------------------------
_RANDOM_CUES = re.compile(r"\brandom\w*|\bswing\w*|\bbusy days?\b|quiet days?|\bvar(?:y|ies|ys|iable|ied)\b|fluctuat\w*|unpredictab\w*|up and down|"
                          r"all over the place|changes? (?:from )?day to day|never the same|\bdiffer\w*|"
                          r"uncertain|stochastic|no (?:real )?pattern|you never know|some days|depends on the day|"
                          r"hard to predict|(?:not|isn't|never|n't) (?:really )?(?:constant|fixed|steady|the same|"
                          r"predictable|stable)|(?:jump|bounc|mov)\w* around|all over the shop|\blumpy\b|"
                          r"chang\w* (?:a lot|loads|very much|so much|with the|anyhow)|"
                          r"(?:way|a lot|much|far) (?:more|less|busier|quieter) (?:on|when|in)|sometimes? (?:way )?(?:more|less)|"
                          r"depends (?:\w+ )?(?:on |who|what|how)|\bmidweek\b[^.;]{0,30}\d|\b(?:fewer|less|more) when\b|\bchages\b|(?:slow|quiet|dead|mad|busy) (?:days?|weeks?|nights?) and\b|"
                          r"\b(?:is|are|'s) (?:dead|mad busy|quiet) (?:when|on|in)\b|can double\b|nobody wants|"
                          # "some weeks much more, some weeks almost nothing", "sometimes 2, sometimes 15", "it jumps"
                          r"\bsome (?:weeks?|evenings?|mornings?|months?|nights?|seasons?)\b|sometimes\s+\d+[^.;]{0,30}\bsometimes\s+\d+|"
                          r"\b(?:but )?it (?:changes|jumps|varies)\b|\bdepende\b|\bbounc\w* about\b|\bdepending on\b|"
                          r"\bin a (?:bad|good|slow|quiet|busy) (?:week|month|day|night)\b[^.;]{0,30}\bin a (?:bad|good|slow|quiet|busy)\b|"
                          r"\d+[^.;\d]{0,20}\bin (?:summer|winter|spring|autumn)\b[^.;\d]{0,10}\band\s+\d+[^.;\d]{0,20}\bin (?:summer|winter|spring|autumn)\b|"
                          # "20 a day at weekends and 5 in the week", "40 on a Monday and 120 on a Saturday"
                          r"\d+[^.;\d]{0,25}\b(?:at|on) (?:the )?weekends?\b[^.;\d]{0,10}\b(?:and|but)\s+\d+|"
                          r"\d+\s+on\s+(?:a\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b[^.;\d]{0,10}\b(?:and|but)\s+\d+\s+on\s+(?:a\s+)?"
                          r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
                          r"\b(?:saturdays?|sundays?|fridays?|weekends?)\b[^.;]{0,30}\d+[^.;]{0,30}\b(?:weekdays?|week days|"
                          r"other days|rest of the week)\b|"
                          # "8 a day on weekdays and 20 on Saturdays"
                          r"\b(?:weekdays?|week days)\b[^.;]{0,30}\d+[^.;]{0,30}\b(?:saturdays?|sundays?|weekends?)\b|"
                          # "about 30 kg a day but Saturdays way more"
                          r"\b(?:saturdays?|sundays?|fridays?|mondays?|weekends?)\b[^.;\d]{0,15}\b(?:way |much |a lot |far )?"
                          r"(?:more|less|busier|quieter)\b")
_DET_CUES = re.compile(r"same every day|same each day|every day the same|\bconstant\b|\bfixed\b(?!\s+(?:fee|cost|"
                       r"charge|price))|\bexactly\b|\bprecisely\b|"
                       r"like clockwork|regular as clockwork|deterministic|always the same|every day is (?:the )?same|"
                       r"very stable|same number always|"
                       r"(?:doesn't|does not|never) change|\bpredictable\b|by contract|every single day|\bflat rate\b|"
                       r"no more(?:,)? no less|never more,? (?:and )?never less|\balways (?:exactly )?(?=\d)|standing order|same (?:number|amount|quantity|order)(?: of \w+)? (?:every|each) "
                       r"(?:day|morning|evening|night|afternoon)|"
                       r"(?:a|per) day, every day")
_PERISH_NON = re.compile(r"(?:nothing|none of it|never)\s+(?:is |gets |ever )*(?:\w+\s+)?(?:thrown|wasted|binned|"
                         r"discarded|throw|waste)|\bno waste\b|non[\s-]?perishable|not perishable|(?:don't|doesn't|do not|does not|won't|never|nothing)"
                         r" (?:\w+ )?(?:spoil|expire|go(?:es)? bad|go(?:es)? off|rot)|no expir\w*|"
                         r"keeps? for (?:years|months|ever|a long)|lasts? (?:for )?(?:years|months|forever|ages)|"
                         r"durable|canned|tinned|shelf[\s-]stable|long shelf life|shelf life of \d+ (?:years?|months?)|"
                         r"\bforever\b|indefinitely|(?:sits?|keeps?|lasts?) (?:there )?for ages|keeps? (?:just )?(?:fine|well|ok|okay)\b|"
                         r"(?<!no )(?<!not )(?:still )?(?:good|sellable|fine) (?:the )?(?:next day|tomorrow|1 day)")
# a negated loss, however it is said: "nothing goes to waste", "we never bin a bag", "tins not expire",
# "nothing in the shop spoils", "no spoilage", "expiry: none" (not "what we don't sell goes to waste": selling between)
_PERISH_VERB = (r"(?:thrown|throw\w*|wast\w*|bin|bins|binned|binning|discard\w*|chuck\w*|pour\w*|tip\w*|dump\w*|"
                r"spoil\w*|expir\w*|perr?ish\w*|rot|rots|rotten|go(?:es)? (?:bad|off|stale|out of date)|become bad|"
                r"die|dies|trash\w*|skip|compost\w*|(?:in|into) the (?:bin|skip|trash)|dr(?:y|ies) out|dried out|deteriorat\w*|"
                r"go(?:es)? mouldy|go(?:es)? moldy|degrad\w*|going (?:bad|off|stale))")
_PERISH_NEGATED = re.compile(r"\b(?:nothing|nothing's|none of it|none|never|no|not|don't|dont|doesn't|doesnt|do not|does not|"
                             r"won't|wont|nowt|zero)\b(?:\s+(?!(?:sell|sold|sells|selling|use|used|buy|bought|"
                             r"want|wanted|eat|eaten|finish\w*|shift\w*|move\w*)\b)[\w']+){0,5}?\s+" + _PERISH_VERB + r"\b|"
                             r"\b(?:expiry|spoilage|waste|shelf[\s-]?life|use[\s-]?by)\s*(?::|=|-|is)\s*(?:none|nil|n/a|no|never)\b|"
                             r"\bno (?:spoilage|expiry|use[\s-]?by|wastage)\b|"
                             # a table's cell: "spoils no", "perishable: n"
                             r"\b(?:spoils?|perishable|perishes|expires|goes off)\s*(?::|=|-|\?)?\s*(?:no|n|false|never)(?=\s*(?:[.,;!]|$))|"
                             # "nothing we sell expires" (selling is the subject here, not what comes between)
                             r"\bnothing (?:we|i) (?:sell|stock|carry|have|keep|buy|order|get|bring)\s+(?:\w+\s+){0,2}?" + _PERISH_VERB + r"\b")
# what the goods are, used only to answer the perishability question ("It's milk.", "Screws and bolts.")
_GOODS_PERISHABLE = re.compile(
    r"\b(?:milk|dairy|cheese|yog(?:h)?urts?|cream|butter|eggs?|bread|loaf|loaves|baguettes?|rolls|buns|pastr(?:y|ies)|"
    r"cakes?|croissants?|doughnuts?|donuts?|bak(?:ed goods|ery)|bananas?|fruits?|berries|strawberries|apples?|"
    r"grapes|avocados?|vegetables?|veg(?:gies)?|produce|lettuce|salads?|greens|herbs|tomatoes|mushrooms|"
    r"flowers?|bouquets?|roses|tulips|meat|beef|chicken|pork|lamb|poultry|sausages?|fish|seafood|sushi|"
    r"sandwich(?:es)?|deli|ready meals|prepared (?:food|meals)|fresh juice|smoothies?|newspapers?)\b")
_GOODS_DURABLE = re.compile(
    r"\b(?:hardware|nails|screws|bolts|nuts and bolts|hinges|tools?|electronics?|chargers?|cables?|phones?|"
    r"batter(?:y|ies)|clothes|clothing|shirts|shoes|books?|toys?|detergent|soap|shampoo|toilet paper|paper|"
    r"stationery|pens|furniture|tyres?|tires?|paint|glassware|cutlery|cookware|plates|spare parts|parts|"
    r"dry goods|rice|pasta|sugar|salt|cement|lumber|timber|pipes?|fittings|bulbs|light bulbs|filters?|"
    r"widgets?|plastic\w*|metal|steel|jewel(?:le)?ry|watches|cosmetics|perfume|cleaning supplies)\b")
_PERISH_YES = re.compile(r"\bnever keep (?:them|it) (?:to|till|until|for) (?:the next day|tomorrow|overnight)|"
                         r"\bnothing\b[^.;]{0,25}\b(?:keeps|lasts|survives) (?:overnight|to the next day|till tomorrow|1 day)|"
                         r"\b(?:left|leftovers?|unsold)\b[^.;]{0,40}\b(?:to the (?:pigs|chickens|hens|shelter)|food[\s-]rescue|food bank|soup kitchen|"
                         r"homeless shelter)|\b(?:dinnae|don't|do not|doesn't|won't)\s+keep\s*(?=[.,;!]|$)|"
                         r"pour\w* (?:out|away)|\btoss\w*|\bperishable|spoil\w*|expir\w*|go(?:es)? (?:bad|off|stale)|\bstale\b|\brot(?:s|ted|ting|ten)?\b|\bwilt\w*|"
                         r"\bdie\b|shelf life|(?:same[\s-]day|0 days) only|leftovers? (?:go|goes|get|gets) (?:to|in)\b|thrown? (?:out|away)|throw (?:it |them )?(?:out|away)|"
                         r"in the bin|binned|\bbin (?:it|them|the lot|what's left|whatever)\b|"
                         r"(?:goes?|go|gets?|ends? up) in the (?:skip|compost|trash|rubbish)|\bpulped\b|"
                         r"\bwaste\w*(?! of (?:my|our|your|his|her|their) time)|discard\w*|dump\w*|\bsell[\s-]by\b|\bcomposted\b|on the compost|\bworthless\b|"
                         r"only good for (?:the|one|a|1) day|good for (?:one|a|1) day only|only lasts? (?:the|one|a|1) day|"
                         r"(?:can'?t|cannot|must not|mustn'?t) be (?:sold|used|served|given|kept|eaten)(?: \w+){0,3}? (?:the )?1 day|"
                         r"must be (?:eaten|sold|used|consumed|served) (?:the |on the )?0 days|"
                         r"no good (?:after )?(?:the )?(?:next day|tomorrow|1 day)|day[\s-]old|"
                         r"(?:don't|doesn't|won't|never) (?:survive|last|keep) (?:to|until|till|past|overnight|1 day)|"
                         r"(?:has|have|needs?) to (?:go|be sold|sell) (?:by|before) (?:the end of the day|closing|tonight)|"
                         r"\bthrow (?:them|it)(?: out| away)?\s*$")
_BACKLOG = re.compile(r"pick (?:it|them) up (?:later|another day|when)|(?:will|'ll) (?:just )?order it|(?<!their )(?<!his )(?<!its )backlog\w*|back[\s-]?order\w*|"
                      r"(?<!the )(?<!our )(?<!a )(?<!we )(?<!i )(?<!no )(?<!day's )(?<!days' )(?<!week's )(?<!weeks' )\bwait\w*(?! (?:is|was) )|special[\s-]order\w*|\brebook\w*|"
                      r"collects? (?:it |them )?(?:later|when|once)|(?<!nothing )(?<!never )carr(?:y|ied|ies) (?:it |them )?over|"
                      r"(?:shipped|filled|fulfilled|sent|delivered|posted|mailed)(?: (?:on )?(?:to )?(?:them|him|her|it))? "
                      r"(?:later|when|once|as soon)|hang(?:s|ing)? (?:about|around)\b|\bpost (?:one|it|them) (?:on )?to them\b|"
                      r"\bbook (?:in|again) (?:for )?later\b|"
                      r"(?:leave|leaves|put down|pay|pays) (?:a|their) (?:deposit|name|number|details)|(?<!don't )(?<!dont )(?<!never )(?<!won't )(?<!not )come back (?:later|for)|rain[\s-]?check|"
                      r"pre[\s-]?order\w*|fill (?:it|the order) (?:later|when)|pick (?:it|them) up when|"
                      r"order it for them|(?:they'll|they will|we) order it|deliver (?:it )?later|"
                      r"reserve\w*|put (?:them|it) on a list|happy to wait|don't mind waiting|\bqueue\w* (?:up )?for\b|"
                      r"(?<!i'll )(?<!i will )(?<!\bi )(?<!we'll )(?<!don't )(?<!dont )(?<!never )(?<!won't )(?<!not )come back (?:later|for|tomorrow|the next|next|when|once|in a|another day|another time)(?! with)|hold on\b|hang on\b(?!\s+to\b)|(?<!the )(?<!a )(?<!each )(?<!every )(?<!one )\bpatient\b(?!s\b| (?:session|care|record|file|room|visit)s?\b)|"
                      r"take (?:their|a|the|his|her) (?:number|name|details|order|contact)|names? (?:down|on a list)|"
                      r"on a (?:waiting )?list|(?:call|ring|phone|text|email|message|contact|notify) (?:them|the "
                      r"customers?|customers?|people) (?:back )?(?:when|once|as soon)|write (?:it|them|the order) "
                      r"down|(?:fill|send|deliver|give|hand) (?:it|them|the order) (?:over )?(?:when|once|as soon)|"
                      r"until we (?:restock|get more|have more|get (?:it|them) in)|\bi\.?o\.?u\b")
_LOST = re.compile(r"(?:hate|hates) (?:waiting|to wait)|no point (?:\w+ )?waiting|\bdrive (?:on|off)\b|"
                   r"cancel\w* (?:the |their |an? |that day's |that |this |today's )?order|"
                   r"(?:won't|wont|don't|dont|do not|will not|never|can't|cant|nobody|no one|not|doesn't|doesnt|didn't|wouldn't)"
                   r"\s+(?:\w+\s+)?(?:wait\w*|"
                   r"hold on\b|hang on\b(?!\s+to\b)|come back)|\b(?:has|have|drinks?|uses?) (?:it|one|them|that)\b[^.;?]{0,40}\binstead\b|"
                   r"(?:go|goes|went|head|shop|buy|get|grab|pick|order|take|took|choose|chose|hire)\w*\s+"
                   r"(?:[\w&'-]+\s+){0,8}?instead|\belsewhere\b|something else|another brand|substitut\w*|(?<!i )(?<!we )(?<!i'll )(?<!we'll )switch (?:to|brands)|"
                   r"try (?:the |a )?(?:next|another|other)|don't bother|do without|go without|"
                   r"(?:nobody|no one|never)\s+(?:\w+\s+)?(?:comes?|came|coming) back|"
                   r"(?:a |an )?different brand|another product|(?<!uses )(?<!use )(?<!using )something similar|"
                   r"lose the sale|sales? (?:is|are) (?:simply |just |then )?lost|walk(?:s|ed|ing)? (?:away|out|off)|go(?:es)? (?:to )?"
                   r"(?:elsewhere|somewhere else|another|a competitor|the competition|the shop down)|"
                   r"buy (?:it )?elsewhere|(?:go|goes|went|eat|eats|buy|buys|shop|shops|get|gets)\w*\s+(?:[\w'-]+\s+){0,3}?"
                   r"somewhere else|competitor|(?<!don't )(?<!dont )(?<!won't )(?<!never )(?<!not )(?<!doesn't )"
                   r"\bleav(?:e|es|ing)\b(?! (?:the|their|his|her|it|them|a|an) (?:phone|bike|car|laptop|device|tablet|watch|"
                   r"machine|van|item|it|them)\b)(?! (?:a|an|their|his|her) (?:deposit|name|number|details|order|note|"
                   r"message))(?!\s+(?:[\w']+\s+){1,3}with us)|shop down the road|take their business|"
                   r"don't come back|never come back|gone for good|\bgone\b(?!\s+(?:up|down|from|to|over|through|by|in|on|into|\d))|"
                   r"(?:go|goes|went|going|head\w*|pop\w*|nip\w*|tr(?:y|ies)|shop\w*|buy\w*|gets?|walk\w*|off|run\w*|drive\w*)\s+"
                   r"(?:[\w'&-]+\s+){0,4}?(?:down|across|up) the (?:street|road)|(?<!weekdays )(?<!weekends )(?<!we sell )(?<!sell )(?<!sells )(?<!sold )"
                   r"(?<!an )(?<!our )(?<!all )(?<!ordering )\bonline\b(?!\s+(?:from|with|at|through) (?:us|our))(?!\s+together)(?!\s+(?:wholesaler|supplier|"
                   r"distributor)\b)|amazon|"
                   r"(?<!from )(?<!from the )(?<!with the )(?<!with )(?:another|other|the next|a different) (?:shop|store|place|supplier|seller)|"
                   r"(?:miss|lose|lost) (?:out on )?(?:the|that) (?:[\w-]+ )?(?:sale|customer)|walk out|take their money|"
                   # "buys at the station next door", "goes to the next tornilleria", "drink at the other nakamal"
                   r"(?<!we )(?<!i )(?<!we'll )(?<!i'll )(?<!we can )\b(?:buy|go|get|shops|shopping|hire|drink|eat|order)\w*\s+"
                   r"(?:[\w'&-]+\s+){0,5}?(?:at|from|to)\s+(?:the\s+)?(?:other|next|another)\b(?!\s+(?:day|week|month|"
                   r"morning|time|delivery|order|supplier|wholesaler|distributor|vendor|factory|branch|warehouse|depot|mill))|"
                   r"\b(?:buys?|bought|go|goes|went|gets?|hires?|drinks?)\b[^.;]{0,40}\bnext door\b|"
                   r"\b(?:pick|choose|take)s?\s+(?:another|a different|an other|other)\s+(?!day|week|time|delivery|order)\w+|"
                   r"\b(?:lose|loose|lost)\s+(?:the|that|a|our)\s+(?:booking|client|job|customer)\b|"
                   # the need is met another way and never comes back: "borrows one from a teammate", "take it off
                   # the menu for the night", "swaps to a vegetable dish", "nobody makes it up", "two doors down"
                   r"\bborrow(?:s|ed)?\s+(?:one|it|them|some|an?\s+[\w-]+)\s+(?:from|off)\b|\b(?:have|has|drink|drinks|take|takes)\s+the\s+other\s+(?!day|week|time|delivery|order|one\b)\w+|\boff the menu\b|\bswap\w*\s+(?:to|for)\s+(?:a|an|another|something)\b|"
                   r"\b(?:don't|do not|never|nobody|no one|doesn't|won't|not)\s+(?:\w+\s+)?makes?\s+(?:it|that|them|up)\s*(?:up\b)?|"
                   r"\b(?:two|2|three|3|a few|few|couple of)\s+doors\s+(?:down|up|along)\b|\bgrab\w*\b[^.;]{0,40}\bnext door\b|"
                   r"\b(?:buy|get|go|shop|grab)\w*\s+(?:[\w'&-]+\s+){0,4}?(?:opposite|across the (?:road|street|way))\b|"
                   r"\bwander(?:s|ed)?\s+off\b|\b(?:just\s+)?go(?:es)?\s+there\s+(?:instead|when\s+(?:i'?m|we'?re)\s+out)\b|\b(?:have|take|get|grab)s?\s+whatever(?:'s|\s+is)\s+(?:left|there|going)\b|"
                   r"\b(?:stall|shop|stand|kiosk|counter|bar|van|we)\s+(?:just\s+)?(?:shuts?|closes?)\s+(?:up\s+)?(?:for the (?:night|day|evening)|early)\b|"
                   r"(?:'ll|will)\s+have\s+(?:[\w&'-]+\s+){1,5}?instead\b")
_LOST_PLAIN = re.compile(r"\blost[\s_-]?sales?\b|\blost\b")
_UNKNOWN = re.compile(r"not sure|no idea|don't know|do not know|dunno|no clue|can't say|cannot say|hard to say|"
                      r"haven't a clue|not certain|couldn't tell|can't tell|no notion|beats me|don't have (?:that|"
                      r"those|the) (?:number|figure)|you decide|whatever you think")
_CORRECTION = re.compile(r"(?:^|[.!?]\s)\W*(?:actually|sorry|oops|wait)\b|i meant|correction|let me correct|i misspoke|my mistake|"
                         r"\b(?:they'?ve|they have|he'?s|she'?s|he has|she has)\s+(?:put|pushed|bumped|dropped|cut)\s+it\s+(?:up|down)\b|"
                         r"\bedit\s*:|\bp\.?\s?s\.?\b|\b(?:is|'s|are)\s+actually\b|\bwell,?\s+it\s+was\b|"
                         r"scratch that|\d\S*\s+(?:\w+\s+){0,3}instead\b|\binstead of\b|i was wrong|to correct|rather than")
_QUESTION = re.compile(r"^\s*(?:what|how|why|which|can you|could you|do you|what's|is that|does that|explain)\b")
# a sentence that asks ("what's the difference between lost sale and backlog?", "what if they don't wait?"):
# its keywords are the question's words, not the manager's facts
# a hypothetical the manager asks about ("what if the supplier took 5 days?"): its numbers are not facts
_WHAT_IF = re.compile(r"\bwhat\s+(?:if|happens|would happen|would change|about if)\b|\bsuppose\b|\bimagine\b|^\W*say\s+(?:we|they|people|customers|the|i|my|our)\b|\bhow\s+(?:much|would|will|does|do)\b[^?]*\bif\b")
_INFO_QUESTION = re.compile(r"^\W*(?:how come|how (?:much|many|long|often)|what (?:does|do|would|will|is|are|'s)|what's|"
                            r"why)\b")
_ASKING = re.compile(r"^\W*(?:\w+\W+){0,3}?(?:what|whats|how come|how|why|which|say\s+(?=(?:we|they|people|customers|the|i|my|our)\b)|can you|could you|do you|do i|should i|what's|suppose|imagine|"
                     r"explain|what if|what happens|(?:is|are|does|do|should|would|can|could) (?:a|an|the|it|this|that|there|i|we))\b")
_YES = re.compile(r"^\s*(?:yes|yep|yeah|yup|sure|correct|they do|it does|definitely|absolutely|indeed|of course)\b")
_NO = re.compile(r"^\s*(?:no|nope|nah|not really|they don't|it doesn't|never|not at all)\b")
# verbal risk attitudes on the -10..10 scale (very averse .. risk seeking)
_RISK_WORDS: list[tuple[re.Pattern[str], float]] = [
    (re.compile(r"(?:very|extremely|really|super|highly)\s+(?:risk[\s-]averse|cautious|conservative|careful)|"
                r"hate risk|avoid risk at all costs"), -8),
    (re.compile(r"(?:a bit|slightly|somewhat|a little|mildly|a touch)\s+(?:on the\s+)?(?:risk[\s-]averse|cautious|"
                r"conservative|careful)"), -2),
    (re.compile(r"risk[\s-]averse|cautious|conservative|careful|play it safe|safe than sorry|on the safe side"), -5),
    (re.compile(r"neutral|middle of the road|indifferent|balanced|in the middle|don't mind either way"), 0),
    (re.compile(r"(?:very|extremely|really)\s+(?:aggressive|risk[\s-]seeking)|love risk|big gambler"), 8),
    (re.compile(r"(?:a bit|slightly|somewhat|a little)\s+(?:aggressive|risk[\s-]seeking|risky)|gamble a bit"), 2),
    (re.compile(r"aggressive|risk[\s-]seeking|take risks|taking risks|gambl\w*|bold"), 5),
]


_DET_STRONG = re.compile(r"(?:doesn't|does not|never|won't|will not)\s+(?:really\s+)?(?:change|vary|varies)|"
                         r"\b(?:no|zero)\s+variation|\bno ups and downs\b|\b(?:never|no)\s+more,?\s+(?:and\s+)?(?:never|no)\s+less\b|"
                         r"like clockwork")


_LEAD_SUBJECT = re.compile(r"lead[\s-]?time|\bdeliver\w*|\bshipping\b|\barriv\w*|\bsupplier\w*|\btransit\b")


def _demand_type(sentence: str, about_demand: bool) -> str | None:
    if about_demand and _DET_STRONG.search(sentence) and not re.search(r"random|unpredictab|fluctuat", sentence):
        return "deterministic"  # "it never changes from one day to the next": the negation decides
    if _RANDOM_CUES.search(sentence) and (about_demand or (re.search(r"random|fluctuat|unpredictab|all over the place",
                                                                    sentence) and not _LEAD_SUBJECT.search(sentence))):
        return "random"
    if _DET_CUES.search(sentence) and about_demand:
        return "deterministic"
    return None


# a finite shelf life longer than a day ("keeps for months", "a 10-day shelf life", "expires after 2 years"):
# neither a one-day product nor one that never goes off, so the held-out conventions ask (nothing stored)
# a life of several days is not the model's one-period perishability: asked, never stored ("we bin them after 4
# or 5 days", "crickets die in a few days", "adhesive goes off after 12 months")
_LIFE_CUE = (r"(?:shelf[\s-]?life|use[\s-]?by|best[\s-]?before|expir\w*|keeps?|kept|lasts?|good for|fine for|stale|use within|"
             r"bin|bins|binned|toss\w*|chuck\w*|throw\w*|dump\w*|die|dies|wilt\w*|rot|rots|spoil\w*|go(?:es)? (?:off|bad))")
_FINITE_LIFE = re.compile(_LIFE_CUE + r"\s+(?:\w+\s+){0,4}?(?:(\d+(?:\.\d+)?)\s*(?:(?:or|to|-)\s*\d+(?:\.\d+)?\s*)?"
                          r"(?:-\s*)?(day|week|month|year)s?|"
                          r"(?:weeks|months|years|ages)\b)|(\d+(?:\.\d+)?)\s*-?\s*(day|week|month|year)s?[\s-]+"
                          r"(?:shelf[\s-]?life|life|expiry)")


def _finite_life(sentence: str) -> bool:
    for m in _FINITE_LIFE.finditer(sentence):
        num, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        if num is None or float(num) * _PERIOD_DAYS[unit] > 1:
            return True
    return False


def _perishability(sentence: str, context: str | None = None) -> str | None:
    """As the answer to the perishability question a long life is "not perishable" (the model's one-day sense);
    volunteered, a finite life is left for that question (the held-out conventions)."""
    if context != "perishability" and _finite_life(sentence) and not re.search(r"\b(?:never|don't|doesn't|do not|does not|won't)\s+(?:\w+\s+)?"
                                                r"(?:go(?:es)? off|expire|spoil)", sentence):
        return None
    if _PERISH_NON.search(sentence) or (_PERISH_NEGATED.search(sentence) and not re.search(
            r"\b(?:but|except|apart from|other than)\b", sentence)):
        return "non_perishable"
    if _PERISH_YES.search(sentence):
        return "perishable"
    return None


_MIXED = re.compile(r"\bsome\b[^.;]{0,100}\b(?:others?|some|rest|most|many|a lot|lots|plenty)\b|\bhalf\b|\bdepends\b|\bsometimes\b|"
                    r"\bmostly\b[^.;]{0,40}\bbut\b|"
                    r"\ba few\b[^.;]{0,40}\b(?:others?|most)\b|\bmost\b[^.;]{0,60}\b(?:others?|some|a few)\b|"
                    r"\bmixed\b|\bmix of\b|\bbit of both\b|\bboth\b")


# today's stock, said with an order-now question or as news: a count, never a field of the table
_STOCK_NOW_BEFORE = re.compile(r"(?:\b(?:i|we)(?:\s+(?:have|have got|got)|\s*'ve(?:\s+got)?)|\bthere(?:'s| is| are|'re)|"
                               r"\bon[\s-](?:hand|order)\s*[:=]?)"
                               r"(?:\s+(?:only|just|about|around))?\s*$")
_STOCK_NOW_AFTER = re.compile(r"\s*(?:[a-z]+\s+){0,2}?(?:coming|on (?:the|its|their) way|in transit|arriving|due (?:in|on|tomorrow))\b|"
                              r"\s*(?:[a-z]+\s+){0,1}(?:left|in stock|on hand|on the shel(?:f|ves))\s+(?:right now|now|soon|today)\b|"
                              r"\s*(?:[a-z]+\s+){0,1}in (?:the|my|our) [a-z]+(?: [a-z]+)? (?:right now|at the moment|today|now|soon)\b")
# ("right now" reads "soon" after the idioms)
# a value the message itself says is out of date, when a current one follows
_USED_TO = re.compile(r"\b(?:used to (?:be|cost|take|charge|run)|was (?:previously|formerly|once)|formerly|previously)"
                      r"(?:\s+(?:about|around|roughly))?\s*$")
_NOW_AFTER = re.compile(r"\b(?:now|it's|it is|these days|since|currently|today)\b[^.;]{0,30}\d")
# the next item of a list of today's stock: "[23] on the shelf, 12 in the back room and 40 on a truck"
_STOCK_LIST = re.compile(r"^\s*(?:[a-z']+\s+){0,4}?[a-z']+\s*(?:,\s*(?:and\s+)?|and\s+)$")
# "15 on the truck" is stock in transit, unless the truck's load is the limit ("won't put more than 40 on the truck")
_ON_TRUCK = re.compile(r"\s*(?:[a-z]+\s+){0,1}on (?:the|a) (?:truck|van|lorry|boat|ship)\b")
_LOAD_CUE = re.compile(r"max|only|more than|up to|\bfits?\b|\bput\b|\btakes?\b|carr|\bholds?\b|load|limit|\bcap\b")


# the second group of a mixed answer, whatever it does: "others take it to another pharmacy", "the odd one walks"
_OTHER_GROUP = re.compile(r"\b(?:others?|the rest|the other half|(?:the )?odd one|plenty|walk-ins|some (?:\w+ )?(?:don't|won't|"
                          r"do not|will not|can't))\b|\bsome\b[^.;]{3,80}\b(?:and|but|,|while|whereas)\s+some\b")
# "some folks wait ... and some just ride over to the REI": two groups named "some", whatever the second one does
_LIMITED_WAIT = re.compile(r"\bwait\w*\b[^.;]{0,30}\b(?:at most|max(?:imum)?|tops)\b[^.;]{0,20}\b(?:after that|then|beyond that)\b")


# "if we're out they nip to Screwfix": an out-of-stock condition and customers going to some other place
_OUT_COND = re.compile(r"\b(?:run|runs|ran|running) (?:out|dry|short)|\b(?:we're|we are|we were|i'm|i am|is|are) (?:out|short)\b|"
                       r"\bout of (?:stock|it|them|\w+)|\b(?:don't|do not|didn't|haven't|have not|havent|dont) (?:have|got)\b|"
                       r"\bhaven't got|\bnone (?:left|in)|\bsold out|\bno stock|\bthere(?: is|'s| are) (?:none|nothing|no)\b|"
                       r"\b(?:can't|cant|cannot) (?:get|find|supply|make|serve|sell|fit|fill)|\bwhen (?:there's|there is) none|"
                       r"\bwithout (?:one|it|stock)|\b(?:every|each|any) \w+ (?:\w+ )?short\b|\bif (?:there are|there's) no\b|"
                       r"\b(?:every|each|any) \w+ (?:we|i) (?:can't|cant|cannot|couldn't) \w+")
_GO_TO = re.compile(r"\b(?:go|goes|going|went|nip|nips|pop|pops|run|runs|head|heads|off|drive|drives|walk|walks|hop|hops|"
                    r"ride|rides|cycle|cycles|bike|bikes|"
                    r"try|tries|trot|trots|shoot|shoots|dash|dashes|leg it)\s+(?:\w+\s+){0,2}?(?:to|over to|down to|round to|"
                    r"across to|up to|into)\s+(?!wait\b|order\b|the back\b|work\b|bed\b|sleep\b)[\w&'-]+")


# "lost sale costs 5.50", "penalty per lost unit 12", "£22 in lost margin": the name of a cost, not what customers do
_LOST_LABEL = re.compile(r"\b(?:lost|missed)[\s_-]?(?:sales?|units?|portions?|margin|profit|revenue)\s*(?:costs?|penalty|is|=|:|"
                         r"\d|[$\u20ac\u00a3])|\bper (?:lost|missed) \w+|\b(?:cost|price|penalty) (?:of|for) an? (?:lost|missed)\b|"
                         r"\bin lost (?:margin|profit|revenue)|\blost (?:margin|profit|revenue)\b")
# one group waits, another goes ("the regulars wait but walk-ins leave", "either wait or go elsewhere")
_CONTRAST = re.compile(r"\b(?:but|while|whereas|either|or)\b")
_MY_WAIT = re.compile(r"\b(?:we|i|we're|i'm|we are|i am)\s+(?:\w+\s+)?(?:never|not|always|often)?\s*(?:waiting|wait)\b|"
                      # "800... wait, no, 950", "8, wait sorry 10": the speaker correcting a number, not customers
                      r"(?:^\s*|[\d.,;!?\u2026]\s*)wait\b(?=\s*[,.!\u2026\-]|\s+(?:no|non|sorry|actually|a sec\w*|a minute|"
                      r"a moment|hang on|i mean)\b)")


# work or people that sit until the stock comes wait for it: "the crew sits in the truck until spares arrive"
_SITS_UNTIL = re.compile(r"\b(?:sits?|sitting|sat|waits?)\b[^.;]{0,40}\b(?:until|till|til|'til)\b[^.;]{0,30}"
                         r"\b(?:arriv\w*|comes?|came|get here|gets here|turn up|turns up|come in|is in|are in)\b")
# when short, the item is bought in from a shop for the own use: the shortfall is never made up (a lost sale)
_BUY_IN = re.compile(r"\bbuy\w*\s+(?:(?:one|some|it|them|a \w+|\w+)\s+)?(?:in\s+)?(?:from|fae|at)\s+(?:the |da |a |an )?"
                     r"(?:[\w'-]+\s+){0,2}?(?:shop|store|supermarket|chemist|pharmacy|market|retailer|wholesaler)\b")


def _transition(sentence: str, has_money: bool, context: str | None) -> str | None:
    sentence = _MY_WAIT.sub(" ", sentence.replace("take it or leave it", " "))
    lost = _LOST.search(sentence)
    short = _OUT_COND.search(sentence) or re.search(r"\b(?:we're|we are|i'm|if we're|if we are) (?:a \w+ )?short\b|"
                                                  r"\bif we(?:'ve| have)? (?:none|no|nothing)\b", sentence)
    if lost is None and short:
        lost = _GO_TO.search(sentence) or _BUY_IN.search(sentence)
    backlog = _BACKLOG.search(sentence) or _SITS_UNTIL.search(sentence)
    if lost is not None and lost.group(0) == "gone" and (backlog or _PERISH_YES.search(sentence)):
        lost = None  # "find it gone, so they order it", "end of day it's gone": the stock is gone, not the customer
    if backlog and lost and _CONTRAST.search(sentence[min(backlog.end(), lost.end()):max(backlog.start(), lost.start())]) \
            and "wait" not in lost.group(0):
        return "mixed"  # "the bay guys wait a day, but walk-ins go to the chain store"
    if backlog and _MIXED.search(sentence) and (lost or _OTHER_GROUP.search(sentence)):
        return "mixed"  # "some wait, others leave", "half wait, the other half walk": the agent asks, never picks
    if backlog and _LIMITED_WAIT.search(sentence):
        return "mixed"  # "they'll wait a week at most, after that they walk"
    if lost and (not backlog or lost.start() <= backlog.start() or "wait" in lost.group(0)):
        return "lost_sale"
    if backlog:
        return "backlog"
    if _LOST_PLAIN.search(sentence) and (context == "state_transition_model" or not has_money) \
            and not _LOST_LABEL.search(sentence):
        return "lost_sale"
    return None


def _risk_words(sentence: str) -> float | None:
    for rx, value in _RISK_WORDS:
        if rx.search(sentence):
            return value
    return None


# ---- demand -------------------------------------------------------------------------------------------
_CALL = re.compile(r"\b(poisson|pois|normal|gaussian|norm|uniform|unif)\s*\(([^)]*)\)")
_SD = re.compile(r"(?:give or take|plus or minus|standard deviation|std(?:ev)?|\bsd\b|spread|swings? by|varies by|"
                 r"deviation|either way|each way)(?:\s+(?:of|is|by|about|around|roughly|maybe|like))*\s*"
                 r"(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)\s*(?:either way|each way)")
_CALL_NAMES = re.compile(r"\b(?:poisson|normal\w*|gaussian|uniform\w*)\b")
_VARIANCE = re.compile(r"\bvariance(?:\s+(?:of|is|about|around|roughly))*\s*(\d+(?:\.\d+)?)")
# a rate per hour with the opening hours in the same sentence ("1.5 an hour, and we're open 8 hours a day")
_HOURLY = re.compile(r"^\s*(?:an|a|per|/|each|every)\s*hour\b")
_OPEN_HOURS = re.compile(r"\bopen\w*\s+(?:for\s+)?(?:about\s+)?(\d+(?:\.\d+)?)\s*(?:hours?|hrs?|h)\b")
_UNIFORM_CUES = re.compile(r"equally likely|(?:just |every bit )?as likely|uniform\w*|evenly|any number|anywhere (?:between|from)|flat between|"
                           r"same chance")
_NORMAL_CUES = re.compile(r"\bnormal\w*|gaussian|bell")
_POISSON_CUES = re.compile(r"poisson")


def _demand(sentence: str, qs: list[Quantity], known: dict[str, object], out: ParseResult) -> None:
    call = _CALL.search(sentence)
    if call:
        name = {"pois": "poisson", "norm": "normal", "gaussian": "normal", "unif": "uniform"}.get(call.group(1),
                                                                                                 call.group(1))
        out.values["demand_distribution"] = f"{name}({call.group(2)})"
        out.values.setdefault("demand_type", "random")
        return
    if not qs:
        return
    sd_match = _SD.search(sentence)
    sd = float(sd_match.group(1) or sd_match.group(2)) if sd_match else None
    sd_pos = (sd_match.start(1) if sd_match.group(1) else sd_match.start(2)) if sd_match else -1
    variance = None if sd_match or _POISSON_CUES.search(sentence) else _VARIANCE.search(sentence)
    if variance:  # "mean 10 a day, variance 4": the standard deviation is its square root
        sd, sd_pos = math.sqrt(float(variance.group(1))), variance.start(1)
        sd_match = variance
        out.notes.append(f"variance {variance.group(1)} is a standard deviation of {_fmt(round(sd, 6))}")
    main = [q for q in qs if q.start != sd_pos and not (sd_match and sd_match.start() <= q.start < sd_match.end())]
    if not main:
        return
    q = main[0]
    later_range = next((x for x in main[1:] if x.is_range), None)
    if not q.is_range and later_range is not None and sd is None:
        q = later_range  # "around 25 a day, anywhere from 15 to 35": the range says how it varies
    period = q.period or next((x.period for x in main if x.period), None) or "day"
    days = _PERIOD_DAYS[period]
    if _HOURLY.match(q.suffix):
        hours = _OPEN_HOURS.search(sentence)
        if hours is None:
            return  # a rate per hour without the opening hours: no daily rate to store, asked
        out.notes.append(f"{_fmt(q.value)} an hour over {hours.group(1)} opening hours is "
                         f"{_fmt(q.value * float(hours.group(1)))} a day")
        q = replace(q, value=q.value * float(hours.group(1)))
    det = bool(_DET_CUES.search(sentence) or _DET_STRONG.search(sentence))
    rnd = bool(_RANDOM_CUES.search(sentence)) and not _DET_STRONG.search(sentence)
    family, mean, low, high = "poisson", q.value, None, None
    if q.is_range and q.high is not None:
        low, high = q.value, q.high
        mean = (low + high) / 2
        if _UNIFORM_CUES.search(sentence):
            family = "uniform"
        else:
            rnd = True  # "4 to 6 a day": it varies, but a range alone is no law (uniform only if said): asked
    if sd is not None:
        family = "normal"
    elif _NORMAL_CUES.search(sentence) and len(main) > 1:
        family, sd = "normal", main[1].value
    if family == "poisson" and not _POISSON_CUES.search(sentence) and not rnd:
        if det or known.get("demand_type") == "deterministic":
            family = "deterministic"
    if family == "poisson" and not _POISSON_CUES.search(sentence):
        # a mean and nothing about the spread: ask, never assume Poisson
        if days != 1:
            out.notes.append(f"{_fmt(mean)} per {period} is {_fmt(mean / days)} per day")
        out.demand_mean = round(mean / days, 2)
        out.demand_spread_cue = rnd
        if rnd:
            out.values.setdefault("demand_type", "random")
        return
    if days != 1 and family in ("normal", "uniform"):
        usd = sd if sd is not None else math.sqrt(((high - low + 1) ** 2 - 1) / 12)  # type: ignore[operator]
        out.demand_period = DemandPeriodChoice(period, days, family, mean, usd, low, high)
        out.values.setdefault("demand_type", "random")
        return
    if days != 1:
        out.notes.append(f"{_fmt(mean)} per {period} is {_fmt(mean / days)} per day")
        mean = round(mean / days, 2)
    if family == "poisson":
        out.values["demand_distribution"] = f"poisson({_fmt(mean)})"
        if _POISSON_CUES.search(sentence) or rnd:
            out.values.setdefault("demand_type", "random")
    elif family == "normal":
        out.values["demand_distribution"] = f"normal({_fmt(mean)}, {_fmt(sd or 0)})"
        out.values.setdefault("demand_type", "deterministic" if det and not rnd else "random")
    elif family == "uniform":
        out.values["demand_distribution"] = f"uniform({_fmt(low or 0)}, {_fmt(high or 0)})"
        out.values.setdefault("demand_type", "random")
    else:
        out.values["demand_distribution"] = _fmt(round(mean))
        out.values.setdefault("demand_type", "deterministic")


# ---- scalar parameters ----------------------------------------------------------------------------------
def _scalar(param: str, q: Quantity, out: ParseResult) -> None:
    value = q.value
    if param in MONEY_FIELDS and q.period and q.period != "day" and param != "setup_cost":
        label = {"holding_cost": "A holding cost", "penalty_cost": "A shortage cost"}[param]
        out.notes.append(rate_note(label, value, q.period))
        value = per_day(value, q.period)
        if q.high is not None:
            q.high = per_day(q.high, q.period)
    if param == "penalty_cost" and q.period:
        out.penalty_per_day = True
    if q.is_range and q.high is not None:
        # two candidates ("3 or 4 days", "5 dollars, maybe 6", "risk between -2 and 2"): asked, never averaged
        out.ambiguous[param] = (value, q.high)
        return
    if param in INTEGER_FIELDS and q.kind == "bare" and value == int(value):
        value = int(value)
    if param in INTEGER_FIELDS and value != int(value):
        # "a week and a half" is 10.5 days: a whole number of periods is needed, so the manager picks one
        out.ambiguous[param] = (math.floor(value), math.ceil(value))
        return
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    out.values[param] = round(value, 6) if isinstance(value, float) else value


_SELF_COLLECT = re.compile(r"\b(?:i|we)\s+(?:\w+\s+)?(?:collect|fetch|pick)\w*\s+(?:(?:it|them|up|those|the \w+)\s+){0,2}"
                           r"(?:up\s+)?(?:\w+\s+){0,5}?(?:myself|ourselves)\b")
_WEEKDAY = re.compile(r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b")
_ORDER_VERB = re.compile(r"\b(?:order|orders|ordered|ordering|place|put in|send (?:it|the order) in)\b")
_ARRIVE_VERB = re.compile(r"arriv\w*|\bhere\b|\bbrings?\b|\bsends?\b|\bships?\b|shows? up|turns? up|\bcomes?\b|\bcame\b|\bget (?:it|them)\b|\blands?\b|"
                          r"deliver\w*|receiv\w*|\bgot\b|\bin on\b")


def _weekday_lead_time(sentence: str, context: str | None) -> int | None:
    """'If I order Tuesday it arrives Friday' -> 3 days; 'Monday to Thursday' when asked for the lead time."""
    days = list(_WEEKDAY.finditer(sentence))
    if len(days) < 2:
        return None
    first, second = days[0], days[1]
    between = sentence[first.end(): second.start()]
    ordered = _ORDER_VERB.search(sentence[: first.start()] + between) and _ARRIVE_VERB.search(between)
    linked = context == "lead_time" and re.fullmatch(r"\s*(?:-|to|till|until|through)\s*", between)
    # the arrival said first: "they deliver on Thursday when I order on Monday"
    reverse = _ARRIVE_VERB.search(sentence[max(0, first.start() - 40): first.start()]) and re.search(
        r"\b(?:when|if|after|once)\s+(?:i|we|you)\s+(?:\w+\s+)?order\w*\b", between)
    if not (ordered or linked or reverse):
        return None
    names = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
    if reverse and not ordered:
        first, second = second, first
    return (names.index(second.group(1)) - names.index(first.group(1))) % 7 or 7


# ---- the learned second reader: only where the rules are silent, only when sure ----------------------------
#: how sure the learned reader must be to store a number / a keyword field, and to overrule a keyword-only choice
#: (set by leave-one-corpus-out runs over the training corpora, never on a blind set; docs/dialogue.md)
LEARNED_NUMBER_MIN = 0.6
LEARNED_KEYWORD_MIN = 0.9
LEARNED_VETO_MIN = 0.7  # 0: off
LEARNED_VETO_MAX_KEPT = 0.05
LEARNED_VETO_TO_NONE = True
_learned_override: list = []  # experiments and tests: [reader] or [None] (rules only); empty -> the shipped model


def use_learned_reader(reader) -> None:
    """Replace the learned reader for this process (None: rules only); `use_learned_reader(...)` again to undo."""
    _learned_override[:] = [reader]


def _reader():
    if _learned_override:
        return _learned_override[0]
    from agents.extraction_learned import learned_reader
    return learned_reader()


def _learned_allowed(q: Quantity, context: str | None, sentence: str) -> tuple[str, ...]:
    kind = "money" if q.kind == "bare" and q.per_unit and q.period else q.kind
    allowed = _KIND_PARAMS[kind]
    if kind == "money" and q.period:
        allowed = ("holding_cost", "penalty_cost")
    if kind == "bare" and context not in MONEY_FIELDS and not q.period and not _COST_WORD.search(sentence):
        allowed = tuple(p for p in allowed if p not in MONEY_FIELDS)
    return tuple(p for p in allowed if p != "risk_tolerance")  # a risk number is only read from its own words


def _learned_number(sentence: str, q: Quantity, context: str | None) -> tuple[str | None, str]:
    reader = _reader()
    if reader is None:
        return None, "none"
    param, p, _ = reader.number_field(sentence, q, context, _learned_allowed(q, context, sentence))
    return (param, "learned") if param is not None and p >= LEARNED_NUMBER_MIN else (None, "none")


def _learned_veto(sentence: str, q: Quantity, context: str | None, param: str, how: str) -> tuple[str | None, str]:
    """A field chosen only by the nearest keyword is replaced when the learned reader is sure it is another one
    (or no field at all) and gives the keyword's field almost no chance."""
    reader = _reader()
    if reader is None or how != "anchor" or not LEARNED_VETO_MIN:
        return param, how
    best, p, probs = reader.number_field(sentence, q, context, _learned_allowed(q, context, sentence) + (param,))
    if best is None and not LEARNED_VETO_TO_NONE:
        return param, how
    if best != param and p >= LEARNED_VETO_MIN and probs.get(param, 0.0) <= LEARNED_VETO_MAX_KEPT:
        return best, ("learned" if best is not None else "none")
    return param, how


def _learned_keywords(norm: str, out: ParseResult, seen: _Seen) -> None:
    """Lost sale / backlog, perishability, demand type from the whole message when no rule fired on them."""
    reader = _reader()
    if reader is None:
        return
    for name in ("state_transition_model", "perishability", "demand_type"):
        if name in out.values or name in out.conflicts or name in seen.keywords:
            continue
        if name == "demand_type" and (out.demand_period is not None or out.demand_mean is not None):
            continue
        value, p = reader.keyword(name, norm)
        if value is not None and p >= LEARNED_KEYWORD_MIN:
            out.values[name] = value


@dataclass
class _Seen:
    """Bookkeeping across the sentences of one message: where each value came from, to spot contradictions."""

    how: dict[str, str] = field(default_factory=dict)  # field -> suffix | anchor | context
    where: dict[str, tuple[int, int]] = field(default_factory=dict)  # field -> (sentence, position)
    corrections: list[tuple[int, int]] = field(default_factory=list)  # positions of "actually", "I meant", ...
    keywords: dict[str, list[tuple[int, object]]] = field(default_factory=dict)  # field -> [(sentence, value)]
    sentence: int = 0
    asking: bool = False  # the current sentence is a question the manager asks
    container_sizes: dict[str, float] = field(default_factory=dict)  # "30 units to a pallet"
    container_numbers: set[tuple[int, int]] = field(default_factory=set)  # (sentence, position) of those sizes
    last: tuple[str, Quantity] | None = None  # the field and number read last, for "800... Wait, no, 950."

    def corrected(self, name: str, pos: int) -> bool:
        """A correction cue between the field's earlier value and this position."""
        before = self.where.get(name, (-1, -1))
        return any(before < c < (self.sentence, pos) for c in self.corrections)


def parse_utterance(text: str, context: str | None = None, known: dict[str, object] | None = None) -> ParseResult:
    """Proposed updates from one user message.

    `context` is the parameter the agent just asked about (numbers without a keyword go there); `known` holds
    current table values, used only to read "about 6 a day" as deterministic when demand is known to be fixed.
    A field given two different values in the message (each with its own keyword, no correction cue between
    them) goes to `conflicts` instead of `values`; after a correction cue the later value wins.
    """
    if context is not None and context not in PARAMETERS:
        raise ValueError(f"unknown question context {context!r}")
    known = known or {}
    out = ParseResult()
    norm = normalise_text(text)
    sentences = _merge_labels(split_sentences(norm) or [norm], norm)
    seen = _Seen()
    seen.container_sizes, seen.container_numbers = _container_sizes(sentences)
    # a pack size is never a value by itself ("pallets of 24 cases", "a pallet holds 25"); it converts a cost per
    # pallet, and it is the largest order when one pallet is what an order may be ("one pallet per order")
    one_per_order = _ONE_CONTAINER_PER_ORDER.search(norm)
    container = one_per_order and (one_per_order.group(1) or one_per_order.group(2))
    if container in seen.container_sizes:
        _offer("max_order", _int_if_whole(seen.container_sizes[container]), "anchor", 0, out, seen)
    if seen.container_sizes and not any(_moneyish(q, sentence) and _per_container(q) in seen.container_sizes
                                        for sentence in sentences for q in scan_quantities(" " + sentence + " ")):
        seen.container_sizes = {}  # "a pallet is 60 units" alone: a size, not a rate to convert
    for i, sentence in enumerate(sentences):
        seen.sentence = i
        padded = " " + sentence + " "
        seen.corrections.extend((i, m.start()) for m in _CORRECTION.finditer(padded))
        seen.asking = bool(_ASKING.search(sentence)) and bool(re.search(re.escape(sentence) + r"\s*\?", norm))
        _parse_sentence(padded, context, known, out, seen)
    _keyword_conflicts(out, seen)
    _percent_holding(norm, out)
    _learned_keywords(norm, out, seen)
    if out.demand_mean is not None and _POISSON_CUES.search(norm):  # "... 6 a day. Kind of a Poisson thing"
        out.values.setdefault("demand_distribution", f"poisson({_fmt(out.demand_mean)})")
        out.values.setdefault("demand_type", "random")
        out.demand_mean = None
    if out.empty:
        if context == "perishability" and "perishability" not in out.values:
            if _YES.search(norm):
                out.values["perishability"] = "perishable"
            elif _NO.search(norm):
                out.values["perishability"] = "non_perishable"
            elif _GOODS_PERISHABLE.search(norm) and not _GOODS_DURABLE.search(norm):
                out.values["perishability"] = "perishable"  # "It's milk."
            elif _GOODS_DURABLE.search(norm) and not _GOODS_PERISHABLE.search(norm):
                out.values["perishability"] = "non_perishable"  # "Screws and bolts."
        if context == "setup_cost" and re.match(r"^\W*(?:nothing|none|nil|nada|zilch)\b", norm):
            out.values["setup_cost"] = 0
    has_value = not out.empty
    out.unknown = not has_value and bool(_UNKNOWN.search(norm))
    out.question = not has_value and "?" in text and bool(_QUESTION.search(norm))
    out.correction = has_value and bool(_CORRECTION.search(norm))
    return out


def _merge_labels(sentences: list[str], norm: str) -> list[str]:
    """ "Risk? Minus seven.", "Lead time? 3 days", "Risk ah... minus 2": a one- or two-word question (or a word
    trailing off) naming a field labels the next sentence ("They wait. Actually no, they leave." stays two)."""
    out: list[str] = []
    i = 0
    while i < len(sentences):
        s = sentences[i]
        if i + 1 < len(sentences) and len(s.split()) <= 2 and not re.search(r"\d", s) and _anchors(" " + s + " ") \
                and re.search(re.escape(s) + r"\s*(?:\?|\.\.\.|\u2026)", norm):
            out.append(s + " : " + sentences[i + 1])
            i += 2
            continue
        out.append(s)
        i += 1
    return out


def _same_raw(name: str, a: object, b: object) -> bool:
    """Equal, or for costs close enough to be one figure said twice ("$1 a month, so about 3 cents a day")."""
    if isinstance(a, int | float) and isinstance(b, int | float):
        tol = 0.15 if name in MONEY_FIELDS else 1e-6
        return abs(float(a) - float(b)) <= tol * max(abs(float(a)), abs(float(b)), 1e-9)
    return str(a).replace(" ", "") == str(b).replace(" ", "")


def _offer(name: str, value: object, how: str, pos: int, out: ParseResult, seen: _Seen) -> bool:
    """Record `value` for `name` unless it contradicts an earlier one (then: conflict, or the later one wins
    after a correction cue). A value found only through the question's context never overrides or conflicts.
    Returns True when the value was taken."""
    if name in out.conflicts:
        if how != "context" and not any(_same_raw(name, v, value) for v in out.conflicts[name]):
            out.conflicts[name].append(value)
        return False
    if name not in out.values:
        out.values[name] = value
        seen.how[name], seen.where[name] = how, (seen.sentence, pos)
        return True
    if seen.corrected(name, pos):  # "fee's 18, sorry, 16": a correction wins even when the figures are close
        out.values[name] = value
        seen.how[name], seen.where[name] = how, (seen.sentence, pos)
        return True
    if _same_raw(name, out.values[name], value):
        return False
    if name in MONEY_FIELDS and out.values[name] == 0 and isinstance(value, (int, float)) and value > 0:
        # "costs nothing really ... well, the courier is $7.50", "nothing except staff time, about £12 an order":
        # the message settles on the amount
        out.values[name] = value
        seen.how[name], seen.where[name] = how, (seen.sentence, pos)
        return True
    if how != "context" and seen.how.get(name) == "context":
        out.values[name] = value
        seen.how[name], seen.where[name] = how, (seen.sentence, pos)
        return True
    out.conflicts[name] = [out.values.pop(name), value]
    return False


# a holding cost said as a yearly (or monthly) percentage of the unit's value, with the value in the message:
# "holding is 20% a year of the unit cost, and each unit costs us $73" -> 0.20 x 73 / 365 per unit per day
_PERCENT_HOLD = re.compile(r"(?:holding|storage|storing|carrying|to hold|to store|to keep)\b[^.;]{0,40}?"
                           r"(\d+(?:\.\d+)?)\s*(?:%|percent|per cent)\s*(?:(?:a|per|each|every)\s+)?(year|annum|month)?|"
                           r"(\d+(?:\.\d+)?)\s*(?:%|percent|per cent)\s*(?:(?:a|per|each|every)\s+)?(year|annum|month)?"
                           r"[^.;]{0,40}?\b(?:holding|storage|carrying)")
_UNIT_VALUE = re.compile(r"(?:(?:each|one|a|per|the) (?:unit|item|piece|one) (?:costs?|is worth|sells for|is valued at)"
                         r"(?: us| me)?|unit (?:cost|value|price) (?:is|of)|(?:costs?|worth|valued at|value of) )\s*"
                         r"(?:about |around |roughly )?\$(\d+(?:\.\d+)?)|\$(\d+(?:\.\d+)?) (?:value|price|unit cost)")
_PERCENT_PERIOD = re.compile(r"(?:per|a|an|each|every)\s+(year|annum|month)\b|\b(?:yearly|annual(?:ly)?)\b|\bmonthly\b")


def _percent_holding(norm: str, out: ParseResult) -> None:
    pct = _PERCENT_HOLD.search(norm)
    if pct is None:
        return
    rate, period = (pct.group(1), pct.group(2)) if pct.group(1) else (pct.group(3), pct.group(4))
    if period is None:  # "20% of its $365 value per year"
        said = _PERCENT_PERIOD.search(norm[pct.start():pct.end() + 60])
        period = said and ("month" if "month" in said.group(0) else "year")
    value = _UNIT_VALUE.search(norm)
    out.conflicts.pop("holding_cost", None)
    out.values.pop("holding_cost", None)  # the percentage is not a money amount per unit
    out.notes[:] = [n for n in out.notes if not n.startswith("A holding cost of")]
    if value is None or period is None:
        return  # a percentage of a value the message does not give, or of no stated period: asked
    period = "month" if period == "month" else "year"
    unit_value = float(value.group(1) or value.group(2))
    daily = per_day(float(rate) / 100 * unit_value, period)  # the one period conversion (extraction_units)
    out.values["holding_cost"] = round(daily, 6)
    out.notes.append(f"{rate}% a {period} of ${_fmt(unit_value)} is {_fmt(round(daily, 6))} per unit per day")


def _keyword_conflicts(out: ParseResult, seen: _Seen) -> None:
    """Keyword fields read differently in two sentences: the later wins after a correction, else a conflict."""
    for name, found in seen.keywords.items():
        values = list(dict.fromkeys(v for _, v in found))
        if len(values) < 2:
            continue
        if name == "demand_type" and ("demand_distribution" in out.values or out.demand_period is not None):
            continue  # the type-vs-distribution rule of the agent asks about this one
        first_other = next(si for si, v in found if v != found[0][1])
        if any(si >= first_other and si > found[0][0] for si, _ in seen.corrections):
            out.values[name] = found[-1][1]
            continue
        out.values.pop(name, None)
        out.conflicts[name] = values


def _parse_sentence(sentence: str, context: str | None, known: dict[str, object], out: ParseResult,
                    seen: _Seen) -> None:
    # a question the manager asks ("what if the supplier took 5 days?", "how much is this costing me a day?"):
    # its numbers are the question's, not facts about the shop
    qs = [] if seen.asking and (_WHAT_IF.search(sentence) or _INFO_QUESTION.match(sentence)) else scan_quantities(sentence)
    anchors = _anchors(sentence)
    demand_qs: list[Quantity] = []
    last: tuple[str, Quantity] | None = None  # the field and number most recently read, for "7 days, sorry, 6"
    demand_how = "context"
    stock_end: int | None = None  # where the last count of today's stock ended, for "23 on the shelf, 12 in the back"
    has_money = any(q.kind == "money" for q in qs)
    sd_cue = re.compile(r"(?:give or take|plus or minus|standard deviation(?: of| is)?|\bsd\b(?: of| is)?|"
                        r"spread of|swings? by(?: about| around)?)\s*$")
    for q in qs:
        if q.negated or (any(i == seen.sentence and q.start <= pos < q.end for i, pos in seen.container_numbers)
                         and not _LIMIT_CUE.search(q.prefix) and not _LIMIT_AFTER.search(sentence[q.end:q.end + 160])):
            continue  # a pack size ("pallets of 24"), unless said as a limit ("no more than 30 boxes on one pallet")
        if q.kind == "bare" and _is_year(q):
            continue  # "since 1998", "last year, 2025"
        if q.kind in ("bare", "count") and _MIN_BOUND.search(q.prefix[-40:]):
            continue  # a minimum order quantity or a lower bound: not a value of any field
        if q.kind == "bare" and re.match(r"\s*(?:[a-z]+\s+){0,2}(?:street|st|road|rd|lane|avenue|ave|way|drive|close|"
                                         r"square|estate|industrial estate)\b", q.suffix):
            continue  # "15 King Street", "unit 14 on the industrial estate": an address
        if q.kind == "bare" and re.search(r"\b(?:room|aisle|bay|door|gate|platform|row|desk|locker|no\.?|#)\s*$", q.prefix):
            continue  # "room 12", "aisle 4": a label
        if q.kind == "bare" and _OTHER_THINGS.match(q.suffix):
            continue  # "3 delivery vans", "12 staff"
        if q.kind in ("bare", "count") and not q.period and (_STOCK_NOW_BEFORE.search(q.prefix[-30:])
                                                              or _STOCK_NOW_AFTER.match(q.suffix)
                                                              or (_ON_TRUCK.match(q.suffix)
                                                                  and not _LOAD_CUE.search(q.prefix[-40:]))
                                                              or (stock_end is not None and _STOCK_LIST.match(
                                                                  sentence[stock_end:q.start]))):
            stock_end = q.end
            continue  # "I have 40 in the fridge", "60 coming tomorrow": today's stock, not a capacity or any field
        if _moneyish(q, sentence):
            container = _per_container(q)
            if container is not None and container in seen.container_sizes:
                q.kind, q.per_unit = "money", True  # a cost per container is a cost per unit once divided
                size = seen.container_sizes[container]
                out.notes.append(f"{_fmt(q.raw)} per {container} at {_fmt(size)} units per {container} is "
                                 f"{_fmt(round(q.value / size, 6))} per unit")
                q.value, q.raw = q.value / size, q.raw / size
            elif container == "pallet":
                continue  # a cost per pallet without the pallet's size: the per-unit cost is unknown, ask
        if q.kind == "money" and not q.period and _ITEM_PRICE.search(q.prefix) and not _SETUP_SUFFIX.search(q.suffix) \
                and not _SETUP_PREFIX.search(q.prefix[-45:]):
            continue  # "bought at about $112 each" is the item's price, not a cost parameter
        if q.kind in ("bare", "count") and _HOURLY.match(q.suffix) and (_DEMAND_WORDS.search(sentence) or _CALL_NAMES.search(sentence)):
            demand_qs.append(q)  # "Poisson, about 1.5 an hour, and we're open 8 hours a day": a rate, read with the hours
            continue
        if sd_cue.search(q.prefix) and q.kind in ("bare", "count"):
            demand_qs.append(q)  # the spread of a demand statement, whatever keywords are near
            continue
        if q.kind == "duration" and re.search(r"(?:\bwait(?:s|ing)?|\b(?:come|comes|coming|came|pop|pops)\s+back"
                                              r"(?:\s+in)?)\s*(?:for\s+)?(?:up to\s+|about\s+|maybe\s+)?$", q.prefix):
            continue  # "they'll wait a few days", "they come back next day": customers waiting, not the lead time
        if q.kind == "duration" and (_PERISH_DURATION.search(q.prefix) or _SHELF_LIFE_AFTER.match(q.suffix)):
            continue  # "flowers die within 1 day", "a 2-year expiry": about perishability, not a horizon or lead time
        if q.is_range and q.kind in ("bare", "count") and not _DEMAND_WORDS.search(sentence) and any(
                p.kind == "duration" and p.start < q.start for p in qs):
            continue  # "lead time is normally 3 days but could be anywhere from 2 to 6": the lead time's spread
        if q.kind == "money" and not q.period and _ITEM_EACH.match(q.suffix) and re.search(
                r"\b(?:themselves|itself)\s+costs?\s*(?:us\s+|me\s+)?(?:about\s+|around\s+)?$", q.prefix):
            continue  # "the tubes themselves cost £3.20 each": the item's price
        if q.kind in ("bare", "count") and _ITEM_EACH.match(q.suffix) and _ITEM_EACH_BEFORE.search(q.prefix):
            continue  # "the screens are 25 each from the supplier": the item's price
        if q.kind == "bare" and _OTHER_NOUN.match(q.suffix):
            continue  # "3 staff", "2 branches": counts of something that is not stock
        if q.kind == "duration" and (_HISTORY_DURATION.search(q.prefix) or re.match(r"\s*ago\b", q.suffix)):
            continue  # "we've been open for 12 years" is the shop's history
        if _USED_TO.search(q.prefix[-40:]) and _NOW_AFTER.search(sentence[q.end:]):
            continue  # "the fee used to be $35, it's $28 since we switched": the old value, replaced in the message
        param, how = _assign_how(sentence, q, anchors, context)
        corrects = _corrects(sentence, last, q)
        if corrects is None and last is None and seen.last is not None \
                and (q.kind == seen.last[1].kind or "bare" in (q.kind, seen.last[1].kind)) \
                and seen.last[0] != "demand_distribution" \
                and _correction_gap(sentence[: q.start], q) and not re.match(r"^\s*[a-z]+\s*$", sentence[: q.start]):
            corrects = seen.last[0]  # the sentence opens with a correction of the number the last one ended on
        if corrects is not None:
            param, how = corrects, "anchor"  # the number right after "sorry," / "no wait," replaces the one before
            seen.corrections.append((seen.sentence, q.start - 1))
        elif param is None:
            param, how = _learned_number(sentence, q, context)
        elif not (q.kind == "money" and _per_container(q) in seen.container_sizes):  # the model sees no conversion
            param, how = _learned_veto(sentence, q, context, param, how)
        if param is None:
            continue
        if param == "demand_distribution":
            demand_qs.append(q)
            if how != "context":
                demand_how = how
            continue
        if param == "risk_tolerance" and q.kind != "bare":
            continue
        if param == "lead_time" and q.value > 365:
            continue  # "loyal for 20 years", "max 25,000 L": no delivery takes years
        if param == "lead_time" and q.kind == "duration" and q.value >= 2 and not q.is_range \
                and re.search(r"(?:business|working)\s+days?", q.text) and param not in out.values:
            # "5 working days" is 5 calendar days only if no weekend falls in between: the manager says which
            out.ambiguous.setdefault(param, (int(q.value), int(q.value) + 2 * math.ceil(q.value / 5)))
            last = seen.last = (param, q)  # "5 working days, which is 7 days for us": the restatement settles it
            continue
        if param == "risk_tolerance" and context != "risk_tolerance" and not -10 <= q.value <= 10:
            continue  # outside the scale and not an answer to the scale question: asked later, never stored
        if param in out.ambiguous:
            if corrects != param:
                continue
            del out.ambiguous[param]
        trial = ParseResult()
        _scalar(param, q, trial)
        if param in trial.ambiguous:
            if param not in out.values and param not in out.conflicts:
                out.ambiguous[param] = trial.ambiguous[param]
            continue
        last = seen.last = (param, q)
        if _offer(param, trial.values[param], how, q.start, out, seen):
            out.notes.extend(trial.notes)
            if param == "penalty_cost":
                out.penalty_per_day = trial.penalty_per_day
    if "lead_time" not in out.values and "lead_time" not in out.conflicts:
        lead = _weekday_lead_time(sentence, context)
        if lead is None and _SELF_COLLECT.search(sentence) and not seen.asking:
            lead = 0  # "I collect it from the merchant myself, so no waiting": no delivery delay
        if lead is not None:
            _offer("lead_time", lead, "anchor", 0, out, seen)
    about_demand = bool(demand_qs) or context in ("demand_type", "demand_distribution") or bool(
        re.search(r"demand|\bsales\b|\bsell\w*|customers? (?:buy|want)", sentence))
    if demand_qs and out.demand_period is None:
        trial = ParseResult()
        _demand(sentence, demand_qs, known, trial)
        if trial.demand_period is not None:
            if "demand_distribution" not in out.values and "demand_distribution" not in out.conflicts:
                out.demand_period = trial.demand_period
                out.values.setdefault("demand_type", trial.values.get("demand_type", "random"))
        elif trial.demand_mean is not None:
            if "demand_distribution" not in out.values and "demand_distribution" not in out.conflicts \
                    and out.demand_mean is None:
                out.demand_mean, out.demand_spread_cue = trial.demand_mean, trial.demand_spread_cue
                out.notes.extend(trial.notes)
                if "demand_type" in trial.values:
                    out.values.setdefault("demand_type", trial.values["demand_type"])
        elif "demand_distribution" in trial.values:
            if _offer("demand_distribution", trial.values["demand_distribution"], demand_how, demand_qs[0].start,
                      out, seen):
                out.notes.extend(trial.notes)
                if "demand_type" in trial.values:
                    out.values.setdefault("demand_type", trial.values["demand_type"])
    elif _CALL.search(sentence) and "demand_distribution" not in out.values:
        _demand(sentence, [], known, out)
    keyword = {
        "demand_type": _demand_type(sentence, about_demand),
        "perishability": _perishability(sentence, context),
        "state_transition_model": _transition(sentence, has_money, context),
    }
    for name, value in keyword.items():
        if value is None or seen.asking:
            continue
        if value == "mixed":  # both behaviours in one breath: a contradiction for the agent to ask about
            seen.keywords.setdefault(name, []).extend([(seen.sentence, "backlog"), (seen.sentence, "lost_sale")])
            continue
        seen.keywords.setdefault(name, []).append((seen.sentence, value))
        if name not in out.values:
            out.values[name] = value
    # a verbal attitude ("fairly cautious") is mapped onto the scale only as the answer to the scale question
    # (the read-back shows the number); volunteered, it is not a number the manager said: asked later
    if context == "risk_tolerance" and "risk_tolerance" not in out.values and "risk_tolerance" not in out.conflicts \
            and "risk_tolerance" not in out.ambiguous:
        words = _risk_words(sentence)
        if words is not None:
            out.values["risk_tolerance"] = words
