"""When a compiled (numba) kernel pays for its start-up, and the process-wide tally that decides it.

Loading numba and the cached kernels costs a fresh process about 0.5-1 s, more than a small command's whole
computation (`askopt solve` on a 30-day problem computes for ~0.1 s). The numpy references give identical results
(tests/test_inventory_kernel.py, tests/test_inventory_dp.py), so the choice changes only speed:

* a process that has already loaded a kernel keeps using it (the start-up is paid);
* otherwise the numpy reference runs until the work done on it in this process reaches `COMPILED_MIN_WORK`
  elements, the point where the reference has spent about as long as the kernel's start-up; then the kernel
  is loaded and used from there on. Long-running workers (the study, Serve replicas) cross it at once.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager

COMPILED_MIN_WORK = 20_000_000  # elements (period-replications, DP cells): ~0.4 s of numpy reference work
MODES = ("auto", "always", "never")
_state: dict = {"work": 0, "mode": "auto"}


def compiled_pays(work: int, module: str) -> bool:
    """True when the compiled kernel in `module` should run this call of `work` elements."""
    if _state["mode"] != "auto":
        return _state["mode"] == "always"
    if module in sys.modules:
        return True
    _state["work"] += int(work)
    return _state["work"] >= COMPILED_MIN_WORK


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
