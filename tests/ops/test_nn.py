"""aotc.nn (activations, softmax, logsumexp, one_hot, normalization, dense) and
aotc.lax.erf against float64 numpy/math references, and against jax.nn when installed.

Tolerances (rtol, atol) by result dtype: float32 (1e-5, 1e-6) for elementwise functions
and (1e-5, 1e-5) for those that reduce; float64 (1e-12, 1e-12), except erf in float64
(1e-15 absolute: Cephes' approximation against math.erf); float16 (2e-3, 2e-3).
NaN positions and infinities must match exactly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import aotc
import aotc.lax as alax
import aotc.nn as ann
from aotc.errors import TracingError, UnsupportedDtypeError

from .conftest import jit_call, raises_match

TOL = {"float16": (2e-3, 2e-3), "float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12)}
REDUCING_TOL = {"float32": (1e-5, 1e-5), "float64": (1e-12, 1e-12)}

SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, -3.0, 20.0, -20.0, 100.0, -100.0, 1e4, -1e4,
            np.inf, -np.inf, np.nan]


def inputs(dtype, n=64, seed=0):
    x = np.random.default_rng(seed).uniform(-8, 8, n)
    x[: len(SPECIALS)] = SPECIALS
    return x.astype(dtype)


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return np.where(x >= 0, 1 / (1 + np.exp(-np.abs(x))),
                        np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))))


def _softplus(x):
    return np.logaddexp(x, 0.0)


# name -> (aotc function, float64 numpy reference)
ACTIVATIONS = {
    "relu": (ann.relu, lambda x: np.maximum(x, 0)),
    "relu6": (ann.relu6, lambda x: np.minimum(np.maximum(x, 0), 6)),
    "sigmoid": (ann.sigmoid, _sigmoid),
    "silu": (ann.silu, lambda x: x * _sigmoid(x)),   # NaN at -inf (-inf * 0), as in JAX
    "swish": (ann.swish, lambda x: x * _sigmoid(x)),
    "gelu tanh": (ann.gelu,
                  lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    "gelu exact": (lambda x: ann.gelu(x, approximate=False),
                   lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
    "softplus": (ann.softplus, _softplus),
    "leaky_relu": (ann.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    "leaky_relu 0.2": (lambda x: ann.leaky_relu(x, 0.2), lambda x: np.where(x >= 0, x, 0.2 * x)),
    "elu": (ann.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
    "elu 0.5": (lambda x: ann.elu(x, 0.5),
                lambda x: np.where(x > 0, x, 0.5 * np.expm1(np.minimum(x, 0)))),
    "erf": (alax.erf, _erf),
}


def check(got, want, dtype, name, tol=TOL):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == np.dtype(dtype), f"{name}: dtype {got.dtype}, expected {dtype}"
    assert got.shape == want.shape, f"{name}: shape {got.shape}, expected {want.shape}"
    rtol, atol = tol[np.dtype(dtype).name]
    with np.errstate(invalid="ignore", over="ignore"):
        want = want.astype(dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{name}: NaN positions")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activations_match_numpy(dtype):
    x = inputs(dtype)
    got = jit_call(lambda x: {name: fn(x) for name, (fn, _) in ACTIVATIONS.items()}, x)
    with np.errstate(all="ignore"):
        for name, (_, reference) in ACTIVATIONS.items():
            check(got[name], reference(x.astype(np.float64)), dtype, name)


def test_activations_match_jax():
    jax = pytest.importorskip("jax")
    x = inputs("float32", seed=1)
    names = {"relu": "relu", "relu6": "relu6", "sigmoid": "sigmoid", "silu": "silu",
             "gelu tanh": "gelu", "softplus": "softplus", "leaky_relu": "leaky_relu", "elu": "elu"}
    got = jit_call(lambda x: {name: ACTIVATIONS[name][0](x) for name in names}, x)
    for name, jax_name in names.items():
        want = np.asarray(jax.jit(getattr(jax.nn, jax_name))(x))
        check(got[name], want, "float32", f"{name} vs jax.nn.{jax_name}")
    exact = jit_call(lambda x: ann.gelu(x, approximate=False), x)
    check(exact, np.asarray(jax.nn.gelu(x, approximate=False)), "float32", "gelu exact vs jax")


def test_erf_every_float_dtype():
    grid = np.concatenate([np.linspace(-7, 7, 2801),
                           [0.0, -0.0, 1e-300, -1e-300, 1e-8, 0.999999, 1.0, 1.000001, 8.0, 9.0,
                            np.inf, -np.inf, np.nan]])
    x64, x32, x16 = grid, grid.astype(np.float32), grid.astype(np.float16)
    got = jit_call(lambda a, b, c: (alax.erf(a), alax.erf(b), alax.erf(c)), x64, x32, x16)
    check(got[0], _erf(x64), "float64", "erf float64", tol={"float64": (0.0, 1e-15)})
    check(got[1], _erf(x32.astype(np.float64)), "float32", "erf float32")
    check(got[2], _erf(x16.astype(np.float64)), "float16", "erf float16")


# ---- softmax, log_softmax, logsumexp -------------------------------------------------------

def rows(dtype):
    """Rows that test the shift: large values, all -inf, one +inf, mixed -inf, NaN."""
    big = np.finfo(dtype).max / 4
    x = np.random.default_rng(2).uniform(-5, 5, (8, 6)).astype(dtype)
    x[1] = [big, big / 2, -big, 0, 1, 2]
    x[2] = -np.inf
    x[3, 2] = np.inf
    x[4, :3] = -np.inf
    x[5, 1] = np.nan
    x[6] = [1000, 1001, 1002, 999, -1000, 0]
    return x


def np_logsumexp(a, axis=None, b=None, keepdims=False, sign=False):
    """Reference: float64, shift by the finite max; -inf rows give -inf, +inf gives +inf,
    a negative weighted sum NaN (or its sign with ``sign=True``)."""
    a = np.asarray(a, np.float64)
    if b is not None:
        a = np.where(b != 0, a, -np.inf)
    top = np.max(a, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    terms = np.exp(a - top) * (1 if b is None else b)
    total = np.sum(terms, axis=axis, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(total < 0, np.nan, np.log(np.abs(total)) + top)
    out = np.sign(total) if sign else out
    return out if keepdims else np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


def np_softmax(x, axis=-1):
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1):
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        shifted = x - np.max(x, axis=axis, keepdims=True)
        return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


REDUCING = {  # name -> (aotc(x, b), numpy(x, b))
    "softmax": (lambda x, b: ann.softmax(x), lambda x, b: np_softmax(x)),
    "softmax axis 0": (lambda x, b: ann.softmax(x, axis=0), lambda x, b: np_softmax(x, 0)),
    "softmax axis None": (lambda x, b: ann.softmax(x, axis=None), lambda x, b: np_softmax(x, None)),
    "log_softmax": (lambda x, b: ann.log_softmax(x), lambda x, b: np_log_softmax(x)),
    "log_softmax axis (0, 1)": (lambda x, b: ann.log_softmax(x, axis=(0, 1)),
                                lambda x, b: np_log_softmax(x, (0, 1))),
    "logsumexp": (lambda x, b: ann.logsumexp(x), lambda x, b: np_logsumexp(x)),
    "logsumexp axis 1": (lambda x, b: ann.logsumexp(x, axis=1), lambda x, b: np_logsumexp(x, 1)),
    "logsumexp axis 0 keepdims": (lambda x, b: ann.logsumexp(x, axis=0, keepdims=True),
                                  lambda x, b: np_logsumexp(x, 0, keepdims=True)),
    "logsumexp b": (lambda x, b: ann.logsumexp(x, axis=-1, b=b),
                    lambda x, b: np_logsumexp(x, -1, b)),
    "logsumexp b sign": (lambda x, b: ann.logsumexp(x, axis=-1, b=b, return_sign=True)[1],
                         lambda x, b: np_logsumexp(x, -1, b, sign=True)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_logsumexp_extremes_match_numpy(dtype):
    x = rows(dtype)
    b = np.random.default_rng(3).uniform(-0.2, 1, x.shape).astype(dtype)
    b[0, :2] = 0
    b[7] = -1  # a negative sum: NaN without return_sign
    got = jit_call(lambda x, b: {n: fn(x, b) for n, (fn, _) in REDUCING.items()}, x, b)
    with np.errstate(all="ignore"):
        for name, (_, reference) in REDUCING.items():
            check(got[name], reference(x, b), dtype, name, tol=REDUCING_TOL)
    assert np.isneginf(got["logsumexp axis 1"][2]), "a row of -inf has logsumexp -inf"
    assert np.isposinf(got["logsumexp axis 1"][3]), "a row holding +inf has logsumexp +inf"
    assert np.all(np.isnan(got["softmax"][2])), "softmax of a row of -inf is NaN, as in JAX"


def test_softmax_logsumexp_match_jax():
    jax = pytest.importorskip("jax")
    x = rows("float32")
    got = jit_call(lambda x: (ann.softmax(x), ann.log_softmax(x), ann.logsumexp(x, axis=1),
                              ann.logsumexp(x)), x)
    want = (jax.nn.softmax(x), jax.nn.log_softmax(x), jax.nn.logsumexp(x, axis=1),
            jax.nn.logsumexp(x))
    for name, g, w in zip(("softmax", "log_softmax", "logsumexp axis 1", "logsumexp"), got, want):
        check(g, np.asarray(w), "float32", f"{name} vs jax.nn", tol=REDUCING_TOL)


# ---- one_hot, normalization, dense ----------------------------------------------------------

def test_one_hot_normalization_dense():
    rng = np.random.default_rng(4)
    labels = np.array([[0, 3, -1], [5, 2, 1]], np.int32)   # -1 and 5 are out of range
    x = rng.uniform(-3, 3, (4, 3, 5)).astype(np.float32)
    mean, var = rng.uniform(-1, 1, 5).astype(np.float32), rng.uniform(0.5, 2, 5).astype(np.float32)
    scale, offset = (rng.uniform(0.5, 2, 5).astype(np.float32),
                     rng.uniform(-1, 1, 5).astype(np.float32))
    scale_c = rng.uniform(0.5, 2, 3).astype(np.float32)
    scale_2d = rng.uniform(0.5, 2, (3, 5)).astype(np.float32)
    w, bias = (rng.uniform(-1, 1, (5, 7)).astype(np.float32),
               rng.uniform(-1, 1, 7).astype(np.float32))

    def fn(labels, x, mean, var, scale, offset, scale_c, scale_2d, w, bias):
        return {
            "one_hot": ann.one_hot(labels, 5),
            "one_hot axis 0 int8": ann.one_hot(labels, 4, dtype=np.int8, axis=0),
            "standardize": ann.standardize(x),
            "standardize stable axis (0, 2)": ann.standardize(x, axis=(0, 2), algorithm="stable"),
            "standardize given": ann.standardize(x, mean=0.5, variance=2.0),
            "batch_norm": ann.batch_norm(x, mean, var, scale, offset),
            "batch_norm axis 1": ann.batch_norm(x, mean[:3], var[:3], scale_c, axis=1, eps=1e-3),
            "layer_norm": ann.layer_norm(x, scale, offset),
            "layer_norm axis (1, 2)": ann.layer_norm(x, scale_2d, axis=(1, 2)),
            "dense": ann.dense(x, w, bias),
            "dense no bias": ann.dense(x, w),
        }

    got = jit_call(fn, labels, x, mean, var, scale, offset, scale_c, scale_2d, w, bias)
    x64 = x.astype(np.float64)

    def normalize(v, axis, eps=1e-5):
        m = v.mean(axis=axis, keepdims=True)
        return (v - m) / np.sqrt(((v - m) ** 2).mean(axis=axis, keepdims=True) + eps)

    want = {
        "one_hot": (labels[..., None] == np.arange(5)).astype(np.float32),
        "one_hot axis 0 int8": (labels[None] == np.arange(4)[:, None, None]).astype(np.int8),
        "standardize": normalize(x64, -1),
        "standardize stable axis (0, 2)": normalize(x64, (0, 2)),
        "standardize given": (x64 - 0.5) / np.sqrt(2.0 + 1e-5),
        "batch_norm": (x64 - mean) / np.sqrt(var + 1e-5) * scale + offset,
        "batch_norm axis 1": ((x64 - mean[:3, None]) / np.sqrt(var[:3, None] + 1e-3)
                              * scale_c[:, None]),
        "layer_norm": normalize(x64, -1) * scale + offset,
        "layer_norm axis (1, 2)": normalize(x64, (1, 2)) * scale_2d,
        "dense": x64 @ w + bias,
        "dense no bias": x64 @ w,
    }
    for name, value in want.items():
        if value.dtype.kind == "f":
            check(got[name], value, "float32", name, tol=REDUCING_TOL)
        else:
            assert got[name].dtype == value.dtype, name
            np.testing.assert_array_equal(got[name], value, err_msg=name)


def test_one_hot_and_standardize_match_jax():
    jax = pytest.importorskip("jax")
    labels = np.array([0, 4, -2, 7, 2], np.int32)
    x = np.random.default_rng(5).uniform(-3, 3, (6, 8)).astype(np.float32)
    got = jit_call(lambda labels, x: (ann.one_hot(labels, 5), ann.standardize(x)), labels, x)
    check(got[0], np.asarray(jax.nn.one_hot(labels, 5)), "float32", "one_hot vs jax")
    check(got[1], np.asarray(jax.nn.standardize(x)), "float32", "standardize vs jax",
          tol=REDUCING_TOL)


# ---- errors -----------------------------------------------------------------------------

S = aotc.ShapeDtypeStruct


def test_nn_errors_name_the_problem():
    x = S((4, 5), "float32")
    with raises_match(UnsupportedDtypeError, "erf", "int32", "astype"):
        aotc.jit(alax.erf).lower(S((3,), "int32"))
    with raises_match(TracingError, "batch_norm", "mean", "shape (5,)", "shape (4,)"):
        aotc.jit(lambda x, m: ann.batch_norm(x, m, m)).lower(x, S((4,), "float32"))
    with raises_match(TracingError, "layer_norm", "scale", "(4, 5)", "shape (5,)"):
        aotc.jit(lambda x, s: ann.layer_norm(x, s, axis=(0, 1))).lower(x, S((5,), "float32"))
    with raises_match(TracingError, "one_hot", "num_classes", "-1"):
        aotc.jit(lambda x: ann.one_hot(x, -1)).lower(S((3,), "int32"))
    with raises_match(TracingError, "standardize", "algorithm", "'exact'"):
        aotc.jit(lambda x: ann.standardize(x, algorithm="exact")).lower(x)
