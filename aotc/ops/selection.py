"""numpy's selection functions: ``take``, ``take_along_axis``, ``nonzero``/``argwhere``/
``flatnonzero`` (JAX's ``size=`` for traced arrays), ``compress`` and ``where``.

They are written with the gathers of ``indexing.py`` and, for ``nonzero`` of a traced
array, a running count and one scatter of the nonzero positions.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .._mlir import arith, dim_map, index_constant
from ..core import Tracer, current_trace
from ..errors import TracingError, UnsupportedOpError
from ..lowering import empty, generic, loop_index, parallel, wrap
from . import elementwise as ew
from . import shape as shape_ops
from .arguments import as_tracer, normalize_axis
from .cumulative import cumsum
from .indexing import (
    Array,
    Item,
    Slice,
    data_dependent_error,
    gather,
    getitem,
    static_in_bounds,
)
from .linalg_ext import scatter
from .scalar import cmpi, select

EXPORTS: dict[str, list[str]] = {
    "numpy": ["take", "take_along_axis", "nonzero", "argwhere", "flatnonzero", "compress",
              "where"],
    "methods": ["take", "nonzero", "compress"],
}


TAKE_MODES = {None: "clamp", "raise": "clamp", "clip": "clip", "wrap": "wrap", "fill": "fill"}


def default_fill(dtype: np.dtype):
    """JAX's fill value for take(mode="fill"): NaN, the most negative signed int, the
    largest unsigned int, True."""
    k = dtypes.kind(dtype)
    if k == "float":
        return np.nan
    if k == "bool":
        return True
    return np.iinfo(dtype).min if k == "int" else np.iinfo(dtype).max


def take(a, indices, axis=None, out=None, mode=None, fill_value=None) -> Tracer:
    """numpy.take: elements of ``a`` at ``indices`` along ``axis`` (the flattened array
    when None). ``mode``: numpy's "raise" (the default: constant indices out of range
    raise; traced ones are clamped), "clip" or "wrap", or JAX's "fill" (out-of-range
    indices read ``fill_value``, by default NaN / the dtype's extreme / True).

    >>> f = aotc.jit(lambda x, idx: anp.take(x, idx, axis=1))      # x[:, idx]
    >>> print(f.lower(np.zeros((2, 5), np.float32), np.array([4, 0, 0])).metadata.signature)
    _lambda_(x: float32[2,5], idx: int64[3]) -> (out: float32[2,3])
    """
    if out is not None:
        raise UnsupportedOpError("take: out= is not supported; use the returned array")
    if mode not in TAKE_MODES:
        raise TracingError(f"take: mode must be one of {sorted(m for m in TAKE_MODES if m)} or "
                           f"None, got {mode!r}")
    x = as_tracer(a, "take")
    if axis is None:
        x, ax = shape_ops.ravel(x), 0
    else:
        ax = normalize_axis(axis, x.ndim, "take")
    idx = indices if isinstance(indices, Tracer) else np.asarray(indices)
    empty_list = isinstance(idx, np.ndarray) and idx.size == 0
    if dtypes.kind(idx.dtype) not in ("int", "uint") and not empty_list:
        raise TracingError(f"take: indices must be integers, got {idx.dtype.name}")
    index_mode = TAKE_MODES[mode]
    if isinstance(idx, np.ndarray):
        idx = idx.astype(np.int64)
        if index_mode == "clamp":
            idx = static_in_bounds(idx, x.shape[ax], ax, "take")
    items: list[Item] = [Slice(d, 0, 1, n, slice(None)) for d, n in enumerate(x.shape)]
    items[ax] = Array(ax, idx)
    if index_mode == "fill" and fill_value is None:
        fill_value = default_fill(x.dtype)
    return gather(x, items, index_mode, fill_value, "take")


def take_along_axis(arr, indices, axis=-1) -> Tracer:
    """numpy.take_along_axis: ``out[..., j, ...] = arr[..., indices[..., j, ...], ...]``
    along ``axis`` (the flattened array when None); the other axes broadcast."""
    x = as_tracer(arr, "take_along_axis")
    idx = indices if isinstance(indices, Tracer) else np.asarray(indices)
    if axis is None:
        x, ax = shape_ops.ravel(x), 0
    else:
        ax = normalize_axis(axis, x.ndim, "take_along_axis")
    if idx.ndim != x.ndim:
        raise TracingError(
            f"take_along_axis: `indices` and `arr` must have the same number of dimensions, "
            f"got indices of shape {idx.shape} for arr of shape {x.shape}"
        )
    if dtypes.kind(idx.dtype) not in ("int", "uint"):
        raise TracingError(f"take_along_axis: indices must be integers, got {idx.dtype.name}")
    # numpy's definition: arr[aranges..., indices, aranges...] with the aranges along
    # their own axes, broadcasting against the indices.
    index = []
    for d, n in enumerate(x.shape):
        if d == ax:
            index.append(idx)
        else:
            shape = [1] * x.ndim
            shape[d] = n
            index.append(np.arange(n).reshape(shape))
    return getitem(x, tuple(index))


def _static_array(a, where: str) -> np.ndarray:
    if isinstance(a, Tracer):
        raise data_dependent_error(where, a)
    return np.asarray(a)


def _fill_rows(fill_value, ndim: int, rows: int, where: str) -> np.ndarray:
    """``rows`` rows of the fill values of nonzero(size=...) (one per dimension, or one
    for all; 0 by default, as in JAX)."""
    fill = np.asarray(0 if fill_value is None else fill_value)
    if fill.ndim > 1 or (fill.ndim == 1 and len(fill) != ndim):
        raise TracingError(f"{where}: fill_value must be a scalar or one value per dimension "
                           f"({ndim}), got {fill_value!r}")
    fill = np.broadcast_to(fill, (ndim,))
    return np.tile(fill.astype(np.int64), (rows, 1))


def _coordinates(shape: tuple) -> Tracer:
    """``out[k] = np.unravel_index(k, shape)``: the coordinates of every element, in
    row-major order, computed in a linalg.generic (no constant of the array's size)."""
    size, ndim = int(np.prod(shape, dtype=np.int64)), len(shape)
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(ndim)]

    def pick(values, d):
        chosen = index_constant(values[-1])
        for k in range(ndim - 2, -1, -1):
            chosen = select(cmpi("eq", d, index_constant(k)), index_constant(values[k]), chosen)
        return chosen

    def body(_out):
        flat, d = loop_index(0), loop_index(1)
        quotient = arith.DivUIOp(flat, pick(strides, d)).result
        coordinate = arith.RemUIOp(quotient, pick(list(shape), d)).result
        return [arith.IndexCastOp(dtypes.mlir_type(np.int64), coordinate).result]

    init = empty((size, ndim), np.int64)
    (result,) = generic([], [(init, dim_map(2, [0, 1]))], parallel(2), body)
    return wrap(result, (size, ndim), np.int64)


def _nonzero_rows(a, size, fill_value, where: str) -> Tracer:
    """The coordinates of the first ``size`` nonzero elements of ``a`` as rows (the
    argwhere matrix), padded with ``fill_value``; ``size=None`` only for static arrays."""
    if not isinstance(a, Tracer):
        rows = np.argwhere(np.asarray(a)).astype(np.int64)
        if size is not None:
            padding = _fill_rows(fill_value, rows.shape[1], max(size - len(rows), 0), where)
            rows = np.concatenate([rows[:size], padding])
        return current_trace().constant(rows)
    if size is None:
        raise data_dependent_error(where, a)
    size = int(size)
    x = as_tracer(a, where)
    # Row k of the result is the k-th nonzero element: its running count says where it
    # goes. Elements past `size` (and zeros) go to an extra row, cut off afterwards.
    flags = shape_ops.ravel(ew.astype(x, np.bool_))
    fill = current_trace().constant(_fill_rows(fill_value, x.ndim, size + 1, where))
    if x.size == 0:
        return shape_ops.basic_getitem(fill, slice(0, size))
    count_dtype = np.int64 if x.size >= 2**31 else np.int32
    position = ew.ufunc("subtract", cumsum(flags, dtype=count_dtype), 1)
    keep = ew.ufunc("logical_and", flags, ew.ufunc("less", position, size))
    target = shape_ops.reshape(ew.elementwise_where(keep, position, size), (x.size, 1))
    rows = scatter(fill, target, _coordinates(x.shape), 1, None, False)
    return shape_ops.basic_getitem(rows, slice(0, size))


def nonzero(a, *, size=None, fill_value=None) -> tuple:
    """numpy.nonzero: one index array per dimension. A traced array needs JAX's ``size=``
    (the first ``size`` nonzero elements, the rest ``fill_value``, default 0): how many
    elements are nonzero is known only at run time. A numpy array gives constants."""
    return _columns(_nonzero_rows(a, size, fill_value, "nonzero"))


def _columns(rows: Tracer) -> tuple:
    return tuple(shape_ops.basic_getitem(rows, (slice(None), d)) for d in range(rows.shape[1]))


def argwhere(a, *, size=None, fill_value=None) -> Tracer:
    """numpy.argwhere: the coordinates of the nonzero elements, one row each (traced
    arrays need ``size=``, as for nonzero)."""
    return _nonzero_rows(a, size, fill_value, "argwhere")


def flatnonzero(a, *, size=None, fill_value=None) -> Tracer:
    """numpy.flatnonzero: the flat indices of the nonzero elements (traced arrays need
    ``size=``, as for nonzero)."""
    flat = shape_ops.ravel(a) if isinstance(a, Tracer) else np.ravel(a)
    return _columns(_nonzero_rows(flat, size, fill_value, "flatnonzero"))[0]


def compress(condition, a, axis=None) -> Tracer:
    """numpy.compress with a static (numpy) condition: ``take`` of its True positions."""
    cond = _static_array(condition, "compress").astype(bool)
    if cond.ndim != 1:
        raise TracingError(f"compress: condition must be a 1-d array, got shape {cond.shape}")
    x = as_tracer(a, "compress")
    n = x.size if axis is None else x.shape[normalize_axis(axis, x.ndim, "compress")]
    picked = np.nonzero(cond)[0]
    if picked.size and picked[-1] >= n:
        raise TracingError(f"compress: condition has a True at index {int(picked[-1])}, past the "
                           f"axis of size {n}")
    return take(x, picked, axis=axis)


def where(condition, x=None, y=None, *, size=None, fill_value=None) -> Tracer:
    """numpy.where: ``where(condition, x, y)`` selects elementwise; ``where(condition)``
    is ``nonzero(condition)`` (a traced condition needs ``size=``, as for nonzero)."""
    if x is None and y is None:
        return _columns(_nonzero_rows(condition, size, fill_value,
                                      "where(condition) with one argument (nonzero)"))
    if x is None or y is None:
        raise TracingError("where: either both or neither of x and y should be given")
    return ew.elementwise_where(condition, x, y)
