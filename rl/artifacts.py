"""Deployment artifacts and the torch-only loader (no Ray import): the Policy Interpretation Agent's
`calculate_dqn_order` tool.

deployment_artifacts/
  config.json       lead time, max inventory/order, horizon, state and action dims, normalisation, network
  dqn_weights.pth   a plain torch state_dict of `rl.network.QNetwork`
  policy_evaluation_results.csv   written by the Optimization Agent (mean/std of DQN, best (s,S), DP, ...)
"""

from __future__ import annotations

import json
import math
import numbers
from pathlib import Path

import numpy as np
import torch

from inventory.policies import StatePolicy
from inventory.problem import Problem
from rl.features import Normalisation, obs_dim
from rl.network import QNetwork
from rl.policy import GreedyQ, q_state_policy
from rl.residual import Residual, shipped_policy

FORMAT = "askopt-dqn/1"
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "dqn_weights.pth"


class RecommendationInputError(ValueError):
    """Bad input to recommend_order; the message names the field and what is allowed."""

    def __init__(self, field: str, value, allowed: str):
        self.field = field
        super().__init__(f"{field}: {value!r} is not allowed; {allowed}")


def save_artifacts(out_dir: Path, net: QNetwork, problem: Problem, norm: Normalisation,
                   training: dict | None = None, opening: list[int] | None = None,
                   residual: Residual | None = None) -> Path:
    """Write config.json and dqn_weights.pth; returns the directory."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    config = artifact_config(net, problem, norm, training, opening, residual)
    (out / CONFIG_FILE).write_text(json.dumps(config, indent=2, default=_json_default))
    torch.save({k: v.detach().cpu().clone() for k, v in net.state_dict().items()}, out / WEIGHTS_FILE)
    return out


def artifact_config(net: QNetwork, problem: Problem, norm: Normalisation, training: dict | None = None,
                    opening: list[int] | None = None, residual: Residual | None = None) -> dict:
    """The config.json content."""
    L = problem.lead_time
    return {
        "format": FORMAT,
        "lead_time": L,
        "max_inventory": problem.max_inventory,
        "max_order": problem.max_order,
        "horizon": problem.horizon,
        "lost_sales": problem.lost_sales,
        "state_dim": obs_dim(problem),
        "action_dim": problem.max_order + 1,
        "observation": ["on_hand"] + [f"pipeline_{i + 1}" for i in range(L)] + ["inventory_position", "time"],
        "normalisation": norm.as_dict(),
        "network": net.spec(),
        "action_masking": "orders above min(max_order, max_inventory - inventory_position) are masked",
        # the first L + 1 orders from the empty start, re-chosen by rollouts (rl.opening); used only in those states
        "opening_orders": [int(a) for a in (opening or [])],
        # order offsets after the opening, by inventory position and in the last periods (rl.residual); null: none
        "residual": residual.as_dict() if residual is not None else None,
        "problem": problem.to_dict(),
        "training": training or {},
    }


def _json_default(x):
    if isinstance(x, (np.integer, np.floating)):
        return x.item()
    return str(x)


class DQNRecommender:
    """Loads the artifacts with torch only and answers single-state order questions."""

    def __init__(self, config: dict, net: QNetwork):
        self.config = config
        self.net = net.eval()
        self.problem = Problem.from_dict(config["problem"])
        self.norm = Normalisation.from_dict(config["normalisation"])
        self._greedy = GreedyQ(self.net, self.norm, self.problem)
        self.opening = _opening_orders(config.get("opening_orders", []), self.problem)  # absent before it existed
        residual = config.get("residual")  # absent or null before offsets existed / when none were found
        self.residual = None if residual is None else Residual.from_dict(residual, self.problem)
        self._policy = shipped_policy(self.problem, self._greedy, self.opening, self.residual)

    @classmethod
    def load(cls, artifacts_dir) -> DQNRecommender:
        d = Path(artifacts_dir)
        cfg_path, w_path = d / CONFIG_FILE, d / WEIGHTS_FILE
        for p in (cfg_path, w_path):
            if not p.exists():
                raise FileNotFoundError(f"artifacts_dir: {p} is missing (need {CONFIG_FILE} and {WEIGHTS_FILE})")
        config = json.loads(cfg_path.read_text())
        if config.get("format") != FORMAT:
            raise ValueError(f"config.json format: {config.get('format')!r} is not allowed; expected {FORMAT!r}")
        spec = config["network"]
        net = QNetwork(int(spec["obs_dim"]), int(spec["n_actions"]), tuple(spec["hidden"]), spec["activation"])
        net.load_state_dict(torch.load(w_path, map_location="cpu", weights_only=True))
        return cls(config, net)

    @classmethod
    def from_network(cls, net: QNetwork, problem: Problem, norm: Normalisation,
                     opening: list[int] | None = None, residual: Residual | None = None) -> DQNRecommender:
        """In memory, without files (same behaviour as loading the artifacts written from this network)."""
        config = artifact_config(net, problem, norm, opening=opening, residual=residual)
        return cls(json.loads(json.dumps(config, default=_json_default)), net)

    @property
    def lead_time(self) -> int:
        return int(self.config["lead_time"])

    def state_policy(self, title: str = "DQN (greedy)") -> StatePolicy:
        """The shipped policy: the greedy network, with the opening orders in the opening's own states and the
        order offsets after it (when training found any)."""
        if not self.opening and self.residual is None:
            return q_state_policy(self.net, self.norm, self.problem, title)
        return StatePolicy(fn=self._policy, title=title)

    def recommend_order(self, current_inventory, current_time_step, pipeline_orders=()) -> dict:
        """{"recommended_order": int, "q_value": float} for one state.

        current_inventory: on-hand units (negative = backlog, only under backlog); current_time_step: period
        0..horizon-1; pipeline_orders: the lead_time outstanding orders, oldest (arriving next) first.
        """
        on_hand, t, pipe = self._validate(current_inventory, current_time_step, pipeline_orders)
        on, pipeline = np.array([on_hand]), np.array([pipe], dtype=np.int64).reshape(1, -1)
        q = self._greedy.q_values(on, pipeline, t)[0]
        action = int(self._policy(on, pipeline, t)[0])  # the network's masked argmax, the opening's, or offset
        return {"recommended_order": action, "q_value": float(q[action])}

    def expected_cost_to_go(self, current_inventory, current_time_step, pipeline_orders=(),
                            replications: int = 500, seed: int = 0) -> dict:
        """Cost from this state to the horizon when the DQN keeps deciding, by simulation.

        Why not -q_value * reward_scale: after a short training run the network ranks actions well but its
        value *level* is not calibrated (gamma = 1 values propagate one target sync at a time), so money
        figures for explanations come from rollouts of the greedy policy with the shared dynamics.
        """
        from rl.vec_env import VectorInventoryEnv

        on_hand, t, pipe = self._validate(current_inventory, current_time_step, pipeline_orders)
        if not (isinstance(replications, int) and replications >= 2):
            raise RecommendationInputError("replications", replications, "must be a whole number >= 2")
        env = VectorInventoryEnv(self.problem, replications, seed=seed, normalisation=self.norm)
        env.on_hand = np.full(replications, on_hand, dtype=np.int64)
        env.pipeline = np.tile(np.asarray(pipe, dtype=np.int64).reshape(1, -1), (replications, 1))
        env.t = t
        total = np.zeros(replications)
        for _ in range(t, self.problem.horizon):
            total += env.step(self._policy(env.on_hand, env.pipeline, env.t))[4]["cost"]
        return {"mean": float(total.mean()), "stderr": float(total.std(ddof=1) / math.sqrt(replications)),
                "replications": replications}

    # ---- validation ------------------------------------------------------------------------------
    def _validate(self, inventory, time_step, pipeline) -> tuple[int, int, list[int]]:
        p = self.problem
        inv = _whole("current_inventory", inventory)
        if p.lost_sales and inv < 0:
            raise RecommendationInputError("current_inventory", inventory,
                                           "must be >= 0 under lost sales (negative stock means backlog)")
        if inv > p.max_inventory:
            raise RecommendationInputError("current_inventory", inventory,
                                           f"must be <= max_inventory ({p.max_inventory})")
        t = _whole("current_time_step", time_step)
        if not 0 <= t < p.horizon:
            raise RecommendationInputError("current_time_step", time_step, f"must be in 0..{p.horizon - 1}")
        if pipeline is None:
            pipeline = []
        if isinstance(pipeline, (str, bytes)) or not hasattr(pipeline, "__len__"):
            raise RecommendationInputError("pipeline_orders", pipeline,
                                           f"must be a list of {p.lead_time} order quantities")
        pipe = list(np.asarray(pipeline, dtype=object).reshape(-1)) if len(pipeline) else []
        if len(pipe) != p.lead_time:
            raise RecommendationInputError(
                "pipeline_orders", pipeline,
                f"must have exactly lead_time = {p.lead_time} entries (oldest first), got {len(pipe)}")
        vals = []
        for i, x in enumerate(pipe):
            v = _whole(f"pipeline_orders[{i}]", x)
            if v < 0:
                raise RecommendationInputError(f"pipeline_orders[{i}]", x, "must be >= 0")
            if v > p.max_order:
                raise RecommendationInputError(f"pipeline_orders[{i}]", x, f"must be <= max_order ({p.max_order})")
            vals.append(v)
        if inv + sum(vals) > p.max_inventory:
            raise RecommendationInputError(
                "pipeline_orders", pipeline,
                f"inventory position {inv + sum(vals)} (current_inventory + pipeline) exceeds "
                f"max_inventory ({p.max_inventory})")
        return inv, t, vals


def _opening_orders(orders, problem: Problem) -> list[int]:
    """config.json's opening_orders, checked: at most lead_time + 1 whole orders, each within 0..max_order."""
    allowed = f"a list of at most lead_time + 1 = {problem.lead_time + 1} whole orders in 0..{problem.max_order}"
    if not isinstance(orders, list) or len(orders) > problem.lead_time + 1:
        raise ValueError(f"config.json opening_orders: {orders!r} is not allowed; {allowed}")
    for x in orders:
        if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= problem.max_order:
            raise ValueError(f"config.json opening_orders: {orders!r} is not allowed; {allowed}")
    return list(orders)


def _whole(field: str, x) -> int:
    """An integer-valued real number (1, 1.0, numpy ints); rejects bools, NaN, fractions and strings."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise RecommendationInputError(field, x, "must be a whole number")
    xf = float(x)
    if not math.isfinite(xf) or xf != int(xf):
        raise RecommendationInputError(field, x, "must be a whole number")
    return int(xf)
