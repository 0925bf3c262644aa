"""A scripted OpenAI-compatible chat-completions server for tests.

Tests talk to a real HTTP socket instead of a mocked client so that the whole path (openai SDK, request
encoding, status codes, timeouts, retries) is exercised exactly as it would be against vLLM or OpenAI.

Usage::

    with ScriptedOpenAIServer(["hello", {"tool_calls": [{"name": "f", "arguments": {"x": 1}}]}]) as srv:
        client = LLMClient(LLMConfig(base_url=srv.base_url, model="scripted"))
        ...
        assert len(srv.requests) == 2

Script items (one per successful chat request, consumed in order):

- ``str``: assistant content.
- ``dict``: ``{"content": ..., "tool_calls": [{"name": ..., "arguments": dict | str, "id": optional}],
  "finish_reason": optional}``; ``arguments`` given as a ``str`` is sent verbatim (for malformed-JSON
  tests). ``{"error": "message", "status": 400}`` answers with that HTTP error instead.
- ``callable(request_json) -> str | dict``: computed from the request (e.g. echo the prompt).

When the script is exhausted the server answers 500 so that a test that makes too many calls fails loudly.
"""

from __future__ import annotations

import itertools
import json
import math
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ScriptItem = str | dict[str, Any] | Callable[[dict[str, Any]], "str | dict[str, Any]"]

__all__ = ["ScriptedOpenAIServer", "approx_tokens", "ScriptItem"]


def approx_tokens(text: str) -> int:
    """Roughly 4 characters per token, at least 1: good enough for usage-accounting tests."""
    return max(1, math.ceil(len(text) / 4))


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # multi-part content: [{"type": "text", "text": ...}, ...]
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    text = content if isinstance(content, str) else ""
    for call in message.get("tool_calls") or []:
        fn = call.get("function", {})
        text += fn.get("name", "") + fn.get("arguments", "")
    return text


class ScriptedOpenAIServer:
    """Threaded HTTP server on 127.0.0.1 answering chat completions from a fixed script."""

    def __init__(
        self,
        replies: Sequence[ScriptItem],
        *,
        fail_first: int = 0,
        fail_status: int = 500,
        delay: float = 0.0,
        model: str = "scripted",
    ) -> None:
        self.replies: list[ScriptItem] = list(replies)
        self.fail_first = fail_first
        self.fail_status = fail_status
        self.delay = delay
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self.responses: list[tuple[int, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._next_reply = 0
        self._chat_requests = 0
        self._call_ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------------
    def start(self) -> ScriptedOpenAIServer:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        # short poll interval: shutdown() waits for it, and tests start dozens of servers
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="scripted-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # wakes handlers sleeping in `delay` so shutdown is immediate
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server is not running; use it as a context manager or call start()")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def remaining(self) -> int:
        """Script items not consumed yet (lets tests assert that every scripted reply was used)."""
        return len(self.replies) - self._next_reply

    # -- protocol ----------------------------------------------------------------------------------------
    def _error(self, status: int, message: str, err_type: str = "server_error") -> tuple[int, dict[str, Any]]:
        return status, {"error": {"message": message, "type": err_type, "param": None, "code": status}}

    def handle_chat(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self._chat_requests += 1
            n = self._chat_requests
        if n <= self.fail_first:
            return self._error(self.fail_status, f"scripted failure {n}/{self.fail_first}")
        if body.get("stream"):
            return self._error(400, "streaming is not supported by the scripted server", "invalid_request_error")
        if not isinstance(body.get("messages"), list):
            return self._error(400, "'messages' must be a list", "invalid_request_error")
        with self._lock:
            if self._next_reply >= len(self.replies):
                return self._error(500, f"script exhausted: all {len(self.replies)} scripted replies were used")
            item = self.replies[self._next_reply]
            self._next_reply += 1
        try:
            reply = item(body) if callable(item) else item
        except Exception as exc:  # a broken test callable should surface as a readable HTTP error
            return self._error(500, f"script callable raised {type(exc).__name__}: {exc}")
        if isinstance(reply, dict) and "error" in reply:
            status = int(reply.get("status", 400))
            return self._error(status, str(reply["error"]), "invalid_request_error")
        return 200, self._completion(body, reply)

    def _completion(self, body: dict[str, Any], reply: str | dict[str, Any]) -> dict[str, Any]:
        if isinstance(reply, str):
            reply = {"content": reply}
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
        tool_calls = []
        for call in reply.get("tool_calls") or []:
            args = call.get("arguments", {})
            tool_calls.append(
                {
                    "id": call.get("id") or f"call_{next(self._call_ids)}",
                    "type": "function",
                    "function": {
                        "name": call["name"],
                        "arguments": args if isinstance(args, str) else json.dumps(args),
                    },
                }
            )
        if tool_calls:
            message["tool_calls"] = tool_calls
        finish = reply.get("finish_reason") or ("tool_calls" if tool_calls else "stop")
        prompt_tokens = sum(approx_tokens(_message_text(m)) for m in body["messages"] if isinstance(m, dict))
        completion_tokens = approx_tokens(_message_text(message))
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def models(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [{"id": self.model, "object": "model", "created": 0, "owned_by": "askopt-tests"}],
        }


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedOpenAIServer

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass

    def _wait(self) -> bool:
        """Sleep `delay`; False if the server is stopping meanwhile."""
        return not (self.owner.delay > 0 and self.owner._stop.wait(self.owner.delay))

    def do_GET(self) -> None:
        if not self._wait():
            return
        if self.path.rstrip("/") == "/v1/models":
            self._send(200, self.owner.models())
        else:
            self._send(*self.owner._error(404, f"no route GET {self.path}", "not_found"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(*self.owner._error(404, f"no route POST {self.path}", "not_found"))
            return
        try:
            body = json.loads(raw or b"null")
        except json.JSONDecodeError as exc:
            self._send(*self.owner._error(400, f"invalid JSON body: {exc}", "invalid_request_error"))
            return
        if not isinstance(body, dict):
            self._send(*self.owner._error(400, "request body must be a JSON object", "invalid_request_error"))
            return
        with self.owner._lock:
            self.owner.requests.append(body)
            self.owner.request_headers.append({k.lower(): v for k, v in self.headers.items()})
        if not self._wait():
            return
        status, payload = self.owner.handle_chat(body)
        with self.owner._lock:
            self.owner.responses.append((status, payload))
        self._send(status, payload)
