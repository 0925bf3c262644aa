"""The counterfactual all-action DQN as an RLlib algorithm (Ray 2.60, new API stack).

`CounterfactualDQNConfig` is a `DQNConfig` (so `.environment/.training/.env_runners/.learners/.callbacks`,
checkpoints, Tune and the dashboard all apply) whose algorithm differs from RLlib's DQN in three parts:

* `CounterfactualDQNLearner` (a `DQNTorchLearner`): `compute_loss_for_module` builds every order's
  transition from each replayed (state, demand) with `inventory.dynamics` and regresses all Q(s, .) on their
  same-demand targets, using the module's target network (`forward_target`) for the bootstrap. The targets and
  the loss are `rl.counterfactual`, the same code the standalone torch trainer runs. `targets="sampled"`
  falls back to RLlib's own DQN loss on the same (1-step) transitions: textbook DQN, for comparison.
* replay (`TransitionReplay`): what the update needs is the raw state and the demand realised in that period.
  Episode chunks from the env runners are flattened on arrival into numpy columns (observation, action,
  reward, next observation, terminated, raw state decoded from the observation, demand from the step's info),
  and a train batch is a `MultiAgentBatch` drawn uniformly from them. This replaces RLlib's episode replay
  buffer and learner connector pipeline for this algorithm: rebuilding 256 one-step episodes per update costs
  tens of ms on this machine, the whole counterfactual update about one.
* `InventoryDQNModule` (RLlib's default DQN torch module): the greedy action is masked to the orders the caps
  allow (`forward_inference` = the shipped recommender), and exploration is anchored on the best base-stock
  order plus uniform noise (as in `rl.dqn_torch`); epsilon follows RLlib's schedule.

`CounterfactualDQN.training_step` samples the env runners, adds to the flat replay, runs
`round(new_steps * training_intensity / batch)` learner updates (the replay ratio; as minibatches of one Learner
call) and syncs the weights back to the env runners. Target syncs are RLlib's (`target_network_update_freq`, in sampled env steps).
"""

from __future__ import annotations

import time

import numpy as np
import torch
from ray.rllib.algorithms.algorithm_config import NotProvided  # noqa: E402  (Ray is this module's job)
from ray.rllib.algorithms.dqn import DQN, DQNConfig  # noqa: E402
from ray.rllib.algorithms.dqn.dqn_learner import QF_LOSS_KEY, QF_MEAN_KEY, QF_PREDS  # noqa: E402
from ray.rllib.algorithms.dqn.torch.default_dqn_torch_rl_module import DefaultDQNTorchRLModule  # noqa: E402
from ray.rllib.algorithms.dqn.torch.dqn_torch_learner import DQNTorchLearner  # noqa: E402
from ray.rllib.core import DEFAULT_MODULE_ID  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.core.rl_module.rl_module import RLModuleSpec  # noqa: E402
from ray.rllib.execution.rollout_ops import synchronous_parallel_sample  # noqa: E402
from ray.rllib.policy.sample_batch import MultiAgentBatch, SampleBatch  # noqa: E402
from ray.rllib.utils.metrics import (  # noqa: E402
    ALL_MODULES,
    ENV_RUNNER_RESULTS,
    ENV_RUNNER_SAMPLING_TIMER,
    LEARNER_RESULTS,
    LEARNER_UPDATE_TIMER,
    NUM_AGENT_STEPS_SAMPLED_LIFETIME,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    SYNCH_WORKER_WEIGHTS_TIMER,
    TIMERS,
)

from inventory.kernel_torch import tensor_dynamics, tensor_policies
from inventory.problem import Problem
from rl.counterfactual import (
    all_action_loss,
    counterfactual_transitions,
    demand_support,
    expected_all_action_loss,
    expected_transitions,
)
from rl.features import Normalisation, decode

TARGETS = ("all_actions", "expected", "sampled")
COUNTERFACTUAL_TARGETS = ("all_actions", "expected")  # the Learner builds the next states itself
ASKOPT_KEY = "askopt"  # model_config entry with what the module needs to mask and anchor exploration


def exploration_settings(problem: Problem, base_stock_level: int | None) -> dict:
    """env_config["exploration"]: the base-stock anchor (None = uniform) and the noise half-width."""
    return {"base_stock_level": None if base_stock_level is None else int(base_stock_level),
            "noise": max(2, int(round(2 * problem.demand.std + 1)))}


def module_settings(env_config) -> dict:
    """What `InventoryDQNModule` needs, derived from the env_config (so a Tune grid over env_config is
    enough to give every trial its own instance)."""
    problem, norm = env_problem(env_config)
    exp = dict(env_config.get("exploration") or {})
    return {"inventory_scale": norm.inventory_scale, "max_inventory": problem.max_inventory,
            "max_order": problem.max_order, "base_stock_level": exp.get("base_stock_level"),
            "noise": int(exp.get("noise", 2))}


def env_problem(env_config) -> tuple[Problem, Normalisation]:
    return Problem.from_dict(env_config["problem"]), Normalisation.from_dict(env_config["normalisation"])


# ---------------------------------------------------------------------------------------------------
# Replay: flat columns with the raw state and the demand
# ---------------------------------------------------------------------------------------------------


class TransitionReplay:
    """Uniform circular replay of one-step transitions, with raw state and realised demand."""

    def __init__(self, capacity: int, problem: Problem, norm: Normalisation, seed: int = 0):
        d, L = problem.lead_time + 3, problem.lead_time
        self.problem, self.norm = problem, norm
        self.obs = np.zeros((capacity, d), np.float32)
        self.next_obs = np.zeros((capacity, d), np.float32)
        self.action = np.zeros(capacity, np.int64)
        self.reward = np.zeros(capacity, np.float32)
        self.terminated = np.zeros(capacity, bool)
        self.on_hand = np.zeros(capacity, np.int64)
        self.pipeline = np.zeros((capacity, L), np.int64)
        self.t = np.zeros(capacity, np.int64)
        self.demand = np.zeros(capacity, np.int64)
        self.capacity, self.size, self.pos = capacity, 0, 0
        self.rng = np.random.default_rng(seed)
        self.include_next_obs = True  # RLlib's own loss ("sampled") needs it; the counterfactual one does not

    def add_episodes(self, episodes) -> int:
        """Flatten RLlib episode chunks (SingleAgentEpisode); returns the number of transitions added."""
        added = 0
        for ep in episodes:
            n = len(ep)
            if n == 0:
                continue
            obs = np.asarray(ep.get_observations(), np.float32)  # n + 1 observations of this chunk
            infos = ep.get_infos()  # n + 1: infos[k + 1] comes from the step taken at observation k
            demand = np.array([int(infos[k + 1]["demand"]) for k in range(n)], np.int64)
            term = np.zeros(n, bool)
            term[-1] = bool(ep.is_terminated)
            self._add(obs[:-1], obs[1:], np.asarray(ep.get_actions(), np.int64).reshape(n),
                      np.asarray(ep.get_rewards(), np.float32).reshape(n), term, demand)
            added += n
        return added

    def _add(self, obs, next_obs, action, reward, terminated, demand) -> None:
        n = len(action)
        idx = (self.pos + np.arange(n)) % self.capacity
        on, pipe, t = decode(self.norm, obs)
        self.obs[idx], self.next_obs[idx], self.action[idx], self.reward[idx] = obs, next_obs, action, reward
        self.terminated[idx], self.demand[idx] = terminated, demand
        self.on_hand[idx], self.pipeline[idx], self.t[idx] = on, pipe, t
        self.pos = int((self.pos + n) % self.capacity)
        self.size = min(self.capacity, self.size + n)

    def sample(self, batch_size: int, module_id=DEFAULT_MODULE_ID) -> MultiAgentBatch:
        i = self.rng.integers(0, self.size, size=batch_size)
        cols = {
            Columns.OBS: self.obs[i], Columns.ACTIONS: self.action[i],
            Columns.REWARDS: self.reward[i], Columns.TERMINATEDS: self.terminated[i],
            "n_step": np.ones(batch_size, np.float32),
            "on_hand": self.on_hand[i], "pipeline": self.pipeline[i], "t": self.t[i], "demand": self.demand[i],
        }
        if self.include_next_obs:
            cols[Columns.NEXT_OBS] = self.next_obs[i]
        return MultiAgentBatch({module_id: SampleBatch(cols)}, env_steps=batch_size)


# ---------------------------------------------------------------------------------------------------
# Module: masked greedy action, exploration anchored on base-stock
# ---------------------------------------------------------------------------------------------------


class InventoryDQNModule(DefaultDQNTorchRLModule):
    """RLlib's DQN module (same weights layout) with the capacity mask and base-stock-anchored exploration."""

    def setup(self):
        super().setup()
        a = dict(self.model_config.get(ASKOPT_KEY) or {})
        self._scale = float(a.get("inventory_scale", 1.0))
        self._max_inventory = int(a.get("max_inventory", 10**9))
        self._max_order = int(a.get("max_order", self.action_space.n - 1))
        self._S = a.get("base_stock_level")  # None: uniform exploration over the feasible orders
        self._noise = int(a.get("noise", 2))

    def _forward_train(self, batch, **kwargs):
        if Columns.NEXT_OBS not in batch:  # counterfactual targets: the Learner builds the next states itself
            return {QF_PREDS: self.compute_q_values(batch)[QF_PREDS]}
        return super()._forward_train(batch, **kwargs)

    def _position_room(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The inventory position decoded from the observation and the cap `dynamics.room` on it (on tensors)."""
        position = torch.round(obs[:, -2] * self._scale)
        room = tensor_dynamics.room(position, self._max_order, self._max_inventory).long()
        return position, room

    def _masked_greedy(self, q: torch.Tensor, room: torch.Tensor) -> torch.Tensor:
        idx = torch.arange(q.shape[1], device=q.device).reshape(1, -1)
        return q.masked_fill(idx > room[:, None], float("-inf")).argmax(dim=1)

    def _forward_inference(self, batch, **kwargs):
        obs = batch[Columns.OBS]
        q = self.compute_q_values(batch)[QF_PREDS]
        return {Columns.ACTIONS: self._masked_greedy(q, self._position_room(obs)[1])}

    def _forward_exploration(self, batch, t: int = 0, **kwargs):
        obs = batch[Columns.OBS]
        q = self.compute_q_values(batch)[QF_PREDS]
        position, room = self._position_room(obs)
        greedy = self._masked_greedy(q, room)
        self.epsilon_schedule.update(t)
        eps = self.epsilon_schedule.get_current_value()
        B = obs.shape[0]
        if self._S is None:
            random = torch.floor(torch.rand(B) * (room + 1).float()).long()
        else:
            base = tensor_policies.base_stock_rule(position, float(self._S)).long()
            random = tensor_dynamics.clamp(base + torch.randint(-self._noise, self._noise + 1, (B,)), room)
        return {Columns.ACTIONS: torch.where(torch.rand(B) < eps, random, greedy)}


# ---------------------------------------------------------------------------------------------------
# Learner: the counterfactual loss (rl.counterfactual), or RLlib's DQN loss for "sampled"
# ---------------------------------------------------------------------------------------------------


class CounterfactualDQNLearner(DQNTorchLearner):
    def build(self) -> None:
        super().build()
        self._problem, self._norm = env_problem(self.config.env_config)
        self._support = demand_support(self._problem)  # demand values and probabilities for "expected"

    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        targets = getattr(config, "targets", "all_actions")
        if targets not in COUNTERFACTUAL_TARGETS:
            return super().compute_loss_for_module(module_id=module_id, config=config, batch=batch,
                                                   fwd_out=fwd_out)
        state = (_np(batch["on_hand"]), _np(batch["pipeline"]), _np(batch["t"]))
        if targets == "expected":  # every order under every demand value: B x K x A next states
            cf = expected_transitions(self._problem, self._norm, *state, self._support)
        else:  # every order under the replayed demand: B x A next states
            cf = counterfactual_transitions(self._problem, self._norm, *state, _np(batch["demand"]))
        module = self.module[module_id].unwrapped()
        with torch.no_grad():
            q_next_target = module.forward_target({Columns.OBS: cf.next_obs})[QF_PREDS]
            q_next_online = module.compute_q_values({Columns.OBS: cf.next_obs})[QF_PREDS] if config.double_q else None
        q = fwd_out[QF_PREDS]
        if targets == "expected":
            loss = expected_all_action_loss(q, cf, self._support[1], q_next_target, config.gamma, config.cf_loss,
                                            q_next_online)
        else:
            loss = all_action_loss(q, cf, q_next_target, config.gamma, config.cf_loss, q_next_online)
        self.metrics.log_dict({QF_LOSS_KEY: loss.detach(), QF_MEAN_KEY: q.detach().mean()}, key=module_id, window=1)
        return loss


def _np(x) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


# ---------------------------------------------------------------------------------------------------
# Config and algorithm
# ---------------------------------------------------------------------------------------------------


class CounterfactualDQNConfig(DQNConfig):
    """DQNConfig plus `.counterfactual(targets=..., loss=...)`; builds `CounterfactualDQN`."""

    def __init__(self, algo_class=None):
        super().__init__(algo_class=algo_class or CounterfactualDQN)
        self.targets = "all_actions"
        self.cf_loss = "huber"

    def counterfactual(self, *, targets=NotProvided, loss=NotProvided) -> CounterfactualDQNConfig:
        if targets is not NotProvided:
            if targets not in TARGETS:
                raise ValueError(f"targets: {targets!r} is not allowed; allowed: {', '.join(TARGETS)}")
            self.targets = targets
        if loss is not NotProvided:
            if loss not in ("huber", "mse"):
                raise ValueError(f"loss: {loss!r} is not allowed; allowed: huber, mse")
            self.cf_loss = loss
        return self

    def get_default_learner_class(self):
        return CounterfactualDQNLearner

    def get_default_rl_module_spec(self):
        model_config = dict(self.model_config)
        if self.env_config.get("problem") is not None:
            model_config[ASKOPT_KEY] = module_settings(self.env_config)
        return RLModuleSpec(module_class=InventoryDQNModule, model_config=model_config)


class CounterfactualDQN(DQN):
    """RLlib DQN with a flat replay that keeps (raw state, demand) and the counterfactual Learner."""

    @classmethod
    def get_default_config(cls) -> CounterfactualDQNConfig:
        return CounterfactualDQNConfig()

    def setup(self, config) -> None:
        # One trial = one CPU: the learner runs in this process (num_learners=0), and intra-op threads only
        # contend with the other trial on a 2-core machine (measured: 7 ms instead of <1 ms per linear layer).
        torch.set_num_threads(1)
        self.trial_started_at = time.time()  # read by GreedyEvalCallback: a trial's life includes its setup
        super().setup(config)
        problem, norm = env_problem(self.config.env_config)
        cap = int(self.config.replay_buffer_config.get("capacity", 100_000))
        self._replay = TransitionReplay(cap, problem, norm, seed=int(self.config.seed or 0))
        self._replay.include_next_obs = self.config.targets not in COUNTERFACTUAL_TARGETS
        self._owed_updates = 0.0

    def _create_local_replay_buffer_if_necessary(self, config):  # the flat replay replaces it
        return None

    # the Trainable's per-trial handles that Tune's `reset` has already set for the next trial
    _TRIAL_STATE = ("_storage", "_logdir", "_trial_info", "_stdout_file", "_stderr_file", "_stdout_context",
                    "_stdout_fp", "_stdout_stream", "_stderr_context", "_stderr_fp", "_stderr_stream",
                    "_stderr_logging_handler")

    def reset_config(self, new_config: dict) -> bool:
        """Tune's `reuse_actors`: the next trial's algorithm is built in this actor's process, so the eight trials
        of a sweep on two cores start two processes (each importing torch and RLlib, ~3.4 CPU-s) instead of
        eight. The old trial's Learner and EnvRunners are stopped; the new one is set up from scratch, exactly as a
        fresh actor would (same seeding, replay and counters), keeping the log and storage handles Tune's
        `reset` opened for it."""
        trial = {name: getattr(self, name, None) for name in self._TRIAL_STATE}
        self.cleanup()
        DQN.__init__(self, config=dict(new_config), storage=trial["_storage"])
        for name, value in trial.items():
            setattr(self, name, value)
        return True

    def training_step(self) -> None:
        cfg = self.config
        with self.metrics.log_time((TIMERS, ENV_RUNNER_SAMPLING_TIMER)):
            episodes, env_runner_results = synchronous_parallel_sample(
                worker_set=self.env_runner_group, concat=True, sample_timeout_s=cfg.sample_timeout_s,
                _uses_new_env_runners=True, _return_metrics=True)
        self.metrics.aggregate(env_runner_results, key=ENV_RUNNER_RESULTS)
        added = self._replay.add_episodes(episodes)
        ts = self.metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME), default=0)
        B = cfg.total_train_batch_size
        if ts < cfg.num_steps_sampled_before_learning_starts or self._replay.size < B:
            return
        intensity = cfg.training_intensity or B / max(1, added)
        self._owed_updates += added * intensity / B
        n = int(self._owed_updates)
        results = []
        if n:
            # the n updates owed as n minibatches of one sampled batch in one Learner call: the same uniform draws,
            # without n times the call's conversion and metrics reduction (measured: most of RLlib's per-update cost)
            self._owed_updates -= n
            with self.metrics.log_time((TIMERS, LEARNER_UPDATE_TIMER)):
                results = self.learner_group.update(
                    batch=self._replay.sample(n * B), minibatch_size=B, num_epochs=1, shuffle_batch_per_epoch=False,
                    timesteps={NUM_ENV_STEPS_SAMPLED_LIFETIME: ts, NUM_AGENT_STEPS_SAMPLED_LIFETIME: ts})
        if results:
            self.metrics.aggregate(results, key=LEARNER_RESULTS)
            with self.metrics.log_time((TIMERS, SYNCH_WORKER_WEIGHTS_TIMER)):
                self.env_runner_group.sync_weights(
                    from_worker_or_learner_group=self.learner_group,
                    policies=set(results[0].keys()) - {ALL_MODULES}, global_vars=None, inference_only=True)
