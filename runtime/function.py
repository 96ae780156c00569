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
from .allocator import preallocate
from .array import (
    SMALL_HOST_COPY_BYTES,
    Array,
    TrackedArray,
    adopt,
    host_array,
    make_array,
    tracked,
)
from .call_support import (
    DEVICE_LOCAL,
    USAGE,
    array_buffer,
    invocation_error,
    invoke_held,
    spec_bytes,
)
from .device import shader_loop_refusal
from .donating_call import build_general_call
from .errors import ArgumentError
from .integrity import check_result, result_checks
from .ledger import out_of_memory
from .metadata import FunctionMetadata
from .tree import leaves_like, structure, unflatten
from .validate import ArgPlan, plan_args, prepare, structure_error


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
            self.call_flat = _writing_back(  # type: ignore[method-assign]
                metadata, self.call_flat, self._device.is_host)
        refused = shader_loop_refusal(metadata, self._device)  # calls that would be cut short
        if refused is not None:
            self.call_flat = refused  # type: ignore[method-assign]
        if self._device.ledger.limit is not None:
            # A preallocation budget: reserve this function's argument and result buffers
            # in the reuse cache now, so its first calls take no memory from the system.
            preallocate(self._device, [spec_bytes(s) for s in (*metadata.args, *metadata.results)])

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
                args.push_ref(array_buffer(self.name, self._device, leaf, str(i)))
                continue
            array, entry = host_array(leaf, f"{self.name}(): argument {i}")
            args.push_ref(hal.allocator.allocate_buffer_copy(
                DEVICE_LOCAL, USAGE, hal, array, entry.element_type))
        results = rt.VmVariantList(4)
        try:
            self._loaded.context.invoke(self._vm_function, args, results)
        except (ValueError, RuntimeError) as e:
            raise invocation_error(self, e) from e
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
    """The call path of one function. Functions that may return an argument's buffer
    (``aliases``), or run on a device whose argument buffers come from the runtime's
    pool, take the general path (donating_call.py). So does a donating function's call
    when a donated argument is an ``Array``. Where every donated argument is a numpy
    array (numpy code's in-place updates, called as numpy code calls them), each is
    copied to the device anyway and its copy becomes the result: the plain path serves,
    about 4 us a call cheaper."""
    device = loaded.device
    if meta.aliases or device.pool is not None:
        return build_general_call(meta, plans, loaded)
    if not meta.donated:
        return _build_plain_call(meta, plans, loaded)
    general = build_general_call(meta, plans, loaded)
    plain = _build_plain_call(meta, plans, loaded, frozenset(meta.donated.values()))
    names = [a.name for a in meta.args]
    donated_at = tuple(names.index(name) for name in meta.donated if name in names)
    n_args, array = len(names), Array

    def call_flat(leaves: list | tuple) -> list[Array]:
        if len(leaves) == n_args:
            for i in donated_at:
                if isinstance(leaves[i], array):
                    return general(leaves)
        return plain(leaves)

    return call_flat


def _build_plain_call(
    meta: FunctionMetadata, plans: tuple[ArgPlan, ...], loaded: Any,
    paired: frozenset = frozenset(),
) -> Callable[[list | tuple], list[Array]]:
    """The call path of a call that donates no ``Array``, with everything it needs bound
    as closure variables (the cheapest lookups in CPython). It must not reference the
    Function it is stored on: that cycle would keep the module's context alive until
    the garbage collector runs. ``paired``: the results written into a donated numpy
    argument's device copy (no buffer of their own)."""
    device = loaded.device
    # (shape, dtype, element type, bytes) per argument, unpacked in one step per call.
    expected = tuple((p.shape, p.dtype, p.element_type, spec_bytes(p.spec)) for p in plans)
    n_args = len(expected)
    in_bytes = sum(e[3] for e in expected)
    result_dtypes = tuple(dtypes.lookup(r.dtype).numpy for r in meta.results)
    result_bytes = tuple(spec_bytes(r) for r in meta.results)
    out_bytes = sum(result_bytes)
    n_results = len(result_dtypes)
    fresh_bytes = sum(nb for k, nb in enumerate(result_bytes) if k not in paired)
    donated_bytes = out_bytes - fresh_bytes
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
    counts = led.register(n_args, in_bytes, n_results - len(paired), fresh_bytes)
    copy = hal.allocator.allocate_buffer_copy
    invoke = loaded.context.invoke
    vm_function = loaded.vm_module.lookup_function(meta.name)
    variant_list, buffer_view = rt.VmVariantList, rt.HalBufferView
    ndarray, array = np.ndarray, Array
    tracked_array, make = TrackedArray, make_array
    device_local, usage = DEVICE_LOCAL, USAGE

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
            invoke_held(meta, device, led, invoke, vm_function, args, results,
                        up + fresh_bytes)
        else:
            # Small arguments and results: no peak bookkeeping (and no extra call).
            try:
                invoke(vm_function, args, results)
            except (ValueError, RuntimeError) as e:
                raise invocation_error(meta, e, device, up + fresh_bytes) from e
        counts[0] += 1
        if donated_bytes:
            led.bytes_donated += donated_bytes
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


def _writing_back(meta: FunctionMetadata, call_flat: Callable, on_host: bool) -> Callable:
    """``call_flat`` for a function that writes into some of its arguments (numpy's
    in-place updates): after the call, each such argument holds its final value, as after
    the same numpy code, and the results are the function's own. A numpy argument is
    updated in place (a copy back from the device). A runtime ``Array`` argument is
    updated on its device: where the compiler paired it with its final value
    (``meta.donated``), that value was written into its own buffer; otherwise it takes
    the new buffer. Either way the caller's Array object holds the new value, with no
    copy. Python and numpy scalars are immutable (the write only rebound a name there),
    so they are left alone. ``on_host``: the function runs on a CPU device, whose results
    are copied into the numpy arguments straight from device memory."""
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
                out = outs[k]  # the call's own: no host copy of it is kept
                value = out._host_memory(out._bv) if on_host else np.asarray(out)
                np.copyto(leaf, value, casting="unsafe")
        return outs[:n_results]

    return call


def _fits(shape: tuple, spec_shape: tuple) -> bool:
    """Whether ``shape`` is one of ``spec_shape``'s (a dynamic dimension takes any size)."""
    return len(shape) == len(spec_shape) and all(
        not isinstance(d, int) or d == n for d, n in zip(spec_shape, shape))


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
        return array_buffer(meta.name, device, value, repr(plan.spec.name)), None
    hal = device.hal
    try:
        bv = hal.allocator.allocate_buffer_copy(DEVICE_LOCAL, USAGE, hal, value,
                                                plan.element_type)
    except (ValueError, RuntimeError) as e:
        if "RESOURCE_EXHAUSTED" in str(e):
            raise out_of_memory(f"{meta.name}()", device, value.nbytes, str(e)) from e
        raise
    return bv, value.nbytes

