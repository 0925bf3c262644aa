"""Fast DQN in plain torch on the vectorised numpy environment: the trainer that meets the speed target.

Why not only RLlib: on 2 cores RLlib's per-step machinery (env runners, connectors, episode replay buffer,
learner group) costs milliseconds per environment step, while this problem's dynamics cost microseconds.
Here one vectorised step moves `num_envs` copies, and gradient updates run on large batches from a flat
numpy replay buffer. The algorithm is DQN: epsilon-greedy behaviour, experience replay, a target network,
Huber loss, Adam (learning rate decaying linearly over the budget). Choices made for this problem:

* counterfactual all-action targets (default, `targets="all_actions"`): demand does not depend on the order,
  so a replayed (state, demand) gives the next state of every feasible order through `dynamics.step`, and
  all Q(s, .) are regressed on targets sharing that demand: the action differences the policy needs carry
  almost no sampling noise. `targets="sampled"` is textbook DQN (double Q, n-step returns), kept for
  comparison (docs/rl.md has both measured);
* gamma = 1 with the time step in the observation: the objective is the undiscounted total cost over a finite
  horizon, and time makes the end-of-horizon effect (stop replenishing) learnable;
* the capacity mask (orders above what the caps allow are never chosen), so Q is learned on real actions;
* exploration anchored on the best base-stock level (a documented warm start): a random action is the
  base-stock order plus noise rather than uniform on 0..max_order, so replay covers the states that good
  policies visit; uniform exploration is available (`exploration="uniform"`);
* the greedy policy is evaluated in the Monte Carlo evaluator (common random numbers, a validation seed
  separate from final scoring) every `eval_every` steps; the best network is kept and training stops when it
  has not improved for `patience` evaluations, or at the step / wall-clock budget.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from inventory import dynamics, policies
from inventory.montecarlo import evaluate
from inventory.policies import StatePolicy
from inventory.problem import Problem
from rl.artifacts import save_artifacts
from rl.counterfactual import (
    all_action_loss,
    counterfactual_transitions,
    demand_support,
    expected_all_action_loss,
    expected_transitions,
    regression_loss,
)
from rl.early_stop import Patience
from rl.features import Normalisation, default_normalisation, obs_dim, order_room
from rl.network import QNetwork, masked_argmax
from rl.opening import improve_opening, opening_length
from rl.policy import q_state_policy
from rl.policy_iteration import RolloutSettings, improve_network
from rl.residual import Residual, improve_residual, shipped_policy
from rl.vec_env import VectorInventoryEnv

VALIDATION_SEED_OFFSET = 104_729
SEARCH_TAIL_S = 6.0  # of the time left after training, kept for the opening and the offsets after policy iteration


@dataclass
class DQNConfig:
    total_steps: int = 200_000  # environment transitions
    time_budget_s: float | None = 60.0  # wall clock for training and the searches after it (None: no limit)
    num_envs: int = 64
    hidden: tuple[int, ...] = (64, 64)
    activation: str = "relu"
    lr: float = 1e-3
    lr_final: float | None = 1e-4  # linear decay to this by the end of the step/time budget (None: constant)
    gamma: float = 1.0
    n_step: int = 3
    batch_size: int = 256
    updates_per_step: int = 3  # gradient updates per vectorised step (num_envs transitions)
    buffer_size: int = 100_000
    learning_starts: int = 3_000
    target_update_every: int = 500  # gradient updates between hard target syncs
    eps_start: float = 1.0
    eps_end: float = 0.03
    eps_fraction: float = 0.25  # of total_steps over which epsilon decays linearly
    # "all_actions" (counterfactual, same demand) | "expected" (counterfactual, exact expectation over the
    # demand law: B x A x K next states per batch) | "sampled" (textbook DQN)
    targets: str = "all_actions"
    expected_batch_size: int = 32  # states per update with "expected" targets (each one carries K demands)
    exploration: str = "base_stock"  # "base_stock" (anchored noise) | "uniform"
    explore_noise: int = 0  # half-width of the noise around the base-stock order (0: auto)
    eval_every: int = 6_000
    eval_replications: int = 400
    patience: int = 8
    min_steps: int = 60_000  # no early stop before this many steps
    rollout_states: int = 16_000  # states per round of rollout policy iteration on the network (0: none;
    # rl.policy_iteration), before the opening and offsets are searched for the network it returns
    opening_replications: int = 2_000  # paths per candidate when re-choosing the opening (0: the network's own);
    # the opening found must also win on as many fresh paths (rl.opening.improve_opening)
    residual_replications: int = 2_000  # paths per candidate for the order offsets after it (0: none; rl.residual)
    search_reserve_s: float = 20.0  # of time_budget_s, kept for the searches after training (when any is on)
    grad_clip: float = 10.0
    loss: str = "huber"  # "huber" | "mse"
    double_q: bool = False  # for all_actions targets (sampled targets always use double Q)
    seed: int = 0
    threads: int = 1
    normalisation: Normalisation | None = None

    def __post_init__(self) -> None:
        if self.loss not in ("huber", "mse"):
            raise ValueError(f"loss: {self.loss!r} is not allowed; allowed: huber, mse")
        if self.targets not in ("all_actions", "expected", "sampled"):
            raise ValueError(f"targets: {self.targets!r} is not allowed; allowed: all_actions, expected, sampled")
        if self.exploration not in ("base_stock", "uniform"):
            raise ValueError(f"exploration: {self.exploration!r} is not allowed; allowed: base_stock, uniform")
        for name in ("total_steps", "num_envs", "batch_size", "buffer_size", "n_step", "eval_every"):
            v = getattr(self, name)
            if not (isinstance(v, int) and v >= 1):
                raise ValueError(f"{name}: {v!r} is not allowed; must be a whole number >= 1")
        if not (isinstance(self.opening_replications, int) and self.opening_replications >= 0):
            raise ValueError(f"opening_replications: {self.opening_replications!r} is not allowed; "
                             "must be a whole number >= 0 (0: keep the network's own opening)")
        if not (isinstance(self.residual_replications, int) and self.residual_replications >= 0):
            raise ValueError(f"residual_replications: {self.residual_replications!r} is not allowed; "
                             "must be a whole number >= 0 (0: no order offsets)")
        check_search_settings(self.rollout_states, self.search_reserve_s, self.time_budget_s)
        if not 0 < self.gamma <= 1:
            raise ValueError(f"gamma: {self.gamma!r} is not allowed; must be in (0, 1]")


@dataclass
class TrainedDQN:
    """A trained Q-network with what is needed to use, evaluate and ship it."""

    problem: Problem
    net: QNetwork
    norm: Normalisation
    trainer: str
    history: list[dict] = field(default_factory=list)
    info: dict = field(default_factory=dict)

    opening: list[int] = field(default_factory=list)  # first orders from the empty start (rl.opening)
    residual: Residual | None = None  # order offsets after the opening (rl.residual)
    trained_net: QNetwork | None = None  # the network as trained, when rollout policy iteration replaced it

    def trained_network_policy(self) -> StatePolicy:
        """The network as training left it (before rollout policy iteration), alone: what the validation curve
        measured."""
        return q_state_policy(self.trained_net if self.trained_net is not None else self.net, self.norm,
                              self.problem)

    def network_policy(self) -> StatePolicy:
        """The greedy network alone (what training validates)."""
        return q_state_policy(self.net, self.norm, self.problem)

    def state_policy(self) -> StatePolicy:
        """What ships: the greedy network, with the rollout-improved opening orders and offsets where found."""
        base = self.network_policy()
        if not self.opening and self.residual is None:
            return base
        return StatePolicy(fn=shipped_policy(self.problem, base.fn, self.opening, self.residual), title=base.title)

    def improve_after_training(self, rollout_states: int, opening_replications: int, residual_replications: int,
                               seed: int = 0, seconds: float | None = None) -> None:
        """The searches after training, in their order: rollout policy iteration on the network, then the opening
        and the offsets for the network it returns (each one off at 0).

        `seconds`: the wall clock left for all of them (None: no limit). Policy iteration, the longest, ends its
        rounds SEARCH_TAIL_S before the end when the opening or the offsets follow; a search that would start
        after the end is skipped and recorded so ("skipped": "time budget")."""
        deadline = None if seconds is None else time.perf_counter() + seconds
        tail = SEARCH_TAIL_S if max(opening_replications, residual_replications) > 0 else 0.0
        self.improve_network(rollout_states, seed, None if deadline is None else deadline - tail)
        for name, step, amount in (("opening", self.improve_opening, opening_replications),
                                   ("residual", self.improve_residual, residual_replications)):
            if amount > 0 and deadline is not None and time.perf_counter() >= deadline:
                self.info[name] = {"skipped": "time budget"}
                continue
            step(amount, seed)

    def improve_network(self, states: int = 16_000, seed: int = 0, deadline: float | None = None) -> None:
        """Rollout policy iteration (rl.policy_iteration): the network itself is fine-tuned where rollouts on common
        random numbers show the order next to its greedy one is cheaper; 0 states: none. `deadline`: a
        time.perf_counter() value its rounds end by (None: none).

        Why: the bootstrapped targets leave the steady-state orders leaning half a unit one way at L = 3-4, which
        neither the opening nor the offsets per position can take out (docs/rl.md)."""
        if states <= 0:
            return
        t0 = time.perf_counter()
        before = self.net
        self.net, info = improve_network(self.problem, self.net, self.norm, opening_length(self.problem),
                                         RolloutSettings(states=states), seed=seed, deadline=deadline)
        self.info["policy_iteration"] = {**info, "seconds": round(time.perf_counter() - t0, 2)}
        if self.net is not before:
            self.trained_net = before

    def improve_opening(self, replications: int = 2000, seed: int = 0) -> None:
        """Re-choose the opening orders by rollouts of the network (rl.opening); 0 replications: keep its own.

        Why after training: from an empty start under lost sales the first L + 1 states are fixed, visited once per
        episode, and carry about half of the L = 3-4 gap (docs/rl.md); rollouts fix them exactly."""
        if replications <= 0:
            return
        t0 = time.perf_counter()
        orders, info = improve_opening(self.problem, self.network_policy().fn, replications=replications, seed=seed)
        self.opening = list(orders)
        self.info["opening"] = {**info, "seconds": round(time.perf_counter() - t0, 2)}

    def improve_residual(self, replications: int = 2000, seed: int = 0) -> None:
        """Order offsets after the opening by rollouts of the network with its opening (rl.residual); 0
        replications: none. Call after `improve_opening`: the offsets correct the policy that ships with it."""
        if replications <= 0:
            return
        t0 = time.perf_counter()
        base = shipped_policy(self.problem, self.network_policy().fn, self.opening, None)
        self.residual, info = improve_residual(self.problem, base, opening_length(self.problem),
                                               replications=replications, seed=seed)
        self.info["residual"] = {**info, "seconds": round(time.perf_counter() - t0, 2)}

    def summary(self) -> dict:
        return {"trainer": self.trainer, **self.info}

    def save(self, out_dir: Path) -> Path:
        return save_artifacts(out_dir, self.net, self.problem, self.norm, training=self.summary(),
                              opening=self.opening, residual=self.residual)


class _Replay:
    """Flat circular buffer of n-step transitions (obs, action, return, next obs, bootstrap coefficient)."""

    def __init__(self, capacity: int, d: int, L: int):
        self.on_hand = np.zeros(capacity, np.int64)  # raw state and demand, for counterfactual targets
        self.pipeline = np.zeros((capacity, L), np.int64)
        self.t = np.zeros(capacity, np.int64)
        self.demand = np.zeros(capacity, np.int64)
        self.obs = np.zeros((capacity, d), np.float32)
        self.nxt = np.zeros((capacity, d), np.float32)
        self.act = np.zeros(capacity, np.int64)
        self.ret = np.zeros(capacity, np.float32)
        self.boot = np.zeros(capacity, np.float32)  # gamma^k, 0 when the episode ended within the n steps
        self.room = np.zeros(capacity, np.int64)  # feasible orders in the next state (for the masked max)
        self.capacity, self.size, self.pos = capacity, 0, 0

    def add(self, obs, act, ret, nxt, boot, room, raw=None) -> None:
        n = len(act)
        idx = (self.pos + np.arange(n)) % self.capacity
        if raw is not None:
            self.on_hand[idx], self.pipeline[idx], self.t[idx], self.demand[idx] = raw
        self.obs[idx], self.act[idx], self.ret[idx] = obs, act, ret
        self.nxt[idx], self.boot[idx], self.room[idx] = nxt, boot, room
        self.pos = int((self.pos + n) % self.capacity)
        self.size = min(self.capacity, self.size + n)

    def sample(self, rng: np.random.Generator, b: int):
        return self.take(rng.integers(0, self.size, size=b))

    def take(self, i: np.ndarray):
        return (torch.from_numpy(self.obs[i]), torch.from_numpy(self.act[i]), torch.from_numpy(self.ret[i]),
                torch.from_numpy(self.nxt[i]), torch.from_numpy(self.boot[i]), torch.from_numpy(self.room[i]))


def greedy_cost(problem: Problem, net: QNetwork, norm: Normalisation, replications: int, seed: int) -> float:
    """Mean total cost of the greedy policy in the Monte Carlo evaluator (fixed seed = common random numbers)."""
    ev = evaluate(problem, [q_state_policy(net, norm, problem)], replications=replications, seed=seed)
    return float(ev[0].mean_cost)


def train_dqn(
    problem: Problem,
    config: DQNConfig | None = None,
    progress: bool = False,
    base_stock_level: int | None = None,
) -> TrainedDQN:
    """Train a DQN on `problem`; returns the best network seen by the validation evaluations."""
    cfg = config or DQNConfig()
    t0 = time.perf_counter()
    prev_threads = torch.get_num_threads()
    torch.set_num_threads(max(1, cfg.threads))
    try:
        return _train(problem, cfg, progress, base_stock_level, t0)
    finally:
        torch.set_num_threads(prev_threads)


def _train(problem: Problem, cfg: DQNConfig, progress: bool, base_stock_level: int | None, t0: float) -> TrainedDQN:
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    norm = cfg.normalisation or default_normalisation(problem)
    support = demand_support(problem) if cfg.targets == "expected" else None
    env = VectorInventoryEnv(problem, cfg.num_envs, seed=cfg.seed + 1, normalisation=norm)
    d, n_act = obs_dim(problem), problem.max_order + 1
    net = QNetwork(d, n_act, cfg.hidden, cfg.activation)
    target = copy.deepcopy(net)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    buf = _Replay(min(cfg.buffer_size, max(cfg.total_steps, cfg.batch_size)), d, problem.lead_time)
    S_bs = base_stock_level if base_stock_level is not None else _quick_base_stock(problem)
    noise = cfg.explore_noise or max(2, int(round(2 * problem.demand.std + 1)))
    val_seed = cfg.seed + VALIDATION_SEED_OFFSET
    budget = training_budget(cfg.time_budget_s, cfg.search_reserve_s, searches_on(cfg))
    deadline = None if budget is None else t0 + budget

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=cfg.total_steps, desc="DQN training", unit="step", leave=False, mininterval=1.0)

    obs, _ = env.reset()
    pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # last n (obs, action, reward)
    steps = updates = 0
    best_state, best_step = copy.deepcopy(net.state_dict()), 0
    patience = Patience(abs_tol=1e-9)
    history: list[dict] = []
    next_eval = cfg.eval_every
    stop_reason = "steps"
    losses: list[float] = []
    gam = np.float32(cfg.gamma)

    while steps < cfg.total_steps:
        if deadline is not None and time.perf_counter() > deadline:
            stop_reason = "time"
            break
        eps = _epsilon(cfg, steps)
        if cfg.lr_final is not None:
            frac = steps / cfg.total_steps
            if deadline is not None:
                frac = max(frac, (time.perf_counter() - t0) / budget)
            for group in opt.param_groups:
                group["lr"] = cfg.lr + min(1.0, frac) * (cfg.lr_final - cfg.lr)
        room = env.room()
        with torch.inference_mode():
            greedy, _ = masked_argmax(net(torch.from_numpy(obs)), room)
        actions = greedy.numpy()
        explore = rng.random(cfg.num_envs) < eps
        if explore.any():
            actions = actions.copy()
            actions[explore] = _explore_actions(cfg, rng, env, S_bs, noise, room)[explore]
        raw = (env.on_hand.copy(), env.pipeline.copy(), np.full(cfg.num_envs, env.t), None)
        next_obs, reward, terminated, _, info = env.step(actions)
        done = bool(terminated[0])  # the copies run in lock step
        next_room = order_room(problem, env.on_hand, env.pipeline) if not done else np.zeros(cfg.num_envs, int)
        if cfg.targets in ("all_actions", "expected"):  # one-step transitions with the raw state and the demand drawn
            boot = np.full(cfg.num_envs, 0.0 if done else 1.0, np.float32)
            buf.add(obs, actions, reward, next_obs, boot, next_room, raw[:3] + (info["demand"],))
        else:
            pending.append((obs, actions, reward))
            if done:
                while pending:  # flush: every pending start sees the episode end within its n steps
                    _emit(buf, pending, next_obs, 0.0, next_room, gam)
                    pending.pop(0)
            elif len(pending) == cfg.n_step:
                _emit(buf, pending, next_obs, 1.0, next_room, gam)
                pending.pop(0)
        obs = env.reset()[0] if done else next_obs  # a new episode (same generator: as the NEXT_STEP autoreset)
        steps += cfg.num_envs
        if bar is not None:
            bar.update(cfg.num_envs)

        if steps >= cfg.learning_starts and buf.size >= cfg.batch_size:
            for _ in range(cfg.updates_per_step):
                if cfg.targets == "all_actions":
                    losses.append(_update_all_actions(net, target, opt, buf, rng, cfg, problem, norm))
                elif cfg.targets == "expected":
                    losses.append(_update_expected(net, target, opt, buf, rng, cfg, problem, norm, support))
                else:
                    losses.append(_update(net, target, opt, buf, rng, cfg))
                updates += 1
                if updates % cfg.target_update_every == 0:
                    target.load_state_dict(net.state_dict())

        if steps >= next_eval or steps >= cfg.total_steps:
            next_eval += cfg.eval_every
            cost = greedy_cost(problem, net, norm, cfg.eval_replications, val_seed)
            history.append({"steps": steps, "seconds": round(time.perf_counter() - t0, 2), "val_cost": cost,
                            "eps": round(eps, 3), "loss": float(np.mean(losses[-200:])) if losses else None})
            if patience.update(cost):
                best_state, best_step = copy.deepcopy(net.state_dict()), steps
            if bar is not None:
                bar.set_postfix(val_cost=f"{cost:.1f}", best=f"{patience.best:.1f}", refresh=False)
            if steps >= cfg.min_steps and patience.since >= cfg.patience:
                stop_reason = "no_improvement"
                break
    if bar is not None:
        bar.close()
    if not history or history[-1]["steps"] != steps:  # always judge the final network too
        cost = greedy_cost(problem, net, norm, cfg.eval_replications, val_seed)
        history.append({"steps": steps, "seconds": round(time.perf_counter() - t0, 2), "val_cost": cost})
        if cost < patience.best:
            patience.best, best_state, best_step = cost, copy.deepcopy(net.state_dict()), steps
    net.load_state_dict(best_state)
    info = {
        "steps": steps,
        "updates": updates,
        "seconds": round(time.perf_counter() - t0, 2),
        "stop_reason": stop_reason,
        "best_step": best_step,
        "best_validation_cost": patience.best,
        "validation_replications": cfg.eval_replications,
        "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(cfg).items()
                   if k != "normalisation"},
    }
    trained = TrainedDQN(problem, net.eval(), norm, "torch", history, info)
    trained.improve_after_training(cfg.rollout_states, cfg.opening_replications, cfg.residual_replications, cfg.seed,
                                   seconds_left(cfg.time_budget_s, time.perf_counter() - t0))
    return trained


def searches_on(cfg) -> bool:
    """Whether any search runs after training (a DQNConfig or an RLlibSettings)."""
    return max(cfg.rollout_states, cfg.opening_replications, cfg.residual_replications) > 0


def seconds_left(time_budget_s: float | None, spent: float) -> float | None:
    """What the searches after training may use of the whole call's budget (None: no limit)."""
    return None if time_budget_s is None else max(0.0, time_budget_s - spent)


def training_budget(time_budget_s: float | None, reserve_s: float, searches: bool) -> float | None:
    """Seconds for training when the whole call (training and the searches after it) must fit `time_budget_s`:
    the reserve comes off when a search runs, but training always keeps at least half the budget."""
    if time_budget_s is None:
        return None
    return max(time_budget_s / 2, time_budget_s - reserve_s) if searches else time_budget_s


def check_search_settings(rollout_states, search_reserve_s, time_budget_s) -> None:
    if not (isinstance(rollout_states, int) and rollout_states >= 0):
        raise ValueError(f"rollout_states: {rollout_states!r} is not allowed; must be a whole number >= 0 "
                         "(0: no rollout policy iteration)")
    if not (isinstance(search_reserve_s, (int, float)) and search_reserve_s >= 0):
        raise ValueError(f"search_reserve_s: {search_reserve_s!r} is not allowed; must be a number of seconds >= 0")
    if time_budget_s is not None and not time_budget_s > 0:
        raise ValueError(f"time_budget_s: {time_budget_s!r} is not allowed; must be > 0 seconds or None (no limit)")


def _epsilon(cfg: DQNConfig, steps: int) -> float:
    frac = min(1.0, steps / max(1.0, cfg.eps_fraction * cfg.total_steps))
    return cfg.eps_start + frac * (cfg.eps_end - cfg.eps_start)


def _explore_actions(cfg: DQNConfig, rng, env: VectorInventoryEnv, S_bs: int, noise: int, room) -> np.ndarray:
    if cfg.exploration == "uniform":
        return rng.integers(0, room + 1)
    position = dynamics.inventory_position(env.on_hand, env.pipeline)
    target = policies.base_stock_rule(position, S_bs) + rng.integers(-noise, noise + 1, size=position.shape)
    return dynamics.clamp(target, room)


def _emit(buf: _Replay, pending, next_obs, alive: float, next_room, gam) -> None:
    """Transition from the oldest pending step: discounted reward sum over the pending steps, then bootstrap."""
    ret = np.zeros_like(pending[0][2])
    g = np.float32(1.0)
    for _, _, r in pending:
        ret = ret + g * r
        g = g * gam
    buf.add(pending[0][0], pending[0][1], ret, next_obs, np.full(ret.shape, g * alive, np.float32), next_room)


def _loss(cfg: DQNConfig, q: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return regression_loss(cfg.loss, q, y)


def _optimiser_step(net: QNetwork, opt, loss, cfg: DQNConfig) -> float:
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if cfg.grad_clip:
        nn.utils.clip_grad_norm_(net.parameters(), cfg.grad_clip)
    opt.step()
    return float(loss.detach())


def _update(net: QNetwork, target: QNetwork, opt, buf: _Replay, rng, cfg: DQNConfig) -> float:
    obs, act, ret, nxt, boot, room = buf.sample(rng, cfg.batch_size)
    with torch.no_grad():
        a_star, _ = masked_argmax(net(nxt), room)  # double Q: online picks, target values
        q_next = target(nxt).gather(1, a_star[:, None]).squeeze(1)
        y = ret + boot * q_next
    q = net(obs).gather(1, act[:, None]).squeeze(1)
    loss = _loss(cfg, q, y)
    return _optimiser_step(net, opt, loss, cfg)


def _update_all_actions(net: QNetwork, target: QNetwork, opt, buf: _Replay, rng, cfg: DQNConfig,
                        problem: Problem, norm: Normalisation) -> float:
    """Counterfactual targets (`rl.counterfactual`, the same code RLlib's Learner runs): one sampled
    (state, demand) gives every feasible order's transition through `dynamics.step`."""
    i = rng.integers(0, buf.size, size=cfg.batch_size)
    cf = counterfactual_transitions(problem, norm, buf.on_hand[i], buf.pipeline[i], buf.t[i], buf.demand[i])
    with torch.no_grad():
        q_next_target = target(cf.next_obs)
        q_next_online = net(cf.next_obs) if cfg.double_q else None
    q = net(torch.from_numpy(buf.obs[i]))
    loss = all_action_loss(q, cf, q_next_target, cfg.gamma, cfg.loss, q_next_online)
    return _optimiser_step(net, opt, loss, cfg)


def _update_expected(net: QNetwork, target: QNetwork, opt, buf: _Replay, rng, cfg: DQNConfig, problem: Problem,
                     norm: Normalisation, support: tuple[np.ndarray, np.ndarray]) -> float:
    """Counterfactual targets averaged over the demand law (`rl.counterfactual.expected_all_action_loss`);
    the replayed demand is not used, only the replayed state."""
    i = rng.integers(0, buf.size, size=cfg.expected_batch_size)
    cf = expected_transitions(problem, norm, buf.on_hand[i], buf.pipeline[i], buf.t[i], support)
    with torch.no_grad():
        q_next_target = target(cf.next_obs)
        q_next_online = net(cf.next_obs) if cfg.double_q else None
    q = net(torch.from_numpy(buf.obs[i]))
    loss = expected_all_action_loss(q, cf, support[1], q_next_target, cfg.gamma, cfg.loss, q_next_online)
    return _optimiser_step(net, opt, loss, cfg)


def _quick_base_stock(problem: Problem, replications: int = 300, seed: int = 12_345) -> int:
    """Best order-up-to level by a small Monte Carlo scan (used only to anchor exploration)."""
    from inventory.policies import BaseStockPolicy

    L1 = problem.lead_time + 1
    hi = int(min(problem.max_inventory, problem.demand.mean * L1 + 4 * problem.demand.std * math.sqrt(L1) + 2))
    levels = np.arange(0, max(hi, 1) + 1)
    ev = evaluate(problem, [BaseStockPolicy(S=levels)], replications=replications, seed=seed)
    return int(levels[int(np.argmin([e.mean_cost for e in ev]))])

