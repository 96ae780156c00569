"""Advanced indexing with numpy's semantics, ``take``, ``take_along_axis``, ``nonzero``
and friends (``aotc.lax.dynamic_slice`` is in ``dynamic_slicing.py``).

How ``x[index]`` lowers, by what the index holds:

- static ints, slices, None, ``...``: ``tensor.extract_slice`` (``shape.basic_getitem``);
- traced 0-d integers among those: ``tensor.extract_slice`` at offsets computed at run
  time and clamped so the slice stays inside ``x`` (``jax.lax.dynamic_slice``'s rule);
- integer arrays (traced, numpy or lists), with anything else: a gather, one
  ``linalg.generic`` over the result shape whose body reads ``x`` with ``tensor.extract``
  at the computed indices. Index arrays broadcast together; numpy's placement rule puts
  their dimensions first when a slice, None or ``...`` separates them.

Traced indices cannot raise: negative ones count from the end (numpy), and ones still
out of range are clamped to the nearest valid index (JAX's gather rule). Constant indices
are checked at trace time and give numpy's error.

A boolean mask selects as many elements as it has True values, so the result's shape
depends on the data: a numpy mask becomes integer indices at trace time; a traced mask is
refused with an error that says so and how to rewrite the code.
"""

from __future__ import annotations

import builtins
import types
from dataclasses import dataclass
from typing import Callable, Sequence, Union

import numpy as np

from .. import dtypes
from .._mlir import arith, dim_map, index_constant, ir, tensor
from ..core import Tracer, current_trace, user_location
from ..errors import TracingError, UnsupportedOpError
from ..lowering import (add_work, drop_broadcast_dims, empty, extract_slice, gather_source,
                        generic, parallel, strided_index, wrap)
from . import elementwise as ew
from . import shape as shape_ops
from .arguments import as_tracer, broadcast_result_shape
from .scalar import cmpi, select

EXPORTS: dict[str, list[str]] = {
    "methods": [],
    "numpy": [],
    "lax": [],
    "nn": [],
}

# Index items that make an index more than basic: arrays, traced scalars, boolean masks.
ARRAY_LIKE_INDEX = (Tracer, np.ndarray, list, bool, np.bool_)

# ---- the index, one item per axis -----------------------------------------------------------


@dataclass(frozen=True)
class NewAxis:
    """``None`` in an index: a new axis of size 1."""


@dataclass(frozen=True)
class Slice:
    axis: int
    start: int  # first element read (0 when count is 0)
    step: int
    count: int
    raw: slice

    def full(self, n: int) -> bool:
        return self.start == 0 and self.step == 1 and self.count == n


@dataclass(frozen=True)
class Int:
    """A static integer, already in [0, n)."""

    axis: int
    value: int


@dataclass(frozen=True)
class ScalarIndex:
    """A traced 0-d integer."""

    axis: int
    value: Tracer


@dataclass(frozen=True)
class Array:
    """An integer array: traced, or numpy (int64, negative indices already wrapped)."""

    axis: int
    value: Union[Tracer, np.ndarray]

    @property
    def shape(self) -> tuple:
        return tuple(self.value.shape)


Item = Union[NewAxis, Slice, Int, ScalarIndex, Array]


def data_dependent_error(where: str, mask) -> TracingError:
    return TracingError(
        f"{where}: the result's shape depends on the data (how many elements of the "
        f"traced array {mask.dtype.name}{list(mask.shape)} are True / nonzero), but a compiled "
        f"function needs every shape at trace time. Fix: select elementwise with "
        f"aotc.numpy.where(mask, x, y) (e.g. where(mask, x, 0) and a sum), make the mask a "
        f"static numpy array (a captured constant or a static argument), or ask for a "
        f"fixed-size result with nonzero(mask, size=n, fill_value=...)"
    )


def _classify(item, where: str):
    """(kind, value) of one raw index item; kinds: new, ellipsis, slice, int, scalar,
    array, mask (a static boolean array, expanded once its axes are known)."""
    if item is None:
        return "new", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, slice):
        for part in (item.start, item.stop, item.step):
            if part is not None and not isinstance(part, (int, np.integer)):
                raise TracingError(
                    f"{where}: slice bounds must be static integers, got {item!r}. A slice of "
                    f"traced length has no static shape: use aotc.lax.dynamic_slice(x, "
                    f"starts, sizes) for a traced start with a static size"
                )
        return "slice", item
    if isinstance(item, (bool, np.bool_)):
        raise UnsupportedOpError(
            f"{where}: a boolean scalar index ({item!r}) is not supported; use None to add an "
            f"axis, or a boolean array mask"
        )
    if isinstance(item, (int, np.integer)):
        return "int", int(item)
    if isinstance(item, Tracer):
        if item.dtype == np.bool_:
            raise data_dependent_error(f"{where} (boolean mask)", item)
        if dtypes.kind(item.dtype) not in ("int", "uint"):
            raise TracingError(
                f"{where}: arrays used as indices must be of integer (or boolean) type, got "
                f"a traced {item.dtype.name} array; convert it with .astype(anp.int32)"
            )
        return ("scalar" if item.ndim == 0 else "array"), item
    if isinstance(item, (list, tuple)) and builtins.any(isinstance(e, Tracer) for e in item):
        return _classify(shape_ops.stack([as_tracer(e, where) for e in item]), where)
    if isinstance(item, (np.ndarray, list, tuple)):
        array = np.asarray(item)
        if array.dtype == np.bool_:
            return "mask", array
        if array.size == 0 and array.dtype.kind == "f":
            array = array.astype(np.int64)  # numpy reads an empty list as an integer index
        if array.dtype.kind not in "iu":
            raise TracingError(
                f"{where}: arrays used as indices must be of integer (or boolean) type, got "
                f"{array.dtype.name} {item!r}"
            )
        return "array", array.astype(np.int64)
    raise TracingError(
        f"{where}: only integers, slices (`:`), ellipsis (`...`), None and integer or "
        f"boolean arrays are valid indices, got {type(item).__name__} {item!r}"
    )


def _axes_used(kind: str, value) -> int:
    if kind in ("new", "ellipsis"):
        return 0
    return value.ndim if kind == "mask" else 1


def parse_index(shape: Sequence[int], index, where: str = "index",
                static_out_of_range: str = "raise") -> list[Item]:
    """The index as one item per axis of an array of ``shape`` (and one per None), with
    ``...`` expanded, static masks turned into integer arrays, static values normalized.
    A static integer (or array) out of range raises numpy's IndexError-like error, or with
    ``static_out_of_range="traced"`` becomes a constant that takes the traced rule of the
    caller's mode (JAX's ``at[...]`` modes: fill, clip, drop)."""
    raw = index if isinstance(index, tuple) else (index,)
    entries = [_classify(item, where) for item in raw]
    kinds = [k for k, _ in entries]
    if kinds.count("ellipsis") > 1:
        raise TracingError(f"{where}: an index can only have a single ellipsis ('...')")
    used = builtins.sum(_axes_used(k, v) for k, v in entries)
    if used > len(shape):
        raise TracingError(
            f"{where}: too many indices for array: array is {len(shape)}-dimensional, but "
            f"{used} were indexed"
        )
    fill_in = [("slice", slice(None))] * (len(shape) - used)
    if "ellipsis" in kinds:
        pos = kinds.index("ellipsis")
        entries = entries[:pos] + fill_in + entries[pos + 1:]
    else:
        entries = entries + fill_in

    items: list[Item] = []
    axis = 0
    for kind, value in entries:
        if kind == "new":
            items.append(NewAxis())
            continue
        if kind == "mask":
            covered = tuple(shape[axis:axis + value.ndim])
            if value.shape != covered:
                raise TracingError(
                    f"{where}: boolean index of shape {value.shape} does not match the "
                    f"indexed axes {axis}..{axis + value.ndim - 1} of shape {covered}"
                )
            for k, positions in enumerate(np.nonzero(value)):
                items.append(Array(axis + k, positions.astype(np.int64)))
            axis += value.ndim
            continue
        n = shape[axis]
        if kind == "slice":
            start, stop, step = value.indices(n)
            count = len(range(start, stop, step))
            items.append(Slice(axis, start if count else 0, step, count, value))
        elif kind == "int" and static_out_of_range == "traced" and not -n <= value < n:
            items.append(ScalarIndex(axis, current_trace().constant(np.asarray(value))))
        elif kind == "int":
            if not -n <= value < n:
                raise TracingError(
                    f"{where}: index {value} is out of bounds for axis {axis} with size {n}")
            items.append(Int(axis, value % n))
        elif kind == "scalar":
            items.append(ScalarIndex(axis, value))
        elif (static_out_of_range == "traced" and isinstance(value, np.ndarray)
              and ((value < -n) | (value >= n)).any()):
            items.append(Array(axis, current_trace().constant(value)))
        else:
            items.append(Array(axis, static_in_bounds(value, n, axis, where)
                               if isinstance(value, np.ndarray) else value))
        axis += 1
    return items


def static_in_bounds(indices: np.ndarray, n: int, axis: int, where: str) -> np.ndarray:
    bad = (indices < -n) | (indices >= n)
    if bad.any():
        raise TracingError(
            f"{where}: index {int(indices[bad].flat[0])} is out of bounds for axis {axis} "
            f"with size {n}"
        )
    return np.where(indices < 0, indices + n, indices)


def is_advanced(items: Sequence[Item]) -> bool:
    return builtins.any(isinstance(it, Array) for it in items)


def basic_index(items: Sequence[Item]) -> tuple:
    """The static part of an index, traced scalars read as 0 (their axes already sliced
    to size 1)."""
    out = []
    for it in items:
        if isinstance(it, NewAxis):
            out.append(None)
        elif isinstance(it, Slice):
            out.append(it.raw)
        elif isinstance(it, Int):
            out.append(it.value)
        else:
            out.append(0)
    return tuple(out)


@dataclass(frozen=True)
class Layout:
    """Where each item's axes go in the result (numpy's rule for advanced indices)."""

    out_shape: tuple
    advanced: tuple  # positions (in the item list) of the advanced items
    adv_shape: tuple  # the broadcast shape of the advanced items
    adv_start: int  # the result dim where the advanced block starts
    slice_dims: dict  # position of a Slice -> its result dim

    def adv_dims(self, shape: Sequence[int]) -> list[int]:
        """The result dims an advanced index of ``shape`` (broadcast from the right) maps to."""
        end = self.adv_start + len(self.adv_shape)
        return list(range(end - len(shape), end))


def layout(items: Sequence[Item], where: str = "index") -> Layout:
    """numpy's result layout. With integer arrays present, static and traced integers are
    advanced indices too (0-d arrays); the advanced dims replace the first advanced item
    when the advanced items are adjacent, else they come first."""
    advanced = tuple(k for k, it in enumerate(items) if isinstance(it, (Array, Int, ScalarIndex)))
    if not is_advanced(items):
        advanced = ()
    adv_shape = broadcast_result_shape(
        [it.shape if isinstance(it, Array) else () for k, it in enumerate(items) if k in advanced],
        f"{where}: index arrays",
    ) if advanced else ()
    adjacent = advanced == tuple(range(advanced[0], advanced[-1] + 1)) if advanced else True
    out: list[int] = []
    adv_start = 0
    slice_dims = {}
    if not adjacent:
        out.extend(adv_shape)
    for k, it in enumerate(items):
        if k in advanced:
            if adjacent and k == advanced[0]:
                adv_start = len(out)
                out.extend(adv_shape)
        elif isinstance(it, Slice):
            slice_dims[k] = len(out)
            out.append(it.count)
        elif isinstance(it, NewAxis):
            out.append(1)
    return Layout(tuple(out), advanced, tuple(adv_shape), adv_start, slice_dims)


# ---- index normalization: one rule per out-of-range mode --------------------------------------

# rule(m, i, n) with m = numpy (static indices) or aotc.numpy (traced ones).
INDEX_MODES: dict[str, Callable] = {
    # numpy's negative indices, then JAX's clamp for what is still out of range.
    "clamp": lambda m, i, n: m.clip(m.where(i < 0, i + n, i), 0, n - 1),
    # numpy's take(mode="clip"): clamps, negative indices included (they become 0).
    "clip": lambda m, i, n: m.clip(i, 0, n - 1),
    # numpy's take(mode="wrap"): modulo the axis length.
    "wrap": lambda m, i, n: m.remainder(i, n),
}


# The aotc counterparts of the numpy functions INDEX_MODES uses, for traced indices.
_TRACED_INDEX_OPS = types.SimpleNamespace(clip=ew.clip, where=ew.elementwise_where,
                                          remainder=ew.remainder)


def in_range(index, n: int):
    """Whether ``index`` (negative ones counting from the end) is inside an axis of n."""
    i = as_index_array(index)
    return (i >= -n) & (i < n)


def index_dtype(dtype) -> np.dtype:
    """What index arithmetic computes in: int32 where every value of ``dtype`` fits (GPU
    targets emulate int64, and Vulkan's cannot load 0-d int64 tensors), else int64."""
    info = dtypes.info(dtype)
    small = info.bits <= (32 if info.kind in ("int", "bool") else 16)
    return np.dtype(np.int32 if small else np.int64)


def as_index_array(index):
    """A traced index in ``index_dtype``; a numpy one in int32 when its values fit."""
    if isinstance(index, Tracer):
        return ew.astype(index, index_dtype(index.dtype))
    index = np.asarray(index)
    fits = index.size == 0 or (index.min() >= -2**31 and index.max() < 2**31)
    return index.astype(np.int32 if fits else np.int64)


def place_axes(t: Tracer, dims: Sequence[int], rank: int) -> Tracer:
    """``t`` reshaped to ``rank`` axes, its own axes at ``dims`` and size 1 elsewhere, so
    it broadcasts against a result whose dims ``dims`` it indexes."""
    shape = [1] * rank
    for d, size in zip(dims, t.shape):
        shape[d] = size
    return shape_ops.reshape(t, tuple(shape))


def normalized(index, n: int, mode: str):
    """``index`` (a Tracer or numpy array) as indices in [0, n) by ``mode``."""
    m = _TRACED_INDEX_OPS if isinstance(index, Tracer) else np
    return INDEX_MODES[mode](m, index if m is np else as_index_array(index), n)


def as_index(value: ir.Value, dtype: np.dtype) -> ir.Value:
    """An integer scalar as an MLIR ``index``."""
    unsigned = dtypes.kind(dtype) == "uint"
    cast = arith.IndexCastUIOp if unsigned else arith.IndexCastOp
    return cast(ir.IndexType.get(), value).result


def scalar_index(t: Tracer) -> ir.Value:
    """The value of a 0-d integer tracer as an MLIR ``index``, for slice offsets."""
    return as_index(tensor.ExtractOp(t.value, []).result, t.dtype)


# ---- gathers ------------------------------------------------------------------------------------


def gather(x: Tracer, items: Sequence[Item], mode: str = "clamp", fill_value=None,
           where: str = "index") -> Tracer:
    """``x[items]`` with integer arrays: one linalg.generic reading ``x`` with
    ``tensor.extract`` at indices computed from the loop indices and the index arrays.

    ``mode`` ("clamp", "clip", "wrap", or "fill" with ``fill_value``) says what an
    out-of-range index reads."""
    lay = layout(items, where)
    out_shape = lay.out_shape
    rank = len(out_shape)
    if int(np.prod(out_shape, dtype=np.int64)) == 0:
        return current_trace().constant(np.zeros(out_shape, x.dtype))
    for it in items:
        if isinstance(it, (Array, ScalarIndex)) and x.shape[it.axis] == 0:
            raise TracingError(
                f"{where}: cannot take elements from axis {it.axis} of size 0 (array of "
                f"shape {x.shape})"
            )
    x = gather_source(x)
    valid = None
    inputs, sources = [], []  # sources[axis]: how the body computes the index into x
    for k, it in enumerate(items):
        along = _arange_dim(it, x.shape) if isinstance(it, Array) else None
        if along is not None:  # take_along_axis's other axes: IREE's Vulkan code read them
            # wrong as an input from a column slice 16 or 32 wide (and each is a load)
            sources.append(("loop", lay.adv_dims(it.value.shape)[along], 0, 1))
        elif isinstance(it, (Array, ScalarIndex)):
            n = x.shape[it.axis]
            raw = it.value
            index = normalized(raw, n, "clamp" if mode == "fill" else mode)
            if mode == "fill":
                ok = in_range(raw, n)
                valid = ok if valid is None else ew.ufunc("logical_and", valid, ok)
            index = as_tracer(as_index_array(index), where)
            value, dims = drop_broadcast_dims(index, lay.adv_dims(index.shape), out_shape)
            sources.append(("input", len(inputs), index.dtype))
            inputs.append((value, dim_map(rank, dims)))
        elif isinstance(it, Int):
            sources.append(("const", it.value))
        elif isinstance(it, Slice):
            sources.append(("loop", lay.slice_dims[k], it.start, it.step))

    def body(*args):
        indices = []
        for source in sources:
            if source[0] == "input":
                indices.append(as_index(args[source[1]], source[2]))
            elif source[0] == "const":
                indices.append(index_constant(source[1]))
            else:
                indices.append(strided_index(*source[1:]))
        return [tensor.ExtractOp(x.value, indices).result]

    init = empty(out_shape, x.dtype)
    (result,) = generic(inputs, [(init, dim_map(rank, list(range(rank))))], parallel(rank), body)
    add_work(np.prod(out_shape, dtype=np.float64))
    out = wrap(result, out_shape, x.dtype)
    if valid is not None:
        fill = ew.astype(fill_value, x.dtype) if isinstance(fill_value, Tracer) \
            else np.asarray(fill_value, x.dtype)
        out = ew.elementwise_where(place_axes(valid, lay.adv_dims(valid.shape), rank), out, fill)
    return out


def _arange_dim(item: Array, shape: Sequence[int]) -> int | None:
    """The dimension along which ``item``'s static index array is ``arange`` over its
    whole axis (size 1 elsewhere), or None."""
    value, n = item.value, shape[item.axis]
    long = [d for d, size in enumerate(np.shape(value)) if size != 1]
    if not isinstance(value, np.ndarray) or len(long) != 1 or value.shape[long[0]] != n or n < 2:
        return None
    return long[0] if np.array_equal(value.reshape(-1), np.arange(n)) else None


def getitem(x: Tracer, index) -> Tracer:
    """``x[index]`` for any index numpy accepts whose result shape is static."""
    if not builtins.any(isinstance(item, ARRAY_LIKE_INDEX)
                        for item in (index if isinstance(index, tuple) else (index,))):
        return shape_ops.basic_getitem(x, index)
    return getitem_items(x, parse_index(x.shape, index))


def slice_along(x: Tracer, axis: int, start=None, stop=None) -> Tracer:
    """``x[start:stop]`` along ``axis``."""
    return getitem(x, (slice(None),) * axis + (slice(start, stop),))


def getitem_items(x: Tracer, items: Sequence[Item]) -> Tracer:
    """``x[index]`` for a parsed index: traced indices still out of range are clamped."""
    if is_advanced(items):
        return gather(x, items)
    if builtins.any(isinstance(it, ScalarIndex) for it in items):
        x = slice_at(x, *scalar_slice(x.shape, items))
    return shape_ops.basic_getitem(x, basic_index(items))


# ---- dynamic slices -------------------------------------------------------------------------


def clamped_starts(shape, starts, sizes, wrap_negative: bool) -> list:
    """Slice starts moved so that ``sizes`` elements from them fit in ``shape``
    (``jax.lax.dynamic_slice``'s rule), negative starts first counted from the end when
    ``wrap_negative``. Static starts stay ints; traced ones become ``index`` values
    computed with scalar arith ops (IREE runs them on the host, next to the slice)."""
    out = []
    for n, start, size in zip(shape, starts, sizes):
        if not isinstance(start, Tracer):
            s = int(start) + (n if wrap_negative and int(start) < 0 else 0)
            out.append(builtins.min(builtins.max(s, 0), n - size))
            continue
        with user_location():
            s = scalar_index(start)
            if wrap_negative:
                from_end = arith.AddIOp(s, index_constant(n)).result
                s = select(cmpi("slt", s, index_constant(0)), from_end, s)
            s = arith.MinSIOp(s, index_constant(n - size)).result
            out.append(arith.MaxSIOp(s, index_constant(0)).result)
    return out


def scalar_slice(shape, items: Sequence[Item]) -> tuple[list, list]:
    """(starts, sizes) of the slice the traced scalars in ``items`` select: size 1 on their
    axes (at their clamped values), whole axes elsewhere."""
    starts, sizes = [0] * len(shape), list(shape)
    for it in items:
        if isinstance(it, ScalarIndex):
            starts[it.axis], sizes[it.axis] = it.value, 1
    return clamped_starts(shape, starts, sizes, True), sizes


def slice_at(x: Tracer, starts, sizes) -> Tracer:
    """``tensor.extract_slice`` of ``sizes`` at ``starts`` (ints or ``index`` values, in range)."""
    sizes = [int(s) for s in sizes]
    at_origin = builtins.all(not isinstance(s, ir.Value) and s == 0 for s in starts)
    if at_origin and tuple(sizes) == x.shape:
        return x
    return wrap(extract_slice(x.value, x.shape, starts, sizes, None, x.dtype), sizes, x.dtype)
