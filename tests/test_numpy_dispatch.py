"""Functions written with plain numpy (``np.``, not ``aotc.numpy``) traced unchanged.

Each program below is ordinary numpy code; it runs once with numpy on numpy arrays and
once traced by aotc.jit / aotc.export on the same inputs, and every result must have
numpy's dtype and shape and match within tests/ops/conftest.py's tolerances (float32:
rtol 2e-6 / atol 1e-6 for exact ops, 1e-5 for transcendental and accumulating ones;
float64 1e-12; integers and bool exactly). Error tests check the messages and only trace
(``lower``), so they cost no compile.
"""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.errors import TracerConversionError, UnsupportedOpError
from ops.conftest import assert_all, jit_call, raises_match, sample

# ---- ordinary numpy code ------------------------------------------------------------------


def mlp(x, w1, b1, w2):
    h = np.maximum(x @ w1 + b1, 0.0)
    return np.tanh(h @ w2)


def softmax(z):
    e = np.exp(z - np.max(z, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def normalize(x, eps=1e-5):
    return (x - np.mean(x, axis=0)) / (np.std(x, axis=0) + eps)


def scale_and_shift(x):
    # numpy constants, numpy scalars and Python scalars mixed with arrays.
    return np.pi * x + np.float32(0.5) * np.e - 2 * np.sqrt(np.abs(x)) + np.inf * 0.0 + 1


def relu_or_leak(x):
    return np.where(x > 0, x, 0.01 * x)


def numpy_programs(x, y, w1, b1, w2, k):
    """Many numpy-written computations of (x: 4x3, y: 3, w1: 3x5, b1: 5, w2: 5x2, k: 4x3
    int32), as one dict; ``k`` mixes integer and float arithmetic."""
    out = {
        "mlp": mlp(x, w1, b1, w2),
        "softmax": softmax(x),
        "softmax(axis 0)": softmax(x.T),
        "normalize": normalize(x),
        "scale_and_shift": scale_and_shift(x),
        "relu_or_leak": relu_or_leak(x),
        "where(x > y, 1, 0)": np.where(x > y, 1, 0),
        "concatenate": np.concatenate([x, np.ones((2, 3), np.float32), x[:1]], axis=0),
        "concatenate(axis=1)": np.concatenate((x, k.astype(np.float32)), axis=1),
        "stack": np.stack([y, y * 2, np.arange(3, dtype=np.float32)]),
        "stack(axis=-1)": np.stack((x, x + 1), axis=-1),
        "add.reduce": np.add.reduce(x),
        "add.reduce(axis=1, keepdims)": np.add.reduce(x, axis=1, keepdims=True),
        "add.reduce(axis=None)": np.add.reduce(k, axis=None),
        "multiply.reduce": np.multiply.reduce(y),
        "maximum.reduce(axis=-1)": np.maximum.reduce(x, axis=-1),
        "minimum.reduce": np.minimum.reduce(k),
        "logical_or.reduce": np.logical_or.reduce(x > 1, axis=1),
        "add.reduce(dtype)": np.add.reduce(k, dtype=np.float64),
        "multiply.outer": np.multiply.outer(y, b1),
        "subtract.outer": np.subtract.outer(x, y),
        "W @ x (numpy array on the left)": w1.T @ x.T,
        "ndarray + x": np.ones((4, 3), np.float32) + x,
        "ndarray < x": np.zeros(3, np.float32) < x,
        "ndarray ** k": np.full((4, 3), 2, np.int32) ** np.abs(k),
        "float32 scalar * x": np.float32(3) * x,
        "exp(dtype=float64)": np.exp(x, dtype=np.float64),
        "add(k, k, dtype=float32)": np.add(k, k, dtype=np.float32),
        "add(where=True)": np.add(x, y, where=True),
        "sum(k) int": np.sum(k, axis=0),
        "mean(k)": np.mean(k),
        "prod(out=None)": np.prod(x, axis=1, out=None),
        "argmax": np.argmax(x, axis=1),
        "clip": np.clip(x, -0.5, 0.5),
        "round": np.round(x * 10),
        "transpose": np.transpose(k),
        "reshape": np.reshape(x, (2, 6)),
        "expand_dims": np.expand_dims(y, 0),
        "squeeze": np.squeeze(np.expand_dims(x, 1), axis=1),
        "flip": np.flip(x, axis=0),
        "broadcast_to": np.broadcast_to(y, (2, 4, 3)),
        "dot": np.dot(x, w1),
        "einsum": np.einsum("ij,jk->ik", x, w1),
        "matmul ufunc": np.matmul(x, w1),
        "swapaxes": np.swapaxes(x, 0, 1),
        "x.sum() method": x.sum(axis=1),
        "x.T.dot": x.T.dot(x),
        "shape": np.array(np.shape(x)),
        "ndim": np.array(np.ndim(x)),
    }
    if hasattr(anp, "cumsum"):
        out["add.accumulate"] = np.add.accumulate(x, axis=1)
        out["cumsum"] = np.cumsum(k)
        out["x.cumsum()"] = x.cumsum(axis=0)
    if hasattr(anp, "cumprod"):
        out["multiply.accumulate"] = np.multiply.accumulate(y)
    if hasattr(anp.linalg, "norm"):
        out["linalg.norm"] = np.linalg.norm(x)
        out["linalg.norm(axis=1)"] = np.linalg.norm(x, axis=1)
    if hasattr(anp, "take"):
        out["take"] = np.take(x, np.array([2, 0, 1]), axis=1)
        out["x.take()"] = x.take(np.array([3, 0]), axis=0)
    if hasattr(anp, "argsort"):
        out["x.argsort()"] = x.argsort(axis=1)
    if hasattr(anp, "compress"):
        out["x.compress()"] = x.compress(np.array([True, False, True]), axis=1)
    if hasattr(anp, "repeat"):
        out["x.repeat()"] = k.repeat(2, axis=0)
    if hasattr(anp, "diagonal") and hasattr(anp, "trace"):
        out["x.diagonal()"] = x.diagonal()
        out["np.trace"] = np.trace(k, offset=1)
    return out


def _inputs():
    x = sample("float32", (4, 3), seed=1, with_specials=False, low=-2, high=2)
    y = sample("float32", (3,), seed=2, with_specials=False, low=-2, high=2)
    w1 = sample("float32", (3, 5), seed=3, with_specials=False, low=-1, high=1)
    b1 = sample("float32", (5,), seed=4, with_specials=False, low=-1, high=1)
    w2 = sample("float32", (5, 2), seed=5, with_specials=False, low=-1, high=1)
    k = sample("int32", (4, 3), seed=6, with_specials=False, low=-3, high=3)
    return x, y, w1, b1, w2, k


def _kind(name: str) -> str:
    words = ("mlp", "softmax", "normalize", "scale", "exp", "tanh", "reduce", "accumulate",
             "sum", "mean", "prod", "dot", "@", "einsum", "matmul", "norm", "cumsum", "outer")
    return "accumulate" if any(w in name for w in words) else "exact"


def test_numpy_written_programs_match_numpy():
    args = _inputs()
    with np.errstate(all="ignore"):
        want = {k: np.asarray(v) for k, v in numpy_programs(*args).items()}
    got = jit_call(numpy_programs, *args)
    assert_all(got, want, _kind, "numpy-written programs")


# name -> (applies to x, numpy-written op)
UFUNC_PROGRAMS = {
    "negative": (lambda x: x.dtype != np.bool_, lambda x: np.negative(x)),
    "absolute": (lambda x: True, lambda x: np.absolute(x)),
    "square": (lambda x: True, lambda x: np.square(x)),
    "maximum(x, 1)": (lambda x: True, lambda x: np.maximum(x, 1)),
    "add(x, x)": (lambda x: True, lambda x: np.add(x, x)),
    "multiply(x, 3)": (lambda x: True, lambda x: np.multiply(x, 3)),
    "equal(x, 0)": (lambda x: True, lambda x: np.equal(x, 0)),
    "where(x > 1, x, 1)": (lambda x: True, lambda x: np.where(x > 1, x, 1)),
    "sum": (lambda x: True, lambda x: np.sum(x)),
    "sum(axis=-1, keepdims)": (lambda x: x.ndim > 0, lambda x: np.sum(x, axis=-1, keepdims=True)),
    "max": (lambda x: x.size > 0, lambda x: np.max(x)),
    "add.reduce": (lambda x: True, lambda x: np.add.reduce(x)),
    "add.reduce(axis=None)": (lambda x: True, lambda x: np.add.reduce(x, axis=None)),
    "maximum.reduce(axis=-1)": (
        lambda x: x.ndim > 0 and x.shape[-1] > 0,
        lambda x: np.maximum.reduce(x, axis=-1),
    ),
    "multiply.outer": (lambda x: True, lambda x: np.multiply.outer(x, x)),
    "concatenate": (
        lambda x: True,
        lambda x: np.concatenate([np.reshape(x, (-1,)), np.zeros(2, x.dtype)]),
    ),
    "stack": (lambda x: True, lambda x: np.stack([x, x])),
    "add(dtype=float64)": (lambda x: True, lambda x: np.add(x, x, dtype=np.float64)),
}


if hasattr(anp, "cumsum") and hasattr(anp, "cumprod"):  # int8 and bool accumulate in int64
    UFUNC_PROGRAMS["add.accumulate"] = (lambda x: x.ndim > 0, lambda x: np.add.accumulate(x))
    UFUNC_PROGRAMS["multiply.accumulate(axis=-1)"] = (
        lambda x: x.ndim > 0,
        lambda x: np.multiply.accumulate(x, axis=-1),
    )


def _ufunc_batch(*xs):
    return {f"{name} [{i}]": op(x) for i, x in enumerate(xs)
            for name, (applies, op) in UFUNC_PROGRAMS.items() if applies(x)}


@pytest.mark.parametrize("dtype", ["float64", "int8", "bool"])
def test_numpy_ufuncs_and_functions_over_shapes_and_dtypes(dtype):
    """0-d, size 1, size 0 and 2-D operands, one compile per dtype."""
    xs = [sample(dtype, shape, seed=i) for i, shape in enumerate([(), (1,), (0, 3), (2, 3)])]
    with np.errstate(all="ignore"):
        want = {k: np.asarray(v) for k, v in _ufunc_batch(*xs).items()}
    got = jit_call(_ufunc_batch, *xs)
    assert_all(got, want, lambda n: "accumulate" if "sum" in n or "reduce" in n else "exact", dtype)


def test_numpy_written_mlp_exports_and_runs():
    x, _, w1, b1, w2, _ = _inputs()

    def predict(x):
        return softmax(mlp(x, w1, b1, w2))  # weights captured: constants of the artifact

    art = aotc.export(predict, aotc.ShapeDtypeStruct(x.shape, "float32"))
    got = np.asarray(art.load().predict(x))
    assert_all({"predict": got}, {"predict": predict(x)}, "accumulate", "exported numpy MLP")


# ---- errors -----------------------------------------------------------------------------


def _trace(fn, *shapes):
    return aotc.jit(fn).lower(*(aotc.ShapeDtypeStruct(s, "float32") for s in shapes))


SUPPORTED = ("aotc.numpy.supported_functions()", "docs/supported.md")


def test_uncovered_function_is_named():
    with raises_match(UnsupportedOpError, "numpy.linalg.eig is not supported in traced code",
                      f"(at {__file__}:", *SUPPORTED):
        _trace(lambda x: np.linalg.eig(x), (4, 4))
    with raises_match(UnsupportedOpError, "numpy.polyfit is not supported", *SUPPORTED):
        _trace(lambda x: np.polyfit(x, x, 1), (4,))


def test_uncovered_ufunc_and_methods_are_named():
    with raises_match(UnsupportedOpError, "numpy.add.reduceat is not supported", *SUPPORTED):
        _trace(lambda x: np.add.reduceat(x, [0, 2]), (4,))
    with raises_match(UnsupportedOpError, "numpy.bitwise_or.reduce is not supported"):
        _trace(lambda x: np.bitwise_or.reduce(x.astype(np.int32)), (4,))
    with raises_match(UnsupportedOpError, "numpy.negative.at", "in-place",
                      "x = x.at[indices].set(numpy.negative(x[indices], values))"):
        _trace(lambda x: np.negative.at(x, [0]), (4,))
    with raises_match(UnsupportedOpError, "numpy.isnat is not supported"):
        _trace(lambda x: np.isnat(x), (4,))


def test_out_and_where_arguments_are_refused():
    with raises_match(UnsupportedOpError, "numpy.add with out=", "a = a + b"):
        _trace(lambda x: np.add(x, 1, out=np.zeros(4, np.float32)), (4,))
    with raises_match(UnsupportedOpError, "numpy.sum with out="):
        _trace(lambda x: np.sum(x, out=np.zeros(())), (4,))
    with raises_match(UnsupportedOpError, "numpy.exp with where=",
                      "aotc.numpy.where(mask, result, other)"):
        _trace(lambda x: np.exp(x, where=x > 0), (4,))
    with raises_match(UnsupportedOpError, "numpy.mean with where="):
        _trace(lambda x: np.mean(x, where=x > 0), (4,))

    def add_into_numpy_array(x):
        acc = np.zeros(4, np.float32)
        acc += x
        return acc

    with raises_match(UnsupportedOpError, "out=", "`a += b` when `a` is a numpy array"):
        _trace(add_into_numpy_array, (4,))


def test_unsupported_keyword_is_named():
    with raises_match(UnsupportedOpError, "numpy.var with these arguments", "correction=",
                      "aotc.numpy.var("):
        _trace(lambda x: np.var(x, correction=1), (4,))
    with raises_match(UnsupportedOpError, "numpy.add with these arguments", "casting="):
        _trace(lambda x: np.add(x, 1, casting="unsafe"), (4,))


IN_PLACE = {
    # (in-place methods numpy has that aotc does not write in place yet)
    "resize": (lambda x: x.resize((2, 2)), "x.resize(...)", "aotc.numpy.reshape(x, new_shape)"),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_methods_point_to_functional_form(name):
    fn, call, fix = IN_PLACE[name]
    with raises_match(UnsupportedOpError, call, "in place", fix):
        _trace(fn, (4,))


def test_asarray_of_tracer_is_a_clear_error():
    with raises_match(TracerConversionError, "np.asarray / np.array", "float32[4]",
                      "test_numpy_dispatch.py", "drop the conversion", "aotc.numpy.asarray"):
        _trace(lambda x: np.asarray(x), (4,))
    with raises_match(TracerConversionError, "np.asarray / np.array"):
        _trace(lambda x: np.array([x, x]), (4,))


def test_method_without_counterpart_is_named():
    from aotc import numpy_dispatch

    with raises_match(UnsupportedOpError, "the array method .no_such_method() is not supported",
                      *SUPPORTED):
        _trace(lambda x: numpy_dispatch.array_method(x, "no_such_method", (), {}), (4,))


def test_ufunc_dtype_follows_numpy_casting_rules():
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' input 0"):
        _trace(lambda x: np.add(x, x, dtype=np.int32), (4,))


def test_other_array_libraries_get_their_turn():
    """A third array type in the call: numpy asks it too (we return NotImplemented)."""

    class Other:
        def __array_function__(self, func, types, args, kwargs):
            return "other"

        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
            return "other"

    seen = {}

    def f(x):
        seen["function"] = np.concatenate([x, Other()])
        seen["ufunc"] = np.add(x, Other())
        return x

    _trace(f, (4,))
    assert seen == {"function": "other", "ufunc": "other"}
