"""aotc.runtime: load exported ``.vmfb`` artifacts and run them.

Depends only on numpy and ``iree.runtime`` (never on the compiler), so it runs on
machines that have neither MLIR nor the aotc compiler installed.

Example: export a one-line function with the compiler (``aotc.export``), then load and
call the artifact with this package alone:
  >>> art = aotc.export(lambda x: 2 * x, aotc.ShapeDtypeStruct((3,), "float32"),
  ...                   name="double")
  >>> art.save("double.vmfb")
  'double.vmfb'
  >>> from aotc import runtime
  >>> m = runtime.load("double.vmfb")
  >>> y = m.double(np.arange(3, dtype=np.float32))
  >>> y
  Array([0., 2., 4.], dtype=float32)
  >>> np.asarray(y).shape
  (3,)

The examples in this package's modules load this ``double.vmfb``.

A ``.vmfb`` is native code: loading one runs what its author compiled, so load only
artifacts from a source you trust. ``load`` detects damage before IREE reads the bytes
(every zip member's CRC-32, the SHA-256 aotc seals into each artifact, the metadata
against the compiled functions) and raises ``LoadError`` naming it; a call's failures are
``CallError``s. A device that must run only a given build pins it with
``load(..., expected_sha256=...)`` (``Module.sha256``, ``aotc inspect --verify``).
"""

from __future__ import annotations

from .allocator import ReuseConfig, configure_reuse, reuse_config
from .array import SMALL_HOST_COPY_BYTES, Array, TrackedArray, device_put
from .device import (
    CONTRACTION_WORK_WEIGHT,
    LOCAL_SYNC_MAX_WORK,
    LOCAL_SYNC_MAX_WORK_PER_OP,
    TASK_WORKER_GROUPS_MAX,
    Device,
    allocator_specs,
    default_device_uri,
    get_device,
    release_unused_devices,
)
from .errors import (
    AotcRuntimeError,
    ArgumentError,
    ArgumentOverflowError,
    ArtifactNotFoundError,
    CallError,
    DeletedArrayError,
    DeviceError,
    DeviceLimitError,
    DeviceMismatchError,
    FunctionNotFoundError,
    InvocationError,
    LoadError,
    OutOfMemoryError,
    ResultError,
    ShapeError,
)
from .function import Function, RawSignature
from .integrity import artifact_sha256
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
from .module import Module, UnpickleCacheInfo, clear_unpickle_cache, load, unpickle_cache_info
from .tree import TreeDef

__all__ = [
    "CONTRACTION_WORK_WEIGHT",
    "LOCAL_SYNC_MAX_WORK",
    "LOCAL_SYNC_MAX_WORK_PER_OP",
    "SMALL_HOST_COPY_BYTES",
    "TASK_WORKER_GROUPS_MAX",
    "AotcRuntimeError",
    "ArgumentError",
    "ArgumentOverflowError",
    "Array",
    "ArtifactNotFoundError",
    "CallError",
    "DeletedArrayError",
    "Device",
    "DeviceError",
    "DeviceLimitError",
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
    "ResultError",
    "ReuseConfig",
    "ShapeError",
    "TensorSpec",
    "TrackedArray",
    "TreeDef",
    "UnpickleCacheInfo",
    "allocator_specs",
    "artifact_sha256",
    "clear_unpickle_cache",
    "configure_reuse",
    "default_device_uri",
    "device_put",
    "get_device",
    "release_unused_devices",
    "live_arrays",
    "load",
    "memory_stats",
    "reset_peak",
    "reuse_config",
    "track_memory",
    "trim",
    "unpickle_cache_info",
]
