"""tril/triu, diag/diagonal/diagflat, trace, tri, vander and aotc.numpy.linalg's norms
against numpy.

Element moves compare exactly; trace and norms with the "accumulate" tolerance of
conftest.py (float16 1e-2, float32 1e-5, float64 1e-12, relative and absolute), powers
inside norms with it too; integer and bool results exactly."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp

from .conftest import FLOATS, compare_ops, raises_match, sample
from .test_rearrange import compare_every_dtype

# Inputs: s (0-d), v (5,), x (3, 4), t (2, 3, 4), z (0, 3).
MATRIX_OPS = {
    "tril(x)": lambda m, s, v, x, t, z: m.tril(x),
    "tril(x, -1)": lambda m, s, v, x, t, z: m.tril(x, -1),
    "tril(x, 2)": lambda m, s, v, x, t, z: m.tril(x, 2),
    "tril(t, 1)": lambda m, s, v, x, t, z: m.tril(t, 1),
    "triu(x)": lambda m, s, v, x, t, z: m.triu(x),
    "triu(t, -2)": lambda m, s, v, x, t, z: m.triu(t, -2),
    "triu(v)": lambda m, s, v, x, t, z: m.triu(v),
    "tril(v, -1)": lambda m, s, v, x, t, z: m.tril(v, -1),
    "tril(z)": lambda m, s, v, x, t, z: m.tril(z),
    "diag(v)": lambda m, s, v, x, t, z: m.diag(v),
    "diag(v, 2)": lambda m, s, v, x, t, z: m.diag(v, 2),
    "diag(v, -3)": lambda m, s, v, x, t, z: m.diag(v, -3),
    "diag(x)": lambda m, s, v, x, t, z: m.diag(x),
    "diag(x, -1)": lambda m, s, v, x, t, z: m.diag(x, -1),
    "diag(x, 5)": lambda m, s, v, x, t, z: m.diag(x, 5),
    "diag(z[:, 0])": lambda m, s, v, x, t, z: m.diag(z[:, 0], 1),
    "diagonal(t)": lambda m, s, v, x, t, z: m.diagonal(t),
    "diagonal(t, 1, 1, 2)": lambda m, s, v, x, t, z: m.diagonal(t, 1, 1, 2),
    "diagonal(t, -1, -1, 0)": lambda m, s, v, x, t, z: m.diagonal(t, -1, -1, 0),
    "diagonal(x, 10)": lambda m, s, v, x, t, z: m.diagonal(x, 10),
    "diagonal(z)": lambda m, s, v, x, t, z: m.diagonal(z),
    "diagonal(x[:, ::2])": lambda m, s, v, x, t, z: m.diagonal(x[:, ::2]),
    "flip(diagonal(t, 0, 1, 2))": lambda m, s, v, x, t, z: m.flip(m.diagonal(t, 0, 1, 2), -1),
    "x.T.diagonal": lambda m, s, v, x, t, z: m.diagonal(x.T, 1),
    "diagflat(x)": lambda m, s, v, x, t, z: m.diagflat(x[:2]),
    "diagflat(s, 1)": lambda m, s, v, x, t, z: m.diagflat(s, 1),
    "trace(x)": lambda m, s, v, x, t, z: m.trace(x),
    "trace(t, -1, 2, 1)": lambda m, s, v, x, t, z: m.trace(t, -1, 2, 1),
    "trace(z)": lambda m, s, v, x, t, z: m.trace(z),
    "trace(x, dtype=float32)": lambda m, s, v, x, t, z: m.trace(x, dtype=np.float32),
    "tri(3)": lambda m, s, v, x, t, z: m.tri(3),
    "tri(2, 4, -1, dtype)": lambda m, s, v, x, t, z: m.tri(2, 4, -1, dtype=x.dtype),
    "vander(v)": lambda m, s, v, x, t, z: m.vander(v),
    "vander(v, 3)": lambda m, s, v, x, t, z: m.vander(v, 3),
    "vander(v, 0)": lambda m, s, v, x, t, z: m.vander(v, 0),
    "vander(x[0], increasing)": lambda m, s, v, x, t, z: m.vander(x[0], increasing=True),
    "vander(z[:, 0], 2)": lambda m, s, v, x, t, z: m.vander(z[:, 0], 2),
}


def inputs(dtype, seed=90):
    shapes = [(), (5,), (3, 4), (2, 3, 4), (0, 3)]
    return [sample(dtype, shape, seed=seed + i) for i, shape in enumerate(shapes)]


def _kind(name: str) -> str:
    return ("accumulate" if name.startswith(("trace", "norm", "vector_norm", "matrix_norm"))
            else "exact")


def test_matrix_ops():
    compare_ops(MATRIX_OPS, *inputs("float32"), kinds=_kind, where="matrix ops float32")


# Every dtype in one compile.
DTYPE_OPS = {
    "tril(x, 1)": lambda m, x: m.tril(x, 1),
    "triu(x)": lambda m, x: m.triu(x),
    "diag(x[0], -1)": lambda m, x: m.diag(x[0], -1),
    "diagonal(x, 1)": lambda m, x: m.diagonal(x, 1),
    "trace(x)": lambda m, x: m.trace(x),
    "vander(x[0])": lambda m, x: m.vander(x[0]),
    "tri(dtype)": lambda m, x: m.tri(3, 2, dtype=x.dtype),
}


def test_matrix_all_dtypes():
    compare_every_dtype(DTYPE_OPS, seed=100, kinds=_kind, where="matrix ops, every dtype")


# ---- linalg norms ---------------------------------------------------------------------

NORM_OPS = {
    "norm(x)": lambda m, v, x, t: m.linalg.norm(x),
    "norm(t, keepdims)": lambda m, v, x, t: m.linalg.norm(t, keepdims=True),
    "norm(v, 2)": lambda m, v, x, t: m.linalg.norm(v, 2),
    "norm(x, 'fro')": lambda m, v, x, t: m.linalg.norm(x, "fro"),
    "norm(x, axis=1)": lambda m, v, x, t: m.linalg.norm(x, axis=1),
    "norm(x, inf)": lambda m, v, x, t: m.linalg.norm(x, np.inf),
    "norm(x, -inf)": lambda m, v, x, t: m.linalg.norm(x, -np.inf),
    "norm(x, 1)": lambda m, v, x, t: m.linalg.norm(x, 1),
    "norm(x, -1)": lambda m, v, x, t: m.linalg.norm(x, -1),
    "norm(t, -1, axis=(2, 0), keepdims)": lambda m, v, x, t: m.linalg.norm(
        t, -1, axis=(2, 0), keepdims=True),
    "norm(t, inf, axis=(-1, 1))": lambda m, v, x, t: m.linalg.norm(t, np.inf, axis=(-1, 1)),
    "norm(t, 'fro', axis=(0, 2))": lambda m, v, x, t: m.linalg.norm(t, "fro", axis=(0, 2)),
    "norm(x, 3, axis=0)": lambda m, v, x, t: m.linalg.norm(x, 3, axis=0),
    "norm(x, 0, axis=0)": lambda m, v, x, t: m.linalg.norm(x, 0, axis=0),
    "norm(x, 0.5, axis=1)": lambda m, v, x, t: m.linalg.norm(x, 0.5, axis=1),
    "norm(x, -2.5, axis=1, keepdims)": lambda m, v, x, t: m.linalg.norm(
        x, -2.5, axis=1, keepdims=True),
    "norm(v, inf)": lambda m, v, x, t: m.linalg.norm(v, np.inf),
    "norm(v, -inf)": lambda m, v, x, t: m.linalg.norm(v, -np.inf),
    "norm(v, 1)": lambda m, v, x, t: m.linalg.norm(v, 1),
    "norm(t, axis=-1)": lambda m, v, x, t: m.linalg.norm(t, axis=-1),
    "norm(v[:0])": lambda m, v, x, t: m.linalg.norm(v[:0]),
    "vector_norm(t)": lambda m, v, x, t: m.linalg.vector_norm(t),
    "vector_norm(t, axis=(0, 2), keepdims)": lambda m, v, x, t: m.linalg.vector_norm(
        t, axis=(0, 2), keepdims=True),
    "vector_norm(x, ord=3)": lambda m, v, x, t: m.linalg.vector_norm(x, ord=3),
    "vector_norm(x, axis=-1, ord=inf)": lambda m, v, x, t: m.linalg.vector_norm(
        x, axis=-1, ord=np.inf),
    "vector_norm(t, keepdims)": lambda m, v, x, t: m.linalg.vector_norm(t, keepdims=True),
    "matrix_norm(t)": lambda m, v, x, t: m.linalg.matrix_norm(t),
    "matrix_norm(t, ord=1)": lambda m, v, x, t: m.linalg.matrix_norm(t, ord=1),
    "matrix_norm(x, ord=-inf, keepdims)": lambda m, v, x, t: m.linalg.matrix_norm(
        x, ord=-np.inf, keepdims=True),
}


@pytest.mark.parametrize("dtypes", [FLOATS, ["int16", "uint8", "bool"]], ids=["floats", "ints"])
def test_norms(dtypes):
    """Floats keep their dtype; integers and bools are converted to float64 (numpy)."""
    arrays = []
    for i, dtype in enumerate(dtypes):
        arrays += [sample(dtype, shape, seed=110 + 3 * i + k, with_specials=False)
                   for k, shape in enumerate([(5,), (3, 4), (2, 3, 4)])]
    ops = {f"{name} [{dtype}]": (lambda op, i: lambda m, *xs: op(m, *xs[3 * i:3 * i + 3]))(op, i)
           for name, op in NORM_OPS.items() for i, dtype in enumerate(dtypes)}
    compare_ops(ops, *arrays, kinds="accumulate", where=f"norms {dtypes}")


def test_norm_specials():
    """inf and NaN propagate as in numpy (sums of squares, maxima, powers)."""
    v = np.array([1.0, -np.inf, 2.0, 0.0], np.float32)
    w = np.array([1.0, np.nan, -3.0, 0.0], np.float64)
    ops = {f"{name}({label})": (lambda op, k: lambda m, a, b: op(m, (a, b)[k]))(op, k)
           for k, label in enumerate("vw")
           for name, op in {
               "norm": lambda m, a: m.linalg.norm(a),
               "norm inf": lambda m, a: m.linalg.norm(a, np.inf),
               "norm 0": lambda m, a: m.linalg.norm(a, 0),
               "norm 3": lambda m, a: m.linalg.norm(a, 3),
           }.items()}
    compare_ops(ops, v, w, kinds="accumulate", where="norm specials")


# ---- errors --------------------------------------------------------------------------

X = np.zeros((3, 4), np.float32)


@pytest.mark.parametrize(
    "call, exc, message",
    [
        (lambda x: anp.tril(x[0, 0]), aotc.TracingError,
         ["tril: expected an array of at least 1 dimension"]),
        (lambda x: anp.diag(x[None]), aotc.TracingError,
         ["diag: input must be 1-d or 2-d", "(1, 3, 4)"]),
        (lambda x: anp.diagonal(x[0]), aotc.TracingError, ["at least two dimensions", "(4,)"]),
        (lambda x: anp.diagonal(x, 0, 1, -1), aotc.TracingError,
         ["axis1 and axis2 cannot be the same"]),
        (lambda x: anp.diagonal(x, 0, 0, 2), aotc.TracingError,
         ["diagonal axis2", "axis 2 is out of bounds"]),
        (lambda x: anp.trace(x[0]), aotc.TracingError, ["at least two dimensions"]),
        (lambda x: anp.vander(x), aotc.TracingError,
         ["vander: x must be a one-dimensional array", "(3, 4)"]),
        (lambda x: anp.vander(x[0], -1), aotc.TracingError, ["N must be non-negative"]),
        (lambda x: anp.tri(2, dtype=np.longdouble), aotc.UnsupportedDtypeError, ["float128"]),
        (lambda x: anp.linalg.norm(x, "bogus"), aotc.TracingError,
         ["invalid norm order 'bogus' for matrices"]),
        (lambda x: anp.linalg.norm(x[0], "fro"), aotc.TracingError,
         ["invalid norm order 'fro' for vectors"]),
        (lambda x: anp.linalg.norm(x[None], 1), aotc.TracingError,
         ["improper number of dimensions to norm", "(0, 1, 2)"]),
        (lambda x: anp.linalg.norm(x, axis=(0, 0)), aotc.TracingError,
         ["duplicate axes given: (0, 0)"]),
        (lambda x: anp.linalg.norm(x, axis=2), aotc.TracingError, ["axis 2 is out of bounds"]),
        (lambda x: anp.linalg.norm(x, axis=1.5), aotc.TracingError,
         ["axis must be None, an int or a tuple"]),
        (lambda x: anp.linalg.norm(x[:0], np.inf, axis=0), aotc.TracingError, ["zero-size array"]),
    ],
    ids=lambda v: None if callable(v) or isinstance(v, (type, list)) else str(v),
)
def test_matrix_errors(call, exc, message):
    with raises_match(exc, *message):
        aotc.jit(call).lower(X)


def test_linalg_lacks_the_nonsymmetric_eigensolver():
    """The eigenvalues of general (nonsymmetric) matrices are not part of
    aotc.numpy.linalg yet (eigh and eigvalsh, the symmetric ones, are)."""
    for name in ("eig", "eigvals"):
        assert not hasattr(anp.linalg, name)
