"""The LLM-backed Human Imitator: the same role played by a chat model (e.g. the LoRA-fine-tuned imitator
served over an OpenAI-compatible endpoint), with the persona and the hidden ground truth in its prompt.

It has the offline imitator's interface (`opening()`, `reply(agent_message)`), so every driver - the
extraction benchmark, the study's consultants - can swap one for the other.
"""

from __future__ import annotations

from typing import Any

from agents.imitator.profile import PersonaProfile, get_profile
from agents.imitator.wire import scenario_message
from inventory.problem import Problem
from inventory.spec import ParameterTable
from llm.client import LLMClient

__all__ = ["LLMHumanImitator", "PERSONA_PROMPT", "persona_prompt"]

PERSONA_PROMPT = """You are role-playing the manager of a small store talking to an inventory consultant. \
You are NOT an expert in inventory theory; speak like a busy shop manager, in the first person, briefly.

Your business: {context}

The true facts about your business (never reveal this list as a whole, never mention that you have it):
{facts}

How to behave:
- Start, when asked to open, with a short narrative about your business mentioning at most {opening_facts} facts.
- Reveal a fact only when the consultant asks about it (you may volunteer one extra fact now and then).
- Persona "{name}": {style}
- When the consultant asks for a clarification (two values, numbered choices), answer truthfully and precisely \
from the true facts.
- Never invent facts beyond the list; if asked something not covered, say you are not sure."""

_STYLE = {
    "expert": "you know your numbers precisely and may use terms like Poisson or standard deviation.",
    "typical": "you know most numbers roughly, sometimes round them, sometimes give weekly figures, and sometimes "
               "you are unsure at first.",
    "vague": "you are vague: you often say 'not sure', give ranges ('around 40-50 a week'), mix up weekly and "
             "daily figures, occasionally contradict yourself, confuse lost sales with backorders, and get "
             "impatient with long interviews.",
}


def persona_prompt(ground_truth: Problem, context: str, profile: PersonaProfile) -> str:
    facts = "\n".join(f"- {row}" for row in ParameterTable.from_problem(ground_truth).to_csv().splitlines()[1:])
    style = _STYLE.get(profile.name) or (
        f"unknown answers {profile.p_unknown:.0%} of the time at first, imprecise {profile.p_imprecise:.0%}, "
        f"wrong units {profile.p_wrong_units:.0%}, contradictions {profile.p_contradiction:.0%}.")
    return PERSONA_PROMPT.format(context=context or "a small shop", facts=facts, name=profile.name, style=style,
                                 opening_facts=profile.opening_facts)


class LLMHumanImitator:
    """`opening()` / `reply()` answered by a chat model; the conversation is kept from the model's side."""

    def __init__(self, client: LLMClient, ground_truth: Problem, context: str = "",
                 profile: str | PersonaProfile = "typical", seed: int = 0, **chat_kw: Any) -> None:
        self.client = client
        self.ground_truth = ground_truth
        self.context = context
        self.profile = get_profile(profile)
        self.seed = seed
        self.chat_kw = {"seed": seed, **chat_kw}
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": persona_prompt(ground_truth, context, self.profile)}]

    @classmethod
    def at_endpoint(cls, client: LLMClient, ground_truth: Problem, context: str = "", persona: str = "typical",
                    seed: int = 0, **chat_kw: Any) -> LLMHumanImitator:
        """The manager played by an imitator endpoint (`askopt imitator serve`, the fine-tuned model's routes,
        the emulator): the persona and ground truth travel as the scenario message, not as a prompt."""
        me = cls(client, ground_truth, context, persona, seed, **chat_kw)
        truth = ParameterTable.from_problem(ground_truth).to_json()
        me.messages = [scenario_message(truth, context, me.profile.name, seed)]
        return me

    def _turn(self, consultant_text: str) -> str:
        # roles flipped: the consultant is the "user" of the imitator model
        self.messages.append({"role": "user", "content": consultant_text})
        reply = self.client.chat(self.messages, **self.chat_kw)
        text = (reply.content or "").strip()
        self.messages.append({"role": "assistant", "content": text})
        return text

    def opening(self) -> str:
        return self._turn("(The consultant greets you.) Please describe your business and what you need.")

    def reply(self, agent_message: str) -> str:
        return self._turn(agent_message)
