"""A learned second reader: which field a number belongs to, and what a message says about keyword fields.

Why: the keyword rules (`agents.extraction_rules`) name a field only when the text uses one of their phrases, so
new wording ("the cool room holds 150 kg tops", "depot charges 15 per pickup") leaves numbers unassigned and the
field is lost. Measured on blind sets, most misses were of that kind. This module learns the same decision from
labelled messages written by people who never saw the rules: a softmax regression over the words around each
number (stemmed, within its clause and nearest first), the number's kind (money, duration, count), its rate
period and magnitude. It only speaks where the rules are silent, and only when it is confident (precision over
recall: an unsure number is left for the agent to ask about).

The model is fitted from the shipped corpora (`agents/data/reader_train/*.jsonl`) on first use, in about a
second, deterministically; nothing is downloaded. Labels are recovered by value: a number whose value (after
the period conversion the rules also apply) equals exactly one labelled field is an example of that field, a
number equal to none is an example of "none".
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import pickle
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from scipy import sparse
from scipy.optimize import minimize

from agents.extraction_text import Quantity, normalise_text, scan_quantities, split_sentences
from agents.extraction_units import PERIOD_DAYS

__all__ = ["NUMBER_LABELS", "KEYWORD_FIELDS", "LearnedReader", "Softmax", "TRAIN_DIR", "learned_reader",
           "number_features", "stemmed_words", "text_features", "training_examples"]

TRAIN_DIR = Path(__file__).parent / "data" / "reader_train"
NUMBER_LABELS = ("none", "time_horizon", "lead_time", "demand_distribution", "max_inventory", "max_order",
                 "holding_cost", "penalty_cost", "setup_cost", "risk_tolerance")
#: keyword fields and their classes; "none" means the message does not settle the field
KEYWORD_FIELDS = {
    "state_transition_model": ("none", "lost_sale", "backlog"),
    "perishability": ("none", "perishable", "non_perishable"),
    "demand_type": ("none", "random", "deterministic"),
}
_WORD = re.compile(r"[a-z]+|[$\u20ac\u00a3%#]")
_BOUNDARY = re.compile(r"[,;:()]|\s-\s|\b(?:and|but|so|while|whereas|then|plus)\b")


def _stem(word: str) -> str:
    """A crude suffix stripper: 'holds'/'holding'/'held' stay apart, but 'charges'/'charged'/'charge' meet."""
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def stemmed_words(text: str) -> list[str]:
    """The text's words, stemmed, numbers as "#" (shared with the advice model, `agents.policy_learned`)."""
    return [_stem(w) for w in _WORD.findall(re.sub(r"\d+(?:[.,]\d+)*", " # ", text))]


def number_features(sentence: str, q: Quantity, context: str | None = None) -> list[str]:
    """Sparse features of one number: its own shape, then the words of its clause, nearest first."""
    left_text, right_text = sentence[: q.start], sentence[q.end:]
    cut = list(_BOUNDARY.finditer(left_text))
    left_clause = left_text[cut[-1].end():] if cut else left_text
    m = _BOUNDARY.search(right_text)
    right_clause = right_text[: m.start()] if m else right_text
    left, right = stemmed_words(left_clause)[-8:], stemmed_words(right_clause)[:8]
    far_left, far_right = stemmed_words(left_text)[-14:], stemmed_words(right_text)[:14]
    value = abs(q.value)
    feats = [f"kind:{q.kind}", f"period:{q.period}", f"kp:{q.kind}:{q.period}", f"per_unit:{q.per_unit}",
             f"mag:{int(math.floor(math.log10(value))) if value > 0 else 'zero'}",
             f"int:{float(q.raw).is_integer()}", f"neg:{q.value < 0}", f"range:{q.is_range}",
             f"days:{q.days}" if q.kind == "duration" else "days:-", f"ctx:{context}"]
    feats += [f"l{i}:{w}" for i, w in enumerate(reversed(left[-3:]), 1)]
    feats += [f"r{i}:{w}" for i, w in enumerate(right[:3], 1)]
    feats += [f"lc:{w}" for w in left] + [f"rc:{w}" for w in right]
    feats += [f"lb:{a}_{b}" for a, b in zip(left, left[1:], strict=False)] + [f"rb:{a}_{b}" for a, b in zip(right, right[1:], strict=False)]
    feats += [f"lf:{w}" for w in far_left] + [f"rf:{w}" for w in far_right]
    feats += [f"s:{w}" for w in stemmed_words(sentence)]
    return feats


#: L2 penalty of the softmax fit: 0.3 read best across the leave-one-corpus-out runs (0.3 / 1 / 3 tried)
L2 = 0.3


def text_features(text: str) -> list[str]:
    """Unigrams and bigrams of a whole (normalised) message, for the keyword fields."""
    words = stemmed_words(text)
    return [f"w:{w}" for w in words] + [f"b:{a}_{b}" for a, b in zip(words, words[1:], strict=False)]


@dataclass
class Softmax:
    """Multinomial logistic regression on binary features (L2, fitted with L-BFGS)."""

    vocab: dict[str, int]
    weights: np.ndarray  # (features + 1 bias, classes)
    classes: tuple[str, ...]

    @classmethod
    def fit(cls, rows: list[list[str]], labels: list[str], classes: tuple[str, ...], l2: float | None = None) -> Softmax:
        l2 = L2 if l2 is None else l2
        vocab: dict[str, int] = {}
        for feats in rows:
            for f in feats:
                vocab.setdefault(f, len(vocab))
        x = cls._matrix(rows, vocab)
        y = np.array([classes.index(lab) for lab in labels])
        n, d, k = x.shape[0], x.shape[1], len(classes)
        onehot = np.zeros((n, k))
        onehot[np.arange(n), y] = 1.0

        def loss(flat: np.ndarray) -> tuple[float, np.ndarray]:
            w = flat.reshape(d, k)
            z = x @ w
            z -= z.max(axis=1, keepdims=True)
            p = np.exp(z)
            p /= p.sum(axis=1, keepdims=True)
            nll = -np.log(p[np.arange(n), y] + 1e-12).sum()
            grad = x.T @ (p - onehot) + l2 * w
            return float(nll + 0.5 * l2 * (w * w).sum()), np.asarray(grad).ravel()

        res = minimize(loss, np.zeros(d * k), jac=True, method="L-BFGS-B", options={"maxiter": 400})
        return cls(vocab=vocab, weights=res.x.reshape(d, k), classes=classes)

    @staticmethod
    def _matrix(rows: list[list[str]], vocab: dict[str, int]) -> sparse.csr_matrix:
        data, cols, ptr = [], [], [0]
        bias = len(vocab)
        for feats in rows:
            idx = sorted({vocab[f] for f in feats if f in vocab} | {bias})
            cols.extend(idx)
            data.extend([1.0] * len(idx))
            ptr.append(len(cols))
        return sparse.csr_matrix((data, cols, ptr), shape=(len(rows), bias + 1))

    def proba(self, feats: list[str]) -> dict[str, float]:
        idx = [self.vocab[f] for f in set(feats) if f in self.vocab] + [len(self.vocab)]
        z = self.weights[idx].sum(axis=0)
        p = np.exp(z - z.max())
        p /= p.sum()
        return dict(zip(self.classes, p.tolist(), strict=True))


# ---- labels recovered from the corpora ----------------------------------------------------------------
def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-3 * max(1.0, abs(b))


def _demand_values(label: object) -> list[float]:
    """The numbers a demand label is made of: poisson(35) -> [35], normal(20, 4) -> [20, 4], "48" -> [48]."""
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", str(label))]


def _number_label(q: Quantity, fields: dict[str, object], ask: list[str]) -> str | None:
    """The field `q` states, "none", or None when its value fits two fields (no example either way)."""
    raw, values = q.value, [q.value] + ([q.high] if q.high is not None else [])
    per_day = [v / PERIOD_DAYS[q.period] for v in values] if q.period in PERIOD_DAYS else values
    hits = set()
    for name, label in fields.items():
        if name == "demand_distribution":
            if any(_close(v, t) for v in per_day + values for t in _demand_values(label)):
                hits.add(name)
            continue
        if name not in NUMBER_LABELS:
            continue
        try:
            target = float(label)
        except (TypeError, ValueError):
            continue
        candidates = per_day if name in ("holding_cost", "penalty_cost") else values
        if any(_close(v, target) for v in candidates) or (name == "setup_cost" and _close(raw, target)):
            hits.add(name)
    if q.is_range:
        hits |= {name for name in ask if name in NUMBER_LABELS}
    if len(hits) > 1:
        return None
    return hits.pop() if hits else "none"


def _keyword_label(name: str, fields: dict[str, object]) -> str:
    value = str(fields.get(name, "none")).strip().lower().replace(" ", "_").replace("-", "_")
    return value if value in KEYWORD_FIELDS[name] else "none"


def _records(paths: list[Path]) -> list[tuple[str, dict[str, object], list[str], str | None]]:
    """(text, fields, ask, question context) from held-out-format and corpus-format JSONL files."""
    out = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            if "utterance" in item:  # the older corpus format
                out.append((item["utterance"], item.get("expected", {}), [], item.get("question_context")))
            else:
                out.append((item["text"], item.get("fields", {}), list(item.get("ask", [])),
                            item.get("question_context")))
    return out


def training_examples(paths: list[Path]) -> tuple[list[list[str]], list[str], dict[str, tuple[list, list]]]:
    """Number examples (features, label) and, per keyword field, message examples."""
    rows, labels = [], []
    keyword: dict[str, tuple[list, list]] = {name: ([], []) for name in KEYWORD_FIELDS}
    for text, fields, ask, context in _records(paths):
        norm = normalise_text(text)
        for sentence in split_sentences(norm) or [norm]:
            padded = " " + sentence + " "
            for q in scan_quantities(padded):
                label = _number_label(q, fields, ask)
                if label is not None:
                    rows.append(number_features(padded, q, context))
                    labels.append(label)
        if context is None:  # an answer to a question leans on the question; keep the keyword model to free text
            for name, (xs, ys) in keyword.items():
                xs.append(text_features(norm))
                ys.append(_keyword_label(name, fields) if name not in ask else "none")
    return rows, labels, keyword


@dataclass
class LearnedReader:
    """The fitted number model and one message model per keyword field."""

    numbers: Softmax
    keywords: dict[str, Softmax]

    @classmethod
    def fit(cls, paths: list[Path]) -> LearnedReader:
        rows, labels, keyword = training_examples(paths)
        numbers = Softmax.fit(rows, labels, NUMBER_LABELS)
        models = {name: Softmax.fit(xs, ys, KEYWORD_FIELDS[name]) for name, (xs, ys) in keyword.items()}
        return cls(numbers=numbers, keywords=models)

    def number_field(self, sentence: str, q: Quantity, context: str | None,
                     allowed: tuple[str, ...]) -> tuple[str | None, float, dict[str, float]]:
        """The most likely field among `allowed` (None when "none" wins), its probability, all probabilities."""
        p = self.numbers.proba(number_features(sentence, q, context))
        best = max(("none", *allowed), key=lambda c: p.get(c, 0.0))
        return (None if best == "none" else best), p.get(best, 0.0), p

    def keyword(self, name: str, norm_text: str) -> tuple[str | None, float]:
        p = self.keywords[name].proba(text_features(norm_text))
        best = max(p, key=p.get)
        return (None if best == "none" else best), p[best]


def _fingerprint(paths: list[Path]) -> str:
    """What the fitted model depends on: the corpora, the feature and normalisation code, the penalty."""
    h = hashlib.sha256(f"L2={L2}".encode())
    here = Path(__file__).parent
    for path in [*paths, *(here / f for f in ("extraction_learned.py", "extraction_text.py", "extraction_typos.py",
                                               "extraction_units.py"))]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:20]


def _cache_dir() -> Path:
    return Path(os.environ.get("ASKOPT_CACHE_DIR") or Path.home() / ".cache" / "askopt")


@lru_cache(maxsize=1)
def learned_reader() -> LearnedReader:
    """The reader fitted on every shipped training file: once per machine (about 10 s), then loaded from the
    cache (`$ASKOPT_CACHE_DIR`, default ~/.cache/askopt) under a fingerprint of the corpora and the code, so
    every Ray worker does not refit it. An unwritable cache only costs the refit."""
    paths = sorted(TRAIN_DIR.glob("*.jsonl"))
    cached = _cache_dir() / f"learned-reader-{_fingerprint(paths)}.pkl"
    try:
        with cached.open("rb") as f:
            reader = pickle.load(f)
        if isinstance(reader, LearnedReader):
            return reader
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError):
        pass
    reader = LearnedReader.fit(paths)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        with tmp.open("wb") as f:
            pickle.dump(reader, f)
        os.replace(tmp, cached)
    except OSError:
        pass
    return reader
