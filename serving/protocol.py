"""The OpenAI chat-completions wire format, the small part our endpoints speak.

Kept separate from the apps so the CPU imitator engine, the consultant API and tests share one definition.
"""

from __future__ import annotations

import json
import time
import uuid

from pydantic import BaseModel, Field

from agents.imitator.wire import SCENARIO_KEY, scenario_message

__all__ = ["SCENARIO_KEY", "scenario_message"]  # the scenario protocol lives with the imitator (agents.imitator.wire)



MAX_MESSAGES = 200  # a dialogue is capped at far fewer turns
MAX_CONTENT_CHARS = 16_000  # one message (the scenario system message included)


class ChatMessage(BaseModel):
    role: str = Field(max_length=32)
    content: str | None = Field(default=None, max_length=MAX_CONTENT_CHARS)


class ChatRequest(BaseModel):
    model: str = Field(max_length=200)
    messages: list[ChatMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1, le=1_000_000)
    seed: int | None = Field(default=None, ge=0, le=2**63 - 1)
    stream: bool = False


def completion_response(model: str, text: str, prompt_chars: int) -> dict:
    """A non-streaming chat.completion object; token counts approximated at 4 characters per token."""
    prompt_tokens = max(1, prompt_chars // 4)
    completion_tokens = max(1, len(text) // 4)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def error_body(message: str, kind: str = "invalid_request_error", param: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": param, "code": None}}


def read_scenario(messages: list[ChatMessage]) -> dict | None:
    for m in messages:
        if m.role == "system" and m.content and SCENARIO_KEY in m.content:
            try:
                return json.loads(m.content)[SCENARIO_KEY]
            except (ValueError, KeyError, TypeError):
                return None
    return None


def chat_scenario(request: ChatRequest) -> tuple[dict | None, dict | None]:
    """(scenario, None) for a chat request an imitator endpoint can answer, else (None, error body for a 400).

    Both imitator engines (the persona simulator and the fine-tuned model) speak the same scenario protocol, so the
    request checks live here once."""
    if request.stream:
        return None, error_body("stream: streaming is not supported; send stream=false", param="stream")
    scenario = read_scenario(request.messages)
    if scenario is None:
        return None, error_body("messages: a system message with an askopt_scenario object is required "
                                "(see serving.protocol.scenario_message)", param="messages")
    return scenario, None


def models_list(model_name: str) -> dict:
    """The /v1/models body of an endpoint serving one model."""
    return {"object": "list", "data": [{"id": model_name, "object": "model", "owned_by": "askopt"}]}
