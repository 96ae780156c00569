"""The runtime's per-device memory ledger: the low layer of memory accounting.

Every ``Device`` owns a ``Ledger`` (made in ``device.py``), which the call path and
``device_put`` (``function.py``, ``array.py``) update as buffers come and go: the bytes
of live ``Array``s, of arguments copied to the device while a call runs, and of results;
the high-water mark of that; the buffers the runtime asked for, and the result bytes
written into donated buffers. This module also holds what those layers need around it:
the driver's allocator statistics (the ledger's baseline), the out-of-memory error and
byte formatting. The statistics users read (``memory_stats``, ``track_memory``) are
built from it in ``memory.py``.

It imports no other runtime module but ``errors``: ``device``, ``array`` and ``memory``
sit above it.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from .errors import OutOfMemoryError


class Ledger:
    """The runtime's account of one device's memory (see the module docstring).

    Updated on the call path, so plain attributes (slots) only.
    """

    __slots__ = ("baseline", "bytes_allocated", "bytes_donated", "counters", "in_use",
                 "limit", "num_allocs", "peak", "reserved", "_counters_lock")

    def __init__(self, limit: int | None = None, baseline: dict | None = None) -> None:
        self.in_use = 0
        self.peak = 0
        # Counted directly (device_put, the general call path) ...
        self.num_allocs = 0
        self.bytes_allocated = 0
        self.bytes_donated = 0
        # ... and derived from per-function counters of the fast call path (``register``),
        # by id of the counts list, while the function that updates them lives
        # (``retire_with``): a module loaded and dropped leaves no entry behind.
        self.counters: dict[int, tuple[list, int, int, int, int]] = {}
        # Reentrant: a counter's finalizer may run from a garbage collection that starts
        # inside ``totals`` on the same thread.
        self._counters_lock = threading.RLock()
        self.limit = limit  # the preallocation budget, or None
        self.reserved = 0  # bytes preallocated into the reuse cache
        self.baseline = baseline or {}  # the driver's statistics when the device was made

    def register(self, n_args: int, in_bytes: int, n_results: int, out_bytes: int) -> list:
        """Counters for one function's fast call path: [calls, Array arguments, their
        bytes, upload bytes the metadata did not give]. Every call copies each argument
        that is not an Array and allocates every result."""
        counts = [0, 0, 0, 0]
        with self._counters_lock:
            self.counters[id(counts)] = (counts, n_args, in_bytes, n_results, out_bytes)
        return counts

    def retire_with(self, owner: Any, counts: list) -> None:
        """When ``owner`` (the call path that updates ``counts``) is garbage, its counts
        join the direct totals and their entry goes: ``totals`` then walks only the
        functions alive, however many modules were loaded and dropped before."""
        finalizer = weakref.finalize(owner, self._retire, counts)
        finalizer.atexit = False  # nothing to fold at exit: the process is ending

    def _retire(self, counts: list) -> None:
        with self._counters_lock:
            entry = self.counters.pop(id(counts), None)
            if entry is not None:
                allocs, nbytes = _derived(entry)
                self.num_allocs += allocs
                self.bytes_allocated += nbytes

    def totals(self) -> tuple[int, int]:
        """(buffers asked for, their bytes) so far."""
        with self._counters_lock:
            # The entries first: a counter retired while they are copied is then in the
            # direct totals read after.
            entries = list(self.counters.values())
            allocs, nbytes = self.num_allocs, self.bytes_allocated
        for entry in entries:
            more_allocs, more_bytes = _derived(entry)
            allocs += more_allocs
            nbytes += more_bytes
        return allocs, nbytes

    def new_peak(self, top: int, where: str, device: Any, requested: int) -> None:
        """A call is about to hold ``top`` bytes, more than ever before: checks the
        budget (raising ``OutOfMemoryError``), then records the new peak."""
        limit = self.limit
        if limit is not None and top > limit:
            call = f"{where}()" if not where.endswith(")") else where
            raise out_of_memory(call, device, requested)
        self.peak = top

    def request(self, nbytes: int, where: str, device: Any) -> None:
        """Checks ``nbytes`` more fit the budget; raises ``OutOfMemoryError`` if not."""
        limit = self.limit
        if limit is not None and self.in_use + nbytes > limit:
            raise out_of_memory(where, device, nbytes)


def _derived(entry: tuple[list, int, int, int, int]) -> tuple[int, int]:
    """(buffers, bytes) one function's fast-path counters stand for: every call copies
    each argument that is not an Array and allocates every result."""
    counts, n_args, in_bytes, n_results, out_bytes = entry
    calls, arrays, array_bytes, extra = counts
    return (calls * (n_args + n_results) - arrays,
            calls * (in_bytes + out_bytes) - array_bytes + extra)


def out_of_memory(where: str, device: Any, requested: int,
                  cause: str | None = None) -> OutOfMemoryError:
    """The error for a failed (or refused) allocation: the size asked for, the bytes in
    use, the budget, and what to do."""
    ledger = device.ledger
    limit = (f", limit {format_bytes(ledger.limit)} (AOTC_PREALLOCATE / configure_reuse)"
             if ledger.limit is not None else "")
    iree = f" IREE: {cause.strip()}" if cause else ""
    return OutOfMemoryError(
        f"{where}: out of memory on {device.uri}: requested {format_bytes(requested)} "
        f"({requested} bytes) with {format_bytes(ledger.in_use)} ({ledger.in_use} bytes) in "
        f"use by live arrays{limit}.{iree} Fix: drop arrays you no longer need (del x or "
        f"x.delete()), donate state a call replaces (donate_argnums), call "
        f"aotc.runtime.trim() to return cached buffers, or raise the limit"
    )


def format_bytes(n: int | None) -> str:
    """``1536`` -> ``"1.5 KiB"``."""
    if n is None:
        return "-"
    value = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} bytes"


def driver_statistics(device: Any) -> dict:
    try:
        return dict(device.hal.allocator.statistics)
    except (AttributeError, RuntimeError, ValueError):  # a driver without statistics
        return {}
