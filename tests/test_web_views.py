"""The page's views over real HTTP on Ray Serve: keys made by `askopt keys create` (401 without, another key's
session is 404), the inventory plot, the order-now form (the interpretation agent's tool), the artifact downloads,
and data-collection mode exported as the imitator's JSONL."""

import csv
import io
import json
import socket

import httpx
import pytest

from agents.imitator.corpus import read_jsonl
from experiments.cli import main
from optimization.artifacts import CSV_COLUMNS
from serving.keys import KeyStore

FACTS = [
    "I run a bike shop. We sell about 8 bikes a day, it varies like a Poisson process.",
    "I plan for 90 days. Bikes don't spoil.",
    "If we are out of stock the customer just leaves, the sale is lost.",
    "Holding a bike costs me 50 cents per day. A lost sale costs me $2.83.",
    "Each order costs $3 in fees. Delivery takes 2 days. Risk: neutral, 0.",
    "I can store at most 80 bikes and the supplier ships at most 25 per order.",
    "yes",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    import ray
    from ray import serve

    from serving.consultant_app import build_app
    from serving.imitator_app import build_app as imitator_app

    root = tmp_path_factory.mktemp("webviews")
    keyed_url, collect_url = f"sqlite:///{root / 'keyed.db'}", f"sqlite:///{root / 'collect.db'}"
    keys = KeyStore(keyed_url)
    (_, key_a), (_, key_b) = keys.create("shop A"), keys.create("shop B")
    keys.engine.dispose()
    port = _free_port()
    ray.init(address="local", num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    serve.run(build_app({"sessions_url": keyed_url, "num_cpus": 0.25}), name="keyed", route_prefix="/keyed")
    serve.run(build_app({"sessions_url": collect_url, "num_cpus": 0.25, "collect": True}), name="collect",
              route_prefix="/collect")
    serve.run(imitator_app({"keys_url": keyed_url}), name="imitator", route_prefix="/imitator")
    base = f"http://127.0.0.1:{port}"
    yield {"keyed": f"{base}/keyed", "collect": f"{base}/collect", "collect_url": collect_url,
           "imitator": f"{base}/imitator",
           "a": {"Authorization": f"Bearer {key_a}"}, "b": {"Authorization": f"Bearer {key_b}"}}
    serve.shutdown()
    ray.shutdown()


def test_keyed_consultation_plot_order_and_downloads(servers):
    base, a, b = servers["keyed"], servers["a"], servers["b"]
    assert httpx.post(f"{base}/v1/sessions", timeout=60).status_code == 401  # keys exist in the database
    assert httpx.get(f"{base}/", timeout=30).status_code == 200  # the page itself is open (it has a key field)
    sid = httpx.post(f"{base}/v1/sessions", headers=a, timeout=120).json()["session_id"]
    early = httpx.post(f"{base}/v1/sessions/{sid}/order", json={"on_hand": 3}, headers=a, timeout=120)
    assert early.status_code == 409 and early.json()["error"]["param"] == "session_id"  # no policy yet
    for msg in FACTS:
        r = httpx.post(f"{base}/v1/sessions/{sid}/messages", json={"message": msg}, headers=a, timeout=300)
        assert r.status_code == 200, r.text
    state = r.json()
    assert state["stage"] == "interpretation" and state["policy"]

    for path in ("", "/inventory.svg", "/artifacts/config.json"):  # another key sees no such session
        assert httpx.get(f"{base}/v1/sessions/{sid}{path}", headers=b, timeout=60).status_code == 404

    svg = httpx.get(f"{base}/v1/sessions/{sid}/inventory.svg", headers=a, timeout=120)
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    assert 'class="mean"' in svg.text and 'class="band"' in svg.text and "http" not in svg.text.split("xmlns")[1][40:]
    mean_points = svg.text.split('class="mean" points="')[1].split('"')[0].split()
    assert len(mean_points) == 90  # one point per day of the horizon

    order = httpx.post(f"{base}/v1/sessions/{sid}/order", json={"on_hand": 2, "in_transit": 1}, headers=a,
                       timeout=120).json()
    rule = order["params"]  # (s,S): below s order up to S; base stock: s = S
    expected = max(0, min(rule["S"] - 3, 25, 80 - 3)) if 3 < rule.get("s", rule["S"]) else 0  # capped
    assert order["position"] == 3 and order["order"] == expected and str(expected) in order["answer"]
    high = httpx.post(f"{base}/v1/sessions/{sid}/order", json={"on_hand": 80}, headers=a, timeout=120).json()
    assert high["order"] == 0
    bad = httpx.post(f"{base}/v1/sessions/{sid}/order", json={"on_hand": -1}, headers=a, timeout=60)
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "on_hand"

    cfg = httpx.get(f"{base}/v1/sessions/{sid}/artifacts/config.json", headers=a, timeout=120)
    assert cfg.status_code == 200 and "attachment" in cfg.headers["content-disposition"]
    config = cfg.json()
    assert config["horizon"] == 90 and config["max_order"] == 25 and config["winner"]["name"] == state["policy"]["name"]
    table = httpx.get(f"{base}/v1/sessions/{sid}/artifacts/policy_evaluation_results.csv", headers=a, timeout=120)
    rows = list(csv.DictReader(io.StringIO(table.text)))
    assert tuple(rows[0]) == CSV_COLUMNS and sum(r["winner"] == "True" for r in rows) == 1
    other = httpx.get(f"{base}/v1/sessions/{sid}/artifacts/dqn_weights.pth", headers=a, timeout=60)
    assert other.status_code == 404 and other.json()["error"]["param"] == "name"


def test_collection_mode_exports_the_imitator_corpus(servers, tmp_path, capsys):
    base = servers["collect"]
    s = httpx.post(f"{base}/v1/sessions", timeout=120).json()
    scenario = s["scenario"]
    assert scenario["context"] and len(scenario["facts"]) == 12 and "demand_distribution=" in scenario["facts_line"]
    said = ["We sell bicycles, roughly eight a day.", "Ninety days is my planning horizon."]
    for msg in said:
        assert httpx.post(f"{base}/v1/sessions/{s['session_id']}/messages", json={"message": msg},
                          timeout=300).status_code == 200
    assert httpx.get(f"{base}/healthz", timeout=30).json()["collect"] is True
    out = tmp_path / "corpus.jsonl"
    assert main(["sessions", "export", "--jsonl", str(out), "--url", servers["collect_url"]]) == 0
    assert "2 prompt-response pairs from 1 collection sessions" in capsys.readouterr().out
    examples = read_jsonl(out)  # the imitator's own reader
    assert [e.response for e in examples] == said
    assert all(e.dialogue_id == f"web-{s['session_id']}" and e.source == "web" for e in examples)
    assert examples[0].prompt.startswith(f"Facts: {scenario['facts_line']}") and examples[0].prompt.endswith("Manager:")
    assert s["reply"].split()[0] in examples[0].prompt  # x holds the consultant's question
    assert json.loads(out.read_text().splitlines()[1])["turn"] > examples[0].turn


def test_imitator_refuses_requests_without_a_database_key(servers):
    from serving.protocol import scenario_message

    truth = {"time_horizon": 60, "demand_type": "random", "demand_distribution": "poisson(6)",
             "perishability": "non_perishable", "state_transition_model": "lost_sale", "holding_cost": 0.4,
             "penalty_cost": 3.0, "setup_cost": 2, "lead_time": 2, "max_inventory": 60, "max_order": 30,
             "risk_tolerance": 1}
    body = {"model": "askopt-imitator", "messages": [scenario_message(truth, "A bike shop.", "typical", 1),
                                                     {"role": "user", "content": "Tell me about your business."}]}
    url = f"{servers['imitator']}/v1/chat/completions"
    refused = httpx.post(url, json=body, timeout=60)
    assert refused.status_code == 401 and refused.json()["error"]["param"] == "authorization"
    ok = httpx.post(url, json=body, headers=servers["a"], timeout=120)
    assert ok.status_code == 200 and ok.json()["choices"][0]["message"]["content"]
    assert httpx.get(f"{servers['imitator']}/healthz", timeout=30).status_code == 200  # health stays open
