"""Persistent consultant sessions: the store (SQLite, and a real PostgreSQL server when Debian's package is here)
and a replica killed under load that loses no session."""

import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from serving.sessions import SessionStore

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _exercise(store: SessionStore) -> None:
    store.create("a1b2c3d4e5f6", "owner1", b"\x00blob", {"stage": "extraction"})
    row = store.load("a1b2c3d4e5f6")
    assert row.owner == "owner1" and row.blob == b"\x00blob" and row.version == 1
    assert store.save("a1b2c3d4e5f6", 1, b"v2", {"stage": "interpretation"})
    assert not store.save("a1b2c3d4e5f6", 1, b"stale", {"stage": "lost"})  # a concurrent writer loses, visibly
    row = store.load("a1b2c3d4e5f6")
    assert row.version == 2 and row.blob == b"v2" and row.state["stage"] == "interpretation"
    assert store.load("ffffffffffff") is None and store.count() == 1


def test_sqlite_store_survives_a_new_process_object(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    _exercise(SessionStore(url))
    again = SessionStore(url)  # what a restarted replica does
    assert again.load("a1b2c3d4e5f6").blob == b"v2"


@pytest.fixture
def postgres_url():
    """A throw-away PostgreSQL server from Debian's package, run as the postgres user."""
    if not (PG_BIN / "initdb").exists():
        print("SKIP reason: Debian's postgresql package is not installed (/usr/lib/postgresql/15/bin)")
        pytest.skip("postgresql not installed")
    runas: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root
        if shutil.which("runuser") is None:
            pytest.skip("running as root without runuser: cannot start PostgreSQL as the postgres user")
        runas = ["runuser", "-u", "postgres", "--"]
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="askopt-pg-"))  # not under pytest's 0700 tmp: postgres must reach it
    os.chmod(root, 0o755)
    data = root / "data"
    data.mkdir()
    if os.geteuid() == 0:
        shutil.chown(data, "postgres")
    port = _free_port()
    subprocess.run(runas + [str(PG_BIN / "initdb"), "-D", str(data), "-U", "askopt", "--auth=trust", "-E", "UTF8"],
                   check=True, capture_output=True)
    subprocess.run(runas + [str(PG_BIN / "pg_ctl"), "-D", str(data), "-o",
                            f"-p {port} -k {data} -c listen_addresses=127.0.0.1", "-w", "-l",
                            str(data / "server.log"), "start"], check=True, capture_output=True)
    try:
        yield f"postgresql://askopt@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(runas + [str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def test_postgresql_store(postgres_url):
    store = SessionStore(postgres_url)
    assert store.backend == "postgresql"
    _exercise(store)
    store.dispose()


# ---- a replica killed under load -------------------------------------------------------------------------------

FACTS = [
    "I run a bike shop. We sell about 8 bikes a day, it varies like a Poisson process.",
    "I plan for 90 days. Bikes don't spoil.",
    "If we are out of stock the customer just leaves, the sale is lost.",
    "Holding a bike costs me 50 cents per day. A lost sale costs me $2.83.",
    "Each order costs $3 in fees. Delivery takes 2 days.",
]


@pytest.mark.slow
def test_replica_killed_under_load_loses_no_session(tmp_path):
    import ray  # a core dependency: an import error must fail, not skip
    from ray import serve

    from serving.consultant_app import build_app

    port = _free_port()
    ray.init(address="local", num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        serve.run(build_app({"sessions_url": f"sqlite:///{tmp_path / 's.db'}", "num_replicas": 2,
                             "num_cpus": 0.25}), name="consultant", route_prefix="/")
        base = f"http://127.0.0.1:{port}"
        sids = [httpx.post(f"{base}/v1/sessions", timeout=60).json()["session_id"] for _ in range(6)]
        answered: dict[str, int] = dict.fromkeys(sids, 0)
        failures: list[int] = []

        def talk(sid: str) -> None:
            for i, msg in enumerate(FACTS):
                for _attempt in range(5):  # a client retries a failed request, with the same message id
                    try:
                        r = httpx.post(f"{base}/v1/sessions/{sid}/messages",
                                       json={"message": msg, "message_id": f"{sid}-{i}"}, timeout=60)
                    except httpx.HTTPError:
                        failures.append(-1)
                        time.sleep(0.5)
                        continue
                    if r.status_code == 200:
                        answered[sid] += 1
                        break
                    failures.append(r.status_code)
                    time.sleep(0.5)

        threads = [threading.Thread(target=talk, args=(sid,)) for sid in sids]
        for t in threads:
            t.start()
        time.sleep(1.0)
        replicas = [a for a in ray.util.list_named_actors(all_namespaces=True)
                    if "ConsultantAPI" in a["name"] and "REPLICA" in a["name"].upper()]
        assert len(replicas) == 2
        ray.kill(ray.get_actor(replicas[0]["name"], namespace=replicas[0]["namespace"]), no_restart=True)
        for t in threads:
            t.join(timeout=300)
        print(f"failed attempts while a replica was killed: {len(failures)} ({failures})")
        assert len(failures) <= 2 * len(sids)  # bounded: at most the in-flight requests of the killed replica
        for sid in sids:  # every session is whole: every answered message is in its transcript
            state = httpx.get(f"{base}/v1/sessions/{sid}", timeout=60).json()
            users = [text for role, text in state["transcript"] if role == "user"]
            assert users == FACTS[:answered[sid]] and answered[sid] == len(FACTS)
            assert state["table"]["lead_time"]["value"] == "2"
    finally:
        serve.shutdown()
        ray.shutdown()
