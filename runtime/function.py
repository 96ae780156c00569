"""``Function``: one exported function of a loaded module, and its call path.

The call path is built for small calls, where Python overhead is the cost: no
``SystemContext``/``FunctionInvoker``; per-argument expectations are precomputed at load;
numpy arguments that match exactly go straight to ``allocate_buffer_copy``; the VM
function is invoked on the module's own ``VmContext``. Argument and result lists are
created per call: the Python API cannot clear a ``VmVariantList`` (so an argument list
cannot be refilled), and a reused result list would keep the previous call's results
(device memory) alive until the next call, for ~0.1 us saved.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import iree.runtime as rt
import numpy as np

from . import dtypes
from .allocator import device_copy, preallocate
from .array import (
    SMALL_HOST_COPY_BYTES,
    Array,
    TrackedArray,
    adopt,
    device_put,
    host_array,
    is_committed,
    make_array,
    mark_shared,
    tracked,
)
from .device import forget_lost, shader_loop_refusal
from .errors import ArgumentError, DeviceMismatchError, InvocationError
from .integrity import check_result, result_checks
from .ledger import out_of_memory
from .metadata import FunctionMetadata
from .sharing import take_donated
from .tree import leaves_like, structure, unflatten
from .validate import ArgPlan, plan_args, prepare, structure_error

_DEVICE_LOCAL = int(rt.MemoryType.DEVICE_LOCAL)
_USAGE = int(rt.BufferUsage.DEFAULT)


class RawSignature:
    """The signature of a function compiled without aotc metadata, as IREE declares it."""

    def __init__(self, name: str, declaration: str | None) -> None:
        self.name = name
        self.signature = (
            declaration.split("@", 1)[-1] if declaration else f"{name}(...) (no signature recorded)"
        )

    def __str__(self) -> str:
        return self.signature

    def __repr__(self) -> str:
        return f"RawSignature({self.signature!r})"


class Function:
    """A callable exported function: ``module.predict(x)`` or ``module["predict"](x)``.

    Arguments may be numpy arrays, Python scalars or ``Array``s, nested as the function
    was exported; results come back as ``Array``s in the exported result structure.

    Example (``double.vmfb`` from the ``aotc.runtime`` example):
      >>> f = runtime.load("double.vmfb")["double"]
      >>> print(f.signature)
      double(x: float32[3]) -> (out: float32[3])
      >>> y = f(np.arange(3, dtype=np.float32))
      >>> y, f(y)  # an Array result passed on as an argument
      (Array([0., 2., 4.], dtype=float32), Array([0., 4., 8.], dtype=float32))
    """

    def __init__(
        self, name: str, vm_function: rt.VmFunction, metadata: FunctionMetadata | None, loaded: Any
    ) -> None:
        # loaded: the module's runtime state (context, device); results keep it alive.
        self.name = name
        self.metadata = metadata
        self.signature = (
            metadata.signature if metadata is not None
            else str(RawSignature(name, vm_function.reflection.get("iree.abi.declaration")))
        )
        self._vm_function = vm_function
        self._loaded = loaded
        self._device = loaded.device
        if metadata is None:
            return
        in_tree, out_tree = metadata.in_tree, metadata.out_tree
        # The common tree shapes, so most calls skip flatten/unflatten.
        self._flat_in = in_tree.kind == "tuple" and all(c.kind == "leaf" for c in in_tree.children)
        self._single_out = out_tree.kind == "leaf"
        self._tuple_out = out_tree.kind == "tuple" and all(
            c.kind == "leaf" for c in out_tree.children
        )
        self.call_flat = _build_call_flat(  # type: ignore[method-assign]
            metadata, plan_args(metadata), loaded
        )
        if metadata.mutated:
            self.call_flat = _writing_back(metadata, self.call_flat)  # type: ignore[method-assign]
        refused = shader_loop_refusal(metadata, self._device)  # calls that would be cut short
        if refused is not None:
            self.call_flat = refused  # type: ignore[method-assign]
        if self._device.ledger.limit is not None:
            # A preallocation budget: reserve this function's argument and result buffers
            # in the reuse cache now, so its first calls take no memory from the system.
            preallocate(self._device, [_spec_bytes(s) for s in (*metadata.args, *metadata.results)])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise ArgumentError(
                f"{self.name}(): expected positional arguments only, got keyword arguments "
                f"{', '.join(sorted(kwargs))}. Pass them by position: {self.signature}"
            )
        meta = self.metadata
        if meta is None:
            outs = self.call_flat(args)
            return outs[0] if len(outs) == 1 else (tuple(outs) if outs else None)
        if self._flat_in:
            # Every argument should be an array: call_flat checks them all (and reports
            # the structure it was given when one is a tuple/list/dict).
            outs = self.call_flat(args)
        else:
            leaves = leaves_like(meta.in_tree, args)
            if leaves is None:
                raise structure_error(meta, structure(args))
            outs = self.call_flat(leaves)
        if self._single_out:
            return outs[0]
        if self._tuple_out:
            return tuple(outs)
        return unflatten(meta.out_tree, outs)

    def call_flat(self, leaves: list | tuple) -> list:
        """Calls with the flattened arguments; returns the flat list of results.

        The fast path for callers that flatten themselves (``aotc.jit``): a numpy
        argument of exactly the expected shape and dtype costs one tuple and one dtype
        comparison before it is copied to the device. Functions with metadata replace
        this method, per instance, by the closure from ``_build_call_flat``; this one
        serves functions without metadata, whose arguments only IREE checks.
        """
        args = rt.VmVariantList(len(leaves))
        hal = self._device.hal
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, Array):
                args.push_ref(_array_buffer(self.name, self._device, leaf, str(i)))
                continue
            array, entry = host_array(leaf, f"{self.name}(): argument {i}")
            args.push_ref(hal.allocator.allocate_buffer_copy(
                _DEVICE_LOCAL, _USAGE, hal, array, entry.element_type))
        results = rt.VmVariantList(4)
        try:
            self._loaded.context.invoke(self._vm_function, args, results)
        except (ValueError, RuntimeError) as e:
            raise _invocation_error(self, e) from e
        outs: list = []
        for i in range(len(results)):
            try:
                bv = results.get_as_object(i, rt.HalBufferView)
            except (ValueError, RuntimeError, TypeError):
                outs.append(results.get_variant(i))  # a scalar result
                continue
            outs.append(Array(bv, dtypes.result_dtype(bv.element_type), self._loaded))
        return outs

    def __repr__(self) -> str:
        return f"<aotc Function {self.signature} on {self._device.uri}>"

    def __reduce__(self) -> tuple:
        # As (module, name): the module's runtime state pickles as the module
        # (module.py), so a module and its functions pickled together carry it once.
        return (operator.getitem, (self._loaded, self.name))

    def __copy__(self) -> Function:
        return self  # a loaded function does not change: a copy would be the same

    def __deepcopy__(self, memo: dict) -> Function:
        return self


def _build_call_flat(
    meta: FunctionMetadata, plans: tuple[ArgPlan, ...], loaded: Any
) -> Callable[[list | tuple], list[Array]]:
    """The call path of one function, with everything it needs bound as closure
    variables (the cheapest lookups in CPython). It must not reference the Function it
    is stored on: that cycle would keep the module's context alive until the garbage
    collector runs.

    Functions that donate arguments, may return an argument's buffer (``aliases``), or
    run on a device whose argument buffers come from the runtime's pool take the
    general path (``_build_general_call``); this one is for everything else."""
    device = loaded.device
    if meta.donated or meta.aliases or device.pool is not None:
        return _build_general_call(meta, plans, loaded)
    # (shape, dtype, element type, bytes) per argument, unpacked in one step per call.
    expected = tuple((p.shape, p.dtype, p.element_type, _nbytes(p)) for p in plans)
    n_args = len(expected)
    in_bytes = sum(e[3] for e in expected)
    result_dtypes = tuple(dtypes.lookup(r.dtype).numpy for r in meta.results)
    result_bytes = tuple(_spec_bytes(r) for r in meta.results)
    out_bytes = sum(result_bytes)
    n_results = len(result_dtypes)
    # Large results are TrackedArrays, whose bytes the ledger holds (see array.py); a
    # function whose arguments and results are all small skips the peak bookkeeping.
    kept_bytes = sum(tracked(nb) for nb in result_bytes)
    track = in_bytes + out_bytes > SMALL_HOST_COPY_BYTES or any(
        not isinstance(d, int) for spec in (*meta.args, *meta.results) for d in spec.shape)
    single = (result_dtypes[0], result_bytes[0]) if n_results == 1 else None
    single_tracked = single is not None and tracked(single[1]) > 0
    # What each result must come back as: its element type and, for a static shape, the
    # shape as the list IREE gives (one int and one list compare per result per call).
    result_types, result_shapes, shape_tuples = result_checks(meta)
    kept = tuple(tracked(nb) for nb in result_bytes)
    results_spec = tuple(zip(range(n_results), result_dtypes, result_bytes, result_types,
                             result_shapes, (sum(kept[k:]) for k in range(n_results)),
                             shape_tuples))
    if single is not None:
        single = (*single, result_types[0], result_shapes[0], shape_tuples[0])
    hal = device.hal
    # local-sync and local-task arrays are both host memory: either is passed in place.
    on_host = device.is_host
    led = device.ledger
    # Calls, then Array arguments passed in place and their bytes, then bytes of
    # uploads whose size the metadata does not give: the ledger derives how many buffers
    # this function asked for from them (Ledger.totals), so a call with numpy arguments
    # pays one increment.
    counts = led.register(n_args, in_bytes, n_results, out_bytes)
    copy = hal.allocator.allocate_buffer_copy
    invoke = loaded.context.invoke
    vm_function = loaded.vm_module.lookup_function(meta.name)
    variant_list, buffer_view = rt.VmVariantList, rt.HalBufferView
    ndarray, array = np.ndarray, Array
    tracked_array, make = TrackedArray, make_array
    device_local, usage = _DEVICE_LOCAL, _USAGE

    def call_flat(leaves: list | tuple) -> list[Array]:
        if len(leaves) != n_args:
            raise structure_error(meta, structure(tuple(leaves)))
        args = variant_list(n_args)
        push = args.push_ref
        bindings = None
        in_place = placed = 0  # Array arguments passed in place, and their bytes
        extra = 0  # bytes of dynamically shaped uploads beyond the metadata's size
        for i, leaf in enumerate(leaves):
            shape, dtype, element_type, nb = expected[i]
            # "is": numpy's builtin dtypes are singletons; an equal but distinct dtype
            # object just takes the slow path, which compares with ==.
            kind = type(leaf)
            if kind is array or kind is tracked_array:
                bv = leaf._bv  # a live result of an earlier call: used in place
                if (leaf._dtype is dtype and leaf._shape == shape and bv is not None and (
                        leaf._owner.device is device
                        or (on_host and leaf._owner.device.is_host))):
                    push(bv)
                    in_place += 1
                    placed += nb
                    continue
            elif kind is ndarray and leaf.dtype is dtype and leaf.shape == shape:
                try:
                    push(copy(device_local, usage, hal, leaf, element_type))
                    continue
                except ValueError:
                    pass  # not C-contiguous: the slow path makes a contiguous copy
            if bindings is None:
                bindings = {}
            bv, copied = _slow_arg(meta, plans, device, leaves, i, bindings)
            push(bv)
            if copied is None:  # an Array
                in_place += 1
                placed += nb
            elif copied != nb:  # a dynamic shape: the metadata had no size
                extra += copied - nb
                counts[3] += copied - nb
        if in_place:
            counts[1] += in_place
            counts[2] += placed
        up = in_bytes - placed + extra  # bytes copied to the device for this call
        results = variant_list(n_results)
        if track:
            # Arguments and results are held together while the call runs; the large
            # results stay (each gives its bytes back when it goes).
            _invoke_held(meta, device, led, invoke, vm_function, args, results, up + out_bytes)
        else:
            # Small arguments and results: no peak bookkeeping (and no extra call).
            try:
                invoke(vm_function, args, results)
            except (ValueError, RuntimeError) as e:
                raise _invocation_error(meta, e, device, up + out_bytes) from e
        counts[0] += 1
        if track:
            led.in_use += kept_bytes
        if single is not None:
            bv = results.get_as_object(0, buffer_view)
            if bv.element_type != single[2] or bv.shape != single[3]:
                check_result(meta, 0, bv, led, kept_bytes if track else 0)
            if single_tracked:
                return [tracked_array(bv, single[0], loaded, single[1], led, single[4])]
            return [array(bv, single[0], loaded, single[4])]
        get = results.get_as_object
        outs = []
        for k, dt, nb, element_type, shape, unclaimed, shape_tuple in results_spec:
            bv = get(k, buffer_view)
            if bv.element_type != element_type or bv.shape != shape:
                check_result(meta, k, bv, led, unclaimed if track else 0)
            outs.append(make(bv, dt, loaded, nb, led, shape_tuple))
        return outs

    led.retire_with(call_flat, counts)  # a dropped module leaves no counters behind
    return call_flat


def _writing_back(meta: FunctionMetadata, call_flat: Callable) -> Callable:
    """``call_flat`` for a function that writes into some of its arguments (numpy's
    in-place updates): after the call, each such argument holds its final value, as after
    the same numpy code, and the results are the function's own. A numpy argument is
    updated in place (a copy back from the device). A runtime ``Array`` argument is
    updated on its device: where the compiler paired it with its final value
    (``meta.donated``), that value was written into its own buffer; otherwise it takes
    the new buffer. Either way the caller's Array object holds the new value, with no
    copy. Python and numpy scalars are immutable (the write only rebound a name there),
    so they are left alone."""
    index = {a.name: i for i, a in enumerate(meta.args)}
    writes = [(index[name], k) for name, k in meta.mutated.items()]
    n_results = len(meta.results) - len(writes)
    specs = {i: (meta.args[i], dtypes.lookup(meta.args[i].dtype).numpy) for i, _ in writes}

    def call(leaves: list | tuple) -> list:
        for i, _ in writes:
            leaf = leaves[i]
            if isinstance(leaf, Array):
                spec, dtype = specs[i]
                if leaf.dtype != dtype or not _fits(leaf.shape, spec.shape):
                    raise ArgumentError(
                        f"{meta.name}(): argument {spec.name} is written into by the "
                        f"function (an in-place update), so an Array passed for it must "
                        f"have exactly its dtype {spec.dtype} and shape {tuple(spec.shape)}; "
                        f"got dtype {leaf.dtype}, shape {leaf.shape}. Convert it first "
                        f"(aotc.device_put(np.asarray(x, '{spec.dtype}'))) and pass that "
                        f"array, which the call then updates")
        outs = call_flat(leaves)
        for i, k in writes:
            leaf = leaves[i]
            if isinstance(leaf, Array):
                adopt(leaf, outs[k])
            elif isinstance(leaf, np.ndarray):
                np.copyto(leaf, np.asarray(outs[k]), casting="unsafe")
        return outs[:n_results]

    return call


def _fits(shape: tuple, spec_shape: tuple) -> bool:
    """Whether ``shape`` is one of ``spec_shape``'s (a dynamic dimension takes any size)."""
    return len(shape) == len(spec_shape) and all(
        not isinstance(d, int) or d == n for d, n in zip(spec_shape, shape))


def _nbytes(plan: ArgPlan) -> int:
    return _spec_bytes(plan.spec)


def _spec_bytes(spec: Any) -> int:
    """Bytes of a tensor of static shape (0 when a dimension is dynamic: unknown)."""
    if any(not isinstance(d, int) for d in spec.shape):
        return 0
    return int(np.prod(spec.shape, dtype=np.int64)) * dtypes.lookup(spec.dtype).numpy.itemsize


def _build_general_call(
    meta: FunctionMetadata, plans: tuple[ArgPlan, ...], loaded: Any
) -> Callable[[list | tuple], list[Array]]:
    """The call path with donation, shared result buffers and the runtime's pool.

    Donation (``meta.donated``: argument name -> result index): a donated ``Array``
    gives its buffer to the call and is deleted after it, with a reason naming the
    function and the argument; a numpy array is copied to the device once (that copy is
    what the result overwrites; the user's array is never touched). One array cannot be
    donated twice in a call, nor passed both donated and not. Once every argument is
    checked, the donated Arrays are consumed at once (``sharing.take_donated``: from then on
    they read as deleted, in every thread); one whose buffer something else may still
    read (another array, a host view, a DLPack export) is copied first, so the update
    never shows through the other holder. A call that fails after that leaves them
    deleted: its code may have written into their buffers.
    """
    device = loaded.device
    hal = device.hal
    led = device.ledger
    pool = device.pool
    names = [a.name for a in meta.args]
    donated = {names.index(name): k for name, k in meta.donated.items() if name in names}
    expected = tuple((p.shape, p.dtype, p.element_type, _nbytes(p)) for p in plans)
    n_args = len(expected)
    result_dtypes = tuple(dtypes.lookup(r.dtype).numpy for r in meta.results)
    result_bytes = tuple(_spec_bytes(r) for r in meta.results)
    n_results = len(result_dtypes)
    paired = set(donated.values())
    fresh_bytes = sum(nb for k, nb in enumerate(result_bytes) if k not in paired)
    out_bytes = sum(result_bytes)
    kept_bytes = sum(tracked(nb) for nb in result_bytes)
    result_types, result_shapes, shape_tuples = result_checks(meta)
    kept = [tracked(nb) for nb in result_bytes]
    unclaimed = [sum(kept[k:]) for k in range(n_results)]  # ledger bytes of results k..
    # Results returned in a buffer that is also an argument's or another result's.
    alias_args: dict[int, int] = {}
    alias_outs: dict[int, int] = {}
    for k, source in meta.aliases.items():
        kind, _, index = source.partition(" ")
        (alias_args if kind == "arg" else alias_outs)[int(k)] = int(index)
    copy = hal.allocator.allocate_buffer_copy
    invoke = loaded.context.invoke
    vm_function = loaded.vm_module.lookup_function(meta.name)
    where = f"{meta.name}()"

    kept_args = frozenset(alias_args.values())  # their buffers live on in a result
    reasons = {i: f"donated to {meta.name}(), argument {names[i]!r}" for i in donated}
    for i in donated:
        if names[i] in meta.mutated:  # the call gives it back, updated (_writing_back)
            reasons[i] = (f"being written into by {meta.name}(), argument {names[i]!r} (a "
                          f"call that fails leaves it deleted: its buffer was written)")

    def upload(leaf: np.ndarray, element_type: int, i: int, pooled: list) -> rt.HalBufferView:
        if pool is None:
            return copy(_DEVICE_LOCAL, _USAGE, hal, leaf, element_type)
        bv, buffer = pool.upload(leaf, element_type)
        if i in donated or i in kept_args:
            pool.forget(leaf.nbytes)  # it becomes a result's storage
        else:
            pooled.append((buffer, leaf.nbytes))  # back to the pool after the call
        return bv

    def call_flat(leaves: list | tuple) -> list[Array]:
        if len(leaves) != n_args:
            raise structure_error(meta, structure(tuple(leaves)))
        bindings: dict = {}
        up = 0
        n_up = 0
        buffers: list = []  # per argument; a donated Array's is filled in once all are checked
        consumed: list[tuple[Array, int]] = []  # donated Arrays (deleted by the call)
        seen: dict[int, int] = {}  # id of an Array argument -> its position
        pooled: list = []  # pool buffers to give back after the call
        for i, leaf in enumerate(leaves):
            shape, dtype, _, nb = expected[i]
            give = i in donated
            if isinstance(leaf, Array):
                first = seen.get(id(leaf))
                if first is not None and (give or first in donated):
                    a, b = (first, i)
                    which = "both are" if give and a in donated else "one is"
                    raise ArgumentError(
                        f"{where}: the same Array is passed as argument {names[a]!r} and as "
                        f"argument {names[b]!r}, and {which} "
                        f"donated: a donated buffer is consumed by the call, so it cannot also "
                        f"be read as another argument. Pass a copy for one of them "
                        f"(aotc.device_put(np.array(x)))"
                    )
                seen[id(leaf)] = i
                if leaf._bv is None or not (leaf._dtype is dtype and leaf.shape == shape):
                    value = prepare(leaf, plans[i], bindings)  # raises with the reason
                buffers.append(_array_buffer(meta.name, device, leaf, repr(names[i])))
                if give:
                    consumed.append((leaf, i))
                continue
            if type(leaf) is np.ndarray and leaf.dtype is dtype and leaf.shape == shape \
                    and leaf.flags.c_contiguous:
                value = leaf
            else:
                value = prepare(leaf, plans[i], bindings)
                if isinstance(value, Array):  # not reached: Arrays are handled above
                    buffers.append(_array_buffer(meta.name, device, value, repr(names[i])))
                    continue
            buffers.append(upload(value, plans[i].element_type, i, pooled))
            up += value.nbytes
            n_up += 1
        if consumed:
            # Every argument checked: the donated Arrays are consumed now, all at once.
            taken = take_donated([(leaf, reasons[i]) for leaf, i in consumed])
            for (leaf, i), (own, shared) in zip(consumed, taken):
                if buffers[i] is own and shared:
                    # Something else still reads the old buffer: the call updates a copy.
                    buffers[i] = device_copy(device, own)
                    up += expected[i][3]
                    n_up += 1
                # (else its own buffer, or already a copy: an eager array from elsewhere)
        args = rt.VmVariantList(n_args)
        for bv in buffers:
            args.push_ref(bv)
        del buffers
        results = rt.VmVariantList(n_results)
        try:
            _invoke_held(meta, device, led, invoke, vm_function, args, results,
                         up + fresh_bytes)
        finally:
            del args
            for leaf, _ in consumed:
                leaf._give_back()
        for buffer, nbytes in pooled:
            pool.release(buffer, nbytes)
        led.in_use += kept_bytes
        led.num_allocs += (n_results - len(paired)) + n_up
        led.bytes_allocated += up + fresh_bytes
        led.bytes_donated += out_bytes - fresh_bytes
        get = results.get_as_object
        outs = []
        for k, dt in enumerate(result_dtypes):
            bv = get(k, rt.HalBufferView)
            if bv.element_type != result_types[k] or bv.shape != result_shapes[k]:
                check_result(meta, k, bv, led, unclaimed[k])
            outs.append(make_array(bv, dt, loaded, result_bytes[k], led, shape_tuples[k]))
        for k, i in alias_args.items():
            mark_shared(outs[k])
            leaf = leaves[i]
            if isinstance(leaf, Array):
                mark_shared(leaf)
        for k, j in alias_outs.items():
            mark_shared(outs[k])
            mark_shared(outs[j])
        return outs

    return call_flat


def _invoke_held(meta: FunctionMetadata, device: Any, led: Any, invoke: Callable,
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
        raise _invocation_error(meta, e, device, held) from e


def _slow_arg(meta: FunctionMetadata, plans: tuple[ArgPlan, ...], device: Any, leaves: Any,
              index: int, bindings: dict) -> tuple[rt.HalBufferView, int | None]:
    """Checks and converts an argument the fast path did not take (see ``prepare``):
    its buffer view and the bytes copied to the device for it (None: an Array, used in
    place)."""
    leaf = leaves[index]
    if leaf is None or isinstance(leaf, (tuple, list, dict)):
        # A pytree node where an array belongs: show the whole structure.
        raise structure_error(meta, structure(tuple(leaves)))
    plan = plans[index]
    value = prepare(leaf, plan, bindings)
    if isinstance(value, Array):
        return _array_buffer(meta.name, device, value, repr(plan.spec.name)), None
    hal = device.hal
    try:
        bv = hal.allocator.allocate_buffer_copy(_DEVICE_LOCAL, _USAGE, hal, value,
                                                plan.element_type)
    except (ValueError, RuntimeError) as e:
        if "RESOURCE_EXHAUSTED" in str(e):
            raise out_of_memory(f"{meta.name}()", device, value.nbytes, str(e)) from e
        raise
    return bv, value.nbytes


def _array_buffer(name: str, device: Any, array: Array, label: str) -> rt.HalBufferView:
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


def _invocation_error(fn: Any, error: Exception, device: Any = None,
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
