"""``aotc.vmap``: a per-example function mapped over a batch, with JAX's semantics.

A vmapped function is only ever applied to traced arrays: called eagerly it jits itself.
Applied inside a traced function (at the top of ``aotc.jit``/``aotc.export``, inside
another vmap, or called from any traced code), it

1. traces the per-example function into a scratch module of the same MLIR context, with
   every batched argument's batch axis removed (non-array arguments stay Python values);
2. inlines the calls nested vmaps left there and batches the function with the
   ``aotc-batch`` pass, which puts the batch dimension first;
3. moves the batched function into the caller's module as a private ``func.func`` and
   calls it: ``linalg.transpose`` brings each batch axis to the front before the call
   and moves it to ``out_axes`` after (IREE folds these into the neighbouring ops);
   ``build.finish_module`` inlines the call before aotc's and IREE's passes.

A batch dimension given as ``None`` (or a name) in an ``aotc.ShapeDtypeStruct`` stays
symbolic, so one artifact serves every batch size::

    art = aotc.export(aotc.vmap(predict, in_axes=(0, None)),
                      aotc.ShapeDtypeStruct((None, 784), "float32"), w)
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import optree

from .errors import CompileError, VmapError
from . import tree_util
from .work import count_batch

# The name the metadata gives a dynamic batch dimension shared by several arguments, so
# that the runtime checks they agree.
BATCH_DIM_NAME = "batch"


def _is_axis(value) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def _check_axes_spec(value, what: str, fn_name: str) -> None:
    """``value`` is an int, None, or a pytree of them (a prefix of the arguments' or the
    results' structure)."""
    for item in tree_util.tree_leaves(value, is_leaf=_is_axis):
        if not _is_axis(item):
            raise VmapError(
                f"vmap({fn_name}): {what} contains {item!r} ({type(item).__name__}); give an "
                f"int axis (negative counts from the end), None, or a pytree of them (tuple, "
                f"list, dict, NamedTuple, ...) matching the structure of the "
                f"{'arguments' if what == 'in_axes' else 'results'}")


class VmappedFunction:
    """``fn`` mapped over a batch axis of its arguments (see ``aotc.vmap``)."""

    def __init__(self, fn: Callable, in_axes=0, out_axes=0, axis_size: int | None = None):
        functools.update_wrapper(self, fn)
        self.fn = fn
        name = getattr(fn, "__name__", "function")
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)  # as in JAX: a list of per-argument axes is a tuple
        _check_axes_spec(in_axes, "in_axes", name)
        _check_axes_spec(out_axes, "out_axes", name)
        if axis_size is not None and (not isinstance(axis_size, int) or isinstance(axis_size, bool)
                                      or axis_size < 0):
            raise VmapError(f"vmap({name}): axis_size must be a non-negative int, "
                            f"got {axis_size!r}")
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.axis_size = axis_size
        self._jitted = None

    def __call__(self, *args, **kwargs):
        from .core import is_tracing

        if is_tracing():
            return apply(self, args, kwargs)
        if self._jitted is None:
            from .api import jit

            self._jitted = jit(self)
        return self._jitted(*args, **kwargs)

    # Called by build.trace_into: this function's arguments may have dynamic batch dims.
    def _aotc_dynamic_signature(self, fn_name: str, signature):
        return dynamic_batch_signature(fn_name, signature)


def vmap(fn: Callable, in_axes=0, out_axes=0, axis_size: int | None = None) -> VmappedFunction:
    """Maps ``fn``, written for one example, over a batch (``jax.vmap``'s semantics).

    Args:
      fn: the per-example function (``aotc.numpy``); may itself be jitted or vmapped.
      in_axes: where each positional argument has its batch axis: an int (negative counts
        from the end), ``None`` (shared by every example, not batched), or a tuple with one
        entry per positional argument, each entry a pytree prefix of its argument (a
        dict ``{"w": None, "b": 0}`` for a dict argument). Keyword arguments are batched
        along axis 0. Non-array arguments (Python values, static arguments of an
        enclosing ``jit``) take ``None``.
      out_axes: where each result gets the batch axis: an int, ``None`` for a result that
        does not depend on the batch, or a pytree prefix of the results.
      axis_size: the batch size; required when no argument is batched.

    Usable under ``aotc.jit`` and ``aotc.export`` (or called directly, which jits it),
    inside traced functions and nested. A batch dimension ``None`` in an
    ``aotc.ShapeDtypeStruct`` stays dynamic: the artifact accepts any batch size.

    >>> def mlp(x, w, b):
    ...     return anp.tanh(x @ w + b)
    >>> predict = aotc.jit(aotc.vmap(mlp, in_axes=(0, None, None)))
    >>> xs, w, b = np.ones((8, 3), np.float32), np.ones((3, 2), np.float32), np.zeros(2, np.float32)
    >>> print(predict.lower(xs, w, b).metadata.signature)   # one mlp(x, w, b) per row of xs
    mlp(x: float32[8,3], w: float32[3,2], b: float32[2]) -> (out: float32[8,2])
    """
    return VmappedFunction(fn, in_axes, out_axes, axis_size)


# ---------------------------------------------------------------------------------------
# Axes: pytree prefixes to one axis per leaf
# ---------------------------------------------------------------------------------------

_SEQUENCES = (optree.PyTreeKind.TUPLE, optree.PyTreeKind.LIST)
_DICTS = (optree.PyTreeKind.DICT, optree.PyTreeKind.ORDEREDDICT, optree.PyTreeKind.DEFAULTDICT)


def broadcast_prefix(spec, treedef: tree_util.PyTreeDef, path: str, what: str,
                     fn_name: str) -> list:
    """One axis per leaf of ``treedef``: ``spec`` is an axis (int or None) for the whole
    subtree or a node of the same type with the same keys (JAX's prefix rule; a tuple and
    a list are interchangeable), whose children are prefixes of the subtree's children."""
    if _is_axis(spec):
        return [spec] * treedef.num_leaves
    kind = treedef.kind
    shown = tree_util.describe(treedef)
    fix = f"give one int/None for the whole of {path}, or a container with its structure ({shown})"
    children = treedef.children()
    keys = [str(k) for k in tree_util.child_keys(treedef)]
    if kind in _SEQUENCES and type(spec) in (tuple, list):
        if len(spec) != len(children):
            raise VmapError(
                f"vmap({fn_name}): {what} for {path} has {len(spec)} entries {spec!r} but "
                f"{path} has {len(children)}; {fix}")
        parts = list(spec)
    elif kind in _DICTS and isinstance(spec, dict):
        if set(spec) != set(treedef.entries()):
            raise VmapError(
                f"vmap({fn_name}): {what} for {path} has keys {sorted(spec)} but {path} has "
                f"keys {list(treedef.entries())}; {fix}")
        parts = [spec[key] for key in treedef.entries()]
    elif (not tree_util.treedef_is_leaf(treedef)
          and _one_level(spec) == treedef.one_level()):
        parts = tree_util.flatten_one_level(spec)[0]
    else:
        what_it_is = ("a single value" if tree_util.treedef_is_leaf(treedef)
                      else f"a {treedef.type.__name__}")
        raise VmapError(
            f"vmap({fn_name}): {what} gives a {type(spec).__name__} {spec!r} for {path}, "
            f"which is {what_it_is} ({shown}); {fix}")
    out = []
    for part, child, key in zip(parts, children, keys):
        out.extend(broadcast_prefix(part, child, f"{path}{key}", what, fn_name))
    return out


def _one_level(spec) -> tree_util.PyTreeDef:
    """The root node of an axes pytree with its children as leaves (None entries too)."""
    return tree_util.tree_structure(spec, is_leaf=lambda x: x is not spec)


def _positional_names(fn, count: int) -> list[str]:
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"args[{i}]" for i in range(count)]


def _leaf_axes(vm: VmappedFunction, name: str,
               args_tree: tree_util.PyTreeDef) -> tuple[list, list[str]]:
    """The requested axis and a readable path of every argument leaf."""
    from .signature import leaf_paths

    pos_tree, kw_tree = args_tree.children()
    names = _positional_names(vm.fn, pos_tree.num_children)
    if type(vm.in_axes) is tuple:
        if len(vm.in_axes) != pos_tree.num_children:
            n = pos_tree.num_children
            raise VmapError(
                f"vmap({name}): in_axes has {len(vm.in_axes)} entries {vm.in_axes!r} but the "
                f"call has {n} positional argument{'' if n == 1 else 's'} "
                f"({', '.join(names) or 'none'}); give one entry (int, None or a pytree "
                f"prefix) per positional argument, or a single int/None for all of them")
        per_arg = list(vm.in_axes)
    else:
        per_arg = [vm.in_axes] * pos_tree.num_children
    axes, paths = [], []
    for spec, child, arg in zip(per_arg, pos_tree.children(), names):
        axes.extend(broadcast_prefix(spec, child, arg, "in_axes", name))
        paths.extend(leaf_paths(child, arg))
    for key, child in zip(kw_tree.entries(), kw_tree.children()):
        axes.extend([0] * child.num_leaves)  # keyword arguments: batched along 0, as in JAX
        paths.extend(leaf_paths(child, str(key)))
    return axes, paths


# ---------------------------------------------------------------------------------------
# Applying a vmapped function to traced arguments
# ---------------------------------------------------------------------------------------

@dataclass
class _Leaf:
    """One argument leaf: a traced array (``tracer``) or a Python value passed as it is."""

    path: str
    value: object
    tracer: object = None  # Tracer, for array leaves
    axis: int | None = None  # normalised batch axis of an array leaf

    @property
    def shape(self) -> tuple:
        return tuple(self.tracer.shape)


def _classify(name: str, leaves: list, axes: list, paths: list[str]) -> list[_Leaf]:
    from .core import Tracer

    out = []
    for value, axis, path in zip(leaves, axes, paths):
        is_array = isinstance(value, (Tracer, np.ndarray, np.generic))
        if not is_array:
            if axis is not None:
                raise VmapError(
                    f"vmap({name}): argument {path} is a {type(value).__name__} ({value!r}), "
                    f"not an array, but in_axes asks to batch it along axis {axis}; give "
                    f"in_axes=None for it (it is then passed to every example as it is)")
            out.append(_Leaf(path, value))
            continue
        leaf = _Leaf(path, value, argument_tracer(value, f"vmap({name}): argument {path}"))
        if axis is not None:
            ndim = len(leaf.shape)
            if ndim == 0:
                raise VmapError(
                    f"vmap({name}): argument {path} is a 0-d array (shape ()) but in_axes asks "
                    f"to batch it along axis {axis}; give in_axes=None for it, or pass an "
                    f"array with a batch axis")
            if not -ndim <= axis < ndim:
                raise VmapError(
                    f"vmap({name}): in_axes={axis} is out of range for argument {path} of "
                    f"shape {leaf.shape} (rank {ndim}); give an axis in [-{ndim}, {ndim}) or "
                    f"None")
            leaf.axis = axis % ndim
        for d, size in enumerate(leaf.shape):
            if size is None and d != leaf.axis:
                raise VmapError(
                    f"vmap({name}): argument {path} of shape {leaf.shape} has a dynamic "
                    f"dimension {d} that is not its batch axis ({leaf.axis}); only the batch "
                    f"dimension may be dynamic (None). Give the other dimensions as ints")
        out.append(leaf)
    return out


def argument_tracer(value, where: str):
    """An array argument of a transformed function as a traced array of the caller: a
    tracer must belong to the function being traced, a numpy value becomes a constant."""
    from . import numpy as anp
    from .core import Tracer, check_usable

    if isinstance(value, Tracer):
        return check_usable(value, where)  # an enclosing function's: captured
    return anp.asarray(value)


def _batch_size(vm: VmappedFunction, name: str, leaves: list[_Leaf]):
    """The common batch size (None: dynamic), or an error listing every batched leaf."""
    batched = [lf for lf in leaves if lf.axis is not None]
    if not batched:
        if vm.axis_size is None:
            raise VmapError(
                f"vmap({name}): no argument is batched (every in_axes is None), so the batch "
                f"size is unknown; give axis_size=N")
        return vm.axis_size
    sizes = {lf.shape[lf.axis] for lf in batched}
    if vm.axis_size is not None:
        sizes.add(vm.axis_size)
    if len(sizes) > 1:
        listed = ", ".join(f"{lf.path}: {'?' if lf.shape[lf.axis] is None else lf.shape[lf.axis]} "
                           f"(axis {lf.axis} of shape {lf.shape})" for lf in batched)
        extra = f"; axis_size={vm.axis_size}" if vm.axis_size is not None else ""
        raise VmapError(
            f"vmap({name}): the batched arguments have different sizes along their mapped "
            f"axes: {listed}{extra}. Give every batched argument the same batch size, or mark "
            f"arguments shared by every example with in_axes=None")
    return sizes.pop()


def apply(vm: VmappedFunction, args: tuple, kwargs: dict):
    """``vm(*args, **kwargs)`` inside a traced function: see the module docstring."""
    from ._mlir import ir
    from .api import _symbol_name
    from .core import Trace, current_trace, trace_function
    from .signature import Aval

    outer = current_trace()
    name = getattr(vm.fn, "__name__", "function")
    flat, args_tree = tree_util.tree_flatten((tuple(args), dict(kwargs)))
    axes, paths = _leaf_axes(vm, name, args_tree)
    leaves = _classify(name, flat, axes, paths)
    size = _batch_size(vm, name, leaves)
    arrays = [lf for lf in leaves if lf.tracer is not None]
    example_avals = [Aval(_drop(lf.shape, lf.axis), lf.tracer.dtype, lf.tracer.weak)
                     for lf in arrays]

    def rebuild(tracers):
        it = iter(tracers)
        return args_tree.unflatten([next(it) if lf.tracer is not None else lf.value
                                    for lf in leaves])

    base = _unique_base(outer.module, f"{_symbol_name(name)}__vmap")
    names = _Names(f"{base}_example", f"{base}_batched")
    with outer.context, ir.Location.unknown():
        scratch = ir.Module.create()
    inner = Trace(name, scratch)
    inner.allows_captures = True
    traced = trace_function(vm.fn, names.example, args_tree, example_avals, rebuild, inner)
    # Traced arrays of the caller the function closes over: extra arguments, shared by
    # every example.
    for outer_tracer, _ in inner.captures:
        arrays.append(_Leaf("<closure>", outer_tracer, outer_tracer))
        example_avals.append(Aval(tuple(outer_tracer.shape), outer_tracer.dtype,
                                  outer_tracer.weak))
    # A Python scalar the example function computes in a narrower dtype is checked at each
    # call of the outer function, as without vmap (else -1 would wrap to uint64's max).
    for k, narrower in inner.weak_casts.items():
        for dtype in narrower:
            outer.note_weak_cast(arrays[k].tracer, dtype)
    written = [arrays[i] for i in traced.mutated]
    _check_writes(name, written)
    in_batched = [lf.axis is not None for lf in arrays]
    out_axes = _checked_out_axes(vm, name, traced, in_batched)
    _batch(name, scratch, names, in_batched, size)
    needs_example = any(a is None for a in out_axes)
    result_types = _move_functions(scratch, outer, ([] if size == 0 else [names.batched])
                                   + ([names.example] if needs_example else []))
    scale = size if isinstance(size, int) else 1
    count_batch(outer, inner, scale)
    outer.residual_bytes += inner.residual_bytes * scale
    outer.contractions.extend(c._replace(flops=c.flops * scale) for c in inner.contractions)
    # The arguments the function writes into follow its results: each batched final
    # value goes back into the caller's array, as a loop over its slices would leave it.
    results = _call(outer, names, result_types, arrays, example_avals,
                    traced.out_avals + [example_avals[i] for i in traced.mutated],
                    out_axes + [lf.axis for lf in written], size)
    for lf, new in zip(written, results[len(traced.out_avals):]):
        lf.tracer.assign(new)
    return traced.out_tree.unflatten(results[:len(traced.out_avals)])


def _check_writes(name: str, written: list[_Leaf]) -> None:
    """The arguments the function writes into must be traced arrays with a batch axis: a
    write into one shared by every example (in_axes None) would be every example's in
    turn, and a numpy array has no traced value to update."""
    from .core import Tracer

    for lf in written:
        if not isinstance(lf.value, Tracer):
            raise VmapError(
                f"vmap({name}): the function writes into argument {lf.path}, a "
                f"{type(lf.value).__name__} made outside the traced function, which the "
                f"compiled code cannot update; pass it as an argument of the jitted "
                f"function, or return the new value instead of writing it")
        if lf.axis is None:
            raise VmapError(
                f"vmap({name}): the function writes into argument {lf.path}, whose in_axes "
                f"is None: every example would write into the same array in turn, which vmap "
                f"cannot batch. Give it a batch axis (every example writes its own slice), "
                f"or return the new value instead of writing it")


@dataclass(frozen=True)
class _Names:
    example: str  # the per-example function
    batched: str  # the batched function built from it


def _checked_out_axes(vm: VmappedFunction, name: str, traced, in_batched: list[bool]) -> list:
    """One normalised axis (or None) per result; errors for an axis out of range and for
    None on a result that depends on the batch (looked up only when some axis is None)."""
    out_axes = broadcast_prefix(vm.out_axes, traced.out_tree, "the result", "out_axes", name)
    out_batched = (batched_results(traced.func_op, in_batched) if None in out_axes
                   else [True] * len(out_axes))
    checked = []
    for k, (axis, aval, batched) in enumerate(zip(out_axes, traced.out_avals, out_batched)):
        path = _out_path(traced.out_tree, k)
        if axis is None:
            if batched:
                raise VmapError(
                    f"vmap({name}): out_axes is None for result {path}, but that result "
                    f"depends on a batched argument, so it differs between examples; give it "
                    f"an int out_axes (e.g. 0), or compute it from arguments with in_axes=None "
                    f"only")
            checked.append(None)
            continue
        ndim = len(aval.shape) + 1
        if not -ndim <= axis < ndim:
            raise VmapError(
                f"vmap({name}): out_axes={axis} is out of range for result {path}, which has "
                f"shape {tuple(aval.shape)} per example (rank {ndim} with the batch axis); "
                f"give an axis in [-{ndim}, {ndim}) or None")
        checked.append(axis % ndim)
    return checked


def _batch(name: str, scratch, names: _Names, in_batched: list[bool], size) -> None:
    """Inlines the calls nested vmaps left in ``scratch`` and builds ``@batched`` there.
    A batch of no examples computes nothing (its results are empty tensors): no pass."""
    from .passes import Batch, PassError, run_pipeline

    batch = [] if size == 0 else [Batch(func=names.example, batched=names.batched,
                                        in_axes=tuple(0 if b else None for b in in_batched),
                                        size=size)]
    try:
        # A call with a custom derivative stays a call (no_inline): its batching rule
        # batches the forward and backward functions (passes/batching/batch.py).
        run_pipeline(scratch, ["inline", "symbol-dce", *batch, "canonicalize", "cse"])
    except PassError as e:
        raise CompileError(f"vmap({name}): {e}") from e


def _call(outer, names: _Names, result_types: dict, arrays: list, example_avals: list,
          out_avals: list, out_axes: list, size) -> list:
    """The results in the caller: ``@batched`` called on the arguments with their batch
    axes moved to the front, each result's batch axis moved to its out_axes; results with
    out_axes None come from ``@example`` (called with empty tensors for the batched
    arguments, which it does not read for them; the inliner removes the rest)."""
    from . import lowering
    from ._mlir import func
    from .core import Tracer, user_location

    with user_location():
        if size == 0:
            batched = [lowering.empty((0,) + tuple(a.shape), a.dtype) for a in out_avals]
        else:
            operands = [_move_axis(lf.tracer.value, lf.axis, 0) if lf.axis is not None
                        else lf.tracer.value for lf in arrays]
            batched = func.CallOp(result_types[names.batched], names.batched, operands).results
        shared = None
        if names.example in result_types:
            operands = [lf.tracer.value if lf.axis is None else lowering.empty(a.shape, a.dtype)
                        for a, lf in zip(example_avals, arrays)]
            shared = func.CallOp(result_types[names.example], names.example, operands).results
        results = []
        for k, (aval, axis) in enumerate(zip(out_avals, out_axes)):
            if axis is None:
                results.append(Tracer(shared[k], aval.shape, aval.dtype, outer))
                continue
            shape = list(aval.shape)
            shape.insert(axis, size)
            results.append(Tracer(_move_axis(batched[k], 0, axis), tuple(shape), aval.dtype, outer))
    return results


def _drop(shape: tuple, axis) -> tuple:
    return shape if axis is None else shape[:axis] + shape[axis + 1:]


def _out_path(out_tree: tree_util.PyTreeDef, k: int) -> str:
    from .signature import leaf_paths

    return leaf_paths(out_tree, "out")[k]


def batched_results(func_op, in_batched: list[bool]) -> list[bool]:
    """Which results of ``func_op`` depend on an argument marked batched (the values the
    ``aotc-batch`` pass batches: an op's results are batched when an operand, or a value
    its regions use, is)."""
    block = func_op.regions[0].blocks[0]
    batched = {arg for arg, b in zip(block.arguments, in_batched) if b}

    def uses_batched(op) -> bool:
        if any(v in batched for v in op.operands):
            return True
        return any(uses_batched(inner.operation) for region in op.regions
                   for blk in region.blocks for inner in blk.operations)

    ret = None
    for op in block.operations:
        op = op.operation
        if op.name == "func.return":
            ret = op
        elif uses_batched(op):
            batched.update(op.results)
    return [v in batched for v in ret.operands]


def _unique_base(module, stem: str) -> str:
    """``stem<k>`` for the smallest k no symbol starts with, in ``module`` or in the module
    of any function being traced (functions traced in a scratch module move into the
    enclosing ones); deterministic, so the traced module and its cache key do not depend
    on earlier traces."""
    from ._mlir import ir
    from .core import _state

    modules = [module] + [t.module for t in _state.stack if t.module is not None]
    names = [ir.StringAttr(op.operation.attributes["sym_name"]).value
             for m in modules for op in m.body.operations
             if "sym_name" in op.operation.attributes]
    taken = {n[len(stem):].split("_", 1)[0] for n in names if n.startswith(stem) and "_" in n}
    k = 0
    while str(k) in taken:
        k += 1
    return f"{stem}{k}"


def _move_functions(scratch, outer, names: list[str]) -> dict:
    """Moves ``@names`` from the scratch module into the caller's module, private, just
    before the function being traced, with the functions they refer to (a call with a
    custom derivative: its forward and backward functions); returns their result types."""
    from ._mlir import ir
    from .passes.autodiff.calls import referenced_functions

    funcs = {ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
             for op in scratch.body.operations}
    moving, pending = [], list(names)
    while pending:
        sym = pending.pop()
        if sym in moving or sym not in funcs:
            continue
        moving.append(sym)
        pending.extend(referenced_functions(funcs[sym]))
    anchor = outer.entry.owner  # the function being traced (outer.block may be a loop body)
    found = {}
    for sym in moving:
        op = funcs[sym]
        op.attributes["sym_visibility"] = ir.StringAttr.get("private")
        op.move_before(anchor)
        ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        found[sym] = list(ftype.results)
    return found


def _move_axis(value, source: int, destination: int):
    """``value`` with dimension ``source`` moved to ``destination``: a ``linalg.transpose``
    (dynamic sizes taken with ``tensor.dim``), or ``value`` itself when nothing moves."""
    from ._mlir import arith, ir, linalg, tensor

    if source == destination:
        return value
    t = ir.RankedTensorType(value.type)
    order = [d for d in range(t.rank) if d != source]
    order.insert(destination, source)
    sizes = [tensor.DimOp(value, arith.ConstantOp(ir.IndexType.get(), d).result).result
             if t.is_dynamic_dim(d) else t.shape[d] for d in order]
    init = tensor.EmptyOp(sizes, t.element_type).result
    return linalg.transpose(value, outs=[init], permutation=order).results[0]


# ---------------------------------------------------------------------------------------
# Dynamic batch dimensions at the top of jit/export
# ---------------------------------------------------------------------------------------

def dynamic_batch_signature(fn_name: str, signature):
    """The signature with one name for every dynamic dimension (only batch dimensions can
    be dynamic in a vmapped function): several arguments with a ``None`` batch dimension
    share ``BATCH_DIM_NAME``, so the runtime checks that they agree. Returns the signature
    and the name (None when no dimension is dynamic)."""
    dynamic = [(leaf, d) for leaf, a in zip(signature.leaf_names, signature.avals)
               for d in a.shape if not isinstance(d, int)]
    if not dynamic:
        return signature, None
    named = {d for _, d in dynamic if isinstance(d, str)}
    if len(named) > 1:
        listed = ", ".join(f"{leaf}: {d!r}" for leaf, d in dynamic)
        raise VmapError(
            f"vmap({fn_name}): the dynamic batch dimensions have different names ({listed}); "
            f"every batched argument has the same batch size, so give them one name (or None)")
    if named:
        dim = named.pop()
    elif len(dynamic) > 1:
        dim = BATCH_DIM_NAME
    else:
        return signature, None  # one dynamic dimension: nothing to check it against
    avals = tuple(replace(a, shape=tuple(d if isinstance(d, int) else dim for d in a.shape))
                  for a in signature.avals)
    return replace(signature, avals=avals), dim


__all__ = ["vmap", "VmappedFunction"]
