"""Data-collection mode: participants play the store manager against the fixed consultant, and their sessions
become the Human Imitator's SFT corpus.

As in the paper, a participant gets a scenario (a generated business: the story and the hidden twelve parameters
to convey, `agents.generator.generate_instance`) and talks to the consultant the web page serves; the consultant is
fixed (the offline extraction agent and its scripted prompts), so the corpus is about the manager's side only.
`export_jsonl` turns every collection session into one (prompt, response) pair per manager turn with exactly the
builder and writer the imitator's corpus uses (`agents.imitator.corpus.build_examples` / `write_jsonl`): the
prompt carries the scenario's facts line and the dialogue so far, `source` is "web", `persona` "participant".
"""

from __future__ import annotations

import secrets
from pathlib import Path

COLLECT_SEED = "web-collect"  # generated scenarios are (COLLECT_SEED, index): reproducible from the index
MODE = "collect"


def new_scenario(index: int | None = None) -> dict:
    """A scenario for one participant: the story, the facts to convey (parameter -> value) and their one-line form."""
    from agents.generator import generate_instance
    from agents.imitator.corpus import facts_line
    from inventory.spec import ParameterTable

    index = secrets.randbelow(10**9) if index is None else index
    inst = generate_instance(COLLECT_SEED, index)
    return {"index": index, "context": inst.context,
            "facts": ParameterTable.from_problem(inst.problem).to_json(), "facts_line": facts_line(inst.problem)}


def dialogues(store) -> list:
    """Every collection session of `store` as an imitator-corpus Dialogue (consultant/manager turns)."""
    from agents.imitator.corpus import CONSULTANT_ROLES, MANAGER_ROLES, Dialogue

    out = []
    for sid, _owner, state in store.states(MODE):
        turns = []
        for role, text in state.get("transcript", []):
            role = str(role).lower()
            if role in MANAGER_ROLES:
                turns.append(("manager", str(text)))
            elif role in CONSULTANT_ROLES:
                turns.append(("consultant", str(text)))
        if any(r == "manager" for r, _ in turns):
            facts = (state.get("scenario") or {}).get("facts_line", "")
            out.append(Dialogue(f"web-{sid}", turns, "participant", facts, "web"))
    return out


def export_jsonl(store, path: str | Path) -> tuple[int, int]:
    """Write the prompt-response JSONL; (dialogues, examples) written."""
    from agents.imitator.corpus import build_examples, write_jsonl

    ds = dialogues(store)
    return len(ds), write_jsonl(build_examples(ds), path)
