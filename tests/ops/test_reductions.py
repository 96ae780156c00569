"""Reductions (sum, prod, max, min, amax, amin, any, all, mean, var, std, argmax, argmin)
against numpy: axis None / int / negative / tuple, keepdims, empty arrays, ties and NaN.
Float results use the "accumulate" tolerances of conftest.py (summation order differs)."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc import build

from .conftest import DTYPES, compare_ops, jit_call, ops_for, param_dtypes, raises_match, sample

REDUCTIONS = ["sum", "prod", "max", "min", "amax", "amin", "any", "all", "mean", "var", "std"]
AXES = [None, 0, -1, (0, 2), (2, -3)]


def _reduction(name, axis, keepdims):
    return lambda m, x: getattr(m, name)(x, axis=axis, keepdims=keepdims)


def reduction_ops(names=REDUCTIONS) -> dict:
    ops = {}
    for name in names:
        for axis in AXES:
            ops[f"{name}(axis={axis})"] = _reduction(name, axis, False)
        ops[f"{name}(axis=1, keepdims)"] = _reduction(name, 1, True)
        ops[f"{name}(axis=None, keepdims)"] = _reduction(name, None, True)
    for name in ("argmax", "argmin"):
        for axis in (None, 0, 1, -1):
            ops[f"{name}(axis={axis})"] = lambda m, x, n=name, a=axis: getattr(m, n)(x, axis=a)
        ops[f"{name}(axis=-1, keepdims)"] = lambda m, x, n=name: getattr(m, n)(
            x, axis=-1, keepdims=True
        )
        ops[f"{name}(keepdims)"] = lambda m, x, n=name: getattr(m, n)(x, keepdims=True)
    return ops


@param_dtypes(DTYPES)
def test_reductions(dtype):
    """Finite data (few distinct values, so argmax/argmin see ties)."""
    x = sample(dtype, (2, 3, 4), seed=11, with_specials=False, low=-3, high=3)
    if np.dtype(dtype).kind == "f":
        x = np.round(x * 2) / 2  # halves: exact in float16, and ties
    compare_ops(ops_for(reduction_ops(), dtype, x), x, kinds="accumulate",
                where=f"reductions {dtype}")


METHODS = {
    "x.sum()": lambda m, x: x.sum(),
    "x.sum(axis=0)": lambda m, x: x.sum(axis=0),
    "x.sum(1, keepdims=True)": lambda m, x: x.sum(1, keepdims=True),
    "x.prod(axis=-1)": lambda m, x: x.prod(axis=-1),
    "x.mean(axis=(0, 1))": lambda m, x: x.mean(axis=(0, 1)),
    "x.max(axis=-1, keepdims=True)": lambda m, x: x.max(axis=-1, keepdims=True),
    "x.min()": lambda m, x: x.min(),
    "x.argmax()": lambda m, x: x.argmax(),
    "x.argmin(axis=1)": lambda m, x: x.argmin(axis=1),
    "x.any(axis=0)": lambda m, x: x.any(axis=0),
    "x.all()": lambda m, x: x.all(),
    "x.var(ddof=1)": lambda m, x: x.var(ddof=1),
    "x.std(axis=2, ddof=1)": lambda m, x: x.std(axis=2, ddof=1),
    "var(ddof=2, axis=1)": lambda m, x: m.var(x, axis=1, ddof=2),
    "var(ddof=3, axis=1) (divides by 0)": lambda m, x: m.var(x, axis=1, ddof=3),
    "std(ddof=1, keepdims)": lambda m, x: m.std(x, ddof=1, keepdims=True),
    "sum(dtype=float64)": lambda m, x: m.sum(x, dtype=np.float64),
    "sum(dtype=int8)": lambda m, x: m.sum(x.astype(np.int8), dtype=np.int8),
    "mean(dtype=float32)": lambda m, x: m.mean(x, axis=0, dtype=np.float32),
    "prod(dtype=float64, axis=1)": lambda m, x: m.prod(x, axis=1, dtype=np.float64),
    "sum(x > 0)": lambda m, x: m.sum(x > 0),
    "mean(x > 0, axis=1)": lambda m, x: m.mean(x > 0, axis=1),
}


@param_dtypes(["float32", "int16", "bool"])
def test_methods_ddof_and_dtype(dtype):
    x = sample(dtype, (2, 3, 4), seed=12, with_specials=False, low=-3, high=3)
    compare_ops(METHODS, x, kinds="accumulate", where=f"reduction methods {dtype}")


NAN_OPS = {
    **{
        f"{n}(axis={a})": _reduction(n, a, False)
        for n in ("sum", "prod", "max", "min", "mean", "var", "any", "all")
        for a in (None, 1)
    },
    **{
        f"{n}(axis={a})": (lambda m, x, n=n, a=a: getattr(m, n)(x, axis=a))
        for n in ("argmax", "argmin")
        for a in (None, 0, 1)
    },
}


@param_dtypes(["float16", "float32", "float64"])
def test_nan_and_inf(dtype):
    """NaN propagates through max/min/sum; argmax/argmin return the first NaN."""
    x = np.array(
        [
            [1.0, np.nan, 3.0, np.nan, 3.0],
            [np.inf, 2.0, np.inf, -np.inf, 0.0],
            [-1.0, -1.0, -2.0, -2.0, -1.0],
            [np.nan, np.nan, 1.0, 1.0, 1.0],
            [-0.0, 0.0, 0.0, -0.0, 0.0],
        ],
        dtype,
    )
    compare_ops(NAN_OPS, x, kinds="accumulate", where=f"NaN/inf reductions {dtype}")


def test_long_row_maxima_and_minima(monkeypatch):
    """float32 rows of 1024 elements and more get aotc-tile-reductions' vector tiles
    (several accumulators a row): values as numpy's, NaN propagating from any position,
    infinities, and whole rows of one value, also where a full-size consumer reads the
    max (a softmax); the op carries the setting (forced on: cpu_paths.tiles_reductions
    gives it where it was measured, AMD Zen 5)."""
    monkeypatch.setattr(build, "tiles_reductions", lambda target: True)
    x = sample("float32", (64, 4096), seed=71)
    x[3, 4095] = x[5, 0] = x[7, 1777] = np.nan
    x[9, :] = -np.inf
    x[10, 100] = np.inf
    x[11, :] = 2.5
    x[12, :] = -0.0
    ops = {"max(axis=1)": lambda m, x: m.max(x, axis=1),
           "min(axis=-1, keepdims)": lambda m, x: m.min(x, axis=-1, keepdims=True),
           "amax of 1024-element rows": lambda m, x: m.amax(x.reshape(256, 1024), axis=1),
           "nanmax(axis=1)": lambda m, x: m.nanmax(x, axis=1),
           # a consumer as large as the input: it reads the max through a clone
           "x - max(keepdims)": lambda m, x: x - m.max(x, axis=1, keepdims=True)}
    compare_ops(ops, x, kinds="exact", where="long rows")
    softmax = {"softmax": lambda m, x: (lambda e: e / m.sum(e, axis=1, keepdims=True))(
        m.exp(x - m.max(x, axis=1, keepdims=True)))}
    compare_ops(softmax, x, kinds="transcendental", where="long rows")
    lowered = aotc.jit(lambda v: anp.max(v, axis=1)).lower(x).as_text()
    assert "vector_reduction = [0, 128]" in lowered


EMPTY = {
    "sum()": lambda m, x: m.sum(x),
    "sum(axis=0)": lambda m, x: m.sum(x, axis=0),
    "sum(axis=1)": lambda m, x: m.sum(x, axis=1),
    "sum(axis=0, keepdims)": lambda m, x: m.sum(x, axis=0, keepdims=True),
    "prod()": lambda m, x: m.prod(x),
    "prod(axis=0)": lambda m, x: m.prod(x, axis=0),
    "any()": lambda m, x: m.any(x),
    "all(axis=0)": lambda m, x: m.all(x, axis=0),
    "max(axis=1)": lambda m, x: m.max(x, axis=1),
    "min(axis=-1, keepdims)": lambda m, x: m.min(x, axis=-1, keepdims=True),
    "argmax(axis=1)": lambda m, x: m.argmax(x, axis=1),
    "mean(axis=0)": lambda m, x: m.mean(x, axis=0),
    "mean()": lambda m, x: m.mean(x),
    "var(axis=0)": lambda m, x: m.var(x, axis=0),
}


@param_dtypes(["float32", "int32"])
def test_empty_reductions(dtype):
    """Reductions over size-0 axes give the identity (sum 0, prod 1, any False, all
    True; mean and var NaN); reducing only non-empty axes of an empty array is fine."""
    x = np.zeros((0, 3), dtype)
    compare_ops(EMPTY, x, kinds="accumulate", where=f"empty reductions {dtype}")


@pytest.mark.parametrize("op", ["max", "min", "amax", "argmax", "argmin"])
def test_empty_reduction_without_identity_raises(op):
    x = np.zeros((0, 3), np.float32)
    with pytest.raises(ValueError, match="zero-size array|empty sequence"):
        getattr(np, op)(x, axis=0)  # numpy's behaviour, for reference
    with raises_match(aotc.TracingError, "zero-size array", "no identity"):
        jit_call(lambda a: getattr(anp, op)(a, axis=0), x)
    with raises_match(aotc.TracingError, "zero-size array"):
        jit_call(lambda a: getattr(anp, op)(a), x)


def test_zero_d_and_size_one():
    x0 = np.array(2.5, np.float32)
    x1 = np.array([[7]], np.int8)
    ops = {
        "sum(x0)": lambda m, a, b: m.sum(a),
        "max(x0, axis=None)": lambda m, a, b: m.max(a, axis=None),
        "argmax(x0)": lambda m, a, b: m.argmax(a),
        "mean(x0)": lambda m, a, b: m.mean(a),
        "sum(x1, axis=0)": lambda m, a, b: m.sum(b, axis=0),
        "prod(x1)": lambda m, a, b: m.prod(b),
        "argmin(x1, axis=1)": lambda m, a, b: m.argmin(b, axis=1),
        "var(x1, ddof=0)": lambda m, a, b: m.var(b),
        "all(x1, keepdims)": lambda m, a, b: m.all(b, keepdims=True),
    }
    compare_ops(ops, x0, x1, kinds="accumulate", where="0-d and size-1 reductions")


@param_dtypes(["float32", "float64", "int32"])
def test_sums_of_broadcast_products_over_several_axes(dtype):
    """``sum(x * y)`` with y broadcast against x, over several axes: fused into one
    dispatch it once failed to compile (a contraction whose reduction loops y lacks)."""
    x3, x2 = sample(dtype, (5, 3, 2), seed=3), sample(dtype, (3, 2), seed=4)
    y, column = sample(dtype, (2,), seed=5), sample(dtype, (3, 1), seed=6)
    ops = {
        "sum(x2 * y)": lambda m, a, b, c, d: m.sum(b * c),
        "mean(x2 * y)": lambda m, a, b, c, d: m.mean(b * c),
        "sum(x3 * y)": lambda m, a, b, c, d: m.sum(a * c),
        "sum(x3 * y, axis=(1, 2))": lambda m, a, b, c, d: m.sum(a * c, axis=(1, 2)),
        "sum(x3 * y, axis=(0, 1))": lambda m, a, b, c, d: m.sum(a * c, axis=(0, 1)),
        "sum(x3 * column, axis=(0, 2), keepdims)":
            lambda m, a, b, c, d: m.sum(a * d, axis=(0, 2), keepdims=True),
        "sum(x3 * y, initial=10)": lambda m, a, b, c, d: m.sum(a * c, initial=10),
    }
    compare_ops(ops, x3, x2, y, column, kinds="accumulate",
                where=f"sums of broadcast products ({dtype})")
    # The product made inside a vmapped function (a call until it is inlined).
    got = jit_call(lambda b, c: anp.sum(aotc.vmap(lambda row: row * c)(b)), x2, y)
    np.testing.assert_allclose(got, np.sum(x2 * y), rtol=1e-5)


def test_argmax_large_ties():
    """The first index wins ties, also when IREE splits the reduction."""
    x = np.zeros((3, 1000), np.float32)
    x[0, [17, 500, 999]] = 5.0
    x[1, :] = -1.0
    x[2, [3, 900]] = np.nan
    ops = {
        f"{n}(axis={a})": (lambda m, v, n=n, a=a: getattr(m, n)(v, axis=a))
        for n in ("argmax", "argmin")
        for a in (None, 1)
    }
    compare_ops(ops, x, where="argmax ties")


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda a: anp.sum(a, axis=3), ["axis 3 is out of bounds", "dimension 3"]),
        (lambda a: anp.max(a, axis=-4), ["axis -4 is out of bounds"]),
        (lambda a: anp.mean(a, axis=(0, 0)), ["repeated axis"]),
        (lambda a: anp.argmax(a, axis=5), ["axis 5 is out of bounds"]),
        (lambda a: anp.sum(a, axis=1.5), ["axis must be an int"]),
    ],
    ids=["sum-axis3", "max-axis-4", "mean-repeated", "argmax-axis5", "sum-float-axis"],
)
def test_axis_errors(call, message):
    with raises_match(aotc.TracingError, *message):
        jit_call(call, np.ones((2, 3, 4), np.float32))
