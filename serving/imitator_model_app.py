"""The fine-tuned (merged) imitator checkpoint behind the OpenAI-compatible imitator routes, transformers engine.

Same routes and the same scenario protocol as the simulator endpoint (serving/imitator_app.py): POST
/v1/chat/completions with a system message carrying `askopt_scenario` (serving.protocol.scenario_message),
"user" messages = the consultant, "assistant" messages = the manager's earlier replies; GET /v1/models,
/healthz. Stateless: the whole conversation comes with every request. CPU, one model per replica; the GPU
path for the same merged folder is serving/vllm_app.py.

`serve run serving.imitator_model_app:build_app model_path=runs/imitator/merged`
"""


from fastapi import FastAPI
from fastapi.responses import JSONResponse
from ray import serve

from serving.guard import Guard, install
from serving.imitator_app import MAX_BODY_BYTES
from serving.protocol import ChatRequest, chat_scenario, completion_response, error_body, models_list

MODEL_NAME = "askopt-imitator"
GUARD = Guard(set(), open_paths=("/healthz",))  # the same keys, limits and CORS as the CPU imitator
app = FastAPI(title="askopt Human Imitator (fine-tuned, transformers engine)", docs_url=None, redoc_url=None)
install(app, GUARD, MAX_BODY_BYTES)


def scenario_inputs(scenario) -> tuple[object, str, str, int]:
    """(problem, persona, context, seed) from the askopt_scenario object; ValueError naming the field."""
    from inventory.spec import ParameterTable

    if not isinstance(scenario, dict):
        raise ValueError("askopt_scenario: must be an object (see serving.protocol.scenario_message)")
    truth = scenario.get("ground_truth")
    if not isinstance(truth, dict):
        raise ValueError("askopt_scenario.ground_truth: must be an object of parameter: value")
    try:
        problem = ParameterTable.from_json(truth).to_problem()
    except Exception as exc:  # noqa: BLE001 - the client's input: 400 naming the field
        raise ValueError(f"askopt_scenario.ground_truth: {exc}") from None
    persona = scenario.get("persona", "typical")
    if not isinstance(persona, str) or len(persona) > 40:
        raise ValueError("askopt_scenario.persona: must be a short string")
    context = scenario.get("context", "")
    if not isinstance(context, str):
        raise ValueError("askopt_scenario.context: must be a string")
    seed = scenario.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise ValueError("askopt_scenario.seed: must be a whole number in [0, 2**32)")
    return problem, persona, context, seed


@serve.deployment(max_ongoing_requests=16, ray_actor_options={"num_cpus": 0.5})
@serve.ingress(app)
class ModelImitatorEndpoint:
    def __init__(self, model_path: str, model_name: str = MODEL_NAME, max_new_tokens: int = 64,
                 config: dict | None = None):
        from agents.imitator.model import ModelImitator
        from serving.keys import configure_imitator_guard

        configure_imitator_guard(GUARD, config)
        self.engine = ModelImitator(model_path, max_new_tokens=max_new_tokens)
        self.model_name = model_name

    @app.get("/v1/models")
    def models(self) -> dict:
        return models_list(self.model_name)

    @app.get("/healthz")
    def health(self) -> dict:
        return {"status": "ok", "engine": "transformers-finetuned"}

    @app.post("/v1/chat/completions")
    def chat(self, request: ChatRequest):
        from agents.imitator.model import OPENING_QUESTION

        scenario, error = chat_scenario(request)
        if error is not None:
            return JSONResponse(error, status_code=400)
        try:
            problem, persona, _context, seed = scenario_inputs(scenario)
        except ValueError as exc:
            return JSONResponse(error_body(str(exc), param="messages"), status_code=400)
        history: list[tuple[str, str]] = []
        for m in request.messages:
            if m.role == "user":
                history.append(("consultant", m.content or ""))
            elif m.role == "assistant":
                history.append(("manager", m.content or ""))
        if not history or history[-1][0] != "consultant":
            return JSONResponse(error_body("messages: the last message must be the consultant's (role user)",
                                           param="messages"), status_code=400)
        if len(history) == 1:  # the first consultant message is the greeting: the manager opens
            history = [("consultant", OPENING_QUESTION)]
        text = self.engine.reply_for(problem, persona, history, seed, temperature=request.temperature or 0.0)
        prompt_chars = sum(len(m.content or "") for m in request.messages)
        return completion_response(request.model or self.model_name, text, prompt_chars)


def build_app(args: dict | str | None = None):
    """Serve's application builder. Keys: model_path (required: the merged checkpoint folder), model_name,
    max_new_tokens, num_replicas, and the CPU imitator's key options (api_keys, api_keys_file, keys_url,
    rate_per_minute, burst, cors_origins). A bare string is the model path."""
    if isinstance(args, str):
        args = {"model_path": args}
    args = dict(args or {})
    allowed = ("model_path", "model_name", "max_new_tokens", "num_replicas", "api_keys", "api_keys_file", "keys_url",
               "rate_per_minute", "burst", "cors_origins")
    unknown = set(args) - set(allowed)
    if unknown:
        raise ValueError(f"args: {sorted(unknown)[0]!r} is not allowed; allowed: {', '.join(allowed)}")
    if not args.get("model_path"):
        raise ValueError("args: model_path is required (the merged checkpoint folder from `askopt imitator eval`)")
    replicas = int(args.pop("num_replicas", 1))
    path, name = str(args.pop("model_path")), str(args.pop("model_name", MODEL_NAME))
    return ModelImitatorEndpoint.options(num_replicas=replicas).bind(path, name, int(args.pop("max_new_tokens", 64)),
                                                                     args)
