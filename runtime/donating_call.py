"""The call path of a ``Function`` that donates arguments, may return an argument's
buffer (``aliases``), or runs on a device whose argument buffers come from the runtime's
pool; function.py builds it (``build_general_call``) and, for a donating function, calls
it whenever a donated argument is an ``Array``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import iree.runtime as rt
import numpy as np

from . import dtypes
from .allocator import device_copy
from .array import Array, make_array, mark_shared, tracked
from .call_support import (
    DEVICE_LOCAL,
    USAGE,
    array_buffer,
    invoke_held,
    spec_bytes,
)
from .errors import ArgumentError
from .integrity import check_result, result_checks
from .metadata import FunctionMetadata
from .sharing import take_donated
from .tree import structure
from .validate import ArgPlan, prepare, structure_error


def build_general_call(
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
    expected = tuple((p.shape, p.dtype, p.element_type, spec_bytes(p.spec)) for p in plans)
    n_args = len(expected)
    result_dtypes = tuple(dtypes.lookup(r.dtype).numpy for r in meta.results)
    result_bytes = tuple(spec_bytes(r) for r in meta.results)
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
            return copy(DEVICE_LOCAL, USAGE, hal, leaf, element_type)
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
                buffers.append(array_buffer(meta.name, device, leaf, repr(names[i])))
                if give:
                    consumed.append((leaf, i))
                continue
            if type(leaf) is np.ndarray and leaf.dtype is dtype and leaf.shape == shape \
                    and leaf.flags.c_contiguous:
                value = leaf
            else:
                value = prepare(leaf, plans[i], bindings)
                if isinstance(value, Array):  # not reached: Arrays are handled above
                    buffers.append(array_buffer(meta.name, device, value, repr(names[i])))
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
            invoke_held(meta, device, led, invoke, vm_function, args, results,
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
