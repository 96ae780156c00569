"""Symmetric eigendecomposition (aotc.numpy.linalg eigh/eigvalsh, aotc.scipy.linalg.eigh)
against numpy/scipy: eigenvalues equal LAPACK's (ascending), eigenvectors orthonormal
with ``A V = V diag(w)`` and equal to LAPACK's up to sign where eigenvalues are apart;
UPLO, stacks, float32, integers, repeated eigenvalues, zero and badly scaled matrices,
NaN input (NaN out, no hang), the generalized problem, vmap against a loop, the kernel
form and the errors.

Tolerances: float64 eigenvalues within 1e-12 of numpy's relative to the largest
magnitude, residuals and orthogonality within 1e-12; float32 within 1e-5.
"""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
import aotc.scipy.linalg as asl
from aotc.errors import TracingError, UnsupportedOpError

from .conftest import raises_match

scipy_linalg = pytest.importorskip("scipy.linalg")
RNG = np.random.default_rng(9)


def symmetric(*shape, dtype=np.float64):
    m = RNG.standard_normal(shape)
    return ((m + np.swapaxes(m, -1, -2)) / 2).astype(dtype)


def check(a, w, v, tol=1e-12):
    """numpy's eigenvalues; V orthonormal, A V = V diag(w), and V = numpy's up to the
    sign of each column where the eigenvalues are apart."""
    w, v = np.asarray(w), np.asarray(v)
    want_w, want_v = np.linalg.eigh(a.astype(np.float64))
    scale = max(np.abs(want_w).max(), 1e-300)
    np.testing.assert_allclose(w, want_w, rtol=0, atol=tol * scale)
    n = a.shape[-1]
    np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(n), v.shape),
                               atol=tol * n)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol * n * scale)
    gaps = np.diff(want_w, axis=-1)
    apart = np.minimum(np.concatenate([gaps, np.full(gaps.shape[:-1] + (1,), np.inf)], -1),
                       np.concatenate([np.full(gaps.shape[:-1] + (1,), np.inf), gaps], -1))
    alignment = np.abs(np.sum(v * want_v, axis=-2))
    assert np.all((alignment > 1 - 1e-6) | (apart < 1e-6 * scale))


# 1: trivial; 5, 33: small; 100: several sweeps of everything.
@pytest.mark.parametrize("n", [1, 5, 33, 100])
def test_eigh_and_eigvalsh_match_lapack(n):
    a = symmetric(n, n)
    (w, v), values = aotc.jit(lambda a: (anp.linalg.eigh(a), anp.linalg.eigvalsh(a)))(a)
    check(a, w, v)
    np.testing.assert_allclose(np.asarray(values), np.linalg.eigvalsh(a), rtol=0,
                               atol=1e-12 * max(1, np.abs(np.asarray(w)).max()))


def test_uplo_reads_one_triangle():
    a = symmetric(6, 6)
    garbage = np.tril(RNG.standard_normal((6, 6)), -1)
    lower, upper = a + garbage.T, a + garbage  # the other triangle holds garbage
    got = aotc.jit(lambda lo, up: (anp.linalg.eigh(lo), anp.linalg.eigvalsh(up, UPLO="U"),
                                   anp.linalg.eigh(up, UPLO="U")))(lower, upper)
    check(a, *got[0])
    np.testing.assert_allclose(np.asarray(got[1]), np.linalg.eigvalsh(a), atol=1e-13)
    check(a, *got[2])


def test_stacks_float32_and_integers():
    a = symmetric(2, 3, 20, 20, dtype=np.float32)
    w, v = aotc.jit(anp.linalg.eigh)(a)
    assert np.asarray(w).dtype == np.float32 and np.asarray(v).shape == (2, 3, 20, 20)
    check(a, w, v, tol=1e-5)
    ints = np.array([[2, 1, 0], [1, 2, 1], [0, 1, 2]])
    w, v = aotc.jit(anp.linalg.eigh)(ints)
    assert np.asarray(w).dtype == np.float64
    check(ints.astype(np.float64), w, v)


def test_repeated_zero_badly_scaled_and_nan_matrices():
    q, _ = np.linalg.qr(RNG.standard_normal((8, 8)))
    repeated = (q * np.array([1, 1, 1, 2, 2, 5, 5, 5.0])) @ q.T
    cases = [np.eye(7), repeated, np.zeros((5, 5)), symmetric(6, 6) * 1e200,
             symmetric(6, 6) * 1e-200]
    outs = aotc.jit(lambda *m: [anp.linalg.eigh(x) for x in m])(*cases)
    for a, (w, v) in zip(cases, outs):
        check(a, w, v)
    w, v = aotc.jit(anp.linalg.eigh)(np.full((4, 4), np.nan))  # numpy raises; no hang
    assert np.isnan(np.asarray(w)).all()


def test_scipy_eigh():
    a, b = symmetric(7, 7), symmetric(7, 7) + 7 * np.eye(7)

    def program(a, b):
        return (asl.eigh(a), asl.eigh(a, eigvals_only=True), asl.eigh(a, lower=False),
                asl.eigh(a, b), asl.eigh(a, b, eigvals_only=True),
                asl.eigh(a, subset_by_index=(2, 4)))
    (w, v), values, (wu, vu), (gw, gv), gvalues, (sw, sv) = aotc.jit(program)(a, b)
    check(a, w, v)
    check(a, wu, vu)
    np.testing.assert_allclose(np.asarray(values), scipy_linalg.eigh(a, eigvals_only=True),
                               atol=1e-12)
    want_gw = scipy_linalg.eigh(a, b, eigvals_only=True)
    np.testing.assert_allclose(np.asarray(gw), want_gw, atol=1e-12)
    np.testing.assert_allclose(np.asarray(gvalues), want_gw, atol=1e-12)
    gv = np.asarray(gv)
    np.testing.assert_allclose(a @ gv, b @ gv * np.asarray(gw), atol=1e-11)
    np.testing.assert_allclose(gv.T @ b @ gv, np.eye(7), atol=1e-11)  # B-orthonormal
    np.testing.assert_allclose(np.asarray(sw), np.linalg.eigvalsh(a)[2:5], atol=1e-12)
    assert np.asarray(sv).shape == (7, 3)


def test_vmap_matches_a_loop_and_is_one_kernel():
    a = symmetric(4, 12, 12)
    w, v = aotc.jit(aotc.vmap(anp.linalg.eigh))(a)
    for i in range(4):
        check(a[i], np.asarray(w)[i], np.asarray(v)[i])
    batched = aotc.jit(aotc.vmap(anp.linalg.eigh)).lower(a).as_text()
    assert batched.count('aotc.kernel = "symmetric_eigen"') == 1
    assert "tensor<4x12x12xf64>" in batched


X = np.eye(3)


@pytest.mark.parametrize("call, exc, message", [
    (lambda x: anp.linalg.eigh(x, UPLO="X"), TracingError,
     ["linalg.eigh", "UPLO argument must be 'L' or 'U'", "'X'"]),
    (lambda x: anp.linalg.eigvalsh(x[:2]), TracingError,
     ["linalg.eigvalsh", "square", "(2, 3)"]),
    (lambda x: anp.linalg.eigh(x.astype(np.float16)), UnsupportedOpError,
     ["linalg.eigh", "float16"]),
    (lambda x: asl.eigh(x, subset_by_value=(0, 1)), UnsupportedOpError,
     ["scipy.linalg.eigh", "subset_by_value", "subset_by_index"]),
    (lambda x: asl.eigh(x, x, type=2), UnsupportedOpError,
     ["scipy.linalg.eigh", "type=2", "type=1"]),
    (lambda x: asl.eigh(x, subset_by_index=(2, 5)), TracingError,
     ["scipy.linalg.eigh", "subset_by_index", "(2, 5)", "0 <= first <= last < 3"]),
], ids=lambda v: None if callable(v) or isinstance(v, (type, list)) else str(v))
def test_errors_name_the_argument(call, exc, message):
    with raises_match(exc, *message):
        aotc.jit(call).lower(X)
