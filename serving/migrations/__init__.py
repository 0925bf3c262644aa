"""Alembic migrations of the sessions database (sessions, API keys), run by the app at start.

Why in the package (not a top-level `alembic/` folder): a replica started from an installed wheel must find the
scripts, and `SessionStore` upgrades the schema itself, so nobody runs `alembic upgrade` by hand before a deploy.

- `upgrade(engine)`: brings any database to head. A database made before migrations existed (the
  `askopt_sessions` table without an `alembic_version` row) is first stamped at the first revision, whose schema
  it has, so its rows are kept.
- Several replicas may start at once: on PostgreSQL the upgrade holds an advisory lock, on a SQLite file an
  exclusive `flock` on `<file>.migrate-lock` (SQLite replicas share a host), and within one process upgrades take
  turns (alembic's `context` is a process-wide global). As a backstop a failed upgrade is retried (up to 5 times);
  a retry finds the schema already at head.
"""

from __future__ import annotations

import contextlib
import fcntl
import threading
import time
from pathlib import Path

import sqlalchemy as sa

HERE = Path(__file__).parent
FIRST = "0001"
_LOCK_ID = 0x61736B6F  # "asko": the PostgreSQL advisory lock taken while migrating
_IN_PROCESS = threading.Lock()  # alembic's `context` is process-global: one migration at a time per process


def _config(connection):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(HERE))
    cfg.attributes["connection"] = connection
    return cfg


def head() -> str:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_config(None)).get_current_head()


def current(engine: sa.Engine) -> str | None:
    """The revision the database is at (None: never migrated)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def _upgrade_once(engine: sa.Engine, revision: str) -> None:
    from alembic import command

    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_ID})
        insp = sa.inspect(conn)
        if not insp.has_table("alembic_version") and insp.has_table("askopt_sessions"):
            command.stamp(_config(conn), FIRST)  # made by create_all before migrations: it has revision 1's schema
        command.upgrade(_config(conn), revision)


@contextlib.contextmanager
def _sqlite_file_lock(engine: sa.Engine):
    """An exclusive lock on `<db>.migrate-lock` while migrating a SQLite file: SQLite runs DDL outside the
    transaction, so without it two replicas could both see an unversioned table and both stamp it."""
    path = engine.url.database if engine.dialect.name == "sqlite" else None
    if not path or path == ":memory:" or path.startswith("file:"):
        yield
        return
    with open(f"{path}.migrate-lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def upgrade(engine: sa.Engine, revision: str = "head", attempts: int = 5) -> None:
    with _IN_PROCESS, _sqlite_file_lock(engine):
        for attempt in range(attempts):
            try:
                return _upgrade_once(engine, revision)
            except sa.exc.DBAPIError:  # another replica migrated at the same moment: its work is ours
                if attempt == attempts - 1:
                    raise
                time.sleep(0.2 * (attempt + 1))
