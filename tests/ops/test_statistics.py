"""aotc.numpy's statistics and NaN-ignoring reductions (aotc/ops/statistics.py), initial=
and 0-d axes of the ufunc reductions, against numpy.

One compiled function per dtype holds every case (conftest.compare_ops); the inputs hold
the dtype's special values (NaN, +-inf, extremes), a row of NaNs, a 0-d array and an
empty array. Tolerances: conftest's "accumulate" ones (float16 rtol/atol 1e-2, float32
1e-5, float64 1e-12; integers and bools exact), since sums may be ordered differently.
Ops numpy rejects for a dtype (ptp of bool, quantile of bool, initial out of range, ...)
must be rejected by aotc at trace time too.
"""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.errors import TracingError, UnsupportedOpError

from .conftest import compare_ops, jit_call, ops_for, param_dtypes, raises_match, sample

DTYPES = ["float16", "float32", "float64", "int32", "uint8", "bool"]


def inputs(dtype):
    """x2: (4, 5) with a row of NaNs for floats; x1: (7,); x0: 0-d; xe: (3, 0); x3: (2, 3, 4);
    s1: a sorted (6,) array (NaNs last) to search; xn: x2 without its all-NaN row."""
    x2 = sample(dtype, (4, 5), seed=1)
    if np.dtype(dtype).kind == "f":
        x2[2] = np.nan
    xn = np.delete(x2, 2, axis=0)
    return {"x2": x2, "x1": sample(dtype, (7,), seed=2), "x0": sample(dtype, (), seed=3),
            "xe": np.zeros((3, 0), dtype), "x3": sample(dtype, (2, 3, 4), seed=4),
            "s1": np.sort(sample(dtype, (6,), seed=5)), "xn": xn}


W5 = [1.0, 2.0, 0.5, 3.0, 1.5]

# Each op: lambda m, x2, x1, x0, xe, x3, s1, xn (m is numpy or aotc.numpy).
OPS = {
    # NaN-ignoring reductions
    "nansum(x2)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nansum(x2),
    "nansum(x2, axis=1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nansum(x2, axis=1),
    "nansum(x3, axis=(0, 2), keepdims)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nansum(
        x3, axis=(0, 2), keepdims=True),
    "nansum(x0, axis=-1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nansum(x0, axis=-1),
    "nansum(xe, axis=1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nansum(xe, axis=1),
    "nansum(x2, initial=5)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nansum(x2, axis=0, initial=5),
    "nanprod(x1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nanprod(x1),
    "nanprod(x2, axis=0)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nanprod(x2, axis=0),
    "nanmax(x2, axis=1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nanmax(x2, axis=1),
    "nanmax(x2)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nanmax(x2),
    "nanmax(x0, axis=0)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nanmax(x0, axis=0),
    "nanmax(x2, axis=1, initial=2)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nanmax(
        x2, axis=1, initial=2),
    "nanmax(xe, axis=1, initial=1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nanmax(
        xe, axis=1, initial=1),
    "nanmin(x2, axis=0, keepdims)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nanmin(
        x2, axis=0, keepdims=True),
    "nanmin(x3, axis=2)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nanmin(x3, axis=2),
    "nanmean(x2, axis=1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nanmean(x2, axis=1),
    "nanmean(x2)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nanmean(x2),
    "nanmean(x0, axis=0)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nanmean(x0, axis=0),
    "nanmean(xe, axis=1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nanmean(xe, axis=1),
    "nanargmax(xn, axis=1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nanargmax(xn, axis=1),
    "nanargmax(xn)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nanargmax(xn),
    "nanargmin(xn, axis=0)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nanargmin(xn, axis=0),
    "nanargmin(x1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.nanargmin(x1),
    # counts, ranges, weighted means
    "count_nonzero(x2)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.count_nonzero(x2),
    "count_nonzero(x3, axis=(0, 1))": lambda m, x2, x1, x0, xe, x3, s1, xn: m.count_nonzero(
        x3, axis=(0, 1)),
    "count_nonzero(x2, axis=1, keepdims)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.count_nonzero(
        x2, axis=1, keepdims=True),
    "count_nonzero(x0, axis=-1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.count_nonzero(
        x0, axis=-1),
    "ptp(x2, axis=1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.ptp(x2, axis=1),
    "ptp(x1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.ptp(x1),
    "ptp(x0, axis=0)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.ptp(x0, axis=0),
    "average(xn)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.average(xn),
    "average(x2, axis=1, weights)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.average(
        x2, axis=1, weights=W5),
    "average(x3, axis=(0, 2), weights)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.average(
        x3, axis=(2, 0), weights=np.arange(1.0, 9.0).reshape(4, 2).astype(np.float32)),
    "average(x2, axis=0, returned)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.average(
        x2, axis=0, returned=True),
    "average(x2, same-shape weights, returned, keepdims)":
        lambda m, x2, x1, x0, xe, x3, s1, xn: m.average(
            x2, axis=1, weights=np.arange(1, 21).reshape(4, 5), returned=True, keepdims=True),
    # order statistics
    "median(x2)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.median(x2),
    "median(xn, axis=1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.median(xn, axis=1),
    "median(x2, axis=0, keepdims)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.median(
        x2, axis=0, keepdims=True),
    "median(x1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.median(x1),
    "median(x0)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.median(x0),
    "median(xe, axis=1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.median(xe, axis=1),
    "median(x3, axis=(0, 2))": lambda m, x2, x1, x0, xe, x3, s1, xn: m.median(x3, axis=(0, 2)),
    "quantile(x2, 0.3)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.quantile(x2, 0.3),
    "quantile(xn, [0.1, 0.5, 1.0], axis=1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.quantile(
        xn, [0.1, 0.5, 1.0], axis=1),
    "quantile(x2, array, axis=0, keepdims)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.quantile(
        x2, np.array([0.25, 0.75]), axis=0, keepdims=True),
    "quantile(x1, 1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.quantile(x1, 1),
    "quantile(x1, float32 0.6)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.quantile(
        x1, np.float32(0.6)),
    "quantile(x3, 0.5, axis=(1, 2))": lambda m, x2, x1, x0, xe, x3, s1, xn: m.quantile(
        x3, 0.5, axis=(1, 2)),
    "percentile(xn, 50, axis=1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.percentile(
        xn, 50, axis=1),
    "percentile(x1, [10, 90])": lambda m, x2, x1, x0, xe, x3, s1, xn: m.percentile(x1, [10, 90]),
    # searching
    "searchsorted(s1, x2)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.searchsorted(s1, x2),
    "searchsorted(s1, x2, right)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.searchsorted(
        s1, x2, side="right"),
    "searchsorted(s1, x0)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.searchsorted(s1, x0),
    "searchsorted(s1, 2)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.searchsorted(s1, 2),
    "searchsorted(x1, x2, sorter)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.searchsorted(
        x1, x2, side="right", sorter=m.argsort(x1)),
    "s1.searchsorted(xe)": lambda m, x2, x1, x0, xe, x3, s1, xn: s1.searchsorted(xe),
    # identities
    "copy(x2)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.copy(x2),
    "copy(3)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.copy(3),
    "x1.copy()": lambda m, x2, x1, x0, xe, x3, s1, xn: x1.copy(),
    "conj(x2)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.conj(x2),
    "conjugate(x0)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.conjugate(x0),
    "x1.conj()": lambda m, x2, x1, x0, xe, x3, s1, xn: x1.conj(),
    # numpy's own functions on traced arrays (dispatch)
    "np.nanmax(x2, axis=1)": lambda m, x2, x1, x0, xe, x3, s1, xn: np.nanmax(x2, axis=1),
    "np.median(x2, axis=1)": lambda m, x2, x1, x0, xe, x3, s1, xn: np.median(x2, axis=1),
    "np.fmax.reduce(x2, axis=1)": lambda m, x2, x1, x0, xe, x3, s1, xn: np.fmax.reduce(x2, axis=1),
    "np.conj(x1)": lambda m, x2, x1, x0, xe, x3, s1, xn: np.conj(x1),
    # initial= and 0-d axes of the ufunc reductions
    "sum(x2, initial=3)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.sum(x2, axis=1, initial=3),
    "sum(x1, initial=2.5, dtype=float32)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.sum(
        x1, initial=2.5, dtype=np.float32),
    "prod(x1, initial=2)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.prod(x1, initial=2),
    "max(x2, initial=2.5)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.max(x2, axis=0, initial=2.5),
    "max(xe, axis=1, initial=-1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.max(
        xe, axis=1, initial=-1),
    "min(xe, initial=7)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.min(xe, initial=7),
    "min(x2, initial=300)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.min(x2, initial=300),
    "sum(x0, axis=-1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.sum(x0, axis=-1),
    "prod(x0, axis=0, keepdims)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.prod(
        x0, axis=0, keepdims=True),
    "max(x0, axis=0)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.max(x0, axis=0),
    "any(x0, axis=-1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.any(x0, axis=-1),
    "argmax(x0, axis=-1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.argmax(x0, axis=-1),
    "argmin(x0, axis=0, keepdims)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.argmin(
        x0, axis=0, keepdims=True),
    # numpy rejects these for 0-d arrays: so must aotc (trace time)
    "sum(x0, axis=(0,))": lambda m, x2, x1, x0, xe, x3, s1, xn: m.sum(x0, axis=(0,)),
    "mean(x0, axis=0)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.mean(x0, axis=0),
    "median(x0, axis=0)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.median(x0, axis=0),
    "max(x0, axis=1)": lambda m, x2, x1, x0, xe, x3, s1, xn: m.max(x0, axis=1),
}


@param_dtypes(DTYPES)
def test_statistics_against_numpy(dtype):
    args = inputs(dtype)
    compare_ops(ops_for(OPS, dtype, *args.values()), *args.values(), kinds="accumulate",
                where=dtype)


def test_nanargmax_of_all_nan_slice_is_minus_one():
    """numpy raises for an all-NaN slice; a compiled program answers -1 (JAX's rule)."""
    x = np.array([[np.nan, np.nan], [np.nan, 1.0], [-np.inf, np.nan], [np.nan, -np.inf]],
                 np.float32)
    got = jit_call(lambda v: {"max": anp.nanargmax(v, axis=1), "min": anp.nanargmin(v, axis=1)}, x)
    np.testing.assert_array_equal(got["max"], [-1, 1, 0, 1])
    np.testing.assert_array_equal(got["min"], [-1, 1, 0, 1])


X = aotc.ShapeDtypeStruct((4, 5), "float32")


@pytest.mark.parametrize("fn, fragments", [
    (lambda x: anp.quantile(x, x[0, 0]), ("quantile: q must be static", "traced array")),
    (lambda x: anp.quantile(x, 1.5), ("quantile: q must be", "[0, 1]", "1.5")),
    (lambda x: anp.percentile(x, [50, 101]), ("percentile: q must be", "[0, 100]")),
    (lambda x: anp.quantile(x, 0.5, method="nearest"), ("only method='linear'", "'nearest'")),
    (lambda x: anp.quantile(x[:, :0], 0.5, axis=1), ("empty slice", "(4, 0)")),
    (lambda x: anp.average(x, weights=np.ones(5)), ("axis must be given", "(5,)", "(4, 5)")),
    (lambda x: anp.average(x, axis=1, weights=np.ones(4)), ("weights must have", "(5,)", "(4,)")),
    (lambda x: anp.searchsorted(x, 1.0), ("searchsorted: a must be 1-d", "(4, 5)")),
    (lambda x: anp.searchsorted(x[0], 1.0, side="middle"), ("side must be one of", "'middle'")),
    (lambda x: anp.max(x, initial=x[0, 0]), ("max: initial must be a Python or numpy scalar",)),
    (lambda x: anp.sum(x.astype(np.uint8), initial=-1), ("sum: initial=-1", "uint8")),
])
def test_bad_arguments_name_the_argument(fn, fragments):
    exc = UnsupportedOpError if "method" in fragments[0] else TracingError
    with raises_match(exc, *fragments):
        aotc.jit(fn).lower(X)
