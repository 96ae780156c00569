"""``Array``: a function result (or an uploaded array) living in a device buffer.

An Array keeps a reference to what its buffer needs: the device, and for results the
loaded module's VM context. Buffers must not outlive their device (IREE crashes at
process exit when a local-task result is released after its device), so every object
that can hold the buffer, including host views handed to numpy, is arranged to release
the buffer before the device: see ``_HostView`` and the note on ``__slots__``.
"""

from __future__ import annotations

import importlib
import math
import operator
import weakref
from typing import Any

import iree.runtime as rt
import numpy as np

from . import dtypes
from .allocator import read_back
from .device import Device, get_device
from .errors import ArgumentError, DeletedArrayError
from .ledger import out_of_memory
from .sharing import VIEWS, is_shared, mark_shared
from .subclasses import subclass_refusal

# Results up to this size are copied to the host when first read; larger ones are read
# in place (zero-copy). Copying 16 KiB costs about what the zero-copy view's keep-alive
# wrapper costs (~1 us), and a copy needs no tie to the device buffer.
SMALL_HOST_COPY_BYTES = 16 * 1024

_DEVICE_LOCAL = int(rt.MemoryType.DEVICE_LOCAL)
_DEFAULT_USAGE = int(rt.BufferUsage.DEFAULT)
# Unsigned dtypes travel as signless integers; DLPack consumers get the exact type. Keyed
# by the numpy dtype itself: reading ``dtype.name`` costs 1.9 us, a third of a result's
# first read-back.
_EXACT_ELEMENT_TYPES = {
    d.numpy: d.exact_element_type
    for d in dtypes.DTYPES.values() if d.exact_element_type != d.element_type
}

# Eager results (aotc.numpy outside a traced function): not committed to their device,
# as JAX's, so a function loaded on another device (Vulkan, CUDA) takes them by copying
# instead of refusing them. id -> weak reference, as SHARED.
UNCOMMITTED: dict[int, weakref.ref] = {}


def mark_uncommitted(array: Array) -> Array:
    key = id(array)
    UNCOMMITTED[key] = weakref.ref(array, lambda _ref, key=key: UNCOMMITTED.pop(key, None))
    return array


def is_committed(array: Array) -> bool:
    ref = UNCOMMITTED.get(id(array))
    return ref is None or ref() is not array


class Array:
    """An array in device memory: what aotc functions return and accept.

    ``np.asarray(a)`` (or ``a.to_host()``) gives a read-only numpy array, zero-copy when
    the device shares memory with the host (the CPU drivers); passing ``a`` to another
    function uses the device buffer directly. Operators, indexing and the ndarray methods
    (``x.sum()``, ``x.T``, ``x.at[i].set(v)``) return new Arrays computed as under
    ``aotc.jit`` (aotc/eager.py); with the runtime alone (no compiler installed) numpy
    computes them on the host and returns numpy arrays.

    Example (``double.vmfb`` from the ``aotc.runtime`` example):
      >>> y = runtime.load("double.vmfb").double(np.arange(3, dtype=np.float32))
      >>> y.shape, y.dtype, y.device
      ((3,), dtype('float32'), Device('local-sync'))
      >>> np.asarray(y)
      array([0., 2., 4.], dtype=float32)
      >>> y + 1
      Array([1., 3., 5.], dtype=float32)
    """

    # CPython clears slots in alphabetical order when an object dies: "_bv" and "_host"
    # (which hold the buffer) must sort before "_owner" (which holds the device), so the
    # buffer is always released first.
    __slots__ = ("__weakref__", "_bv", "_deleted", "_dtype", "_host", "_owner", "_shape")

    def __init__(self, buffer_view: rt.HalBufferView, dtype: np.dtype, owner: Any,
                 shape: tuple[int, ...] | None = None) -> None:
        # owner: what keeps the buffer's device (and context) alive; has ``.device``.
        # shape: the buffer view's, where the caller knows it (a static result shape).
        self._bv = buffer_view
        self._dtype = dtype
        self._owner = owner
        self._host = None
        self._shape = tuple(buffer_view.shape) if shape is None else shape
        self._deleted = None

    # -- metadata (available even after delete) --------------------------------------
    # Read on every jitted call (its fast path keys on them): getters in C, not Python.

    shape = property(operator.attrgetter("_shape"), doc="The shape, a tuple of ints.")
    dtype = property(operator.attrgetter("_dtype"), doc="The numpy dtype.")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self._dtype.itemsize

    @property
    def device(self) -> Device:
        return self._owner.device

    # -- lifetime ---------------------------------------------------------------------

    def block_until_ready(self) -> Array:
        """Waits until the value is computed. Calls are synchronous today, so this only
        checks the array is alive; kept for code written against async runtimes."""
        self._live()
        return self

    def delete(self, reason: str | None = None) -> None:
        """Releases the device buffer now; any later use raises ``DeletedArrayError``.

        ``reason`` says why, and is shown in that error (e.g. "donated to step(),
        argument 'state'"). Host arrays already taken from it stay valid.
        """
        if self._deleted is not None:
            return
        self._deleted = reason or "delete() was called on it"
        self._host = None
        self._bv = None
        self._give_back()

    def _give_back(self) -> None:
        """Its bytes leave the device ledger (a tracked array that still holds them)."""
        led = getattr(self, "_led", None)
        if led is not None:
            led.in_use -= self._nbytes
            self._led = None

    def is_deleted(self) -> bool:
        return self._deleted is not None

    def _live(self) -> rt.HalBufferView:
        bv = self._bv
        if bv is None:
            raise DeletedArrayError(
                f"Array was deleted ({self._deleted}); it can no longer be read or passed "
                f"to a function. Use the array the call returned instead"
            )
        return bv

    # -- host access ------------------------------------------------------------------

    def to_host(self) -> np.ndarray:
        """The value as a read-only numpy array (cached; zero-copy when possible)."""
        host = self._host
        if host is None:
            host = self._fetch()
        return host

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        host = self._host
        if host is None:
            host = self._fetch()
        if dtype is None and not copy:
            return host
        if dtype is not None and np.dtype(dtype) != host.dtype:
            if copy is False:
                raise ValueError(
                    f"np.asarray(Array, copy=False): expected no copy, got a dtype change "
                    f"{host.dtype} -> {np.dtype(dtype)}, which needs one. Drop copy=False"
                )
            return host.astype(dtype)
        return host.copy() if copy else host

    def _fetch(self) -> np.ndarray:
        with VIEWS:  # not while a donation takes the buffer (see take_donated)
            host = self._host
            if host is None:
                host = self._host = self._read(self._live())
            return host

    def _read(self, bv: rt.HalBufferView) -> np.ndarray:
        dtype = self._dtype
        device = self._owner.device
        if device.is_host:
            raw = self._host_memory(bv)
        elif bv.byte_length == 0:
            raw = np.empty(self.shape, dtype)
        else:
            # Mapping device memory fails in this IREE's Python binding (std::bad_cast):
            # copy through imported host memory instead.
            return _copy_to_host(bv, device, self.shape, dtype)
        if raw.nbytes <= SMALL_HOST_COPY_BYTES:
            host = raw.copy()
            host.setflags(write=False)
            return host
        # A zero-copy view: the buffer lives as long as the view or this array, so the
        # view takes over this array's bytes in the ledger (released when both are gone).
        view = _HostView(raw, self._owner)
        led = getattr(self, "_led", None)
        if led is not None:
            view._hold = _Hold(led, self._nbytes)
            self._led = None
        return np.asarray(view)

    def _host_memory(self, bv: rt.HalBufferView) -> np.ndarray:
        """The buffer ``bv`` of this array on a CPU device, as a numpy array over its
        memory, with no copy. DLPack gives the buffer's host address with no mapping
        call: the cheapest way to read a result (~0.4 us against ~1.6 us to map)."""
        raw = np.from_dlpack(_Export(self, bv))
        return raw if raw.dtype is self._dtype else raw.view(self._dtype)

    def __dlpack__(self, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        """DLPack export (zero-copy), e.g. ``np.from_dlpack(a)``, ``torch.from_dlpack(a)``.

        On a CPU device, a consumer of DLPack 1.0 or later (numpy 2.1, torch 2.4, JAX)
        gets the read-only host view ``np.asarray(a)`` gives: it keeps the device alive,
        and while the consumer holds it a donation of ``a`` copies the buffer instead of
        overwriting it. Older consumers and GPU devices get IREE's capsule of the device
        buffer, whose holders cannot be seen: a donation of ``a`` always copies then."""
        if max_version is not None and tuple(max_version) >= (1, 0) and \
                self._owner.device.is_host:
            return self.to_host().__dlpack__(stream=stream, max_version=max_version,
                                             dl_device=dl_device, copy=copy)
        with VIEWS:
            capsule = _Export(self, self._live()).__dlpack__()
            mark_shared(self)  # held where no reference count shows it
        return capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._owner.device.dlpack_device

    # -- Python protocols ---------------------------------------------------------------

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d Array)")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d Array")
        return (self[i] for i in range(self.shape[0]))

    def __setitem__(self, index: Any, value: Any) -> None:
        raise TypeError(
            "Array does not support item assignment: runtime arrays are immutable, as JAX's. "
            "Use x = x.at[index].set(value) (a new array), or write into a numpy copy "
            "(np.array(x))"
        )

    def __bool__(self) -> bool:
        return bool(self.to_host())

    def __int__(self) -> int:
        return int(self.to_host())

    def __float__(self) -> float:
        return float(self.to_host())

    def __complex__(self) -> complex:
        return complex(self.to_host())

    def __index__(self) -> int:
        return operator.index(self.to_host())

    def __format__(self, spec: str) -> str:
        host = self.to_host()
        return format(host[()] if host.ndim == 0 else host, spec)

    def item(self, *args: Any) -> Any:
        return self.to_host().item(*args)

    def tolist(self) -> Any:
        return self.to_host().tolist()

    def tobytes(self, order: str = "C") -> bytes:
        return self.to_host().tobytes(order)

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def weak_type(self) -> bool:
        return False

    def devices(self) -> set:
        """The devices holding this array (one), as ``jax.Array.devices()``."""
        return {self.device}

    def copy_to_host_async(self) -> None:
        """Starts copying to the host: calls are synchronous, so the value is ready and
        ``np.asarray`` reads it without waiting. Kept for code written against JAX."""
        self._live()

    @property
    def at(self) -> Any:
        """JAX's functional updates: ``x.at[i].set(v)``, ``.add(v)``, ``.get()``, ... return
        new arrays (needs the compiler)."""
        return _computed("at")(self)

    # -- pickling and copies: the value and the device's URI --------------------------

    def __reduce__(self) -> tuple:
        return (_unpickle, (np.array(self.to_host()), self.device.uri))

    def __copy__(self) -> Array:
        return device_put(np.array(self.to_host()), self.device)

    def __deepcopy__(self, memo: dict) -> Array:
        return self.__copy__()

    def __repr__(self) -> str:
        if self._deleted is not None:
            return f"Array(<deleted: {self._deleted}>, shape={self.shape}, dtype={self._dtype})"
        body = np.array2string(self.to_host(), separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self._dtype})"

    # binary operators with a numpy array on the left come here (ndarray defers)
    __array_priority__ = 100
    __hash__ = None  # elementwise __eq__, as numpy


class TrackedArray(Array):
    """An ``Array`` whose bytes are in its device's memory ledger (``memory_stats``):
    results and ``device_put`` arrays larger than ``SMALL_HOST_COPY_BYTES``. It gives
    them back when it is deleted or dies. Smaller arrays are not tracked: that keeps the
    tiny call fast, and their bytes are rounding error next to the arrays that matter."""

    __slots__ = ("_led", "_nbytes")

    def __init__(self, buffer_view: rt.HalBufferView, dtype: np.dtype, owner: Any,
                 nbytes: int, ledger: Any, shape: tuple[int, ...] | None = None) -> None:
        # nbytes, ledger: the caller has added the bytes to the ledger.
        Array.__init__(self, buffer_view, dtype, owner, shape)
        self._nbytes = nbytes
        self._led = ledger

    def __del__(self) -> None:
        led = self._led
        if led is not None:
            led.in_use -= self._nbytes


def host_array(x: Any, where: str) -> tuple[np.ndarray, Any]:
    """``x`` as a C-contiguous ndarray with its dtype-table entry; a dtype the runtime
    cannot pass raises ``ArgumentError`` naming ``where``."""
    if type(x) is not np.ndarray and isinstance(x, np.ndarray):
        refusal = subclass_refusal(x, where)
        if refusal is not None:
            raise ArgumentError(refusal)
    host = c_contiguous(x)
    entry = dtypes.from_numpy(host.dtype)
    if entry is None:
        raise ArgumentError(
            f"{where}: expected an array of one of the dtypes {dtypes.SUPPORTED}, got "
            f"{type(x).__name__} of dtype {host.dtype}. Convert it first, e.g. "
            f"np.asarray(x, np.float32)"
        )
    return host, entry


def make_array(buffer_view: rt.HalBufferView, dtype: np.dtype, owner: Any, nbytes: int,
               ledger: Any, shape: tuple[int, ...] | None = None) -> Array:
    """An ``Array`` for a new buffer of ``nbytes``: tracked in ``ledger`` when large
    (the caller adds the bytes of tracked arrays, see ``tracked``)."""
    if nbytes > SMALL_HOST_COPY_BYTES:
        return TrackedArray(buffer_view, dtype, owner, nbytes, ledger, shape)
    return Array(buffer_view, dtype, owner, shape)


def reshaped(array: Array, shape: tuple) -> Array:
    """``array`` (a new result nobody else holds) under another shape of the same size,
    sharing its buffer: the new array takes over its ledger entry."""
    bv = array._live()
    new = rt.HalBufferView(bv.get_buffer(), tuple(shape), bv.element_type)
    led = getattr(array, "_led", None)
    if led is None:
        return Array(new, array.dtype, array._owner)
    out = TrackedArray(new, array.dtype, array._owner, array._nbytes, led)
    array._led = None
    return out


def adopt(array: Array, new: Array) -> None:
    """``array`` (an argument a call wrote into: numpy's in-place update) takes the value
    of ``new`` (the result holding it): its buffer, device and ledger entry, so the
    caller's Array object holds the new value without a copy. ``new`` is left empty.
    Done under ``VIEWS``, so a thread reading ``array`` sees its old value, the new one
    or (while the call holds a donated buffer) ``DeletedArrayError``, never a mix."""
    with VIEWS:
        array._give_back()  # the old buffer's bytes, if it still counted them
        array._bv, new._bv = new._bv, None
        array._owner = new._owner
        array._host = None
        array._shape = new._shape
        array._deleted = None
        new._deleted = "its buffer now belongs to the argument written into"
        led = getattr(new, "_led", None)
        if led is not None:
            if isinstance(array, TrackedArray):  # it takes over the ledger entry
                array._led, array._nbytes = led, new._nbytes
                new._led = None
            else:  # an untracked Array cannot carry one: the bytes leave the ledger
                new._give_back()
    if is_shared(new):  # another result holds the same buffer
        mark_shared(array)


def tracked(nbytes: int) -> int:
    """The bytes an array of ``nbytes`` adds to the ledger (0 when it is not tracked)."""
    return nbytes if nbytes > SMALL_HOST_COPY_BYTES else 0


# Operators and ndarray methods: computed as a traced array computes them (aotc/eager.py),
# returning Arrays, when the compiler is installed; with the runtime alone, by numpy on
# the host (returning numpy arrays).
OPERATORS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
             "xor", "lshift", "rshift")
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
UNARY = ("neg", "pos", "abs", "invert")
METHODS = (
    "all", "any", "argmax", "argmin", "argpartition", "argsort", "astype", "choose", "clip",
    "compress", "conj", "conjugate", "copy", "cumprod", "cumsum", "diagonal", "dot",
    "flatten", "max", "mean", "min", "nonzero", "prod", "ptp", "ravel", "repeat", "reshape",
    "round", "searchsorted", "sort", "squeeze", "std", "sum", "swapaxes", "take", "trace",
    "transpose", "var", "view", "__getitem__",
)
PROPERTIES = ("T", "mT", "real", "imag")
# Methods numpy's ndarray has in place or not at all: computed by these functions instead.
_HOST_FUNCTIONS = {"sort": np.sort, "ptp": np.ptp, "argpartition": np.argpartition,
                   "mT": lambda x: np.swapaxes(x, -1, -2)}

_engine: Any = None


def _compute(name: str, array: Array, args: tuple, kwargs: dict) -> Any:
    global _engine
    if _engine is None:
        # The compiler, where it is installed, computes as under jit (results are
        # Arrays). It sits above the runtime, so it is found by name, not imported.
        try:
            _engine = importlib.import_module("aotc.eager").array_method
        except ImportError:
            _engine = _on_host
    return _engine(name, array, args, kwargs)


def _on_host(name: str, array: Array, args: tuple, kwargs: dict) -> Any:
    if name == "at":
        raise ImportError("x.at[...] on a runtime Array needs the compiler: "
                          "pip install iree-base-compiler")
    host = array.to_host()
    args = tuple(a.to_host() if isinstance(a, Array) else a for a in args)
    if name in _HOST_FUNCTIONS:
        return _HOST_FUNCTIONS[name](host, *args, **kwargs)
    value = getattr(host, name)
    return value if name in PROPERTIES else value(*args, **kwargs)


def _computed(name: str) -> Any:
    return lambda self, *args, **kwargs: _compute(name, self, args, kwargs)


def _unpickle(value: np.ndarray, device_uri: str) -> Array:
    return device_put(value, device_uri)


for _name in OPERATORS:
    setattr(Array, f"__{_name}__", _computed(f"__{_name}__"))
    setattr(Array, f"__r{_name}__", _computed(f"__r{_name}__"))
for _name in COMPARISONS + UNARY:
    setattr(Array, f"__{_name}__", _computed(f"__{_name}__"))
for _name in METHODS:
    setattr(Array, _name, _computed(_name))
for _name in PROPERTIES:
    setattr(Array, _name, property(_computed(_name)))


class _Export:
    """IREE's DLPack capsule of an Array's device buffer (unsigned dtypes as themselves:
    results come back signless, INT_32 for uint32)."""

    __slots__ = ("_array", "_bv")

    def __init__(self, array: Array, bv: rt.HalBufferView) -> None:
        self._array = array
        self._bv = bv

    def __dlpack__(self, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        bv = self._bv
        array = self._array
        exact = _EXACT_ELEMENT_TYPES.get(array._dtype)
        if exact is not None and bv.element_type != exact:
            bv = rt.HalBufferView(bv.get_buffer(), bv.shape, exact)
        device = array._owner.device
        return device.hal.create_dlpack_capsule(bv, *device.dlpack_device)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._array._owner.device.dlpack_device


class _HostView:
    """Stands behind a zero-copy host view: numpy keeps it alive as long as the view, and
    it keeps the device alive until the buffer is gone. (numpy reads ``__array_struct__``
    and records this object in the view's base; ~0.8 us, half of ``__array_interface__``.)

    Slots are cleared alphabetically: "__array_struct__" and "_array" (they hold the
    buffer) before "_owner".
    """

    __slots__ = ("__array_struct__", "_array", "_hold", "_owner")

    def __init__(self, array: np.ndarray, owner: Any) -> None:
        self._array = array
        self._owner = owner
        self._hold = None
        self.__array_struct__ = array.__array_struct__


class _Hold:
    """Bytes in a device's memory ledger, given back when the last holder lets go."""

    __slots__ = ("_led", "_nbytes")

    def __init__(self, ledger: Any, nbytes: int) -> None:
        self._led = ledger
        self._nbytes = nbytes

    def __del__(self) -> None:
        self._led.in_use -= self._nbytes


def _copy_to_host(
    bv: rt.HalBufferView, device: Device, shape: tuple[int, ...], dtype: np.dtype
) -> np.ndarray:
    """Copies a buffer the host cannot map (GPU memory) into host memory (see
    ``allocator.read_back``)."""
    return read_back(device, bv, shape, dtype)


def device_put(x: Any, device: str | Device = "local-task") -> Array:
    """Copies a host array (or scalar) to ``device`` and returns it as an ``Array``.

    Example:
      >>> a = runtime.device_put(np.ones(4, np.float32), "local-sync")
      >>> a, a.device
      (Array([1., 1., 1., 1.], dtype=float32), Device('local-sync'))
    """
    device = get_device(device)
    if isinstance(x, Array):
        if x.device is device:
            return x
        x = x.to_host()
    host, entry = host_array(x, "device_put")
    ledger = device.ledger
    nbytes = host.nbytes
    ledger.request(nbytes, "device_put", device)
    try:
        bv = device.hal.allocator.allocate_buffer_copy(
            _DEVICE_LOCAL, _DEFAULT_USAGE, device.hal, host, entry.element_type
        )
    except (ValueError, RuntimeError) as e:
        if "RESOURCE_EXHAUSTED" in str(e) or "out of memory" in str(e).lower():
            raise out_of_memory("device_put", device, nbytes, str(e)) from e
        raise
    in_use = ledger.in_use + tracked(nbytes)
    ledger.in_use = in_use
    ledger.peak = max(ledger.peak, in_use)
    ledger.num_allocs += 1
    ledger.bytes_allocated += nbytes
    return make_array(bv, entry.numpy, device, nbytes, ledger)


def c_contiguous(x: Any) -> np.ndarray:
    """``x`` as a C-contiguous ndarray (IREE copies from contiguous memory only).
    Unlike ``np.ascontiguousarray`` it keeps 0-d arrays 0-d."""
    array = np.asarray(x)
    return array if array.flags.c_contiguous else np.ascontiguousarray(array)
