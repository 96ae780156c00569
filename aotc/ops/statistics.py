"""numpy's statistics and NaN-ignoring reductions, built from aotc's reductions,
elementwise ops, take and sort (no new MLIR of their own):

    nansum nanprod nanmax nanmin   the reduction of x with NaNs replaced by its identity;
                                   nanmax/nanmin of an all-NaN slice is NaN, as in numpy
    nanmean                        nansum / count of non-NaN elements
    nanargmax nanargmin            argmax/argmin ignoring NaNs; -1 for an all-NaN slice
                                   (JAX's rule: numpy raises, which a compiled program
                                   cannot do for a run-time value)
    count_nonzero ptp average      sum(x != 0), max - min, sum(x * w) / sum(w)
    median quantile percentile     sort along the reduced axes, then numpy's "linear"
                                   method: the two neighbours of (n - 1) * q interpolated
                                   with numpy's own formula (NaN where a slice has a NaN)
    searchsorted                   per query, a count of the sorted elements before it
                                   (one comparison per element: no sort, no search loop)
    copy conj conjugate            arrays are immutable values and real: the array itself

Python ints are weak here as everywhere: they take the dtype of the arrays they meet.
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import dtypes, x64
from .._mlir import complex_dialect as cx
from ..core import Tracer
from ..errors import TracingError, UnsupportedDtypeError, UnsupportedOpError
from . import elementwise as ew
from . import reductions as red
from .arguments import as_tracer, normalize_axes, ufunc_axes
from .static_args import known_value
from .selection import take
from .shape import broadcast_to, moveaxis, reshape, transpose
from .sorting import sort

EXPORTS: dict[str, list[str]] = {
    "methods": ["searchsorted", "copy", "conj", "conjugate"],
    "numpy": ["copy", "conj", "conjugate", "nansum", "nanprod", "nanmax", "nanmin", "nanmean",
              "nanargmax", "nanargmin", "count_nonzero", "ptp", "average", "median", "quantile",
              "percentile", "searchsorted"],
    "lax": [],
    "nn": [],
}


# ---- identities ---------------------------------------------------------------------------

def copy(a) -> Tracer:
    """numpy.copy: traced arrays are immutable values, so the copy is the array itself (a
    numpy array or scalar becomes a constant; a Python scalar becomes a 0-d array of its
    own dtype, as in numpy)."""
    x = as_tracer(a, "copy")
    return Tracer(x.value, x.shape, x.dtype) if x.weak else x


def conjugate(x) -> Tracer:
    """numpy.conjugate: the complex conjugate; a real array unchanged, in numpy's result
    dtype of the ufunc."""
    t = as_tracer(x, "conjugate")
    if dtypes.is_complex(t.dtype):
        return ew.elementwise([t], [t.dtype], t.dtype, lambda z: cx.ConjOp(z).result, "conjugate")
    try:
        dtype = np.conjugate(np.zeros((), t.dtype)).dtype
    except TypeError as e:
        raise UnsupportedDtypeError(f"conjugate: numpy has no loop for {t.dtype.name} "
                                    f"({e})") from None
    return ew.astype(t, dtype)


conj = conjugate


# ---- NaN-ignoring reductions --------------------------------------------------------------

def _isnan(x: Tracer) -> Tracer | None:
    """Where ``x`` is NaN, or None when its dtype has no NaN."""
    return ew.ufunc("isnan", x) if dtypes.is_float(x.dtype) else None


def _nan_to(x: Tracer, value) -> Tracer:
    nan = _isnan(x)
    return x if nan is None else ew.elementwise_where(nan, value, x)


def nansum(a, axis=None, dtype=None, keepdims=False, initial=None) -> Tracer:
    """numpy.nansum: the sum with NaNs counted as zero (all-NaN or empty: 0)."""
    x = _nan_to(as_tracer(a, "nansum"), 0)
    return red.sum(x, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial)


def nanprod(a, axis=None, dtype=None, keepdims=False, initial=None) -> Tracer:
    """numpy.nanprod: the product with NaNs counted as one."""
    x = _nan_to(as_tracer(a, "nanprod"), 1)
    return red.prod(x, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial)


def _named(fn, name: str, doc: str):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _nan_extremum(name: str, reduce, fill: float):
    def reduction(a, axis=None, keepdims=False, initial=None):
        x = as_tracer(a, name)
        nan = _isnan(x)
        if nan is None:
            return reduce(x, axis=axis, keepdims=keepdims, initial=initial)
        axes = ufunc_axes(axis, x.ndim, name)
        # numpy's fmax/fmin.reduce: a NaN initial is skipped like a NaN element.
        if initial is not None and not isinstance(initial, Tracer) and np.isnan(initial):
            initial = fill
        result = reduce(ew.elementwise_where(nan, fill, x), axis=axes, keepdims=keepdims,
                        initial=initial)
        if initial is not None:  # an all-NaN slice gives the initial value
            return result
        return ew.elementwise_where(red.all(nan, axis=axes, keepdims=keepdims), np.nan, result)
    return _named(reduction, name, f"numpy.{name}: {name[3:]} ignoring NaNs; an all-NaN slice "
                                   f"gives NaN (with initial=: the initial value).")


nanmax = _nan_extremum("nanmax", red.max, -np.inf)
nanmin = _nan_extremum("nanmin", red.min, np.inf)


def nanmean(a, axis=None, dtype=None, keepdims=False) -> Tracer:
    """numpy.nanmean: the sum of the non-NaN elements over their count (all-NaN: NaN);
    integer and bool arrays as numpy.mean."""
    x = as_tracer(a, "nanmean")
    nan = _isnan(x)
    if nan is None:
        return red.mean(x, axis=axis, dtype=dtype, keepdims=keepdims)
    axes = ufunc_axes(axis, x.ndim, "nanmean")
    total = nansum(x, axis=axes, dtype=dtype, keepdims=keepdims)
    acc = red._accumulation_dtype(total.dtype)
    count = red.sum(ew.ufunc("logical_not", nan), axis=axes, dtype=np.int64, keepdims=keepdims)
    mean = ew.ufunc("divide", ew.astype(total, acc), ew.astype(count, acc))
    return ew.astype(mean, total.dtype)


def _nan_arg_extremum(name: str, arg_reduce, worst: float):
    def reduction(a, axis=None, keepdims=False):
        x = as_tracer(a, name)
        nan = _isnan(x)
        if nan is None:
            return arg_reduce(x, axis=axis, keepdims=keepdims)
        kw = {"axis": axis, "keepdims": keepdims}
        valid = ew.ufunc("logical_not", nan)
        best = arg_reduce(ew.elementwise_where(nan, worst, x), **kw)
        # NaNs became `worst`: they can win only when no valid element beats it. Then the
        # answer is the first valid `worst` (an infinity), or -1 when all are NaN.
        is_worst = ew.ufunc("equal", x, worst)
        beaten = red.any(ew.ufunc("logical_and", valid, ew.ufunc("logical_not", is_worst)), **kw)
        first_worst = red.argmax(is_worst, **kw)
        found = ew.elementwise_where(beaten, best, first_worst)
        return ew.elementwise_where(red.any(valid, **kw), found, np.int64(-1))
    return _named(reduction, name, f"numpy.{name}: the index of the {name[6:]} ignoring NaNs "
                                   f"(first on ties); -1 for an all-NaN slice (numpy raises; "
                                   f"JAX's rule).")


nanargmax = _nan_arg_extremum("nanargmax", red.argmax, -np.inf)
nanargmin = _nan_arg_extremum("nanargmin", red.argmin, np.inf)


# ---- counts, ranges, weighted means -------------------------------------------------------

def count_nonzero(a, axis=None, *, keepdims=False) -> Tracer:
    """numpy.count_nonzero: the number of nonzero (true) elements, as int64."""
    x = as_tracer(a, "count_nonzero")
    return red.sum(ew.ufunc("not_equal", x, 0), axis=axis, dtype=np.int64, keepdims=keepdims)


def ptp(a, axis=None, keepdims=False) -> Tracer:
    """numpy.ptp: max - min (integers wrap around as in numpy; bool is refused, as numpy
    refuses bool subtraction)."""
    x = as_tracer(a, "ptp")
    return ew.ufunc("subtract", red.max(x, axis=axis, keepdims=keepdims),
                    red.min(x, axis=axis, keepdims=keepdims))


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """numpy.average: the mean, or with ``weights`` sum(a * w) / sum(w) (weights of a's
    shape, or of the shape of a's ``axis`` dims). ``returned``: also the sum of weights.
    Weights summing to zero give inf/NaN (numpy raises ZeroDivisionError, which a compiled
    program cannot do for run-time weights).

    >>> f = aotc.jit(lambda x: anp.average(x, axis=1, weights=[0.25, 0.75]))
    >>> print(f.lower(np.zeros((3, 2), np.float32)).metadata.signature)
    _lambda_(x: float32[3,2]) -> (out: float64[3])
    """
    x = as_tracer(a, "average")
    axes = None if axis is None else normalize_axes(axis, x.ndim, "average")
    if weights is None:
        avg = red.mean(x, axis=axes, keepdims=keepdims)
        scale = ew.astype(np.asarray(x.size // builtins.max(avg.size, 1)), avg.dtype)
    else:
        w = _weights(as_tracer(weights, "average weights"), x, axes)
        exact = dtypes.kind(x.dtype) in ("int", "uint", "bool")
        result = (dtypes.result_type(x.dtype, w.dtype, x64.default_float()) if exact
                  else dtypes.result_type(x.dtype, w.dtype))
        scale = red.sum(w, axis=axes, dtype=result, keepdims=keepdims)
        products = ew.ufunc("multiply", ew.astype(x, result), ew.astype(w, result))
        avg = ew.ufunc("divide", red.sum(products, axis=axes, keepdims=keepdims), scale)
    if not returned:
        return avg
    return avg, broadcast_to(scale, avg.shape)


def _weights(w: Tracer, x: Tracer, axes) -> Tracer:
    """``w`` broadcastable against ``x``: numpy's rule for average's weights."""
    if w.shape == x.shape:
        return w
    if axes is None:
        raise TracingError(f"average: weights of shape {w.shape} differ from a's shape "
                           f"{x.shape}, so axis must be given (numpy's TypeError: Axis must "
                           f"be specified when shapes of a and weights differ)")
    expected = tuple(x.shape[ax] for ax in axes)
    if w.shape != expected:
        raise TracingError(f"average: weights must have a's shape {x.shape} or the shape "
                           f"{expected} of a along axis {axes}, got {w.shape}")
    w = transpose(w, tuple(int(i) for i in np.argsort(axes)))
    return reshape(w, tuple(n if d in axes else 1 for d, n in enumerate(x.shape)))


# ---- order statistics ---------------------------------------------------------------------

def _to_last_axis(x: Tracer, axis, where: str) -> tuple[Tracer, tuple[int, ...]]:
    """``x`` with the reduced ``axis`` (None: all) moved last and merged into one; returns
    it and the reduced axes."""
    axes = normalize_axes(axis, x.ndim, where)
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = transpose(x, tuple(kept + list(axes)))
    n = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    return reshape(moved, tuple(x.shape[d] for d in kept) + (n,)), axes


def _keep_dims(result: Tracer, x: Tracer, axes, lead: tuple, keepdims: bool) -> Tracer:
    """``result`` (``lead`` dims, then x's kept dims) with size-1 reduced axes if asked."""
    if not keepdims:
        return result
    return reshape(result, lead + tuple(1 if d in axes else n for d, n in enumerate(x.shape)))


def _nan_slices_to_nan(result: Tracer, ordered: Tracer) -> Tracer:
    """NaN where a sorted slice ends with NaN (sort puts NaNs last), as numpy does."""
    if not dtypes.is_float(ordered.dtype):
        return result
    return ew.elementwise_where(ew.ufunc("isnan", ordered[..., -1]), np.nan, result)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False) -> Tracer:
    """numpy.median: the middle element of each sorted slice, or the mean of the middle
    two; NaN for a slice holding NaN or no elements. ``overwrite_input`` changes nothing
    (arrays are values).

    >>> f = aotc.jit(lambda x: anp.median(x, axis=0))
    >>> print(f.lower(np.zeros((5, 3), np.float32)).metadata.signature)
    _lambda_(x: float32[5,3]) -> (out: float32[3])
    """
    _no_out(out, "median")
    x = as_tracer(a, "median")
    flat, axes = _to_last_axis(x, axis, "median")
    n = flat.shape[-1]
    if n == 0:  # numpy: the mean of nothing, NaN
        return _keep_dims(red.mean(flat, axis=-1), x, axes, (), keepdims)
    ordered = sort(flat, axis=-1)
    middle = [n // 2] if n % 2 else [n // 2 - 1, n // 2]
    result = red.mean(take(ordered, np.array(middle), axis=-1), axis=-1)
    return _keep_dims(_nan_slices_to_nan(result, ordered), x, axes, (), keepdims)


QUANTILE_METHODS = ("linear",)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None) -> Tracer:
    """numpy.quantile with numpy's default method "linear": for each q, the sorted
    slice's elements next to position (n - 1) * q, interpolated as numpy does. ``q`` is
    static (a Python float or a numpy array of them, 0 <= q <= 1); its dims lead the
    result.

    >>> f = aotc.jit(lambda x: anp.quantile(x, [0.25, 0.5, 0.75], axis=1))
    >>> print(f.lower(np.zeros((4, 10), np.float32)).metadata.signature)
    _lambda_(x: float32[4,10]) -> (out: float64[3,4])
    """
    return _quantile("quantile", a, q, axis, out, method, keepdims, weights, interpolation, 1)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None) -> Tracer:
    """numpy.percentile: quantile at q / 100 (0 <= q <= 100).

    >>> f = aotc.jit(lambda x: anp.percentile(x, 90))
    >>> print(f.lower(np.zeros((4, 10), np.float32)).metadata.signature)
    _lambda_(x: float32[4,10]) -> (out: float32[])
    """
    return _quantile("percentile", a, q, axis, out, method, keepdims, weights, interpolation, 100)


def _no_out(out, where: str) -> None:
    if out is not None:
        raise UnsupportedOpError(f"{where}: out= is not supported; use the returned array")


def _quantile(name, a, q, axis, out, method, keepdims, weights, interpolation, scale):
    _no_out(out, name)
    if weights is not None or interpolation is not None or method not in QUANTILE_METHODS:
        raise UnsupportedOpError(
            f"{name}: only method='linear' without weights is supported, got method="
            f"{method!r}" + (", weights=" if weights is not None else "")
            + (", interpolation=" if interpolation is not None else "")
            + f"; supported methods: {', '.join(QUANTILE_METHODS)}")
    q = known_value(q, f"{name}: q")
    weak = type(q) in (int, float)  # numpy: a Python q takes the array's dtype
    qs = np.true_divide(q, scale) if scale != 1 else np.asarray(q)
    if qs.ndim > 1 or qs.dtype.kind not in "iuf" or not np.all((qs >= 0) & (qs <= 1)):
        raise TracingError(f"{name}: q must be a scalar or 1-d array of numbers in "
                           f"[0, {scale}], got {q!r}")
    x = as_tracer(a, name)
    flat, axes = _to_last_axis(x, axis, name)
    n = flat.shape[-1]
    if n == 0:
        raise TracingError(f"{name}: cannot take a quantile of an empty slice (a has shape "
                           f"{x.shape}, axis {axis}); numpy raises IndexError")
    ordered = sort(flat, axis=-1)
    rest = flat.shape[:-1]

    def at(indices: np.ndarray) -> Tracer:
        """ordered[..., indices] with the dims of q first."""
        picked = take(ordered, np.asarray(indices).ravel() % n, axis=-1)
        return reshape(moveaxis(picked, -1, 0), qs.shape + rest)

    virtual = (n - 1) * qs  # numpy's get_virtual_index for "linear"
    if virtual.dtype.kind in "iu":  # integer q: the points themselves, in a's dtype
        result = at(virtual)
    else:
        result = _lerp(at, virtual, n, weak, len(rest))
    return _keep_dims(_nan_slices_to_nan(result, ordered), x, axes, qs.shape, keepdims)


def _lerp(at, virtual: np.ndarray, n: int, weak: bool, rest_ndim: int) -> Tracer:
    """numpy's _get_indexes, _get_gamma and _lerp for the "linear" method, on static
    positions: the same operations, so the same rounding."""
    beyond = virtual >= n - 1  # the last element (numpy's index -1)
    below = np.where(beyond, -1, np.floor(virtual)).astype(np.int64)
    above = np.where(beyond, -1, np.floor(virtual) + 1).astype(np.int64)
    gamma = np.asarray(virtual - below, dtype=virtual.dtype)
    t = float(gamma) if weak else gamma.reshape(gamma.shape + (1,) * rest_ndim)
    lo, hi = at(below), at(above)
    diff = ew.ufunc("subtract", hi, lo)
    from_lo = ew.ufunc("add", lo, ew.ufunc("multiply", diff, t))
    from_hi = ew.ufunc("subtract", hi, ew.ufunc("multiply", diff, 1 - t))
    if weak:
        return from_hi if t >= 0.5 else from_lo
    return ew.elementwise_where(t >= 0.5, from_hi, from_lo)


# ---- searching ---------------------------------------------------------------------------

SIDES = ("left", "right")


def searchsorted(a, v, side="left", sorter=None) -> Tracer:
    """numpy.searchsorted: for each query in ``v``, the index in the sorted 1-d ``a``
    where it would be inserted (``side="left"``: before equal elements, "right": after).
    NaNs sort last, as in numpy. Computed as a count of the elements of ``a`` before each
    query: n comparisons per query, fused into one reduction (no sort, no search loop).

    >>> edges = np.array([0.0, 1.0, 2.0], np.float32)
    >>> bucket = aotc.jit(lambda x: anp.searchsorted(edges, x, side="right"))
    >>> bucket(np.array([-1.0, 1.0, 1.5, 5.0], np.float32))
    Array([0, 2, 2, 3], dtype=int64)
    """
    if side not in SIDES:
        raise TracingError(f"searchsorted: side must be one of {SIDES}, got {side!r}")
    x = as_tracer(a, "searchsorted a")
    if x.ndim != 1:
        raise TracingError(f"searchsorted: a must be 1-d, got shape {x.shape}")
    if sorter is not None:
        x = take(x, sorter)
    query = as_tracer(v, "searchsorted v")
    column = reshape(query, query.shape + (1,))
    before = ew.ufunc("less" if side == "left" else "less_equal", x, column)
    query_nan = _isnan(column)
    if query_nan is not None:  # a NaN query sorts after every number (and, right, every NaN)
        x_nan = _isnan(x)
        after = query_nan if side == "right" or x_nan is None else \
            ew.ufunc("logical_and", query_nan, ew.ufunc("logical_not", x_nan))
        before = ew.ufunc("logical_or", before, after)
    return red.sum(before, axis=-1, dtype=np.int64)
