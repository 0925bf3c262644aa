"""LoRA SFT of the imitator on a tiny Qwen2 model built here (no download): masking, a step that lowers the loss,
checkpoint/resume, merge round trip, fidelity metrics on known strings, and the served model over real HTTP."""

import socket

import httpx
import pytest

pytest.importorskip("transformers")
pytest.importorskip("peft")

from agents.imitator.corpus import Dialogue, SFTExample, build_examples  # noqa: E402
from agents.imitator.sft import checkpoints, encode_example, load_config, merge, train  # noqa: E402

FACTS = ("time_horizon=60; demand_type=random; demand_distribution=poisson(6); perishability=non_perishable; "
         "state_transition_model=lost_sale; holding_cost=0.4; penalty_cost=3; setup_cost=2; lead_time=2; "
         "max_inventory=60; max_order=30; risk_tolerance=1")


def _examples(n=24):
    ds = [Dialogue(f"d{i}", [("manager", "Hi. I run a bike shop."), ("consultant", "How long is the lead time?"),
                             ("manager", f"It takes {i % 4 + 2} days for an order to arrive.")], "typical", FACTS)
          for i in range(n)]
    return build_examples(ds)


TINY = dict(tiny_vocab=300, tiny_hidden=32, tiny_layers=1, tiny_heads=2, max_length=160, per_device_batch=8,
            grad_accum=1, learning_rate=5e-3, threads=1, lora_r=8, lora_alpha=16)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("imitator") / "run"
    res = train(_examples(), out, load_config(None, epochs=2, **TINY), progress=False)
    return out, res


def test_labels_mask_the_prompt():
    from agents.imitator.sft import train_tokenizer

    ex = _examples(1)[1]
    tok = train_tokenizer([ex.prompt + " " + ex.response], 300)
    ids, labels = encode_example(tok, ex, 160)
    full_prompt = tok(ex.prompt, add_special_tokens=False)["input_ids"]
    n_reply = len(tok(" " + ex.response, add_special_tokens=False)["input_ids"]) + 1
    n_prompt = len(ids) - n_reply
    assert len(ids) <= 160 and ids[:n_prompt] == full_prompt[-n_prompt:]  # truncated from the left
    assert labels[:n_prompt] == [-100] * n_prompt
    assert labels[n_prompt:] == ids[n_prompt:] and labels[-1] == tok.eos_token_id
    assert tok.decode(ids[n_prompt:], skip_special_tokens=True).strip() == ex.response


def test_training_lowers_manager_token_loss_and_checkpoints_each_epoch(run):
    from agents.imitator.fidelity import perplexity
    from agents.imitator.sft import base_folder, load_adapter, load_base

    out, res = run
    assert [e for e, _ in checkpoints(out)] == [1, 2] and res["steps"] == 12
    ex = _examples()
    base_ppl = perplexity(*load_base(base_folder(out)), ex, 160)
    trained_ppl = perplexity(*load_adapter(out, out / "checkpoint-epoch-2"), ex, 160)
    assert trained_ppl < base_ppl
    # resume: nothing left to do for 2 epochs; a third epoch continues from the saved optimizer step
    res3 = train(ex, out, load_config(None, epochs=3, **TINY), progress=False)
    assert res3["epochs_done"] == [1, 2, 3] and res3["steps"] == 18 and list(res3["epoch_loss"]) == [3]


def test_merge_round_trip_gives_identical_logits(run, tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    from agents.imitator.sft import load_adapter

    out, _ = run
    peft_model, tok = load_adapter(out, out / "checkpoint-epoch-2")
    dest = merge(out, out / "checkpoint-epoch-2", tmp_path / "merged")
    plain = AutoModelForCausalLM.from_pretrained(dest, dtype=torch.float32).eval()
    x = torch.tensor([tok(_examples(1)[1].prompt, add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        a, b = peft_model(input_ids=x).logits, plain(input_ids=x).logits
    assert torch.allclose(a, b, atol=1e-4)
    assert not any("lora" in k for k in plain.state_dict())


def test_fidelity_metrics_on_known_strings():
    from agents.imitator.fidelity import bertscore_f1, rouge_l, sbert_cosine, select_checkpoint

    ref = ["It takes three days for an order to arrive."]
    assert rouge_l(ref, ref) == pytest.approx(1.0)
    assert rouge_l(["banana"], ref) == 0.0
    same, other = bertscore_f1(ref, ref), bertscore_f1(["The weather is lovely in spring."], ref)
    assert same == pytest.approx(1.0, abs=1e-4) and other < same
    assert sbert_cosine(ref, ref) == pytest.approx(1.0, abs=1e-4)
    assert sbert_cosine(["Deliveries arrive after 3 days."], ref) > sbert_cosine(["I like cats."], ref)
    import pandas as pd

    df = pd.DataFrame({"checkpoint": ["base", "e1", "e2", "e3"], "epoch": [0, 1, 2, 3],
                       "perplexity": [40, 5, 3.5, 3.4], "bertscore": [0.9, 0.80, 0.845, 0.818]})
    assert select_checkpoint(df) == "e2"  # the paper's choice; the base is never selected
    df.loc[3, "bertscore"] = 0.8445
    assert select_checkpoint(df) == "e3"  # within the tolerance: lower perplexity wins


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_served_model_answers_the_scenario_protocol_over_http(run, tmp_path):
    import ray  # a core dependency: an import error must fail, not skip
    from ray import serve

    from serving.imitator_model_app import build_app
    from serving.protocol import scenario_message

    out, _ = run
    merged = merge(out, out / "checkpoint-epoch-2", tmp_path / "merged")
    port = _free_port()
    ray.init(address="local", num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        serve.run(build_app({"model_path": str(merged), "max_new_tokens": 12}), name="imitator_model",
                  route_prefix="/")
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        truth = {"time_horizon": 60, "demand_type": "random", "demand_distribution": "poisson(6)",
                 "perishability": "non_perishable", "state_transition_model": "lost_sale", "holding_cost": 0.4,
                 "penalty_cost": 3.0, "setup_cost": 2, "lead_time": 2, "max_inventory": 60, "max_order": 30,
                 "risk_tolerance": 1}
        msgs = [scenario_message(truth, "A bike shop.", "typical", 3), {"role": "user", "content": "Hello!"},
                {"role": "assistant", "content": "Hi. I run a bike shop."},
                {"role": "user", "content": "How long is the lead time?"}]
        r = httpx.post(url, json={"model": "askopt-imitator", "messages": msgs}, timeout=120)
        assert r.status_code == 200
        text = r.json()["choices"][0]["message"]["content"]
        assert isinstance(text, str) and text
        again = httpx.post(url, json={"model": "askopt-imitator", "messages": msgs}, timeout=120).json()
        assert again["choices"][0]["message"]["content"] == text  # greedy: stateless and repeatable
        bad = httpx.post(url, json={"model": "m", "messages": [{"role": "user", "content": "hi"}]}, timeout=60)
        assert bad.status_code == 400 and "askopt_scenario" in bad.json()["error"]["message"]
        wrong = [scenario_message(truth | {"lead_time": "soon"}, "", "typical", 0), {"role": "user", "content": "Hi"}]
        bad = httpx.post(url, json={"model": "m", "messages": wrong}, timeout=60)
        assert bad.status_code == 400 and "ground_truth" in bad.json()["error"]["message"]
        assert httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=30).json()["data"][0]["id"] == "askopt-imitator"
        # with keys configured the fine-tuned engine refuses what the CPU imitator refuses
        serve.run(build_app({"model_path": str(merged), "max_new_tokens": 12, "api_keys": "k-test-1"}),
                  name="imitator_model", route_prefix="/")
        body = {"model": "askopt-imitator", "messages": msgs}
        assert httpx.post(url, json=body, timeout=120).status_code == 401
        ok = httpx.post(url, json=body, headers={"Authorization": "Bearer k-test-1"}, timeout=120)
        assert ok.status_code == 200 and ok.json()["choices"][0]["message"]["content"] == text
    finally:
        serve.shutdown()
        ray.shutdown()


def test_example_roundtrip_type():
    assert isinstance(_examples(1)[0], SFTExample)


def test_trained_embeddings_and_head_survive_the_merge(tmp_path):
    """modules_to_save (the CPU benchmark's random tiny base): the untied embeddings and output head are trained
    beside the adapters, and the merged plain checkpoint carries them (same logits as the adapter model)."""
    import torch
    from transformers import AutoModelForCausalLM

    from agents.imitator.sft import base_folder, load_adapter

    out = tmp_path / "run"
    cfg = load_config(None, epochs=1, tiny_tie_embeddings=False, modules_to_save=["embed_tokens", "lm_head"], **TINY)
    train(_examples(), out, cfg, progress=False)
    base = AutoModelForCausalLM.from_pretrained(base_folder(out), dtype=torch.float32)
    peft_model, tok = load_adapter(out, out / "checkpoint-epoch-1")
    plain = AutoModelForCausalLM.from_pretrained(merge(out, out / "checkpoint-epoch-1", tmp_path / "merged"),
                                                 dtype=torch.float32).eval()
    for name in ("model.embed_tokens.weight", "lm_head.weight"):
        assert not torch.equal(plain.state_dict()[name], base.state_dict()[name])  # trained, and kept
    x = torch.tensor([tok(_examples(1)[1].prompt, add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        assert torch.allclose(peft_model(input_ids=x).logits, plain(input_ids=x).logits, atol=1e-4)
    with pytest.raises(ValueError, match="modules_to_save: 'wte' is not in the model"):
        train(_examples(), tmp_path / "bad", load_config(None, epochs=1, modules_to_save=["wte"], **TINY),
              progress=False)


def test_tune_sweep_picks_the_best_trial_by_the_fidelity_rule(tmp_path):
    """The Ray Tune grid trains one folder per trial, measures each on held-out turns, and ranks the trials by the
    selection rule (highest BERTScore, then lower perplexity); the table is written as sweep.parquet."""
    import pandas as pd

    from agents.imitator.tune import sweep

    ex = _examples()
    base = {k: v for k, v in TINY.items() if k not in ("lora_r", "lora_alpha", "learning_rate")}
    df = sweep(ex[:40], ex[40:44], tmp_path, ranks=(2, 4), lrs=(5e-3,), epochs=(1,), base_cfg=base)
    assert sorted(df["trial"]) == ["r2-lr0.005-e1", "r4-lr0.005-e1"]
    assert df["bertscore"].is_monotonic_decreasing and df["perplexity"].gt(0).all()
    assert all((tmp_path / t / "checkpoint-epoch-1").is_dir() for t in df["trial"])
    assert pd.read_parquet(tmp_path / "sweep.parquet")["trial"].tolist() == df["trial"].tolist()
