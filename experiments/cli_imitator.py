"""`askopt imitator corpus|train|eval|serve|tune`: the fine-tuned Human Imitator pipeline (docs/imitator.md).

transformers/peft are imported only inside the handlers, so `askopt --help` and the base install never need
them; a missing `.[train]` extra is one clear error line (exit 2).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from experiments.cli import UserInputError


def register(subparsers) -> None:
    p = subparsers.add_parser("imitator", help="the fine-tuned Human Imitator: corpus -> LoRA SFT -> fidelity metrics -> merged model -> serve",
                              description="Build the SFT corpus, train LoRA, measure fidelity per checkpoint, merge "
                                          "and serve the imitator (docs/imitator.md).")
    sub = p.add_subparsers(dest="imitator_command", metavar="STEP", required=True)

    c = sub.add_parser("corpus", help="SFT JSONL from the persona simulator and/or external transcripts")
    c.add_argument("--out", default="runs/imitator/corpus", help="folder for train.jsonl, test.jsonl, stats.json")
    c.add_argument("--dialogues", type=int, default=500, help="simulated dialogues (0 = none)")
    c.add_argument("--transcripts", action="append", default=[], help="external transcripts .jsonl/.csv (repeatable)")
    c.add_argument("--held-out", type=float, default=0.1, help="share of dialogues held out")
    c.add_argument("--seed", type=int, default=0)
    c.set_defaults(handler=run_corpus)

    t = sub.add_parser("train", help="LoRA SFT (paper recipe by default), a checkpoint per epoch, resumable")
    t.add_argument("--corpus", default="runs/imitator/corpus", help="folder with train.jsonl")
    t.add_argument("--out", default="runs/imitator/run")
    t.add_argument("--config", default=None, help="YAML config (default: agents/imitator/sft_default.yaml)")
    t.add_argument("--epochs", type=int, default=None)
    t.add_argument("--lr", type=float, default=None)
    t.add_argument("--lora-r", type=int, default=None)
    t.add_argument("--batch", type=int, default=None, help="per-device batch")
    t.add_argument("--grad-accum", type=int, default=None)
    t.add_argument("--no-resume", action="store_true", help="start over even if checkpoints exist")
    t.set_defaults(handler=run_train)

    e = sub.add_parser("eval", help="the four fidelity metrics per checkpoint, a plot, the selection rule, merge")
    e.add_argument("--corpus", default="runs/imitator/corpus", help="folder with test.jsonl")
    e.add_argument("--out", default="runs/imitator/run")
    e.add_argument("--limit", type=int, default=200, help="held-out turns measured")
    e.add_argument("--no-merge", action="store_true")
    e.set_defaults(handler=run_eval)

    s = sub.add_parser("serve", help="serve the merged checkpoint (transformers on CPU, or vLLM on a GPU)")
    s.add_argument("--model", default="runs/imitator/run/merged", help="merged checkpoint folder")
    s.add_argument("--engine", choices=("transformers", "vllm"), default="transformers")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--for-seconds", type=float, default=None)
    s.add_argument("--write-yaml", default=None, help="vllm: write the `serve run` YAML here and exit")
    s.set_defaults(handler=run_serve)

    u = sub.add_parser("tune", help="Ray Tune sweep over LoRA rank / lr / epochs, best by the fidelity rule")
    u.add_argument("--corpus", default="runs/imitator/corpus")
    u.add_argument("--out", default="runs/imitator/tune")
    u.add_argument("--ranks", default="4,16")
    u.add_argument("--lrs", default="2e-3")
    u.add_argument("--epochs", default="1,2")
    u.add_argument("--limit", type=int, default=40, help="held-out turns measured per trial")
    u.add_argument("--train-limit", type=int, default=400, help="training turns per trial")
    u.set_defaults(handler=run_tune)


def _need_train_extra() -> None:
    import importlib.util

    missing = [m for m in ("transformers", "peft") if importlib.util.find_spec(m) is None]
    if missing:
        raise UserInputError(f"{missing[0]} is not installed: pip install -e '.[train]' (or -r requirements-train.lock)")


def _corpus_file(folder: str, name: str) -> Path:
    path = Path(folder) / name
    if not path.exists():
        raise UserInputError(f"--corpus: {path} does not exist; run `askopt imitator corpus` first")
    return path


def run_corpus(args) -> int:
    from agents.imitator.corpus import (
        build_examples,
        distinct_n,
        read_transcripts,
        self_bleu,
        simulate_dialogues,
        split_by_dialogue,
        write_jsonl,
    )

    if args.dialogues < 0:
        raise UserInputError("--dialogues: must be >= 0")
    if not 0 < args.held_out < 1:
        raise UserInputError(f"--held-out: {args.held_out} must be in (0, 1)")
    t0 = time.perf_counter()
    dialogues = simulate_dialogues(args.dialogues, args.seed) if args.dialogues else []
    for path in args.transcripts:
        dialogues += read_transcripts(path)
    if not dialogues:
        raise UserInputError("--dialogues/--transcripts: nothing to build a corpus from")
    examples = build_examples(dialogues)
    train, test = split_by_dialogue(examples, args.held_out, args.seed)
    out = Path(args.out)
    write_jsonl(train, out / "train.jsonl")
    write_jsonl(test, out / "test.jsonl")
    replies = [e.response for e in examples]
    stats = {"dialogues": len(dialogues), "turns": len(examples), "train_turns": len(train), "test_turns": len(test),
             "test_dialogues": len({e.dialogue_id for e in test}), "distinct_2": round(distinct_n(replies, 2), 4),
             "self_bleu": round(self_bleu(replies), 4), "seconds": round(time.perf_counter() - t0, 1)}
    (out / "stats.json").write_text(json.dumps(stats, indent=2))
    print(json.dumps(stats))
    return 0


def run_train(args) -> int:
    _need_train_extra()
    from agents.imitator.corpus import read_jsonl
    from agents.imitator.sft import load_config, train

    cfg = load_config(args.config, epochs=args.epochs, learning_rate=args.lr, lora_r=args.lora_r,
                      per_device_batch=args.batch, grad_accum=args.grad_accum)
    res = train(read_jsonl(_corpus_file(args.corpus, "train.jsonl")), args.out, cfg, resume=not args.no_resume)
    print(json.dumps(res))
    return 0


def run_eval(args) -> int:
    _need_train_extra()
    from agents.imitator.corpus import read_jsonl
    from agents.imitator.fidelity import evaluate_checkpoints, plot_fidelity, select_checkpoint
    from agents.imitator.sft import merge

    if args.limit < 1:
        raise UserInputError("--limit: must be >= 1")
    test = read_jsonl(_corpus_file(args.corpus, "test.jsonl"))[: args.limit]
    df = evaluate_checkpoints(args.out, test)
    plot_fidelity(df, Path(args.out) / "fidelity.png")
    best = select_checkpoint(df)
    print(df.to_string(index=False))
    print(f"selected: {best}")
    if not args.no_merge:
        print(f"merged: {merge(args.out, Path(args.out) / best)}")
    return 0


def run_serve(args) -> int:
    if not 1 <= args.port <= 65535:
        raise UserInputError(f"--port: {args.port} is not allowed; must be in 1..65535")
    if args.engine == "vllm":
        from serving.vllm_app import VLLMImitatorConfig, build_vllm_app, write_serve_yaml

        cfg = VLLMImitatorConfig(base_model=str(Path(args.model).resolve()))
        if args.write_yaml:
            print(f"wrote {write_serve_yaml(cfg, args.write_yaml, args.host, args.port)}")
            return 0
        try:
            application = build_vllm_app(cfg)
        except RuntimeError as exc:
            raise UserInputError(str(exc)) from None
    else:
        _need_train_extra()
        if not (Path(args.model) / "config.json").exists():
            raise UserInputError(f"--model: {args.model} is not a merged checkpoint folder (no config.json); run "
                                 "`askopt imitator eval` first")
        from serving.imitator_model_app import build_app

        application = build_app({"model_path": str(Path(args.model).resolve())})
    import ray
    from ray import serve

    ray.init(address="local", num_cpus=2, ignore_reinit_error=True, include_dashboard=False)
    serve.start(http_options={"host": args.host, "port": args.port})
    serve.run(application, name="imitator", route_prefix="/")
    print(f"askopt imitator ({args.engine}) serving at http://{args.host}:{args.port}/v1 (Ctrl-C to stop)", flush=True)
    from experiments.cli_serve import wait_until_stopped

    try:
        wait_until_stopped(args.for_seconds)
    finally:
        serve.shutdown()
        ray.shutdown()
    return 0


def _floats(text: str, name: str, cast=float) -> list:
    try:
        return [cast(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserInputError(f"{name}: {text!r} must be a comma-separated list of numbers") from None


def run_tune(args) -> int:
    _need_train_extra()
    from agents.imitator.corpus import read_jsonl
    from agents.imitator.tune import sweep

    res = sweep(read_jsonl(_corpus_file(args.corpus, "train.jsonl"))[: args.train_limit],
                read_jsonl(_corpus_file(args.corpus, "test.jsonl"))[: args.limit], args.out,
                ranks=_floats(args.ranks, "--ranks", int), lrs=_floats(args.lrs, "--lrs"),
                epochs=_floats(args.epochs, "--epochs", int))
    print(res.to_string(index=False))
    return 0
