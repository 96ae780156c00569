"""Shape operations and basic indexing, with numpy's semantics.

Reshapes are ``tensor.collapse_shape``/``expand_shape`` (no data movement), transposes
``linalg.transpose``, slicing ``tensor.extract_slice``, joining ``tensor.concat``.
"""

from __future__ import annotations

import builtins
from typing import Sequence

import numpy as np

from .. import dtypes
from .._mlir import dim_map, linalg, tensor
from ..core import Tracer
from ..errors import TracingError, UnsupportedOpError
from ..lowering import (
    add_work,
    empty,
    extract_slice,
    gather_source,
    generic,
    parallel,
    reshape_value,
    strided_index,
    wrap,
)
from . import elementwise as ew
from .arguments import as_tracer, broadcast_result_shape, normalize_axes, normalize_axis

EXPORTS: dict[str, list[str]] = {
    "numpy": ["array_split", "broadcast_arrays", "broadcast_to", "concatenate", "expand_dims",
              "flatten", "flip", "moveaxis", "ravel", "reshape", "split", "squeeze", "stack",
              "swapaxes", "transpose", "shape", "ndim", "size", "result_type"],
    "methods": ["ravel", "squeeze", "swapaxes", "flatten"],
}


def _resolve_shape(shape, size: int, where: str) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(int(d) for d in shape)
    unknown = [i for i, d in enumerate(shape) if d == -1]
    if len(unknown) > 1 or builtins.any(d < -1 for d in shape):
        raise TracingError(f"{where}: invalid new shape {shape}: at most one -1 and no other "
                           "negative sizes")
    if unknown:
        known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise TracingError(f"{where}: cannot reshape array of size {size} into shape {shape}")
        shape = tuple(size // known if d == -1 else d for d in shape)
    if int(np.prod(shape, dtype=np.int64)) != size:
        raise TracingError(f"{where}: cannot reshape array of size {size} into shape {shape}")
    return shape


def reshape(a, shape, order="C") -> Tracer:
    if order != "C":
        raise UnsupportedOpError(f"reshape: only order='C' is supported, got order={order!r}")
    x = as_tracer(a, "reshape")
    new_shape = _resolve_shape(shape, x.size, "reshape")
    return wrap(reshape_value(x.value, x.shape, new_shape, x.dtype), new_shape, x.dtype)


def ravel(a, order="C") -> Tracer:
    return reshape(a, (-1,), order)


flatten = ravel


def transpose(a, axes=None) -> Tracer:
    x = as_tracer(a, "transpose")
    if axes is None:
        perm = tuple(reversed(range(x.ndim)))
    else:
        perm = tuple(normalize_axis(ax, x.ndim, "transpose") for ax in axes)
        if sorted(perm) != list(range(x.ndim)):
            raise TracingError(f"transpose: axes {tuple(axes)} are not a permutation of "
                               f"{tuple(range(x.ndim))}")
    if perm == tuple(range(x.ndim)):
        return x
    out_shape = tuple(x.shape[p] for p in perm)
    init = empty(out_shape, x.dtype)
    result = linalg.transpose(x.value, outs=[init], permutation=list(perm)).results[0]
    add_work(x.size)
    return wrap(result, out_shape, x.dtype)


def moveaxis(a, source, destination) -> Tracer:
    x = as_tracer(a, "moveaxis")
    src = normalize_axes(source, x.ndim, "moveaxis source")
    dst = normalize_axes(destination, x.ndim, "moveaxis destination")
    if len(src) != len(dst):
        raise TracingError("moveaxis: `source` and `destination` must have the same number "
                           "of elements")
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, order)


def swapaxes(a, axis1, axis2) -> Tracer:
    x = as_tracer(a, "swapaxes")
    perm = list(range(x.ndim))
    i, j = normalize_axis(axis1, x.ndim, "swapaxes"), normalize_axis(axis2, x.ndim, "swapaxes")
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(x, perm)


def expand_dims(a, axis) -> Tracer:
    x = as_tracer(a, "expand_dims")
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out_ndim = x.ndim + len(axes)
    positions = normalize_axes(axes, out_ndim, "expand_dims")
    dims = iter(x.shape)
    new_shape = tuple(1 if i in positions else next(dims) for i in range(out_ndim))
    return reshape(x, new_shape)


def squeeze(a, axis=None) -> Tracer:
    x = as_tracer(a, "squeeze")
    if axis is None:
        axes = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axes = normalize_axes(axis, x.ndim, "squeeze")
        for ax in axes:
            if x.shape[ax] != 1:
                raise TracingError(
                    f"squeeze: cannot select an axis to squeeze out which has size not equal "
                    f"to one (axis {ax} of shape {x.shape})"
                )
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def broadcast_to(a, shape) -> Tracer:
    x = as_tracer(a, "broadcast_to")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if len(shape) < x.ndim or broadcast_result_shape([x.shape, shape], "broadcast_to") != shape:
        raise TracingError(f"broadcast_to: cannot broadcast an array of shape {x.shape} "
                           f"to shape {shape}")
    if shape == x.shape:
        return x
    return ew.elementwise([x], [x.dtype], x.dtype, lambda v: v, "broadcast_to", out_shape=shape)


def broadcast_arrays(*args) -> list[Tracer]:
    tracers = [as_tracer(a, "broadcast_arrays") for a in args]
    shape = broadcast_result_shape([t.shape for t in tracers], "broadcast_arrays")
    return [broadcast_to(t, shape) for t in tracers]


def concatenate(arrays, axis=0, dtype=None) -> Tracer:
    tracers = [as_tracer(a, f"concatenate array {i}") for i, a in enumerate(arrays)]
    if not tracers:
        raise TracingError("concatenate: need at least one array to concatenate")
    if axis is None:
        tracers = [ravel(t) for t in tracers]
        axis = 0
    ndim = tracers[0].ndim
    if ndim == 0:
        raise TracingError("concatenate: zero-dimensional arrays cannot be concatenated")
    ax = normalize_axis(axis, ndim, "concatenate")
    for i, t in enumerate(tracers):
        if t.ndim != ndim or builtins.any(t.shape[d] != tracers[0].shape[d]
                                          for d in range(ndim) if d != ax):
            raise TracingError(
                f"concatenate: all input array dimensions except for the concatenation axis "
                f"must match exactly; array 0 has shape {tracers[0].shape}, "
                f"array {i} has shape {t.shape}"
            )
    out_dtype = dtypes.canonicalize(
        dtype if dtype is not None else dtypes.result_type(*[t.dtype for t in tracers]),
        "concatenate")
    tracers = [ew.astype(t, out_dtype) for t in tracers]
    out_shape = list(tracers[0].shape)
    out_shape[ax] = builtins.sum(t.shape[ax] for t in tracers)
    parts = [t for t in tracers if t.shape[ax] != 0] or tracers[:1]
    if len(parts) == 1:
        return parts[0]  # the others are empty along the axis
    result = tensor.ConcatOp(dtypes.tensor_type(out_shape, out_dtype), ax,
                             [t.value for t in parts]).result
    add_work(np.prod(out_shape, dtype=np.float64))
    return wrap(result, tuple(out_shape), out_dtype)


def stack(arrays, axis=0) -> Tracer:
    tracers = [as_tracer(a, f"stack array {i}") for i, a in enumerate(arrays)]
    if not tracers:
        raise TracingError("stack: need at least one array to stack")
    shapes = {t.shape for t in tracers}
    if len(shapes) != 1:
        raise TracingError("stack: all input arrays must have the same shape, "
                           f"got {sorted(shapes)}")
    ax = normalize_axis(axis, tracers[0].ndim + 1, "stack")
    return concatenate([expand_dims(t, ax) for t in tracers], axis=ax)


def split(a, indices_or_sections, axis=0) -> list[Tracer]:
    x = as_tracer(a, "split")
    ax = normalize_axis(axis, x.ndim, "split")
    n = x.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0 or n % sections:
            raise TracingError("split: array split does not result in an equal division "
                               f"({n} into {sections})")
        bounds = [i * (n // sections) for i in range(sections + 1)]
    else:
        bounds = [0] + [builtins.min(builtins.max(int(i) + (n if int(i) < 0 else 0), 0), n)
                        for i in indices_or_sections] + [n]
    pieces = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        index = [slice(None)] * x.ndim
        index[ax] = slice(start, builtins.max(start, stop))
        pieces.append(basic_getitem(x, tuple(index)))
    return pieces


def array_split(a, indices_or_sections, axis=0) -> list[Tracer]:
    x = as_tracer(a, "array_split")
    ax = normalize_axis(axis, x.ndim, "array_split")
    if isinstance(indices_or_sections, (int, np.integer)):
        n, k = x.shape[ax], int(indices_or_sections)
        sizes = [n // k + 1] * (n % k) + [n // k] * (k - n % k)
        indices_or_sections = list(np.cumsum(sizes)[:-1])
    return split(x, indices_or_sections, axis=ax)


def flip(a, axis=None) -> Tracer:
    x = as_tracer(a, "flip")
    axes = normalize_axes(axis, x.ndim, "flip")
    if not axes or builtins.all(x.shape[ax] <= 1 for ax in axes):
        return x
    return _reverse(x, axes)


def _reverse(x: Tracer, axes: Sequence[int]) -> Tracer:
    """Reads ``x`` backwards along ``axes``."""
    firsts = [x.shape[d] - 1 if d in axes else 0 for d in range(x.ndim)]
    steps = [-1 if d in axes else 1 for d in range(x.ndim)]
    return _strided_read(x, firsts, steps, x.shape)


def _strided_read(x: Tracer, firsts: Sequence[int], steps: Sequence[int],
                  counts: Sequence[int]) -> Tracer:
    """``out[i, j, ...] = x[firsts[0] + i * steps[0], ...]`` for any (negative) steps.

    The read is a ``tensor.extract`` at computed indices in the body. Neither an input
    with the affine map ``d -> n - 1 - d`` (IREE's CPU tiling rejects it when the reversed
    axis is the innermost: "operand has shape's dimension #2 to be greater than or equal
    to 4, but found 1") nor an extract from a strided ``tensor.extract_slice`` (left as an
    unrealized_conversion_cast by IREE's LLVM lowering) compiles.
    """
    rank = x.ndim
    x = gather_source(x)
    init = empty(counts, x.dtype)

    def body(_out):
        indices = [strided_index(d, firsts[d], steps[d]) for d in range(rank)]
        return [tensor.ExtractOp(x.value, indices).result]

    (result,) = generic([], [(init, dim_map(rank, list(range(rank))))], parallel(rank), body)
    add_work(np.prod(counts, dtype=np.float64))
    return wrap(result, counts, x.dtype)


# ---- basic indexing ----------------------------------------------------------------------

def basic_getitem(x: Tracer, index) -> Tracer:
    """numpy basic indexing: ints, slices (any step), None, Ellipsis (``x[index]`` with
    arrays or traced scalars in the index is ``indexing.getitem``)."""
    index = index if isinstance(index, tuple) else (index,)
    for item in index:
        if not (item is None or item is Ellipsis or isinstance(item, (slice, int, np.integer))):
            raise TracingError(f"index {item!r}: only integers, slices (`:`), ellipsis (`...`) "
                               "and None are valid indices")
    n_ellipsis = builtins.sum(1 for i in index if i is Ellipsis)
    if n_ellipsis > 1:
        raise TracingError("an index can only have a single ellipsis ('...')")
    n_real = builtins.sum(1 for i in index if i is not None and i is not Ellipsis)
    if n_real > x.ndim:
        raise TracingError(f"too many indices for array: array is {x.ndim}-dimensional, "
                           f"but {n_real} were indexed")
    if n_ellipsis:
        pos = index.index(Ellipsis)
        index = index[:pos] + (slice(None),) * (x.ndim - n_real) + index[pos + 1:]
    else:
        index = index + (slice(None),) * (x.ndim - n_real)

    # Per axis of x: the first element read, the step between reads, the count.
    firsts, sizes, strides, out_shape = [], [], [], []
    dim = 0
    for item in index:
        if item is None:
            out_shape.append(1)
            continue
        n = x.shape[dim]
        if isinstance(item, slice):
            start, stop, step = item.indices(n)
            count = len(range(start, stop, step))
            firsts.append(start if count else 0)
            sizes.append(count)
            strides.append(step if count > 1 else 1)
            out_shape.append(count)
        else:
            i = int(item)
            if not -n <= i < n:
                raise TracingError(f"index {i} is out of bounds for axis {dim} with size {n}")
            firsts.append(i % n)
            sizes.append(1)
            strides.append(1)
        dim += 1

    if x.size and builtins.any(s < 0 for s in strides):
        sliced = _strided_read(x, firsts, strides, sizes)
    else:
        value = x.value
        if sizes != list(x.shape) or builtins.any(s != 1 for s in strides):
            value = extract_slice(value, x.shape, firsts, sizes, strides, x.dtype)
        sliced = wrap(value, sizes, x.dtype)
    return reshape(sliced, tuple(out_shape))


# ---- static shape queries (numpy's functions of the same names) ---------------------------

def shape(a):
    return a.shape if isinstance(a, Tracer) else np.shape(a)


def ndim(a):
    return len(shape(a))


def size(a):
    return int(np.prod(shape(a), dtype=np.int64))


def result_type(*args):
    """numpy.result_type (jax.numpy's with the option x64 off); traced Python scalars
    are weak."""
    return dtypes.result_type(*[(ew._promotion_operand(x) if isinstance(x, Tracer) else x)
                                for x in args])
