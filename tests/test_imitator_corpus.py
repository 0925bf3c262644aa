"""The imitator's SFT corpus: split by dialogue, external transcripts, diversity metrics, the vLLM serve YAML."""

import json

import pytest
import yaml

from agents.imitator.corpus import (
    Dialogue,
    build_examples,
    distinct_n,
    read_transcripts,
    render_prompt,
    self_bleu,
    split_by_dialogue,
)
from agents.imitator.habits import opening_sentence, round_within


def _dialogues(n):
    return [Dialogue(f"d{i}", [("manager", f"Hi, I run shop {i}."), ("consultant", "Lead time?"),
                               ("manager", f"{i % 5 + 1} days."), ("consultant", "Capacity?"),
                               ("manager", f"{10 * i} units.")], "typical", f"lead_time={i % 5 + 1}")
            for i in range(n)]


def test_split_is_by_dialogue_never_by_turn():
    ex = build_examples(_dialogues(60))
    assert len(ex) == 180
    train, test = split_by_dialogue(ex, 0.2, seed=1)
    assert not {e.dialogue_id for e in train} & {e.dialogue_id for e in test}
    assert len(train) + len(test) == len(ex) and 0 < len(test) < len(ex)
    # stable: the same dialogue lands on the same side when the corpus grows
    _, test_big = split_by_dialogue(build_examples(_dialogues(90)), 0.2, seed=1)
    assert {e.dialogue_id for e in test} <= {e.dialogue_id for e in test_big}


def test_prompt_has_facts_history_and_cue_response_is_the_reply():
    ex = build_examples(_dialogues(1))
    assert ex[1].prompt.splitlines()[0] == "Facts: lead_time=1"
    assert ex[1].prompt.endswith("Consultant: Lead time?\nManager:") and ex[1].response == "1 days."
    assert "Please describe your business" in ex[0].prompt  # the opening answers the greeting
    long = render_prompt([("consultant", f"q{i}") for i in range(10)], "f", "vague", max_turns=3)
    assert "q6" not in long and "q9" in long and "..." in long


def test_external_transcripts_jsonl_and_csv(tmp_path):
    rows = [{"dialogue_id": "a", "turn": 2, "role": "user", "text": "About 5 a day."},
            {"dialogue_id": "a", "turn": 1, "role": "assistant", "text": "How much do you sell?"},
            {"dialogue_id": "b", "turn": 1, "role": "manager", "text": "Hello."}]
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows))
    ds = read_transcripts(p)
    assert [d.turns for d in ds][0] == [("consultant", "How much do you sell?"), ("manager", "About 5 a day.")]
    c = tmp_path / "t.csv"
    c.write_text("dialogue_id,turn,role,text\nx,1,consultant,Hi?\nx,2,robot,Beep.\n")
    with pytest.raises(ValueError, match="role 'robot' is not allowed"):
        read_transcripts(c)
    with pytest.raises(ValueError, match="must end in .jsonl or .csv"):
        read_transcripts(tmp_path / "t.txt")


def test_diversity_metrics_on_known_strings():
    same = ["we sell about five a day"] * 10
    varied = [f"reply number {i} says {w} things" for i, w in enumerate("abcdefghij")]
    assert distinct_n(same, 2) == pytest.approx(5 / 50)
    assert distinct_n(varied, 2) > 0.5
    assert self_bleu(same) == pytest.approx(1.0)
    assert self_bleu(varied) < 0.5


def test_human_rounding_stays_within_tolerance_and_openings_are_sentences():
    assert round_within(25.55, 0.04) == 25 and round_within(4.1, 0.08) == 4
    for x in (0.27, 3.33, 128.0, 0.061):
        assert abs(round_within(x, 0.04) - x) <= 0.04 * x
    assert opening_sentence("An auto parts store that sells batteries") == \
        "I run an auto parts store that sells batteries."
    assert opening_sentence("We bake bread.") == "We bake bread."


def test_vllm_serve_yaml_is_generated_from_the_llm_config(tmp_path):
    from serving.vllm_app import VLLMImitatorConfig, serve_config, write_serve_yaml

    cfg = VLLMImitatorConfig(base_model="/models/askopt-imitator/merged")
    data = yaml.safe_load(write_serve_yaml(cfg, tmp_path / "s.yaml").read_text())
    llm = data["applications"][0]["args"]["llm_configs"][0]
    # askopt's guarded builder, not ray.serve.llm:build_openai_app (no keys, CORS open to every origin)
    assert data["applications"][0]["import_path"] == "serving.vllm_app:build_guarded_openai_app"
    assert llm["model_loading_config"] == {"model_id": "askopt-imitator", "model_source": "/models/askopt-imitator/merged"}
    assert "lora_config" not in llm  # the merged checkpoint needs no adapter
    # the checked-in YAML is exactly this generated config
    assert yaml.safe_load(open("serving/imitator_vllm.yaml").read()) == serve_config(cfg)
    try:
        from ray.serve.llm import LLMConfig
    except ImportError:  # vLLM is GPU-only: the pydantic model is not importable here
        return
    assert LLMConfig(**llm).model_loading_config.model_id == "askopt-imitator"
