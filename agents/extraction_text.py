"""Text normalisation and quantity scanning for the offline extraction backend.

Managers write numbers as words ("a hundred and fifty"), with currencies ("30 bucks", "20 cents"), as
ranges ("2 or 3 days", "40-50"), and durations in idioms ("next day", "a fortnight"). This module turns a
sentence into a list of `Quantity` objects with their kind (money / duration / count / bare), rate period and
position, so `agents.extraction_rules` can reason about which parameter each number belongs to.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from word2number import w2n

from agents.extraction_typos import fix_typos

__all__ = ["Quantity", "normalise_text", "replace_number_words", "scan_quantities", "split_sentences",
           "words_to_number"]

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90}
_SCALES = {"hundred": 100, "thousand": 1000}
_NUMWORD = "|".join([*_UNITS, *_TENS, *_SCALES])
# a run of number words, e.g. "a hundred and fifty", "twenty-five", "two thousand"
_WORD_RUN = re.compile(
    rf"\b(?:(?:a|one)\s+(?=hundred|thousand))?(?:{_NUMWORD})(?:(?:\s+and\s+|[\s-]+)(?:{_NUMWORD}))*"
    rf"(?:\s+point\s+(?:{_NUMWORD}))?\b")
# "one" is too often a pronoun ("each one", "keeping one in stock"): only convert it before a unit word
_ONE_ITEM = re.compile(r"\b(?:keep|keeping|hold|holding|store|storing|stock|stocking|for|per|of|each|every|"
                       r"with|on|lose|losing|sell|selling|miss|missing)\s+$")
_ONE_OK = re.compile(r"\s*(?:day|days|week|weeks|month|months|year|years|quarter|unit|units|dollar|dollars)\b")
# ... but "give or take one", "risk tolerance is one.": a number after a spread cue or before the clause ends
_ONE_SPREAD = re.compile(r"(?:give or take|plus or minus|deviation of|sd of|either way by)\s+$")
_ONE_END = re.compile(r"\b(?:is|be|of|at|=|:)\s+(?:minus\s+|negative\s+|plus\s+)?$")


def words_to_number(phrase: str) -> float | None:
    """'a hundred and fifty' -> 150, 'twenty-five' -> 25 (word2number); None when it is not a number phrase."""
    tokens = [t for t in re.split(r"[\s-]+", phrase.lower()) if t and t != "and"]
    if not tokens or any(t not in _UNITS and t not in _TENS and t not in _SCALES and t not in ("a", "point")
                         for t in tokens):
        return None
    if tokens[0] == "a":
        tokens[0] = "one"
    try:
        return float(w2n.word_to_num(" ".join(tokens)))
    except ValueError:
        return None


_WORD_RUN_ANY_CASE = re.compile(_WORD_RUN.pattern, re.I)


def replace_number_words(text: str) -> str:
    """Number words -> digits in text of any case ("Twenty-five units" -> "25 units"); used by the advice parser."""
    def repl(m: re.Match[str]) -> str:
        phrase = m.group(0)
        if phrase.strip().lower() == "one":
            return phrase  # "order one at a time", "each one": a pronoun more often than a quantity
        value = words_to_number(phrase)
        if value is None:
            return phrase
        return str(int(value)) if value == int(value) else f"{value:g}"

    return _WORD_RUN_ANY_CASE.sub(repl, text)


_SMALL = "|".join([*(u for u in _UNITS if u != "zero"), *_TENS])
# "the fee is seven fifty", "delivery charge is twelve fifty": a price said the way it is spoken (7.50, 12.50)
_SPOKEN_PRICE = re.compile(
    rf"(\b(?:fee|fees|charge|charges|cost|costs|price|pay|paid|is|'s|at|for|about|around)\s)"
    rf"((?:{_SMALL})(?:-(?:{_SMALL}))?)\s+((?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|ten|fifteen)"
    rf"(?:-(?:one|two|three|four|five|six|seven|eight|nine))?)\b"
    rf"(?!\s*(?:and\b|-|units?|items?|pieces|boxes|bags|days?|weeks?|months?|years?|of\b|per\s+(?:order|delivery)))")


def _spoken_prices(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        whole, cents = words_to_number(m.group(2)), words_to_number(m.group(3))
        if whole is None or cents is None or not 10 <= cents <= 99:
            return m.group(0)
        return f"{m.group(1)}${int(whole)}.{int(cents):02d}"

    return _SPOKEN_PRICE.sub(repl, text)


def _replace_word_numbers(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        phrase = m.group(0)
        before = text[max(0, m.start() - 30): m.start()]
        spread_or_end = _ONE_SPREAD.search(before) or (_ONE_END.search(before) and re.match(r"\s*(?:[.,;!?]|-\s|$)",
                                                                                             text[m.end():]))
        if phrase.strip() == "one" and text.strip() != "one" and not spread_or_end and (
                not _ONE_OK.match(text, m.end()) or _ONE_ITEM.search(text, max(0, m.start() - 30), m.start())):
            return phrase  # "keep one unit on the shelf": an article, not a quantity
        value = words_to_number(phrase)
        if value is None:
            return phrase
        return str(int(value)) if value == int(value) else f"{value:g}"

    return _WORD_RUN.sub(repl, text)


_CURRENCY_CODES = r"(?:usd|us\$|u\$s|eur|euro?s?|gbp|cad|c\$|aud|a\$|nzd|nz\$|inr|rs\.?|rupees?|chf|sfr|zar|rands?|" \
    r"sek|nok|dkk|jpy|yen|sgd|hkd|myr|php|pesos?|mxn|brl|r\$|pln|zlotys?|zł|złoty|lira|liras|try|loonies|toonies|" \
    r"naira|ngn|shekels?|ils|baht|thb|ringgit|rm|dirhams?|aed|kes|shillings?|" \
    r"rp|idr|rupiah|kyats?|mmk|dong|vnd|riel|khr|kip|lak|takas?|tk|bdt|npr|lkr|pkr|afn|afghanis?|" \
    r"rials?|riyals?|irr|sar|qar|omr|tomans?|dinars?|dinara|din|rsd|mkd|denars?|денари|денар|jd|jod|iqd|kwd|bhd|tnd|dzd|" \
    r"lyd|egp|syp|lbp|dh|leva?|bgn|лв|lei|leu|ron|mdl|lari|gel|drams?|amd|manats?|azn|tenge|kzt|soms?|kgs|uzs|" \
    r"hryvnias?|uah|rubles?|roubles?|byn|forints?|huf|kronor|kroner|krona|krone|czk|kč|kuna|bam|lek[eë]?|" \
    r"gs|guaran[ií]es|pyg|bolivianos?|bs|soles|quetzal(?:es)?|gtq|colones|col[oó]n|crc|lempiras?|hnl|c[oó]rdobas?|nio|" \
    r"reais|ars|clp|uyu|kwanza|kz|aoa|meticais|metical|mzn|kwacha|mwk|zmw|mk|cedis?|ghs|birr|etb|nakfa|" \
    r"ariary|ar|mga|ouguiya|mru|dalasi|leones?|sll|pula|bwp|fbu|bif|frw|rwf|ugx|ush|tzs|cfa|fcfa|xof|xaf|francs?|" \
    r"vatu|vuv|tala|wst|kina|pgk|fjd|fj\$|tt\$|ttd|jmd|j\$|bds\$|bbd|xcd|ec\$|g\$|gyd|srd|htg|gourdes?|nu\.?|btn|" \
    r"ngultrum|mnt|tugriks?|rufiyaa|mvr|scr|mur|kmf|djf|sos|sdg|ssp|ern|lsl|szl|nad|n\$|xpf|cfp|vt|zig|zwg|zwl|isk|kr\.?|ks\.?|krw|patacas?|maloti|loti|somoni|tjs|konvertibilnih\s+maraka|" \
    r"afl\.?|awg|ang|xcg|fl\.|\u5186|\u5143|\u5757|\u0e1a\u0e32\u0e17)"
# "CAD 40", "Rs. 1,500": a code before the number; "12.50 GBP", "250 rupees": after it (a pattern, then "$")
_CODES_BEFORE = re.compile(rf"(?<![\w$]){_CURRENCY_CODES}\s?(?=\d)")
_CODES_AFTER = re.compile(rf"(?<![\w$])(\d+(?:,\d{{3}})*(?:\.\d+)?)\s?{_CURRENCY_CODES}(?![\w$])")
_CURRENCY_SIGNS = "\u0192$\u20ac\u00a3\u00a5\u20b9\u20b1\u20a9\u20ba\u20a6\u20b4\u20aa\u20a1\u20b2\u20b8\u20bc\u20be\u20ae\u20ad\u20ab\u09f3\ufdfc\u060b\u058f\u20bd"
# ... and every other sign Unicode calls a currency symbol ("\u20a8 350", "\u0e3f1,200"), except the cent sign (a minor unit)
_CURRENCY_SIGNS += "".join(c for c in map(chr, range(0x20, 0x10000)) if unicodedata.category(c) == "Sc"
                           and c not in _CURRENCY_SIGNS and c not in "\u00a2\u20a5")
# a figure next to a currency, in the ways it is written around the world: "45.000,00", "1.800.000", "2 500 000",
# "1,10,000" (lakh grouping), "350,00", "1,200.50"; a scale word may follow ("1 lakh kyats", "2 million dong")
_MONEY_FIGURE = (r"(?:[1-9]\d{0,2}(?:\.\d{3})+(?:,\d{1,2})?|[1-9]\d{0,2}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d{1,2})?|[1-9]\d?(?:,\d\d)+,\d{3}|"
                 r"[1-9]\d{0,2}(?:,\d{3})+(?:\.\d{1,2})?|\d+(?:[.,]\d{1,2})?)(?:\s+(?:lakhs?|crores?|thousand|million|ribu|juta|mil))?")
_MONEY_BEFORE = re.compile(rf"(?:(?<![\w$])(?:{_CURRENCY_CODES})|[{_CURRENCY_SIGNS}])\s?({_MONEY_FIGURE})(?![\d.,]?\d)", re.I)
_MONEY_AFTER = re.compile(rf"(?<![\w$.,\d])({_MONEY_FIGURE})\s?(?:{_CURRENCY_CODES}|[{_CURRENCY_SIGNS}])(?![\w$])", re.I)
_MONEY_SCALES = {"lakh": 1e5, "lakhs": 1e5, "crore": 1e7, "crores": 1e7, "thousand": 1e3, "million": 1e6, "ribu": 1e3,
                 "juta": 1e6, "mil": 1e3}


def _figure_value(figure: str) -> float:
    """The value of a money figure written in any of the usual groupings (see `_MONEY_FIGURE`)."""
    parts = figure.split()
    scale = _MONEY_SCALES.get(parts[-1], 1.0) if len(parts) > 1 and parts[-1].isalpha() else 1.0
    digits = " ".join(parts[:-1]) if scale != 1.0 else figure
    digits = re.sub(r"[ \u00a0\u202f]", "", digits)
    if re.fullmatch(r"[1-9]\d{0,2}(?:\.\d{3})+(?:,\d{1,2})?", digits):  # "45.000,00", "1.800.000", "2.400"
        digits = digits.replace(".", "").replace(",", ".")
    elif re.fullmatch(r"\d+,\d{1,2}", digits):  # a decimal comma: "350,00", "1,20"
        digits = digits.replace(",", ".")
    else:  # "1,200.50", "1,10,000"
        digits = digits.replace(",", "")
    return float(digits) * scale


# minor units and how many make the major one ("30 centavos" is 0.30; fils and baisa are thousandths, except the
# UAE's fils, hundredths)
_MINOR_UNITS = {"centavos": 100, "centavo": 100, "centimos": 100, "céntimos": 100, "cêntimos": 100, "centimes": 100,
                "laari": 100, "lari": None, "fils": 1000, "millimes": 1000, "baisa": 1000, "bani": 100, "kopecks": 100,
                "kopeks": 100, "kopeck": 100, "kopek": 100, "копеек": 100, "sene": 100, "kobo": 100, "groszy": 100,
                "grosz": 100, "tetri": 100, "luma": 100, "tiyin": 100, "satang": 100, "pyas": 100, "tambala": 100,
                "thebe": 100, "ngwee": 100, "pesewas": 100, "santims": 100, "stotinki": 100, "lipa": 100, "halala": 100,
                "qirsh": 100, "piastres": 100, "piasters": 100, "toea": 100, "sen": 100, "cents": 100,
                "halalas": 100, "halalah": 100, "øre": 100, "öre": 100, "ore": None, "haléřů": 100, "halierov": 100,
                "paise": 100, "paisa": 100, "poisha": 100, "agorot": 100, "eyrir": 100, "aurar": 100,
                "rappen": 100, "centésimos": 100, "centesimos": 100, "chhertum": 100, "chetrum": 100, "kuruş": 100, "kurus": 100, "seniti": 100, "jiao": 10, "centesimi": 100, "fen": 100, "pul": 100,
                "qəpik": 100, "qapik": 100, "diram": 100, "dirams": 100, "deni": 100, "para": 100, "feninga": 100,
                "fening": 100, "lisente": 100, "sente": 100, "avos": 100, "butut": 100, "bututs": 100, "santim": 100,
                "tiyn": 100, "tyiyn": 100, "pya": 100, "qindarka": 100, "sentimo": 100, "sentimos": 100, "centai": 100,
                "centas": 100, "kopiyok": 100, "fillér": 100, "filler": 100, "lepta": 100, "senti": 100, "mongo": 100}
_MINOR = re.compile(r"(?<![\w$.,])(\d+(?:[.,]\d+)?)\s?(" + "|".join(k for k, v in _MINOR_UNITS.items() if v and k != "cents")
                    + r")\b", re.I)
# "1 ruble 50 kopecks", "2 dinars and 250 fils": a major and a minor amount said together
_MAJOR_MINOR = re.compile(r"(?<![\w$.,])(\d+)\s?(?:[a-z\u0400-\u04ff]+)\s+(?:and\s+)?(\d+)\s?("
                          + "|".join(k for k, v in _MINOR_UNITS.items() if v and k != "cents") + r")\b", re.I)


def _minor_value(text: str, amount: str, unit: str) -> float:
    per = _MINOR_UNITS[unit.lower()]
    if unit.lower() == "fils" and re.search(r"\b(?:aed|dirhams?|uae|dubai|abu dhabi|sharjah)\b", text, re.I):
        per = 100
    return float(amount.replace(",", ".")) / per


def _money_to_dollars(text: str) -> str:
    """Every figure said with a currency (a sign or a code, before or after, or a minor unit such as centavos)
    becomes "$<value>": the rest of the reader knows money by "$", and the figure's grouping is read here once, by
    the currency next to it."""
    def repl(m: re.Match) -> str:
        value = _figure_value(m.group(1))
        return f"${value:.10g}"

    text = _MAJOR_MINOR.sub(lambda m: f"${float(m.group(1)) + _minor_value(text, m.group(2), m.group(3)):.10g}", text)
    text = _MINOR.sub(lambda m: f"${_minor_value(text, m.group(1), m.group(2)):.10g}", text)
    return _MONEY_AFTER.sub(repl, _MONEY_BEFORE.sub(repl, text))


# idioms rewritten into plain quantities before scanning (order matters: longer phrases first)
_SPAN_WORDS = "|".join(u for u in _UNITS if u != "zero")  # "one" .. "nineteen", from the one number-word table


def _small(word: str) -> int:
    """1 for "a"/"an", the number for one..nineteen or digits (compound spans: "one week and three days")."""
    return 1 if word in ("a", "an") else _UNITS.get(word) or int(word)


_IDIOMS: list[tuple[str, object]] = [
    (r"(?<=\d)\s?[\u2013\u2014]\s?(?=\d)", "-"),  # "3–5", "3 — 5": a range
    (r"\s[\u2013\u2014]\s|[\u2014]", ", "),  # "Lead time — 9 days", "6 — no, 5 — days": a pause, never a minus
    (r"[\u2212\u2013]", "-"),
    (r"\u00b1|\+/-|\+-", " plus or minus "),
    (r"\u00a2", " cents"),
    # the risk scale itself is not an answer: keep a marker word so the sentence still reads as about risk
    (r"(?:on\s+)?(?:a|the)?\s*(?:scale\s+(?:of|from)\s+)?-\s*10\s*(?:to|\.\.|-)\s*\+?10(?:\s+scale)?", " riskscale "),
    # "pioson", "poison distribution", "40 a day poison" (rat poison stays poison)
    (r"\bp(?:ios|oiss|ios|oss)on\b|\bpoison(?=\s*(?:distrib\w*|dist\b|w/|with\b|mean\b|\())|(?<=day )poison\b", "poisson"),
    (r"\b\d{1,2}(?:[:.]\d{2})?\s?(?:am|pm)\b|\b\d{1,2}\s+(?:in the morning|in the evening|at night|o'clock)\b",
     " at that hour "),  # times of day are never values ("order before 2pm", "turns up around 7 in the morning")
    (r"\b2day\b", "today"),
    (r"\bnxt\b", "next"), (r"\btek\b", "take"), (r"\btekim\b", "takes"),
    (r"\bready the same (?:morning|day)\b", "ready in 0 days"),  # "batches are ready the same morning we mix them"
    # "the shelf is full when it has 80 on": a capacity
    (r"\b(shelf|shelves|rack|cupboard|shed|store ?room|fridge|freezer|cooler|bunker)\s+is\s+full\s+(?:when|at|with)\s+"
     r"(?:it\s+has\s+)?(\d+)", r"\1 holds \2"),
    (r"\bplan (for|over) a quarter\b", r"plan \1 90 days"),
    # a parameter named in a JSON object's field: {"param": "setup_cost", "value": 30}
    (r"\{\s*\"param(?:eter)?\"\s*:\s*\"(\w+)\"\s*,\s*\"value\"\s*:\s*(\d+(?:\.\d+)?)\s*\}", r"\1: \2."), (r"\bbell[\s-]?(?:shaped|curve[ds]?)\b", "normal"), (r"\bsel\b", "sell"), (r"\bexacly\b", "exactly"), (r"\bvar(?:r)?ation\b", "variation"),
    (r"\ba twelvemonth\b", "365 days"),
    (r"\b(\d+) and a half (?=(?:p|pence|cents?)\b)", r"\1.5 "),  # "two and a half pence"
    # "lead time's nothing, I walk over and carry it back", "they deliver within the week"
    (r"\blead[\s-]?time(?:'s|\s+is)\s+(?:nothing|nil|zero|none)\b", "lead time 0 days"),
    (r"\b(deliver\w*|arriv\w*|comes?|turns? up)\s+within\s+the\s+week\b", r"\1 within 7 days"),
    # "doesn't charge for delivery, it's just a €100 minimum spend": no fee, and a minimum spend is no parameter
    (r"\b(?:doesn'?t|don'?t|does not|do not|won'?t|never)\s+charge\s+(?:anything\s+|us\s+)?for\s+(delivery|the delivery|shipping|"
     r"postage|carriage|the drop)\b", r"\1 $0"),
    (r"[$\u20ac\u00a3]?\d+(?:[.,]\d+)?\s+minimum\s+(?:spend|order value|order)\b", "a minimum spend"),
    # a survey's radio buttons: the marked option is the answer, the empty ones are not
    (r"\(\s\)\s*[^()\n]*?(?=\s*(?:\(\s\)|\((?:\u2022|x|\*)\)|$|\n))", " "),
    (r"\((?:\u2022|x|\*)\)", " "),
    # "I keep 20 boxes in the cabinet at most": the limit word said after the place
    (r"\b(keep|hold|store|fit|stock)\s+(\d+)\s+((?:[a-z]+\s+){0,4}?)at most\b", r"\1 at most \2 \3"),
    # "we get through one roll a day": "one" is a count after a verb of using or selling
    (r"\b(sells?|sold|uses?|get through|gets through|go through|goes through|needs?|moves?|shifts?)\s+(about\s+|around\s+|roughly\s+)?"
     r"one\b(?=\s+(?:[a-z]+\s+){1,4}?(?:a|per|each|every)\s+(?:day|week|month)\b)", r"\1 \2 1"),
    (r"\bhalf a gross\b", "72"),
    (r"\b(exactly|precisely)\s+one\b", r"\1 1"),
    # "$1.40-a-week credit": a rate written as one word
    (r"(\d)-(a|per)-(day|week|month|year|night)\b", r"\1 \2 \3"),
    (r"\bper dozen\b", "per 12 units"),
    # "it turns up 2 days later": a lead time, not a difference ("a day later than last time")
    (r"\b(turns? up|arriv(?:e|es|ing)|comes?|gets? here|lands?|shows? up|delivered|is here|are here)\s+(\d+|a|one|two|three|four|"
     r"five|six|seven)\s+(days?|weeks?)\s+later\b(?!\s+than)", r"\1 in \2 \3"),
    # a cost said to be nothing: "holding cost: nil", "they charge nowt for delivery"
    (r"\b(holding(?:\s+cost)?|storage(?:\s+cost)?|ordering\s+cost|order\s+fee|set[\s-]?up(?:\s+cost)?|delivery(?:\s+fee)?|"
     r"penalty(?:\s+cost)?|shortage(?:\s+cost)?)\s*(?::|is|=|-)\s*(?:nil|none|nothing|zero|nowt)\b", r"\1 $0"),
    (r"\b(charges?|charging|want|wants)\s+(?:nowt|nothing|nought|zilch)\s+for\b", r"\1 $0 for"),
    # a pair said "respectively": "3 and 12 - days and quid, respectively" (3 days and 12 quid)
    (r"\b(\d+(?:\.\d+)?)\s+and\s+(\d+(?:\.\d+)?)\s*[-,:\u2014\u2013]*\s*([a-z]+)\s+and\s+([a-z]+),?\s+(?:respectively|in that order)\b",
     r"\1 \3 and \2 \4"),
    # "holding and shortage are 5p and £2 a unit": two names, then their two values in the same order
    (r"\b(holding|storage|shortage|penalty|setup|set-up|delivery|ordering)(?:\s+costs?)?\s+and\s+(holding|storage|shortage|penalty|"
     r"setup|set-up|delivery|ordering)(?:\s+costs?)?\s+(?:are|=|:)\s+(\S+)\s+and\s+(\S+)", r"\1 \3 and \2 \4"),
    (r"(\S+)\s+and\s+(\S+)\s*:\s*(holding|storage|shortage|penalty|setup|delivery|ordering)\s+and\s+(holding|storage|shortage|penalty|"
     r"setup|delivery|ordering)\b", r"\3 \1 and \4 \2"),  # "5p and £3: holding and shortage"

    # a fraction of the item's value said in words is a percentage: "a quarter of the bag's value per year"
    (r"\b(a quarter|a half|half|a third|a fifth|a tenth)\s+of\s+(?=(?:the|its|their|our|an?|each|every)\b[^.;]{0,30}\b(?:value|price|cost|worth))",
     lambda m: {"a quarter": "25", "a half": "50", "half": "50", "a third": "33.3", "a fifth": "20", "a tenth": "10"}[m.group(1)] + "% of "),
    (r"\b(?:a|each|one|the)\s+([a-z]+)\s+is\s+worth\s+(\d+(?:\.\d+)?)\b(?!\s*%)", r"a \1 is worth $\2"),
    # demand said with its period first: "monthly demand is poisson with mean 150" (150 a month)
    (r"\b(daily|weekly|monthly|yearly|annual)\s+(demand|sales)\b([^.;\d]{0,40}?)(\d+(?:\.\d+)?)(?!\d|\.\d|\s*(?:a|per|an|each)\s|\s*(?:-|to|and|or)\s*\d)",
     lambda m: f"{m.group(2)}{m.group(3)}{m.group(4)} a " + {"daily": "day", "weekly": "week", "monthly": "month",
                                                             "yearly": "year", "annual": "year"}[m.group(1)]),
    # what is left unsold is the subject, not a negation: "anything not cooked is binned" (anything uncooked)
    (r"\b(anything|everything|whatever|stuff)\s+not\s+(sold|cooked|used|eaten|served|taken|"
     r"bought|picked up|collected)\b", r"\1 un\2"),

    # a pack described by its weight or volume names the counting unit, never a value: "50 lb sacks", "25 kg bags"
    (r"\b\d+(?:\.\d+)?\s*-?\s*(?:lb|lbs|kg|kilo|g|oz|l|litre|liter|ml|gallon|pound)s?\s*-?\s*(?=(?:sacks?|bags?|tubs?|bottles?|ones|"
     r"cans?|tins?|jars?|box(?:es)?|drums?|cases?|packs?|buckets?|kegs?|rolls?|blocks?|pails?|jugs?|crates?)\b)", ""),
    # stock on hand is no parameter: "3 left, nothing coming" (a time left keeps its unit: "30 days left")
    (r"\b\d+\s+(?!(?:days?|weeks?|months?|years?|hours?|minutes?)\b)(?:[a-z]+\s+)?left\b(?=\s*(?:[,.;!?]|$|on the|in the (?:shop|store|"
     r"back|fridge|box)|over|and|but|,))", " some left"),
    # a field named as a question and then answered: "Max per order? 45."
    (r"(?:^|(?<=[.!\n]\s))(\W*(?:max\w*|min\w*|lead[\s-]?time|capacity|storage|holding(?:\s+cost)?|penalty|set[\s-]?up(?:\s+cost)?|"
     r"order(?:ing)?\s+(?:fee|cost)|delivery\s+fee|horizon|risk(?:\s+tolerance)?)\b[^?.!\n]{0,30})\?\s+(\d+(?:\.\d+)?)\b",
     r"\1: \2"),
    (r"\bwiat(s|ing|ed)?\b", r"wait\1"),  # short typos the keyword matcher leaves (under 5 letters)
    (r"\b(go|goes|went) of\b(?=\s*(?:[.,;!?]|$))", r"\1 off"),  # "nothing ever goes of"
    # a store that "takes 40" holds 40 (a duration needs its unit: "the van takes 2 days")
    (r"\b(tank|fridge|freezer|chiller|cooler|shelf|shelves|rack|racking|cellar|shed|cabinet|cupboard|cupbord|cuboard|locker|"
     r"safe|store ?room|stock ?room|back ?room|work ?room|bunker|wall|"
     r"warehouse|yard|bin|cage|display case|counter|feed store|store|barn|garage|loft|hut)((?:,? which|,? that)? (?:only |still |just )?|'ll |\s+will |\s+can )"
     r"(?:takes|keeps|accommodates|take|hold|fit)\b"
     r"(?!\s+(?:about\s+)?(?:\d+|" + _NUMWORD + r")\s*(?:days?|weeks?|hours?))"
     r"(?=\s+(?:only\s+|up to\s+|about\s+|around\s+)?(?:\d|(?:" + _NUMWORD + r")\b))", r"\1\2holds"),
    # a bare store and a bare vehicle with a count: "bunker 60, lorry 40" (the store holds 60, a load is 40)
    (r"\b(bunker|cupboard|cellar|shed|store ?room|stock ?room|back ?room|walk-in|silo)\s+(\d+)\b(?!\s*(?:days?|weeks?|"
     r"hours?|months?|%|[$\u20ac\u00a3]|dollars?|pounds?|euros?|bucks)\b)", r"\1 holds \2"),
    (r"\b(lorry|truck|van|ute|trailer|barge)\s+(\d+)\s*(?=[.,;!]|$)", r"\1 at most \2 per load"),
    (r"\bb4\b", "before"),  # text-speak: "b4 i forget" (never a 4)
    (r"\b(\d+)\s*(?:dyas|dasy|dys|dais|dayz)\b", r"\1 days"),  # short typos the keyword matcher leaves (under 5 letters)
    (r"(?<![\d,.])(\d{1,3}),(\d{2})(?![\d,])", r"\1.\2"),  # a decimal comma: "17,50 now" is 17.50 (1,500 stays)
    # ... and one decimal before a money word or after a symbol: "2,5 cents", "€3,5" (a list "2,5 and 7" stays)
    (r"(?<![\d,.])(\d{1,3}),(\d)(?=\s*(?:cents?|centimes?|pence|euros?|eur|\u20ac)\b)", r"\1.\2"),
    (r"([\u20ac\u00a3$])\s*(\d{1,3}),(\d)(?![\d,])", r"\1\2.\3"),
    # thousands written "1 200 yen", "Rp 150 000", "Rp 150.000", "25.000 rupiah" (a dot before exactly three digits
    # that are not followed by more digits, after a currency or before one; "0.125" and "2.5" stay decimals)
    (r"(?:(?<=rp )|(?<=rp\. )|(?<=idr )|(?<=rp)|(?<=[$\u20ac\u00a3\u00a5\u20b9\u20b1] )|(?<=[$\u20ac\u00a3\u00a5\u20b9\u20b1]))"
     r"([1-9]\d{0,2})[ .\u00a0\u202f](\d{3})(?![\d])", r"\1\2"),
    (r"(?<![\d.,])([1-9]\d{0,2})[ .\u00a0\u202f](\d{3})(?=\s*(?:rupiah|rp|idr|kyat|dong|vnd|rials?|tomans?|birr|won|yen|"
     r"pesos?|shillings?|naira)\b)", r"\1\2"),
    (r"(?<![\d.,$])([1-9]\d{0,2}(?:[. \u00a0\u202f]\d{3})+)(?=\s+(?!(?:times?|days?|weeks?|months?|years?|hours?|"
     r"minutes?|am|pm|and|or|to)\b)[a-z\u00c0-\u024f])", lambda m: re.sub(r"[. \u00a0\u202f]", "", m.group(1))),  # "3.000 bearings"
    (r"(?<![\d.,$])([1-9]\d{0,2}(?:[ \u00a0\u202f]\d{3})+)(?=\s*(?:[.,;!?)]|$))",
     lambda m: re.sub(r"[ \u00a0\u202f]", "", m.group(1))),  # "... and our store in town 20 000."
    (r"(?<![\d.,$])([1-9]\d?(?:,\d\d)+,\d{3})(?![\d,])", lambda m: m.group(1).replace(",", "")),  # "1,20,000 sachets"
    (r"(?<![\d.,$])(\d+)\s+mil\s+(?=[a-z\u00c0-\u024f])", lambda m: f"{int(m.group(1)) * 1000} "),  # "5 mil pecas"
    (r"\b(\d+)[\s-]+days?\s+wait\b", r"lead time \1 days"),  # "2 day wait": the delivery, not customers waiting
    (r"\b(?:a|one|\d+)\s+(?:days?|weeks?)\s+(?:quicker|faster|slower|longer|shorter|earlier|later|sooner)\b",
     " a bit different "),  # "it's a day quicker now": a difference, never a value
    (r"\b(?:you|u) said (?:it was |it's |its )?\d+(?:\.\d+)?\s*(?:days?|weeks?)?\s*,?\s*but\b", " but"),
    (r"\bthe (?:morning|evening|afternoon) after (?:i|we) (?:order|place)\w*\b", "1 day"),
    (r"\b(?:if |when )?(?:i|we) order (?:it |them )?the (?:night|evening|day) before\b", "lead time 1 day"),
    (r"\bday after tomorrow\b", "2 days"),
    (r"\bzero (?=variation|variance|change|spread|difference|fluctuation|waste|spoilage|wastage|expiry)", "no "),  # not a number
    (r"\b(\d+)\s+(?:[a-z]+\s+)?one day,?\s+(?:and\s+|then\s+|but\s+)?(\d+)\s+the next\b", r"\1 to \2 a day"),  # "5 one day and 20 the next"
    (r"\b(?:from\s+)?one day to the next\b|\bfrom day to day\b", " day to day "),  # not "next day" = 1 day
    (r"\bmornin'?(?=\s|$)", "morning"),
    (r"\b(?:the\s+)?(?:next|following)[\s-]+(?:(?:business|working|week)[\s-]?)?(?:day|morning)\b", "1 day"),
    # "50 arriving tomorrow" is stock on its way; "I'll give you the lead time tomorrow" is a promise: no delivery time
    (r"\b(\d+\s+(?:more\s+)?(?:[a-z]+\s+)?)(?:arriving|coming(?:\s+in)?|due|landing|expected|being delivered)\s+"
     r"(?:tomorrow|tmrw|tmr|2moro|2morrow|tomoz)\b", r"\1in transit"),
    (r"(\b(?:i'll|i will|we'll|we will|i can|we can|let me|i'm going to|i am going to)\s+(?:[\w']+\s+){0,10}?)"
     r"(?<!back )(?<!again )(?:tomorrow|tmrw|tmr|2moro|2morrow|tomoz)\b", r"\1 another time"),
    (r"(?<!back )(?<!again )\b(?:tomorrow|tmrw|tmr|2moro|2morrow|tomoz)\b", "1 day"),  # not "come back tomorrow"
    (r"\bthe day after\b", "1 day"),
    (r"\bovernight\b", "1 day"),
    (r"\bsame[\s-]day\b", "0 days"),
    # "right away" is a lead time only when it is about the delivery ("it arrives right away")
    (r"\b(arriv\w*|deliver\w*|comes?|shows? up|get (?:it|them)|ships?|here)\s+(?:\w+\s+)?(?:instantly|immediately|"
     r"right away|straight away)\b", r"\1 0 days"),
    (r"\b(?:instantly|immediately|right away|straight away|right now|asap)\b", " soon "),
    (r"\bno lead[\s-]?time\b", "lead time 0 days"),
    # "14 rolls a fortnight" is a rate like "14 rolls a week" (not "1 week to a fortnight", a span)
    (r"\b(\d+(?:\.\d+)?\s+(?:(?!(?:days?|weeks?|months?|to|or|and|in|within|every)\b)[a-z]+\s+){0,2})a\s+fortnight\b",
     r"\1per fortnight"),
    (r"(?<!per )(?<!each )(?<!every )\b(?:a\s+)?fortnight\b", "14 days"),  # "per fortnight" stays a rate
    # half a year is 182 or 183 days: two candidates, so the agent asks (never a silent pick)
    (r"\bhalf (?:a|one|the) year\b|\bhalf[\s-]year\b", "182 or 183 days"),
    (r"\b(?:the\s+)?(?:next|coming|following|upcoming)\s+quarter\b", "next 90 days"),  # "next" keeps the horizon cue
    (r"\b(?:the\s+)?(?:next|coming|following|upcoming)\s+(week|month|year)\b", r"next 1 \1"),
    (r"\bhalf (?:a )?dozen\b", "6"),
    (r"\ba couple(?: of)?(?= dozen)\b", "2"),
    # "a couple of days" is two or three to most people: a vague span is asked, never stored as 2
    (r"\ba couple(?: of)?(?= (?:days?|weeks?|months?)\b)", "2 or 3"),
    (r"\ba couple(?: of)?\b", "2"),
    # vague: two candidates, so a field gets asked, never a silent 3 ("a few risks", "a few customers" stay words)
    (r"\ba few(?= (?:more )?(?:days?|weeks?|months?|units?|items?|pieces|boxes|dollars|bucks|quid|euros|cents)\b)",
     "2 or 3"),
    # "Perishable? Nope", "perishable = false" (a config line): the answer names the field
    (r"\bperishable[\"']?\s*(?:\?|:|=)\s*[\"']?(?:no|nope|nah|false|not really|never|n)\b[\"']?", "not perishable."),
    (r"\bperishable[\"']?\s*(?::|=)\s*[\"']?(?:yes|true|y)\b[\"']?", "perishable."),
    (r"(\d(?:\.\d+)?\s*(?:cents?|p|pence)?)\s+(?:a|per)\s+dozen\b", r"\1 per 12 units"),  # "84p a dozen a week"
    (r"\b(?:a|one) dozen\b", "12"),
    (rf"\b(\d+|an?|{_SPAN_WORDS}) fortnights? and (\d+|an?|{_SPAN_WORDS}) days?\b",
     lambda m: f"{14 * _small(m.group(1)) + _small(m.group(2))} days"),  # "a fortnight and a day"
    # "one week and three days" (after the number words), "a week and a day": one span in days
    (rf"\b(\d+|an?|{_SPAN_WORDS}) weeks? and (\d+|an?|{_SPAN_WORDS}) days?\b",
     lambda m: f"{7 * _small(m.group(1)) + _small(m.group(2))} days"),
    (rf"\b(\d+|an?|{_SPAN_WORDS}) and a half (thousand|hundred)\b",
     lambda m: f"{(_small(m.group(1)) + 0.5) * (1000 if m.group(2) == 'thousand' else 100):g}"),
    (r"(?<![\w.])\d+(?:\.\d+)?\s?(?:cl|ml)\b", "bottle-size"),  # "the 70cl", "500ml bottles": a product size
    # "1 coil every 2 days": a daily rate ("every 2 days" is no lead time)
    (r"\b(\d+(?:\.\d+)?|one)\s+((?:[a-z]+\s+)?)every\s+(\d+)\s+days\b",
     lambda m: f"{_small(m.group(1)) / float(m.group(3)):g} {m.group(2)}a day" if float(m.group(3)) > 0 else m.group(0)),
    (r"\ba score(?= (?:a|an|per|each|every|for)\b)", "20"),  # "charges a score a delivery"
    (r"\bhalf a (?:dollar|buck|quid)\b", "$0.5"),
    (r"\ba (?:dollar|buck|quid)\b", "$1"),
    # "a quarter" is 25 cents when it is priced per something, otherwise a quarter of a year (see below)
    (r"(?<![\d.]\s)(?<![\d.])\ba quarter(?=\s+(?:(?:per|a|an|each|every|for each|for every|on each|on every)\s+(?:lost\s+|missed\s+)?"
     r"(?:unit|item|piece|one|box|bottle|case|day|night|sale|order|delivery))\b)", "$0.25"),
    (r"\b(?:delivery|shipping|ordering|it)(?: is|'s)? (?:included|free|on (?:them|the house))\b", "setup $0"),
    (r"\b(?:costs?|is|it's)\s+(?:us\s+|me\s+)?(?:nothing|nowt)\b", "costs $0"),
    (r"\b(?:i |we )?pay (?:nothing|nowt)\b|\bnowt to pay\b", "costs $0"),
    (r"\bno (?:fixed |setup |set-up |ordering |order |delivery )?(?:fee|cost|charge)s?\b", "setup $0"),
    (r"\b(?:to get|for|qualify for|qualifies for|get|earn) free (?=shipping|delivery|postage|freight)", " conditional "),
    (r"\bfree\b(?!\s+(?:to|trial|version|account|plan|time|tier|sample|app)\b)", "$0"),  # not "is this free to use?"
    # "a 6 pound handling charge": pounds as money only before a charge word (else it may be a weight)
    (r"\b(\d+(?:\.\d+)?) pounds? (?=(?:\w+ )?(?:charge|fee|cost|fine|penalty|surcharge)s?\b)", "\u00a3\\1 "),
    (r"(?<!or )\bminus\s+(?=\d)", "-"),
    (r"\b(\d+(?:\.\d+)?)k\b", lambda m: f"{float(m.group(1)) * 1000:g}"),  # "1.2k bits"
    (r"\b(0|\d+(?=,\d{1,2}\s?(?:[\u20ac$\u00a3]|eur|euro)))[,](\d{1,2})\b(?!,?\d)", r"\1.\2"),  # "0,05 €"
    (r"(?<![$\u20ac\u00a3\d.,])(\d+(?:\.\d+)?)\s?([\u20ac$\u00a3])(?!\d)", r"\2\1"),  # "30 €", "15$"
    # money written the way people write it: pence and cents letters, coin and note names, currency codes
    (r"\b(\d+(?:\.\d+)?)\s?(?:p|c|ct|cts|pence|penny|paise)\b(?!\.?\s?m\b)", r"\1 cents"),
    (r"\ba (?:tenner)\b", "$10"), (r"\ba (?:(?:flat|single)\s+)?(?:fiver)\b", "$5"),
    # British and American money slang: a pony, a bullseye, a ton, a monkey, a nicker; a sawbuck, a Benjamin, two bits
    (r"\ba (?:pony)\b(?=\s+(?:a|an|per|each|every|for)\b)", "$25"), (r"\ba (?:bullseye)\b", "$50"),
    (r"\ba ton\b(?=\s+(?:a|an|per|each|every|for)\s+(?:drop|delivery|shipment|order|load|run|trip|time|go|consignment)\b)",
     "$100"), (r"\ba monkey\b(?=\s+(?:a|an|per|each|every|for)\b)", "$500"), (r"\ba nicker\b", "$1"),
    (r"\ba sawbuck\b", "$10"), (r"\ba benjamin\b", "$100"), (r"\ba c-note\b", "$100"), (r"\ban\.?\s+ayrton\b", "$10"),
    (r"\ba\.?\s+lady\.?\s+godiva\b", "$5"),
    (r"\ba\.?\s+fin\b", "$5"), (r"\ba\.?\s+jackson\b", "$20"), (r"\ba\.?\s+pavarotti\b", "$10"), (r"\ba lobster\b", "$20"),
    (r"\ba pineapple\b", "$50"), (r"\ba quarter of a (?:penny|cent)\b", "0.25 cents"),
    (r"\ba\.?\s+hamilton\b", "$10"), (r"\ba\.?\s+lincoln\b", "$5"), (r"\ba\.?\s+grant\b", "$50"), (r"\ba\.?\s+franklin\b", "$100"),
    (r"\ba cockle\b", "$10"), (r"\ba tenth of a (?:penny|cent)\b", "0.1 cents"), (r"\ba fifth of a (?:penny|cent)\b", "0.2 cents"),
    # a flat level said with a hedge is no statement that demand never varies: asked
    (r"\b(?:pretty much|roughly|more or less|about|near enough|mostly|fairly)\s+the same (?:every|each) day\b", "similar most days"),
    # "walk-ins don't", "fifty-fifty whether they wait": one group waits, another does not
    (r"(\bwait\w*),\s+((?:the\s+)?[\w-]+(?:\s+[\w-]+)?)\s+(don'?t|won'?t|do not|will not)\s*(?=[.!;]|$)", r"\1 but \2 \3 wait"),
    (r"\b(?:it'?s\s+)?(?:about\s+)?fifty[\s-]fifty\s+whether\s+they\s+wait(?:\s+for\s+it)?\b", "some wait but others won't wait"),
    (r"\ba (\d+)[\s-](month|week|day) job\b", r"plan for \1 \2s"),
    (r"\btrow\b", "throw"), (r"\bhols\b", "holds"), (r"\bchg\b", "charge"),
    # "Holding/shortage: 4p/£1.20 per unit": two names and their two values, slash-paired
    (r"\b(holding|storage|shortage|penalty|setup|delivery|ordering)\s*/\s*(holding|storage|shortage|penalty|setup|delivery|ordering)\s*:"
     r"\s*([^/\n]{1,12}?)\s*/\s*(\S+)", r"\1 \3 and \2 \4"),
    # a yes/no question answered in a form: "Goes off? no", "Perishable: yes"
    (r"\b(?:goes off|spoils|perishable|perishes|expires)\s*[?:]\s*(?:no|nope|n)\b", "does not spoil"),
    (r"\b(?:goes off|spoils|perishable|perishes|expires)\s*[?:]\s*(?:yes|yep|y)\b", "perishable"), (r"\btwo bits\b", "25 cents"), (r"\bfour bits\b", "50 cents"),
    (r"\bhalf a (?:penny|cent|pence)\b", "0.5 cents"),
    (r"\ba (?:toonie)\b", "$2"), (r"\ba (?:loonie)\b", "$1"), (r"\ba (?:dime)\b", "10 cents"),
    (r"\ba (?:nickel)\b", "5 cents"), (r"\ba (?:penny|cent)\b", "1 cents"), (r"\ba grand\b", "$1000"),
    (r"[\u20b9\u00a5\u20a9\u20ba\u20b1\u20a6\u20b4\u20aa]", "$"),
    (_CODES_BEFORE, "$"), (_CODES_AFTER, r"$\1"),
]
_DURATION_WORDS = "day|week|month|year|quarter"
# "a week" -> "1 week" only where it is a duration, not a rate ("42 a week")
_A_PERIOD = re.compile(rf"\b(?:a|an)\s+(full\s+)?({_DURATION_WORDS})\b")
_RATE_BEFORE = re.compile(r"(?:\d[^\s,;]*(?:\s+(?!and\b|but\b|takes?\b|took\b|needs?\b|arrives?\b|comes?\b)[a-z]+){0,4}|\b(?:units?|items?|pieces?|boxes|bottles|loaves|cents|dollars|bucks|each|one|"
                          r"customers|crates|cases|stems|sandwiches|per unit|an? unit|an? item))\s*$")


def _a_period(text: str) -> str:
    out, last = [], 0
    for m in _A_PERIOD.finditer(text):
        before = text[max(0, m.start() - 80): m.start()]
        if _RATE_BEFORE.search(before):
            continue
        out.append(text[last: m.start()])
        out.append(f"1 {m.group(2)}")
        last = m.end()
    out.append(text[last:])
    return "".join(out)


# "a buck fifty" -> "$1 50" after the idioms -> "$1.50"; "3 dollars 50", "2 bucks and 25 cents", "$4 and 20 cents"
_MONEY_AND_CENTS = re.compile(
    r"(?:\$\s?(\d+)|\b(\d+)\s+(?:dollars?|bucks?|quid|euros?|pounds?))(?:\s+and)?\s+(\d{2})\b(?!\.\d)"
    r"(\s*(?:cents?|pence|p)\b)?(?!\s*(?:%|-|to\b|or\b|and\b|times\b|days?\b|weeks?\b|months?\b|years?\b|"
    r"units?\b|items?\b|pieces?\b|boxes\b|cases?\b|customers?\b|orders?\b|deliveries\b))")


def _money_and_cents(m: re.Match[str]) -> str:
    dollars = m.group(1) or m.group(2)
    return f"${int(dollars)}.{m.group(3)}"


# list markers "1." "2)" "(3)" "a)" at the start of a line or after a sentence end are not quantities
_LIST_MARKER = re.compile(r"(?:^|(?<=\n)|(?<=[.!?:;])\s)[ \t]*(?:\(?\d{1,2}[.)]|\(\d{1,2}\)|[-*\u2022])[ \t]+(?=\S)")
# a capitalised word after these is a name ("they go to Domino's", "from Bamberg"), not a new sentence
_NAME_BEFORE = ("to", "at", "from", "in", "on", "by", "of", "with", "for", "the", "like", "via", "near", "into")
# "ordering fee $7 Nothing is thrown away": a capitalised word after a word or number without punctuation
# starts a new sentence (names of days, months and distributions excepted)
_RUN_ON = re.compile(r"(?<=[a-z0-9%)])" + "".join(rf"(?<!\b{w})" for w in _NAME_BEFORE) + r"[ \t]+(?=(?!(?:(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)s?|"
                     r"January|February|March|April|May|June|July|August|September|October|November|December|"
                     r"Poisson|Gaussian|Normal|Uniform|Christmas|Easter|I|Street|Road|Lane|Avenue|Way|Drive|Close|Square|"
                     r"Rs|Rp|Ksh|Tk)\b)"
                     r"(?![A-Z][a-z]+ (?:Street|St|Road|Rd|Lane|Avenue|Ave|Way|Drive|Close|Square)\b)[A-Z][a-z])")
# "a week... no wait, eight days", "oh wait, 6": the interjection is a correction cue, not customers waiting
_INTERJECTION = re.compile(r"(?:\.{2,}|\u2026)?\s*\b(?:no|oh|hang on|hold on|erm|um|uh)\s*,?\s*wait\b\s*[,.!:\-\u2026]*\s*|"
                           # "shelf fits 50. hmm, more like 45", "24 a week - scratch that, 28"
                           r"[.!,]?\s*(?:hmm+|well|actually)\s*,?\s*more\s+like\s+(?=[$\u20ac\u00a3]?\d)|"
                           r"\s*[,;\u2014\u2013-]\s*scratch that\s*[,:]?\s*(?=[$\u20ac\u00a3]?\d)|"
                           r",\s*(?:er|erm|um|uh)\s*,\s*(?=[$\u20ac\u00a3]?\d+\s+actually\b)|"  # "max order 60, er, 50 actually"
                           r",\s*well,\s*(?=[$\u20ac\u00a3]?\d)|"  # "the fee is £20, well, £22 since April"
                           # "fee's 18. sorry, 16", "4 cents a stem. scratch that, 5": the correction opens the next sentence
                           r"[.!]\s*(?:sorry|oops|no|scratch that|correction)\s*[,:!]?\s*(?=[$\u20ac\u00a3]?\d)|"
                           r"(?:^\s*|(?<=[.!?])\s*)wait\s*[,!:\-\u2026]+\s*|"
                           # "fee's 20, wait, they put it up to 22", "5 days, no hang on, 6": mid-sentence interjections
                           r"(?:(?<=[,;])|\s[-\u2013\u2014]|(?:^|(?<=[.!?]))\s*(?=no\s|hang|hold))\s*(?:no\s+)?(?:wait|hang on|hold on)"
                           r"(?:\s*[,!:\-\u2013\u2014\u2026]+\s*|\s+(?=sorry\b|no\b))(?:no\s*,?\s*|sorry\s*,?\s*)?|"
                           r"(?:\.{2,}|\u2026)\s*(?:no|sorry|actually)\b,?\s*(?:(?:hang on|hold on|wait)\b\s*[,!:]*\s*)?|"
                           r"\b(?:no|sorry)\s*,\s*(?:make (?:it|that)|i mean)\b,?\s*|[,;]\s*(?:sorry|oops|no)\s*,\s*(?=[$\u20ac\u00a3]?\d)|"
                           r",?\s*\b(?:uh|um|er|erm|oh)\s*,?\s*no\b\s*[,.!-]*\s*|[,;-]\s*no\s*,\s*(?=[$\u20ac\u00a3]?\d|[a-z]+ (?:days?|units?))|"
                           rf"(?:,\s*|\b(?:actually|no|sorry|oh|or)\s*,?\s*)make (?:it|that)\s+(?=[$\u20ac\u00a3]?\d|(?:a|an|{_NUMWORD})\b)")


_EMOJI = re.compile("[\U0001F300-\U0001FAFF\u2600-\u27BF\u2B50\u2B55]+\\s*\ufe0f?")
# a lone marker opening a message whose words carry their own number: an item pasted from a numbered list
# ("3. Oh and we plan 60 days ahead" answers a question with 3: only the ")" form is a marker alone)
_LONE_MARKER = re.compile(r"^\s*\(?\d{1,2}\)\s+(?=[A-Za-z][^\n]*\d)")
_INLINE_MARKER = re.compile(r"(?:^|(?<=\s))(\d{1,2})[.)][ \t]+(?=[A-Za-z])")


def _inline_list(text: str) -> str:
    """ "1. lead time 5 days 2. order fee 8 3. max 40": markers numbered 1, 2, 3, ... in one line become ". "."""
    marks = list(_INLINE_MARKER.finditer(text))
    run = [m for i, m in enumerate(marks) if int(m.group(1)) == i + 1]
    if len(run) < 2 or len(run) != len(marks):
        return text
    for m in reversed(run):
        text = text[: m.start()] + ". " + text[m.end():]
    return text


def _cells(line: str) -> list[str]:
    sep = "\t" if "\t" in line else "|"
    return [c.strip() for c in line.strip().strip("|").split(sep)]


def _one_row_table(text: str) -> str:
    """A pasted table, a header and one row ("Item<TAB>Lead time (days)<TAB>Order fee" / "Ejectors<TAB>2<TAB>120"),
    as one labelled sentence per cell ("Lead time (days) 2. Order fee 120."); markdown rules ("|---|") skipped.
    Several data rows (one per item) stay as they are: which item's values count is asked."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not re.fullmatch(r"[\s|:-]+", ln)]
    if len(lines) != 2 or not all(("\t" in ln or ln.count("|") >= 2) for ln in lines):
        return text
    head, row = _cells(lines[0]), _cells(lines[1])
    if len(head) != len(row) or len(head) < 2 or any(re.search(r"\d", h) and not re.search(r"[a-z]", h, re.I)
                                                      for h in head):
        return text
    return " ".join(f"{h.replace('_', ' ')} {c}." for h, c in zip(head, row, strict=True) if h and c)  # "order_fee"


# a name with a number in it ("A4 reams", "CO2 cylinders", "MP3 players"): the digit is no value (spelled out so
# that nothing reads it); one letter only for paper sizes A-C, since "K50", "Q350" or "E2" are money
_CODE = re.compile(r"(?<![\w$\u20ac\u00a3.,])([A-C]|[A-Z]{2})(\d)(?![\w]|[.,]\d)")  # not "K500" / "Q350" (money)
_DIGIT_NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


# a dotted config key ("supplier.lead.days=4") and a camelCase one ("leadTime: 5", GraphQL): words the reader knows
_DOTTED_KEY = re.compile(r"\b[a-z_]+(?:\.[a-z_]+)+(?=\s*[=:]\s*\d)")
_CAMEL_KEY = re.compile(r"\b([a-z]+(?:[A-Z][a-z]+)+)(\s*[=:]\s*\d)")
# LaTeX maths: "$L = 3$ days, $K = £20$" (the dollar signs are delimiters, not money)
_LATEX_MATH = re.compile(r"\$\s*([A-Za-z](?:_\{?\w+\}?)?\s*=\s*[^$\n]{1,20}?)\s*\$")
# an org-mode property drawer line (":LEAD_TIME: 3d"): a key and its value
_ORG_PROPERTY = re.compile(r"^[ \t]*:(?!PROPERTIES:|END:)([A-Za-z][\w-]*):[ \t]+", re.M)
# the manager's own counting unit named ("we count in pallets", "the IBC is our unit"): a cost per one is per unit
_OWN_UNIT = re.compile(r"\b(?:we|i)\s+(?:count|counts|counted|measure|stock|sell)\s+(?:it\s+|them\s+|everything\s+)?(?:in|by)\s+"
                       r"(?:the\s+)?([a-z]+?)s?\b|\b(?:the|a|one|our)\s+([a-z]+)\s+is\s+our\s+unit\b|\bour\s+unit\s+is\s+(?:the\s+|a\s+|one\s+)?"
                       r"([a-z]+?)s?\b", re.I)


def _own_unit(text: str) -> str:
    m = _OWN_UNIT.search(text)
    if m is None:
        return text
    unit = next(g for g in m.groups() if g).lower()
    if unit in ("unit", "item", "piece", "the", "bulk", "weight"):
        return text
    return re.sub(rf"\b(per|a|an|each|every|for each|for one|/)\s*{unit}(?:\s+position)?\b(?!s)", r"\1 unit", text, flags=re.I)


# the manager asks what to order now: the numbers said with it are today's stock
_ORDER_NOW = re.compile(r"\border how many\b|\bhow many (?:should|do|shall) (?:i|we) (?:order|buy|get)\b|"
                        r"\bwhat'?s? (?:is )?my order\b|\border or not\b|\bhow much (?:should|do) (?:i|we) order\b")
# the stock made or fetched in-house, so a "no wait" is about the lead time, not a correction
_OWN_MAKING = re.compile(r"\b(?:our own|ourselves|in-house|we (?:make|bake|fill|mix|brew|cut|grow|pick))\b")
# "there's no wait at all between deciding and having it": a lead time of 0
_NO_WAIT_BETWEEN = re.compile(r"\b(?:there'?s|there is)\s+no\s+waiting\s+(?:on|for)\s+(?:anyone|anybody|a supplier|the supplier|deliveries)\b|"
                              r"\bno wait(?:ing)?(?:\s+at\s+all|\s+whatsoever)?\s+between\s+(?:ordering|deciding|placing|asking|"
                              r"cutting|calling)\b|\b(?:there'?s|there is)\s+no\s+wait(?:ing)?\s+(?:at all\s+)?for\s+(?:it|them)\b")


def _prepare(text: str) -> str:
    """Structure before case is lost: list markers removed, run-on sentences split, "R150" (rand) as money."""
    text = _ORG_PROPERTY.sub(r"\1: ", text)
    text = re.sub(r"\s*:=\s*", " = ", text)  # a Makefile's "ORDER_FEE := 18"
    text = re.sub(r"\s*\.{3,}\s*(?=[$\u20ac\u00a3]?\d)", ": ", text)  # a receipt's "DELIVERY CHG ........ 8.50"
    # a form's checkboxes (before emoji become separators): the ticked one answers, the empty ones are not said
    text = re.sub(r"\u2610[^\n\u2611\u2612]*", " ", text)
    text = re.sub(r"[\u2611\u2612]\s*", " ", text)
    text = _DOTTED_KEY.sub(lambda m: m.group(0).replace(".", " "), text)  # "supplier.lead.days=4"
    text = _CAMEL_KEY.sub(lambda m: re.sub(r"(?<=[a-z])(?=[A-Z])", " ", m.group(1)).lower() + m.group(2), text)
    text = _own_unit(text)
    text = _one_row_table(text)
    text = re.sub(r"(?<![\w$])R\s?(?=\d)", "$", text)
    text = _CODE.sub(lambda m: m.group(1) + "".join(_DIGIT_NAMES[int(d)] for d in m.group(2)), text)
    text = _EMOJI.sub(" , ", text)  # "safe holds 40 💍 supplier max 15": emoji between items separate them
    text = _inline_list(text)  # first: "1) fee 18  2) lt 2 days  3) space for 500" is one list, not a lone "1)"
    if len(_LIST_MARKER.findall(text)) >= 2:  # a list has two items at least; a lone "3." is an answer
        text = _LIST_MARKER.sub(" ", text)
    elif _LONE_MARKER.match(text):  # "2) delivery takes 3 days": one item of a list, answered alone
        text = _LONE_MARKER.sub(" ", text, count=1)
    return _RUN_ON.sub(". ", text)


def normalise_text(text: str) -> str:
    """Lower-case, rewrite idioms and number words into digits, keep positions meaningful for scanning."""
    s = " " + _prepare(_money_to_dollars(_LATEX_MATH.sub(r" \1 ", str(text)))).lower().replace("\u2019", "'") + " "
    s = fix_typos(s)
    s = _NO_WAIT_BETWEEN.sub("lead time 0 days ", s)  # before "no wait" reads as a correction cue
    if _ORDER_NOW.search(s):  # "Got 17 on the shelf, 30 on the lorry. Order how many?": stock now, never a parameter
        s = re.sub(r"\b\d+\s+(on the (?:shelf|shelves|lorry|truck|van|way|boat|road)|in the (?:post|back(?: room)?|fridge|"
                   r"stockroom|cupboard|shop))\b", r"some \1", s)
        s = re.sub(r"\b(on hand|in transit|on order)\s*[:=]?\s*\d+\b", r"\1 some", s)
    if _OWN_MAKING.search(s):  # "we fill the machine from our own tank, there's no wait at all"
        s = re.sub(r"\b(?:there'?s\s+|so\s+)no wait(?:ing)?(?: at all)?\b", " lead time 0 days", s)
    s = _INTERJECTION.sub(", i meant ", s)  # a correction cue inside the same sentence: the later value wins
    for pattern, repl in _IDIOMS:
        s = re.sub(pattern, repl, s)
    s = re.sub(r"\b(\d+(?:\.\d+)?)\s+(hundred|thousand|million|lakh|lakhs|crore|crores)\b",
               lambda m: f"{float(m.group(1)) * _SCALE_WORDS[m.group(2)]:g}", s)  # "2 thousand", "2 lakh"
    s = _spoken_prices(s)
    s = _replace_word_numbers(s)
    # once number words are digits: "a fortnight and a day" (14 days and 1 day), "two and a half pence", "forty smackers"
    s = re.sub(r"\b(\d+) days and (\d+) days?\b", lambda m: f"{int(m.group(1)) + int(m.group(2))} days", s)
    s = re.sub(r"\b(\d+(?:\.\d+)?)\s+(?:smackers|bones)\b", r"$\1", s)
    # "the delivery's twenty-five pounds": pounds next to a fee word are money (else they may be a weight)
    s = re.sub(r"\b(delivery|fee|carriage|postage|shipping|freight|charge)('s|\s+is)\s+(\d+(?:\.\d+)?)\s+pounds?\b", r"\1\2 $\3", s)
    s = _money_to_dollars(s)  # "three hundred pesos" is money too, once its words are a number
    s = _CENTS_PER_MANY.sub(lambda m: f"${float(m.group(1)) / 100:.10g} ", s)
    s = _PER_MANY.sub(lambda m: f"${float(m.group(1)) / float(m.group(3)):.10g} per {m.group(4)}", s)
    s = _drop_old_values(s)
    s = _CLOCK_TIME.sub(r"\1 at that hour ", s)
    s = re.sub(r"(?<!or )\b(?:minus|negative)\s+(?=\d)", "-", s)
    s = re.sub(r"\bplus\s+(?=\d)", "+", s)
    s = re.sub(r"\b(\d+) dozen\b", lambda m: str(int(m.group(1)) * 12), s)
    s = re.sub(r"\b(\d+) gross\b(?! (?:margin|profit|sales|revenue|income|weight|pay))",
               lambda m: str(int(m.group(1)) * 144), s)  # "the shelves fit 3 gross": 432
    s = re.sub(r"\b(\d+) and a half\b", r"\1.5", s)
    s = re.sub(r"\b(\d+)[ -]?(?:hours?|hrs?|h)\b", lambda m: f"{int(m.group(1)) // 24} days" if int(m.group(1)) % 24 == 0
               and int(m.group(1)) else m.group(0), s)
    s = _MONEY_AND_CENTS.sub(_money_and_cents, s)
    s = _a_period(s)
    s = re.sub(r"\b(\d+) (week|month|day|year)s? and a half\b", lambda m: f"{int(m.group(1)) + 0.5:g} {m.group(2)}s", s)
    s = re.sub(r"\b1 quarters?\b", "90 days", s)
    s = re.sub(r"\b(\d+) quarters\b", lambda m: f"{int(m.group(1)) * 90} days", s)
    s = re.sub(r"\b(\d+(?:\.\d+)?)\s?pence\b", r"\1 cents", s)  # "three and a half pence", once it is 3.5
    return re.sub(r"[ \t]+", " ", s)


# a value that changed: "the fee went from 5 to 7", "lead time has gone from 5 days to 9 days", "6 days (was 4)",
# "used to take 4 days, now it's 6": only the new value is a value (the old one would make a false conflict)
_VAL = r"[$\u20ac\u00a3]?\d[\d,]*(?:\.\d+)?(?:\s?(?:days?|weeks?|months?|cents|dollars|euros?|pounds?|quid))?"
_CHANGED_FROM = re.compile(r"\b((?:went|gone|go|goes|changed|moved|increased|rose|risen|jumped|raised|put|dropped|fell|"
                           r"fallen|cut|gone up|gone down|went up|went down|up|down|bumped|hiked)\s+)from\s+" + _VAL
                           + r"\s+to\s+(?=[$\u20ac\u00a3]?\d)")
_WAS_ASIDE = re.compile(r"\(\s*(?:it\s+)?(?:was|used to be|previously|before|formerly|down from|up from)\s+" + _VAL
                        + r"[^)]{0,20}\)")
_USED_TO = re.compile(r"\b(used to (?:be|take|cost|charge|run|deliver in|arrive in|come in)\s+)(?:about\s+|around\s+)?" + _VAL
                      + r"(?=[^.;!?]{0,40}?\b(?:now|these days|nowadays)\b)")


# "they come in at six", "the van gets here by 7, every morning": a time of day after an arrival verb, never a value
_CLOCK_TIME = re.compile(r"\b((?:come|comes|came|coming|arrive|arrives|arrived|arriving|turn up|turns up|show up|shows up|"
                         r"get here|gets here|is here|are here|open|opens|close|closes|drop off|drops off|land|lands|"
                         r"deliver|delivers|delivered|come in|comes in|go out|goes out)(?:\s+\w+)?)\s+(?:at|by|around|"
                         r"before|after|until|till)\s+(?:about\s+|around\s+)?\d{1,2}(?:[:.]\d{2})?"
                         r"(?=\s*(?:$|[,.;!?)](?!\d)|and\b|then\b|sharp\b|ish\b|(?:every|each) (?:morning|day|evening|night)\b|"
                         r"in the\b|on the dot\b|latest\b|at the latest\b))")
_SCALE_WORDS = {"hundred": 100, "thousand": 1000, "million": 1e6, "lakh": 1e5, "lakhs": 1e5, "crore": 1e7, "crores": 1e7}
# "it's 160, not 260": the value said first is the one meant
# "change the lead time from 4 to 6 days": only the new value is one
_CHANGE_FROM = re.compile(r"\b(change|update|set|move|put)\s+((?:the|my|our)\s+)?([a-z ]{2,25}?)\s+from\s+" + _VAL + r"\s+to\s+(?=\d)")
_NOT_OLD = re.compile(r"(?<=\d)(\s*,?\s*)not\s+" + _VAL + r"\b")


# "now 9 days, was 7, sorry", "6 days, it was 4": the old value after a comma; "lead time 4 -> 5 days": the arrow's target
_WAS_AFTER = re.compile(r"(?<=\d)(\s*(?:days?|weeks?|months?)?)\s*,\s*(?:it\s+)?(?:was|used to be|previously|formerly)\s+"
                        + _VAL + r"(?=\s*(?:[,.;!?)]|$))")
_ARROW = re.compile(r"(?<![\w.])" + _VAL + r"\s*(?:->|\u2192|=>)\s*(?=[$\u20ac\u00a3]?\d)")


# a cost per a batch of units is per unit once divided: "60 cents per 100 bags per day" is $0.006 per bag per day
_PER_MANY = re.compile(r"\$(\d+(?:\.\d+)?)\s+(per|for every|for each|every)\s+(\d{2,}|[2-9])\s+([a-z]+?)e?s\b")
_CENTS_PER_MANY = re.compile(r"(?<![\d.$])(\d+(?:\.\d+)?)\s*cents?\s+(?=(?:per|for every|for each|every)\s+(?:\d{2,}|[2-9])\s+[a-z]+s\b)")


def _drop_old_values(s: str) -> str:
    s = _ARROW.sub("", s)
    s = _WAS_AFTER.sub(r"\1", s)
    s = _NOT_OLD.sub(r"\1", s)
    s = _CHANGED_FROM.sub(r"\1to ", s)
    s = _CHANGE_FROM.sub(r"\1 \2\3 to ", s)
    s = _WAS_ASIDE.sub(" ", s)
    return _USED_TO.sub(r"\1", s)


_MAX_CLAUSE = 300
_CLAUSE_CUT = re.compile(r",\s+|\s+(?:and|but|while|whereas|so)\s+|\s+")


def split_sentences(text: str) -> list[str]:
    """Sentences split on . ; ! ? (not decimal points), each keeping its own text.

    A run-on longer than 300 characters is cut at clause boundaries (comma, "and", "but", ...; at a space as a
    last resort), so the work per sentence is bounded and reading stays linear in the message length.
    """
    parts = re.split(r"(?<!\d)[.!?;](?!\d)|(?<=\d)[.!?;](?=\s|$)|\n+", text)
    out: list[str] = []
    for p in (x.strip() for x in parts):
        while len(p) > _MAX_CLAUSE:
            cuts = [m for m in _CLAUSE_CUT.finditer(p, 0, _MAX_CLAUSE) if m.start() > 0]
            strong = [m for m in cuts if not m.group(0).isspace()]
            cut = (strong or cuts or [None])[-1]
            end, nxt = (cut.start(), cut.end()) if cut is not None else (_MAX_CLAUSE, _MAX_CLAUSE)
            out.append(p[:end].strip())
            p = p[nxt:].strip()
        if p:
            out.append(p)
    return [p for p in out if p]


@dataclass
class Quantity:
    """A number (or range) found in a sentence, with what kind of thing it measures."""

    start: int
    end: int
    value: float
    high: float | None = None  # set for ranges "2 or 3", "between 10 and 20"
    kind: str = "bare"  # money | duration | count | bare
    period: str | None = None  # rate period: day | week | month | year
    per_unit: bool = False
    days: int = 1  # duration multiplier to days
    approx: bool = False
    negated: bool = False
    text: str = ""
    suffix: str = ""
    prefix: str = ""
    raw: float = 0.0  # the number as written, before cents/duration scaling
    consumed: bool = field(default=False, repr=False)

    @property
    def is_range(self) -> bool:
        return self.high is not None and self.high != self.value


_NUM = r"\d+(?:,\d{3})+(?:\.\d+)?|\d*\.\d+|\d+"
_QTY = re.compile(
    rf"""(?P<neg>(?<![\w.)])-\s?|(?<![\w.])\+)?(?P<cur>[$\u20ac\u00a3])?\s?(?P<num>{_NUM})(?!\d)
    (?P<after>\s*(?:-\s*)?(?P<unit>cents?\b|dollars?\b|bucks?\b|quid\b|usd\b|euros?\b|
        days?\b|d\b|weeks?\b|wks?\b|months?\b|mos?\b|years?\b|yrs?\b|(?:business|working)\s+days?\b))?""",
    re.X,
)
_DUR_DAYS = {"day": 1, "d": 1, "business": 1, "working": 1, "week": 7, "wk": 7, "month": 30, "mo": 30, "year": 365, "yr": 365}
_PERIOD_WORDS = [
    (r"(?<!\w)(?:per|an|each|every|/)\s*(?:[a-z]+\s+){0,3}?hour\b|\bhourly\b|/\s*h(?:ou)?r\b", "hour"),
    (r"(?<!\w)(?:per|a|an|each|every|/)\s*(?:[a-z]+\s+){0,3}?(?:day|night)\b|\bdaily\b|\bnightly\b|/\s*d(?:ay)?\b", "day"),
    (r"(?<!\w)(?:per|a|an|each|every|/)\s*(?:[a-z]+\s+){0,3}?week\b|\bweekly\b|/\s*w(?:ee)?k\b", "week"),
    (r"(?<!\w)(?:per|each|every)\s*(?:[a-z]+\s+){0,3}?fortnight\b|\bfortnightly\b", "fortnight"),
    (r"(?<!\w)(?:per|a|an|each|every|/)\s*(?:[a-z]+\s+){0,3}?month\b|\bmonthly\b|/\s*mo(?:nth)?\b", "month"),
    (r"(?<!\w)(?:per|a|an|each|every|/)\s*(?:[a-z]+\s+){0,3}?quarter\b|\bquarterly\b", "quarter"),
    (r"(?<!\w)(?:per|a|an|each|every|/)\s*(?:[a-z]+\s+){0,3}?year\b|\byearly\b|\bannual(?:ly)?\b", "year"),
]
_PREFIX_PERIOD = [(r"\bfor (?:1|one) (day|week|month|year)\b(?:\s+\w+){0,3}\s*$", ""),  # "for a month costs $1.20"
                  (r"\bfor every (day|week|month)\b[^.;$\d]{0,40}$", ""),  # "for every week an order's late we give them 70p"
                  (r"\bdaily\s+(?:\w+\s+){0,4}$", "day"), (r"\bweekly\s+(?:\w+\s+){0,4}$", "week"),
                  (r"\bmonthly\s+(?:\w+\s+){0,4}$", "month"), (r"\bquarterly\s+(?:\w+\s+){0,4}$", "quarter"),
                  (r"\b(?:yearly|annual)\s+(?:\w+\s+){0,8}$", "year"),  # "yearly storage cost for one can is $7.30"
                  (r"\b(?:per|a|each|every|/)\s*(day|week|month|year)\s*(?:is|=|:|of|at|about|around)?\s*$", "")]  # "per month 60c"
_PER_UNIT = re.compile(r"(?<!\w)(?:per|a|an|each|every|/|for each|for every)\s*(?:lost\s+|missed\s+|extra\s+)?"
                       r"(?:unit|item|piece|one|box|bottle|case|pack|loaf|crate|product|thing|sale|sku|"
                       r"stem|sandwich|bag|widget|part)s?\b")
_COUNT_NOUN = re.compile(r"\s*(?:more\s+)?(?:(?!per\b|a\b|an\b|each\b|every\b)[a-z]+\s+)?(?:units?|items?|pieces?|boxes|box|bottles?|cases?|packs?|"
                         r"loaves|loaf|crates?|products?|stems?|sandwiches|bags?|widgets?|parts?|customers?|"
                         r"pallets?|cartons?|kg|kilos?|liters?|litres?|gallons?|copies|tins?|cans?|"
                         r"sacks?|rolls?|bouquets?|flowers?|cakes?|pastries|cups?|servings?|portions?|"
                         r"tablets?|packets?|doses?|tyres?|tires?|screws?|bolts?|pairs?|jars?|trays?)\b")
_APPROX = re.compile(r"\b(?:about|around|roughly|approximately|approx|maybe|like|some|or so|ish|perhaps|"
                     r"something like|in the region of|close to|nearly|almost|probably|guess|say)\b")
_BOUNDARY = re.compile(r"[,;]|\band\b|\bbut\b|\s-\s")  # " - " joins clauses ("fee $40 - risk is -9")


_PLURAL = re.compile(r"\s*(?:[a-z]+'?\s+)?([a-z]{3,}s)\b")
_NOT_THINGS = set("""is was has as us this plus less its yes thanks days weeks months years hours minutes mins hrs
times percent dollars bucks cents euros quid pence miles kms staff people employees workers branches stores shops
kids children pounds business""".split())


def _plural_noun(suffix: str) -> bool:
    m = _PLURAL.match(suffix)
    return bool(m) and m.group(1) not in _NOT_THINGS and not m.group(1).endswith("ss")


def scan_quantities(sentence: str) -> list[Quantity]:
    """Every number in a (normalised) sentence with kind, rate period, range and approximation flags."""
    singles = [_single(sentence, m) for m in _QTY.finditer(sentence)
               if m.group("unit") or not re.match(r"-[a-z]", sentence[m.end():])]  # "2-person tents"
    out: list[Quantity] = []
    i = 0
    while i < len(singles):
        q = singles[i]
        if i + 1 < len(singles):
            r = singles[i + 1]
            between = sentence[q.end: r.start]
            dash_neg = r.value < 0 and q.value >= 0 and not between.strip()
            joined = re.fullmatch(r"\s*(?:-|to|or|until|till)\s*", between) or dash_neg or (
                re.fullmatch(r"\s*and\s*", between) and re.search(r"between\s*\$?\s*$", q.prefix))
            # "3 days, sometimes 4": a hedged larger second value makes a range
            hedged = re.fullmatch(r"\s*,?\s*(?:and |but |or )?(?:sometimes|occasionally|at times|now and then|"
                                  r"or even|maybe even|up to|maybe|perhaps|possibly|or maybe|or perhaps|could be|might be)\s*", between)
            compatible = q.kind == "bare" or r.kind in ("bare", "count", q.kind)
            both_units = q.kind == r.kind == "duration" and q.days != r.days  # "1 week to 14 days": both in days
            if (joined or hedged) and compatible and (abs(r.value) >= abs(q.value) if both_units else abs(r.raw) >= abs(q.raw)):
                merged = r
                scale = abs(r.value / r.raw) if r.raw else 1.0
                if both_units:
                    merged.days, merged.raw, scale = 1, r.value, 1.0
                    q.raw = q.value
                elif q.kind != "bare":
                    merged.kind, merged.days = q.kind, q.days
                    scale = abs(q.value / q.raw) if q.raw else 1.0
                merged.high = abs(r.raw) * scale
                merged.value = q.raw * scale
                merged.start, merged.prefix = q.start, q.prefix
                merged.approx = merged.approx or q.approx
                merged.negated = q.negated
                merged.text = sentence[q.start: r.end].strip()
                out.append(merged)
                i += 2
                continue
        out.append(q)
        i += 1
    return out


def _single(sentence: str, m: re.Match[str]) -> Quantity:
    value = float(m.group("num").replace(",", ""))
    neg = bool(m.group("neg")) and m.group("neg").strip() == "-"
    unit = (m.group("unit") or "").strip()
    end = m.end()
    unit_word = unit.split()[0] if unit else ""
    unit_word = unit_word if unit_word in ("business", "working") else re.sub(r"s$", "", unit_word)
    kind = "bare"
    days = 1
    if m.group("cur") or unit_word in ("cent", "dollar", "buck", "quid", "usd", "euro"):
        kind = "money"
        if unit_word == "cent":
            value = value / 100
    elif unit_word in _DUR_DAYS:
        kind = "duration"
        days = _DUR_DAYS[unit_word]
    suffix_full = sentence[end: end + 160]
    clause_end = _BOUNDARY.search(suffix_full)
    suffix = (suffix_full[: clause_end.start()] if clause_end else suffix_full)[:60]
    prefix = sentence[max(0, m.start() - 60): m.start()]
    if kind == "bare" and (_COUNT_NOUN.match(suffix_full) or _plural_noun(suffix_full)):
        kind = "count"  # "40 screens tops", "60 sets": a count of things, never a duration or money
    period = None
    if kind != "duration":
        head = suffix[:45]
        for pat, name in _PERIOD_WORDS:
            if name == "hour" and kind != "money":
                continue  # "1.5 an hour, open 8 hours a day" is a demand rate the reader scales itself
            if re.search(pat, head):
                period = name
                break
        if period is None:
            for pat, name in _PREFIX_PERIOD:
                pm = re.search(pat, prefix[-60:] + " ")
                if pm:
                    period = name or pm.group(1)
                    break
    per_unit = bool(_PER_UNIT.search(suffix[:45]))
    approx = bool(_APPROX.search(prefix[-25:])) or bool(re.match(r"\s*(?:or so|-?ish)\b", suffix_full))
    negated = bool(re.search(r"\bnot\s*$", prefix[-8:]))
    if neg:
        value = -value
    raw = float(m.group("num").replace(",", "")) * (-1 if neg else 1)
    return Quantity(start=m.start(), end=end, value=value * (days if kind == "duration" else 1), high=None, raw=raw,
                    kind=kind, period=period, per_unit=per_unit, days=days, approx=approx, negated=negated,
                    text=sentence[m.start(): end].strip(), suffix=suffix, prefix=prefix)
