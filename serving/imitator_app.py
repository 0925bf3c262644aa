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

from serving.guard import Guard, install
from serving.protocol import (
    ChatMessage,
    ChatRequest,
    chat_scenario,
    completion_response,
    error_body,
    models_list,
)

MODEL_NAME = "askopt-imitator"
MAX_BODY_BYTES = 256 * 1024  # a whole conversation travels in every request

GUARD = Guard(set(), open_paths=("/healthz",))
app = FastAPI(title="askopt Human Imitator (CPU engine)", docs_url=None, redoc_url=None)
install(app, GUARD, MAX_BODY_BYTES)


class ScenarioError(ValueError):
    pass


def cpu_imitator_reply(scenario: dict, messages: list[ChatMessage]) -> str:
    """The manager's next line: the opening for the first question, then one reply per later question."""
    from agents.imitator import HumanImitator
    from agents.imitator.profile import PERSONAS
    from inventory.spec import ParameterTable
    from optimization.limits import Plan, check

    if not isinstance(scenario, dict):
        raise ScenarioError("askopt_scenario: must be an object (see serving.protocol.scenario_message)")
    truth = scenario.get("ground_truth")
    if not isinstance(truth, dict):  # a string would be read as a file name by ParameterTable.from_json
        raise ScenarioError("askopt_scenario.ground_truth: must be an object of parameter: value")
    try:
        problem = ParameterTable.from_json(truth).to_problem()
        check(problem, Plan(methods=(), replications=2))  # demand support, horizon, lead time within limits
    except Exception as exc:  # noqa: BLE001 - any bad ground truth is the client's: 400 naming the field
        raise ScenarioError(f"askopt_scenario.ground_truth: {exc}") from None
    persona = scenario.get("persona", "typical")
    if not isinstance(persona, str) or persona not in PERSONAS:
        raise ScenarioError(f"askopt_scenario.persona: {str(persona)[:40]!r} is not allowed; allowed: "
                            f"{', '.join(PERSONAS)}")
    seed = scenario.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise ScenarioError(f"askopt_scenario.seed: {str(seed)[:40]!r} is not allowed; must be a whole number "
                            "in [0, 2**32)")
    context = scenario.get("context", "")
    if not isinstance(context, str):
        raise ScenarioError("askopt_scenario.context: must be a string")
    imitator = HumanImitator(problem, context, persona, seed)
    questions = [m.content or "" for m in messages if m.role == "user"]
    reply = imitator.opening()
    for question in questions[1:]:
        reply = imitator.reply(question)
    return reply


@serve.deployment(max_ongoing_requests=200, ray_actor_options={"num_cpus": 0.5})
@serve.ingress(app)
class ImitatorEndpoint:
    def __init__(self, model_name: str = MODEL_NAME, config: dict | None = None):
        from inventory.demand import forbid_file_access

        forbid_file_access()  # a ground truth never names a file this process reads
        from serving.keys import configure_imitator_guard

        configure_imitator_guard(GUARD, config)
        self.model_name = model_name

    @app.get("/v1/models")
    def models(self) -> dict:
        return models_list(self.model_name)

    @app.get("/healthz")
    def health(self) -> dict:
        return {"status": "ok", "engine": "cpu-persona-simulator"}

    @app.post("/v1/chat/completions")
    def chat(self, request: ChatRequest):
        scenario, error = chat_scenario(request)
        if error is not None:
            return JSONResponse(error, status_code=400)
        try:
            text = cpu_imitator_reply(scenario, request.messages)
        except ScenarioError as exc:
            return JSONResponse(error_body(str(exc), param="messages"), status_code=400)
        prompt_chars = sum(len(m.content or "") for m in request.messages)
        return completion_response(request.model or self.model_name, text, prompt_chars)


def build_app(args: dict | str | None = None):
    """Serve's application builder: `serve run serving.imitator_app:build_app model_name=... api_keys_file=...`.

    Keys: model_name, api_keys (comma-separated), api_keys_file, keys_url (the database `askopt keys create`
    writes; default $ASKOPT_SESSIONS_URL, else ~/.askopt/sessions.db if it exists), num_replicas,
    rate_per_minute, burst, cors_origins. A bare string is the model name.
    """
    if isinstance(args, str):
        args = {"model_name": args}
    args = dict(args or {})
    allowed = ("model_name", "api_keys", "api_keys_file", "keys_url", "num_replicas", "rate_per_minute", "burst",
               "cors_origins")
    unknown = set(args) - set(allowed)
    if unknown:
        raise ValueError(f"args: {sorted(unknown)[0]!r} is not allowed; allowed: {', '.join(allowed)}")
    model = args.pop("model_name", MODEL_NAME)
    replicas = int(args.pop("num_replicas", 1))
    return ImitatorEndpoint.options(num_replicas=replicas).bind(model, args)
