"""`askopt study | report | submit | demo`: the study's command line.

    askopt study --instances 70 --trials 3 --out runs/NAME [--llm-base-url URL --model M] [--resume]
                 [--address ADDR] [--num-cpus N] [--persona P] [--design paper-cells] [--imitator-url URL]
    askopt report runs/NAME [runs/OTHER]
    askopt submit [--address http://127.0.0.1:8265] [--no-wait] -- askopt study ...
    askopt demo [--out runs/demo] [--instances 12]
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from dataclasses import asdict
from pathlib import Path


def _input_error(message: str) -> Exception:
    """experiments.cli.UserInputError (also a ValueError, so a `python -m experiments.cli` copy still exits 2)."""
    from experiments.cli import UserInputError

    cls = type("StudyInputError", (UserInputError, ValueError), {})
    return cls(message)


def _add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--resume", action="store_true", help="finish an interrupted run; finished units are not redone")
    p.add_argument("--address", default=None,
                   help="Ray cluster address (e.g. auto, ray://host:10001); default: start a local Ray")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs for a local Ray (default: all)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--dashboard", action=argparse.BooleanOptionalAction, default=None,
                   help="start the Ray dashboard with a local Ray (metrics view); default: Ray's choice")
    p.add_argument("--node-labels", default=None, metavar="KEY=VALUE[,...]",
                   help="run the study's tasks and actors only on nodes with these Ray labels, e.g. "
                   "askopt.io/pool=cpu to keep them off a GPU worker group (docs/ops.md)")
    p.add_argument("--scoring-gpus", type=float, default=0.0, metavar="F",
                   help="GPU share per Monte Carlo scoring task (large evaluations then run on the torch kernel); "
                   "default 0: CPU scoring")
    g = p.add_argument_group("LLM fan-out", "how an LLM study talks to its endpoint (ignored offline)")
    g.add_argument("--max-concurrent-dialogues", type=int, default=None,
                   help="dialogues waiting on the model at once (default 128; 0: inside the CPU tasks)")
    g.add_argument("--llm-rpm", type=int, default=0, help="client-side limit: requests per minute (0: none)")
    g.add_argument("--llm-tpm", type=int, default=0, help="client-side limit: tokens per minute (0: none)")
    g.add_argument("--budget-usd", type=float, default=None,
                   help="stop starting new units when the LLM cost would pass this (--resume continues)")
    g.add_argument("--price", action="append", default=[], metavar="MODEL=IN,OUT",
                   help="USD per million prompt,completion tokens for MODEL ('*' = any), e.g. gpt-4o=2.5,10")


def register(subparsers) -> None:
    from llm.client import add_llm_arguments

    p = subparsers.add_parser("study", help="run the A/B/C study (hybrid vs end-to-end consultants) on Ray",
                              description="Generate instances, run every (instance, treatment, trial) unit on Ray, "
                              "score on the ground truth, stream rows to OUT/units/*.parquet.")
    p.add_argument("--instances", type=int, default=12)
    p.add_argument("--trials", type=int, default=1, help="imitator seeds per instance (pass^k)")
    p.add_argument("--out", required=True, help="run directory, e.g. runs/NAME")
    p.add_argument("--name", default=None, help="study name, a label in the report (default: OUT's basename); "
                   "seeds come from --seed and each unit's key, never from the name or OUT")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--treatments", default="A,B,C", help="comma-separated subset of A,B,C")
    p.add_argument("--design", default="random", help="random | paper-cells (poisson L1, poisson L7, normal L7)")
    p.add_argument("--persona", default="typical", help="imitator persona, or 'mixed' to cycle the personas")
    p.add_argument("--imitator-url", default=None, metavar="URL",
                   help="an imitator endpoint (OpenAI-compatible, scenario protocol), e.g. `askopt imitator serve`'s "
                   "http://127.0.0.1:8000/v1 or the fine-tuned model's; default: the offline persona simulator")
    p.add_argument("--imitator-model", default="auto",
                   help="model name at --imitator-url (default auto: the endpoint's only model)")
    p.add_argument("--replications", type=int, default=1000, help="Monte Carlo scoring replications")
    p.add_argument("--units-per-task", type=int, default=0, help="0: one Ray task per instance")
    p.add_argument("--max-turns", type=int, default=40)
    p.add_argument("--dqn", action="store_true", help="let the Optimization Agent train a DQN too (slow)")
    _add_run_options(p)
    add_llm_arguments(p)
    p.set_defaults(handler=run_study_cmd)

    r = subparsers.add_parser("report", help="write the study report (markdown + plots) for a run directory")
    r.add_argument("run_dir", metavar="RUN_DIR")
    r.add_argument("other_run", metavar="RUN_B", nargs="?", default=None,
                   help="a second run: write RUN_DIR/report/compare-<RUN_B>.md (+ .html) with the differences")
    r.set_defaults(handler=run_report_cmd)

    s = subparsers.add_parser("submit", help="submit a command (e.g. `askopt study ...`) as a Ray job",
                              description="Submit through the Ray Jobs API (JobSubmissionClient). With token "
                              "authentication (Ray's default) export RAY_AUTH_MODE=token and the cluster's token, or "
                              "start a local cluster with RAY_AUTH_MODE=disabled (cluster/start_local.sh).")
    s.add_argument("--address", default=None,
                   help="dashboard address (default: $RAY_ADDRESS or http://127.0.0.1:8265)")
    s.add_argument("--working-dir", default=None, help="upload this directory as the job's working_dir")
    s.add_argument("--no-wait", action="store_true", help="return after submitting; do not follow the logs")
    s.add_argument("entrypoint", nargs=argparse.REMAINDER, help="-- askopt study ...")
    s.set_defaults(handler=run_submit_cmd)

    d = subparsers.add_parser("demo", help="the main job: paper examples + a small offline study + its report")
    d.add_argument("--out", default="runs/demo")
    d.add_argument("--instances", type=int, default=12)
    d.add_argument("--trials", type=int, default=1)
    d.add_argument("--num-cpus", type=int, default=None)
    d.add_argument("--fresh", action="store_true", help="delete OUT first (default: resume what is there)")
    d.set_defaults(handler=run_demo_cmd)


def config_from_cli(args: argparse.Namespace):
    """The StudyConfig the options describe; one-line errors naming the option. With --resume into a run
    directory written before seed scheme 2, the run's own seed scheme (config version) is kept."""
    from evaluation.study import SEED_SCHEME, StudyConfig, read_config
    from experiments.cli_inputs import StudyArgs, check_out_dir, validate_args
    from llm.client import config_from_args

    opts = validate_args(StudyArgs, args)
    out = check_out_dir(args.out)
    llm = None
    try:
        llm_cfg = config_from_args(args)
    except (ValueError, TypeError) as exc:
        raise _input_error(str(exc)) from None
    if llm_cfg.is_configured:
        llm = asdict(llm_cfg)
    prices = _prices(getattr(args, "price", []) or [])
    imitator = None
    if getattr(args, "imitator_url", None):
        from llm.client import LLMConfig

        try:
            imitator = asdict(LLMConfig(base_url=args.imitator_url, model=args.imitator_model, max_retries=3))
        except ValueError as exc:
            raise _input_error(f"--imitator-url: {exc}") from None
    treatments = tuple(t.strip().upper() for t in args.treatments.split(",") if t.strip())
    persona = args.persona
    try:
        from agents.imitator import PERSONAS

        if persona != "mixed" and persona not in PERSONAS:
            raise _input_error(f"--persona: {persona!r} is not allowed; allowed: mixed, {', '.join(sorted(PERSONAS))}")
    except ImportError:
        pass
    version = SEED_SCHEME
    if getattr(args, "resume", False) and (out / "config.json").is_file():
        try:
            version = read_config(out).version
        except ValueError as exc:
            raise _input_error(f"--resume: {exc}") from None
    try:
        return StudyConfig(name=args.name or out.resolve().name or "study", instances=opts.instances,
                           trials=opts.trials, treatments=treatments, design=args.design, persona=persona,
                           seed=opts.seed, replications=opts.replications, units_per_task=opts.units_per_task,
                           max_turns=opts.max_turns, dqn=args.dqn, llm=llm, imitator=imitator, version=version,
                           prices=prices)
    except ValueError as exc:
        raise _input_error(f"--{str(exc).split(':')[0]}: {str(exc).split(': ', 1)[-1]}") from None


def _prices(items: list[str]) -> dict:
    """--price MODEL=IN,OUT (USD per million prompt, completion tokens) -> the config's price table."""
    table = {}
    for item in items:
        model, _, nums = item.partition("=")
        try:
            prompt, completion = (float(x) for x in nums.split(","))
            if not model or prompt < 0 or completion < 0:
                raise ValueError
        except ValueError:
            raise _input_error(f"--price: {item!r} is not allowed; use MODEL=IN,OUT with USD per million prompt "
                               "and completion tokens, e.g. gpt-4o=2.5,10 ('*' for any model)") from None
        table[model] = {"prompt_per_million": prompt, "completion_per_million": completion}
    return table


def _fanout_options(args: argparse.Namespace):
    """--max-concurrent-dialogues, --llm-rpm/--llm-tpm, --budget-usd checked; the RateLimit."""
    from llm.ratelimit import RateLimit

    if args.max_concurrent_dialogues is not None and args.max_concurrent_dialogues < 0:
        raise _input_error(f"--max-concurrent-dialogues: {args.max_concurrent_dialogues} is not allowed; "
                           "must be >= 0")
    if args.budget_usd is not None and not args.budget_usd > 0:
        raise _input_error(f"--budget-usd: {args.budget_usd} is not allowed; must be > 0")
    try:
        return RateLimit(args.llm_rpm, args.llm_tpm)
    except ValueError as exc:
        raise _input_error(f"--llm-{exc}") from None


def _is_ray_process(p) -> bool:
    try:
        name, cmd = p.name(), " ".join(p.cmdline())
    except Exception:  # noqa: BLE001 - gone or not ours to inspect
        return False
    return name.startswith("ray::") or name in ("raylet", "gcs_server") or "/ray/" in cmd


def shutdown_local_ray() -> int:
    """Shut down the Ray this process started and reap every helper it left behind (raylet, GCS, dashboard,
    agents, idle workers, and those of a start-up that timed out half way): Ray processes among this
    process's descendants and those naming its Ray session, by pid. Returns how many were still alive after
    `ray.shutdown()` and had to be terminated (0 when Ray cleaned up after itself)."""
    if "ray" not in sys.modules:
        return 0
    import psutil
    import ray

    helpers = {p.pid: p for p in psutil.Process().children(recursive=True) if _is_ray_process(p)}
    node = getattr(getattr(ray._private.worker, "global_worker", None), "node", None)
    session = getattr(node, "session_name", None)
    if session:
        for p in psutil.process_iter(["cmdline", "uids"]):
            try:
                if p.info["uids"] and p.info["uids"].real == os.getuid() and session in " ".join(p.info["cmdline"] or ()):
                    helpers.setdefault(p.pid, p)
            except (psutil.Error, TypeError):
                continue
    helpers.pop(os.getpid(), None)
    ray.shutdown()
    _, alive = psutil.wait_procs(list(helpers.values()), timeout=5)
    for p in alive:
        try:
            p.terminate()
        except psutil.Error:
            pass
    _, alive2 = psutil.wait_procs(alive, timeout=3)
    for p in alive2:
        try:
            p.kill()
        except psutil.Error:
            pass
    return len(alive)


def _ray_running() -> bool:
    return "ray" in sys.modules and sys.modules["ray"].is_initialized()


def run_study_cmd(args: argparse.Namespace) -> int:
    from evaluation.runner import StudyError, run_study

    config = config_from_cli(args)
    limit = _fanout_options(args)
    from evaluation.placement import Placement, parse_labels

    try:
        placement = Placement(parse_labels(args.node_labels), args.scoring_gpus)
    except ValueError as exc:
        raise _input_error(f"--{exc}") from None
    ours = not args.address and not _ray_running()  # a Ray this command starts (not a caller's, not a cluster)
    try:
        s = run_study(config, Path(args.out), resume=args.resume, address=args.address, num_cpus=args.num_cpus,
                      progress=not args.no_progress, include_dashboard=args.dashboard,
                      max_concurrent_dialogues=args.max_concurrent_dialogues, rate_limit=limit,
                      budget_usd=args.budget_usd, placement=placement)
    except StudyError as exc:
        raise _input_error(str(exc)) from None
    finally:
        if ours:
            shutdown_local_ray()
    print(f"study {config.name}: {s.executed} units run ({s.failed} failed), {s.skipped} already done, "
          f"{s.infra_failures} batches lost to infrastructure, {s.seconds:.1f} s on {s.num_cpus:g} CPUs")
    if s.mode == "fanout":
        print(f"LLM: up to {s.peak_dialogues} dialogues in flight (limit {s.max_concurrent_dialogues}), "
              f"cost ${s.cost_usd:.4f}" + ("; budget reached: --resume continues" if s.budget_stopped else ""))
    print(f"results: {Path(args.out) / 'units'}   report: askopt report {args.out}")
    return 1 if s.infra_failures else 0


def run_report_cmd(args: argparse.Namespace) -> int:
    from evaluation.report import completeness, write_report

    run_dir = Path(args.run_dir)
    if not (run_dir / "config.json").is_file():
        raise _input_error(f"RUN_DIR: {str(run_dir)!r} is not a study run directory (no config.json file)")
    if args.other_run is not None:
        from evaluation.report_compare import write_comparison

        if not (Path(args.other_run) / "config.json").is_file():
            raise _input_error(f"RUN_B: {args.other_run!r} is not a study run directory (no config.json file)")
        try:
            print(f"comparison: {write_comparison(run_dir, Path(args.other_run))}")
        except ValueError as exc:
            raise _input_error(str(exc)) from None
        return 0
    try:
        path = write_report(run_dir)
        done, expected = completeness(run_dir)
    except ValueError as exc:
        raise _input_error(str(exc)) from None
    if done < expected:
        print(f"askopt: warning: {run_dir} is a partial run: {done} of {expected} units finished; the report "
              f"says so (finish it with askopt study ... --out {run_dir} --resume)", file=sys.stderr)
    print(f"report: {path}")
    return 0


def submit_entrypoint(parts: list[str], local: bool = False) -> str:
    """The job's shell command. For a cluster on this machine a leading `askopt` becomes this environment's
    askopt script: the job's shell does not have our virtual environment on its PATH."""
    parts = list(parts)
    if parts and parts[0] == "--":
        parts = parts[1:]
    if not parts:
        raise _input_error("submit: give the command after --, e.g. askopt submit -- askopt study --instances 70 ...")
    script = Path(sys.executable).parent / "askopt"
    if local and parts[0] == "askopt" and script.exists():
        parts[0] = str(script)
    return " ".join(shlex.quote(p) for p in parts)


def _submit_with_retry(client, entrypoint: str, runtime_env: dict | None, wait_s: float = 60.0) -> str:
    """submit_job, waiting for the head's job agent: right after `ray start` it answers "No available agent"."""
    import time

    deadline = time.monotonic() + wait_s
    while True:
        try:
            return client.submit_job(entrypoint=entrypoint, runtime_env=runtime_env)
        except RuntimeError as exc:
            if "No available agent" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(2.0)


def run_submit_cmd(args: argparse.Namespace) -> int:
    from ray.job_submission import JobStatus, JobSubmissionClient

    address = args.address or os.environ.get("RAY_ADDRESS") or "http://127.0.0.1:8265"
    entrypoint = submit_entrypoint(args.entrypoint, local=any(h in address for h in ("127.0.0.1", "localhost")))
    try:
        client = JobSubmissionClient(address)
    except Exception as exc:  # noqa: BLE001 - connection / auth problems are the user's to fix
        raise _input_error(f"--address {address}: cannot reach the Ray dashboard ({str(exc).splitlines()[0][:200]}); "
                           "with token auth set RAY_AUTH_MODE=token and the token") from None
    runtime_env = {"working_dir": args.working_dir} if args.working_dir else None
    job_id = _submit_with_retry(client, entrypoint, runtime_env)
    print(f"submitted {job_id}: {entrypoint}")
    if args.no_wait:
        return 0
    import asyncio

    async def follow() -> None:
        async for chunk in client.tail_job_logs(job_id):
            sys.stdout.write(chunk)
            sys.stdout.flush()

    asyncio.run(follow())
    status = client.get_job_status(job_id)
    print(f"job {job_id}: {status}")
    return 0 if status == JobStatus.SUCCEEDED else 1


def run_demo_cmd(args: argparse.Namespace) -> int:
    from experiments.cli_inputs import StudyArgs, check_out_dir, validate_args
    from experiments.demo import run_demo

    opts = validate_args(StudyArgs, args)
    out = check_out_dir(args.out)
    ours = not _ray_running()
    try:
        path = run_demo(out, instances=opts.instances, trials=opts.trials, num_cpus=opts.num_cpus,
                        fresh=args.fresh)
    finally:
        if ours:
            shutdown_local_ray()
    print(f"\nreport: {path}")
    return 0
