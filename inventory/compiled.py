"""When a compiled (numba) kernel pays for its start-up: a ski-rental rule over the process's numpy time.

Loading numba and the cached kernels costs a fresh process about 0.5-1 s, more than a small command's whole
computation (`askopt solve` on a 30-day problem computes for ~0.1 s). The numpy references give identical results
(tests/test_inventory_kernel.py, tests/test_inventory_dp.py), so the choice changes only speed:

* a process that has already loaded the kernel keeps using it (the start-up is paid);
* one call of at least `COMPILED_MIN_WORK` elements loads it at once (the reference alone would take longer);
* otherwise the numpy reference runs, timed, until this process has spent `REFERENCE_BUDGET_S` on it; from
  then on the kernel is loaded and used. A process thus never loses more than about the start-up it avoids
  (the ski-rental bound), and long-running workers (the study, Serve replicas) switch within their first second.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager

COMPILED_MIN_WORK = 20_000_000  # elements (period-replications, DP cells) of one call: ~0.4 s of numpy
REFERENCE_BUDGET_S = 0.3  # numpy seconds a process spends before it loads the kernels
MODES = ("auto", "always", "never")
ENV = "ASKOPT_COMPILED"  # pins the mode for a process and the Ray workers it starts (they inherit it)


def _env_mode() -> str:
    mode = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if mode not in MODES:
        raise ValueError(f"{ENV}: {mode!r} is not allowed; allowed: {', '.join(MODES)}")
    return mode


_state: dict = {"seconds": 0.0, "mode": _env_mode()}


def compiled_pays(work: int, module: str) -> bool:
    """True when the compiled kernel in `module` should run this call of `work` elements; when False, run the
    reference inside `reference_timed()` so that its time counts."""
    if _state["mode"] != "auto":
        return _state["mode"] == "always"
    return module in sys.modules or work >= COMPILED_MIN_WORK or _state["seconds"] >= REFERENCE_BUDGET_S


@contextmanager
def reference_timed():
    """Count the block's wall time towards this process's numpy budget."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        _state["seconds"] += time.perf_counter() - t0


@contextmanager
def forced(mode: str):
    """Pin the choice inside the block ("always": the kernels, "never": the numpy references); tests use it to
    run both paths on the same input."""
    if mode not in MODES:
        raise ValueError(f"mode: {mode!r} is not allowed; allowed: {', '.join(MODES)}")
    previous, _state["mode"] = _state["mode"], mode
    try:
        yield
    finally:
        _state["mode"] = previous
