"""Alembic migrations of the sessions database: a database made at the previous revision (or before migrations
existed) is upgraded to head by the store without losing a row, on SQLite and on a real PostgreSQL server."""

import json

import pytest
import sqlalchemy as sa
from test_serving_sessions import postgres_url  # noqa: F401 - the fixture: a throw-away PostgreSQL server

from serving import migrations
from serving.sessions import SessionStore, make_engine, metadata, normalise_url

OLD_ROW = {"id": "a1b2c3d4e5f6", "owner": "k1", "version": 3, "blob": b"\x00pickled", "state": json.dumps(
    {"stage": "interpretation", "transcript": [["assistant", "hi"], ["user", "I sell bikes"]]}),
    "created": 1.0, "updated": 2.0}


def _old_database(url: str) -> None:
    """A database at revision 0001 holding one session, as the previous release left it."""
    engine = make_engine(url, migrate=False)
    migrations.upgrade(engine, "0001")
    assert migrations.current(engine) == "0001"
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO askopt_sessions (id, owner, version, blob, state, created, updated) "
                             "VALUES (:id, :owner, :version, :blob, :state, :created, :updated)"), OLD_ROW)
    engine.dispose()


def _check_upgraded(url: str) -> None:
    store = SessionStore(url)  # what a new replica does at start
    assert migrations.current(store.engine) == migrations.head() == "0002"
    row = store.load(OLD_ROW["id"])
    assert row is not None and row.blob == OLD_ROW["blob"] and row.version == 3 and row.owner == "k1"
    assert row.state["transcript"][1] == ["user", "I sell bikes"] and row.mode == "consult"
    assert store.save(row.id, 3, b"next", row.state)  # and it keeps working after the upgrade
    insp = sa.inspect(store.engine)
    assert "askopt_api_keys" in insp.get_table_names()
    store.dispose()


def _no_drift(url: str) -> None:
    """The migrations build exactly the schema `serving.sessions.metadata` describes."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    engine = make_engine(url)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    engine.dispose()
    assert diff == [], diff


def test_sqlite_previous_revision_upgrades_without_loss(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    _old_database(url)
    _check_upgraded(url)
    _no_drift(url)
    SessionStore(url).dispose()  # opening a database already at head changes nothing
    assert migrations.current(make_engine(url, migrate=False)) == "0002"


def test_sqlite_database_from_before_migrations_is_stamped_then_upgraded(tmp_path):
    url = f"sqlite:///{tmp_path / 'legacy.db'}"
    engine = sa.create_engine(url)
    legacy = sa.MetaData()
    sa.Table("askopt_sessions", legacy, *[sa.Column(c.name, c.type, primary_key=c.primary_key)
                                          for c in metadata.tables["askopt_sessions"].columns if c.name != "mode"])
    legacy.create_all(engine)  # what `metadata.create_all` made before Alembic: no alembic_version table
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO askopt_sessions (id, owner, version, blob, state, created, updated) "
                             "VALUES (:id, :owner, :version, :blob, :state, :created, :updated)"), OLD_ROW)
    engine.dispose()
    _check_upgraded(url)


def test_postgresql_previous_revision_upgrades_without_loss(postgres_url):  # noqa: F811
    url = normalise_url(postgres_url)
    _old_database(url)
    _check_upgraded(postgres_url)
    _no_drift(url)


def test_downgrade_to_the_previous_revision_keeps_sessions(tmp_path):
    from alembic import command

    url = f"sqlite:///{tmp_path / 'd.db'}"
    _old_database(url)
    _check_upgraded(url)
    engine = make_engine(url, migrate=False)
    with engine.begin() as conn:
        command.downgrade(migrations._config(conn), "0001")
    assert migrations.current(engine) == "0001"
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT version FROM askopt_sessions")).scalar_one() == 4
    with pytest.raises(sa.exc.NoSuchTableError):
        sa.Table("askopt_api_keys", sa.MetaData(), autoload_with=engine)


def test_replicas_starting_together_all_reach_head(tmp_path):
    """Replicas (processes) open a fresh SQLite database at the same moment: every one ends at head, none fails;
    threads of one process take turns."""
    import subprocess
    import sys
    import threading
    import time

    url = f"sqlite:///{tmp_path / 'race.db'}"
    go = time.time() + 4  # every process starts migrating at this moment, after its imports
    code = ("import sys, time\nfrom serving.sessions import SessionStore\nfrom serving import migrations\n"
            f"time.sleep(max(0, {go} - time.time()))\ns = SessionStore({url!r})\n"
            "print(migrations.current(s.engine))\n")
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err[-500:] for _, err in outs]
    assert {out.strip() for out, _ in outs} == {migrations.head()}

    url2, errors = f"sqlite:///{tmp_path / 'threads.db'}", []
    barrier = threading.Barrier(3)

    def open_store():
        barrier.wait()
        try:
            SessionStore(url2).dispose()
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=open_store) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
