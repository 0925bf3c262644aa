"""`askopt bench ordebug` (OR-Debug-Bench leaderboard), `askopt iis MODEL.mps` and `askopt repair MODEL.mps`."""

from __future__ import annotations

import argparse
import json
import math
import os

LEADERBOARD_KEYS = ["agent", "split", "RR@5", "RR@10", "RR@20", "DA", "OP", "TE", "FP", "rational", "n"]
GROUPS = {"none": [], "operator": ["operator"], "size": ["size_tier"], "iis_size": ["iis_tier"], "iis": ["iis"]}


def _user_error(msg: str) -> Exception:
    """A one-line, exit-2 error. Also a ValueError: under ``python -m experiments.cli`` the module runs as
    ``__main__`` and catches its own copy of UserInputError, not the one imported here, but it always
    catches ValueError the same way."""
    try:
        from experiments.cli import UserInputError
    except ImportError:  # pragma: no cover - cli.py always exists in the repo
        return ValueError(msg)

    class OrdebugInputError(UserInputError, ValueError):
        pass

    return OrdebugInputError(msg)


def register(subparsers) -> None:
    bench = subparsers.add_parser("bench", help="run benchmarks", description="Run a benchmark suite.")
    bench_sub = bench.add_subparsers(dest="bench_name", metavar="SUITE")
    bench.set_defaults(handler=lambda args: (bench.print_help(), 0)[1])
    p = bench_sub.add_parser(
        "ordebug", help="OR-Debug-Bench: diagnose and repair infeasible models",
        description="Run OR-Debug-Bench episodes as Ray tasks into <out>/episodes.parquet and print the "
                    "leaderboard (RR@5/10/20, DA, OP, TE, FP, rational recovery). Reruns resume.")
    p.add_argument("--agent", default="heuristic", help="heuristic | llm | drop (default heuristic)")
    p.add_argument("--split", default="synthetic", help="synthetic | netlib | wild | resilience (default synthetic)")
    p.add_argument("--seeds", default=None, help="folder of feasible MPS models to build instances from")
    p.add_argument("--per-model", type=int, default=3, help="instances per seed model with --seeds (default 3)")
    p.add_argument("--instances", default=None,
                   help="folder in the published OR-Debug-Bench layout (dataset.json + models/*.mps)")
    p.add_argument("--out", default="results/ordebug", help="output folder (default results/ordebug)")
    p.add_argument("--budget", type=int, default=20, help="solver calls per episode (default 20)")
    p.add_argument("--iis", default="on", help="on | off: whether get_iis is available (ablation)")
    p.add_argument("--by", default="none", help="ablation grouping: none | operator | size | iis_size | iis")
    p.add_argument("--few-shot", action="store_true", help="LLM agent: few-shot prompt instead of zero-shot")
    p.add_argument("--limit", type=int, default=None, help="use only the first N instances")
    p.add_argument("--seed", type=int, default=0, help="random seed for instance generation")
    p.add_argument("--no-ray", action="store_true", help="run in-process (debugging)")
    p.add_argument("--json", action="store_true", help="print leaderboard rows as JSON")
    p.add_argument("--quiet", action="store_true",
                   help="no progress lines on stderr (default: a bar on a terminal, else a line every 10 s)")
    p.set_defaults(handler=cmd_bench_ordebug)

    q = subparsers.add_parser("iis", help="irreducible infeasible subsystem of a model",
                              description="Print the IIS (rows and bounds in conflict) of an infeasible MPS/LP "
                                          "model, verified irreducible by a deletion filter. Exit codes: 0 "
                                          "feasible or IIS verified irreducible; 2 bad input; 3 infeasible "
                                          "subsystem not verified irreducible (time limit or undecided solves); "
                                          "4 undecided.")
    q.add_argument("model", help="MPS or LP file")
    q.add_argument("--time-limit", type=float, default=10.0,
                   help="seconds including reading the file (default 10); when reached, exit code 3 and the "
                        "smallest subsystem verified infeasible so far (status time_limit, irreducible false)")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(handler=cmd_iis)

    r = subparsers.add_parser(
        "repair", help="diagnose an infeasible LP/MIP and write the least-damaging repair and a short report",
        description="Diagnose an infeasible MPS/LP model (IIS, suspects ranked by the Farkas certificate and "
                    "by how unlike their siblings they are, the contradiction in words), try repairs best-first "
                    "and propose the least damaging one that makes the model solve: restoring an element to "
                    "its siblings' pattern, then the smallest relaxation of a right-hand side or bound, a sense "
                    "or integrality change, and dropping a row last; ties go to the repair keeping more "
                    "constraints (FP) and, with --reference-objective, the objective (OP). A model with several "
                    "conflicts is repaired one conflict at a time; when the solver-call budget runs out first, "
                    "the last resort is the elastic relaxation (every right-hand side moved by the least total "
                    "amount that solves). Exit codes: 0 repaired (or already "
                    "feasible); 1 no repair found within the budget; 2 bad input; 4 the model is not infeasible "
                    "(unbounded, time limit).")
    r.add_argument("model", help="MPS or LP file")
    r.add_argument("--out", default=None, help="write the repaired model here (.mps or .lp, by extension)")
    r.add_argument("--report", default=None,
                   help="write the markdown report here (default with --out: <out>.report.md)")
    r.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    r.add_argument("--budget", type=int, default=20, help="solver calls for the search (default 20)")
    r.add_argument("--options", type=int, default=3, help="working repairs to compare (default 3)")
    r.add_argument("--time-limit", type=float, default=60.0, help="seconds per solve (default 60)")
    r.add_argument("--reference-objective", type=float, default=None,
                   help="the objective the model should have (e.g. its last optimum): ranks repairs by OP")
    r.set_defaults(handler=cmd_repair)


IIS_EXIT = {"feasible": 0, "infeasible": 0, "time_limit": 3, "unknown": 4}
IIS_LISTED = 60  # text output lists at most this many members (--json has them all)


def iis_exit_code(res) -> int:
    """0: feasible, or an IIS verified irreducible. 3: an infeasible subsystem verified infeasible but not
    irreducible (time limit reached, or a numerically undecided solve). 4: nothing could be decided."""
    if res.status == "infeasible" and not res.irreducible:
        return 3
    return IIS_EXIT.get(res.status, 4)


def cmd_iis(args: argparse.Namespace) -> int:
    import time

    from ordebug.iis import compute_iis
    from ordebug.model import LinearModel

    if not args.time_limit > 0 or math.isinf(args.time_limit):
        raise _user_error(f"--time-limit must be a finite number of seconds > 0, got {args.time_limit}")
    if not os.path.isfile(args.model):
        raise _user_error(f"model file not found: {args.model}")
    started = time.perf_counter()  # reading the file counts against --time-limit
    try:
        model = LinearModel.from_mps(args.model)
    except Exception as exc:  # noqa: BLE001 - any parse failure is one line, exit 2
        raise _user_error(f"cannot read model {args.model!r}: {exc}") from None
    res = compute_iis(model, time_limit=args.time_limit, started=started)
    rc = iis_exit_code(res)
    if args.json:
        print(json.dumps(res.to_json()))
        return rc
    if res.status == "feasible":
        print(f"{model.name}: model is feasible; no IIS")
        return rc
    if res.status == "time_limit":
        what = (f"smallest subsystem verified infeasible so far: {len(res.rows)} rows and {len(res.col_bounds)} "
                f"bounds, NOT irreducible" if res.verified_infeasible else "no infeasible subsystem verified")
        print(f"{model.name}: time limit of {args.time_limit:g}s reached after {res.seconds:.2f}s; {what}")
    elif res.status != "infeasible":
        print(f"{model.name}: status {res.status}; no IIS ({res.method})")
        return rc
    else:
        print(f"{model.name}: IIS with {len(res.rows)} rows and {len(res.col_bounds)} bounds, "
              f"{'verified irreducible' if res.irreducible else 'NOT verified irreducible'}, "
              f"{res.seconds:.2f}s via {res.method}{' (integrality involved)' if res.integrality else ''}")
    listed = 0
    for kind, items in (("row", res.rows), ("bound", res.col_bounds)):
        for name, side in items:
            if listed == IIS_LISTED:
                print(f"  ... {res.size - IIS_LISTED} more (use --json for all)")
                return rc
            print(f"  {kind:<6} {name:<24} {side}")
            listed += 1
    return rc


REPAIR_EXIT = {"repaired": 0, "feasible": 0, "not_repaired": 1, "not_infeasible": 4}


def cmd_repair(args: argparse.Namespace) -> int:
    from ordebug.model import LinearModel
    from ordebug.repair import repair_model

    if not args.time_limit > 0 or math.isinf(args.time_limit):
        raise _user_error(f"--time-limit must be a finite number of seconds > 0, got {args.time_limit}")
    if args.budget < 2:
        raise _user_error(f"--budget must be >= 2 solver calls, got {args.budget}")
    if args.options < 1:
        raise _user_error(f"--options must be >= 1, got {args.options}")
    if args.out and os.path.splitext(args.out)[1].lower() not in (".mps", ".lp"):
        raise _user_error(f"--out must end in .mps or .lp, got {args.out!r}")
    if not os.path.isfile(args.model):
        raise _user_error(f"model file not found: {args.model}")
    try:
        model = LinearModel.from_mps(args.model)
    except Exception as exc:  # noqa: BLE001 - any parse failure is one line, exit 2
        raise _user_error(f"cannot read model {args.model!r}: {exc}") from None
    report, fixed = repair_model(model, budget=args.budget, options=args.options, time_limit=args.time_limit,
                                 reference_objective=args.reference_objective)
    text = report.to_markdown()
    if fixed is not None and args.out:
        fixed.to_mps(args.out)
        text += f"\nRepaired model written to `{args.out}`.\n"
    report_path = args.report or (f"{args.out}.report.md" if args.out else None)
    if report_path:
        with open(report_path, "w") as fh:
            fh.write(text)
    if args.json:
        print(json.dumps({**report.to_json(), "out": args.out if fixed is not None else None,
                          "report_file": report_path}, default=float))
    else:
        print(text)
    return REPAIR_EXIT[report.status]


def _llm_config(agent: str):
    """The LLM endpoint for `--agent llm`, or a one-line error when none is configured."""
    if agent != "llm":
        return None
    try:
        from llm.client import LLMConfig
    except ImportError as exc:
        raise _user_error(f"--agent llm needs llm.client ({exc})") from None
    try:
        cfg = LLMConfig.from_env()
    except (ValueError, TypeError) as exc:
        raise _user_error(f"LLM configuration invalid: {exc}") from None
    if not cfg.is_configured:
        raise _user_error("--agent llm needs an LLM endpoint: set ASKOPT_LLM_BASE_URL and ASKOPT_LLM_MODEL "
                          "(and ASKOPT_LLM_API_KEY if the server needs one)")
    return cfg


def cmd_bench_ordebug(args: argparse.Namespace) -> int:
    from experiments.ordebug_run import AGENTS, build_split, run_benchmark
    from ordebug.instances import SPLITS
    from ordebug.metrics import format_table, leaderboard

    if args.agent not in AGENTS:
        raise _user_error(f"--agent must be one of {', '.join(AGENTS)}; got {args.agent!r}")
    splits = [s for s in SPLITS if s != "custom"]
    if args.split not in splits:
        raise _user_error(f"--split must be one of {', '.join(splits)}; got {args.split!r}")
    if args.iis not in ("on", "off"):
        raise _user_error(f"--iis must be on or off; got {args.iis!r}")
    if args.by not in GROUPS:
        raise _user_error(f"--by must be one of {', '.join(GROUPS)}; got {args.by!r}")
    if args.per_model < 1:
        raise _user_error(f"--per-model must be >= 1; got {args.per_model}")
    if args.budget < 1:
        raise _user_error(f"--budget must be >= 1; got {args.budget}")
    if args.limit is not None and args.limit < 1:
        raise _user_error(f"--limit must be >= 1; got {args.limit}")
    if args.seeds and not os.path.isdir(args.seeds):
        raise _user_error(f"--seeds must be a directory of MPS files; got {args.seeds!r}")
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise _user_error(f"--out must be a directory (it holds episodes.parquet); {args.out!r} is a file")
    llm_config = _llm_config(args.agent)
    progress = not args.quiet  # on stderr: --json stdout stays one document
    if args.instances:
        if not os.path.isdir(args.instances):
            raise _user_error(f"--instances must be a folder with dataset.json and models/; got {args.instances!r}")
        from ordebug.instances import load_published

        instances = load_published(args.instances)[:args.limit] if args.limit else load_published(args.instances)
    else:
        instances = build_split(args.split, args.out, seeds=args.seeds, per_model=args.per_model, seed=args.seed,
                                use_ray=not args.no_ray, limit=args.limit, progress=progress)
    if not instances:
        raise _user_error(f"no usable instances for split {args.split!r}"
                          f"{' from ' + args.seeds if args.seeds else ''}")
    df = run_benchmark(instances, args.agent, args.out, allow_iis=args.iis == "on", budget=args.budget,
                       use_ray=not args.no_ray, llm_config=llm_config, few_shot=args.few_shot, progress=progress)
    df["split"] = "external" if args.instances else (args.split if not args.seeds else "custom")
    board = leaderboard(df, by=["agent", "split"] + GROUPS[args.by])
    if args.json:
        rows = []
        for rec in board.to_dict(orient="records"):
            item = {k: rec.get(k) for k in LEADERBOARD_KEYS}
            item.update({k: rec[k] for k in GROUPS[args.by]})
            item.update({k: rec[k] for k in ("root_rr", "root_rank", "service_level", "bottleneck_found") if k in rec})
            item["failed"] = int(rec.get("failed", 0))
            rows.append({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in item.items()})
        print(json.dumps(rows, default=float))
    else:
        print(format_table(board))
        print(f"episodes: {os.path.join(args.out, 'episodes.parquet')}")
    return 0
