"""Ray Serve apps over real HTTP: the OpenAI-compatible imitator endpoint and the consultant API."""

import json
import socket

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
def base():
    ray = pytest.importorskip("ray")
    from ray import serve

    from serving.consultant_app import build_app as consultant
    from serving.imitator_app import build_app as imitator

    port = _free_port()
    ray.init(address="local", num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    serve.run(imitator(), name="imitator", route_prefix="/imitator")
    serve.run(consultant(), name="consultant", route_prefix="/consultant")
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
    pytest.importorskip("agents.imitator", reason="imitator not built")
    from agents.imitator import HumanImitator  # noqa: F401

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
        msg = facts.pop(0) if facts else "3"
        reply = httpx.post(f"{base}/consultant/v1/sessions/{sid}/messages", json={"message": msg},
                           timeout=120).json()
    assert reply is not None and reply["stage"] == "interpretation"
    assert reply["policy"]["name"] in {"ss", "base_stock", "dp", "dqn"}
    assert reply["table"]["lead_time"]["value"] == "10" and reply["table"]["max_order"]["value"] == "25"
    assert reply["reply"].rstrip().endswith("Do you have any other questions?")
    assert httpx.get(f"{base}/consultant/v1/sessions/nope", timeout=30).status_code == 404
