"""Running one study unit (instance x treatment x trial) up to a policy; no Ray here, no scoring.

A unit has two phases, split by what they wait on (the runner schedules them differently):

* `run_dialogue`: everything that talks (A's interview, B's and C's consultant, the judge). With an LLM it
  waits on the model and many run at once; it records the unit's LLM usage (calls, retries, 429s, tokens,
  seconds waiting on the model, cost from the study's price table).
* `finish_unit`: CPU work (A's Optimization Agent on the extracted problem); B and C are done already.

`run_unit` is both in a row. None of them raises for the unit's own failures: an LLM error, a dialogue that
does not complete, an unparseable or infeasible policy or any exception becomes an outcome with status
"failed", the stage and the reason, so the sweep goes on and the report can count why. The policy object
travels to the scoring task.

`UnitRunner` bundles the phases so that the runner can be handed another implementation; tests install a
wrapper that injects failures (`tests/fault_injection.py`): production config carries no fault switches.
"""

from __future__ import annotations

import importlib
import json
import os
import time
import traceback
from dataclasses import dataclass, field

from agents.generator import Instance
from evaluation.study import StudyConfig, Unit, dialogue_seed, persona_for
from inventory.policies import Policy
from inventory.problem import Problem

#: Per-unit LLM accounting columns of the results (all 0 for offline units).
USAGE_COLUMNS = ("llm_calls", "llm_failed_calls", "llm_retries", "llm_rate_limited", "prompt_tokens",
                 "completion_tokens", "model_seconds", "limiter_seconds", "cost_usd")


@dataclass
class UnitOutcome:
    """A unit's policy (or failure) plus everything about how it was reached; scored later."""

    unit: Unit
    seed: int
    status: str = "ok"  # ok | failed
    stage: str = ""  # where it failed: dialogue | optimization | advice | parse | exception | scoring
    reason: str = ""
    policy: Policy | None = None
    policy_label: str = ""
    policy_kind: str = ""
    policy_params: dict = field(default_factory=dict)
    policy_basis: str = "position"
    advice_text: str = ""
    consultant: str = ""
    turns: int = 0
    dialogue_status: str = ""
    field_scores: dict = field(default_factory=dict)
    transcript: list = field(default_factory=list)
    note: str = ""
    seconds: float = 0.0
    pid: int = 0
    extracted: Problem | None = None  # A: the dialogue's problem, optimised in `finish_unit`
    usage: dict = field(default_factory=dict)  # LLM accounting (USAGE_COLUMNS)

    def fail(self, stage: str, reason: str) -> UnitOutcome:
        self.status, self.stage, self.reason = "failed", stage, reason[:500]
        return self


def _llm_client(config: StudyConfig):
    if not config.llm:
        return None
    from llm.client import LLMClient, LLMConfig

    return LLMClient(LLMConfig(**config.llm))


def usage_of(client, config: StudyConfig) -> dict:
    """The unit's LLM accounting from its client (zeros offline), priced with the study's table."""
    if client is None:
        return {k: 0 for k in USAGE_COLUMNS} | {"model_seconds": 0.0, "limiter_seconds": 0.0, "cost_usd": 0.0}
    from llm.client import price_for

    u = client.usage
    price = price_for(getattr(config, "prices", None), client.model_name)
    return {"llm_calls": u.calls, "llm_failed_calls": u.failed_calls, "llm_retries": u.retries,
            "llm_rate_limited": u.rate_limited, "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens, "model_seconds": round(u.model_seconds, 4),
            "limiter_seconds": round(u.limiter_seconds, 4),
            "cost_usd": price.cost(u.prompt_tokens, u.completion_tokens)}


def _imitator(instance: Instance, persona: str, seed: int, config: StudyConfig):
    """Who plays the manager: the imitator endpoint of `config.imitator` (scenario protocol), else the offline
    persona simulator. The consultant's LLM never plays the manager."""
    from agents.imitator import HumanImitator, LLMHumanImitator

    if not config.imitator:
        return HumanImitator(instance.problem, instance.context, persona, seed)
    from llm.client import LLMClient, LLMConfig

    client = LLMClient(LLMConfig(**config.imitator))
    return LLMHumanImitator.at_endpoint(client, instance.problem, instance.context, persona, seed)


def winner_policy(result) -> Policy:
    """The Optimization Agent's chosen policy as an object (a DP table or a DQN included)."""
    return result.policy_for(result.winner.name)


def _run_a(o: UnitOutcome, instance: Instance, config: StudyConfig, client) -> UnitOutcome:
    run_hybrid_dialogue = importlib.import_module("agents.dialogue").run_hybrid_dialogue

    persona = persona_for(config, instance.index)
    kwargs = {"max_turns": config.max_turns}
    if client is not None:
        kwargs["extractor"] = _llm_extractor(client)
    d = run_hybrid_dialogue(instance.problem, instance.context, persona, o.seed,
                            imitator=_imitator(instance, persona, o.seed, config), **kwargs)
    o.turns = int(d.turns)
    o.dialogue_status = d.status
    o.field_scores = {k: bool(v) for k, v in (d.field_scores or {}).items()}
    o.transcript = [list(x) for x in (d.transcript or [])]
    if d.status != "complete" or d.problem is None:
        return o.fail("dialogue", f"dialogue {d.status}: {d.reason}")
    o.extracted = d.problem
    return o


def _optimize_a(o: UnitOutcome, config: StudyConfig) -> UnitOutcome:
    """A's CPU phase: the Optimization Agent on the problem the dialogue extracted."""
    from optimization.service import OptimizationAgent, OptimizationConfig

    cfg = OptimizationConfig(dqn=config.dqn, seed=o.seed, write_artifacts=False, replications=config.opt_replications,
                             search_replications=config.opt_search_replications, dp_max_states=config.dp_max_states,
                             dp_max_work=config.dp_max_work)
    res = OptimizationAgent(cfg).run(o.extracted)
    o.policy = winner_policy(res)
    o.policy_kind = res.winner.name
    o.policy_label = res.winner.label
    o.policy_params = dict(res.winner.params)
    o.consultant = "askopt"
    return o


def _llm_extractor(client):
    """The dialogue system's LLM extraction backend (agents.extraction_llm.LLMExtractor)."""
    return importlib.import_module("agents.extraction_llm").LLMExtractor(client)


def _run_consultant(o: UnitOutcome, instance: Instance, config: StudyConfig, client, treatment: str) -> UnitOutcome:
    from agents import consultant as c
    from agents.policy_parser import parse_policy

    truth = instance.problem
    if treatment == "B":
        persona = persona_for(config, instance.index)
        imitator = _imitator(instance, persona, o.seed, config)
        res = (c.run_llm_consultant(imitator, client, max_turns=config.max_turns) if client
               else c.run_textbook_consultant(imitator, seed=o.seed, max_turns=config.max_turns))
    else:
        res = (c.llm_consult_with_parameters(truth, instance.context, client) if client
               else c.textbook_with_parameters(truth, seed=o.seed))
    o.consultant, o.advice_text, o.turns, o.dialogue_status = res.consultant, res.advice, res.turns, res.status
    o.transcript = [list(x) for x in res.transcript]
    # the policy runs in the real store: read it against the true capacity
    parsed = parse_policy(res.advice, capacity=truth.max_inventory)
    o.policy_kind, o.policy_params, o.policy_basis = parsed.kind or "", dict(parsed.params), parsed.basis
    o.policy_label = parsed.label()
    if res.status != "complete":
        return o.fail("advice", res.reason or res.status)
    if parsed.status != "ok":
        return o.fail("parse", f"{parsed.status}: {parsed.reason}")
    o.policy = parsed.policy
    return o


def _failed_by(o: UnitOutcome, exc: Exception) -> None:
    kind = type(exc).__name__
    stage = "llm" if "LLM" in kind or "JSONReply" in kind else "exception"
    o.fail(stage, f"{kind}: {exc}")
    o.note = (o.note + " " + traceback.format_exc(limit=3)[-400:]).strip()


def run_dialogue(unit: Unit, instance: Instance, config: StudyConfig, client=None) -> UnitOutcome:
    """The unit's talking phase (I/O-bound with an LLM). `client`: the unit's own LLMClient (e.g. a fork of
    a pooled one with the cluster's rate limiter); default one made from the config (None offline)."""
    t0 = time.perf_counter()
    o = UnitOutcome(unit=unit, seed=dialogue_seed(config, unit.instance_id, unit.trial), pid=os.getpid())
    try:
        if client is None:
            client = _llm_client(config)
        if unit.treatment == "A":
            _run_a(o, instance, config, client)
        else:
            _run_consultant(o, instance, config, client, unit.treatment)
    except Exception as exc:  # noqa: BLE001 - a unit's failure is data, not a crash
        _failed_by(o, exc)
    o.usage = usage_of(client, config)
    o.seconds = time.perf_counter() - t0
    return o


def finish_unit(o: UnitOutcome, instance: Instance, config: StudyConfig) -> UnitOutcome:
    """The unit's CPU phase: A's Optimization Agent on the extracted problem (B and C have nothing left)."""
    if o.unit.treatment != "A" or o.status != "ok" or o.extracted is None or o.policy is not None:
        return o
    t0 = time.perf_counter()
    o.pid = os.getpid()
    try:
        _optimize_a(o, config)
    except Exception as exc:  # noqa: BLE001 - a unit's failure is data, not a crash
        _failed_by(o, exc)
    o.seconds += time.perf_counter() - t0
    return o


def run_unit(unit: Unit, instance: Instance, config: StudyConfig) -> UnitOutcome:
    """One unit, start to policy (both phases). Exceptions become failed outcomes with the exception's last
    line."""
    return finish_unit(run_dialogue(unit, instance, config), instance, config)


class UnitRunner:
    """How the runner executes a unit's phases. The default is the study itself; tests pass a subclass that
    injects failures (a unit that raises, a worker process that dies) without touching production config.
    Instances are pickled to Ray workers and actors, so subclasses keep plain-data state only."""

    def dialogue(self, unit: Unit, instance: Instance, config: StudyConfig, client=None) -> UnitOutcome:
        return run_dialogue(unit, instance, config, client)

    def finish(self, outcome: UnitOutcome, instance: Instance, config: StudyConfig) -> UnitOutcome:
        return finish_unit(outcome, instance, config)

    def run(self, unit: Unit, instance: Instance, config: StudyConfig, client=None) -> UnitOutcome:
        return self.finish(self.dialogue(unit, instance, config, client), instance, config)


DEFAULT_RUNNER = UnitRunner()


def outcome_json(o: UnitOutcome) -> dict:
    """The serialisable part of an outcome (everything but the policy object)."""
    return {
        "unit_id": o.unit.unit_id, "seed": o.seed, "status": o.status, "stage": o.stage, "reason": o.reason,
        "policy_kind": o.policy_kind, "policy_params": json.dumps(o.policy_params, sort_keys=True, default=str),
        "policy_label": o.policy_label, "policy_basis": o.policy_basis, "advice_text": o.advice_text,
        "consultant": o.consultant, "turns": o.turns, "dialogue_status": o.dialogue_status,
        "field_scores": json.dumps(o.field_scores, sort_keys=True),
        "transcript": json.dumps(o.transcript), "note": o.note, "unit_seconds": o.seconds, "worker_pid": o.pid,
        **{k: o.usage.get(k, 0) for k in USAGE_COLUMNS},
    }
