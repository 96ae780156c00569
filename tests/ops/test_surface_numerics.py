"""Differences and integrals (aotc/ops/differences.py), polynomials (polynomials.py),
histograms (histograms.py) and covariances (covariance.py) against numpy, their vmap
against a Python loop, and their errors.

One compiled function per dtype holds every op (conftest.compare_ops) over the same few
inputs: a (4, 6) and a (7,) array, a short kernel, 3- and 2-vectors, sample points. The
narrow dtypes (float16, uint8, bool) run the ops that compute in their own dtype
(conftest.ops_for); the rest convert them first, as int32's run checks.
Tolerances: conftest's "accumulate" ones (float16 1e-2, float32 1e-5, float64 1e-12),
as sums may be ordered differently.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.errors import TracingError, UnsupportedDtypeError, UnsupportedOpError

from .conftest import (assert_same, compare_ops, jit_call, ops_for, param_dtypes,
                       raises_match, sample)

DTYPES = ["float16", "float32", "float64", "int32", "uint8", "bool"]

XP = np.array([-3.0, -1, 0, 2, 4])
FP = np.array([1.0, 5, -2, 0, 3])
EDGES = np.array([-4.0, -1, 0, 0.5, 3, 5])


def inputs(dtype):
    return {"x2": sample(dtype, (4, 6), seed=1, with_specials=False),
            "x1": sample(dtype, (7,), seed=2, with_specials=False),
            "v": sample(dtype, (3,), seed=3, with_specials=False),
            "c3": sample(dtype, (5, 3), seed=4, with_specials=False),
            "c2": sample(dtype, (5, 2), seed=5, with_specials=False)}


def _modes(fn, a, b):
    return [fn(a, b, mode=mode) for mode in ("full", "same", "valid")]


def _flat(counts_and_edges):
    counts, edges = counts_and_edges
    return [counts, *edges]


OPS = {
    # differences and integrals
    "diff": lambda m, x2, x1, v, c3, c2: m.diff(x2),
    "diff(n=2, axis=0)": lambda m, x2, x1, v, c3, c2: m.diff(x2, n=2, axis=0),
    "diff(n=9)": lambda m, x2, x1, v, c3, c2: m.diff(x1, n=9),
    "diff(prepend, append)": lambda m, x2, x1, v, c3, c2: m.diff(x1, prepend=0, append=x1[:2]),
    "ediff1d": lambda m, x2, x1, v, c3, c2: m.ediff1d(x2, to_begin=[1], to_end=x1[:2]),
    "gradient": lambda m, x2, x1, v, c3, c2: m.gradient(x2),
    "gradient(2.0, edge_order=2)": lambda m, x2, x1, v, c3, c2: m.gradient(x2, 2.0,
                                                                           edge_order=2),
    "gradient(coordinates, edge_order=2)": lambda m, x2, x1, v, c3, c2: m.gradient(
        x1, np.array([0, 1, 3, 4, 7, 8, 10.0]), edge_order=2),
    "gradient(coordinates per axis)": lambda m, x2, x1, v, c3, c2: m.gradient(
        x2, np.array([0, 1, 3, 4.0]), np.arange(6.0) * 2, axis=(0, 1)),
    "gradient(uniform coordinates)": lambda m, x2, x1, v, c3, c2: m.gradient(
        x1, np.arange(7.0) * 0.5),
    "trapezoid": lambda m, x2, x1, v, c3, c2: m.trapezoid(x2),
    "trapezoid(x, axis=0)": lambda m, x2, x1, v, c3, c2: m.trapezoid(
        x2, x=np.array([0, 1, 3, 4.0]), axis=0),
    "trapezoid(dx)": lambda m, x2, x1, v, c3, c2: m.trapezoid(x1, dx=0.5),
    "unwrap": lambda m, x2, x1, v, c3, c2: m.unwrap(x2),
    "unwrap(period=4)": lambda m, x2, x1, v, c3, c2: m.unwrap(x1, period=4),
    "unwrap(discont=1, axis=0)": lambda m, x2, x1, v, c3, c2: m.unwrap(x2, discont=1.0, axis=0),
    "interp": lambda m, x2, x1, v, c3, c2: m.interp(x2, XP, FP),
    "interp(left, right)": lambda m, x2, x1, v, c3, c2: m.interp(x1, np.sort(x1), x1, left=-1,
                                                                 right=7),
    "interp(period)": lambda m, x2, x1, v, c3, c2: m.interp(x1, np.array([3.0, 1, 0, 2]),
                                                            FP[:4], period=3),
    "convolve": lambda m, x2, x1, v, c3, c2: _modes(m.convolve, x1, v),
    "convolve(short a)": lambda m, x2, x1, v, c3, c2: _modes(m.convolve, v[:2], x1),
    "correlate": lambda m, x2, x1, v, c3, c2: _modes(m.correlate, x1, v),
    "correlate(short a)": lambda m, x2, x1, v, c3, c2: _modes(m.correlate, v[:2], x1),
    "cross": lambda m, x2, x1, v, c3, c2: m.cross(c3, c3[::-1]),
    "cross(2, 3)": lambda m, x2, x1, v, c3, c2: m.cross(c2, c3),
    "cross(2, 2)": lambda m, x2, x1, v, c3, c2: m.cross(c2, c2[::-1]),
    "cross(axisa=0)": lambda m, x2, x1, v, c3, c2: m.cross(c3.T, v, axisa=0),
    # polynomials
    "polyval": lambda m, x2, x1, v, c3, c2: m.polyval(v, x2),
    "polyval(scalar x)": lambda m, x2, x1, v, c3, c2: m.polyval(x1, 2),
    "polyadd": lambda m, x2, x1, v, c3, c2: m.polyadd(v, x1),
    "polysub": lambda m, x2, x1, v, c3, c2: m.polysub(x1, v),
    "polymul": lambda m, x2, x1, v, c3, c2: m.polymul(x1, v),
    "polyder": lambda m, x2, x1, v, c3, c2: m.polyder(x1),
    "polyder(m=3)": lambda m, x2, x1, v, c3, c2: m.polyder(x1, 3),
    "polyint": lambda m, x2, x1, v, c3, c2: m.polyint(x1),
    "polyint(m=2, k=[1, 2])": lambda m, x2, x1, v, c3, c2: m.polyint(v, 2, k=[1.0, 2.0]),
    "poly": lambda m, x2, x1, v, c3, c2: m.poly(v),
    # histograms
    "histogram": lambda m, x2, x1, v, c3, c2: m.histogram(x2),
    "histogram(bins=3, range)": lambda m, x2, x1, v, c3, c2: m.histogram(x2, 3, range=(-2, 2)),
    "histogram(edges, weights)": lambda m, x2, x1, v, c3, c2: m.histogram(
        x2, EDGES, weights=x2 * 2),
    # densities are float64, from edges of x1's float dtype (rounded after IREE's fma)
    "histogram(density)": lambda m, x2, x1, v, c3, c2: m.histogram(x1, 4, density=True)[0]
    .astype(np.result_type(x1.dtype, 1.0)),
    "histogram_bin_edges": lambda m, x2, x1, v, c3, c2: m.histogram_bin_edges(x1, 5),
    "histogram2d": lambda m, x2, x1, v, c3, c2: m.histogram2d(c3[:, 0], c3[:, 1], bins=3),
    "histogram2d(bins, range)": lambda m, x2, x1, v, c3, c2: m.histogram2d(
        c2[:, 0], c2[:, 1], bins=[2, EDGES], range=[(-3, 3), None]),
    "histogramdd": lambda m, x2, x1, v, c3, c2: _flat(m.histogramdd(c3, bins=(2, 3, 2))),
    "digitize": lambda m, x2, x1, v, c3, c2: m.digitize(x2, EDGES),
    "digitize(right, decreasing)": lambda m, x2, x1, v, c3, c2: m.digitize(x2, EDGES[::-1],
                                                                           right=True),
    # covariances
    "cov": lambda m, x2, x1, v, c3, c2: m.cov(x2),
    "cov(y, rowvar=False)": lambda m, x2, x1, v, c3, c2: m.cov(c3, c2, rowvar=False),
    "cov(weights)": lambda m, x2, x1, v, c3, c2: m.cov(x2, fweights=[1, 2, 1, 3, 1, 1],
                                                       aweights=np.linspace(0.5, 2, 6)),
    "cov(bias, 1-d)": lambda m, x2, x1, v, c3, c2: m.cov(x1, bias=True),
    "cov(ddof=0, dtype)": lambda m, x2, x1, v, c3, c2: m.cov(x2, ddof=0, dtype=np.float32),
    "corrcoef": lambda m, x2, x1, v, c3, c2: m.corrcoef(x2),
    "corrcoef(x, y)": lambda m, x2, x1, v, c3, c2: m.corrcoef(x2[0], x2[1]),
}


@param_dtypes(DTYPES)
def test_numerics_match_numpy(dtype):
    ops = ops_for(OPS, dtype, *inputs(dtype).values())
    if dtype == "bool":
        # numpy's gradient subtracts bools (a TypeError) except with coordinates, where it
        # casts float differences back to bool; aotc refuses bool gradients alike.
        ops = {n: op for n, op in ops.items() if not n.startswith("gradient(")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # numpy's cross of 2-vectors
        compare_ops(ops, *inputs(dtype).values(), kinds="accumulate", where=dtype)


def test_sliding_products_leave_out_the_padding():
    """numpy's convolve/correlate sum only products of a's elements: an infinite kernel
    element next to the edge must not meet a padding zero (that gave NaN)."""
    a = np.array([-1.0, 2.0, 0.5, 3.0, -4.0])
    v = np.array([-3.0, -np.inf, 5.5])
    ops = {f"{name}({mode})": (lambda m, x, k, name=name, mode=mode:
                               getattr(m, name)(x, k, mode=mode))
           for name in ("convolve", "correlate") for mode in ("full", "same", "valid")}
    with np.errstate(invalid="ignore"):
        compare_ops(ops, a, v, kinds="accumulate", where="sliding products with inf")


def test_polydiv_matches_numpy_with_the_remainder_untrimmed():
    # numpy trims the remainder's leading zeros; aotc (as JAX's trim_leading_zeros=False)
    # keeps the dividend's length: the same values, zeros in front.
    u = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    v = np.array([2.0, 1.0, -1.0])
    quotient, remainder = jit_call(lambda a, b: anp.polydiv(a, b), u, v)
    want_q, want_r = np.polydiv(u, v)
    np.testing.assert_allclose(quotient, want_q, rtol=1e-12)
    assert remainder.shape == u.shape
    np.testing.assert_allclose(remainder[-len(want_r):], want_r, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(remainder[:-len(want_r)], 0, atol=1e-12)


def test_traced_bins_and_coordinates():
    """Edges, sample points and coordinates may be traced arrays too."""
    x = sample("float32", (20,), seed=7, with_specials=False)

    def f(m, x, edges, xp, fp):
        return {"histogram": m.histogram(x, edges), "digitize": m.digitize(x, edges),
                "digitize(decreasing)": m.digitize(x, edges[::-1]),
                "interp": m.interp(x, xp, fp), "gradient": m.gradient(fp, xp),
                "trapezoid": m.trapezoid(fp, xp), "polyval": m.polyval(fp, x)}

    args = (x, EDGES.astype(np.float32), XP.astype(np.float32), FP.astype(np.float32))
    got = jit_call(lambda *a: f(anp, *a), *args)
    want = f(np, *args)
    for name in want:
        for g, w in zip(*((v,) if not isinstance(v, tuple) else v for v in (got[name],
                                                                             want[name]))):
            assert_same(g, np.asarray(w), "accumulate", name)


def test_bincount_with_length_matches_jax():
    x = np.array([0, 1, 1, 5, 7, -2, 3], np.int32)
    w = np.linspace(0, 3, 7).astype(np.float32)
    got = jit_call(lambda x, w: (anp.bincount(x, length=4), anp.bincount(x, w, length=6),
                                 anp.bincount(x, minlength=9, length=2)), x, w)
    assert_same(got[0], np.array([2, 2, 0, 1], np.int64))
    np.testing.assert_allclose(got[1], np.bincount(np.maximum(x, 0), w)[:6], rtol=1e-6)
    assert_same(got[2], np.bincount(np.maximum(x, 0), minlength=9)[:9])
    static = jit_call(lambda: anp.bincount(np.array([1, 1, 4]), minlength=3))
    assert_same(static, np.bincount([1, 1, 4], minlength=3))


def test_vmap_matches_a_loop():
    xs = sample("float32", (3, 8), seed=11, with_specials=False)
    ks = sample("float32", (3, 3), seed=12, with_specials=False)

    def per_row(m, x, k):
        return {"diff": m.diff(x), "gradient": m.gradient(x), "trapezoid": m.trapezoid(x),
                "unwrap": m.unwrap(x), "interp": m.interp(x, XP, FP),
                "convolve": m.convolve(x, k, mode="same"), "correlate": m.correlate(x, k),
                "cross": m.cross(x[:3], k), "polyval": m.polyval(k, x),
                "polymul": m.polymul(x, k), "histogram": m.histogram(x, EDGES)[0],
                "histogram(auto range)": m.histogram(x, 3)[0],
                "digitize": m.digitize(x, EDGES),
                "cov": m.cov(m.reshape(x, (2, 4))), "corrcoef": m.corrcoef(x[:4], x[4:])}

    got = jit_call(aotc.vmap(lambda x, k: per_row(anp, x, k)), xs, ks)
    rows = [per_row(np, x, k) for x, k in zip(xs, ks)]
    for name in got:
        want = np.stack([np.asarray(r[name]) for r in rows])
        assert_same(got[name], want.astype(got[name].dtype) if name == "histogram(auto range)"
                    else want, "accumulate", name)


@pytest.mark.parametrize("call, error, fragments", [
    (lambda x: anp.diff(x, n=-1), TracingError, ("diff", "non-negative")),
    (lambda x: anp.gradient(x[:1]), TracingError, ("gradient", "edge_order + 1")),
    (lambda x: anp.gradient(x > 0), UnsupportedDtypeError, ("gradient", "bool")),
    (lambda x: anp.convolve(x, x, mode="middle"), TracingError, ("convolve", "mode", "middle")),
    (lambda x: anp.correlate(x[:0], x), TracingError, ("correlate", "empty")),
    (lambda x: anp.cross(x[:4], x[:4]), TracingError, ("cross", "2 or 3")),
    (lambda x: anp.interp(x, x[:2], x[:3]), TracingError, ("interp", "same")),
    (lambda x: anp.histogram(x, bins=0), TracingError, ("histogram", "positive")),
    (lambda x: anp.histogram(x, bins=np.array([2.0, 1.0])), TracingError, ("monotonically",)),
    (lambda x: anp.histogram(x, range=(1, 0)), TracingError, ("range",)),
    (lambda x: anp.bincount(x.astype(np.int32)), TracingError, ("bincount", "length=")),
    (lambda x: anp.digitize(x, np.array([1.0, 3.0, 2.0])), TracingError, ("monoton",)),
    (lambda x: anp.poly(anp.reshape(x[:4], (2, 2))), UnsupportedOpError, ("poly",
                                                                          "eigenvalues")),
    (lambda x: anp.polyder(x, -1), TracingError, ("polyder", "non-negative")),
], ids=["diff-n", "gradient-short", "gradient-bool", "convolve-mode", "correlate-empty",
        "cross-size", "interp-shapes", "histogram-bins", "histogram-edges", "histogram-range",
        "bincount-length", "digitize-monotonic", "poly-matrix", "polyder-m"])
def test_errors_name_the_argument(call, error, fragments):
    with raises_match(error, *fragments):
        aotc.jit(call).lower(np.ones(6, np.float32))
