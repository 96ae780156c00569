"""Householder QR (aotc.numpy.linalg.qr in every mode, aotc.scipy.linalg.qr) against numpy
and LAPACK: the reflectors and tau equal geqrf's (the same sign convention, so Q and R
equal numpy's, not just up to signs), Q orthonormal, Q R = A, square, tall, wide and
empty matrices, stacks, float32, integers, rank-deficient and badly scaled matrices,
vmap against a loop, the kernel form and the errors.

Tolerances: float64 within 1e-10 of numpy's Q and R (relative to the norm of ``a``),
float32 within 1e-4; orthogonality and reconstruction within 1e-12 (float64).
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
RNG = np.random.default_rng(8)


def close(got, want, scale=1.0, tol=1e-10):
    got = np.asarray(got)
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale)


def every_mode(a):
    return (anp.linalg.qr(a), anp.linalg.qr(a, mode="complete"), anp.linalg.qr(a, mode="r"),
            anp.linalg.qr(a, mode="raw"))


# 5: one panel; 33: a 32-wide panel and a 1-wide one; 100: three levels; tall and wide.
@pytest.mark.parametrize("shape", [(5, 5), (33, 33), (100, 100), (70, 40), (20, 50)],
                         ids=lambda s: "x".join(map(str, s)))
def test_qr_matches_lapack_in_every_mode(shape):
    a = RNG.standard_normal(shape)
    (q, r), (qc, rc), r_only, (h, tau) = aotc.jit(every_mode)(a)
    scale = np.linalg.norm(a)
    for got, want in zip((q, r, qc, rc, r_only, h, tau),
                         (*np.linalg.qr(a), *np.linalg.qr(a, mode="complete"),
                          np.linalg.qr(a, mode="r"), *np.linalg.qr(a, mode="raw"))):
        close(got, want, scale)
    q, qc = np.asarray(q), np.asarray(qc)
    np.testing.assert_allclose(q.T @ q, np.eye(q.shape[1]), atol=1e-12)
    np.testing.assert_allclose(qc.T @ qc, np.eye(qc.shape[1]), atol=1e-12)
    np.testing.assert_allclose(q @ np.asarray(r), a, atol=1e-12 * scale)


def test_stacks_float32_and_integers():
    a = RNG.standard_normal((2, 3, 40, 36)).astype(np.float32)
    q, r = aotc.jit(anp.linalg.qr)(a)
    want_q, want_r = np.linalg.qr(a)
    close(q, want_q, tol=1e-4)
    close(r, want_r, np.abs(want_r).max(), tol=1e-5)
    ints = np.arange(12).reshape(4, 3) ** 2
    q, r = aotc.jit(anp.linalg.qr)(ints)
    for got, want in zip((q, r), np.linalg.qr(ints)):
        close(got, want, 100.0)


def test_rank_deficient_zero_and_badly_scaled_matrices():
    """A zero column reflects nothing (tau 0 and a zero on R's diagonal, as LAPACK), a
    zero matrix gives Q = I; the column norms are taken scaled, so 1e200 and 1e-200
    entries neither overflow nor vanish. Where a column depends on the ones before it,
    its reflector comes from rounding noise (in LAPACK too): Q R = A and Q^T Q = I are
    what holds."""
    deficient = RNG.standard_normal((6, 4))
    deficient[:, 1] = 0.0
    deficient[:, 3] = deficient[:, 0] + deficient[:, 2]
    cases = [np.zeros((5, 5)), RNG.standard_normal((7, 5)) * 1e200,
             RNG.standard_normal((7, 5)) * 1e-200]
    outs = aotc.jit(lambda *m: [anp.linalg.qr(x, mode="raw") + tuple(anp.linalg.qr(x))
                                for x in m])(deficient, *cases)
    h, tau, q, r = (np.asarray(v) for v in outs[0])
    assert tau[1] == 0 and r[1, 1] == 0 and abs(r[3, 3]) < 1e-14
    np.testing.assert_allclose(q @ r, deficient, atol=1e-14)
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-14)
    for x, got in zip(cases, outs[1:]):
        want = (*np.linalg.qr(x, mode="raw"), *np.linalg.qr(x))
        for k, (g, w) in enumerate(zip(got, want)):
            if k in (1, 2):  # tau and Q do not scale with x
                close(g, w, tol=1e-12)
            else:  # h holds R (scaled as x) and the reflectors (not): relative
                np.testing.assert_allclose(np.asarray(g), w, rtol=1e-9, atol=0)


@pytest.mark.parametrize("shape", [(3, 0), (0, 3), (0, 0), (2, 4, 0)])
def test_empty_matrices_give_numpys_shapes(shape):
    a = np.zeros(shape)
    for got, want in zip(aotc.jit(every_mode)(a), (np.linalg.qr(a), np.linalg.qr(a, "complete"),
                                                   (np.linalg.qr(a, "r"),),
                                                   np.linalg.qr(a, "raw"))):
        for g, w in zip(got if isinstance(got, tuple) else (got,), want):
            close(g, w)


def test_scipy_qr_modes():
    a = RNG.standard_normal((9, 6))
    got = aotc.jit(lambda a: (asl.qr(a), asl.qr(a, mode="economic"), asl.qr(a, mode="r"),
                              asl.qr(a, mode="raw")))(a)
    want = (scipy_linalg.qr(a), scipy_linalg.qr(a, mode="economic"),
            scipy_linalg.qr(a, mode="r"), scipy_linalg.qr(a, mode="raw"))
    (q, r), (qe, re), (r_only,), ((h, tau), r_raw) = got
    (wq, wr), (wqe, wre), (wr_only,), ((wh, wtau), wr_raw) = want
    for g, w in zip((q, r, qe, re, r_only, h, tau, r_raw),
                    (wq, wr, wqe, wre, wr_only, wh, wtau, wr_raw)):
        close(g, w, 10.0)


def test_vmap_matches_a_loop_and_panels_are_kernels():
    a = RNG.standard_normal((4, 45, 33))
    q, r = aotc.jit(aotc.vmap(anp.linalg.qr))(a)
    for i in range(4):
        want_q, want_r = np.linalg.qr(a[i])
        close(np.asarray(q)[i], want_q, 10.0)
        close(np.asarray(r)[i], want_r, 10.0)
    text = aotc.jit(anp.linalg.qr).lower(np.ones((45, 33))).as_text()
    assert text.count('aotc.kernel = "qr_panel"') == 2  # the 45x32 panel and the 13x1 one
    batched = aotc.jit(aotc.vmap(anp.linalg.qr)).lower(a).as_text()
    assert batched.count('aotc.kernel = "qr_panel"') == 2
    assert "tensor<4x45x32xf64>" in batched


X = np.ones((4, 3))


@pytest.mark.parametrize("call, exc, message", [
    (lambda x: anp.linalg.qr(x, mode="economic"), TracingError,
     ["linalg.qr", "unrecognized mode 'economic'", "'reduced', 'complete', 'r', 'raw'"]),
    (lambda x: anp.linalg.qr(x[0]), TracingError,
     ["linalg.qr", "expected a matrix (..., m, n)", "1-dimensional", "(3,)"]),
    (lambda x: anp.linalg.qr(x.astype(np.float16)), UnsupportedOpError,
     ["linalg.qr", "float16", "float32, float64, complex64 or complex128"]),
    (lambda x: asl.qr(x, pivoting=True), UnsupportedOpError,
     ["scipy.linalg.qr", "pivoting=True", "not supported yet"]),
    (lambda x: asl.qr(x, mode="reduced"), TracingError,
     ["scipy.linalg.qr", "unrecognized mode 'reduced'", "'full', 'economic'"]),
], ids=lambda v: None if callable(v) or isinstance(v, (type, list)) else str(v))
def test_errors_name_the_argument(call, exc, message):
    with raises_match(exc, *message):
        aotc.jit(call).lower(X)
