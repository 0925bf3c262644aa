"""A trainable repair agent: OR-Debug-Bench as a TRL ``GRPOTrainer`` environment (issue 16, item 4).

Why: the benchmark's agents are hand-written (heuristic) or prompted (LLM). Issue 16 asks for the other
half: an agent *trained* on the benchmark's own signal. TRL's ``GRPOTrainer(environment_factory=...)``
runs multi-turn tool-calling rollouts; `RepairEnvironment` is that environment. Each rollout gets one
synthetic infeasible instance (``reset``), the model calls tools that are thin wrappers over
`ordebug.env.DebugEnv.step` (get_iis, inspect, set_rhs, set_sense, set_bound, drop_row,
solve), and `RepairEnvironment.get_reward` scores the episode log with `ordebug.metrics.episode_metrics`.

The reward (`repair_reward`), from the episode's metrics row:

* 0 if no ``solve`` ever returned OPTIMAL (never feasible);
* else ``(RECOVERY_CREDIT + (1 - RECOVERY_CREDIT) * rational) * (1 - TE_WEIGHT * (1 - TE))``:
  rational recovery (OP >= 0.99 and FP >= 0.95, the leaderboard's definition) earns the full base,
  a feasible but irrational repair (e.g. dropping the IIS rows) only ``RECOVERY_CREDIT``; the TE factor
  (TE = 1 / solver calls up to recovery) takes off up to ``TE_WEIGHT`` for every extra solver call, so a
  rational repair always beats an irrational one and a one-call repair beats a five-call one.

``--model tiny`` builds a random 2-layer Qwen2 and a byte-level BPE tokenizer (with Qwen2.5's chat
template, so TRL's own tool-call parser applies) from config: nothing is downloaded. That is a CPU smoke
test of the plumbing (prompts, tool schemas, reset, reward, a GRPO step, saving), not a useful agent: a
random model almost never emits a well-formed tool call and learns nothing in two steps. A real run needs
a GPU and an instruction-tuned base; `gpu_command` prints the exact command.

trl/transformers/torch/datasets are imported inside functions: ``import ordebug`` never needs them.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ordebug.env import DebugEnv
from ordebug.generators import generate
from ordebug.instances import Instance, make_instance
from ordebug.metrics import episode_metrics

__all__ = ["GRPORunConfig", "RepairEnvironment", "build_dataset", "gpu_command", "main", "repair_reward", "warm_start",
           "tiny_model_and_tokenizer", "tool_methods", "train"]

# Operators the exposed tools can undo rationally (rhs, sense, bound, an added row). scale_row,
# flip_coef_sign and integrality need set_coef / scale_row / set_integrality, left out to keep the
# tool list (and the prompt) short.
TRAIN_OPERATORS = ("tighten_rhs", "flip_sense", "conflicting_bound", "drop_bound", "contradictory_row")
TRAIN_FAMILIES = ("production", "transportation", "blending", "diet", "inventory")
RECOVERY_CREDIT = 0.2  # share of the reward a feasible but not rational repair earns
TE_WEIGHT = 0.5  # at most this share is taken off for solver calls beyond the first
DEFAULT_BUDGET = 10
MAX_TOOL_CHARS = 1200  # tool results are truncated to this many characters
DEFAULT_GPU_MODEL = "Qwen/Qwen2.5-1.5B-Instruct"

INSTRUCTIONS = (
    "You are debugging an infeasible linear program. Use the tools: get_iis finds a conflicting subset of "
    "rows and bounds, inspect shows them next to their siblings (same name pattern), "
    "set_rhs / set_sense / set_bound / drop_row edit the model, solve re-solves it. get_iis and solve cost one "
    "solver call each; inspecting and editing are free. Undo the modelling error with the smallest change "
    "(restore the value the row or bound was meant to have; dropping rows is a last resort), then call solve. "
    "Stop calling tools once solve reports optimal.\n\n"
)


def repair_reward(metrics: dict) -> float:
    """The GRPO reward of one episode from its `episode_metrics` row (see the module docstring)."""
    if not metrics["recovered"]:
        return 0.0
    base = RECOVERY_CREDIT + (1.0 - RECOVERY_CREDIT) * float(metrics["rational"])
    return float(base * (1.0 - TE_WEIGHT * (1.0 - float(metrics["TE"]))))


@lru_cache(maxsize=256)
def instance_for(family: str, operator: str, seed: int, size: str = "small") -> Instance | None:
    """The synthetic instance a dataset row names (None when that sabotage does not yield one)."""
    return make_instance(generate(family, size, seed=seed), operator, "synthetic", f"{family}-{size}", seed=seed)


def _plan(seed: int):
    """Endless reproducible (family, operator, seed) draws."""
    rng = np.random.default_rng(seed)
    k = 0
    while True:
        yield (TRAIN_FAMILIES[int(rng.integers(len(TRAIN_FAMILIES)))],
               TRAIN_OPERATORS[int(rng.integers(len(TRAIN_OPERATORS)))], seed * 1000 + k + 1)
        k += 1


def seeded_instance(seed: int) -> tuple[str, str, int, Instance]:
    """The first instance the generator yields from `seed` (the fallback when a row names none)."""
    for n, (fam, op, s) in enumerate(_plan(seed)):
        inst = instance_for(fam, op, s)
        if inst is not None:
            return fam, op, s, inst
        if n > 200:
            break
    raise RuntimeError(f"no usable instance from seed {seed}")


def describe_text(env: DebugEnv) -> str:
    """What the model is told about its instance: sizes and name patterns, never the ground truth."""
    d = env.describe()
    rows = ", ".join(f"{k} x{v}" for k, v in d["row_families"].items())
    cols = ", ".join(f"{k} x{v}" for k, v in d["col_families"].items())
    return (f"Model {d['model']}: {d['rows']} rows, {d['cols']} columns ({d['integer_cols']} integer), "
            f"{'maximise' if d['objective_sense'] == 'max' else 'minimise'}. Status: infeasible.\n"
            f"Row families: {rows}\nColumn families: {cols}\n"
            f"Budget: {d['budget']} solver calls.")


class RepairEnvironment:
    """One DebugEnv episode per rollout. Public methods are the tools the model may call."""

    budget = DEFAULT_BUDGET

    def __init__(self, budget: int | None = None):
        if budget is not None:
            self.budget = budget
        self.instance: Instance | None = None
        self.env: DebugEnv | None = None

    def reset(self, family: str | None = None, operator: str | None = None, seed: int | None = None,
              size: str = "small", **kwargs) -> str:
        """Start an episode on the row's instance (``family``/``operator``/``seed``), else a seeded one."""
        inst = instance_for(family, operator, int(seed), size) if family and operator and seed is not None else None
        if inst is None:
            inst = seeded_instance(int(seed) if seed is not None else 0)[3]
        self.instance = inst
        self.env = DebugEnv(inst, budget=self.budget, iis_time_limit=5.0, solve_time_limit=5.0)
        return describe_text(self.env)

    def _call(self, op: str, **args) -> str:
        if self.env is None:
            return '{"error":"no episode: reset() was not called"}'
        text = json.dumps(self.env.step({"op": op, **args}), separators=(",", ":"), default=str)
        return text if len(text) <= MAX_TOOL_CHARS else text[:MAX_TOOL_CHARS] + "...(truncated)"

    def get_iis(self) -> str:
        """Compute an irreducible infeasible subsystem of the current model. Costs one solver call.

        Returns:
            The conflicting rows and column bounds (with the side in conflict) and their Farkas shares.
        """
        return self._call("get_iis")

    def inspect(self, name: str) -> str:
        """Show one constraint row (sense, right-hand side, bounds, coefficients) or one column (bounds, cost,
        integrality, the rows it appears in), by name. Free.

        Args:
            name: A row name, e.g. "cap_r1", or a column name, e.g. "make_p0".

        Returns:
            The row or column as JSON.
        """
        op = "inspect_row" if name in self.env.model.row_names else "inspect_col"
        return self._call(op, name=name)

    def set_rhs(self, row: str, value: float) -> str:
        """Change a row's right-hand side (the bound its sense uses). Free.

        Args:
            row: The row name.
            value: The new right-hand side.

        Returns:
            The edited row as JSON.
        """
        return self._call("set_rhs", row=row, value=value)

    def set_sense(self, row: str, sense: str) -> str:
        """Change a row's sense, keeping its right-hand side. Free.

        Args:
            row: The row name.
            sense: L for <=, G for >=, E for = (choices: ["L", "G", "E"])

        Returns:
            The edited row as JSON.
        """
        return self._call("set_sense", row=row, sense=sense)

    def set_bound(self, col: str, side: str, value: float) -> str:
        """Change a column's lower or upper bound. Free.

        Args:
            col: The column name.
            side: Which bound to change (choices: ["lower", "upper"])
            value: The new bound.

        Returns:
            The edited column as JSON.
        """
        return self._call("set_bound", col=col, side=side, value=value)

    def drop_row(self, row: str) -> str:
        """Delete a row from the model (a last resort: the row's intent is lost). Free.

        Args:
            row: The row name.

        Returns:
            Confirmation as JSON.
        """
        return self._call("drop_row", row=row)

    def solve(self) -> str:
        """Re-solve the current model. Costs one solver call.

        Returns:
            The solver status (optimal, infeasible, ...) and the objective value.
        """
        return self._call("solve")

    def get_reward(self) -> float:
        """Rational recovery with the solver-call (TE) penalty; 0 if never feasible (see `repair_reward`)."""
        if self.env is None or self.instance is None:
            return 0.0
        return repair_reward(episode_metrics(self.instance, self.env.log, check_conflict=False))


# ---- data ---------------------------------------------------------------------------------------------------
def dataset_rows(n: int, seed: int = 0) -> list[dict]:
    """`n` prompt rows naming usable instances, reproducible from `seed`."""
    rows: list[dict] = []
    for fam, op, s in _plan(seed):
        if len(rows) >= n:
            break
        if instance_for(fam, op, s) is not None:
            rows.append({"prompt": [{"role": "user", "content": INSTRUCTIONS}], "family": fam, "operator": op,
                         "seed": s, "size": "small"})
        if s - seed * 1000 > 50 * max(n, 1):
            raise RuntimeError(f"could not build {n} instances from seed {seed}")
    return rows


def build_dataset(n: int = 16, seed: int = 0):
    """A `datasets.Dataset` with a conversational ``prompt`` column plus the fields `RepairEnvironment.reset`
    reads (family, operator, seed, size). TRL appends reset()'s description to the user message."""
    from datasets import Dataset

    return Dataset.from_list(dataset_rows(n, seed))


# ---- tiny model ---------------------------------------------------------------------------------------------
SPECIAL_TOKENS = ["<|pad|>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TOOL_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]


def _tokenizer_corpus(seed: int) -> list[str]:
    """Texts like the ones the model reads and writes: tool schemas, descriptions, tool calls and results."""
    from transformers.utils import get_json_schema

    env = RepairEnvironment()
    texts = [json.dumps(get_json_schema(t)) for t in tool_methods(env)]
    for row in dataset_rows(8, seed):
        texts.append(INSTRUCTIONS + env.reset(**row))
        res = json.loads(env.get_iis())
        texts.append(json.dumps(res))
        for name, _ in res.get("rows", [])[:3]:
            texts.append(env.inspect(name))
            texts.append("<tool_call>\n" + json.dumps({"name": "inspect", "arguments": {"name": name}}) + "\n</tool_call>")
        texts.append(env.solve())
    texts.append('<tool_call>\n{"name": "get_iis", "arguments": {}}\n</tool_call>')
    return texts


def tool_methods(env: RepairEnvironment) -> list:
    """The bound tool methods, as TRL collects them (public functions other than reset/get_reward)."""
    import inspect

    return [getattr(env, n) for n, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
            if n not in ("reset", "get_reward") and not n.startswith("_")]


def tiny_model_and_tokenizer(hidden: int = 64, layers: int = 2, heads: int = 4, vocab: int = 1024, seed: int = 0):
    """A random Qwen2 causal LM and a byte-level BPE tokenizer, built locally (no download).

    The tokenizer carries TRL's copy of the Qwen2.5 chat template (renders tool schemas, tool calls and tool
    results) and, through `trl.chat_template_utils.add_response_schema`, the matching response parser, so
    ``tokenizer.parse_response`` turns ``<tool_call>{...}</tool_call>`` text into tool calls exactly as it
    does for a real Qwen2.5."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM
    from trl.chat_template_utils import add_response_schema, qwen2_5_chat_template

    from llm.tokenizer import train_bpe

    tokenizer = train_bpe(_tokenizer_corpus(seed) + [qwen2_5_chat_template], vocab, SPECIAL_TOKENS,
                          pad_token="<|pad|>", eos_token="<|im_end|>", bos_token=None, unk_token=None)
    tokenizer.add_tokens(TOOL_TOKENS)  # not special: Qwen2.5 keeps them in decoded text as well
    tokenizer.chat_template = qwen2_5_chat_template
    add_response_schema(tokenizer)
    torch.manual_seed(seed)
    cfg = Qwen2Config(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
                      num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=max(1, heads // 2),
                      max_position_embeddings=8192, tie_word_embeddings=True, pad_token_id=tokenizer.pad_token_id,
                      eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.eos_token_id)
    model = Qwen2ForCausalLM(cfg)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


WARM_START_CALL = '<tool_call>\n{"name": "get_iis", "arguments": {}}\n</tool_call><|im_end|>'


def warm_start(model, tokenizer, steps: int, rows: list[dict], lr: float = 3e-3) -> float:
    """Teach a tiny model to answer every prompt with one ``get_iis`` tool call (loss on the call only).

    Only so the CPU smoke run goes through TRL's tool loop (parse, call, append the result, regenerate);
    it is memorisation, not debugging. Returns the last loss."""
    import torch

    env = RepairEnvironment()
    tools = tool_methods(env)
    target = tokenizer(WARM_START_CALL, add_special_tokens=False)["input_ids"]
    seqs = []
    for row in rows:
        messages = [{"role": "user", "content": row["prompt"][-1]["content"] + env.reset(**row)}]
        prompt = tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=True,
                                               return_dict=False)
        ids = torch.tensor([list(prompt) + target])
        labels = ids.clone()
        labels[0, :len(prompt)] = -100
        seqs.append((ids, labels))
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    loss = torch.tensor(float("nan"))
    for k in range(steps):
        ids, labels = seqs[k % len(seqs)]
        loss = model(input_ids=ids, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
    return float(loss.detach())


# ---- training -----------------------------------------------------------------------------------------------
@dataclass
class GRPORunConfig:
    model: str = "tiny"  # "tiny" (built here, CPU smoke test) or a model id / local folder
    steps: int = 2
    num_generations: int = 2
    per_device_batch: int | None = None  # default: num_generations (one prompt per step)
    grad_accum: int = 1
    max_completion_length: int = 32
    max_tool_calls: int = DEFAULT_BUDGET
    num_prompts: int = 16
    learning_rate: float = 1e-6
    beta: float = 0.0
    temperature: float = 1.0
    output_dir: str = "runs/ordebug-grpo"
    seed: int = 0
    budget: int = DEFAULT_BUDGET
    use_vllm: bool = False
    vllm_mode: str = "colocate"
    bf16: bool = False
    gradient_checkpointing: bool = False
    save_model: bool = True
    threads: int | None = None  # torch CPU threads; None: 1 for tiny (a tiny model gains nothing from more, and
    # on a shared 2-core box two threads ran the smoke 15x slower), torch's default otherwise
    tiny_warm_start: int = 0  # tiny only: supervised steps teaching it one get_iis call (exercises the tool loop)

    def __post_init__(self) -> None:
        checks = {"steps": self.steps >= 1, "num_generations": self.num_generations >= 2,
                  "max_completion_length": self.max_completion_length >= 1, "num_prompts": self.num_prompts >= 1,
                  "budget": self.budget >= 1, "grad_accum": self.grad_accum >= 1,
                  "vllm_mode": self.vllm_mode in ("colocate", "server")}
        for name, ok in checks.items():
            if not ok:
                raise ValueError(f"GRPO config {name}: {getattr(self, name)!r} is out of range")


class _BudgetedEnvironment:
    """A picklable factory: `RepairEnvironment` (or a subclass) with the run's budget."""

    def __init__(self, cls: type, budget: int):
        self.cls, self.budget = cls, budget

    def __call__(self):
        return self.cls(budget=self.budget)


def train(config: GRPORunConfig, environment_cls: type = RepairEnvironment) -> dict:
    """Run `trl.GRPOTrainer` on the repair environment; returns (and writes) a summary.

    `environment_cls` is `RepairEnvironment` or a subclass (the tests count resets with one)."""
    import torch

    before = torch.get_num_threads()
    threads = config.threads or (1 if config.model == "tiny" else None)
    if threads:
        torch.set_num_threads(threads)
    try:
        return _train(config, environment_cls)
    finally:
        torch.set_num_threads(before)  # the caller's process (e.g. a test session) keeps its setting


def _train(config: GRPORunConfig, environment_cls: type) -> dict:
    import torch
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    t0 = time.perf_counter()
    torch.manual_seed(config.seed)
    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    if config.model == "tiny":
        model, tokenizer = tiny_model_and_tokenizer(seed=config.seed)
        if config.tiny_warm_start:
            warm_start(model, tokenizer, config.tiny_warm_start, dataset_rows(config.num_prompts, config.seed))
    else:
        model, tokenizer = config.model, AutoTokenizer.from_pretrained(config.model)
    batch = config.per_device_batch or config.num_generations
    args = GRPOConfig(
        output_dir=str(out), max_steps=config.steps, per_device_train_batch_size=batch,
        gradient_accumulation_steps=config.grad_accum, num_generations=config.num_generations,
        max_completion_length=config.max_completion_length, max_tool_calling_iterations=config.max_tool_calls,
        learning_rate=config.learning_rate, beta=config.beta, temperature=config.temperature,
        use_vllm=config.use_vllm, vllm_mode=config.vllm_mode, bf16=config.bf16,
        activation_checkpointing=config.gradient_checkpointing, seed=config.seed, data_seed=config.seed,
        logging_steps=1, save_strategy="no", report_to="none", use_cpu=not torch.cuda.is_available(),
        dataloader_num_workers=0, disable_tqdm=True,
    )
    trainer = GRPOTrainer(model=model, args=args, train_dataset=build_dataset(config.num_prompts, config.seed),
                          environment_factory=_BudgetedEnvironment(environment_cls, config.budget),
                          processing_class=tokenizer)
    result = trainer.train()
    if config.save_model:
        trainer.save_model(str(out))
    summary = {"config": asdict(config), "seconds": round(time.perf_counter() - t0, 2),
               "global_step": int(result.global_step), "log_history": trainer.state.log_history}
    (out / "grpo_summary.json").write_text(json.dumps(summary, indent=1, default=str))
    return summary


def gpu_command(base_model: str = DEFAULT_GPU_MODEL, steps: int = 500, num_generations: int = 8,
                output_dir: str | None = None) -> str:
    """The shell command for a real run: one GPU, vLLM colocated for generation, bf16."""
    out = output_dir or f"runs/ordebug-grpo-{base_model.rstrip('/').split('/')[-1].lower()}"
    argv = ["accelerate", "launch", "--num_processes", "1", "--mixed_precision", "bf16", "-m", "ordebug.grpo",
            "--model", base_model, "--use-vllm", "--vllm-mode", "colocate", "--bf16", "--gradient-checkpointing",
            "--steps", str(steps), "--num-generations", str(num_generations), "--per-device-batch",
            str(num_generations), "--grad-accum", "4", "--max-completion-length", "2048", "--max-tool-calls",
            str(DEFAULT_BUDGET), "--num-prompts", "2000", "--learning-rate", "1e-6", "--output-dir", out]
    return shlex.join(argv)


def main(argv: list[str] | None = None) -> int:
    d = GRPORunConfig()
    p = argparse.ArgumentParser(prog="python -m ordebug.grpo", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--model", default=d.model, help='"tiny" (random, built locally: CPU smoke test) or a model id')
    p.add_argument("--steps", type=int, default=d.steps)
    p.add_argument("--num-generations", type=int, default=d.num_generations)
    p.add_argument("--per-device-batch", type=int, default=None, help="default: --num-generations")
    p.add_argument("--grad-accum", type=int, default=d.grad_accum)
    p.add_argument("--max-completion-length", type=int, default=d.max_completion_length)
    p.add_argument("--max-tool-calls", type=int, default=d.max_tool_calls)
    p.add_argument("--num-prompts", type=int, default=d.num_prompts)
    p.add_argument("--learning-rate", type=float, default=d.learning_rate)
    p.add_argument("--temperature", type=float, default=d.temperature, help="sampling temperature")
    p.add_argument("--beta", type=float, default=d.beta, help="KL coefficient")
    p.add_argument("--budget", type=int, default=d.budget, help="solver calls per episode")
    p.add_argument("--output-dir", default=d.output_dir)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--use-vllm", action="store_true", help="generate with vLLM (GPU only)")
    p.add_argument("--vllm-mode", default=d.vllm_mode, choices=["colocate", "server"])
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--gradient-checkpointing", action="store_true")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: 1 for tiny)")
    p.add_argument("--tiny-warm-start", type=int, default=d.tiny_warm_start,
                   help="tiny only: steps teaching it one get_iis call first, so the smoke run exercises tool calls")
    p.add_argument("--print-gpu-command", metavar="BASE_MODEL", nargs="?", const=DEFAULT_GPU_MODEL,
                   help="print the command for a real GPU run and exit")
    a = p.parse_args(argv)
    if a.print_gpu_command:
        print(gpu_command(a.print_gpu_command))
        return 0
    try:
        cfg = GRPORunConfig(model=a.model, steps=a.steps, num_generations=a.num_generations,
                            per_device_batch=a.per_device_batch, grad_accum=a.grad_accum,
                            max_completion_length=a.max_completion_length, max_tool_calls=a.max_tool_calls,
                            num_prompts=a.num_prompts, learning_rate=a.learning_rate, beta=a.beta, temperature=a.temperature, budget=a.budget,
                            output_dir=a.output_dir, seed=a.seed, use_vllm=a.use_vllm, vllm_mode=a.vllm_mode,
                            bf16=a.bf16, gradient_checkpointing=a.gradient_checkpointing,
                            tiny_warm_start=a.tiny_warm_start, threads=a.threads)
    except ValueError as exc:
        p.error(str(exc))
    summary = train(cfg)
    rewards = [h.get("reward") for h in summary["log_history"] if "reward" in h]
    print(f"done: {summary['global_step']} steps in {summary['seconds']} s; mean reward per step {rewards}; "
          f"written to {cfg.output_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
