"""Derivatives of numpy.linalg's, scipy.linalg's and lax.linalg's factorizations
(aotc/linalg_derivatives.py): reverse mode against central finite differences of numpy's
and scipy's functions and against JAX, forward mode, per-example gradients under vmap
against a loop, and second derivatives.

Each table is one compiled program returning every case's gradient."""

from __future__ import annotations

import collections
import re

import numpy as np
import pytest
import scipy.linalg

import aotc
import aotc.numpy as anp

from tests.gradient_checks import check_gradients, finite_difference, jax, jnp, reference

if jax is not None:
    import jax.scipy.linalg

RNG = np.random.default_rng(11)
N = 4
A = RNG.uniform(-1, 1, (N, N)) + N * np.eye(N)  # well conditioned, not symmetric
B = RNG.uniform(-1, 1, (N, 2))
WEIGHTS = RNG.uniform(0.5, 1.5, (N, N))


def _spd(m, a):
    """A symmetric positive definite matrix made from a (symmetric in a: the functions
    below then agree with JAX, which symmetrizes cholesky's and eigh's input)."""
    s = (a + m.swapaxes(a, -1, -2)) / 2
    return s @ s + m.eye(a.shape[-1])


# f(m, a, b) -> scalar, written once for aotc.numpy, numpy and jax.numpy.
CASES = {
    "solve matrix": lambda m, a, b: m.sum(WEIGHTS[:, :2] * m.linalg.solve(a, b)),
    "solve vector": lambda m, a, b: m.sum(m.sin(m.linalg.solve(a, b[:, 0]))),
    "inv": lambda m, a, b: m.sum(WEIGHTS * m.linalg.inv(a)),
    "det": lambda m, a, b: m.linalg.det(a) * b[0, 0],
    "slogdet": lambda m, a, b: m.linalg.slogdet(a)[1] + m.linalg.slogdet(-a)[0],
    "cholesky": lambda m, a, b: m.sum(WEIGHTS * m.linalg.cholesky(_spd(m, a))),
    "cholesky upper": lambda m, a, b: m.sum(WEIGHTS * m.linalg.cholesky(_spd(m, a), upper=True)),
    "eigh values": lambda m, a, b: m.sum(WEIGHTS[0] * m.linalg.eigh(_spd(m, a))[0]),
    # The squares of the eigenvectors' entries do not depend on their signs.
    "eigh vectors": lambda m, a, b: m.sum(WEIGHTS * m.linalg.eigh(_spd(m, a))[1] ** 2),
    "eigvalsh": lambda m, a, b: m.sum(m.exp(m.linalg.eigvalsh(_spd(m, a), UPLO="U"))),
    "stacked solve": lambda m, a, b: m.sum(m.linalg.solve(m.stack([a, 2 * a + b[0, 0]]), b)),
}


def _sl(m):
    """The scipy.linalg of the numpy-like module ``m``."""
    return {anp: aotc.scipy.linalg, np: scipy.linalg}.get(m) or jax.scipy.linalg


def _projector_of_last(q, k):
    """Q_rest Q_rest^T for the columns of ``q`` from the k-th on: what is unique about a
    complete factor's extra columns (they span the complement; their basis is not)."""
    return q[..., :, k:] @ q[..., :, k:].swapaxes(-1, -2)


TALL = RNG.uniform(-1, 1, (5, 3))
WIDE = RNG.uniform(-1, 1, (3, 5))
L5 = RNG.uniform(0.5, 1.5, (5, 5))

# QR, SVD and what is built on them, and scipy's factorizations, at a square, a tall and
# a wide matrix: f(m, a, t, w) -> scalar. Signs of Q and R are LAPACK's (fixed by the
# algorithm: differentiable); singular vectors enter squared or as projectors.
FACTORIZATIONS = {
    "qr square": lambda m, a, t, w: m.sum(WEIGHTS * m.linalg.qr(a)[0])
    + m.sum(WEIGHTS * m.linalg.qr(a)[1]),
    "qr tall": lambda m, a, t, w: m.sum(L5[:, :3] * m.linalg.qr(t)[0])
    + m.sum(L5[:3, :3] * m.linalg.qr(t, mode="r")),
    "qr wide": lambda m, a, t, w: m.sum(L5[:3, :3] * m.linalg.qr(w)[0])
    + m.sum(L5[:3] * m.linalg.qr(w)[1]),
    "svd": lambda m, a, t, w: m.sum(L5[:, :3] * m.linalg.svd(t, full_matrices=False)[0] ** 2)
    + m.sum(L5[0, :3] * m.linalg.svd(t, full_matrices=False)[1])
    + m.sum(L5[:3] * m.linalg.svd(w, full_matrices=False)[2] ** 2),
    "svdvals": lambda m, a, t, w: m.sum(m.linalg.svdvals(a) ** 3),
    "pinv": lambda m, a, t, w: m.sum(L5[:3] * m.linalg.pinv(t)),
    "lstsq": lambda m, a, t, w: m.sum(L5[:3, :2] * m.linalg.lstsq(t, L5[:, :2])[0]),
    "norms": lambda m, a, t, w: m.linalg.norm(w, 2) + m.linalg.norm(w, "nuc")
    + m.linalg.cond(w),
    "lu": lambda m, a, t, w: m.sum(L5[:, :3] * _sl(m).lu(t)[1])
    + m.sum(L5[:3, :3] * _sl(m).lu(t)[2]) + m.sum(L5[:3] * _sl(m).lu(w)[2]),
    "lu_factor and lu_solve": lambda m, a, t, w: m.sum(WEIGHTS * _sl(m).lu_factor(a)[0])
    + m.sum(_sl(m).lu_solve(_sl(m).lu_factor(a), t[:4, :2], trans=1)),
    "solve_triangular": lambda m, a, t, w: m.sum(_sl(m).solve_triangular(a, t[:4], lower=True))
    + m.sum(_sl(m).solve_triangular(a, t[:4, :2], trans=1, unit_diagonal=True)),
    "cho_solve": lambda m, a, t, w: m.sum(
        _sl(m).cho_solve(_sl(m).cho_factor(_spd(m, a)), t[:4])),
    "scipy solve pos": lambda m, a, t, w: m.sum(
        L5[:4, :3] * _sl(m).solve(_spd(m, a), t[:4], assume_a="pos")),
}
# Complete factors of non-square matrices (JAX refuses their derivatives): the extra
# columns through their projector; scipy's generalized eigenproblem (JAX has none).
BEYOND_JAX = {
    "qr complete": lambda m, a, t, w: m.sum(L5 * _projector_of_last(
        m.linalg.qr(t, mode="complete")[0], 3)),
    "svd full_matrices": lambda m, a, t, w: m.sum(L5 * _projector_of_last(m.linalg.svd(t)[0], 3))
    + m.sum(L5 * _projector_of_last(m.linalg.svd(w)[2].swapaxes(-1, -2), 3))
    + m.sum(m.linalg.svd(w)[1]),
    "generalized eigh": lambda m, a, t, w: m.sum(WEIGHTS[0] * _sl(m).eigh(
        _spd(m, a), _spd(m, t[:4, :3] @ w[:, :4]), eigvals_only=True)),
}


@pytest.mark.parametrize("table", ["jax", "beyond jax"])
def test_factorization_gradients_match_finite_differences(table):
    cases = FACTORIZATIONS if table == "jax" else BEYOND_JAX

    @aotc.jit
    def gradients(a, t, w):
        return {name: aotc.grad(lambda *args, f=f: f(anp, *args), argnums=(0, 1, 2))(a, t, w)
                for name, f in cases.items()}

    got = gradients(A, TALL, WIDE)
    if table == "jax":
        check_gradients(got, cases, (A, TALL, WIDE), atol=1e-7, jax_rtol=1e-8, jax_atol=1e-10)
        return
    for name, f in cases.items():
        for argnum in range(3):
            np.testing.assert_allclose(
                np.asarray(got[name][argnum]),
                finite_difference(lambda *a, f=f: f(np, *a), (A, TALL, WIDE), argnum),
                rtol=1e-6, atol=1e-7, err_msg=f"{name} argument {argnum}")


# Forward mode through Q, the singular vectors and the LU factors (whose pivot order is
# an integer output: no tangent), and second derivatives through the singular values
# (their rule calls the SVD's: rules of rules).
FORWARD_FACTORIZATIONS = {
    "qr": lambda m, t: m.sum(L5[:, :3] * m.linalg.qr(t)[0]) + m.sum(m.linalg.qr(t)[1] ** 2),
    "svd": lambda m, t: m.sum(L5[:, :3] * m.linalg.svd(t, full_matrices=False)[0] ** 2),
    "lu": lambda m, t: m.sum(_sl(m).lu(t)[1] ** 2) + m.sum(L5[:3, :3] * _sl(m).lu(t)[2]),
}


def _singular_values_cubed(m, t):
    return m.sum(m.linalg.svd(t, compute_uv=False) ** 3)


def test_factorization_forward_mode_and_second_derivatives():
    dt = RNG.uniform(-1, 1, TALL.shape)

    @aotc.jit
    def derivatives(t, dt):
        tangents = {name: aotc.jvp(lambda t, f=f: f(anp, t), (t,), (dt,))[1]
                    for name, f in FORWARD_FACTORIZATIONS.items()}
        return tangents, aotc.hessian(lambda t: _singular_values_cubed(anp, t))(t)

    tangents, hessian = derivatives(TALL, dt)
    eps = 1e-6
    for name, f in FORWARD_FACTORIZATIONS.items():
        expected = (f(np, TALL + eps * dt) - f(np, TALL - eps * dt)) / (2 * eps)
        np.testing.assert_allclose(np.asarray(tangents[name]), expected, rtol=1e-6,
                                   err_msg=name)
    # d/dt of 3 s^2 ds/dt, ds/dt = u v^T: finite differences of that closed form
    gradient = lambda t: sum(3 * s ** 2 * np.outer(u, v) for u, s, v in  # noqa: E731
                             zip(*(np.linalg.svd(t, full_matrices=False)[0].T,
                                   np.linalg.svd(t)[1], np.linalg.svd(t)[2])))
    expected = np.stack([finite_difference(lambda t: gradient(t)[i], (TALL,), 0)
                         for i in np.ndindex(5, 3)])
    np.testing.assert_allclose(np.asarray(hessian).reshape(15, 15), expected.reshape(15, 15),
                               rtol=1e-5, atol=1e-6)
    if jax is not None:
        want = reference(jax.hessian(lambda t: _singular_values_cubed(jnp, t)), TALL)
        np.testing.assert_allclose(np.asarray(hessian), want, rtol=1e-9, atol=1e-10)


def test_gradients_match_finite_differences_and_jax():
    @aotc.jit
    def gradients(a, b):
        return {name: aotc.grad(lambda a, b, f=f: f(anp, a, b), argnums=(0, 1))(a, b)
                for name, f in CASES.items()}

    check_gradients(gradients(A, B), CASES, (A, B), atol=1e-7, jax_rtol=1e-10)


# One case per form of tangent (through the inverse, the triangular factor, the
# eigenvectors): forward mode compiles each once.
FORWARD = {name: CASES[name] for name in ("solve matrix", "cholesky", "eigh vectors")}


def test_forward_mode_and_second_derivatives():
    """jvp of each form of tangent against finite differences and JAX; jacfwd of the
    gradient of inv (the rules' own primal values are differentiable) against finite
    differences of the gradient and JAX."""
    da, db = RNG.uniform(-1, 1, A.shape), RNG.uniform(-1, 1, B.shape)

    @aotc.jit
    def tangents(a, b, da, db):
        return {name: aotc.jvp(lambda a, b, f=f: f(anp, a, b), (a, b), (da, db))[1]
                for name, f in FORWARD.items()}

    @aotc.jit
    def second(a):
        return aotc.jacfwd(aotc.grad(lambda a: anp.sum(anp.linalg.inv(a))))(a)

    got = tangents(A, B, da, db)
    eps = 1e-6
    for name, f in FORWARD.items():
        expected = (f(np, A + eps * da, B + eps * db)
                    - f(np, A - eps * da, B - eps * db)) / (2 * eps)
        np.testing.assert_allclose(float(np.asarray(got[name])), expected, rtol=1e-6, atol=1e-7,
                                   err_msg=name)
        if jax is not None:
            want = reference(lambda a, b, f=f: jax.jvp(lambda a, b: f(jnp, a, b), (a, b),
                                                           (da, db))[1], A, B)
            np.testing.assert_allclose(float(np.asarray(got[name])), want, rtol=1e-10,
                                       atol=1e-12, err_msg=f"{name} vs jax")
    got = np.asarray(second(A))
    ones = np.ones((N, N))
    grad_sum_inv = lambda a: -np.linalg.inv(a).T @ ones @ np.linalg.inv(a).T  # noqa: E731
    expected = np.stack([finite_difference(lambda a: grad_sum_inv(a)[i], (A,), 0)
                         for i in np.ndindex(N, N)]).reshape(N, N, N, N)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)
    if jax is not None:
        np.testing.assert_allclose(got, reference(
            jax.jacfwd(jax.grad(lambda a: jnp.sum(jnp.linalg.inv(a)))), A), rtol=1e-10,
            atol=1e-12)


def test_per_example_gradients_under_vmap_match_a_loop():
    stack = A + RNG.uniform(-0.3, 0.3, (3, N, N))
    rhs = RNG.uniform(-1, 1, (3, N, 2))

    def loss(a, b):
        x = anp.linalg.solve(a, b)
        factor = anp.linalg.cholesky(_spd(anp, a))
        return anp.sum(x * x) + anp.linalg.slogdet(a)[1] + anp.sum(factor)

    batched = aotc.jit(aotc.vmap(aotc.grad(loss, argnums=(0, 1))))(stack, rhs)
    one = aotc.jit(aotc.grad(loss, argnums=(0, 1)))
    for i in range(3):
        for argnum, g in enumerate(one(stack[i], rhs[i])):
            np.testing.assert_allclose(np.asarray(batched[argnum][i]), np.asarray(g),
                                       rtol=1e-12, atol=1e-12, err_msg=f"example {i}")


@pytest.mark.parametrize("name", ["cholesky", "eigvalsh"])
def test_only_the_lower_triangle_has_a_derivative(name):
    """numpy's cholesky and eigh read the lower triangle: the derivative with respect to
    the upper one is zero, as finite differences of the same function say."""
    spd = _spd(np, A)
    f = {"cholesky": lambda m, a: m.sum(WEIGHTS * m.linalg.cholesky(a)),
         "eigvalsh": lambda m, a: m.sum(m.linalg.eigvalsh(a) ** 2)}[name]
    got = np.asarray(aotc.jit(aotc.grad(lambda a: f(anp, a)))(spd))
    np.testing.assert_allclose(got, finite_difference(lambda a: f(np, a), (spd,), 0),
                               rtol=1e-6, atol=1e-7)
    assert np.all(np.triu(got, 1) == 0)


def _kernels(text: str) -> dict:
    """How many regions of each sequential kernel a module's text holds."""
    return dict(collections.Counter(re.findall(r'aotc.kernel = "(\w+)"', text)))


@pytest.mark.parametrize("name", ["slogdet", "solve", "solve and det"])
def test_a_gradient_factors_its_matrix_once(name):
    """The forward LU, the rule's LU and the LU of the inverse slogdet's rule needs are
    one factorization (passes/share_kernels.py), and solve's rule solves with the LU
    factors: as many kernels as the primal's inverse (64x64: two panels of 32, the leaf
    inverses of L and U), with gradients against finite differences."""
    n = 64
    a = RNG.uniform(-1, 1, (n, n)) / n + np.eye(n)
    b = RNG.uniform(-1, 1, (n, 2))
    f = {"slogdet": lambda m, a: m.linalg.slogdet(a)[1],
         "solve": lambda m, a: m.sum(m.linalg.solve(a, b) ** 2),
         "solve and det": lambda m, a: m.sum(m.linalg.solve(a, b)) * m.linalg.det(a)}[name]
    jitted = aotc.jit(aotc.grad(lambda a: f(anp, a)))
    kernels = _kernels(jitted.lower(a).as_text())
    assert kernels.get("lu_panel") == 2, kernels
    assert kernels.get("lower_inverse") == _kernels(
        aotc.jit(anp.linalg.inv).lower(a).as_text())["lower_inverse"], kernels
    got = np.asarray(jitted(a))
    want = finite_difference(lambda a: f(np, a), (a,), 0)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7 * np.abs(want).max())
