"""The trivial baseline: drop every IIS row (and free every IIS bound) until the model solves.

It recovers feasibility almost always -- which is exactly why recovery alone is a bad metric. The
fidelity and objective metrics are there to make this agent lose.
"""

from __future__ import annotations

from ordebug.agents.base import iis_elements
from ordebug.env import DebugEnv
from ordebug.model import INF


class DropAllAgent:
    name = "drop"

    def run(self, env: DebugEnv) -> None:
        suspects: list[str] = []
        while env.calls_left >= 2:
            iis = env.step({"op": "get_iis"})
            if "error" in iis or not (iis.get("rows") or iis.get("col_bounds")):
                break
            suspects += iis_elements(iis)
            for name, _ in iis["rows"]:
                env.step({"op": "drop_row", "row": name})
            for name, side in iis["col_bounds"]:
                env.step({"op": "set_bound", "col": name, "side": side, "value": -INF if side == "lower" else INF})
            res = env.step({"op": "solve"})
            if res.get("status") == "optimal":
                break
        env.step({"op": "diagnose", "root_cause": suspects or ["row:?"], "conflict": suspects})
        env.step({"op": "submit"})
