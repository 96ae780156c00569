"""``load`` and ``Module``: a ``.vmfb`` artifact loaded on a device.

Loading checks the container before IREE reads it (``integrity.verify_container``:
every zip member's CRC-32, the layout IREE reads, the aotc seal's SHA-256), reads and
checks the aotc metadata of every function (from ``iree.reflection``; ``schema.py``)
against the function's ABI, picks a device when none is given, and links the module
into its own ``VmContext`` right away, so a damaged artifact, or one compiled for another
target, fails here with a ``LoadError`` and not at its first call.

Modules pickle as their ``.vmfb`` bytes and the URI of their device, and a process loads
each (bytes, device) pair it unpickles once (``unpickle_cache_info``), so tasks shipped
to worker processes (dask, Ray, ``concurrent.futures``) can carry the module itself.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import pickle
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any, NamedTuple, Union

import iree.runtime as rt

from .device import Device, default_device_uri, get_device, vm_instance
from .errors import (
    AotcRuntimeError,
    ArtifactNotFoundError,
    DeviceError,
    FunctionNotFoundError,
    LoadError,
)
from .function import Function, RawSignature
from .integrity import check_abi, check_expected_sha256, verify_container
from .metadata import FunctionMetadata
from .targets import (
    device_runs,
    device_targets,
    family_of,
    gpu_driver,
    host_arch,
    split_targets,
)

PathOrBytes = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]

_REEXPORT = "re-export it with aotc.export or aotc compile"


class _Loaded:
    """What running a function needs alive, and so what every result keeps alive.

    It pickles as its module (``Module`` and ``Function`` pickle through it, so a module
    and its functions pickled together carry the bytes once): the ``.vmfb`` bytes, their
    SHA-256 (computed once), the device URI and ``where``.

    Slots are cleared alphabetically when it dies: the context goes before the device.
    """

    __slots__ = ("context", "device", "digest", "hal_module", "sha256", "vm_module", "where")

    def __init__(self, context: rt.VmContext, device: Device, hal_module: rt.VmModule,
                 vm_module: rt.VmModule, where: str, sha256: str = "") -> None:
        self.context = context
        self.device = device
        self.digest: str | None = None  # of the whole blob, for unpickling
        self.hal_module = hal_module
        self.sha256 = sha256  # the artifact's (integrity.artifact_sha256)
        self.vm_module = vm_module
        self.where = where

    def __reduce_ex__(self, protocol: Any) -> tuple:
        # IREE keeps its (aligned) copy of the bytes with the module: pickle that, not a
        # second copy held for the purpose. Protocol 5 passes it as a buffer, which
        # dask's serialization sends out of band, without copying it.
        vmfb = memoryview(self.vm_module.stashed_flatbuffer_blob)
        if self.digest is None:
            self.digest = hashlib.sha256(vmfb).hexdigest()
        blob = pickle.PickleBuffer(vmfb) if protocol >= 5 else vmfb.tobytes()
        return (_unpickle, (self.digest, blob, self.device.uri, self.where))


def load(path_or_bytes: PathOrBytes, device: str | Device | None = None, *,
         expected_sha256: str | None = None) -> Module:
    """Loads an exported artifact (``.vmfb``) for running.

    A ``.vmfb`` is native code for its target: loading one runs what its author
    compiled, so load only artifacts from a source you trust. ``load`` detects damage,
    not malice: before IREE reads the bytes it checks every zip member's CRC-32, the
    container's layout, the SHA-256 that aotc seals into every artifact it writes, the
    metadata's schema, and each function's metadata against its compiled ABI; a device
    that must run only a given build pins it with ``expected_sha256``.

    Example (``double.vmfb`` from the ``aotc.runtime`` example: ``2 * x`` of a float32[3]):
      >>> m = runtime.load("double.vmfb")
      >>> m.device  # none given: an artifact of small functions runs on local-sync
      Device('local-sync')
      >>> m.double(np.ones(3, np.float32))
      Array([2., 2., 2.], dtype=float32)
      >>> with open("double.vmfb", "rb") as f:
      ...     m2 = runtime.load(f.read(), device="local-task", expected_sha256=m.sha256)
      >>> m2.where, m2.device
      ('<... bytes>', Device('local-task'))

    Args:
      path_or_bytes: a path (str or PathLike), or the artifact's bytes.
      device: a device URI ("local-task", "local-sync", "vulkan", "cuda", ...), a
        ``Device`` from ``get_device``, or None to choose from the artifact's targets
        (``default_device_uri``): this machine's CPU when the artifact has code for it
        (local-sync when every function is small, ``LOCAL_SYNC_MAX_WORK``, else
        local-task), else its first GPU target's driver. An artifact for several targets
        ("cpu,aarch64,vulkan") runs on any device one of them fits.
      expected_sha256: the artifact's SHA-256 as 64 hex digits (``Module.sha256``,
        ``Artifact.sha256``, ``aotc inspect --verify``; ``sha256sum`` of an unsealed
        file): any other artifact is a ``LoadError``.
    Raises:
      ArtifactNotFoundError: the path does not exist (a ``FileNotFoundError``).
      LoadError: not an intact ``.vmfb`` (the message names the damaged part), not the
        pinned one, metadata that is unreadable or disagrees with the code, or compiled
        for no target the device runs; the message lists the artifact's targets, what
        the device runs, and the target to compile for.
      DeviceError: the device cannot be created.
    """
    data, where = _read(path_or_bytes)
    return _load(data, where, device, expected_sha256)


def _load(data: Any, where: str, device: str | Device | None,
          expected_sha256: str | None = None) -> Module:
    container = verify_container(data, where)  # before IREE reads a byte of it
    if expected_sha256 is not None:
        check_expected_sha256(container, expected_sha256, where)
    instance = vm_instance()
    try:
        vm_module = rt.VmModule.copy_buffer(instance, data)
        vm_functions = {
            name: vm_module.lookup_function(name)
            for name in vm_module.function_names
            if not name.startswith("__")  # IREE's own entry points (__init)
        }
    except Exception as e:  # noqa: BLE001 - IREE's verifier: ValueError, RuntimeError, ...
        raise LoadError(f"{where}: not a valid .vmfb ({e}); {_REEXPORT}") from e
    metadata = {name: _read_metadata(where, name, fn) for name, fn in vm_functions.items()}
    dev = get_device(device if device is not None else default_device_uri(metadata.values()))
    hal_module = dev.hal_module()
    try:
        context = rt.VmContext(instance, modules=[hal_module, vm_module])
    except (ValueError, RuntimeError) as e:
        raise LoadError(_link_error(where, metadata, dev, e)) from e
    loaded = _Loaded(context, dev, hal_module, vm_module, where, container.sha256)
    try:
        functions = {
            name: Function(name, fn, metadata[name], loaded) for name, fn in vm_functions.items()
        }
    except AotcRuntimeError:
        raise  # an OutOfMemoryError of the preallocation budget says what it needs
    except Exception as e:  # noqa: BLE001 - metadata the checks let through: still a LoadError
        raise LoadError(f"{where}: {e}; {_REEXPORT}") from e
    return Module(loaded, functions, where)


def _read(path_or_bytes: PathOrBytes) -> tuple[Any, str]:
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return path_or_bytes, f"<{len(path_or_bytes)} bytes>"
    try:
        path = os.fspath(path_or_bytes)
    except TypeError:
        raise TypeError(
            f"load: expected a path (str or os.PathLike) or bytes, got "
            f"{type(path_or_bytes).__name__}"
        ) from None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    try:
        with open(path, "rb") as f:
            return f.read(), path
    except FileNotFoundError as e:
        error = ArtifactNotFoundError(
            f"{path}: expected a .vmfb file, got no such file. Check the path, or export "
            f"the function first (aotc.export or aotc compile)"
        )
        error.filename = path
        raise error from e
    except IsADirectoryError as e:
        raise LoadError(f"{path}: expected a .vmfb file, got a directory") from e


def _read_metadata(where: str, name: str, fn: rt.VmFunction) -> FunctionMetadata | None:
    try:
        meta = FunctionMetadata.from_reflection(fn.reflection)
    except Exception as e:  # noqa: BLE001 - any record that does not read is a LoadError
        raise LoadError(
            f"{where}: function {name}: expected aotc metadata, got an unreadable record "
            f"({e}); {_REEXPORT}"
        ) from e
    if meta is not None:
        check_abi(where, name, fn, meta)
    return meta


MAX_IREE_TEXT = 240


def _link_error(where: str, metadata: dict, device: Device, error: Exception) -> str:
    text = str(error).strip()
    targets = list(dict.fromkeys(
        t for m in metadata.values() if m is not None for t in split_targets(m.target)))
    fits = [t for t in targets if device_runs(device.uri, t)]
    # IREE: no code for the device's kind ("INCOMPATIBLE ... not found or unavailable"), or
    # GPU code the device's generation cannot load.
    wrong_device = any(s in text for s in (
        "INCOMPATIBLE", "not found or unavailable", "NO_BINARY_FOR_GPU",
        "UNSUPPORTED_PTX_VERSION", "INVALID_PTX", "executable format"))
    if len(text) > MAX_IREE_TEXT:  # IREE repeats every device target in full
        text = text[:MAX_IREE_TEXT] + " ..."
    if not (wrong_device or (targets and not fits)):
        return f"{where}: could not be linked on device {device.uri!r} ({text}); {_REEXPORT}"
    compiled_for = (f"target{'s' * (len(targets) != 1)} {', '.join(targets)}" if targets
                    else "another target")
    runs = device_targets(device.uri)
    kind = (f"{host_arch()} CPU code" if device.driver in ("local-sync", "local-task")
            else f"{device.driver} code")
    others = [t for t in targets if not device_runs(device.uri, t)]
    places = list(dict.fromkeys(_where_it_runs(t) for t in others))
    elsewhere = f", or load it where its code runs: {' or '.join(places)}" if places else ""
    # Another target for the same GPU driver cannot join (one per driver): replace it.
    same_driver = any(gpu_driver(t) == device.driver for t in targets)
    add = (f" (or add it: target='{','.join(targets + runs[:1])}')"
           if targets and not same_driver else "")
    return (
        f"{where}: compiled for {compiled_for}, which device {device.uri!r} cannot run: it "
        f"runs {kind} (targets {', '.join(runs)}). Re-export it for target "
        f"'{runs[0]}'{add}{elsewhere}. (IREE: {text})"
    )


def _where_it_runs(target: str) -> str:
    driver = gpu_driver(target)
    if driver is not None:
        return f"device={driver!r}"
    family = family_of(target)
    if family is not None and family.arch and family.arch != host_arch():
        return f"{family.arch} hardware"
    return "device='local-task'"


class Signatures(dict):
    """A dict of function signatures that prints one readable signature per line."""

    def __repr__(self) -> str:
        return "{" + ",\n ".join(f"{name!r}: {sig}" for name, sig in self.items()) + "}"


class Module:
    """A loaded artifact. Call its functions as attributes or items.

    Example (``double.vmfb`` from the ``aotc.runtime`` example):
      >>> m = runtime.load("double.vmfb")
      >>> print(m.functions["double"])
      double(x: float32[3]) -> (out: float32[3])
      >>> x = np.arange(3, dtype=np.float32)
      >>> m.double(x), m["double"](x)
      (Array([0., 2., 4.], dtype=float32), Array([0., 2., 4.], dtype=float32))

    A function named like one of the attributes below is reachable only as an item.
    """

    def __init__(self, loaded: _Loaded, functions: dict[str, Function], where: str) -> None:
        self._loaded = loaded
        self._functions = functions
        self._where = where
        for name, fn in functions.items():
            # Functions as instance attributes: ``module.f`` is then a dict hit, not a
            # failed lookup falling back to __getattr__ (~1 us per call).
            if name.isidentifier() and not name.startswith("_") and not hasattr(Module, name):
                self.__dict__[name] = fn

    @property
    def where(self) -> str:
        """The artifact's path, or ``<N bytes>`` when loaded from bytes."""
        return self._where

    @property
    def functions(self) -> Signatures:
        """Function name -> signature: ``FunctionMetadata`` (or ``RawSignature`` for a
        function compiled without aotc), whose ``str()`` reads like a Python signature."""
        return Signatures(
            (name, fn.metadata if fn.metadata is not None
             else RawSignature(name, fn._vm_function.reflection.get("iree.abi.declaration")))
            for name, fn in self._functions.items()
        )

    @property
    def metadata(self) -> dict[str, FunctionMetadata | None]:
        """Function name -> aotc metadata (None for functions compiled without aotc)."""
        return {name: fn.metadata for name, fn in self._functions.items()}

    @property
    def device(self) -> Device:
        return self._loaded.device

    @property
    def sha256(self) -> str:
        """The artifact's SHA-256 (64 hex digits), as ``load(..., expected_sha256=...)``
        takes it: the digest aotc sealed into it, or the whole file's for an unsealed one."""
        return self._loaded.sha256

    @property
    def vm_module(self) -> rt.VmModule:
        return self._loaded.vm_module

    def __getitem__(self, name: str) -> Function:
        try:
            return self._functions[name]
        except (KeyError, TypeError):
            raise self._not_found(name) from None

    def __getattr__(self, name: str) -> Function:
        if name.startswith("_"):
            raise AttributeError(name)  # internals (copy, pickle probing), never functions
        try:
            return self._functions[name]
        except KeyError:
            raise self._not_found(name) from None

    def _not_found(self, name: Any) -> FunctionNotFoundError:
        available = ", ".join(sorted(self._functions)) or "(none)"
        return FunctionNotFoundError(
            f"{self._where}: expected one of the functions {available}, got {name!r}. "
            f"Call one of those, e.g. module[{next(iter(sorted(self._functions)), 'name')!r}](...)"
        )

    def __contains__(self, name: object) -> bool:
        return name in self._functions

    def __iter__(self) -> Iterator[str]:
        return iter(self._functions)

    def __len__(self) -> int:
        return len(self._functions)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._functions))

    def __repr__(self) -> str:
        """One line: the artifact, what it holds (``summary``), the device; ``functions``
        prints every signature."""
        shown = summary({name: fn.signature for name, fn in self._functions.items()})
        return f"<aotc Module {self._where}: {shown} on {self.device.uri}>"

    def __reduce__(self) -> tuple:
        """Pickles as the ``.vmfb`` bytes and the device URI (about the artifact's size),
        not the device; unpickling loads it on a device of that URI, once per process
        (``unpickle_cache_info``). Needs only the runtime, on both sides."""
        return (_module, (self._loaded,))

    def __copy__(self) -> Module:
        return self  # a loaded module does not change: a copy would be the same module

    def __deepcopy__(self, memo: dict) -> Module:
        return self


def _module(module: Module) -> Module:
    # Module.__reduce__'s reconstructor: its argument, the module's _Loaded, is
    # unpickled by _unpickle into the module already.
    return module


class UnpickleCacheInfo(NamedTuple):
    """``unpickle_cache_info()``: unpickles served by a module loaded before (``hits``),
    modules loaded by unpickling (``loads``), how many the cache holds (``size``) and
    the most it keeps (``capacity``)."""

    hits: int
    loads: int
    size: int
    capacity: int


# The modules unpickled in this process, by (SHA-256 of the .vmfb, device URI), least
# recently used first. Strong references, at most UNPICKLE_CACHE_SIZE of them: with weak
# ones a module would die with the task that carried it (a dask worker drops a task's
# arguments when the task ends), and the next task would load it again.
UNPICKLE_CACHE_SIZE = 8
_unpickled: OrderedDict[tuple[str, str], Module] = OrderedDict()
_unpickle_lock = threading.Lock()  # one load per key, whichever thread unpickles first
_unpickle_counts = {"hits": 0, "loads": 0}


def _unpickle(digest: str, vmfb: Any, device_uri: str, where: str) -> Module:
    key = (digest, device_uri)
    with _unpickle_lock:
        module = _unpickled.get(key)
        if module is not None:
            _unpickled.move_to_end(key)
            _unpickle_counts["hits"] += 1
            return module
        if hashlib.sha256(vmfb).hexdigest() != digest:
            raise LoadError(
                f"{where}: expected pickled .vmfb bytes with SHA-256 {digest[:16]}..., got "
                f"other bytes: the pickle was changed on its way. Pickle the module again"
            )
        try:
            device = get_device(device_uri)
        except DeviceError as e:
            raise DeviceError(
                f"{where}: expected device {device_uri!r} in this process (the module was "
                f"loaded on it where it was pickled), got none: {e}. Unpickle it where that "
                f"device exists, or pickle a module loaded on a device every process has, "
                f"e.g. runtime.load(..., device='local-task')"
            ) from e
        module = _load(vmfb, where, device)
        module._loaded.digest = digest
        _unpickled[key] = module
        _unpickle_counts["loads"] += 1
        while len(_unpickled) > UNPICKLE_CACHE_SIZE:
            _unpickled.popitem(last=False)
        return module


def unpickle_cache_info() -> UnpickleCacheInfo:
    """How this process served the modules it unpickled: a module (or a ``Function``)
    pickled once and unpickled by a thousand tasks in one worker process is loaded once,
    the other unpickles return that module. The cache keys are the SHA-256 of the
    ``.vmfb`` and the device URI; it keeps the ``UNPICKLE_CACHE_SIZE`` (8) most recently
    unpickled modules loaded.

    Example (``double.vmfb`` from the ``aotc.runtime`` example):
      >>> import pickle
      >>> m = runtime.load("double.vmfb")
      >>> runtime.clear_unpickle_cache()
      >>> a, b = pickle.loads(pickle.dumps(m)), pickle.loads(pickle.dumps(m.double))
      >>> a["double"] is b  # one load: the function is the unpickled module's
      True
      >>> runtime.unpickle_cache_info()
      UnpickleCacheInfo(hits=1, loads=1, size=1, capacity=8)
    """
    with _unpickle_lock:
        return UnpickleCacheInfo(_unpickle_counts["hits"], _unpickle_counts["loads"],
                                 len(_unpickled), UNPICKLE_CACHE_SIZE)


def clear_unpickle_cache() -> None:
    """Forgets the modules unpickled so far (they stay loaded while something holds
    them) and zeroes ``unpickle_cache_info``'s counts."""
    with _unpickle_lock:
        _unpickled.clear()
        _unpickle_counts.update(hits=0, loads=0)


# The cache keeps nothing loaded into interpreter teardown: its modules go while the
# runtime they need (devices, the VM instance) is still whole.
atexit.register(clear_unpickle_cache)


SUMMARY_CHARS = 100


def summary(signatures: dict[str, Any]) -> str:
    """What a module holds, for one-line reprs: its one function's signature (cut to
    ``SUMMARY_CHARS``) or its function names.

    >>> from aotc.runtime.module import summary
    >>> summary({"f": "f(x: float32[3]) -> (out: float32[3])"})
    'f(x: float32[3]) -> (out: float32[3])'
    >>> summary(dict.fromkeys(["a", "b", "c", "d", "e"], "..."))
    '5 functions (a, b, c, d, ...)'
    """
    names = list(signatures)
    if len(names) == 1:
        text = str(signatures[names[0]])
        return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 3] + "..."
    more = ", ..." if len(names) > 4 else ""
    return f"{len(names)} functions ({', '.join(names[:4])}{more})"
