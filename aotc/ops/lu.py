"""Blocked LU with partial pivoting, and what is built on it: solve, inv, det, slogdet.

The factorization recurses on the columns at trace time (LAPACK's recursive getrf2
split, with ``triangular.py``'s block sizes), so its leaves are tall panels of at most
``BLOCK`` columns factored by one sequential kernel each (``sequential.lu_panel``) and
everything else is matmuls, triangular solves and row gathers:

    [F1, p1] = lu(A[:, :k])                  the left panel, its row order p1
    R = A[p1, k:]                            the right columns in that order
    U12 = L11^-1 R[:k]                       unit lower solve
    [F2, p2] = lu(R[k:] - L21 U12)           the Schur complement
    LU = [[F1[:k], U12], [F1[k:][p2], F2]]   order = [p1[:k], p1[k:][p2]]

A row order ``order`` (int32, row i of the factored matrix is row order[i] of ``a``) is
what the recursion composes and the solves gather with; LAPACK's pivots (row i swapped
with row pivots[i], in turn) come from it by one more kernel (``sequential.
swaps_from_order``) where a caller asks for them (scipy's lu_factor, det's sign).

A zero pivot leaves its column of L unscaled (as LAPACK's getf2): U gets an exact zero
on its diagonal, so ``det`` of a singular matrix is 0 and ``solve`` gives inf/NaN where
numpy raises LinAlgError.
"""

from __future__ import annotations

import numpy as np

from ..core import Tracer
from . import elementwise as ew
from . import reductions
from .contraction import matmul
from .creation import arange, eye
from .matrix import diagonal
from .selection import take_along_axis, where
from .shape import broadcast_to, concatenate, expand_dims
from .sorting import argsort
from .triangular import (BLOCK, LEAVES, kernel_results, once_per_scope, solve, solve_lower,
                         _split)


def _rows(x: Tracer, order: Tracer) -> Tracer:
    """The rows of ``x`` (..., r, c) in ``order`` (..., r)."""
    return take_along_axis(x, expand_dims(order, -1), axis=-2)


def _panel(a: Tracer) -> tuple[Tracer, Tracer]:
    """(factors, order) of a panel (..., m, n), n <= BLOCK <= m, by one kernel."""
    m, n = a.shape[-2:]
    return tuple(kernel_results("lu_panel", a, m * n * n - n ** 3 / 3,
                                [((m, n), a.dtype), ((m,), np.dtype(np.int32))]))


LEAVES["lu_panel"] = _panel


def _tall(a: Tracer) -> tuple[Tracer, Tracer]:
    """(factors, order) of ``a`` (..., m, n), m >= n."""
    m, n = a.shape[-2:]
    if n <= BLOCK:
        return LEAVES["lu_panel"](a)
    k = _split(n)
    f1, p1 = _tall(a[..., :k])
    right = _rows(a[..., k:], p1)
    u12 = solve_lower(f1[..., :k, :], right[..., :k, :], unit=True)
    f2, p2 = _tall(right[..., k:, :] - matmul(f1[..., k:, :], u12))
    factors = concatenate([concatenate([f1[..., :k, :], u12], axis=-1),
                           concatenate([_rows(f1[..., k:, :], p2), f2], axis=-1)], axis=-2)
    return factors, concatenate([p1[..., :k], take_along_axis(p1[..., k:], p2, -1)], axis=-1)


@once_per_scope
def lu(a: Tracer) -> tuple[Tracer, Tracer]:
    """(factors, order) of ``a`` (..., m, n): ``a[order] == L @ U`` with L unit lower
    (m, min(m, n)) below the diagonal of ``factors`` and U (min(m, n), n) on and above."""
    m, n = a.shape[-2:]
    if m >= n:
        return _tall(a)
    f, order = _tall(a[..., :m])
    u12 = solve_lower(f, _rows(a[..., m:], order), unit=True)
    return concatenate([f, u12], axis=-1), order


def order_from_pivots(pivots: Tracer) -> Tracer:
    """The row order (..., n) that LAPACK's pivots (..., n) of a square matrix make."""
    n = pivots.shape[-1]
    (order,) = kernel_results("order_from_swaps", pivots, n, [((n,), np.dtype(np.int32))])
    return order


def pivots(order: Tracer, count: int) -> Tracer:
    """LAPACK's first ``count`` pivots (0-based) of a row order (..., m)."""
    (swaps,) = kernel_results("swaps_from_order", order, order.shape[-1],
                              [((order.shape[-1],), np.dtype(np.int32))])
    return swaps[..., :count]


def solve_factored(factors: Tracer, order: Tracer, b: Tracer) -> Tracer:
    """X with ``a @ X == b`` from ``lu(a)``; ``b`` (..., n, k)."""
    y = solve_lower(factors, _rows(b, order), unit=True)
    return solve(factors, y, lower=False, transposed=False)


def solve_factored_transposed(factors: Tracer, order: Tracer, b: Tracer,
                              conjugated: bool = False) -> Tracer:
    """X with ``a.T @ X == b`` (``conjugated``: ``a^H @ X == b``) from ``lu(a)``: a.T =
    U^T L^T P, so X = P^T L^-T U^-T b."""
    z = solve(factors, b, lower=False, transposed=True, conjugated=conjugated)
    y = solve(factors, z, lower=True, transposed=True, conjugated=conjugated, unit=True)
    return take_along_axis(y, expand_dims(argsort(order, axis=-1), -1), axis=-2)


def inverse(a: Tracer) -> Tracer:
    """a^-1 as the solution of a X = I from the LU factors: two triangular solves with n
    right-hand sides (measured 2x faster than multiplying the two triangular inverses,
    whose dense product costs 2 n^3 more flops: 377 -> 179 ms at 1024)."""
    factors, order = lu(a)
    return solve_factored(factors, order, broadcast_to(eye(a.shape[-1], dtype=a.dtype),
                                                       a.shape))


def _swap_sign(order: Tracer, dtype) -> Tracer:
    """(-1) ** (the number of row swaps of ``order``), per matrix."""
    n = order.shape[-1]
    swapped = ew.ufunc("not_equal", pivots(order, n), arange(n, dtype=np.int32))
    odd = ew.ufunc("bitwise_and", reductions.sum(ew.astype(swapped, np.int32), axis=-1), 1)
    return ew.astype(1 - 2 * odd, dtype)


def det(a: Tracer) -> Tracer:
    factors, order = lu(a)
    return _swap_sign(order, a.dtype) * reductions.prod(diagonal(factors, 0, -2, -1), axis=-1)


def slogdet(a: Tracer) -> tuple[Tracer, Tracer]:
    factors, order = lu(a)
    d = diagonal(factors, 0, -2, -1)
    # numpy 2's sign of a complex d is d / |d|: the determinant's phase
    sign = _swap_sign(order, a.dtype) * reductions.prod(ew.ufunc("sign", d), axis=-1)
    # numpy's sign of a singular matrix is 0.0 (the product of signs may be -0.0)
    sign = where(ew.ufunc("equal", sign, 0), ew.astype(0, a.dtype), sign)
    return sign, reductions.sum(ew.ufunc("log", ew.ufunc("absolute", d)), axis=-1)
