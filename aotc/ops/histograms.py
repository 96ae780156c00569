"""Counting values into bins: ``histogram``, ``histogram_bin_edges``, ``histogram2d``,
``histogramdd``, ``bincount``, ``digitize``.

The number of bins is a shape, so it must be known at trace time: ``bins`` is an int or
a (numpy or traced) array of edges, ``bincount`` takes JAX's static ``length=``. Edges
from an int ``bins`` are numpy's ``linspace`` over ``range`` or the data's min and max
(traced then). Each value's bin is ``searchsorted`` on the edges (numpy's uniform-bin
arithmetic corrects itself to the same bins); counts are a scatter-add into one extra
bin for values outside every bin, which is dropped.
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import dtypes
from ..core import Tracer
from ..errors import TracingError
from .arguments import as_tracer
from .creation import arange, zeros
from .elementwise import astype, elementwise_where, ufunc
from .indexing import getitem
from .reductions import max as max_, min as min_, sum as sum_
from .shape import flip, ravel, reshape, stack
from .statistics import searchsorted

EXPORTS: dict[str, list[str]] = {
    "numpy": ["histogram", "histogram_bin_edges", "histogram2d", "histogramdd", "bincount",
              "digitize"],
}


def _static_int(value, where: str) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
        raise TracingError(f"{where} must be a non-negative int known at trace time, got "
                           f"{value!r}")
    return int(value)


def _edges(a: Tracer, bins, value_range, where: str, dtype=None) -> Tracer:
    """numpy's bin edges: ``bins`` edges as given, or ``bins + 1`` evenly spaced over
    ``range`` (or the data's min and max; equal ends are widened by 0.5 each way)."""
    if isinstance(bins, Tracer) or np.ndim(bins) == 1:
        edges = as_tracer(bins, f"{where} bins")
        if edges.ndim != 1 or edges.shape[0] < 2:
            raise TracingError(f"{where}: bins must be an int or a 1-d array of at least 2 "
                               f"edges, got shape {edges.shape}")
        if not isinstance(bins, Tracer) and np.any(np.diff(np.asarray(bins)) < 0):
            raise TracingError(f"{where}: bins must increase monotonically, when an array")
        return edges
    count = _static_int(bins, f"{where}: bins")
    if count == 0:
        raise TracingError(f"{where}: bins must be positive, when an integer")
    if dtype is None:  # numpy's histogram: the data's float dtype (histogramdd: float64)
        dtype = dtypes.result_type(a.dtype, 1.0) if not dtypes.is_float(a.dtype) else a.dtype
    if value_range is not None:
        first, last = value_range
        if first > last:
            raise TracingError(f"{where}: max must be larger than min in range parameter, "
                               f"got {value_range}")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise TracingError(f"{where}: supplied range of [{first}, {last}] is not finite")
        if first == last:
            first, last = first - 0.5, last + 0.5
        return as_tracer(np.linspace(first, last, count + 1, dtype=dtype), where)
    if a.size == 0:
        first, last = (as_tracer(np.array(v, dtype), where) for v in (0.0, 1.0))
    else:
        first, last = (astype(f(a), dtype) for f in (min_, max_))
        equal = ufunc("equal", first, last)
        first = elementwise_where(equal, ufunc("subtract", first, 0.5), first)
        last = elementwise_where(equal, ufunc("add", last, 0.5), last)
    # numpy's linspace: arange * step + start, the last edge exactly ``last``
    step = ufunc("divide", ufunc("subtract", last, first), count)
    steps = astype(arange(count + 1), dtype)
    edges = ufunc("add", ufunc("multiply", steps, step), first)
    return elementwise_where(ufunc("equal", arange(count + 1), count), last, edges)


def _bin_index(a: Tracer, edges: Tracer) -> Tracer:
    """Each value's bin (edges[i] <= v < edges[i+1], the last bin closed), or the number
    of bins for values outside them (and NaN)."""
    bins = edges.shape[0] - 1
    index = ufunc("subtract", searchsorted(edges, a, side="right"), 1)
    index = elementwise_where(ufunc("equal", a, getitem(edges, -1)), bins - 1, index)
    inside = ufunc("logical_and", ufunc("greater_equal", a, getitem(edges, 0)),
                   ufunc("less_equal", a, getitem(edges, -1)))
    return elementwise_where(inside, index, bins)


def _count(flat_index: Tracer, bins: int, weights, dtype) -> Tracer:
    """Counts (or summed ``weights``) of each index below ``bins``, as ``dtype``; the index
    ``bins`` itself collects what falls outside and is dropped."""
    values = 1 if weights is None else astype(ravel(as_tracer(weights, "weights")), dtype)
    counts = zeros((bins + 1,), dtype).at[flat_index].add(values)
    return getitem(counts, slice(None, bins))


def _counts_dtype(weights) -> np.dtype:
    """numpy's histogram counts: intp, or the weights' dtype."""
    return np.dtype(np.int64) if weights is None else as_tracer(weights, "weights").dtype


def _check_weights(weights, shape: tuple, where: str) -> None:
    if weights is not None and tuple(np.shape(weights)) != tuple(shape):
        raise TracingError(f"{where}: weights should have the same shape as a, got "
                           f"{tuple(np.shape(weights))} and {tuple(shape)}")


def histogram_bin_edges(a, bins=10, range=None, weights=None) -> Tracer:  # noqa: A002
    """numpy.histogram_bin_edges: the edges ``histogram`` would use."""
    return _edges(ravel(as_tracer(a, "histogram_bin_edges")), bins, range,
                  "histogram_bin_edges")


def _densities(counts: Tracer, edges: list[Tracer]) -> Tracer:
    """counts / bin width (per axis) / total, in float64 (numpy's density=True)."""
    density, total = astype(counts, np.float64), sum_(counts)
    for axis, e in enumerate(edges):
        width = astype(ufunc("subtract", getitem(e, slice(1, None)), getitem(e, slice(None, -1))),
                       np.float64)
        shape = tuple(-1 if d == axis else 1 for d in range(len(edges)))
        density = ufunc("divide", density, reshape(width, shape))
    return ufunc("divide", density, total)


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """numpy.histogram: counts of ``a``'s values in each bin (``bins`` an int or edges),
    and the edges; ``density`` divides by the total and the bin widths."""
    x = ravel(as_tracer(a, "histogram"))
    _check_weights(weights, np.shape(a), "histogram")
    edges = _edges(x, bins, range, "histogram")
    counts = _count(_bin_index(x, edges), edges.shape[0] - 1, weights, _counts_dtype(weights))
    if density:
        counts = _densities(counts, [edges])
    return counts, edges


def histogramdd(sample, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """numpy.histogramdd: counts of the (N, D) sample's points in each D-dimensional bin,
    and each dimension's edges."""
    points = as_tracer(sample, "histogramdd sample")
    if points.ndim == 1:
        points = reshape(points, (-1, 1))
    if points.ndim != 2:
        raise TracingError(f"histogramdd: sample must be an (N, D) array, got shape "
                           f"{points.shape}")
    d = points.shape[1]
    per_dim_bins = (list(bins) if isinstance(bins, (list, tuple)) else [bins] * d)
    ranges = list(range) if range is not None else [None] * d
    if len(per_dim_bins) != d or len(ranges) != d:
        raise TracingError(f"histogramdd: the dimension of bins and range must equal the "
                           f"sample's dimension {d}")
    _check_weights(weights, points.shape[:1], "histogramdd")
    flat, outside, all_edges, sizes = None, None, [], []
    for i in builtins.range(d):
        column = getitem(points, (slice(None), i))
        # numpy's histogramdd: edges over a given range are float64
        edges = _edges(column, per_dim_bins[i], ranges[i], "histogramdd",
                       None if ranges[i] is None else np.float64)
        n = edges.shape[0] - 1
        index = _bin_index(column, edges)
        out_here = ufunc("equal", index, n)
        outside = out_here if outside is None else ufunc("logical_or", outside, out_here)
        flat = index if flat is None else ufunc("add", ufunc("multiply", flat, n), index)
        all_edges.append(edges)
        sizes.append(n)
    total = int(np.prod(sizes))
    flat = elementwise_where(outside, total, flat)
    # numpy's histogramdd counts in float64
    counts = reshape(_count(flat, total, weights, np.float64), tuple(sizes))
    if density:
        counts = _densities(counts, all_edges)
    return counts, all_edges


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """numpy.histogram2d: counts of the points (x, y) in each 2-d bin, and both edges."""
    xs, ys = ravel(as_tracer(x, "histogram2d x")), ravel(as_tracer(y, "histogram2d y"))
    if xs.shape != ys.shape:
        raise TracingError(f"histogram2d: x and y must have the same length, got "
                           f"{xs.shape[0]} and {ys.shape[0]}")
    # numpy: a sequence of two is (x bins, y bins); anything else serves both
    count = bins.shape[0] if isinstance(bins, Tracer) and bins.ndim else (
        len(bins) if isinstance(bins, (list, tuple, np.ndarray)) else 1)
    if count != 2:
        bins = [bins, bins]
    counts, (x_edges, y_edges) = histogramdd(stack([xs, ys], axis=1), bins, range, density,
                                             weights)
    return counts, x_edges, y_edges


def bincount(x, weights=None, minlength=0, *, length=None) -> Tracer:
    """numpy.bincount of non-negative ints, with JAX's static ``length=`` (the number of
    bins; values from ``length`` up are dropped, negative ones count as 0). Without it,
    ``x`` must be known at trace time (the count depends on its largest value)."""
    minlength = _static_int(minlength, "bincount: minlength")
    values = as_tracer(x, "bincount x")
    if values.ndim != 1 or dtypes.kind(values.dtype) not in ("int", "uint", "bool"):
        raise TracingError(f"bincount: x must be a 1-d array of non-negative ints, got "
                           f"{values.dtype.name}{list(values.shape)}")
    if length is None:
        if isinstance(x, Tracer):
            raise TracingError("bincount: the number of bins depends on the values of a traced "
                               "x; give length= (JAX's static number of bins)")
        array = np.asarray(x)
        if array.size and array.min() < 0:
            raise TracingError("bincount: x must not contain negative values")
        length = max(minlength, int(array.max()) + 1 if array.size else 0)
    length = max(_static_int(length, "bincount: length"), minlength)
    _check_weights(weights, values.shape, "bincount")
    index = ufunc("maximum", astype(values, np.int64), 0)
    index = elementwise_where(ufunc("less", index, length), index, length)
    # numpy: intp counts, double sums of weights
    return _count(index, length, weights, np.int64 if weights is None else np.float64)


def digitize(x, bins, right=False) -> Tracer:
    """numpy.digitize: the index of each value's bin in monotonic ``bins`` (increasing or
    decreasing; traced bins are told apart by their ends), as int64."""
    values, edges = as_tracer(x, "digitize x"), as_tracer(bins, "digitize bins")
    if edges.ndim != 1:
        raise TracingError(f"digitize: bins must be 1-d, got shape {edges.shape}")
    side = "left" if right else "right"
    increasing = searchsorted(edges, values, side=side)
    decreasing = ufunc("subtract", edges.shape[0], searchsorted(flip(edges), values, side=side))
    if not isinstance(bins, Tracer):
        steps = np.diff(np.asarray(bins))
        if (steps >= 0).all():
            return astype(increasing, np.int64)
        if (steps <= 0).all():
            return astype(decreasing, np.int64)
        raise TracingError("digitize: bins must be monotonically increasing or decreasing")
    if edges.shape[0] == 0:
        return astype(increasing, np.int64)
    up = ufunc("less_equal", getitem(edges, 0), getitem(edges, -1))
    return astype(elementwise_where(up, increasing, decreasing), np.int64)

