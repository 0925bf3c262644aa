"""`askopt solve PARAMS`: the inventory core from the command line.

Imports are inside `run` so `askopt --help` and argument errors cost nothing; everything is validated
(`experiments.cli_inputs`: numbers, --out, the parameter file, the resource estimate) before any work starts.
"""

from __future__ import annotations

import json

METHODS = ("ss", "dp", "all")  # optimization.solve.METHODS (tests/test_cli_solve.py keeps them equal)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "solve",
        help="best (s,S), exact DP optimum and policy comparison for a parameter table",
        description="Solve an inventory problem given as extracted_params.csv (Parameter,Value,Unit,Status) "
        "or a JSON object of the twelve parameters.",
    )
    p.add_argument("params", metavar="PARAMS", help="CSV or JSON parameter file")
    p.add_argument("--evaluate", action="append", default=[], metavar="SPEC",
                   help="also score a policy: ss:s,S | sq:s,Q | rq:R,Q | bs:S | const:q (repeatable)")
    p.add_argument("--objective", choices=("finite", "average"), default="finite",
                   help="total cost over the horizon, or long-run average cost per period")
    p.add_argument("--method", choices=METHODS, default="all", help="(s,S) search, exact DP, or both")
    p.add_argument("--replications", type=int, default=2000, help="Monte Carlo replications for the comparison")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="deployment_artifacts", help="where config.json and results CSV go")
    p.add_argument("--json", action="store_true", help="print one JSON object (see README)")
    p.set_defaults(handler=run)


def parse_evaluate(specs: list[str]) -> list:
    """(spec, Policy) for every --evaluate, or a one-line error naming --evaluate."""
    from experiments.cli_inputs import input_error
    from inventory.policies import parse_policy_spec

    out = []
    for spec in specs:
        try:
            policy = parse_policy_spec(spec)
        except ValueError as exc:
            msg = str(exc)
            raise input_error(msg if msg.startswith("--evaluate") else f"--evaluate: {msg}") from None
        if any(abs(int(v)) > 10**9 for v in policy.params().values()):
            raise input_error(f"--evaluate: {spec[:60]!r} is not allowed; policy levels must be <= 1e9")
        out.append((spec, policy))
    return out


def run(args) -> int:
    from pathlib import Path

    from experiments.cli_inputs import SolveArgs, check_out_dir, load_params, preflight, validate_args

    opts = validate_args(SolveArgs, args)
    out = check_out_dir(args.out)
    extra = parse_evaluate(opts.evaluate)
    problem = load_params(args.params)
    methods = {"ss": ("ss",), "dp": ("dp",), "all": ("ss", "dp")}[opts.method]
    preflight(problem, methods, opts.replications, len(extra), opts.objective)

    from optimization.artifacts import write_artifacts
    from optimization.solve import format_report, solve_json, solve_problem

    report = solve_problem(problem, opts.method, opts.objective, extra, opts.replications, opts.seed)
    write_artifacts(report, Path(out))
    if args.json:
        print(json.dumps(solve_json(report), default=float))
    else:
        print(format_report(report))
        print(f"\nArtifacts written to {args.out}/")
    return 0
