"""The study sweep on Ray: tasks per batch of units, parquet results per batch, resume, metrics, progress.

Layout of a run directory::

    runs/NAME/config.json            the StudyConfig (+ prompt version); --resume refuses a different one
    runs/NAME/units/batch-*.parquet  one file per completed batch, one row per unit (written atomically)
    runs/NAME/run_log.jsonl          one line per invocation: executed / skipped / failed / infra failures

Tasks. Units of one instance form one batch (or `units_per_task` at a time): a `run_units` task takes them to
policies (dialogues, consultants, Optimization Agent), and a chained `score_units` task scores them on the
truth (Monte Carlo + DP). A unit is tiny next to a Ray worker (~100 MB, platform facts), so batching by instance
keeps the worker count at the CPU count while rows and seeds stay per unit; it also lets one scoring task share
the instance's DP optimum and common random numbers.

Failures. A unit's own failure is a row (status "failed", stage, reason) and the sweep goes on. Infrastructure
failures (a worker or node died, an object was lost, a batch-level bug) are retried by Ray (`max_retries`), then
resubmitted once by the driver; if that fails too the batch is logged as an infrastructure failure, nothing is
written for it, and it is not counted in the metrics: `--resume` will run it again.

Metrics (Ray dashboard, Metrics view / Prometheus): `askopt_study_units{study,treatment,status}` (counter:
units done / failed), `askopt_study_mean_cost_gap{study,comparison}` (gauge: mean cost reduction of A over B and
over C so far, paired units), `askopt_study_progress{study}` (gauge: fraction of units done),
`askopt_study_infra_retries{study}` (counter).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from evaluation.study import StudyConfig, Unit, plan_study, read_config, write_config

UNITS_DIR = "units"
LOG_FILE = "run_log.jsonl"


class StudyError(ValueError):
    """Bad study request (existing run without --resume, config mismatch)."""


@dataclass
class RunSummary:
    out: str
    total_units: int
    skipped: int  # already finished before this invocation
    executed: int  # units run (and written) in this invocation
    failed: int  # of the executed, failed units (rows with status failed)
    infra_failures: int  # batches lost to infrastructure after retries (not written)
    infra_retries: int
    seconds: float
    batches: int
    num_cpus: float = 0.0
    pids: list[int] = field(default_factory=list)


# ---- results on disk -----------------------------------------------------------------------------------------------


def units_dir(out: Path) -> Path:
    return Path(out) / UNITS_DIR


def load_results(out: Path) -> pd.DataFrame:
    """All rows of a run (one per finished unit); empty frame when none."""
    files = sorted(units_dir(out).glob("batch-*.parquet"))
    if not files:
        return pd.DataFrame()
    df = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    return df.drop_duplicates("unit_id", keep="last").reset_index(drop=True)


def finished_unit_ids(out: Path) -> set[str]:
    files = sorted(units_dir(out).glob("batch-*.parquet"))
    done: set[str] = set()
    for f in files:
        done.update(pd.read_parquet(f, columns=["unit_id"])["unit_id"].tolist())
    return done


def write_batch(out: Path, rows: list[dict]) -> Path:
    """Atomic write (temp file + rename) so a killed run never leaves half a batch."""
    d = units_dir(out)
    d.mkdir(parents=True, exist_ok=True)
    ids = sorted(r["unit_id"] for r in rows)
    digest = hashlib.sha1("|".join(ids).encode()).hexdigest()[:10]
    path = d / f"batch-{rows[0]['instance_id']}-{digest}.parquet"
    tmp = path.with_suffix(".parquet.tmp")
    pd.DataFrame(rows).to_parquet(tmp, index=False)
    os.replace(tmp, path)
    return path


# ---- Ray tasks -----------------------------------------------------------------------------------------------------


def _run_units(config_json: dict, instance_json: dict, units: list[Unit]):
    from agents.generator import Instance
    from evaluation.study_units import run_unit

    config = StudyConfig.from_json(config_json)
    instance = Instance.from_dict(instance_json)
    for u in units:
        if u.unit_id in config.crash_once:
            _crash_once(config, u.unit_id)
    return [run_unit(u, instance, config) for u in units]


def _crash_once(config: StudyConfig, unit_id: str) -> None:
    """Fault injection: kill this worker process the first time (a marker file remembers), as a node loss would."""
    import tempfile

    marker = Path(tempfile.gettempdir()) / f"askopt-crash-{config.name}-{config.seed}-{unit_id}"
    if not marker.exists():
        marker.write_text("crashed once")
        os._exit(1)


def _score_units(config_json: dict, instance_json: dict, outcomes) -> list[dict]:
    from agents.generator import Instance
    from evaluation.scoring import score_outcomes

    config = StudyConfig.from_json(config_json)
    return score_outcomes(Instance.from_dict(instance_json), outcomes, config)


def _remote(fn, retries: int):
    import ray

    return ray.remote(num_cpus=1, max_retries=retries, retry_exceptions=False)(fn)


# ---- metrics -------------------------------------------------------------------------------------------------------


class StudyMetrics:
    """Ray application metrics, recorded by the driver as batches land (visible on the dashboard)."""

    def __init__(self, study: str, total: int):
        self.study, self.total, self.done = study, total, 0
        self.costs: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
        try:
            from ray.util.metrics import Counter, Gauge

            self.units = Counter("askopt_study_units", "study units finished, by treatment and status",
                                 tag_keys=("study", "treatment", "status"))
            self.gap = Gauge("askopt_study_mean_cost_gap", "mean cost reduction of A over B / C so far (paired)",
                             tag_keys=("study", "comparison"))
            self.progress = Gauge("askopt_study_progress", "fraction of the study's units done", tag_keys=("study",))
            self.retries = Counter("askopt_study_infra_retries", "batches resubmitted after infrastructure errors",
                                   tag_keys=("study",))
        except Exception:  # noqa: BLE001 - metrics are best effort (e.g. no metrics agent)
            self.units = self.gap = self.progress = self.retries = None
        self.gaps: dict[str, float] = {}

    def record(self, rows: list[dict]) -> None:
        for r in rows:
            self.done += 1
            if self.units is not None:
                self.units.inc(1, tags={"study": self.study, "treatment": r["treatment"], "status": r["status"]})
            value = r.get("mc_objective", r.get("mc_cost"))
            if r["status"] == "ok" and value == value and value is not None:
                self.costs[(r["instance_id"], r["trial"])][r["treatment"]] = float(value)
        for other in ("B", "C"):
            vals = [(c[other] - c["A"]) / c[other] for c in self.costs.values() if "A" in c and other in c and c[other]]
            if vals:
                self.gaps[f"A_vs_{other}"] = sum(vals) / len(vals)
                if self.gap is not None:
                    self.gap.set(self.gaps[f"A_vs_{other}"], tags={"study": self.study, "comparison": f"A_vs_{other}"})
        if self.progress is not None:
            self.progress.set(self.done / max(self.total, 1), tags={"study": self.study})

    def retry(self) -> None:
        if self.retries is not None:
            self.retries.inc(1, tags={"study": self.study})


# ---- the sweep -----------------------------------------------------------------------------------------------------


def _batches(pending: list[Unit], units_per_task: int) -> list[list[Unit]]:
    groups: dict[str, list[Unit]] = defaultdict(list)
    for u in pending:
        groups[u.instance_id].append(u)
    out = []
    for units in groups.values():
        size = units_per_task or len(units)
        out += [units[i: i + size] for i in range(0, len(units), size)]
    return out


def init_ray(address: str | None = None, num_cpus: int | None = None, include_dashboard: bool | None = None) -> None:
    import ray

    if ray.is_initialized():
        return
    kw: dict = {"ignore_reinit_error": True, "log_to_driver": False}
    if address:
        ray.init(address=address, **kw)
    else:
        if include_dashboard is not None:
            kw["include_dashboard"] = include_dashboard
        # "local": always a new local instance; a bare ray.init() would join whatever cluster
        # /tmp/ray/ray_current_cluster names (someone else's on a shared machine, or a stale one)
        ray.init(address="local", num_cpus=num_cpus, **kw)


def prepare_run(config: StudyConfig, out: Path, resume: bool) -> set[str]:
    """Check/write config.json; the finished unit ids to skip."""
    out = Path(out)
    cfg_path = out / "config.json"
    if cfg_path.exists():
        old = read_config(out)
        done = finished_unit_ids(out)
        if not resume:
            raise StudyError(f"{out} already holds a study ({len(done)} units done); use --resume or a new --out")
        if old.comparable() != config.comparable():
            diff = sorted(k for k in set(old.comparable()) | set(config.comparable())
                          if old.comparable().get(k) != config.comparable().get(k))
            raise StudyError(f"--resume: the study config differs from {cfg_path} in: {', '.join(diff)}")
        return done
    write_config(out, config)
    return set()


def run_study(
    config: StudyConfig,
    out: Path,
    resume: bool = False,
    address: str | None = None,
    num_cpus: int | None = None,
    progress: bool = True,
    include_dashboard: bool | None = None,
    max_in_flight: int | None = None,
    task_retries: int = 3,
) -> RunSummary:
    """Run (or finish) a study into `out`; returns what this invocation did."""
    import ray
    from tqdm import tqdm

    t0 = time.perf_counter()
    out = Path(out)
    done = prepare_run(config, out, resume)
    plan = plan_study(config)
    pending = [u for u in plan.units if u.unit_id not in done]
    batches = _batches(pending, config.units_per_task)
    summary = RunSummary(str(out), len(plan.units), len(plan.units) - len(pending), 0, 0, 0, 0, 0.0, len(batches))
    if batches:
        init_ray(address, num_cpus, include_dashboard)
        summary.num_cpus = float(ray.cluster_resources().get("CPU", 0))
        run_task, score_task = _remote(_run_units, task_retries), _remote(_score_units, task_retries)
        cfg_json = config.to_json(redact=False)
        inst_json = {i.instance_id: i.to_dict() for i in plan.instances}
        metrics = StudyMetrics(config.name, len(plan.units))
        limit = max_in_flight or max(2, int(2 * summary.num_cpus))
        queue = list(batches)
        in_flight: dict = {}  # score ref -> (batch, attempts)
        pids: set[int] = set()

        def submit(batch: list[Unit], attempt: int) -> None:
            inst = inst_json[batch[0].instance_id]
            ref = score_task.remote(cfg_json, inst, run_task.remote(cfg_json, inst, batch))
            in_flight[ref] = (batch, attempt)

        bar = tqdm(total=len(pending), unit="unit", desc=f"study {config.name}", disable=not progress)
        while queue or in_flight:
            while queue and len(in_flight) < limit:
                submit(queue.pop(0), 1)
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            batch, attempt = in_flight.pop(ready[0])
            try:
                rows = ray.get(ready[0])
            except (ray.exceptions.RayError, Exception) as exc:  # noqa: BLE001 - infrastructure, not the unit
                if attempt < 2:
                    summary.infra_retries += 1
                    metrics.retry()
                    submit(batch, attempt + 1)
                else:
                    summary.infra_failures += 1
                    _log(out, {"event": "infra_failure", "units": [u.unit_id for u in batch],
                               "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
                continue
            write_batch(out, rows)
            metrics.record(rows)
            summary.executed += len(rows)
            summary.failed += sum(r["status"] != "ok" for r in rows)
            pids.update(int(r["worker_pid"]) for r in rows)
            bar.update(len(rows))
            if metrics.gaps:
                bar.set_postfix({k: f"{v:+.1%}" for k, v in metrics.gaps.items()})
        bar.close()
        summary.pids = sorted(pids)
    summary.seconds = time.perf_counter() - t0
    _log(out, {"event": "run", **asdict(summary)})
    return summary


def _log(out: Path, record: dict) -> None:
    with open(Path(out) / LOG_FILE, "a") as f:
        f.write(json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%S"), **record}) + "\n")
