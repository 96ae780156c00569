"""Derivatives through complex values (passes/autodiff/complex_scalar.py and the generic
rule's complex seeds), with JAX's convention: the gradient of a real loss with respect to
z = x + iy is dL/dx - i dL/dy, a linear map's transpose is the unconjugated one. Reverse
mode against finite differences of numpy (in the real and imaginary directions) and
JAX, forward mode and vjp of complex outputs against JAX, per-example gradients under
vmap against a loop."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.autodiff import DifferentiationError

from tests.gradient_checks import (PythonLax, check_gradients, complex_finite_difference, jax,
                                  jnp, reference)

RNG = np.random.default_rng(5)
X = RNG.uniform(-1, 1, 6)
Z = RNG.uniform(-1, 1, 6) + 1j * RNG.uniform(-1, 1, 6)
W = np.arange(1.0, 7.0)

# f(m, x, z) -> a real scalar: complex intermediates of a real x, and a complex z.
CASES = {
    "arithmetic": lambda m, x, z: m.sum(W * m.real((x + 1j * z) * (2 - 1j * x) / (3 + z))),
    "parts and conj": lambda m, x, z: m.sum(m.imag(z * z) * x + m.real(m.conj(z) * (x + 1j))),
    "abs and angle": lambda m, x, z: m.sum(m.abs(z) ** 3 + m.angle(z + x) * W),
    "exp log sqrt": lambda m, x, z: m.sum(m.real(m.exp(1j * x) * m.log(z + 2))
                                          + m.imag(m.sqrt(z + 2 + 1j * x))),
    "trig and power": lambda m, x, z: m.sum(m.real(m.sin(z) * m.tanh(x - 1j * z)
                                                   + (z + 2) ** (1.5 + 0.5j))),
    "sum and matmul": lambda m, x, z: m.abs(m.sum(z ** 2)) + m.sum(
        m.abs(m.outer(z, x) @ (x - 2j * z)) ** 2),
    "fft": lambda m, x, z: m.sum(W * m.abs(m.fft.fft(x + 1j * z)) ** 2)
    + m.sum(m.abs(m.fft.rfft(x)) * m.arange(4.0)),
    "spectral filter": lambda m, x, z: m.sum(m.real(m.fft.ifft(m.fft.fft(z) * x)) * W),
}


def test_reverse_mode_through_complex_values():
    @aotc.jit
    def gradients(x, z):
        return {name: aotc.grad(lambda x, z, f=f: f(anp, x, z), argnums=(0, 1))(x, z)
                for name, f in CASES.items()}

    got = gradients(X, Z)
    for name in CASES:
        for argnum in (0, 1):
            assert np.asarray(got[name][argnum]).dtype == (np.float64, np.complex128)[argnum], name
    check_gradients(got, CASES, (X, Z), atol=1e-7, jax_atol=1e-12)


def test_forward_mode_and_vjp_of_complex_outputs():
    dx, dz = RNG.uniform(-1, 1, 6), RNG.uniform(-1, 1, 6) + 1j * RNG.uniform(-1, 1, 6)
    ct = RNG.uniform(-1, 1, 6) + 1j * RNG.uniform(-1, 1, 6)

    def spectrum(m, x, z):
        return m.fft.fft(m.sin(z) * x + m.exp(1j * x))

    @aotc.jit
    def derivatives(x, z, dx, dz, ct):
        tangents = {name: aotc.jvp(lambda x, z, f=f: f(anp, x, z), (x, z), (dx, dz))[1]
                    for name, f in CASES.items()}
        out_tangent = aotc.jvp(lambda x, z: spectrum(anp, x, z), (x, z), (dx, dz))[1]
        cotangents = aotc.vjp(lambda x, z: spectrum(anp, x, z), x, z)[1](ct)
        return tangents, out_tangent, cotangents

    tangents, out_tangent, cotangents = derivatives(X, Z, dx, dz, ct)
    eps = 1e-6
    for name, f in CASES.items():
        expected = (f(np, X + eps * dx, Z + eps * dz) - f(np, X - eps * dx, Z - eps * dz)) / (
            2 * eps)
        np.testing.assert_allclose(float(np.asarray(tangents[name])), expected, rtol=1e-6,
                                   atol=1e-8, err_msg=name)
    expected = (spectrum(np, X + eps * dx, Z + eps * dz)
                - spectrum(np, X - eps * dx, Z - eps * dz)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(out_tangent), expected, rtol=1e-6, atol=1e-8)
    if jax is not None:
        want = reference(lambda *a: jax.vjp(lambda x, z: spectrum(jnp, x, z), *a[:2])[1](a[2]),
                         X, Z, ct)
        for got, ref in zip(cotangents, want):
            np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-12, atol=1e-12)


def test_per_example_complex_gradients_under_vmap_match_a_loop():
    zs = RNG.uniform(-1, 1, (3, 6)) + 1j * RNG.uniform(-1, 1, (3, 6))

    def loss(x, z):
        return anp.sum(anp.abs(anp.fft.fft(z * x)) ** 2)

    batched = aotc.jit(aotc.vmap(aotc.grad(loss, argnums=1), in_axes=(None, 0)))(X, zs)
    one = aotc.jit(aotc.grad(loss, argnums=1))
    for i in range(3):
        np.testing.assert_allclose(np.asarray(batched[i]), np.asarray(one(X, zs[i])),
                                   rtol=1e-12, atol=1e-12, err_msg=f"example {i}")


def test_holomorphic_derivatives_and_their_dtype_rules():
    """holomorphic=True: f'(z) of a complex function of complex arguments (grad, jacrev,
    jacfwd, hessian), against the closed form and JAX; JAX's dtype errors otherwise."""
    z = Z[:3]

    def f(m):
        return lambda z: m.sum(m.sin(z) * z ** 2)

    def g(m):
        return lambda z: m.exp(z) * z[::-1]

    @aotc.jit
    def derivatives(z):
        return (aotc.grad(f(anp), holomorphic=True)(z),
                aotc.jacrev(g(anp), holomorphic=True)(z),
                aotc.jacfwd(g(anp), holomorphic=True)(z),
                aotc.hessian(f(anp), holomorphic=True)(z))

    first, jac_rev, jac_fwd, second = map(np.asarray, derivatives(z))
    np.testing.assert_allclose(first, np.cos(z) * z ** 2 + 2 * z * np.sin(z), rtol=1e-13)
    expected = np.diag(np.exp(z) * z[::-1]) + np.exp(z)[:, None] * np.eye(3)[::-1]
    np.testing.assert_allclose(jac_rev, expected, rtol=1e-13)
    np.testing.assert_allclose(jac_fwd, expected, rtol=1e-13)
    np.testing.assert_allclose(
        second, np.diag(-np.sin(z) * z ** 2 + 4 * z * np.cos(z) + 2 * np.sin(z)), rtol=1e-12,
        atol=1e-15)
    if jax is not None:
        want = reference(jax.hessian(f(jnp), holomorphic=True), z)
        np.testing.assert_allclose(second, want, rtol=1e-12, atol=1e-15)
    with pytest.raises(DifferentiationError, match="holomorphic=True requires inputs with "
                                                   "complex dtype, but got float64"):
        aotc.grad(f(anp), holomorphic=True)(z.real)
    with pytest.raises(DifferentiationError, match=r"jacrev\(<lambda>\) requires real-valued "
                                                   r"outputs .* pass holomorphic=True"):
        aotc.jacrev(g(anp))(z)
    with pytest.raises(DifferentiationError, match=r"jacfwd\(<lambda>\) requires real-valued "
                                                   r"inputs"):
        aotc.jacfwd(g(anp))(z)


def _lax(m):
    return {np: PythonLax, anp: aotc.lax}.get(m) or jax.lax


def _scatter(m, x, at, u, add):
    """``x.at[at].add(u)`` (``.set`` unless ``add``); numpy's ``np.add.at`` on a copy."""
    if m is np:
        y = x.copy()
        if add:
            np.add.at(y, at, u)
        else:
            y[at] = u
        return y
    return x.at[at].add(u) if add else x.at[at].set(u)


# Complex state through loops and branches (their rules' complex zeros, tapes and sums),
# cumulative sums and scatters (complex adds, a set's mask), products.
CONTROL_CASES = {
    "fori_loop": lambda m, x, z: m.sum(m.abs(_lax(m).fori_loop(
        0, 3, lambda i, c: c * (0.9 + 0.1j) + m.sin(c) * x * 0.1, z)) ** 2),
    "scan": lambda m, x, z: m.sum(W * m.real(_lax(m).scan(
        lambda c, xz: (c * xz + m.exp(1j * xz.real) * 0.2, c * 2), z[0] * x[0], z * x)[1])),
    "cond": lambda m, x, z: m.sum(m.abs(_lax(m).cond(
        x[0] > 0, lambda v: v * v + 1j * x, lambda v: m.conj(v) - x, z))),
    "cumsum": lambda m, x, z: m.sum(m.abs(m.cumsum(z * x)) ** 2 * W),
    "scatter": lambda m, x, z: m.sum(m.abs(_scatter(
        m, _scatter(m, z * x, m.array([1, 1, 4]), z[:3] * 2j, True), m.array([0, 5]),
        z[3:5] + x[:2], False)) ** 2 * W),
    # a product with one zero factor (element 1) whose derivative is not zero
    "products": lambda m, x, z: m.abs(m.prod(z * x)) ** 2 + m.real(m.prod(z - Z[1]) * (1 + 1j))
    + m.sum(m.abs(m.cumprod(z * x)) * W),
}


def test_reverse_and_forward_mode_through_complex_control_flow_cumsum_and_scatters():
    dx, dz = RNG.uniform(-1, 1, 6), RNG.uniform(-1, 1, 6) + 1j * RNG.uniform(-1, 1, 6)

    @aotc.jit
    def derivatives(x, z, dx, dz):
        return {name: (aotc.grad(lambda x, z, f=f: f(anp, x, z), argnums=(0, 1))(x, z),
                       aotc.jvp(lambda x, z, f=f: f(anp, x, z), (x, z), (dx, dz))[1])
                for name, f in CONTROL_CASES.items()}

    got = derivatives(X, Z, dx, dz)
    eps = 1e-6
    for name, f in CONTROL_CASES.items():
        gradients, tangent = got[name]
        for argnum in (0, 1):
            np.testing.assert_allclose(np.asarray(gradients[argnum]),
                                       complex_finite_difference(f, (X, Z), argnum), rtol=1e-6,
                                       atol=1e-7, err_msg=f"{name} argument {argnum}")
        expected = (f(np, X + eps * dx, Z + eps * dz) - f(np, X - eps * dx, Z - eps * dz)) / (
            2 * eps)
        np.testing.assert_allclose(float(np.asarray(tangent)), expected, rtol=1e-6, atol=1e-8,
                                   err_msg=f"{name} forward")
        if jax is not None:
            want = reference(jax.grad(lambda x, z, f=f: f(jnp, x, z), argnums=(0, 1)), X, Z)
            for argnum in (0, 1):
                np.testing.assert_allclose(np.asarray(gradients[argnum]), want[argnum],
                                           rtol=1e-12, atol=1e-12, err_msg=f"{name} vs jax")


def test_custom_derivatives_of_complex_functions():
    """custom_vjp and custom_jvp with complex arguments and outputs: the rules see JAX's
    convention (the unconjugated transpose: the cotangent times f'(z) for holomorphic f)."""
    @aotc.custom_vjp
    def square(z):
        return z * z

    square.defvjp(lambda z: (z * z, z), lambda z, g: (g * 2 * z,))

    @aotc.custom_jvp
    def cube(z):
        return z ** 3

    cube.defjvp(lambda primals, tangents: (primals[0] ** 3, 3 * primals[0] ** 2 * tangents[0]))

    def loss(m, x, z, square=lambda z: z * z, cube=lambda z: z ** 3):
        return m.sum(W * m.abs(square(z * x) + cube(z)) ** 2)

    got = aotc.jit(aotc.grad(lambda x, z: loss(anp, x, z, square, cube), argnums=(0, 1)))(X, Z)
    for argnum in (0, 1):
        np.testing.assert_allclose(np.asarray(got[argnum]),
                                   complex_finite_difference(loss, (X, Z), argnum),
                                   rtol=1e-6, atol=1e-7, err_msg=f"argument {argnum}")
