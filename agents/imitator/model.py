"""The fine-tuned imitator as a Python object: a merged checkpoint answering in the simulator's interface.

`ModelImitator(path)` loads the plain (merged) checkpoint once; `reply_for(scenario, history)` renders the same
prompt the corpus was built with (facts + persona header, the latest utterances, "Manager:") and decodes
greedily, or samples with the scenario's seed. `ModelImitatorSession` wraps one scenario with `opening()` /
`reply()` so any driver of `HumanImitator` can use the trained model directly.
"""

from __future__ import annotations

from pathlib import Path

from agents.imitator.corpus import facts_line, render_prompt

__all__ = ["ModelImitator", "ModelImitatorSession", "OPENING_QUESTION"]

OPENING_QUESTION = "Please describe your business and what you need."


class ModelImitator:
    def __init__(self, path: str | Path, max_new_tokens: int = 64, threads: int = 1) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        torch.set_num_threads(threads)
        self.path = str(path)
        self.tok = AutoTokenizer.from_pretrained(self.path)
        if self.tok.pad_token is None:
            self.tok.pad_token = self.tok.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(self.path, dtype=torch.float32)
        self.model.eval()
        self.max_new_tokens = max_new_tokens
        self.max_length = int(getattr(self.model.config, "max_position_embeddings", 512) or 512)

    def reply_for(self, problem, persona: str, history: list[tuple[str, str]], seed: int = 0,
                  temperature: float = 0.0) -> str:
        import torch

        prompt = render_prompt(history, facts_line(problem), persona)
        ids = self.tok(prompt, add_special_tokens=False)["input_ids"][-(self.max_length - self.max_new_tokens):]
        x = torch.tensor([ids])
        kw = {"do_sample": temperature > 0}
        if temperature > 0:
            torch.manual_seed(seed)
            kw["temperature"] = temperature
        with torch.no_grad():
            gen = self.model.generate(input_ids=x, attention_mask=torch.ones_like(x), max_new_tokens=self.max_new_tokens,
                                      pad_token_id=self.tok.pad_token_id, eos_token_id=self.tok.eos_token_id, **kw)
        text = self.tok.decode(gen[0, x.shape[1]:], skip_special_tokens=True)
        text = text.split("\n")[0].split("Consultant:")[0].strip()
        return text or "Sorry, could you say that again?"


class ModelImitatorSession:
    """`opening()` / `reply()` for one scenario, like `HumanImitator`."""

    def __init__(self, engine: ModelImitator, problem, context: str = "", persona: str = "typical",
                 seed: int = 0) -> None:
        self.engine, self.problem, self.context, self.persona, self.seed = engine, problem, context, persona, seed
        self.history: list[tuple[str, str]] = []

    def _turn(self, question: str) -> str:
        self.history.append(("consultant", question))
        text = self.engine.reply_for(self.problem, self.persona, self.history, self.seed)
        self.history.append(("manager", text))
        return text

    def opening(self) -> str:
        return self._turn(OPENING_QUESTION)

    def reply(self, agent_message: str) -> str:
        return self._turn(agent_message)
