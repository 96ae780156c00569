"""Functional updates ``x.at[index].<method>(values)`` and aotc.lax.dynamic_update_slice
against numpy copies: ``y = x.copy(); y[index] = v`` for set, ``np.add.at`` /
``np.multiply.at`` / ``np.minimum.at`` / ``np.maximum.at`` for the accumulating methods
(repeated indices accumulate, as in JAX). Values are cast to x's dtype first (JAX's rule),
so the references use ``v.astype(x.dtype)``; float results are compared with the "exact"
tolerance (each element is combined in the same order as numpy's loop), the rest exactly.

Traced out-of-range indices are dropped (JAX's rule); constant ones raise."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import aotc
import aotc.lax as lax
import aotc.numpy as anp
from aotc.errors import DonationWarning

from .conftest import assert_all, jit_call, param_dtypes, raises_match, sample

UFUNC_AT = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
            "min": np.minimum, "max": np.maximum}


def numpy_update(x, index, method, values):
    """numpy's answer to ``x.at[index].<method>(values)`` (indices already in range)."""
    y = x.copy()
    values = np.asarray(values).astype(x.dtype)
    if method == "set":
        y[index] = values
    else:
        UFUNC_AT[method].at(y, index, values)
    return y


SHAPE = (4, 5, 3)
# (name, index built from traced (i, s), the same index for numpy, values shape or scalar)
# i: [2, 0, 2, -1] (a repeated index), s: 0-d = 1.
CASES = [
    ("[1]", lambda i, s: 1, (5, 3)),
    ("[-1, 2]", lambda i, s: (-1, 2), ()),
    ("[1:3, ::2]", lambda i, s: (slice(1, 3), slice(None, None, 2)), (2, 3, 3)),
    ("[::-2, 1, None]", lambda i, s: (slice(None, None, -2), 1, None), (1, 3)),
    ("[..., 0]", lambda i, s: (Ellipsis, 0), (4, 5)),
    ("[:]", lambda i, s: slice(None), ()),
    ("[s]", lambda i, s: s, (5, 3)),
    ("[s, 1:4]", lambda i, s: (s, slice(1, 4)), (3, 1)),
    ("[1, s, ::-1]", lambda i, s: (1, s, slice(None, None, -1)), (3,)),
    ("[i] (repeats)", lambda i, s: i, (4, 5, 3)),
    ("[:, i, 2]", lambda i, s: (slice(None), i, 2), (4, 4)),
    ("[i, :, i]", lambda i, s: (i, slice(None), i), (4, 5)),
    ("[1:3, i]", lambda i, s: (slice(1, 3), i), ()),
    ("[s, i]", lambda i, s: (s, i), (4, 1)),
    ("[[0, 3], 1]", lambda i, s: ([0, 3], 1), (3,)),
    ("[static mask]", lambda i, s: np.array([True, False, False, True]), (2, 5, 3)),
    ("[i[:0]] (empty)", lambda i, s: i[:0], ()),
]
METHODS = ["set", "add", "subtract", "multiply", "min", "max"]


def _values(dtype, shape, seed):
    return sample(dtype, shape, seed=seed, with_specials=False, low=-3, high=3)


def _numpy_index(index):
    return (tuple(np.asarray(v) if hasattr(v, "dtype") else v for v in index)
            if isinstance(index, tuple) else index)


# Every method for three dtypes; fewer for the others (each costs a compile of ~100 ops).
@pytest.mark.parametrize("dtype, methods", [
    ("float32", METHODS), ("int8", METHODS), ("bool", ["set", "add", "multiply", "min", "max"]),
    ("float64", ["set", "add"]), ("uint8", ["max"]),
])
def test_updates_match_numpy(dtype, methods):
    x = sample(dtype, SHAPE, seed=41)
    i = np.array([2, 0, 2, -1], np.int32)
    s = np.int64(1)
    values = {name: _values(dtype, vshape, seed=k) for k, (name, _, vshape) in enumerate(CASES)}

    def f(x, i, s, values):
        out = {}
        for name, index, _ in CASES:
            for method in methods:
                if method == "set" and "repeats" in name or "[i, :, i]" in name and method == "set":
                    continue  # which repeated write wins is unspecified (as in JAX)
                out[f"{method} {name}"] = getattr(x.at[index(i, s)], method)(values[name])
        return out

    got = jit_call(f, x, i, s, values)
    want = {}
    for name, index, _ in CASES:
        for method in methods:
            key = f"{method} {name}"
            if key in got:
                want[key] = numpy_update(x, _numpy_index(index(i, s)), method, values[name])
    assert_all(got, want, where=f"updates {dtype}")


def test_traced_out_of_range_updates_are_dropped():
    x = sample("float32", (5, 3), seed=42)
    i = np.array([1, 7, -1, -8, 1], np.int32)  # 7 and -8 are out of range
    v = _values("float32", (5, 3), seed=43)

    def f(x, i, s, v):
        return {"add": x.at[i].add(v), "set col": x.at[:, i[:2]].set(v[0, :2]),
                "max": x.at[i, 2].max(v[:, 0]), "scalar set": x.at[s].set(v[0]),
                "scalar add": x.at[s, 1].add(5.0), "clip": x.at[i].add(v, mode="clip")}

    got = jit_call(f, x, i, np.int32(9), v)
    inside = (i >= -5) & (i < 5)
    clamped = np.clip(np.where(i < 0, i + 5, i), 0, 4)
    want = {"add": numpy_update(x, i[inside], "add", v[inside]),
            "set col": numpy_update(x, (slice(None), np.array([1])), "set", v[0, :1]),
            "max": numpy_update(x, (i[inside], 2), "max", v[inside, 0]),
            "scalar set": x, "scalar add": x,
            "clip": numpy_update(x, clamped, "add", v)}
    assert_all(got, want)


def test_jax_agrees_on_updates():
    jnp = pytest.importorskip("jax.numpy")
    x = sample("float32", (5, 3), seed=44)
    i = np.array([1, 7, -1, -8, 1], np.int32)
    v = _values("float32", (5, 3), seed=45)

    def both(m, x, i, s, v):
        return {"add": x.at[i].add(v), "min": x.at[i, 1:].min(v[:, 1:]),
                "mul": x.at[:, i[:3]].multiply(2.0),
                "scalar": x.at[s].set(v[0]), "scalar neg": x.at[-s, 0].add(1.0)}

    got = jit_call(lambda x, i, s, v: both(anp, x, i, s, v), x, i, np.int32(2), v)
    want = both(jnp, jnp.asarray(x), jnp.asarray(i), jnp.int32(2), jnp.asarray(v))
    assert_all(got, {k: np.asarray(w) for k, w in want.items()})


def _dus_reference(x, u, starts):
    starts = [min(max(s + n if s < 0 else s, 0), n - k)
              for s, n, k in zip(starts, x.shape, u.shape)]
    y = x.copy()
    y[tuple(slice(s, s + k) for s, k in zip(starts, u.shape))] = u
    return y


@param_dtypes(["float32", "int16"])
def test_dynamic_update_slice_clamps_like_jax(dtype):
    x = sample(dtype, (5, 6), seed=46, with_specials=False)
    u = sample(dtype, (2, 3), seed=47, with_specials=False)

    def f(x, u, a, b):
        return {"slice": lax.dynamic_update_slice(x, u, (a, b)),
                "array starts": lax.dynamic_update_slice(x, u, anp.stack([a, b])),
                "in_dim": lax.dynamic_update_slice_in_dim(x, u[:1], a, axis=0),
                "index": lax.dynamic_update_index_in_dim(x, x[1], a, 0),
                "index col": lax.dynamic_update_index_in_dim(x, x[:, 0], b, axis=-1)}

    jitted = aotc.jit(f)
    for a, b in [(1, 2), (4, 5), (-1, 0), (-9, 7)]:
        got = {k: np.asarray(v) for k, v in jitted(x, u, np.int32(a), np.int64(b)).items()}
        want = {"slice": _dus_reference(x, u, [a, b]), "array starts": _dus_reference(x, u, [a, b]),
                "in_dim": _dus_reference(x, u[:1], [a, 0]),
                "index": _dus_reference(x, x[1:2], [a, 0]),
                "index col": _dus_reference(x, x[:, :1], [0, b])}
        assert_all(got, want, where=f"starts {(a, b)}")
    assert jitted.stats["compiles"] + jitted.stats["disk_hits"] == 1


def test_jax_agrees_on_dynamic_update_slice():
    jax = pytest.importorskip("jax")
    x = sample("float32", (5, 6), seed=48)
    u = sample("float32", (2, 3), seed=49)
    f = aotc.jit(lambda x, u, a, b: lax.dynamic_update_slice(x, u, (a, b)))
    for a, b in [(4, 5), (-1, 0), (-9, 7)]:
        want = jax.lax.dynamic_update_slice(x, u, (np.int32(a), np.int32(b)))
        np.testing.assert_array_equal(np.asarray(f(x, u, np.int32(a), np.int32(b))),
                                      np.asarray(want))


@pytest.mark.parametrize("name, fn", [
    ("set row", lambda x, v: x.at[2].set(v)),
    ("set rows", lambda x, v: x.at[1:3].set(v)),
    ("add block", lambda x, v: x.at[1:3, 2:].add(v)),
])
def test_donated_static_updates_are_in_place(name, fn):
    x = sample("float32", (5, 4), seed=50)
    v = np.float32(3.5)
    want = np.asarray(jit_call(fn, x, v))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DonationWarning)  # a donation it cannot use would warn
        got = aotc.jit(fn, donate_argnums=0, strict_donation=True)(x.copy(), v)
    np.testing.assert_array_equal(np.asarray(got), want)


# ---- errors ---------------------------------------------------------------------------------

S = aotc.ShapeDtypeStruct
X = S((3, 4), "float32")
INDICES = S((2,), "int32")


@pytest.mark.parametrize("fn, exc, fragments", [
    (lambda x, i: x.at[0].set(anp.ones(3)), aotc.errors.TracingError,
     ["at[...].set", "shape (3,)", "indexed shape (4,)"]),
    (lambda x, i: x.at[i].add(anp.ones((3, 4))), aotc.errors.TracingError,
     ["at[...].add", "(3, 4)", "(2, 4)"]),
    (lambda x, i: x.at[i].set(1.0, mode="wrap"), aotc.errors.TracingError,
     ["mode must be one of", "'wrap'"]),
    (lambda x, i: x.at[[5]].add(1.0), aotc.errors.TracingError,
     ["at[...].add", "index 5 is out of bounds"]),
    (lambda x, i: x.at[7].set(1.0), aotc.errors.TracingError,
     ["index 7 is out of bounds for axis 0 with size 3"]),
    (lambda x, i: lax.dynamic_update_slice(x, anp.ones(4, anp.float32), (i[0], 0)),
     aotc.errors.TracingError,
     ["update must have the operand's rank 2", "(4,)"]),
    (lambda x, i: lax.dynamic_update_slice(x, anp.ones((1, 4)), (i[0], 0)),
     aotc.errors.TracingError,
     ["update dtype float64 differs from operand dtype float32", ".astype('float32')"]),
    (lambda x, i: lax.dynamic_update_slice(x, anp.ones((4, 4), anp.float32), (i[0], 0)),
     aotc.errors.TracingError,
     ["slice size 4 along dimension 0 does not fit"]),
])
def test_update_errors(fn, exc, fragments):
    with raises_match(exc, *fragments):
        aotc.jit(fn).lower(X, INDICES)
