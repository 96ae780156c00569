"""NaN-ignoring statistics (aotc/ops/nan_statistics.py) and partial orders
(aotc/ops/partitioning.py) against numpy; partition/argpartition are checked for the
partition property (numpy's order inside the parts is unspecified); vmap against a
Python loop; errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.errors import TracingError

from .conftest import assert_same, compare_ops, jit_call, param_dtypes, raises_match, sample

DTYPES = ["float32", "float64", "int32"]


def inputs(dtype):
    x = sample(dtype, (4, 6), seed=1)
    if np.dtype(dtype).kind == "f":
        x[2] = np.nan  # an all-NaN row
        x[0, 1] = x[3, 4] = np.nan
    return (x,)


OPS = {
    "nancumsum": lambda m, x: m.nancumsum(x, axis=1),
    "nancumsum(flat)": lambda m, x: m.nancumsum(x),
    "nancumprod": lambda m, x: m.nancumprod(x / 4 if x.dtype.kind == "f" else x, axis=0),
    "nanvar": lambda m, x: m.nanvar(x, axis=1),
    "nanvar(ddof=1, keepdims)": lambda m, x: m.nanvar(x, axis=0, ddof=1, keepdims=True),
    "nanstd": lambda m, x: m.nanstd(x),
    "nanstd(ddof=5)": lambda m, x: m.nanstd(x, axis=1, ddof=5),
    "nanmedian": lambda m, x: m.nanmedian(x, axis=1),
    "nanmedian(all)": lambda m, x: m.nanmedian(x),
    "nanquantile": lambda m, x: m.nanquantile(x, 0.3, axis=1),
    "nanquantile(list, keepdims)": lambda m, x: m.nanquantile(
        x, np.array([0.0, 0.25, 1.0], np.float32), axis=0, keepdims=True),
    "nanpercentile": lambda m, x: m.nanpercentile(x, 90, axis=1),
    "lexsort": lambda m, x: m.lexsort([x[0], x[1] > 0]),
    "lexsort(2-d keys, axis=0)": lambda m, x: m.lexsort(m.stack([x > 0, x < 1]), axis=0),
}


@param_dtypes(DTYPES)
def test_nan_statistics_match_numpy(dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        compare_ops(OPS, *inputs(dtype), kinds="accumulate", where=dtype)


@param_dtypes(["float32", "int16"])
def test_partition_has_the_partition_property(dtype):
    x = sample(dtype, (3, 9), seed=2, with_specials=False)
    got = jit_call(lambda x: (anp.partition(x, 4), anp.argpartition(x, (1, 6), axis=1),
                              anp.partition(x, -1, axis=None)), x)
    want_sorted = np.sort(x, axis=1)
    assert_same(got[0][:, 4], want_sorted[:, 4])
    assert np.all(got[0][:, :4] <= got[0][:, 4:5]) and np.all(got[0][:, 5:] >= got[0][:, 4:5])
    picked = np.take_along_axis(x, got[1], axis=1)
    for k in (1, 6):
        np.testing.assert_array_equal(picked[:, k], want_sorted[:, k])
    assert_same(got[2][-1], np.sort(x, axis=None)[-1])


def test_vmap_matches_a_loop():
    xs = sample("float32", (3, 7), seed=3)
    xs[1, 2] = np.nan

    def per_row(m, x):
        return {"nanvar": m.nanvar(x), "nanmedian": m.nanmedian(x),
                "nanquantile": m.nanquantile(x, np.array([0.1, 0.9], np.float32)),
                "nancumsum": m.nancumsum(x), "lexsort": m.lexsort([x, x > 0]),
                "partition": m.partition(x, 3)[3]}

    got = jit_call(aotc.vmap(lambda x: per_row(anp, x)), xs)
    rows = [per_row(np, x) for x in xs]
    for name in got:
        want = np.stack([np.asarray(r[name]) for r in rows])
        assert_same(got[name], want, "accumulate", name)


@pytest.mark.parametrize("call, fragments", [
    (lambda x: anp.nanquantile(x, 1.5), ("nanquantile", "q", "[0, 1]")),
    (lambda x: anp.nanpercentile(x, 50, method="nearest"), ("nanpercentile", "linear")),
    (lambda x: anp.nanquantile(x, x[0, 0]), ("nanquantile", "static")),
    (lambda x: anp.partition(x, 9), ("partition", "kth 9", "size 6")),
    (lambda x: anp.argpartition(x, 1.5), ("argpartition", "kth must be an int")),
    (lambda x: anp.lexsort([x, x[0]]), ("lexsort", "same shape")),
    (lambda x: anp.nanvar(x, out=x), ("nanvar", "out=")),
], ids=["nanquantile-q", "nanpercentile-method", "nanquantile-traced", "partition-kth",
        "argpartition-kth", "lexsort-shapes", "nanvar-out"])
def test_errors_name_the_argument(call, fragments):
    with raises_match((TracingError, aotc.errors.UnsupportedOpError), *fragments):
        aotc.jit(call).lower(np.ones((4, 6), np.float32))
