"""`askopt keys create|list|revoke`: API keys stored hashed in the sessions database (`serving.keys`).

The key is printed once, at creation; the database keeps only its salted hash. Once any key exists in the
database a server reads (`askopt web`, `askopt serve consultant|imitator`), requests without a valid key get 401.
"""

from __future__ import annotations

import json
import time

from experiments.cli import UserInputError


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "keys", help="create, list or revoke API keys (stored hashed in the sessions database)",
        description="API keys for the consultant and imitator HTTP apps. The database is --url, else "
                    "$ASKOPT_SESSIONS_URL, else ~/.askopt/sessions.db: the one the servers read.")
    sub = p.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    c = sub.add_parser("create", help="make a key and print it (once)")
    c.add_argument("--name", required=True, help="who or what the key is for (shown by `keys list`)")
    c.add_argument("--rate", type=float, default=None,
                   help="this key's requests per minute (default: the server's rate_per_minute)")
    c.set_defaults(handler=create)
    ls = sub.add_parser("list", help="the keys (id, name, created, revoked); never the keys themselves")
    ls.add_argument("--json", action="store_true", help="one JSON object")
    ls.set_defaults(handler=list_keys)
    r = sub.add_parser("revoke", help="revoke a key by its id (servers refuse it within 5 s)")
    r.add_argument("key_id", help="the 12-hex-digit id `keys list` shows")
    r.set_defaults(handler=revoke)
    for q in (c, ls, r):
        q.add_argument("--url", default=None, help="database URL (sqlite:///PATH or postgresql://...)")


def _store(args):
    from serving.keys import KeyStore, keys_url

    try:
        return KeyStore(keys_url(args.url))
    except Exception as exc:  # noqa: BLE001 - a bad URL or an unreachable server is the user's to fix
        raise UserInputError(f"--url: cannot open the keys database: {str(exc).splitlines()[0][:200]}") from None


def create(args) -> int:
    info, key = _store(args).create(args.name, args.rate)
    print(f"key id: {info.key_id}  name: {info.name}")
    print(key)
    print("Keep it now: only its hash is stored. Send it as 'Authorization: Bearer <key>' "
          "(or paste it into the web page's key field).")
    return 0


def _when(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t)) + "Z" if t else "-"


def list_keys(args) -> int:
    keys = _store(args).list()
    if args.json:
        print(json.dumps({"keys": [{"key_id": k.key_id, "name": k.name, "created": k.created,
                                    "revoked": k.revoked, "rate_per_minute": k.rate_per_minute} for k in keys]}))
        return 0
    print(f"{'id':12}  {'name':24}  {'created':20}  {'revoked':20}  rate/min")
    for k in keys:
        print(f"{k.key_id:12}  {k.name[:24]:24}  {_when(k.created):20}  {_when(k.revoked):20}  "
              f"{k.rate_per_minute if k.rate_per_minute else 'server default'}")
    return 0


def revoke(args) -> int:
    if not _store(args).revoke(args.key_id):
        raise UserInputError(f"key_id: {args.key_id[:40]!r} is not an active key (see `askopt keys list`)")
    print(f"revoked {args.key_id}")
    return 0
