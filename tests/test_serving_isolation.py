"""The isolator's backstops on their own (serving.isolation): a computation that outgrows the resident-memory cap
or the deadline is stopped and answered 422, and the cap holds on resident memory, not on the address space
(a flat RLIMIT_AS let one fuzzed request reach 2.17 GiB resident under a 3 GiB limit)."""

from __future__ import annotations

import asyncio
import time

import pytest

from serving.isolation import Budget, Isolator, Refused

CAP = 400 * 2**20


def _grow_until_refused() -> dict:
    """Touch memory 16 MiB at a time until the allocator refuses; report the peak resident size."""
    import numpy as np

    chunks = []
    try:
        while len(chunks) < 1000:
            chunks.append(np.ones(2 * 2**20))  # 16 MiB, written, so resident
    except MemoryError:
        pass
    with open("/proc/self/status") as f:
        hwm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
    return {"chunks": len(chunks), "peak_rss": hwm}


def _blow_up() -> int:
    import numpy as np

    return int(np.ones(8 * 2**30 // 8).sum())  # 8 GiB


def _spin() -> int:
    n = 0
    while True:
        n += 1


def _sleep(seconds: float) -> str:
    time.sleep(seconds)
    return "done"


def test_resident_memory_never_passes_the_cap():
    iso = Isolator(Budget(seconds=60, memory_bytes=CAP))
    got = asyncio.run(iso.run(_grow_until_refused))
    assert got["chunks"] >= 5  # real headroom was given (the libraries' mapped size is not counted against it)
    # resident memory passes the cap only by pages mapped before the cap was set (measured: 48 MiB)
    assert got["peak_rss"] <= CAP + 100 * 2**20
    with pytest.raises(Refused) as exc:
        asyncio.run(iso.run(_blow_up))
    assert exc.value.status == 422 and "memory" in exc.value.message


def test_the_deadline_answers_before_the_computation_ends():
    iso = Isolator(Budget(seconds=1.0))
    t0 = time.monotonic()
    with pytest.raises(Refused) as exc:
        asyncio.run(iso.run(_sleep, 30.0))
    assert exc.value.status == 422 and "1 s" in exc.value.message
    assert time.monotonic() - t0 < 10
    assert iso.killed == 1 and asyncio.run(iso.run(_sleep, 0.0)) == "done"
    assert Budget().seconds < 30  # the default answers inside the 30 s a request may take
    assert Budget().memory_bytes + 100 * 2**20 < 2 * 2**30


def test_cpu_time_is_capped_beside_the_wall_clock():
    """Threads can burn two CPU-seconds per wall second; RLIMIT_CPU stops the child at its CPU budget."""
    iso = Isolator(Budget(seconds=60, cpu_seconds=1))
    t0 = time.monotonic()
    with pytest.raises(Refused) as exc:
        asyncio.run(iso.run(_spin))
    assert exc.value.status == 422 and "CPU" in exc.value.message
    assert time.monotonic() - t0 < 20
