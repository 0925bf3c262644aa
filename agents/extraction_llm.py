"""The LLM backend of the Information Extraction Agent (the paper's prompt, JSON validated with pydantic).

The model sees the system prompt (`agents.prompts.EXTRACTION_SYSTEM_PROMPT`), the current table as CSV, and
the conversation so far; it answers {reasoning, updated_table, corrections, action, next_prompt}. Its table is
only a proposal: the differences from the current table go back to `ExtractionAgent`, which validates each
value with the core and applies the same conflict rules as for the offline backend. Fields the model marks
"conflict" become clarifications worded by the model (its next_prompt).
"""

from __future__ import annotations

from typing import Any, Literal

import pydantic

from agents.extraction import ExtractionAgent, Proposal
from agents.prompts import extraction_system_prompt
from inventory.problem import ParameterError
from inventory.spec import PARAMETERS, canonical_name, format_value, normalise_value
from llm.client import LLMClient

__all__ = ["ExtractionReply", "LLMExtractor", "TableCell"]


class TableCell(pydantic.BaseModel):
    value: str | float | int | None = None
    status: Literal["undefined", "defined", "conflict"] = "undefined"

    @pydantic.model_validator(mode="before")
    @classmethod
    def _bare_value(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return data
        return {"value": data, "status": "undefined" if data in (None, "") else "defined"}


class ExtractionReply(pydantic.BaseModel):
    """The JSON the extraction LLM must return (the paper's four fields, plus explicit corrections)."""

    reasoning: str = ""
    updated_table: dict[str, TableCell]
    corrections: list[str] = pydantic.Field(default_factory=list)
    action: Literal["ASK_NEXT_QUESTION", "ASK_CLARIFICATION", "TERMINATE"]
    next_prompt: str

    @pydantic.field_validator("updated_table")
    @classmethod
    def _known_fields(cls, table: dict[str, TableCell]) -> dict[str, TableCell]:
        out = {}
        for key, cell in table.items():
            try:
                out[canonical_name(key)] = cell
            except ParameterError as exc:
                raise ValueError(f"unknown parameter {key!r}; use exactly: {', '.join(PARAMETERS)}") from exc
        return out


class LLMExtractor:
    """Extraction backend calling a chat model through `LLMClient.json` (retries and JSON repair included)."""

    name = "llm"

    def __init__(self, client: LLMClient, max_repairs: int = 2) -> None:
        self.client = client
        self.max_repairs = max_repairs
        self.replies: list[ExtractionReply] = []

    def messages(self, agent: ExtractionAgent, message: str) -> list[dict[str, Any]]:
        convo = "\n".join(f"{who.upper()}: {text}" for who, text in agent.transcript[:-1])
        return [
            {"role": "system", "content": extraction_system_prompt()},
            {"role": "user", "content": (f"Current parameter table (CSV):\n{agent.table.to_csv()}\n"
                                         f"Conversation so far:\n{convo}\n\n"
                                         f"Manager's latest message:\n{message}")},
        ]

    def propose(self, agent: ExtractionAgent, message: str) -> Proposal:
        reply = self.client.json(self.messages(agent, message), ExtractionReply, max_repairs=self.max_repairs)
        self.replies.append(reply)
        values: dict[str, object] = {}
        flagged: dict[str, str] = {}
        for name, cell in reply.updated_table.items():
            if cell.status == "conflict":
                flagged[name] = reply.next_prompt
                continue
            if cell.value in (None, "") or cell.status == "undefined":
                continue
            current = agent.table.get(name)
            if current is not None and agent.table.status(name) == "defined":
                try:
                    if format_value(name, normalise_value(name, cell.value)) == format_value(name, current):
                        continue  # unchanged
                except ParameterError:
                    pass  # invalid: let the agent's validator report it
            values[name] = cell.value
        corrections = [canonical_name(c) for c in reply.corrections if _is_param(c)]
        return Proposal(values=values, reasoning=reply.reasoning, flagged=flagged, corrections=corrections,
                        backend_action=reply.action, backend_prompt=reply.next_prompt)


def _is_param(name: str) -> bool:
    try:
        canonical_name(name)
        return True
    except ParameterError:
        return False
