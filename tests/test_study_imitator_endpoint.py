"""`askopt study --imitator-url`: the manager played by an imitator endpoint (scenario protocol) instead of the
in-process persona simulator. Against the LLM emulator (a real local HTTP server whose imitator role is the
seeded persona simulator) the dialogues must be the same as in-process, word for word."""

from __future__ import annotations

import argparse

import httpx
import pytest

from evaluation.study import StudyConfig, plan_study
from evaluation.study_units import run_dialogue
from experiments import cli_study
from serving.llm_emulator import EmulatorServer


@pytest.fixture(scope="module")
def emulator():
    with EmulatorServer({"latency_mean": 0.0}) as srv:
        yield srv


def _imitator_requests(srv) -> int:
    return httpx.get(srv.base_url + "/emulator/stats").json()["roles"].get("imitator", 0)


@pytest.mark.parametrize("treatment", ["A", "B"])
def test_endpoint_imitator_gives_the_in_process_dialogue(emulator, treatment):
    base = dict(name="imit", instances=2, trials=1, treatments=(treatment,), replications=50, max_turns=25)
    offline = StudyConfig(**base)
    served = StudyConfig(**base, imitator={"base_url": emulator.base_url, "model": "auto"})
    assert offline.offline and not served.offline
    plan = plan_study(offline)
    before, turns = _imitator_requests(emulator), 0
    for unit in plan.units:
        inst = plan.by_instance()[unit.instance_id]
        a = run_dialogue(unit, inst, offline)
        b = run_dialogue(unit, inst, served)
        assert b.status == a.status and b.reason == a.reason
        assert b.transcript == a.transcript and len(b.transcript) >= 2
        turns += b.turns
    # the manager's lines came over HTTP: one imitator request per consultant turn, plus the opening
    assert _imitator_requests(emulator) - before >= turns > 0


def test_imitator_url_reaches_the_config_and_bad_urls_are_refused(tmp_path):
    parser = argparse.ArgumentParser()
    cli_study.register(parser.add_subparsers())
    args = parser.parse_args(["study", "--out", str(tmp_path / "r"), "--imitator-url", "http://127.0.0.1:9/v1"])
    cfg = cli_study.config_from_cli(args)
    assert cfg.imitator["base_url"] == "http://127.0.0.1:9/v1" and cfg.imitator["model"] == "auto"
    assert cfg.llm is None and not cfg.offline
    assert cfg.to_json()["imitator"]["base_url"] == "http://127.0.0.1:9/v1"
    bad = parser.parse_args(["study", "--out", str(tmp_path / "r2"), "--imitator-url", "ftp://x"])
    from experiments.cli import UserInputError

    with pytest.raises(UserInputError, match=r"--imitator-url: .*must start with http"):
        cli_study.config_from_cli(bad)  # the CLI prints this line and exits 2
