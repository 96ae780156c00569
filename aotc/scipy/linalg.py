"""``aotc.scipy.linalg``: scipy.linalg's triangular, Cholesky, LU, QR, symmetric eigen and
singular value functions for traced arrays, with jax.scipy.linalg's extension to stacks
of matrices (leading batch dimensions broadcast). The algorithms are those of
``aotc/ops/`` ``triangular.py``, ``lu.py``, ``qr.py``, ``eigen.py`` and ``svd.py``;
LAPACK's pivots are int32 and 0-based, as scipy's and JAX's.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes

from .. import namespaces as _namespaces
from ..core import Tracer, make_public
from ..errors import TracingError, UnsupportedOpError
from ..linalg_kernels import (KERNELS, broadcast_batches, lower_triangle_source, matrices, qr_modes,
                      square_matrices, svd_kernel, with_zero_rows)
from ..ops import elementwise as ew
from ..ops import lu as _lu
from ..ops import triangular
from ..ops.array_api import matrix_adjoint, matrix_transpose
from ..ops.arguments import as_tracer
from ..ops.creation import eye
from ..ops.selection import take_along_axis, where
from ..ops.shape import expand_dims, squeeze
from ..ops.sorting import argsort

__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular", "lu", "lu_factor",
           "lu_solve", "solve", "inv", "det", "qr", "eigh", "svd", "svdvals"]

# scipy's names for op(a): a, a^T, a^H (the same for real matrices), as (transposed,
# conjugated).
_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}


def _common(a: Tracer, b: Tracer) -> tuple[Tracer, Tracer]:
    dtype = dtypes.result_type(a.dtype, b.dtype)
    return ew.astype(a, dtype), ew.astype(b, dtype)


def _right_sides(b, n: int, batch_rank: int, where_: str) -> tuple[Tracer, bool]:
    """``b`` as (..., n, k) and whether it was a stack of vectors (..., n) (JAX's rule:
    one dimension fewer than ``a``)."""
    t = triangular.float_input(as_tracer(b, where_), where_)
    vector = t.ndim == batch_rank + 1
    if vector:
        t = expand_dims(t, -1)
    if t.ndim < 2 or t.shape[-2] != n:
        raise TracingError(f"{where_}: b of shape {tuple(t.shape[:-1] if vector else t.shape)} "
                           f"does not match a of size {n}: b must be (..., {n}) or "
                           f"(..., {n}, k)")
    return t, vector


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True) -> Tracer:
    """scipy.linalg.solve_triangular: x with ``op(a) @ x == b``, reading only ``a``'s
    ``lower`` (or upper) triangle; ``trans`` 0/'N', 1/'T' or 2/'C' picks op(a) = a, a.T,
    a.conj().T; ``unit_diagonal`` takes ``a``'s diagonal as ones. ``b`` is (..., n) or
    (..., n, k). A zero on the diagonal gives inf/NaN (scipy raises LinAlgError)."""
    if trans not in _TRANS:
        raise TracingError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got "
                           f"{trans!r}")
    m = square_matrices(a, "solve_triangular a")
    rhs, vector = _right_sides(b, m.shape[-1], m.ndim - 2, "solve_triangular b")
    m, rhs = _common(m, rhs)
    transposed, conjugated = _TRANS[trans]
    x = triangular.solve(m, rhs, lower=bool(lower), transposed=transposed,
                         conjugated=conjugated, unit=bool(unit_diagonal))
    return squeeze(x, -1) if vector else x


def cholesky(a, lower=False, overwrite_a=False, check_finite=True) -> Tracer:
    """scipy.linalg.cholesky: the upper factor U with ``U^H @ U == a`` (``lower=True``:
    the lower factor), from ``a``'s lower triangle. Not positive definite: NaN where
    scipy raises LinAlgError."""
    factor = KERNELS["cholesky"](square_matrices(a, "scipy.linalg.cholesky"))
    return factor if lower else matrix_adjoint(factor)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True) -> tuple[Tracer, bool]:
    """scipy.linalg.cho_factor: ``(c, lower)`` for ``cho_solve``; ``c`` holds the factor
    in its ``lower`` (or upper) triangle and zeros in the other (scipy leaves ``a``'s
    values there; JAX zeros them too)."""
    return cholesky(a, lower=lower), bool(lower)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True) -> Tracer:
    """scipy.linalg.cho_solve: x with ``a @ x == b`` from ``cho_factor(a)``."""
    if not (isinstance(c_and_lower, tuple) and len(c_and_lower) == 2):
        raise TracingError("cho_solve: c_and_lower must be the pair (c, lower) that "
                           f"cho_factor returns, got {type(c_and_lower).__name__}")
    c, lower = c_and_lower
    factor = square_matrices(c, "cho_solve c")
    rhs, vector = _right_sides(b, factor.shape[-1], factor.ndim - 2, "cho_solve b")
    factor, rhs = _common(factor, rhs)
    lower_factor = factor if lower else matrix_adjoint(factor)
    x = _cholesky_solve(lower_factor, rhs)
    return squeeze(x, -1) if vector else x


def lu_factor(a, overwrite_a=False, check_finite=True) -> tuple[Tracer, Tracer]:
    """scipy.linalg.lu_factor: ``(lu, piv)``, L (unit diagonal implied) below the
    diagonal of ``lu`` and U on and above it, ``piv`` LAPACK's pivots (row i was swapped
    with row piv[i]), int32, 0-based. Partial pivoting picks the first row of largest
    magnitude, as LAPACK's getrf. A singular matrix gives a zero on U's diagonal (scipy
    warns)."""
    m = matrices(a, "lu_factor")
    factors, order = _lu.lu(m)
    return factors, _lu.pivots(order, min(m.shape[-2:]))


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True) -> Tracer:
    """scipy.linalg.lu_solve: x with ``op(a) @ x == b`` from ``lu_factor(a)``; ``trans``
    0/'N', 1/'T' or 2/'C' picks op(a) = a, a.T, a.conj().T."""
    if not (isinstance(lu_and_piv, tuple) and len(lu_and_piv) == 2):
        raise TracingError("lu_solve: lu_and_piv must be the pair (lu, piv) that lu_factor "
                           f"returns, got {type(lu_and_piv).__name__}")
    if trans not in _TRANS:
        raise TracingError(f"lu_solve: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    factors = square_matrices(lu_and_piv[0], "lu_solve lu")
    n = factors.shape[-1]
    piv = as_tracer(lu_and_piv[1], "lu_solve piv")
    if piv.shape != factors.shape[:-1] or dtypes.kind(piv.dtype) not in ("int", "uint"):
        raise TracingError(f"lu_solve: piv must be the integer pivots lu_factor returns, of "
                           f"shape {factors.shape[:-1]}, got {piv.dtype} {piv.shape}")
    rhs, vector = _right_sides(b, n, factors.ndim - 2, "lu_solve b")
    factors, rhs = broadcast_batches(*_common(factors, rhs), "lu_solve")
    order = _lu.order_from_pivots(ew.astype(piv, np.int32))
    transposed, conjugated = _TRANS[trans]
    if transposed:
        x = _lu.solve_factored_transposed(factors, order, rhs, conjugated)
    else:
        x = _lu.solve_factored(factors, order, rhs)
    return squeeze(x, -1) if vector else x


def lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """scipy.linalg.lu: ``(p, l, u)`` with ``a == p @ l @ u`` (``p_indices=True``: p as
    row indices, ``a == l[p] @ u``; ``permute_l=True``: ``(p @ l, u)``); l is (m, k) unit
    lower, u (k, n) upper, k = min(m, n)."""
    m = matrices(a, "scipy.linalg.lu")
    rows, cols = m.shape[-2:]
    k = min(rows, cols)
    factors, order = _lu.lu(m)
    lower = where(eye(rows, k, dtype=bool), ew.astype(1, m.dtype),
                  where(_below_diagonal(rows, k), factors[..., :k], ew.astype(0, m.dtype)))
    upper = where(_below_diagonal(k, cols), ew.astype(0, m.dtype), factors[..., :k, :])
    p = argsort(order, axis=-1)  # a == (l u)[p]: row i of a is row p[i] of l u
    if permute_l:
        return take_along_axis(lower, expand_dims(p, -1), axis=-2), upper
    if p_indices:
        return p, lower, upper
    return ew.astype(ew.ufunc("equal", expand_dims(p, -1), _column_numbers(rows)),
                     m.dtype), lower, upper


def _below_diagonal(rows: int, cols: int) -> Tracer:
    return as_tracer(np.tri(rows, cols, -1, dtype=bool), "lu")


def _column_numbers(n: int) -> Tracer:
    return as_tracer(np.arange(n, dtype=np.int32), "lu")


# scipy.linalg.solve's assume_a: which factorization serves the system.
_GENERAL = ("gen", "general", "sym", "symmetric", "her", "hermitian")
_POSITIVE = ("pos", "positive definite")


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a=None, transposed=False) -> Tracer:
    """scipy.linalg.solve: x with ``a @ x == b`` (``transposed``: ``a.T @ x == b``);
    ``assume_a`` 'gen'/'sym'/'her' (LU with partial pivoting) or 'pos' (Cholesky of
    ``a``'s ``lower`` or upper triangle). ``b`` is (..., n) or (..., n, k)."""
    kind = "gen" if assume_a is None else assume_a
    if kind not in _GENERAL + _POSITIVE:
        raise TracingError(f"scipy.linalg.solve: assume_a={assume_a!r} is not supported; "
                           f"use one of {', '.join(map(repr, _GENERAL + _POSITIVE))}")
    m = square_matrices(a, "scipy.linalg.solve a")
    rhs, vector = _right_sides(b, m.shape[-1], m.ndim - 2, "scipy.linalg.solve b")
    m, rhs = broadcast_batches(*_common(m, rhs), "scipy.linalg.solve")
    if kind in _POSITIVE:
        x = _cholesky_solve(KERNELS["cholesky"](m if lower else matrix_adjoint(m)), rhs)
    else:
        solver = _lu.solve_factored_transposed if transposed else _lu.solve_factored
        x = solver(*_lu.lu(m), rhs)
    return squeeze(x, -1) if vector else x


def _cholesky_solve(factor: Tracer, rhs: Tracer) -> Tracer:
    """X with ``L L^H X == rhs`` for the lower Cholesky factor L."""
    y = triangular.solve(factor, rhs, lower=True, transposed=False)
    return triangular.solve(factor, y, lower=True, transposed=True, conjugated=True)


def inv(a, overwrite_a=False, check_finite=True) -> Tracer:
    """scipy.linalg.inv of every matrix of a stack (..., n, n)."""
    return KERNELS["inverse"](square_matrices(a, "scipy.linalg.inv"))


def det(a, overwrite_a=False, check_finite=True) -> Tracer:
    """scipy.linalg.det of every matrix of a stack (..., n, n)."""
    return KERNELS["det"](square_matrices(a, "scipy.linalg.det"))


# scipy.linalg.qr's modes, as numpy.linalg.qr's.
_QR_MODES = {"full": "complete", "economic": "reduced", "r": "r", "raw": "raw"}


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """scipy.linalg.qr by Householder reflections (LAPACK's geqrf): ``(Q, R)`` with ``a ==
    Q @ R``, for ``mode`` 'full' (Q (..., m, m), R (..., m, n)) or 'economic' (Q (..., m,
    k), R (..., k, n), k = min(m, n)); 'r': ``(R,)`` with the full R; 'raw': ``((h,
    tau), R)``, h and tau as geqrf leaves them and the economic R."""
    if pivoting:
        raise UnsupportedOpError("scipy.linalg.qr: pivoting=True (column pivoting, "
                                 "LAPACK's geqp3) is not supported yet; call it without "
                                 "pivoting, or factor on the host")
    if mode not in _QR_MODES:
        raise TracingError(f"scipy.linalg.qr: unrecognized mode {mode!r}; use one of "
                           f"{', '.join(map(repr, _QR_MODES))}")
    m = matrices(a, "scipy.linalg.qr")
    if mode == "r":
        return (with_zero_rows(qr_modes(m, "r"), m.shape[-2]),)
    if mode == "raw":  # one factorization for both (triangular.once_per_scope)
        h, tau = qr_modes(m, "raw")
        return (matrix_transpose(h), tau), qr_modes(m, "r")
    return tuple(qr_modes(m, _QR_MODES[mode]))


def eigh(a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         type=1, check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    """scipy.linalg.eigh: eigenvalues (ascending) and eigenvectors of the symmetric ``a``
    read from its ``lower`` (or upper) triangle, or of the generalized problem ``a v = w
    b v`` (``type=1``, ``b`` positive definite: through its Cholesky factor L, the
    eigenvectors of L^-1 a L^-T mapped back by L^-T, so they are b-orthonormal);
    ``subset_by_index=(first, last)`` keeps those eigenpairs (inclusive)."""
    where_ = "scipy.linalg.eigh"
    if subset_by_value is not None:
        raise UnsupportedOpError(f"{where_}: subset_by_value is not supported (how many "
                                 f"eigenvalues fall in the interval is only known at run "
                                 f"time); use subset_by_index, or select after the call")
    if b is not None and type != 1:
        raise UnsupportedOpError(f"{where_}: type={type} is not supported yet; only type=1 "
                                 f"(a v = w b v)")
    uplo = "L" if lower else "U"
    m = lower_triangle_source(a, uplo, f"{where_} a")
    if b is None:
        values, vectors = (KERNELS["eigh"](m) if not eigvals_only
                           else (KERNELS["eigvalsh"](m), None))
    else:
        factor = KERNELS["cholesky"](lower_triangle_source(b, uplo, f"{where_} b"))
        full = where(_below_diagonal(m.shape[-1], m.shape[-1]), m, matrix_adjoint(m))
        half = triangular.solve_lower(factor, full)  # L^-1 a
        reduced = triangular.solve_lower(factor, matrix_adjoint(half))  # L^-1 a L^-H
        if eigvals_only:
            values, vectors = KERNELS["eigvalsh"](reduced), None
        else:
            values, y = KERNELS["eigh"](reduced)
            vectors = triangular.solve(factor, y, lower=True, transposed=True,
                                       conjugated=True)
    if subset_by_index is not None:
        first, last = (int(i) for i in subset_by_index)
        n = m.shape[-1]
        if not 0 <= first <= last < n:
            raise TracingError(f"{where_}: subset_by_index={tuple(subset_by_index)} must "
                               f"satisfy 0 <= first <= last < {n}")
        values = values[..., first:last + 1]
        vectors = None if vectors is None else vectors[..., first:last + 1]
    return values if eigvals_only else (values, vectors)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """scipy.linalg.svd: ``(U, s, Vh)`` (or s alone), singular values descending, by
    one-sided Jacobi whatever ``lapack_driver`` names (its accuracy is at least
    gesvd's)."""
    if lapack_driver not in ("gesdd", "gesvd"):
        raise TracingError(f"scipy.linalg.svd: lapack_driver must be 'gesdd' or 'gesvd', "
                           f"got {lapack_driver!r}")
    m = matrices(a, "scipy.linalg.svd")
    if compute_uv:
        return tuple(svd_kernel(m, bool(full_matrices), True))
    return svd_kernel(m, False, False)


def svdvals(a, overwrite_a=False, check_finite=True) -> Tracer:
    """scipy.linalg.svdvals: the singular values, descending."""
    return KERNELS["svdvals"](matrices(a, "scipy.linalg.svdvals"))


make_public("scipy.linalg", globals(), __all__)  # eager outside a trace (aotc/eager.py)


def __getattr__(name: str):
    """A name aotc does not define: an AttributeError saying so (aotc/namespaces.py)."""
    raise _namespaces.missing_name('aotc.scipy.linalg', name)
