"""Statistics that ignore NaNs, beyond statistics.py's sums and extrema: ``nancumsum``,
``nancumprod``, ``nanvar``, ``nanstd``, ``nanmedian``, ``nanquantile``, ``nanpercentile``.

The running sums and products count NaNs as 0 and 1. ``nanvar`` is numpy's two-pass
formula over the non-NaN elements (NaN where fewer than ``ddof`` + 1 remain). The order
statistics sort each slice (NaNs go last), count its non-NaN elements at run time and
interpolate between the two sorted neighbours of ``q * (count - 1)`` (numpy's "linear"
method), read by ``take_along_axis``; an all-NaN slice gives NaN.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes, x64
from ..core import Tracer
from ..errors import TracingError
from .arguments import as_tracer, normalize_axes
from .cumulative import cumprod, cumsum
from .elementwise import astype, clip, elementwise_where, ufunc
from .reductions import sum as sum_
from .selection import take_along_axis
from .shape import moveaxis, reshape
from .sorting import sort
from .static_args import known_value
from .statistics import _keep_dims, _no_out, _to_last_axis

EXPORTS: dict[str, list[str]] = {
    "numpy": ["nancumsum", "nancumprod", "nanvar", "nanstd", "nanmedian", "nanquantile",
              "nanpercentile"],
}


def _without_nans(a, value, where: str) -> Tracer:
    x = as_tracer(a, where)
    if not dtypes.is_float(x.dtype):
        return x
    return elementwise_where(ufunc("isnan", x), value, x)


def nancumsum(a, axis=None, dtype=None) -> Tracer:
    """numpy.nancumsum: running sums with NaNs counted as zero."""
    return cumsum(_without_nans(a, 0, "nancumsum"), axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None) -> Tracer:
    """numpy.nancumprod: running products with NaNs counted as one."""
    return cumprod(_without_nans(a, 1, "nancumprod"), axis=axis, dtype=dtype)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
           mean=None, correction=None) -> Tracer:
    """numpy.nanvar: the variance of the non-NaN elements, divided by their count - ddof
    (NaN where that is not positive); integers in float64."""
    _no_out(out, "nanvar")
    if where is not None or mean is not None:
        raise TracingError("nanvar: where= and mean= are not supported")
    if correction is not None:
        ddof = correction
    x = as_tracer(a, "nanvar")
    computed = dtypes.canonicalize(dtype or (x.dtype if dtypes.is_float(x.dtype)
                                             else np.float64), "nanvar dtype")
    x = astype(x, computed)
    axes = normalize_axes(axis, x.ndim, "nanvar")
    present = ufunc("logical_not", ufunc("isnan", x))
    count = sum_(present, axis=axes, keepdims=True, dtype=np.int64)
    zeroed = elementwise_where(present, x, 0)
    centre = ufunc("divide", sum_(zeroed, axis=axes, keepdims=True), count)
    deviation = elementwise_where(present, ufunc("subtract", x, centre), 0)
    squares = sum_(ufunc("multiply", deviation, deviation), axis=axes, keepdims=True)
    divisor = ufunc("subtract", count, ddof)
    var = elementwise_where(ufunc("greater", divisor, 0),
                            ufunc("divide", squares, astype(divisor, computed)), np.nan)
    var = astype(var, computed)
    return var if keepdims else reshape(var, tuple(n for d, n in enumerate(x.shape)
                                                   if d not in axes))


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
           mean=None, correction=None) -> Tracer:
    """numpy.nanstd: the square root of nanvar."""
    return ufunc("sqrt", nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                                correction=correction))


def _nan_quantile(name: str, a, q, axis, out, method, keepdims, scale) -> Tracer:
    _no_out(out, name)
    if method != "linear":
        raise TracingError(f"{name}: only method='linear' is supported, got {method!r}")
    q = known_value(q, f"{name}: q")
    qs = np.asarray(q)
    qs = np.true_divide(qs, scale) if scale != 1 or qs.dtype.kind != "f" else qs
    if qs.ndim > 1 or not np.all((qs >= 0) & (qs <= 1)):
        raise TracingError(f"{name}: q must be a scalar or 1-d array of numbers in "
                           f"[0, {scale}], got {q!r}")
    x = as_tracer(a, name)
    # numpy interpolates in the array's float dtype; an array q (not a Python number)
    # promotes the result's dtype afterwards
    floating = x.dtype if dtypes.is_float(x.dtype) else x64.default_float()
    out_dtype = floating if type(q) in (int, float) else dtypes.result_type(floating, qs.dtype)
    x = astype(x, floating)
    flat, axes = _to_last_axis(x, axis, name)
    if flat.shape[-1] == 0:
        raise TracingError(f"{name}: cannot take a quantile of an empty slice (a has shape "
                           f"{x.shape}, axis {axis})")
    ordered = sort(flat, axis=-1)
    count = sum_(ufunc("logical_not", ufunc("isnan", flat)), axis=-1, keepdims=True,
                 dtype=np.int64)
    last = clip(ufunc("subtract", count, 1), 0, None)
    # one column per q: virtual positions q * (count - 1), as numpy's "linear" method
    q_row = reshape(astype(qs.ravel(), dtypes.result_type(qs.dtype, floating)),
                    (1,) * (flat.ndim - 1) + (-1,))
    virtual = ufunc("multiply", q_row, astype(last, q_row.dtype))
    below = astype(ufunc("floor", virtual), np.int64)
    above = ufunc("minimum", ufunc("add", below, 1), last)
    gamma = astype(ufunc("subtract", virtual, ufunc("floor", virtual)), x.dtype)
    low, high = (take_along_axis(ordered, i, axis=-1) for i in (below, above))
    diff = ufunc("subtract", high, low)
    # numpy's _lerp: from the nearer end, so that gamma = 1 gives high exactly
    result = elementwise_where(ufunc("greater_equal", gamma, 0.5),
                               ufunc("subtract", high, ufunc("multiply", diff,
                                                             ufunc("subtract", 1, gamma))),
                               ufunc("add", low, ufunc("multiply", diff, gamma)))
    result = elementwise_where(ufunc("equal", count, 0), np.nan, result)
    result = moveaxis(result, -1, 0)
    result = reshape(result, qs.shape + flat.shape[:-1])
    return astype(_keep_dims(result, x, axes, qs.shape, keepdims), out_dtype)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None) -> Tracer:
    """numpy.nanquantile ("linear" method, static q): quantiles of the non-NaN elements."""
    if weights is not None or interpolation is not None:
        raise TracingError("nanquantile: weights= and interpolation= are not supported")
    return _nan_quantile("nanquantile", a, q, axis, out, method, keepdims, 1)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None) -> Tracer:
    """numpy.nanpercentile: nanquantile at q / 100."""
    if weights is not None or interpolation is not None:
        raise TracingError("nanpercentile: weights= and interpolation= are not supported")
    return _nan_quantile("nanpercentile", a, q, axis, out, method, keepdims, 100)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False) -> Tracer:
    """numpy.nanmedian: the median of the non-NaN elements (all-NaN slices: NaN)."""
    return _nan_quantile("nanmedian", a, 0.5, axis, out, "linear", keepdims, 1)

