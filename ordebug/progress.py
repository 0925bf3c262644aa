"""Progress lines for long OR-Debug-Bench runs, on stderr so ``--json`` stdout stays one document.

Why not only tqdm: a bar is drawn only on a terminal, and the runs that take minutes are the ones in
CI logs and pipes, where nothing was printed for 4.5 minutes. On a terminal this is a tqdm bar; elsewhere
a plain line at most every `every` seconds, plus a heartbeat while nothing finishes (a daemon thread:
one in-process item, such as sabotaging a large model, can take minutes).
"""

from __future__ import annotations

import sys
import threading
import time

from tqdm import tqdm


class Progress:
    def __init__(self, total: int, desc: str, enabled: bool = True, every: float = 10.0, stream=None):
        self.total, self.desc, self.enabled, self.every = total, desc, enabled and total > 0, every
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.t0 = self.last = time.perf_counter()
        self.bar = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        if self.enabled and getattr(self.stream, "isatty", lambda: False)():
            self.bar = tqdm(total=total, desc=desc, file=self.stream)
        elif self.enabled:
            self._line("started")
            threading.Thread(target=self._beat, daemon=True).start()

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            self.heartbeat()

    def _line(self, note: str = "") -> None:
        el = time.perf_counter() - self.t0
        rate = self.done / el if el > 0 else 0.0
        eta = f", ~{(self.total - self.done) / rate:.0f}s left" if rate > 0 and self.done < self.total else ""
        with self._lock:
            print(f"{self.desc}: {self.done}/{self.total} in {el:.0f}s{eta}{' ' + note if note else ''}",
                  file=self.stream, flush=True)
            self.last = time.perf_counter()

    def update(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(n)
        elif self.done >= self.total or time.perf_counter() - self.last >= self.every:
            self._line()

    def heartbeat(self) -> None:
        """Called while waiting: a line if nothing was printed for `every` seconds."""
        if self.enabled and self.bar is None and time.perf_counter() - self.last >= self.every:
            self._line("(working)")

    def close(self) -> None:
        self._stop.set()
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
