"""aotc.lax.linalg against jax.lax.linalg (x64): the same results in JAX's orders and
dtypes (eigh's eigenvectors first, lu's int32 pivots and permutation), the triangular
solve's four sides and transposes, the module path JAX programs import, and errors."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.lax
import aotc.lax.linalg as alinalg
from aotc.errors import TracingError, UnsupportedOpError

from .conftest import raises_match

jax = pytest.importorskip("jax")
RNG = np.random.default_rng(12)


def program(L, a, s, b, rows):
    lower, upper = np.tril(s), np.triu(s)
    return (L.cholesky(s), L.cholesky(np.tril(s), symmetrize_input=False), L.eigh(s)[1],
            L.lu(a), L.lu_pivots_to_permutation(L.lu(a)[1], 5),
            L.lu_pivots_to_permutation(L.lu(a)[1][:3], 5), L.qr(a)[1],
            L.qr(a[:, :3], full_matrices=False)[1], L.svd(a, compute_uv=False),
            L.triangular_solve(lower, b, left_side=True, lower=True),
            L.triangular_solve(upper, b, left_side=True, transpose_a=True),
            L.triangular_solve(lower, rows, lower=True),
            L.triangular_solve(upper, rows, lower=False, transpose_a=True, unit_diagonal=True))


def test_matches_jax_lax_linalg():
    a = RNG.standard_normal((5, 5))
    s = a @ a.T + 5 * np.eye(5)
    b, rows = RNG.standard_normal((5, 3)), RNG.standard_normal((3, 5))
    got = aotc.jit(lambda *x: program(alinalg, *x))(a, s, b, rows)
    with jax.enable_x64(True):
        want = program(jax.lax.linalg, a, s, b, rows)
    got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    v, w = aotc.jit(alinalg.eigh)(s)  # the eigenvectors come first, as JAX's
    np.testing.assert_allclose(s @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-12)
    assert aotc.lax.linalg is alinalg


@pytest.mark.parametrize("call, exc, message", [
    (lambda x: alinalg.qr(x, pivoting=True), UnsupportedOpError,
     ["lax.linalg.qr", "pivoting=True", "not supported yet"]),
    (lambda x: alinalg.triangular_solve(x, x[:2], left_side=True), TracingError,
     ["lax.linalg.triangular_solve", "(2, 3)", "3 rows", "left_side=True"]),
    (lambda x: alinalg.eigh(x, subset_by_index=(2, 5)), TracingError,
     ["lax.linalg.eigh", "subset_by_index=(2, 5)", "0 <= first <= stop <= 3"]),
    (lambda x: alinalg.lu_pivots_to_permutation(x[0], 3), TracingError,
     ["lax.linalg.lu_pivots_to_permutation", "integer array", "float64[3]"]),
    (lambda x: alinalg.schur(x), AttributeError,
     ["aotc does not support aotc.lax.linalg.schur yet", "jax.lax.linalg.schur exists"]),
], ids=lambda v: None if callable(v) or isinstance(v, (type, list)) else str(v))
def test_errors_name_the_argument(call, exc, message):
    with raises_match(exc, *message):
        aotc.jit(call).lower(np.eye(3))
