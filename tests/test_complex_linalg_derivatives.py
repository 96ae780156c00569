"""Derivatives of the factorizations of complex matrices (aotc/linalg_derivatives.py's
rules with their conjugate transposes and complex terms), with JAX's convention: the
gradient of a real loss with respect to z = x + iy is dL/dx - i dL/dy. Every loss is
invariant under the phases the factorizations leave free (an eigenvector's, a singular
pair's), so finite differences of numpy's LAPACK results and JAX's are references.
Reverse mode against both, forward mode against finite differences."""

from __future__ import annotations

import numpy as np

import aotc
import aotc.numpy as anp

from tests.gradient_checks import check_gradients, complex_finite_difference

RNG = np.random.default_rng(11)
N = 4


def _complex(*shape):
    return RNG.uniform(-1, 1, shape) + 1j * RNG.uniform(-1, 1, shape)


A, B, TALL, WIDE = _complex(N, N), _complex(N, 2), _complex(5, 3), _complex(3, 5)
WEIGHTS = RNG.uniform(0.5, 1.5, (N, N))


def _hermitian(m, a):
    return a @ m.conj(m.swapaxes(a, -1, -2)) + N * m.eye(N)


def _phases_free(m, u, vh, k):
    """A function of (u, vh) that no per-column phase changes: u diag(c) vh."""
    return m.sum(m.abs((u[:, :k] * m.arange(1.0, k + 1)) @ vh[:k]) ** 2)


def _projector(m, q):
    return q @ m.conj(q.T)


def _solve(m, a, b):
    x = m.linalg.solve(a, b)
    return m.sum(m.real(x) + m.imag(x) ** 2)


def _slogdet(m, a, b):
    sign, logabs = m.linalg.slogdet(a)
    return logabs + m.imag(sign)


def _cholesky(m, a, b):
    factor = m.linalg.cholesky(_hermitian(m, a))
    return m.sum(WEIGHTS * m.real(factor) + m.imag(factor) ** 2)


def _eigh(m, a, b):
    w, v = m.linalg.eigh(_hermitian(m, a))
    return m.sum(WEIGHTS * m.abs(v) ** 2) + m.sum(w ** 3)


def _qr(m, a, b):
    q, r = m.linalg.qr(a)
    return m.sum(WEIGHTS * m.abs(q) ** 2 + m.real(r) * WEIGHTS.T)


def _svd(m, a, b):
    u, s, vh = m.linalg.svd(a)
    return _phases_free(m, u, vh, N) + m.sum(s ** 3)


# f(m, a, b) -> a real scalar.
CASES = {
    "inv": lambda m, a, b: m.sum(WEIGHTS * m.abs(m.linalg.inv(a)) ** 2),
    "solve": _solve,
    "slogdet": _slogdet,
    "cholesky": _cholesky,
    "eigvalsh": lambda m, a, b: m.sum(m.linalg.eigvalsh(_hermitian(m, a)) ** 2
                                      * m.arange(1.0, N + 1)),
    "eigh": _eigh,
    "qr": _qr,
    "svd": _svd,
    "svdvals": lambda m, a, b: m.sum(m.linalg.svd(a, compute_uv=False) * m.arange(1.0, N + 1)),
}
# f(m, t) -> a real scalar, of a tall or wide matrix.
SHAPED = {
    "svd tall": (TALL, lambda m, t: _phases_free(m, *m.linalg.svd(t, full_matrices=False)[::2], 3)),
    "svd wide": (WIDE, lambda m, t: _phases_free(m, *m.linalg.svd(t, full_matrices=False)[::2], 3)),
    "qr wide": (WIDE, lambda m, t: _qr_parts(m, *m.linalg.qr(t))),
    # the complement's projector (its basis is not unique)
    "qr complete": (TALL, lambda m, t: m.sum(m.abs(_projector(m, m.linalg.qr(t, "complete")[0][
        :, 3:]) * m.arange(1.0, 6.0)) ** 2)),
}
# Forward mode runs the rules' tangent maps themselves (reverse mode their transposes).
FORWARD = ("slogdet", "svd")


def _qr_parts(m, q, r):
    return m.sum(m.real(q * m.arange(1.0, 4.0))) + m.sum(m.abs(r) ** 2)


def test_reverse_mode_through_complex_factorizations():
    """Against finite differences and JAX. One program: one compile."""
    @aotc.jit
    def gradients(a, b):
        return {name: aotc.grad(lambda a, b, f=f: f(anp, a, b), argnums=(0, 1))(a, b)
                for name, f in CASES.items()}

    check_gradients(gradients(A, B), CASES, (A, B), atol=1e-6, jax_rtol=1e-9, jax_atol=1e-9)


def test_tall_wide_and_complete_factors_and_forward_mode():
    """Reverse mode at tall and wide matrices against finite differences; forward mode
    against finite differences along a random direction."""
    da, db = _complex(N, N), _complex(N, 2)

    @aotc.jit
    def derivatives(tall, wide, a, b, da, db):
        shaped = {name: aotc.grad(lambda t, f=f: f(anp, t))(tall if x is TALL else wide)
                  for name, (x, f) in SHAPED.items()}
        tangents = {name: aotc.jvp(lambda a, b, f=CASES[name]: f(anp, a, b), (a, b),
                                   (da, db))[1] for name in FORWARD}
        return shaped, tangents

    shaped, tangents = derivatives(TALL, WIDE, A, B, da, db)
    for name, (x, f) in SHAPED.items():
        np.testing.assert_allclose(
            np.asarray(shaped[name]),
            complex_finite_difference(lambda m, t, f=f: f(m, t), (x,), 0),
            rtol=1e-6, atol=1e-6, err_msg=name)
    eps = 1e-6
    for name in FORWARD:
        f = CASES[name]
        want = (f(np, A + eps * da, B + eps * db) - f(np, A - eps * da, B - eps * db)) / (2 * eps)
        np.testing.assert_allclose(float(np.asarray(tangents[name])), want, rtol=1e-6,
                                   atol=1e-6, err_msg=f"{name} forward mode")
