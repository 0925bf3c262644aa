"""The consultant as an HTTP API and a web page on Ray Serve (FastAPI ingress).

- POST /v1/solve: a parameter table (JSON, the string forms of `inventory.spec`) in, the `askopt solve --json`
  object out. Bad parameters answer 400 naming the field; a problem too large for this server answers 422 naming
  the field and the limit (`optimization.limits`, priced before any work).
- POST /v1/sessions, POST /v1/sessions/{id}/messages, GET /v1/sessions/{id}: a dialogue with the whole system
  (extraction, then optimisation, then interpretation), offline agents. Sessions live in a database
  (`serving.sessions`: SQLite file by default, PostgreSQL by URL), so any replica serves any session and a
  replica restart loses nothing.
- GET /: the chat page (serving/web, no CDN); GET /docs: a local API page over /openapi.json.

Never down on one request: bodies over 64 KiB get 413, messages over 4000 characters 400, every computation runs
in a child process with a deadline and a memory cap that dies when the client disconnects (`serving.isolation`),
and `empirical(file)` is refused in every replica (`inventory.demand.forbid_file_access`).
"""


import asyncio
import math
import re
import uuid
from pathlib import Path
from typing import Literal

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from ray import serve

from serving.guard import DEFAULT_MAX_BODY, Guard, install
from serving.isolation import Budget, Isolator, Refused
from serving.protocol import error_body

WEB_DIR = Path(__file__).parent / "web"
MAX_MESSAGE_CHARS = 4000
SOLVE_METHODS = {"ss": ("ss",), "dp": ("dp",), "all": ("ss", "dp")}  # as optimization.solve runs them
_ASSETS = {"app.js": "text/javascript", "style.css": "text/css", "docs.js": "text/javascript"}
SESSION_ID = re.compile(r"^[0-9a-f]{12,32}$")
# the dialogue's optimisation budget (the same as the CLI dialogue: no DQN, 500 final replications)
SESSION_REPLICATIONS, SESSION_SEARCH_REPLICATIONS = 500, 200

GUARD = Guard(set(), open_paths=("/healthz", "/", "/docs", "/openapi.json"), open_prefixes=("/static/",))
app = FastAPI(title="askopt consultant API", docs_url=None, redoc_url=None)
install(app, GUARD, DEFAULT_MAX_BODY)


class SolveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    params: dict[str, str | float | int | bool | None] = Field(max_length=64)
    evaluate: list[str] = Field(default_factory=list, max_length=50)
    objective: Literal["finite", "average"] = "finite"
    method: Literal["ss", "dp", "all"] = "all"
    replications: int = Field(2000, ge=2, le=100_000)
    seed: int = Field(0, ge=0, le=2**32 - 1)


class OrderRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    on_hand: int = Field(ge=0, le=10_000_000)
    in_transit: int = Field(0, ge=0, le=10_000_000)


class MessageRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    # a client's own id for this message, kept when it retries: a retry of a message that was already applied (its
    # replica saved the session, then died before answering) gets the saved answer instead of a second copy
    message_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.:-]{1,100}$")


def finite(obj):
    """JSON-safe: NaN and infinities become null (strict JSON has neither)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [finite(v) for v in obj]
    return obj


# ---- work done in the child process (module-level functions: pickled by reference) -------------------------

def _solve_task(problem, method: str, objective: str, specs: list[str], replications: int, seed: int) -> dict:
    from inventory.policies import parse_policy_spec
    from optimization.limits import DEFAULT_LIMITS
    from optimization.solve import solve_json, solve_problem

    extra = [(spec, parse_policy_spec(spec)) for spec in specs]
    return finite(solve_json(solve_problem(problem, method, objective, extra, replications, seed,
                                           dp_max_work=DEFAULT_LIMITS.dp_max_work)))


def limited_optimize(problem, out_dir):
    """The dialogue's optimisation step, priced first: a problem over the limits is refused naming the field."""
    from optimization.limits import DEFAULT_LIMITS, Plan, ResourceLimitError, check
    from optimization.service import OptimizationAgent, OptimizationConfig

    try:
        check(problem, Plan(("ss", "base_stock", "dp"), replications=SESSION_REPLICATIONS))
    except ResourceLimitError as exc:
        raise Refused(422, str(exc), exc.field) from None
    cfg = OptimizationConfig(dqn=False, replications=SESSION_REPLICATIONS, dp_max_work=DEFAULT_LIMITS.dp_max_work,
                             search_replications=SESSION_SEARCH_REPLICATIONS, write_artifacts=False)
    return OptimizationAgent(cfg).run(problem, out_dir=None)


def session_state(session) -> dict:
    """What a client renders: stage, the table, and once known the chosen policy and every candidate's cost."""
    from inventory.spec import PARAMETERS

    table = session.extraction.table
    values = table.to_json()
    state = {
        "stage": session.stage,
        "table": {p: {"value": values.get(p), "status": table.status(p)} for p in PARAMETERS},
        "transcript": [list(t) for t in session.transcript()],
    }
    if getattr(session, "scenario", None):  # data-collection mode: what the participant plays (serving.collect)
        state["scenario"] = session.scenario
    if session.result is not None:
        state["policy"] = session.result.winner.as_dict()
        state["scores"] = [{"name": s.name, "label": s.label, "mean_cost": s.mean_cost, "std_cost": s.std_cost}
                           for s in session.result.scores]
    return finite(state)


def _new_session_task(collect: bool = False) -> tuple[bytes, str, dict]:
    import cloudpickle

    from agents.dialogue import Consultant
    from serving.collect import new_scenario

    session = Consultant(optimize=limited_optimize)
    session.scenario = new_scenario() if collect else None
    reply = session.start()
    return cloudpickle.dumps(session), reply, session_state(session)


def _message_task(blob: bytes, message: str) -> tuple[bytes, str, dict]:
    import cloudpickle

    session = cloudpickle.loads(blob)
    reply = session.send(message)
    return cloudpickle.dumps(session), reply, session_state(session)


# ---- the deployment ----------------------------------------------------------------------------------------

def _refusal(exc: Refused) -> JSONResponse:
    headers = {"Retry-After": "5"} if exc.status == 503 else None
    return JSONResponse(error_body(exc.message, param=exc.field), status_code=exc.status, headers=headers)


def _param_message(exc: Exception) -> str:
    text = str(exc) or exc.__class__.__name__
    if isinstance(exc, (OverflowError, TypeError)) or ":" not in text:
        return f"params: {text}"
    return text


def _owner(request: Request) -> str:
    return getattr(request.state, "owner", "") or ""


# NB: Serve pickles this class by value, so everything it uses at request time is defined above it.
@serve.deployment(num_replicas=1, max_ongoing_requests=64, ray_actor_options={"num_cpus": 1})
@serve.ingress(app)
class ConsultantAPI:
    def __init__(self, config: dict | None = None):
        from inventory.demand import forbid_file_access
        from serving.keys import KeyStore
        from serving.sessions import SessionStore

        config = config or {}
        forbid_file_access()  # request data never names a file this process reads
        self.store = SessionStore(config.get("sessions_url"))  # upgrades the schema to head (Alembic)
        GUARD.configure(config, KeyStore(self.store.engine))  # keys from args/env/file and `askopt keys create`
        limit = float(config.get("timeout_seconds", Budget().seconds))
        self.isolator = Isolator(Budget(seconds=limit, cpu_seconds=limit))
        self.collect = str(config.get("collect", "")).lower() in ("1", "true", "yes")
        self.isolator.warm()

    @app.get("/healthz")
    async def health(self) -> dict:
        sessions = await asyncio.to_thread(self.store.count)
        return {"status": "ok", "store": self.store.backend, "sessions": sessions,
                "running": self.isolator.running, "stopped_early": self.isolator.killed,
                "auth": GUARD.enabled, "collect": self.collect}

    @app.post("/v1/solve")
    async def solve(self, req: SolveRequest):
        from inventory.policies import parse_policy_spec
        from inventory.spec import ParameterTable
        from optimization.limits import Plan, ResourceLimitError, check

        try:
            problem = ParameterTable.from_json(dict(req.params)).to_problem()
        except Exception as exc:  # noqa: BLE001 - any bad value is the client's: 400 naming the field
            return JSONResponse(error_body(_param_message(exc), param="params"), status_code=400)
        for spec in req.evaluate:
            try:
                parse_policy_spec(spec)
            except Exception as exc:  # noqa: BLE001
                return JSONResponse(error_body(f"evaluate: {spec[:80]!r}: {exc}", param="evaluate"),
                                    status_code=400)
        try:
            check(problem, Plan(SOLVE_METHODS[req.method], req.replications, len(req.evaluate), req.objective))
        except ResourceLimitError as exc:
            return JSONResponse(error_body(str(exc), param=exc.field), status_code=422)
        try:
            return await self.isolator.run(_solve_task, problem, req.method, req.objective, list(req.evaluate),
                                           req.replications, req.seed)
        except Refused as exc:
            return _refusal(exc)

    @app.post("/v1/sessions")
    async def new_session(self, request: Request):
        try:
            blob, reply, state = await self.isolator.run(_new_session_task, self.collect)
        except Refused as exc:
            return _refusal(exc)
        sid = uuid.uuid4().hex
        await asyncio.to_thread(self.store.create, sid, _owner(request), blob, state,
                                "collect" if self.collect else "consult")
        return {"session_id": sid, "reply": reply, **state}

    async def _row(self, sid: str, request: Request):
        if not SESSION_ID.match(sid):
            return None
        row = await asyncio.to_thread(self.store.load, sid)
        if row is None or row.owner != _owner(request):  # another key's session does not exist for you
            return None
        return row

    @app.post("/v1/sessions/{sid}/messages")
    async def message(self, sid: str, req: MessageRequest, request: Request):
        row = await self._row(sid, request)
        if row is None:
            return JSONResponse(error_body(f"session_id: unknown session {sid[:40]!r}", param="session_id"),
                                status_code=404)
        if req.message_id is not None and row.state.get("last_message_id") == req.message_id:
            return {"session_id": sid, "reply": row.state.get("last_reply", ""), **row.state}  # applied already
        try:
            blob, reply, state = await self.isolator.run(_message_task, row.blob, req.message)
        except Refused as exc:
            return _refusal(exc)
        if req.message_id is not None:
            state = {**state, "last_message_id": req.message_id, "last_reply": reply}
        saved = await asyncio.to_thread(self.store.save, sid, row.version, blob, state)
        if not saved:
            return JSONResponse(error_body("session_id: the session was changed by another request; reload it "
                                           "and send the message again", param="session_id"), status_code=409)
        return {"session_id": sid, "reply": reply, **state}

    @app.get("/v1/sessions/{sid}")
    async def state(self, sid: str, request: Request):
        row = await self._row(sid, request)
        if row is None:
            return JSONResponse(error_body(f"session_id: unknown session {sid[:40]!r}", param="session_id"),
                                status_code=404)
        return {"session_id": sid, **row.state}

    # ---- what the page shows once there is a policy (serving.session_views, computed in the child) ----
    async def _view(self, sid: str, request: Request, task, *args):
        row = await self._row(sid, request)
        if row is None:
            return JSONResponse(error_body(f"session_id: unknown session {sid[:40]!r}", param="session_id"),
                                status_code=404)
        try:
            return await self.isolator.run(task, row.blob, *args)
        except Refused as exc:
            return _refusal(exc)

    @app.get("/v1/sessions/{sid}/inventory.svg", response_class=Response)
    async def inventory_plot(self, sid: str, request: Request):
        from serving.session_views import plot_task

        out = await self._view(sid, request, plot_task)
        return out if isinstance(out, Response) else Response(out, media_type="image/svg+xml")

    @app.post("/v1/sessions/{sid}/order")
    async def order_now(self, sid: str, req: OrderRequest, request: Request):
        from serving.session_views import order_task

        return await self._view(sid, request, order_task, req.on_hand, req.in_transit)

    @app.get("/v1/sessions/{sid}/artifacts/{name}", response_class=Response)
    async def artifact(self, sid: str, name: str, request: Request):
        from serving.session_views import ARTIFACT_FILES, artifacts_task

        if name not in ARTIFACT_FILES:
            return JSONResponse(error_body(f"name: {name[:40]!r} is not allowed; allowed: "
                                           f"{', '.join(ARTIFACT_FILES)}", param="name"), status_code=404)
        out = await self._view(sid, request, artifacts_task)
        if isinstance(out, Response):
            return out
        kind = "application/json" if name.endswith(".json") else "text/csv"
        return Response(out[name], media_type=kind, headers={"content-disposition": f'attachment; filename="{name}"'})

    # ---- the web page (assets from serving/web; nothing from a CDN) ----
    @app.get("/", include_in_schema=False)
    async def index(self):
        return FileResponse(WEB_DIR / "index.html", media_type="text/html")

    @app.get("/static/{name}", include_in_schema=False)
    async def static(self, name: str):
        path = WEB_DIR / name
        if name not in _ASSETS or not path.is_file():
            return JSONResponse(error_body(f"static: no asset {name[:40]!r}", param="name"), status_code=404)
        return FileResponse(path, media_type=_ASSETS[name])

    @app.get("/docs", include_in_schema=False)
    async def docs(self):
        return HTMLResponse((WEB_DIR / "docs.html").read_text())


def build_app(args: dict | None = None):
    """Serve's application builder: `serve run serving.consultant_app:build_app sessions_url=... api_keys_file=...`
    passes the key=value pairs (or a config file's `args:`) as a dict.

    Keys: sessions_url (default $ASKOPT_SESSIONS_URL or ~/.askopt/sessions.db), api_keys (comma-separated),
    api_keys_file, num_replicas, num_cpus (per replica, default 1), timeout_seconds, rate_per_minute and burst
    (per key, `serving.guard`), cors_origins (comma-separated; default none: CORS off), collect (data-collection
    mode: every new session is a scenario a participant plays, `serving.collect`).
    """
    args = dict(args or {})
    allowed = ("sessions_url", "api_keys", "api_keys_file", "num_replicas", "num_cpus", "timeout_seconds",
               "rate_per_minute", "burst", "cors_origins", "collect")
    unknown = set(args) - set(allowed)
    if unknown:
        raise ValueError(f"args: {sorted(unknown)[0]!r} is not allowed; allowed: {', '.join(allowed)}")
    replicas = int(args.pop("num_replicas", 1))
    cpus = float(args.pop("num_cpus", 1))  # the work runs in child processes; this is Ray's placement share
    if replicas > 1 and not args.get("sessions_url"):
        from serving.sessions import default_url

        args["sessions_url"] = default_url()  # resolved once, so every replica shares one database
    # a replica being replaced (redeploy, scale-down) finishes what it runs: Serve's default drain is 20 s, shorter
    # than a request may legitimately take (a wait for a worker slot plus the computation's deadline)
    drain = Budget().queue_seconds + float(args.get("timeout_seconds", Budget().seconds)) + 10
    return ConsultantAPI.options(num_replicas=replicas, ray_actor_options={"num_cpus": cpus},
                                 graceful_shutdown_timeout_s=drain).bind(args)
