"""Diagnosis that ranks: Farkas shares of IIS members, the root-rank metric, the heuristic's ranking."""

from __future__ import annotations

import math

import pytest

from ordebug.agents.heuristic import HeuristicAgent
from ordebug.env import DebugEnv
from ordebug.iis import certificate_shares, compute_iis
from ordebug.metrics import episode_metrics, root_rank
from ordebug.testing import small_instance


def test_root_rank_metric():
    assert root_rank({"row:a"}, ["row:b", "row:a", "row:a"]) == (2.0, 0.5)
    assert root_rank({"row:z"}, ["row:b", "row:a"]) == (3.0, 0.0)
    assert all(math.isnan(v) for v in root_rank(set(), ["row:a"]))
    assert all(math.isnan(v) for v in root_rank({"row:a"}, []))


@pytest.mark.parametrize("family,operator", [("inventory", "tighten_rhs"), ("production", "conflicting_bound"),
                                             ("transportation", "contradictory_row")])
def test_certificate_puts_the_sabotaged_element_first(family, operator):
    inst = small_instance(family, operator)
    res = compute_iis(inst.model)
    shares = certificate_shares(inst.model, res.members)
    assert shares and abs(sum(shares.values()) - 1.0) < 1e-6
    assert set(shares) <= res.elements()
    assert max(shares, key=shares.get) in inst.root


def test_heuristic_reports_a_ranking_with_the_root_first():
    inst = small_instance("inventory", "tighten_rhs")
    env = DebugEnv(inst)
    iis = env.step({"op": "get_iis"})
    assert iis["certificate"] and max(iis["certificate"], key=iis["certificate"].get) in inst.root
    env = DebugEnv(inst)
    HeuristicAgent().run(env)
    m = episode_metrics(inst, env.log)
    assert env.log.diagnosis_ranking and m["root_rank"] == 1.0 and m["root_rr"] == 1.0
