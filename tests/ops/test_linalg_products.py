"""numpy.linalg's array-API functions (matmul, outer, tensordot, vecdot, diagonal, trace,
cross), matrix_power, multi_dot, tensorinv and tensorsolve, against numpy: the same
values (products in numpy's order give numpy's rounding: equal within 1e-12), dtypes
and shapes, stacks, the plain ``np.linalg.*`` call on a traced array, and numpy's
errors for bad input."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.errors import TracingError

from .conftest import raises_match

RNG = np.random.default_rng(5)


def close(got, want, tol=1e-12):
    got = np.asarray(got)
    assert got.dtype == np.asarray(want).dtype and got.shape == np.shape(want)
    tol = max(tol, 1e-6) if got.dtype == np.float32 else tol
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_array_api_functions_match_numpy():
    x, y = RNG.standard_normal((2, 4, 3)), RNG.standard_normal((4, 3))
    m = RNG.standard_normal((2, 3, 5, 5))
    z = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)

    def program(lib, x, y, m, z):
        L = lib.linalg
        return (L.matmul(x, y.T), L.outer(y[0], y[1]), L.tensordot(x, y, axes=2),
                L.tensordot(x, y, axes=([1], [0])), L.vecdot(x, y), L.vecdot(x, y, axis=-2),
                L.vecdot(z, z), L.diagonal(m), L.diagonal(m, offset=-2), L.trace(m),
                L.trace(m, offset=1, dtype=np.float32), L.cross(x, y),
                L.cross(x.transpose(0, 2, 1), y.T, axis=-2))
    got = aotc.jit(lambda *a: program(anp, *a))(x, y, m, z)
    for g, w in zip(got, program(np, x, y, m, z)):
        close(g, w)


def test_trace_of_small_integers_widens_as_numpy():
    m = np.arange(2 * 9, dtype=np.int8).reshape(2, 3, 3)
    close(aotc.jit(anp.linalg.trace)(m), np.linalg.trace(m))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 7, 13, -1, -6])
def test_matrix_power_matches_numpy(n):
    a = RNG.standard_normal((2, 6, 6)) / 2 + np.eye(6)
    close(aotc.jit(lambda a: anp.linalg.matrix_power(a, n))(a), np.linalg.matrix_power(a, n),
          1e-12 if n >= 0 else 1e-9)


def test_matrix_power_of_integers_stays_integer_and_traces_from_numpy():
    a = np.arange(9, dtype=np.int32).reshape(3, 3) - 4
    got = aotc.jit(lambda a: (np.linalg.matrix_power(a, 5), np.linalg.matrix_power(a, 0)))(a)
    close(got[0], np.linalg.matrix_power(a, 5))
    close(got[1], np.linalg.matrix_power(a, 0))


@pytest.mark.parametrize("shapes", [
    [(7, 3), (3, 9)],
    [(10, 30), (30, 5), (5, 60)],      # (AB)C is cheaper
    [(60, 5), (5, 30), (30, 10)],      # A(BC) is cheaper
    [(10,), (10, 30), (30, 5), (5, 60), (60,)],
    [(4, 40), (40, 2), (2, 50), (50, 3), (3, 8), (8,)],
], ids=["two", "three-left", "three-right", "vectors-at-both-ends", "six"])
def test_multi_dot_matches_numpy(shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]
    close(aotc.jit(lambda *a: anp.linalg.multi_dot(a))(*arrays), np.linalg.multi_dot(arrays))
    close(aotc.jit(lambda *a: np.linalg.multi_dot(list(a)))(*arrays),
          np.linalg.multi_dot(arrays))


def test_tensorinv_and_tensorsolve_match_numpy():
    a = RNG.standard_normal((4, 6, 24)) + np.eye(24).reshape(4, 6, 24) * 5
    b = RNG.standard_normal((4, 6))
    square = RNG.standard_normal((6, 6)) + 3 * np.eye(6)

    def program(lib, a, b, square):
        L = lib.linalg
        return (L.tensorinv(a.reshape(4, 6, 4, 6)), L.tensorinv(a.reshape(24, 2, 12), ind=1),
                L.tensorsolve(a.reshape(4, 6, 4, 6), b),
                L.tensorsolve(square.reshape(2, 3, 2, 3), b[0].reshape(3, 2), axes=(0,)))
    got = aotc.jit(lambda *args: program(anp, *args))(a, b, square)
    for g, w in zip(got, program(np, a, b, square)):
        close(g, w, 1e-9)


X = np.ones((3, 3))


@pytest.mark.parametrize("call, exc, message", [
    (lambda x: anp.linalg.outer(x, x[0]), TracingError,
     ["linalg.outer", "one-dimensional", "x1.ndim=2 and x2.ndim=1", "numpy.outer"]),
    (lambda x: anp.linalg.cross(x[:, :2], x[:, :2]), TracingError,
     ["linalg.cross", "3-dimensional vectors", "2 and 2"]),
    (lambda x: anp.linalg.matrix_power(x[:2], 2), TracingError,
     ["linalg.matrix_power", "square", "(2, 3)"]),
    (lambda x: anp.linalg.matrix_power(x, 2.0), TypeError,
     ["linalg.matrix_power", "exponent must be an integer", "float 2.0"]),
    (lambda x: anp.linalg.multi_dot([x]), TracingError,
     ["linalg.multi_dot", "at least two arrays", "got 1"]),
    (lambda x: anp.linalg.multi_dot([x, x[None], x]), TracingError,
     ["linalg.multi_dot", "arrays[1] is 3-dimensional", "(1, 3, 3)"]),
    (lambda x: anp.linalg.multi_dot([x, x[:2], x]), TracingError,
     ["linalg.multi_dot", "arrays[0] (3, 3) and arrays[1] (2, 3)", "3 != 2"]),
    (lambda x: anp.linalg.tensorinv(x, ind=0), TracingError,
     ["linalg.tensorinv", "invalid ind argument 0"]),
    (lambda x: anp.linalg.tensorsolve(x[:, :2], x[0]), TracingError,
     ["linalg.tensorsolve", "(3, 2)", "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])"]),
    (lambda x: anp.linalg.multi_dot([x, x], out=x), TracingError,
     ["linalg.multi_dot", "out= is not supported"]),
], ids=lambda v: None if callable(v) or isinstance(v, (type, list)) else str(v))
def test_errors_name_the_argument(call, exc, message):
    with raises_match(exc, *message):
        aotc.jit(call).lower(X)
