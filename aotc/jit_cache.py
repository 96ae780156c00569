"""The in-memory cache of one jitted function: call signature -> ``Compiled``, and the
tables of its per-call fast path, bounded by ``aotc.config.jit_cache_size`` (LRU).

The bound is per jitted function, as JAX's jit caches per function: one
function called with many shapes cannot push out another's executables. With a bound,
the fast path's entries refresh the recency of their signature as they run (a wrapper,
about 60 ns a call); without one (the default) they run as before. A signature pushed
out drops its fast-path entries with it, so nothing holds its module any more; a later
call with it traces again and loads the executable from the disk cache.

``clear_caches`` (``aotc.clear_caches``, JAX's ``jax.clear_caches``) empties every live
cache at once: each jitted function's, and so the eager ops' compiled programs, which are
jitted functions too.

``release_compile_memory`` is what ``clear_cache`` adds to dropping the executables: the
compiler's session (which keeps the types and attributes of every module it compiled)
and the heap pages the C allocator kept after the modules were freed.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from . import config
from .errors import ConfigError


def capacity() -> int:
    """``aotc.config.jit_cache_size``: the most signatures a jitted function keeps (0: no
    bound)."""
    size = config.value("jit_cache_size")
    if size < 0:
        raise ConfigError(f"aotc.config.jit_cache_size (AOTC_JIT_CACHE_SIZE): expected a "
                          f"number of signatures >= 0 (0: no bound), got {size}")
    return size


class CompiledCache:
    """Signature key -> ``Compiled``, least recently used first, and the fast path's
    tables (``fast``: x64 on, ``fast32``: x64 off) whose entries belong to a signature.

    Reads (``get``) take no lock; changes take the cache's own lock, never the jitted
    function's compile lock (held for seconds while IREE compiles).
    """

    __slots__ = ("_entries", "_fast_entries", "_lock", "evictions", "fast", "fast32",
                 "__weakref__")

    def __init__(self) -> None:
        _LIVE.add(self)
        self._entries: OrderedDict[Any, Any] = OrderedDict()
        # signature key -> [(table, fast key, the entry's callable)]: dropped with it.
        self._fast_entries: dict[Any, list[tuple[dict, Any, Callable]]] = {}
        self._lock = threading.Lock()
        self.fast: dict[tuple, Callable] = {}
        self.fast32: dict[tuple, Callable] = {}
        self.evictions = 0  # signatures pushed out by the bound

    def get(self, key: Any) -> Any:
        """The ``Compiled`` for a signature key (now the most recently used), or None."""
        compiled = self._entries.get(key)
        if compiled is not None:
            try:
                self._entries.move_to_end(key)
            except KeyError:  # pushed out by another thread meanwhile: still usable
                pass
        return compiled

    def put(self, key: Any, compiled: Any) -> None:
        """Adds a signature, then drops the least recently used ones past the bound."""
        bound = capacity()
        with self._lock:
            self._entries[key] = compiled
            self._entries.move_to_end(key)
            while bound and len(self._entries) > bound:
                old, _ = self._entries.popitem(last=False)
                self._drop_fast_entries(old)
                self.evictions += 1

    def remember_fast(self, table: dict, fast_key: Any, key: Any, run: Callable) -> None:
        """Puts ``run`` in a fast-path table under ``fast_key``, as an entry of the
        signature ``key`` (wrapped to refresh its recency when there is a bound)."""
        if capacity():
            run = _refreshing(self._entries, key, run)
        with self._lock:
            if key not in self._entries:
                return  # pushed out since it was looked up: the next call binds again
            table[fast_key] = run
            self._fast_entries.setdefault(key, []).append((table, fast_key, run))

    def _drop_fast_entries(self, key: Any) -> None:
        for table, fast_key, run in self._fast_entries.pop(key, ()):
            if table.get(fast_key) is run:  # not replaced since
                del table[fast_key]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._fast_entries.clear()
            self.fast.clear()  # in place: the jitted function holds these tables
            self.fast32.clear()

    def __contains__(self, key: Any) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def values(self) -> list:
        return list(self._entries.values())

    def keys(self) -> Iterator[Any]:
        return iter(list(self._entries))


# Every CompiledCache alive (a cache goes with its jitted function).
_LIVE: weakref.WeakSet[CompiledCache] = weakref.WeakSet()


def clear_caches() -> None:
    """Drops the compiled executables of every jitted function, eager operations
    included, then gives their memory back (``release_compile_memory``), as
    ``jax.clear_caches()``. Later calls trace again and load from the disk cache; results
    still alive keep the modules that made them.

    Example:
      >>> import aotc, numpy as np
      >>> double = aotc.jit(lambda x: x * 2)
      >>> _ = double(np.ones(3, np.float32))
      >>> aotc.clear_caches()
      >>> len(double._compiled)
      0
    """
    for compiled in list(_LIVE):
        compiled.clear()
    release_compile_memory()


def _refreshing(entries: OrderedDict, key: Any, run: Callable) -> Callable:
    move_to_end = entries.move_to_end

    def call(leaves: Any) -> Any:
        try:
            move_to_end(key)
        except KeyError:  # pushed out while this entry was running elsewhere
            pass
        return run(leaves)

    return call


def release_compile_memory() -> None:
    """Gives back memory that outlives the executables themselves: the compiler sessions
    (each keeps the uniqued types and attributes of every module it compiled, about 30
    KiB per distinct module; the next compile makes a new one in under a millisecond) and
    the free pages of the C heap."""
    from . import compiler
    from .runtime.memory import trim_host_heap

    compiler.release_sessions()
    trim_host_heap()
