"""An OpenAI-compatible chat model that behaves like a hosted one: latency, streaming, rate limits, faults.

Why: the study's LLM path had never run against anything that waits like a model. The emulator answers
every study role from the offline agents (`serving.llm_emulator_roles`) and adds what a provider does to
a client:

* latency: each request waits a lognormal time to its first token (mean `latency_mean`, shape
  `latency_sigma`; mu = ln(mean) - sigma^2/2 so the mean is the configured one), plus
  completion_tokens / `tokens_per_second` of generation when that is > 0;
* streaming (`stream=true`): server-sent events, one ~4-character token per chunk paced at
  `tokens_per_second`, a usage chunk when `stream_options.include_usage`, then `[DONE]`;
* limits: `rpm` requests and `tpm` (prompt + completion) tokens per sliding 60 s; over either the reply
  is HTTP 429 with `Retry-After` (whole seconds, rounded up) and `retry-after-ms` (exact), the time until
  the window has room again;
* faults: with probability `error_rate` a 5xx (`error_status`) after the latency, with probability
  `timeout_rate` the request hangs `hang_seconds` (longer than a sane client timeout) and then answers 504.

Two ways to run it, one FastAPI app (`build_fastapi_app`):

* a plain process / background thread (`EmulatorServer`, `python -m serving.llm_emulator`): what tests use;
* a Ray Serve deployment (`build_app`, `askopt serve emulator`): one replica keeps the limits exact (each
  replica counts its own window).

`GET /v1/emulator/stats` returns the counters (requests, 429s, 5xx, timeouts, tokens, peak concurrency).
Token counts are approximated at 4 characters per token, like the test server.
"""

import argparse
import asyncio
import json
import math
import random
import socket
import threading
import time
import uuid
from collections import Counter, deque
from dataclasses import asdict, dataclass, fields
from typing import Any

__all__ = ["EmulatorConfig", "EmulatorCore", "EmulatorServer", "RateWindow", "build_app", "build_fastapi_app"]

MODEL_NAME = "askopt-emulator"
WINDOW_S = 60.0


@dataclass
class EmulatorConfig:
    """How the emulated model behaves. Validated eagerly: a bad value names the field and the allowed range."""

    latency_mean: float = 1.5
    latency_sigma: float = 0.5
    latency_max: float = 30.0
    tokens_per_second: float = 0.0
    rpm: int = 0  # 0: no request limit
    tpm: int = 0  # 0: no token limit
    error_rate: float = 0.0
    error_status: int = 503
    timeout_rate: float = 0.0
    hang_seconds: float = 30.0
    seed: int = 0
    model: str = MODEL_NAME
    window_seconds: float = WINDOW_S  # the limits' sliding window (60 = per minute; tests shorten it)

    def __post_init__(self) -> None:
        if isinstance(self.window_seconds, bool) or not isinstance(self.window_seconds, int | float) \
                or not self.window_seconds > 0:
            raise ValueError(f"window_seconds: {self.window_seconds!r} is not allowed; must be a number > 0")
        for name in ("latency_mean", "latency_sigma", "latency_max", "tokens_per_second", "hang_seconds"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not v >= 0:
                raise ValueError(f"{name}: {v!r} is not allowed; must be a number >= 0")
        for name in ("rpm", "tpm"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name}: {v!r} is not allowed; must be a whole number >= 0 (0 = no limit)")
        for name in ("error_rate", "timeout_rate"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 1:
                raise ValueError(f"{name}: {v!r} is not allowed; must be a probability in [0, 1]")
        if self.error_rate + self.timeout_rate > 1:
            raise ValueError("error_rate + timeout_rate: must be at most 1")
        if not 500 <= int(self.error_status) <= 599:
            raise ValueError(f"error_status: {self.error_status!r} is not allowed; must be a 5xx status")
        if not isinstance(self.model, str) or not self.model:
            raise ValueError("model: must be a non-empty string")

    @classmethod
    def from_dict(cls, d: dict | None) -> "EmulatorConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(d or {}) - known
        if unknown:
            raise ValueError(f"emulator config: unknown field(s) {sorted(unknown)}; allowed: {sorted(known)}")
        return cls(**(d or {}))


def approx_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4)) if text else 0


class RateWindow:
    """Requests and tokens admitted in the last `window` s (60); `admit` says yes, or how long until there is
    room."""

    def __init__(self, rpm: int, tpm: int, window: float = WINDOW_S) -> None:
        self.rpm, self.tpm, self.window = rpm, tpm, window
        self.events: deque[tuple[float, int]] = deque()
        self.tokens = 0

    def _expire(self, now: float) -> None:
        while self.events and self.events[0][0] <= now - self.window:
            self.tokens -= self.events.popleft()[1]

    def admit(self, tokens: int, now: float) -> float:
        """0.0 when admitted (and counted); otherwise the seconds until this request would fit."""
        self._expire(now)
        wait = 0.0
        if self.rpm and len(self.events) >= self.rpm:
            wait = self.events[len(self.events) - self.rpm][0] + self.window - now
        if self.tpm and self.tokens + tokens > self.tpm:
            if tokens > self.tpm:
                return math.inf
            freed, need = 0, self.tokens + tokens - self.tpm
            for t, n in self.events:
                freed += n
                if freed >= need:
                    wait = max(wait, t + self.window - now)
                    break
        if wait > 0:
            return wait
        self.events.append((now, tokens))
        self.tokens += tokens
        return 0.0


@dataclass
class Decision:
    status: int
    payload: dict
    delay: float
    headers: dict
    reply: Any = None
    prompt_tokens: int = 0
    completion_tokens: int = 0


class EmulatorCore:
    """The model's behaviour, independent of the HTTP server: decide the answer, the wait and the status."""

    def __init__(self, config: EmulatorConfig) -> None:
        self.config = config
        self.rng = random.Random(config.seed)
        self.window = RateWindow(config.rpm, config.tpm, config.window_seconds) if (config.rpm or config.tpm) else None
        self.lock = threading.Lock()
        self.stats: Counter = Counter()
        self.roles: Counter = Counter()
        self.in_flight = 0
        self.started = time.time()
        self.first_request_at = 0.0  # wall clock of the first / latest request (throughput = requests / span)
        self.last_request_at = 0.0
        self.ok_times: list[float] = []  # when each successful request arrived (throughput measurements)

    def latency(self) -> float:
        c = self.config
        if c.latency_mean <= 0:
            return 0.0
        if c.latency_sigma <= 0:
            return min(c.latency_mean, c.latency_max)
        mu = math.log(c.latency_mean) - c.latency_sigma ** 2 / 2
        with self.lock:
            return min(self.rng.lognormvariate(mu, c.latency_sigma), c.latency_max)

    def decide(self, body: Any) -> Decision:
        """Everything about one request except the waiting (done by the HTTP layer, asynchronously)."""
        from serving.llm_emulator_roles import answer

        c = self.config
        with self.lock:
            self.stats["requests"] += 1
            now = time.time()
            self.first_request_at = self.first_request_at or now
            self.last_request_at = now
        if not isinstance(body, dict):
            return self._error(400, "request body must be a JSON object", "invalid_request_error")
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            return self._error(400, "messages: a non-empty list of chat messages is required", "invalid_request_error",
                               param="messages")
        try:
            reply = answer(body)
        except ValueError as exc:
            return self._error(400, str(exc), "invalid_request_error", param="messages")
        except Exception as exc:  # noqa: BLE001 - an emulator bug must be a readable 500, not a dropped socket
            return self._error(500, f"emulator role failed: {type(exc).__name__}: {exc}", "server_error")
        prompt = sum(approx_tokens(_message_text(m)) for m in body["messages"] if isinstance(m, dict))
        completion = approx_tokens((reply.content or "") + "".join(
            tc["function"]["name"] + tc["function"]["arguments"] for tc in reply.tool_calls))
        with self.lock:
            if self.window is not None:
                wait = self.window.admit(prompt + completion, time.monotonic())
                if wait > 0:
                    self.stats["rate_limited"] += 1
                    if math.isinf(wait):
                        return self._error(400, f"request of {prompt + completion} tokens exceeds tpm={c.tpm}",
                                           "invalid_request_error")
                    d = self._error(429, f"rate limit reached (rpm={c.rpm}, tpm={c.tpm}); retry after {wait:.2f}s",
                                    "rate_limit_error")
                    d.headers = {"Retry-After": str(max(1, math.ceil(wait))), "retry-after-ms": str(int(wait * 1000))}
                    return d
            draw = self.rng.random()
        delay = self.latency() + (completion / c.tokens_per_second if c.tokens_per_second > 0 else 0.0)
        if draw < c.timeout_rate:
            with self.lock:
                self.stats["timeouts"] += 1
            d = self._error(504, "injected timeout", "timeout")
            d.delay = c.hang_seconds
            return d
        if draw < c.timeout_rate + c.error_rate:
            with self.lock:
                self.stats["errors"] += 1
            d = self._error(int(c.error_status), "injected server error", "server_error")
            d.delay = delay
            return d
        with self.lock:
            self.stats["ok"] += 1
            self.ok_times.append(time.time())
            self.stats["prompt_tokens"] += prompt
            self.stats["completion_tokens"] += completion
            self.roles[reply.role] += 1
        payload = _completion(body.get("model") or c.model, reply, prompt, completion)
        return Decision(200, payload, delay, {}, reply, prompt, completion)

    def _error(self, status: int, message: str, kind: str, param: str | None = None) -> Decision:
        return Decision(status, {"error": {"message": message, "type": kind, "param": param, "code": status}}, 0.0, {})

    def snapshot(self, times: bool = False) -> dict:
        with self.lock:
            extra = {"ok_times": list(self.ok_times)} if times else {}
            return {**extra, **dict(self.stats), "roles": dict(self.roles), "in_flight": self.in_flight,
                    "first_request_at": self.first_request_at, "last_request_at": self.last_request_at,
                    "uptime_s": round(time.time() - self.started, 3), "config": asdict(self.config)}

    def enter(self) -> None:
        with self.lock:
            self.in_flight += 1
            self.stats["max_in_flight"] = max(self.stats["max_in_flight"], self.in_flight)

    def leave(self) -> None:
        with self.lock:
            self.in_flight -= 1


def _message_text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    text = content if isinstance(content, str) else ""
    for call in message.get("tool_calls") or []:
        fn = call.get("function", {}) if isinstance(call, dict) else {}
        text += str(fn.get("name", "")) + str(fn.get("arguments", ""))
    return text


def _completion(model: str, reply, prompt: int, completion: int) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


def _chunks(d: Decision, body: dict, tps: float):
    """Server-sent events for a streamed reply (after the first-token wait)."""
    base = {"id": d.payload["id"], "object": "chat.completion.chunk", "created": d.payload["created"],
            "model": d.payload["model"]}

    def event(delta: dict, finish: str | None = None, usage: dict | None = None) -> str:
        chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if usage is None else []}
        if usage is not None:
            chunk["usage"] = usage
        return f"data: {json.dumps(chunk)}\n\n"

    async def gen():
        yield event({"role": "assistant", "content": ""})
        text = d.reply.content or ""
        for i in range(0, len(text), 4):
            if tps > 0:
                await asyncio.sleep(1.0 / tps)
            yield event({"content": text[i: i + 4]})
        if d.reply.tool_calls:
            yield event({"tool_calls": [{"index": i, **tc} for i, tc in enumerate(d.reply.tool_calls)]})
        yield event({}, d.payload["choices"][0]["finish_reason"])
        if (body.get("stream_options") or {}).get("include_usage"):
            yield event({}, usage=d.payload["usage"])
        yield "data: [DONE]\n\n"

    return gen()


def build_fastapi_app(config: EmulatorConfig | dict | None = None, core: EmulatorCore | None = None):
    """The emulator's ASGI app (used by both the plain server and the Ray Serve deployment)."""
    # no `from __future__ import annotations` in this module: FastAPI must see the real Request class
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse, StreamingResponse

    cfg = config if isinstance(config, EmulatorConfig) else EmulatorConfig.from_dict(config)
    core = core or EmulatorCore(cfg)
    app = FastAPI(title="askopt LLM emulator")
    app.state.core = core

    @app.get("/v1/models")
    async def models() -> dict:
        return {"object": "list", "data": [{"id": cfg.model, "object": "model", "owned_by": "askopt-emulator"}]}

    @app.get("/healthz")
    async def health() -> dict:
        return {"status": "ok", "engine": "askopt-llm-emulator"}

    @app.get("/v1/emulator/stats")
    async def stats(times: bool = False) -> dict:
        return core.snapshot(times)

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        try:
            body = json.loads(await request.body() or b"null")
        except json.JSONDecodeError as exc:
            return JSONResponse({"error": {"message": f"invalid JSON body: {exc}", "type": "invalid_request_error",
                                           "param": None, "code": 400}}, status_code=400)
        core.enter()
        try:
            d = core.decide(body)
            if d.delay > 0:
                await asyncio.sleep(d.delay if d.status != 200 or not body.get("stream") else
                                    d.delay - (d.completion_tokens / cfg.tokens_per_second
                                               if cfg.tokens_per_second > 0 else 0.0))
            if d.status == 200 and body.get("stream"):
                return StreamingResponse(_chunks(d, body, cfg.tokens_per_second), media_type="text/event-stream")
            return JSONResponse(d.payload, status_code=d.status, headers=d.headers)
        finally:
            core.leave()

    return app


class EmulatorServer:
    """The emulator as a real HTTP server on 127.0.0.1 in a background thread (tests, benchmarks)."""

    def __init__(self, config: EmulatorConfig | dict | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        self.config = config if isinstance(config, EmulatorConfig) else EmulatorConfig.from_dict(config)
        self.host, self._port = host, port
        self.core = EmulatorCore(self.config)
        self._server = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None

    def start(self) -> "EmulatorServer":
        import uvicorn

        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((self.host, self._port))
        self._sock.listen(2048)
        cfg = uvicorn.Config(build_fastapi_app(self.config, self.core), log_level="warning", access_log=False,
                             lifespan="off", timeout_keep_alive=60, backlog=2048)
        self._server = uvicorn.Server(cfg)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        name="llm-emulator", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the LLM emulator did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._sock is not None:
            self._sock.close()
        self._server = self._thread = self._sock = None

    def __enter__(self) -> "EmulatorServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._sock is None:
            raise RuntimeError("the emulator is not running")
        return self._sock.getsockname()[1]

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def stats(self) -> dict:
        return self.core.snapshot()


def build_app(config: EmulatorConfig | dict | None = None, max_ongoing_requests: int = 2000):
    """The emulator as a Ray Serve application (one replica: the rate-limit window is per replica)."""
    from ray import serve

    cfg = config if isinstance(config, EmulatorConfig) else EmulatorConfig.from_dict(config)

    @serve.deployment(name="LLMEmulator", num_replicas=1, max_ongoing_requests=max_ongoing_requests,
                      ray_actor_options={"num_cpus": 0.5})
    @serve.ingress()
    class LLMEmulator:
        def __init__(self, config: dict) -> None:
            self.config = EmulatorConfig.from_dict(config)

        def __serve_build_asgi_app__(self):
            return build_fastapi_app(self.config)

    return LLMEmulator.bind(asdict(cfg))


def add_emulator_arguments(p: argparse.ArgumentParser) -> None:
    """The emulator's behaviour flags (shared by `askopt serve emulator` and `python -m serving.llm_emulator`)."""
    d = EmulatorConfig()
    g = p.add_argument_group("LLM emulator")
    g.add_argument("--latency-mean", type=float, default=d.latency_mean, help="mean seconds to the first token")
    g.add_argument("--latency-sigma", type=float, default=d.latency_sigma, help="lognormal shape (0: constant)")
    g.add_argument("--tokens-per-second", type=float, default=d.tokens_per_second,
                   help="generation speed after the first token (0: instant)")
    g.add_argument("--rpm", type=int, default=0, help="requests per minute before 429 (0: no limit)")
    g.add_argument("--tpm", type=int, default=0, help="tokens per minute before 429 (0: no limit)")
    g.add_argument("--error-rate", type=float, default=0.0, help="probability of an injected 5xx")
    g.add_argument("--timeout-rate", type=float, default=0.0, help="probability of an injected hang")
    g.add_argument("--hang-seconds", type=float, default=d.hang_seconds, help="how long an injected hang lasts")
    g.add_argument("--emulator-seed", type=int, default=0, help="seed of the latency and fault draws")


def config_from_args(args: argparse.Namespace) -> EmulatorConfig:
    return EmulatorConfig(latency_mean=args.latency_mean, latency_sigma=args.latency_sigma,
                          tokens_per_second=args.tokens_per_second, rpm=args.rpm, tpm=args.tpm,
                          error_rate=args.error_rate, timeout_rate=args.timeout_rate, hang_seconds=args.hang_seconds,
                          seed=args.emulator_seed)


def main(argv: list[str] | None = None) -> int:
    """`python -m serving.llm_emulator --port 8000 ...`: the plain process, no Ray."""
    import uvicorn

    p = argparse.ArgumentParser(description="askopt LLM emulator (plain process)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    add_emulator_arguments(p)
    args = p.parse_args(argv)
    try:
        cfg = config_from_args(args)
    except ValueError as exc:
        p.error(str(exc))
    print(f"askopt LLM emulator at http://{args.host}:{args.port}/v1", flush=True)
    uvicorn.run(build_fastapi_app(cfg), host=args.host, port=args.port, log_level="warning", access_log=False,
                backlog=2048)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
