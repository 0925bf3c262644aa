"""LoRA supervised fine-tuning of the Human Imitator (transformers + peft), loss on the manager's tokens only.

The defaults are the paper's recipe (sft_default.yaml): LoRA r 16, alpha 32, dropout 0.05, lr 2e-4 cosine with
3% warm-up, 3 epochs, per-device batch 1 x grad-accum 16. With a GPU and bitsandbytes the base loads in 4-bit NF4
(bf16 compute) and the optimiser is paged AdamW 32-bit; anywhere else it is plain fp32 LoRA with torch AdamW.

`base_model: tiny` builds a small Qwen2 model from a config plus a byte-level BPE tokenizer trained on the
corpus (nothing is downloaded): what the tests, the benchmark and a CPU user run. A random tiny base needs a
large `initializer_range` (0.2) to be trainable under LoRA alone (platform-facts.md).

We use a plain training loop rather than trl's SFTTrainer: the completion-only masking, per-epoch checkpoints
and resume are a few lines each here, and the loop does not change with trl's frequent API moves.

Layout of an output folder: base/ (the base model + tokenizer, for `tiny` the one we built), checkpoint-epoch-N/
(the LoRA adapter + trainer_state.pt), train_log.jsonl, merged/ after `merge`.

transformers/peft/torch are imported inside functions: the base install never needs them.
"""

from __future__ import annotations

import json
import math
import random
import re
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import yaml

from agents.imitator.corpus import SFTExample

__all__ = ["TrainConfig", "build_tiny_base", "checkpoints", "encode_example", "load_config", "merge", "train"]

DEFAULT_CONFIG = Path(__file__).with_name("sft_default.yaml")
STATE_FILE = "trainer_state.pt"


@dataclass
class TrainConfig:
    base_model: str = "tiny"  # "tiny" (built here) or a local model folder, e.g. /models/Qwen2.5-7B
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    target_modules: list[str] = field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                                                               "up_proj", "down_proj"])
    learning_rate: float = 2e-4
    lr_scheduler: str = "cosine"
    warmup_ratio: float = 0.03
    epochs: int = 3
    per_device_batch: int = 1
    grad_accum: int = 16
    adam_betas: tuple[float, float] = (0.9, 0.999)
    adam_eps: float = 1e-8
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    max_length: int = 512  # prompt truncated from the left so the response always fits
    quantize: str = "auto"  # auto = 4-bit NF4 when CUDA and bitsandbytes are present; "none" = never
    seed: int = 0
    threads: int = 2
    # the tiny CPU base (base_model: tiny)
    tiny_vocab: int = 1024
    tiny_hidden: int = 64
    tiny_layers: int = 2
    tiny_heads: int = 4
    tiny_init_range: float = 0.2
    tiny_tie_embeddings: bool = True
    # trained in full next to the LoRA adapters (PEFT modules_to_save). Empty for a pretrained base (the paper);
    # a random tiny base needs its embeddings and output head trained, or its frozen random vocabulary caps
    # what the adapters can say (benchmarks/bench_imitator.py's CPU override)
    modules_to_save: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        checks = {"lora_r": self.lora_r >= 1, "lora_alpha": self.lora_alpha > 0,
                  "lora_dropout": 0 <= self.lora_dropout < 1, "learning_rate": self.learning_rate > 0,
                  "warmup_ratio": 0 <= self.warmup_ratio < 1, "epochs": self.epochs >= 1,
                  "per_device_batch": self.per_device_batch >= 1, "grad_accum": self.grad_accum >= 1,
                  "max_length": self.max_length >= 16, "threads": self.threads >= 1}
        for name, ok in checks.items():
            if not ok:
                raise ValueError(f"train config {name}: {getattr(self, name)!r} is out of range")
        if self.lr_scheduler not in ("cosine", "linear", "constant"):
            raise ValueError(f"train config lr_scheduler: {self.lr_scheduler!r} is not allowed; allowed: cosine, "
                             "linear, constant")
        if self.quantize not in ("auto", "none"):
            raise ValueError(f"train config quantize: {self.quantize!r} is not allowed; allowed: auto, none")
        self.adam_betas = tuple(float(b) for b in self.adam_betas)  # type: ignore[assignment]


def load_config(path: str | Path | None = None, **overrides) -> TrainConfig:
    """The YAML config (default: the paper's recipe) with `overrides` (None values ignored) applied."""
    data = yaml.safe_load(Path(path or DEFAULT_CONFIG).read_text()) or {}
    known = {f.name for f in fields(TrainConfig)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"train config: {unknown[0]!r} is not a setting; allowed: {', '.join(sorted(known))}")
    data.update({k: v for k, v in overrides.items() if v is not None})
    return TrainConfig(**data)


# ---- base model and tokenizer -------------------------------------------------------------------------------
def train_tokenizer(texts: list[str], vocab_size: int):
    """A byte-level BPE tokenizer trained on the corpus, as a transformers fast tokenizer with pad/eos."""
    from llm.tokenizer import train_bpe

    return train_bpe(texts, vocab_size, ["<|pad|>", "<|endoftext|>"], pad_token="<|pad|>", eos_token="<|endoftext|>")


def build_tiny_base(out: Path, texts: list[str], config: TrainConfig):
    """A random Qwen2 model from a small config plus a tokenizer trained on `texts`, saved under `out`."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tok = train_tokenizer(texts, config.tiny_vocab)
    torch.manual_seed(config.seed)
    cfg = Qwen2Config(vocab_size=len(tok), hidden_size=config.tiny_hidden, intermediate_size=config.tiny_hidden * 2,
                      num_hidden_layers=config.tiny_layers, num_attention_heads=config.tiny_heads,
                      num_key_value_heads=max(1, config.tiny_heads // 2), max_position_embeddings=config.max_length,
                      initializer_range=config.tiny_init_range, tie_word_embeddings=config.tiny_tie_embeddings,
                      pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, bos_token_id=tok.eos_token_id)
    model = Qwen2ForCausalLM(cfg)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return model, tok


def _gpu_4bit(config: TrainConfig) -> bool:
    import importlib.util

    import torch

    return config.quantize == "auto" and torch.cuda.is_available() and importlib.util.find_spec("bitsandbytes") \
        is not None


def load_base(path: str | Path, config: TrainConfig | None = None):
    """(model, tokenizer) from a local folder; 4-bit NF4 with bf16 compute when a GPU and bitsandbytes exist."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    kw = {}
    if config is not None and _gpu_4bit(config):
        from transformers import BitsAndBytesConfig

        kw = {"quantization_config": BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                                        bnb_4bit_compute_dtype=torch.bfloat16),
              "device_map": "auto"}
    else:
        kw = {"dtype": torch.float32}
    model = AutoModelForCausalLM.from_pretrained(path, **kw)
    return model, tok


# ---- data ---------------------------------------------------------------------------------------------------
def encode_example(tok, ex: SFTExample, max_length: int) -> tuple[list[int], list[int]]:
    """(input_ids, labels): the prompt's tokens are masked with -100 so the loss is on the manager's reply only."""
    prompt = tok(ex.prompt, add_special_tokens=False)["input_ids"]
    reply = tok(" " + ex.response, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    reply = reply[: max_length - 8]
    prompt = prompt[-(max_length - len(reply)):]  # keep the end of the prompt: the question and the cue
    return prompt + reply, [-100] * len(prompt) + reply


def collate(batch: list[tuple[list[int], list[int]]], pad_id: int):
    import torch

    n = max(len(ids) for ids, _ in batch)
    ids = torch.full((len(batch), n), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), n), -100, dtype=torch.long)
    mask = torch.zeros((len(batch), n), dtype=torch.long)
    for i, (x, y) in enumerate(batch):
        ids[i, : len(x)] = torch.tensor(x)
        labels[i, : len(y)] = torch.tensor(y)
        mask[i, : len(x)] = 1
    return {"input_ids": ids, "labels": labels, "attention_mask": mask}


def checkpoints(out: str | Path) -> list[tuple[int, Path]]:
    """[(epoch, folder)] of the per-epoch checkpoints under `out`, by epoch."""
    found = []
    for p in Path(out).glob("checkpoint-epoch-*"):
        m = re.fullmatch(r"checkpoint-epoch-(\d+)", p.name)
        if m and (p / "adapter_config.json").exists():
            found.append((int(m.group(1)), p))
    return sorted(found)


# ---- training -----------------------------------------------------------------------------------------------
def _lora(model, config: TrainConfig):
    from peft import LoraConfig, get_peft_model

    present = {n.rsplit(".", 1)[-1] for n, _ in model.named_modules()}
    targets = [t for t in config.target_modules if t in present]
    if not targets:
        raise ValueError(f"train config target_modules: none of {config.target_modules} is in the model")
    missing = [m for m in config.modules_to_save if m not in present]
    if missing:
        raise ValueError(f"train config modules_to_save: {missing[0]!r} is not in the model; "
                         f"allowed: module names of the base, e.g. embed_tokens, lm_head")
    lcfg = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                      target_modules=targets, bias="none", task_type="CAUSAL_LM",
                      modules_to_save=list(config.modules_to_save) or None)
    return get_peft_model(model, lcfg)


def _optimizer(params, config: TrainConfig):
    import torch

    if _gpu_4bit(config):
        import bitsandbytes as bnb

        return bnb.optim.PagedAdamW32bit(params, lr=config.learning_rate, betas=config.adam_betas,
                                         eps=config.adam_eps, weight_decay=config.weight_decay)
    return torch.optim.AdamW(params, lr=config.learning_rate, betas=config.adam_betas, eps=config.adam_eps,
                             weight_decay=config.weight_decay)


def _scheduler(opt, config: TrainConfig, total_steps: int):
    from transformers import (
        get_constant_schedule_with_warmup,
        get_cosine_schedule_with_warmup,
        get_linear_schedule_with_warmup,
    )

    warm = int(math.ceil(config.warmup_ratio * total_steps))
    if config.lr_scheduler == "cosine":
        return get_cosine_schedule_with_warmup(opt, warm, total_steps)
    if config.lr_scheduler == "linear":
        return get_linear_schedule_with_warmup(opt, warm, total_steps)
    return get_constant_schedule_with_warmup(opt, warm)


def prepare_base(out: Path, train_examples: list[SFTExample], config: TrainConfig) -> Path:
    """The base model folder: out/base (built for `tiny`, once) or the configured local folder."""
    if config.base_model != "tiny":
        if not Path(config.base_model).exists():
            raise ValueError(f"train config base_model: {config.base_model!r} is not a local folder (nothing is "
                             "downloaded); use 'tiny' on CPU")
        return Path(config.base_model)
    base = out / "base"
    if not (base / "config.json").exists():
        texts = [e.prompt + " " + e.response for e in train_examples]
        build_tiny_base(base, texts, config)
    return base


def train(train_examples: list[SFTExample], out: str | Path, config: TrainConfig | None = None,
          resume: bool = True, progress: bool = True, max_steps: int | None = None) -> dict:
    """LoRA SFT; a checkpoint per epoch; with `resume`, continue after the last complete epoch under `out`.

    Returns a summary: epochs done, optimizer steps, final mean loss per epoch, seconds."""
    import torch
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file
    from tqdm import tqdm

    config = config or load_config()
    if not train_examples:
        raise ValueError("train: the training set is empty")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(config.threads)
    (out / "train_config.yaml").write_text(yaml.safe_dump(asdict(config) | {"adam_betas": list(config.adam_betas)}))
    base = prepare_base(out, train_examples, config)
    model, tok = load_base(base, config)
    if _gpu_4bit(config):
        from peft import prepare_model_for_kbit_training

        model = prepare_model_for_kbit_training(model)
    model = _lora(model, config)
    data = [encode_example(tok, e, config.max_length) for e in train_examples]
    batches_per_epoch = math.ceil(len(data) / config.per_device_batch)
    steps_per_epoch = math.ceil(batches_per_epoch / config.grad_accum)
    total = steps_per_epoch * config.epochs
    opt = _optimizer([p for p in model.parameters() if p.requires_grad], config)
    sched = _scheduler(opt, config, total)
    start_epoch, step = 1, 0
    done = checkpoints(out)
    if resume and done:
        last_epoch, folder = done[-1]
        set_peft_model_state_dict(model, load_file(str(folder / "adapter_model.safetensors")))
        state = torch.load(folder / STATE_FILE, weights_only=False)
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        step = int(state["step"])
        start_epoch = last_epoch + 1
    device = next(model.parameters()).device
    log = (out / "train_log.jsonl").open("a")
    t0 = time.perf_counter()
    epoch_loss: dict[int, float] = {}
    model.train()
    for epoch in range(start_epoch, config.epochs + 1):
        order = list(range(len(data)))
        random.Random(config.seed * 1000 + epoch).shuffle(order)
        batches = [order[i:i + config.per_device_batch] for i in range(0, len(order), config.per_device_batch)]
        bar = tqdm(total=steps_per_epoch, desc=f"epoch {epoch}/{config.epochs}", disable=not progress, unit="step")
        running, count = 0.0, 0
        for k, idx in enumerate(batches):
            b = {key: v.to(device) for key, v in collate([data[i] for i in idx], tok.pad_token_id).items()}
            loss = model(**b).loss / config.grad_accum
            loss.backward()
            running += float(loss) * config.grad_accum
            count += 1
            if (k + 1) % config.grad_accum == 0 or k + 1 == len(batches):
                torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad],
                                               config.max_grad_norm)
                opt.step()
                sched.step()
                opt.zero_grad(set_to_none=True)
                step += 1
                bar.update(1)
                bar.set_postfix(loss=f"{running / count:.3f}")
                if step % 10 == 0:
                    log.write(json.dumps({"epoch": epoch, "step": step, "loss": running / count,
                                          "lr": sched.get_last_lr()[0]}) + "\n")
                if max_steps is not None and step >= max_steps:
                    break
        bar.close()
        epoch_loss[epoch] = running / max(1, count)
        folder = out / f"checkpoint-epoch-{epoch}"
        model.save_pretrained(folder)
        torch.save({"optimizer": opt.state_dict(), "scheduler": sched.state_dict(), "step": step, "epoch": epoch},
                   folder / STATE_FILE)
        log.write(json.dumps({"epoch": epoch, "step": step, "epoch_loss": epoch_loss[epoch]}) + "\n")
        log.flush()
        if max_steps is not None and step >= max_steps:
            break
    log.close()
    return {"epochs_done": [e for e, _ in checkpoints(out)], "steps": step, "epoch_loss": epoch_loss,
            "seconds": round(time.perf_counter() - t0, 2), "base": str(base)}


def base_folder(out: str | Path) -> Path:
    """The base model a training folder was trained on (out/base, or the configured local folder)."""
    out = Path(out)
    if (out / "base" / "config.json").exists():
        return out / "base"
    cfg = yaml.safe_load((out / "train_config.yaml").read_text())
    return Path(cfg["base_model"])


def load_adapter(out: str | Path, checkpoint: str | Path):
    """(peft model, tokenizer) for one checkpoint of a training folder, in fp32 eval mode."""
    from peft import PeftModel

    model, tok = load_base(base_folder(out))
    model = PeftModel.from_pretrained(model, str(checkpoint))
    model.eval()
    return model, tok


def merge(out: str | Path, checkpoint: str | Path, dest: str | Path | None = None) -> Path:
    """merge_and_unload the chosen adapter into a plain checkpoint (model + tokenizer) at `dest` (out/merged)."""
    model, tok = load_adapter(out, checkpoint)
    merged = model.merge_and_unload()
    dest = Path(dest or Path(out) / "merged")
    dest.mkdir(parents=True, exist_ok=True)
    merged.save_pretrained(dest)
    tok.save_pretrained(dest)
    (dest / "askopt_imitator.json").write_text(json.dumps({"merged_from": str(checkpoint)}))
    return dest
