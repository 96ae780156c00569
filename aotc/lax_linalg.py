"""``aotc.lax.linalg``: jax.lax.linalg's factorizations, with JAX's names, argument
conventions and result orders (``eigh`` returns the eigenvectors first, ``lu`` its
pivots and permutation as int32), for stacks of matrices. They run the algorithms of
aotc.numpy.linalg (aotc/ops/: triangular, lu, qr, eigen, svd).
"""

from __future__ import annotations

import numpy as np

from . import namespaces as _namespaces
from .core import Tracer, make_public
from .errors import TracingError, UnsupportedOpError
from .linalg_kernels import KERNELS, matrices, qr_modes, square_matrices, svd_kernel
from .ops import elementwise as ew
from .ops import lu as _lu
from .ops import triangular
from .ops.array_api import matrix_adjoint, matrix_transpose
from .ops.arguments import as_tracer
from .ops.creation import arange
from .ops.shape import broadcast_to, concatenate

__all__ = ["cholesky", "eigh", "lu", "lu_pivots_to_permutation", "qr", "svd",
           "triangular_solve"]


def _symmetrized(x: Tracer) -> Tracer:
    return (x + matrix_adjoint(x)) / 2


def cholesky(x, *, symmetrize_input=True) -> Tracer:
    """jax.lax.linalg.cholesky: the lower Cholesky factor (of (x + x^T) / 2 with
    ``symmetrize_input``, else of x's lower triangle); NaN where not positive definite."""
    m = square_matrices(x, "lax.linalg.cholesky")
    return KERNELS["cholesky"](_symmetrized(m) if symmetrize_input else m)


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True,
         subset_by_index=None, implementation=None) -> tuple[Tracer, Tracer]:
    """jax.lax.linalg.eigh: ``(v, w)``, the eigenvectors (columns) and eigenvalues
    (ascending) of the symmetric x: of (x + x^T) / 2 with ``symmetrize_input``, else of its
    ``lower`` (or upper) triangle; ``subset_by_index=(first, stop)`` keeps those (JAX's
    half-open range)."""
    m = square_matrices(x, "lax.linalg.eigh")
    m = _symmetrized(m) if symmetrize_input else (m if lower else matrix_adjoint(m))
    w, v = KERNELS["eigh"](m)
    if subset_by_index is not None:
        first, stop = (int(i) for i in subset_by_index)
        if not 0 <= first <= stop <= m.shape[-1]:
            raise TracingError(f"lax.linalg.eigh: subset_by_index={tuple(subset_by_index)} "
                               f"must satisfy 0 <= first <= stop <= {m.shape[-1]}")
        w, v = w[..., first:stop], v[..., first:stop]
    return v, w


def lu(x) -> tuple[Tracer, Tracer, Tracer]:
    """jax.lax.linalg.lu: ``(lu, pivots, permutation)``: L (unit diagonal implied) and U
    in ``lu``, LAPACK's pivots (0-based, int32) and the row order ``x[permutation] == L @
    U`` (int32), by partial pivoting (ops/lu.py)."""
    m = matrices(x, "lax.linalg.lu")
    factors, order = _lu.lu(m)
    return factors, _lu.pivots(order, min(m.shape[-2:])), order


def lu_pivots_to_permutation(pivots, permutation_size: int) -> Tracer:
    """jax.lax.linalg.lu_pivots_to_permutation: the row order (int32, ``permutation_size``
    long) that LAPACK's pivots make (row i swapped with row pivots[i], in turn)."""
    p = as_tracer(pivots, "lax.linalg.lu_pivots_to_permutation")
    k = p.shape[-1] if p.ndim else 0
    if p.ndim < 1 or not np.issubdtype(p.dtype, np.integer) or permutation_size < k:
        raise TracingError(f"lax.linalg.lu_pivots_to_permutation: pivots must be an integer "
                           f"array (..., k) with k <= permutation_size ({permutation_size}), "
                           f"got {p.dtype.name}{list(p.shape)}")
    p = ew.astype(p, np.int32)
    if permutation_size > k:  # the rows after the pivots' are swapped with themselves
        rest = broadcast_to(arange(k, permutation_size, dtype=np.int32),
                            p.shape[:-1] + (permutation_size - k,))
        p = concatenate([p, rest], axis=-1)
    return _lu.order_from_pivots(p)


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None) -> tuple[Tracer, Tracer]:
    """jax.lax.linalg.qr: ``(q, r)``, complete (``full_matrices``) or reduced, by
    Householder reflections."""
    if pivoting:
        raise UnsupportedOpError("lax.linalg.qr: pivoting=True (column pivoting) is not "
                                 "supported yet; call it without pivoting")
    return tuple(qr_modes(matrices(x, "lax.linalg.qr"),
                          "complete" if full_matrices else "reduced"))


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """jax.lax.linalg.svd: ``(u, s, vh)`` or s, singular values descending (one-sided
    Jacobi); ``subset_by_index=(first, stop)`` keeps those."""
    m = matrices(x, "lax.linalg.svd")
    out = svd_kernel(m, bool(full_matrices), bool(compute_uv))
    if subset_by_index is None:
        return tuple(out) if compute_uv else out
    first, stop = (int(i) for i in subset_by_index)
    if not 0 <= first <= stop <= min(m.shape[-2:]):
        raise TracingError(f"lax.linalg.svd: subset_by_index={tuple(subset_by_index)} must "
                           f"satisfy 0 <= first <= stop <= {min(m.shape[-2:])}")
    if not compute_uv:
        return out[..., first:stop]
    u, s, vh = out
    return u[..., first:stop], s[..., first:stop], vh[..., first:stop, :]


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False) -> Tracer:
    """jax.lax.linalg.triangular_solve: x with ``op(a) @ x == b`` (``left_side``) or ``x @
    op(a) == b``, op(a) = a or a^T, reading a's ``lower`` (or upper) triangle (its
    diagonal as ones with ``unit_diagonal``), conjugated with ``conjugate_a``."""
    m = square_matrices(a, "lax.linalg.triangular_solve a")
    rhs = triangular.float_input(as_tracer(b, "lax.linalg.triangular_solve b"),
                                 "lax.linalg.triangular_solve b")
    n = m.shape[-1]
    if rhs.ndim < 2 or rhs.shape[-2 if left_side else -1] != n:
        side = "rows" if left_side else "columns"
        raise TracingError(f"lax.linalg.triangular_solve: b of shape {rhs.shape} must have "
                           f"{n} {side} for a of shape {m.shape} (left_side={left_side})")
    if unit_diagonal:
        m = triangular.unit_diagonal(m)
    if left_side:
        return triangular.solve(m, rhs, lower=bool(lower), transposed=bool(transpose_a),
                                conjugated=bool(conjugate_a))
    # x op(a) = b  <=>  op(a)^T x^T = b^T
    solved = triangular.solve(m, matrix_transpose(rhs), lower=bool(lower),
                              transposed=not transpose_a, conjugated=bool(conjugate_a))
    return matrix_transpose(solved)


make_public("lax.linalg", globals(), __all__)  # eager outside a trace (aotc/eager.py)


def __getattr__(name: str):
    """A name aotc does not define: an AttributeError saying so (aotc/namespaces.py)."""
    raise _namespaces.missing_name('aotc.lax.linalg', name)
