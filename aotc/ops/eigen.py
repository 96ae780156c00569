"""Symmetric eigendecomposition: eigh and eigvalsh, one sequential kernel per matrix.

``sequential.symmetric_eigen`` tridiagonalizes the matrix by Householder reflections
(LAPACK's sytd2), forms their Q and runs the implicit QL method with Wilkinson shifts on
the tridiagonal (EISPACK's tql2), accumulating the rotations into Q: the algorithms of
LAPACK's steqr path, backward stable, eigenvalues ascending as numpy's. All of it is
scalar loops in one dispatch per batch of matrices (about 9 n^3 flops), so it suits
the small and medium matrices of covariance, Kalman and physics code; blocking the
tridiagonalization into matmuls (sytrd/latrd) is the step that would serve large ones.
"""

from __future__ import annotations

from ..core import Tracer
from . import elementwise as ew
from . import reductions
from . import sequential_eigen  # noqa: F401  (registers the eigensolver kernels)
from .array_api import matrix_transpose
from .selection import where
from .triangular import kernel_results, once_per_scope


def eigh(a: Tracer) -> tuple[Tracer, Tracer]:
    """(eigenvalues (..., n) ascending, eigenvectors (..., n, n) as columns) of the
    symmetric (complex: Hermitian) matrices ``a`` (..., n, n), read from their lower
    triangles; the eigenvalues are real."""
    return _eigen(a, vectors=True)


def eigvalsh(a: Tracer) -> Tracer:
    """The eigenvalues (..., n), ascending, without the eigenvectors' work."""
    return _eigen(a, vectors=False)[0]


def power_of_two_scale(a: Tracer) -> Tracer:
    """A power of two near the largest magnitude of each matrix of ``a`` (1 for a zero or
    non-finite one), shaped (..., 1, 1): dividing by it is exact, and products and sums
    of squares of the entries stay in range (they would overflow near 1e200)."""
    largest = reductions.max(ew.ufunc("absolute", a), axis=(-2, -1), keepdims=True)
    exponent = ew.ufunc("floor", ew.ufunc("log2", largest))
    return where(ew.ufunc("isfinite", exponent), ew.ufunc("exp2", exponent),
                 ew.astype(1, largest.dtype))


@once_per_scope
def _eigen(a: Tracer, vectors: bool):
    n = a.shape[-1]
    scale = power_of_two_scale(a)  # the QL steps multiply pairs of entries
    name, flops = ("symmetric_eigen", 9 * n ** 3) if vectors else ("symmetric_eigenvalues",
                                                                    4 * n ** 3 / 3)
    values, rows = kernel_results(name, a / scale, flops,
                                  [((n,), scale.dtype), ((n, n), a.dtype)])
    return values * scale[..., 0], matrix_transpose(rows)
