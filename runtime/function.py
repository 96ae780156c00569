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

from collections.abc import Callable
from typing import Any

import iree.runtime as rt
import numpy as np

from . import dtypes
from .array import Array, c_contiguous
from .errors import ArgumentError, DeviceMismatchError, InvocationError
from .metadata import FunctionMetadata
from .tree import flatten, unflatten
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

    Example:
      >>> f = module["predict"]                  # doctest: +SKIP
      >>> print(f.signature)                     # doctest: +SKIP
      predict(x: float32[64,784]) -> (out0: float32[64,10])
      >>> y = f(np.zeros((64, 784), np.float32))  # doctest: +SKIP
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
            leaves, tree = flatten(args)
            if tree != meta.in_tree:
                raise structure_error(meta, tree)
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
            array = c_contiguous(leaf)
            entry = dtypes.from_numpy(array.dtype)
            if entry is None:
                raise ArgumentError(
                    f"{self.name}(): argument {i}: expected an array of one of the dtypes "
                    f"{dtypes.SUPPORTED}, got {type(leaf).__name__} of dtype {array.dtype}. "
                    f"Convert it, e.g. np.asarray(x, np.float32)"
                )
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


def _build_call_flat(
    meta: FunctionMetadata, plans: tuple[ArgPlan, ...], loaded: Any
) -> Callable[[list | tuple], list[Array]]:
    """The call path of one function, with everything it needs bound as closure
    variables (the cheapest lookups in CPython). It must not reference the Function it
    is stored on: that cycle would keep the module's context alive until the garbage
    collector runs."""
    # (shape, dtype, element type) per argument, unpacked in one step per call.
    expected = tuple((p.shape, p.dtype, p.element_type) for p in plans)
    n_args = len(expected)
    result_dtypes = tuple(dtypes.lookup(r.dtype).numpy for r in meta.results)
    n_results = len(result_dtypes)
    single_dtype = result_dtypes[0] if n_results == 1 else None
    device = loaded.device
    hal = device.hal
    copy = hal.allocator.allocate_buffer_copy
    invoke = loaded.context.invoke
    vm_function = loaded.vm_module.lookup_function(meta.name)
    variant_list, buffer_view, ndarray, array = rt.VmVariantList, rt.HalBufferView, np.ndarray, Array
    device_local, usage = _DEVICE_LOCAL, _USAGE

    def call_flat(leaves: list | tuple) -> list[Array]:
        if len(leaves) != n_args:
            raise structure_error(meta, flatten(tuple(leaves))[1])
        args = variant_list(n_args)
        push = args.push_ref
        bindings = None
        i = 0
        for leaf in leaves:
            shape, dtype, element_type = expected[i]
            # "is": numpy's builtin dtypes are singletons; an equal but distinct dtype
            # object just takes the slow path, which compares with ==.
            kind = type(leaf)
            if kind is ndarray and leaf.dtype is dtype and leaf.shape == shape:
                try:
                    push(copy(device_local, usage, hal, leaf, element_type))
                    i += 1
                    continue
                except ValueError:
                    pass  # not C-contiguous: the slow path makes a contiguous copy
            elif kind is array and leaf._dtype is dtype and leaf._owner.device is device:
                bv = leaf._bv  # a live result of an earlier call: used in place
                if bv is not None and leaf.shape == shape:
                    push(bv)
                    i += 1
                    continue
            if bindings is None:
                bindings = {}
            push(_slow_arg(meta, plans, device, leaves, i, bindings))
            i += 1
        results = variant_list(n_results)
        try:
            invoke(vm_function, args, results)
        except (ValueError, RuntimeError) as e:
            raise _invocation_error(meta, e) from e
        if single_dtype is not None:
            return [array(results.get_as_object(0, buffer_view), single_dtype, loaded)]
        get = results.get_as_object
        return [array(get(k, buffer_view), dt, loaded) for k, dt in enumerate(result_dtypes)]

    return call_flat


def _slow_arg(meta: FunctionMetadata, plans: tuple[ArgPlan, ...], device: Any, leaves: Any,
              index: int, bindings: dict) -> rt.HalBufferView:
    """Checks and converts an argument the fast path did not take (see ``prepare``)."""
    leaf = leaves[index]
    if leaf is None or isinstance(leaf, (tuple, list, dict)):
        # A pytree node where an array belongs: show the whole structure.
        raise structure_error(meta, flatten(tuple(leaves))[1])
    plan = plans[index]
    value = prepare(leaf, plan, bindings)
    if isinstance(value, Array):
        return _array_buffer(meta.name, device, value, repr(plan.spec.name))
    hal = device.hal
    return hal.allocator.allocate_buffer_copy(_DEVICE_LOCAL, _USAGE, hal, value, plan.element_type)


def _array_buffer(name: str, device: Any, array: Array, label: str) -> rt.HalBufferView:
    """The buffer of an ``Array`` argument, which must live on the function's device, or
    be in host memory when the function's device is a CPU one too: local-sync and
    local-task buffers are both plain host memory, and functions loaded on the two
    drivers (which ``load`` picks per artifact) must be able to pass results along."""
    source = array.device
    if source is not device and not (source.is_host and device.is_host):
        raise DeviceMismatchError(
            f"{name}(): argument {label}: expected an array on {device.uri}, got one on "
            f"{array.device.uri}. Bring it to the host with np.asarray(...) first, or load "
            f"the module on {array.device.uri}"
        )
    return array._live()


def _invocation_error(fn: Any, error: Exception) -> InvocationError:
    """Wraps IREE's error (``fn``: FunctionMetadata, or a Function without metadata)."""
    if isinstance(fn, FunctionMetadata):
        hint = (
            "The arguments matched the metadata, so this is likely out-of-memory or an "
            "artifact whose metadata disagrees with its code: re-export it"
        )
    else:
        hint = (
            "This function has no aotc metadata, so only IREE checked the arguments: "
            f"compare them with its signature {fn.signature}"
        )
    text = str(error).strip()
    return InvocationError(f"{fn.name}(): IREE failed running the function: {text}\n{hint}")
