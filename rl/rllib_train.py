"""DQN with RLlib (Ray 2.60, new API stack): one training run per instance, many instances in parallel with Tune.

The Q-module is RLlib's default DQN module configured to be the same MLP as `rl.network.QNetwork`
(encoder fcnet_hiddens + a linear head, no dueling), so a trained module converts weight-for-weight into the
plain torch network that is shipped in `dqn_weights.pth` and evaluated in the Monte Carlo evaluator.

Speed settings and why (2-core machine; see docs/rl.md for the measurements):
* num_env_runners=0: sampling runs in the trial's own process, so one trial = one CPU and two trials run side
  by side on two cores with no extra worker processes;
* num_envs_per_env_runner=64 in one numpy-vectorised env (`rl.rllib_env`) with a rollout fragment of 32: one
  RLModule forward pass serves 64 environment steps, one sample call gives 2,048 steps, then the 96 updates owed
  run in one Learner call (fragments of 8 ran 2,600-3,400 steps/s, 32 ran 3,200-4,000; docs/rl.md);
* train batch 256 with training_intensity 12 (each sampled transition replayed 12 times; the natural ratio,
  4, learned too little per sample), learning rate 1e-3 -> 1e-4 linearly over the step budget;
* gamma = 1 (finite horizon, time in the observation), double Q, 3-step returns, a uniform episode replay
  buffer (RLlib's default is prioritised; uniform is cheaper per update, the two were not compared), epsilon decaying over the first
  15 % of the step budget, rewards = -cost / reward_scale (`rl.features`).
* A callback evaluates the greedy policy in the Monte Carlo evaluator after every iteration ("greedy_cost",
  validation random numbers), Tune keeps the best checkpoint by it and a stopper ends a trial when it has not
  improved for `patience` iterations.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from inventory.problem import Problem
from rl.dqn_torch import (
    VALIDATION_SEED_OFFSET,
    TrainedDQN,
    check_search_settings,
    greedy_cost,
    searches_on,
    seconds_left,
    training_budget,
)
from rl.early_stop import Patience
from rl.env import InventoryEnv
from rl.features import Normalisation, default_normalisation, obs_dim
from rl.network import QNetwork
from rl.rllib_env import register as register_vector_env

MODULE_SUBDIR = ("learner_group", "learner", "rl_module", "default_policy")


ALGORITHMS = ("counterfactual", "dqn")


@dataclass
class RLlibSettings:
    """One RLlib DQN run. The defaults are the counterfactual algorithm (`rl.rllib_counterfactual`) with the
    torch trainer's hyper-parameters; `RLlibSettings.textbook()` is RLlib's stock DQN as measured before."""

    algorithm: str = "counterfactual"  # "counterfactual" (all-action Learner) | "dqn" (RLlib's DQN, unchanged)
    # counterfactual algorithm: "all_actions" (one replayed demand) | "expected" (exact expectation over the demand
    # law, `expected_batch_size` states per update, same updates per sampled step) | "sampled" (RLlib's 1-step loss)
    targets: str = "all_actions"
    expected_batch_size: int = 32
    exploration: str = "base_stock"  # counterfactual module: "base_stock" (anchored noise) | "uniform"
    total_steps: int = 200_000
    time_budget_s: float | None = 60.0  # wall clock for training and the searches after it (None: no limit)
    num_envs_per_env_runner: int = 64
    rollout_fragment_length: int = 32  # 2,048 steps per sample call, then 96 updates (measured faster than 1 and 8)
    vector_env: bool = True  # one numpy-vectorised env (rl.rllib_env) instead of N gymnasium copies
    hidden: tuple[int, ...] = (64, 64)
    activation: str = "relu"
    lr: float = 1e-3
    lr_final: float | None = 1e-4  # linear schedule lr -> lr_final over total_steps (None: constant)
    gamma: float = 1.0
    n_step: int = 1
    double_q: bool = False
    train_batch_size: int = 256
    training_intensity: float | None = 12.0  # replayed / inserted steps (3 updates of 256 per 64 steps)
    buffer_capacity: int = 100_000
    learning_starts: int = 3_000
    target_network_update_freq: int = 10_000  # sampled env steps between target syncs (~500 updates)
    grad_clip: float = 10.0
    eps_final: float = 0.03
    eps_fraction: float = 0.25
    steps_per_iteration: int = 6_000  # one greedy Monte Carlo evaluation per iteration
    eval_replications: int = 400
    patience: int = 8
    min_steps: int = 60_000  # no early stop before this many sampled steps
    rollout_states: int = 16_000  # states per round of rollout policy iteration on the network (0: none;
    # rl.policy_iteration), before the opening and offsets are searched for the network it returns
    opening_replications: int = 2_000  # paths per candidate when re-choosing the opening (0: the network's own);
    # the opening found must also win on as many fresh paths (rl.opening.improve_opening)
    residual_replications: int = 2_000  # paths per candidate for the order offsets after it (0: none; rl.residual)
    search_reserve_s: float = 20.0  # of time_budget_s, kept for the searches after training (when any is on)
    seed: int = 0
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm: {self.algorithm!r} is not allowed; allowed: {', '.join(ALGORITHMS)}")
        if self.targets not in ("all_actions", "expected", "sampled"):
            raise ValueError(f"targets: {self.targets!r} is not allowed; allowed: all_actions, expected, sampled")
        if not (isinstance(self.expected_batch_size, int) and self.expected_batch_size >= 1):
            raise ValueError(f"expected_batch_size: {self.expected_batch_size!r} is not allowed; must be a whole "
                             "number >= 1")
        if self.exploration not in ("base_stock", "uniform"):
            raise ValueError(f"exploration: {self.exploration!r} is not allowed; allowed: base_stock, uniform")
        if not (isinstance(self.opening_replications, int) and self.opening_replications >= 0):
            raise ValueError(f"opening_replications: {self.opening_replications!r} is not allowed; "
                             "must be a whole number >= 0 (0: keep the network's own opening)")
        if not (isinstance(self.residual_replications, int) and self.residual_replications >= 0):
            raise ValueError(f"residual_replications: {self.residual_replications!r} is not allowed; "
                             "must be a whole number >= 0 (0: no order offsets)")
        check_search_settings(self.rollout_states, self.search_reserve_s, self.time_budget_s)

    @property
    def training_seconds(self) -> float | None:
        """The part of `time_budget_s` training may use (the rest is kept for the searches after it)."""
        return training_budget(self.time_budget_s, self.search_reserve_s, searches_on(self))

    @classmethod
    def textbook(cls, **kw) -> RLlibSettings:
        """RLlib's own DQN with the settings measured in docs/rl.md (episode replay, 3-step double Q)."""
        base = dict(algorithm="dqn", vector_env=False, total_steps=60_000, time_budget_s=None, num_envs_per_env_runner=16,
                    rollout_fragment_length=4, n_step=3, double_q=True, learning_starts=2_000,
                    target_network_update_freq=1_000, grad_clip=40.0, eps_fraction=0.15, steps_per_iteration=2_000,
                    eval_replications=300, min_steps=0)
        base.update(kw)
        return cls(**base)


def rllib_config(problem: Problem, s: RLlibSettings | None = None, norm: Normalisation | None = None,
                 base_stock_level: int | None = None):
    """The RLlib config for one instance (new API stack): `CounterfactualDQNConfig` or RLlib's `DQNConfig`."""
    from ray.rllib.algorithms.dqn import DQNConfig

    s = s or RLlibSettings()
    norm = norm or default_normalisation(problem)
    eps_steps = max(1, int(s.eps_fraction * s.total_steps))
    model_config = {"fcnet_hiddens": list(s.hidden), "fcnet_activation": s.activation, "head_fcnet_hiddens": []}
    env_config = {"problem": problem.to_dict(), "normalisation": norm.as_dict(), "eval_replications": s.eval_replications}
    replay = {"type": "EpisodeReplayBuffer", "capacity": s.buffer_capacity}  # (the counterfactual's flat replay)
    batch, intensity = s.train_batch_size, s.training_intensity
    if s.algorithm == "counterfactual" and s.targets == "expected":  # fewer states, each carrying K demands
        batch = s.expected_batch_size
        intensity = None if intensity is None else intensity * batch / s.train_batch_size  # same updates per step
    if s.algorithm == "counterfactual":
        from rl.rllib_counterfactual import CounterfactualDQNConfig, exploration_settings

        S = None
        if s.exploration == "base_stock":
            S = base_stock_level if base_stock_level is not None else quick_base_stock(problem)
        env_config["exploration"] = exploration_settings(problem, S)
        cfg = CounterfactualDQNConfig().counterfactual(targets=s.targets)
    else:
        cfg = DQNConfig()
    cfg = (
        cfg.environment(env=register_vector_env() if s.vector_env else InventoryEnv, env_config=env_config)
        .env_runners(num_env_runners=0, num_envs_per_env_runner=s.num_envs_per_env_runner,
                     rollout_fragment_length=s.rollout_fragment_length,
                     gym_env_vectorize_mode="vector_entry_point" if s.vector_env else "sync")
        .training(
            lr=s.lr if s.lr_final is None else [[0, s.lr], [max(1, s.total_steps), s.lr_final]],
            gamma=s.gamma,
            train_batch_size_per_learner=batch,
            n_step=s.n_step,
            double_q=s.double_q,
            dueling=False,
            grad_clip=s.grad_clip,
            target_network_update_freq=s.target_network_update_freq,
            num_steps_sampled_before_learning_starts=s.learning_starts,
            epsilon=[(0, 1.0), (eps_steps, s.eps_final)],
            replay_buffer_config=replay,
            training_intensity=intensity,
            **s.extra,
        )
        .rl_module(model_config=model_config)
        .learners(num_learners=0)
        .resources(num_cpus_for_main_process=1)
        .reporting(min_sample_timesteps_per_iteration=s.steps_per_iteration, metrics_num_episodes_for_smoothing=20)
        .debugging(seed=s.seed, log_level="ERROR")
        .callbacks(GreedyEvalCallback)
    )
    return cfg


def quick_base_stock(problem: Problem) -> int:
    """Best order-up-to level by a small Monte Carlo scan (anchors exploration; the torch trainer's scan)."""
    from rl.dqn_torch import _quick_base_stock

    return _quick_base_stock(problem)


def module_to_qnetwork(module_or_state, problem: Problem, hidden=(64, 64), activation: str = "relu") -> QNetwork:
    """Copy RLlib's DQN module weights (encoder MLP + af head) into the plain torch QNetwork."""
    state = module_or_state if isinstance(module_or_state, dict) else module_or_state.state_dict()
    net = QNetwork(obs_dim(problem), problem.max_order + 1, tuple(hidden), activation)
    mapped = {}
    for i in range(len(hidden)):
        for kind in ("weight", "bias"):
            mapped[f"body.{2 * i}.{kind}"] = torch.as_tensor(state[f"encoder.net.mlp.{2 * i}.{kind}"])
    for kind in ("weight", "bias"):
        mapped[f"head.{kind}"] = torch.as_tensor(state[f"af.net.mlp.0.{kind}"])
    net.load_state_dict({k: v.detach().clone().float() for k, v in mapped.items()})
    return net.eval()


def load_module_from_checkpoint(checkpoint_dir):
    """The RLModule inside an Algorithm checkpoint (platform fact: this sub-path, then forward_inference)."""
    from ray.rllib.core.rl_module.rl_module import RLModule

    return RLModule.from_checkpoint(str(Path(checkpoint_dir).joinpath(*MODULE_SUBDIR)))


def _network_spec(config) -> tuple[tuple[int, ...], str]:
    mc = config.model_config
    hidden = mc.get("fcnet_hiddens") if isinstance(mc, dict) else mc.fcnet_hiddens
    act = mc.get("fcnet_activation") if isinstance(mc, dict) else mc.fcnet_activation
    return tuple(hidden), act


def _greedy_eval(algorithm) -> float:
    env_cfg = algorithm.config.env_config
    problem = Problem.from_dict(env_cfg["problem"])
    norm = Normalisation.from_dict(env_cfg["normalisation"])
    hidden, act = _network_spec(algorithm.config)
    net = module_to_qnetwork(algorithm.get_module(), problem, hidden, act)
    reps = int(env_cfg.get("eval_replications", 300))
    return greedy_cost(problem, net, norm, reps, int(algorithm.config.seed or 0) + VALIDATION_SEED_OFFSET)


try:  # the callback base class lives in Ray; keep this module importable for type checks without it
    from ray.rllib.callbacks.callbacks import RLlibCallback
except ImportError:  # pragma: no cover
    RLlibCallback = object


class GreedyEvalCallback(RLlibCallback):
    """After every iteration: greedy policy cost in the Monte Carlo evaluator -> result["greedy_cost"], and the
    trial's wall-clock life so far in float seconds ("trial_started_at", "reported_at"): Tune's own "timestamp" is
    a whole second and "time_this_iter_s" leaves out the actor's setup, too coarse to tell whether two short
    trials were alive together."""

    def on_algorithm_init(self, *, algorithm, metrics_logger=None, **kwargs) -> None:
        if getattr(algorithm, "trial_started_at", None) is None:
            algorithm.trial_started_at = time.time()

    def on_train_result(self, *, algorithm, metrics_logger=None, result, **kwargs) -> None:
        result["greedy_cost"] = _greedy_eval(algorithm)
        result["trial_started_at"] = float(getattr(algorithm, "trial_started_at", None) or time.time())
        result["reported_at"] = time.time()


def train_rllib_dqn(problem: Problem, steps: int = 200_000, seed: int = 0, progress: bool = False,
                    time_budget_s: float | None = 60.0, settings: RLlibSettings | None = None,
                    base_stock_level: int | None = None) -> TrainedDQN:
    """One RLlib DQN run in this process (local Ray, 1 CPU); returns the best greedy network seen."""
    import ray

    s = settings or RLlibSettings(total_steps=steps, seed=seed, time_budget_s=time_budget_s)
    t0 = time.perf_counter()
    norm = default_normalisation(problem)
    started = False
    if not ray.is_initialized():
        ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
        started = True
    algo = rllib_config(problem, s, norm, base_stock_level).build_algo()
    # Ray start (when this call starts it) and the algorithm build are reported apart and not charged to the
    # budget: a Tune run or a service pays them once, not per instance (measured 5-40 s on this loaded machine).
    setup_seconds = round(time.perf_counter() - t0, 2)
    t0 = time.perf_counter()
    hidden, act = tuple(s.hidden), s.activation
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=s.total_steps, desc="RLlib DQN", unit="step", leave=False, mininterval=1.0)
    patience, best_net, history, sampled = Patience(), None, [], 0
    reason = "steps"
    try:
        last_iter = 0.0
        while sampled < s.total_steps:
            # an iteration cannot be interrupted: stop when the next one would not fit the budget
            if s.training_seconds is not None and time.perf_counter() - t0 + last_iter > s.training_seconds:
                reason = "time"
                break
            t_iter = time.perf_counter()
            res = algo.train()
            last_iter = time.perf_counter() - t_iter
            now = int(res.get("num_env_steps_sampled_lifetime", 0) or 0)
            if bar is not None:
                bar.update(now - sampled)
            sampled = now
            cost = float(res["greedy_cost"])
            history.append({"steps": sampled, "seconds": round(time.perf_counter() - t0, 2), "val_cost": cost})
            if patience.update(cost):
                best_net = module_to_qnetwork(algo.get_module(), problem, hidden, act)
            if bar is not None:
                bar.set_postfix(val_cost=f"{cost:.1f}", best=f"{patience.best:.1f}", refresh=False)
            if patience.since >= s.patience and sampled >= s.min_steps:
                reason = "no_improvement"
                break
        if best_net is None:  # the budget ended before a first iteration: ship the current network
            best_net = module_to_qnetwork(algo.get_module(), problem, hidden, act)
    finally:
        if bar is not None:
            bar.close()
        algo.stop()
        if started:
            ray.shutdown()
    info = {"steps": sampled, "seconds": round(time.perf_counter() - t0, 2), "setup_seconds": setup_seconds,
            "stop_reason": reason,
            "best_validation_cost": patience.best, "validation_replications": s.eval_replications,
            "algorithm": s.algorithm, "targets": s.targets if s.algorithm == "counterfactual" else "sampled",
            "settings": settings_dict(s)}
    trained = TrainedDQN(problem, best_net, norm, trainer_name(s), history, info)
    trained.improve_after_training(s.rollout_states, s.opening_replications, s.residual_replications, s.seed,
                                   seconds_left(s.time_budget_s, time.perf_counter() - t0))
    return trained


def trainer_name(s: RLlibSettings) -> str:
    return "rllib" if s.algorithm == "dqn" else f"rllib-{s.algorithm}"


def settings_dict(s: RLlibSettings) -> dict:
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(s).items()}


# ---------------------------------------------------------------------------------------------------
# Tune: many instances in parallel
# ---------------------------------------------------------------------------------------------------


class GreedyPlateauStopper:
    """Tune stopper: a trial stops at its step budget or when greedy_cost has not improved for `patience`
    iterations (improvement = at least `rel_tol` relative)."""

    def __init__(self, max_steps: int, patience: int, rel_tol: float = 1e-3, max_seconds: float | None = None,
                 min_steps: int = 0):
        self.max_steps, self.patience, self.rel_tol, self.max_seconds = max_steps, patience, rel_tol, max_seconds
        self.min_steps = min_steps
        self._patience: dict[str, Patience] = {}

    def __call__(self, trial_id: str, result: dict) -> bool:
        cost = result.get("greedy_cost")
        patience = self._patience.setdefault(trial_id, Patience(rel_tol=self.rel_tol))
        if cost is not None:
            patience.update(cost)
        steps = result.get("num_env_steps_sampled_lifetime", 0) or 0
        if steps >= self.max_steps:
            return True
        # an iteration cannot be interrupted: stop when the next one (as long as the last) would not fit
        if self.max_seconds is not None and (result.get("time_total_s", 0) + result.get("time_this_iter_s", 0)
                                             > self.max_seconds):
            return True
        return steps >= self.min_steps and patience.since >= self.patience

    def stop_all(self) -> bool:
        return False


def _make_stopper(max_steps: int, patience: int, max_seconds: float | None, min_steps: int = 0):
    from ray.tune import Stopper

    class _Stopper(GreedyPlateauStopper, Stopper):
        pass

    return _Stopper(max_steps, patience, max_seconds=max_seconds, min_steps=min_steps)


def _trial_name(trial) -> str:
    return f"dqn_{trial.config.get('env_config', {}).get('name', 'x')}_{trial.trial_id}"


@dataclass
class TuneOutcome:
    name: str
    problem: Problem
    greedy_cost: float  # best validation greedy cost seen
    steps: int
    seconds: float
    checkpoint: str | None
    net: QNetwork | None
    norm: Normalisation
    error: str | None = None
    window: tuple[float, float] = (0.0, 0.0)  # wall-clock seconds: the algorithm's setup began, its last report

    trainer: str = "rllib-tune"
    pid: int | None = None  # the actor process that trained it (reused actors share one)

    def trained(self) -> TrainedDQN:
        info = {"steps": self.steps, "seconds": self.seconds, "best_validation_cost": self.greedy_cost,
                "checkpoint": self.checkpoint, "stop_reason": "tune", "window": list(self.window)}
        return TrainedDQN(self.problem, self.net, self.norm, self.trainer, [], info)


def tune_dqn(problems: dict[str, Problem], settings: RLlibSettings | None = None, storage_path=None,
             max_concurrent: int = 2, max_seconds: float | None = None,
             base_stock_levels: dict[str, int] | None = None) -> list[TuneOutcome]:
    """Train one DQN per instance, `max_concurrent` trials at a time (1 CPU each), seeded, checkpointing the
    best greedy policy, stopped early on a plateau. Returns one outcome per instance (in input order).

    The trainable is the config's algorithm class (`CounterfactualDQN` by default, RLlib's `DQN` for
    `algorithm="dqn"`); a grid over `env_config` makes one trial per instance (the module's mask and
    exploration anchor are derived from each trial's env_config)."""
    import ray
    from ray import tune

    s = settings or RLlibSettings()
    if not problems:
        raise ValueError("problems: need at least one instance")
    if max_seconds is None:
        max_seconds = s.training_seconds
    names = list(problems)
    levels = dict(base_stock_levels or {})
    env_configs, base = [], None
    for name in names:
        p = problems[name]
        cfg = rllib_config(p, s, base_stock_level=levels.get(name))
        base = base or cfg
        env_configs.append({**cfg.env_config, "name": name})
    param_space = base.to_dict()
    param_space["env_config"] = tune.grid_search(env_configs)  # one trial per instance
    started = False
    if not ray.is_initialized():
        ray.init(address="local", num_cpus=max_concurrent, include_dashboard=False, log_to_driver=False, configure_logging=False)
        started = True
    storage = Path(storage_path or Path.cwd() / "ray_results").resolve()
    try:
        tuner = tune.Tuner(
            base.algo_class,
            param_space=param_space,
            # the counterfactual algorithm rebuilds itself for the next trial in the same actor (`reset_config`):
            # two processes per sweep on two cores, not one per instance; RLlib's textbook DQN cannot
            tune_config=tune.TuneConfig(max_concurrent_trials=max_concurrent,
                                        reuse_actors="reset_config" in vars(base.algo_class),
                                        trial_name_creator=_trial_name, trial_dirname_creator=_trial_name),
            run_config=tune.RunConfig(
                name=f"dqn_{int(time.time())}",
                storage_path=str(storage),
                stop=_make_stopper(s.total_steps, s.patience, max_seconds, s.min_steps),
                checkpoint_config=tune.CheckpointConfig(
                    # 3, not 1: with num_to_keep=1 every checkpoint forces an experiment snapshot (Tune warns it is
                    # the bottleneck); checkpoints are ~0.3 MB
                    num_to_keep=3, checkpoint_score_attribute="greedy_cost", checkpoint_score_order="min",
                    checkpoint_frequency=1, checkpoint_at_end=True),
                verbose=0,
            ),
        )
        grid = tuner.fit()
        outcomes: dict[str, TuneOutcome] = {}
        for result in grid:
            cfg = result.config or {}
            env_cfg = cfg.get("env_config", {})
            name = env_cfg.get("name", "?")
            problem = problems.get(name) or Problem.from_dict(env_cfg["problem"])
            norm = Normalisation.from_dict(env_cfg["normalisation"])
            if result.error is not None:
                outcomes[name] = TuneOutcome(name, problem, math.inf, 0, 0.0, None, None, norm, str(result.error))
                continue
            ckpt = result.get_best_checkpoint("greedy_cost", "min") or result.checkpoint
            df = result.metrics_dataframe
            best_cost = float(df["greedy_cost"].min()) if df is not None and "greedy_cost" in df else math.nan
            module = load_module_from_checkpoint(ckpt.path)
            net = module_to_qnetwork(module, problem, s.hidden, s.activation)
            window = (0.0, 0.0)
            if df is not None and len(df) and "trial_started_at" in df:
                window = (float(df["trial_started_at"].iloc[0]), float(df["reported_at"].iloc[-1]))
            outcomes[name] = TuneOutcome(
                name, problem, best_cost, int(result.metrics.get("num_env_steps_sampled_lifetime", 0)),
                float(result.metrics.get("time_total_s", 0.0)), ckpt.path, net, norm, None, window,
                f"tune-{trainer_name(s)}", result.metrics.get("pid"))
        return [outcomes[n] for n in names if n in outcomes]
    finally:
        if started:
            ray.shutdown()


def tune_per_instance(problems, settings: RLlibSettings | None = None, out_dir=None, max_concurrent: int = 2,
                      storage_path=None, base_stock_levels: dict[str, int] | None = None) -> dict[str, TrainedDQN]:
    """Per-instance DQNs trained in parallel through Tune (one trial per instance, 1 CPU each, early stopping on
    the greedy policy's Monte Carlo cost, the best checkpoint kept), as `TrainedDQN`s: the same object the
    torch trainer returns (`state_policy()`, `save(dir)` -> config.json + dqn_weights.pth, `summary()`), so
    the Optimization Agent scores and ships them exactly as before.

    problems: {name: Problem} (or a list, named "0", "1", ...). With `out_dir`, each instance's artifacts are
    written to out_dir/<name>/. A failed trial raises RuntimeError naming the instance.
    """
    if not isinstance(problems, dict):
        problems = {str(i): p for i, p in enumerate(problems)}
    for name, p in problems.items():
        if not isinstance(p, Problem):
            raise TypeError(f"problems[{name!r}]: expected inventory.problem.Problem, got {type(p).__name__}")
    import ray

    s = settings or RLlibSettings()
    started = not ray.is_initialized()
    if started:  # one local Ray for the trials and the openings after them
        ray.init(address="local", num_cpus=max_concurrent, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    try:
        outcomes = tune_dqn(problems, s, storage_path=storage_path, max_concurrent=max_concurrent,
                            base_stock_levels=base_stock_levels)
        for o in outcomes:
            if o.error is not None or o.net is None:
                raise RuntimeError(f"problems[{o.name!r}]: the Tune trial failed: {o.error}")
        trained = _with_improvements({o.name: o.trained() for o in outcomes}, s)
    finally:
        if started:
            ray.shutdown()
    if out_dir is not None:
        for name, t in trained.items():
            t.save(Path(out_dir) / name)
    return trained


def _improve_one(t: TrainedDQN, s: RLlibSettings) -> TrainedDQN:
    torch.set_num_threads(1)  # one task = one CPU, as a trial
    t.improve_after_training(s.rollout_states, s.opening_replications, s.residual_replications, s.seed,
                             seconds_left(s.time_budget_s, float(t.info.get("seconds", 0.0))))  # the trial's training
    return t


def _with_improvements(trained: dict[str, TrainedDQN], s: RLlibSettings) -> dict[str, TrainedDQN]:
    """Each instance's searches after training (`TrainedDQN.improve_after_training`: rollout policy iteration,
    the opening, the order offsets), as Ray tasks of 1 CPU each: seconds per instance, fanned out like the trials
    so that eight instances do not queue in the driver."""
    import ray

    if not searches_on(s):
        return trained
    task = ray.remote(num_cpus=1)(_improve_one)
    refs = {name: task.remote(t, s) for name, t in trained.items()}
    return {name: ray.get(ref) for name, ref in refs.items()}
