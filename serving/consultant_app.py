"""The consultant as an HTTP API on Ray Serve.

- POST /v1/solve: a parameter table (JSON, the string forms of `inventory.spec`) in, the `askopt solve --json`
  object out; bad parameters answer 400 with the field named.
- POST /v1/sessions, POST /v1/sessions/{id}/messages, GET /v1/sessions/{id}: a dialogue with the whole
  system (extraction, then optimisation, then interpretation), offline agents by default. Sessions live in
  the replica's memory, so the deployment runs one replica; that is fine for a consultant a person talks to.
"""


import uuid

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from ray import serve

from inventory.policies import parse_policy_spec
from inventory.spec import PARAMETERS, ParameterTable
from optimization.solve import METHODS, solve_problem
from optimization.solve import solve_json as solve_view
from serving.protocol import error_body

app = FastAPI(title="askopt consultant API")


class SolveRequest(BaseModel):
    params: dict
    evaluate: list[str] = Field(default_factory=list)
    objective: str = "finite"
    method: str = "all"
    replications: int = 2000
    seed: int = 0


class MessageRequest(BaseModel):
    message: str


def session_state(session) -> dict:
    """What a client needs to render a consultant session: stage, the table, and the chosen policy once known."""
    table = session.extraction.table
    state = {
        "stage": session.stage,
        "table": {p: {"value": table.to_json().get(p), "status": table.status(p)} for p in PARAMETERS},
    }
    if session.result is not None:
        state["policy"] = session.result.winner.as_dict()
    return state


def solve_json(req: SolveRequest) -> dict:
    """The same computation and JSON as `askopt solve --json` (ValueError names the field)."""
    if req.method not in METHODS:
        raise ValueError(f"method: {req.method!r} is not allowed; allowed: {', '.join(METHODS)}")
    if req.replications < 2 or req.replications > 100_000:
        raise ValueError(f"replications: {req.replications} is not allowed; must be in [2, 100000]")
    problem = ParameterTable.from_json(req.params).to_problem()
    extra = [(spec, parse_policy_spec(spec)) for spec in req.evaluate]
    return solve_view(solve_problem(problem, req.method, req.objective, extra, req.replications, req.seed))


@serve.deployment(num_replicas=1, max_ongoing_requests=64, ray_actor_options={"num_cpus": 1})
@serve.ingress(app)
class ConsultantAPI:
    def __init__(self):
        self.sessions: dict[str, object] = {}

    @app.get("/healthz")
    def health(self) -> dict:
        return {"status": "ok", "sessions": len(self.sessions)}

    @app.post("/v1/solve")
    def solve(self, req: SolveRequest):
        try:
            return solve_json(req)
        except ValueError as exc:
            return JSONResponse(error_body(str(exc)), status_code=400)

    @app.post("/v1/sessions")
    def new_session(self):
        from agents.dialogue import Consultant

        sid = uuid.uuid4().hex[:12]
        session = Consultant()
        self.sessions[sid] = session
        return {"session_id": sid, "reply": session.start(), **session_state(session)}

    @app.post("/v1/sessions/{sid}/messages")
    def message(self, sid: str, req: MessageRequest):
        session = self.sessions.get(sid)
        if session is None:
            return JSONResponse(error_body(f"session_id: unknown session {sid!r}"), status_code=404)
        return {"session_id": sid, "reply": session.send(req.message), **session_state(session)}

    @app.get("/v1/sessions/{sid}")
    def state(self, sid: str):
        session = self.sessions.get(sid)
        if session is None:
            return JSONResponse(error_body(f"session_id: unknown session {sid!r}"), status_code=404)
        return {"session_id": sid, **session_state(session), "transcript": session.transcript()}


def build_app():
    return ConsultantAPI.bind()
