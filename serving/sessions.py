"""Consultant sessions in a database shared by every replica: SQLite file by default, PostgreSQL by URL.

A session row holds the pickled `agents.dialogue.Consultant` (cloudpickle: the chosen policy may be a DP table
closure), the JSON a client renders (stage, parameter table, policy, transcript) and a version number. Replicas
keep nothing in memory: a message loads the row, the step runs, and the new state is written back only if the
version is unchanged (optimistic locking), so any replica serves any session, two concurrent messages to one
session cannot silently overwrite each other, and a replica killed mid-step loses nothing that was answered.

Sessions belong to the API key that created them (`owner` is the key's id, "" when keys are off). A session's
`mode` is "consult", or "collect" when a participant plays the manager for the imitator corpus
(`serving.collect`). The schema is Alembic's (`serving/migrations`): the store upgrades the database to head when
it opens it, so a new release's replicas migrate an old database without losing a row.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

DEFAULT_URL_ENV = "ASKOPT_SESSIONS_URL"

metadata = sa.MetaData()
sessions = sa.Table(
    "askopt_sessions", metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("owner", sa.String(64), nullable=False, default=""),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("blob", sa.LargeBinary, nullable=False),
    sa.Column("state", sa.Text, nullable=False),
    sa.Column("created", sa.Float, nullable=False),
    sa.Column("updated", sa.Float, nullable=False),
    sa.Column("mode", sa.String(16), nullable=False, server_default="consult", index=True),
)
api_keys = sa.Table(
    "askopt_api_keys", metadata,
    sa.Column("key_id", sa.String(16), primary_key=True),
    sa.Column("name", sa.String(100), nullable=False),
    sa.Column("salt", sa.String(32), nullable=False),
    sa.Column("hash", sa.String(64), nullable=False),
    sa.Column("rate_per_minute", sa.Float, nullable=True),
    sa.Column("created", sa.Float, nullable=False),
    sa.Column("revoked", sa.Float, nullable=True),
)


def normalise_url(url: str) -> str:
    """`postgresql://` means psycopg 3 (the driver the project installs), not SQLAlchemy's psycopg2 default."""
    if url.startswith("postgresql://"):
        return "postgresql+psycopg://" + url[len("postgresql://"):]
    return url


def make_engine(url: str, migrate: bool = True) -> sa.Engine:
    """An engine on `url` (SQLite in WAL mode with a busy timeout), its schema upgraded to head unless told not."""
    kwargs: dict = {"pool_pre_ping": True}
    if url.startswith("sqlite"):
        kwargs["connect_args"] = {"timeout": 30, "check_same_thread": False}
    engine = sa.create_engine(url, **kwargs)
    if url.startswith("sqlite"):
        @sa.event.listens_for(engine, "connect")
        def _wal(dbapi_conn, _record):  # readers never block the writer; several replicas share the file
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()
    if migrate:
        from serving.migrations import upgrade

        upgrade(engine)
    return engine


def default_url() -> str:
    """$ASKOPT_SESSIONS_URL, else a SQLite file under ~/.askopt."""
    url = os.environ.get(DEFAULT_URL_ENV)
    if url:
        return url
    path = Path.home() / ".askopt" / "sessions.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


@dataclass
class SessionRow:
    id: str
    owner: str
    version: int
    blob: bytes
    state: dict
    mode: str = "consult"


class SessionStore:
    """Create / load / compare-and-swap save of session rows."""

    def __init__(self, url: str | None = None):
        self.url = normalise_url(url or default_url())
        self.engine = make_engine(self.url)

    @property
    def backend(self) -> str:
        return self.engine.dialect.name

    def create(self, sid: str, owner: str, blob: bytes, state: dict, mode: str = "consult") -> None:
        now = time.time()
        with self.engine.begin() as conn:
            conn.execute(sessions.insert().values(id=sid, owner=owner, version=1, blob=blob, mode=mode,
                                                  state=json.dumps(state), created=now, updated=now))

    def load(self, sid: str) -> SessionRow | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(sessions).where(sessions.c.id == sid)).first()
        if row is None:
            return None
        return SessionRow(row.id, row.owner, row.version, bytes(row.blob), json.loads(row.state), row.mode)

    def states(self, mode: str | None = None) -> list[tuple[str, str, dict]]:
        """(id, owner, state) of every session (of one mode), oldest first: what an export reads."""
        query = sa.select(sessions.c.id, sessions.c.owner, sessions.c.state).order_by(sessions.c.created)
        if mode is not None:
            query = query.where(sessions.c.mode == mode)
        with self.engine.connect() as conn:
            return [(r.id, r.owner, json.loads(r.state)) for r in conn.execute(query)]

    def save(self, sid: str, version: int, blob: bytes, state: dict) -> bool:
        """Write the next version; False if someone else saved first (the caller answers 409)."""
        with self.engine.begin() as conn:
            res = conn.execute(
                sessions.update()
                .where(sessions.c.id == sid, sessions.c.version == version)
                .values(version=version + 1, blob=blob, state=json.dumps(state), updated=time.time())
            )
        return res.rowcount == 1

    def count(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(sessions)).scalar_one())

    def dispose(self) -> None:
        self.engine.dispose()
