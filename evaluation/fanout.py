"""Many LLM dialogues at once: a small pool of threaded actors and one rate limiter for the whole cluster.

Why actors with threads: a dialogue spends nearly all its time waiting on the model, and the agents are
plain synchronous code. Each Ray worker process costs ~100 MB (platform facts), so one process per
dialogue cannot reach hundreds in flight on a small machine; a few actors, each running up to
`max_concurrency` dialogues in threads (blocking on HTTP, releasing the GIL), can. The actors ask for no CPU
(`num_cpus=0`): their CPU use is small and the CPU slots stay with the scoring tasks (`num_cpus=1`).

Why one limiter actor: requests and tokens per minute are a property of the provider's account, not of a
process. Every client in the cluster books its send slot with the same `RateLimiterActor` (one named actor
per study), then sleeps locally until the slot (`llm.ratelimit` explains the booking).
"""

from __future__ import annotations

import os
import resource
import threading
import time

from llm.ratelimit import RateLimit, RateLimiter

__all__ = ["ClusterRateLimiter", "DialogueWorker", "RateLimiterActor", "peak_rss_mb", "rss_mb"]


def rss_mb() -> float:
    """This process's resident memory now (MB), from /proc (0 where unavailable)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def peak_rss_mb() -> float:
    """This process's peak resident memory (MB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class RateLimiterActor:
    """Send-slot bookings for every endpoint of a study (a Ray actor; `reserve` is microseconds of work)."""

    def __init__(self, limits: dict[str, tuple[int, int]]) -> None:
        self.limiters = {ep: RateLimiter(RateLimit(*lim)) for ep, lim in limits.items()}

    def reserve(self, endpoint: str, tokens: int) -> float:
        lim = self.limiters.get(endpoint)
        return lim.reserve(tokens, time.monotonic()) if lim is not None else 0.0

    def stats(self) -> dict:
        return {ep: {"reserved": lim.reserved, "waited_s": round(lim.waited, 3)} for ep, lim in self.limiters.items()}


class ClusterRateLimiter:
    """The `llm.client.RateLimiter` hook backed by the study's limiter actor (books remotely, sleeps here).

    The actor and this process run on one machine's clock only if they share a host; the booking returns a
    *duration*, so clocks never need to agree."""

    def __init__(self, handle, endpoint: str) -> None:
        self.handle, self.endpoint = handle, endpoint

    def acquire(self, tokens: int) -> float:
        import ray

        wait = float(ray.get(self.handle.reserve.remote(self.endpoint, int(tokens))))
        if wait > 0:
            time.sleep(wait)
        return wait


class DialogueWorker:
    """Runs the dialogue phase of study units, many at once in threads (a Ray actor with max_concurrency).

    One LLMClient per actor holds the connection pool and the limiter; each unit gets a `fork()` of it so its
    tokens, calls and retries are accounted separately."""

    def __init__(self, config_json: dict, runner, limiter_handle=None) -> None:
        from evaluation.study import StudyConfig
        from llm.client import LLMClient, LLMConfig

        self.config = StudyConfig.from_json(config_json)
        self.runner = runner
        limiter = None
        if limiter_handle is not None and self.config.llm:
            limiter = ClusterRateLimiter(limiter_handle, self.config.llm.get("base_url") or "api.openai.com")
        self.client = LLMClient(LLMConfig(**self.config.llm), limiter=limiter) if self.config.llm else None
        self.instances: dict = {}
        self.lock = threading.Lock()
        self.units = 0
        self.first_rss = 0.0
        self.max_rss = 0.0
        self.active = 0
        self.max_active = 0

    def _instance(self, instance_json: dict):
        from agents.generator import Instance

        key = instance_json["instance_id"]
        with self.lock:
            inst = self.instances.get(key)
        if inst is None:
            inst = Instance.from_dict(instance_json)
            with self.lock:
                self.instances[key] = inst
        return inst

    def run(self, unit, instance_json: dict):
        """One unit's dialogue phase -> UnitOutcome (the unit's own failures are in the outcome)."""
        with self.lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            client = self.client.fork() if self.client is not None else None
            return self.runner.dialogue(unit, self._instance(instance_json), self.config, client)
        finally:
            rss = rss_mb()
            with self.lock:
                self.active -= 1
                self.units += 1
                self.first_rss = self.first_rss or rss
                self.max_rss = max(self.max_rss, rss)
                if len(self.instances) > 256:  # an instance is only needed while its units run
                    self.instances.clear()

    def stats(self) -> dict:
        with self.lock:
            return {"pid": os.getpid(), "units": self.units, "max_concurrent": self.max_active,
                    "rss_first_mb": round(self.first_rss, 1), "rss_max_mb": round(self.max_rss, 1),
                    "rss_now_mb": round(rss_mb(), 1), "peak_rss_mb": round(peak_rss_mb(), 1)}
