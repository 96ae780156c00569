"""Products of several matrices: ``matrix_power`` and ``multi_dot``.

Both multiply in numpy's order (numpy.linalg's binary powers, its matrix-chain order),
so the rounding matches numpy's and the flop count is numpy's minimum.
"""

from __future__ import annotations

import operator

from ..core import Tracer
from ..errors import TracingError
from .arguments import as_tracer
from .contraction import dot, matmul
from .creation import eye
from .shape import broadcast_to, expand_dims, squeeze


def matrix_power(a: Tracer, n: int, inverse) -> Tracer:
    """``a`` (..., m, m) to the integer power ``n``; ``inverse`` inverts a stack (for n <
    0). numpy's steps: n = 2 and 3 directly, else a product of the repeated squares
    a, a^2, a^4, ... that ``n``'s binary digits select."""
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"linalg.matrix_power: exponent must be an integer, got "
                        f"{type(n).__name__} {n!r}") from None
    if n == 0:
        return broadcast_to(eye(a.shape[-1], dtype=a.dtype), a.shape)
    if n < 0:
        a, n = inverse(a), -n
    if n <= 3:
        result = a
        for _ in range(n - 1):
            result = matmul(result, a)
        return result
    result = square = None
    while n > 0:
        square = a if square is None else matmul(square, square)
        n, bit = divmod(n, 2)
        if bit:
            result = square if result is None else matmul(result, square)
    return result


def _chain_order(shapes: list[tuple[int, int]]) -> list[list[int]]:
    """numpy's matrix-chain order (Cormen's dynamic programme): ``split[i][j]`` is where
    the product of matrices i..j splits."""
    dims = [shapes[0][0]] + [s[1] for s in shapes]
    n = len(shapes)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(arrays: list[Tracer], split, i: int, j: int) -> Tracer:
    if i == j:
        return arrays[i]
    k = split[i][j]
    return matmul(_chain(arrays, split, i, k), _chain(arrays, split, k + 1, j))


def _three(a: Tracer, b: Tracer, c: Tracer) -> Tracer:
    """numpy's choice for three: (ab)c or a(bc), whichever costs fewer multiplications."""
    (p, q), r, s = a.shape, b.shape[1], c.shape[1]
    return (matmul(matmul(a, b), c) if p * r * (q + s) < q * s * (p + r)
            else matmul(a, matmul(b, c)))


def multi_dot(arrays) -> Tracer:
    """numpy.linalg.multi_dot: the product of a sequence of matrices in the cheapest
    order; the first may be a vector (a row), the last a vector (a column)."""
    arrays = [as_tracer(x, f"linalg.multi_dot arrays[{i}]") for i, x in enumerate(arrays)]
    if len(arrays) < 2:
        raise TracingError("linalg.multi_dot: expecting at least two arrays, got "
                           f"{len(arrays)}")
    if len(arrays) == 2:
        return dot(arrays[0], arrays[1])
    first_vector, last_vector = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_vector:
        arrays[0] = expand_dims(arrays[0], 0)
    if last_vector:
        arrays[-1] = expand_dims(arrays[-1], -1)
    for i, x in enumerate(arrays):
        if x.ndim != 2:
            raise TracingError(f"linalg.multi_dot: arrays[{i}] is {x.ndim}-dimensional "
                               f"(shape {x.shape}); every array but the first and the last "
                               f"(which may be vectors) must be two-dimensional")
    for i, (x, y) in enumerate(zip(arrays, arrays[1:])):
        if x.shape[1] != y.shape[0]:
            raise TracingError(f"linalg.multi_dot: arrays[{i}] {x.shape} and arrays[{i + 1}] "
                               f"{y.shape} do not chain: {x.shape[1]} != {y.shape[0]}")
    if len(arrays) == 3:
        result = _three(*arrays)
    else:
        result = _chain(arrays, _chain_order([x.shape for x in arrays]), 0, len(arrays) - 1)
    if first_vector:
        result = squeeze(result, 0)
    if last_vector:
        result = squeeze(result, -1)
    return result
