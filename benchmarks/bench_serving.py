"""Load on the consultant's /v1/solve at concurrency 16: requests per second with 1 and 2 replicas.

    .venv/bin/python benchmarks/bench_serving.py [--seconds 20] [--concurrency 16] [--no-check] [--json out.json]
    .venv/bin/python benchmarks/bench_serving.py --fuzz 10000     # hostile bodies at both apps: count 5xx

Starts a local Ray (2 CPUs) and Serve, deploys the consultant with one replica per core (num_cpus=1 each), and
keeps `concurrency` clients busy posting one small problem (method ss, 300 replications) for `--seconds`, first
with 1 replica, then with 2. Prints req/s, latency percentiles, non-200 counts, the limits' estimate of one request
next to its measured time, and the ratio 2-replica / 1-replica. Target: ratio >= 1.3 (exit 1 if missed unless
--no-check). The machine's 2 cores are shared with everything else running: say so when quoting figures.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PROBLEM = {
    "time_horizon": 60, "demand_type": "random", "demand_distribution": "poisson(6)",
    "perishability": "non_perishable", "state_transition_model": "lost_sale", "holding_cost": 0.4,
    "penalty_cost": 3.0, "setup_cost": 2, "lead_time": 1, "max_inventory": 60, "max_order": 30,
    "risk_tolerance": 1,
}
BODY = {"params": PROBLEM, "method": "ss", "replications": 300}
TARGET_RATIO = 1.3
HOSTILE = [None, True, -1, 0, 10**30, -10**30, 1e308, -1e308, 1e-308, "1e999", "-1e999", "NaN", "inf", "",
           "x" * 5000, "-$5", "minus 5", "(5)", "\u22125", "poisson(3e9)", "uniform(0,1e12)", "normal(5,-1)",
           "empirical(/etc/passwd)", "empirical(/dev/zero)", "empirical([])", "empirical([1e999])",
           "empirical([" + ",".join(["7"] * 3000) + "])", "1,000,000", "3 weeks", [1, [2]], {"value": {"x": 1}},
           {"value": "poisson(4)"}, "\x00", "\ud800"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load(url: str, seconds: float, concurrency: int) -> dict:
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    lock = threading.Lock()
    stop = time.perf_counter() + seconds

    def worker():
        with httpx.Client(timeout=120) as client:
            while time.perf_counter() < stop:
                t0 = time.perf_counter()
                try:
                    code = client.post(url, json=BODY).status_code
                except httpx.HTTPError:
                    code = -1
                with lock:
                    statuses[code] = statuses.get(code, 0) + 1
                    if code == 200:
                        latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    lat = sorted(latencies)
    return {
        "ok": len(lat), "statuses": statuses, "wall_s": round(wall, 2), "req_per_s": round(len(lat) / wall, 3),
        "p50_s": round(statistics.median(lat), 3) if lat else None,
        "p95_s": round(lat[int(0.95 * (len(lat) - 1))], 3) if lat else None,
    }


def fuzz(base: str, n: int, seed: int = 0) -> dict:
    """n hostile requests: a valid body with one field replaced (or the raw text mangled), at /v1/solve, the
    session routes and the imitator. Counts statuses; any 5xx or transport error is a failure."""
    import random

    from serving.protocol import scenario_message

    rng = random.Random(seed)
    statuses: dict[int, int] = {}
    slowest = 0.0
    failures: list[str] = []
    sid = httpx.post(f"{base}/c/v1/sessions", timeout=120).json()["session_id"]
    with httpx.Client(timeout=120) as client:
        for i in range(n):
            kind = rng.choice(["solve", "solve", "raw", "message", "imitator"])
            if kind == "solve":
                body = {"params": dict(PROBLEM), "method": "ss", "replications": 50}
                where = rng.choice(["params", "top"])
                if where == "params":
                    body["params"][rng.choice(list(PROBLEM) + ["bogus"])] = rng.choice(HOSTILE)
                else:
                    body[rng.choice(["seed", "replications", "method", "objective", "evaluate", "extra"])] = \
                        rng.choice(HOSTILE)
                req = ("POST", f"{base}/c/v1/solve", json.dumps(body, allow_nan=True))
            elif kind == "raw":
                text = json.dumps({"params": PROBLEM})
                cut = rng.randrange(len(text))
                text = rng.choice([text[:cut], text[:cut] + "[" * 2000 + text[cut:], text.replace("60", "1e999"),
                                   "\x00" * 100, "[" * 30000])
                req = ("POST", f"{base}/c/v1/solve", text)
            elif kind == "message":
                msg = rng.choice(HOSTILE)
                req = ("POST", f"{base}/c/v1/sessions/{sid}/messages", json.dumps({"message": msg}))
            else:
                truth = dict(PROBLEM)
                truth[rng.choice(list(PROBLEM))] = rng.choice(HOSTILE)
                system = scenario_message(truth, "A shop.", rng.choice(["typical", "expert", "pirate", 3]),
                                          rng.choice([0, 7, "abc", -1, 2**70]))
                req = ("POST", f"{base}/i/v1/chat/completions", json.dumps(
                    {"model": "askopt-imitator", "messages": [system, {"role": "user", "content": "Hello"}]}))
            t0 = time.perf_counter()
            try:
                code = client.request(req[0], req[1], content=req[2].encode("utf-8", "surrogatepass"),
                                      headers={"content-type": "application/json"}).status_code
            except httpx.HTTPError as exc:
                code = -1
                failures.append(f"{kind}: {exc.__class__.__name__}")
            slowest = max(slowest, time.perf_counter() - t0)
            statuses[code] = statuses.get(code, 0) + 1
            if code >= 500:
                failures.append(f"{kind}: {code} {req[2][:200]}")
            if (i + 1) % 1000 == 0:
                print(f"  {i + 1} inputs: {statuses}", flush=True)
    return {"inputs": n, "statuses": statuses, "slowest_s": round(slowest, 2), "failures": failures[:20],
            "n_failures": len(failures)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--fuzz", type=int, default=0, help="instead of the load test: this many hostile inputs")
    args = ap.parse_args(argv)
    if args.fuzz:
        return main_fuzz(args)

    import ray
    from ray import serve

    from inventory.spec import ParameterTable
    from optimization.limits import Plan, estimate
    from serving.consultant_app import build_app

    est = estimate(ParameterTable.from_json(PROBLEM).to_problem(), Plan(("ss",), replications=300))
    port = _free_port()
    db = Path(tempfile.mkdtemp()) / "sessions.db"
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    url = f"http://127.0.0.1:{port}/v1/solve"
    results = {}
    try:
        for replicas in (1, 2):
            serve.run(build_app({"sessions_url": f"sqlite:///{db}", "num_replicas": replicas, "num_cpus": 1}),
                      name="consultant", route_prefix="/")
            t0 = time.perf_counter()
            single = httpx.post(url, json=BODY, timeout=120)
            single_s = time.perf_counter() - t0
            assert single.status_code == 200, single.text
            res = load(url, args.seconds, args.concurrency)
            res["single_request_s"] = round(single_s, 3)
            results[replicas] = res
            print(f"replicas={replicas}: {res['req_per_s']} req/s at concurrency {args.concurrency} "
                  f"(p50 {res['p50_s']} s, p95 {res['p95_s']} s, statuses {res['statuses']}); one request "
                  f"{single_s:.2f} s, estimated {est.seconds:.2f} s", flush=True)
            serve.delete("consultant")
    finally:
        serve.shutdown()
        ray.shutdown()
    ratio = results[2]["req_per_s"] / max(results[1]["req_per_s"], 1e-9)
    errors = sum(n for r in results.values() for code, n in r["statuses"].items() if code != 200)
    print(f"scaling 2/1 replicas: {ratio:.2f}x (target >= {TARGET_RATIO}); non-200 responses: {errors}")
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "ratio": ratio, "errors": errors}, indent=2))
    if not args.no_check and (ratio < TARGET_RATIO or errors):
        print("TARGET MISSED", file=sys.stderr)
        return 1
    return 0


def main_fuzz(args) -> int:
    import ray
    from ray import serve

    from serving.consultant_app import build_app as consultant
    from serving.imitator_app import build_app as imitator

    port = _free_port()
    db = Path(tempfile.mkdtemp()) / "sessions.db"
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        serve.run(consultant({"sessions_url": f"sqlite:///{db}", "num_cpus": 0.5}), name="c", route_prefix="/c")
        serve.run(imitator({"num_replicas": 1}), name="i", route_prefix="/i")
        res = fuzz(f"http://127.0.0.1:{port}", args.fuzz)
    finally:
        serve.shutdown()
        ray.shutdown()
    print(f"fuzz: {res['inputs']} inputs, statuses {res['statuses']}, slowest {res['slowest_s']} s, "
          f"5xx/transport failures {res['n_failures']} (target 0) {res['failures'][:5]}")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    if not args.no_check and res["n_failures"]:
        print("TARGET MISSED", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
