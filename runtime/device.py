"""Devices: one per URI per process, and the choice of driver when the user names none.

A ``Device`` wraps IREE's ``HalDevice`` together with the VM-level handles that are tied
to it (the HAL module every loaded artifact links against). Devices are created once
and cached for the life of the process, because creating one is slow (a local-task
device starts worker threads) and because buffers must never outlive their device.
"""

from __future__ import annotations

import os
import shlex
import sys
import threading
from collections.abc import Callable, Iterable

import iree.runtime as rt

from . import allocator as _allocator
from .errors import DeviceError, DeviceLimitError
from .ledger import Ledger, driver_statistics
from .metadata import FunctionMetadata
from .targets import gpu_driver, runs_on_host_cpu, split_targets

# Below this much work per call, local-sync (runs on the calling thread) beats
# local-task (wakes a worker pool); above it the worker pool's parallelism wins. Measured
# crossover on a 2-core x86 machine (2026-12-06, AMD Zen 5, device arrays, us per call
# sync/task): an elementwise chain of 8 ops per element at 1e5 elements 36/83, 3e5 96/147,
# 1e6 318/219.
LOCAL_SYNC_MAX_WORK = 4e6
# ... and so it does for more work done in many small dispatches (a loop of small steps:
# an RNN over a sequence runs 1.4x faster on local-sync, 2.4 ms against 3.4 ms): below
# this many flops per op, waking the pool for each dispatch costs more than it gains.
LOCAL_SYNC_MAX_WORK_PER_OP = 5e5
# Matmul flops count this much of a unit of work (``contraction_estimate``): tiled matmuls
# do about ten times as many flops per second as elementwise ops do elements (IREE's
# convolutions do not: they count whole).
# Measured: matmul 128^3 sync/task 21/80 us, 192^3 60/108, 256^3 129/174, 384^3
# 420/351; the MLP 784-512-512-10 at batch 10 65/119, 24 144/161, 32 177/202, 48
# 257/209, 64 339/271 (counted whole, every batch from 4 went to local-task).
CONTRACTION_WORK_WEIGHT = 0.08
# Matrix-vector flops (``matvec_estimate``) count one unit per multiply-add, as an
# elementwise op counts one per element: they stream their matrix from memory. Measured
# (float64 A @ v, device arrays, us per call sync/task): 1024^2 83/118, 1448^2 193/213,
# 2048^2 733/504 (weighed as matmul flops, the last stayed on local-sync); float32 2048^2
# 217/242.
MATVEC_WORK_WEIGHT = 0.5

# local-task gets one worker group per available core, up to this many. Unpinned groups
# equal to the core count cut p99 latency 3-6x against IREE's pinned default on the
# 2-core machine it was measured on; more groups than cores hurts badly. Above 2 cores
# the cap is a judgement call (waking more workers costs small calls), not a measurement.
TASK_WORKER_GROUPS_MAX = 16

# Drivers whose buffers live in host memory, so results can be read zero-copy.
HOST_DRIVERS = ("local-sync", "local-task")

# GPU drivers that stop a shader invocation after this many loop iterations in all, by a
# substring of the device's name: Mesa's llvmpipe (lavapipe, the software Vulkan driver)
# counts every loop of a shader against one limiter (LP_MAX_TGSI_LOOP_ITERATIONS) and
# then leaves the loops, so a factorization kernel past it returns partial results.
SHADER_LOOP_LIMITS = {"llvmpipe": 65535}

# DLPack device type codes (dlpack.h) by driver.
_DLPACK_DEVICE_TYPES = {"local-sync": 1, "local-task": 1, "cuda": 2, "vulkan": 7, "hip": 10}

_lock = threading.RLock()
_devices: dict[str, Device] = {}
_instance: rt.VmInstance | None = None
_task_flags_set = False


class Device:
    """A device that runs loaded functions, e.g. ``get_device("local-sync")``.

    Attributes:
      uri: the URI it was created from ("local-task", "cuda://0", ...).
      driver: the driver name ("local-task", "cuda", ...).
      hal: IREE's ``HalDevice``.
    """

    def __init__(self, uri: str, driver: str, hal: rt.HalDevice,
                 name: str | None = None) -> None:
        self.uri = uri
        self.driver = driver
        self.hal = hal
        self.name = name  # the driver's name for the device, where it gives one
        # The loop iterations a shader may make before the driver cuts it short, if any.
        self.shader_loop_limit = next(
            (limit for part, limit in SHADER_LOOP_LIMITS.items() if name and part in name), None)
        # Memory: how freed buffers are reused ("caching", "pool", "none"), the runtime's
        # own pool where IREE's caching allocator cannot be used, and the ledger behind
        # memory_stats (see allocator.py, ledger.py).
        config = _allocator.reuse_config()
        self.reuse = _allocator.reuse_kind(driver, config)
        self.pool = (_allocator.BufferPool(hal, config.effective_capacity(),
                                           config.max_free_buffers)
                     if self.reuse == "pool" else None)
        self.ledger = Ledger(config.preallocate, driver_statistics(self))
        self.is_host = driver in HOST_DRIVERS
        path = uri.split("://", 1)[1] if "://" in uri else ""
        self.dlpack_device = (_DLPACK_DEVICE_TYPES.get(driver, 1),
                              int(path) if path.isdigit() else 0)
        self._hal_module: rt.VmModule | None = None
        self.lost = False  # IREE reported the device lost (``forget_lost``)

    @property
    def device(self) -> Device:
        # Arrays put on a device are owned by it; owners answer ``.device``.
        return self

    @property
    def allocator(self) -> rt.HalAllocator:
        return self.hal.allocator

    def hal_module(self) -> rt.VmModule:
        """The HAL module binding this device into VM contexts (one per device, shared
        by every module loaded on it)."""
        with _lock:
            if self._hal_module is None:
                self._hal_module = rt.create_hal_module(vm_instance(), self.hal)
            return self._hal_module

    def __repr__(self) -> str:
        return f"Device({self.uri!r})"


def vm_instance() -> rt.VmInstance:
    """The process-wide VM instance every context is created in."""
    global _instance
    with _lock:
        if _instance is None:
            _instance = rt.VmInstance()
        return _instance


def get_device(uri: str | Device) -> Device:
    """Returns the device for ``uri``, creating it on first use.

    Example:
      >>> get_device("local-sync")
      Device('local-sync')

    Args:
      uri: a driver name ("local-task", "local-sync", "vulkan", "cuda", "hip") or a full
        IREE device URI ("cuda://0"); a ``Device`` is returned as is.
    Raises:
      DeviceError: unknown driver, or the driver/device is not available here.
    """
    if isinstance(uri, Device):
        # A lost device is replaced by a new one for its URI (``forget_lost``).
        return get_device(uri.uri) if uri.lost else uri
    if not isinstance(uri, str):
        raise TypeError(
            f"get_device: expected a device URI string (e.g. 'local-task') or a Device, "
            f"got {type(uri).__name__}"
        )
    device = _devices.get(uri)  # the common case, without the lock: created before
    if device is not None:
        return device
    uri = uri.strip()
    with _lock:
        device = _devices.get(uri)
        if device is None:
            device = _devices[uri] = _create(uri)
        return device


def forget_lost(device: Device, what: str, text: str) -> str:
    """Marks ``device`` lost (a GPU driver's ``DEVICE_LOST``: every later use of it fails)
    and drops it from the cache, so the next ``get_device`` or ``load`` for its URI, or
    for the device itself, creates a new one; returns the message for ``what`` (the call
    that met it), ``text`` IREE's. Modules and arrays on it are not moved."""
    device.lost = True
    with _lock:
        if _devices.get(device.uri) is device:
            del _devices[device.uri]
    return (f"{what}: the device {device.uri!r} was lost while running it (IREE: {text}). "
            f"aotc no longer uses it: load the module again (aotc.runtime.load) to run on a "
            f"new {device.uri!r} device, and put its arguments there again")


# sys.getrefcount of a cached device that nothing else holds: the cache's entry and
# getrefcount's own argument.
_CACHE_ONLY_REFERENCES = 2


def release_unused_devices() -> list[str]:
    """Drops the cached devices nothing refers to any more (no Array, loaded module or
    caller holds them), so IREE destroys them and their threads stop; a later
    ``get_device`` creates the device again. Returns the URIs released.

    An idle device is not free: a local-task device keeps its worker pool, and a Vulkan
    device its completion-watcher thread, which on Mesa's software driver (lavapipe)
    busy-waits and takes most of a core for as long as the device exists.

    Example:
      >>> device = get_device("local-sync")
      >>> "local-sync" in release_unused_devices()  # still held, by ``device``
      False
    """
    with _lock:
        unused = [uri for uri in list(_devices)
                  if sys.getrefcount(_devices[uri]) <= _CACHE_ONLY_REFERENCES]
        for uri in unused:
            del _devices[uri]
    return unused


def _create(uri: str) -> Device:
    driver_name = uri.split("://", 1)[0]
    available = sorted(rt.query_available_drivers())
    if driver_name not in available:
        raise DeviceError(
            f"get_device: expected one of the drivers {', '.join(available)}, got {uri!r}. "
            f"Pass one of those names (or a URI such as 'cuda://0')"
        )
    if driver_name == "local-task":
        _set_task_flags()
    try:
        driver = rt.get_driver(uri)
        specs = allocator_specs(driver_name)
        if specs:
            hal = driver.create_device_by_uri(uri, allocators=specs)
        else:
            hal = driver.create_device_by_uri(uri)
    except (ValueError, RuntimeError) as e:
        raise DeviceError(
            f"get_device({uri!r}): the driver is known but no device could be created "
            f"({e}). Install the driver's runtime library or pick another device, e.g. "
            f"'local-task'"
        ) from e
    return Device(uri, driver_name, hal, _device_name(driver, uri))


def shader_loop_refusal(meta: FunctionMetadata, device: Device) -> Callable | None:
    """A ``call_flat`` that raises ``DeviceLimitError`` where ``device`` would cut the
    function short (its kernels may make more loop iterations than the driver lets a
    shader make: ``SHADER_LOOP_LIMITS``), or None where it runs the function whole."""
    limit, trips = device.shader_loop_limit, meta.kernel_loop_trips
    if limit is None or 0 <= trips <= limit:
        return None
    made = "an unknown number of" if trips < 0 else f"up to {trips}"
    message = (f"{meta.name}(): its factorization kernels make {made} loop iterations per "
               f"dispatch, and {device.name} stops a shader after {limit}: the results would "
               f"be wrong. Run it on a hardware GPU or a CPU target (export for 'cpu'), or "
               f"factor smaller matrices")

    def call_flat(args):
        raise DeviceLimitError(message)
    return call_flat


def _device_name(driver: rt.HalDriver, uri: str) -> str | None:
    """The name the driver gives the device ``uri`` opens (its first device, or the one
    a ``driver://N`` URI numbers), or None where the driver lists none."""
    path = uri.split("://", 1)[1] if "://" in uri else ""
    try:
        devices = driver.query_available_devices()
    except (ValueError, RuntimeError):
        return None
    index = int(path) if path.isdigit() else 0
    return devices[index].get("name") if index < len(devices) else None


def allocator_specs(driver: str) -> list[str] | None:
    """The IREE allocator specs a new device of ``driver`` is created with: IREE's
    ``caching`` allocator, bounded by the reuse configuration (``configure_reuse``,
    ``AOTC_REUSE_CAPACITY``, ``AOTC_REUSE_MAX_FREE``), on every driver but Vulkan, where
    it breaks queue allocations and the runtime pools buffers itself; None when reuse is
    off (``AOTC_REUSE=0``).

    >>> allocator_specs("vulkan") is None, allocator_specs("local-sync")
    (True, ['caching:device_local=*;...'])
    """
    config = _allocator.reuse_config()
    if _allocator.reuse_kind(driver, config) != "caching":
        return None
    return [_allocator.caching_spec(config)]


def _task_group_count() -> int:
    try:
        cores = len(os.sched_getaffinity(0))  # respects taskset / container CPU limits
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, TASK_WORKER_GROUPS_MAX))


def _set_task_flags() -> None:
    """Sets the local-task worker topology once, before the first local-task device."""
    global _task_flags_set
    if _task_flags_set:
        return
    _task_flags_set = True
    # A topology the user set through IREE's own environment variable wins.
    user_flags = shlex.split(os.environ.get("IREE_PY_RUNTIME_FLAGS", ""))
    if any(flag.lstrip("-").startswith("task_topology") for flag in user_flags):
        return
    rt.flags.parse_flags(f"--task_topology_group_count={_task_group_count()}")


def _runs_best_on_one_thread(meta: FunctionMetadata) -> bool:
    weighed = (meta.work_estimate - meta.contraction_estimate * (1 - CONTRACTION_WORK_WEIGHT)
               - meta.matvec_estimate * (1 - MATVEC_WORK_WEIGHT))
    if weighed < LOCAL_SYNC_MAX_WORK:
        return True
    # per op, all flops count whole (as measured: the batch-64 MLP's 14 ops average 6.1
    # MFLOP, 0.5 weighed, and it ran 271 us on local-task against 339 on local-sync)
    return (meta.op_estimate > 0
            and meta.work_estimate / meta.op_estimate < LOCAL_SYNC_MAX_WORK_PER_OP)


def default_device_uri(functions: Iterable[FunctionMetadata | None]) -> str:
    """The device an artifact runs on when ``load`` is given none.

    The host CPU unless the artifact has no code for it: an artifact with code for this
    machine's CPU (target ``cpu``, or e.g. ``aarch64`` on an aarch64 machine) runs on
    local-sync when every function is small or runs in small steps (see
    ``LOCAL_SYNC_MAX_WORK`` and ``LOCAL_SYNC_MAX_WORK_PER_OP``), else on
    local-task; one without runs on the driver of its first GPU target (``vulkan``,
    ``cuda``). Targets are read as ``runtime.targets`` names them (``"cpu,vulkan"``).
    Functions without aotc metadata count as large: their work is unknown.
    """
    functions = list(functions)
    targets = [t for meta in functions if meta is not None for t in split_targets(meta.target)]
    if targets and not any(runs_on_host_cpu(t) for t in targets):
        for target in targets:
            driver = gpu_driver(target)
            if driver is not None:
                return driver
    small = bool(functions) and all(meta is not None and _runs_best_on_one_thread(meta)
                                    for meta in functions)
    return "local-sync" if small else "local-task"
