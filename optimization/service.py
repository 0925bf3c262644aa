"""The Optimization Agent: solve a validated Problem with every applicable method and arbitrate by risk.

Candidates: the best (s,S) policy (search), the best base-stock level, the exact DP policy where tractable and
a DQN trained on the problem (optional). All are re-scored on the same fresh common random numbers by
L(pi) = E[cost] + exp(-lambda) * Std[cost] under the problem's risk tolerance lambda, so the winner is picked
on one yardstick and never on the (optimistically biased) numbers its own search selected it with.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

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

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class OptimizationConfig:
    """What the agent runs. `dqn_steps` counts environment steps (periods simulated) for training."""

    dqn: bool = True
    dqn_steps: int = 200_000
    dqn_seconds: float = 60.0  # wall-clock training budget; training stops at whichever limit comes first
    dqn_trainer: str = "torch"  # "torch" (fast, vectorised numpy env) | "rllib" (RLlib DQN, new API stack)
    replications: int = 2000  # final scoring replications (fresh common random numbers)
    search_replications: int = 500
    seed: int = 0
    use_dp: bool = True
    dp_max_states: int = 3_000_000
    dp_max_work: float = 2.5e11
    objective: str = "finite"
    write_artifacts: bool = True

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
    winner: PolicyScore
    runner_up: PolicyScore | None
    best_ss: PolicyScore  # always present
    ss_extra_cost_pct: float  # (best_ss.objective - winner.objective) / |winner.objective| * 100 (0 if ss wins)
    dp: dict | None  # dp.DPResult.as_dict() or None
    artifacts_dir: Path | None
    seconds: float
    dqn_training: dict | None = None  # trainer summary (steps, seconds, stop reason) when a DQN was trained
    notes: list[str] = field(default_factory=list)
    trained_dqn: object | None = field(default=None, repr=False)  # rl.dqn_torch.TrainedDQN when trained
    policies: dict[str, Policy] = field(default_factory=dict, repr=False)  # name -> the evaluable policy

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
            return DQNRecommender.from_network(t.net, t.problem, t.norm)
        return None

    def score(self, name: str) -> PolicyScore | None:
        return next((s for s in self.scores if s.name == name), None)

    def as_dict(self) -> dict:
        return {
            "problem": self.problem.to_dict(),
            "scores": [s.as_dict() for s in self.scores],
            "winner": self.winner.as_dict(),
            "runner_up": self.runner_up.as_dict() if self.runner_up else None,
            "best_ss": self.best_ss.as_dict(),
            "ss_extra_cost_pct": self.ss_extra_cost_pct,
            "dp": self.dp,
            "artifacts_dir": str(self.artifacts_dir) if self.artifacts_dir else None,
            "seconds": self.seconds,
            "dqn_training": self.dqn_training,
            "notes": list(self.notes),
        }


# ---------------------------------------------------------------------------------------------------
# Candidate construction
# ---------------------------------------------------------------------------------------------------


def find_best_ss(problem: Problem, config: OptimizationConfig) -> tuple[int, int]:
    """(s, S) minimising L(pi) under the problem's lambda."""
    res = search_ss(problem, objective=config.objective, criterion="objective", seed=config.seed + SEARCH_SEED_OFFSET)
    return int(res.s), int(res.S)


def find_best_base_stock(problem: Problem, config: OptimizationConfig) -> int:
    """Order-up-to level S minimising L(pi)."""
    res = best_base_stock(problem, objective=config.objective, criterion="objective",
                          seed=config.seed + SEARCH_SEED_OFFSET)
    return int(res.S)


# ---------------------------------------------------------------------------------------------------
# The agent
# ---------------------------------------------------------------------------------------------------


class OptimizationAgent:
    """Runs the candidates, scores them on common random numbers under lambda, writes the artifacts."""

    def __init__(self, config: OptimizationConfig | None = None):
        self.config = config or OptimizationConfig()

    def run(self, problem: Problem, out_dir: Path | None = None, progress: bool = False) -> OptimizationResult:
        if not isinstance(problem, Problem):
            raise TypeError(f"problem: expected inventory.problem.Problem, got {type(problem).__name__}")
        cfg = self.config
        t0 = time.perf_counter()
        notes: list[str] = []
        candidates: list[tuple[str, Policy]] = []

        s, S = find_best_ss(problem, cfg)
        candidates.append(("ss", SSPolicy(s=s, S=S)))
        S_bs = find_best_base_stock(problem, cfg)
        candidates.append(("base_stock", BaseStockPolicy(S=S_bs)))

        dp_info = None
        if cfg.use_dp:
            res = dp_mod.solve(problem, objective=cfg.objective, max_states=cfg.dp_max_states,
                               max_work=cfg.dp_max_work)
            dp_info = res.as_dict()
            if res.status == "solved" and res.policy is not None:
                candidates.append(("dp", res.policy))
            else:
                notes.append(f"DP not used: {res.reason or res.status}")

        dqn_training = None
        trained = None
        if cfg.dqn:
            trained = self._train_dqn(problem, cfg, progress, baseline=(s, S, S_bs))
            dqn_training = trained.summary()
            candidates.append(("dqn", trained.state_policy()))

        policies = [p for _, p in candidates]
        evals = evaluate(problem, policies, replications=cfg.replications,
                         seed=cfg.seed + FINAL_SEED_OFFSET, objective=cfg.objective)
        scores = [_score(name, pol, ev) for (name, pol), ev in zip(candidates, evals, strict=True)]
        ranked = sorted(scores, key=lambda sc: (sc.objective, sc.std_cost))
        winner = ranked[0]
        runner_up = ranked[1] if len(ranked) > 1 else None
        best_ss = next(sc for sc in scores if sc.name == "ss")
        extra = 0.0 if winner is best_ss else (best_ss.objective - winner.objective) / max(
            abs(winner.objective), 1e-12) * 100
        if trained is not None:
            dqn = next(sc for sc in scores if sc.name == "dqn")
            bs = next(sc for sc in scores if sc.name == "base_stock")
            if dqn.objective > bs.objective:
                notes.append(
                    f"trained DQN is worse than base-stock: L={dqn.objective:.2f} vs {bs.objective:.2f} "
                    f"({(dqn.objective / bs.objective - 1) * 100:.2f}% more)"
                )

        artifacts_dir = None
        if out_dir is not None and cfg.write_artifacts:
            artifacts_dir = Path(out_dir)
            artifacts_dir.mkdir(parents=True, exist_ok=True)
            _write_scores(artifacts_dir, problem, scores, winner, dp_info)
            if trained is not None:
                trained.save(artifacts_dir)

        return OptimizationResult(
            problem=problem,
            scores=scores,
            winner=winner,
            runner_up=runner_up,
            best_ss=best_ss,
            ss_extra_cost_pct=float(extra),
            dp=dp_info,
            artifacts_dir=artifacts_dir,
            seconds=time.perf_counter() - t0,
            dqn_training=dqn_training,
            notes=notes,
            trained_dqn=trained,
            policies=dict(candidates),
        )

    def _train_dqn(self, problem: Problem, cfg: OptimizationConfig, progress: bool, baseline):
        """Train the DQN with the configured trainer; returns an object with state_policy(), save(), summary()."""
        if cfg.dqn_trainer == "rllib":
            from rl.rllib_train import train_rllib_dqn

            return train_rllib_dqn(problem, steps=cfg.dqn_steps, seed=cfg.seed, progress=progress,
                                   time_budget_s=cfg.dqn_seconds)
        from rl.dqn_torch import DQNConfig, train_dqn

        return train_dqn(problem, DQNConfig(total_steps=cfg.dqn_steps, time_budget_s=cfg.dqn_seconds,
                                            seed=cfg.seed), progress=progress, base_stock_level=baseline[2])


def _score(name: str, policy: Policy, ev: Evaluation) -> PolicyScore:
    if name == "ss":
        params = {"s": int(policy.s), "S": int(policy.S)}
        label = f"(s={params['s']}, S={params['S']})"
    elif name == "base_stock":
        params = {"S": int(policy.S)}
        label = f"base-stock (S={params['S']})"
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
    )


def _write_scores(out: Path, problem: Problem, scores: list[PolicyScore], winner: PolicyScore, dp_info) -> None:
    """policy_evaluation_results.csv: one row per policy (mean, std, L), with s and S, plus the DP optimum."""
    rows = []
    for sc in scores:
        rows.append({
            "policy": sc.name,
            "label": sc.label,
            "s": sc.params.get("s", ""),
            "S": sc.params.get("S", ""),
            "mean_cost": round(sc.mean_cost, 4),
            "std_cost": round(sc.std_cost, 4),
            "stderr": round(sc.stderr, 4),
            "objective": round(sc.objective, 4),
            "fill_rate": round(sc.fill_rate, 4) if math.isfinite(sc.fill_rate) else "",
            "winner": sc is winner,
        })
    if dp_info and dp_info.get("status") == "solved":
        rows.append({"policy": "dp_optimum_exact", "label": "exact DP optimal expected cost", "s": "", "S": "",
                     "mean_cost": round(float(dp_info["optimal_cost"]), 4), "std_cost": "", "stderr": 0.0,
                     "objective": "", "fill_rate": "", "winner": False})
    pd.DataFrame(rows).to_csv(out / "policy_evaluation_results.csv", index=False)
    (out / "optimization_summary.json").write_text(json.dumps({
        "problem": problem.to_dict(),
        "winner": winner.as_dict(),
        "scores": [s.as_dict() for s in scores],
        "dp": dp_info,
    }, indent=2, default=str))
