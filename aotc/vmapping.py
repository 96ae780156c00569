"""``aotc.vmap``: a per-example function mapped over a batch, with JAX's names.

``aotc.vmap(f)`` traces ``f`` for one example and turns the traced ``func.func`` into a
batched one with the ``aotc-batch`` pass; ``aotc.jit`` and ``aotc.export`` see the
batched function only. A batch dimension given as ``None`` (or a name) in an
``aotc.ShapeDtypeStruct`` stays symbolic, so one artifact serves every batch size::

    art = aotc.export(aotc.vmap(predict, in_axes=(0, None)),
                      aotc.ShapeDtypeStruct((None, 784), "float32"), w)

Supported so far: ``in_axes`` an int (``0``, or the negative axis that names the leading
one) or ``None`` per positional argument, or one value for all of them (keyword arguments
are batched along 0); ``out_axes=0``.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import replace
from typing import Callable

from .errors import AotcError, UnsupportedOpError
from .runtime.metadata import REFLECTION_KEY, TensorSpec


def _check_axis_spec(value, what: str, fn_name: str) -> None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return
    raise UnsupportedOpError(
        f"vmap({fn_name}): {what}={value!r} is not supported; give an int (0) or None "
        f"per positional argument, or one int/None for all of them (pytree prefixes are "
        f"not supported yet)"
    )


class VmappedFunction:
    """``fn`` mapped over a leading batch axis (see ``aotc.vmap``)."""

    def __init__(self, fn: Callable, in_axes=0, out_axes=0, axis_size: int | None = None):
        functools.update_wrapper(self, fn)
        self.fn = fn
        name = getattr(fn, "__name__", "function")
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)
        if isinstance(in_axes, tuple):
            for a in in_axes:
                _check_axis_spec(a, "in_axes entry", name)
        else:
            _check_axis_spec(in_axes, "in_axes", name)
        if not (isinstance(out_axes, int) and not isinstance(out_axes, bool) and out_axes == 0):
            raise UnsupportedOpError(
                f"vmap({name}): out_axes={out_axes!r} is not supported yet; only out_axes=0 "
                f"(every result gets the batch as its leading axis). Move the axis "
                f"afterwards, e.g. with anp.moveaxis, if you need it elsewhere"
            )
        if axis_size is not None and (not isinstance(axis_size, int) or axis_size < 0):
            raise AotcError(f"vmap({name}): axis_size must be a non-negative int, got {axis_size!r}")
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.axis_size = axis_size
        self._jitted = None

    def __call__(self, *args, **kwargs):
        from .core import is_tracing

        if is_tracing():
            raise UnsupportedOpError(
                f"vmap({self.__name__}): calling a vmapped function inside a traced function "
                f"is not supported yet; jit the vmapped function itself: "
                f"aotc.jit(aotc.vmap(f))"
            )
        if self._jitted is None:
            from .api import jit

            self._jitted = jit(self)
        return self._jitted(*args, **kwargs)

    # Called by build.trace_into in place of tracing ``self`` directly.
    def _aotc_trace_into(self, module, binder, signature, name, target):
        return trace_batched(self, module, binder, signature, name, target)


def vmap(fn: Callable, in_axes=0, out_axes=0, axis_size: int | None = None) -> VmappedFunction:
    """Maps ``fn``, written for one example, over a batch (``jax.vmap``'s names).

    Args:
      fn: the per-example function (``aotc.numpy``).
      in_axes: ``0`` (batched along its leading axis) or ``None`` (shared by every
        example) per positional argument, or one value for all of them.
      out_axes: ``0`` only: every result gets the batch as its leading axis.
      axis_size: the batch size when no argument is batched.

    The result is used under ``aotc.jit`` or ``aotc.export`` (or called directly, which
    jits it). A batch dimension ``None`` in an ``aotc.ShapeDtypeStruct`` stays dynamic:
    the artifact accepts any batch size.

    >>> predict = aotc.jit(aotc.vmap(mlp, in_axes=(0, None, None)))
    >>> ys = predict(xs, w, b)           # == np.stack([mlp(x, w, b) for x in xs])
    """
    return VmappedFunction(fn, in_axes, out_axes, axis_size)


def _leaf_axes(vm: VmappedFunction, binder, signature) -> list:
    """The axis (``0`` or None) of each flat argument leaf, and checks on them."""
    name = binder.fn_name
    pos_tree, kw_tree = signature.args_tree.children
    static_positions = {w for w, _ in signature.static_args if isinstance(w, int)}
    n_positional = len(pos_tree.children) + len(static_positions)
    dyn_positions = [i for i in range(n_positional) if i not in static_positions]
    if isinstance(vm.in_axes, tuple):
        if len(vm.in_axes) != n_positional:
            raise AotcError(
                f"vmap({name}): in_axes has {len(vm.in_axes)} entries "
                f"{vm.in_axes!r} but the call has {n_positional} positional argument"
                f"{'' if n_positional == 1 else 's'}; give one int or None per positional "
                f"argument (or a single int/None for all of them)"
            )
        per_arg = [vm.in_axes[i] for i in dyn_positions]
    else:
        per_arg = [vm.in_axes] * len(dyn_positions)
    axes = []
    for axis, child in zip(per_arg, pos_tree.children):
        axes.extend([axis] * child.num_leaves)
    for child in kw_tree.children:
        axes.extend([0] * child.num_leaves)  # keyword arguments: batched along 0, as in JAX
    out = []
    for axis, leaf, aval in zip(axes, signature.leaf_names, signature.avals):
        if axis is None:
            out.append(None)
            continue
        ndim = len(aval.shape)
        if ndim == 0:
            raise AotcError(
                f"vmap({name}): argument {leaf} is a scalar but in_axes asks to batch it along "
                f"axis {axis}; give in_axes=None for it, or pass an array with a batch axis"
            )
        norm = axis + ndim if axis < 0 else axis
        if not 0 <= norm < ndim:
            raise AotcError(
                f"vmap({name}): in_axes={axis} is out of range for argument {leaf} of shape "
                f"{tuple(aval.shape)} (rank {ndim}); give an axis in [-{ndim}, {ndim})"
            )
        if norm != 0:
            raise UnsupportedOpError(
                f"vmap({name}): argument {leaf} is batched along axis {axis}; only the leading "
                f"axis (in_axes=0) is supported so far. Move the batch axis to the front "
                f"(anp.moveaxis) before the call"
            )
        out.append(0)
    return out


def _batch_size(vm: VmappedFunction, name: str, signature, axes: list):
    sizes = [(leaf, aval.shape[0]) for leaf, aval, a in
             zip(signature.leaf_names, signature.avals, axes) if a is not None]
    if not sizes:
        if vm.axis_size is None:
            raise AotcError(
                f"vmap({name}): no argument is batched (every in_axes is None), so the batch "
                f"size is unknown; give axis_size=N"
            )
        return vm.axis_size
    distinct = {s for _, s in sizes}
    if vm.axis_size is not None:
        distinct.add(vm.axis_size)
    if len(distinct) > 1:
        listed = ", ".join(f"{leaf}: {'?' if s is None else s} (axis 0)" for leaf, s in sizes)
        extra = f"; axis_size={vm.axis_size}" if vm.axis_size is not None else ""
        raise AotcError(
            f"vmap({name}): the batched arguments have different sizes along their mapped "
            f"axes: {listed}{extra}. Give every batched argument the same batch size, or mark "
            f"arguments shared by every example with in_axes=None"
        )
    return sizes[0][1]


def trace_batched(vm: VmappedFunction, module, binder, signature, name: str, target):
    """Traces ``vm.fn`` per example into ``module`` and batches it into ``@name``."""
    import copy

    from . import build
    from ._mlir import ir
    from .errors import CompileError
    from .passes import Batch, PassError, run_pipeline
    from .signature import Aval

    axes = _leaf_axes(vm, binder, signature)
    size = _batch_size(vm, binder.fn_name, signature, axes)
    example = replace(signature, avals=tuple(
        Aval(a.shape[1:], a.dtype, a.weak) if axis is not None else a
        for a, axis in zip(signature.avals, axes)))
    inner_binder = copy.copy(binder)
    inner_binder.fn = vm.fn
    inner_name = f"{name}__example"
    lowered = build.trace_into(module, inner_binder, example, inner_name, target)
    static_size = size if isinstance(size, int) else None
    try:
        run_pipeline(module, [Batch(func=inner_name, batched=name, in_axes=tuple(axes),
                                    size=static_size), "canonicalize", "cse"])
    except PassError as e:
        raise CompileError(f"vmap({binder.fn_name}): {e}") from None
    batched_op = None
    with module.context:
        for op in list(module.body.operations):
            op = op.operation
            if op.name != "func.func":
                continue
            sym = ir.StringAttr(op.attributes["sym_name"]).value
            if sym == inner_name:
                op.erase()
            elif sym == name:
                batched_op = op
        source_hash = hashlib.sha256(str(batched_op).encode()).hexdigest()[:16]
    meta = lowered.metadata
    metadata = replace(
        meta,
        name=name,
        args=tuple(TensorSpec(n, tuple(a.shape), a.dtype.name)
                   for n, a in zip(signature.leaf_names, signature.avals)),
        results=tuple(TensorSpec(r.name, (size,) + tuple(r.shape), r.dtype) for r in meta.results),
        source_hash=source_hash,
        work_estimate=meta.work_estimate * (size if isinstance(size, int) else 1),
    )
    with module.context:
        batched_op.attributes["iree.reflection"] = ir.DictAttr.get(
            {REFLECTION_KEY: ir.StringAttr.get(metadata.to_json())})
    return build.LoweredFunction(metadata, lowered.contractions)


__all__ = ["vmap", "VmappedFunction"]
