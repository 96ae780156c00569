"""The singular value decomposition, and what is built on it: svdvals, pinv, lstsq,
matrix_rank, cond and the 2-norms.

One-sided Jacobi (``sequential_eigen.jacobi_svd``) on the matrix itself when it is about
square, or on the R of its QR when it is tall (m > 5n/4: the Jacobi sweeps then work on n
x n instead of m x n, and Q carries R's left vectors back); a wide matrix is decomposed
as its transpose. U's columns are the rotated columns over their norms; where a singular
value is zero (a rank-deficient matrix) or U must be square (``full_matrices``), U is
completed to an orthonormal basis by the Householder QR of its columns in descending
order, whose first columns are U's own up to sign.
"""

from __future__ import annotations

from .. import dtypes
from ..core import Tracer
from . import eigen
from . import elementwise as ew
from . import qr as _qr
from . import sequential_eigen  # noqa: F401  (registers the kernel)
from .array_api import matrix_adjoint, matrix_transpose
from .complex_parts import real
from .contraction import matmul
from .matrix import diagonal
from .selection import where
from .creation import eye, zeros
from .shape import broadcast_to, concatenate, expand_dims
from .triangular import kernel_results, once_per_scope


def _jacobi(a: Tracer) -> tuple[Tracer, Tracer, Tracer]:
    """(singular values (..., n), scaled left columns (..., m, n), V (..., n, n)) of a
    (..., m, n), m >= n. From ``PRECONDITION`` columns on, the sweeps start from a V0
    whose columns are the eigenvectors of a^T a: a V0 has nearly orthogonal columns, so
    two or three sweeps finish instead of eight or more (the result is still Jacobi's:
    its accuracy does not depend on V0's)."""
    m, n = a.shape[-2:]
    start = None
    if n >= PRECONDITION:
        start = eigen.eigh(matmul(matrix_adjoint(a), a))[1]
        a = matmul(a, start)
    sigma, g, v = kernel_results("jacobi_svd", a, 3 * (6 * m * n * n + 3 * n ** 3),
                                 [((n,), dtypes.real_dtype(a.dtype)), ((n, m), a.dtype),
                                  ((n, n), a.dtype)])
    v = matrix_transpose(v)
    return sigma, matrix_transpose(g), v if start is None else matmul(start, v)


# From this many columns on, Jacobi starts from the eigenvectors of a^T a (measured:
# 256 x 256 from 309 to 73 ms, 512 x 512 from 2.9 to 0.71 s).
PRECONDITION = 32


def _tall(a: Tracer, vectors: bool) -> tuple:
    """(U (..., m, n) or None, s, V) of a (..., m, n), m >= n; U's columns are zero
    where s is (``_orthonormal`` completes them)."""
    m, n = a.shape[-2:]
    if 4 * m > 5 * n:
        factors, t = _qr.qr(a)
        sigma, g, v = _jacobi(_qr.upper(factors, n))
        if vectors:
            g = matmul(_qr.q_columns(factors, t, n), g)
    else:
        sigma, g, v = _jacobi(a)
    if not vectors:
        return None, sigma, v
    positive = ew.ufunc("greater", sigma, 0)
    safe = where(positive, sigma, ew.astype(1, sigma.dtype))
    return g / expand_dims(safe, -2), sigma, v


def _orthonormal(u: Tracer, positive: Tracer, columns: int) -> Tracer:
    """``columns`` orthonormal columns (..., m, columns): u's own where its singular value
    is positive (they are orthonormal, and come first: singular values descend), else
    those of the Householder Q of u (signed as R's diagonal, so that its first columns
    are u's and the rest complete them)."""
    factors, t = _qr.qr(u)
    k = u.shape[-1]
    q = _qr.q_columns(factors, t, columns)
    sign = ew.ufunc("sign", real(diagonal(factors, 0, -2, -1)))  # R's is real
    sign = where(ew.ufunc("equal", sign, 0), ew.astype(1, sign.dtype), sign)
    own = where(expand_dims(positive, -2), u, q[..., :k] * expand_dims(sign, -2))
    return own if columns == k else concatenate([own, q[..., k:]], axis=-1)


@once_per_scope
def svd(a: Tracer, full_matrices: bool, compute_uv: bool):
    """numpy's svd of a float stack (..., m, n): (U, s, Vh), or s alone."""
    m, n = a.shape[-2:]
    if m == 0 or n == 0:  # no singular values: U and Vh are the identity's columns
        batch = a.shape[:-2]
        sigma = zeros(batch + (0,), dtypes.real_dtype(a.dtype))
        if not compute_uv:
            return sigma
        u_cols, v_rows = (m, n) if full_matrices else (0, 0)
        return (broadcast_to(eye(m, u_cols, dtype=a.dtype), batch + (m, u_cols)), sigma,
                broadcast_to(eye(v_rows, n, dtype=a.dtype), batch + (v_rows, n)))
    wide = m < n
    x = matrix_adjoint(a) if wide else a
    scale = eigen.power_of_two_scale(x)
    u, sigma, v = _tall(x / scale, compute_uv)
    sigma = sigma * scale[..., 0]
    if not compute_uv:
        return sigma
    rows, k = x.shape[-2], x.shape[-1]
    u = _orthonormal(u, ew.ufunc("greater", sigma, 0), rows if full_matrices else k)
    if wide:  # a = x^H = (u s v^H)^H = v s u^H
        return v, sigma, matrix_adjoint(u)
    return u, sigma, matrix_adjoint(v)
