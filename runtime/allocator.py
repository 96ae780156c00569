"""How device memory is reused: the configuration, IREE's caching allocator where it
works, and the runtime's own buffer pool where it does not.

* CPU drivers (local-sync, local-task), CUDA, HIP: devices are created with IREE's
  ``caching`` allocator, bounded by ``ReuseConfig.capacity`` and ``max_free_buffers``.
  A freed buffer is kept and handed out again for a request of exactly its size.
* Vulkan: IREE's caching allocator breaks queue allocations there, so the runtime pools
  the buffers it allocates itself (arguments copied from numpy): ``BufferPool``. Results
  come from IREE's Vulkan allocator, which sub-allocates from large blocks it keeps.

The configuration comes from ``configure_reuse`` or the environment (read when the first
device is created):

``AOTC_REUSE``           ``0`` turns reuse off (default on)
``AOTC_REUSE_CAPACITY``  most bytes a device holds through its reuse cache, live buffers
                         included, before freed buffers go back to the system
                         (``"1gib"``, ``"512mib"``, ``"*"`` for no bound; default: a quarter
                         of the machine's memory, at most 4 GiB)
``AOTC_REUSE_MAX_FREE``  most freed buffers kept per device (default 64)
``AOTC_PREALLOCATE``     a byte budget (``"2gib"``) or a fraction of the machine's memory
                         (``"0.5"``): the device refuses to hold more (``OutOfMemoryError``),
                         and loading a module reserves buffers for its functions' arguments
                         and results up to the budget, so first calls find them cached
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, replace
from typing import Any

import iree.runtime as rt
import numpy as np

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 10 ** 3, "kib": 1 << 10, "m": 1 << 20,
          "mb": 10 ** 6, "mib": 1 << 20, "g": 1 << 30, "gb": 10 ** 9, "gib": 1 << 30,
          "t": 1 << 40, "tb": 10 ** 12, "tib": 1 << 40}

DEFAULT_MAX_FREE = 64
DEFAULT_CAPACITY_MAX = 4 << 30

# Buffer parameters broad enough to serve both uploads and results from a cached buffer
# (IREE's cache hands out a buffer whose type and usage include what is asked for).
_RESULT_MEMORY = int(rt.MemoryType.DEVICE_LOCAL | rt.MemoryType.HOST_VISIBLE)
_RESULT_USAGE = int(rt.BufferUsage.DEFAULT | rt.BufferUsage.MAPPING)
_DEVICE_LOCAL = int(rt.MemoryType.DEVICE_LOCAL)
_DEFAULT_USAGE = int(rt.BufferUsage.DEFAULT)
_STAGING_MEMORY = int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE)
_TRANSFER = int(rt.BufferUsage.TRANSFER)
# Vulkan imports host memory only at this alignment (minImportedHostPointerAlignment).
HOST_IMPORT_ALIGNMENT = 4096


def parse_size(text: str | float, what: str = "size") -> int | None:
    """``"512mib"`` -> 536870912; ``"*"`` or ``"none"`` -> None (no bound).

    >>> parse_size("1.5kib"), parse_size(4096), parse_size("*")
    (1536, 4096, None)
    """
    if isinstance(text, (int, np.integer)) and not isinstance(text, bool):
        if text < 0:
            raise ValueError(f"{what}: expected a non-negative number of bytes, got {text}")
        return int(text)
    s = str(text).strip().lower().replace("_", "")
    if s in ("*", "none", "inf", "unlimited"):
        return None
    match = re.fullmatch(r"([0-9]*\.?[0-9]+)\s*([a-z]*)", s)
    if not match or match.group(2) not in _UNITS:
        raise ValueError(
            f"{what}: expected a size such as 4096, 512mib or 2gib (or * for no bound), got "
            f"{text!r}"
        )
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def system_memory() -> int:
    """The machine's physical memory in bytes (the reference for fractions)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def parse_budget(value: str | float | None) -> int | None:
    """A preallocation budget: bytes, a size string, or a fraction (0 < f <= 1) of the
    machine's memory. ``None``/``""``/``"0"`` mean no budget.

    >>> parse_budget("256mib"), parse_budget(0.5) == system_memory() // 2
    (268435456, True)
    """
    if value is None:
        return None
    if isinstance(value, float) or (
            isinstance(value, str) and re.fullmatch(r"\s*0?\.\d+\s*|\s*1\.0*\s*", value)):
        fraction = float(value)
        if not 0 < fraction <= 1:
            raise ValueError(f"preallocate: expected a fraction in (0, 1] or a size, got {value!r}")
        return int(system_memory() * fraction)
    if isinstance(value, str) and value.strip() in ("", "0", "false", "no"):
        return None
    size = parse_size(value, "preallocate")
    return size or None


@dataclass(frozen=True)
class ReuseConfig:
    """How a device created from now on reuses memory (see the module docstring).

    Attributes:
      enabled: reuse freed buffers (IREE's caching allocator, or the runtime's pool on
        Vulkan).
      capacity: most bytes a device holds through its reuse cache, live buffers included,
        before freed buffers are released to the system (None: no bound).
      max_free_buffers: most freed buffers kept per device.
      preallocate: a byte budget for the device (None: none); see ``AOTC_PREALLOCATE``.
    """

    enabled: bool = True
    capacity: int | None = None
    max_free_buffers: int = DEFAULT_MAX_FREE
    preallocate: int | None = None

    @staticmethod
    def from_env(environ: dict | None = None) -> ReuseConfig:
        env = os.environ if environ is None else environ
        enabled = env.get("AOTC_REUSE", "1").strip().lower() not in ("0", "false", "no", "off")
        capacity_text = env.get("AOTC_REUSE_CAPACITY")
        capacity = (parse_size(capacity_text, "AOTC_REUSE_CAPACITY") if capacity_text
                    else min(system_memory() // 4, DEFAULT_CAPACITY_MAX))
        max_free = int(env.get("AOTC_REUSE_MAX_FREE", DEFAULT_MAX_FREE))
        preallocate = parse_budget(env.get("AOTC_PREALLOCATE"))
        return ReuseConfig(enabled, capacity, max_free, preallocate)

    def effective_capacity(self) -> int | None:
        """The capacity, raised to hold a preallocation budget."""
        if self.capacity is None or self.preallocate is None:
            return self.capacity
        return max(self.capacity, self.preallocate)


_lock = threading.Lock()
_config: ReuseConfig | None = None


def reuse_config() -> ReuseConfig:
    """The configuration new devices are created with."""
    global _config
    with _lock:
        if _config is None:
            _config = ReuseConfig.from_env()
        return _config


def configure_reuse(*, enabled: bool | None = None, capacity: int | str | None = ...,
                    max_free_buffers: int | None = None,
                    preallocate: float | str | None = ...) -> ReuseConfig:
    """Sets how devices created from now on reuse memory; returns the new configuration.

    Devices are created once per URI and keep their allocator, so call this before the
    first ``load``/``device_put`` (or use the ``AOTC_REUSE*``/``AOTC_PREALLOCATE``
    environment variables).

    Example:
      >>> cfg = runtime.configure_reuse(capacity="512mib", max_free_buffers=32)
      >>> cfg.capacity, cfg.max_free_buffers, runtime.reuse_config() == cfg
      (536870912, 32, True)
      >>> runtime.allocator_specs("local-sync")  # what a new local-sync device gets
      ['caching:device_local=*;536870912;32']
    """
    global _config
    current = reuse_config()
    changes: dict[str, Any] = {}
    if enabled is not None:
        changes["enabled"] = bool(enabled)
    if capacity is not ...:
        changes["capacity"] = None if capacity is None else parse_size(capacity, "capacity")
    if max_free_buffers is not None:
        if max_free_buffers < 0:
            raise ValueError(f"max_free_buffers: expected >= 0, got {max_free_buffers}")
        changes["max_free_buffers"] = int(max_free_buffers)
    if preallocate is not ...:
        changes["preallocate"] = parse_budget(preallocate)
    with _lock:
        _config = replace(current, **changes)
        return _config


def reuse_kind(driver: str, config: ReuseConfig | None = None) -> str:
    """``"caching"`` (IREE's caching allocator), ``"pool"`` (the runtime's pool) or
    ``"none"`` for a new device of ``driver``."""
    config = config or reuse_config()
    if not config.enabled:
        return "none"
    return "pool" if driver == "vulkan" else "caching"


def caching_spec(config: ReuseConfig) -> str:
    """IREE's allocator spec for the configuration:
    ``caching:device_local=<max allocation>;<capacity>;<max free buffers>``."""
    capacity = config.effective_capacity()
    return (f"caching:device_local=*;{'*' if capacity is None else capacity};"
            f"{max(1, config.max_free_buffers)}")


# ---------------------------------------------------------------------------------------
# The runtime's pool (Vulkan)
# ---------------------------------------------------------------------------------------

def padded(nbytes: int) -> int:
    """``nbytes`` rounded up to a whole number of ``HOST_IMPORT_ALIGNMENT`` blocks (at
    least one): Vulkan imports host memory only in such blocks.

    >>> padded(24), padded(4096), padded(0)
    (4096, 4096, 4096)
    """
    return max(1, -(-nbytes // HOST_IMPORT_ALIGNMENT)) * HOST_IMPORT_ALIGNMENT


def aligned_empty(nbytes: int, alignment: int = HOST_IMPORT_ALIGNMENT) -> np.ndarray:
    """A uint8 host array of ``nbytes`` whose address is a multiple of ``alignment``."""
    raw = np.empty(nbytes + alignment, np.uint8)
    offset = (-raw.ctypes.data) % alignment
    return raw[offset:offset + nbytes]


class BufferPool:
    """Free lists of device buffers (and the aligned host staging memory that fills them),
    keyed by size (rounded up to ``HOST_IMPORT_ALIGNMENT``), for drivers where IREE's
    caching allocator cannot be used.

    ``upload`` copies a host array into a pooled buffer (host memory -> imported staging
    -> queue copy); ``release`` gives a buffer back once nothing reads it. Bounded like
    IREE's cache: freed buffers are kept while the bytes held through the pool stay
    within ``capacity`` and at most ``max_free`` are kept.
    """

    def __init__(self, hal: rt.HalDevice, capacity: int | None, max_free: int) -> None:
        self.hal = hal
        self.capacity = capacity
        self.max_free = max_free
        self._free: dict[int, list] = {}
        self._staging: dict[int, np.ndarray] = {}
        self._lock = threading.Lock()
        self._semaphore = hal.create_semaphore(0)
        self._timeline = 0
        self.held = 0  # bytes of buffers allocated through the pool and not yet released
        self.free_bytes = 0
        self.free_count = 0
        self.allocations = 0  # buffers allocated from the driver
        self.bytes_from_system = 0
        self.hits = 0
        self.bytes_reused = 0

    def acquire(self, nbytes: int) -> rt.HalBuffer:
        nbytes = padded(nbytes)
        with self._lock:
            free = self._free.get(nbytes)
            if free:
                buffer = free.pop()
                self.free_bytes -= nbytes
                self.free_count -= 1
                self.hits += 1
                self.bytes_reused += nbytes
                return buffer
            self._make_room(nbytes)
            self.allocations += 1
            self.bytes_from_system += nbytes
            self.held += nbytes
        return self.hal.allocator.allocate_buffer(
            memory_type=_DEVICE_LOCAL, allowed_usage=_DEFAULT_USAGE, allocation_size=nbytes)

    def release(self, buffer: rt.HalBuffer, nbytes: int) -> None:
        nbytes = padded(nbytes)
        with self._lock:
            if (self.free_count < self.max_free
                    and (self.capacity is None or self.held <= self.capacity)):
                self._free.setdefault(nbytes, []).append(buffer)
                self.free_bytes += nbytes
                self.free_count += 1
                return
            self.held -= nbytes
        del buffer  # back to the driver

    def forget(self, nbytes: int) -> None:
        """A pooled buffer left the pool for good (it became a result's storage)."""
        with self._lock:
            self.held -= padded(nbytes)

    def _make_room(self, nbytes: int) -> None:
        if self.capacity is None:
            return
        while self.free_count and self.held + nbytes > self.capacity:
            size = max(self._free, key=lambda s: (len(self._free[s]) > 0, s))
            if not self._free[size]:
                break
            self._free[size].pop()
            self.free_bytes -= size
            self.free_count -= 1
            self.held -= size

    def trim(self) -> int:
        """Releases every cached buffer and staging area; returns the bytes released."""
        with self._lock:
            released = self.free_bytes + sum(a.nbytes for a in self._staging.values())
            self.held -= self.free_bytes
            self._free.clear()
            self._staging.clear()
            self.free_bytes = 0
            self.free_count = 0
        return released

    def upload(self, array: np.ndarray, element_type: int) -> tuple[rt.HalBufferView, rt.HalBuffer]:
        """Copies ``array`` into a pooled device buffer: (buffer view, buffer)."""
        nbytes = array.nbytes
        buffer = self.acquire(nbytes)
        if nbytes:
            size = padded(nbytes)
            with self._lock:
                staging = self._staging.get(size)
                if staging is None:
                    staging = self._staging[size] = aligned_empty(size)
                staging[:nbytes] = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
                source = self.hal.allocator.import_host_allocation(
                    staging, _STAGING_MEMORY, _TRANSFER)
                self._copy(source, buffer)
        return rt.HalBufferView(buffer, array.shape, element_type), buffer

    def _copy(self, source: rt.HalBuffer, target: rt.HalBuffer) -> None:
        value = self._timeline
        self._timeline = value + 1
        self.hal.queue_copy(source, target, rt.HalFence.create_at(self._semaphore, value),
                            rt.HalFence.create_at(self._semaphore, value + 1))
        rt.HalFence.create_at(self._semaphore, value + 1).wait()


def read_back(device: Any, bv: rt.HalBufferView, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Copies a device buffer the host cannot map into a new host array (through host
    memory imported as a transfer target; no mapping call, which this IREE's Python
    binding fails on for device buffers)."""
    source = bv.get_buffer()
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    host = aligned_empty(padded(max(nbytes, source.byte_length())))
    if nbytes:
        hal = device.hal
        target = hal.allocator.import_host_allocation(host, _STAGING_MEMORY, _TRANSFER)
        semaphore = hal.create_semaphore(0)
        hal.queue_copy(source, target, rt.HalFence.create_at(semaphore, 0),
                       rt.HalFence.create_at(semaphore, 1))
        rt.HalFence.create_at(semaphore, 1).wait()
        del target
    out = host[:nbytes].view(dtype).reshape(shape)
    out.flags.writeable = False
    return out


def device_copy(device: Any, bv: rt.HalBufferView) -> rt.HalBufferView:
    """A new device buffer holding a copy of ``bv`` (used before donating a buffer that
    another array still shares)."""
    hal = device.hal
    shape = tuple(bv.shape)
    source = bv.get_buffer()
    nbytes = source.byte_length()
    if device.is_host:
        raw = rt.HalBufferView(source, (nbytes,), _UINT8_ELEMENT)
        data = np.from_dlpack(_DLPackSource(hal, raw, device.dlpack_device))
        count = int(np.prod(shape, dtype=np.int64))
        itemsize = nbytes // count if count else 1
        host = data.view(_BITS[itemsize]).reshape(shape) if count else np.empty(shape, np.uint8)
        return hal.allocator.allocate_buffer_copy(_DEVICE_LOCAL, _DEFAULT_USAGE, hal, host,
                                                  bv.element_type)
    pool = getattr(device, "pool", None)
    if pool is not None:
        target = pool.acquire(nbytes)
        pool.forget(nbytes)  # it becomes the donated (consumed) buffer
    else:
        target = hal.allocator.allocate_buffer(
            memory_type=_DEVICE_LOCAL, allowed_usage=_DEFAULT_USAGE, allocation_size=max(nbytes, 1))
    semaphore = hal.create_semaphore(0)
    hal.queue_copy(source, target, rt.HalFence.create_at(semaphore, 0),
                   rt.HalFence.create_at(semaphore, 1))
    rt.HalFence.create_at(semaphore, 1).wait()
    return rt.HalBufferView(target, shape, bv.element_type)


_UINT8_ELEMENT = int(rt.HalElementType.UINT_8)
_BITS = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
         8: np.dtype(np.uint64)}


class _DLPackSource:
    __slots__ = ("_bv", "_device", "_hal")

    def __init__(self, hal: rt.HalDevice, bv: rt.HalBufferView, device: tuple) -> None:
        self._hal, self._bv, self._device = hal, bv, device

    def __dlpack__(self, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        return self._hal.create_dlpack_capsule(self._bv, *self._device)

    def __dlpack_device__(self) -> tuple:
        return self._device


def preallocate(device: Any, sizes: list[int]) -> int:
    """Puts buffers of the given sizes (largest first) into the device's reuse cache while
    the device's budget allows; returns the bytes reserved. The first calls then take
    their arguments and results from the cache instead of the system."""
    ledger = device.ledger
    budget = ledger.limit
    if budget is None or device.reuse == "none":
        return 0
    reserved = 0
    buffers = []
    for size in sorted((s for s in sizes if s > 0), reverse=True):
        if ledger.reserved + reserved + size > budget:
            continue
        if device.pool is not None:
            buffers.append((device.pool.acquire(size), size))
        else:
            buffers.append((device.hal.allocator.allocate_buffer(
                memory_type=_RESULT_MEMORY, allowed_usage=_RESULT_USAGE, allocation_size=size),
                size))
        reserved += size
    for buffer, size in buffers:
        if device.pool is not None:
            device.pool.release(buffer, size)
    buffers.clear()  # the caching allocator keeps them as free buffers
    ledger.reserved += reserved
    return reserved
