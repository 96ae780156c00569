"""Differences, derivatives, integrals and sliding products of arrays: ``diff``,
``ediff1d``, ``gradient``, ``trapezoid``, ``unwrap``, ``interp``, ``convolve``,
``correlate``, ``cross``.

Each is numpy's definition written with aotc.numpy's slices, ufuncs, reductions and
gathers (no new MLIR): ``convolve``/``correlate`` gather the sliding windows of the
zero-padded signal (indices known at trace time) and contract them with the kernel in
one einsum; ``interp`` finds each point's interval with ``searchsorted``.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes, x64
from ..core import Tracer
from ..errors import TracingError, UnsupportedDtypeError
from .arguments import as_tracer, normalize_axis
from .contraction import einsum
from .creation import zeros
from .cumulative import cumsum
from .elementwise import astype, elementwise_where, ufunc
from .indexing import getitem, slice_along as _slice
from .reductions import sum as sum_
from .rearrange import pad
from .selection import take
from .shape import broadcast_to, concatenate, flip, moveaxis, ravel, reshape, stack
from .sorting import argsort
from .statistics import searchsorted

EXPORTS: dict[str, list[str]] = {
    "numpy": ["diff", "ediff1d", "gradient", "trapezoid", "unwrap", "interp", "convolve",
              "correlate", "cross"],
}


def _along(values, axis: int, ndim: int) -> Tracer:
    """A 1-d array shaped to broadcast along ``axis`` of an ``ndim``-d array."""
    t = as_tracer(values, "along")
    return reshape(t, tuple(-1 if d == axis else 1 for d in range(ndim)))


def _difference(x: Tracer, axis: int) -> Tracer:
    later, earlier = _slice(x, axis, 1), _slice(x, axis, None, -1)
    # numpy: bool differences are not_equal (subtract has no bool loop)
    return ufunc("not_equal" if x.dtype == np.bool_ else "subtract", later, earlier)


def _edge(value, x: Tracer, axis: int, where: str) -> Tracer:
    t = as_tracer(value, where)
    if t.ndim == 0:
        shape = list(x.shape)
        shape[axis] = 1
        t = broadcast_to(t, tuple(shape))
    return t


def diff(a, n=1, axis=-1, prepend=None, append=None) -> Tracer:
    """numpy.diff: the ``n``-th discrete difference along ``axis`` (booleans: not_equal),
    after ``prepend``/``append`` (scalars are broadcast) are joined on."""
    x = as_tracer(a, "diff")
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise TracingError(f"diff: order n must be a non-negative integer, got {n!r}")
    if n == 0:
        return x
    if x.ndim == 0:
        raise TracingError("diff: requires an input of at least one dimension, got a 0-d array")
    axis = normalize_axis(axis, x.ndim, "diff")
    parts = [x]
    if prepend is not None:
        parts.insert(0, _edge(prepend, x, axis, "diff prepend"))
    if append is not None:
        parts.append(_edge(append, x, axis, "diff append"))
    if len(parts) > 1:
        x = concatenate(parts, axis=axis)
    for _ in range(min(int(n), x.shape[axis])):
        x = _difference(x, axis)
    return x


def ediff1d(ary, to_end=None, to_begin=None) -> Tracer:
    """numpy.ediff1d: differences of the flattened array, ``to_begin``/``to_end`` (cast to
    its dtype) joined on."""
    x = ravel(as_tracer(ary, "ediff1d"))
    parts = [_difference(x, 0)]
    for value, where, at in ((to_begin, "to_begin", 0), (to_end, "to_end", len(parts) + 1)):
        if value is None:
            continue
        extra = ravel(as_tracer(value, f"ediff1d {where}"))
        if not np.can_cast(extra.dtype, x.dtype, casting="same_kind"):
            raise TracingError(f"ediff1d: dtype of `{where}` ({extra.dtype}) must be "
                               f"compatible with input ary ({x.dtype}) under the same_kind rule")
        parts.insert(at if at == 0 else len(parts), astype(extra, x.dtype))
    return concatenate(parts) if len(parts) > 1 else parts[0]


def _inexact(x: Tracer) -> Tracer:
    return x if dtypes.is_float(x.dtype) else astype(x, x64.default_float())


def _combine(terms) -> Tracer:
    """sum of coefficient * values (coefficients: Python numbers or arrays)."""
    out = None
    for coefficient, values in terms:
        term = ufunc("multiply", coefficient, values)
        out = term if out is None else ufunc("add", out, term)
    return out


def _binary(name: str):
    return lambda a, b: ufunc(name, a, b)


_mul, _add, _sub, _div = (_binary(u) for u in ("multiply", "add", "subtract", "divide"))


def _uniform_spacing(spacing):
    """The spacing as one number when it is one, or coordinates known at trace time that
    are evenly spaced (numpy checks the same); else None."""
    if isinstance(spacing, Tracer):
        return None
    if np.ndim(spacing) == 0:
        return spacing
    steps = np.diff(np.asarray(spacing))
    if steps.dtype.kind in "iu":
        steps = steps.astype(np.float64)
    return steps[0] if steps.size and (steps == steps[0]).all() else None


def _gradient_axis(f: Tracer, axis: int, spacing, edge_order: int) -> Tracer:
    """numpy.gradient along one axis, numpy's formulas: central differences inside,
    one-sided ones (first or second order) at the two ends; ``spacing`` a number or the
    axis' coordinates."""
    n = f.shape[axis]
    if n < edge_order + 1:
        raise TracingError(f"gradient: shape of the array along axis {axis} is {n}; it must be "
                           f"at least edge_order + 1 = {edge_order + 1}")
    at = {k: _slice(f, axis, k, k + 1 if k != -1 else None) for k in (0, 1, 2, -3, -2, -1)}
    uniform = _uniform_spacing(spacing)
    if uniform is not None:
        interior = _div(_sub(_slice(f, axis, 2), _slice(f, axis, None, -2)), 2.0 * uniform)
        if edge_order == 1:
            start, end = (_div(_sub(at[1], at[0]), uniform), _div(_sub(at[-1], at[-2]), uniform))
        else:
            start = _combine([(-1.5 / uniform, at[0]), (2.0 / uniform, at[1]),
                              (-0.5 / uniform, at[2])])
            end = _combine([(0.5 / uniform, at[-3]), (-2.0 / uniform, at[-2]),
                            (1.5 / uniform, at[-1])])
        return concatenate([start, interior, end], axis=axis)
    dx = _inexact(_difference(as_tracer(spacing, "gradient varargs"), 0))
    d1, d2 = (_along(_slice(dx, 0, *bounds), axis, f.ndim) for bounds in ((None, -1), (1,)))
    interior = _combine([
        (ufunc("negative", _div(d2, _mul(d1, _add(d1, d2)))), _slice(f, axis, None, -2)),
        (_div(_sub(d2, d1), _mul(d1, d2)), _slice(f, axis, 1, -1)),
        (_div(d1, _mul(d2, _add(d1, d2))), _slice(f, axis, 2)),
    ])
    first, second, last2, last = (getitem(dx, i) for i in (0, 1, -2, -1))
    if edge_order == 1:
        start, end = _div(_sub(at[1], at[0]), first), _div(_sub(at[-1], at[-2]), last)
    else:
        a, b = first, second
        start = _combine([
            (ufunc("negative", _div(_add(_mul(2.0, a), b), _mul(a, _add(a, b)))), at[0]),
            (_div(_add(a, b), _mul(a, b)), at[1]),
            (ufunc("negative", _div(a, _mul(b, _add(a, b)))), at[2])])
        a, b = last2, last
        end = _combine([(_div(b, _mul(a, _add(a, b))), at[-3]),
                        (ufunc("negative", _div(_add(b, a), _mul(a, b))), at[-2]),
                        (_div(_add(_mul(2.0, b), a), _mul(b, _add(a, b))), at[-1])])
    return concatenate([start, interior, end], axis=axis)


def gradient(f, *varargs, axis=None, edge_order=1):
    """numpy.gradient: second-order central differences inside, first- or second-order
    (``edge_order``) one-sided ones at the ends; spacing: one number, one per axis, or
    each axis' coordinates. One array for one axis, else a tuple."""
    t = as_tracer(f, "gradient")
    if t.dtype == np.bool_:
        raise UnsupportedDtypeError("gradient: numpy has no bool subtraction; convert the "
                                    "array with .astype(...) first")
    t = _inexact(t)
    axes = tuple(range(t.ndim)) if axis is None else (
        tuple(axis) if isinstance(axis, (tuple, list)) else (axis,))
    axes = tuple(normalize_axis(a, t.ndim, "gradient") for a in axes)
    if edge_order not in (1, 2):
        raise TracingError(f"gradient: edge_order must be 1 or 2, got {edge_order!r}")
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0 and not isinstance(varargs[0], Tracer):
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TracingError(f"gradient: give no spacing, one, or one per axis ({len(axes)}), "
                           f"got {len(varargs)}")
    for s, ax in zip(spacings, axes):
        if (isinstance(s, Tracer) or np.ndim(s) == 1) and np.shape(s)[0] != t.shape[ax]:
            raise TracingError(f"gradient: coordinates of axis {ax} must have its length "
                               f"{t.shape[ax]}, got {np.shape(s)[0]}")
    # numpy writes every axis' result into an array of f's (inexact) dtype
    out = tuple(astype(_gradient_axis(t, ax, s, edge_order), t.dtype)
                for ax, s in zip(axes, spacings))
    return out[0] if len(out) == 1 else out


def trapezoid(y, x=None, dx=1.0, axis=-1) -> Tracer:
    """numpy.trapezoid: the integral of ``y`` along ``axis`` by the trapezoidal rule, with
    sample points ``x`` (1-d, or ``y``'s shape) or a spacing ``dx``."""
    t = as_tracer(y, "trapezoid")
    axis = normalize_axis(axis, t.ndim, "trapezoid")
    if x is None:
        widths = dx
    else:
        points = as_tracer(x, "trapezoid x")
        if points.ndim == 1:
            widths = _along(_difference(points, 0), axis, t.ndim)
        else:
            widths = _difference(points, normalize_axis(axis - t.ndim, points.ndim, "trapezoid"))
    heights = ufunc("add", _slice(t, axis, 1), _slice(t, axis, None, -1))
    return sum_(ufunc("divide", ufunc("multiply", widths, heights), 2.0), axis=axis)


def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi) -> Tracer:
    """numpy.unwrap: steps between neighbours larger than ``discont`` (default
    ``period / 2``) are replaced by their remainders modulo ``period``."""
    t = as_tracer(p, "unwrap")
    axis = normalize_axis(axis, t.ndim, "unwrap")
    steps = _difference(t, axis)
    discont = period / 2 if discont is None else discont
    dtype = dtypes.result_type(steps.dtype, period)
    if np.issubdtype(dtype, np.integer):
        high, remainder = divmod(period, 2)
        ambiguous = remainder == 0
    else:
        high, ambiguous = period / 2, True
    low = -high
    wrapped = ufunc("add", ufunc("remainder", ufunc("subtract", steps, low), period), low)
    if ambiguous:
        at_low = ufunc("logical_and", ufunc("equal", wrapped, low), ufunc("greater", steps, 0))
        wrapped = elementwise_where(at_low, np.array(high, wrapped.dtype), wrapped)
    correction = ufunc("subtract", wrapped, steps)
    small = ufunc("less", ufunc("absolute", steps), discont)
    correction = elementwise_where(small, np.array(0, correction.dtype), correction)
    rest = ufunc("add", _slice(t, axis, 1), cumsum(correction, axis=axis))
    return concatenate([astype(_slice(t, axis, None, 1), dtype), astype(rest, dtype)], axis=axis)


def interp(x, xp, fp, left=None, right=None, period=None) -> Tracer:
    """numpy.interp: piecewise-linear interpolation of the points (``xp`` increasing,
    ``fp``) at ``x``, in float64; ``left``/``right`` (default ``fp[0]``/``fp[-1]``)
    outside them; with ``period``, ``xp`` is periodic and need not be sorted."""
    floating = x64.default_float()
    points = astype(as_tracer(x, "interp x"), floating)
    xs = astype(as_tracer(xp, "interp xp"), floating)
    ys = astype(as_tracer(fp, "interp fp"), floating)
    if xs.ndim != 1 or ys.ndim != 1 or xs.shape != ys.shape or xs.shape[0] == 0:
        raise TracingError(f"interp: xp and fp must be 1-d arrays of the same, non-zero "
                           f"length, got shapes {xs.shape} and {ys.shape}")
    if period is not None:
        if period == 0:
            raise TracingError("interp: period must be a non-zero value")
        period = abs(period)
        points = ufunc("remainder", points, period)
        xs = ufunc("remainder", xs, period)
        order = argsort(xs)
        xs, ys = take(xs, order), take(ys, order)
        xs = concatenate([ufunc("subtract", _slice(xs, 0, -1), period), xs,
                          ufunc("add", _slice(xs, 0, None, 1), period)])
        ys = concatenate([_slice(ys, 0, -1), ys, _slice(ys, 0, None, 1)])
        left = right = None
    n = xs.shape[0]
    if n == 1:
        inside = broadcast_to(getitem(ys, 0), points.shape)
    else:
        j = ufunc("subtract", searchsorted(xs, points, side="right"), 1)
        j = ufunc("minimum", ufunc("maximum", j, 0), n - 2)
        x0, x1, y0, y1 = (take(a, ufunc("add", j, k)) for a in (xs, ys) for k in (0, 1))
        slope = ufunc("divide", ufunc("subtract", y1, y0), ufunc("subtract", x1, x0))
        inside = ufunc("add", ufunc("multiply", slope, ufunc("subtract", points, x0)), y0)
        inside = elementwise_where(ufunc("equal", points, x1), y1, inside)
    below = getitem(ys, 0) if left is None else left
    above = getitem(ys, -1) if right is None else right
    out = elementwise_where(ufunc("less", points, getitem(xs, 0)), below, inside)
    out = elementwise_where(ufunc("greater", points, getitem(xs, -1)), above, out)
    return astype(out, floating)


# Where numpy's modes cut the full correlation (n + m - 1 long) of lengths n and m:
# (length, start) of the part kept.
_MODES = {
    "full": lambda n, m, swapped: (n + m - 1, 0),
    "same": lambda n, m, swapped: (max(n, m), (min(n, m) - 1) // 2 if not swapped
                                   else min(n, m) - 1 - (min(n, m) - 1) // 2),
    "valid": lambda n, m, swapped: (max(n, m) - min(n, m) + 1, min(n, m) - 1),
}


def _sliding(name: str, a, v, mode: str, reverse_kernel: bool) -> Tracer:
    x, k = as_tracer(a, f"{name} a"), as_tracer(v, f"{name} v")
    if x.ndim != 1 or k.ndim != 1:
        raise TracingError(f"{name}: a and v must be 1-d arrays, got shapes {x.shape} and "
                           f"{k.shape}")
    n, m = x.shape[0], k.shape[0]
    if n == 0 or m == 0:
        raise TracingError(f"{name}: a and v must not be empty, got lengths {n} and {m}")
    if mode not in _MODES:
        raise TracingError(f"{name}: mode must be one of {sorted(_MODES)}, got {mode!r}")
    if reverse_kernel:
        k = flip(k)
    # numpy swaps a shorter ``a`` with ``v`` (correlate then reverses its result): the
    # ``same`` mode starts elsewhere then.
    length, start = _MODES[mode](n, m, swapped=n < m and not reverse_kernel)
    padded = pad(x, (m - 1, m - 1))
    windows = np.arange(start, start + length)[:, None] + np.arange(m)[None, :]
    inside = (windows >= m - 1) & (windows < m - 1 + n)
    if inside.all():
        return einsum("wk,k->w", take(padded, windows), k)
    # numpy sums only the products of a's elements: a padding zero times an infinite
    # kernel element would add a NaN
    products = ufunc("multiply", take(padded, windows), k)
    return sum_(elementwise_where(inside, products, zeros((), products.dtype)), axis=1,
                dtype=products.dtype)


def correlate(a, v, mode="valid") -> Tracer:
    """numpy.correlate: ``c[k] = sum_n a[n + k] * v[n]`` of 1-d arrays, in mode
    ``valid`` (default), ``same`` or ``full``."""
    return _sliding("correlate", a, v, mode, reverse_kernel=False)


def convolve(a, v, mode="full") -> Tracer:
    """numpy.convolve: the discrete convolution of 1-d arrays, in mode ``full`` (default),
    ``same`` or ``valid``."""
    return _sliding("convolve", a, v, mode, reverse_kernel=True)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None) -> Tracer:
    """numpy.cross: cross products of 2- or 3-vectors along the given axes (broadcast);
    two 2-vectors give the z component alone."""
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = as_tracer(a, "cross a"), as_tracer(b, "cross b")
    x = moveaxis(x, normalize_axis(axisa, x.ndim, "cross axisa"), -1)
    y = moveaxis(y, normalize_axis(axisb, y.ndim, "cross axisb"), -1)
    sizes = (x.shape[-1], y.shape[-1])
    if any(s not in (2, 3) for s in sizes):
        raise TracingError(f"cross: incompatible dimensions for cross product (dimension must "
                           f"be 2 or 3), got {sizes[0]} and {sizes[1]}")
    dtype = dtypes.result_type(x.dtype, y.dtype)

    def components(t):
        cs = [getitem(t, (Ellipsis, i)) for i in range(t.shape[-1])]
        return cs + [zeros((), dtype)] * (3 - len(cs))

    (x0, x1, x2), (y0, y1, y2) = components(x), components(y)

    def minor(p, q, r, s):
        return ufunc("subtract", ufunc("multiply", p, q), ufunc("multiply", r, s))

    z = minor(x0, y1, x1, y0)
    if sizes == (2, 2):
        return astype(z, dtype)
    parts = [minor(x1, y2, x2, y1), minor(x2, y0, x0, y2), z]
    shape = np.broadcast_shapes(*(p.shape for p in parts))
    result = stack([broadcast_to(astype(p, dtype), shape) for p in parts], axis=-1)
    return moveaxis(result, -1, normalize_axis(axisc, result.ndim, "cross axisc"))
