"""The project's single door to chat LLMs (OpenAI, vLLM, the project's Ray Serve app).

Everything that talks to a model goes through `LLMClient` so that retries, token accounting, JSON
repair and transcripts behave the same in every agent and experiment. The `openai` SDK is used only as
a transport (its own retries are disabled) because we want one retry policy that we can test and that
is recorded in our transcripts.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

import openai
import pydantic

__all__ = [
    "AUTO_MODEL",
    "JSON_MODES",
    "ChatReply",
    "JSONReplyError",
    "LLMClient",
    "LLMConfig",
    "LLMError",
    "Price",
    "RateLimiter",
    "TokenUsage",
    "ToolCall",
    "ToolLoopError",
    "Transcript",
    "TranscriptEntry",
    "UsageTotals",
    "add_llm_arguments",
    "config_from_args",
    "extract_json_object",
    "price_for",
    "run_tool_loop",
    "tool_result_message",
]

#: Model name meaning "ask the server's GET /models and use the first one" (vLLM / Ray Serve serve one model).
AUTO_MODEL = "auto"
#: How `LLMClient.json` asks for JSON: OpenAI JSON mode, structured outputs, or prompt-only (for servers
#: that reject `response_format`).
JSON_MODES = ("json_object", "json_schema", "none")

M = TypeVar("M", bound=pydantic.BaseModel)


# ----------------------------------------------------------------------------------------------------------
# configuration
# ----------------------------------------------------------------------------------------------------------
@dataclass
class LLMConfig:
    """Where and how to reach a chat model. Validated eagerly so misconfiguration fails at startup."""

    base_url: str | None
    model: str
    api_key: str | None = None
    timeout: float = 60.0
    max_retries: int = 3
    temperature: float = 0.0
    #: First backoff delay in seconds; doubles per retry, capped by `backoff_max`, with jitter.
    backoff_base: float = 0.5
    backoff_max: float = 8.0
    json_mode: str = "json_object"
    #: HTTP 429 has its own retry budget (a provider's rate limit is not an outage) and its Retry-After is
    #: honoured up to `retry_after_max` seconds.
    max_rate_limit_retries: int = 8
    retry_after_max: float = 60.0

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise ValueError(f"LLMConfig.model must be a non-empty string, got {self.model!r}")
        if self.base_url == "":
            self.base_url = None
        if self.base_url is not None:
            if not isinstance(self.base_url, str) or not re.match(r"^https?://", self.base_url):
                raise ValueError(f"LLMConfig.base_url must start with http:// or https://, got {self.base_url!r}")
            self.base_url = self.base_url.rstrip("/")
        _require_number("timeout", self.timeout, minimum=0.0, strict=True)
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ValueError(f"LLMConfig.max_retries must be an integer >= 0, got {self.max_retries!r}")
        _require_number("temperature", self.temperature, minimum=0.0)
        _require_number("backoff_base", self.backoff_base, minimum=0.0)
        _require_number("backoff_max", self.backoff_max, minimum=0.0)
        _require_number("retry_after_max", self.retry_after_max, minimum=0.0)
        if (isinstance(self.max_rate_limit_retries, bool) or not isinstance(self.max_rate_limit_retries, int)
                or self.max_rate_limit_retries < 0):
            raise ValueError(f"LLMConfig.max_rate_limit_retries must be an integer >= 0, "
                             f"got {self.max_rate_limit_retries!r}")
        if self.json_mode not in JSON_MODES:
            raise ValueError(f"LLMConfig.json_mode must be one of {JSON_MODES}, got {self.json_mode!r}")

    @property
    def is_configured(self) -> bool:
        """True when there is somewhere to send requests (a server URL or an OpenAI key) and a model.

        `auto` only counts with a base URL: api.openai.com lists dozens of models, so we won't guess."""
        if not self.model:
            return False
        return bool(self.base_url) or (bool(self.api_key) and self.model != AUTO_MODEL)

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMConfig:
        """Build from ASKOPT_LLM_* (falling back to OPENAI_*); overrides whose value is None are ignored.

        Never raises just because nothing is set, so callers can test `is_configured` and skip LLM work.
        """
        env = os.environ
        values: dict[str, Any] = {
            "base_url": env.get("ASKOPT_LLM_BASE_URL") or env.get("OPENAI_BASE_URL") or None,
            "model": env.get("ASKOPT_LLM_MODEL") or AUTO_MODEL,
            "api_key": env.get("ASKOPT_LLM_API_KEY") or env.get("OPENAI_API_KEY") or None,
        }
        for key, name, conv in (
            ("timeout", "ASKOPT_LLM_TIMEOUT", float),
            ("max_retries", "ASKOPT_LLM_MAX_RETRIES", int),
            ("temperature", "ASKOPT_LLM_TEMPERATURE", float),
            ("json_mode", "ASKOPT_LLM_JSON_MODE", str),
        ):
            raw = env.get(name)
            if raw:
                try:
                    values[key] = conv(raw)
                except ValueError:
                    raise ValueError(f"{name}={raw!r} is not a valid {conv.__name__} (LLMConfig.{key})") from None
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(overrides) - known
        if unknown:
            raise TypeError(f"LLMConfig.from_env got unknown field(s) {sorted(unknown)}; known: {sorted(known)}")
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def redacted(self) -> dict[str, Any]:
        """The config as a dict safe to log (the key is masked)."""
        d = asdict(self)
        if d["api_key"]:
            d["api_key"] = d["api_key"][:3] + "..." if len(d["api_key"]) > 8 else "***"
        return d


def _require_number(name: str, value: Any, *, minimum: float, strict: bool = False) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value == value  # rejects NaN
    if ok:
        ok = value > minimum if strict else value >= minimum
    if not ok:
        op = ">" if strict else ">="
        raise ValueError(f"LLMConfig.{name} must be a number {op} {minimum:g}, got {value!r}")


def add_llm_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """Standard LLM flags for every CLI; unset flags fall back to the environment (see `config_from_args`)."""
    group = parser.add_argument_group("LLM", "chat model endpoint (defaults from ASKOPT_LLM_* / OPENAI_* env)")
    group.add_argument("--llm-base-url", dest="llm_base_url", default=None,
                       help="OpenAI-compatible base URL, e.g. http://localhost:8000/v1 (env ASKOPT_LLM_BASE_URL)")
    group.add_argument("--model", dest="llm_model", default=None,
                       help=f"model name; '{AUTO_MODEL}' uses the server's first model (env ASKOPT_LLM_MODEL)")
    group.add_argument("--api-key", dest="llm_api_key", default=None,
                       help="API key (env ASKOPT_LLM_API_KEY or OPENAI_API_KEY); local servers need none")
    group.add_argument("--llm-timeout", dest="llm_timeout", type=float, default=None,
                       help="per-request timeout in seconds (default 60)")
    group.add_argument("--llm-max-retries", dest="llm_max_retries", type=int, default=None,
                       help="retries after the first try on connection errors, timeouts, 429 and 5xx (default 3)")
    return group


def config_from_args(args: argparse.Namespace, **overrides: Any) -> LLMConfig:
    """`LLMConfig` from flags added by `add_llm_arguments`, then environment, then defaults."""
    from_args = {
        "base_url": getattr(args, "llm_base_url", None),
        "model": getattr(args, "llm_model", None),
        "api_key": getattr(args, "llm_api_key", None),
        "timeout": getattr(args, "llm_timeout", None),
        "max_retries": getattr(args, "llm_max_retries", None),
    }
    from_args.update(overrides)
    return LLMConfig.from_env(**from_args)


# ----------------------------------------------------------------------------------------------------------
# data crossing module boundaries
# ----------------------------------------------------------------------------------------------------------
class LLMError(RuntimeError):
    """Any failure talking to the model after retries; agents catch this one type."""

    def __init__(self, message: str, *, status_code: int | None = None, attempts: int = 0,
                 retryable: bool = False) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.attempts = attempts
        self.retryable = retryable


class JSONReplyError(LLMError):
    """The model never produced JSON matching the schema, even after repair prompts."""

    def __init__(self, message: str, *, errors: list[str], last_reply: str | None) -> None:
        super().__init__(message)
        self.errors = errors
        self.last_reply = last_reply


class ToolLoopError(LLMError):
    """The tool loop hit `max_steps`; carries the conversation so the caller can inspect or resume it."""

    def __init__(self, message: str, *, messages: list[dict[str, Any]], last_reply: ChatReply) -> None:
        super().__init__(message)
        self.messages = messages
        self.last_reply = last_reply


@dataclass(frozen=True)
class TokenUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class UsageTotals:
    """Running totals per client; `calls` counts successful completions, `retries` the extra attempts
    (`rate_limited` of them answered 429). `model_seconds` is the wall time spent inside chat calls (requests,
    retries and backoff: what a unit waits on the model); `limiter_seconds` the part of it spent waiting for
    the client-side rate limiter before sending."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    failed_calls: int = 0
    retries: int = 0
    rate_limited: int = 0
    model_seconds: float = 0.0
    limiter_seconds: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class Price:
    """US dollars per million prompt / completion tokens (a study's price table maps model -> Price)."""

    prompt_per_million: float = 0.0
    completion_per_million: float = 0.0

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.prompt_per_million + completion_tokens * self.completion_per_million) / 1e6


def price_for(prices: Mapping[str, Any] | None, model: str) -> Price:
    """The price of `model` in a table {model: {"prompt_per_million": .., "completion_per_million": ..}}; the
    entry "*" is the default; unknown models cost 0 (and say so by being 0 in the report)."""
    prices = prices or {}
    entry = prices.get(model, prices.get("*"))
    if entry is None:
        return Price()
    if isinstance(entry, Price):
        return entry
    try:
        return Price(float(entry.get("prompt_per_million", 0.0)), float(entry.get("completion_per_million", 0.0)))
    except (AttributeError, TypeError, ValueError):
        raise ValueError(f"prices[{model!r}]: {entry!r} is not allowed; use "
                         '{"prompt_per_million": USD, "completion_per_million": USD}') from None


class RateLimiter(Protocol):
    """Client-side rate limiting hook: `acquire` blocks until `tokens` more may be sent to the endpoint and
    returns the seconds it waited (a local `llm.ratelimit.RateLimiter`, or the study's cluster-wide actor)."""

    def acquire(self, tokens: int) -> float: ...


@dataclass
class ToolCall:
    """A requested tool call. If the model's arguments are not a JSON object, `arguments` is empty and
    `error` says why, so the loop can tell the model instead of crashing."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The OpenAI wire form, for replaying the assistant message in the next request."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.raw_arguments or json.dumps(self.arguments)},
        }


@dataclass
class ChatReply:
    content: str | None
    tool_calls: list[ToolCall]
    usage: TokenUsage
    finish_reason: str | None
    model: str = ""
    latency_s: float = 0.0

    def to_message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation (tool calls included)."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        return msg


# ----------------------------------------------------------------------------------------------------------
# transcripts
# ----------------------------------------------------------------------------------------------------------
@dataclass
class TranscriptEntry:
    kind: str
    model: str
    request_messages: list[dict[str, Any]]
    reply_content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    attempts: int = 1
    error: str | None = None
    tools: list[str] = field(default_factory=list)
    timestamp: float = field(default_factory=time.time)


class Transcript:
    """Append-only record of every model exchange, for debugging agents and auditing experiments."""

    def __init__(self) -> None:
        self.entries: list[TranscriptEntry] = []
        self._lock = threading.Lock()

    def append(self, entry: TranscriptEntry) -> None:
        with self._lock:
            self.entries.append(entry)

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[TranscriptEntry]:
        return iter(list(self.entries))

    def __getitem__(self, i: int) -> TranscriptEntry:
        return self.entries[i]

    def to_jsonl(self, path: str | os.PathLike[str]) -> Path:
        """Write one JSON object per entry (overwrites), creating parent directories."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("w", encoding="utf-8") as fh:
            for e in list(self.entries):
                fh.write(json.dumps(asdict(e), default=str, ensure_ascii=False) + "\n")
        return p

    @classmethod
    def from_jsonl(cls, path: str | os.PathLike[str]) -> Transcript:
        t = cls()
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                t.append(TranscriptEntry(**json.loads(line)))
        return t

    def text(self, max_chars: int | None = 2000) -> str:
        """Readable log; long message contents are cut to `max_chars` (None keeps everything)."""

        def cut(s: str) -> str:
            return s if max_chars is None or len(s) <= max_chars else s[:max_chars] + f"... [{len(s)} chars]"

        out: list[str] = []
        for i, e in enumerate(list(self.entries), 1):
            status = f"ERROR after {e.attempts} attempt(s)" if e.error else f"attempts={e.attempts}"
            out.append(f"=== #{i} {e.kind} model={e.model} {e.latency_s:.3f}s {status} "
                       f"tokens={e.prompt_tokens}+{e.completion_tokens}"
                       + (f" tools={','.join(e.tools)}" if e.tools else ""))
            for m in e.request_messages:
                text = m.get("content")
                text = text if isinstance(text, str) else json.dumps(text, default=str)
                extra = f" tool_call_id={m['tool_call_id']}" if m.get("tool_call_id") else ""
                out.append(f"[{m.get('role', '?')}{extra}] {cut(text)}")
                for c in m.get("tool_calls") or []:
                    fn = c.get("function", {})
                    out.append(f"    -> {fn.get('name')}({cut(str(fn.get('arguments')))})")
            if e.error:
                out.append(f"!!! {e.error}")
            else:
                if e.reply_content is not None:
                    out.append(f">>> assistant: {cut(e.reply_content)}")
                for c in e.tool_calls:
                    fn = c.get("function", {})
                    out.append(f">>> tool call {c.get('id')}: {fn.get('name')}({cut(str(fn.get('arguments')))})")
                out.append(f"<<< finish_reason={e.finish_reason}")
        return "\n".join(out)


# ----------------------------------------------------------------------------------------------------------
# the client
# ----------------------------------------------------------------------------------------------------------
class LLMClient:
    """Chat completions with bounded retries, usage totals, JSON repair and a transcript. Thread-safe."""

    def __init__(self, config: LLMConfig, transcript: Transcript | None = None,
                 limiter: RateLimiter | None = None) -> None:
        self.config = config
        self.transcript = transcript if transcript is not None else Transcript()
        self.usage = UsageTotals()
        self.limiter = limiter
        self._lock = threading.Lock()
        self._resolved_model: str | None = None if config.model == AUTO_MODEL else config.model
        self._client = openai.OpenAI(
            base_url=config.base_url,
            api_key=config.api_key or "EMPTY",  # local servers accept any key; the SDK insists on one
            timeout=config.timeout,
            max_retries=0,  # retries are ours: one policy, visible in transcripts
            # hundreds of dialogues may share one client (see `fork`): the SDK's default pool is 1000
        )

    def fork(self, transcript: Transcript | None = None) -> LLMClient:
        """A client with its own usage totals and transcript that shares this one's connection pool, limiter
        and resolved model: one per study unit, so tokens and retries are accounted per unit."""
        other = LLMClient.__new__(LLMClient)
        other.config, other.limiter, other._client = self.config, self.limiter, self._client
        other.transcript = transcript if transcript is not None else Transcript()
        other.usage = UsageTotals()
        other._lock = threading.Lock()
        other._resolved_model = self._resolved_model
        return other

    @classmethod
    def from_env(cls, transcript: Transcript | None = None, **overrides: Any) -> LLMClient:
        return cls(LLMConfig.from_env(**overrides), transcript)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- retries -----------------------------------------------------------------------------------------
    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        delay = min(self.config.backoff_max, self.config.backoff_base * 2 ** (attempt - 1))
        delay *= random.uniform(0.5, 1.0)  # jitter so parallel workers do not retry in lockstep
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.config.retry_after_max))
        return delay

    def _with_retries(self, fn: Callable[[], Any], what: str, tokens: int = 0) -> tuple[Any, int]:
        """Run `fn`, retrying transient failures; returns (result, attempts) or raises LLMError.

        5xx, timeouts and connection errors share `max_retries`; 429s have their own budget
        (`max_rate_limit_retries`) and wait at least the server's Retry-After. With a limiter, every attempt
        first waits for room for `tokens` (the request's estimated size)."""
        total = self.config.max_retries + 1
        attempt = limited = 0
        while True:
            attempt += 1
            if self.limiter is not None and tokens:
                waited = float(self.limiter.acquire(tokens) or 0.0)
                with self._lock:
                    self.usage.limiter_seconds += waited
            try:
                return fn(), attempt
            except openai.APIStatusError as exc:
                status = exc.status_code
                retryable = status == 429 or status >= 500
                detail = f"HTTP {status}: {_error_message(exc)}"
                retry_after = _retry_after(exc)
            except openai.APITimeoutError:
                status, retryable, retry_after = None, True, None
                detail = f"timed out after {self.config.timeout:g}s"
            except openai.APIConnectionError as exc:
                status, retryable, retry_after = None, True, None
                cause = exc.__cause__ or exc
                detail = f"connection error ({type(cause).__name__}: {cause})"
            except openai.OpenAIError as exc:
                status, retryable, retry_after = None, False, None
                detail = f"{type(exc).__name__}: {exc}"
            where = self.config.base_url or "api.openai.com"
            if status == 429:
                limited += 1
                exhausted = limited > self.config.max_rate_limit_retries
            else:
                exhausted = attempt - limited >= total
            if not retryable or exhausted:
                tail = f"after {attempt} attempt(s)" if retryable else "(not retried)"
                raise LLMError(f"{what} to {where} failed {tail}: {detail}", status_code=status,
                               attempts=attempt, retryable=retryable)
            with self._lock:
                self.usage.retries += 1
                self.usage.rate_limited += status == 429
            time.sleep(self._backoff(attempt - limited if status != 429 else limited, retry_after))

    @property
    def model_name(self) -> str:
        """The model name as known so far, without asking the server (`auto` until resolved)."""
        return self._resolved_model or self.config.model

    @property
    def model(self) -> str:
        """The model name sent to the server; resolves `auto` via GET /models once."""
        if self._resolved_model is None:
            if self.config.base_url is None:
                raise LLMError(f"model={AUTO_MODEL!r} needs a base URL (a vLLM / Ray Serve server); "
                               "for OpenAI set --model or ASKOPT_LLM_MODEL")
            page, _ = self._with_retries(self._client.models.list, "GET /models")
            ids = [m.id for m in page.data]
            if not ids:
                raise LLMError(f"model={AUTO_MODEL!r} but {self.config.base_url} lists no models; set --model")
            self._resolved_model = ids[0]
        return self._resolved_model

    # -- chat ----------------------------------------------------------------------------------------------
    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        **kw: Any,
    ) -> ChatReply:
        """One chat completion. Extra keywords go to the API (`max_tokens`, `seed`, `response_format`...);
        `temperature=None` omits temperature for models that reject it."""
        return self._chat(messages, tools, tool_choice, kind="chat", **kw)

    def _chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
              tool_choice: str | dict[str, Any] | None, *, kind: str, **kw: Any) -> ChatReply:
        request_messages = [dict(m) for m in messages]
        tool_names = [t.get("function", {}).get("name", "?") for t in tools or []]
        params: dict[str, Any] = {"temperature": self.config.temperature, **kw}
        if params.get("temperature") is None:
            params.pop("temperature")
        if tools:
            params["tools"] = tools
        if tool_choice is not None:
            params["tool_choice"] = tool_choice
        start = time.perf_counter()
        model = self.config.model
        attempts = 0
        estimate = _estimate_tokens(request_messages, params)
        try:
            model = self.model
            completion, attempts = self._with_retries(
                lambda: self._client.chat.completions.create(model=model, messages=request_messages, **params),
                "chat completion", tokens=estimate,
            )
            reply = _parse_completion(completion, model, time.perf_counter() - start)
        except LLMError as exc:
            attempts = exc.attempts or attempts or 1
            with self._lock:
                self.usage.failed_calls += 1
                self.usage.model_seconds += time.perf_counter() - start
            self.transcript.append(TranscriptEntry(
                kind=kind, model=model, request_messages=request_messages, latency_s=time.perf_counter() - start,
                attempts=attempts, error=str(exc), tools=tool_names))
            raise
        with self._lock:
            self.usage.calls += 1
            self.usage.model_seconds += time.perf_counter() - start
            self.usage.prompt_tokens += reply.usage.prompt_tokens
            self.usage.completion_tokens += reply.usage.completion_tokens
        self.transcript.append(TranscriptEntry(
            kind=kind, model=reply.model, request_messages=request_messages, reply_content=reply.content,
            tool_calls=[c.to_dict() for c in reply.tool_calls], finish_reason=reply.finish_reason,
            prompt_tokens=reply.usage.prompt_tokens, completion_tokens=reply.usage.completion_tokens,
            latency_s=reply.latency_s, attempts=attempts, tools=tool_names))
        return reply

    # -- structured output -----------------------------------------------------------------------------
    def json(
        self,
        messages: list[dict[str, Any]],
        schema: type[M],
        max_repairs: int = 2,
        *,
        json_mode: str | None = None,
        **kw: Any,
    ) -> M:
        """Ask for a JSON object matching `schema`; re-ask with the validation error up to `max_repairs`
        times. `json_mode`: "json_object" (default, widely supported), "json_schema" (structured
        outputs, stricter) or "none" (prompt only, for servers that reject `response_format`)."""
        mode = json_mode or self.config.json_mode
        if mode not in JSON_MODES:
            raise ValueError(f"json_mode must be one of {JSON_MODES}, got {mode!r}")
        if max_repairs < 0:
            raise ValueError(f"max_repairs must be >= 0, got {max_repairs}")
        json_schema = schema.model_json_schema()
        if mode == "json_object":
            kw.setdefault("response_format", {"type": "json_object"})
        elif mode == "json_schema":
            kw.setdefault("response_format", {"type": "json_schema", "json_schema": {
                "name": re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64], "schema": json_schema,
                "strict": False}})
        convo = _with_json_instruction(messages, json_schema)
        errors: list[str] = []
        content: str | None = None
        for attempt in range(max_repairs + 1):
            reply = self._chat(convo, None, None, kind="json" if attempt == 0 else "json-repair", **kw)
            content = reply.content
            try:
                return schema.model_validate(extract_json_object(content or ""))
            except (ValueError, pydantic.ValidationError) as exc:  # ValidationError is a ValueError too
                error = _short_validation_error(exc)
                errors.append(error)
            convo = [*convo, {"role": "assistant", "content": content or ""}, {"role": "user", "content": (
                f"Your previous reply was not valid: {error}\n"
                "Reply again with only one JSON object that matches the schema, no prose.")}]
        raise JSONReplyError(
            f"no valid {schema.__name__} JSON after {max_repairs + 1} attempt(s); last error: {errors[-1]}",
            errors=errors, last_reply=content)


def _error_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
    return exc.message


def _retry_after(exc: openai.APIStatusError) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms` (exact) or `Retry-After` (seconds)."""
    try:
        headers = exc.response.headers
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return float(ms) / 1000.0
        value = headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, ValueError):
        return None


#: Completion tokens assumed for rate limiting when a request sets no `max_tokens`.
EXPECTED_COMPLETION_TOKENS = 256


def _estimate_tokens(messages: list[dict[str, Any]], params: dict[str, Any]) -> int:
    """A request's size for the rate limiter before the server counts it: ~4 characters per prompt token
    plus `max_tokens` (or a typical reply)."""
    chars = sum(len(json.dumps(m.get("content") or "", ensure_ascii=False)) for m in messages)
    return chars // 4 + int(params.get("max_tokens") or EXPECTED_COMPLETION_TOKENS)


def _parse_completion(completion: Any, model: str, latency: float) -> ChatReply:
    if not getattr(completion, "choices", None):
        raise LLMError(f"server returned no choices (model={model}): {str(completion)[:300]}")
    choice = completion.choices[0]
    msg = choice.message
    calls: list[ToolCall] = []
    for i, tc in enumerate(msg.tool_calls or []):
        fn = getattr(tc, "function", None)
        call_id = getattr(tc, "id", None) or f"call_{i}"
        if fn is None:  # non-function (custom) tool call: keep it visible, but we cannot parse it
            calls.append(ToolCall(call_id, getattr(getattr(tc, "custom", None), "name", "?"), {},
                                  error=f"unsupported tool call type {getattr(tc, 'type', '?')!r}"))
            continue
        args, error = _parse_arguments(fn.name, fn.arguments)
        calls.append(ToolCall(call_id, fn.name, args, raw_arguments=fn.arguments or "", error=error))
    u = completion.usage
    usage = TokenUsage(u.prompt_tokens or 0, u.completion_tokens or 0) if u is not None else TokenUsage()
    return ChatReply(content=msg.content, tool_calls=calls, usage=usage, finish_reason=choice.finish_reason,
                     model=completion.model or model, latency_s=latency)


def _parse_arguments(name: str, raw: str | None) -> tuple[dict[str, Any], str | None]:
    if raw is None or not raw.strip():
        return {}, None  # some servers send "" for argument-less tools
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, f"arguments for tool {name!r} are not valid JSON ({exc.msg} at char {exc.pos}): {raw[:200]!r}"
    if not isinstance(value, dict):
        return {}, f"arguments for tool {name!r} must be a JSON object, got {type(value).__name__}: {raw[:200]!r}"
    return value, None


def _with_json_instruction(messages: list[dict[str, Any]], json_schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Put the schema in the system prompt: JSON mode on OpenAI requires the word JSON in the prompt, and
    models follow a schema they can see much better than one only enforced by the decoder."""
    instruction = ("Respond with a single JSON object (no markdown, no prose) that conforms to this JSON Schema:\n"
                   + json.dumps(json_schema, separators=(",", ":")))
    convo = [dict(m) for m in messages]
    if convo and convo[0].get("role") == "system" and isinstance(convo[0].get("content"), str):
        convo[0]["content"] = f"{convo[0]['content']}\n\n{instruction}"
    else:
        convo.insert(0, {"role": "system", "content": instruction})
    return convo


def _short_validation_error(exc: Exception) -> str:
    if isinstance(exc, pydantic.ValidationError):
        parts = [f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in exc.errors()[:10]]
        return f"{exc.error_count()} validation error(s) for {exc.title}: " + "; ".join(parts)
    return str(exc)


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in a model reply: bare, inside ``` fences, or embedded in prose."""
    stripped = text.strip()
    candidates = [stripped, *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for cand in candidates:
        try:
            value = json.loads(cand)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    decoder = json.JSONDecoder()
    for m in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, m.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    if not stripped:
        raise ValueError("the reply was empty; expected a JSON object")
    raise ValueError(f"no JSON object found in the reply: {stripped[:200]!r}")


# ----------------------------------------------------------------------------------------------------------
# tool calling
# ----------------------------------------------------------------------------------------------------------
def tool_result_message(call: ToolCall, result: Any) -> dict[str, Any]:
    """The `role: tool` message answering `call`; non-string results are sent as JSON."""
    if isinstance(result, str):
        content = result
    elif isinstance(result, pydantic.BaseModel):
        content = result.model_dump_json()
    elif dataclasses.is_dataclass(result) and not isinstance(result, type):
        content = json.dumps(asdict(result), default=str)
    else:
        content = json.dumps(result, default=str)
    return {"role": "tool", "tool_call_id": call.id, "content": content}


def run_tool_loop(
    client: LLMClient,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    handlers: Mapping[str, Callable[..., Any]],
    max_steps: int = 8,
    **chat_kw: Any,
) -> tuple[ChatReply, list[dict[str, Any]]]:
    """Chat, run requested tools as `handlers[name](**arguments)`, feed results back, until the model
    answers without tool calls. Bad arguments, unknown tools and handler exceptions go back to the model
    as `{"error": ...}` results so it can correct itself; only `max_steps` model calls are made, then
    `ToolLoopError`. Returns the final reply and the full conversation (the input list is not mutated)."""
    if max_steps < 1:
        raise ValueError(f"max_steps must be >= 1, got {max_steps}")
    convo = list(messages)
    reply: ChatReply | None = None
    for _ in range(max_steps):
        reply = client.chat(convo, tools=tools, **chat_kw)
        convo.append(reply.to_message())
        if not reply.tool_calls:
            return reply, convo
        for call in reply.tool_calls:
            convo.append(tool_result_message(call, _run_handler(call, handlers)))
    assert reply is not None
    raise ToolLoopError(f"tool loop did not finish within max_steps={max_steps}; last requested tools: "
                        f"{[c.name for c in reply.tool_calls]}", messages=convo, last_reply=reply)


def _run_handler(call: ToolCall, handlers: Mapping[str, Callable[..., Any]]) -> Any:
    if call.error:
        return {"error": call.error}
    handler = handlers.get(call.name)
    if handler is None:
        return {"error": f"unknown tool {call.name!r}; available tools: {sorted(handlers)}"}
    try:
        return handler(**call.arguments)
    except Exception as exc:  # the model caused it (bad args) or can work around it: tell it
        return {"error": f"tool {call.name!r} failed: {type(exc).__name__}: {exc}"}
