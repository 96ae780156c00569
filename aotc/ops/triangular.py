"""Blocked Cholesky and triangular solves: matmuls around small sequential kernels.

Each algorithm recurses on a 2x2 block split at trace time (shapes are static), so the
program is a tree of matmuls whose leaves are ``BLOCK``-sized diagonal blocks handled by
one sequential kernel each (``sequential.py``):

    cholesky(A)          L11 = chol(A11); L21 = A21 L11^-T; L22 = chol(A22 - L21 L21^T)
    solve_lower(L, B)    X1 = solve(L11, B1); X2 = solve(L22, B2 - L21 X1)
                         leaf: X = inv(L) B, the leaf's inverse from one kernel
    solve_upper(U, B)    the same from the last block up
    lower_inverse(L)     [inv(L11), 0; -inv(L22) L21 inv(L11), inv(L22)]

Why this shape: IREE compiles matmuls near the machine's peak and runs each dispatch for
a few microseconds, while a column-by-column factorization is n dependent steps. The
recursion keeps the sequential part to n/BLOCK kernel calls of BLOCK^3/3 scalar flops
and puts every other flop in a matmul (the same split LAPACK's recursive potrf and
MAGMA's trsm with inverted diagonal blocks use). Only the lower half of a lower
factor's input is read, as LAPACK's uplo='L'. Leading dimensions are batches: the
kernels loop over them and the matmuls broadcast.
"""

from __future__ import annotations

import functools
import math
from typing import Callable

import numpy as np

from .. import dtypes, x64
from ..core import Tracer, current_trace
from ..errors import UnsupportedOpError
from ..constants import scalar_constant
from .._mlir import arith, index_constant, tensor
from ..lowering import (add_work, empty, gather_source, generic, identity_map, loop_index,
                        parallel, wrap)
from . import elementwise as ew
from . import sequential
from .scalar import cmpi, select
from .contraction import matmul
from .creation import zeros
from .array_api import matrix_adjoint, matrix_transpose
from .statistics import conjugate
from .shape import concatenate, reshape

# The leaf size: large enough that the matmuls above it run well, small enough that the
# leaf kernels' scalar loops stay a small share (n * BLOCK^2 / 3 flops in all).
BLOCK = 32


def _kernel(name: str, a: Tracer, flops_per_matrix: float) -> Tracer:
    """One sequential kernel over every matrix of ``a`` (..., n, n)."""
    return kernel_results(name, a, flops_per_matrix, [(a.shape[-2:], a.dtype)])[0]


def kernel_results(name: str, a: Tracer, flops_per_problem: float,
                   results: list[tuple[tuple, np.dtype]]) -> list[Tracer]:
    """The sequential kernel ``name`` over every problem of ``a`` (the leading dimensions
    are batches): ``results`` gives each result's shape per problem and dtype (the kernel
    may return more, which are dropped)."""
    if not current_trace().sequential_kernels:
        raise UnsupportedOpError(
            "the factorizations (linalg.cholesky, solve, inv, det, slogdet, qr, eigh, svd, "
            "solve_triangular, cho_solve, lu_factor, lu_solve) compile for CPU targets or "
            "for GPU targets, not for both in one artifact (such as 'cpu,vulkan'): their "
            "kernels take a GPU setting that CPU code generation rejects. Export one "
            "artifact for the CPU targets and one for the GPU targets")
    problem = a.shape[len(a.shape) - sequential.PROBLEM_RANK[name]:]
    batch = a.shape[:len(a.shape) - len(problem)]
    count = math.prod(batch)
    flat = reshape(a, (count, *problem))
    add_work(flops_per_problem * count)
    outs = sequential.build(name, [flat.value])
    return [reshape(wrap(value, (count, *shape), dtype), (*batch, *shape))
            for value, (shape, dtype) in zip(outs, results)]


def once_per_scope(factorization: Callable) -> Callable:
    """``factorization(a, *static)`` computed once per matrix value, arguments and scope
    being traced: a program asking twice (``pinv(a)`` and ``cond(a)``, ``solve`` and
    ``det`` of one ``a``) runs one factorization, and compiles one. Values are SSA, so the
    same value is the same matrix; results are reused only in the scope (function body
    or control-flow region) that computed them, where they are defined."""
    @functools.wraps(factorization)
    def memoized(a: Tracer, *static, **options):
        trace = current_trace()
        key = (factorization.__qualname__, trace.scope, a.value, static,
               tuple(sorted(options.items())))
        if key not in trace.factorizations:
            trace.factorizations[key] = _values(factorization(a, *static, **options))
        return _tracers(trace.factorizations[key])
    return memoized


def _values(result):
    """The values of a factorization's tracers (a tracer, or a tuple of them): kept rather
    than the tracers, which an in-place write (``q[0] = 0``) would change."""
    if isinstance(result, tuple):
        return tuple(_values(r) for r in result)
    return (result.value, result.shape, result.dtype)


def _tracers(values):
    """New tracers of the values ``_values`` kept."""
    if isinstance(values[0], tuple):
        return tuple(_tracers(v) for v in values)
    return wrap(*values)


def unit_diagonal(m: Tracer) -> Tracer:
    """The square matrices ``m`` (..., n, n) with ones on the diagonal (a unit triangular
    factor stored with something else there: LU's L below U's diagonal). The diagonal is
    found by comparing loop indices: a constant boolean mask (``eye``) took lavapipe's
    shader compiler 48 s for a 32x32 one."""
    rank = m.ndim

    def body(value):
        on_diagonal = cmpi("eq", loop_index(rank - 1), loop_index(rank - 2))
        return select(on_diagonal, scalar_constant(1, m.dtype), value)

    return ew.elementwise([m], [m.dtype], m.dtype, body, "unit_diagonal")


def _split(n: int) -> int:
    """Where an n > BLOCK matrix splits: near its middle, on a multiple of BLOCK."""
    return BLOCK * -(-(n // 2) // BLOCK)


def _blocks(a: Tracer, k: int):
    return a[..., :k, :k], a[..., k:, :k], a[..., k:, k:]


def _join_lower(l11: Tracer, l21: Tracer, l22: Tracer) -> Tracer:
    upper = zeros(l11.shape[:-1] + (l22.shape[-1],), l11.dtype)
    return concatenate([concatenate([l11, upper], axis=-1),
                        concatenate([l21, l22], axis=-1)], axis=-2)


def _leaf_lower_inverse(factor: Tracer) -> Tracer:
    return _kernel("lower_inverse", factor, factor.shape[-1] ** 3 / 6)


# The sequential leaves the blocked algorithms call, by name (lu.py adds its panel).
# Everything above a leaf is matmuls, slices and concatenations, which differentiate as
# any other ops; aotc.linalg_derivatives puts versions carrying a derivative rule
# (custom_jvp) in the leaves' place, so every blocked algorithm differentiates.
LEAVES: dict[str, Callable] = {"lower_inverse": _leaf_lower_inverse}


def lower_inverse(factor: Tracer) -> Tracer:
    """The inverse of the lower triangular ``factor`` (..., n, n)."""
    n = factor.shape[-1]
    if n <= BLOCK:
        return LEAVES["lower_inverse"](factor)
    l11, l21, l22 = _blocks(factor, _split(n))
    i11, i22 = lower_inverse(l11), lower_inverse(l22)
    return _join_lower(i11, -matmul(i22, matmul(l21, i11)), i22)


def solve_lower(factor: Tracer, b: Tracer, unit: bool = False) -> Tracer:
    """X with ``factor @ X == b``: ``factor`` (..., n, n) lower triangular (with ones on
    its diagonal where ``unit``, whatever it holds there), ``b`` (..., n, m). The diagonal
    leaves' inverses come first, from one kernel over all of them (``_leaf_inverses``);
    the recursion is then matmuls only."""
    return _solve_lower(factor, b, _leaf_inverses(factor, unit), 0)


def _solve_lower(factor: Tracer, b: Tracer, inverses: dict, offset: int) -> Tracer:
    n = factor.shape[-1]
    if n <= BLOCK:
        return matmul(inverses[offset], b)
    k = _split(n)
    l11, l21, l22 = _blocks(factor, k)
    x1 = _solve_lower(l11, b[..., :k, :], inverses, offset)
    x2 = _solve_lower(l22, b[..., k:, :] - matmul(l21, x1), inverses, offset + k)
    return concatenate([x1, x2], axis=-2)


def _leaves(n: int, offset: int = 0) -> list[tuple[int, int]]:
    """(offset, size) of the diagonal blocks the recursion on an n x n matrix ends in."""
    if n <= BLOCK:
        return [(offset, n)]
    k = _split(n)
    return _leaves(k, offset) + _leaves(n - k, offset + k)


def _leaf_inverses(factor: Tracer, unit: bool = False) -> dict[int, Tracer]:
    """The inverses of the lower triangular diagonal leaves of ``factor`` (with unit
    diagonals where ``unit``), by offset: the leaves of one size as one batch, gathered
    by one op, so one kernel inverts them all (one after the other, the leaves' kernels,
    slices and a whole-matrix unit diagonal made a 1024 solve with 16 right-hand sides
    97 dispatches). The recursion splits on multiples of BLOCK, so every leaf but the
    last is BLOCK wide: the leaves of one size lie evenly spaced."""
    by_size: dict[int, list[int]] = {}
    for offset, size in _leaves(factor.shape[-1]):
        by_size.setdefault(size, []).append(offset)
    inverses = {}
    for size, offsets in by_size.items():
        blocks = _diagonal_blocks(factor, size, offsets[0], len(offsets), unit)
        batch = LEAVES["lower_inverse"](blocks)
        for i, o in enumerate(offsets):
            inverses[o] = batch[..., i, :, :]
    return inverses


def _diagonal_blocks(factor: Tracer, size: int, first: int, count: int, unit: bool) -> Tracer:
    """The ``count`` diagonal blocks ``size`` x ``size`` of ``factor`` (..., n, n) from
    offset ``first`` on, as (..., count, size, size), with ones on their diagonals where
    ``unit``: one gather (a slice each would be a copy each)."""
    batch = factor.shape[:-2]
    out_shape = (*batch, count, size, size)
    rank = len(out_shape)
    source = gather_source(factor)
    one = scalar_constant(1, factor.dtype)

    def body(_out):
        block, row, col = (loop_index(rank - 3 + d) for d in range(3))
        start = arith.AddIOp(arith.MulIOp(block, index_constant(size)).result,
                             index_constant(first)).result
        at = [loop_index(d) for d in range(len(batch))]
        value = tensor.ExtractOp(source.value, at + [arith.AddIOp(start, row).result,
                                                     arith.AddIOp(start, col).result]).result
        if unit:
            value = select(cmpi("eq", row, col), one, value)
        return [value]

    (result,) = generic([], [(empty(out_shape, factor.dtype), identity_map(rank))],
                        parallel(rank), body)
    return wrap(result, out_shape, factor.dtype)


def cholesky(a: Tracer) -> Tracer:
    """The lower Cholesky factor of ``a`` (..., n, n), from its lower half (L L^H = a
    for complex ``a``)."""
    n = a.shape[-1]
    if n <= BLOCK:
        return _kernel("cholesky_block", a, n ** 3 / 3)
    a11, a21, a22 = _blocks(a, _split(n))
    l11 = cholesky(a11)
    l21 = matrix_adjoint(solve_lower(l11, matrix_adjoint(a21)))
    return _join_lower(l11, l21, cholesky(a22 - matmul(l21, matrix_adjoint(l21))))


def solve_upper(factor: Tracer, b: Tracer, unit: bool = False) -> Tracer:
    """X with ``factor @ X == b``: ``factor`` (..., n, n) upper triangular, ``b`` (..., n,
    m); the mirror of ``solve_lower``, from the last block up (a leaf's inverse is the
    transposed lower inverse of its transpose)."""
    inverses = {o: matrix_transpose(i)
                for o, i in _leaf_inverses(matrix_transpose(factor), unit).items()}
    return _solve_upper(factor, b, inverses, 0)


def _solve_upper(factor: Tracer, b: Tracer, inverses: dict, offset: int) -> Tracer:
    n = factor.shape[-1]
    if n <= BLOCK:
        return matmul(inverses[offset], b)
    k = _split(n)
    x2 = _solve_upper(factor[..., k:, k:], b[..., k:, :], inverses, offset + k)
    x1 = _solve_upper(factor[..., :k, :k], b[..., :k, :] - matmul(factor[..., :k, k:], x2),
                      inverses, offset)
    return concatenate([x1, x2], axis=-2)


def solve(a: Tracer, b: Tracer, *, lower: bool, transposed: bool,
          conjugated: bool = False, unit: bool = False) -> Tracer:
    """X with ``op(a) @ X == b``, op(a) = a or a^T, conjugated with ``conjugated``, reading the
    ``lower`` (or upper) triangle of ``a`` (its diagonal as ones where ``unit``); ``b``
    (..., n, m)."""
    m = conjugate(a) if conjugated and dtypes.is_complex(a.dtype) else a
    m = matrix_transpose(m) if transposed else m
    return solve_lower(m, b, unit) if lower != transposed else solve_upper(m, b, unit)


def float_input(x: Tracer, where: str) -> Tracer:
    """Integers and bools become float64 (numpy's linalg does); float16 is refused
    (numpy's linalg has no float16); float32, float64, complex64 and complex128 stay."""
    if x.dtype == np.float16:
        raise UnsupportedOpError(
            f"{where}: {x.dtype} matrices are not supported (the factorizations take "
            f"float32, float64, complex64 or complex128); convert with "
            f".astype(np.float32)")
    if dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype):
        return x
    return ew.astype(x, x64.default_float())
