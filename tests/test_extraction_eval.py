"""The extraction scorers: the held-out format (stated / asked back / invented), the checksum guard, and the same
evaluation through the LLM backend on the local scripted server."""

import json
from pathlib import Path

import pytest
from llm_server import ScriptedOpenAIServer

from agents.extraction_eval import evaluate_corpus, evaluate_heldout, verify_checksums
from agents.extraction_llm import LLMExtractor
from inventory.spec import PARAMETERS
from llm.client import LLMClient, LLMConfig

ITEMS = [
    {"id": "t1", "text": "Delivery takes 4 days and the shelves hold 90.", "fields": {"lead_time": 4,
                                                                                     "max_inventory": 90}},
    {"id": "t2", "text": "We sell about 9 a day, it swings a lot.", "fields": {"demand_type": "random"},
     "ask": ["demand_distribution"]},
    {"id": "t3", "text": "Our customers are patient.", "fields": {}},
]


def _write(tmp_path, items):
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    return path


def test_heldout_scoring_counts_stated_asked_and_invented(tmp_path):
    r = evaluate_heldout(_write(tmp_path, ITEMS))
    assert (r.expected, r.expected_right, r.ask, r.ask_right) == (3, 3, 1, 1)
    assert r.invented == 1 and r.failures[0]["id"] == "t3"  # "patient" -> backlog, not in the expected fields
    assert "invented values 1" in r.summary()


def test_checksum_mismatch_is_refused(tmp_path):
    (tmp_path / "a.jsonl").write_text("x\n")
    (tmp_path / "SHA256SUMS").write_text("0" * 64 + "  a.jsonl\n")
    with pytest.raises(ValueError, match="does not match"):
        verify_checksums(tmp_path)


@pytest.mark.parametrize("version", ["v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23"])
def test_the_blind_sets_are_unchanged_since_they_were_frozen(version):
    # a blind set is scored once; a changed file would make its recorded first score meaningless
    sums = verify_checksums(Path(__file__).parent / "data" / f"heldout_{version}")
    assert {"manager_utterances.jsonl", "advice_texts.jsonl"} <= set(sums)  # v10-v23 also freeze their PROCEDURE.md


def _reply(table: dict) -> str:
    cells = {p: {"value": None, "status": "undefined"} for p in PARAMETERS}
    cells.update({k: {"value": v, "status": "defined"} for k, v in table.items()})
    return json.dumps({"reasoning": "r", "updated_table": cells, "corrections": [], "action": "ASK_NEXT_QUESTION",
                       "next_prompt": "Next?"})


def test_same_evaluation_through_the_llm_backend(tmp_path):
    script = [_reply({"lead_time": 4, "max_inventory": 90}), _reply({"demand_type": "random"}), _reply({})]
    with ScriptedOpenAIServer(script) as srv:
        client = LLMClient(LLMConfig(base_url=srv.base_url, model="scripted", max_retries=0))
        r = evaluate_heldout(_write(tmp_path, ITEMS), backend=LLMExtractor(client))
        assert (r.expected_right, r.ask_right, r.invented) == (3, 1, 0)
        assert "Delivery takes 4 days" in srv.requests[0]["messages"][-1]["content"]
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"question_context": "lead_time", "utterance": "4 days",
                                  "expected": {"lead_time": 4}}) + "\n")
    with ScriptedOpenAIServer([_reply({"lead_time": 4})]) as srv:
        client = LLMClient(LLMConfig(base_url=srv.base_url, model="scripted", max_retries=0))
        assert evaluate_corpus(corpus, backend=LLMExtractor(client)).accuracy == 1.0
