"""What stands in front of both HTTP apps: body-size limit, API keys, rate limits, CORS, and field-named 4xx.

- Body size: a pure ASGI middleware reads at most `max_body_bytes` (Content-Length checked first, chunked bodies
  counted as they arrive) and answers 413 past it, before FastAPI parses anything.
- API keys: bearer tokens from `$ASKOPT_API_KEYS` (comma-separated) and/or a keys file (one per line, either the
  key itself or `sha256:<hex digest>`); when any key is configured, every route but the open ones answers 401
  without a valid `Authorization: Bearer <key>`. Keys are compared by SHA-256 digest; the digest's prefix is the
  owner id that sessions are filed under. Keys made by `askopt keys create` live hashed in the sessions database
  (`serving.keys`); the guard re-reads the active ones at most every `KEYS_TTL` seconds, so a revoked key stops
  working within that time on every replica. The owner of such a key is its public id.
- Rate limits: a token bucket per key (`rate_per_minute`, refilled continuously, `burst` deep; a key's own rate in
  the database overrides the app's), 429 with `Retry-After` when empty. Only when keys are on: without keys there
  is no identity to limit. Under Ray (every Serve replica) the buckets live in one named actor per app
  (`SharedBuckets`, detached, restarted if it dies), so a key's rate holds across all replicas; should that
  actor be unreachable, a replica falls back to buckets in its own memory (N replicas then allow up to N times
  the rate) rather than refusing or waving requests through.
- CORS: off unless `cors_origins` is configured (no Access-Control-* header is ever sent), so a page on another
  site cannot read answers with a visitor's browser; with origins listed, those origins (and only they) may call.
- Validation: FastAPI's 422 detail becomes the project's error body with the field named (`seed: Input should
  be a valid integer`), and a JSON body nested past the parser's recursion limit is a 400, not a 500.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import threading
import time
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from serving.protocol import error_body

KEYS_ENV = "ASKOPT_API_KEYS"
KEYS_FILE_ENV = "ASKOPT_API_KEYS_FILE"
DEFAULT_MAX_BODY = 64 * 1024
DEFAULT_RATE_PER_MINUTE = 120.0
DEFAULT_BURST = 30.0
KEYS_TTL = 5.0  # seconds between re-reads of the key table


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def load_key_digests(keys: list[str] | None = None, keys_file: str | None = None) -> set[str]:
    """SHA-256 digests of the configured keys (arguments, then $ASKOPT_API_KEYS / $ASKOPT_API_KEYS_FILE)."""
    out: set[str] = set()
    raw = list(keys or []) + [k for k in os.environ.get(KEYS_ENV, "").split(",") if k.strip()]
    for path in filter(None, [keys_file, os.environ.get(KEYS_FILE_ENV)]):
        for line in Path(path).read_text().splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("sha256:"):
                out.add(line[len("sha256:"):].lower())
            else:
                raw.append(line)
    out.update(digest(k.strip()) for k in raw if k.strip())
    return out


class TokenBucket:
    """`rate` tokens per second up to `burst`; `take()` answers 0 (allowed) or the seconds until a token exists."""

    def __init__(self, rate: float, burst: float):
        self.rate, self.burst = rate, max(1.0, burst)
        self.tokens, self.stamp = self.burst, time.monotonic()

    def take(self, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate


class SharedBuckets:
    """Every replica's token buckets of one app, in one Ray actor (`shared_buckets`)."""

    def __init__(self) -> None:
        self.buckets: dict[str, TokenBucket] = {}

    def take(self, owner: str, rate: float, burst: float) -> float:
        bucket = self.buckets.get(owner)
        if bucket is None or bucket.rate != rate or bucket.burst != max(1.0, burst):
            bucket = self.buckets[owner] = TokenBucket(rate, burst)
        return bucket.take()


def shared_buckets(scope: str):
    """The app's bucket actor (created by the first replica that asks), or None outside Ray."""
    try:
        import ray
    except ImportError:
        return None
    if not ray.is_initialized():
        return None
    actor = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(SharedBuckets)
    return actor.options(name=f"askopt-rate-buckets-{scope}", namespace="askopt", lifetime="detached",
                         get_if_exists=True).remote()


def _app_name() -> str:
    try:
        from ray import serve

        return serve.get_replica_context().app_name
    except Exception:  # noqa: BLE001 - not in a Serve replica
        return "app"


class Guard:
    """Per-app settings; `owner(request)` is the caller's owner id ("" when keys are off)."""

    def __init__(self, key_digests: set[str], open_paths: tuple[str, ...] = ("/healthz",),
                 open_prefixes: tuple[str, ...] = ()):
        self.key_digests = key_digests
        self.open_paths = open_paths
        self.open_prefixes = open_prefixes
        self.key_store = None  # serving.keys.KeyStore when keys live in a database
        self._db_keys: dict = {}
        self._db_made = False
        self._db_read = -math.inf
        self.rate_per_minute = DEFAULT_RATE_PER_MINUTE
        self.burst = DEFAULT_BURST
        self.cors_origins: tuple[str, ...] = ()
        self._buckets: dict[str, TokenBucket] = {}
        self._shared = None  # SharedBuckets actor handle (under Ray)
        self._lock = threading.Lock()

    def configure(self, config: dict, key_store=None, scope: str | None = None) -> None:
        """A replica's settings from its app args: api_keys, api_keys_file, rate_per_minute, burst, cors_origins,
        shared_rate_limits (default on: one bucket per key across the app's replicas); `key_store` reads the keys
        made by `askopt keys create`; `scope` names the app whose replicas share buckets (default: the Serve app's
        name in a replica)."""
        keys = [k for k in str(config.get("api_keys", "") or "").split(",") if k.strip()]
        self.key_digests = load_key_digests(keys, config.get("api_keys_file"))
        self.key_store, self._db_read, self._db_made, self._db_keys = key_store, -math.inf, False, {}
        self.rate_per_minute = float(config.get("rate_per_minute", DEFAULT_RATE_PER_MINUTE))
        self.burst = float(config.get("burst", DEFAULT_BURST))
        origins = config.get("cors_origins") or ()
        if isinstance(origins, str):
            origins = origins.split(",")
        self.cors_origins = tuple(o.strip().rstrip("/") for o in origins if o.strip())
        self._buckets = {}
        shared = config.get("shared_rate_limits", True) and self.enabled and self.rate_per_minute > 0
        self._shared = shared_buckets(str(config.get("rate_scope") or scope or _app_name())) if shared else None

    def _active_db_keys(self) -> dict:
        if self.key_store is not None and time.monotonic() - self._db_read > KEYS_TTL:
            with self._lock:
                if time.monotonic() - self._db_read > KEYS_TTL:
                    self._db_made, self._db_keys = self.key_store.snapshot()
                    self._db_read = time.monotonic()
        return self._db_keys

    @property
    def enabled(self) -> bool:
        """Keys are on when any is configured, including a database whose keys are all revoked."""
        self._active_db_keys()
        return bool(self.key_digests) or self._db_made

    def is_open(self, path: str) -> bool:
        return path in self.open_paths or any(path.startswith(p) for p in self.open_prefixes)

    def check(self, authorization: str | None) -> str | None:
        """The owner id for a valid key, "" when keys are off, None when refused."""
        if not self.enabled:
            return ""
        if not authorization or not authorization.lower().startswith("bearer "):
            return None
        key = authorization[7:].strip()
        from serving.keys import verify

        key_id = verify(key, self._active_db_keys())
        if key_id is not None:
            return key_id
        d = digest(key)
        for known in self.key_digests:
            if hmac.compare_digest(d, known):
                return d[:16]
        return None

    def _rate(self, owner: str) -> float:
        own = self._db_keys.get(owner)
        return (own.rate_per_minute if own is not None and own.rate_per_minute else self.rate_per_minute) / 60.0

    async def wait_seconds_shared(self, owner: str) -> float:
        """`wait_seconds` against the app's shared buckets when there are any (this replica's own otherwise)."""
        if self._shared is not None and owner and self.rate_per_minute > 0:
            try:
                return float(await self._shared.take.remote(owner, self._rate(owner), self.burst))
            except Exception:  # noqa: BLE001 - the bucket actor is unreachable: limit with this replica's buckets
                pass
        return self.wait_seconds(owner)

    def wait_seconds(self, owner: str) -> float:
        """0 when `owner` may make a request now, else the seconds until it may (its bucket is empty)."""
        if not owner or self.rate_per_minute <= 0:
            return 0.0
        rate = self._rate(owner)
        with self._lock:
            bucket = self._buckets.get(owner)
            if bucket is None or bucket.rate != rate:
                bucket = self._buckets[owner] = TokenBucket(rate, self.burst)
            return bucket.take()

    def cors_headers(self, origin: str | None) -> dict:
        if origin and origin.rstrip("/") in self.cors_origins:
            return {"access-control-allow-origin": origin, "vary": "Origin"}
        return {}


def _json_response(status: int, body: dict, headers: dict | None = None):
    payload = json.dumps(body).encode()
    hdrs = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    hdrs += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    return payload, hdrs


def _with_headers(send, extra: dict):
    async def wrapped(message):
        if message["type"] == "http.response.start":
            message = {**message, "headers": list(message.get("headers", [])) +
                       [(k.encode(), v.encode()) for k, v in extra.items()]}
        await send(message)
    return wrapped


class GuardMiddleware:
    """Pure ASGI: auth first (cheap), then the body read under the size limit and replayed to the app."""

    def __init__(self, app, guard: Guard, max_body_bytes: int = DEFAULT_MAX_BODY):
        self.app, self.guard, self.max_body = app, guard, max_body_bytes

    async def _send(self, send, status: int, body: dict, headers: dict | None = None):
        payload, hdrs = _json_response(status, body, headers)
        await send({"type": "http.response.start", "status": status, "headers": hdrs})
        await send({"type": "http.response.body", "body": payload})

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        path = scope.get("path", "")
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root):] or "/"
        cors = self.guard.cors_headers(headers.get("origin"))
        if cors and scope.get("method") == "OPTIONS" and "access-control-request-method" in headers:
            await send({"type": "http.response.start", "status": 204, "headers": [
                (k.encode(), v.encode()) for k, v in {**cors, "access-control-allow-methods": "GET, POST",
                                                      "access-control-allow-headers": "authorization, content-type",
                                                      "access-control-max-age": "600"}.items()]})
            return await send({"type": "http.response.body", "body": b""})
        if cors:
            send = _with_headers(send, cors)
        if not self.guard.is_open(path):
            owner = self.guard.check(headers.get("authorization"))
            if owner is None:
                return await self._send(send, 401, error_body(
                    "authorization: a valid API key is required (header 'Authorization: Bearer <key>')",
                    kind="authentication_error", param="authorization"), {"www-authenticate": "Bearer"})
            scope.setdefault("state", {})["owner"] = owner
            wait = await self.guard.wait_seconds_shared(owner)
            if wait > 0:
                return await self._send(send, 429, error_body(
                    f"rate limit: this key has used its requests for now; retry in {math.ceil(wait)} s",
                    kind="rate_limit_error", param="authorization"),
                    {"retry-after": str(math.ceil(wait))})
        too_big = error_body(f"body: larger than this server's limit of {self.max_body} bytes", param="body")
        length = headers.get("content-length")
        if length is not None:
            try:
                if int(length) > self.max_body:
                    return await self._send(send, 413, too_big)
            except ValueError:
                return await self._send(send, 400, error_body("content-length: not a number", param="body"))
        chunks, total = [], 0
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return None
            body = msg.get("body", b"")
            total += len(body)
            if total > self.max_body:
                return await self._send(send, 413, too_big)
            chunks.append(body)
            if not msg.get("more_body"):
                break
        whole, replayed = b"".join(chunks), False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": whole, "more_body": False}
            return await receive()  # later calls wait for the disconnect, which is how handlers notice it

        return await self.app(scope, replay, send)


def _field(loc) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path")]
    return ".".join(parts) or "body"


def install(app: FastAPI, guard: Guard, max_body_bytes: int = DEFAULT_MAX_BODY) -> None:
    """Wire the middleware and the error handlers into an app."""
    app.add_middleware(GuardMiddleware, guard=guard, max_body_bytes=max_body_bytes)

    @app.exception_handler(RequestValidationError)
    async def _validation(_request: Request, exc: RequestValidationError):
        errors = exc.errors()
        first = errors[0] if errors else {"loc": ("body",), "msg": "invalid body"}
        name = _field(first.get("loc", ()))
        detail = [{"field": _field(e.get("loc", ())), "message": e.get("msg", "")} for e in errors[:20]]
        body = error_body(f"{name}: {first.get('msg', 'invalid')}", param=name)
        body["error"]["details"] = detail
        return JSONResponse(body, status_code=400)

    @app.exception_handler(RecursionError)
    async def _deep(_request: Request, _exc: RecursionError):
        return JSONResponse(error_body("body: JSON nested too deeply", param="body"), status_code=400)

    @app.exception_handler(UnicodeDecodeError)
    async def _bytes(_request: Request, _exc: UnicodeDecodeError):
        return JSONResponse(error_body("body: not valid UTF-8", param="body"), status_code=400)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException):
        # FastAPI's own 4xx (a body it cannot parse: bytes, an integer past 4300 digits; an unknown route or
        # method) in the project's error shape, naming what was wrong
        field = {400: "body", 404: "path", 405: "method"}.get(exc.status_code, "request")
        detail = str(exc.detail)
        if detail == "There was an error parsing the body":
            detail = "not valid JSON (there was an error parsing the body)"
        return JSONResponse(error_body(f"{field}: {detail}", param=field), status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))
