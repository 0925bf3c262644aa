"""Small fixtures shared by the OR-Debug-Bench tests (kept here because tests/conftest.py is not ours)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from ordebug.generators import generate
from ordebug.instances import Instance, make_instance

DATA = Path(__file__).resolve().parent / "data"


def data_file(name: str) -> Path:
    """A small model shipped with the package (itest2, galenet, woodinfe, afiro, p0033)."""
    return DATA / f"{name}.mps"


@cache
def small_instance(family: str, operator: str, seed: int = 1) -> Instance | None:
    return make_instance(generate(family, "small", seed=seed), operator, "synthetic", f"{family}-small", seed=seed)
