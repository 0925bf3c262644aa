"""LLMClient against a real local HTTP server speaking the OpenAI protocol (no mocked client objects)."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass

import pydantic
import pytest

from llm.client import (
    AUTO_MODEL,
    JSONReplyError,
    LLMClient,
    LLMConfig,
    LLMError,
    ToolCall,
    ToolLoopError,
    Transcript,
    add_llm_arguments,
    config_from_args,
    extract_json_object,
    run_tool_loop,
    tool_result_message,
)

try:
    from tests.llm_server import ScriptedOpenAIServer, approx_tokens
except ImportError:  # pytest's default rootdir-less import mode puts tests/ itself on sys.path
    from llm_server import ScriptedOpenAIServer, approx_tokens  # type: ignore[no-redef]

USER = [{"role": "user", "content": "How many units of SKU-1 should we order?"}]
STOCK_TOOL = {
    "type": "function",
    "function": {
        "name": "get_stock",
        "description": "Current on-hand stock for a SKU",
        "parameters": {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
    },
}


class OrderPlan(pydantic.BaseModel):
    sku: str
    quantity: int = pydantic.Field(ge=0)


def make_client(srv: ScriptedOpenAIServer, transcript: Transcript | None = None, **cfg) -> LLMClient:
    cfg.setdefault("backoff_base", 0.01)  # real backoff shape, test-sized delays
    cfg.setdefault("backoff_max", 0.05)
    cfg.setdefault("timeout", 5.0)
    return LLMClient(LLMConfig(base_url=srv.base_url, model="scripted", **cfg), transcript)


@pytest.fixture(autouse=True)
def _clean_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ASKOPT_LLM_BASE_URL", "ASKOPT_LLM_MODEL", "ASKOPT_LLM_API_KEY", "ASKOPT_LLM_TIMEOUT",
                 "ASKOPT_LLM_MAX_RETRIES", "ASKOPT_LLM_TEMPERATURE", "ASKOPT_LLM_JSON_MODE",
                 "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


# --------------------------------------------------------------------------------------------------------
# chat, usage, transcripts
# --------------------------------------------------------------------------------------------------------
def test_plain_chat_returns_content_and_sends_config() -> None:
    with ScriptedOpenAIServer(["Order 40 units."]) as srv:
        reply = make_client(srv, temperature=0.2).chat(USER, max_tokens=64)
        assert reply.content == "Order 40 units."
        assert reply.tool_calls == []
        assert reply.finish_reason == "stop"
        assert reply.model == "scripted"
        body = srv.requests[0]
        assert body["model"] == "scripted"
        assert body["messages"] == USER
        assert body["temperature"] == 0.2
        assert body["max_tokens"] == 64
        assert "tools" not in body
        assert srv.request_headers[0]["authorization"] == "Bearer EMPTY"  # local servers need no real key


def test_api_key_is_sent_as_bearer_token() -> None:
    with ScriptedOpenAIServer(["ok"]) as srv:
        make_client(srv, api_key="sk-test-123").chat(USER)
        assert srv.request_headers[0]["authorization"] == "Bearer sk-test-123"


def test_token_usage_per_reply_and_running_totals() -> None:
    with ScriptedOpenAIServer(["short", "a somewhat longer second answer"]) as srv:
        client = make_client(srv)
        first = client.chat(USER)
        second = client.chat(USER + [{"role": "assistant", "content": "short"}, {"role": "user", "content": "more"}])
        assert first.usage.prompt_tokens == approx_tokens(USER[0]["content"])
        assert first.usage.completion_tokens == approx_tokens("short")
        assert second.usage.completion_tokens == approx_tokens("a somewhat longer second answer")
        assert second.usage.prompt_tokens > first.usage.prompt_tokens
        u = client.usage
        assert u.calls == 2
        assert u.prompt_tokens == first.usage.prompt_tokens + second.usage.prompt_tokens
        assert u.completion_tokens == first.usage.completion_tokens + second.usage.completion_tokens
        assert u.total_tokens == u.prompt_tokens + u.completion_tokens
        assert u.retries == 0 and u.failed_calls == 0


def test_transcript_records_exchanges_and_errors(tmp_path) -> None:
    transcript = Transcript()
    with ScriptedOpenAIServer(["first answer", {"error": "bad request: context too long", "status": 400}]) as srv:
        client = make_client(srv, transcript)
        client.chat(USER, tools=[STOCK_TOOL])
        with pytest.raises(LLMError):
            client.chat(USER)
    assert len(transcript) == 2
    ok, failed = transcript[0], transcript[1]
    assert ok.request_messages == USER
    assert ok.reply_content == "first answer"
    assert ok.tools == ["get_stock"]
    assert ok.error is None and ok.latency_s > 0 and ok.prompt_tokens > 0
    assert failed.reply_content is None
    assert "context too long" in failed.error
    assert client.usage.failed_calls == 1

    path = transcript.to_jsonl(tmp_path / "sub" / "t.jsonl")
    lines = path.read_text().splitlines()
    assert [json.loads(line)["reply_content"] for line in lines] == ["first answer", None]
    assert Transcript.from_jsonl(path)[1].error == failed.error

    text = transcript.text()
    assert "How many units of SKU-1" in text
    assert ">>> assistant: first answer" in text
    assert "!!! " in text and "context too long" in text


def test_transcript_can_be_shared_between_clients() -> None:
    shared = Transcript()
    with ScriptedOpenAIServer(["a", "b"]) as srv:
        make_client(srv, shared).chat(USER)
        make_client(srv, shared).chat(USER)
    assert [e.reply_content for e in shared] == ["a", "b"]


def test_auto_model_resolves_from_models_endpoint() -> None:
    with ScriptedOpenAIServer(["hi"], model="served-llama") as srv:
        client = LLMClient(LLMConfig(base_url=srv.base_url, model=AUTO_MODEL))
        assert client.chat(USER).content == "hi"
        assert client.model == "served-llama"
        assert srv.requests[0]["model"] == "served-llama"


# --------------------------------------------------------------------------------------------------------
# tool calls
# --------------------------------------------------------------------------------------------------------
def test_tool_calls_are_parsed() -> None:
    script = [{"content": "checking", "tool_calls": [
        {"name": "get_stock", "arguments": {"sku": "SKU-1"}},
        {"name": "get_stock", "arguments": {"sku": "SKU-2"}, "id": "call_custom"},
    ]}]
    with ScriptedOpenAIServer(script) as srv:
        reply = make_client(srv).chat(USER, tools=[STOCK_TOOL], tool_choice="auto")
        assert srv.requests[0]["tools"] == [STOCK_TOOL]
        assert srv.requests[0]["tool_choice"] == "auto"
    assert reply.content == "checking"
    assert reply.finish_reason == "tool_calls"
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("get_stock", {"sku": "SKU-1"}), ("get_stock", {"sku": "SKU-2"})]
    assert reply.tool_calls[1].id == "call_custom"
    assert all(c.error is None for c in reply.tool_calls)
    msg = reply.to_message()
    assert msg["role"] == "assistant"
    assert json.loads(msg["tool_calls"][0]["function"]["arguments"]) == {"sku": "SKU-1"}


@pytest.mark.parametrize("raw", ['{"sku": "SKU-1"', '["SKU-1"]'])
def test_unparseable_tool_arguments_give_a_feedable_error(raw: str) -> None:
    with ScriptedOpenAIServer([{"tool_calls": [{"name": "get_stock", "arguments": raw}]}]) as srv:
        call = make_client(srv).chat(USER, tools=[STOCK_TOOL]).tool_calls[0]
    assert call.arguments == {}
    assert call.raw_arguments == raw
    assert call.error is not None and "get_stock" in call.error


def test_tool_loop_runs_handlers_and_feeds_errors_back() -> None:
    seen: list[str] = []

    def get_stock(sku: str) -> dict:
        seen.append(sku)
        return {"sku": sku, "on_hand": 12}

    def flaky(**_: object) -> None:
        raise RuntimeError("warehouse DB offline")

    script = [
        {"tool_calls": [{"name": "get_stock", "arguments": {"sku": "SKU-1"}}]},
        {"tool_calls": [{"name": "get_forecast", "arguments": {"sku": "SKU-1"}},
                        {"name": "flaky", "arguments": {}},
                        {"name": "get_stock", "arguments": "{not json"}]},
        "Order 28 units of SKU-1.",
    ]
    with ScriptedOpenAIServer(script) as srv:
        client = make_client(srv)
        final, convo = run_tool_loop(client, USER, [STOCK_TOOL], {"get_stock": get_stock, "flaky": flaky})
        second, third = srv.requests[1]["messages"], srv.requests[2]["messages"]

    assert final.content == "Order 28 units of SKU-1."
    assert seen == ["SKU-1"]  # the malformed call never reached the handler
    tool_msg = second[-1]
    assert tool_msg["role"] == "tool" and json.loads(tool_msg["content"]) == {"sku": "SKU-1", "on_hand": 12}
    assert tool_msg["tool_call_id"] == second[-2]["tool_calls"][0]["id"]
    errors = [json.loads(m["content"])["error"] for m in third[-3:]]
    assert "unknown tool 'get_forecast'" in errors[0] and "get_stock" in errors[0]
    assert "warehouse DB offline" in errors[1]
    assert "not valid JSON" in errors[2]
    assert convo[-1] == {"role": "assistant", "content": "Order 28 units of SKU-1."}
    assert len(convo) == len(USER) + 1 + 1 + 1 + 3 + 1
    assert len(USER) == 1  # the caller's list is not mutated


def test_tool_loop_is_bounded() -> None:
    call = {"tool_calls": [{"name": "get_stock", "arguments": {"sku": "A"}}]}
    with ScriptedOpenAIServer([call] * 5) as srv:
        with pytest.raises(ToolLoopError, match="max_steps=3") as info:
            run_tool_loop(make_client(srv), USER, [STOCK_TOOL], {"get_stock": lambda sku: 1}, max_steps=3)
        assert len(srv.requests) == 3
    assert info.value.last_reply.tool_calls[0].name == "get_stock"
    assert info.value.messages[-1]["role"] == "tool"


def test_tool_result_message_serialises_results() -> None:
    @dataclass
    class Stock:
        sku: str
        on_hand: int

    call = ToolCall(id="c1", name="get_stock", arguments={})
    assert tool_result_message(call, "plain") == {"role": "tool", "tool_call_id": "c1", "content": "plain"}
    assert json.loads(tool_result_message(call, Stock("A", 3))["content"]) == {"sku": "A", "on_hand": 3}
    assert json.loads(tool_result_message(call, OrderPlan(sku="A", quantity=2))["content"])["quantity"] == 2
    assert json.loads(tool_result_message(call, [1, 2])["content"]) == [1, 2]


# --------------------------------------------------------------------------------------------------------
# JSON replies
# --------------------------------------------------------------------------------------------------------
def test_json_reply_repaired_after_invalid_reply() -> None:
    with ScriptedOpenAIServer(['{"sku": "SKU-1", "quantity": -5}', '{"sku": "SKU-1", "quantity": 40}']) as srv:
        client = make_client(srv)
        plan = client.json(USER, OrderPlan)
        first, second = srv.requests
    assert plan == OrderPlan(sku="SKU-1", quantity=40)
    assert first["response_format"] == {"type": "json_object"}
    assert first["messages"][0]["role"] == "system" and '"quantity"' in first["messages"][0]["content"]
    repair = second["messages"][-1]["content"]
    assert "quantity" in repair and "greater than or equal to 0" in repair
    assert second["messages"][-2] == {"role": "assistant", "content": '{"sku": "SKU-1", "quantity": -5}'}
    assert [e.kind for e in client.transcript] == ["json", "json-repair"]


@pytest.mark.parametrize("reply", [
    'Sure! Here is the plan:\n```json\n{"sku": "SKU-1", "quantity": 7}\n```\nLet me know.',
    '```\n{"sku": "SKU-1", "quantity": 7}\n```',
    'The plan is {"sku": "SKU-1", "quantity": 7} as requested.',
])
def test_json_extracted_from_fences_and_prose(reply: str) -> None:
    with ScriptedOpenAIServer([reply]) as srv:
        assert make_client(srv).json(USER, OrderPlan) == OrderPlan(sku="SKU-1", quantity=7)
        assert len(srv.requests) == 1


def test_extract_json_object_edge_cases() -> None:
    assert extract_json_object('note {"a": {"b": "}"}} tail {"c": 1}') == {"a": {"b": "}"}}
    assert extract_json_object('[1, 2] then {"x": 1}') == {"x": 1}
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json_object("no json here {oops")
    with pytest.raises(ValueError, match="empty"):
        extract_json_object("   ")


def test_json_gives_up_after_max_repairs() -> None:
    with ScriptedOpenAIServer(["I cannot comply.", '{"sku": 1}', "still no"]) as srv:
        with pytest.raises(JSONReplyError, match="OrderPlan") as info:
            make_client(srv).json(USER, OrderPlan, max_repairs=2)
        assert len(srv.requests) == 3
    assert len(info.value.errors) == 3
    assert info.value.last_reply == "still no"


def test_json_schema_mode_sends_the_schema() -> None:
    with ScriptedOpenAIServer(['{"sku": "B", "quantity": 1}']) as srv:
        make_client(srv).json([{"role": "system", "content": "You plan orders."}, *USER], OrderPlan,
                              json_mode="json_schema")
        body = srv.requests[0]
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "OrderPlan"
    assert fmt["json_schema"]["schema"]["required"] == ["sku", "quantity"]
    assert body["messages"][0]["content"].startswith("You plan orders.")  # instruction merged, not prepended
    assert len(body["messages"]) == 2


def test_json_mode_none_sends_no_response_format() -> None:
    with ScriptedOpenAIServer(['{"sku": "B", "quantity": 1}']) as srv:
        make_client(srv, json_mode="none").json(USER, OrderPlan)
        assert "response_format" not in srv.requests[0]


# --------------------------------------------------------------------------------------------------------
# retries, errors, timeouts
# --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("status", [500, 503, 429])
def test_transient_errors_are_retried(status: int) -> None:
    with ScriptedOpenAIServer(["recovered"], fail_first=2, fail_status=status) as srv:
        client = make_client(srv, max_retries=3)
        assert client.chat(USER).content == "recovered"
        assert len(srv.requests) == 3
        assert [s for s, _ in srv.responses] == [status, status, 200]
    assert client.usage.retries == 2 and client.usage.calls == 1
    assert client.transcript[0].attempts == 3


def test_retries_exhausted_raise_llm_error() -> None:
    with ScriptedOpenAIServer(["never reached"], fail_first=10, fail_status=502) as srv:
        with pytest.raises(LLMError, match=r"after 3 attempt\(s\).*HTTP 502.*scripted failure") as info:
            make_client(srv, max_retries=2).chat(USER)
        assert len(srv.requests) == 3
    assert info.value.status_code == 502 and info.value.attempts == 3 and info.value.retryable


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_client_errors_are_not_retried(status: int) -> None:
    with ScriptedOpenAIServer(["unused"], fail_first=1, fail_status=status) as srv:
        with pytest.raises(LLMError, match=rf"not retried.*HTTP {status}") as info:
            make_client(srv, max_retries=3).chat(USER)
        assert len(srv.requests) == 1
    assert info.value.status_code == status and info.value.attempts == 1


def test_timeout_raises_llm_error_quickly() -> None:
    with ScriptedOpenAIServer(["too late"], delay=5.0) as srv:
        client = make_client(srv, timeout=0.3, max_retries=1)
        start = time.monotonic()
        with pytest.raises(LLMError, match="timed out after 0.3s") as info:
            client.chat(USER)
        elapsed = time.monotonic() - start
        assert len(srv.requests) == 2
    assert info.value.attempts == 2
    assert 0.5 < elapsed < 2.5


def test_connection_refused_raises_llm_error() -> None:
    with ScriptedOpenAIServer([]) as srv:
        url = srv.base_url
    client = LLMClient(LLMConfig(base_url=url, model="m", max_retries=1, backoff_base=0.01))
    with pytest.raises(LLMError, match="connection error") as info:
        client.chat(USER)
    assert info.value.attempts == 2 and info.value.status_code is None


def test_exhausted_script_surfaces_as_llm_error() -> None:
    with ScriptedOpenAIServer(["only one"]) as srv:
        client = make_client(srv, max_retries=0)
        client.chat(USER)
        with pytest.raises(LLMError, match="script exhausted"):
            client.chat(USER)


# --------------------------------------------------------------------------------------------------------
# configuration
# --------------------------------------------------------------------------------------------------------
def test_from_env_reads_askopt_vars(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASKOPT_LLM_BASE_URL", "http://vllm:8000/v1/")
    monkeypatch.setenv("ASKOPT_LLM_MODEL", "qwen")
    monkeypatch.setenv("ASKOPT_LLM_API_KEY", "k-askopt")
    monkeypatch.setenv("OPENAI_API_KEY", "k-openai")
    monkeypatch.setenv("ASKOPT_LLM_TIMEOUT", "12.5")
    cfg = LLMConfig.from_env(max_retries=5, temperature=None)
    assert (cfg.base_url, cfg.model, cfg.api_key) == ("http://vllm:8000/v1", "qwen", "k-askopt")
    assert cfg.timeout == 12.5 and cfg.max_retries == 5 and cfg.temperature == 0.0
    assert cfg.is_configured
    assert "k-askopt" not in json.dumps(cfg.redacted())


def test_from_env_falls_back_to_openai_vars(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not LLMConfig.from_env().is_configured  # nothing set: callers can skip LLM work
    assert LLMConfig.from_env().api_key is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert not LLMConfig.from_env().is_configured  # a key alone: which OpenAI model is unknown
    cfg = LLMConfig.from_env(model="gpt-4o-mini")
    assert cfg.api_key == "sk-x" and cfg.base_url is None and cfg.is_configured
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:9000/v1")
    assert LLMConfig.from_env().base_url == "http://localhost:9000/v1"
    assert LLMConfig.from_env().is_configured  # a server URL with model auto


def test_from_env_rejects_bad_env_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASKOPT_LLM_MAX_RETRIES", "lots")
    with pytest.raises(ValueError, match="ASKOPT_LLM_MAX_RETRIES"):
        LLMConfig.from_env()
    monkeypatch.delenv("ASKOPT_LLM_MAX_RETRIES")
    with pytest.raises(TypeError, match="modle"):
        LLMConfig.from_env(modle="x")


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"timeout": 0}, "timeout"),
    ({"timeout": -1.0}, "timeout"),
    ({"max_retries": -1}, "max_retries"),
    ({"max_retries": 1.5}, "max_retries"),
    ({"model": ""}, "model"),
    ({"model": "   "}, "model"),
    ({"temperature": -0.1}, "temperature"),
    ({"base_url": "localhost:8000"}, "base_url"),
    ({"json_mode": "xml"}, "json_mode"),
])
def test_bad_config_names_the_field(kwargs: dict, field: str) -> None:
    base = {"base_url": "http://localhost:8000/v1", "model": "m"}
    with pytest.raises(ValueError, match=rf"LLMConfig\.{field}\b"):
        LLMConfig(**{**base, **kwargs})


def test_cli_arguments_override_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASKOPT_LLM_BASE_URL", "http://from-env:8000/v1")
    monkeypatch.setenv("ASKOPT_LLM_MODEL", "env-model")
    parser = argparse.ArgumentParser()
    add_llm_arguments(parser)
    cfg = config_from_args(parser.parse_args(["--model", "cli-model", "--llm-timeout", "7"]))
    assert (cfg.base_url, cfg.model, cfg.timeout) == ("http://from-env:8000/v1", "cli-model", 7.0)
    cfg = config_from_args(parser.parse_args(["--llm-base-url", "http://cli:1/v1", "--api-key", "k"]))
    assert (cfg.base_url, cfg.model, cfg.api_key) == ("http://cli:1/v1", "env-model", "k")
