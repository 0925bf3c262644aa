"""The study sweep on Ray: tasks per batch of units, parquet results per batch, resume, metrics, progress.

Layout of a run directory::

    runs/NAME/config.json            the StudyConfig (+ prompt version); --resume refuses a different one
    runs/NAME/units/batch-*.parquet  one file per completed batch, one row per unit (written atomically)
    runs/NAME/run_log.jsonl          one line per invocation: executed / skipped / failed / infra failures

Tasks, split by what they wait on. Units of one instance form one batch (or `units_per_task` at a time).

* Offline (no LLM, or `max_concurrent_dialogues=0`): a `run_units` task (num_cpus=1) takes the batch to
  policies (dialogues, consultants, Optimization Agent), and a chained `score_units` task scores them on the
  truth (Monte Carlo + DP). A unit is tiny next to a Ray worker (~100 MB, platform facts), so batching by
  instance keeps the worker count at the CPU count while rows and seeds stay per unit; it also lets one
  scoring task share the instance's DP optimum and common random numbers.
* With an LLM: the dialogue phase of every unit is I/O-bound, so up to `max_concurrent_dialogues` of them run
  at once in a small pool of threaded actors (`evaluation.fanout.DialogueWorker`, num_cpus=0), all clients
  booking send slots with one cluster-wide rate limiter actor; when a batch's dialogues are all back, one
  `finish_and_score` task (num_cpus=1) runs A's Optimization Agent and the scoring. `budget_usd` stops
  starting new batches when the spend so far plus the expected cost of what is in flight and of the next
  batch would pass it (finished batches are written; `--resume` continues).

Failures. A unit's own failure is a row (status "failed", stage, reason) and the sweep goes on. Infrastructure
failures (a worker or node died, an object was lost, a batch-level bug) are retried by Ray (`max_retries`), then
resubmitted once by the driver (a dialogue whose actor died is resubmitted to the restarted pool, twice at
most); if that fails too the batch is logged as an infrastructure failure, nothing is written for it, and it
is not counted in the metrics: `--resume` will run it again. Rows are only ever written per whole batch
(temp file + rename), so a killed driver or worker never leaves a partial or duplicated batch.

Metrics (Ray dashboard, Metrics view / Prometheus): `askopt_study_units{study,treatment,status}` (counter:
units done / failed), `askopt_study_mean_cost_gap{study,comparison}` (gauge: mean cost reduction of A over B and
over C so far, paired units), `askopt_study_progress{study}` (gauge: fraction of units done),
`askopt_study_infra_retries{study}` (counter), `askopt_study_llm_tokens{study,treatment,kind}` (counter: prompt
/ completion tokens of finished units).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from evaluation.placement import NO_PLACEMENT, Placement
from evaluation.study import StudyConfig, Unit, plan_study, read_config, write_config
from evaluation.study_units import DEFAULT_RUNNER, UnitRunner
from llm.ratelimit import RateLimit

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
    mode: str = "tasks"  # tasks | fanout (dialogues in the actor pool)
    max_concurrent_dialogues: int = 0
    peak_dialogues: int = 0  # most dialogues in flight at once (driver's count)
    cost_usd: float = 0.0  # LLM cost of the units written by this invocation
    budget_stopped: bool = False  # --budget-usd reached: batches left for --resume
    driver_peak_rss_mb: float = 0.0
    actors: list[dict] = field(default_factory=list)  # dialogue actors' stats (units, memory)


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


def _run_units(config_json: dict, instance_json: dict, units: list[Unit], runner: UnitRunner = DEFAULT_RUNNER):
    from agents.generator import Instance

    config = StudyConfig.from_json(config_json)
    instance = Instance.from_dict(instance_json)
    return [runner.run(u, instance, config) for u in units]


def _score_units(config_json: dict, instance_json: dict, outcomes) -> list[dict]:
    from agents.generator import Instance
    from evaluation.scoring import score_outcomes

    config = StudyConfig.from_json(config_json)
    return score_outcomes(Instance.from_dict(instance_json), outcomes, config)


def _finish_and_score(config_json: dict, instance_json: dict, outcomes, runner: UnitRunner = DEFAULT_RUNNER):
    """The CPU phase of a batch whose dialogues are done: A's Optimization Agent, then scoring."""
    from agents.generator import Instance
    from evaluation.scoring import score_outcomes

    config = StudyConfig.from_json(config_json)
    instance = Instance.from_dict(instance_json)
    return score_outcomes(instance, [runner.finish(o, instance, config) for o in outcomes], config)


def _remote(fn, retries: int, placement: Placement = NO_PLACEMENT, scoring: bool = False):
    import ray

    return ray.remote(num_cpus=1, max_retries=retries, retry_exceptions=False,
                      **placement.task_options(scoring))(fn)


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
            self.tokens = Counter("askopt_study_llm_tokens", "LLM tokens of finished units",
                                  tag_keys=("study", "treatment", "kind"))
        except Exception:  # noqa: BLE001 - metrics are best effort (e.g. no metrics agent)
            self.units = self.gap = self.progress = self.retries = self.tokens = None
        self.gaps: dict[str, float] = {}

    def record(self, rows: list[dict]) -> None:
        for r in rows:
            self.done += 1
            if self.units is not None:
                self.units.inc(1, tags={"study": self.study, "treatment": r["treatment"], "status": r["status"]})
            if self.tokens is not None:
                for kind in ("prompt_tokens", "completion_tokens"):
                    if r.get(kind):
                        self.tokens.inc(float(r[kind]), tags={"study": self.study, "treatment": r["treatment"],
                                                              "kind": kind.split("_")[0]})
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
    runner: UnitRunner | None = None,
    max_concurrent_dialogues: int | None = None,
    rate_limit: RateLimit | None = None,
    budget_usd: float | None = None,
    dialogue_actors: int | None = None,
    placement: Placement = NO_PLACEMENT,
) -> RunSummary:
    """Run (or finish) a study into `out`; returns what this invocation did.

    `max_concurrent_dialogues`: LLM studies only; how many dialogues wait on the model at once (default
    DEFAULT_DIALOGUES; 0 runs dialogues inside the CPU tasks as offline studies do). `rate_limit`: requests /
    tokens per minute for the study's endpoint, enforced across the cluster. `budget_usd`: stop starting
    new batches when it would be exceeded. `runner`: how a unit's phases run (tests inject faults here).
    `placement`: node labels for the study's tasks and actors, GPUs for scoring (evaluation.placement).
    """
    import ray

    from evaluation.progress import dashboard_url, progress_bar

    if max_concurrent_dialogues is not None and max_concurrent_dialogues < 0:
        raise StudyError(f"max_concurrent_dialogues: {max_concurrent_dialogues} is not allowed; must be >= 0")
    if budget_usd is not None and not budget_usd > 0:
        raise StudyError(f"budget_usd: {budget_usd} is not allowed; must be > 0")
    t0 = time.perf_counter()
    out = Path(out)
    done = prepare_run(config, out, resume)
    plan = plan_study(config)
    pending = [u for u in plan.units if u.unit_id not in done]
    batches = _batches(pending, config.units_per_task)
    summary = RunSummary(str(out), len(plan.units), len(plan.units) - len(pending), 0, 0, 0, 0, 0.0, len(batches))
    fanout = not config.offline and (DEFAULT_DIALOGUES if max_concurrent_dialogues is None
                                     else max_concurrent_dialogues) > 0
    if batches:
        init_ray(address, num_cpus, include_dashboard)
        summary.num_cpus = float(ray.cluster_resources().get("CPU", 0))
        try:
            placement.check(ray.cluster_resources())
        except ValueError as exc:
            raise StudyError(str(exc)) from None
        url = dashboard_url()
        if progress and url:  # where to watch the askopt_study_* metrics while it runs
            print(f"Ray dashboard: {url} (Metrics view: askopt_study_units, askopt_study_progress)",
                  file=sys.stderr, flush=True)
        ctx = _Sweep(config, out, plan, summary, runner or DEFAULT_RUNNER, task_retries,
                     StudyMetrics(config.name, len(plan.units)),
                     progress_bar(len(pending), f"study {config.name}", progress), placement)  # plain lines w/o TTY
        if fanout:
            n = max_concurrent_dialogues if max_concurrent_dialogues is not None else DEFAULT_DIALOGUES
            ctx.fanout(batches, n, rate_limit, budget_usd, dialogue_actors)
        else:
            ctx.tasks(batches, max_in_flight or max(2, int(2 * summary.num_cpus)))
        ctx.bar.close()
        summary.pids = sorted(ctx.pids)
    summary.driver_peak_rss_mb = round(_peak_rss_mb(), 1)
    summary.seconds = time.perf_counter() - t0
    _log(out, {"event": "run", **asdict(summary)})
    return summary


#: Dialogues in flight by default for an LLM study (the issue's target: >= 128 on a 2-core machine).
DEFAULT_DIALOGUES = 128
#: Threads per dialogue actor: a few processes (~100 MB each) carry all dialogues.
DIALOGUES_PER_ACTOR = 64


def _peak_rss_mb() -> float:
    from evaluation.fanout import peak_rss_mb

    return peak_rss_mb()


class _Sweep:
    """One invocation's driver loop: submit, collect, write batches, count, retry infrastructure failures."""

    def __init__(self, config, out, plan, summary, runner, task_retries, metrics, bar,
                 placement: Placement = NO_PLACEMENT) -> None:
        self.placement = placement
        self.config, self.out, self.summary, self.runner = config, out, summary, runner
        self.task_retries, self.metrics, self.bar = task_retries, metrics, bar
        self.cfg_json = config.to_json(redact=False)
        self.inst_json = {i.instance_id: i.to_dict() for i in plan.instances}
        self.pids: set[int] = set()

    def _landed(self, rows: list[dict]) -> None:
        write_batch(self.out, rows)
        self.metrics.record(rows)
        s = self.summary
        s.executed += len(rows)
        s.failed += sum(r["status"] != "ok" for r in rows)
        s.cost_usd += float(sum(r.get("cost_usd", 0.0) or 0.0 for r in rows))
        self.pids.update(int(r["worker_pid"]) for r in rows)
        self.bar.update(len(rows))
        if self.metrics.gaps:
            self.bar.set_postfix({k: f"{v:+.1%}" for k, v in self.metrics.gaps.items()})

    def _infra_failure(self, batch: list[Unit], exc: BaseException, where: str) -> None:
        self.summary.infra_failures += 1
        _log(self.out, {"event": "infra_failure", "phase": where, "units": [u.unit_id for u in batch],
                        "error": f"{type(exc).__name__}: {str(exc)[:300]}"})

    # -- offline / CPU tasks ---------------------------------------------------------------------------------------
    def tasks(self, batches: list[list[Unit]], limit: int) -> None:
        import ray

        run_task = _remote(_run_units, self.task_retries, self.placement)
        score_task = _remote(_score_units, self.task_retries, self.placement, scoring=True)
        queue = list(batches)
        in_flight: dict = {}  # score ref -> (batch, attempts)

        def submit(batch: list[Unit], attempt: int) -> None:
            inst = self.inst_json[batch[0].instance_id]
            ref = score_task.remote(self.cfg_json, inst, run_task.remote(self.cfg_json, inst, batch, self.runner))
            in_flight[ref] = (batch, attempt)

        while queue or in_flight:
            while queue and len(in_flight) < limit:
                submit(queue.pop(0), 1)
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            batch, attempt = in_flight.pop(ready[0])
            try:
                rows = ray.get(ready[0])
            except (ray.exceptions.RayError, Exception) as exc:  # noqa: BLE001 - infrastructure, not the unit
                if attempt < 2:
                    self.summary.infra_retries += 1
                    self.metrics.retry()
                    submit(batch, attempt + 1)
                else:
                    self._infra_failure(batch, exc, "tasks")
                continue
            self._landed(rows)

    # -- LLM fan-out -------------------------------------------------------------------------------------------------
    def fanout(self, batches: list[list[Unit]], max_dialogues: int, rate_limit: RateLimit | None,
               budget_usd: float | None, n_actors: int | None) -> None:
        import ray

        from evaluation.fanout import DialogueWorker, RateLimiterActor

        s = self.summary
        s.mode, s.max_concurrent_dialogues = "fanout", max_dialogues
        n_actors = n_actors or max(1, math.ceil(max_dialogues / DIALOGUES_PER_ACTOR))
        per_actor = math.ceil(max_dialogues / n_actors)
        limiter = None
        if rate_limit is not None and rate_limit.active:
            endpoint = (self.config.llm or {}).get("base_url") or "api.openai.com"
            limiter = ray.remote(num_cpus=0, max_restarts=-1, **self.placement.actor_options())(RateLimiterActor).remote(
                {endpoint: (rate_limit.rpm, rate_limit.tpm)})
        # a dead actor restarts; Ray re-runs its in-flight dialogues there (max_task_retries), and the driver
        # resubmits what still fails (each dialogue is deterministic, so rework changes no row)
        worker_cls = ray.remote(num_cpus=0, max_concurrency=per_actor, max_restarts=-1,
                                max_task_retries=self.task_retries, **self.placement.actor_options())(DialogueWorker)
        actors = [worker_cls.remote(self.cfg_json, self.runner, limiter) for _ in range(n_actors)]
        load = [0] * n_actors
        score_task = _remote(_finish_and_score, self.task_retries, self.placement, scoring=True)

        queue = list(batches)
        open_batches: dict[int, dict] = {}  # batch no -> {"units", "next", "outcomes", "failed"}
        dialogues: dict = {}  # ref -> (batch no, unit index, attempt, actor index)
        scoring: dict = {}  # ref -> (batch no, attempt)
        spent, finished_dialogues, next_no = 0.0, 0, 0
        deferred: list[tuple[float, int, int, int]] = []  # (due, batch no, unit index, attempt): resubmissions

        def waiting_units() -> int:
            return sum(len(b["units"]) - b["next"] for b in open_batches.values())

        def can_start(n_units: int) -> bool:
            if budget_usd is None:
                return True
            per_unit = spent / finished_dialogues if finished_dialogues else 0.0
            return spent + (len(dialogues) + waiting_units() + n_units) * per_unit <= budget_usd and spent < budget_usd

        def submit_dialogue(no: int, i: int, attempt: int) -> None:
            a = min(range(n_actors), key=load.__getitem__)
            unit = open_batches[no]["units"][i]
            ref = actors[a].run.remote(unit, self.inst_json[unit.instance_id])
            load[a] += 1
            dialogues[ref] = (no, i, attempt, a)

        def submit_scoring(no: int, attempt: int) -> None:
            b = open_batches[no]
            inst = self.inst_json[b["units"][0].instance_id]
            scoring[score_task.remote(self.cfg_json, inst, b["outcomes"], self.runner)] = (no, attempt)

        while (queue and not s.budget_stopped) or dialogues or scoring or deferred or any(
                b["next"] < len(b["units"]) and not b["failed"] for b in open_batches.values()):
            now = time.monotonic()
            for item in [d for d in deferred if d[0] <= now]:
                deferred.remove(item)
                if item[1] in open_batches and not open_batches[item[1]]["failed"]:
                    submit_dialogue(*item[1:])
            while queue and not s.budget_stopped and waiting_units() + len(dialogues) < max_dialogues:
                if not can_start(len(queue[0])):
                    s.budget_stopped = True
                    _log(self.out, {"event": "budget_stop", "spent_usd": spent, "budget_usd": budget_usd,
                                    "batches_left": len(queue)})
                    break
                open_batches[next_no] = {"units": queue.pop(0), "next": 0, "outcomes": None, "failed": False}
                open_batches[next_no]["outcomes"] = [None] * len(open_batches[next_no]["units"])
                next_no += 1
            for no, b in open_batches.items():
                while b["next"] < len(b["units"]) and len(dialogues) < max_dialogues and not b["failed"]:
                    submit_dialogue(no, b["next"], 1)
                    b["next"] += 1
            s.peak_dialogues = max(s.peak_dialogues, len(dialogues))
            refs = list(dialogues) + list(scoring)
            if not refs:
                if deferred:
                    time.sleep(max(0.0, min(d[0] for d in deferred) - time.monotonic()))
                continue
            ready, _ = ray.wait(refs, num_returns=1, timeout=1.0 if deferred else None)
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)  # everything already back
            for ref in ready:
                if ref in scoring:
                    no, attempt = scoring.pop(ref)
                    try:
                        rows = ray.get(ref)
                    except (ray.exceptions.RayError, Exception) as exc:  # noqa: BLE001 - infrastructure
                        if attempt < 2:
                            s.infra_retries += 1
                            self.metrics.retry()
                            submit_scoring(no, attempt + 1)
                        else:
                            self._infra_failure(open_batches.pop(no)["units"], exc, "scoring")
                        continue
                    open_batches.pop(no)
                    self._landed(rows)
                    continue
                no, i, attempt, a = dialogues.pop(ref)
                load[a] -= 1
                b = open_batches.get(no)
                try:
                    outcome = ray.get(ref)
                except (ray.exceptions.RayError, Exception) as exc:  # noqa: BLE001 - the actor died
                    if b is None or b["failed"]:
                        continue
                    if attempt < 3:
                        s.infra_retries += 1
                        self.metrics.retry()
                        # let a restarting actor come back; the loop resubmits when it is due
                        deferred.append((time.monotonic() + 0.5 * attempt, no, i, attempt + 1))
                    else:
                        b["failed"] = True
                        self._infra_failure(b["units"], exc, "dialogue")
                    continue
                if b is None or b["failed"]:
                    continue
                b["outcomes"][i] = outcome
                spent += float(outcome.usage.get("cost_usd", 0.0) or 0.0)
                finished_dialogues += 1
                if all(o is not None for o in b["outcomes"]):
                    submit_scoring(no, 1)
            for no in [no for no, b in open_batches.items() if b["failed"] and not any(
                    d[0] == no for d in dialogues.values())]:
                open_batches.pop(no)
        s.actors = [ray.get(a.stats.remote()) for a in actors]
        for a in actors:
            ray.kill(a)
        if limiter is not None:
            ray.kill(limiter)


def _log(out: Path, record: dict) -> None:
    with open(Path(out) / LOG_FILE, "a") as f:
        f.write(json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%S"), **record}) + "\n")
