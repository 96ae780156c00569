"""Sets of array elements: ``unique`` (and the array API's ``unique_all``,
``unique_counts``, ``unique_inverse``, ``unique_values``), ``union1d``, ``intersect1d``,
``setdiff1d``, ``setxor1d``, and ``trim_zeros``.

How many distinct elements an array holds is known only at run time, so traced inputs
need JAX's ``size=``: the result has that static length, cut or padded with
``fill_value`` (JAX's defaults: the smallest element found, for ``setdiff1d`` 0; indices
pad with the first one, counts with 0). Without ``size=`` the inputs must be numpy arrays
(numpy computes the result while tracing). The traced algorithm sorts the flattened
array (stable), marks the first element of each run of equal values (NaNs count as equal,
numpy's ``equal_nan=True``), numbers the runs with a cumulative sum and scatters each run's
value, first index and count to its number. ``trim_zeros`` returns a shape that depends
on the values, so it takes numpy arrays only (as in JAX).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import dtypes
from ..core import Tracer, current_trace
from ..errors import TracingError
from .arguments import as_tracer, static_value
from .creation import full, zeros
from .cumulative import cumsum
from .elementwise import astype, elementwise_where, ufunc
from .predicates import isin
from .selection import _nonzero_rows, take
from .shape import concatenate, ravel, reshape
from .sorting import argsort
from .updates import update

EXPORTS: dict[str, list[str]] = {
    "numpy": ["unique", "unique_all", "unique_counts", "unique_inverse", "unique_values",
              "union1d", "intersect1d", "setdiff1d", "setxor1d", "trim_zeros"],
}


# numpy's and JAX's result types: NamedTuples, so they are pytrees (jit returns them) and
# unpack like tuples.
class UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def _traced(*arrays) -> bool:
    return any(isinstance(a, Tracer) for a in arrays)


def _size(size, where: str) -> int:
    size = static_value(size, f"{where} size")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise TracingError(f"{where}: size must be a non-negative int, got {size!r}")
    return int(size)


def _needs_size(where: str) -> TracingError:
    return TracingError(
        f"{where}: how many elements the result has depends on the values of a traced "
        f"array, but a compiled function needs every shape at trace time. Pass JAX's "
        f"size= (the result's static length) and optionally fill_value= (what pads it), "
        f"or pass numpy arrays (numpy computes the result while tracing)")


def _different(a: Tracer, b: Tracer) -> Tracer:
    """a != b with NaN equal to NaN (numpy's equal_nan=True)."""
    differ = ufunc("not_equal", a, b)
    if a.dtype.kind != "f":
        return differ
    both_nan = ufunc("logical_and", ufunc("isnan", a), ufunc("isnan", b))
    return ufunc("logical_and", differ, ufunc("logical_not", both_nan))


def _run_starts(ordered: Tracer) -> Tracer:
    """True at the first element of each run of equal values of a sorted 1-d array."""
    if ordered.shape[0] == 0:
        return astype(ordered, np.bool_)
    later = _different(ordered[1:], ordered[:-1])
    return concatenate([full((1,), True, np.bool_), later])


def _scattered(size: int, runs: Tracer, values: Tracer, method: str, start) -> Tracer:
    """``out[runs[i]] (method)= values[i]`` into ``size`` slots holding ``start``; run
    numbers past ``size`` are dropped."""
    return update(full((size,), start, values.dtype), runs, values, method)


def _unique_traced(x: Tracer, size: int, fill_value, return_index: bool,
                   return_inverse: bool, return_counts: bool, where: str) -> tuple:
    flat = ravel(x)
    order = argsort(flat)
    ordered = take(flat, order)
    starts = _run_starts(ordered)
    runs = ufunc("subtract", cumsum(astype(starts, np.int64)), 1)
    smallest = ordered[0] if flat.shape[0] else 0
    fill = smallest if fill_value is None else fill_value
    values = _scattered(size, runs, ordered, "set", 0)
    # the slots past the number of distinct values keep the fill value
    count = runs[-1] + 1 if flat.shape[0] else 0
    filled = ufunc("greater_equal", np.arange(size), count)
    out = [elementwise_where(filled, astype(fill, x.dtype), values)]
    if return_index:
        first = _scattered(size, runs, order, "min", np.iinfo(np.int64).max)
        out.append(elementwise_where(filled, order[0] if flat.shape[0] else 0, first))
    if return_inverse:
        inverse = update(zeros(flat.shape, np.int64), order, runs, "set")
        out.append(reshape(inverse, x.shape))
    if return_counts:
        # a run's count is where the next run starts minus where it starts (a scatter-add
        # of ones would do too, but IREE 3.13 takes minutes to compile it)
        n = flat.shape[0]
        starts_at = _scattered(size + 1, runs, as_tracer(np.arange(n), "unique"), "min", n)
        out.append(ufunc("subtract", starts_at[1:], starts_at[:-1]))
    return tuple(out)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None, sorted=True):  # noqa: A002
    """numpy.unique: the sorted distinct elements (of the flattened array), optionally
    the first index of each, the inverse (in the input's shape) and the counts. Traced
    arrays need JAX's ``size=`` (and take ``fill_value=``); ``axis=`` needs a numpy array."""
    flags = (return_index, return_inverse, return_counts)
    if size is None:
        if _traced(ar):
            raise _needs_size("unique")
        result = np.unique(np.asarray(ar), *flags, axis=axis, equal_nan=equal_nan)
        return _constants(result)
    if axis is not None:
        raise TracingError(f"unique: axis={axis!r} with size= is not supported; unique of "
                           f"rows needs a numpy array (and no size=)")
    if not equal_nan:
        raise TracingError("unique: equal_nan=False is not supported with size=")
    out = _unique_traced(as_tracer(ar, "unique"), _size(size, "unique"), fill_value, *flags,
                         "unique")
    return out if any(flags) else out[0]


def _constants(result):
    if isinstance(result, tuple):
        return tuple(current_trace().constant(np.asarray(r)) for r in result)
    return current_trace().constant(np.asarray(result))


def unique_all(x, /, *, size=None, fill_value=None) -> UniqueAllResult:
    """numpy.unique_all: values, first indices, inverse indices and counts."""
    return UniqueAllResult._make(unique(x, True, True, True, size=size, fill_value=fill_value))


def unique_counts(x, /, *, size=None, fill_value=None) -> UniqueCountsResult:
    """numpy.unique_counts: the distinct values and how often each occurs."""
    return UniqueCountsResult._make(unique(x, return_counts=True, size=size,
                                      fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None) -> UniqueInverseResult:
    """numpy.unique_inverse: the distinct values and each element's index into them."""
    return UniqueInverseResult._make(unique(x, return_inverse=True, size=size,
                                       fill_value=fill_value))


def unique_values(x, /, *, size=None, fill_value=None) -> Tracer:
    """numpy.unique_values: the distinct values, sorted."""
    return unique(x, size=size, fill_value=fill_value)


def _flat_pair(ar1, ar2, where: str) -> tuple[Tracer, Tracer]:
    return ravel(as_tracer(ar1, f"{where} ar1")), ravel(as_tracer(ar2, f"{where} ar2"))


def _kept(ordered: Tracer, keep: Tracer, size: int, fill_value, default_fill) -> Tracer:
    """The elements of ``ordered`` where ``keep``, the first ``size`` of them, padded with
    ``fill_value`` (None: ``default_fill`` of the kept ones)."""
    n = ordered.shape[0]
    positions = _nonzero_rows(keep, size, n, "set operation")[:, 0]
    kept = take(ordered, positions, mode="fill", fill_value=0)
    if fill_value is None:
        fill_value = default_fill(kept)
    return elementwise_where(ufunc("less", positions, n), kept,
                             astype(fill_value, ordered.dtype))


def _first_kept(kept: Tracer):
    return kept[0] if kept.shape[0] else 0


def _set_operation(name: str, numpy_fn, keep, default_fill, pool, doc: str):
    """A set operation of ``ar1`` and ``ar2``: the sorted distinct elements of ``pool(a, b)``
    (ar1, or both, in numpy's result dtype) where ``keep(candidates, a, b)`` holds."""
    def operation(ar1, ar2, assume_unique=False, *, size=None, fill_value=None) -> Tracer:
        if size is None:
            if _traced(ar1, ar2):
                raise _needs_size(name)
            return current_trace().constant(np.asarray(numpy_fn(np.asarray(ar1),
                                                                np.asarray(ar2))))
        a, b = _flat_pair(ar1, ar2, name)
        candidates = pool(a, b)
        ordered = take(candidates, argsort(candidates))
        first = _run_starts(ordered)
        return _kept(ordered, ufunc("logical_and", first, keep(ordered, a, b)),
                     _size(size, name), fill_value, default_fill)

    operation.__name__ = operation.__qualname__ = name
    operation.__doc__ = doc
    return operation


def _promoted_ar1(a: Tracer, b: Tracer) -> Tracer:
    return astype(a, dtypes.result_type(a.dtype, b.dtype))


intersect1d = _set_operation(
    "intersect1d", np.intersect1d, lambda c, a, b: isin(c, b), _first_kept, _promoted_ar1,
    "numpy.intersect1d: the sorted distinct values in both arrays (traced: JAX's size=, "
    "fill_value= default the smallest found).")
setdiff1d = _set_operation(
    "setdiff1d", np.setdiff1d, lambda c, a, b: ufunc("logical_not", isin(c, b)),
    lambda kept: 0, lambda a, b: a,
    "numpy.setdiff1d: the sorted distinct values of ar1 not in ar2 (traced: JAX's size=, "
    "fill_value= default 0).")
setxor1d = _set_operation(
    "setxor1d", np.setxor1d, lambda c, a, b: ufunc("not_equal", isin(c, a), isin(c, b)),
    _first_kept, lambda a, b: concatenate([a, b]),
    "numpy.setxor1d: the sorted values in exactly one of the arrays (traced: JAX's size=, "
    "fill_value= default the smallest found).")


def union1d(ar1, ar2, *, size=None, fill_value=None) -> Tracer:
    """numpy.union1d: the sorted distinct values of either array (traced: JAX's size=,
    fill_value= default the smallest)."""
    if size is None:
        if _traced(ar1, ar2):
            raise _needs_size("union1d")
        return current_trace().constant(np.union1d(np.asarray(ar1), np.asarray(ar2)))
    a, b = _flat_pair(ar1, ar2, "union1d")
    return unique(concatenate([a, b]), size=size, fill_value=fill_value)


def trim_zeros(filt, trim="fb", axis=None) -> Tracer:
    """numpy.trim_zeros of a numpy array (as JAX, which needs concrete values: the result's
    shape depends on where the zeros are)."""
    if isinstance(filt, Tracer):
        raise TracingError(
            f"trim_zeros: the result's shape depends on the values of the traced array "
            f"{filt.dtype}{list(filt.shape)}, which a compiled function cannot have (JAX "
            f"refuses it too); pass a numpy array, or keep the shape and mask the zeros "
            f"with aotc.numpy.where")
    return current_trace().constant(np.asarray(np.trim_zeros(np.asarray(filt), trim, axis)))
