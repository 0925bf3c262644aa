"""`askopt consult` driven like a person at a terminal (pexpect): interview, read-back, policy, then "how many
should I order now" in five phrasings (each must get the policy tool's number) and a "what if" that re-optimises.
Real optimisation on a small problem, offline."""

import os
import re
import sys
from pathlib import Path

import pexpect
import pytest

ROOT = Path(__file__).resolve().parent.parent
PROMPT = "consultant> "

ANSWERS = ["We plan 30 days ahead.", "It varies from day to day.", "About 3 a day, Poisson.", "No, nothing spoils.",
           "They wait for the next delivery.", "$0.20 per unit per day", "$2 per unit per day of waiting",
           "$5 per order", "1 day", "We can store 20 units.", "At most 10 units per order.", "0", "yes"]
# (question, on hand, in transit)
PHRASINGS = [
    ("How many should I order now? I have 2 on hand and 0 on order.", 2, 0),
    ("what should I order today - 1 unit in stock, nothing in transit", 1, 0),
    ("We've got 4 left on the shelf and 1 on the way, how much do I buy?", 4, 1),
    ("How much to order? There are 0 here and 0 coming.", 0, 0),
    ("Should I place an order? I still have three, with two on order.", 3, 2),
]


@pytest.mark.timeout(600)
def test_consult_how_many_now_in_five_phrasings_and_what_if(tmp_path):
    env = {**os.environ, "ASKOPT_LLM_BASE_URL": "", "OPENAI_BASE_URL": "", "PYTHONUNBUFFERED": "1"}
    child = pexpect.spawn(sys.executable, ["-m", "experiments.cli", "consult", "--out", str(tmp_path)], cwd=str(ROOT),
                          env=env, encoding="utf-8", timeout=400)
    try:
        child.expect(PROMPT)
        child.expect("helps.")
        for answer in ANSWERS[:-1]:
            child.sendline(answer)
        child.expect("Is all of this right")
        child.sendline(ANSWERS[-1])
        child.expect(r"\(s,S\) policy with s = (\d+) \(the reorder point\) and S = (\d+)")
        s, S = int(child.match.group(1)), int(child.match.group(2))
        child.expect("Do you have any other questions")
        for question, on_hand, transit in PHRASINGS:
            child.sendline(question)
            child.expect(r"order (\d+) units")
            got = int(child.match.group(1))
            position = on_hand + transit
            expected = 0 if position >= s else min(S - position, 10, 20 - position)
            assert got == expected, (question, got, expected, s, S)
            child.expect("Do you have any other questions")
        child.sendline("What if the lead time were 3 days?")
        child.expect(r"I re-ran the optimisation with lead time = 3\. Before: \(s=(\d+), S=(\d+)\).*?After: "
                     r"\(s=(\d+), S=(\d+)\)")
        assert (int(child.match.group(1)), int(child.match.group(2))) == (s, S)
        child.expect("Do you have any other questions")
        child.sendline("quit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    log = (tmp_path / "interpret.txt").read_text()
    assert len(re.findall(r"USER: ", log)) == len(PHRASINGS) + 1
