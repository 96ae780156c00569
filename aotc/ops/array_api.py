"""The array API standard's names and numpy's other shape helpers: ``concat``,
``permute_dims``, ``matrix_transpose``, ``vecdot``, ``matvec``, ``vecmat``, ``unstack``,
``rollaxis``, ``hsplit``/``vsplit``/``dsplit`` and ``block``.

All are reshapes, transposes, slices and concatenations of aotc's own ops; the vector
products are matmuls (numpy's result dtypes: ``vecdot`` of int8 stays int8), so float
products reach IREE's matmul kernels.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core import Tracer
from ..errors import TracingError
from .arguments import as_tracer, normalize_axis
from .contraction import matmul
from .rearrange import atleast_1d
from .statistics import conjugate
from .shape import (basic_getitem, concatenate, expand_dims, moveaxis, ravel, reshape,
                    split, squeeze, swapaxes, transpose)

EXPORTS: dict[str, list[str]] = {
    "numpy": ["concat", "permute_dims", "matrix_transpose", "vecdot", "matvec", "vecmat",
              "unstack", "rollaxis", "hsplit", "vsplit", "dsplit", "block"],
}


def concat(arrays, /, *, axis=0) -> Tracer:
    """numpy.concat (the array API's concatenate): ``axis=None`` joins the flattened arrays."""
    if axis is None:
        return concatenate([ravel(as_tracer(a, "concat")) for a in arrays])
    return concatenate(arrays, axis=axis)


def permute_dims(a, /, axes) -> Tracer:
    """numpy.permute_dims (the array API's transpose): axes in the order ``axes``."""
    return transpose(a, axes)


def _at_least(x: Tracer, ndim: int, where: str, what: str) -> Tracer:
    if x.ndim < ndim:
        raise TracingError(f"{where}: {what} must have at least {ndim} dimension"
                           f"{'s' if ndim > 1 else ''}, got shape {x.shape}")
    return x


def matrix_transpose(x, /) -> Tracer:
    """numpy.matrix_transpose: the last two axes swapped (stacks of matrices)."""
    t = _at_least(as_tracer(x, "matrix_transpose"), 2, "matrix_transpose", "x")
    return swapaxes(t, -1, -2)


def matrix_adjoint(x: Tracer) -> Tracer:
    """The conjugate transpose of the last two axes (the transpose of real matrices): what
    the factorizations' formulas write as ^T for real and ^H for complex input."""
    t = matrix_transpose(x)
    return conjugate(t) if dtypes.is_complex(t.dtype) else t


def _vector_axis_last(x: Tracer, axis: int, where: str) -> Tracer:
    x = _at_least(x, 1, where, "the operands")
    return moveaxis(x, normalize_axis(axis, x.ndim, where), -1)


def vecdot(x1, x2, /, *, axis=-1) -> Tracer:
    """numpy.vecdot: the dot product of vectors along ``axis`` (broadcasting the other
    axes), in numpy's matmul dtype; complex ``x1`` is conjugated, as numpy's."""
    a = _vector_axis_last(as_tracer(x1, "vecdot x1"), axis, "vecdot")
    if dtypes.is_complex(a.dtype):
        a = conjugate(a)
    b = _vector_axis_last(as_tracer(x2, "vecdot x2"), axis, "vecdot")
    if a.shape[-1] != b.shape[-1]:
        raise TracingError(f"vecdot: the vectors along axis {axis} differ in length: "
                           f"{a.shape[-1]} and {b.shape[-1]}")
    return squeeze(matmul(expand_dims(a, -2), expand_dims(b, -1)), (-2, -1))


def matvec(x1, x2, /) -> Tracer:
    """numpy.matvec: matrices (..., m, n) times vectors (..., n), giving (..., m)."""
    m = _at_least(as_tracer(x1, "matvec x1"), 2, "matvec", "x1 (the matrices)")
    v = _at_least(as_tracer(x2, "matvec x2"), 1, "matvec", "x2 (the vectors)")
    return squeeze(matmul(m, expand_dims(v, -1)), -1)


def vecmat(x1, x2, /) -> Tracer:
    """numpy.vecmat: vectors (..., n) times matrices (..., n, m), giving (..., m)."""
    v = _at_least(as_tracer(x1, "vecmat x1"), 1, "vecmat", "x1 (the vectors)")
    m = _at_least(as_tracer(x2, "vecmat x2"), 2, "vecmat", "x2 (the matrices)")
    return squeeze(matmul(expand_dims(v, -2), m), -2)


def unstack(x, /, *, axis=0) -> tuple:
    """numpy.unstack: the slices along ``axis``, as a tuple (the inverse of ``stack``)."""
    t = _at_least(as_tracer(x, "unstack"), 1, "unstack", "x")
    ax = normalize_axis(axis, t.ndim, "unstack")
    return tuple(basic_getitem(t, (slice(None),) * ax + (i,)) for i in range(t.shape[ax]))


def rollaxis(a, axis, start=0) -> Tracer:
    """numpy.rollaxis: ``axis`` moved to just before position ``start`` (0 <= start <=
    ndim, negative counted from the end), the others keeping their order."""
    x = as_tracer(a, "rollaxis")
    ax = normalize_axis(axis, x.ndim, "rollaxis")
    if not isinstance(start, (int, np.integer)) or not -x.ndim <= start <= x.ndim:
        raise TracingError(f"rollaxis: start must be an int from {-x.ndim} to {x.ndim} "
                           f"for an array of dimension {x.ndim}, got {start!r}")
    start = int(start) + x.ndim if start < 0 else int(start)
    # numpy: moving an axis before a later position lands it one earlier
    return moveaxis(x, ax, start - 1 if ax < start else start)


def _directional_split(name: str, axis: int, min_ndim: int, doc: str):
    def split_along(ary, indices_or_sections) -> list[Tracer]:
        x = as_tracer(ary, name)
        if x.ndim < min_ndim:
            raise TracingError(f"{name} only works on arrays of {min_ndim} or more "
                               f"dimensions, got shape {x.shape}")
        # hsplit splits 1-d arrays along their only axis, as numpy does
        return split(x, indices_or_sections, axis=axis if x.ndim > 1 else 0)

    split_along.__name__ = split_along.__qualname__ = name
    split_along.__doc__ = doc
    return split_along


hsplit = _directional_split("hsplit", 1, 1, "numpy.hsplit: split along axis 1 (axis 0 of "
                            "a 1-d array).")
vsplit = _directional_split("vsplit", 0, 2, "numpy.vsplit: split along axis 0 (arrays of "
                            "2 or more dimensions).")
dsplit = _directional_split("dsplit", 2, 3, "numpy.dsplit: split along axis 2 (arrays of "
                            "3 or more dimensions).")


def _block_depth(arrays, path: str) -> int:
    """How deeply ``arrays`` nests lists; numpy requires the same depth everywhere."""
    if isinstance(arrays, tuple):
        raise TracingError(f"block: {path} is a tuple; numpy.block takes nested lists only")
    if not isinstance(arrays, list):
        return 0
    if not arrays:
        raise TracingError(f"block: {path} is an empty list")
    depths = {_block_depth(a, f"{path}[{i}]") for i, a in enumerate(arrays)}
    if len(depths) != 1:
        raise TracingError(f"block: the lists in {path} are nested to different depths "
                           f"{sorted(depths)}; every array must be at the same depth")
    return depths.pop() + 1


def _block_ndim(arrays) -> int:
    if isinstance(arrays, list):
        return max(_block_ndim(a) for a in arrays)
    return np.ndim(arrays) if not isinstance(arrays, Tracer) else arrays.ndim


def _assemble(arrays, depth: int, ndim: int) -> Tracer:
    """The innermost lists join along the last axis, the outer ones along earlier axes."""
    if not isinstance(arrays, list):
        t = atleast_1d(as_tracer(arrays, "block"))
        return reshape(t, (1,) * (ndim - t.ndim) + t.shape)
    parts = [_assemble(a, depth - 1, ndim) for a in arrays]
    return concatenate(parts, axis=ndim - depth)


def block(arrays) -> Tracer:
    """numpy.block: an array assembled from nested lists of blocks (the last nesting level
    joins along the last axis); blocks of fewer dimensions gain leading ones."""
    depth = _block_depth(arrays, "arrays")
    if depth == 0:
        return as_tracer(arrays, "block")
    ndim = max(depth, _block_ndim(arrays))
    return _assemble(arrays, depth, ndim)
