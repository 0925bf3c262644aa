"""The one optimisation service: solve a validated Problem with the named methods and arbitrate by risk.

Candidates: the best (s,S) policy (search), the best base-stock level, the exact DP policy where tractable and
a DQN trained on the problem (optional). All are re-scored on the same fresh common random numbers by
L(pi) = E[cost] + exp(-lambda) * Std[cost] under the problem's risk tolerance lambda, so the winner is picked
on one yardstick and never on the (optimistically biased) numbers its own search selected it with.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from inventory import dp as dp_mod
from inventory.montecarlo import Evaluation, evaluate
from inventory.policies import BaseStockPolicy, Policy, SSPolicy
from inventory.problem import Problem
from inventory.search import best_base_stock, search_ss

if TYPE_CHECKING:
    from rl.artifacts import DQNRecommender

# Offsets from the configured seed: search, DQN validation and final scoring never share random numbers.
SEARCH_SEED_OFFSET = 0
FINAL_SEED_OFFSET = 1_000_003  # distinct from inventory.search (seed + 7919 for its own re-evaluation)


@dataclass
class PolicyScore:
    """One candidate policy scored on the common final replications."""

    name: str  # "ss" | "dqn" | "dp" | "base_stock"
    label: str  # human-readable, e.g. "(s=40, S=65)"
    params: dict  # {"s":..,"S":..} for ss; {"S":..} for base_stock; {} for dqn/dp
    mean_cost: float
    std_cost: float
    objective: float  # L(pi)
    stderr: float = 0.0
    fill_rate: float = float("nan")
    role: str = "candidate"  # "candidate" (may win) | "advice" (an outside policy scored for comparison)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class OptimizationConfig:
    """What the agent runs. `dqn_steps` counts environment steps (periods simulated) for training."""

    dqn: bool = True
    dqn_steps: int = 200_000
    dqn_seconds: float = 60.0  # wall clock for training and the searches after it (rl: 20 s of it kept for them)
    dqn_trainer: str = "torch"  # "torch" (fast, vectorised numpy env) | "rllib" (RLlib DQN, new API stack)
    replications: int = 2000  # final scoring replications (fresh common random numbers)
    search_replications: int = 500
    seed: int = 0
    use_dp: bool = True
    dp_max_states: int = 3_000_000
    dp_max_work: float = 2.5e11
    objective: str = "finite"
    write_artifacts: bool = True

    def methods(self) -> tuple[str, ...]:
        """The candidate methods this configuration asks for."""
        return ("ss", "base_stock") + (("dp",) if self.use_dp else ()) + (("dqn",) if self.dqn else ())

    def __post_init__(self) -> None:
        if self.dqn_trainer not in ("torch", "rllib"):
            raise ValueError(f"dqn_trainer: {self.dqn_trainer!r} is not allowed; allowed: torch, rllib")
        if self.objective not in ("finite", "average"):
            raise ValueError(f"objective: {self.objective!r} is not allowed; allowed: finite, average")
        if not (isinstance(self.replications, int) and self.replications >= 2):
            raise ValueError(f"replications: {self.replications!r} is not allowed; must be a whole number >= 2")
        if not (isinstance(self.dqn_steps, int) and self.dqn_steps >= 1):
            raise ValueError(f"dqn_steps: {self.dqn_steps!r} is not allowed; must be a whole number >= 1")


@dataclass
class OptimizationResult:
    problem: Problem
    scores: list[PolicyScore]  # all evaluated policies
    winner: PolicyScore | None  # None only when no candidate method ran (e.g. DP alone, intractable)
    runner_up: PolicyScore | None
    best_ss: PolicyScore | None  # present whenever "ss" was among the methods (always for the agent)
    ss_extra_cost_pct: float | None  # (best_ss.objective - winner.objective) / |winner.objective| * 100
    dp: dict | None  # dp.DPResult.as_dict() or None
    artifacts_dir: Path | None
    seconds: float
    dqn_training: dict | None = None  # trainer summary (steps, seconds, stop reason) when a DQN was trained
    notes: list[str] = field(default_factory=list)
    trained_dqn: object | None = field(default=None, repr=False)  # rl.dqn_torch.TrainedDQN when trained
    policies: dict[str, Policy] = field(default_factory=dict, repr=False)  # name -> the evaluable policy
    objective: str = "finite"
    ss_search: dict | None = None  # the search's own figures: s, S, Monte Carlo cost, exact cost, seconds
    extra_scores: list[PolicyScore] = field(default_factory=list)  # outside policies, same replications

    def policy_for(self, name: str) -> Policy:
        """The policy object behind a score (e.g. the winner's), ready for `montecarlo.evaluate`."""
        if name not in self.policies:
            raise KeyError(f"policy: {name!r} was not evaluated; evaluated: {', '.join(self.policies)}")
        return self.policies[name]

    def recommender(self) -> DQNRecommender | None:
        """The torch-only loader for the trained DQN (from the artifacts when written, else in memory);
        None when no DQN was trained."""
        from rl.artifacts import DQNRecommender

        if self.artifacts_dir is not None and (Path(self.artifacts_dir) / "dqn_weights.pth").exists():
            return DQNRecommender.load(self.artifacts_dir)
        if self.trained_dqn is not None:
            t = self.trained_dqn
            return DQNRecommender.from_network(t.net, t.problem, t.norm, opening=t.opening, residual=t.residual)
        return None

    def score(self, name: str) -> PolicyScore | None:
        return next((s for s in self.scores if s.name == name), None)

    def as_dict(self) -> dict:
        return {
            "problem": self.problem.to_dict(),
            "scores": [s.as_dict() for s in self.scores],
            "winner": self.winner.as_dict() if self.winner else None,
            "runner_up": self.runner_up.as_dict() if self.runner_up else None,
            "best_ss": self.best_ss.as_dict() if self.best_ss else None,
            "ss_extra_cost_pct": self.ss_extra_cost_pct,
            "dp": self.dp,
            "artifacts_dir": str(self.artifacts_dir) if self.artifacts_dir else None,
            "seconds": self.seconds,
            "dqn_training": self.dqn_training,
            "notes": list(self.notes),
        }


# ---------------------------------------------------------------------------------------------------
# The one optimisation service
# ---------------------------------------------------------------------------------------------------

METHODS = ("ss", "base_stock", "dp", "dqn")


def optimize(
    problem: Problem,
    methods: tuple[str, ...] | list[str] | None = None,
    config: OptimizationConfig | None = None,
    extra: list[tuple[str, Policy]] | None = None,
    out_dir: Path | None = None,
    progress: bool = False,
    pretrained_dqn: object | None = None,
) -> OptimizationResult:
    """Compute the candidate policies named in `methods`, score them and any `extra` policies (advice to compare)
    on one set of fresh common random numbers, pick the winner by L(pi) among the candidates, write the artifacts.

    Every entry point (askopt solve/optimize, the dialogue, serving, the study) calls this, so they agree on the
    search criterion (L(pi) under the problem's lambda), the seeds and the artifact schema.

    Parameters
    ----------
    methods : subset of ("ss", "base_stock", "dp", "dqn"); default from `config` (ss, base_stock, dp if
        config.use_dp, dqn if config.dqn).
    extra : (name, policy) pairs scored beside the candidates, never chosen as the winner.
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem: expected inventory.problem.Problem, got {type(problem).__name__}")
    cfg = config or OptimizationConfig()
    methods = tuple(methods) if methods is not None else cfg.methods()
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"methods: {unknown[0]!r} is not allowed; allowed: {', '.join(METHODS)}")
    t0 = time.perf_counter()
    notes: list[str] = []
    candidates: list[tuple[str, Policy]] = []
    ss_search: dict | None = None

    if "ss" in methods:
        found = search_ss(problem, objective=cfg.objective, criterion="objective",
                          seed=cfg.seed + SEARCH_SEED_OFFSET)
        exact_cost = found.exact_cost
        if exact_cost is None:
            exact = dp_mod.evaluate_policy(problem, found.policy, objective=cfg.objective)
            exact_cost = exact.optimal_cost if exact.status == "solved" else None
        ss_search = {"s": int(found.s), "S": int(found.S), "cost": float(found.mean_cost),
                     "exact_cost": exact_cost, "method": found.method, "seconds": round(found.seconds, 3)}
        candidates.append(("ss", SSPolicy(s=int(found.s), S=int(found.S))))
    S_bs = None
    if "base_stock" in methods:
        S_bs = int(best_base_stock(problem, objective=cfg.objective, criterion="objective",
                                   seed=cfg.seed + SEARCH_SEED_OFFSET).S)
        candidates.append(("base_stock", BaseStockPolicy(S=S_bs)))

    dp_info = None
    if "dp" in methods:
        res = dp_mod.solve(problem, objective=cfg.objective, max_states=cfg.dp_max_states, max_work=cfg.dp_max_work)
        dp_info = res.as_dict()
        if res.status == "solved" and res.policy is not None:
            candidates.append(("dp", res.policy))
        elif res.status in ("bounded", "not converged") and res.policy is not None:
            # still a good policy: it competes on the same replications like every candidate, and says so
            candidates.append(("dp", res.policy))
            notes.append(f"DP {res.status}: {res.reason or ''} (gap estimate {res.gap})".replace(" ()", ""))
        else:
            reason = res.reason or res.status
            dp_info["reason"] = reason
            notes.append(f"DP not used: {reason}")
        if ss_search and dp_info.get("optimal_cost") is not None and ss_search["exact_cost"] is not None:
            dp_info["ss_gap_pct"] = 100 * (ss_search["exact_cost"] - dp_info["optimal_cost"]) / max(
                abs(dp_info["optimal_cost"]), 1e-12)

    if "dqn" in methods and not any(name == "dp" for name, _ in candidates):
        # beyond the DP's reach the DQN must also beat capped base-stock (strong under lost sales, long leads)
        from rl.heuristics import CappedBaseStockPolicy, best_capped_base_stock

        S_c, r_c, _ = best_capped_base_stock(problem, seed=cfg.seed + SEARCH_SEED_OFFSET)
        candidates.append(("capped_base_stock", CappedBaseStockPolicy(S=S_c, r=r_c)))

    trained = None
    if "dqn" in methods:
        trained = pretrained_dqn or _train_dqn(problem, cfg, progress, base_stock_level=S_bs)
        candidates.append(("dqn", trained.state_policy()))

    named = candidates + list(extra or [])
    evals = evaluate(problem, [p for _, p in named], replications=cfg.replications,
                     seed=cfg.seed + FINAL_SEED_OFFSET, objective=cfg.objective)
    scores = [_score(name, pol, ev) for (name, pol), ev in zip(candidates, evals, strict=False)]
    extra_scores = [_score(name, pol, ev, role="advice")
                    for (name, pol), ev in zip(extra or [], evals[len(candidates):], strict=True)]
    ranked = sorted(scores, key=lambda sc: (sc.objective, sc.std_cost))
    winner = ranked[0] if ranked else None
    runner_up = ranked[1] if len(ranked) > 1 else None
    best_ss = next((sc for sc in scores if sc.name == "ss"), None)
    extra_pct = None
    if best_ss is not None and winner is not None:
        extra_pct = 0.0 if winner is best_ss else (best_ss.objective - winner.objective) / max(
            abs(winner.objective), 1e-12) * 100
    if trained is not None:
        opening = trained.info.get("opening") or {}
        if opening.get("applied") and opening.get("opening") != opening.get("own_opening"):
            notes.append(f"DQN opening orders (t = 0..L, empty shelf) re-chosen by rollouts: "
                         f"{opening.get('own_opening')} -> {opening.get('opening')}")
        if trained.residual is not None:
            from rl.residual import describe_residual

            notes.append(f"DQN orders offset after the opening (found by rollouts): {describe_residual(trained.residual)}")
        dqn = next(sc for sc in scores if sc.name == "dqn")
        bs = next((sc for sc in scores if sc.name == "base_stock"), None)
        if bs is not None and dqn.objective > bs.objective:
            notes.append(
                f"trained DQN is worse than base-stock: L={dqn.objective:.2f} vs {bs.objective:.2f} "
                f"({(dqn.objective / bs.objective - 1) * 100:.2f}% more)"
            )
        heuristic = min((sc for sc in scores if sc.name in ("ss", "base_stock", "capped_base_stock")),
                        key=lambda sc: sc.objective, default=None)
        if heuristic is not None and heuristic is not bs and dqn.objective > heuristic.objective:
            notes.append(f"trained DQN is worse than the best heuristic, {heuristic.label}: "
                         f"L={dqn.objective:.2f} vs {heuristic.objective:.2f}")

    result = OptimizationResult(
        problem=problem,
        scores=scores,
        winner=winner,
        runner_up=runner_up,
        best_ss=best_ss,
        ss_extra_cost_pct=None if extra_pct is None else float(extra_pct),
        dp=dp_info,
        artifacts_dir=None,
        seconds=time.perf_counter() - t0,
        dqn_training=trained.summary() if trained is not None else None,
        notes=notes,
        trained_dqn=trained,
        policies=dict(named),
        objective=cfg.objective,
        ss_search=ss_search,
        extra_scores=extra_scores,
    )
    if out_dir is not None and cfg.write_artifacts:
        from optimization.artifacts import write_artifacts

        result.artifacts_dir = write_artifacts(result, Path(out_dir))
    return result


def optimize_many(problems: dict[str, Problem], config: OptimizationConfig | None = None, out_dir: Path | None = None,
                  max_concurrent: int = 2) -> dict[str, OptimizationResult]:
    """`optimize` for several instances, their DQNs trained in parallel first through Ray Tune
    (`rl.tune_per_instance`: one trial per instance, 1 CPU each, early stopping, best checkpoint kept)."""
    cfg = config or OptimizationConfig()
    trained = {}
    if cfg.dqn:
        from rl.rllib_train import RLlibSettings, tune_per_instance

        trained = tune_per_instance(problems, RLlibSettings(total_steps=cfg.dqn_steps, time_budget_s=cfg.dqn_seconds,
                                                            seed=cfg.seed), max_concurrent=max_concurrent)
    return {name: optimize(p, config=cfg, out_dir=None if out_dir is None else Path(out_dir) / name,
                           pretrained_dqn=trained.get(name)) for name, p in problems.items()}


class OptimizationAgent:
    """The Optimization Agent's configuration bound to the service: `run` is `optimize` with the config's methods."""

    def __init__(self, config: OptimizationConfig | None = None):
        self.config = config or OptimizationConfig()

    def run(self, problem: Problem, out_dir: Path | None = None, progress: bool = False) -> OptimizationResult:
        return optimize(problem, config=self.config, out_dir=out_dir, progress=progress)


def _train_dqn(problem: Problem, cfg: OptimizationConfig, progress: bool, base_stock_level: int | None):
    """Train the DQN with the configured trainer; returns an object with state_policy(), save(), summary()."""
    if cfg.dqn_trainer == "rllib":
        from rl.rllib_train import train_rllib_dqn

        return train_rllib_dqn(problem, steps=cfg.dqn_steps, seed=cfg.seed, progress=progress,
                               time_budget_s=cfg.dqn_seconds, base_stock_level=base_stock_level)
    from rl.dqn_torch import DQNConfig, train_dqn

    return train_dqn(problem, DQNConfig(total_steps=cfg.dqn_steps, time_budget_s=cfg.dqn_seconds,
                                        seed=cfg.seed), progress=progress, base_stock_level=base_stock_level)


def _score(name: str, policy: Policy, ev: Evaluation, role: str = "candidate") -> PolicyScore:
    if role == "advice":
        params = dict(ev.params) if not getattr(policy, "needs_state", False) else {}
        label = ev.name
    elif name == "ss":
        params = {"s": int(policy.s), "S": int(policy.S)}
        label = f"(s={params['s']}, S={params['S']})"
    elif name == "base_stock":
        params = {"S": int(policy.S)}
        label = f"base-stock (S={params['S']})"
    elif name == "capped_base_stock":
        params = {"S": int(policy.S), "r": int(policy.r)}
        label = f"capped base-stock (S={params['S']}, r={params['r']})"
    elif name == "dp":
        params, label = {}, "DP optimal"
    else:
        params, label = {}, "DQN (greedy)"
    return PolicyScore(
        name=name,
        label=label,
        params=params,
        mean_cost=float(ev.mean_cost),
        std_cost=float(ev.std_cost),
        objective=float(ev.objective),
        stderr=float(ev.stderr),
        fill_rate=float(ev.fill_rate),
        role=role,
    )
