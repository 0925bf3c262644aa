"""API keys kept in the sessions database as salted SHA-256 hashes (`askopt keys create|list|revoke`).

A key is `askopt_<id>_<secret>`: `id` (12 hex digits) is public and names the row, `secret` is 32 random bytes
(`secrets.token_urlsafe`). The database holds only `sha256(salt + key)` with a per-key 16-byte salt, so a copy of
the database (a backup, a replica's disk) does not let anyone call the API.

Why SHA-256 and not a slow hash (scrypt, bcrypt): slow hashing exists to make guessing a *low-entropy* secret
(a password) expensive. A key here carries 256 random bits; no number of guesses per second makes a search of
2^256 possible, so a fast hash loses nothing, and it keeps the per-request check at microseconds (a replica checks
the key on every request; scrypt at safe settings costs tens of milliseconds and megabytes each time). The salt
keeps equal keys in two databases from having equal hashes and rules out precomputed tables.

The id doubles as the owner a session is filed under (`serving.sessions`): a session is visible only to the key
that created it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from serving.sessions import DEFAULT_URL_ENV, api_keys, make_engine, normalise_url

PREFIX = "askopt_"
KEY_RE = re.compile(r"^askopt_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$")
NAME_MAX = 100


def key_hash(salt: str, key: str) -> str:
    return hashlib.sha256(bytes.fromhex(salt) + key.encode()).hexdigest()


def key_id_of(key: str) -> str | None:
    """The public id inside a well-formed key (None when the text is not one of our keys)."""
    m = KEY_RE.match(key)
    return m.group(1) if m else None


@dataclass(frozen=True)
class KeyInfo:
    key_id: str
    name: str
    created: float
    revoked: float | None
    rate_per_minute: float | None

    @property
    def active(self) -> bool:
        return self.revoked is None


@dataclass(frozen=True)
class ActiveKey:
    salt: str
    hash: str
    rate_per_minute: float | None


class KeyStore:
    """Create / list / revoke keys, and the active ones for the guard's check."""

    def __init__(self, engine_or_url: sa.Engine | str):
        if isinstance(engine_or_url, str):
            engine_or_url = make_engine(normalise_url(engine_or_url))
        self.engine = engine_or_url

    def create(self, name: str, rate_per_minute: float | None = None) -> tuple[KeyInfo, str]:
        """A new key: its row, and the key itself (shown once; only its hash is stored)."""
        name = name.strip()
        if not name or len(name) > NAME_MAX:
            raise ValueError(f"name: must be 1..{NAME_MAX} characters")
        if rate_per_minute is not None and not 0 < rate_per_minute <= 1e6:
            raise ValueError(f"rate_per_minute: {rate_per_minute!r} is not allowed; must be in (0, 1e6]")
        key_id = secrets.token_hex(6)
        key = f"{PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
        salt = secrets.token_hex(16)
        now = time.time()
        with self.engine.begin() as conn:
            conn.execute(api_keys.insert().values(key_id=key_id, name=name, salt=salt, hash=key_hash(salt, key),
                                                  rate_per_minute=rate_per_minute, created=now, revoked=None))
        return KeyInfo(key_id, name, now, None, rate_per_minute), key

    def list(self) -> list[KeyInfo]:
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(api_keys).order_by(api_keys.c.created)).all()
        return [KeyInfo(r.key_id, r.name, r.created, r.revoked, r.rate_per_minute) for r in rows]

    def revoke(self, key_id: str) -> bool:
        """True if an active key was revoked (False: unknown id, or already revoked)."""
        with self.engine.begin() as conn:
            res = conn.execute(api_keys.update().where(api_keys.c.key_id == key_id, api_keys.c.revoked.is_(None))
                               .values(revoked=time.time()))
        return res.rowcount == 1

    def snapshot(self) -> tuple[bool, dict[str, ActiveKey]]:
        """(any key ever made, the active ones). A database whose keys are all revoked still demands a key:
        revoking the last key must lock the API, not open it."""
        with self.engine.connect() as conn:
            made = conn.execute(sa.select(sa.func.count()).select_from(api_keys)).scalar_one() > 0
        return made, self.active()

    def active(self) -> dict[str, ActiveKey]:
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(api_keys.c.key_id, api_keys.c.salt, api_keys.c.hash,
                                          api_keys.c.rate_per_minute).where(api_keys.c.revoked.is_(None))).all()
        return {r.key_id: ActiveKey(r.salt, r.hash, r.rate_per_minute) for r in rows}


def verify(key: str, active: dict[str, ActiveKey]) -> str | None:
    """The key's id if it is one of the active keys, else None (constant-time hash comparison)."""
    key_id = key_id_of(key)
    row = active.get(key_id) if key_id else None
    if row is None:
        return None
    return key_id if hmac.compare_digest(key_hash(row.salt, key), row.hash) else None


def keys_url(explicit: str | None = None, must_exist: bool = False) -> str | None:
    """Where keys live: the given URL, else $ASKOPT_SESSIONS_URL, else the default SQLite file (with
    `must_exist`, only if that file is already there: an app without a sessions database of its own, the
    imitator, then does not create one just to find it has no keys)."""
    from serving.sessions import default_url

    if explicit:
        return explicit
    if os.environ.get(DEFAULT_URL_ENV):
        return os.environ[DEFAULT_URL_ENV]
    path = Path.home() / ".askopt" / "sessions.db"
    if must_exist and not path.is_file():
        return None
    return default_url()


def configure_imitator_guard(guard, config: dict | None) -> None:
    """Keys for an imitator endpoint (either engine): from the app's args, the environment, a keys file, and the
    database `askopt keys create` wrote if there is one (an imitator has no sessions database of its own)."""
    config = config or {}
    url = keys_url(config.get("keys_url"), must_exist=True)
    guard.configure(config, KeyStore(url) if url else None)
