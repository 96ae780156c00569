"""LU with partial pivoting and what is built on it (aotc.numpy.linalg solve/inv/det/slogdet,
aotc.scipy.linalg lu/lu_factor/lu_solve/solve/inv/det), against numpy and scipy: factors
and pivots equal to LAPACK's (same pivot choices), solutions, stacks that broadcast,
rectangular matrices, singular and ill-conditioned matrices, vmap against a loop, the
kernel form and the errors for bad input.

Tolerances: float64 within 1e-9 relative of numpy's for well-conditioned matrices,
float32 within 1e-3; an ill-conditioned solve is checked by its residual.
"""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
import aotc.scipy.linalg as asl
from aotc.errors import TracingError, UnsupportedOpError

scipy_linalg = pytest.importorskip("scipy.linalg")
RNG = np.random.default_rng(21)
TOL = dict(rtol=1e-9, atol=1e-11)


def close(got, want, **tol):
    np.testing.assert_allclose(np.asarray(got), want, **(tol or TOL))


def everything(a, b):
    """One program per shape: every LU function of a square stack and its right sides."""
    return (asl.lu_factor(a), anp.linalg.solve(a, b), anp.linalg.inv(a), anp.linalg.det(a),
            anp.linalg.slogdet(a))


# 5: one panel; 33: a 32-wide panel and a 1-wide one; 100: three levels of recursion.
@pytest.mark.parametrize("n", [5, 33, 100])
def test_lu_solve_inv_det_match_lapack(n):
    a, b = RNG.standard_normal((n, n)), RNG.standard_normal((n, 3))
    (factors, piv), x, inverse, det, (sign, logdet) = aotc.jit(everything)(a, b)
    want_factors, want_piv = scipy_linalg.lu_factor(a)
    close(factors, want_factors)
    np.testing.assert_array_equal(np.asarray(piv), want_piv)
    assert np.asarray(piv).dtype == np.int32
    close(x, np.linalg.solve(a, b))
    close(inverse, np.linalg.inv(a))
    close(det, np.linalg.det(a))
    want_sign, want_logdet = np.linalg.slogdet(a)
    close(sign, want_sign)
    close(logdet, want_logdet)


def test_stacks_broadcast_float32_and_integers():
    a = RNG.standard_normal((2, 1, 40, 40)).astype(np.float32) + 4 * np.eye(40, dtype=np.float32)
    b = RNG.standard_normal((3, 40, 2)).astype(np.float32)
    x, det = aotc.jit(lambda a, b: (anp.linalg.solve(a, b), anp.linalg.det(a)))(a, b)
    assert np.asarray(x).dtype == np.float32 and np.asarray(x).shape == (2, 3, 40, 2)
    close(x, np.linalg.solve(a.astype(np.float64), b), rtol=1e-3, atol=1e-4)
    close(det, np.linalg.det(a.astype(np.float64)), rtol=1e-3)
    ints = np.array([[2, 1], [1, 3]], np.int64)
    got = aotc.jit(lambda a: (anp.linalg.inv(a), anp.linalg.solve(a, np.array([3, 5]))))(ints)
    assert np.asarray(got[0]).dtype == np.float64
    close(got[0], np.linalg.inv(ints))
    close(got[1], [0.8, 1.4])


def test_scipy_lu_of_rectangular_matrices_and_its_forms():
    tall, wide = RNG.standard_normal((70, 40)), RNG.standard_normal((40, 70))

    def forms(a):
        return asl.lu(a), asl.lu(a, p_indices=True), asl.lu(a, permute_l=True), asl.lu_factor(a)
    for a in (tall, wide):
        (p, lo, up), (indices, _, _), (pl, _), (factors, piv) = aotc.jit(forms)(a)
        want_p, want_l, want_u = scipy_linalg.lu(a)
        np.testing.assert_array_equal(np.asarray(p), want_p)
        close(lo, want_l)
        close(up, want_u)
        np.testing.assert_array_equal(np.asarray(indices), scipy_linalg.lu(a, p_indices=True)[0])
        close(pl, want_p @ want_l)
        want_factors, want_piv = scipy_linalg.lu_factor(a)
        close(factors, want_factors)
        np.testing.assert_array_equal(np.asarray(piv), want_piv)


def test_lu_solve_every_trans_and_scipy_solve_every_assumption():
    n = 40
    a, b = RNG.standard_normal((n, n)), RNG.standard_normal((n, 2))
    m = RNG.standard_normal((n, n))
    spd = m @ m.T / n + np.eye(n)
    lu_and_piv = scipy_linalg.lu_factor(a)  # scipy's own factors: aotc reads its pivots
    got = aotc.jit(lambda f, p, a, s, b: (
        [asl.lu_solve((f, p), b, trans=t) for t in (0, 1, 2)],
        asl.solve(a, b), asl.solve(a, b[:, 0], transposed=True),
        asl.solve(s, b, assume_a="pos"), asl.solve(np.triu(s), b, assume_a="pos"),
        asl.inv(a), asl.det(a)))(*lu_and_piv, a, spd, b)
    solves, x, xt, xpos, xpos_upper, inverse, det = got
    for t, x_t in zip((0, 1, 2), solves):
        close(x_t, scipy_linalg.lu_solve(lu_and_piv, b, trans=t), err_msg=f"trans={t}")
    close(x, np.linalg.solve(a, b))
    close(xt, np.linalg.solve(a.T, b[:, 0]))
    close(xpos, np.linalg.solve(spd, b))
    close(xpos_upper, np.linalg.solve(spd, b))  # the upper triangle, as scipy's lower=False
    close(inverse, np.linalg.inv(a))
    close(det, np.linalg.det(a))


@pytest.mark.filterwarnings("ignore::scipy.linalg.LinAlgWarning")  # scipy warns of the zero
def test_singular_matrices_give_a_zero_determinant_and_finite_factors():
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    zero_column = np.array([[0.0, 1.0], [0.0, 2.0]])
    for a in (singular, zero_column):
        det, (sign, logdet), (factors, piv) = aotc.jit(
            lambda a: (anp.linalg.det(a), anp.linalg.slogdet(a), asl.lu_factor(a)))(a)
        assert float(np.asarray(det)) == 0.0
        assert float(np.asarray(sign)) == 0.0 and np.asarray(logdet) == -np.inf
        want_factors, want_piv = scipy_linalg.lu_factor(a, check_finite=False)
        close(factors, want_factors)
        np.testing.assert_array_equal(np.asarray(piv), want_piv)


def test_an_ill_conditioned_solve_has_lapacks_residual():
    n = 64  # condition number about 1e10
    rng = np.random.default_rng(8)
    q1, _ = np.linalg.qr(rng.standard_normal((n, n)))
    q2, _ = np.linalg.qr(rng.standard_normal((n, n)))
    a = (q1 * np.logspace(0, -10, n)) @ q2
    b = rng.standard_normal(n)
    x = np.asarray(aotc.jit(anp.linalg.solve)(a, b))

    def residual(x):
        return np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x))
    assert residual(x) < max(10 * residual(np.linalg.solve(a, b)), 1e-15)


def test_vmap_of_solve_and_det_matches_a_loop():
    a, b = RNG.standard_normal((4, 40, 40)), RNG.standard_normal((4, 40))
    x, det = aotc.jit(aotc.vmap(lambda a, b: (anp.linalg.solve(a, b), anp.linalg.det(a))))(a, b)
    close(x, np.stack([np.linalg.solve(a[i], b[i]) for i in range(4)]))
    close(det, np.stack([np.linalg.det(a[i]) for i in range(4)]))


def test_a_panel_is_one_sequential_kernel_and_vmap_merges_into_its_batch():
    text = aotc.jit(asl.lu_factor).lower(np.eye(40)).as_text()
    assert text.count('aotc.kernel = "lu_panel"') == 2  # the 40x32 panel and the 8x8 one
    assert text.count('aotc.kernel = "swaps_from_order"') == 1
    batched = aotc.jit(aotc.vmap(anp.linalg.det)).lower(np.ones((5, 8, 8))).as_text()
    assert batched.count('aotc.kernel = "lu_panel"') == 1
    assert "tensor<5x8x8xf64>" in batched


@pytest.mark.parametrize("call, message", [
    (lambda: anp.linalg.solve(np.eye(3), np.ones(4)), "b must be (3,) or (..., 3, k)"),
    (lambda: anp.linalg.solve(np.ones((2, 3, 3)), np.ones((4, 3, 1))), "do not broadcast"),
    (lambda: anp.linalg.inv(np.ones((2, 3))), "must be square, got shape (2, 3)"),
    (lambda: anp.linalg.det(np.ones(3)), "1-dimensional array given"),
    (lambda: asl.lu_factor(np.ones(3)), "expected a matrix (..., m, n)"),
    (lambda: asl.lu_solve(np.eye(3), np.ones(3)), "the pair (lu, piv)"),
    (lambda: asl.lu_solve((np.eye(3), np.zeros(2, np.int32)), np.ones(3)), "piv must be"),
    (lambda: asl.lu_solve((np.eye(3), np.zeros(3, np.int32)), np.ones(3), trans=5),
     "trans must be 0, 1, 2"),
    (lambda: asl.solve(np.eye(3), np.ones(3), assume_a="banded"), "assume_a='banded'"),
])
def test_bad_input_is_refused_with_a_clear_message(call, message):
    with pytest.raises((TracingError, UnsupportedOpError)) as info:
        aotc.jit(lambda: call())()
    assert message in str(info.value)
