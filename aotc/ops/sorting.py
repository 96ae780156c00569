"""Sorting: numpy's sort and argsort, jax.lax's top_k.

sort, argsort and top_k move the axis last and sort the rows with the bitonic network of
``sort_network.py`` (linalg.generic steps in two scf.for loops); top_k sorts largest
first and keeps the first k (k = 1 is one reduction). ``iree_linalg_ext.topk`` (O(n k))
is not used: IREE 3.13 fails to compile it ("write affecting operations on global
resources are restricted to workgroup distributed contexts") when its initial outputs
are a slice of its input or an elementwise result IREE fuses into it.

The comparisons carry numpy's order: NaNs last (largest), -0.0 equal to 0.0, ties broken
by the lower index, so argsort is stable (numpy's kind="stable") and top_k puts the lower
index first. top_k ranks -0.0 below 0.0, as jax.lax.top_k does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import dtypes
from .._mlir import arith, ir
from .._mlir import complex_dialect as cx
from ..constants import scalar_constant
from ..core import Tracer
from ..errors import TracingError
from ..lowering import (
    empty,
    fill,
    gather_source,
    loop_index,
    wrap,
)
from . import elementwise as ew
from . import shape as shape_ops
from .arguments import as_tracer, normalize_axis
from .reductions import reduce_generic, reshape_flat
from .scalar import cmpf, cmpi, const, select
from .sort_network import Before, padded_width, sort_rows

EXPORTS: dict[str, list[str]] = {
    "methods": ["argsort"],"numpy": ["sort", "argsort"], "lax": ["top_k"], "nn": []}

Less = Callable[[ir.Value, ir.Value], ir.Value]


def _float_less(a, b):
    # a < b, with NaN after every number: numpy's sort order (NaNs last).
    return arith.OrIOp(cmpf("olt", a, b),
                       arith.AndIOp(cmpf("ord", a, a), cmpf("uno", b, b)).result).result


def _complex_less(a, b):
    # numpy sorts complex numbers by real part, then imaginary part (NaNs last in each).
    (ar, ai), (br, bi) = ((cx.ReOp(z).result, cx.ImOp(z).result) for z in (a, b))
    tie = arith.AndIOp(cmpf("oeq", ar, br), _float_less(ai, bi)).result
    return arith.OrIOp(_float_less(ar, br), tie).result


# The strict order of one dtype kind (``less(a, b)``), as numpy sorts it.
LESS: dict[str, Less] = {
    "float": _float_less,
    "complex": _complex_less,
    "int": lambda a, b: cmpi("slt", a, b),
    "uint": lambda a, b: cmpi("ult", a, b),
    "bool": lambda a, b: cmpi("ult", a, b),
}


def _stable(less: Less) -> Before:
    """The order in which a comes first if it is smaller, or equal with a lower index: a
    strict total order on (value, index) pairs, which makes the sort stable."""
    def before(a, index_a, b, index_b):
        tie = arith.AndIOp(arith.XOrIOp(less(b, a), _true()).result,
                           cmpi("slt", index_a, index_b)).result
        return arith.OrIOp(less(a, b), tie).result
    return before


def _true():
    return const(True, np.bool_)


def _greater(less: Less) -> Less:
    return lambda a, b: less(b, a)


def _padded(less: Less, size: int, index_dtype) -> Before:
    """``_stable(less)`` for rows padded past ``size``: the padding (indices >= size) comes
    last, whatever its value."""
    stable = _stable(less)

    def before(a, index_a, b, index_b):
        end = scalar_constant(size, index_dtype)
        pad_a, pad_b = cmpi("sge", index_a, end), cmpi("sge", index_b, end)
        return select(cmpi("eq", pad_a, pad_b), stable(a, index_a, b, index_b), pad_b)
    return before


def _narrow(x: Tracer) -> bool:
    """Whether x is sorted as int32 values: bool and 8/16-bit integers. IREE 3.13 sorts i1
    wrongly and cannot store it in topk; Vulkan cannot compare 8-bit unsigned values
    ("bitwidth emulation is not implemented yet on unsigned op"). Widening keeps the
    order, and the comparison of x's own kind (ult for bool and uint8) stays right."""
    info = dtypes.info(x.dtype)
    return info.kind != "float" and info.bits < 32


def _sort(x: Tracer, axis: int, less: Less, index_dtype=np.int32) -> tuple[Tracer, Tracer]:
    """x sorted along ``axis`` in the stable order of ``less``, and the indices that sort
    it (each element's index along ``axis`` before sorting)."""
    index_dtype = np.dtype(index_dtype)
    if x.shape[axis] <= 1 or x.size == 0:
        return x, wrap(fill(x.shape, index_dtype, 0), x.shape, index_dtype)  # all at 0
    if _narrow(x):
        # the widening would carry a strided slice into the network's gathers (55512)
        values, indices = _sort(ew.astype(gather_source(x), np.int32), axis, less, index_dtype)
        return ew.astype(values, x.dtype), indices
    moved = shape_ops.moveaxis(x, axis, -1)
    lead, size = moved.shape[:-1], moved.shape[-1]
    rows = int(np.prod(lead, dtype=np.int64))
    width = padded_width(size)
    before = _padded(less, size, index_dtype) if width > size else _stable(less)
    # the network reads its rows at computed indices (a column of a loop's result failed
    # to compile: fuzzer programs 21932, 22817)
    rows_sorted = sort_rows(gather_source(shape_ops.reshape(moved, (rows, size))).value,
                            before, index_dtype)
    results = []
    for value, dtype in zip(rows_sorted, (x.dtype, index_dtype)):
        t = wrap(value, (rows, width), dtype)[:, :size]
        results.append(shape_ops.moveaxis(shape_ops.reshape(t, lead + (size,)), -1, axis))
    return results[0], results[1]


def _sort_axis(a, axis, name: str) -> tuple[Tracer, int]:
    x = as_tracer(a, name)
    if axis is None:
        return reshape_flat(x), 0
    return x, normalize_axis(axis, x.ndim, name)


def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False) -> Tracer:
    """numpy.sort: sorted copy along ``axis`` (None: of the flattened array); NaNs last.

    ``kind`` and ``stable`` are accepted for numpy's signature; every sort is stable.
    ``descending=True`` (JAX's and the array API's) is the ascending sort reversed, as
    in JAX: NaNs first."""
    _no_order(order, "sort")
    x, axis = _sort_axis(a, axis, "sort")
    out = _sort(x, axis, LESS[dtypes.kind(x.dtype)])[0]
    return shape_ops.flip(out, axis) if descending else out


def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False,
            dtype=None) -> Tracer:
    """numpy.argsort: int64 indices that sort ``a`` along ``axis``, stable (equal elements
    keep their order, as numpy's kind="stable"); NaNs last. A 0-d array gives ``[0]``.

    JAX's ``descending=True``: indices from the largest, equal elements still in their
    order when stable (the default; ``stable=False`` gives JAX's reversed ascending
    order); ``dtype``: the indices' integer dtype."""
    _no_order(order, "argsort")
    x = as_tracer(a, "argsort")
    x, axis = _sort_axis(x, None if x.ndim == 0 else axis, "argsort")
    less = LESS[dtypes.kind(x.dtype)]
    # int64 (numpy's intp) throughout: a separate int32 -> int64 conversion fails to
    # compile for Vulkan (IREE 3.13: "failed to legalize operation 'vector.extract'").
    if not descending:
        out = _sort(x, axis, less, np.int64)[1]
    elif stable is False:
        out = shape_ops.flip(_sort(x, axis, less, np.int64)[1], axis)
    else:  # JAX's rule: sort the reversed array, map back, reverse
        order = _sort(shape_ops.flip(x, axis), axis, less, np.int64)[1]
        out = shape_ops.flip(ew.ufunc("subtract", np.int64(x.shape[axis] - 1), order), axis)
    return out if dtype is None else ew.astype(out, dtypes.canonicalize(dtype, "argsort dtype"))


def _no_order(order, name: str):
    if order is not None:
        raise TracingError(f"{name}: order= sorts structured arrays, which aotc does not have; "
                           f"got order={order!r}")


def _signbit(x):
    width = ir.FloatType(x.type).width
    bits = arith.BitcastOp(ir.IntegerType.get_signless(width), x).result
    return cmpi("slt", bits, arith.ConstantOp(bits.type, 0).result)


def _float_less_signed_zero(a, b):
    # numpy's order, except -0.0 < 0.0: the total order jax.lax.top_k ranks floats by.
    zeros = arith.AndIOp(
        cmpf("oeq", a, b),
        arith.AndIOp(_signbit(a), arith.XOrIOp(_signbit(b), _true()).result).result).result
    return arith.OrIOp(_float_less(a, b), zeros).result


# top_k's order: jax's, which differs from numpy's for signed zeros only.
TOP_K_LESS: dict[str, Less] = {**LESS, "float": _float_less_signed_zero}


def top_k(operand, k: int) -> tuple[Tracer, Tracer]:
    """jax.lax.top_k: the ``k`` largest elements along the last axis, largest first, and
    their int32 indices; equal elements in index order, NaNs largest, -0.0 below 0.0.

    >>> top2 = aotc.jit(lambda scores: aotc.lax.top_k(scores, 2))
    >>> top2(np.array([1.0, 5.0, 3.0, 5.0], np.float32))     # equal values in index order
    (Array([5., 5.], dtype=float32), Array([1, 3], dtype=int32))
    """
    x = as_tracer(operand, "top_k")
    if x.ndim == 0:
        raise TracingError("top_k: operand must have at least one dimension, got a 0-d array")
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise TracingError(f"top_k: k must be a static int, got {k!r} (make it a static argument)")
    n, axis = x.shape[-1], x.ndim - 1
    if not 0 <= k <= n:
        raise TracingError(
            f"top_k: k must be between 0 and the size of the last axis, got k={k} for an "
            f"operand of shape {x.shape} (last axis size {n})"
        )
    if _narrow(x):
        values, indices = top_k(ew.astype(x, np.int32), k)
        return ew.astype(values, x.dtype), indices
    index_dtype = np.dtype(np.int32)
    greater = _greater(TOP_K_LESS[dtypes.kind(x.dtype)])
    if k == 0:
        shape = x.shape[:-1] + (0,)
        return x[..., :0], wrap(empty(shape, index_dtype), shape, index_dtype)
    if k == 1:
        return _top_1(x, greater, index_dtype)
    values, indices = _sort(x, axis, greater)
    return values[..., :k], indices[..., :k]


def _top_1(x: Tracer, greater: Less, index_dtype) -> tuple[Tracer, Tracer]:
    """top_k for k=1 as one (value, index) reduction, O(n) instead of the network's
    O(n log^2 n). The initial value is the order's least (-inf or the int minimum) at the largest
    index, so every element comes before it."""
    axis = x.ndim - 1
    least = -np.inf if dtypes.is_float(x.dtype) else np.iinfo(x.dtype).min
    index_type = dtypes.mlir_type(index_dtype)
    first = _stable(greater)

    def combine(v, best, best_index):
        i = arith.IndexCastOp(index_type, loop_index(axis)).result
        take = first(v, i, best, best_index)
        return [select(take, v, best), select(take, i, best_index)]

    values, indices = reduce_generic(x, [axis], True, [x.dtype, index_dtype],
                                     [least, np.iinfo(index_dtype).max], combine, "top_k")
    return values, indices
