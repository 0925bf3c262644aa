"""Agent interface: an agent drives a `DebugEnv` until it submits or runs out of solver calls."""

from __future__ import annotations

from typing import Protocol

from ordebug.env import DebugEnv


class Agent(Protocol):
    name: str

    def run(self, env: DebugEnv) -> None:
        """Debug `env.instance`; everything the metrics need ends up in `env.log`."""


def iis_elements(iis: dict) -> list[str]:
    return [f"row:{r}" for r, _ in iis.get("rows", [])] + [f"col:{c}" for c, _ in iis.get("col_bounds", [])]
