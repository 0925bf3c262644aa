"""API keys hashed in the database (`askopt keys create|list|revoke`), the guard's 401 / 429 / CORS, on a small
FastAPI app behind the same middleware the consultant and imitator use (no Ray needed)."""

import sqlalchemy as sa
from fastapi import FastAPI, Request
from fastapi.testclient import TestClient

from experiments.cli import main
from serving.guard import Guard, TokenBucket, install
from serving.keys import PREFIX, KeyStore, key_id_of, verify


def _app(store: KeyStore | None, **config) -> tuple[TestClient, Guard]:
    guard = Guard(set(), open_paths=("/healthz",))
    app = FastAPI()
    install(app, guard)

    @app.get("/healthz")
    def health():
        return {"ok": True}

    @app.post("/v1/thing")
    def thing(request: Request):
        return {"owner": getattr(request.state, "owner", "")}

    guard.configure(config, store)
    return TestClient(app), guard


def test_keys_are_stored_only_as_salted_hashes(tmp_path):
    store = KeyStore(f"sqlite:///{tmp_path / 'k.db'}")
    info, key = store.create("shop A")
    _, key2 = store.create("shop B", rate_per_minute=10)
    assert key_id_of(key) == info.key_id and len(key) > 50 and key != key2
    with store.engine.connect() as conn:
        dump = " ".join(str(v) for row in conn.execute(sa.text("SELECT * FROM askopt_api_keys")) for v in row)
    secret = key[len(PREFIX) + len(info.key_id) + 1:]  # token_urlsafe may itself contain "_"
    assert len(secret) >= 40 and key not in dump and secret not in dump  # the secret never reaches the database
    salts = {k.key_id: v.salt for k, v in zip(store.list(), store.active().values(), strict=True)}
    assert len(set(salts.values())) == 2  # a salt per key
    active = store.active()
    assert verify(key, active) == info.key_id
    assert verify(key[:-1] + ("A" if key[-1] != "A" else "B"), active) is None  # one character off
    assert verify("askopt_" + info.key_id + "_" + "x" * 43, active) is None and verify("nonsense", active) is None
    assert store.revoke(info.key_id) and not store.revoke(info.key_id)
    assert verify(key, store.active()) is None and [k.active for k in store.list()] == [False, True]


def test_without_keys_everything_is_open_and_unlimited(tmp_path):
    client, guard = _app(KeyStore(f"sqlite:///{tmp_path / 'k.db'}"), rate_per_minute=1, burst=1)
    assert not guard.enabled
    assert all(client.post("/v1/thing").status_code == 200 for _ in range(5))


def test_a_database_key_is_required_once_one_exists(tmp_path):
    store = KeyStore(f"sqlite:///{tmp_path / 'k.db'}")
    info, key = store.create("shop A")
    client, guard = _app(store)
    r = client.post("/v1/thing")
    assert r.status_code == 401 and r.json()["error"]["param"] == "authorization"
    assert r.headers["www-authenticate"] == "Bearer"
    assert client.post("/v1/thing", headers={"Authorization": "Bearer wrong"}).status_code == 401
    ok = client.post("/v1/thing", headers={"Authorization": f"Bearer {key}"})
    assert ok.status_code == 200 and ok.json()["owner"] == info.key_id  # sessions are filed under the key's id
    assert client.get("/healthz").status_code == 200  # open routes stay open
    store.revoke(info.key_id)
    guard._db_read = float("-inf")  # the replica re-reads the table every KEYS_TTL seconds; skip the wait
    assert client.post("/v1/thing", headers={"Authorization": f"Bearer {key}"}).status_code == 401
    assert client.post("/v1/thing").status_code == 401  # revoking the last key locks the API, never opens it


def test_rate_limit_per_key_answers_429_with_retry_after(tmp_path):
    store = KeyStore(f"sqlite:///{tmp_path / 'k.db'}")
    _, slow = store.create("slow", rate_per_minute=6)  # its own rate overrides the app's
    _, fast = store.create("fast")
    client, _ = _app(store, rate_per_minute=600, burst=3)
    h_slow, h_fast = {"Authorization": f"Bearer {slow}"}, {"Authorization": f"Bearer {fast}"}
    codes = [client.post("/v1/thing", headers=h_slow).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    r = client.post("/v1/thing", headers=h_slow)
    assert r.status_code == 429 and 1 <= int(r.headers["retry-after"]) <= 10  # a token every 10 s
    assert r.json()["error"]["type"] == "rate_limit_error"
    assert client.post("/v1/thing", headers=h_fast).status_code == 200  # another key has its own bucket


def test_token_bucket_refills_at_its_rate():
    b = TokenBucket(rate=2.0, burst=2)
    t0 = b.stamp
    assert b.take(t0) == 0 and b.take(t0) == 0
    assert abs(b.take(t0) - 0.5) < 1e-9  # empty: the next token in 1/rate s
    assert b.take(t0 + 0.5) == 0


def test_cors_is_off_by_default_and_only_for_listed_origins(tmp_path):
    client, _ = _app(None)
    pre = {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
    r = client.options("/v1/thing", headers=pre)
    assert "access-control-allow-origin" not in r.headers
    assert "access-control-allow-origin" not in client.post("/v1/thing", headers={"Origin": "https://evil.example"}
                                                             ).headers
    client, _ = _app(None, cors_origins="https://shop.example")
    r = client.options("/v1/thing", headers={**pre, "Origin": "https://shop.example"})
    assert r.status_code == 204 and r.headers["access-control-allow-origin"] == "https://shop.example"
    r = client.post("/v1/thing", headers={"Origin": "https://shop.example"})
    assert r.headers["access-control-allow-origin"] == "https://shop.example"
    assert "access-control-allow-origin" not in client.post("/v1/thing", headers={"Origin": "https://evil.example"}
                                                             ).headers


def test_keys_cli_create_list_revoke(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    assert main(["keys", "create", "--name", "front desk", "--url", url]) == 0
    out = capsys.readouterr().out.splitlines()
    key_id, key = out[0].split()[2], out[1]
    assert key_id_of(key) == key_id
    assert main(["keys", "list", "--url", url]) == 0
    listing = capsys.readouterr().out
    assert key_id in listing and "front desk" in listing and key not in listing
    assert main(["keys", "revoke", key_id, "--url", url]) == 0
    assert main(["keys", "revoke", key_id, "--url", url]) == 2  # already revoked: a one-line error
    assert "key_id" in capsys.readouterr().err
    assert main(["keys", "create", "--name", "x", "--rate", "-1", "--url", url]) == 2
