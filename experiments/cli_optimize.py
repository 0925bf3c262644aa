"""`askopt optimize PARAMS --out DIR [--dqn-steps N] [--no-dqn]`: run the Optimization Agent on a parameter file.

Imports are inside the handler (start-up cost); options, --out, the parameter file and the resource estimate
are validated (`experiments.cli_inputs`) before any work starts.
"""

from __future__ import annotations

import argparse
import json


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "optimize",
        help="search (s,S), base-stock, exact DP and a DQN; score all by L(pi) and write deployment artifacts",
        description="Solve the problem in PARAMS (CSV or JSON parameter table) with every applicable method, "
        "score them on common random numbers by L(pi) = E[cost] + exp(-lambda) Std[cost], write the artifacts.",
    )
    p.add_argument("params", metavar="PARAMS", help="parameter table (.csv or .json)")
    p.add_argument("--out", required=True, help="directory for deployment_artifacts (created if missing)")
    p.add_argument("--dqn-steps", type=int, default=None, help="DQN training environment steps (default 200000)")
    p.add_argument("--dqn-seconds", type=float, default=None, help="DQN wall-clock budget: training and the searches after it (default 60)")
    p.add_argument("--trainer", choices=("torch", "rllib"), default="torch",
                   help="DQN trainer: fast pure-torch (default) or RLlib DQN")
    p.add_argument("--no-dqn", action="store_true", help="skip DQN training")
    p.add_argument("--no-dp", action="store_true", help="skip the exact DP")
    p.add_argument("--replications", type=int, default=2000, help="final scoring replications (default 2000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=run_optimize)


def run_optimize(args: argparse.Namespace) -> int:
    from pathlib import Path

    from experiments.cli_inputs import OptimizeArgs, check_out_dir, load_params, preflight, validate_args

    opts = validate_args(OptimizeArgs, args)
    out = check_out_dir(args.out)
    problem = load_params(args.params)
    # the DQN is bounded by its own wall-clock budget (--dqn-seconds); the rest is priced here
    preflight(problem, ("ss", "base_stock") + (() if args.no_dp else ("dp",)), opts.replications)

    from optimization.service import OptimizationAgent, OptimizationConfig

    kwargs = {"dqn": not args.no_dqn, "use_dp": not args.no_dp, "replications": opts.replications,
              "seed": opts.seed, "dqn_trainer": opts.trainer}
    if opts.dqn_steps is not None:
        kwargs["dqn_steps"] = opts.dqn_steps
    if opts.dqn_seconds is not None:
        kwargs["dqn_seconds"] = opts.dqn_seconds
    out = Path(out)
    result = OptimizationAgent(OptimizationConfig(**kwargs)).run(problem, out_dir=out, progress=True)
    if args.json:
        print(json.dumps(result.as_dict(), indent=2, default=str))
        return 0
    lam = problem.risk_tolerance
    print(f"L(pi) = E[cost] + exp(-lambda) Std[cost], lambda = {lam:g}; {opts.replications} replications")
    print(f"{'policy':<12}{'label':<22}{'mean':>11}{'std':>10}{'L(pi)':>12}")
    for sc in sorted(result.scores, key=lambda s: s.objective):
        mark = "  <- winner" if sc is result.winner else ""
        print(f"{sc.name:<12}{sc.label:<22}{sc.mean_cost:>11.2f}{sc.std_cost:>10.2f}{sc.objective:>12.2f}{mark}")
    if result.dp and result.dp.get("status") == "solved":
        print(f"exact DP optimum (expected cost): {result.dp['optimal_cost']:.2f}")
    if result.winner.name != "ss":
        print(f"best (s,S) costs {result.ss_extra_cost_pct:.2f}% more than the winner")
    for note in result.notes:
        print(f"note: {note}")
    print(f"artifacts: {out} ({result.seconds:.1f} s)")
    return 0
