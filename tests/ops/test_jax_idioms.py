"""JAX's idioms on traced arrays, against JAX (with 64-bit types on, whose dtype rules are
numpy's) and numpy: ``jnp.array`` of lists holding traced values, the scalar type
constructors (``jnp.float32(x)``), ndarray methods whose names Tracer's internals once
took (``x.trace()``, ``x.view(dtype)``, ``x.strides``), ``lax.select``, descending sorts,
the modes of ``x.at[...]``, and ``isinstance(x, jnp.ndarray)``."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import aotc
import aotc.lax
import aotc.numpy as anp
from aotc.errors import TracingError, UnsupportedDtypeError

from .conftest import assert_all, compare_ops, jit_call, raises_match, to_numpy

X = np.array([[0.5, -1.25, 2.0], [3.5, -0.75, 1.5]], np.float32)
INDEX = np.int32(7)  # an index out of range of X's rows and columns

# name -> lambda m, lax, x, i: ..., with m = aotc.numpy or jax.numpy (lax alike)
CASES = {
    # jnp.array / asarray of (nested) sequences holding traced values: a stack
    "array pair": lambda m, lax, x, i: m.array([x[0, 0], x[1, 2]]),
    "array nested scalars": lambda m, lax, x, i: m.array([[x[0, 0], 1.0], [2.0, x[1, 1]]]),
    "asarray tuple of rows": lambda m, lax, x, i: m.asarray((x[1], x[0])),
    "array with a list row": lambda m, lax, x, i: m.array([x[0], [1.0, 2.0, 3.0]]),
    "array with a numpy row": lambda m, lax, x, i: m.array([x[1], np.ones(3, np.float32)]),
    "array bools": lambda m, lax, x, i: m.array([x[0, 0] > 0, True]),
    "array complex scalar": lambda m, lax, x, i: m.array([x[0, 0], 1j]),
    "asarray dtype": lambda m, lax, x, i: m.asarray([x[0, 0], 2], dtype=np.float16),
    "array dtype int": lambda m, lax, x, i: m.array([[x[1, 0] * 2.0]], dtype=np.int32),
    "array ndmin": lambda m, lax, x, i: m.array(x[0], ndmin=3),
    "array of a tracer": lambda m, lax, x, i: m.array(x[1, 0] * 3.0),
    "array empty rows": lambda m, lax, x, i: m.array([x[0, :0], x[1, :0]]),
    "asarray copy": lambda m, lax, x, i: m.asarray(x, copy=True),
    # scalar type constructors: asarray(x, dtype) on traced values
    "int32(x)": lambda m, lax, x, i: m.int32(m.abs(x) * 1.5),
    "bool_(x)": lambda m, lax, x, i: m.bool_(x - 0.5),
    "complex64(x)": lambda m, lax, x, i: m.complex64(x),
    "float16([t, 3])": lambda m, lax, x, i: m.float16([x[0, 1], 3]),
    "uint8(x)": lambda m, lax, x, i: m.uint8(m.abs(x) * 10),
    "zeros(dtype=m.int8)": lambda m, lax, x, i: m.zeros(2, m.int8) + x.astype(m.int8)[0, :2],
    # ndarray methods and properties
    "x.trace(offset=1)": lambda m, lax, x, i: x.trace(offset=1),
    "x.trace(dtype)": lambda m, lax, x, i: x.trace(dtype=np.float16),
    "x.view(int32)": lambda m, lax, x, i: x.view(np.int32),
    "x.view(uint8)": lambda m, lax, x, i: x.view(np.uint8),
    "x.view(int16)": lambda m, lax, x, i: x.view(np.int16),
    "x.view(uint8).view(float32)": lambda m, lax, x, i: x.view(np.uint8).view(np.float32),
    "bools.view(uint8)": lambda m, lax, x, i: (x > 0).view(np.uint8),
    "uint8.view(bool)": lambda m, lax, x, i: m.asarray([0, 1, 2], np.uint8).view(np.bool_) ^ (
        x[0] > 9),
    "complex.view(float32)": lambda m, lax, x, i: (x * (1 + 2j)).astype(np.complex64).view(
        np.float32),
    "floats.view(complex64)": lambda m, lax, x, i: x[:, :2].view(np.complex64),
    "x.view()": lambda m, lax, x, i: x.view(),
    "x.mT": lambda m, lax, x, i: x[None].mT,
    "x.ptp(axis=1)": lambda m, lax, x, i: x.ptp(axis=1),
    "round(x, 1)": lambda m, lax, x, i: round(x * 1.37, 1),
    "divmod(x, 0.75)": lambda m, lax, x, i: divmod(x, 0.75),
    "rdivmod": lambda m, lax, x, i: divmod(2.5, x),
    "copy.copy": lambda m, lax, x, i: copy.copy(x) + copy.deepcopy(x),
    "array namespace": lambda m, lax, x, i: x.__array_namespace__().sum(x, axis=0),
    "x.conj()": lambda m, lax, x, i: (x * 1j).conj(),
    "x.nonzero(size)": lambda m, lax, x, i: m.nonzero(x[0] > 0, size=3)[0],
    "x.searchsorted": lambda m, lax, x, i: m.sort(x[0]).searchsorted(x[1]).astype(np.int64),
    "x.repeat": lambda m, lax, x, i: x.repeat(2, axis=1),
    "x.swapaxes": lambda m, lax, x, i: x.swapaxes(0, 1),
    "x.diagonal": lambda m, lax, x, i: x.diagonal(),
    "x.cumsum/cumprod": lambda m, lax, x, i: x.cumsum(axis=1) + x.cumprod(axis=0),
    "x.var/std": lambda m, lax, x, i: x.var(axis=0) + x.std(ddof=1),
    "x.choose": lambda m, lax, x, i: m.asarray([0, 1, 1]).choose(x, mode="clip"),
    # lax.select: same-shape cases, a bool or integer pred of their shape or a scalar
    "select": lambda m, lax, x, i: lax.select(x > 1, x, -x),
    "select scalar pred": lambda m, lax, x, i: lax.select(x[0, 0] > 0, x, x * 2),
    "select python pred": lambda m, lax, x, i: lax.select(False, x, x * 2),
    "select int pred": lambda m, lax, x, i: lax.select((x > 0).astype(np.int32), x, -x),
    "select scalars": lambda m, lax, x, i: lax.select(x[0, 0] > 0, x[1, 1], x[1, 2]),
    # sort and argsort with descending= (stable: equal elements keep their order)
    "sort descending": lambda m, lax, x, i: m.sort(m.asarray([[1.0, np.nan, 3.0, 2.0]]) + x[:, :1],
                                                   descending=True),
    "sort flat descending": lambda m, lax, x, i: m.sort(x, axis=None, descending=True),
    "argsort descending": lambda m, lax, x, i: m.argsort(
        m.asarray([1, 3, 3, 2, 1]) + (x[0, 0] > 9), descending=True),
    "argsort descending unstable": lambda m, lax, x, i: m.argsort(
        m.asarray([1, 3, 3, 2, 1]) + (x[0, 0] > 9), descending=True, stable=False),
    "argsort descending axis 0": lambda m, lax, x, i: m.argsort(
        m.concatenate([x, x[::-1]]), axis=0, descending=True),
    "argsort dtype": lambda m, lax, x, i: m.argsort(x[0], dtype=np.int16),
    # x.at[...].get modes: fill reads fill_value out of range, clip clamps
    "get fill traced": lambda m, lax, x, i: x[0].at[i].get(mode="fill"),
    "get fill value": lambda m, lax, x, i: x[0].at[i].get(mode="fill", fill_value=3.5),
    "get fill negative": lambda m, lax, x, i: x[0].at[-i].get(mode="fill"),
    "get fill in range": lambda m, lax, x, i: x[0].at[i - 8].get(mode="fill"),
    "get fill static": lambda m, lax, x, i: x[0].at[7].get(mode="fill"),
    "get fill ints": lambda m, lax, x, i: x.astype(np.int32)[0].at[i].get(mode="fill"),
    "get fill uints": lambda m, lax, x, i: m.abs(x).astype(np.uint8)[0].at[i].get(mode="fill"),
    "get fill bools": lambda m, lax, x, i: (x > 0)[0].at[i].get(mode="fill"),
    "get fill row": lambda m, lax, x, i: x.at[i, :].get(mode="fill"),
    "get fill 2d": lambda m, lax, x, i: x.at[1, i].get(mode="fill"),
    "get fill array": lambda m, lax, x, i: x[0].at[np.array([0, 6, -1, -7])].get(mode="fill"),
    "get fill slice": lambda m, lax, x, i: x[0].at[1:9].get(mode="fill"),
    "get clip": lambda m, lax, x, i: x[0].at[i].get(mode="clip"),
    "get clip static": lambda m, lax, x, i: x.at[7, -9].get(mode="clip"),
    "get clip array": lambda m, lax, x, i: x[0].at[np.array([0, 6, -1, -7])].get(mode="clip"),
    "get promise": lambda m, lax, x, i: x[0].at[i - 6].get(mode="promise_in_bounds"),
    # x.at[...] updates with a mode: constant indices out of range follow it too
    "set drop static": lambda m, lax, x, i: x[0].at[7].set(9.0, mode="drop"),
    "set clip static": lambda m, lax, x, i: x[0].at[7].set(9.0, mode="clip"),
    "add fill static": lambda m, lax, x, i: x[0].at[np.array([7, 1, -5])].add(9.0, mode="fill"),
    "add clip static": lambda m, lax, x, i: x[0].at[np.array([7, 1, -5])].add(9.0, mode="clip"),
    "set drop traced": lambda m, lax, x, i: x.at[i, 1].set(9.0, mode="drop"),
}


def _run_jax(cases):
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        out = jax.jit(lambda x, i: {k: c(jax.numpy, jax.lax, x, i) for k, c in cases.items()})(
            X, INDEX)
        return {k: to_numpy(v) for k, v in out.items()}


def _leaves(results: dict) -> dict:
    out = {}
    for name, value in results.items():
        if isinstance(value, (tuple, list)):
            out.update({f"{name}[{k}]": np.asarray(v) for k, v in enumerate(value)})
        else:
            out[name] = np.asarray(value)
    return out


def test_idioms_match_jax():
    got = jit_call(lambda x, i: {k: c(anp, aotc.lax, x, i) for k, c in CASES.items()}, X, INDEX)
    assert_all(_leaves(got), _leaves(_run_jax(CASES)), "accumulate", "jax idioms")


def test_array_of_tracers_follows_numpy_promotion():
    """Python scalars are weak (they take the arrays' dtype), numpy arrays and traced
    arrays promote as numpy promotes them (float32 with int64 is float64)."""
    def f(x):
        return {"int64 row": anp.array([x[0], np.arange(3)]),
                "int8 and int": anp.array([x.astype(np.int8)[0, 0], 100]),
                "bool and int": anp.array([x[0, 0] > 0, 1]),
                "float16 and float": anp.array([x.astype(np.float16)[0, 0], 0.1])}
    got = jit_call(f, X)
    want = {"int64 row": np.array([X[0], np.arange(3)]),
            "int8 and int": np.array([np.int8(0), np.int8(100)]),
            "bool and int": np.array([1, 1]),
            "float16 and float": np.array([0.5, 0.1], np.float16)}
    assert_all(got, want, where="array promotion")


def test_array_copy_and_identity_follow_numpy():
    seen = {}

    def f(x):
        y = x + 0
        seen["asarray is"] = anp.asarray(y) is y
        seen["asarray copy is"] = anp.asarray(y, copy=True) is y
        seen["array is"] = anp.array(y) is y
        seen["array copy=False is"] = anp.array(y, copy=False) is y
        seen["float32(y) is"] = anp.float32(y) is y
        v = anp.asarray(y)
        v[0, 0] = 10.0  # asarray(y) is y: the write is y's
        w = anp.array(y)
        w[0, 1] = 20.0  # a copy: y keeps its value
        return y
    got = jit_call(f, X)
    assert seen == {"asarray is": True, "asarray copy is": False, "array is": False,
                    "array copy=False is": True, "float32(y) is": False}
    want = X.copy()
    want[0, 0] = 10.0
    np.testing.assert_array_equal(got, want)


def test_methods_match_numpy():
    """ndarray methods JAX cannot trace with a constant mask, and numpy 2's names."""
    compare_ops({
        "x.compress": lambda m, x: x.compress(np.array([True, False, True]), axis=1),
        "x.trace": lambda m, x: x.trace(1, dtype=np.float64),
        "x.mT": lambda m, x: x.mT,
        "x.view(uint16)": lambda m, x: x.view(np.uint16),
        "x.argpartition": lambda m, x: x.argpartition(1, axis=0),
    }, X, where="ndarray methods")


def test_in_place_methods_and_views_write_as_numpy():
    """x.partition(k) and x.put(...) write into x; x.view(dtype) is a view: a write into it
    reaches x, and x's writes show in it."""
    def run(m, x):
        a = x.copy()
        a.partition(1, axis=1)
        b = x.copy()
        b.put([0, 4, 5], [10.0, 20.0, 30.0])
        c = x.copy()
        bits = c.view(np.int32)
        bits[0, 0] = 0
        c[1, 2] = 8.0
        return {"partition": a, "put": b, "view written": c, "view sees writes": bits,
                "strides": m.asarray(x[:, ::2].T.strides), "nbytes": m.asarray(x.nbytes),
                "itemsize": m.asarray(x.itemsize)}
    assert_all(jit_call(lambda x: run(anp, x), X), run(np, X), where="in place")


def test_scalar_types_are_numpy_types_and_jax_constructors():
    jnp = pytest.importorskip("jax.numpy")
    for name in ("float32", "int8", "bool_", "complex64", "uint16", "single", "int_"):
        ours, theirs = getattr(anp, name), getattr(jnp, name)
        assert np.dtype(ours) == np.dtype(theirs) == np.dtype(getattr(np, name))
        assert ours == getattr(np, name) and hash(ours) == hash(getattr(np, name))
        assert isinstance(np.dtype(ours).type(1), ours) == isinstance(
            np.dtype(ours).type(1), theirs) is True
    assert anp.float32(1.5) == np.float32(1.5) and type(anp.float32(1.5)) is np.float32
    assert np.zeros(2, anp.int8).dtype == np.int8 and np.issubdtype(anp.float32, anp.floating)
    assert anp.issubdtype(anp.int32, np.signedinteger) and anp.finfo(anp.float16).bits == 16
    assert issubclass(np.float32, anp.float32) and not isinstance(1.5, anp.float32)
    assert pickle.loads(pickle.dumps(anp.float32)) is anp.float32
    kinds = {}

    def f(x):
        kinds["traced is float32"] = isinstance(x, anp.float32)
        return anp.float32(x).astype(anp.int16), anp.zeros(2, dtype=anp.uint8)
    a, b = jit_call(f, X)
    assert a.dtype == np.int16 and b.dtype == np.uint8 and kinds == {"traced is float32": False}


def test_ndarray_isinstance_is_jax_array():
    """aotc.numpy.ndarray is for isinstance checks, as jax.numpy.ndarray (jax.Array): traced
    arrays and runtime arrays are instances, numpy arrays are not."""
    seen = {}

    def f(x):
        seen["traced"] = isinstance(x, anp.ndarray)
        return x * 2
    out = aotc.jit(f)(X)
    assert seen == {"traced": True}
    assert isinstance(out, anp.ndarray) and isinstance(out, aotc.runtime.Array)
    assert not isinstance(X, anp.ndarray) and not isinstance(np.float32(1), anp.ndarray)
    jax = pytest.importorskip("jax")
    assert not isinstance(X, jax.numpy.ndarray)  # JAX agrees on numpy arrays
    with pytest.raises(TypeError, match="isinstance"):
        anp.ndarray((2,))


def _lower(fn, *args):
    return aotc.jit(fn).lower(*args)


ERRORS = [
    ("array inhomogeneous", lambda x: anp.array([x[0], x[1, :2]]), TracingError,
     ["array", "inhomogeneous", "(3,)", "(2,)"]),
    ("array depth", lambda x: anp.array([[x[0, 0]], x[1, 0]]), TracingError,
     ["inhomogeneous", "(1,)", "()"]),
    ("asarray copy=False", lambda x: anp.asarray(x, np.int32, copy=False), TracingError,
     ["copy=False", "float32", "int32"]),
    ("array order F", lambda x: anp.array(x, order="F"), TracingError, ["order='F'"]),
    ("int8 overflow", lambda x: anp.array([x.astype(np.int8)[0, 0], 1000]), OverflowError,
     ["1000", "int8"]),
    ("select shapes", lambda x: aotc.lax.select(x > 0, x, x[0]), TracingError,
     ["lax.select", "same shapes", "(2, 3)", "(3,)"]),
    ("select python scalar case", lambda x: aotc.lax.select(x > 0, x, 1.0), TracingError,
     ["lax.select", "same shapes", "()"]),
    ("select pred shape", lambda x: aotc.lax.select(x[0] > 0, x, x), TracingError,
     ["lax.select", "pred", "(3,)"]),
    ("select float pred", lambda x: aotc.lax.select(x, x, x), UnsupportedDtypeError,
     ["lax.select", "bool", "float32"]),
    ("get mode", lambda x: x.at[0].get(mode="wrap"), TracingError,
     ["at[...].get", "mode", "'wrap'", "fill"]),
    ("view itemsize", lambda x: x.view(np.float64), TracingError,
     ["x.view(float64)", "float32[2, 3]", "divisor"]),
    ("view 0-d", lambda x: x[0, 0].view(np.uint8), TracingError, ["x.view(uint8)", "0d"]),
    ("mT of a vector", lambda x: x[0].mT, TracingError, ["x.mT", "ndim < 2"]),
    ("bitcast bool", lambda x: aotc.lax.bitcast_convert_type(x > 0, np.uint8),
     UnsupportedDtypeError, ["bitcast_convert_type", "bool", "x.view"]),
]


@pytest.mark.parametrize("name, fn, exc, fragments", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_name_what_and_how_to_fix(name, fn, exc, fragments):
    with raises_match(exc, *fragments):
        _lower(fn, X)
