"""Advanced indexing against numpy: integer arrays (traced and constant), static boolean
masks, traced scalar indices, take / take_along_axis / nonzero family, and
aotc.lax.dynamic_slice against its definition (and JAX when installed). Exact equality:
gathers do no arithmetic.

Traced out-of-range indices are clamped (JAX's rule), so their reference is numpy on
indices clamped the same way; constant ones must raise as numpy does."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.lax as lax
import aotc.numpy as anp

from .conftest import assert_all, compare_ops, jit_call, param_dtypes, raises_match, sample

SHAPE = (3, 4, 5)
MASK = np.array([True, False, True, True])  # static: becomes constant indices

# x: (3, 4, 5); i: 1-d, in range for axes of size >= 3, with negatives; j: (2, 1); s: 0-d.
GATHERS = {
    "x[i]": lambda m, x, i, j, s: x[i],
    "x[:, i]": lambda m, x, i, j, s: x[:, i],
    "x[..., i]": lambda m, x, i, j, s: x[..., i],
    "x[i, :, j] (separated: advanced dims first)": lambda m, x, i, j, s: x[i, :, j],
    "x[j, i] (broadcast)": lambda m, x, i, j, s: x[j, i],
    "x[:, j, i] (adjacent: in place)": lambda m, x, i, j, s: x[:, j, i],
    "x[1, i, 2:4] (int separated)": lambda m, x, i, j, s: x[1, i, 2:4],
    "x[None, ..., i]": lambda m, x, i, j, s: x[None, ..., i],
    "x[i, None, ::-2]": lambda m, x, i, j, s: x[i, None, ::-2],
    "x[i, j, i] (all advanced)": lambda m, x, i, j, s: x[i, j, i],
    "x[s, i] (traced scalar + array)": lambda m, x, i, j, s: x[s, i],
    "x[[0, 2], 1]": lambda m, x, i, j, s: x[[0, 2], 1],
    "x[[[1], [0]], [[-1, 2]]]": lambda m, x, i, j, s: x[[[1], [0]], [[-1, 2]]],
    "x[:, MASK]": lambda m, x, i, j, s: x[:, MASK],
    "x[MASK[:3], 1]": lambda m, x, i, j, s: x[MASK[:3], 1],
    "x[x.shape-mask 2d]": lambda m, x, i, j, s: x[np.eye(3, 4, dtype=bool)],
    "x[i[:0]] (empty)": lambda m, x, i, j, s: x[i[:0]],
    "x[np.array([], int)]": lambda m, x, i, j, s: x[:, np.array([], dtype=np.int64)],
    "x[s]": lambda m, x, i, j, s: x[s],
    "x[s, 1:3, s]": lambda m, x, i, j, s: x[s, 1:3, s],
    "x[s - 1, ::-1]": lambda m, x, i, j, s: x[s - 1, ::-1],
    "x[2, s, None]": lambda m, x, i, j, s: x[2, s, None],
    "x[s, s, s] (0-d)": lambda m, x, i, j, s: x[s, s, s],
    "x[[s, 0]] (list with a traced scalar)": lambda m, x, i, j, s: x[[s, 0]],
    "take(x, i)": lambda m, x, i, j, s: m.take(x, i),
    "take(x, i, axis=1)": lambda m, x, i, j, s: m.take(x, i, axis=1),
    "take(x, j, axis=-1)": lambda m, x, i, j, s: m.take(x, j, axis=-1),
    "take(x, i * 7, axis=2, mode=wrap)": lambda m, x, i, j, s: m.take(
        x, i * 7, axis=2, mode="wrap"),
    "take(x, i * 7, axis=2, mode=clip)": lambda m, x, i, j, s: m.take(
        x, i * 7, axis=2, mode="clip"),
    "take(x, [1, -1], axis=0)": lambda m, x, i, j, s: m.take(x, [1, -1], axis=0),
    "take(x, s)": lambda m, x, i, j, s: m.take(x, s),
    "take_along_axis(x, argsort-like, -1)": lambda m, x, i, j, s: m.take_along_axis(
        x, (np.arange(60).reshape(SHAPE) * 7) % 5, axis=-1),
    "take_along_axis(x, traced broadcast, 1)": lambda m, x, i, j, s: m.take_along_axis(
        x, m.reshape(i, (1, 4, 1)), axis=1),
    "take_along_axis(x, None)": lambda m, x, i, j, s: m.take_along_axis(x, i, axis=None),
    "compress(static, axis=1)": lambda m, x, i, j, s: m.compress([True, False, True], x, axis=1),
    "compress(static, None)": lambda m, x, i, j, s: m.compress(np.arange(7) % 3 == 0, x),
}

INDEX_DTYPES = {"int32": ("int32", "uint8", "int64"), "int64": ("int64", "int8", "int32"),
                "uint8": ("uint8", "int16", "uint8")}


def index_args(kind: str):
    i_dt, j_dt, s_dt = INDEX_DTYPES[kind]
    i = np.array([2, 0, 1, 2] if kind == "uint8" else [2, -1, 0, -3], dtype=i_dt)
    j = np.array([[0], [2]], dtype=j_dt)
    s = np.array(1 if kind == "uint8" else 2, dtype=s_dt)
    return i, j, s


@pytest.mark.parametrize("dtype, kind", [("float32", "int32"), ("int8", "int64"),
                                         ("bool", "uint8"), ("float64", "int32")])
def test_gathers_match_numpy(dtype, kind):
    x = sample(dtype, SHAPE, seed=31)
    compare_ops(GATHERS, x, *index_args(kind), where=f"gathers {dtype}, {kind} indices")


def test_negative_traced_scalar_counts_from_the_end():
    x = sample("int16", (6, 4), seed=32)
    got = jit_call(lambda x, s: {"row": x[s], "col": x[:, s], "pair": x[s, s]}, x, np.int32(-2))
    assert_all(got, {"row": x[-2], "col": x[:, -2], "pair": x[-2, -2]})


def test_gather_from_a_strided_slice():
    # IREE 3.13 cannot compile a gather fused with a strided slice; the source is read
    # after a barrier instead (lowering.gather_source).
    x = sample("float32", (8, 9), seed=33)
    idx = np.array([2, 0, 3], np.int32)
    got = jit_call(lambda x, i: {"rows": x[::2, 1::3][i], "take": anp.take(x[:, ::2], i, axis=1)},
                   x, idx)
    assert_all(got, {"rows": x[::2, 1::3][idx], "take": np.take(x[:, ::2], idx, axis=1)})


def test_gather_from_a_slice_whose_rows_are_apart():
    """A unit-step slice can still leave its innermost elements apart: a column of a
    matrix (``x[:, :, -1:]``), or ``x[..., 0]`` of a (2, 1, 2) array (the fuzzer's
    ``roll(x[..., 0], 1, axis=0)``, which failed in LLVM translation)."""
    x = sample("float64", (2, 33, 33), seed=34)
    small = sample("float32", (2, 1, 2), seed=35)
    order = np.arange(33, dtype=np.int32)[::-1].copy()
    got = jit_call(lambda x, s, o: {
        "column": anp.take_along_axis(x[:, :, 32:], o[None, :, None], 1),
        "one": anp.take_along_axis(x[0, :, 32:], o[:, None], 0),
        "roll": anp.roll(s[..., 0], 1, axis=0)}, x, small, order)
    assert_all(got, {"column": np.take_along_axis(x[:, :, 32:], order[None, :, None], 1),
                     "one": np.take_along_axis(x[0, :, 32:], order[:, None], 0),
                     "roll": np.roll(small[..., 0], 1, axis=0)})


def _clamped(i, n):
    i = np.where(i < 0, i + n, i)
    return np.clip(i, 0, n - 1)


def test_traced_out_of_range_indices_clamp():
    x = sample("float32", (5, 6), seed=33)
    i = np.array([7, -9, 4, 5, -6, 100], np.int32)

    def f(x, i, s):
        return {"rows": x[i], "cols": x[1, i], "scalar": x[s], "take": anp.take(x, i, axis=1)}

    got = jit_call(f, x, i, np.int32(12))
    assert_all(got, {"rows": x[_clamped(i, 5)], "cols": x[1, _clamped(i, 6)], "scalar": x[4],
                     "take": x[:, _clamped(i, 6)]})


def test_take_fill_mode():
    x = sample("float32", (3, 5), seed=34)
    xi = sample("int32", (3, 5), seed=35)
    i = np.array([0, 5, -1, -6, 4], np.int64)

    def f(x, xi, i):
        return {"nan": anp.take(x, i, axis=1, mode="fill"),
                "value": anp.take(x, i, axis=1, mode="fill", fill_value=-2.0),
                "int": anp.take(xi, i, axis=1, mode="fill"),
                "get": x.at[:, i].get(mode="fill", fill_value=7.0)}

    got = jit_call(f, x, xi, i)
    inside = (i >= -5) & (i < 5)

    def filled(a, value):
        out = a[:, _clamped(i, 5)].copy()
        out[:, ~inside] = value
        return out

    assert_all(got, {"nan": filled(x, np.nan), "value": filled(x, -2.0),
                     "int": filled(xi, np.iinfo(np.int32).min), "get": filled(x, 7.0)})


def test_jax_agrees_on_clamped_gathers():
    jnp = pytest.importorskip("jax.numpy")
    x = sample("float32", (5, 6), seed=36)
    i = np.array([7, -9, 4, 5, -6, 100], np.int32)
    got = jit_call(lambda x, i: {"a": x[i], "b": x[:, i, None], "c": x[i % 3, 2:]}, x, i)
    xj = jnp.asarray(x)
    want = {"a": xj[i], "b": xj[:, i, None], "c": xj[i % 3, 2:]}
    assert_all(got, {k: np.asarray(v) for k, v in want.items()})


def test_static_nonzero_family():
    a = np.array([[0, 3, 0], [1, 0, 2]], np.int32)

    def f(x):
        return {"nonzero": anp.nonzero(a), "argwhere": anp.argwhere(a),
                "flatnonzero": anp.flatnonzero(a), "where1": anp.where(a > 1),
                "picked": x[anp.nonzero(a)], "where3": anp.where(x > 0, x, -x)}

    x = sample("float32", (2, 3), seed=37)
    got = jit_call(f, x)
    want = {"nonzero": np.nonzero(a), "argwhere": np.argwhere(a), "flatnonzero": np.flatnonzero(a),
            "where1": np.where(a > 1), "picked": x[np.nonzero(a)], "where3": np.where(x > 0, x, -x)}
    for name in ("nonzero", "where1"):
        got[name] = [np.asarray(v) for v in got[name]]
        assert len(got[name]) == len(want[name])
        for g, w in zip(got[name], want[name]):
            np.testing.assert_array_equal(g, w)
            assert g.dtype == np.int64
    for name in ("argwhere", "flatnonzero", "picked", "where3"):
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
        assert got[name].shape == want[name].shape


def _sized(rows: np.ndarray, size: int, fill) -> np.ndarray:
    """JAX's size= rule on numpy's argwhere rows: the first ``size``, then fill rows."""
    fill_row = np.broadcast_to(np.asarray(fill, np.int64), (rows.shape[1],))
    pad = np.tile(fill_row, (max(size - len(rows), 0), 1))
    return np.concatenate([rows[:size], pad]).astype(np.int64)


@param_dtypes(["float32", "int8", "bool"])
def test_nonzero_with_size(dtype):
    x = sample(dtype, (4, 5), seed=40)  # float specials include NaN (nonzero) and -0.0 (zero)

    def f(x):
        return {"nonzero 6": anp.nonzero(x, size=6),
                "nonzero 30": anp.nonzero(x, size=30, fill_value=-1),
                "argwhere": anp.argwhere(x, size=4, fill_value=(7, 8)),
                "flat": anp.flatnonzero(x[1:], size=9),
                "where1": anp.where(x[0], size=2), "row": anp.nonzero(x[2], size=0),
                "empty": anp.argwhere(x[:0], size=3, fill_value=5)}

    got = {}
    for name, value in jit_call(f, x).items():
        got.update({f"{name}[{d}]": v for d, v in enumerate(value)} if isinstance(value, tuple)
                   else {name: value})
    rows = np.argwhere(x)
    want = {"argwhere": _sized(rows, 4, (7, 8)),
            "flat": _sized(np.argwhere(x[1:].ravel()), 9, 0)[:, 0],
            "empty": _sized(np.argwhere(x[:0]), 3, 5)}
    for name, size, fill, a in [("nonzero 6", 6, 0, x), ("nonzero 30", 30, -1, x),
                                ("where1", 2, 0, x[0]), ("row", 0, 0, x[2])]:
        for d, column in enumerate(_sized(np.argwhere(a), size, fill).T):
            want[f"{name}[{d}]"] = column
    assert_all(got, want, where=f"nonzero(size=) {dtype}")


def _dynamic_slice_reference(x, starts, sizes):
    starts = [min(max(s + n if s < 0 else s, 0), n - k) for s, n, k in zip(starts, x.shape, sizes)]
    return x[tuple(slice(s, s + k) for s, k in zip(starts, sizes))]


@param_dtypes(["float32", "int64"])
def test_dynamic_slice_clamps_like_jax(dtype):
    x = sample(dtype, (5, 6), seed=38)
    starts = [(1, 2), (4, 5), (-1, 0), (-9, 7), (0, 0)]

    def f(x, a, b):
        return {
            "slice": lax.dynamic_slice(x, (a, b), (2, 3)),
            "array starts": lax.dynamic_slice(x, anp.stack([a, b]), (3, 1)),
            "static": lax.dynamic_slice(x, (1, b), (4, 6)),
            "in_dim": lax.dynamic_slice_in_dim(x, b, 2, axis=1),
            "index keep": lax.dynamic_index_in_dim(x, a, 0),
            "index drop": lax.dynamic_index_in_dim(x, b, axis=-1, keepdims=False),
            "no wrap": lax.dynamic_slice(x, (a, b), (2, 2), allow_negative_indices=False),
        }

    jitted = aotc.jit(f)
    for a, b in starts:
        got = {k: np.asarray(v) for k, v in jitted(x, np.int32(a), np.int64(b)).items()}
        no_wrap = [max(a, 0), max(b, 0)]
        want = {
            "slice": _dynamic_slice_reference(x, [a, b], [2, 3]),
            "array starts": _dynamic_slice_reference(x, [a, b], [3, 1]),
            "static": _dynamic_slice_reference(x, [1, b], [4, 6]),
            "in_dim": _dynamic_slice_reference(x, [0, b], [5, 2]),
            "index keep": _dynamic_slice_reference(x, [a, 0], [1, 6]),
            "index drop": _dynamic_slice_reference(x, [0, b], [5, 1])[:, 0],
            "no wrap": _dynamic_slice_reference(x, no_wrap, [2, 2]),
        }
        assert_all(got, want, where=f"starts {(a, b)}")
    assert jitted.stats["compiles"] + jitted.stats["disk_hits"] == 1


def test_jax_agrees_on_dynamic_slice():
    jax = pytest.importorskip("jax")
    x = sample("float32", (5, 6), seed=39)
    f = aotc.jit(lambda x, a, b: lax.dynamic_slice(x, (a, b), (2, 3)))
    for a, b in [(4, 5), (-1, 0), (-9, 7)]:
        want = jax.lax.dynamic_slice(x, (np.int32(a), np.int32(b)), (2, 3))
        np.testing.assert_array_equal(np.asarray(f(x, np.int32(a), np.int32(b))), np.asarray(want))


# ---- errors ---------------------------------------------------------------------------------

S = aotc.ShapeDtypeStruct
X = S((3, 4), "float32")
INDICES = S((2,), "int32")


def lower(fn, *specs):
    return aotc.jit(fn).lower(*specs)


@pytest.mark.parametrize("fn, fragments", [
    (lambda x: x[x > 0],
     ["boolean mask", "depends on the data", "where(mask, x, y)", "static numpy"]),
    (lambda x: anp.nonzero(x), ["nonzero", "depends on the data", "size="]),
    (lambda x: anp.where(x > 1), ["where(condition) with one argument", "depends on the data"]),
    (lambda x: anp.argwhere(x), ["argwhere", "depends on the data"]),
    (lambda x: anp.flatnonzero(x), ["flatnonzero", "depends on the data"]),
    (lambda x: anp.compress(x[0] > 0, x, axis=1), ["compress", "depends on the data"]),
    (lambda x: x.at[x > 0].set(0.0), ["boolean mask", "depends on the data"]),
])
def test_data_dependent_shapes_are_refused(fn, fragments):
    with raises_match(aotc.errors.TracingError, *fragments):
        lower(fn, X)


@pytest.mark.parametrize("fn, exc, fragments", [
    (lambda x, i: x[np.array([0, 3])], aotc.errors.TracingError,
     ["index 3 is out of bounds for axis 0 with size 3"]),
    (lambda x, i: x[:, [-5]], aotc.errors.TracingError,
     ["index -5 is out of bounds for axis 1 with size 4"]),
    (lambda x, i: x[i.astype(anp.float32)], aotc.errors.TracingError,
     ["integer (or boolean) type", "float32"]),
    (lambda x, i: x[np.array([0.5])], aotc.errors.TracingError,
     ["integer (or boolean) type", "float64"]),
    (lambda x, i: x[i[0]:], aotc.errors.TracerConversionError, ["integer index", "int32[]"]),
    (lambda x, i: x[i, i[0]:], aotc.errors.TracingError,
     ["slice bounds must be static", "dynamic_slice"]),
    (lambda x, i: x[True], aotc.errors.UnsupportedOpError, ["boolean scalar index"]),
    (lambda x, i: x[np.array([True, False])], aotc.errors.TracingError,
     ["boolean index of shape (2,)", "(3,)"]),
    (lambda x, i: x[i, np.zeros(3, int)], aotc.errors.TracingError,
     ["index arrays", "(2,), (3,)", "broadcast"]),
    (lambda x, i: x[i, i, i], aotc.errors.TracingError,
     ["too many indices", "2-dimensional, but 3"]),
    (lambda x, i: x[..., i, ...], aotc.errors.TracingError, ["single ellipsis"]),
    (lambda x, i: x["a"], aotc.errors.TracingError, ["'a'", "valid indices"]),
    (lambda x, i: x[i, "a"], aotc.errors.TracingError, ["valid indices", "str 'a'"]),
    (lambda x, i: anp.take(x, i, mode="nearest"), aotc.errors.TracingError,
     ["take: mode", "'nearest'"]),
    (lambda x, i: anp.take(x, [99]), aotc.errors.TracingError,
     ["take", "index 99 is out of bounds"]),
    (lambda x, i: anp.take_along_axis(x, i, axis=0), aotc.errors.TracingError,
     ["same number of dimensions"]),
    (lambda x, i: anp.where(x > 0, x), aotc.errors.TracingError, ["both or neither of x and y"]),
    (lambda x, i: lax.dynamic_slice(x, (i[0],), (1, 1)), aotc.errors.TracingError,
     ["one start index per operand dimension (2)", "got 1"]),
    (lambda x, i: lax.dynamic_slice(x, (i[0], 0), (4, 1)), aotc.errors.TracingError,
     ["slice size 4 along dimension 0", "size 3"]),
    (lambda x, i: lax.dynamic_slice(x, (i, 0), (1, 1)), aotc.errors.TracingError,
     ["integer scalars", "int32[2]"]),
    (lambda x, i: x[:0][i], aotc.errors.TracingError, ["axis 0 of size 0"]),
    (lambda x, i: anp.nonzero(x, size=2, fill_value=(1, 2, 3)), aotc.errors.TracingError,
     ["fill_value must be a scalar or one value per dimension (2)", "(1, 2, 3)"]),
])
def test_index_errors(fn, exc, fragments):
    with raises_match(exc, *fragments):
        lower(fn, X, INDICES)
