"""Client-side rate limiting: requests and tokens per minute for one endpoint, so a study never floods it.

A reservation scheme (GCRA): each request is given the earliest send time at which both the request rate
(`rpm`, evenly spaced at 60/rpm s) and the token rate (`tpm`, the request's estimated tokens at tpm/60 per
second) allow it, and the limiter's clock moves past it. Evenly spaced sends never put more than `rpm`
requests or `tpm` tokens into any 60-s window of the provider, so with the same limits on both sides 429s
only come from network jitter. `reserve` is pure bookkeeping (no sleeping), so one instance can live in a
Ray actor and serve a whole cluster (`evaluation.fanout.RateLimiterActor`); `acquire` sleeps locally.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["RateLimit", "RateLimiter"]


@dataclass(frozen=True)
class RateLimit:
    """Requests and tokens per minute for one endpoint; 0 means no limit on that axis."""

    rpm: int = 0
    tpm: int = 0

    def __post_init__(self) -> None:
        for name in ("rpm", "tpm"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name}: {v!r} is not allowed; must be a whole number >= 0 (0 = no limit)")

    @property
    def active(self) -> bool:
        return bool(self.rpm or self.tpm)


class RateLimiter:
    """Thread-safe reservations against one `RateLimit`; `acquire(tokens)` blocks until the send time."""

    def __init__(self, limit: RateLimit, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.limit = limit
        self._clock, self._sleep = clock, sleep
        self._next_request = 0.0
        self._next_token = 0.0
        self._lock = threading.Lock()
        self.reserved = 0
        self.waited = 0.0

    def reserve(self, tokens: int, now: float | None = None) -> float:
        """Book a send slot for a request of `tokens`; the seconds from `now` until it may be sent."""
        now = self._clock() if now is None else now
        with self._lock:
            send_at = max(now, self._next_request if self.limit.rpm else now,
                          self._next_token if self.limit.tpm else now)
            if self.limit.rpm:
                self._next_request = send_at + 60.0 / self.limit.rpm
            if self.limit.tpm:
                self._next_token = send_at + max(0, tokens) * 60.0 / self.limit.tpm
            self.reserved += 1
            self.waited += send_at - now
            return send_at - now

    def acquire(self, tokens: int) -> float:
        wait = self.reserve(tokens)
        if wait > 0:
            self._sleep(wait)
        return wait
