"""Shape ops and basic indexing against numpy (exact equality: no arithmetic)."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp

from .conftest import compare_ops, jit_call, param_dtypes, raises_match, sample

SHAPE_OPS = {
    "reshape(6, 4)": lambda m, x: m.reshape(x, (6, 4)),
    "reshape(-1)": lambda m, x: m.reshape(x, -1),
    "reshape(4, -1, 2)": lambda m, x: m.reshape(x, (4, -1, 2)),
    "reshape(1, 24, 1)": lambda m, x: m.reshape(x, (1, 24, 1)),
    "x.reshape(3, 8)": lambda m, x: x.reshape(3, 8),
    "x.reshape((2, -1))": lambda m, x: x.reshape((2, -1)),
    "reshape(x[0, 0, 0], (1, 1))": lambda m, x: m.reshape(x[0, 0, 0], (1, 1)),
    "reshape(x[:0], (0, 5))": lambda m, x: m.reshape(x[:0], (0, 5)),
    "transpose": lambda m, x: m.transpose(x),
    "transpose((1, 0, 2))": lambda m, x: m.transpose(x, (1, 0, 2)),
    "transpose((-1, 0, 1))": lambda m, x: m.transpose(x, (-1, 0, 1)),
    "x.T": lambda m, x: x.T,
    "x.transpose(2, 0, 1)": lambda m, x: x.transpose(2, 0, 1),
    "x.transpose()": lambda m, x: x.transpose(),
    "moveaxis(0, -1)": lambda m, x: m.moveaxis(x, 0, -1),
    "moveaxis([0, 1], [-1, -2])": lambda m, x: m.moveaxis(x, [0, 1], [-1, -2]),
    "swapaxes(0, 2)": lambda m, x: m.swapaxes(x, 0, 2),
    "x.swapaxes(1, -1)": lambda m, x: x.swapaxes(1, -1),
    "expand_dims(0)": lambda m, x: m.expand_dims(x, 0),
    "expand_dims(-1)": lambda m, x: m.expand_dims(x, -1),
    "expand_dims((0, 2))": lambda m, x: m.expand_dims(x, (0, 2)),
    "squeeze(x[:, :1])": lambda m, x: m.squeeze(x[:, :1]),
    "squeeze(x[:1, :, :1], axis=0)": lambda m, x: m.squeeze(x[:1, :, :1], axis=0),
    "squeeze(x[:1, :, :1], axis=(0, -1))": lambda m, x: m.squeeze(x[:1, :, :1], axis=(0, -1)),
    "x[:1].squeeze()": lambda m, x: x[:1].squeeze(),
    "broadcast_to(x[:, :1], (5, 2, 3, 4))": lambda m, x: m.broadcast_to(x[:, :1], (5, 2, 3, 4)),
    "broadcast_to(x[0, 0, 0], 7)": lambda m, x: m.broadcast_to(x[0, 0, 0], 7),
    "broadcast_to(x, x.shape)": lambda m, x: m.broadcast_to(x, (2, 3, 4)),
    "broadcast_arrays(x[:, :1], x[0])": lambda m, x: m.broadcast_arrays(x[:, :1], x[0]),
    "concatenate(axis=0)": lambda m, x: m.concatenate([x, x[:1]], axis=0),
    "concatenate(axis=1)": lambda m, x: m.concatenate([x, x[:, :1], x[:, :0]], axis=1),
    "concatenate(axis=-1)": lambda m, x: m.concatenate((x, x), axis=-1),
    "concatenate(axis=None)": lambda m, x: m.concatenate([x, x[0]], axis=None),
    "concatenate([x])": lambda m, x: m.concatenate([x]),
    "stack(axis=0)": lambda m, x: m.stack([x, x]),
    "stack(axis=-1)": lambda m, x: m.stack([x, x, x], axis=-1),
    "stack(axis=1)": lambda m, x: m.stack([x[0], x[1]], axis=1),
    "stack(0-d)": lambda m, x: m.stack([x[0, 0, 0], x[1, 2, 3]]),
    "split(2)": lambda m, x: m.split(x, 2),
    "split(2, axis=2)": lambda m, x: m.split(x, 2, axis=2),
    "split([1, 3], axis=-1)": lambda m, x: m.split(x, [1, 3], axis=-1),
    "split([1, 1, 5], axis=1)": lambda m, x: m.split(x, [1, 1, 5], axis=1),
    "split([-2], axis=2)": lambda m, x: m.split(x, [-2], axis=2),
    "array_split(3, axis=2)": lambda m, x: m.array_split(x, 3, axis=2),
    "ravel": lambda m, x: m.ravel(x),
    "x.ravel()": lambda m, x: x.ravel(),
    "x.flatten()": lambda m, x: x.flatten(),
    "flip": lambda m, x: m.flip(x),
    "flip(0)": lambda m, x: m.flip(x, 0),
    "flip((0, 2))": lambda m, x: m.flip(x, (0, 2)),
    "flip(-1)": lambda m, x: m.flip(x, axis=-1),
    "transpose(flip(x))[::2]": lambda m, x: m.transpose(m.flip(x, 1))[::2],
}


@param_dtypes(["float32", "int8", "bool", "float64"])
def test_shape_ops(dtype):
    x = sample(dtype, (2, 3, 4), seed=21)
    compare_ops(SHAPE_OPS, x, where=f"shape ops {dtype}")


def test_flatten_is_ravel():
    # numpy has no function np.flatten (only the method): aotc.numpy.flatten is ravel.
    x = sample("int16", (2, 3), seed=22)
    got = jit_call(lambda a: anp.flatten(a), x)
    np.testing.assert_array_equal(got, x.flatten())


def test_shape_ndim_size_are_static():
    """shape/ndim/size and result_type answer at trace time, from the traced array."""
    seen = {}

    def f(a, b):
        seen.update(
            shape=anp.shape(a),
            ndim=anp.ndim(a),
            size=anp.size(a),
            rt=anp.result_type(a, b),
            rt_scalar=anp.result_type(a, 1.5),
            attrs=(a.shape, a.ndim, a.size, a.dtype, len(a)),
        )
        return a

    x = np.zeros((2, 3, 4), np.int8)
    y = np.zeros(3, np.uint8)
    jit_call(f, x, y)
    assert seen == dict(
        shape=np.shape(x),
        ndim=np.ndim(x),
        size=np.size(x),
        rt=np.result_type(x, y),
        rt_scalar=np.result_type(x, 1.5),
        attrs=(x.shape, x.ndim, x.size, x.dtype, len(x)),
    )


MIXED = {
    "concatenate(f32, i8, bool)": lambda m, f, i, b: m.concatenate([f, i, b]),
    "concatenate(i8, u8)": lambda m, f, i, b: m.concatenate([i, i.astype(np.uint8)]),
    "concatenate(b, b)": lambda m, f, i, b: m.concatenate([b, b], axis=None),
    "concatenate(i8, b, axis=None)": lambda m, f, i, b: m.concatenate(
        [i.reshape(2, 3), b], axis=None
    ),
    "concatenate(i8, f32, dtype=float64)": lambda m, f, i, b: m.concatenate(
        [i, f], dtype=np.float64
    ),
    "stack(f32, i8)": lambda m, f, i, b: m.stack([f, i], axis=1),
    "stack(u8, bool)": lambda m, f, i, b: m.stack([i.astype(np.uint8), b]),
    "concatenate(ndarray, x)": lambda m, f, i, b: m.concatenate([np.arange(6, dtype=np.int16), i]),
}


def test_concatenate_stack_mixed_dtypes():
    f = sample("float32", (6,), seed=23)
    i = sample("int8", (6,), seed=24)
    b = sample("bool", (6,), seed=25)
    compare_ops(MIXED, f, i, b, where="mixed concatenate/stack")


# ---- basic indexing -----------------------------------------------------------------------

E = Ellipsis
INDICES = {
    0: [(), None, E, (None, E)],
    1: [
        3,
        -1,
        -7,
        slice(1, 6, 2),
        slice(None, None, -1),
        slice(8, 2, -2),
        slice(-100, 100),
        slice(10, None),
        slice(None, None, 3),
        slice(5, 0, -3),
        (None, slice(None)),
        E,
        (E, None),
        (slice(2, 4), None),
        slice(-3, None),
    ],
    2: [
        1,
        -1,
        (0, 1),
        (-1, -2),
        (slice(None), 1),
        (slice(None), slice(1, 3)),
        (E, slice(None, None, 2)),
        (slice(None, None, -1), slice(None, None, -2)),
        (None, 1, None),
        (1, E),
        (E, 0),
        (slice(3, 1), slice(None)),
        (slice(None, 1), E, None),
        (slice(-2, None), slice(None, -1)),
    ],
    3: [
        (1, 2),
        (E, 1),
        (slice(None), None, 1),
        (0, slice(None, None, -1), slice(1, None, 2)),
        (slice(None), slice(None, None, -2), 1),
        (None, E, None),
        (-1, E),
        (E, -1, slice(1, 3)),
        (1, slice(2, 0, -1), -1),
        (0, 0, 0),
        (slice(None, None, 2), None, slice(None), None, slice(-1, None)),
    ],
    4: [
        1,
        (E, 0),
        (0, E, 0),
        (slice(None), slice(None, None, -1), slice(None, None, 2), 1),
        (None, 1, None, E, slice(3, 0, -2)),
        (-1, -1, -1, -1),
        (slice(1, 2), None, E, slice(0, 1)),
        (slice(None, None, -1), E, slice(None, None, -1)),
        (E, None, 2, slice(None)),
    ],
}
INDEX_SHAPES = {0: (), 1: (10,), 2: (4, 5), 3: (2, 3, 4), 4: (2, 3, 4, 5)}


def _index_op(ndim, idx):
    return lambda m, *xs: xs[ndim][idx]


INDEX_OPS = {
    f"{ndim}-D x[{idx!r}]": _index_op(ndim, idx) for ndim, idxs in INDICES.items() for idx in idxs
}
INDEX_OPS["chained x[1][::-1][None, 0]"] = lambda m, *xs: xs[3][1][::-1][None, 0]
INDEX_OPS["x[np.int64(1), np.int32(-1)]"] = lambda m, *xs: xs[2][np.int64(1), np.int32(-1)]
INDEX_OPS["iterate x"] = lambda m, *xs: list(xs[2])


@param_dtypes(["float32", "int16", "bool"])
def test_basic_indexing(dtype):
    arrays = [sample(dtype, INDEX_SHAPES[n], seed=30 + n) for n in range(5)]
    compare_ops(INDEX_OPS, *arrays, where=f"indexing {dtype}")


# ---- errors ------------------------------------------------------------------------------

X234 = np.zeros((2, 3, 4), np.float32)


@pytest.mark.parametrize(
    "call, exc, message",
    [
        (
            lambda x: x[0, 0, 0, 0],
            aotc.TracingError,
            ["too many indices", "3-dimensional", "4 were indexed"],
        ),
        (lambda x: x[2], aotc.TracingError, ["index 2 is out of bounds for axis 0 with size 2"]),
        (
            lambda x: x[:, -4],
            aotc.TracingError,
            ["index -4 is out of bounds for axis 1 with size 3"],
        ),
        (lambda x: x[..., ...], aotc.TracingError, ["single ellipsis"]),
        (lambda x: x[x > 0], aotc.TracingError, ["boolean mask", "depends on the data"]),
        (lambda x: x[0.5], aotc.TracingError, ["only integers, slices"]),
        (
            lambda x: anp.reshape(x, (5, 5)),
            aotc.TracingError,
            ["cannot reshape array of size 24 into shape (5, 5)"],
        ),
        (lambda x: anp.reshape(x, (-1, 5)), aotc.TracingError, ["cannot reshape array of size 24"]),
        (lambda x: anp.reshape(x, (-1, -1)), aotc.TracingError, ["at most one -1"]),
        (lambda x: anp.transpose(x, (0, 1)), aotc.TracingError, ["not a permutation"]),
        (lambda x: anp.transpose(x, (0, 1, 3)), aotc.TracingError, ["axis 3 is out of bounds"]),
        (
            lambda x: anp.squeeze(x, axis=1),
            aotc.TracingError,
            ["cannot select an axis to squeeze out"],
        ),
        (lambda x: anp.expand_dims(x, 5), aotc.TracingError, ["axis 5 is out of bounds"]),
        (
            lambda x: anp.broadcast_to(x, (3, 4)),
            aotc.TracingError,
            ["cannot broadcast", "(2, 3, 4)"],
        ),
        (lambda x: anp.broadcast_to(x, (2, 5, 4)), aotc.TracingError, ["do not broadcast"]),
        (
            lambda x: anp.concatenate([x, x[0]]),
            aotc.TracingError,
            ["dimensions except for the concatenation axis"],
        ),
        (
            lambda x: anp.concatenate([x, x[:, :2]], axis=0),
            aotc.TracingError,
            ["must match exactly"],
        ),
        (lambda x: anp.concatenate([x[0, 0, 0]]), aotc.TracingError, ["zero-dimensional"]),
        (lambda x: anp.concatenate([]), aotc.TracingError, ["at least one array"]),
        (lambda x: anp.stack([x, x[:1]]), aotc.TracingError, ["same shape"]),
        (lambda x: anp.split(x, 3, axis=2), aotc.TracingError, ["equal division"]),
        (lambda x: anp.moveaxis(x, (0, 1), 2), aotc.TracingError, ["same number of elements"]),
        (lambda x: anp.swapaxes(x, 0, 3), aotc.TracingError, ["axis 3 is out of bounds"]),
        (lambda x: anp.flip(x, 3), aotc.TracingError, ["axis 3 is out of bounds"]),
        (lambda x: x + x[:, :2], aotc.TracingError, ["do not broadcast", "(2, 3, 4)", "(2, 2, 4)"]),
        (lambda x: anp.maximum(x, np.ones(5)), aotc.TracingError, ["do not broadcast"]),
        (lambda x: anp.where(x > 0, x, x[0, :2]), aotc.TracingError, ["do not broadcast"]),
        (lambda x: anp.reshape(x, (24,), order="F"), aotc.UnsupportedOpError, ["order='C'"]),
    ],
    ids=lambda v: None if callable(v) or isinstance(v, (type, list)) else str(v),
)
def test_shape_errors(call, exc, message):
    with raises_match(exc, *message):
        jit_call(call, X234)


def test_numpy_rejects_the_same():
    """For reference: numpy raises on the same programs (message wording differs)."""
    with pytest.raises(IndexError):
        X234[0, 0, 0, 0]
    with pytest.raises(ValueError):
        X234.reshape(5, 5)
    with pytest.raises(ValueError):
        X234 + X234[:, :2]
