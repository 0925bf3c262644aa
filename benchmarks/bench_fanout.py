"""LLM study fan-out against the emulator: latency-bound wall time, a rate limit, injected faults, memory.

The emulator runs as its own process (`python -m serving.llm_emulator`, its own GIL), the study on a local
Ray with 2 CPUs. Scenarios (issue 12's measurements, as ratios):

* fanout: lognormal latency (mean 1.5 s), no limit, up to `--concurrency` dialogues in flight. Bound = model
  calls x mean latency / concurrency + scoring time, where scoring time is the same slice run offline (all
  CPU work, no model). Target: wall / bound <= 1.5, and the peak number of dialogues in flight >= 128
  (when the slice has that many units).
* baseline: today's runner measured the same way (dialogues inside num_cpus=1 tasks: 2 at a time on 2
  CPUs) on a small slice; the speed-up is the ratio of units per second.
* ratelimit: the emulator answers 429 over `--rpm` requests per minute, the study's cluster-wide limiter is
  set to the same rate. Targets: zero failed units, measured throughput (middle 80% of requests) within 10%
  of the limit, every 429 retried (clients' 429 count == the emulator's, and no unit failed on one).
* faults: 5% injected 5xx and 1% hangs (client timeout 5 s). Targets: zero lost units (every unit written,
  no infrastructure failure); a unit fails on the model only after its whole retry budget.
* memory: the driver's peak RSS and each dialogue actor's RSS at its first and last unit (flat: growth
  <= 100 MB over the run).

    .venv/bin/python benchmarks/bench_fanout.py                 # all scenarios, default sizes
    .venv/bin/python benchmarks/bench_fanout.py --instances 70 --trials 3    # the issue's 630 units
    .venv/bin/python benchmarks/bench_fanout.py fanout --no-check

Prints one JSON object per scenario and exits 1 if a target is missed (unless --no-check). Timings on a
shared 2-core machine are noisy: the load average is recorded before and after each scenario.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Emulator:
    """The emulator as a separate process on a free port."""

    def __init__(self, **flags) -> None:
        self.port = free_port()
        args = [sys.executable, "-m", "serving.llm_emulator", "--port", str(self.port)]
        for k, v in flags.items():
            args += [f"--{k.replace('_', '-')}", str(v)]
        self.proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{self.base_url[:-3]}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"emulator did not start: {self.proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.2)

    def stats(self, times: bool = False) -> dict:
        return httpx.get(f"{self.base_url}/emulator/stats", params={"times": times}, timeout=30).json()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def study_config(name: str, instances: int, trials: int, base_url: str | None, **llm):
    from evaluation.study import StudyConfig

    cfg = {"base_url": base_url, "model": "auto", **llm} if base_url else None
    return StudyConfig(name=name, instances=instances, trials=trials, llm=cfg,
                       prices={"*": {"prompt_per_million": 0.15, "completion_per_million": 0.60}})


def run(cfg, work: Path, **kw):
    from evaluation.runner import load_results, run_study

    out = work / cfg.name
    shutil.rmtree(out, ignore_errors=True)
    before = load()
    s = run_study(cfg, out, progress=False, include_dashboard=False, **kw)
    return s, load_results(out), {"load_before": before, "load_after": load()}


def usage_totals(df) -> dict:
    cols = ["llm_calls", "llm_retries", "llm_rate_limited", "prompt_tokens", "completion_tokens", "cost_usd"]
    return {c: (round(float(df[c].sum()), 6) if c == "cost_usd" else int(df[c].sum())) for c in cols}


def bench_fanout(a, work: Path) -> dict:
    offline, off_df, off_load = run(study_config("offline", a.instances, a.trials, None), work)
    emu = Emulator(latency_mean=a.latency, latency_sigma=0.5)
    try:
        s, df, ld = run(study_config("fanout", a.instances, a.trials, emu.base_url), work,
                        max_concurrent_dialogues=a.concurrency)
        stats = emu.stats()
    finally:
        emu.stop()
    calls = int(stats.get("ok", 0)) + int(stats.get("errors", 0)) + int(stats.get("timeouts", 0))
    bound = calls * a.latency / a.concurrency + offline.seconds
    r = {"bench": "fanout", "units": s.total_units, "concurrency": a.concurrency, "latency_mean_s": a.latency,
         "seconds": round(s.seconds, 1), "offline_scoring_seconds": round(offline.seconds, 1),
         "model_calls": calls, "bound_seconds": round(bound, 1), "ratio_wall_over_bound": round(s.seconds / bound, 2),
         "target_ratio": 1.5, "peak_dialogues": s.peak_dialogues, "emulator_max_in_flight": stats.get("max_in_flight"),
         "failed_units": s.failed, "offline_failed_units": offline.failed, "infra_failures": s.infra_failures,
         "units_per_second": round(s.executed / s.seconds, 3), **usage_totals(df),
         "driver_peak_rss_mb": s.driver_peak_rss_mb, "actors": s.actors, **ld, "offline_load": off_load}
    need_peak = min(128, s.total_units)
    r["ok"] = (r["ratio_wall_over_bound"] <= 1.5 and s.peak_dialogues >= need_peak and s.infra_failures == 0
               and s.executed == s.total_units)
    return r


def bench_baseline(a, work: Path, fanout: dict | None) -> dict:
    emu = Emulator(latency_mean=a.latency, latency_sigma=0.5)
    try:
        s, df, ld = run(study_config("baseline", a.baseline_instances, 1, emu.base_url), work,
                        max_concurrent_dialogues=0)
    finally:
        emu.stop()
    r = {"bench": "baseline", "runner": "dialogues in num_cpus=1 tasks (before issue 12)", "units": s.total_units,
         "seconds": round(s.seconds, 1), "units_per_second": round(s.executed / s.seconds, 3),
         "model_calls": int(df["llm_calls"].sum()), **ld}
    if fanout:
        r["speedup_units_per_second"] = round(fanout["units_per_second"] / r["units_per_second"], 1)
        r["baseline_extrapolated_seconds_for_fanout_units"] = round(fanout["units"] / r["units_per_second"], 0)
    r["ok"] = s.executed == s.total_units
    return r


def middle_rate(times: list[float]) -> float:
    """Requests per minute over the middle 80% of requests (ramp-up and tail excluded)."""
    times = sorted(times)
    lo, hi = int(0.1 * len(times)), int(0.9 * len(times)) - 1
    if hi <= lo or times[hi] <= times[lo]:
        return 0.0
    return (hi - lo) / (times[hi] - times[lo]) * 60.0


def bench_ratelimit(a, work: Path) -> dict:
    from llm.ratelimit import RateLimit

    emu = Emulator(latency_mean=a.latency, latency_sigma=0.5, rpm=a.rpm)
    try:
        s, df, ld = run(study_config("ratelimit", a.limit_instances, 1, emu.base_url), work,
                        max_concurrent_dialogues=a.concurrency, rate_limit=RateLimit(rpm=a.rpm))
        stats = emu.stats(times=True)
    finally:
        emu.stop()
    rate = middle_rate(stats.get("ok_times", []))
    llm_failed = int((df["stage"] == "llm").sum() + df["reason"].str.contains("HTTP 429").sum())
    r = {"bench": "ratelimit", "units": s.total_units, "rpm_limit": a.rpm, "measured_rpm_middle_80pct": round(rate, 1),
         "ratio_to_limit": round(rate / a.rpm, 3), "target": "0.9..1.1", "seconds": round(s.seconds, 1),
         "server_429s": int(stats.get("rate_limited", 0)), "client_429_retries": int(df["llm_rate_limited"].sum()),
         "failed_units": s.failed, "units_failed_on_the_model": llm_failed,
         "limiter_seconds": round(float(df["limiter_seconds"].sum()), 1), **usage_totals(df), **ld}
    r["ok"] = (0.9 <= rate / a.rpm <= 1.1 and llm_failed == 0 and r["server_429s"] == r["client_429_retries"]
               and s.executed == s.total_units and s.infra_failures == 0)
    return r


def bench_faults(a, work: Path) -> dict:
    emu = Emulator(latency_mean=a.latency, latency_sigma=0.5, error_rate=0.05, timeout_rate=0.01, hang_seconds=30)
    try:
        s, df, ld = run(study_config("faults", a.limit_instances, 1, emu.base_url, timeout=5.0, max_retries=3),
                        work, max_concurrent_dialogues=a.concurrency)
        stats = emu.stats()
    finally:
        emu.stop()
    llm_failures = df[df["reason"].str.contains("LLMError|JSONReplyError", regex=True)]
    early = int((~llm_failures["reason"].str.contains(r"after 4 attempt\(s\)|not valid|JSON", regex=True)).sum())
    r = {"bench": "faults", "units": s.total_units, "written_units": int(len(df)), "infra_failures": s.infra_failures,
         "server_5xx": int(stats.get("errors", 0)), "server_timeouts": int(stats.get("timeouts", 0)),
         "client_retries": int(df["llm_retries"].sum()), "units_failed_on_the_model": int(len(llm_failures)),
         "failed_before_the_retry_budget": early, "seconds": round(s.seconds, 1), **ld}
    r["ok"] = len(df) == s.total_units and s.infra_failures == 0 and early == 0
    return r


def memory_check(fanout: dict) -> dict:
    growth = [a["rss_max_mb"] - a["rss_first_mb"] for a in fanout.get("actors", [])]
    r = {"bench": "memory", "driver_peak_rss_mb": fanout["driver_peak_rss_mb"],
         "actor_rss_first_mb": [a["rss_first_mb"] for a in fanout.get("actors", [])],
         "actor_rss_max_mb": [a["rss_max_mb"] for a in fanout.get("actors", [])],
         "actor_growth_mb_max": round(max(growth), 1) if growth else None, "target_growth_mb": 100}
    r["ok"] = bool(growth) and max(growth) <= 100
    return r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", nargs="?", default="all", choices=("all", "fanout", "baseline", "ratelimit", "faults"))
    ap.add_argument("--instances", type=int, default=70, help="fanout slice: instances (x3 treatments x trials)")
    ap.add_argument("--trials", type=int, default=1)
    ap.add_argument("--concurrency", type=int, default=128)
    ap.add_argument("--latency", type=float, default=1.5, help="emulator mean latency (s)")
    ap.add_argument("--baseline-instances", type=int, default=2)
    ap.add_argument("--limit-instances", type=int, default=20, help="slice for the rate-limit and fault scenarios")
    ap.add_argument("--rpm", type=int, default=600)
    ap.add_argument("--num-cpus", type=int, default=2)
    ap.add_argument("--json", default=None, help="append results to this JSON-lines file")
    ap.add_argument("--no-check", action="store_true", help="report only; exit 0 even on a missed target")
    a = ap.parse_args(argv)
    import ray

    from evaluation.runner import init_ray

    work = Path(tempfile.mkdtemp(prefix="bench_fanout_"))
    init_ray(num_cpus=a.num_cpus, include_dashboard=False)
    results = []
    try:
        fan = None
        if a.what in ("all", "fanout"):
            fan = bench_fanout(a, work)
            results += [fan, memory_check(fan)]
        if a.what in ("all", "baseline"):
            results.append(bench_baseline(a, work, fan))
        if a.what in ("all", "ratelimit"):
            results.append(bench_ratelimit(a, work))
        if a.what in ("all", "faults"):
            results.append(bench_faults(a, work))
    finally:
        ray.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    for r in results:
        print(json.dumps(r))
    if a.json:
        with open(a.json, "a") as f:
            for r in results:
                f.write(json.dumps(r) + "\n")
    missed = [r["bench"] for r in results if not r.get("ok")]
    if missed:
        print(f"missed targets: {', '.join(missed)}", file=sys.stderr)
    return 1 if missed and not a.no_check else 0


if __name__ == "__main__":
    sys.exit(main())
