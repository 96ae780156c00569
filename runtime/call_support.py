"""What both call paths of a ``Function`` share (function.py's for plain calls,
donating_call.py's for calls that donate): buffer sizes from the metadata, the invocation
with its peak check, an ``Array`` argument's buffer, and IREE's errors as aotc's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import iree.runtime as rt
import numpy as np

from . import dtypes
from .array import Array, device_put, is_committed
from .device import forget_lost
from .errors import DeviceMismatchError, InvocationError
from .ledger import out_of_memory
from .metadata import FunctionMetadata

DEVICE_LOCAL = int(rt.MemoryType.DEVICE_LOCAL)
USAGE = int(rt.BufferUsage.DEFAULT)


def spec_bytes(spec: Any) -> int:
    """Bytes of a tensor of static shape (0 when a dimension is dynamic: unknown)."""
    if any(not isinstance(d, int) for d in spec.shape):
        return 0
    return int(np.prod(spec.shape, dtype=np.int64)) * dtypes.lookup(spec.dtype).numpy.itemsize


def invoke_held(meta: FunctionMetadata, device: Any, led: Any, invoke: Callable,
                vm_function: rt.VmFunction, args: rt.VmVariantList,
                results: rt.VmVariantList, held: int) -> None:
    """Invokes a call that holds ``held`` more bytes (its uploads and new results) while
    it runs: a new peak in the ledger is checked against the budget first (raising
    ``OutOfMemoryError``), and IREE's failure becomes an ``InvocationError``."""
    top = led.in_use + held
    if top > led.peak:
        led.new_peak(top, meta.name, device, held)  # checks the budget
    try:
        invoke(vm_function, args, results)
    except (ValueError, RuntimeError) as e:
        raise invocation_error(meta, e, device, held) from e


def array_buffer(name: str, device: Any, array: Array, label: str) -> rt.HalBufferView:
    """The buffer of an ``Array`` argument, which must live on the function's device, or
    be in host memory when the function's device is a CPU one too: local-sync and
    local-task buffers are both plain host memory, and functions loaded on the two
    drivers (which ``load`` picks per artifact) must be able to pass results along."""
    source = array.device
    if source is not device and not (source.is_host and device.is_host):
        if not is_committed(array):  # an eager result: goes where it is used, as in JAX
            return device_put(array.to_host(), device)._live()
        raise DeviceMismatchError(
            f"{name}(): argument {label}: expected an array on {device.uri}, got one on "
            f"{array.device.uri}. Bring it to the host with np.asarray(...) first, or load "
            f"the module on {array.device.uri}"
        )
    return array._live()


def invocation_error(fn: Any, error: Exception, device: Any = None,
                      requested: int = 0) -> InvocationError:
    """Wraps IREE's error (``fn``: FunctionMetadata, or a Function without metadata); an
    allocation failure becomes an ``OutOfMemoryError`` with the size and bytes in use."""
    text = str(error).strip()
    if device is not None and ("RESOURCE_EXHAUSTED" in text or "out of memory" in text.lower()):
        return out_of_memory(f"{fn.name}()", device, requested, text)
    if device is not None and "DEVICE_LOST" in text:
        return InvocationError(forget_lost(device, f"{fn.name}()", text))
    hint = ("The arguments matched the metadata, so this is likely out-of-memory or an "
            "artifact whose metadata disagrees with its code: re-export it"
            if isinstance(fn, FunctionMetadata) else
            "This function has no aotc metadata, so only IREE checked the arguments: "
            f"compare them with its signature {fn.signature}")
    return InvocationError(f"{fn.name}(): IREE failed running the function: {text}\n{hint}")
