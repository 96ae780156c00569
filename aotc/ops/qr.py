"""Blocked Householder QR, and what is built on it: Q, Q^T b, least squares.

The factorization recurses on the columns at trace time (the recursive QR of Elmroth and
Gustavson, with ``triangular.py``'s block sizes): its leaves are tall panels of at most
``BLOCK`` columns factored by one sequential kernel each (``sequential.qr_panel``), and
the rest is matmuls on the compact WY form of the reflectors, Q = H_0 ... H_{n-1} =
I - V T V^T (V unit lower trapezoidal, T upper triangular):

    [F1, T1] = qr(A[:, :k])                    the left columns
    B = A[:, k:] - V1 T1^T V1^T A[:, k:]       Q1^T applied to the right ones
    [F2, T2] = qr(B[k:])                       the rest
    F = [[F1[:k], B[:k]], [F1[k:], F2]]        R above the diagonal, V below
    T = [[T1, -T1 (V1[k:]^T V2) T2], [0, T2]]

F holds what LAPACK's geqrf leaves in ``a`` (the same reflectors: R's signs are
LAPACK's, and numpy's), and T's diagonal is geqrf's tau. Q's columns are accumulated
backwards over diagonal blocks of T (LAPACK's orgqr): each step is three matmuls, and
the total is orgqr's 4/3 n^3 flops rather than the 4 n^3 of forming I - V T V^T.
"""

from __future__ import annotations

from ..core import Tracer
from .array_api import matrix_adjoint
from .contraction import matmul
from .creation import eye, zeros
from .shape import broadcast_to, concatenate
from .matrix import tril, triu
from .triangular import BLOCK, kernel_results, once_per_scope, unit_diagonal, _split

# Q is accumulated over diagonal blocks of T this wide: the matmuls of each step have an
# inner dimension this large, and the identity part they multiply stays small.
Q_BLOCK = 4 * BLOCK


def reflectors(factors: Tracer) -> Tracer:
    """V (..., m, k): the unit lower trapezoid of ``factors`` (..., m, k), zeros above."""
    return unit_diagonal(tril(factors, -1))


def apply_transposed(factors: Tracer, t: Tracer, x: Tracer) -> Tracer:
    """Q^H x = x - V T^H V^H x, for x (..., m, c) (Q^T x for real factors)."""
    v = reflectors(factors)
    return x - matmul(v, matmul(matrix_adjoint(t), matmul(matrix_adjoint(v), x)))


def _apply(factors: Tracer, t: Tracer, x: Tracer) -> Tracer:
    """Q x = x - V T V^H x."""
    v = reflectors(factors)
    return x - matmul(v, matmul(t, matmul(matrix_adjoint(v), x)))


def _tall(a: Tracer) -> tuple[Tracer, Tracer]:
    """(factors, T) of ``a`` (..., m, n), m >= n."""
    m, n = a.shape[-2:]
    if n <= BLOCK:
        return tuple(kernel_results("qr_panel", a, 3 * m * n * n,
                                    [((m, n), a.dtype), ((n, n), a.dtype)]))
    k = _split(n)
    f1, t1 = _tall(a[..., :k])
    right = apply_transposed(f1, t1, a[..., k:])
    f2, t2 = _tall(right[..., k:, :])
    v1_low, v2 = reflectors(f1)[..., k:, :], reflectors(f2)
    t12 = -matmul(t1, matmul(matmul(matrix_adjoint(v1_low), v2), t2))
    factors = concatenate([concatenate([f1[..., :k, :], right[..., :k, :]], axis=-1),
                           concatenate([f1[..., k:, :], f2], axis=-1)], axis=-2)
    lower_left = zeros(t2.shape[:-1] + (k,), a.dtype)
    t = concatenate([concatenate([t1, t12], axis=-1),
                     concatenate([lower_left, t2], axis=-1)], axis=-2)
    return factors, t


@once_per_scope
def qr(a: Tracer) -> tuple[Tracer, Tracer]:
    """(factors, T) of ``a`` (..., m, n): R (min(m, n), n) on and above the diagonal of
    ``factors``, the reflectors (m, min(m, n)) below it, and their T."""
    m, n = a.shape[-2:]
    if m >= n:
        return _tall(a)
    f, t = _tall(a[..., :m])
    return concatenate([f, apply_transposed(f, t, a[..., m:])], axis=-1), t


def upper(factors: Tracer, rows: int) -> Tracer:
    """R: the first ``rows`` rows of ``factors``, zeros below the diagonal."""
    return triu(factors[..., :rows, :])


def _identity(rows: int, columns: int, batch: tuple, dtype) -> Tracer:
    return broadcast_to(eye(rows, columns, dtype=dtype), batch + (rows, columns))


def _block_diagonal(first: Tracer, second: Tracer) -> Tracer:
    batch, dtype = second.shape[:-2], second.dtype
    (r1, c1), (r2, c2) = first.shape[-2:], second.shape[-2:]
    return concatenate([concatenate([first, zeros(batch + (r1, c2), dtype)], axis=-1),
                        concatenate([zeros(batch + (r2, c1), dtype), second], axis=-1)],
                       axis=-2)


def q_columns(factors: Tracer, t: Tracer, columns: int) -> Tracer:
    """The first ``columns`` columns of Q (..., m, columns), ``columns`` at least the
    number of reflectors: from the last block of reflectors to the first, each applied to
    block_diag(I, the columns accumulated so far) (LAPACK's orgqr)."""
    m, k = factors.shape[-2], t.shape[-1]
    batch, dtype = factors.shape[:-2], factors.dtype
    q = None
    for start in reversed(range(0, k, Q_BLOCK)):
        stop = min(start + Q_BLOCK, k)
        q = (_identity(m - start, columns - start, batch, dtype) if q is None else
             _block_diagonal(_identity(stop - start, stop - start, batch, dtype), q))
        q = _apply(factors[..., start:, start:stop], t[..., start:stop, start:stop], q)
    return q
