"""pad, tile, repeat, roll, rot90, the stacking helpers, insert/delete/append, meshgrid
against numpy: exact equality (they only move elements), every dtype, 0-d, size-0 and
size-1 inputs, one compile per dtype."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.ops import rearrange

from .conftest import DTYPES, compare_ops, jit_call, raises_match, sample

# Every op takes the same inputs: s (0-d), v (5,), x (3, 4), t (2, 3, 4), z (0, 3),
# one (1, 1), w (4, 24).
PAD_OPS = {
    "pad(v, 2)": lambda m, s, v, x, t, z, one, w: m.pad(v, 2),
    "pad(x, ((1, 2), (0, 3)))": lambda m, s, v, x, t, z, one, w: m.pad(x, ((1, 2), (0, 3))),
    "pad(x, (1, 2))": lambda m, s, v, x, t, z, one, w: m.pad(x, (1, 2)),
    "pad(x, [[1], [2]])": lambda m, s, v, x, t, z, one, w: m.pad(x, [[1], [2]]),
    "pad(x, np.int8(1))": lambda m, s, v, x, t, z, one, w: m.pad(x, np.int8(1)),
    "pad(x, {1: (1, 2)})": lambda m, s, v, x, t, z, one, w: m.pad(x, {1: (1, 2)}),
    "pad(t, values=3)": lambda m, s, v, x, t, z, one, w: m.pad(
        t, ((0, 0), (1, 0), (2, 1)), constant_values=3),
    "pad(x, values=per side)": lambda m, s, v, x, t, z, one, w: m.pad(
        x, ((1, 2), (2, 1)), constant_values=((1, 2), (3, 4))),
    "pad(x, values=(5, 0))": lambda m, s, v, x, t, z, one, w: m.pad(x, 1, constant_values=(5, 0)),
    "pad(x, values=2.5)": lambda m, s, v, x, t, z, one, w: m.pad(x, 1, constant_values=2.5),
    "pad(x, values=-1)": lambda m, s, v, x, t, z, one, w: m.pad(x, 1, constant_values=-1),
    "pad(x, values=x[0, 0])": lambda m, s, v, x, t, z, one, w: m.pad(
        x, (0, 2), constant_values=x[0, 0]),
    "pad(s, 3)": lambda m, s, v, x, t, z, one, w: m.pad(s, 3),
    "pad(z, 1)": lambda m, s, v, x, t, z, one, w: m.pad(z, 1),
    "pad(x, 0)": lambda m, s, v, x, t, z, one, w: m.pad(x, 0),
}
for _mode in ("edge", "reflect", "symmetric", "wrap"):
    PAD_OPS.update({
        f"pad(v, (7, 9), {_mode})": lambda m, s, v, x, t, z, one, w, _mode=_mode: m.pad(
            v, (7, 9), mode=_mode),
        f"pad(x, ((2, 3), (4, 1)), {_mode})": lambda m, s, v, x, t, z, one, w, _mode=_mode: m.pad(
            x, ((2, 3), (4, 1)), mode=_mode),
        f"pad(t, 1, {_mode})": lambda m, s, v, x, t, z, one, w, _mode=_mode: m.pad(
            t, 1, mode=_mode),
        f"pad(one, 2, {_mode})": lambda m, s, v, x, t, z, one, w, _mode=_mode: m.pad(
            one, 2, mode=_mode),
        f"pad(z, ((0, 0), (1, 2)), {_mode})": lambda m, s, v, x, t, z, one, w, _mode=_mode: m.pad(
            z, ((0, 0), (1, 2)), mode=_mode),
        f"pad(x[:, ::2], 3, {_mode})": lambda m, s, v, x, t, z, one, w, _mode=_mode: m.pad(
            x[:, ::2], 3, mode=_mode),
    })

REPLICATE_OPS = {
    "tile(v, 2)": lambda m, s, v, x, t, z, one, w: m.tile(v, 2),
    "tile(x, (2, 1, 3))": lambda m, s, v, x, t, z, one, w: m.tile(x, (2, 1, 3)),
    "tile(t, (2,))": lambda m, s, v, x, t, z, one, w: m.tile(t, (2,)),
    "tile(s, 3)": lambda m, s, v, x, t, z, one, w: m.tile(s, 3),
    "tile(x, 0)": lambda m, s, v, x, t, z, one, w: m.tile(x, 0),
    "tile(z, 2)": lambda m, s, v, x, t, z, one, w: m.tile(z, 2),
    "tile(x, (1, 1))": lambda m, s, v, x, t, z, one, w: m.tile(x, (1, 1)),
    "repeat(v, 3)": lambda m, s, v, x, t, z, one, w: m.repeat(v, 3),
    "repeat(x, 2)": lambda m, s, v, x, t, z, one, w: m.repeat(x, 2),
    "repeat(x, 2, axis=0)": lambda m, s, v, x, t, z, one, w: m.repeat(x, 2, axis=0),
    "repeat(x, [1, 0, 2, 3], axis=1)": lambda m, s, v, x, t, z, one, w: m.repeat(
        x, [1, 0, 2, 3], axis=1),
    "repeat(x, [3] * 4, axis=-1)": lambda m, s, v, x, t, z, one, w: m.repeat(x, [3] * 4, axis=-1),
    "repeat(t, [0, 2], axis=0)": lambda m, s, v, x, t, z, one, w: m.repeat(t, [0, 2], axis=0),
    "repeat(x, 0, axis=1)": lambda m, s, v, x, t, z, one, w: m.repeat(x, 0, axis=1),
    "repeat(s, 4)": lambda m, s, v, x, t, z, one, w: m.repeat(s, 4),
    "repeat(z, 2, axis=1)": lambda m, s, v, x, t, z, one, w: m.repeat(z, 2, axis=1),
    "repeat(w, [1, 2] * 12, axis=1)": lambda m, s, v, x, t, z, one, w: m.repeat(
        w, [1, 2] * 12, axis=1),
    "repeat(x[:, ::2], [1, 2] * 6, axis=None)": lambda m, s, v, x, t, z, one, w: m.repeat(
        x[:, ::2], [1, 2] * 3),
    "resize(v, (3, 4))": lambda m, s, v, x, t, z, one, w: m.resize(v, (3, 4)),
    "resize(x, 5)": lambda m, s, v, x, t, z, one, w: m.resize(x, 5),
    "resize(z, (2, 2))": lambda m, s, v, x, t, z, one, w: m.resize(z, (2, 2)),
    "resize(s, 3)": lambda m, s, v, x, t, z, one, w: m.resize(s, 3),
}

MOVE_OPS = {
    "roll(v, 2)": lambda m, s, v, x, t, z, one, w: m.roll(v, 2),
    "roll(v, -7)": lambda m, s, v, x, t, z, one, w: m.roll(v, -7),
    "roll(x, 5)": lambda m, s, v, x, t, z, one, w: m.roll(x, 5),
    "roll(x, (1, -2), (0, 1))": lambda m, s, v, x, t, z, one, w: m.roll(x, (1, -2), (0, 1)),
    "roll(t, 3, axis=-1)": lambda m, s, v, x, t, z, one, w: m.roll(t, 3, axis=-1),
    "roll(t, (1, 1), (2, 2))": lambda m, s, v, x, t, z, one, w: m.roll(t, (1, 1), (2, 2)),
    "roll(t, 2, (0, 1))": lambda m, s, v, x, t, z, one, w: m.roll(t, 2, (0, 1)),
    "roll(s, 1)": lambda m, s, v, x, t, z, one, w: m.roll(s, 1),
    "roll(one, 1)": lambda m, s, v, x, t, z, one, w: m.roll(one, 1),
    "roll(z, 1, axis=1)": lambda m, s, v, x, t, z, one, w: m.roll(z, 1, axis=1),
    "roll(x, 4, axis=1)": lambda m, s, v, x, t, z, one, w: m.roll(x, 4, axis=1),
    "rot90(x)": lambda m, s, v, x, t, z, one, w: m.rot90(x),
    "rot90(x, 2)": lambda m, s, v, x, t, z, one, w: m.rot90(x, 2),
    "rot90(x, -1)": lambda m, s, v, x, t, z, one, w: m.rot90(x, -1),
    "rot90(x, 4)": lambda m, s, v, x, t, z, one, w: m.rot90(x, 4),
    "rot90(t, 1, (1, 2))": lambda m, s, v, x, t, z, one, w: m.rot90(t, 1, (1, 2)),
    "rot90(t, 3, (2, 0))": lambda m, s, v, x, t, z, one, w: m.rot90(t, 3, (2, 0)),
    "rot90(z)": lambda m, s, v, x, t, z, one, w: m.rot90(z),
    "fliplr(x)": lambda m, s, v, x, t, z, one, w: m.fliplr(x),
    "fliplr(t)": lambda m, s, v, x, t, z, one, w: m.fliplr(t),
    "flipud(v)": lambda m, s, v, x, t, z, one, w: m.flipud(v),
    "flipud(t)": lambda m, s, v, x, t, z, one, w: m.flipud(t),
}

STACK_OPS = {
    "atleast_1d(s)": lambda m, s, v, x, t, z, one, w: m.atleast_1d(s),
    "atleast_1d(v, x)": lambda m, s, v, x, t, z, one, w: m.atleast_1d(v, x),
    "atleast_2d(s)": lambda m, s, v, x, t, z, one, w: m.atleast_2d(s),
    "atleast_2d(v)": lambda m, s, v, x, t, z, one, w: m.atleast_2d(v),
    "atleast_2d(t)": lambda m, s, v, x, t, z, one, w: m.atleast_2d(t),
    "atleast_3d(s, v, x, t)": lambda m, s, v, x, t, z, one, w: m.atleast_3d(s, v, x, t),
    "hstack([v, v])": lambda m, s, v, x, t, z, one, w: m.hstack([v, v]),
    "hstack((x, x[:, :1]))": lambda m, s, v, x, t, z, one, w: m.hstack((x, x[:, :1])),
    "hstack([s, v])": lambda m, s, v, x, t, z, one, w: m.hstack([s, v]),
    "hstack([x, x], dtype=float32)": lambda m, s, v, x, t, z, one, w: m.hstack(
        [x, x], dtype=np.float32),
    "hstack([x, x], dtype=int16)": lambda m, s, v, x, t, z, one, w: m.hstack(
        [x, x], dtype=np.int16),
    "vstack([v, v])": lambda m, s, v, x, t, z, one, w: m.vstack([v, v]),
    "vstack([x, v[:4]])": lambda m, s, v, x, t, z, one, w: m.vstack([x, v[:4]]),
    "vstack([t, t])": lambda m, s, v, x, t, z, one, w: m.vstack([t, t]),
    "dstack([x, x])": lambda m, s, v, x, t, z, one, w: m.dstack([x, x]),
    "dstack([v, v])": lambda m, s, v, x, t, z, one, w: m.dstack([v, v]),
    "dstack([s, s])": lambda m, s, v, x, t, z, one, w: m.dstack([s, s]),
    "column_stack([v, v])": lambda m, s, v, x, t, z, one, w: m.column_stack([v, v]),
    "column_stack([x[:, 0], x])": lambda m, s, v, x, t, z, one, w: m.column_stack([x[:, 0], x]),
    "column_stack([s])": lambda m, s, v, x, t, z, one, w: m.column_stack([s]),
    "append(v, 3)": lambda m, s, v, x, t, z, one, w: m.append(v, 3),
    "append(x, x, axis=0)": lambda m, s, v, x, t, z, one, w: m.append(x, x, axis=0),
    "append(x, [[1, 2, 3, 4]], axis=0)": lambda m, s, v, x, t, z, one, w: m.append(
        x, [[1, 2, 3, 4]], axis=0),
    "append(s, v)": lambda m, s, v, x, t, z, one, w: m.append(s, v),
    "append(z, x[:1, :3], axis=0)": lambda m, s, v, x, t, z, one, w: m.append(z, x[:1, :3], axis=0),
    "insert(v, 2, 9)": lambda m, s, v, x, t, z, one, w: m.insert(v, 2, 9),
    "insert(v, 5, 9)": lambda m, s, v, x, t, z, one, w: m.insert(v, 5, 9),
    "insert(v, [1, 3, 1], [7, 8, 2])": lambda m, s, v, x, t, z, one, w: m.insert(
        v, [1, 3, 1], [7, 8, 2]),
    "insert(x, 1, 5, axis=1)": lambda m, s, v, x, t, z, one, w: m.insert(x, 1, 5, axis=1),
    "insert(x, -1, x[0], axis=0)": lambda m, s, v, x, t, z, one, w: m.insert(x, -1, x[0], axis=0),
    "insert(x, 2, x[:, 0], axis=1)": lambda m, s, v, x, t, z, one, w: m.insert(
        x, 2, x[:, 0], axis=1),
    "insert(x, [2], x[:, :1], axis=1)": lambda m, s, v, x, t, z, one, w: m.insert(
        x, [2], x[:, :1], axis=1),
    "insert(x, [0, 4], x[:, :1], axis=1)": lambda m, s, v, x, t, z, one, w: m.insert(
        x, [0, 4], x[:, :1], axis=1),
    "insert(t, slice(0, 2), 0, axis=2)": lambda m, s, v, x, t, z, one, w: m.insert(
        t, slice(0, 2), 0, axis=2),
    "insert(x, 3, 2.5)": lambda m, s, v, x, t, z, one, w: m.insert(x, 3, 2.5),
    "insert(s, 0, 1)": lambda m, s, v, x, t, z, one, w: m.insert(s, 0, 1),
    "insert(x, 1, v[:4].astype(float64), axis=0)": lambda m, s, v, x, t, z, one, w: m.insert(
        x, 1, v[:4].astype(np.float64), axis=0),
    "delete(v, 1)": lambda m, s, v, x, t, z, one, w: m.delete(v, 1),
    "delete(v, [0, -1])": lambda m, s, v, x, t, z, one, w: m.delete(v, [0, -1]),
    "delete(x, slice(None, None, 2), axis=1)": lambda m, s, v, x, t, z, one, w: m.delete(
        x, slice(None, None, 2), axis=1),
    "delete(t, [True, False], axis=0)": lambda m, s, v, x, t, z, one, w: m.delete(
        t, np.array([True, False]), axis=0),
    "delete(x, [], axis=0)": lambda m, s, v, x, t, z, one, w: m.delete(x, [], axis=0),
    "delete(s, 0)": lambda m, s, v, x, t, z, one, w: m.delete(s, 0),
    "delete(w, [1, 3, 5, 7, 9, 11, 13], axis=1)": lambda m, s, v, x, t, z, one, w: m.delete(
        w, [1, 3, 5, 7, 9, 11, 13], axis=1),
    "meshgrid(v, x[0])": lambda m, s, v, x, t, z, one, w: m.meshgrid(v, x[0]),
    "meshgrid(v, x[0], indexing=ij)": lambda m, s, v, x, t, z, one, w: m.meshgrid(
        v, x[0], indexing="ij"),
    "meshgrid(v, x, s, sparse)": lambda m, s, v, x, t, z, one, w: m.meshgrid(v, x, s, sparse=True),
    "meshgrid(v)": lambda m, s, v, x, t, z, one, w: m.meshgrid(v),
    "meshgrid(v, z[0], x[0])": lambda m, s, v, x, t, z, one, w: m.meshgrid(v, z[:, 0], x[0]),
    "indices((2, 3))": lambda m, s, v, x, t, z, one, w: m.indices((2, 3)),
    "indices((2, 3), dtype=x.dtype)": lambda m, s, v, x, t, z, one, w: m.indices(
        (2, 3), dtype=x.dtype),
    "indices((3, 1, 2), sparse)": lambda m, s, v, x, t, z, one, w: m.indices(
        (3, 1, 2), sparse=True),
}

ALL_OPS = {**PAD_OPS, **REPLICATE_OPS, **MOVE_OPS, **STACK_OPS}


def test_roll_of_a_column_then_a_slice():
    """``roll(a, k)`` (axis None) of an array with one axis longer than 1 rolls along it:
    the flat form, a concatenation expanded back to [31, 1] and sliced, failed to compile
    in IREE 3.13 (fuzz program 109070)."""
    a = np.arange(31, dtype=np.int8).reshape(31, 1)

    def f(m, a):
        return m.roll(a, 1)[0], m.diagonal(m.roll(a, -3)), m.roll(a[None], (2, 1))

    for got, want in zip(aotc.jit(lambda a: f(anp, a))(a), f(np, a)):
        np.testing.assert_array_equal(np.asarray(got), want)


def inputs(dtype):
    shapes = [(), (5,), (3, 4), (2, 3, 4), (0, 3), (1, 1), (4, 24)]
    return [sample(dtype, shape, seed=60 + i) for i, shape in enumerate(shapes)]


def test_rearrange_ops():
    compare_ops(ALL_OPS, *inputs("float32"), where="rearrange ops float32")


# What depends on the dtype: constants cast into it (pad values, inserted scalars),
# promotion (append, hstack's dtype=), and one of each lowering. All dtypes share one
# compile: each op runs on every dtype's (3, 4) array.
DTYPE_OPS = {
    "pad(values=per side)": lambda m, x: m.pad(
        x, ((1, 0), (0, 2)), constant_values=((1, 2), (-1, 2.5))),
    "pad(values=x[0, 0])": lambda m, x: m.pad(x, 1, constant_values=x[0, 0]),
    "pad(reflect)": lambda m, x: m.pad(x, ((2, 3), (5, 1)), mode="reflect"),
    "tile": lambda m, x: m.tile(x, (2, 1, 2)),
    "repeat(per element)": lambda m, x: m.repeat(x, [2, 0, 1], axis=0),
    "repeat(gather)": lambda m, x: m.repeat(x, [1, 2, 1, 3], axis=1),
    "roll": lambda m, x: m.roll(x, (1, -1), (0, 1)),
    "rot90": lambda m, x: m.rot90(x),
    "insert(x, 1, 300)": lambda m, x: m.insert(x, 1, 300, axis=1),
    "insert(x, [0, 2], 1.5)": lambda m, x: m.insert(x, [0, 2], 1.5, axis=0),
    "delete": lambda m, x: m.delete(x, [0, 2], axis=1),
    "append(x, [[1, 2, 3, 4]])": lambda m, x: m.append(x, [[1, 2, 3, 4]], axis=0),
    "hstack(dtype=float32)": lambda m, x: m.hstack([x, x], dtype=np.float32),
    "hstack(dtype=uint8)": lambda m, x: m.hstack([x, x], dtype=np.uint8),
    "column_stack": lambda m, x: m.column_stack([x[0], x[1]]),
    "meshgrid": lambda m, x: m.meshgrid(x[0], x[:, 1]),
    "indices(dtype)": lambda m, x: m.indices((2, 3), dtype=x.dtype),
}


def compare_every_dtype(ops: dict, seed: int, where: str, kinds=None):
    """Runs each one-array op of ``ops`` on a (3, 4) array of every dtype, all in one
    compiled function, against numpy."""
    arrays = [sample(dtype, (3, 4), seed=seed + i) for i, dtype in enumerate(DTYPES)]
    on_each = {f"{name} [{dtype}]": (lambda op, i: lambda m, *xs: op(m, xs[i]))(op, i)
               for name, op in ops.items() for i, dtype in enumerate(DTYPES)}
    compare_ops(on_each, *arrays, kinds=kinds, where=where)


def test_rearrange_all_dtypes():
    compare_every_dtype(DTYPE_OPS, seed=80, where="rearrange ops, every dtype")


def test_pad_empty_mode_shape_and_interior():
    # numpy leaves the padded area of mode="empty" undefined; aotc fills it with zeros.
    x = sample("float32", (3, 4), seed=70)
    got = jit_call(lambda a: anp.pad(a, ((1, 2), (3, 0)), mode="empty"), x)
    assert got.shape == np.pad(x, ((1, 2), (3, 0)), mode="empty").shape
    np.testing.assert_array_equal(got[1:4, 3:], x)
    np.testing.assert_array_equal(got[0], np.zeros(7, np.float32))


def test_broadcast_shapes_is_static():
    got = anp.broadcast_shapes((2, 1, 4), (3, 1), 4)
    assert got == np.broadcast_shapes((2, 1, 4), (3, 1), 4)
    assert anp.broadcast_shapes() == np.broadcast_shapes()


def test_arithmetic_runs():
    """The cut of a position list into runs (first, step, count) that become slices."""
    runs = rearrange.arithmetic_runs
    assert runs(np.array([0, 1, 2, 3])) == [(0, 1, 4)]
    assert runs(np.array([3, 2, 1, 0, 0, 1])) == [(3, -1, 4), (0, 1, 2)]
    assert runs(np.array([2, 2, 2, 5])) == [(2, 0, 3), (5, 1, 1)]
    assert runs(np.array([0, 2, 4, 5])) == [(0, 2, 3), (5, 1, 1)]
    assert runs(np.array([4, 0, 1, 2, 3])) == [(4, 1, 1), (0, 1, 4)]
    assert runs(np.array([7, 3])) == [(7, 1, 1), (3, 1, 1)]
    assert runs(np.array([], np.int64)) == []
    for positions in (np.array([4, 1, 1, 0, 3, 3, 3, 2]), np.repeat(np.arange(6), [1, 2] * 3),
                      np.array([0, 5, 9, 2, 2, 1, 0, 6])):
        rebuilt = np.concatenate([first + step * np.arange(count)
                                  for first, step, count in runs(positions)])
        np.testing.assert_array_equal(rebuilt, positions)


# ---- errors --------------------------------------------------------------------------

X = np.zeros((3, 4), np.float32)


@pytest.mark.parametrize(
    "call, exc, message",
    [
        (lambda x: anp.pad(x, ((1, 2), (3, 4), (5, 6))), aotc.TracingError,
         ["pad: pad_width", "one (before, after) pair per axis of a 2-d array"]),
        (lambda x: anp.pad(x, -1), aotc.TracingError, ["pad_width -1", "negative", ">= 0"]),
        (lambda x: anp.pad(x, 1.5), aotc.TracingError, ["pad: pad_width must be integers", "1.5"]),
        (lambda x: anp.pad(x, x[0, :2].astype(np.int32)), aotc.TracerConversionError,
         ["pad pad_width"]),
        (lambda x: anp.pad(x, 1, mode="mean"), aotc.UnsupportedOpError,
         ["mode 'mean' is not supported", "constant, empty, edge, wrap, reflect, symmetric"]),
        (lambda x: anp.pad(x, 1, mode="bogus"), aotc.TracingError,
         ["mode 'bogus' is not one of numpy's modes"]),
        (lambda x: anp.pad(x, 1, mode=lambda *a: None), aotc.UnsupportedOpError,
         ["a function as mode"]),
        (lambda x: anp.pad(x, 1, mode="edge", constant_values=1), aotc.TracingError,
         ["unsupported keyword arguments for mode 'edge'", "constant_values"]),
        (lambda x: anp.pad(x, 1, mode="reflect", reflect_type="odd"), aotc.UnsupportedOpError,
         ["reflect_type='odd'", "only the default 'even'"]),
        (lambda x: anp.pad(x, 1, constant_values=((1, 2, 3),)), aotc.TracingError,
         ["constant_values"]),
        (lambda x: anp.pad(x, 1, constant_values="a"), aotc.TracingError,
         ["'a' cannot be stored in a float32 array"]),
        (lambda x: anp.pad(x, 1, constant_values=x[0]), aotc.UnsupportedOpError,
         ["must be 0-d", "(4,)"]),
        (lambda x: anp.pad(x[:0], ((1, 0), (0, 0)), mode="wrap"), aotc.TracingError,
         ["can't extend empty axis 0", "'wrap'"]),
        (lambda x: anp.tile(x, -1), aotc.TracingError, ["tile: reps (-1,) must be non-negative"]),
        (lambda x: anp.repeat(x, [1, 2], axis=1), aotc.TracingError,
         ["repeats of shape (2,) do not match axis 1 of length 4"]),
        (lambda x: anp.repeat(x, -2), aotc.TracingError, ["may not contain negative values"]),
        (lambda x: anp.repeat(x, 2.5), aotc.TracingError, ["repeats must be integers"]),
        (lambda x: anp.repeat(x, 2, axis=2), aotc.TracingError, ["axis 2 is out of bounds"]),
        (lambda x: anp.roll(x, (1, 2, 3), (0, 1)), aotc.TracingError,
         ["shift (1, 2, 3) and axis (0, 1)"]),
        (lambda x: anp.roll(x, 1, axis=3), aotc.TracingError, ["axis 3 is out of bounds"]),
        (lambda x: anp.rot90(x, 1, (0,)), aotc.TracingError, ["rot90: axes must name 2 axes"]),
        (lambda x: anp.rot90(x, 1, (1, 1)), aotc.TracingError, ["axes (1, 1) must be different"]),
        (lambda x: anp.rot90(x, 1, (0, 3)), aotc.TracingError,
         ["axes=(0, 3) out of range", "ndim=2"]),
        (lambda x: anp.fliplr(x[0]), aotc.TracingError, ["fliplr: input must be >= 2-d", "(4,)"]),
        (lambda x: anp.flipud(x[0, 0]), aotc.TracingError, ["flipud: input must be >= 1-d"]),
        (lambda x: anp.hstack(x), aotc.TracingError,
         ["hstack: expected a list or tuple of arrays"]),
        (lambda x: anp.vstack([]), aotc.TracingError, ["need at least one array"]),
        (lambda x: anp.hstack([x, x], dtype=np.int8), aotc.UnsupportedDtypeError,
         ["cannot cast array 0 from float32 to int8", "'same_kind'", "casting='unsafe'"]),
        (lambda x: anp.vstack([x, x[0, :3]]), aotc.TracingError, ["must match exactly"]),
        (lambda x: anp.insert(x, 5, 1.0, axis=1), aotc.TracingError,
         ["index 5 is out of bounds for axis 1 with size 4"]),
        (lambda x: anp.insert(x, [0, 9], 1.0, axis=1), aotc.TracingError,
         ["out of bounds for axis 1 with size 4"]),
        (lambda x: anp.insert(x, [[0]], 1.0), aotc.TracingError, ["one dimensional or scalar"]),
        (lambda x: anp.insert(x, 1, x[:2], axis=1), aotc.TracingError,
         ["could not broadcast values"]),
        (lambda x: anp.insert(x.astype(np.uint8), 0, -1), aotc.TracingError,
         ["cannot be stored in a uint8 array"]),
        (lambda x: anp.delete(x, 7, axis=1), aotc.TracingError,
         ["delete: obj 7 for axis 1", "out of bounds"]),
        (lambda x: anp.delete(x, x[0, 0]), aotc.TracerConversionError, ["delete obj"]),
        (lambda x: anp.meshgrid(x, x, indexing="yx"), aotc.TracingError,
         ["indexing must be 'xy' or 'ij'"]),
        (lambda x: anp.resize(x, (2, -1)), aotc.TracingError, ["must be non-negative"]),
        (lambda x: anp.broadcast_shapes((2, 3), (4,)), aotc.TracingError, ["do not broadcast"]),
    ],
    ids=lambda v: None if callable(v) or isinstance(v, (type, list)) else str(v),
)
def test_rearrange_errors(call, exc, message):
    with raises_match(exc, *message):
        aotc.jit(call).lower(X)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_inner_axis_concatenation_at_vector_sizes(dtype):
    """IREE turned a concatenation along an inner axis into transposes around an outer
    one at O3, and got roll(x, -2, axis=-1) of a float32 [8, 100] wrong in 112 of 800
    values (fuzzer program 13558; [4, 100] was right): rolls, concatenations and stacks
    along the last axis of a few shapes, in one compile."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 100)).astype(dtype)
    t = rng.standard_normal((2, 4, 100)).astype(dtype)
    y = rng.standard_normal((8, 33)).astype(dtype)

    def joined(m, x, t, y):
        return (m.roll(x, -2, axis=-1), m.roll(t, 3, axis=-1), m.concatenate([x, y], axis=1),
                m.hstack([y, x, y]), m.roll(x, 7), m.concatenate([t, t[..., :5]], axis=-1))

    got = aotc.jit(lambda x, t, y: joined(anp, x, t, y))(x, t, y)
    for g, w in zip(got, joined(np, x, t, y)):
        np.testing.assert_array_equal(np.asarray(g), w)
