"""Ray runner for OR-Debug-Bench: instances -> episodes (parquet) -> leaderboard.

Episodes are batched into a few Ray tasks (one per chunk), not one task each: every task is a worker
process of ~100 MB, and an episode on a small model takes milliseconds. Results are appended to
``<out>/episodes.parquet`` keyed by a stable ``episode_id``; a rerun with the same ``--out`` skips
finished episodes. An episode that raises becomes a failed row (``error`` set) and the run goes on.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

import pandas as pd

from ordebug.env import DebugEnv
from ordebug.instances import Instance, load_instances, save_instances
from ordebug.metrics import episode_metrics
from ordebug.progress import Progress
from ordebug.sabotage import OPERATORS

AGENTS = ("heuristic", "drop", "llm")
OP_INDEX = {op: k for k, op in enumerate(OPERATORS)}


def make_agent(name: str, llm_config=None, few_shot: bool = False):
    if name == "heuristic":
        from ordebug.agents.heuristic import HeuristicAgent

        return HeuristicAgent()
    if name == "drop":
        from ordebug.agents.drop_all import DropAllAgent

        return DropAllAgent()
    if name == "llm":
        from ordebug.agents.llm_agent import LLMAgent

        return LLMAgent(llm_config, few_shot=few_shot)
    raise ValueError(f"--agent must be one of {list(AGENTS)}, got {name!r}")


def episode_id(agent: str, allow_iis: bool, instance_id: str, variant: str = "") -> str:
    return f"{agent}{variant}|iis={'on' if allow_iis else 'off'}|{instance_id}"


def _write_steps(log_dir: str | os.PathLike, eid: str, env: DebugEnv | None) -> None:
    """The episode's steps as JSON lines in ``<out>/logs/`` (results cut to 2,000 characters each)."""
    import json
    import re

    if env is None:
        return
    path = Path(log_dir) / (re.sub(r"[^A-Za-z0-9_.=-]+", "_", eid) + ".jsonl")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        for st in env.log.steps:
            result = json.dumps(st.result, default=str)
            fh.write(json.dumps({"step": st.step, "op": st.op, "args": st.args, "solver_calls": st.solver_call,
                                 "seconds": round(st.seconds, 4),
                                 "result": result if len(result) <= 2000 else result[:2000] + "..."},
                                default=str) + "\n")


def run_episode(instance: Instance, agent, allow_iis: bool = True, budget: int = 20,
                log_dir: str | os.PathLike | None = None, eid: str = "") -> dict:
    """One episode -> one result row; never raises (a failure is a row with `error`)."""
    t0 = time.perf_counter()
    env = None
    base = {"instance_id": instance.instance_id, "split": instance.split, "source": instance.source,
            "operator": instance.operator or "none", "size_tier": instance.size_tier, "iis_tier": instance.iis_tier,
            "iis": "on" if allow_iis else "off"}
    try:
        base.update(rows=instance.model.num_rows, cols=instance.model.num_cols)
        env = DebugEnv(instance, budget=budget, allow_iis=allow_iis)
        agent.run(env)
        if log_dir is not None:
            _write_steps(log_dir, eid or instance.instance_id, env)
        row = {**base, **episode_metrics(instance, env.log), "error": "", "steps": len(env.log.steps)}
        if instance.meta.get("track") == "resilience":
            from ordebug.resilience import resilience_metrics

            row.update(resilience_metrics(instance, env.log))
    except Exception as exc:  # noqa: BLE001 - a failed episode is data, not a crash
        row = {**base, "recovered": False, "error": f"{type(exc).__name__}: {exc}",
               "traceback": traceback.format_exc(limit=3)}
    row["seconds"] = time.perf_counter() - t0
    return row


def _run_chunk(instances: list[Instance], agent_name: str, allow_iis: bool, budget: int, llm_config, few_shot: bool,
               variant: str, log_dir: str | None = None) -> list[dict]:
    agent = make_agent(agent_name, llm_config, few_shot)
    rows = []
    for inst in instances:
        row = run_episode(inst, agent, allow_iis=allow_iis, budget=budget, log_dir=log_dir,
                          eid=episode_id(agent_name, allow_iis, inst.instance_id, variant))
        row["agent"] = agent_name + variant
        row["episode_id"] = episode_id(agent_name, allow_iis, inst.instance_id, variant)
        rows.append(row)
    return rows


def _chunks(items: list, n: int) -> list[list]:
    n = max(1, min(n, len(items)))
    return [items[k::n] for k in range(n)]


def run_benchmark(instances: list[Instance], agent_name: str, out_dir: str | os.PathLike, allow_iis: bool = True,
                  budget: int = 20, use_ray: bool = True, num_cpus: int = 2, llm_config=None, few_shot: bool = False,
                  progress: bool = True) -> pd.DataFrame:
    """Run all not-yet-finished episodes and return every episode row for this agent/IIS setting."""
    if agent_name not in AGENTS:
        raise ValueError(f"--agent must be one of {list(AGENTS)}, got {agent_name!r}")
    if budget < 1:
        raise ValueError(f"--budget must be >= 1, got {budget}")
    variant = "-fewshot" if (agent_name == "llm" and few_shot) else ""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "episodes.parquet"
    done = pd.read_parquet(path) if path.exists() else pd.DataFrame()
    finished = set(done["episode_id"]) if not done.empty else set()
    todo = [i for i in instances if episode_id(agent_name, allow_iis, i.instance_id, variant) not in finished]
    new_rows: list[dict] = []
    if todo:
        # An LLM agent is I/O bound and talks to one endpoint: keep it in-process and sequential.
        if use_ray and agent_name != "llm" and len(todo) > 1:
            new_rows = _run_with_ray(todo, agent_name, allow_iis, budget, num_cpus, llm_config, few_shot, variant,
                                     progress, str(out / "logs"))
        else:
            with Progress(len(todo), f"ordebug {agent_name} iis={'on' if allow_iis else 'off'}", progress) as bar:
                for chunk in _chunks(todo, len(todo)):
                    new_rows += _run_chunk(chunk, agent_name, allow_iis, budget, llm_config, few_shot, variant,
                                           str(out / "logs"))
                    bar.update(len(chunk))
        new = pd.DataFrame(new_rows)
        done = pd.concat([done, new], ignore_index=True) if not done.empty else new
        _write_parquet(done, path)
    ids = {episode_id(agent_name, allow_iis, i.instance_id, variant) for i in instances}
    return done[done["episode_id"].isin(ids)].reset_index(drop=True)


def _write_parquet(df: pd.DataFrame, path: Path) -> None:
    df = df.copy()
    for col in df.columns:
        if df[col].dtype == object:
            df[col] = df[col].map(lambda v: v if v is None or isinstance(v, str) else str(v))
    tmp = path.with_suffix(".tmp.parquet")
    df.to_parquet(tmp, index=False)
    os.replace(tmp, path)


def _ray():
    import ray

    if not ray.is_initialized():
        # "local": a new instance of our own; a bare ray.init() joins whatever cluster runs on the machine
        address = os.environ.get("ASKOPT_RAY_ADDRESS") or "local"
        kw = {"num_cpus": 2} if address == "local" else {}
        ray.init(address=address, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False, **kw)
    return ray


def _run_with_ray(todo, agent_name, allow_iis, budget, num_cpus, llm_config, few_shot, variant, progress,
                  log_dir=None) -> list[dict]:
    ray = _ray()
    task = ray.remote(num_cpus=1)(_run_chunk)
    # Chunks of at most 4 episodes (at least 4 per CPU): Ray reuses its workers, so more tasks cost
    # little, and progress moves every few episodes instead of once per eighth of the run.
    chunks = _chunks(todo, min(len(todo), max(4 * num_cpus, -(-len(todo) // 4))))
    pending = [task.remote(c, agent_name, allow_iis, budget, llm_config, few_shot, variant, log_dir) for c in chunks]
    rows: list[dict] = []
    with Progress(len(todo), f"ordebug {agent_name} iis={'on' if allow_iis else 'off'}", progress) as bar:
        while pending:
            ready, pending = ray.wait(pending, num_returns=1, timeout=5.0)
            if not ready:
                bar.heartbeat()
                continue
            part = ray.get(ready[0])
            rows += part
            bar.update(len(part))
    return rows


def _build_chunk(items: list, kind: str, per_model: int, seed: int) -> list[Instance]:
    from ordebug.instances import build_from_seed_file, build_synthetic_item

    out: list[Instance] = []
    for item in items:
        try:
            if kind == "synthetic":
                inst = build_synthetic_item(item)
                if inst is not None:
                    out.append(inst)
            elif kind == "heldout":
                from ordebug.heldout import build_heldout_item

                out += build_heldout_item(item, per_model, seed)
            else:
                out += build_from_seed_file(item, per_model, split=kind, seed=seed)
        except Exception:  # noqa: BLE001 - an unusable seed model is skipped, not fatal
            continue
    return out


def _build_items(items: list, kind: str, per_model: int, seed: int, use_ray: bool, progress: bool,
                 desc: str) -> list[Instance]:
    if use_ray and len(items) > 1:
        ray = _ray()
        task = ray.remote(num_cpus=1)(_build_chunk)
        chunks = _chunks(items, min(len(items), max(8, -(-len(items) // 4))))
        refs = [task.remote(c, kind, per_model, seed) for c in chunks]
        sizes = {ref: len(c) for ref, c in zip(refs, chunks, strict=True)}
        insts: list[Instance] = []
        with Progress(len(items), f"{desc} (sabotage + IIS per item)", progress) as bar:
            while refs:
                ready, refs = ray.wait(refs, num_returns=1, timeout=5.0)
                if not ready:
                    bar.heartbeat()
                    continue
                insts += ray.get(ready[0])
                bar.update(sizes[ready[0]])
        return insts
    insts = []
    with Progress(len(items), f"{desc} (sabotage + IIS per item)", progress) as bar:
        for item in items:
            insts += _build_chunk([item], kind, per_model, seed)
            bar.update()
    return insts


def _build_synthetic_quota(plan: list[tuple], per_operator: int, use_ray: bool, progress: bool,
                           max_rounds: int = 8) -> list[Instance]:
    """The synthetic split with at least `per_operator` instances per operator where the families allow.

    Round 0 tries every (family, size, operator) of `plan`. Later rounds retry, with new model seeds,
    only the operators still short, and only on the (family, size) pairs that yielded that operator
    before (an operator such as drop_bound only applies to families with negative lower bounds), with
    as many seeds as the observed yield says are needed.
    """
    insts: list[Instance] = []
    tried: dict[str, list[tuple]] = {}
    yielded: dict[str, set[tuple]] = {}
    items = list(plan)
    for rnd in range(max_rounds):
        if not items:
            break
        got = _build_items(items, "synthetic", 1, 0, use_ray, progress, f"building synthetic round {rnd}")
        insts += got
        for fam, size, op, _s in items:
            tried.setdefault(op, []).append((fam, size))
        for inst in got:
            fam, size = inst.source.rsplit("-", 1)
            yielded.setdefault(inst.operator, set()).add((fam, size))
        counts = {op: sum(1 for i in insts if i.operator == op) for op in {it[2] for it in plan}}
        items = []
        for op, have in sorted(counts.items()):
            short = per_operator - have
            pairs = sorted(yielded.get(op, set())) or sorted({(f, z) for f, z, o, _ in plan if o == op})
            if short <= 0 or not pairs:
                continue
            rate = max(have / max(len(tried[op]), 1), 0.05)
            per_pair = min(10, max(1, -(-int(1.3 * short / rate) // len(pairs))))
            base = 1000 * (rnd + 1)
            items += [(fam, size, op, base + 37 * k + OP_INDEX[op]) for fam, size in pairs for k in range(per_pair)]
    uniq = {i.instance_id: i for i in insts}
    return sorted(uniq.values(), key=lambda i: i.instance_id)


def _frozen_heldout(insts: list[Instance]) -> list[Instance]:
    """Only the frozen held-out instances, built identically; says on stderr what did not match."""
    from ordebug.heldout import FROZEN_INSTANCES, select_frozen

    if not FROZEN_INSTANCES.exists():
        return insts
    kept, info = select_frozen(insts)
    if info["missing"] or info["changed"] or info["extra"]:
        print(f"held-out: {info['kept']} of the {info['frozen']} frozen instances built identically; "
              f"missing {len(info['missing'])}, changed {len(info['changed'])}, extra (left out) "
              f"{len(info['extra'])}", file=sys.stderr)
    return kept


def build_split(split: str, out_dir: str | os.PathLike, seeds: str | None = None, per_model: int = 3, seed: int = 0,
                use_ray: bool = True, limit: int | None = None, progress: bool = True,
                per_operator: int = 30) -> list[Instance]:
    """Instances of a split, cached in ``<out>/instances_<split>.pkl`` so reruns reuse them."""
    from ordebug.instances import SPLITS, build_wild, seed_models, shared_data_dir, synthetic_plan

    if split not in SPLITS:
        raise ValueError(f"--split must be one of {list(SPLITS)}, got {split!r}")
    out = Path(out_dir)
    cache = out / f"instances_{split}{'_custom' if seeds else ''}.pkl"
    if cache.exists():
        insts = load_instances(cache)
        if split == "heldout" and not seeds:  # a cache from an older build must not be scored silently
            insts = _frozen_heldout(insts)
        return insts[:limit] if limit else insts
    if split == "wild" and not seeds:
        d = shared_data_dir() / "netlib-infeas"
        if not d.is_dir():
            raise ValueError(f"wild split needs {d} (set ASKOPT_SHARED_DATA)")
        insts = build_wild(d, progress=progress)
    elif split == "heldout" and not seeds:
        from ordebug.heldout import load_frozen

        doc, files = load_frozen()
        insts = _build_items(files, "heldout", doc["per_model"], doc["seed"], use_ray, progress, "building heldout")
        insts = _frozen_heldout(sorted(insts, key=lambda i: i.instance_id))
    elif split == "resilience":
        from ordebug.resilience import build_resilience

        insts = build_resilience(n=limit or 24, seed=seed)
    else:
        if seeds:
            items, kind = seed_models(seeds), "custom" if split == "synthetic" else split
        elif split == "synthetic":
            items, kind = synthetic_plan(seed=seed), "synthetic"
        else:  # netlib: feasible NETLIB + MIPLIB 3 seeds from the shared data folder
            base = shared_data_dir()
            if not (base / "netlib").is_dir():
                raise ValueError(f"netlib split needs {base}/netlib and {base}/miplib3 (set ASKOPT_SHARED_DATA)")
            items, kind = seed_models(base / "netlib") + seed_models(base / "miplib3"), "netlib"
        if kind == "synthetic":
            insts = _build_synthetic_quota(items, per_operator, use_ray, progress)
        else:
            insts = _build_items(items, kind, per_model, seed, use_ray, progress, f"building {split}")
        insts.sort(key=lambda i: i.instance_id)
    save_instances(insts, cache)
    return insts[:limit] if limit else insts
