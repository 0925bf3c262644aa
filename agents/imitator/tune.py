"""A Ray Tune sweep over LoRA rank / learning rate / epochs for the imitator, best trial by the fidelity rule.

Each trial trains into its own folder, measures its checkpoints on the held-out turns and reports the row the
selection rule (fidelity.select_checkpoint: highest BERTScore, ties to lower perplexity) picks; across trials
the same rule picks the winner. Small and CPU-only by default: 2 CPUs, one trial at a time.
"""

from __future__ import annotations

from pathlib import Path

from agents.imitator.corpus import SFTExample

__all__ = ["sweep"]


def _trial(config: dict, train_examples, test_examples, out: str, base_cfg: dict) -> dict:
    from agents.imitator.fidelity import evaluate_checkpoints, select_checkpoint
    from agents.imitator.sft import TrainConfig, train

    name = f"r{config['lora_r']}-lr{config['lr']:g}-e{config['epochs']}"
    folder = Path(out) / name
    cfg = TrainConfig(**(base_cfg | {"lora_r": config["lora_r"], "lora_alpha": 2 * config["lora_r"],
                                     "learning_rate": config["lr"], "epochs": config["epochs"]}))
    train(train_examples, folder, cfg, progress=False)
    df = evaluate_checkpoints(folder, test_examples, include_base=False, progress=False)
    best = select_checkpoint(df)
    row = df[df["checkpoint"] == best].iloc[0]
    return {"trial": name, "checkpoint": str(folder / best), "perplexity": float(row["perplexity"]),
            "bertscore": float(row["bertscore"]), "rouge_l": float(row["rouge_l"]), "sbert": float(row["sbert"])}


def sweep(train_examples: list[SFTExample], test_examples: list[SFTExample], out: str | Path,
          ranks=(4, 16), lrs=(2e-3,), epochs=(1, 2), base_cfg: dict | None = None):
    """Grid over (rank, lr, epochs) on Ray Tune; returns the results table (best first) and writes sweep.parquet."""
    import pandas as pd
    import ray
    from ray import tune

    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    base_cfg = base_cfg or {"per_device_batch": 16, "grad_accum": 1, "threads": 1}
    started = not ray.is_initialized()
    if started:
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        trainable = tune.with_parameters(
            lambda c, tr, te: _trial(c, tr, te, str(out), base_cfg), tr=train_examples, te=test_examples)
        tuner = tune.Tuner(
            tune.with_resources(trainable, {"cpu": 1}),
            param_space={"lora_r": tune.grid_search(list(ranks)), "lr": tune.grid_search(list(lrs)),
                         "epochs": tune.grid_search(list(epochs))},
            tune_config=tune.TuneConfig(max_concurrent_trials=1),
            run_config=tune.RunConfig(storage_path=str(out / "ray"), name="imitator_sweep", verbose=0),
        )
        results = tuner.fit()
        rows = [r.metrics for r in results if r.metrics and "trial" in r.metrics]
    finally:
        if started:
            ray.shutdown()
    if not rows:
        raise RuntimeError("tune: no trial finished")
    df = pd.DataFrame(rows)[["trial", "checkpoint", "perplexity", "bertscore", "rouge_l", "sbert"]]
    df = df.sort_values(["bertscore", "perplexity"], ascending=[False, True]).reset_index(drop=True)
    df.to_parquet(out / "sweep.parquet", index=False)
    return df
