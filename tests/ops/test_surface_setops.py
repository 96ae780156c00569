"""unique, the array API's unique_*, and the 1-d set operations (aotc/ops/setops.py):
traced inputs with JAX's ``size=``/``fill_value=`` against JAX (numpy where no padding is
involved: ``size`` equal to the number of distinct values), numpy arrays without
``size=`` against numpy, vmap against a Python loop, and the errors.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.errors import TracingError

from .conftest import assert_same, jit_call, raises_match

DTYPES = ["float32", "int32", "bool"]
A = np.array([[3, 1, 3], [2, 1, 5]])
B = np.array([2, 9, 3, 3])


def _as_numpy(w, k: int):
    """JAX's entry ``k`` as numpy would give it: JAX computes indices and counts (entries
    after the values) in int32 (x64 off), numpy and aotc in int64."""
    w = np.asarray(w)
    return w.astype(np.int64) if k > 0 and w.dtype == np.int32 else w


N_UNIQUE = len(np.unique(A))
OPS = {
    "unique": lambda m, a, b, padded: m.unique(a, size=padded),
    "unique(all flags)": lambda m, a, b, padded: m.unique(a, True, True, True, size=padded),
    "unique(exact size)": lambda m, a, b, padded: m.unique(a, size=N_UNIQUE),
    "unique(short)": lambda m, a, b, padded: m.unique(a, return_counts=True, size=2),
    "unique_all": lambda m, a, b, padded: tuple(m.unique_all(a, size=padded)),
    "unique_counts": lambda m, a, b, padded: tuple(m.unique_counts(a, size=padded)),
    "unique_inverse": lambda m, a, b, padded: tuple(m.unique_inverse(a, size=padded)),
    "unique_values": lambda m, a, b, padded: m.unique_values(a, size=padded,
                                                             fill_value=a[0, 0]),
    "union1d": lambda m, a, b, padded: m.union1d(a, b, size=padded),
    "intersect1d": lambda m, a, b, padded: m.intersect1d(a, b, size=3),
    "setdiff1d": lambda m, a, b, padded: m.setdiff1d(a, b, size=3),
    "setxor1d": lambda m, a, b, padded: m.setxor1d(a, b, size=5, fill_value=b[1]),
}


# Each op compiles on its own (below), at ~2.5 s apiece: float32 runs every op; the other
# dtypes run the ops whose comparisons and fills differ by dtype. The unique_* wrappers and
# the size/padding variants are the same code for every dtype.
BY_DTYPE = {
    "float32": None,
    "int32": ["unique(all flags)", "union1d", "intersect1d", "setdiff1d", "setxor1d"],
    "bool": ["unique(all flags)", "intersect1d", "setxor1d"],
}


def _traced_cases():
    """(dtype, op name) pairs: each a test of its own, so the compiles spread over the
    workers."""
    for dtype in DTYPES:
        for name in BY_DTYPE[dtype] or OPS:
            yield pytest.param(dtype, name, id=f"{dtype}-{name}")


@pytest.mark.parametrize("dtype, name", _traced_cases())
def test_traced_sets_match_jax(dtype, name):
    # one compile per op: IREE 3.13 takes minutes to compile several of these sort +
    # scatter pipelines in one function (measured: three unique calls time out at 60 s,
    # each alone compiles in 3 s)
    a, b = A.astype(dtype), B.astype(dtype) if dtype != "bool" else (B > 2)
    want = OPS[name](jnp, a, b, 7)
    got = jit_call(lambda a, b: OPS[name](anp, a, b, 7), a, b)
    for k, (g, w) in enumerate(zip(*(_flat(v) for v in (got, want)))):
        assert_same(g, _as_numpy(w, k), name=f"{name}[{k}]")


def _flat(v):
    return list(v) if isinstance(v, (tuple, list)) else [v]


def test_nan_is_one_value_and_sizes_match_numpy():
    x = np.array([np.nan, 1.0, np.nan, -0.0, 0.0, 2.0], np.float64)
    got = jit_call(lambda x: anp.unique(x, return_counts=True, size=4), x)
    values, counts = np.unique(x, return_counts=True)
    assert_same(got[0], values)
    assert_same(got[1], counts)


def test_numpy_arrays_need_no_size():
    def f():
        return {"unique": anp.unique(A), "unique(axis=0)": anp.unique(np.array([[1, 2], [1, 2]]),
                                                                    axis=0),
                "unique(flags)": anp.unique(A, return_inverse=True, return_counts=True),
                "intersect1d": anp.intersect1d(A, B), "union1d": anp.union1d(A, B),
                "setdiff1d": anp.setdiff1d(A, B), "setxor1d": anp.setxor1d(A, B),
                "trim_zeros": anp.trim_zeros(np.array([0, 0, 1, 2, 0])),
                "trim_zeros(f)": anp.trim_zeros(np.array([0, 1, 0]), "f")}

    got = jit_call(f)
    want = {"unique": np.unique(A), "unique(axis=0)": np.unique([[1, 2], [1, 2]], axis=0),
            "unique(flags)": np.unique(A, return_inverse=True, return_counts=True),
            "intersect1d": np.intersect1d(A, B), "union1d": np.union1d(A, B),
            "setdiff1d": np.setdiff1d(A, B), "setxor1d": np.setxor1d(A, B),
            "trim_zeros": np.trim_zeros(np.array([0, 0, 1, 2, 0])),
            "trim_zeros(f)": np.trim_zeros(np.array([0, 1, 0]), "f")}
    for name in want:
        for g, w in zip(_flat(got[name]), _flat(want[name])):
            assert_same(g, w, name=name)


def test_vmap_matches_a_loop():
    xs = np.array([[3, 1, 3, 2], [5, 5, 5, 5], [0, 1, 2, 3]], np.int32)
    bs = np.array([[1, 9], [5, 4], [3, 3]], np.int32)

    def per_row(m, x, b):
        return {"unique": m.unique(x, size=4), "counts": m.unique_counts(x, size=4).counts,
                "union1d": m.union1d(x, b, size=5), "setdiff1d": m.setdiff1d(x, b, size=3)}

    got = jit_call(aotc.vmap(lambda x, b: per_row(anp, x, b)), xs, bs)
    rows = [per_row(jnp, x, b) for x, b in zip(xs, bs)]
    for name in got:
        want = np.stack([np.asarray(r[name]) for r in rows])
        assert_same(got[name], want.astype(got[name].dtype), name=name)


@pytest.mark.parametrize("call, fragments", [
    (lambda x: anp.unique(x), ("unique", "size=", "fill_value=")),
    (lambda x: anp.unique_all(x), ("unique", "size=")),
    (lambda x: anp.intersect1d(x, x), ("intersect1d", "size=")),
    (lambda x: anp.setdiff1d(x, [1.0]), ("setdiff1d", "size=")),
    (lambda x: anp.union1d(x, x), ("union1d", "size=")),
    (lambda x: anp.unique(x, size=-1), ("unique", "size", "-1")),
    (lambda x: anp.unique(x, axis=0, size=3), ("unique", "axis=0", "numpy array")),
    (lambda x: anp.trim_zeros(x), ("trim_zeros", "shape depends", "JAX")),
], ids=["unique", "unique_all", "intersect1d", "setdiff1d", "union1d", "size-negative",
        "unique-axis", "trim_zeros"])
def test_errors_name_the_argument(call, fragments):
    with raises_match(TracingError, *fragments):
        aotc.jit(call).lower(np.ones(6, np.float32))


def test_jit_returns_the_named_results():
    # the result types are NamedTuples (as in numpy and JAX): jit can return them whole
    a = A.astype(np.int32)
    got = aotc.jit(lambda a: anp.unique_all(a, size=5))(a)
    want = jnp.unique_all(a, size=5)
    assert type(got).__name__ == "UniqueAllResult"
    assert got._fields == want._fields
    for field in got._fields:
        assert_same(np.asarray(getattr(got, field)), _as_numpy(getattr(want, field),
                                                               field != "values"))
