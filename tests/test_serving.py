"""Ray Serve apps over real HTTP: the OpenAI-compatible imitator endpoint and the consultant API."""

import json
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from llm.client import LLMClient, LLMConfig
from serving.protocol import scenario_message

GROUND_TRUTH = {
    "time_horizon": 60, "demand_type": "random", "demand_distribution": "poisson(6)",
    "perishability": "non_perishable", "state_transition_model": "lost_sale", "holding_cost": 0.4,
    "penalty_cost": 3.0, "setup_cost": 2, "lead_time": 2, "max_inventory": 60, "max_order": 30,
    "risk_tolerance": 1,
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    import ray  # a core dependency: an import failure must fail the tests, not skip them
    from ray import serve

    from serving.consultant_app import build_app as consultant
    from serving.imitator_app import build_app as imitator

    db = tmp_path_factory.mktemp("sessions") / "sessions.db"
    port = _free_port()
    ray.init(address="local", num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    serve.run(imitator(), name="imitator", route_prefix="/imitator")
    serve.run(consultant({"sessions_url": f"sqlite:///{db}", "num_cpus": 0.25}), name="consultant", route_prefix="/consultant")
    serve.run(consultant({"sessions_url": f"sqlite:///{db}", "api_keys": "key-a,key-b", "num_cpus": 0.25}), name="keyed",
              route_prefix="/keyed")
    yield f"http://127.0.0.1:{port}"
    serve.shutdown()
    ray.shutdown()


def test_consultant_solve_matches_cli_contract(base):
    r = httpx.post(f"{base}/consultant/v1/solve",
                   json={"params": GROUND_TRUTH, "evaluate": ["ss:10,40"], "replications": 300}, timeout=60)
    assert r.status_code == 200
    data = r.json()
    assert data["best_ss"]["s"] < data["best_ss"]["S"] <= 60
    assert data["dp"]["status"] == "solved"
    assert [p["name"] for p in data["policies"]][-1] == "ss:10,40"


def test_consultant_solve_bad_field_is_400_naming_it(base):
    r = httpx.post(f"{base}/consultant/v1/solve", json={"params": {**GROUND_TRUTH, "risk_tolerance": 40}},
                   timeout=60)
    assert r.status_code == 400
    assert "risk_tolerance" in r.json()["error"]["message"]


def test_imitator_endpoint_answers_the_openai_client(base):
    client = LLMClient(LLMConfig(base_url=f"{base}/imitator/v1", model="askopt-imitator", timeout=30))
    system = scenario_message(GROUND_TRUTH, "A small phone-accessories shop.", "expert", seed=3)
    first = client.chat([system, {"role": "user", "content": "Hello! Tell me about your business."}])
    assert first.content and first.usage.completion_tokens > 0
    convo = [system, {"role": "user", "content": "Hello! Tell me about your business."},
             {"role": "assistant", "content": first.content},
             {"role": "user", "content": "How many days does it take for an order to arrive?"}]
    second = client.chat(convo)
    assert "2" in second.content  # the expert states the true lead time
    again = client.chat(convo)
    assert again.content == second.content  # stateless replay: same conversation, same reply


def test_imitator_endpoint_rejects_missing_scenario(base):
    r = httpx.post(f"{base}/imitator/v1/chat/completions",
                   json={"model": "askopt-imitator", "messages": [{"role": "user", "content": "hi"}]}, timeout=30)
    assert r.status_code == 400 and "askopt_scenario" in r.json()["error"]["message"]
    models = httpx.get(f"{base}/imitator/v1/models", timeout=30).json()
    assert models["data"][0]["id"] == "askopt-imitator"


def test_vllm_config_and_cpu_refusal():
    from serving.vllm_app import VLLMImitatorConfig, build_vllm_app

    cfg = VLLMImitatorConfig(base_model="/models/base", lora_dir="/models/lora").llm_config_dict()
    assert cfg["lora_config"]["dynamic_lora_loading_path"] == "/models/lora"
    assert cfg["engine_kwargs"]["enable_lora"] is True
    assert json.loads(json.dumps(cfg)) == cfg
    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="engine vllm"):
            build_vllm_app(VLLMImitatorConfig(base_model="/models/base"))


def test_consultant_session_runs_to_a_policy(base):
    r = httpx.post(f"{base}/consultant/v1/sessions", timeout=30).json()
    sid = r["session_id"]
    assert r["stage"] == "extraction" and r["reply"]
    facts = [
        "I run a bike shop. We sell about 8 bikes a day, it varies like a Poisson process.",
        "I plan for 90 days. Bikes don't spoil.",
        "If we are out of stock the customer just leaves, the sale is lost.",
        "Holding a bike costs me 50 cents per day. A lost sale costs me $2.83.",
        "Each order costs $3 in fees. Delivery takes 10 days.",
        "I can store at most 80 bikes and the supplier ships at most 25 per order.",
    ]
    reply = None
    for _ in range(25):
        state = httpx.get(f"{base}/consultant/v1/sessions/{sid}", timeout=30).json()
        if state["stage"] != "extraction":
            break
        msg = facts.pop(0) if facts else ("yes" if reply and "Say 'yes'" in reply["reply"] else "3")
        reply = httpx.post(f"{base}/consultant/v1/sessions/{sid}/messages", json={"message": msg},
                           timeout=120).json()
    assert reply is not None and reply["stage"] == "interpretation"
    assert reply["policy"]["name"] in {"ss", "base_stock", "dp", "dqn"}
    assert reply["table"]["lead_time"]["value"] == "10" and reply["table"]["max_order"]["value"] == "25"
    assert reply["reply"].rstrip().endswith("Do you have any other questions?")
    assert httpx.get(f"{base}/consultant/v1/sessions/nope", timeout=30).status_code == 404


# ---- hardening (issue 9): every bad request is a 4xx naming the field; the replica stays up --------------------

def _post_raw(url: str, text: str, headers: dict | None = None) -> httpx.Response:
    return httpx.post(url, content=text.encode(), headers={"content-type": "application/json", **(headers or {})},
                      timeout=180)


def test_bad_bodies_are_4xx_naming_the_field(base):
    solve = f"{base}/consultant/v1/solve"
    body = json.dumps({"params": GROUND_TRUTH})
    r = _post_raw(solve, body.replace('"holding_cost": 0.4', '"holding_cost": 1e999'))
    assert r.status_code == 400 and "holding_cost" in r.json()["error"]["message"]
    r = _post_raw(solve, body.replace('"time_horizon": 60', '"time_horizon": 1e999'))
    assert r.status_code == 400 and "time_horizon" in r.json()["error"]["message"]
    r = httpx.post(solve, json={"params": GROUND_TRUTH, "seed": "abc"}, timeout=30)
    assert r.status_code == 400 and r.json()["error"]["message"].startswith("seed:")
    r = httpx.post(solve, json={"params": GROUND_TRUTH, "replications": 10**9}, timeout=30)
    assert r.status_code == 400 and r.json()["error"]["param"] == "replications"
    r = _post_raw(solve, "[" * 50_000 + "]" * 50_000)
    assert r.status_code == 413  # over the 64 KiB body limit, refused before parsing
    r = _post_raw(solve, '{"params": ' + "[" * 5000 + "]" * 5000 + "}")
    assert r.status_code == 400
    r = _post_raw(solve, "not json")
    assert r.status_code == 400


def test_a_retried_message_with_its_id_is_applied_once(base):
    # a replica can save the session and die before it answers; the client's retry then carries the same id
    sid = httpx.post(f"{base}/consultant/v1/sessions", timeout=60).json()["session_id"]
    url = f"{base}/consultant/v1/sessions/{sid}/messages"
    first = httpx.post(url, json={"message": "We sell about 8 bikes a day.", "message_id": "m-1"}, timeout=120).json()
    again = httpx.post(url, json={"message": "We sell about 8 bikes a day.", "message_id": "m-1"}, timeout=120).json()
    assert again["reply"] == first["reply"] and again["transcript"] == first["transcript"]
    users = [t for role, t in httpx.get(f"{base}/consultant/v1/sessions/{sid}", timeout=60).json()["transcript"]
             if role == "user"]
    assert users.count("We sell about 8 bikes a day.") == 1
    # a new id is a new message, even with the same words; a malformed id is a 400 naming the field
    httpx.post(url, json={"message": "We sell about 8 bikes a day.", "message_id": "m-2"}, timeout=120)
    users = [t for role, t in httpx.get(f"{base}/consultant/v1/sessions/{sid}", timeout=60).json()["transcript"]
             if role == "user"]
    assert users.count("We sell about 8 bikes a day.") == 2
    r = httpx.post(url, json={"message": "hi", "message_id": "no spaces/allowed"}, timeout=60)
    assert r.status_code == 400 and "message_id" in r.text


def test_no_file_access_from_request_data(base):
    for path in ("/etc/passwd", "/etc/shadow", "/dev/zero", "/nonexistent/x.csv"):
        r = httpx.post(f"{base}/consultant/v1/solve", timeout=30,
                       json={"params": {**GROUND_TRUTH, "demand_distribution": f"empirical({path})"}})
        assert r.status_code == 400
        msg = r.json()["error"]["message"]
        assert "inline" in msg and "not found" not in msg and "regular" not in msg  # says nothing about the file
    r = httpx.post(f"{base}/consultant/v1/solve", timeout=60, json={
        "params": {**GROUND_TRUTH, "demand_distribution": "empirical([4, 6, 7, 5, 8])"}, "method": "ss",
        "replications": 200})
    assert r.status_code == 200


def test_too_large_problems_are_refused_before_work(base):
    import time

    for changes, field in [({"demand_distribution": "poisson(3e9)"}, "demand_distribution"),
                           ({"time_horizon": 3650, "replications": 100_000}, "replications"),
                           ({"time_horizon": 1_000_000_000}, "time_horizon")]:
        t0 = time.perf_counter()
        reps = changes.pop("replications", 2000)
        r = httpx.post(f"{base}/consultant/v1/solve", json={"params": {**GROUND_TRUTH, **changes},
                                                            "replications": reps}, timeout=60)
        assert r.status_code == 422, r.text
        assert r.json()["error"]["param"] == field and "limit" in r.json()["error"]["message"]
        assert time.perf_counter() - t0 < 5
    assert httpx.get(f"{base}/consultant/healthz", timeout=10).json()["status"] == "ok"


def test_huge_warehouse_in_a_dialogue_is_refused_and_the_session_survives(base):
    sid = httpx.post(f"{base}/consultant/v1/sessions", timeout=30).json()["session_id"]
    facts = ["I sell about 8 bikes a day, it varies like a Poisson process. I plan for 90 days. Bikes don't spoil.",
             "If we are out of stock the customer just leaves, the sale is lost.",
             "Holding a bike costs me 50 cents per day. A lost sale costs me $2.83. Each order costs $3 in fees.",
             "Delivery takes 2 days. I'm fairly neutral about risk, say 0.",
             "I can store at most 1,000,000 bikes and the supplier ships at most 1,000,000 per order."]
    last = None
    for msg in facts + ["yes"] * 3:
        last = httpx.post(f"{base}/consultant/v1/sessions/{sid}/messages", json={"message": msg}, timeout=120)
        if last.status_code != 200:
            break
    assert last.status_code == 422, last.text
    assert last.json()["error"]["param"] == "max_inventory"
    state = httpx.get(f"{base}/consultant/v1/sessions/{sid}", timeout=30).json()
    assert state["stage"] == "extraction"  # rolled back to before the refused step, still usable
    r = httpx.post(f"{base}/consultant/v1/sessions/{sid}/messages", json={"message": "x" * 4001}, timeout=30)
    assert r.status_code == 400 and r.json()["error"]["param"] == "message"


def test_imitator_bad_scenarios_are_400_naming_the_field(base):
    url = f"{base}/imitator/v1/chat/completions"

    def ask(**scenario):
        system = scenario_message(GROUND_TRUTH, "A shop.", "typical", 1)
        payload = json.loads(system["content"])
        payload["askopt_scenario"].update(scenario)
        return httpx.post(url, timeout=30, json={"model": "askopt-imitator", "messages": [
            {"role": "system", "content": json.dumps(payload)}, {"role": "user", "content": "Hello"}]})

    r = ask(persona="pirate")
    assert r.status_code == 400 and "persona" in r.json()["error"]["message"]
    r = ask(seed="abc")
    assert r.status_code == 400 and "seed" in r.json()["error"]["message"]
    r = ask(ground_truth="/etc/passwd.json")
    assert r.status_code == 400 and "ground_truth" in r.json()["error"]["message"]
    r = ask(ground_truth={**GROUND_TRUTH, "demand_distribution": "empirical(/etc/passwd)"})
    assert r.status_code == 400 and "inline" in r.json()["error"]["message"]
    r = ask(ground_truth={**GROUND_TRUTH, "demand_distribution": "poisson(3e9)"})
    assert r.status_code == 400 and "demand_distribution" in r.json()["error"]["message"]
    r = httpx.post(url, timeout=30, json={"model": "m", "messages": [{"role": "user", "content": "x" * 20_000}]})
    assert r.status_code == 400 and "messages" in r.json()["error"]["message"]


def test_client_disconnect_stops_the_computation(base):
    # ~20 s of work by the estimate (under the 30 s limit), so it is still running when the client gives up
    slow = {"params": {**GROUND_TRUTH, "time_horizon": 1000, "lead_time": 1}, "method": "ss",
            "replications": 80_000}
    with pytest.raises(httpx.TimeoutException):
        httpx.post(f"{base}/consultant/v1/solve", json=slow, timeout=2)
    import time

    for _ in range(40):
        health = httpx.get(f"{base}/consultant/healthz", timeout=10).json()
        if health["running"] == 0:
            break
        time.sleep(0.25)
    assert health["running"] == 0 and health["stopped_early"] >= 1


def test_api_keys_and_session_ownership(base):
    keyed = f"{base}/keyed"
    assert httpx.post(f"{keyed}/v1/sessions", timeout=30).status_code == 401
    assert httpx.post(f"{keyed}/v1/sessions", headers={"Authorization": "Bearer wrong"}, timeout=30).status_code == 401
    assert httpx.get(f"{keyed}/healthz", timeout=30).status_code == 200
    a = {"Authorization": "Bearer key-a"}
    b = {"Authorization": "Bearer key-b"}
    r = httpx.post(f"{keyed}/v1/sessions", headers=a, timeout=30)
    assert r.status_code == 200
    sid = r.json()["session_id"]
    assert httpx.get(f"{keyed}/v1/sessions/{sid}", headers=a, timeout=30).status_code == 200
    assert httpx.get(f"{keyed}/v1/sessions/{sid}", headers=b, timeout=30).status_code == 404
    # the unkeyed app shares the database but is another owner ("" = no key), so it cannot see it either
    assert httpx.get(f"{base}/consultant/v1/sessions/{sid}", timeout=30).status_code == 404


def test_a_keys_rate_holds_across_replicas(base):
    """Two guards stand for two replicas of one app (separate processes share nothing else): the key's bucket
    lives in the app's Ray actor, so the second replica sees the first one's requests; unshared, it would not.
    The keyed app's own replica also reaches its actor (a live request creates it)."""
    import asyncio

    import ray

    from serving.guard import Guard, digest

    key = {"api_keys": "key-r", "rate_per_minute": 6, "burst": 2}
    owner = digest("key-r")[:16]

    async def takes(guards):
        return [await g.wait_seconds_shared(owner) for g in guards]

    one, two = Guard(set()), Guard(set())
    for g in (one, two):
        g.configure(key, scope="ratetest")
    waits = asyncio.run(takes([one, two, one, two]))
    assert waits[:2] == [0.0, 0.0] and waits[2] > 0 and waits[3] > 0  # burst 2 for the key, not per replica
    alone = [Guard(set()), Guard(set())]
    for g in alone:
        g.configure({**key, "shared_rate_limits": False})
    assert asyncio.run(takes(alone + alone))[:3] == [0.0, 0.0, 0.0]  # each replica its own burst
    assert httpx.post(f"{base}/keyed/v1/sessions", headers={"Authorization": "Bearer key-a"}, timeout=30).status_code == 200
    assert ray.get_actor("askopt-rate-buckets-keyed", namespace="askopt") is not None


def test_web_page_and_docs_are_served_locally(base):
    page = httpx.get(f"{base}/consultant/", timeout=30)
    assert page.status_code == 200 and "static/app.js" in page.text
    assert "http" not in page.text.replace("http-equiv", "")  # no CDN or other external URL
    for asset in ("app.js", "style.css", "docs.js"):
        r = httpx.get(f"{base}/consultant/static/{asset}", timeout=30)
        assert r.status_code == 200 and "cdn" not in r.text.lower()
    assert httpx.get(f"{base}/consultant/static/..%2Fconsultant_app.py", timeout=30).status_code == 404
    docs = httpx.get(f"{base}/consultant/docs", timeout=30)
    assert docs.status_code == 200 and "openapi.json" in docs.text and "cdn" not in docs.text.lower()
    spec = httpx.get(f"{base}/consultant/openapi.json", timeout=30).json()
    assert "/v1/solve" in spec["paths"]


# ---- fuzz: schemathesis against both OpenAPI schemas, hypothesis bodies at /v1/solve ---------------------------

def _schemathesis(base: str, app: str, examples: int) -> subprocess.CompletedProcess:
    st = Path(sys.executable).with_name("st")
    return subprocess.run(
        [str(st), "run", f"{base}/{app}/openapi.json", "--url", f"{base}/{app}", "--checks", "not_a_server_error",
         "-n", str(examples), "--generation-deterministic", "--request-timeout", "120",
         "--workers", "2", "--phases", "examples,coverage,fuzzing"],
        capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize("app", ["consultant", "imitator"])
def test_schemathesis_finds_no_server_error(base, app):
    run = _schemathesis(base, app, examples=25)
    tail = run.stdout[-3000:]
    print(tail)
    assert run.returncode == 0, tail
    assert "not_a_server_error" in run.stdout or "passed" in run.stdout.lower()


def test_hypothesis_bodies_at_solve_give_no_5xx(base):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    value = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30),
                      st.floats(allow_nan=False), st.text(max_size=40),
                      st.sampled_from(["poisson(3e9)", "empirical(/etc/passwd)", "uniform(0,1e12)", "1e999",
                                       "normal(5, -1)", "empirical([])", "-$5", "3 weeks", "1,000,000"]))
    params = st.fixed_dictionaries({}, optional={k: value for k in GROUND_TRUTH})
    body = st.fixed_dictionaries({"params": st.builds(lambda p: {**GROUND_TRUTH, **p}, params)},
                                 optional={"seed": value, "replications": st.integers(-5, 50),
                                           "method": st.sampled_from(["ss", "dp", "all", "x"]),
                                           "evaluate": st.lists(st.text(max_size=20), max_size=3)})

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(body)
    def check(b):
        # json.dumps writes inf as Infinity (not JSON): the server must answer 400, not fail
        r = _post_raw(f"{base}/consultant/v1/solve", json.dumps(b))
        assert r.status_code < 500, (b, r.text)
        if r.status_code >= 400:
            assert r.json()["error"]["message"]

    check()


def test_guarded_llm_app_needs_a_key_and_drops_allow_all_cors():
    """The vLLM imitator's router app (Ray Serve LLM's `init()`: CORS allow-all, no auth) as `guard_llm_app`
    leaves it, served by uvicorn on a real port. Ray's own app needs vLLM to import, so this builds the same
    shape: a FastAPI app with CORSMiddleware(allow_origins=["*"]) and OpenAI-style routes."""
    import socket
    import threading
    import time

    import uvicorn
    from fastapi import FastAPI
    from fastapi.middleware.cors import CORSMiddleware

    from serving.guard import Guard
    from serving.vllm_app import OPEN_PATHS, guard_llm_app

    app = FastAPI()
    app.add_middleware(CORSMiddleware, allow_origins=["*"], allow_methods=["*"], allow_headers=["*"])

    @app.get("/v1/models")
    async def models():
        return {"object": "list", "data": [{"id": "askopt-imitator"}]}

    @app.post("/v1/chat/completions")
    async def chat(body: dict):
        return {"choices": [{"message": {"role": "assistant", "content": "we sell about 20 a day"}}]}

    @app.get("/health")
    async def health():
        return {}

    guard = Guard(set(), open_paths=OPEN_PATHS)
    guard.configure({"api_keys": "k-team", "shared_rate_limits": False})
    guard_llm_app(app, guard, max_body_bytes=4096)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            if server.started:
                break
            time.sleep(0.05)
        evil = {"Origin": "http://evil.example"}
        no_key = httpx.get(f"{base}/v1/models", headers=evil, timeout=10)
        assert no_key.status_code == 401 and no_key.json()["error"]["param"] == "authorization"
        assert "access-control-allow-origin" not in no_key.headers
        wrong = httpx.post(f"{base}/v1/chat/completions", json={"messages": []},
                           headers={"Authorization": "Bearer nope"}, timeout=10)
        assert wrong.status_code == 401
        auth = {"Authorization": "Bearer k-team", **evil}
        ok = httpx.post(f"{base}/v1/chat/completions", json={"messages": []}, headers=auth, timeout=10)
        assert ok.status_code == 200 and "20 a day" in ok.json()["choices"][0]["message"]["content"]
        assert "access-control-allow-origin" not in ok.headers  # Ray's allow-all CORS is gone
        preflight = httpx.options(f"{base}/v1/chat/completions", timeout=10,
                                  headers={**evil, "Access-Control-Request-Method": "POST"})
        assert "access-control-allow-origin" not in preflight.headers
        big = httpx.post(f"{base}/v1/chat/completions", content=b"x" * 5000, headers=auth, timeout=10)
        assert big.status_code == 413
        assert httpx.get(f"{base}/health", timeout=10).status_code == 200  # probes need no key
    finally:
        server.should_exit = True
        thread.join(10)
