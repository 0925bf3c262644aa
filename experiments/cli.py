"""The `askopt` command line.

Each feature area owns a small module exposing `register(subparsers)`; this file only wires them, so
areas can grow without editing a shared file. Bad input exits with code 2 and a one-line error.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# Modules that add sub-commands; a missing one is skipped so partial installs still run.
COMMAND_MODULES = (
    "experiments.cli_solve",  # askopt solve
    "experiments.cli_optimize",  # askopt optimize
    "experiments.cli_dialogue",  # askopt consult / simulate
    "experiments.cli_study",  # askopt study / report / submit
    "experiments.cli_ordebug",  # askopt bench ordebug / iis
    "experiments.cli_serve",  # askopt serve
)


class UserInputError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="askopt",
        description="LLM + operations-research decision support for inventory control.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 0
    try:
        return int(args.handler(args) or 0)
    except UserInputError as exc:
        print(f"askopt: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # validation errors from the domain core name the field
        print(f"askopt: error: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"askopt: error: file not found: {exc.filename or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
