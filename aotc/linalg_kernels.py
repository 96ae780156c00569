"""The factorizations behind ``aotc.numpy.linalg``, ``aotc.scipy.linalg`` and
``aotc.lax.linalg``, and the input checks the three share.

Every public function reaches a factorization through ``KERNELS`` (by name), so that
aotc.linalg_derivatives can put versions carrying derivative rules in their place: the
QR and SVD kernels here take numpy's modes ('reduced', 'complete', ``full_matrices``) so
that each mode is one kernel with one rule.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import dtypes
from .core import Tracer
from .errors import TracingError
from .ops import elementwise as ew
from .ops import creation, eigen, lu, matrix, qr as _qr, svd as _svd, triangular
from .ops.arguments import as_tracer
from .ops.array_api import matrix_adjoint, matrix_transpose
from .ops.shape import broadcast_to, concatenate


def _solve(a: Tracer, b: Tracer) -> Tracer:
    return lu.solve_factored(*lu.lu(a), b)


def _slogdet(a: Tracer) -> tuple:
    return tuple(lu.slogdet(a))


def _eigh(a: Tracer) -> tuple:
    return tuple(eigen.eigh(a))


# The factorizations, by name, on float stacks. These are the plain kernels;
# aotc.linalg_derivatives replaces them with the same functions carrying their
# derivatives (custom_jvp rules) when aotc's differentiation is imported: they cannot be
# made here, as custom_jvp's module imports this one.
KERNELS = {"inverse": lu.inverse, "solve": _solve, "det": lu.det, "slogdet": _slogdet,
           "cholesky": triangular.cholesky, "eigh": _eigh, "eigvalsh": eigen.eigvalsh,
           "qr": lambda a: tuple(_qr_factors(a, "reduced")),
           "qr_complete": lambda a: tuple(_qr_factors(a, "complete")),
           "svd": lambda a: tuple(_svd.svd(a, False, True)),
           "svd_full": lambda a: tuple(_svd.svd(a, True, True)),
           "svdvals": lambda a: _svd.svd(a, False, False)}


def matrices(a, where: str) -> Tracer:
    """``a`` as a float stack of (possibly rectangular) matrices (..., m, n)."""
    t = triangular.float_input(as_tracer(a, where), where)
    if t.ndim < 2:
        raise TracingError(f"{where}: expected a matrix (..., m, n), got a "
                           f"{t.ndim}-dimensional array of shape {t.shape}")
    return t


def square_matrices(a, where: str) -> Tracer:
    """``a`` as a float stack of square matrices (..., n, n), or numpy's LinAlgError
    message as a TracingError."""
    t = triangular.float_input(as_tracer(a, where), where)
    if t.ndim < 2:
        raise TracingError(f"{where}: {t.ndim}-dimensional array given. Array must be at "
                           f"least two-dimensional")
    if t.shape[-1] != t.shape[-2]:
        raise TracingError(f"{where}: Last 2 dimensions of the array must be square, got "
                           f"shape {t.shape}")
    return t


def broadcast_batches(a: Tracer, b: Tracer, where: str) -> tuple[Tracer, Tracer]:
    """``a`` and ``b`` in their common dtype, with their batch dimensions (all but the last
    two) broadcast against each other."""
    dtype = dtypes.result_type(a.dtype, b.dtype)
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise TracingError(f"{where}: the stacks of a {a.shape} and b {b.shape} do not "
                           f"broadcast: their leading dimensions {a.shape[:-2]} and "
                           f"{b.shape[:-2]} must") from None
    return (broadcast_to(ew.astype(a, dtype), batch + a.shape[-2:]),
            broadcast_to(ew.astype(b, dtype), batch + b.shape[-2:]))


class QRResult(NamedTuple):
    """numpy.linalg.qr's result for modes 'reduced' and 'complete'."""
    Q: Tracer
    R: Tracer


def qr_modes(m: Tracer, mode: str):
    """The QR of float matrices ``m`` in one of numpy's modes (``linalg.QR_MODES``):
    'reduced', 'r' and a wide or square matrix's 'complete' from ``KERNELS``' "qr"; a
    tall matrix's 'complete' from "qr_complete" (its Q's last columns are not unique);
    'raw' (no derivative) from the Householder kernels directly."""
    rows, cols = m.shape[-2:]
    if mode == "raw":
        return _qr_factors(m, "raw")
    if mode == "complete" and rows > cols:
        return QRResult(*KERNELS["qr_complete"](m))
    q, r = KERNELS["qr"](m)
    return r if mode == "r" else QRResult(q, r)


def with_zero_rows(r: Tracer, rows: int) -> Tracer:
    """The R factors ``r`` (..., k, n) with zero rows below them up to ``rows``: a tall
    matrix's complete R from its reduced one."""
    k = r.shape[-2]
    if rows == k:
        return r
    return concatenate([r, creation.zeros(r.shape[:-2] + (rows - k, r.shape[-1]), r.dtype)],
                       -2)


def _qr_factors(m: Tracer, mode: str):
    """QR of ``m`` by the Householder kernels of ops/qr.py in mode 'reduced', 'complete'
    or 'raw'."""
    rows, cols = m.shape[-2:]
    k = min(rows, cols)
    q_width, r_rows = (rows, rows) if mode == "complete" else (k, k)
    batch = m.shape[:-2]
    if k == 0:  # nothing to reflect: Q is the identity's columns, R is empty
        if mode == "raw":
            return (creation.zeros(batch + (cols, rows), m.dtype),
                    creation.zeros(batch + (0,), m.dtype))
        q = broadcast_to(creation.eye(rows, q_width, dtype=m.dtype), batch + (rows, q_width))
        return q, creation.zeros(batch + (r_rows, cols), m.dtype)
    factors, t = _qr.qr(m)
    if mode == "raw":
        return matrix_transpose(factors), matrix.diagonal(t, 0, -2, -1)
    return _qr.q_columns(factors, t, q_width), with_zero_rows(_qr.upper(factors, k), r_rows)


def lower_triangle_source(a, uplo: str, where: str) -> Tracer:
    """The square float matrices whose lower triangle holds what ``uplo`` ('L' or 'U')
    names of ``a`` (the upper triangle of a Hermitian ``a`` is the lower one of its
    conjugate transpose)."""
    if uplo not in ("L", "U"):
        raise TracingError(f"{where}: UPLO argument must be 'L' or 'U', got {uplo!r}")
    m = square_matrices(a, where)
    return m if uplo == "L" else matrix_adjoint(m)


def svd_kernel(m: Tracer, full_matrices: bool, compute_uv: bool):
    """(U, s, Vh) or s of the float matrices ``m`` from ``KERNELS``: "svd" (reduced),
    "svd_full" (a non-square matrix's complete U or Vh, whose extra vectors are not
    unique: aotc.linalg_derivatives gives them the tangent that keeps them orthonormal)
    or "svdvals"."""
    if not compute_uv:
        return KERNELS["svdvals"](m)
    square = m.shape[-1] == m.shape[-2]
    return KERNELS["svd_full" if full_matrices and not square else "svd"](m)
