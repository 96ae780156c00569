"""The singular value decomposition (aotc.numpy.linalg svd/svdvals and what is built on it:
pinv, matrix_rank, lstsq, cond, norm ord 2/-2/'nuc'; aotc.scipy.linalg svd/svdvals)
against numpy: singular values equal LAPACK's (descending; small ones to high relative
accuracy), U and V orthonormal with U diag(s) Vh = A, U and V equal to LAPACK's up to
sign where the singular values are apart; square, tall (QR first), wide, empty and
rank-deficient matrices, full_matrices, stacks, float32, vmap against a loop and the
errors.

Tolerances: float64 singular values within 1e-12 of numpy's relative to the largest,
orthogonality and reconstruction within 1e-12 (times the size); float32 within 1e-5.
"""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
import aotc.scipy.linalg as asl
from aotc.errors import TracingError

from .conftest import raises_match

scipy_linalg = pytest.importorskip("scipy.linalg")
RNG = np.random.default_rng(10)


def check(a, u, s, vh, full, tol=1e-12):
    u, s, vh = (np.asarray(x) for x in (u, s, vh))
    m, n = a.shape[-2:]
    k = min(m, n)
    want_u, want_s, want_vh = np.linalg.svd(a.astype(np.float64), full_matrices=full)
    assert u.shape == want_u.shape and s.shape == want_s.shape and vh.shape == want_vh.shape
    scale = max(want_s.max(initial=0), 1e-300)
    np.testing.assert_allclose(s, want_s, rtol=0, atol=tol * scale)
    size = max(m, n, 1)
    for q in (u, np.swapaxes(vh, -1, -2)):
        cols = q.shape[-1]
        np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q,
                                   np.broadcast_to(np.eye(cols), q.shape[:-2] + (cols, cols)),
                                   atol=tol * size)
    rebuilt = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    np.testing.assert_allclose(rebuilt, a, atol=tol * size * scale)
    gaps = np.abs(np.diff(want_s, axis=-1))
    inf = np.full(gaps.shape[:-1] + (1,), np.inf)
    apart = np.minimum(np.concatenate([gaps, inf], -1), np.concatenate([inf, gaps], -1))
    aligned = np.abs(np.sum(u[..., :, :k] * want_u[..., :, :k], axis=-2))
    assert np.all((aligned > 1 - 1e-6) | (apart < 1e-6 * scale))


def every_form(a):
    return (anp.linalg.svd(a), anp.linalg.svd(a, full_matrices=False),
            anp.linalg.svd(a, compute_uv=False), anp.linalg.svdvals(a))


# 1 and 5: small; 40: preconditioned Jacobi; tall (QR first), wide (transposed) and a
# shape between (Jacobi on the matrix itself).
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (40, 40), (60, 9), (9, 60), (12, 10)],
                         ids=lambda s: "x".join(map(str, s)))
def test_svd_matches_lapack(shape):
    a = RNG.standard_normal(shape)
    (u, s, vh), (ur, sr, vhr), values, vals = aotc.jit(every_form)(a)
    check(a, u, s, vh, True)
    check(a, ur, sr, vhr, False)
    want = np.linalg.svd(a, compute_uv=False)
    for got in (values, vals):
        np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=1e-12 * want.max())


def test_an_ill_conditioned_matrix():
    """Singular values from 1 to 1e-12: each within 50 eps of the largest (what the
    rounding of ``a`` itself allows), the smallest within 1e-3 of its own size."""
    q1, _ = np.linalg.qr(RNG.standard_normal((30, 30)))
    q2, _ = np.linalg.qr(RNG.standard_normal((30, 30)))
    wanted = np.logspace(0, -12, 30)
    a = (q1 * wanted) @ q2.T
    s = np.asarray(aotc.jit(anp.linalg.svdvals)(a))
    assert np.max(np.abs(s - wanted)) <= 50 * np.finfo(np.float64).eps
    assert abs(s[-1] - wanted[-1]) <= 1e-3 * wanted[-1]


def test_rank_deficient_zero_stacked_float32_and_badly_scaled():
    deficient = RNG.standard_normal((7, 5))
    deficient[:, 3] = deficient[:, 0] - deficient[:, 1]
    deficient[:, 4] = 0.0
    cases = [deficient, np.zeros((4, 3)), RNG.standard_normal((2, 3, 8, 6)),
             RNG.standard_normal((6, 6)) * 1e200, RNG.standard_normal((6, 6)) * 1e-200]
    outs = aotc.jit(lambda *m: [anp.linalg.svd(x) for x in m])(*cases)
    for a, (u, s, vh) in zip(cases, outs):
        check(a, u, s, vh, True)
    single = RNG.standard_normal((10, 7)).astype(np.float32)
    u, s, vh = aotc.jit(anp.linalg.svd)(single)
    assert np.asarray(s).dtype == np.float32
    check(single, u, s, vh, True, tol=1e-5)


@pytest.mark.parametrize("shape", [(3, 0), (0, 3)])
def test_empty_matrices(shape):
    a = np.zeros(shape)
    u, s, vh = aotc.jit(anp.linalg.svd)(a)
    want = np.linalg.svd(a)
    for got, w in zip((u, s, vh), want):
        assert np.asarray(got).shape == w.shape
    np.testing.assert_allclose(np.asarray(u), want[0])
    np.testing.assert_allclose(np.asarray(vh), want[2])


def test_pinv_rank_lstsq_cond_and_norms_match_numpy():
    a, b, bs = RNG.standard_normal((8, 5)), RNG.standard_normal(8), RNG.standard_normal((8, 3))
    deficient = a.copy()
    deficient[:, 4] = deficient[:, 0]

    def program(L, a, deficient, b, bs):
        return (L.pinv(a), L.pinv(deficient), L.pinv(a, rtol=None), L.pinv(a.T, rcond=0.3),
                L.matrix_rank(a), L.matrix_rank(deficient), L.matrix_rank(a, tol=1.0),
                L.matrix_rank(b), L.lstsq(a, b), L.lstsq(a, bs), L.lstsq(a.T, bs[:5]),
                L.lstsq(deficient, b, rcond=1e-10)[0], L.cond(a), L.cond(a[:5], 1),
                L.cond(a, -2), L.cond(a[:5], "fro"), L.cond(np.diag([1.0, 0.0])),
                L.norm(a, 2), L.norm(a, -2), L.norm(a, "nuc"),
                L.matrix_norm(np.stack([a, 2 * a]), ord=2))
    got = aotc.jit(lambda *x: program(anp.linalg, *x))(a, deficient, b, bs)
    want = program(np.linalg, a, deficient, b, bs)
    flat_got = [np.asarray(v) for g in got for v in (g if isinstance(g, tuple) else (g,))]
    flat_want = [np.asarray(v) for w in want for v in (w if isinstance(w, tuple) else (w,))]
    assert len(flat_got) == len(flat_want)
    for g, w in zip(flat_got, flat_want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g, w)
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_scipy_svd_and_vmap_matches_a_loop():
    a = RNG.standard_normal((4, 9, 6))
    u, s, vh = aotc.jit(lambda a: asl.svd(a[0]))(a)
    check(a[0], u, s, vh, True)
    np.testing.assert_allclose(np.asarray(aotc.jit(asl.svdvals)(a[1])),
                               scipy_linalg.svdvals(a[1]), atol=1e-12)
    u, s, vh = aotc.jit(aotc.vmap(lambda x: anp.linalg.svd(x, full_matrices=False)))(a)
    for i in range(4):
        check(a[i], np.asarray(u)[i], np.asarray(s)[i], np.asarray(vh)[i], False)
    batched = aotc.jit(aotc.vmap(anp.linalg.svdvals)).lower(a).as_text()
    assert batched.count('aotc.kernel = "jacobi_svd"') == 1


X = np.ones((4, 3))


@pytest.mark.parametrize("call, exc, message", [
    (lambda x: anp.linalg.svd(x[0]), TracingError,
     ["linalg.svd", "expected a matrix (..., m, n)", "(3,)"]),
    (lambda x: anp.linalg.pinv(x, rcond=0.1, rtol=0.1), TracingError,
     ["linalg.pinv", "`rtol` and `rcond` can't be both set"]),
    (lambda x: anp.linalg.lstsq(x, x[:2]), TracingError,
     ["linalg.lstsq", "incompatible dimensions", "(4, 3)", "(2, 3)"]),
    (lambda x: anp.linalg.lstsq(x[None], x[None]), TracingError,
     ["linalg.lstsq", "3-dimensional array given"]),
    (lambda x: anp.linalg.cond(x[:0]), TracingError,
     ["linalg.cond", "not defined on empty arrays"]),
    (lambda x: anp.linalg.cond(x, 1), TracingError,
     ["linalg.cond", "square", "(4, 3)"]),
    (lambda x: asl.svd(x, lapack_driver="gejsv"), TracingError,
     ["scipy.linalg.svd", "lapack_driver", "'gejsv'"]),
], ids=lambda v: None if callable(v) or isinstance(v, (type, list)) else str(v))
def test_errors_name_the_argument(call, exc, message):
    with raises_match(exc, *message):
        aotc.jit(call).lower(X)
