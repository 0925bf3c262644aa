"""Problem Generator: the paper's sampling rules, seeding, designs, and the LLM generator's validation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.generator import (
    PAPER_CELLS,
    GenerationFailure,
    Instance,
    LLMGenerator,
    derive_seed,
    generate_instance,
    generate_instances,
)
from llm.client import LLMClient, LLMConfig

try:
    from tests.llm_server import ScriptedOpenAIServer
except ImportError:  # pytest's rootdir-less import mode puts tests/ itself on sys.path
    from llm_server import ScriptedOpenAIServer  # type: ignore[no-redef]


@pytest.fixture(scope="module")
def many() -> list[Instance]:
    return generate_instances(400, "rules")


def test_rules_hold_on_every_instance(many):
    for inst in many:
        p = inst.problem
        assert 30 <= p.horizon <= 120
        assert 1 <= p.lead_time <= 10
        assert p.max_inventory <= 100 and p.max_order <= 50 and p.max_order <= p.max_inventory
        assert -10 <= p.risk_tolerance <= 10
        assert not p.perishable
        assert p.holding_cost == max(0.01, round(0.3 * inst.item_cost / 365, 2))
        assert inst.context and "\n" not in inst.context
        if p.demand.kind == "normal":
            assert p.demand.sd_param == pytest.approx(p.demand.mean_param / 3, abs=0.06)


def test_distributions_are_mixed_as_documented(many):
    kinds = {k: sum(i.problem.demand.kind == k for i in many) / len(many) for k in
             ("normal", "poisson", "uniform", "deterministic")}
    assert all(v > 0.03 for v in kinds.values()), kinds
    ratios = np.array([i.critical_ratio for i in many])
    core = np.mean((ratios >= 0.79) & (ratios <= 0.91))
    assert 0.75 <= core < 1.0  # mostly 0.8-0.9, with outliers
    setups = np.array([i.problem.setup_cost for i in many])
    assert 0.75 <= np.mean(setups <= 5) < 1.0
    lost = np.mean([i.problem.lost_sales for i in many])
    assert 0.35 < lost < 0.65


def test_seeding_is_per_index_and_stable():
    a = generate_instance("s", 7)
    assert a == generate_instance("s", 7)
    assert generate_instances(10, "s")[7] == a  # independent of how many are generated
    assert generate_instance("s", 8) != a
    assert generate_instance("other", 7) != a
    assert derive_seed("x", 1) == derive_seed("x", 1) != derive_seed("x", 2)
    assert Instance.from_dict(json.loads(json.dumps(a.to_dict()))) == a


def test_paper_cells_design():
    insts = generate_instances(9, "cells", design="paper-cells")
    assert [i.cell for i in insts] == list(PAPER_CELLS) * 3
    for i in insts:
        kind, lead = i.cell.split("-L")
        assert i.problem.demand.kind == kind and i.problem.lead_time == int(lead)
    with pytest.raises(ValueError, match="design"):
        generate_instance("x", 0, design="nope")


GOOD = {"context": "A small surf shop selling wetsuits.", "item_cost": 180,
        "parameters": {"time_horizon": "90 days", "demand_type": "random", "demand_distribution": "poisson(5)",
                       "perishability": "non_perishable", "state_transition_model": "lost_sale",
                       "holding_cost": 0.15, "penalty_cost": 0.85, "setup_cost": 3, "lead_time": 4,
                       "max_inventory": 60, "max_order": 30, "risk_tolerance": 2}}


def test_llm_generator_retries_invalid_output_then_validates():
    bad = json.loads(json.dumps(GOOD))
    bad["parameters"]["max_order"] = 90  # above capacity: the core must reject it
    with ScriptedOpenAIServer([json.dumps(bad), "```json\n" + json.dumps(GOOD) + "\n```"]) as srv:
        gen = LLMGenerator(LLMClient(LLMConfig(base_url=srv.base_url, model="scripted", max_retries=0)))
        inst = gen.generate(3, seed=1)
        assert isinstance(inst, Instance) and inst.source == "llm"
        assert inst.problem.max_order == 30 and inst.problem.demand.describe() == "poisson(5)"
        assert "max_order" in srv.requests[1]["messages"][-1]["content"]  # the error was fed back


def test_llm_generator_records_failure():
    with ScriptedOpenAIServer(["not json", json.dumps({"context": "x"}), json.dumps({"parameters": {}})]) as srv:
        gen = LLMGenerator(LLMClient(LLMConfig(base_url=srv.base_url, model="scripted", max_retries=0)),
                           max_attempts=3)
        res = gen.generate(0)
    assert isinstance(res, GenerationFailure)
    assert res.attempts == 3 and len(res.errors) == 3
