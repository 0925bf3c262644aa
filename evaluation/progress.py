"""Study progress for people and for logs: a tqdm bar on a terminal, periodic plain lines otherwise.

Why: a submitted Ray job (or `askopt study ... > log`) has no terminal, and tqdm then writes one carriage-return
line per update, which a job log shows as thousands of lines. Without a TTY the study prints one line every
`interval` seconds (`$ASKOPT_PROGRESS_SECONDS`, default 30) and one at the end:
`study demo: 40/210 units (19%), 3.1 units/min, about 55 min left, gap B +4.2%`.

`dashboard_url()` is the Ray dashboard's address when the connected Ray runs one (None otherwise), printed by the
study so a user can open the Metrics view.
"""

from __future__ import annotations

import os
import sys
import time

DEFAULT_INTERVAL = 30.0


class PlainProgress:
    """tqdm's small surface the study uses (update, set_postfix, close), as periodic plain lines."""

    def __init__(self, total: int, desc: str, stream=None, interval: float | None = None, clock=time.monotonic):
        self.total, self.desc, self.n = total, desc, 0
        self.stream = stream or sys.stderr
        self.interval = float(os.environ.get("ASKOPT_PROGRESS_SECONDS", DEFAULT_INTERVAL)) if interval is None \
            else interval
        self.clock = clock
        self.start = self.last = clock()
        self.postfix: dict = {}
        self.closed = False
        self.shown = -1  # units at the last line printed

    def line(self) -> str:
        elapsed = max(self.clock() - self.start, 1e-9)
        pct = 100.0 * self.n / self.total if self.total else 100.0
        text = f"{self.desc}: {self.n}/{self.total} units ({pct:.0f}%)"
        if self.n:
            rate = self.n / elapsed * 60.0
            left = (self.total - self.n) / rate if rate > 0 else float("inf")
            text += f", {rate:.1f} units/min"
            if self.n < self.total:
                text += f", about {left:.0f} min left" if left >= 1 else ", under a minute left"
        if self.postfix:
            text += ", " + ", ".join(f"gap {k} {v}" for k, v in self.postfix.items())
        return text

    def _emit(self) -> None:
        print(self.line(), file=self.stream, flush=True)
        self.last, self.shown = self.clock(), self.n

    def update(self, n: int = 1) -> None:
        self.n += n
        if self.clock() - self.last >= self.interval:
            self._emit()

    def set_postfix(self, values: dict) -> None:
        self.postfix = dict(values)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self.shown != self.n:  # the final count, unless the last line already said it
                self._emit()


class _Off:
    def update(self, n: int = 1) -> None: ...

    def set_postfix(self, values: dict) -> None: ...

    def close(self) -> None: ...


def progress_bar(total: int, desc: str, enabled: bool = True, stream=None):
    """A tqdm bar when `stream` (default stderr) is a terminal, PlainProgress lines when not, nothing if disabled."""
    if not enabled:
        return _Off()
    stream = stream or sys.stderr
    if getattr(stream, "isatty", lambda: False)():
        from tqdm import tqdm

        return tqdm(total=total, unit="unit", desc=desc, file=stream)
    return PlainProgress(total, desc, stream)


def dashboard_url() -> str | None:
    """http://HOST:PORT of the connected Ray's dashboard, or None when Ray runs without one."""
    try:
        from ray._private.worker import get_dashboard_url

        url = get_dashboard_url()
    except Exception:  # noqa: BLE001 - no dashboard (or an older/newer Ray without the helper): nothing to print
        return None
    if not url:
        return None
    return url if url.startswith("http") else f"http://{url}"
