"""`askopt web` (the consultant's web page on Ray Serve) and `askopt sessions export` (the data-collection corpus).

`askopt web` is `askopt serve consultant` with the page's options in front: where sessions live, keys, data
collection. `--collect` makes every new session a scenario a participant plays (`serving.collect`); `askopt
sessions export --jsonl OUT` then writes those sessions as the imitator's prompt-response JSONL.
"""

from __future__ import annotations

from experiments.cli import UserInputError


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "web", help="the consultant's web page (chat, policy plot, order form, downloads) on Ray Serve",
        description="Serve the consultant's page and API (http://HOST:PORT/) until Ctrl-C. Sessions are kept in "
                    "--sessions-url (default $ASKOPT_SESSIONS_URL, else ~/.askopt/sessions.db); once `askopt keys "
                    "create` has made a key there, requests need one.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--address", default=None, help="Ray cluster address (default: start local Ray)")
    p.add_argument("--sessions-url", default=None, help="sqlite:///PATH or postgresql://USER@HOST/DB")
    p.add_argument("--replicas", type=int, default=1, help="Serve replicas (they share the sessions database)")
    p.add_argument("--collect", action="store_true",
                   help="data-collection mode: each new session gives the participant a scenario to play as the "
                        "manager; export with `askopt sessions export --jsonl`")
    p.add_argument("--rate-per-minute", type=float, default=None, help="requests per minute per key (default 120)")
    p.add_argument("--cors-origin", action="append", default=[],
                   help="allow this origin to call the API from its pages (repeatable; default: CORS off)")
    p.add_argument("--for-seconds", type=float, default=None, help="stop after this long (default: until Ctrl-C)")
    p.set_defaults(handler=run_web)

    s = subparsers.add_parser("sessions", help="export data-collection sessions as prompt-response JSONL for the "
                                                "imitator",
                              description="Sessions of the web page's database.")
    sub = s.add_subparsers(dest="sessions_command", metavar="ACTION", required=True)
    e = sub.add_parser("export", help="the collection sessions as the imitator's SFT JSONL "
                                      "(agents.imitator.corpus format: dialogue_id, turn, prompt, response, ...)")
    e.add_argument("--jsonl", required=True, help="output file")
    e.add_argument("--url", default=None, help="database URL (default $ASKOPT_SESSIONS_URL or ~/.askopt/sessions.db)")
    e.set_defaults(handler=export)


def web_args(args) -> dict:
    """The consultant app's args from the command line (what `serve run ... key=value` would pass)."""
    if not 1 <= args.port <= 65535:
        raise UserInputError(f"--port: {args.port} is not allowed; must be in 1..65535")
    if not 1 <= args.replicas <= 64:
        raise UserInputError(f"--replicas: {args.replicas} is not allowed; must be in 1..64")
    out: dict = {"num_replicas": args.replicas}
    if args.sessions_url:
        out["sessions_url"] = args.sessions_url
    if args.collect:
        out["collect"] = True
    if args.rate_per_minute is not None:
        if not 0 <= args.rate_per_minute <= 1e6:
            raise UserInputError(f"--rate-per-minute: {args.rate_per_minute:g} is not allowed; must be in "
                                 "[0, 1e6] (0 = no limit)")
        out["rate_per_minute"] = args.rate_per_minute
    if args.cors_origin:
        out["cors_origins"] = ",".join(args.cors_origin)
    return out


def run_web(args) -> int:
    app_args = web_args(args)  # bad options are refused before Ray is imported
    from experiments.cli_serve import wait_until_stopped
    from serving.consultant_app import build_app

    application = build_app(app_args)
    import ray
    from ray import serve

    ray.init(address=args.address or "local", ignore_reinit_error=True, include_dashboard=args.address is None)
    serve.start(http_options={"host": args.host, "port": args.port})
    serve.run(application, name="consultant", route_prefix="/")
    mode = " (data-collection mode)" if args.collect else ""
    print(f"askopt web{mode}: open http://{args.host}:{args.port}/ (Ctrl-C to stop)", flush=True)
    try:
        wait_until_stopped(args.for_seconds)
    finally:
        serve.shutdown()
    return 0


def export(args) -> int:
    from serving.collect import export_jsonl
    from serving.keys import keys_url
    from serving.sessions import SessionStore

    try:
        store = SessionStore(keys_url(args.url))
    except Exception as exc:  # noqa: BLE001 - a bad URL or an unreachable server is the user's to fix
        raise UserInputError(f"--url: cannot open the sessions database: {str(exc).splitlines()[0][:200]}") from None
    dialogues, examples = export_jsonl(store, args.jsonl)
    print(f"wrote {examples} prompt-response pairs from {dialogues} collection sessions to {args.jsonl}")
    return 0
