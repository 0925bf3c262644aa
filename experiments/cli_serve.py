"""`askopt serve imitator|consultant|emulator`: the Ray Serve HTTP apps (the emulator also as a plain process)."""

from __future__ import annotations

import time

from experiments.cli import UserInputError


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "serve",
        help="run a Ray Serve HTTP app (OpenAI-compatible imitator, consultant API, LLM emulator)",
        description="Start a Ray Serve app and keep it running until interrupted. Binds 127.0.0.1 by default.",
    )
    p.add_argument("app", choices=("imitator", "consultant", "emulator"), help="which app")
    p.add_argument("--engine", choices=("cpu", "vllm"), default="cpu",
                   help="imitator engine: cpu = offline persona simulator; vllm = LoRA model on a GPU")
    p.add_argument("--base-model", help="vllm: base model path")
    p.add_argument("--lora-dir", help="vllm: folder of LoRA adapter folders")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--address", default=None, help="Ray cluster address (default: start local Ray)")
    p.add_argument("--for-seconds", type=float, default=None, help="stop after this long (default: until Ctrl-C)")
    p.add_argument("--plain", action="store_true", help="emulator: a plain HTTP process, no Ray")
    from serving.llm_emulator import add_emulator_arguments

    add_emulator_arguments(p)
    p.set_defaults(handler=run)


def _emulator_config(args):
    from serving.llm_emulator import config_from_args

    try:
        return config_from_args(args)
    except ValueError as exc:
        name, _, rest = str(exc).partition(": ")
        raise UserInputError(f"--{name.replace('_', '-')}: {rest}") from None


def build(args):
    if args.app == "emulator":
        from serving.llm_emulator import build_app as build_emulator

        return build_emulator(_emulator_config(args))
    if args.app == "consultant":
        from serving.consultant_app import build_app

        return build_app()
    if args.engine == "vllm":
        if not args.base_model:
            raise UserInputError("--base-model: required with --engine vllm (a local model path)")
        from serving.vllm_app import VLLMImitatorConfig, build_vllm_app

        try:
            return build_vllm_app(VLLMImitatorConfig(base_model=args.base_model, lora_dir=args.lora_dir))
        except RuntimeError as exc:
            raise UserInputError(str(exc)) from None
    from serving.imitator_app import build_app

    return build_app()


def run(args) -> int:
    if not 1 <= args.port <= 65535:
        raise UserInputError(f"--port: {args.port} is not allowed; must be in 1..65535")
    if args.app == "emulator" and args.plain:
        return _run_plain_emulator(args)
    application = build(args)
    import ray
    from ray import serve

    # without --address, a Ray instance of our own ("local"), never whatever cluster happens to run here
    ray.init(address=args.address or "local", ignore_reinit_error=True, include_dashboard=args.address is None)
    serve.start(http_options={"host": args.host, "port": args.port})
    serve.run(application, name=args.app, route_prefix="/")
    print(f"askopt {args.app} serving at http://{args.host}:{args.port} (Ctrl-C to stop)", flush=True)
    try:
        wait_until_stopped(args.for_seconds)
    finally:
        serve.shutdown()
    return 0


def wait_until_stopped(for_seconds: float | None) -> None:
    """Block the serving command until Ctrl-C or SIGTERM, or for `for_seconds` when given (tests, scripted demos).

    SIGTERM (`kill`, `docker stop`, Kubernetes) ends the wait like Ctrl-C, so that the caller's cleanup
    (serve.shutdown, ray.shutdown) runs: by default SIGTERM ends Python at once and left the local Ray's
    DashboardAgent and RuntimeEnvAgent running."""
    import signal
    import threading

    stop = threading.Event()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    deadline = time.time() + for_seconds if for_seconds else None
    try:
        while not stop.is_set() and (deadline is None or time.time() < deadline):
            stop.wait(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _run_plain_emulator(args) -> int:
    from serving.llm_emulator import EmulatorServer

    server = EmulatorServer(_emulator_config(args), host=args.host, port=args.port).start()
    print(f"askopt emulator (plain process) serving at {server.base_url} (Ctrl-C to stop)", flush=True)
    try:
        wait_until_stopped(args.for_seconds)
    finally:
        server.stop()
    return 0
