"""The command line's input schema: numbers, paths and the pre-flight resource check, one error line each.

Every `askopt` handler that does work validates its options here *before* doing any: the numbers through a
pydantic model (`SolveArgs`, `OptimizeArgs`, `StudyArgs`; ranges say what is allowed), `--out` through
`check_out_dir` (an existing file is refused before a second of work is spent), the parameter file through
`inventory.schema` (via `load_params`), and the whole request through `optimization.limits.check`. Failures
are `UserInputError`s naming the option (`--replications: ...`) or the table field (`time_horizon: ...`), which
`experiments.cli.main` prints as one line with exit code 2.

Other CLI modules (dialogue, serve, ordebug) can call `check_out_dir`, `validate_args` and `load_params` for the
same behaviour.
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

MAX_SEED = 2**63 - 1
MAX_STUDY_INSTANCES = 10_000  # the study plans (generates) every instance up front
MAX_STUDY_TRIALS = 100
MAX_DQN_SECONDS = 24 * 3600.0


def input_error(message: str) -> Exception:
    """experiments.cli.UserInputError, also a ValueError so `python -m experiments.cli` (a second copy of the
    module as __main__) still prints it as one line with exit code 2."""
    from experiments.cli import UserInputError

    cls = type("CLIInputError", (UserInputError, ValueError), {})
    return cls(message)


class _Args(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False, strict=True)


class SolveArgs(_Args):
    """`askopt solve` numbers (the HTTP /v1/solve body has the same ranges)."""

    replications: int = Field(2000, ge=2, le=100_000)
    seed: int = Field(0, ge=0, le=MAX_SEED)
    evaluate: list[str] = Field(default_factory=list, max_length=50)
    objective: Literal["finite", "average"] = "finite"
    method: Literal["ss", "dp", "all"] = "all"


class OptimizeArgs(_Args):
    """`askopt optimize` numbers."""

    replications: int = Field(2000, ge=2, le=100_000)
    seed: int = Field(0, ge=0, le=MAX_SEED)
    dqn_steps: int | None = Field(None, ge=1, le=10**9)
    dqn_seconds: float | None = Field(None, gt=0, le=MAX_DQN_SECONDS)
    trainer: Literal["torch", "rllib"] = "torch"


class StudyArgs(_Args):
    """`askopt study` numbers; the unit count is instances x trials x treatments."""

    instances: int = Field(12, ge=1, le=MAX_STUDY_INSTANCES)
    trials: int = Field(1, ge=1, le=MAX_STUDY_TRIALS)
    seed: int = Field(0, ge=-MAX_SEED, le=MAX_SEED)
    replications: int = Field(1000, ge=1, le=100_000)
    units_per_task: int = Field(0, ge=0, le=10**6)
    max_turns: int = Field(40, ge=1, le=1000)
    num_cpus: int | None = Field(None, ge=1, le=max(4, 4 * (os.cpu_count() or 1)))


def _allowed(err: dict) -> str:
    ctx = err.get("ctx") or {}
    kind = err.get("type", "")
    if kind == "greater_than_equal":
        return f"must be >= {ctx['ge']}"
    if kind == "greater_than":
        return f"must be > {ctx['gt']}"
    if kind == "less_than_equal":
        return f"must be <= {ctx['le']}"
    if kind == "less_than":
        return f"must be < {ctx['lt']}"
    if kind == "literal_error":
        return "allowed: " + str(ctx.get("expected", "")).replace("'", "")
    if kind == "too_long":
        return f"at most {ctx.get('max_length')} given"
    if kind in ("finite_number",):
        return "must be a finite number"
    return err.get("msg", "not allowed")


def validate_args(model: type[BaseModel], args: argparse.Namespace | dict, **renamed: str) -> Any:
    """The model built from the namespace's attributes of the same names; the first error as one line
    naming the option (`--dqn-seconds: nan is not allowed; must be a finite number`)."""
    values = vars(args) if isinstance(args, argparse.Namespace) else dict(args)
    data = {name: values[renamed.get(name, name)] for name in model.model_fields if renamed.get(name, name) in values}
    for name, v in data.items():
        if isinstance(v, float) and not math.isfinite(v):
            raise input_error(f"--{name.replace('_', '-')}: {v} is not allowed; must be a finite number")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        name = str(err["loc"][0]) if err.get("loc") else "options"
        value = data.get(name, err.get("input"))
        shown = f"{len(value)} values" if isinstance(value, list) else repr(value)
        raise input_error(f"--{name.replace('_', '-')}: {shown} is not allowed; {_allowed(err)}") from None


def check_out_dir(path: str | os.PathLike, option: str = "--out") -> Path:
    """An output directory that can be created or written: refused up front (before any work) when it names
    an existing file, sits under a file, or is not writable. Nothing is created here."""
    out = Path(path)
    if str(path).strip() == "":
        raise input_error(f"{option}: '' is not allowed; give a directory")
    if out.exists() and not out.is_dir():
        raise input_error(f"{option}: {str(out)!r} is an existing file; give a directory (created if missing)")
    probe = out
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise input_error(f"{option}: {str(out)!r} is not allowed; {str(probe)!r} is a file, not a directory")
    if probe.exists() and not os.access(probe, os.W_OK | os.X_OK):
        raise input_error(f"{option}: {str(out)!r} is not allowed; {str(probe)!r} is not writable")
    return out


def load_params(path: str, allow_files: bool = True):
    """The Problem in a PARAMS file, or a one-line error naming the field (`PARAMS: ...` for the file)."""
    from inventory.problem import ParameterError
    from inventory.spec import load_problem

    try:
        return load_problem(path, allow_files=allow_files)
    except ParameterError as exc:
        raise input_error(str(exc)) from None


def preflight(problem, methods: tuple[str, ...], replications: int, extra_policies: int = 0,
              objective: str = "finite"):
    """optimization.limits.check as a one-line CLI error: the estimate, or the field to change."""
    from optimization.limits import Plan, ResourceLimitError, check

    try:
        return check(problem, Plan(methods, replications, extra_policies, objective))
    except ResourceLimitError as exc:
        option = {"replications": "--replications", "evaluate": "--evaluate"}.get(exc.field)
        message = str(exc)
        if option:
            message = option + message[len(exc.field):]
        raise input_error(message) from None
