"""PolyBench/C 4.2 kernels, and a few small simulations, written in plain numpy.

Each kernel is written the way numerical Python usually is: it updates its array
arguments in place (``A[i, j] = ...``, ``A[1:-1, 1:-1] = ...``, ``x[i] -= ...``,
``C *= beta``, ``A += np.outer(u, v)``), loops with Python ``for`` over ranges fixed by
its size arguments, and either returns nothing (its results are the arguments it wrote)
or returns its result. The sizes are arguments, static under ``aotc.jit``.

Inputs follow PolyBench's ``init_array`` functions (formulas of the indices and sizes,
float64 unless the benchmark uses integers), at small default sizes so that kernels with
Python loops unroll to programs of a few hundred operations.

``KERNELS`` maps a name to ``Kernel(fn, init, static, mutates, sizes)``:

- ``fn``: the kernel;
- ``init(sizes)``: the whole argument tuple for ``fn``, sizes included, in fresh arrays;
- ``static``: the positions of the size arguments (``static_argnums``);
- ``mutates``: the positions of the arguments ``fn`` writes (empty for a pure kernel);
- ``sizes``: the default sizes, the dict to pass to ``init``.
"""

from __future__ import annotations

import inspect
from typing import Callable, NamedTuple

import numpy as np

ALPHA, BETA = 1.5, 1.2  # PolyBench's scalars for the BLAS-like kernels


class Kernel(NamedTuple):
    fn: Callable
    init: Callable[[dict], tuple]
    static: tuple[int, ...]
    mutates: tuple[int, ...]
    sizes: dict


# --------------------------------------------------------------------------- stencils


def jacobi_1d(tsteps, n, A, B):
    for _ in range(tsteps):
        B[1:n - 1] = 0.33333 * (A[0:n - 2] + A[1:n - 1] + A[2:n])
        A[1:n - 1] = 0.33333 * (B[0:n - 2] + B[1:n - 1] + B[2:n])


def init_jacobi_1d(s):
    n = s["n"]
    i = np.arange(n)
    return s["tsteps"], n, (i + 2.0) / n, (i + 3.0) / n


def jacobi_2d(tsteps, n, A, B):
    for _ in range(tsteps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:]
                               + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:]
                               + B[2:, 1:-1] + B[:-2, 1:-1])


def init_jacobi_2d(s):
    n = s["n"]
    i, j = np.indices((n, n))
    return s["tsteps"], n, (i * (j + 2) + 2) / n, (i * (j + 3) + 3) / n


def heat_3d(tsteps, n, A, B):
    for _ in range(tsteps):
        for src, dst in ((A, B), (B, A)):
            c = src[1:-1, 1:-1, 1:-1]
            dst[1:-1, 1:-1, 1:-1] = (
                0.125 * (src[2:, 1:-1, 1:-1] - 2.0 * c + src[:-2, 1:-1, 1:-1])
                + 0.125 * (src[1:-1, 2:, 1:-1] - 2.0 * c + src[1:-1, :-2, 1:-1])
                + 0.125 * (src[1:-1, 1:-1, 2:] - 2.0 * c + src[1:-1, 1:-1, :-2])
                + c)


def init_heat_3d(s):
    n = s["n"]
    i, j, k = np.indices((n, n, n))
    # PolyBench's (i + j + (n - k)) * 10 / n is linear, which the stencil leaves unchanged
    A = (i * j + (n - k) * k) * 10.0 / n
    return s["tsteps"], n, A, A.copy()


def fdtd_2d(tmax, nx, ny, ex, ey, hz, fict):
    for t in range(tmax):
        ey[0, :] = fict[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def init_fdtd_2d(s):
    tmax, nx, ny = s["tmax"], s["nx"], s["ny"]
    i, j = np.indices((nx, ny))
    return (tmax, nx, ny, i * (j + 1) / nx, i * (j + 2) / ny, i * (j + 3) / nx,
            np.arange(tmax, dtype=np.float64))


def seidel_2d(tsteps, n, A):
    for _ in range(tsteps):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = np.sum(A[i - 1:i + 2, j - 1:j + 2]) / 9.0


def init_seidel_2d(s):
    n = s["n"]
    i, j = np.indices((n, n))
    # PolyBench's (i * (j + 2) + 2) / n is bilinear, which the 3x3 mean leaves unchanged
    return s["tsteps"], n, ((i * (j + 2) + 2) % n) / n


def adi(tsteps, n, u, v, p, q):
    """Alternating direction implicit: a tridiagonal solve along every column, then
    along every row, per time step (the independent lines solved together)."""
    dx, dy, dt = 1.0 / n, 1.0 / n, 1.0 / tsteps
    b1, b2 = 2.0, 1.0
    mul1, mul2 = b1 * dt / (dx * dx), b2 * dt / (dy * dy)
    a, b, c = -mul1 / 2.0, 1.0 + mul1, -mul1 / 2.0
    d, e, f = -mul2 / 2.0, 1.0 + mul2, -mul2 / 2.0
    for _ in range(tsteps):
        v[0, 1:-1] = 1.0
        p[1:-1, 0] = 0.0
        q[1:-1, 0] = v[0, 1:-1]
        for j in range(1, n - 1):
            denom = a * p[1:-1, j - 1] + b
            p[1:-1, j] = -c / denom
            q[1:-1, j] = (-d * u[j, :-2] + (1.0 + 2.0 * d) * u[j, 1:-1] - f * u[j, 2:]
                          - a * q[1:-1, j - 1]) / denom
        v[-1, 1:-1] = 1.0
        for j in range(n - 2, 0, -1):
            v[j, 1:-1] = p[1:-1, j] * v[j + 1, 1:-1] + q[1:-1, j]

        u[1:-1, 0] = 1.0
        p[1:-1, 0] = 0.0
        q[1:-1, 0] = u[1:-1, 0]
        for j in range(1, n - 1):
            denom = d * p[1:-1, j - 1] + e
            p[1:-1, j] = -f / denom
            q[1:-1, j] = (-a * v[:-2, j] + (1.0 + 2.0 * a) * v[1:-1, j] - c * v[2:, j]
                          - d * q[1:-1, j - 1]) / denom
        u[1:-1, -1] = 1.0
        for j in range(n - 2, 0, -1):
            u[1:-1, j] = p[1:-1, j] * u[1:-1, j + 1] + q[1:-1, j]


def init_adi(s):
    n = s["n"]
    i, j = np.indices((n, n))
    z = np.zeros((n, n))
    return s["tsteps"], n, (i + n - j) / n, z, z.copy(), z.copy()


# ------------------------------------------------------------------------- BLAS-like


def gemm(ni, nj, nk, alpha, beta, C, A, B):
    for i in range(ni):
        C[i, :] *= beta
        for k in range(nk):
            C[i, :] += alpha * A[i, k] * B[k, :]


def init_gemm(s):
    ni, nj, nk = s["ni"], s["nj"], s["nk"]
    i, j = np.indices((ni, nj))
    C = ((i * j + 1) % ni) / ni
    i, k = np.indices((ni, nk))
    A = (i * (k + 1) % nk) / nk
    k, j = np.indices((nk, nj))
    B = (k * (j + 2) % nj) / nj
    return ni, nj, nk, ALPHA, BETA, C, A, B


def gemver(n, alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    A += np.outer(u1, v1) + np.outer(u2, v2)
    x += beta * (A.T @ y)
    x += z
    w += alpha * (A @ x)


def init_gemver(s):
    n = s["n"]
    i, j = np.indices((n, n))
    f = (np.arange(n) + 1.0) / n
    zero = np.zeros(n)
    return (n, ALPHA, BETA, (i * j % n) / n, np.arange(n, dtype=np.float64), f / 4.0,
            f / 2.0, f / 6.0, zero, zero.copy(), f / 8.0, f / 9.0)


def gesummv(n, alpha, beta, A, B, x):
    return alpha * (A @ x) + beta * (B @ x)


def init_gesummv(s):
    n = s["n"]
    i, j = np.indices((n, n))
    return (n, ALPHA, BETA, ((i * j + 1) % n) / n, ((i * j + 2) % n) / n,
            (np.arange(n) % n) / n)


def symm(m, n, alpha, beta, C, A, B):
    """C = alpha * A @ B + beta * C with A symmetric, stored in its lower triangle."""
    for i in range(m):
        C[:i, :] += alpha * np.outer(A[i, :i], B[i, :])
        temp2 = A[i, :i] @ B[:i, :]
        C[i, :] = beta * C[i, :] + alpha * B[i, :] * A[i, i] + alpha * temp2


def init_symm(s):
    m, n = s["m"], s["n"]
    i, j = np.indices((m, n))
    C = ((i + j) % 100) / m
    B = ((n + i - j) % 100) / m
    i, j = np.indices((m, m))
    A = np.where(j <= i, ((i + j) % 100) / m, -999.0)
    return m, n, ALPHA, BETA, C, A, B


def syr2k(n, m, alpha, beta, C, A, B):
    for i in range(n):
        C[i, :i + 1] *= beta
        C[i, :i + 1] += alpha * (A[:i + 1] @ B[i] + B[:i + 1] @ A[i])


def init_syr2k(s):
    n, m = s["n"], s["m"]
    i, j = np.indices((n, m))
    A, B = ((i * j + 1) % n) / n, ((i * j + 2) % m) / m
    i, j = np.indices((n, n))
    return n, m, ALPHA, BETA, ((i * j + 3) % n) / m, A, B


def syrk(n, m, alpha, beta, C, A):
    lower = np.tril(np.ones((n, n), dtype=bool))
    C[lower] *= beta
    C[lower] += alpha * (A @ A.T)[lower]


def init_syrk(s):
    n, m = s["n"], s["m"]
    i, j = np.indices((n, m))
    A = ((i * j + 1) % n) / n
    i, j = np.indices((n, n))
    return n, m, ALPHA, BETA, ((i * j + 2) % m) / m, A


def trmm(m, n, alpha, A, B):
    """B = alpha * A.T @ B, A unit lower triangular."""
    for i in range(m):
        B[i, :] += A[i + 1:, i] @ B[i + 1:, :]
        B[i, :] *= alpha


def init_trmm(s):
    m, n = s["m"], s["n"]
    i, j = np.indices((m, m))
    A = np.where(j < i, ((i + j) % m) / m, 0.0) + np.eye(m)
    i, j = np.indices((m, n))
    return m, n, ALPHA, A, ((n + i - j) % n) / n


def two_mm(ni, nj, nk, nl, alpha, beta, tmp, A, B, C, D):
    tmp[:] = alpha * A @ B
    D *= beta
    D += tmp @ C


def init_two_mm(s):
    ni, nj, nk, nl = s["ni"], s["nj"], s["nk"], s["nl"]

    def grid(rows, cols):
        return np.indices((rows, cols))

    i, j = grid(ni, nk)
    A = ((i * j + 1) % ni) / ni
    i, j = grid(nk, nj)
    B = (i * (j + 1) % nj) / nj
    i, j = grid(nj, nl)
    C = ((i * (j + 3) + 1) % nl) / nl
    i, j = grid(ni, nl)
    D = (i * (j + 2) % nk) / nk
    return ni, nj, nk, nl, ALPHA, BETA, np.zeros((ni, nj)), A, B, C, D


def three_mm(ni, nj, nk, nl, nm, E, A, B, F, C, D, G):
    E[:] = A @ B
    F[...] = np.dot(C, D)
    for i in range(ni):
        G[i] = E[i] @ F


def init_three_mm(s):
    ni, nj, nk, nl, nm = s["ni"], s["nj"], s["nk"], s["nl"], s["nm"]
    i, j = np.indices((ni, nk))
    A = ((i * j + 1) % ni) / (5 * ni)
    i, j = np.indices((nk, nj))
    B = ((i * (j + 1) + 2) % nj) / (5 * nj)
    i, j = np.indices((nj, nm))
    C = (i * (j + 3) % nl) / (5 * nl)
    i, j = np.indices((nm, nl))
    D = ((i * (j + 2) + 2) % nk) / (5 * nk)
    return (ni, nj, nk, nl, nm, np.zeros((ni, nj)), A, B, np.zeros((nj, nl)), C, D,
            np.zeros((ni, nl)))


def atax(m, n, A, x):
    return A.T @ (A @ x)


def init_atax(s):
    m, n = s["m"], s["n"]
    i, j = np.indices((m, n))
    return m, n, ((i + j) % n) / (5 * m), 1.0 + np.arange(n) / n


def bicg(m, n, A, s, q, p, r):
    s[:] = 0.0
    for i in range(n):
        s += r[i] * A[i, :]
        q[i] = A[i, :] @ p


def init_bicg(sz):
    m, n = sz["m"], sz["n"]
    i, j = np.indices((n, m))
    return (m, n, (i * (j + 1) % n) / n, np.zeros(m), np.zeros(n), (np.arange(m) % m) / m,
            (np.arange(n) % n) / n)


def doitgen(nr, nq, npp, A, C4, acc):
    for r in range(nr):
        for q in range(nq):
            acc[:] = A[r, q, :] @ C4
            A[r, q, :] = acc


def init_doitgen(s):
    nr, nq, npp = s["nr"], s["nq"], s["npp"]
    i, j, k = np.indices((nr, nq, npp))
    A = ((i * j + k) % npp) / npp
    i, j = np.indices((npp, npp))
    return nr, nq, npp, A, (i * j % npp) / npp, np.zeros(npp)


def mvt(n, x1, x2, y_1, y_2, A):
    x1 += A @ y_1
    x2 += A.T @ y_2


def init_mvt(s):
    n = s["n"]
    i = np.arange(n)
    r, c = np.indices((n, n))
    return n, (i % n) / n, ((i + 1) % n) / n, ((i + 3) % n) / n, ((i + 4) % n) / n, \
        (r * c % n) / n


# --------------------------------------------------------------------------- solvers


def _positive_definite(n):
    """PolyBench's matrix for the factorizations: L @ L.T, L unit lower triangular with
    L[i, j] = 1 - j / n below the diagonal."""
    i, j = np.indices((n, n))
    L = np.where(j < i, 1.0 - j / n, 0.0) + np.eye(n)
    return L @ L.T


def lu(n, A):
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        A[i, i:] -= A[i, :i] @ A[:i, i:]


def init_lu(s):
    return s["n"], _positive_definite(s["n"])


def ludcmp(n, A, b, x, y):
    """LU by Gaussian elimination (right-looking), then the two triangular solves."""
    for k in range(n):
        A[k + 1:, k] /= A[k, k]
        A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k, k + 1:])
    for i in range(n):
        y[i] = b[i] - A[i, :i] @ y[:i]
    for i in range(n - 1, -1, -1):
        x[i] = (y[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]


def init_ludcmp(s):
    n = s["n"]
    b = (np.arange(n) + 1.0) / n / 2.0 + 4.0
    return n, _positive_definite(n), b, np.zeros(n), np.zeros(n)


def cholesky(n, A):
    for i in range(n):
        for j in range(i):
            A[i, j] = (A[i, j] - A[i, :j] @ A[j, :j]) / A[j, j]
        A[i, i] = np.sqrt(A[i, i] - A[i, :i] @ A[i, :i])


def init_cholesky(s):
    return s["n"], _positive_definite(s["n"])


def gramschmidt(m, n, A, R, Q):
    for k in range(n):
        R[k, k] = np.linalg.norm(A[:, k])
        Q[:, k] = A[:, k] / R[k, k]
        R[k, k + 1:] = Q[:, k] @ A[:, k + 1:]
        A[:, k + 1:] -= np.outer(Q[:, k], R[k, k + 1:])


def init_gramschmidt(s):
    m, n = s["m"], s["n"]
    i, j = np.indices((m, n))
    return m, n, ((i * j) % m) / m * 100.0 + 10.0, np.zeros((n, n)), np.zeros((m, n))


def durbin(n, r, y):
    """Levinson-Durbin: the Yule-Walker system of the Toeplitz matrix of r."""
    y[0] = -r[0]
    beta = 1.0
    alpha = -r[0]
    for k in range(1, n):
        beta = (1.0 - alpha * alpha) * beta
        alpha = -(r[k] + r[k - 1::-1] @ y[:k]) / beta
        y[:k] += alpha * y[k - 1::-1]
        y[k] = alpha


def init_durbin(s):
    n = s["n"]
    return n, n + 1.0 - np.arange(n), np.zeros(n)


def trisolv(n, L, x, b):
    for i in range(n):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def init_trisolv(s):
    n = s["n"]
    i, j = np.indices((n, n))
    L = np.where(j <= i, (i + n - j + 1) * 2.0 / n, 0.0)
    return n, L, np.full(n, -999.0), np.arange(n, dtype=np.float64)


# ----------------------------------------------------------------------- data mining


def correlation(m, n, float_n, data):
    eps = 0.1
    mean = np.sum(data, axis=0) / float_n
    stddev = np.sqrt(np.sum((data - mean) ** 2, axis=0) / float_n)
    stddev = np.where(stddev <= eps, 1.0, stddev)
    centered = (data - mean) / (np.sqrt(float_n) * stddev)
    corr = centered.T @ centered
    return np.where(np.eye(m, dtype=bool), 1.0, corr)


def init_correlation(s):
    m, n = s["m"], s["n"]
    i, j = np.indices((n, m))
    return m, n, float(n), i * j / m + i


def covariance(m, n, float_n, data, cov, mean):
    mean[:] = data.sum(axis=0) / float_n
    data -= mean
    for i in range(m):
        for j in range(i, m):
            cov[i, j] = data[:, i] @ data[:, j] / (float_n - 1.0)
            cov[j, i] = cov[i, j]


def init_covariance(s):
    m, n = s["m"], s["n"]
    i, j = np.indices((n, m))
    return m, n, float(n), i * j / m, np.zeros((m, m)), np.zeros(m)


# ------------------------------------------------------------- dynamic programming


def floyd_warshall(n, path):
    for k in range(n):
        path[:] = np.minimum(path, path[:, k:k + 1] + path[k, :])


def init_floyd_warshall(s):
    n = s["n"]
    i, j = np.indices((n, n))
    path = i * j % 7 + 1
    far = ((i + j) % 13 == 0) | ((i + j) % 7 == 0) | ((i + j) % 11 == 0)
    return n, np.where(far, 999, path).astype(np.int64)


def nussinov(n, seq, table):
    """The most base pairs of an RNA sequence (bases 0..3, a pair sums to 3)."""
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            best = np.maximum(table[i, j - 1], table[i + 1, j])
            if i < j - 1:
                pair = table[i + 1, j - 1] + (seq[i] + seq[j] == 3)
                split = np.max(table[i, i + 1:j] + table[i + 2:j + 1, j])
                best = np.maximum(best, np.maximum(pair, split))
            else:
                best = np.maximum(best, table[i + 1, j - 1])
            table[i, j] = np.maximum(table[i, j], best)


def init_nussinov(s):
    n = s["n"]
    return n, (np.arange(n) + 1) % 4, np.zeros((n, n), dtype=np.int64)


# ---------------------------------------------------------------------------- medley


def deriche(w, h, alpha, img_in, img_out, y1, y2):
    """Deriche's recursive edge filter: causal and anticausal passes along the rows,
    then along the columns (each pass runs every row or column at once)."""
    k = ((1.0 - np.exp(-alpha)) * (1.0 - np.exp(-alpha))
         / (1.0 + 2.0 * alpha * np.exp(-alpha) - np.exp(2.0 * alpha)))
    a1 = a5 = k
    a2 = a6 = k * np.exp(-alpha) * (alpha - 1.0)
    a3 = a7 = k * np.exp(-alpha) * (alpha + 1.0)
    a4 = a8 = -k * np.exp(-2.0 * alpha)
    b1 = 2.0 ** -alpha
    b2 = -np.exp(-2.0 * alpha)
    c1 = c2 = 1.0

    xm1 = ym1 = ym2 = np.zeros(w)
    for j in range(h):
        y1[:, j] = a1 * img_in[:, j] + a2 * xm1 + b1 * ym1 + b2 * ym2
        xm1, ym2, ym1 = img_in[:, j], ym1, y1[:, j]
    xp1 = xp2 = yp1 = yp2 = np.zeros(w)
    for j in range(h - 1, -1, -1):
        y2[:, j] = a3 * xp1 + a4 * xp2 + b1 * yp1 + b2 * yp2
        xp2, xp1, yp2, yp1 = xp1, img_in[:, j], yp1, y2[:, j]
    img_out[:] = c1 * (y1 + y2)

    tm1 = ym1 = ym2 = np.zeros(h)
    for i in range(w):
        y1[i, :] = a5 * img_out[i, :] + a6 * tm1 + b1 * ym1 + b2 * ym2
        tm1, ym2, ym1 = img_out[i, :], ym1, y1[i, :]
    tp1 = tp2 = yp1 = yp2 = np.zeros(h)
    for i in range(w - 1, -1, -1):
        y2[i, :] = a7 * tp1 + a8 * tp2 + b1 * yp1 + b2 * yp2
        tp2, tp1, yp2, yp1 = tp1, img_out[i, :], yp1, y2[i, :]
    img_out[:] = c2 * (y1 + y2)


def init_deriche(s):
    w, h = s["w"], s["h"]
    i, j = np.indices((w, h))
    img_in = ((313 * i + 991 * j) % 65536) / 65535.0
    return w, h, 0.25, img_in, np.zeros((w, h)), np.zeros((w, h)), np.zeros((w, h))


# ----------------------------------------------------------------------- simulations


def heat_2d_explicit(tsteps, n, u, r):
    """Forward-Euler steps of the heat equation on a square, the boundary held fixed;
    r = diffusivity * dt / dx**2."""
    for _ in range(tsteps):
        u[1:-1, 1:-1] += r * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                              - 4.0 * u[1:-1, 1:-1])


def init_heat_2d_explicit(s):
    n = s["n"]
    i, j = np.indices((n, n))
    u = (i * (n - 1 - i) * j * (n - 1 - j)) / float(n ** 4)
    u[0, :] = 1.0
    return s["tsteps"], n, u, 0.2


def spring_chain(steps, n, dt, k, x, v):
    """Symplectic Euler steps of n unit masses in the plane, neighbours joined by springs
    of rest length 1, the first mass pinned, under gravity; returns the kinetic energy."""
    for _ in range(steps):
        d = x[1:] - x[:-1]
        length = np.linalg.norm(d, axis=1, keepdims=True)
        f = k * (length - 1.0) * d / length
        force = np.zeros_like(x)
        force[:, 1] -= 9.81
        force[:-1] += f
        force[1:] -= f
        v += dt * force
        v[0] = 0.0
        x += dt * v
    return 0.5 * np.sum(v * v)


def init_spring_chain(s):
    n = s["n"]
    i = np.arange(n)
    x = np.stack([1.1 * i, 0.05 * (i % 3)], axis=1)
    return s["steps"], n, 0.01, 50.0, x, np.zeros((n, 2))


def wave_1d(steps, n, c, u, u_prev):
    """Leapfrog steps of the 1-D wave equation with fixed ends; c is the Courant number."""
    c2 = c * c
    for _ in range(steps):
        u_next = 2.0 * u - u_prev
        u_next[1:-1] += c2 * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u_next[0] = u_next[-1] = 0.0
        u_prev[:] = u
        u[:] = u_next


def init_wave_1d(s):
    n = s["n"]
    i = np.arange(n)
    u = np.minimum(i, n - 1 - i) / n
    return s["steps"], n, 0.5, u, u.copy()


def nbody(steps, n, dt, pos, vel, mass):
    """Symplectic Euler steps of n softened gravitating bodies in 3-D; returns the new
    positions and velocities and leaves its arguments alone."""
    for _ in range(steps):
        d = pos[None, :, :] - pos[:, None, :]
        r2 = np.sum(d * d, axis=-1) + 0.01
        weight = mass[None, :] / (r2 * np.sqrt(r2))
        acc = np.sum(d * weight[:, :, None], axis=1)
        vel = vel + dt * acc
        pos = pos + dt * vel
    return pos, vel


def init_nbody(s):
    n = s["n"]
    i = np.arange(n)
    pos = np.stack([(3 * i % n) / n, (5 * i % n) / n, (7 * i % n) / n], axis=1)
    vel = np.stack([np.zeros(n), (i % 3) / 10.0, -(i % 2) / 10.0], axis=1)
    return s["steps"], n, 0.01, pos, vel, 1.0 + i / n


# ---------------------------------------------------------------------------- table


def _kernel(fn, init, mutates=(), **sizes) -> Kernel:
    """A table row: static positions from the parameters named in ``sizes``, mutated
    positions from the parameter names in ``mutates``."""
    params = list(inspect.signature(fn).parameters)
    static = tuple(params.index(name) for name in sizes)
    return Kernel(fn, init, static, tuple(params.index(name) for name in mutates), sizes)


KERNELS: dict[str, Kernel] = {
    # stencils
    "jacobi-1d": _kernel(jacobi_1d, init_jacobi_1d, ("A", "B"), tsteps=4, n=16),
    "jacobi-2d": _kernel(jacobi_2d, init_jacobi_2d, ("A", "B"), tsteps=3, n=10),
    "heat-3d": _kernel(heat_3d, init_heat_3d, ("A", "B"), tsteps=2, n=8),
    "fdtd-2d": _kernel(fdtd_2d, init_fdtd_2d, ("ex", "ey", "hz"), tmax=3, nx=8, ny=10),
    "seidel-2d": _kernel(seidel_2d, init_seidel_2d, ("A",), tsteps=2, n=8),
    "adi": _kernel(adi, init_adi, ("u", "v", "p", "q"), tsteps=2, n=10),
    # BLAS-like
    "gemm": _kernel(gemm, init_gemm, ("C",), ni=8, nj=9, nk=10),
    "gemver": _kernel(gemver, init_gemver, ("A", "w", "x"), n=12),
    "gesummv": _kernel(gesummv, init_gesummv, (), n=12),
    "symm": _kernel(symm, init_symm, ("C",), m=8, n=10),
    "syr2k": _kernel(syr2k, init_syr2k, ("C",), n=10, m=8),
    "syrk": _kernel(syrk, init_syrk, ("C",), n=10, m=8),
    "trmm": _kernel(trmm, init_trmm, ("B",), m=8, n=10),
    "2mm": _kernel(two_mm, init_two_mm, ("tmp", "D"), ni=8, nj=9, nk=10, nl=11),
    "3mm": _kernel(three_mm, init_three_mm, ("E", "F", "G"), ni=8, nj=9, nk=10, nl=11,
                   nm=12),
    "atax": _kernel(atax, init_atax, (), m=10, n=12),
    "bicg": _kernel(bicg, init_bicg, ("s", "q"), m=10, n=12),
    "doitgen": _kernel(doitgen, init_doitgen, ("A", "acc"), nr=4, nq=5, npp=6),
    "mvt": _kernel(mvt, init_mvt, ("x1", "x2"), n=12),
    # solvers
    "lu": _kernel(lu, init_lu, ("A",), n=8),
    "ludcmp": _kernel(ludcmp, init_ludcmp, ("A", "x", "y"), n=8),
    "cholesky": _kernel(cholesky, init_cholesky, ("A",), n=8),
    "gramschmidt": _kernel(gramschmidt, init_gramschmidt, ("A", "R", "Q"), m=10, n=8),
    "durbin": _kernel(durbin, init_durbin, ("y",), n=12),
    "trisolv": _kernel(trisolv, init_trisolv, ("x",), n=12),
    # data mining
    "correlation": _kernel(correlation, init_correlation, (), m=8, n=10),
    "covariance": _kernel(covariance, init_covariance, ("data", "cov", "mean"), m=8, n=10),
    # dynamic programming
    "floyd-warshall": _kernel(floyd_warshall, init_floyd_warshall, ("path",), n=12),
    "nussinov": _kernel(nussinov, init_nussinov, ("table",), n=10),
    # medley
    "deriche": _kernel(deriche, init_deriche, ("img_out", "y1", "y2"), w=8, h=10),
    # simulations
    "heat-2d-explicit": _kernel(heat_2d_explicit, init_heat_2d_explicit, ("u",), tsteps=4,
                                n=12),
    "spring-chain": _kernel(spring_chain, init_spring_chain, ("x", "v"), steps=4, n=8),
    "wave-1d": _kernel(wave_1d, init_wave_1d, ("u", "u_prev"), steps=4, n=16),
    "nbody": _kernel(nbody, init_nbody, (), steps=3, n=8),
}
