"""A learned second reader for advice: which number is the reorder point, the order-up-to level or the quantity.

Why: the advice parser's phrase rules read 98% of the 730 corpus advice texts they were fixed on but 62-90% of
advice from writers they never saw (blind sets v3-v11, docs/dialogue.md); most of those misses are texts the
rules call unparseable because a number sits in a phrase they do not know. Like the extraction reader's learned
model (`agents.extraction_learned`), this one learns the decision from labelled advice written by people who
never saw the rules: a softmax regression over the words around each number, nearest first. It only speaks
where the rules found no policy, and only when it is sure of every number it uses (an unsure text stays
unparseable, so advice with no policy is not turned into one).

Fitted on first use from `agents/data/advice_train/*.jsonl`, in well under a second, deterministically.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from agents.extraction_learned import Softmax, stemmed_words

__all__ = ["ADVICE_TRAIN_DIR", "LearnedAdvice", "learned_advice", "number_roles"]

ADVICE_TRAIN_DIR = Path(__file__).parent / "data" / "advice_train"
ROLES = ("none", "s", "S", "Q")
#: how sure the model must be of each number it uses (set by leave-one-corpus-out runs on the corpora A-N)
MIN_ROLE_PROBABILITY = 0.7
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\d])")
_CUT = re.compile(r"[.;:\n]|\s-\s|\s/\s")


def _features(text: str, m: re.Match) -> list[str]:
    """The number's neighbourhood: the words of its clause on each side (nearest first), a wider window, and its
    rank among the numbers of the text."""
    left_text, right_text = text[: m.start()], text[m.end():]
    cuts = list(_CUT.finditer(left_text))
    left_clause = left_text[cuts[-1].end():] if cuts else left_text
    cut = _CUT.search(right_text)
    right_clause = right_text[: cut.start()] if cut else right_text
    left, right = stemmed_words(left_clause)[-8:], stemmed_words(right_clause)[:6]
    feats = [f"l{i}:{w}" for i, w in enumerate(reversed(left[-3:]), 1)]
    feats += [f"r{i}:{w}" for i, w in enumerate(right[:3], 1)]
    feats += [f"lc:{w}" for w in left] + [f"rc:{w}" for w in right]
    feats += [f"lb:{a}_{b}" for a, b in zip(left, left[1:], strict=False)]
    feats += [f"lf:{w}" for w in stemmed_words(left_text)[-14:]] + [f"rf:{w}" for w in stemmed_words(right_text)[:10]]
    feats.append(f"int:{'.' not in m.group(0)}")
    return feats


def _numbers(text: str) -> list[tuple[float, list[str]]]:
    values = [(float(m.group(0)), m) for m in _NUMBER.finditer(text)]
    ordered = sorted({v for v, _ in values})
    out = []
    for v, m in values:
        rank = "max" if v == ordered[-1] else "min" if v == ordered[0] else "mid"
        out.append((v, _features(text, m) + [f"rank:{rank}", f"n:{min(len(ordered), 4)}"]))
    return out


def _label(value: float, policy: dict) -> str:
    for role in ("s", "S", "Q"):
        if role in policy and abs(float(policy[role]) - value) < 1e-9:
            return role
    if "range" in policy and value in [float(x) for x in policy["range"]]:
        return policy.get("range_field", "none")
    return "none"


def training_examples(paths: list[Path], normalise) -> tuple[list[list[str]], list[str]]:
    rows, labels = [], []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            if item["policy"].get("type") == "infeasible":
                continue  # its numbers have roles the label does not give (only the reason): not "none"
            policy = item["policy"] if item["policy"].get("type") != "none" else {}
            for value, feats in _numbers(normalise(item["text"])):
                rows.append(feats)
                labels.append(_label(value, policy))
    return rows, labels


@dataclass
class LearnedAdvice:
    model: Softmax

    @classmethod
    def fit(cls, paths: list[Path], normalise) -> LearnedAdvice:
        rows, labels = training_examples(paths, normalise)
        return cls(Softmax.fit(rows, labels, ROLES))

    def roles(self, norm_text: str, min_p: float = MIN_ROLE_PROBABILITY) -> dict[str, float] | None:
        """{role: value} for the roles the text states, when the model is sure of every number (a role, or no
        role at all); None when any number is in doubt or two numbers claim one role."""
        found: dict[str, float] = {}
        for value, feats in _numbers(norm_text):
            p = self.model.proba(feats)
            best = max(p, key=p.get)
            if p[best] < min_p or (best in found and found[best] != value):
                return None
            if best != "none":
                found[best] = value
        return found


def number_roles(text: str) -> dict[str, float] | None:
    """The shipped model's reading of one advice text (normalised the parser's way)."""
    from agents.policy_parser import normalise_advice

    return learned_advice().roles(normalise_advice(text))


@lru_cache(maxsize=1)
def learned_advice() -> LearnedAdvice:
    from agents.policy_parser import normalise_advice

    return LearnedAdvice.fit(sorted(ADVICE_TRAIN_DIR.glob("*.jsonl")), normalise_advice)
