"""``aotc.numpy.linalg``: numpy.linalg for traced arrays.

``norm``, ``vector_norm`` and ``matrix_norm`` follow numpy's definitions operation for
operation (integer and bool inputs are converted to float64 first, as numpy does), so
they are reductions and elementwise ops: no new lowering; the matrix norms of singular
values (``ord=2``, ``-2``, ``'nuc'``) take them from ``svdvals``.
``cholesky`` is blocked (ops/triangular.py); ``solve``, ``inv``, ``det`` and ``slogdet``
come from the blocked LU with partial pivoting of ops/lu.py, ``qr`` from the blocked
Householder QR of ops/qr.py, ``eigh``/``eigvalsh`` from the tridiagonal QL eigensolver of
ops/eigen.py, ``svd`` and what needs singular values (``svdvals``, ``pinv``,
``matrix_rank``, ``lstsq``, ``cond``) from the one-sided Jacobi SVD of ops/svd.py. Where
numpy raises LinAlgError (a singular or not positive definite matrix), a traced program cannot: the
results hold inf/NaN, and ``det`` is 0, as JAX's. The array-API functions (``matmul``,
``outer``, ``vecdot``, ``diagonal``, ``trace``, ``cross``, ...) are numpy's on the last
axes; ``matrix_power`` and ``multi_dot`` multiply in numpy's order (ops/matrix_products.py).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import dtypes, x64
from . import namespaces as _namespaces
from .core import Tracer, make_public
from .errors import TracingError
from .linalg_kernels import (KERNELS, broadcast_batches, lower_triangle_source,
                             matrices, qr_modes, square_matrices, svd_kernel)
from .ops import elementwise as ew
from .ops import array_api, contraction, creation, differences, matrix, matrix_products
from .ops import complex_parts, reductions, triangular
from .ops.arguments import as_tracer, normalize_axis
from .ops.array_api import matrix_adjoint
from .ops.selection import where
from .ops.shape import (expand_dims, moveaxis, ravel, reshape,
                        squeeze, transpose)
from .ops.statistics import _keep_dims, _to_last_axis

__all__ = ["norm", "vector_norm", "matrix_norm", "cholesky", "solve", "inv", "det", "slogdet",
           "matmul", "outer", "tensordot", "vecdot", "diagonal", "trace", "cross",
           "matrix_power", "multi_dot", "tensorinv", "tensorsolve", "qr", "eigh", "eigvalsh",
           "svd", "svdvals", "pinv", "matrix_rank", "lstsq", "cond"]

_SVD_ORDERS = (2, -2, "nuc")


def _inexact(x) -> Tracer:
    t = as_tracer(x, "linalg.norm")
    if dtypes.is_float(t.dtype) or dtypes.is_complex(t.dtype):
        return t
    return ew.astype(t, x64.default_float())


def _abs(x: Tracer) -> Tracer:
    return ew.ufunc("absolute", x)


def _sum_of_squares(x: Tracer, axis, keepdims: bool = False) -> Tracer:
    """The sum of |x|^2 (numpy's norms: re^2 + im^2 for complex x), real."""
    if dtypes.is_complex(x.dtype):
        re, im = complex_parts.real(x), complex_parts.imag(x)
        squares = ew.ufunc("add", ew.ufunc("multiply", re, re), ew.ufunc("multiply", im, im))
    else:
        squares = ew.ufunc("multiply", x, x)
    return reductions.sum(squares, axis=axis, keepdims=keepdims)


def _vector_norm(x: Tracer, ord, axis: tuple, keepdims: bool) -> Tracer:
    if ord is None or (not isinstance(ord, str) and ord == 2):
        return ew.ufunc("sqrt", _sum_of_squares(x, axis, keepdims))
    if isinstance(ord, str):
        raise TracingError(f"linalg.norm: invalid norm order {ord!r} for vectors; use None, "
                           f"a number, inf or -inf")
    if ord == np.inf:
        return reductions.max(_abs(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return reductions.min(_abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        nonzero = ew.astype(ew.ufunc("not_equal", x, 0), dtypes.real_dtype(x.dtype))
        return reductions.sum(nonzero, axis=axis, keepdims=keepdims)
    if ord == 1:
        return reductions.sum(_abs(x), axis=axis, keepdims=keepdims)
    # numpy: absx **= ord; ret = add.reduce(absx); ret **= reciprocal(ord, dtype=ret.dtype)
    powered = ew.astype(_abs(x) ** ord, dtypes.real_dtype(x.dtype))
    total = reductions.sum(powered, axis=axis, keepdims=keepdims)
    return total ** float(np.reciprocal(np.asarray(ord, dtype=total.dtype)))


# Matrix norms without singular values: (reduce the absolute values over, then combine
# the sums with) for ord 1/-1 (column sums) and inf/-inf (row sums).
_MATRIX_SUM_ORDERS = {1: ("rows", "max"), -1: ("rows", "min"),
                      np.inf: ("cols", "max"), -np.inf: ("cols", "min")}


def _matrix_norm(x: Tracer, ord, axis: tuple, keepdims: bool) -> Tracer:
    row, col = (normalize_axis(a, x.ndim, "linalg.norm axis") for a in axis)
    if row == col:
        raise TracingError(f"linalg.norm: duplicate axes given: {axis}")
    if ord is None or (isinstance(ord, str) and ord in ("fro", "f")):
        result = ew.ufunc("sqrt", _sum_of_squares(x, (row, col)))
    elif ((isinstance(ord, str) and ord == "nuc")
          or (not isinstance(ord, str) and ord in _SVD_ORDERS)):
        values = KERNELS["svdvals"](moveaxis(x, (row, col), (-2, -1)))
        combine = {2: reductions.max, -2: reductions.min, "nuc": reductions.sum}[ord]
        result = combine(values, axis=-1)
    elif not isinstance(ord, str) and ord in _MATRIX_SUM_ORDERS:
        summed, combine = _MATRIX_SUM_ORDERS[ord]
        first, second = (row, col) if summed == "rows" else (col, row)
        sums = reductions.sum(_abs(x), axis=first)
        result = getattr(reductions, combine)(sums, axis=second - (second > first))
    else:
        raise TracingError(f"linalg.norm: invalid norm order {ord!r} for matrices; use None, "
                           f"'fro', 1, -1, inf or -inf")
    if keepdims:
        shape = tuple(1 if d in (row, col) else n for d, n in enumerate(x.shape))
        result = reshape(result, shape)
    return result


def norm(x, ord=None, axis=None, keepdims=False) -> Tracer:
    """numpy.linalg.norm: vector norms (``axis`` an int) and matrix norms (``axis`` a
    pair); with ``axis=None`` the whole array, as a vector or (2-d, ``ord`` given) a matrix.

    >>> norms = aotc.jit(lambda x: (anp.linalg.norm(x, axis=-1), anp.linalg.norm(x, ord=np.inf)))
    >>> norms(np.array([[3.0, 4.0], [-6.0, 8.0]], np.float32))  # row lengths, largest row sum
    (Array([ 5., 10.], dtype=float32), Array(14., dtype=float32))
    """
    t = _inexact(x)
    if axis is None:
        is_2_norm = not isinstance(ord, str) and ord == 2
        if ord is None or (ord in ("f", "fro") and t.ndim == 2) or (is_2_norm and t.ndim == 1):
            result = ew.ufunc("sqrt", _sum_of_squares(ravel(t), 0))
            return reshape(result, (1,) * t.ndim) if keepdims else result
        axis = tuple(range(t.ndim))
    elif not isinstance(axis, tuple):
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
            raise TracingError("linalg.norm: axis must be None, an int or a tuple of ints, "
                               f"got {axis!r}")
        axis = (int(axis),)
    if len(axis) == 1:
        return _vector_norm(t, ord, (normalize_axis(axis[0], t.ndim, "linalg.norm axis"),),
                            keepdims)
    if len(axis) == 2:
        return _matrix_norm(t, ord, axis, keepdims)
    raise TracingError(
        f"linalg.norm: improper number of dimensions to norm: axis {axis} of a {t.ndim}-d "
        f"array; give one axis (vector norm) or two (matrix norm)"
    )


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2) -> Tracer:
    """numpy.linalg.vector_norm: a vector norm over any number of axes (flattened)."""
    t = as_tracer(x, "linalg.vector_norm")
    if axis is not None and not isinstance(axis, tuple):
        return norm(t, axis=axis, ord=ord, keepdims=keepdims)
    flat, axes = _to_last_axis(t, axis, "linalg.vector_norm axis")
    return _keep_dims(norm(flat, axis=-1, ord=ord), t, axes, (), keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro") -> Tracer:
    """numpy.linalg.matrix_norm: the matrix norm of the last two axes."""
    return norm(x, axis=(-2, -1), keepdims=keepdims, ord=ord)


def cholesky(a, /, *, upper=False) -> Tracer:
    """numpy.linalg.cholesky: the lower factor L with ``L @ L.T == a`` (``upper=True``:
    ``L.T``), from ``a``'s lower triangle, for every matrix of a stack (..., n, n). Where
    ``a`` is not positive definite the factor holds NaN from the failing column on (numpy
    raises LinAlgError; a traced program cannot, and JAX returns NaN as well).

    >>> aotc.jit(anp.linalg.cholesky)(np.array([[4.0, 2.0], [2.0, 5.0]]))
    Array([[2., 0.],
           [1., 2.]], dtype=float64)
    """
    factor = KERNELS["cholesky"](square_matrices(a, "linalg.cholesky"))
    return matrix_adjoint(factor) if upper else factor


def solve(a, b) -> Tracer:
    """numpy.linalg.solve: x with ``a @ x == b`` for every matrix of a stack (..., n, n);
    ``b`` is (n,) or (..., n, k) as in numpy 2, the batch dimensions broadcast. Singular
    ``a``: inf/NaN where numpy raises LinAlgError.

    >>> aotc.jit(anp.linalg.solve)(np.array([[3.0, 1.0], [1.0, 2.0]]), np.array([9.0, 8.0]))
    Array([2., 3.], dtype=float64)
    """
    m = square_matrices(a, "linalg.solve a")
    n = m.shape[-1]
    rhs = triangular.float_input(as_tracer(b, "linalg.solve b"), "linalg.solve b")
    vector = rhs.ndim == 1
    if vector:
        rhs = expand_dims(rhs, -1)
    if rhs.ndim < 2 or rhs.shape[-2] != n:
        given = rhs.shape[:-1] if vector else rhs.shape
        raise TracingError(f"linalg.solve: b of shape {given} does not match a of shape "
                           f"{m.shape}: b must be ({n},) or (..., {n}, k)")
    m, rhs = broadcast_batches(m, rhs, "linalg.solve")
    x = KERNELS["solve"](m, rhs)
    return squeeze(x, -1) if vector else x


def inv(a) -> Tracer:
    """numpy.linalg.inv of every matrix of a stack (..., n, n); singular: inf/NaN."""
    return KERNELS["inverse"](square_matrices(a, "linalg.inv"))


def det(a) -> Tracer:
    """numpy.linalg.det of every matrix of a stack (..., n, n), from its LU factors."""
    return KERNELS["det"](square_matrices(a, "linalg.det"))


class SlogdetResult(NamedTuple):
    """numpy.linalg.slogdet's result: ``sign * exp(logabsdet)`` is the determinant."""
    sign: Tracer
    logabsdet: Tracer


def slogdet(a) -> SlogdetResult:
    """numpy.linalg.slogdet: (sign, log|det|) of every matrix of a stack; a singular
    matrix gives (0, -inf), as numpy's."""
    return SlogdetResult(*KERNELS["slogdet"](square_matrices(a, "linalg.slogdet")))


QR_MODES = ("reduced", "complete", "r", "raw")


def qr(a, mode="reduced"):
    """numpy.linalg.qr by Householder reflections (LAPACK's, so R's signs are numpy's):
    ``QRResult(Q, R)`` with ``a == Q @ R`` for ``mode`` 'reduced' (Q (..., m, k), R (...,
    k, n), k = min(m, n)) or 'complete' (Q (..., m, m), R (..., m, n)); 'r': R alone;
    'raw': ``(h, tau)`` as LAPACK's geqrf leaves them, h transposed (..., n, m)."""
    if mode not in QR_MODES:
        raise TracingError(f"linalg.qr: unrecognized mode {mode!r}; use one of "
                           f"{', '.join(map(repr, QR_MODES))} (numpy's deprecated 'full' "
                           f"and 'economic' are 'reduced' and 'raw''s h)")
    return qr_modes(matrices(a, "linalg.qr"), mode)


class EighResult(NamedTuple):
    """numpy.linalg.eigh's result: ``a @ eigenvectors == eigenvectors * eigenvalues``."""
    eigenvalues: Tracer
    eigenvectors: Tracer


def eigh(a, UPLO="L") -> EighResult:
    """numpy.linalg.eigh: the eigenvalues (ascending) and eigenvectors (columns) of every
    symmetric matrix of a stack (..., n, n), from its lower (``UPLO='U'``: upper)
    triangle; Householder tridiagonalization and implicit QL (ops/eigen.py). Input that
    does not converge (NaN) gives NaN where numpy raises LinAlgError."""
    return EighResult(*KERNELS["eigh"](lower_triangle_source(a, UPLO, "linalg.eigh")))


def eigvalsh(a, UPLO="L") -> Tracer:
    """numpy.linalg.eigvalsh: the eigenvalues (ascending) alone, without the
    eigenvectors' work (about a seventh of eigh's flops)."""
    return KERNELS["eigvalsh"](lower_triangle_source(a, UPLO, "linalg.eigvalsh"))


class SVDResult(NamedTuple):
    """numpy.linalg.svd's result: ``a == (U * S[..., None, :]) @ Vh``."""
    U: Tracer
    S: Tracer
    Vh: Tracer


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """numpy.linalg.svd by one-sided Jacobi (ops/svd.py): ``SVDResult(U, S, Vh)``, the
    singular values descending; ``full_matrices=False``: U (..., m, k) and Vh (..., k,
    n), k = min(m, n); ``compute_uv=False``: S alone. ``hermitian`` is accepted (the
    general method serves symmetric matrices too)."""
    m = matrices(a, "linalg.svd")
    if compute_uv:
        return SVDResult(*svd_kernel(m, bool(full_matrices), True))
    return svd_kernel(m, False, False)


def svdvals(x, /) -> Tracer:
    """numpy.linalg.svdvals: the singular values, descending."""
    return KERNELS["svdvals"](matrices(x, "linalg.svdvals"))


def _epsilon(dtype) -> float:
    return float(np.finfo(dtype).eps)


def pinv(a, rcond=None, hermitian=False, *, rtol=np._NoValue) -> Tracer:
    """numpy.linalg.pinv: V diag(1/s) U^T over the singular values above ``rcond`` times
    the largest (numpy's defaults: rcond 1e-15, or ``rtol=None``: max(m, n) eps)."""
    m = matrices(a, "linalg.pinv")
    if rcond is not None and rtol is not np._NoValue:
        raise TracingError("linalg.pinv: `rtol` and `rcond` can't be both set")
    if rcond is None:
        rcond = (1e-15 if rtol is np._NoValue else
                 max(m.shape[-2:]) * _epsilon(dtypes.real_dtype(m.dtype)) if rtol is None
                 else rtol)
    rows, cols = m.shape[-2:]
    if rows == 0 or cols == 0:
        return creation.zeros(m.shape[:-2] + (cols, rows), m.dtype)
    u, s, vh = KERNELS["svd"](m)
    cutoff = expand_dims(ew.astype(rcond, s.dtype), -1) * reductions.max(s, axis=-1,
                                                                         keepdims=True)
    inverse = _reciprocal_above(s, cutoff)
    return contraction.matmul(matrix_adjoint(vh), expand_dims(inverse, -1) * matrix_adjoint(u))


def _reciprocal_above(s: Tracer, cutoff: Tracer) -> Tracer:
    """1 / s where the singular values ``s`` exceed ``cutoff``, else 0 (numpy's pinv and
    gelsd treat the rest as zero)."""
    large = ew.ufunc("greater", s, cutoff)
    return where(large, 1 / where(large, s, ew.astype(1, s.dtype)), ew.astype(0, s.dtype))


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None) -> Tracer:
    """numpy.linalg.matrix_rank: how many singular values exceed ``tol`` (default: the
    largest times ``rtol``, itself max(m, n) eps by default), as int64; a vector or
    scalar has rank 1 unless it is all zeros."""
    t = as_tracer(A, "linalg.matrix_rank")
    if t.ndim < 2:
        return ew.astype(reductions.any(ew.ufunc("not_equal", t, 0)), np.int64)
    s = svdvals(t)
    if tol is None:
        rtol = max(t.shape[-2:]) * _epsilon(s.dtype) if rtol is None else rtol
        tol = reductions.max(s, axis=-1, keepdims=True) * expand_dims(
            ew.astype(rtol, s.dtype), -1)
    else:
        tol = expand_dims(ew.astype(tol, s.dtype), -1)
    return reductions.sum(ew.astype(ew.ufunc("greater", s, tol), np.int64), axis=-1)


class LstsqResult(NamedTuple):
    x: Tracer
    residuals: Tracer
    rank: Tracer
    s: Tracer


def lstsq(a, b, rcond=None) -> tuple:
    """numpy.linalg.lstsq: the minimum-norm least-squares solution of ``a @ x = b`` from
    the SVD (singular values below ``rcond`` times the largest count as zero; default
    max(m, n) eps), with (residuals, rank, s). residuals holds the squared norms of ``b -
    a @ x`` where m > n (as JAX's: also for a rank-deficient ``a``, where numpy returns
    an empty array, a shape only known at run time) and is empty otherwise."""
    m = matrices(a, "linalg.lstsq a")
    if m.ndim != 2:
        raise TracingError(f"linalg.lstsq: {m.ndim}-dimensional array given. Array must be "
                           f"two-dimensional (numpy's lstsq takes one matrix)")
    rhs = triangular.float_input(as_tracer(b, "linalg.lstsq b"), "linalg.lstsq b")
    vector = rhs.ndim == 1
    rhs = expand_dims(rhs, -1) if vector else rhs
    if rhs.ndim != 2 or rhs.shape[0] != m.shape[0]:
        raise TracingError(f"linalg.lstsq: incompatible dimensions: a {m.shape} and b "
                           f"{rhs.shape[:1] if vector else rhs.shape}; b must be "
                           f"({m.shape[0]},) or ({m.shape[0]}, k)")
    dtype = dtypes.result_type(m.dtype, rhs.dtype)
    m, rhs = ew.astype(m, dtype), ew.astype(rhs, dtype)
    rows, cols = m.shape
    rcond = _epsilon(dtypes.real_dtype(dtype)) * max(rows, cols) if rcond is None else rcond
    u, s, vh = KERNELS["svd"](m)
    cutoff = ew.astype(rcond, s.dtype) * reductions.max(s)
    inverse = _reciprocal_above(s, cutoff)
    x = contraction.matmul(matrix_adjoint(vh), expand_dims(inverse, -1) *
                           contraction.matmul(matrix_adjoint(u), rhs))
    if rows > cols:
        residuals = _sum_of_squares(rhs - contraction.matmul(m, x), axis=0)
    else:
        residuals = creation.zeros((0,), dtypes.real_dtype(dtype))
    rank = ew.astype(reductions.sum(ew.ufunc("greater", s, cutoff)), np.int32)
    return LstsqResult(squeeze(x, -1) if vector else x, residuals, rank, s)


def cond(x, p=None) -> Tracer:
    """numpy.linalg.cond: the condition number in norm ``p`` (None/2: largest over
    smallest singular value; -2: the inverse; 'fro', 'nuc', 1, -1, inf, -inf: ``norm(x,
    p) * norm(inv(x), p)``); inf for a singular matrix, NaN where ``x`` holds NaN."""
    t = matrices(x, "linalg.cond")
    if t.shape[-1] == 0 or t.shape[-2] == 0:
        raise TracingError("linalg.cond: cond is not defined on empty arrays")
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        s = svdvals(t)
        r = s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    else:
        t = square_matrices(t, "linalg.cond")
        r = (_matrix_norm(t, p, (-2, -1), False)
             * _matrix_norm(KERNELS["inverse"](t), p, (-2, -1), False))
    has_nan = reductions.any(ew.ufunc("isnan", t), axis=(-2, -1))
    return where(ew.ufunc("logical_and", ew.ufunc("isnan", r), ew.ufunc("logical_not", has_nan)),
                 ew.astype(np.inf, r.dtype), r)


# ---- numpy.linalg's array-API functions: the last axes are the matrices or vectors ------

def matmul(x1, x2, /) -> Tracer:
    """numpy.linalg.matmul: numpy.matmul without its ufunc keywords."""
    return contraction.matmul(x1, x2)


def outer(x1, x2, /) -> Tracer:
    """numpy.linalg.outer: the outer product of two vectors (numpy.outer flattens, this
    one refuses other ranks)."""
    a, b = as_tracer(x1, "linalg.outer x1"), as_tracer(x2, "linalg.outer x2")
    if a.ndim != 1 or b.ndim != 1:
        raise TracingError(f"linalg.outer: input arrays must be one-dimensional, but they "
                           f"are x1.ndim={a.ndim} and x2.ndim={b.ndim}; use numpy.outer to "
                           f"flatten them first")
    return contraction.outer(a, b)


def tensordot(x1, x2, /, *, axes=2) -> Tracer:
    """numpy.linalg.tensordot: numpy.tensordot with ``axes`` by keyword."""
    return contraction.tensordot(x1, x2, axes)


def vecdot(x1, x2, /, *, axis=-1) -> Tracer:
    """numpy.linalg.vecdot: numpy.vecdot (``x1`` conjugated)."""
    return array_api.vecdot(x1, x2, axis=axis)


def diagonal(x, /, *, offset=0) -> Tracer:
    """numpy.linalg.diagonal: the diagonals of the last two axes."""
    return matrix.diagonal(x, offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None) -> Tracer:
    """numpy.linalg.trace: the sums of the diagonals of the last two axes."""
    return matrix.trace(x, offset, -2, -1, dtype)


def cross(x1, x2, /, *, axis=-1) -> Tracer:
    """numpy.linalg.cross: cross products of 3-vectors along ``axis`` (numpy.cross also
    takes 2-vectors; this one does not)."""
    a, b = as_tracer(x1, "linalg.cross x1"), as_tracer(x2, "linalg.cross x2")
    sizes = [t.shape[normalize_axis(axis, t.ndim, f"linalg.cross {name} axis")]
             for t, name in ((a, "x1"), (b, "x2"))]
    if sizes != [3, 3]:
        raise TracingError(f"linalg.cross: both input arrays must be (arrays of) "
                           f"3-dimensional vectors, but they are {sizes[0]} and {sizes[1]} "
                           f"dimensional along axis {axis}; numpy.cross takes 2-vectors")
    return differences.cross(a, b, axis=axis)


# ---- products and inverses of several matrices -------------------------------------------

def matrix_power(a, n) -> Tracer:
    """numpy.linalg.matrix_power: ``a`` (..., m, m) to the integer power ``n`` by
    repeated squaring (integer matrices stay integer; n < 0 inverts first, n = 0 gives
    the identity)."""
    t = as_tracer(a, "linalg.matrix_power")
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise TracingError(f"linalg.matrix_power: the last 2 dimensions of the array must "
                           f"be square, got shape {t.shape}")
    return matrix_products.matrix_power(
        t, n, lambda m: KERNELS["inverse"](square_matrices(m, "linalg.matrix_power")))


def multi_dot(arrays, *, out=None) -> Tracer:
    """numpy.linalg.multi_dot: the chain product in numpy's cheapest order."""
    if out is not None:
        raise TracingError("linalg.multi_dot: out= is not supported in a traced function "
                           "(arrays are values): use the returned array")
    return matrix_products.multi_dot(arrays)


def tensorinv(a, ind=2) -> Tracer:
    """numpy.linalg.tensorinv: the inverse of ``a`` read as a matrix of its first ``ind``
    axes by the rest; the result has shape ``a.shape[ind:] + a.shape[:ind]``."""
    t = as_tracer(a, "linalg.tensorinv")
    if ind <= 0:
        raise TracingError(f"linalg.tensorinv: invalid ind argument {ind}: it must be a "
                           f"positive number of leading axes")
    rows = int(np.prod(t.shape[ind:]))
    matrix_ = square_matrices(reshape(t, (rows, -1) if rows else (0, 0)), "linalg.tensorinv")
    return reshape(KERNELS["inverse"](matrix_), t.shape[ind:] + t.shape[:ind])


def tensorsolve(a, b, axes=None) -> Tracer:
    """numpy.linalg.tensorsolve: x with ``tensordot(a, x, x.ndim) == b``; ``axes`` moves
    axes of ``a`` to the end first."""
    t, rhs = as_tracer(a, "linalg.tensorsolve a"), as_tracer(b, "linalg.tensorsolve b")
    if axes is not None:
        order = [d for d in range(t.ndim) if d not in
                 [normalize_axis(k, t.ndim, "linalg.tensorsolve axes") for k in axes]]
        t = transpose(t, order + [normalize_axis(k, t.ndim, "") for k in axes])
    unknown_shape = t.shape[rhs.ndim:]
    count = int(np.prod(unknown_shape))
    if int(np.prod(t.shape)) != count ** 2:
        raise TracingError(f"linalg.tensorsolve: a {t.shape} and b {rhs.shape} must satisfy "
                           f"prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim]) (the system "
                           f"must be square)")
    x = solve(reshape(t, (count, count)), ravel(rhs))
    return reshape(x, unknown_shape)


make_public("linalg", globals(), __all__)  # eager outside a trace (aotc/eager.py)


def __getattr__(name: str):
    """A name aotc does not define: an AttributeError saying so (aotc/namespaces.py)."""
    raise _namespaces.missing_name('aotc.numpy.linalg', name)
