"""`askopt solve PARAMS`: the inventory core from the command line."""

from __future__ import annotations

import json
from pathlib import Path

from inventory.policies import parse_policy_spec
from inventory.spec import load_problem
from optimization.artifacts import write_artifacts
from optimization.solve import METHODS, format_report, solve_json, solve_problem


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


def run(args) -> int:
    problem = load_problem(Path(args.params))
    extra = [(spec, parse_policy_spec(spec)) for spec in args.evaluate]
    if args.replications < 2:
        raise ValueError(f"--replications: {args.replications} is not allowed; must be >= 2")
    report = solve_problem(problem, args.method, args.objective, extra, args.replications, args.seed)
    write_artifacts(report, Path(args.out))
    if args.json:
        print(json.dumps(solve_json(report), default=float))
    else:
        print(format_report(report))
        print(f"\nArtifacts written to {args.out}/")
    return 0
