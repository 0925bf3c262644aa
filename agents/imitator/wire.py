"""The scenario protocol every imitator endpoint speaks (our Ray Serve apps, vLLM serving the fine-tuned model
behind serving/imitator_model_app.py's routes, the LLM emulator).

An OpenAI chat request whose system message carries `{"askopt_scenario": {...}}` (the hidden ground truth, the
business context, the persona and a seed); "user" messages are the consultant, "assistant" messages the
manager's earlier replies. Written here, below both the clients (agents) and the servers (serving), so that
the two sides share one definition.
"""

from __future__ import annotations

import json

SCENARIO_KEY = "askopt_scenario"


def scenario_message(ground_truth: dict, context: str, persona: str = "typical", seed: int = 0) -> dict:
    """The system message that tells the imitator endpoint whom to play (hidden ground truth + persona)."""
    payload = {SCENARIO_KEY: {"ground_truth": ground_truth, "context": context, "persona": persona, "seed": seed}}
    return {"role": "system", "content": json.dumps(payload)}
