"""The one place a `highspy.Highs` object is constructed.

Why: highspy 1.16's constructor writes its banner ("Running HiGHS 1.16.0 ...") to the C-level stdout
(file descriptor 1) before any option can be set, so `.silent()` afterwards is too late and every
``--json`` command would print a non-JSON line first. Setting ``output_flag`` at construction is not
possible through the Python API, so the constructor runs with fd 1 pointed at /dev/null, under a lock
(fd 1 is process-wide), and ``output_flag`` is switched off before the object is handed out.
Python's own buffered stdout is flushed first so nothing of ours is swallowed.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from functools import cache

import highspy

_LOCK = threading.Lock()


@contextlib.contextmanager
def _stdout_fd_muted() -> Iterator[None]:
    try:
        sys.stdout.flush()
    except (AttributeError, ValueError, OSError):  # closed or replaced stdout: nothing to flush
        pass
    try:
        saved = os.dup(1)
    except OSError:  # no fd 1 at all (daemonised): nothing can leak
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def quiet_highs() -> highspy.Highs:
    """A `Highs` instance that has written nothing to stdout and never will (``output_flag`` off)."""
    with _LOCK, _stdout_fd_muted():
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
    return h


@cache
def highs_version() -> str:
    return str(quiet_highs().version())
