"""Index arrays (aotc/ops/index_tricks.py) and choosing/placing elements
(aotc/ops/choosing.py) against numpy (JAX for its traced-index rules: clipping
``unravel_index``, ``put`` and ``fill_diagonal`` with ``inplace=False``, ``extract(size=)``),
their vmap against a Python loop, and their errors.

One compiled function per dtype holds every op over a (4, 5) array ``x``, a (3, 3) array
``s`` and int32 indices ``i`` (traced).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.errors import TracingError

from .conftest import assert_same, compare_ops, jit_call, param_dtypes, raises_match, sample

DTYPES = ["float32", "float64", "int16", "uint8", "bool"]
FLAT = np.array([0, 7, 19, 3, 12], np.int32)
ROWS, COLS = np.array([0, 3, 1], np.int32), np.array([4, 0, 2], np.int32)


def inputs(dtype):
    return (sample(dtype, (4, 5), seed=1), sample(dtype, (3, 3), seed=2), FLAT, ROWS, COLS)


OPS = {
    "tril_indices": lambda m, x, s, i, r, c: m.tril_indices(4),
    "triu_indices(k=1, m=6)": lambda m, x, s, i, r, c: m.triu_indices(3, 1, 6),
    "tril_indices_from": lambda m, x, s, i, r, c: m.tril_indices_from(x, -1),
    "triu_indices_from": lambda m, x, s, i, r, c: m.triu_indices_from(x),
    "x[tril_indices_from]": lambda m, x, s, i, r, c: x[m.tril_indices_from(x)],
    "diag_indices": lambda m, x, s, i, r, c: m.diag_indices(3, 3),
    "diag_indices_from": lambda m, x, s, i, r, c: m.diag_indices_from(s),
    "mask_indices": lambda m, x, s, i, r, c: m.mask_indices(3, np.triu, 1),
    "x[ix_]": lambda m, x, s, i, r, c: x[m.ix_(r, c)],
    "ix_(static, bool)": lambda m, x, s, i, r, c: m.ix_([1, 0], [True, False, True]),
    "ravel_multi_index(clip)": lambda m, x, s, i, r, c: m.ravel_multi_index(
        (r, c), (4, 5), mode="clip"),
    "ravel_multi_index(wrap, F)": lambda m, x, s, i, r, c: m.ravel_multi_index(
        (r + 4, c), (4, 5), mode="wrap", order="F"),
    "ravel_multi_index(per-axis modes)": lambda m, x, s, i, r, c: m.ravel_multi_index(
        (r * 2, c - 1), (3, 4), mode=("clip", "wrap")),
    "ravel_multi_index(static)": lambda m, x, s, i, r, c: m.ravel_multi_index(
        ([1, 2], [3, 0]), (4, 5)),
    "unravel_index": lambda m, x, s, i, r, c: m.unravel_index(i, (4, 5)),
    "unravel_index(F)": lambda m, x, s, i, r, c: m.unravel_index(i, (4, 5), order="F"),
    "unravel_index(static)": lambda m, x, s, i, r, c: m.unravel_index(17, (4, 5)),
    "select": lambda m, x, s, i, r, c: m.select([x > 0, x < 2], [x, x * 2], default=3),
    "select(scalars)": lambda m, x, s, i, r, c: m.select([x > 1, x > 0], [1, 2]),
    "piecewise": lambda m, x, s, i, r, c: m.piecewise(x, [x < 0, x > 2],
                                                       [lambda v: v * 3, 1, lambda v: -v]),
    "piecewise(one condition)": lambda m, x, s, i, r, c: m.piecewise(x[0], x[0] > 0,
                                                                      [lambda v: v + v]),
    "choose(wrap)": lambda m, x, s, i, r, c: m.choose(i[:3] - 7, [s[0], s[1] * 2, s[2]],
                                                      mode="wrap"),
    "choose(clip, broadcast)": lambda m, x, s, i, r, c: m.choose(
        m.reshape(i[:3], (3, 1)), [s, 5], mode="clip"),
    "choose(static)": lambda m, x, s, i, r, c: m.choose(np.array([1, 0, 1]), [s[0], s[1]]),
    "extract(static condition)": lambda m, x, s, i, r, c: m.extract(np.eye(4, 5) > 0, x),
}


@param_dtypes(DTYPES)
def test_indices_match_numpy(dtype):
    ops = OPS if dtype != "bool" else {n: op for n, op in OPS.items() if "select" not in n
                                      and "piecewise" not in n}
    compare_ops(ops, *inputs(dtype), where=dtype)


def test_traced_rules_match_jax():
    """What tracing changes (JAX's semantics): traced conditions and indices."""
    x = sample("float32", (4, 5), seed=3)
    idx = np.array([0, 7, 19, -1, 25, -30], np.int32)
    v = np.array([10.0, 20.0], np.float32)

    def f(m, x, idx, v):
        return {"unravel_index(out of range)": m.unravel_index(idx, (4, 5)),
                "extract(size=)": m.extract(x > 0, x, size=12, fill_value=-1),
                "put": m.put(x, idx, v, inplace=False),
                "put(wrap)": m.put(x, idx, v, mode="wrap", inplace=False),
                "put(clip)": m.put(x, idx, v, mode="clip", inplace=False),
                "put_along_axis": m.put_along_axis(
                    x, m.argsort(x, axis=1)[:, :2], v, axis=1, inplace=False),
                "put_along_axis(axis=None)": m.put_along_axis(
                    x, idx[:3] % 20, 5.0, axis=None, inplace=False),
                "fill_diagonal": m.fill_diagonal(x, 7.0, inplace=False),
                "fill_diagonal(values)": m.fill_diagonal(x, v, inplace=False),
                "fill_diagonal(3-d)": m.fill_diagonal(m.reshape(x[:, :2], (2, 2, 2)), v[0],
                                                      inplace=False)}

    got = jit_call(lambda *a: f(anp, *a), x, idx, v)
    want = f(jnp, x, idx, v)
    for name in want:
        w = want[name]
        for k, (g, w) in enumerate(zip(*((got[name], w) if isinstance(w, tuple)
                                         else ((got[name],), (w,))))):
            w = np.asarray(w)
            assert_same(np.asarray(g).astype(w.dtype) if w.dtype.kind == "i" else g, w,
                        name=f"{name}[{k}]")


def test_put_and_fill_diagonal_match_numpy_in_range():
    x = sample("int32", (3, 4), seed=4)
    idx = np.array([1, 5, 11], np.int64)
    got = jit_call(lambda x, i: (anp.put(x, i, [9, 8], inplace=False),
                                 anp.fill_diagonal(x, [1, 2], inplace=False)), x, idx)
    want_put, want_diag = x.copy(), x.copy()
    np.put(want_put, idx, [9, 8])
    np.fill_diagonal(want_diag, [1, 2])
    assert_same(got[0], want_put)
    assert_same(got[1], want_diag)


def test_vmap_matches_a_loop():
    xs = sample("float32", (3, 4, 5), seed=5)
    idx = np.array([[0, 7], [19, 3], [2, 2]], np.int32)

    def per_row(m, x, i):
        return {"unravel_index": m.stack(m.unravel_index(i, (4, 5))),
                "ravel_multi_index": m.ravel_multi_index((i % 4, i % 5), (4, 5), mode="clip"),
                "select": m.select([x > 0], [x * 2], -1.0),
                "piecewise": m.piecewise(x, [x < 0], [lambda v: v * v, lambda v: v]),
                "choose": m.choose(i % 2, [x[0, :2], x[1, :2]], mode="wrap"),
                "ix_": x[m.ix_(i % 4, i % 5)]}

    got = jit_call(aotc.vmap(lambda x, i: per_row(anp, x, i)), xs, idx)
    rows = [per_row(np, x, i) for x, i in zip(xs, idx)]
    for name in got:
        assert_same(got[name], np.stack([r[name] for r in rows]).astype(got[name].dtype),
                    name=name)


@pytest.mark.parametrize("call, fragments", [
    (lambda x, i: anp.ravel_multi_index((i, i), (4, 5)), ("ravel_multi_index", "mode='raise'",
                                                           "wrap")),
    (lambda x, i: anp.ravel_multi_index((i,), (4, 5), mode="clip"), ("1 coordinate", "2 dims")),
    (lambda x, i: anp.choose(i, [x, x]), ("choose", "mode='raise'", "clip")),
    (lambda x, i: anp.choose(x, [x, x], mode="wrap"), ("choose", "integers", "float32")),
    (lambda x, i: anp.extract(x > 0, x), ("extract", "size=")),
    (lambda x, i: anp.put(x, i, 1.0), ("put", "inplace=False")),
    (lambda x, i: anp.put(x, i, 1.0, mode="raise", inplace=False), ("put", "raise")),
    (lambda x, i: anp.fill_diagonal(x, 1.0), ("fill_diagonal", "inplace=False")),
    (lambda x, i: anp.fill_diagonal(x[0], 1.0, inplace=False), ("fill_diagonal", "2-d")),
    (lambda x, i: anp.put_along_axis(x, i, 1.0, 1, inplace=False), ("put_along_axis",
                                                                      "same number")),
    (lambda x, i: anp.select([x > 0], [x, x]), ("select", "same length")),
    (lambda x, i: anp.select([x], [x]), ("select", "condlist", "boolean")),
    (lambda x, i: anp.piecewise(x, [x > 0], [1, 2, 3]), ("piecewise", "1 or 2 functions")),
    (lambda x, i: anp.diag_indices_from(x), ("diag_indices_from", "equal length")),
    (lambda x, i: anp.tril_indices_from(x[0]), ("tril_indices_from", "2-d")),
    (lambda x, i: anp.mask_indices(3, anp.triu), ("mask_indices", "numpy arrays")),
    (lambda x, i: anp.ix_(x[0] > 0), ("ix_", "boolean mask")),
    (lambda x, i: anp.ix_(x), ("ix_", "1-dimensional")),
], ids=["ravel-raise", "ravel-count", "choose-raise", "choose-float", "extract-size",
        "put-inplace", "put-raise", "fill_diagonal-inplace", "fill_diagonal-1d",
        "put_along_axis-ndim", "select-lengths", "select-bool", "piecewise-count",
        "diag_indices_from", "tril_indices_from", "mask_indices", "ix_-mask", "ix_-2d"])
def test_errors_name_the_argument(call, fragments):
    with raises_match(TracingError, *fragments):
        aotc.jit(call).lower(np.ones((4, 5), np.float32), np.arange(3, dtype=np.int32))
