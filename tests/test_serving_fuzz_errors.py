"""The error shape of FastAPI's own 4xx behind `serving.guard.install`, on a bare app (no Ray): the cases
benchmarks/bench_fuzz_http.py found answering `{"detail": ...}` instead of the project's error body naming the
field. (The fuzz run itself, 10,000 requests at both Serve apps, is a benchmark, not a test.)"""

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import BaseModel, ConfigDict

from serving.guard import Guard, install


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seed: int = 0


@pytest.fixture(scope="module")
def client():
    app = FastAPI()
    install(app, Guard(set()))

    @app.post("/v1/echo")
    async def echo(body: Body) -> dict:
        return {"seed": body.seed}

    return TestClient(app)


@pytest.mark.parametrize("content, field", [
    (b"\xfa(9\x15\xad8\xf2e\xee", "body"),  # bytes that are not JSON
    (b'{"seed": ' + b"1" * 5000 + b"}", "body"),  # past Python's 4300-digit integer limit
    (b'{"seed": NaN}', "seed"),
    (b"[" * 30_000 + b"]" * 30_000, "body"),  # nested past the parser's recursion limit, under 64 KiB
])
def test_unparseable_bodies_get_the_error_body_naming_the_field(client, content, field):
    r = client.post("/v1/echo", content=content, headers={"content-type": "application/json"})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["param"] == field and err["message"].startswith(f"{field}:")


def test_unknown_route_and_method_name_what_was_wrong(client):
    r = client.get("/v1/nowhere")
    assert r.status_code == 404 and r.json()["error"]["param"] == "path"
    r = client.get("/v1/echo")
    assert r.status_code == 405 and r.json()["error"]["param"] == "method"
    assert "POST" in r.headers.get("allow", "")  # the handler keeps the exception's headers
    assert client.post("/v1/echo", json={"seed": 4}).json() == {"seed": 4}
