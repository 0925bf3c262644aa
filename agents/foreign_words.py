"""Advice written in another language, read through English: number words into digits and the ordering vocabulary
into the English phrases the advice parser's rules know.

Why a lexicon and not a rule per sentence: consultants write to managers in the managers' languages, and a new
writer's sentence is never the last one's. What carries from writer to writer is the vocabulary: the verbs for
ordering, the trigger ("when it falls to"), "up to", the weekdays of a schedule, "physical stock" against "in
transit", the policy's names (punto de pedido, Meldebestand, titik pesan ulang ...), and the number words. Each of
those is translated once here, word-bounded, for Spanish, Portuguese, French, Italian, German, Dutch, Indonesian /
Malay, Turkish, Swahili, and (the ordering words alone) Swedish, Norwegian, Polish, Estonian, Romanian and Czech; the rules then read the result as English. Words that are also English or names
("on", "bin", "due", "Lima", "Sept") count as numbers only inside a run of number words.
"""

from __future__ import annotations

import re

# --- number words ---------------------------------------------------------------------------------------------

_UNITS = {
    # Spanish / Portuguese / Italian / French
    "uno": 1, "una": 1, "um": 1, "uma": 1, "un": 1, "une": 1, "dos": 2, "dois": 2, "duas": 2, "due": 2, "deux": 2,
    "tres": 3, "três": 3, "tre": 3, "trois": 3, "cuatro": 4, "quatro": 4, "quattro": 4, "quatre": 4,
    "cinco": 5, "cinque": 5, "cinq": 5, "seis": 6, "sei": 6, "siete": 7, "sete": 7, "sette": 7, "sept": 7,
    "ocho": 8, "oito": 8, "otto": 8, "huit": 8, "nueve": 9, "nove": 9, "neuf": 9,
    "diez": 10, "dez": 10, "dieci": 10, "dix": 10, "once": 11, "onze": 11, "undici": 11, "doce": 12, "doze": 12,
    "dodici": 12, "douze": 12, "trece": 13, "treze": 13, "tredici": 13, "treize": 13, "catorce": 14, "catorze": 14,
    "quattordici": 14, "quatorze": 14, "quince": 15, "quinze": 15, "quindici": 15, "dieciséis": 16, "dezesseis": 16,
    "sedici": 16, "seize": 16, "diecisiete": 17, "dezessete": 17, "diciassette": 17, "dieciocho": 18, "dezoito": 18,
    "diciotto": 18, "diecinueve": 19, "dezenove": 19, "diciannove": 19,
    "veinte": 20, "vinte": 20, "venti": 20, "vingt": 20, "treinta": 30, "trinta": 30, "trenta": 30, "trente": 30,
    "cuarenta": 40, "quarenta": 40, "quaranta": 40, "quarante": 40, "cincuenta": 50, "cinquenta": 50,
    "cinquanta": 50, "cinquante": 50, "sesenta": 60, "sessenta": 60, "sessanta": 60, "soixante": 60,
    "setenta": 70, "settanta": 70, "septante": 70, "ochenta": 80, "oitenta": 80, "ottanta": 80, "huitante": 80,
    "octante": 80, "quatre-vingt": 80, "quatre-vingts": 80, "noventa": 90, "novanta": 90, "nonante": 90,
    "doscientos": 200, "doscientas": 200, "duzentos": 200, "duzentas": 200, "duecento": 200,
    "trescientos": 300, "trezentos": 300, "trecento": 300, "cuatrocientos": 400, "quatrocentos": 400,
    "quattrocento": 400, "quinientos": 500, "quinhentos": 500, "cinquecento": 500, "seiscientos": 600,
    "seiscentos": 600, "seicento": 600, "setecientos": 700, "setecentos": 700, "settecento": 700,
    "ochocientos": 800, "oitocentos": 800, "ottocento": 800, "novecientos": 900, "novecentos": 900,
    "novecento": 900, "veintiuno": 21, "veintidós": 22, "veintitrés": 23, "veinticuatro": 24, "veinticinco": 25,
    "veintiséis": 26, "veintisiete": 27, "veintiocho": 28, "veintinueve": 29,
    # German / Dutch (compounds are split first: "einhundertfünfzig", "vijfentwintig")
    "ein": 1, "eins": 1, "eine": 1, "een": 1, "zwei": 2, "twee": 2, "drei": 3, "drie": 3, "vier": 4, "fünf": 5,
    "vijf": 5, "sechs": 6, "zes": 6, "sieben": 7, "zeven": 7, "acht": 8, "neun": 9, "negen": 9, "zehn": 10,
    "tien": 10, "elf": 11, "zwölf": 12, "twaalf": 12, "dreizehn": 13, "dertien": 13, "vierzehn": 14, "veertien": 14,
    "fünfzehn": 15, "vijftien": 15, "sechzehn": 16, "zestien": 16, "siebzehn": 17, "zeventien": 17, "achtzehn": 18,
    "achttien": 18, "neunzehn": 19, "negentien": 19, "zwanzig": 20, "twintig": 20, "dreißig": 30, "dreissig": 30,
    "dertig": 30, "vierzig": 40, "veertig": 40, "fünfzig": 50, "vijftig": 50, "sechzig": 60, "zestig": 60,
    "siebzig": 70, "zeventig": 70, "achtzig": 80, "tachtig": 80, "neunzig": 90, "negentig": 90,
    # Indonesian / Malay ("dua puluh" 20, "dua belas" 12 are read by the multipliers below)
    "satu": 1, "dua": 2, "tiga": 3, "empat": 4, "lima": 5, "enam": 6, "tujuh": 7, "delapan": 8, "lapan": 8,
    "sembilan": 9, "sepuluh": 10, "sebelas": 11,
    # Turkish
    "bir": 1, "iki": 2, "üç": 3, "dört": 4, "beş": 5, "altı": 6, "yedi": 7, "sekiz": 8, "dokuz": 9, "on": 10,
    "yirmi": 20, "otuz": 30, "kırk": 40, "elli": 50, "altmış": 60, "yetmiş": 70, "seksen": 80, "doksan": 90,
    # Swahili (the multiplier comes first: "mia moja na ishirini" 120, "elfu mbili" 2000)
    "moja": 1, "mbili": 2, "tatu": 3, "nne": 4, "tano": 5, "sita": 6, "saba": 7, "nane": 8, "tisa": 9, "kumi": 10,
    "ishirini": 20, "thelathini": 30, "arobaini": 40, "hamsini": 50, "sitini": 60, "sabini": 70,
    "themanini": 80, "tisini": 90,
}
_HUNDREDS = {"cien", "ciento", "cem", "cento", "cent", "cents", "hundert", "honderd", "ratus", "yüz", "mia"}
_THOUSANDS = {"mil", "mille", "mila", "tausend", "duizend", "ribu", "bin", "elfu"}
_ONE_HUNDRED = {"seratus": 100, "seribu": 1000}  # Indonesian "se-" = one
_TEN_TIMES = {"puluh"}  # Indonesian "dua puluh" = 2 x 10
_PLUS_TEN = {"belas"}  # Indonesian "dua belas" = 2 + 10
_JOINERS = {"y", "e", "et", "und", "en", "na", "-"}  # "treinta y cinco", "vingt et un", "mia moja na ishirini"
_MULTIPLIER_FIRST = {"mia", "elfu"}  # Swahili
# also English words, names or abbreviations: numbers only inside a run of two or more number words
_AMBIGUOUS = {"on", "bin", "due", "un", "une", "una", "uno", "um", "uma", "ein", "eine", "een", "elf", "acht",
              "sept", "lima", "sita", "saba", "tano", "nane", "once", "cent", "cents", "mil", "dos", "tre", "sei",
              "otto", "nove", "tien", "bir", "e", "y", "et", "en", "na", "dix", "neuf", "vier", "zes", "mia",
              "dua", "iki", "tiga", "doce", "tisa", "moja", "sette", "venti", "dez", "sete", "tres"}

_ALL = sorted({*_UNITS, *_HUNDREDS, *_THOUSANDS, *_ONE_HUNDRED, *_TEN_TIMES, *_PLUS_TEN} - {"-"}, key=len, reverse=True)
_GERMANIC = sorted(w for w in _ALL if re.fullmatch(r"[a-zäöüß]+", w) and (
    w in ("hundert", "honderd", "tausend", "duizend") or w in {
        "ein", "eins", "eine", "een", "zwei", "twee", "drei", "drie", "vier", "fünf", "vijf", "sechs", "zes", "sieben",
        "zeven", "acht", "neun", "negen", "zehn", "tien", "elf", "zwölf", "twaalf"} or w.endswith(("zig", "ßig",
                                                                                                  "ssig", "tig", "zehn", "tien"))))
_GERMANIC_PART = re.compile("(?:" + "|".join(sorted([*_GERMANIC, "und", "en"], key=len, reverse=True)) + ")")
_TOKEN = r"(?:" + "|".join(re.escape(w) for w in _ALL) + r")"
_RUN = re.compile(r"(?<![\w-])" + _TOKEN + r"(?:(?:\s+(?:y|e|et|und|en|na)\s+|[\s-]+)" + _TOKEN + r")*(?![\w-])", re.I)
_COMPOUND = re.compile(r"(?<![\w-])[a-zäöüß]{8,40}(?![\w-])", re.I)


def _split_germanic(word: str) -> list[str] | None:
    """"einhundertfünfzig" -> ["ein", "hundert", "fünfzig"]; None when the word is not made of number parts."""
    parts, i, w = [], 0, word.lower()
    while i < len(w):
        m = _GERMANIC_PART.match(w, i)
        if not m:
            return None
        parts.append(m.group(0))
        i = m.end()
    return [p for p in parts if p not in ("und", "en")] if len(parts) > 1 else None


def words_value(tokens: list[str]) -> int | None:
    """The value of a run of number words in any of the languages above; None when it is not one number."""
    tokens = _join_quatre_vingt([t.lower() for t in tokens if t.lower() not in _JOINERS])
    if not tokens:
        return None
    if tokens[0] in _MULTIPLIER_FIRST:
        return _multiplier_first(tokens)
    total = block = pending = 0
    for t in tokens:
        if t in _ONE_HUNDRED:  # "seratus" 100, "seribu" 1000: the "one" is in the word
            if _ONE_HUNDRED[t] == 1000:
                total += 1000
            else:
                block += 100
        elif t in _TEN_TIMES:
            block, pending = block + (pending or 1) * 10, 0
        elif t in _PLUS_TEN:
            block, pending = block + (pending or 1) + 10, 0
        elif t in _HUNDREDS:
            block, pending = block + (pending or 1) * 100, 0
        elif t in _THOUSANDS:
            total, block, pending = total + (block + pending or 1) * 1000, 0, 0
        elif t in _UNITS:
            if pending % 10 and _UNITS[t] < 10:  # "cinco seis": two numbers, not one ("fünf und zwanzig" is 25)
                return None
            pending += _UNITS[t]
        else:
            return None
    return total + block + pending


def _multiplier_first(tokens: list[str]) -> int | None:
    """Swahili: "mia moja na ishirini" = 100 x 1 + 20, "elfu mbili mia tano" = 2500."""
    total, i = 0, 0
    while i < len(tokens):
        t = tokens[i]
        if t in ("mia", "elfu"):
            scale = 100 if t == "mia" else 1000
            n = _UNITS.get(tokens[i + 1], None) if i + 1 < len(tokens) else 1
            if n is None or n >= 10 and tokens[i + 1] != "kumi":
                n, i = 1, i + 1
            else:
                i += 2
            total += scale * n
        elif t in _UNITS:
            total += _UNITS[t]
            i += 1
        else:
            return None
    return total


# a single ambiguous word is a number when a unit of time follows it ("setiap tiga hari", "cada dos semanas")
_COUNTED = re.compile(r"\s+(?:d[ií]as?|dias?|jours?|tage?n?|hari|g[üu]n(?:de)?|siku|giorni|dagen|semanas?|semaines?|"
                      r"wochen?|minggu|hafta|wiki|settimane?|weken|meses|mois|monate?|bulan|ay|miezi|mesi|maanden)\b",
                      re.I)


def replace_foreign_numbers(text: str) -> str:
    """Number words of the languages above -> digits ("seratus lembar" -> "100 lembar", "einhundertfünfzig" -> "150")."""
    def compound(m: re.Match) -> str:
        parts = _split_germanic(m.group(0))
        value = words_value(parts) if parts else None
        return m.group(0) if value is None else str(value)

    def run(m: re.Match) -> str:
        tokens = [t for t in re.split(r"[\s-]+", m.group(0)) if t]
        words = [t for t in tokens if t.lower() not in _JOINERS]
        if not words or (len(words) == 1 and words[0].lower() in _AMBIGUOUS
                         and not _COUNTED.match(m.string, m.end())):
            return m.group(0)
        if m.group(0).lower() in ("quatre-vingt", "quatre-vingts"):
            return "80"
        value = words_value(_join_quatre_vingt(tokens))
        return m.group(0) if value is None else str(value)

    text = _COMPOUND.sub(compound, text)
    return _RUN.sub(run, text)


def _join_quatre_vingt(tokens: list[str]) -> list[str]:
    out, i = [], 0
    while i < len(tokens):
        if tokens[i].lower() == "quatre" and i + 1 < len(tokens) and tokens[i + 1].lower() in ("vingt", "vingts"):
            out.append("quatre-vingt")
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return out


# --- the ordering vocabulary --------------------------------------------------------------------------------------

_DAYS = {
    "monday": r"lunes|segunda(?:s)?(?:-feira(?:s)?)?|lundis?|luned[iì]|montags?|maandag|senin|pazartesi|jumatatu",
    "tuesday": r"martes|ter[çc]a(?:s)?(?:-feira(?:s)?)?|mardis?|marted[iì]|dienstags?|dinsdag|selasa|sal[ıi]|jumanne",
    "wednesday": r"mi[ée]rcoles|quarta(?:s)?(?:-feira(?:s)?)?|mercredis?|mercoled[iì]|mittwochs?|woensdag|rabu|"
                 r"[çc]ar[şs]amba|jumatano",
    "thursday": r"jueves|quinta(?:s)?(?:-feira(?:s)?)?|jeudis?|gioved[iì]|donnerstags?|donderdag|kamis|per[şs]embe|"
                r"alhamisi",
    "friday": r"viernes|sexta(?:s)?(?:-feira(?:s)?)?|vendredis?|venerd[iì]|freitags?|vrijdag|jumat|jum'at|cuma|ijumaa",
    "saturday": r"s[áa]bados?|samedis?|sabato|samstags?|zaterdag|sabtu|cumartesi|jumamosi",
    "sunday": r"domingos?|dimanches?|domenica|sonntags?|zondag|minggu|ahad|pazar|jumapili",
}
_DAY_WORD = "|".join(_DAYS.values())
_EVERY = r"(?:cada|todos\s+los|todas\s+las|todos\s+os|todas\s+as|a\s+cada|chaque|tous\s+les|toutes\s+les|ogni|" \
         r"tutti\s+i|jeden|jede|jeder|alle|elke|iedere|setiap|tiap|saban|her|kila)"
_N = r"(\d+)"

# (pattern, English) in order; patterns are matched case-insensitively on word bounds
_PHRASES: list[tuple[str, str]] = [
    # schedules
    (rf"{_EVERY}\s+(?:hari\s+)?(?:(?:el|le|il|o|a|de)\s+)?(?:{_DAY_WORD})(?:\s+(?:pagi|sore|malam))?", "every {day}"),
    (rf"\b(?:{_DAY_WORD})\s+(?:günleri|her\s+hafta)", "every {day}"),
    (r"(?:cada|a\s+cada)\s+dos\s+semanas|(?:cada|a\s+cada)\s+2\s+semanas|toutes\s+les\s+deux\s+semaines|"
     r"alle\s+zwei\s+wochen|alle\s+2\s+wochen|setiap\s+dua\s+minggu|iki\s+haftada\s+bir|kila\s+wiki\s+mbili|"
     r"ogni\s+due\s+settimane|om\s+de\s+(?:twee|2)\s+weken|quinzenalmente|cada\s+quince\s+d[ií]as", "every two weeks"),
    (r"(?:cada|a\s+cada)\s+semana|todas\s+las\s+semanas|toutes\s+les\s+semaines|chaque\s+semaine|jede\s+woche|"
     r"w[öo]chentlich|setiap\s+minggu|her\s+hafta|kila\s+wiki|ogni\s+settimana|semanalmente|elke\s+week|wekelijks",
     "every week"),
    (r"(?:cada|a\s+cada)\s+mes|todos\s+os\s+meses|chaque\s+mois|tous\s+les\s+mois|jeden\s+monat|monatlich|"
     r"setiap\s+bulan|her\s+ay|kila\s+mwezi|ogni\s+mese|mensualmente|mensalmente|elke\s+maand|maandelijks", "every month"),
    (r"jeden\s+(?:zweiten|2\.)\s+tag|(?:cada|a\s+cada)\s+dos\s+d[ií]as|d[ií]a\s+por\s+medio|un\s+jour\s+sur\s+deux|"
     r"tous\s+les\s+deux\s+jours|dia\s+sim,?\s+dia\s+n[ãa]o|a\s+cada\s+dois\s+dias|setiap\s+dua\s+hari|selang\s+sehari|"
     r"iki\s+günde\s+bir|gün\s+aşırı|kila\s+baada\s+ya\s+siku\s+moja|ogni\s+due\s+giorni|om\s+de\s+(?:dag|andere\s+dag)",
     "every other day"),
    (rf"(?:cada|a\s+cada|tous\s+les|toutes\s+les|alle|setiap|tiap|ogni|om\s+de)\s+{_N}\s+(?:d[ií]as|jours|tage|hari|"
     r"giorni|dagen)", "every {0} days"),
    (rf"{_N}\s+günde\s+bir|kila\s+siku\s+{_N}", "every {0} days"),
    (r"todos\s+los\s+d[ií]as|todas\s+las\s+(?:ma[ñn]anas|tardes|noches)|cada\s+(?:d[ií]a|ma[ñn]ana|tarde|noche)|"
     r"todos\s+os\s+dias|todas\s+as\s+manh[ãa]s|cada\s+dia|tous\s+les\s+(?:jours|matins|soirs)|chaque\s+(?:jour|matin|"
     r"soir)|quotidiennement|jeden\s+(?:tag|morgen|abend)|t[äa]glich|setiap\s+(?:hari|pagi|sore|malam)|tiap\s+hari|"
     r"her\s+(?:gün|sabah|akşam)|kila\s+(?:siku|asubuhi|jioni)|ogni\s+(?:giorno|mattina|sera)|elke\s+(?:dag|ochtend)|"
     r"dagelijks|diariamente", "every day"),
    # on hand against the inventory position
    (r"sin\s+contar\s+(?:lo\s+que\s+(?:est[áa]|viene)\s+en\s+(?:camino|tr[áa]nsito)|los\s+pedidos\s+(?:en\s+(?:camino|"
     r"tr[áa]nsito|curso)|pendientes))|sem\s+contar\s+(?:o\s+que\s+est[áa]\s+(?:a\s+caminho|em\s+tr[âa]nsito)|"
     r"(?:as\s+)?encomendas\s+(?:em\s+curso|a\s+caminho|pendentes))|sans\s+compter\s+(?:ce\s+qui\s+est\s+en\s+route|"
     r"les\s+commandes\s+en\s+(?:cours|route))|ne\s+comptez\s+pas\s+ce\s+qui\s+est\s+en\s+(?:route|chemin)|"
     r"(?:bestellungen|lieferungen|ware)\s+unterwegs\s+nicht\s+mit(?:z[äa]hlen|gez[äa]hlt)|ohne\s+(?:die\s+)?"
     r"(?:offenen\s+)?bestellungen(?:\s+unterwegs)?|bukan\s+yang\s+(?:masih\s+)?(?:di\s+jalan|dalam\s+perjalanan)|"
     r"tidak\s+termasuk\s+(?:yang\s+)?(?:di\s+jalan|dalam\s+perjalanan)|yoldaki\s+sipari[şs]ler\s+hari[çc]|"
     r"si\s+(?:yaliyo|iliyo|vilivyo)\s+njiani|senza\s+contare\s+(?:gli\s+ordini\s+in\s+arrivo|quello\s+in\s+arrivo)",
     "not counting what is on order"),
    (r"inventario\s+f[íi]sico|existencias?\s+f[íi]sicas?|stock\s+f[íi]sico|estoque\s+f[íi]sico|stock\s+physique|"
     r"physischer?\s+bestand|physische(?:n)?\s+bestand|stok\s+fisik|fiziksel\s+stok|giacenza\s+fisica|fysieke\s+voorraad",
     "physical stock"),
    (r"stok\s+gudang\s+(?:aja|saja)|(?:yaliyopo|iliyopo|vilivyopo)\s+tu|lo\s+que\s+hay\s+en\s+(?:bodega|almac[ée]n)",
     "on hand only"),
    (r"posici[óo]n\s+de\s+inventario|posi[çc][ãa]o\s+de\s+(?:estoque|stock|invent[áa]rio)|position\s+de\s+stock|"
     r"lagerposition|disponierbarer\s+bestand|posisi\s+persediaan|envanter\s+pozisyonu|posizione\s+di\s+magazzino",
     "inventory position"),
    (r"(?:existencias|stock|estoque|inventario)\s+m[áa]s\s+(?:los\s+)?pedidos\s+en\s+(?:tr[áa]nsito|camino)|"
     r"pamoja\s+na\s+(?:iliyoagizwa|yaliyoagizwa|vilivyoagizwa)|ditambah\s+yang\s+(?:sudah\s+)?dipesan|"
     r"plus\s+(?:les\s+)?commandes\s+en\s+cours|mais\s+(?:as\s+)?encomendas\s+em\s+curso",
     "on-hand plus on-order"),
    (r"commandes?\s+en\s+cours|pedidos\s+en\s+curso|pedidos\s+pendientes|encomendas\s+em\s+curso|offene\s+bestellungen|"
     r"pesanan\s+yang\s+belum\s+(?:datang|tiba)|bekleyen\s+sipari[şs]ler|ordini\s+in\s+corso|openstaande\s+bestellingen",
     "on order"),
    (r"en\s+tr[áa]nsito|en\s+camino|em\s+tr[âa]nsito|a\s+caminho|en\s+cours\s+de\s+livraison|unterwegs|"
     r"di\s+jalan|dalam\s+perjalanan|yolda(?:ki)?|njiani|in\s+arrivo|onderweg", "in transit"),
    (r"entre\s+(\d+)\s+(?:y|e|et)\s+(\d+)|zwischen\s+(\d+)\s+und\s+(\d+)|antara\s+(\d+)\s+(?:dan|-|sampai)\s+(\d+)|"
     r"(\d+)\s+ile\s+(\d+)\s+aras[ıi]nda|kati\s+ya\s+(\d+)\s+na\s+(\d+)|tra\s+(\d+)\s+e\s+(\d+)|tussen\s+(\d+)\s+en\s+(\d+)",
     "between {0} and {1}"),
    (r"jangan\s+hitung|no\s+cuente|n[ãa]o\s+conte|ne\s+comptez\s+pas|nicht\s+mitz[äa]hlen|saymay[ıi]n|usihesabu|"
     r"non\s+contare|niet\s+meetellen", "not counting"),
    (r"en\s+rayon|sur\s+les\s+[ée]tag[èe]res|en\s+estanter[íi]a|na\s+prateleira|im\s+regal|di\s+rak|rafta|"
     r"kwenye\s+rafu|sullo\s+scaffale", "on the shelf"),
    (r"(?:stock|existencias|estoque|bestand|stok|giacenza)\s+(?:disponible|dispon[íi]vel|verf[üu]gbar|tersedia|"
     r"disponibile)", "on-hand stock"),
    (r"reponga|repong[ae]n|reponer|rep[oô]r|reponha|r[ée]approvisionnez|compl[ée]tez|auff[üu]llen|f[üu]llen\s+sie|"
     r"isi\s+ulang|tamamlay[ıi]n|jaza(?:\s+tena)?|riempi|rifornisci|aanvullen|vul\s+aan", "order"),
    (r"(?:une\s+|una\s+|uma\s+|eine\s+)?quantit[ée]\s+(?:fixe|constante)|cantidad\s+fija|quantidade\s+fixa|"
     r"feste\s+menge|jumlah\s+tetap|sabit\s+miktar|kiasi\s+maalum|quantit[àa]\s+fissa|vaste\s+hoeveelheid",
     "a fixed order of"),
    # the policy's names
    (r"punto\s+de\s+(?:pedido|reorden|reposici[óo]n)|ponto\s+de\s+(?:pedido|encomenda|reposi[çc][ãa]o)|"
     r"point\s+de\s+commande|seuil\s+de\s+(?:commande|r[ée]approvisionnement)|meldebestand|bestellpunkt|"
     r"titik\s+(?:pesan|pemesanan)\s+(?:ulang|kembali)|yeniden\s+sipari[şs]\s+noktas[ıi]|sipari[şs]\s+noktas[ıi]|"
     r"punto\s+di\s+riordino|bestelpunt|kiwango\s+cha\s+kuagiza", "reorder point"),
    (r"cantidad\s+(?:de|a)\s+pedir|cantidad\s+de\s+pedido|quantidade\s+(?:de|a)\s+(?:pedido|encomendar|encomenda)|"
     r"quantit[ée]\s+(?:de|à)\s+commander|quantit[ée]\s+de\s+commande|bestellmenge|jumlah\s+pesan(?:an)?|"
     r"sipari[şs]\s+miktar[ıi]|quantit[àa]\s+(?:di|da)\s+ordinare|bestelhoeveelheid|kiasi\s+cha\s+kuagiza",
     "order quantity"),
    (r"nivel\s+m[áa]ximo|nivel\s+objetivo|n[íi]vel\s+m[áa]ximo|niveau\s+(?:maximum|cible|de\s+recompl[èe]tement)|"
     r"h[öo]chstbestand|zielbestand|sollbestand|sipari[şs]\s+[üu]st\s+seviyesi|[üu]st\s+seviye|livello\s+massimo|"
     r"tingkat\s+maksimum|stok\s+maksimum|bestellniveau|auff[üu]llniveau", "order-up-to level"),
    # capacity acknowledged ("I know the store holds only 80")
    (r"s[ée]\s+que|ya\s+s[ée]|eu\s+sei\s+que|sei\s+que|je\s+sais\s+que|ich\s+wei[ßs](?:,)?\s+(?:dass)?|"
     r"saya\s+tahu|biliyorum|najua|lo\s+so\s+che|ik\s+weet", "i know"),
    (r"capacidad|capacidade|capacit[ée]|kapazit[äa]t|kapasitas|kapasite(?:si|niz)?|capacit[àa]|capaciteit|uwezo",
     "capacity"),
    (r"solo\s+(?:admite|caben|cabe|aguanta)|s[óo]\s+(?:comporta|cabe|cabem|leva)|comporta|ne\s+contient\s+que|"
     r"contient|peut\s+contenir|fasst\s+nur|fasst|cuma\s+muat|hanya\s+muat|muat|alır|inabeba|linabeba|"
     r"contiene\s+solo|bevat", "holds"),
    (r"no\s+(?:despacha|entrega|env[íi]a|vende|acepta)\s+m[áa]s\s+de|n[ãa]o\s+(?:entrega|envia|aceita)\s+mais\s+de|"
     r"(?:livre|envoie|accepte)\s+au\s+maximum|nicht\s+mehr\s+als|tidak\s+lebih\s+dari|en\s+fazla|"
     r"si\s+zaidi\s+ya|non\s+pi[ùu]\s+di", "will not take more than"),
    (r"por\s+pedido|por\s+encomenda|par\s+commande|pro\s+bestellung|je\s+bestellung|per\s+pesanan|"
     r"sipari[şs]\s+ba[şs][ıi]na|kwa\s+oda|per\s+ordine|per\s+bestelling", "per order"),
    # the trigger
    (rf"{_N}\s*(?:[a-zçğıöşü]+)?'?(?:a|e|ya|ye)\s+(?:d[üu][şs][üu]nce|d[üu][şs]t[üu][ğg][üu]nde|inince|indi[ğg]inde)",
     "when it falls to {0}"),
    (r"ikishuka\s+hadi|ikifika|yakifika|inapofika|ikibaki", "when it falls to"),
    (r"(?:cuando|en\s+cuanto|apenas)\s+(?:le\s+)?queden|quando\s+restarem|quand\s+il\s+(?:ne\s+)?(?:en\s+)?reste(?:\s+que)?|"
     r"d[èe]s\s+qu'il\s+(?:ne\s+)?(?:en\s+)?reste(?:\s+que)?|wenn\s+nur\s+noch|sobald\s+nur\s+noch|kalau\s+(?:sudah\s+)?"
     r"tinggal|jika\s+(?:sudah\s+)?tinggal|bila\s+tinggal|quando\s+ne\s+restano", "when you are down to"),
    (r"tinggal|quedan|restam|il\s+reste|noch", "is down to"),
    (r"o\s+menos|ou\s+menos|ou\s+moins|oder\s+weniger|atau\s+kurang|veya\s+(?:daha\s+)?az|au\s+chini|o\s+meno|of\s+minder|"
     r"v[õo]i\s+v[äa]hem", "or less"),
    (r"kui\s+(?:laos\s+)?on\s+(?:alles|j[äa]rel)|kui\s+(?:alles|j[äa]rel)\s+on", "when you are down to"),  # Estonian
    (r"iga\s+kord", "each time"),
    (r"ori\s+de\s+c[âa]te\s+ori|de\s+fiecare\s+dat[ăa]\s+c[âa]nd", "whenever"),  # Romanian
    (r"(?:stocul\s+)?scade\s+la|(?:stocul\s+)?ajunge\s+la", "the stock falls to"),
    (r"\bde\s+buc[ăa][țt]i\b", "pieces"),
    (r"kdykoliv?|poka[žz]d[ée],?\s+kdy[žz]", "whenever"),  # Czech
    (r"(?:z[áa]soba\s+)?klesne\s+na", "the stock falls to"),
    (r"\bkus[ůuy]\b", "pieces"),
    (r"baje\s+(?:a|hasta)|caiga\s+(?:a|hasta)|llegue\s+a|bajen\s+(?:a|hasta)|cair\s+para|chegar\s+a|baixar\s+para|"
     r"descend(?:e|ra)?\s+(?:à|a|jusqu'à)|tombe\s+(?:à|a)|arrive\s+à|f[äa]llt\s+auf|sinkt\s+auf|turun\s+(?:ke|jadi|"
     r"sampai)|mencapai|scende\s+a|daalt\s+(?:tot|naar)|inashuka\s+hadi|hadi\s+kufikia|(?:lagret\s+)?n[åa]r|"
     r"(?:lagret\s+)?sjunker\s+till|(?:lageret\s+)?er\s+nede\s+i|(?:zapas\s+)?spadnie\s+do", "falls to"),
    (r"baje\s+de|bajo\s+de|por\s+debajo\s+de|menos\s+de|abaixo\s+de|menos\s+que|en\s+dessous\s+de|sous(?=\s+\d)|"
     r"moins\s+de|weniger\s+als|unter(?=\s+\d)|kurang\s+dari|di\s+bawah|[ae]\s+kadar\s+d[üu][şs]|alt[ıi]na|"
     r"chini\s+ya|sotto\s+(?:i|le|a)?|minder\s+dan|onder(?=\s+\d)", "below"),
    (r"(?:cuando|en\s+cuanto|si|apenas)\b|(?:quando|assim\s+que|se)\b|(?:d[èe]s\s+que|quand|lorsque|si)\b|"
     r"(?:sobald|wenn)\b|(?:kalau|jika|bila|saat|begitu)\b|(?:ikishuka|ukiona|yakifika|ikifika|inapofika)\b|"
     r"(?:non\s+appena|quando|se)\b|(?:zodra|wanneer|als)\b|(?:n[äa]r|s[åa]\s+snart)\b|gdy\b|kui\b", "when"),
    # ordering verbs and "up to"
    (r"pida\s+(?:lo\s+suficiente|lo\s+necesario)\s+para\s+(?:llevar|volver\s+a\s+tener|tener|completar)|"
     r"encomende\s+o\s+(?:necess[áa]rio|suficiente)\s+para\s+(?:repor|levar|voltar\s+a\s+ter|ter)|"
     r"commandez\s+de\s+quoi\s+(?:ramener|remonter|revenir|avoir)|produza\s+o\s+suficiente\s+para\s+voltar\s+a\s+ter|"
     r"pesan\s+secukupnya\s+(?:agar|supaya|sampai)|agiza\s+(?:vya\s+)?kutosha\s+(?:kufikia|hadi)",
     "order enough to bring it up to"),
    (r"(?:pida|pide|pedir|ordene|compre|encomende|pe[çc]a|commandez|commander|bestellen\s+sie|bestellen|bestelle|"
     r"ordina(?:te|re)?|pesan(?:lah)?|agiza|bestel)\s+(?:hasta|até|jusqu'(?:à|a)|bis\s+(?:auf|zu)|fino\s+a|sampai|"
     r"hingga|hadi|tot)", "order up to"),
    (r"(?:sipari[şs]\s+(?:edin|verin|ver|et|verilsin)|s[ıi]parı[şs]\s+verin)", "order"),
    (r"(?:pida|pide|pidan|pedir|ordene|ordenar|compre|comprar|encargue|encomende|encomendar|pe[çc]a|hagan|haga|"
     r"produza|produzca|commandez(?:-en)?|achetez|bestellen\s+sie|bestellen|bestelle|nachbestellen|ordern|"
     r"ordina(?:te|re|ne|rne)?|best[äa]ll|bestill|zamawiaj|zam[óo]w|acquista(?:te)?|pesan(?:lah)?|beli(?:lah)?|agiza|nunua|bestel|koop|tellige|tellida|telli|"
     r"comanda[țt]i|comand[ăa]|objednejte|objednat|objedn[áa]vejte)", "order"),
    (r"hasta\s+(?:tener|llegar\s+a)|hasta|jusqu'(?:à|a)|até|bis\s+auf|fino\s+a|sampai|hingga|hadi|upp\s+till|"
     r"do\s+poziomu", "up to"),
    (r"d[ée]but\s+de\s+|a\s+partir\s+de", "from "),
    (r"arrondi[es]?\s+(?:à|au)|redondead[oa]s?\s+(?:a|al)|arredondad[oa]s?\s+(?:para|a)|(?:auf)?gerundet\s+auf|"
     r"dibulatkan(?:\s+ke\s+atas)?\s+(?:jadi|menjadi|ke)|yuvarlan(?:arak|d[ıi]|ınca)|arrotondat[oa]\s+a|afgerond\s+op",
     "rounded to"),
    (r"perd[óo]n|perd[ãa]o|entschuldigung|maaf|[öo]z[üu]r\s+dilerim|samahani|scusa(?:te)?", "sorry"),
    (r"me\s+equivoqu[ée]|me\s+confund[íi]|errei|me\s+enganei|je\s+me\s+suis\s+tromp[ée]e?|ich\s+habe\s+mich\s+"
     r"(?:vertan|geirrt|verrechnet)|saya\s+salah(?:\s+hitung)?|yanl[ıi][şs]\s+(?:hesaplad[ıi]m|yazd[ıi]m)|nilikosea|"
     r"mi\s+sono\s+sbagliat[oa]|ik\s+heb\s+me\s+vergist", "i made a mistake"),
    (r"mejor|melhor|plut[ôo]t|lieber|besser|sebaiknya|daha\s+iyi|bora|meglio|beter", "rather"),
    (r"recomiendo|recomendo|je\s+recommande|je\s+conseille|ich\s+empfehle|empfehlung|saya\s+sarankan|saran\s+saya|"
     r"[öo]neriyorum|[öo]nerim|napendekeza|consiglio|raccomando|ik\s+raad\s+aan|advies|soovitan", "i recommend"),
    # the small words between, so that the rules' "the warehouse holds 40" also reads "la bodega holds 40"
    (r"que|dass|che|bahwa|ki", "that"),
    (r"el|la|los|las|le|les|der|die|das|den|dem|des|il|lo|gli|het|os", "the"),
    (r"und|dan|ve|et", "and"),
]
_COMPILED = [(re.compile(r"(?<![\w'])(?:" + p + r")(?![\w'])", re.I), e) for p, e in _PHRASES]
# one pass over the text, the first listed phrase winning where two start at the same place, so that English
# put in by one phrase is never read again by another ("falls" is also German for "if")
_ONE_PASS = re.compile("|".join(f"(?P<p{i}>{r.pattern})" for i, (r, _) in enumerate(_COMPILED)), re.I)
_DAY_RES = {day: re.compile(r"(?<![\w'])(?:" + words + r")(?![\w'])", re.I) for day, words in _DAYS.items()}


def _english(m: re.Match) -> str:
    i = int(next(k for k, v in m.groupdict().items() if v is not None)[1:])
    pattern, template = _COMPILED[i]
    said = m.group(0)
    if "{day}" in template:
        day = next((d for d, r in _DAY_RES.items() if r.search(said)), "monday")
        return template.replace("{day}", day)
    if "{0}" in template:
        numbers = [g for g in pattern.fullmatch(said).groups() if g]
        for k, n in enumerate(numbers):
            template = template.replace("{" + str(k) + "}", n)
    return template


# the small words ("la", "die", "que") are translated only in text the rest of the vocabulary shows to be foreign
_SMALL_WORDS = 3
_GATE = re.compile("|".join(r.pattern for r, _ in _COMPILED[:-_SMALL_WORDS]), re.I)


def looks_foreign(text: str) -> bool:
    """Whether any of the vocabulary above occurs (so English text is left exactly as it was)."""
    return _GATE.search(text) is not None


# figures written the continental way ("1.150 engradados", "196,8", "0,10"): in text of another language a dot
# before three digits groups thousands and a comma before one or two digits is the decimal point
_DOT_THOUSANDS = re.compile(r"(?<![\d.,])(\d{1,3}(?:\.\d{3})+)(?![\d]|[.,]\d)")
_DECIMAL_COMMA = re.compile(r"(?<![\d.,])(\d+),(\d{1,2})(?![\d]|[.,]\d)")
# Turkish puts the verb last: "100 kilo fıstık sipariş edin" -> "order 100 kilo fıstık"
_VERB_LAST = re.compile(r"(\d+(?:[.,]\d+)?)((?:\s+[^\W\d_']+(?:'[^\W\d_]+)?){0,4}?)\s+sipari[şs]\s+"
                        r"(?:edin|verin|ver|et|ediniz|veriniz|verilsin)\b", re.I)


def to_english(text: str) -> str:
    """Number words -> digits and the ordering vocabulary -> English, for the rule-based advice parser."""
    if not looks_foreign(text):
        return text
    text = _DOT_THOUSANDS.sub(lambda m: m.group(1).replace(".", ""), text)
    text = _DECIMAL_COMMA.sub(r"\1.\2", text)
    text = _VERB_LAST.sub(r"order \1\2", replace_foreign_numbers(text))
    text = _ONE_PASS.sub(_english, text)
    return _NOUN_FIRST.sub(r"\1 \3 \2", text)


# Swahili and Indonesian name the goods before their number: "order magunia 30" -> "order 30 magunia"
_NOUN_FIRST = re.compile(r"\b(order(?:\s+up\s+to)?)\s+([^\W\d_]+)\s+(\d+(?:\.\d+)?)\b")
