"""The LLM emulator as a real local HTTP server: every study role, streaming, 429 + Retry-After, injected
faults, the latency distribution; and the client's rate limiter and per-call accounting against it."""

from __future__ import annotations

import json
import time

import httpx
import openai
import pytest

from agents.extraction import ExtractionAgent
from agents.extraction_llm import ExtractionReply, LLMExtractor
from agents.generator import generate_instance
from agents.interpretation import DQN_TOOL
from agents.judge import judge_reply
from agents.policy_parser import parse_policy
from agents.study_prompts import CONSULTANT_WITH_PARAMETERS_SYSTEM, CONSULTANT_WITH_PARAMETERS_USER
from inventory.spec import ParameterTable
from llm.client import LLMClient, LLMConfig, LLMError, run_tool_loop
from llm.ratelimit import RateLimit, RateLimiter
from serving.llm_emulator import EmulatorConfig, EmulatorCore, EmulatorServer, RateWindow
from serving.protocol import scenario_message

INSTANCE = generate_instance("emulator-tests/0", 3)


@pytest.fixture(scope="module")
def fast():
    with EmulatorServer({"latency_mean": 0.0}) as srv:
        yield srv


def client_for(srv, model: str = "auto", **kw) -> LLMClient:
    return LLMClient(LLMConfig(base_url=srv.base_url, model=model, **kw))


def test_roles_answer_like_the_offline_agents(fast):
    c = client_for(fast)
    assert c.model == "askopt-emulator"
    # judge: the policy parser's verdict as JSON
    assert judge_reply("Order up to 60 units whenever the inventory position falls below 20.", c).actionable
    assert not judge_reply("How many units do you sell per day?", c).actionable
    # consultant C: textbook advice on the CSV in the prompt, readable by the parser
    csv_text = ParameterTable.from_problem(INSTANCE.problem).to_csv()
    advice = c.chat([{"role": "system", "content": CONSULTANT_WITH_PARAMETERS_SYSTEM},
                     {"role": "user", "content": CONSULTANT_WITH_PARAMETERS_USER.format(
                         context=INSTANCE.context, parameters=csv_text)}]).content
    assert parse_policy(advice, capacity=INSTANCE.problem.max_inventory).status in ("ok", "infeasible")
    # extractor: valid ExtractionReply JSON that moves a real ExtractionAgent
    agent = ExtractionAgent(LLMExtractor(c))
    agent.start()
    turn = agent.step("We sell about 8 units a day, and the supplier takes 3 days to deliver.")
    assert agent.table.get("lead_time") == 3 and turn.action in ("ASK_NEXT_QUESTION", "ASK_CLARIFICATION")
    assert isinstance(agent.backend.replies[-1], ExtractionReply)
    # imitator (scenario protocol): the seeded persona simulator's opening
    truth = ParameterTable.from_problem(INSTANCE.problem).to_json()
    first = c.chat([scenario_message(truth, INSTANCE.context, "typical", 5), {"role": "user", "content": "Hi!"}])
    again = c.chat([scenario_message(truth, INSTANCE.context, "typical", 5), {"role": "user", "content": "Hi!"}])
    assert first.content and first.content == again.content
    # interpreter: a tool call, then an answer built on the tool's result
    reply, convo = run_tool_loop(c, [{"role": "system", "content": "You are the Policy Interpretation Agent."},
                                     {"role": "user", "content": "I have 12 on hand on day 4, orders 5 and 0."}],
                                 [DQN_TOOL], {"calculate_dqn_order": lambda **kw: {"order": 7, "args": kw}})
    tool_msg = next(m for m in convo if m["role"] == "tool")
    assert json.loads(tool_msg["content"])["args"] == {"current_inventory": 12, "current_time_step": 4,
                                                       "pipeline_orders": [5, 0]}
    assert "order" in reply.content
    roles = fast.stats()["roles"]
    assert {"judge", "consultant_c", "extractor", "imitator", "interpreter"} <= set(roles)
    assert c.usage.prompt_tokens > 0 and c.usage.completion_tokens > 0 and c.usage.failed_calls == 0


def test_streaming_paces_tokens_and_reports_usage():
    with EmulatorServer({"latency_mean": 0.0, "tokens_per_second": 200.0}) as srv:
        raw = openai.OpenAI(base_url=srv.base_url, api_key="x", max_retries=0)
        msgs = [{"role": "system", "content": "You check replies written by an inventory consultant."},
                {"role": "user", "content": "Consultant reply:\n<<<\nOrder 10 units every day.\n>>>\n?"}]
        whole = raw.chat.completions.create(model="m", messages=msgs)
        t0 = time.perf_counter()
        chunks = list(raw.chat.completions.create(model="m", messages=msgs, stream=True,
                                                  stream_options={"include_usage": True}))
        elapsed = time.perf_counter() - t0
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert text == whole.choices[0].message.content
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens
    n_tokens = len([ch for ch in chunks if ch.choices and ch.choices[0].delta.content])
    assert elapsed >= 0.8 * n_tokens / 200.0  # paced at tokens_per_second


def test_rate_limit_answers_429_with_retry_after_and_the_client_honours_it():
    with EmulatorServer({"latency_mean": 0.0, "rpm": 3, "window_seconds": 1.0}) as srv:
        msgs = [{"role": "user", "content": "hello"}]
        statuses = [httpx.post(f"{srv.base_url}/chat/completions", json={"model": "m", "messages": msgs})
                    for _ in range(4)]
        assert [r.status_code for r in statuses] == [200, 200, 200, 429]
        limited = statuses[-1]
        assert int(limited.headers["retry-after"]) >= 1 and 0 < int(limited.headers["retry-after-ms"]) <= 1000
        assert "rate limit" in limited.json()["error"]["message"]
        time.sleep(1.05)
        # the client retries every 429 after at least the server's Retry-After, on its own 429 budget
        c = client_for(srv, max_retries=0, backoff_base=0.0, backoff_max=0.0)
        t0 = time.perf_counter()
        for _ in range(7):
            c.chat(msgs)
        elapsed = time.perf_counter() - t0
        stats = srv.stats()
    assert c.usage.calls == 7 and c.usage.rate_limited >= 1 and c.usage.failed_calls == 0
    # with zero backoff of its own, the client still never hit the limit twice in a row: each 429 was followed
    # by a wait of at least Retry-After and then a success (one 429 was the raw request above)
    assert c.usage.retries == c.usage.rate_limited == stats["rate_limited"] - 1
    assert elapsed >= 0.9 and c.usage.model_seconds >= 0.9  # 7 requests at 3 per second: waits for the window


def test_rate_limit_budget_exhausted_is_an_llm_error():
    with EmulatorServer({"latency_mean": 0.0, "rpm": 1, "window_seconds": 0.2}) as srv:
        c = client_for(srv, max_rate_limit_retries=0)
        c.chat([{"role": "user", "content": "a"}])
        with pytest.raises(LLMError, match="HTTP 429") as err:
            c.chat([{"role": "user", "content": "b"}])
    assert err.value.status_code == 429 and err.value.attempts == 1


def test_injected_5xx_and_timeouts_exhaust_the_retry_budget():
    with EmulatorServer({"latency_mean": 0.0, "error_rate": 1.0}) as srv:
        c = client_for(srv, model="m", max_retries=2, backoff_base=0.0)
        with pytest.raises(LLMError, match="HTTP 503") as err:
            c.chat([{"role": "user", "content": "x"}])
        assert err.value.attempts == 3 and c.usage.retries == 2 and srv.stats()["errors"] == 3
    with EmulatorServer({"latency_mean": 0.0, "timeout_rate": 1.0, "hang_seconds": 2.0}) as srv:
        c = client_for(srv, model="m", max_retries=1, backoff_base=0.0, timeout=0.3)
        with pytest.raises(LLMError, match="timed out") as err:
            c.chat([{"role": "user", "content": "x"}])
        assert err.value.attempts == 2 and srv.stats()["timeouts"] == 2


def test_latency_is_lognormal_around_the_configured_mean():
    core = EmulatorCore(EmulatorConfig(latency_mean=1.5, latency_sigma=0.5, seed=1))
    xs = sorted(core.latency() for _ in range(4000))
    mean = sum(xs) / len(xs)
    assert abs(mean - 1.5) < 0.06
    assert xs[len(xs) // 2] < mean  # right-skewed: median below the mean
    assert EmulatorCore(EmulatorConfig(latency_mean=0.7, latency_sigma=0.0)).latency() == 0.7


def test_concurrent_requests_overlap_their_latency():
    """The server never serialises: 40 requests at 0.5 s each finish in about one latency."""
    import concurrent.futures as cf

    with EmulatorServer({"latency_mean": 0.5, "latency_sigma": 0.0}) as srv:
        c = client_for(srv, model="m")
        t0 = time.perf_counter()
        with cf.ThreadPoolExecutor(40) as pool:
            list(pool.map(lambda _: c.chat([{"role": "user", "content": "hi"}]), range(40)))
        elapsed = time.perf_counter() - t0
        assert srv.stats()["max_in_flight"] >= 20
    assert elapsed < 4.0  # serial would be 20 s


def test_rate_window_and_client_limiter_arithmetic():
    w = RateWindow(rpm=2, tpm=100, window=60)
    assert w.admit(10, 0.0) == 0 and w.admit(10, 1.0) == 0
    assert w.admit(10, 2.0) == pytest.approx(58.0)  # third request: wait for the first to leave
    assert w.admit(10, 60.5) == 0
    w2 = RateWindow(rpm=0, tpm=100, window=60)
    assert w2.admit(80, 0.0) == 0 and w2.admit(30, 5.0) == pytest.approx(55.0)
    lim = RateLimiter(RateLimit(rpm=600, tpm=0))
    waits = [lim.reserve(10, now=0.0) for _ in range(5)]
    assert waits == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4])
    tok = RateLimiter(RateLimit(rpm=0, tpm=6000))  # 100 tokens per second
    assert [tok.reserve(50, now=0.0), tok.reserve(50, now=0.0), tok.reserve(10, now=2.0)] == pytest.approx(
        [0.0, 0.5, 0.0])
    with pytest.raises(ValueError, match="rpm"):
        RateLimit(rpm=-1)
    with pytest.raises(ValueError, match="error_rate"):
        EmulatorConfig(error_rate=2)


def test_client_limiter_hook_spaces_requests(fast):
    c = LLMClient(LLMConfig(base_url=fast.base_url, model="m"), limiter=RateLimiter(RateLimit(rpm=1200)))
    t0 = time.perf_counter()
    for _ in range(6):
        c.chat([{"role": "user", "content": "hi"}])
    assert time.perf_counter() - t0 >= 0.25 - 0.01  # 6 sends at 0.05 s spacing
    assert c.usage.limiter_seconds > 0 and c.usage.calls == 6
    fork = c.fork()
    fork.chat([{"role": "user", "content": "hi"}])
    assert fork.usage.calls == 1 and c.usage.calls == 6 and fork.limiter is c.limiter


def test_bad_requests_are_400_naming_the_field(fast):
    r = httpx.post(f"{fast.base_url}/chat/completions", json={"model": "m", "messages": []})
    assert r.status_code == 400 and "messages" in r.json()["error"]["message"]
    r = httpx.post(f"{fast.base_url}/chat/completions", content=b"{nope")
    assert r.status_code == 400 and "invalid JSON" in r.json()["error"]["message"]


@pytest.mark.slow
def test_the_ray_serve_app_answers_like_the_plain_server():
    import socket

    import ray
    from ray import serve

    from serving.llm_emulator import build_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        serve.run(build_app({"latency_mean": 0.05, "rpm": 2, "window_seconds": 30}), name="emulator",
                  route_prefix="/")
        base = f"http://127.0.0.1:{port}/v1"
        c = LLMClient(LLMConfig(base_url=base, model="auto", max_rate_limit_retries=0))
        assert c.model == "askopt-emulator"
        assert judge_reply("Order up to 60 units whenever the inventory position falls below 20.", c).actionable
        c.chat([{"role": "user", "content": "hi"}])
        with pytest.raises(LLMError, match="HTTP 429"):
            c.chat([{"role": "user", "content": "again"}])
        assert httpx.get(f"{base}/emulator/stats").json()["rate_limited"] == 1
    finally:
        serve.shutdown()
        ray.shutdown()
