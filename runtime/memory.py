"""Memory you can see: what the runtime holds on each device, its peak, what it asked
for, what came from reuse, and the arrays that hold it.

Two sources are combined:

* The runtime's own ledger (every driver): the bytes of live ``Array``s, of arguments
  copied to the device while a call runs, and of results; the high-water mark of that
  (``peak_bytes_in_use``); the buffers the runtime asked for (``num_allocs``,
  ``bytes_allocated``), and the result bytes written into donated buffers instead
  (``bytes_donated``). Buffers IREE allocates inside a call for intermediate values
  (transients) are not in the ledger.
* The driver's allocator statistics, where they are complete: on local-sync every
  allocation (arguments, results, transients) goes through IREE's allocator, so
  ``bytes_from_system`` (new memory from the system) and ``bytes_reserved`` (held now,
  live plus cached for reuse) are exact, and ``bytes_reused`` = ``bytes_allocated`` -
  new memory. local-task serves results and transients from a pool of its task executor
  that the statistics never see: there they count argument copies only and
  ``bytes_reused`` is None. On Vulkan they come from the runtime's pool (argument copies);
  IREE's Vulkan allocator reports no frees.

The ledger itself is ``ledger.py``, the lowest layer (devices own one, arrays and calls
update it); this module sits on top of the devices and arrays and only reads them.

Example (the ledger counts arrays larger than ``SMALL_HOST_COPY_BYTES``, 16 KiB):
  >>> print(runtime.memory_stats("local-sync"))
  memory on local-sync (reuse: ...)
    bytes_in_use ...
    peak_bytes_in_use ...
    ...
    bytes_limit ...
  >>> with runtime.track_memory("local-sync") as block:
  ...     a = runtime.device_put(np.zeros(1 << 16, np.float32), "local-sync")
  >>> block.bytes_allocated, block.num_allocs
  (262144, 1)
  >>> print(block)
  peak ..., allocated 256.0 KiB in 1 buffers, donated 0 bytes, new from the system ...
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

from . import device as device_module
from .array import Array
from .ledger import driver_statistics, format_bytes
# Defined in ledger.py (the layer below) and importable from here too, where they lived
# before the ledger had a module of its own.
from .ledger import Ledger, out_of_memory  # noqa: F401


@dataclass(frozen=True)
class MemoryStats:
    """A snapshot of a device's memory (``memory_stats``). None: not measurable there.

    Attributes:
      device: the device URI, or ``"all"`` for the sum over every device made so far.
      reuse: how freed memory is reused: ``"caching"`` (IREE's caching allocator),
        ``"pool"`` (the runtime's pool, Vulkan), ``"none"``.
      bytes_in_use: bytes of live runtime arrays (and of a running call's arguments).
      peak_bytes_in_use: the highest ``bytes_in_use`` so far (including arguments and
        results while a call ran); ``reset_peak`` starts it again.
      num_allocs: buffers the runtime asked for (argument copies, ``device_put``, results
        that were not written into a donated buffer).
      bytes_allocated: their total size.
      bytes_donated: result bytes written into donated buffers (allocated by nobody).
      bytes_reused: of ``bytes_allocated``, the bytes served from reuse rather than new
        memory (local-sync: exact; Vulkan: argument copies; local-task: None).
      bytes_reserved: bytes the device's allocator holds now (live plus cached).
      peak_bytes_reserved: the highest ``bytes_reserved`` since the process started.
      bytes_from_system: new memory the allocator took from the system, in total.
      bytes_limit: the preallocation budget (None: no limit).
    """

    device: str
    reuse: str
    bytes_in_use: int
    peak_bytes_in_use: int
    num_allocs: int
    bytes_allocated: int
    bytes_donated: int
    bytes_reused: int | None
    bytes_reserved: int | None
    peak_bytes_reserved: int | None
    bytes_from_system: int | None
    bytes_limit: int | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        rows = [(k, v) for k, v in self.as_dict().items() if k not in ("device", "reuse")]
        width = max(len(k) for k, _ in rows)
        lines = [f"memory on {self.device} (reuse: {self.reuse})"]
        for key, value in rows:
            shown = "-" if value is None else (
                str(value) if key == "num_allocs" else f"{format_bytes(value)} ({value})")
            lines.append(f"  {key:<{width}}  {shown}")
        return "\n".join(lines)


def _device_stats(device: Any) -> MemoryStats:
    ledger = device.ledger
    num_allocs, bytes_allocated = ledger.totals()
    reserved = peak_reserved = from_system = reused = None
    pool = device.pool
    if pool is not None:
        reserved = pool.held
        from_system = pool.bytes_from_system
        reused = pool.bytes_reused
    else:
        stats = driver_statistics(device)
        base = ledger.baseline
        if stats:
            allocated = (stats.get("device_bytes_allocated", 0)
                         - base.get("device_bytes_allocated", 0))
            freed = stats.get("device_bytes_freed", 0) - base.get("device_bytes_freed", 0)
            from_system = allocated
            reserved = allocated - freed
            peak_reserved = stats.get("device_bytes_peak")
            if device.driver == "local-sync":
                # Every request goes through the allocator: what it did not allocate anew
                # it served from its cache.
                reused = max(0, bytes_allocated - allocated)
    return MemoryStats(
        device=device.uri, reuse=device.reuse, bytes_in_use=ledger.in_use,
        peak_bytes_in_use=max(ledger.peak, ledger.in_use), num_allocs=num_allocs,
        bytes_allocated=bytes_allocated, bytes_donated=ledger.bytes_donated,
        bytes_reused=reused, bytes_reserved=reserved, peak_bytes_reserved=peak_reserved,
        bytes_from_system=from_system, bytes_limit=ledger.limit,
    )


def _devices(device: Any) -> list:
    if device is None:
        with device_module._lock:
            return list(device_module._devices.values())
    if isinstance(device, str):
        with device_module._lock:
            found = device_module._devices.get(device.strip())
        return [found] if found is not None else [device_module.get_device(device)]
    return [device_module.get_device(device)]


def memory_stats(device: Any = None) -> MemoryStats:
    """Memory statistics of ``device`` (a URI or ``Device``), or summed over every device
    made so far (``device=None``). See ``MemoryStats`` for the fields.

    Example:
      >>> a = runtime.device_put(np.zeros(1 << 16, np.float32), "local-sync")
      >>> s = runtime.memory_stats("local-sync")
      >>> s.device, s.bytes_in_use >= a.nbytes, s.peak_bytes_in_use >= s.bytes_in_use
      ('local-sync', True, True)
    """
    devices = _devices(device)
    stats = [_device_stats(d) for d in devices]
    if device is not None and len(stats) == 1:
        return stats[0]

    def total(name: str) -> int | None:
        values = [getattr(s, name) for s in stats]
        return None if any(v is None for v in values) else sum(values)

    kinds = sorted({s.reuse for s in stats})
    return MemoryStats(
        device="all", reuse=kinds[0] if len(kinds) == 1 else ("mixed" if kinds else "none"),
        bytes_in_use=sum(s.bytes_in_use for s in stats),
        peak_bytes_in_use=sum(s.peak_bytes_in_use for s in stats),
        num_allocs=sum(s.num_allocs for s in stats),
        bytes_allocated=sum(s.bytes_allocated for s in stats),
        bytes_donated=sum(s.bytes_donated for s in stats),
        bytes_reused=total("bytes_reused"), bytes_reserved=total("bytes_reserved"),
        peak_bytes_reserved=total("peak_bytes_reserved"),
        bytes_from_system=total("bytes_from_system"),
        bytes_limit=total("bytes_limit") if stats else None,
    )


def reset_peak(device: Any = None) -> None:
    """Starts ``peak_bytes_in_use`` again from the bytes in use now."""
    for d in _devices(device):
        d.ledger.peak = d.ledger.in_use


@dataclass
class MemoryBlock:
    """What happened to memory inside a ``track_memory`` block (filled in at its end).

    ``peak_bytes_in_use`` is the highest ``bytes_in_use`` reached inside the block (for
    several devices, the sum of each one's peak); the other fields are differences
    between the end and the start of the block.
    """

    bytes_in_use_before: int = 0
    bytes_in_use_after: int = 0
    peak_bytes_in_use: int = 0
    num_allocs: int = 0
    bytes_allocated: int = 0
    bytes_donated: int = 0
    bytes_from_system: int | None = None

    def __str__(self) -> str:
        return (f"peak {format_bytes(self.peak_bytes_in_use)}, allocated "
                f"{format_bytes(self.bytes_allocated)} in {self.num_allocs} buffers, donated "
                f"{format_bytes(self.bytes_donated)}, new from the system "
                f"{format_bytes(self.bytes_from_system)}")


@contextmanager
def track_memory(device: Any = None) -> Iterator[MemoryBlock]:
    """Measures the memory a block of code uses: its peak and what it allocated.

    Example (arrays of at most ``SMALL_HOST_COPY_BYTES`` are not in ``bytes_in_use``):
      >>> with runtime.track_memory("local-sync") as block:
      ...     a = runtime.device_put(np.zeros(1 << 16, np.float32), "local-sync")
      ...     b = runtime.device_put(np.zeros(4, np.float32), "local-sync")
      >>> block.peak_bytes_in_use - block.bytes_in_use_before, block.num_allocs
      (262144, 2)
    """
    devices = _devices(device)
    saved = {d: d.ledger.peak for d in devices}
    before = {d: _device_stats(d) for d in devices}
    for d in devices:
        d.ledger.peak = d.ledger.in_use
    block = MemoryBlock(bytes_in_use_before=sum(s.bytes_in_use for s in before.values()))
    try:
        yield block
    finally:
        if device is None:  # devices made inside the block count from zero
            devices = _devices(None)
        peaks = 0
        after = {}
        for d in devices:
            ledger = d.ledger
            peaks += max(ledger.peak, ledger.in_use)
            ledger.peak = max(saved.get(d, 0), ledger.peak)
            after[d] = _device_stats(d)
        zero = None

        def delta(name: str) -> int | None:
            total = 0
            for d, s in after.items():
                b = before.get(d, zero)
                end, start = getattr(s, name), (getattr(b, name) if b is not None else 0)
                if end is None or start is None:
                    return None
                total += end - start
            return total

        block.bytes_in_use_after = sum(s.bytes_in_use for s in after.values())
        block.peak_bytes_in_use = peaks
        block.num_allocs = delta("num_allocs") or 0
        block.bytes_allocated = delta("bytes_allocated") or 0
        block.bytes_donated = delta("bytes_donated") or 0
        block.bytes_from_system = delta("bytes_from_system")


def live_arrays(device: Any = None) -> list:
    """The runtime ``Array``s alive now (not deleted), optionally on one device.

    Found by walking the garbage collector's objects, so it costs nothing on the call
    path and takes a few milliseconds per call: a debugging aid.

    Example:
      >>> a = runtime.device_put(np.ones(3, np.float32), "local-sync")
      >>> any(x is a for x in runtime.live_arrays())
      True
    """
    wanted = None if device is None else {id(d) for d in _devices(device)}
    out = []
    for obj in gc.get_objects():
        if isinstance(obj, Array) and obj._bv is not None and (
                wanted is None or id(obj._owner.device) in wanted):
            out.append(obj)
    return out


def trim(device: Any = None) -> int | None:
    """Returns cached (free) buffers to the system: IREE's caching allocator and the
    runtime's pool, and the free pages of the C heap they went back to (``trim_host_heap``).
    Returns the bytes released where the driver can tell, else None.

    Example (local-sync's allocator can tell):
      >>> released = runtime.trim("local-sync")
      >>> isinstance(released, int) and released >= 0
      True
    """
    released: int | None = 0
    for d in _devices(device):
        before = _device_stats(d).bytes_reserved
        if d.pool is not None:
            d.pool.trim()
        try:
            d.hal.allocator.trim()
        except (RuntimeError, ValueError):  # nothing to trim on this driver
            pass
        d.ledger.reserved = 0
        after = _device_stats(d).bytes_reserved
        if released is not None and before is not None and after is not None:
            released += max(0, before - after)
        else:
            released = None
    trim_host_heap()
    return released


_malloc_trim: Any = None


def trim_host_heap() -> bool:
    """Gives the free pages of the C heap back to the system (glibc's ``malloc_trim``;
    False where there is none). glibc keeps memory freed in the middle of its heap: after
    a jit cache of many signatures is cleared, the process's resident size stays near its
    peak although most of it is free (measured: 20 of 21 MiB kept after 100 signatures).
    A few milliseconds; run after large frees, never on the call path."""
    global _malloc_trim
    if _malloc_trim is None:
        import ctypes

        try:
            _malloc_trim = ctypes.CDLL(None).malloc_trim
            _malloc_trim.argtypes, _malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
        except (OSError, AttributeError):  # not glibc (macOS, musl, Windows)
            _malloc_trim = False
    if _malloc_trim is False:
        return False
    _malloc_trim(0)
    return True


# ---------------------------------------------------------------------------------------
# Per-function figures (aotc inspect)
# ---------------------------------------------------------------------------------------

def function_memory(meta: Any) -> dict[str, Any]:
    """Bytes one call of a function moves, from its metadata: its arguments, its results,
    and the result bytes written into donated argument buffers instead of new ones. None
    where a dimension is dynamic.

    With ``double.vmfb`` from the ``aotc.runtime`` example (float32[3] -> float32[3]):

    >>> from aotc.runtime.memory import function_memory
    >>> function_memory(runtime.load("double.vmfb").metadata["double"])
    {'argument_bytes': 12, 'result_bytes': 12, 'donated_bytes': 0, 'new_result_bytes': 12}
    """
    from .dtypes import lookup

    def size(spec: Any) -> int | None:
        if any(not isinstance(d, int) for d in spec.shape):
            return None
        count = 1
        for d in spec.shape:
            count *= d
        return count * lookup(spec.dtype).numpy.itemsize

    def total(specs: Any) -> int | None:
        sizes = [size(s) for s in specs]
        return None if any(s is None for s in sizes) else sum(sizes)

    results = list(meta.results)
    donated = total(results[k] for k in sorted(set(meta.donated.values())) if k < len(results))
    return {
        "argument_bytes": total(meta.args),
        "result_bytes": total(results),
        "donated_bytes": donated,
        "new_result_bytes": None if donated is None or total(results) is None
        else total(results) - donated,
    }


def measure_transient(vmfb: bytes, name: str) -> int | None:
    """Runs ``name`` once with zero arguments on a private local-sync device without a
    caching allocator, where IREE's allocator sees every allocation, and returns the
    most bytes its intermediate (transient) buffers held at once: the peak of live bytes
    beyond its arguments and results. None
    when the function cannot run here (another target, dynamic shapes, no metadata)."""
    import iree.runtime as rt
    import numpy as np

    from .dtypes import lookup
    from .metadata import FunctionMetadata

    try:
        # A driver of its own: IREE's local drivers keep one allocator, and its
        # statistics, for every device they create, and iree.runtime caches drivers, so
        # rt.get_driver's device would report the process's earlier peak (that of a
        # larger function measured before, or of the caller's arrays).
        from iree.runtime._binding import create_hal_driver

        hal = create_hal_driver("local-sync").create_default_device()
        instance = rt.VmInstance()
        vm_module = rt.VmModule.copy_buffer(instance, vmfb)
        context = rt.VmContext(instance, modules=[rt.create_hal_module(instance, hal), vm_module])
        function = vm_module.lookup_function(name)
        meta = FunctionMetadata.from_reflection(function.reflection)
    except (RuntimeError, ValueError, TypeError, KeyError):
        return None
    if meta is None or any(not isinstance(d, int)
                           for s in (*meta.args, *meta.results) for d in s.shape):
        return None
    args = rt.VmVariantList(len(meta.args))
    for spec in meta.args:
        entry = lookup(spec.dtype)
        args.push_ref(hal.allocator.allocate_buffer_copy(
            int(rt.MemoryType.DEVICE_LOCAL), int(rt.BufferUsage.DEFAULT), hal,
            np.zeros(spec.shape, entry.numpy), entry.element_type))
    results = rt.VmVariantList(len(meta.results))
    before = dict(hal.allocator.statistics)
    live_before = before.get("device_bytes_allocated", 0) - before.get("device_bytes_freed", 0)
    try:
        context.invoke(function, args, results)
    except (RuntimeError, ValueError):
        return None
    # The peak of the bytes live during the call, less the arguments (live before) and
    # the results (still live after): the most the intermediate buffers held at once,
    # as XLA's temp size (buffers freed and allocated again are not counted twice).
    peak = dict(hal.allocator.statistics).get("device_bytes_peak", 0)
    new_results = function_memory(meta)["new_result_bytes"] or 0
    del results, args, context
    return max(0, peak - live_before - new_results)
