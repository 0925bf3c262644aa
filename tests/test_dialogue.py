"""run_hybrid_dialogue for the study, and the consult / simulate CLI (piped stdin, in-process and subprocess)."""

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents.dialogue import DialogueResult, run_hybrid_dialogue
from agents.generator import generate_instance
from agents.imitator import PERSONAS
from experiments.cli import main
from experiments.cli_dialogue import run_consult
from inventory.spec import ParameterTable

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("persona", ["expert", "typical", "vague"])
def test_hybrid_dialogue_completes_and_scores(persona):
    inst = generate_instance(0, 4)
    r = run_hybrid_dialogue(inst.problem, inst.context, persona, seed=4)
    assert isinstance(r, DialogueResult)
    assert r.status == "complete" and r.problem is not None and r.table.is_complete()
    assert set(r.field_scores) == set(ParameterTable().rows)
    assert r.turns == sum(1 for who, _ in r.transcript if who == "agent") - 1
    assert r.transcript[0][0] == "agent" and r.transcript[1][0] == "user"


def test_hybrid_dialogue_accepts_profiles_and_limits_turns():
    inst = generate_instance(0, 1)
    r = run_hybrid_dialogue(inst.problem, inst.context, PERSONAS["vague"].with_(p_unknown=1.0), seed=1, max_turns=3)
    assert r.status == "max_turns" and r.turns == 3 and r.problem is None


def test_hybrid_dialogue_records_backend_failure():
    class Broken:
        name = "broken"

        def propose(self, agent, message):
            raise RuntimeError("model down")

    inst = generate_instance(0, 2)
    r = run_hybrid_dialogue(inst.problem, inst.context, "typical", seed=0, extractor=Broken())
    assert r.status == "failed" and "model down" in r.reason


ANSWERS = ["We plan 90 days ahead.", "It varies.", "About 6 a day.", "like walk-in customers, it varies", "no",
           "they buy elsewhere", "$0.5 per unit per day", "$5 per lost unit", "$20 per order", "3 days", "60 units",
           "40", "0", "yes"]


def test_consult_in_process_with_piped_stdin(tmp_path, make_score, make_result):
    ss = make_score("ss", "(s=20, S=45)", {"s": 20, "S": 45}, 300.0)
    seen = []

    def fake_optimize(problem, out_dir):
        seen.append(problem)
        return make_result(problem, [ss], ss, ss)

    out = io.StringIO()
    rc = run_consult(io.StringIO("\n".join([*ANSWERS, "why?", "quit"]) + "\n"), out, out_dir=tmp_path,
                     optimize=fake_optimize)
    text = out.getvalue()
    assert rc == 0 and seen and seen[0].lead_time == 3
    assert "falls below 20" in text and text.rstrip().endswith("Goodbye.")
    assert {"extracted_params.csv", "conversation_log.txt", "interpret.txt"} <= {p.name for p in tmp_path.iterdir()}


def test_consult_stops_on_eof_mid_interview(tmp_path):
    out = io.StringIO()
    assert run_consult(io.StringIO("We plan 90 days ahead.\n"), out, out_dir=tmp_path) == 0
    assert "Goodbye." in out.getvalue()
    assert "90" in (tmp_path / "extracted_params.csv").read_text()


def test_consult_subprocess_end_to_end(tmp_path):
    """The real command, real optimisation (no DQN), stdin piped and closed."""
    env = {**os.environ, "ASKOPT_LLM_BASE_URL": "", "OPENAI_BASE_URL": ""}
    proc = subprocess.run([sys.executable, "-m", "experiments.cli", "consult", "--out", str(tmp_path)],
                          input="\n".join([*ANSWERS, "no"]) + "\n", capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=400)
    assert proc.returncode == 0, proc.stderr
    assert "(s,S) policy" in proc.stdout or "order-up-to" in proc.stdout
    assert "Do you have any other questions?" in proc.stdout
    assert (tmp_path / "interpret.txt").exists() and (tmp_path / "extracted_params.csv").exists()


def test_simulate_cli(capsys):
    assert main(["simulate", "--persona", "expert", "--seed", "1", "--instance", "2", "--no-optimize"]) == 0
    out = capsys.readouterr().out
    assert "manager> Hi." in out and "status=complete" in out
    assert main(["simulate", "--persona", "nobody"]) == 2
    assert "--persona" in capsys.readouterr().err
