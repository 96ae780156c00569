"""Hand-written JAX versions of some kernels of tests/kernels/polybench.py, for
benchmarks/kernels.py's jax.jit column.

Each takes the kernel's arguments (its sizes static) and returns what the kernel leaves
behind, in the order benchmarks/kernels.py compares it: the kernel's results, then every
array argument's final value (numpy's kernel writes into them; JAX returns new arrays).
Written functionally, as a JAX user would: whole-array updates with ``.at[]`` and
``lax.fori_loop`` for time steps. Only kernels whose JAX form is short are here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

jax.config.update("jax_enable_x64", True)


def jacobi_1d(tsteps, n, A, B):
    def step(_, ab):
        a, b = ab
        b = b.at[1:n - 1].set(0.33333 * (a[0:n - 2] + a[1:n - 1] + a[2:n]))
        a = a.at[1:n - 1].set(0.33333 * (b[0:n - 2] + b[1:n - 1] + b[2:n]))
        return a, b
    return list(lax.fori_loop(0, tsteps, step, (A, B)))


def _five_point(x):
    return 0.2 * (x[1:-1, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:] + x[2:, 1:-1] + x[:-2, 1:-1])


def jacobi_2d(tsteps, n, A, B):
    def step(_, ab):
        a, b = ab
        b = b.at[1:-1, 1:-1].set(_five_point(a))
        a = a.at[1:-1, 1:-1].set(_five_point(b))
        return a, b
    return list(lax.fori_loop(0, tsteps, step, (A, B)))


def _heat(src, dst):
    c = src[1:-1, 1:-1, 1:-1]
    return dst.at[1:-1, 1:-1, 1:-1].set(
        0.125 * (src[2:, 1:-1, 1:-1] - 2.0 * c + src[:-2, 1:-1, 1:-1])
        + 0.125 * (src[1:-1, 2:, 1:-1] - 2.0 * c + src[1:-1, :-2, 1:-1])
        + 0.125 * (src[1:-1, 1:-1, 2:] - 2.0 * c + src[1:-1, 1:-1, :-2])
        + c)


def heat_3d(tsteps, n, A, B):
    def step(_, ab):
        a, b = ab
        b = _heat(a, b)
        return _heat(b, a), b
    return list(lax.fori_loop(0, tsteps, step, (A, B)))


def fdtd_2d(tmax, nx, ny, ex, ey, hz, fict):
    def step(t, fields):
        ex, ey, hz = fields
        ey = ey.at[0, :].set(fict[t])
        ey = ey.at[1:, :].add(-0.5 * (hz[1:, :] - hz[:-1, :]))
        ex = ex.at[:, 1:].add(-0.5 * (hz[:, 1:] - hz[:, :-1]))
        hz = hz.at[:-1, :-1].add(-0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1]
                                         - ey[:-1, :-1]))
        return ex, ey, hz
    return [*lax.fori_loop(0, tmax, step, (ex, ey, hz)), fict]


def gemm(ni, nj, nk, alpha, beta, C, A, B):
    return [beta * C + alpha * (A @ B), A, B]


def gemver(n, alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    A = A + jnp.outer(u1, v1) + jnp.outer(u2, v2)
    x = x + beta * (A.T @ y) + z
    w = w + alpha * (A @ x)
    return [A, u1, v1, u2, v2, w, x, y, z]


def gesummv(n, alpha, beta, A, B, x):
    return [alpha * (A @ x) + beta * (B @ x), A, B, x]


def atax(m, n, A, x):
    return [A.T @ (A @ x), A, x]


def bicg(m, n, A, s, q, p, r):
    return [A, r @ A, A @ p, p, r]


def mvt(n, x1, x2, y_1, y_2, A):
    return [x1 + A @ y_1, x2 + A.T @ y_2, y_1, y_2, A]


def doitgen(nr, nq, npp, A, C4, acc):
    out = A @ C4
    return [out, C4, out[-1, -1]]


def covariance(m, n, float_n, data, cov, mean):
    mean = data.sum(axis=0) / float_n
    data = data - mean
    return [data, data.T @ data / (float_n - 1.0), mean]


def floyd_warshall(n, path):
    def step(k, p):
        return jnp.minimum(p, lax.dynamic_slice_in_dim(p, k, 1, 1)
                           + lax.dynamic_slice_in_dim(p, k, 1, 0))
    return [lax.fori_loop(0, n, step, path)]


# name -> (function, positions of its static size arguments)
JAX_KERNELS = {
    "jacobi-1d": jacobi_1d,
    "jacobi-2d": jacobi_2d,
    "heat-3d": heat_3d,
    "fdtd-2d": fdtd_2d,
    "gemm": gemm,
    "gemver": gemver,
    "gesummv": gesummv,
    "atax": atax,
    "bicg": bicg,
    "mvt": mvt,
    "doitgen": doitgen,
    "covariance": covariance,
    "floyd-warshall": floyd_warshall,
}
