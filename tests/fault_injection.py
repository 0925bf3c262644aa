"""Test-only fault injection for the study runner: a `UnitRunner` that fails or kills chosen units.

Production config has no fault switches; tests hand this runner to `run_study(..., runner=...)`. Ray ships
it to its workers and actors by value (registered below), so the tests directory need not be importable
there.

* `fail_units`: these units' dialogue gets an LLM client whose every call raises, so the failure goes
  through the study's real exception handling (a failed row with stage "exception", the run goes on).
* `crash_once`: the process running the unit (a task's worker or a dialogue actor) dies with `os._exit(1)`
  the first time, as a lost node would; a marker file in `marker_dir` remembers it (one host: tests only).
* `delay`: seconds every dialogue sleeps first (keeps dialogues in flight long enough to kill something).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import ray.cloudpickle

from evaluation.study_units import UnitRunner
from llm.client import UsageTotals

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


class ExplodingClient:
    """An LLM client stand-in whose every call raises: drives a unit into its real failure path."""

    model_name = "exploding"

    def __init__(self, unit_id: str) -> None:
        self.unit_id = unit_id
        self.usage = UsageTotals()

    def chat(self, *args, **kwargs):
        raise RuntimeError(f"forced failure of unit {self.unit_id} (fail_units)")

    json = chat


class FaultyRunner(UnitRunner):
    def __init__(self, fail_units=(), crash_once=(), marker_dir: str | Path | None = None, delay: float = 0.0):
        self.fail_units = tuple(fail_units)
        self.crash_once = tuple(crash_once)
        self.marker_dir = str(marker_dir) if marker_dir is not None else None
        self.delay = delay

    def dialogue(self, unit, instance, config, client=None):
        if self.delay:
            time.sleep(self.delay)
        if unit.unit_id in self.crash_once:
            marker = Path(self.marker_dir) / f"crashed-{config.name}-{unit.unit_id}"
            if not marker.exists():
                marker.write_text(str(os.getpid()))
                os._exit(1)
        if unit.unit_id in self.fail_units:
            client = ExplodingClient(unit.unit_id)
        return super().dialogue(unit, instance, config, client)


class NodeLabelRunner(UnitRunner):
    """Records, in each outcome's note, the Ray labels of the node its dialogue and scoring ran on (placement
    tests)."""

    def dialogue(self, unit, instance, config, client=None):
        import ray

        o = super().dialogue(unit, instance, config, client)
        o.note = (o.note + " " + _labels(ray.get_runtime_context().get_node_labels())).strip()
        return o


def _labels(labels: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()) if not k.startswith("ray.io/"))
