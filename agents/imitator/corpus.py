"""The Human Imitator's SFT corpus: (prompt, response) pairs, one per manager turn, split by dialogue.

As in the paper, x is the consultant's question with the dialogue so far and y is the manager's verbatim reply.
We also put the scenario header (the hidden facts and the persona, one line each) at the top of every prompt:
the served imitator receives exactly that scenario (serving/protocol.py), so the model learns to answer from
the facts instead of inventing them, and the study can score extraction against it.

Sources:
- the persona simulator (`simulate_dialogues`): the hybrid consultant and the textbook consultant interview
  generated instances, persona cycling expert/typical/vague;
- external transcripts (`read_transcripts`), JSONL or CSV, one row per utterance:
  `dialogue_id, turn, role, text` with role in {consultant, manager} (aliases: agent/assistant = consultant,
  user/owner/human = manager), optional `persona` and `facts` (the scenario line) per dialogue.

The split is by dialogue, never by turn (`split_by_dialogue`): turns of one conversation share facts and
phrasing, and a turn-level split would leak them into the held-out set.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = ["Dialogue", "SFTExample", "build_examples", "distinct_n", "facts_line", "read_transcripts", "render_prompt",
           "self_bleu", "simulate_dialogues", "split_by_dialogue", "write_jsonl", "read_jsonl", "PROMPT_TURNS"]

CONSULTANT_ROLES = {"consultant", "agent", "assistant"}
MANAGER_ROLES = {"manager", "user", "owner", "human"}
PROMPT_TURNS = 4  # dialogue history kept in a prompt (the latest utterances): bounds the prompt length


@dataclass
class Dialogue:
    dialogue_id: str
    turns: list[tuple[str, str]]  # (consultant|manager, text)
    persona: str = "unknown"
    facts: str = ""
    source: str = "simulator"


@dataclass
class SFTExample:
    dialogue_id: str
    turn: int
    prompt: str
    response: str
    persona: str = "unknown"
    source: str = "simulator"


def facts_line(problem) -> str:
    """The hidden facts as one line (`field=value; ...`), the form `render_prompt` and the served model use."""
    import csv as _csv
    import io

    from inventory.spec import ParameterTable

    rows = list(_csv.reader(io.StringIO(ParameterTable.from_problem(problem).to_csv())))[1:]
    return "; ".join(f"{r[0]}={r[1]}" for r in rows if len(r) > 1)


def render_prompt(history: list[tuple[str, str]], facts: str = "", persona: str = "unknown",
                  max_turns: int = PROMPT_TURNS) -> str:
    """The prompt for the manager's next reply: scenario header, the latest `max_turns` utterances (the last one
    is the consultant's question), then the "Manager:" cue the response continues."""
    lines = [f"Facts: {facts}" if facts else "Facts: (unknown)", f"Persona: {persona}"]
    shown = history[-max_turns:] if max_turns else history
    if len(shown) < len(history):
        lines.append("...")
    for role, text in shown:
        lines.append(f"{'Consultant' if role == 'consultant' else 'Manager'}: {' '.join(text.split())}")
    lines.append("Manager:")
    return "\n".join(lines)


def build_examples(dialogues: Iterable[Dialogue]) -> list[SFTExample]:
    """One example per manager utterance. The opening (no question yet) gets the consultant's greeting as x."""
    out: list[SFTExample] = []
    for d in dialogues:
        history: list[tuple[str, str]] = []
        for i, (role, text) in enumerate(d.turns):
            if role == "manager":
                ctx = history if history and history[-1][0] == "consultant" else \
                    history + [("consultant", "Please describe your business and what you need.")]
                out.append(SFTExample(d.dialogue_id, i, render_prompt(ctx, d.facts, d.persona), " ".join(text.split()),
                                      d.persona, d.source))
            history.append((role, text))
    return out


def simulate_dialogues(n: int, seed: int = 0, personas: tuple[str, ...] = ("expert", "typical", "vague")
                       ) -> list[Dialogue]:
    """`n` simulated interviews: even ones by the hybrid (extraction) consultant, odd ones by the textbook one."""
    from agents.consultant import run_textbook_consultant
    from agents.dialogue import run_hybrid_dialogue
    from agents.generator import generate_instance
    from agents.imitator.persona import HumanImitator

    out: list[Dialogue] = []
    for i in range(n):
        inst = generate_instance(seed, i)
        persona = personas[i % len(personas)]
        s = seed * 100_003 + i
        if i % 2 == 0:
            d = run_hybrid_dialogue(inst.problem, inst.context, persona, s)
            raw = d.transcript or []
        else:
            raw = run_textbook_consultant(HumanImitator(inst.problem, inst.context, persona, s), seed=s).transcript
        turns = [("manager" if r in MANAGER_ROLES else "consultant", str(t)) for r, t in raw]
        out.append(Dialogue(f"sim-{seed}-{i}", turns, persona, facts_line(inst.problem), "simulator"))
    return out


def read_transcripts(path: str | Path) -> list[Dialogue]:
    """External transcripts (JSONL or CSV, one utterance a row; see the module docstring) as dialogues."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        with path.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
    elif path.suffix.lower() in (".jsonl", ".json"):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    else:
        raise ValueError(f"transcripts: {path.name!r} must end in .jsonl or .csv")
    by_id: dict[str, Dialogue] = {}
    order: dict[str, list[tuple[int, str, str]]] = {}
    for k, row in enumerate(rows, 1):
        for col in ("dialogue_id", "role", "text"):
            if not str(row.get(col) or "").strip():
                raise ValueError(f"transcripts row {k}: {col} is required (columns: dialogue_id, turn, role, text, "
                                 "optional persona, facts)")
        role = str(row["role"]).strip().lower()
        if role in CONSULTANT_ROLES:
            role = "consultant"
        elif role in MANAGER_ROLES:
            role = "manager"
        else:
            raise ValueError(f"transcripts row {k}: role {row['role']!r} is not allowed; allowed: "
                             f"{', '.join(sorted(CONSULTANT_ROLES | MANAGER_ROLES))}")
        did = f"ext-{row['dialogue_id']}"
        d = by_id.setdefault(did, Dialogue(did, [], str(row.get("persona") or "unknown"), str(row.get("facts") or ""),
                                           "external"))
        if row.get("facts") and not d.facts:
            d.facts = str(row["facts"])
        try:
            turn = int(row.get("turn", k) or k)
        except (TypeError, ValueError):
            raise ValueError(f"transcripts row {k}: turn {row.get('turn')!r} must be a whole number") from None
        order.setdefault(did, []).append((turn, role, str(row["text"])))
    for did, items in order.items():
        by_id[did].turns = [(r, t) for _, r, t in sorted(items, key=lambda x: x[0])]
    return list(by_id.values())


def split_by_dialogue(examples: list[SFTExample], held_out: float = 0.1, seed: int = 0
                      ) -> tuple[list[SFTExample], list[SFTExample]]:
    """(train, test): a dialogue goes wholly to one side, chosen by a hash of (seed, dialogue id) - stable when the
    corpus grows, independent of order."""
    if not 0 < held_out < 1:
        raise ValueError(f"held_out: {held_out!r} must be in (0, 1)")

    def is_test(did: str) -> bool:
        h = hashlib.sha256(f"{seed}:{did}".encode()).digest()
        return int.from_bytes(h[:8], "big") / 2**64 < held_out

    train = [e for e in examples if not is_test(e.dialogue_id)]
    test = [e for e in examples if is_test(e.dialogue_id)]
    return train, test


def write_jsonl(examples: Iterable[SFTExample], path: str | Path) -> int:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w") as fh:
        for e in examples:
            fh.write(json.dumps(asdict(e)) + "\n")
            n += 1
    return n


def read_jsonl(path: str | Path) -> list[SFTExample]:
    out = []
    for k, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = [c for c in ("dialogue_id", "prompt", "response") if c not in row]
        if missing:
            raise ValueError(f"{Path(path).name} line {k}: {missing[0]} is required")
        out.append(SFTExample(str(row["dialogue_id"]), int(row.get("turn", k)), row["prompt"], row["response"],
                              row.get("persona", "unknown"), row.get("source", "external")))
    return out


# ---- diversity of what the manager says ---------------------------------------------------------------------
def _words(text: str) -> list[str]:
    return text.lower().split()


def distinct_n(texts: list[str], n: int = 2) -> float:
    """Distinct-n: unique n-grams / all n-grams over the texts (higher = less repetitive)."""
    grams: Counter = Counter()
    for t in texts:
        w = _words(t)
        grams.update(tuple(w[i:i + n]) for i in range(len(w) - n + 1))
    total = sum(grams.values())
    return len(grams) / total if total else 0.0


@dataclass
class _Bleu:
    refs: list[Counter] = field(default_factory=list)


def self_bleu(texts: list[str], sample: int = 200, max_n: int = 4, seed: int = 0) -> float:
    """Self-BLEU (BLEU-4 of each text against all the others, averaged; higher = more alike = more scripted).

    Uses up to `sample` texts as hypotheses (a fixed seeded sample) against all texts as references; clipped
    n-gram precision with +1 smoothing and the brevity penalty against the closest reference length."""
    import numpy as np

    if len(texts) < 2:
        return 0.0
    toks = [_words(t) for t in texts]
    ngram_refs = [[Counter(tuple(w[i:i + n]) for i in range(len(w) - n + 1)) for n in range(1, max_n + 1)]
                  for w in toks]
    # max reference count per n-gram over all texts, with the hypothesis' own contribution removed below
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(texts), size=min(sample, len(texts)), replace=False)
    maxc: list[dict] = [{} for _ in range(max_n)]
    second: list[dict] = [{} for _ in range(max_n)]
    owner: list[dict] = [{} for _ in range(max_n)]
    for j, grams in enumerate(ngram_refs):
        for n in range(max_n):
            for g, c in grams[n].items():
                if c > maxc[n].get(g, 0):
                    second[n][g] = maxc[n].get(g, 0)
                    maxc[n][g], owner[n][g] = c, j
                elif c > second[n].get(g, 0):
                    second[n][g] = c
    lens = sorted(len(w) for w in toks)
    scores = []
    for i in idx:
        hyp = ngram_refs[i]
        hl = len(toks[i])
        if hl == 0:
            continue
        logp = 0.0
        for n in range(max_n):
            total = sum(hyp[n].values())
            match = sum(min(c, second[n].get(g, 0) if owner[n].get(g) == i else maxc[n].get(g, 0))
                        for g, c in hyp[n].items())
            logp += math.log((match + 1) / (total + 1))
        closest = min(lens, key=lambda r: (abs(r - hl), r))
        bp = 1.0 if hl >= closest else math.exp(1 - closest / hl)
        scores.append(bp * math.exp(logp / max_n))
    return float(np.mean(scores)) if scores else 0.0
