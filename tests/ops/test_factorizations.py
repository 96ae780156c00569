"""Cholesky and triangular solves (aotc.numpy.linalg.cholesky, aotc.scipy.linalg), against
numpy and scipy: factors and solutions of well- and ill-conditioned matrices, stacks,
vmap against a loop, non-positive-definite input, the one-dispatch kernel form and its
and the errors for bad input.

Tolerances: float64 results within 1e-10 relative of numpy's (well-conditioned), float32
within 2e-4; ill-conditioned systems are checked by their residual, as LAPACK's are.
"""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
import aotc.scipy.linalg as asl
from aotc.errors import TracingError, UnsupportedOpError

RNG = np.random.default_rng(11)


def spd(*shape, dtype=np.float64):
    """Symmetric positive definite matrices (..., n, n), condition number about 10."""
    m = RNG.standard_normal(shape)
    n = shape[-1]
    return (m @ np.swapaxes(m, -1, -2) / n + np.eye(n)).astype(dtype)


def lower_triangle(n):
    return np.tril(RNG.standard_normal((n, n))) + 3 * np.eye(n)


# 1: one kernel; 33: a 32 leaf and a 1x1 one; 100: three levels of recursion.
@pytest.mark.parametrize("n", [1, 33, 100])
def test_cholesky_matches_numpy(n):
    a = spd(n, n)
    got = np.asarray(aotc.jit(anp.linalg.cholesky)(a))
    np.testing.assert_allclose(got, np.linalg.cholesky(a), rtol=1e-10, atol=1e-12)
    assert np.all(np.triu(got, 1) == 0)


def test_cholesky_reads_only_the_lower_triangle_and_upper_is_its_transpose():
    a = spd(40, 40)
    scrambled = np.tril(a) + np.triu(RNG.standard_normal((40, 40)), 1)
    lower, upper = aotc.jit(lambda x: (anp.linalg.cholesky(x),
                                       anp.linalg.cholesky(x, upper=True)))(scrambled)
    want = np.linalg.cholesky(a)
    np.testing.assert_allclose(np.asarray(lower), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(upper), want.T, rtol=1e-10, atol=1e-12)


def test_cholesky_of_a_stack_float32_and_integers():
    stack = spd(3, 2, 40, 40, dtype=np.float32)
    got = np.asarray(aotc.jit(anp.linalg.cholesky)(stack))
    assert got.dtype == np.float32 and got.shape == stack.shape
    np.testing.assert_allclose(got, np.linalg.cholesky(stack.astype(np.float64)),
                               rtol=2e-4, atol=2e-5)
    ints = np.array([[4, 2], [2, 5]], np.int32)
    from_ints = aotc.jit(anp.linalg.cholesky)(ints)
    assert np.asarray(from_ints).dtype == np.float64
    np.testing.assert_allclose(np.asarray(from_ints), [[2.0, 0.0], [1.0, 2.0]])


def test_cholesky_of_an_ill_conditioned_matrix_reconstructs_it():
    n = 64  # condition number about 1e12
    q, _ = np.linalg.qr(RNG.standard_normal((n, n)))
    a = (q * np.logspace(0, -12, n)) @ q.T
    a = (a + a.T) / 2
    factor = np.asarray(aotc.jit(anp.linalg.cholesky)(a))
    reference = np.linalg.cholesky(a)
    error = np.linalg.norm(factor @ factor.T - a) / np.linalg.norm(a)
    reference_error = np.linalg.norm(reference @ reference.T - a) / np.linalg.norm(a)
    assert error < max(10 * reference_error, 1e-14), (error, reference_error)


def test_cholesky_of_a_matrix_not_positive_definite_is_nan_from_the_failing_column():
    a = spd(6, 6)
    a[3, 3] = -50.0
    got = np.asarray(aotc.jit(anp.linalg.cholesky)(a))
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(a)
    np.testing.assert_allclose(got[:3, :3], np.linalg.cholesky(a[:3, :3]), rtol=1e-12)
    assert np.isnan(got[3, 3]) and np.all(np.isnan(got[4:, 3:4]))


def test_vmap_of_cholesky_and_solve_matches_a_loop():
    a, b = spd(4, 40, 40), RNG.standard_normal((4, 40, 2))

    def per_example(a, b):
        return asl.cho_solve(asl.cho_factor(a, lower=True), b)
    got = np.asarray(aotc.jit(aotc.vmap(per_example))(a, b))
    want = np.stack([np.linalg.solve(a[i], b[i]) for i in range(4)])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


# (lower, trans, unit_diagonal): every way to read a triangle, in one program.
_SOLVES = [(lower, trans, unit) for lower in (True, False) for trans in (0, "T", 2)
           for unit in (False, True)]


def test_solve_triangular_matches_scipy_for_every_variant():
    scipy_linalg = pytest.importorskip("scipy.linalg")
    n = 40
    a = RNG.standard_normal((n, n)) + 2 * n * np.eye(n)
    b = RNG.standard_normal((n, 3))
    got = aotc.jit(lambda a, b: [asl.solve_triangular(a, b, trans=t, lower=lo, unit_diagonal=u)
                                 for lo, t, u in _SOLVES])(a, b)
    for (lo, t, u), x in zip(_SOLVES, got):
        want = scipy_linalg.solve_triangular(a, b, trans=t, lower=lo, unit_diagonal=u)
        np.testing.assert_allclose(np.asarray(x), want, rtol=1e-10, atol=1e-12,
                                   err_msg=f"lower={lo} trans={t} unit_diagonal={u}")


def test_solve_triangular_vectors_stacks_and_ill_conditioned_residuals():
    n = 70
    lower = lower_triangle(n)
    # condition number above 1e6 (the solution's entries grow, not overflow); its own
    # generator, so the matrix does not depend on which tests ran first
    ill = (0.05 * np.tril(np.random.default_rng(5).standard_normal((n, n)), -1)
           + np.diag(np.logspace(0, -6, n)))
    stack = np.stack([lower, lower_triangle(n)])
    v, b = RNG.standard_normal(n), RNG.standard_normal((2, n, 4))
    x_vector, x_stack, x_ill = aotc.jit(lambda t, s, m, v, b: (
        asl.solve_triangular(t, v, lower=True), asl.solve_triangular(s, b, lower=True),
        asl.solve_triangular(m, v, lower=True)))(lower, stack, ill, v, b)
    np.testing.assert_allclose(np.asarray(x_vector), np.linalg.solve(lower, v), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(x_stack), np.linalg.solve(stack, b), rtol=1e-10,
                               atol=1e-12)
    def residual(x):
        return np.linalg.norm(ill @ x - v) / (np.linalg.norm(ill) * np.linalg.norm(x))
    assert np.linalg.cond(ill) > 1e6
    substituted = np.zeros(n)  # the reference: forward substitution, row by row
    for i in range(n):
        substituted[i] = (v[i] - ill[i, :i] @ substituted[:i]) / ill[i, i]
    got, reference = residual(np.asarray(x_ill)), residual(substituted)
    assert got < max(10 * reference, 1e-15), (got, reference)


def test_cho_solve_and_scipy_cholesky():
    a, b = spd(50, 50), RNG.standard_normal(50)
    upper, x = aotc.jit(lambda a, b: (asl.cholesky(a), asl.cho_solve(asl.cho_factor(a), b)))(a, b)
    np.testing.assert_allclose(np.asarray(upper), np.linalg.cholesky(a).T, rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(a, b), rtol=1e-9)


def test_a_block_is_one_sequential_kernel():
    text = aotc.jit(anp.linalg.cholesky).lower(spd(40, 40)).as_text()
    assert text.count("flow.dispatch.region") == 3  # cholesky 32, inverse 32, cholesky 8
    assert 'aotc.kernel = "cholesky_block"' in text and 'aotc.kernel = "lower_inverse"' in text
    assert text.count("linalg.matmul") >= 2  # the solve and the Schur complement


def test_vmap_merges_into_the_kernels_batch():
    text = aotc.jit(aotc.vmap(anp.linalg.cholesky)).lower(spd(5, 8, 8)).as_text()
    assert text.count("flow.dispatch.region") == 1
    assert "tensor<5x8x8xf64>" in text


@pytest.mark.parametrize("call, message", [
    (lambda: anp.linalg.cholesky(np.ones(3)), "1-dimensional array given"),
    (lambda: anp.linalg.cholesky(np.ones((2, 3))), "must be square, got shape (2, 3)"),
    (lambda: anp.linalg.cholesky(np.eye(2, dtype=np.float16)), "float16 matrices"),
    (lambda: asl.solve_triangular(np.eye(3), np.ones(3), trans=3), "trans must be 0, 1, 2"),
    (lambda: asl.solve_triangular(np.eye(3), np.ones((4, 2))), "does not match a of size 3"),
    (lambda: asl.cho_solve(np.eye(3), np.ones(3)), "the pair (c, lower)"),
])
def test_bad_input_is_refused_with_a_clear_message(call, message):
    with pytest.raises((TracingError, UnsupportedOpError)) as info:
        aotc.jit(lambda: call())()
    assert message in str(info.value)
