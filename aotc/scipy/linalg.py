"""``aotc.scipy.linalg``: scipy.linalg's triangular and Cholesky functions for traced
arrays, with jax.scipy.linalg's extension to stacks of matrices (leading batch
dimensions broadcast). The algorithms are the blocked ones of ``aotc/ops/triangular.py``.
"""

from __future__ import annotations

from .. import dtypes
from .. import namespaces as _namespaces
from ..core import Tracer, make_public
from ..errors import TracingError
from ..linalg import square_matrices
from ..ops import elementwise as ew
from ..ops import triangular
from ..ops.array_api import matrix_transpose
from ..ops.arguments import as_tracer
from ..ops.creation import eye
from ..ops.selection import where
from ..ops.shape import expand_dims, squeeze

__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular"]

# scipy's names for op(a): a, a^T, a^H (the same for real matrices).
_TRANS = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}


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
    if unit_diagonal:
        m = where(eye(m.shape[-1], dtype=bool), ew.astype(1, m.dtype), m)
    x = triangular.solve(m, rhs, lower=bool(lower), transposed=_TRANS[trans])
    return squeeze(x, -1) if vector else x


def cholesky(a, lower=False, overwrite_a=False, check_finite=True) -> Tracer:
    """scipy.linalg.cholesky: the upper factor U with ``U.T @ U == a`` (``lower=True``:
    the lower factor), from ``a``'s lower triangle. Not positive definite: NaN where
    scipy raises LinAlgError."""
    factor = triangular.cholesky(square_matrices(a, "scipy.linalg.cholesky"))
    return factor if lower else matrix_transpose(factor)


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
    lower_factor = factor if lower else matrix_transpose(factor)
    y = triangular.solve(lower_factor, rhs, lower=True, transposed=False)
    x = triangular.solve(lower_factor, y, lower=True, transposed=True)
    return squeeze(x, -1) if vector else x


make_public("scipy.linalg", globals(), __all__)  # eager outside a trace (aotc/eager.py)


def __getattr__(name: str):
    """A name aotc does not define: an AttributeError saying so (aotc/namespaces.py)."""
    raise _namespaces.missing_name('aotc.scipy.linalg', name)
