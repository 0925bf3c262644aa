"""OpenAI-compatible Human Imitator endpoint on Ray Serve, CPU engine.

The engine is the offline persona simulator (agents.imitator), a documented stand-in for the LoRA-fine-tuned
imitator that `serving/vllm_app.py` serves with vLLM on a GPU. Both answer the same requests, so the study
can point `--imitator-base-url` at either.

Stateless by design: the client sends the whole conversation each time, and the system message carries the
scenario (hidden ground truth, business context, persona, seed: see `protocol.scenario_message`). The
seeded simulator replays the conversation, so the same messages always get the same reply and any replica
can answer any request. Roles from the imitator's side: "user" messages are the consultant's questions,
"assistant" messages are the manager's earlier answers.
"""


from fastapi import FastAPI
from fastapi.responses import JSONResponse
from ray import serve

from serving.protocol import ChatMessage, ChatRequest, completion_response, error_body, read_scenario

MODEL_NAME = "askopt-imitator"

app = FastAPI(title="askopt Human Imitator (CPU engine)")


class ScenarioError(ValueError):
    pass


def cpu_imitator_reply(scenario: dict, messages: list[ChatMessage]) -> str:
    """The manager's next line: the opening for the first question, then one reply per later question."""
    from agents.imitator import HumanImitator
    from inventory.spec import ParameterTable

    try:
        problem = ParameterTable.from_json(scenario["ground_truth"]).to_problem()
    except (KeyError, TypeError) as exc:
        raise ScenarioError(f"askopt_scenario.ground_truth: missing or malformed ({exc})") from None
    except ValueError as exc:
        raise ScenarioError(f"askopt_scenario.ground_truth: {exc}") from None
    imitator = HumanImitator(
        problem, str(scenario.get("context", "")), scenario.get("persona", "typical"), int(scenario.get("seed", 0))
    )
    questions = [m.content or "" for m in messages if m.role == "user"]
    reply = imitator.opening()
    for question in questions[1:]:
        reply = imitator.reply(question)
    return reply


@serve.deployment(max_ongoing_requests=200, ray_actor_options={"num_cpus": 0.5})
@serve.ingress(app)
class ImitatorEndpoint:
    def __init__(self, model_name: str = MODEL_NAME):
        self.model_name = model_name

    @app.get("/v1/models")
    def models(self) -> dict:
        return {"object": "list", "data": [{"id": self.model_name, "object": "model", "owned_by": "askopt"}]}

    @app.get("/healthz")
    def health(self) -> dict:
        return {"status": "ok", "engine": "cpu-persona-simulator"}

    @app.post("/v1/chat/completions")
    def chat(self, request: ChatRequest):
        if request.stream:
            return JSONResponse(error_body("stream: streaming is not supported; send stream=false", param="stream"),
                                status_code=400)
        scenario = read_scenario(request.messages)
        if scenario is None:
            return JSONResponse(
                error_body("messages: a system message with an askopt_scenario object is required "
                           "(see serving.protocol.scenario_message)", param="messages"),
                status_code=400,
            )
        try:
            text = cpu_imitator_reply(scenario, request.messages)
        except ScenarioError as exc:
            return JSONResponse(error_body(str(exc), param="messages"), status_code=400)
        prompt_chars = sum(len(m.content or "") for m in request.messages)
        return completion_response(request.model or self.model_name, text, prompt_chars)


def build_app(model_name: str = MODEL_NAME):
    return ImitatorEndpoint.bind(model_name)
