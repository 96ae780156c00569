"""aotc.runtime: load exported ``.vmfb`` artifacts and run them.

Depends only on numpy and ``iree.runtime`` (never on the compiler), so it runs on
machines that have neither MLIR nor the aotc compiler installed.

Example:
  >>> from aotc import runtime
  >>> m = runtime.load("mlp.vmfb")                        # doctest: +SKIP
  >>> y = m.predict(np.zeros((64, 784), np.float32))       # doctest: +SKIP
  >>> np.asarray(y).shape                                  # doctest: +SKIP
  (64, 10)
"""

from __future__ import annotations

from .allocator import ReuseConfig, configure_reuse, reuse_config
from .array import SMALL_HOST_COPY_BYTES, Array, TrackedArray, device_put
from .device import (
    LOCAL_SYNC_MAX_WORK,
    LOCAL_SYNC_MAX_WORK_PER_OP,
    TASK_WORKER_GROUPS_MAX,
    Device,
    allocator_specs,
    default_device_uri,
    get_device,
)
from .errors import (
    AotcRuntimeError,
    ArgumentError,
    ArtifactNotFoundError,
    DeletedArrayError,
    DeviceError,
    DeviceMismatchError,
    FunctionNotFoundError,
    InvocationError,
    LoadError,
    OutOfMemoryError,
    ShapeError,
)
from .function import Function, RawSignature
from .memory import (
    MemoryBlock,
    MemoryStats,
    live_arrays,
    memory_stats,
    reset_peak,
    track_memory,
    trim,
)
from .metadata import FunctionMetadata, TensorSpec
from .module import Module, load
from .tree import TreeDef

__all__ = [
    "LOCAL_SYNC_MAX_WORK",
    "LOCAL_SYNC_MAX_WORK_PER_OP",
    "SMALL_HOST_COPY_BYTES",
    "TASK_WORKER_GROUPS_MAX",
    "AotcRuntimeError",
    "ArgumentError",
    "Array",
    "ArtifactNotFoundError",
    "DeletedArrayError",
    "Device",
    "DeviceError",
    "DeviceMismatchError",
    "Function",
    "FunctionMetadata",
    "FunctionNotFoundError",
    "InvocationError",
    "LoadError",
    "MemoryBlock",
    "MemoryStats",
    "Module",
    "OutOfMemoryError",
    "RawSignature",
    "ReuseConfig",
    "ShapeError",
    "TensorSpec",
    "TrackedArray",
    "TreeDef",
    "allocator_specs",
    "configure_reuse",
    "default_device_uri",
    "device_put",
    "get_device",
    "live_arrays",
    "load",
    "memory_stats",
    "reset_peak",
    "reuse_config",
    "track_memory",
    "trim",
]
