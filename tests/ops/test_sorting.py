"""sort and argsort against numpy, top_k against jax.lax.top_k.

Values are compared exactly (a sort only moves elements; assert_same treats -0.0 and 0.0
as equal, as numpy's sort does). argsort is compared with numpy's kind="stable", so ties
must keep their order; the data is rounded to few distinct values so that ties, NaNs,
infinities and signed zeros all occur."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.lax as alax
import aotc.numpy as anp

from .conftest import (
    DTYPES,
    assert_all,
    jit_call,
    numpy_ops,
    param_dtypes,
    raises_match,
    sample,
    traced_ops,
)

SHAPES = [(), (0,), (1,), (9,), (4, 6), (3, 0), (2, 3, 5)]


def tied(dtype, shape, seed):
    """Data with many equal elements (and, for floats, NaN, +-inf and +-0.0)."""
    x = sample(dtype, shape, seed=seed, low=-3, high=3)
    return np.round(x) if np.dtype(dtype).kind == "f" else x


SORTS = {
    "sort(1-D)": lambda m, s, e, o, v, a, z, b: m.sort(v),
    "sort(2-D)": lambda m, s, e, o, v, a, z, b: m.sort(a),
    "sort(2-D, axis=0)": lambda m, s, e, o, v, a, z, b: m.sort(a, axis=0),
    "sort(3-D, axis=1)": lambda m, s, e, o, v, a, z, b: m.sort(b, axis=1),
    "sort(3-D, axis=None)": lambda m, s, e, o, v, a, z, b: m.sort(b, axis=None),
    "sort(0-d, axis=None)": lambda m, s, e, o, v, a, z, b: m.sort(s, axis=None),
    "sort(0-d)": lambda m, s, e, o, v, a, z, b: m.sort(s),
    "sort(size 0)": lambda m, s, e, o, v, a, z, b: m.sort(e),
    "sort(size 1)": lambda m, s, e, o, v, a, z, b: m.sort(o),
    "sort(3x0, axis=0)": lambda m, s, e, o, v, a, z, b: m.sort(z, axis=0),
    "argsort(1-D)": lambda m, s, e, o, v, a, z, b: m.argsort(v, kind="stable"),
    "argsort(2-D)": lambda m, s, e, o, v, a, z, b: m.argsort(a, kind="stable"),
    "argsort(2-D, axis=0)": lambda m, s, e, o, v, a, z, b: m.argsort(a, axis=0, kind="stable"),
    "argsort(3-D, axis=-2)": lambda m, s, e, o, v, a, z, b: m.argsort(b, axis=-2, kind="stable"),
    "argsort(3-D, axis=None)": lambda m, s, e, o, v, a, z, b: m.argsort(
        b, axis=None, kind="stable"),
    "argsort(0-d)": lambda m, s, e, o, v, a, z, b: m.argsort(s, kind="stable"),
    "argsort(size 0)": lambda m, s, e, o, v, a, z, b: m.argsort(e, kind="stable"),
    "argsort(size 1)": lambda m, s, e, o, v, a, z, b: m.argsort(o, kind="stable"),
    "argsort(3x0)": lambda m, s, e, o, v, a, z, b: m.argsort(z, kind="stable"),
    "argsort(stable=True)": lambda m, s, e, o, v, a, z, b: m.argsort(a, stable=True),
    "x.argsort()": lambda m, s, e, o, v, a, z, b: a.argsort(kind="stable"),
}


def test_sort_long_rows():
    """Long rows with ties (padded to 2048 and 32768 for the network) keep numpy's stable
    order; 20000 float32 is past the size at which IREE's own sort op overflows its stack."""
    x = np.round(sample("float32", (3, 2000), seed=61, low=-20, high=20))
    y = np.round(sample("float32", (20000,), seed=62, low=-100, high=100))
    got = jit_call(lambda a, b: {"argsort": anp.argsort(a), "sort": anp.sort(a, axis=0),
                                 "argsort 1-D": anp.argsort(b), "sort 1-D": anp.sort(b)}, x, y)
    np.testing.assert_array_equal(got["argsort"], np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(got["sort"], np.sort(x, axis=0))
    np.testing.assert_array_equal(got["argsort 1-D"], np.argsort(y, kind="stable"))
    np.testing.assert_array_equal(got["sort 1-D"], np.sort(y))


def test_sorting_on_vulkan():
    """The same lowering runs on Vulkan (Mesa's lavapipe here), several sorts in one
    function (which IREE 3.13 got wrong for an earlier form of the network)."""
    from aotc.runtime import targets as rt_targets

    if not rt_targets.available_devices("vulkan"):
        pytest.skip("no Vulkan device: apt-get install mesa-vulkan-drivers libvulkan1")
    # whole 4-byte words
    x, i, b = tied("float32", (4, 50), 63), tied("int32", (4, 50), 64), tied("bool", (4, 9), 65)
    got = jit_call(lambda x, i, b: {
        "sort": anp.sort(x), "argsort axis 0": anp.argsort(x, axis=0),
        "sort 1-D": anp.sort(x, axis=None),
        "argsort bool": anp.argsort(b), "top_k": alax.top_k(i, 5), "top_k 1": alax.top_k(i, 1),
    }, x, i, b, target="vulkan")
    np.testing.assert_array_equal(got["sort"], np.sort(x))
    np.testing.assert_array_equal(got["argsort axis 0"], np.argsort(x, axis=0, kind="stable"))
    np.testing.assert_array_equal(got["sort 1-D"], np.sort(x, axis=None))
    np.testing.assert_array_equal(got["argsort bool"], np.argsort(b, kind="stable"))
    for k in (5, 1):
        order = np.argsort(-i.astype(np.int64), axis=-1, kind="stable")[:, :k]
        np.testing.assert_array_equal(got["top_k" if k == 5 else "top_k 1"][1], order)
        np.testing.assert_array_equal(got["top_k" if k == 5 else "top_k 1"][0],
                                      np.take_along_axis(i, order, -1))


TOP_K_SHAPES = {"row": (9,), "batch": (4, 7), "one": (1,), "empty": (3, 0)}
# (operand, k) pairs; k covers 0, 1, a few and the whole axis.
TOP_K_CASES = [("row", 0), ("row", 1), ("row", 3), ("row", 9), ("batch", 1), ("batch", 4),
               ("batch", 7), ("one", 1), ("empty", 0)]


@param_dtypes(DTYPES)
def test_sorting(dtype):
    """sort/argsort against numpy and top_k against jax.lax.top_k, in one compile."""
    jax = pytest.importorskip("jax")
    arrays = [tied(dtype, shape, seed=60 + i) for i, shape in enumerate(SHAPES)]
    operands = {name: tied(dtype, shape, seed=62 + i)
                for i, (name, shape) in enumerate(TOP_K_SHAPES.items())}
    want, rejected = numpy_ops(SORTS, *arrays)
    accepted = {n: op for n, op in SORTS.items() if n not in rejected}

    def fn(arrays, operands):
        return traced_ops(accepted)(*arrays), {f"{n} k={k}": alax.top_k(operands[n], k)
                                               for n, k in TOP_K_CASES}

    got, got_top_k = jit_call(fn, arrays, operands)
    assert_all(got, want, where=f"sorting {dtype}")
    for name in rejected:  # numpy rejects sort of a 0-d array along an axis: so must aotc
        with pytest.raises(aotc.TracingError):
            aotc.jit(traced_ops({name: SORTS[name]})).lower(*arrays)
    with jax.enable_x64(True):
        for n, k in TOP_K_CASES:
            values, indices = (np.asarray(r) for r in jax.lax.top_k(operands[n], k))
            got_values, got_indices = got_top_k[f"{n} k={k}"]
            where = f"top_k({n}, k={k}) {dtype}"
            assert got_values.dtype == values.dtype and got_indices.dtype == np.int32, where
            np.testing.assert_array_equal(got_indices, indices, err_msg=where)
            # signbit too: jax ranks -0.0 below 0.0.
            np.testing.assert_array_equal(got_values, values, err_msg=where)
            np.testing.assert_array_equal(np.signbit(got_values), np.signbit(values), err_msg=where)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda x: anp.sort(x, axis=2), aotc.TracingError,
         ["sort", "axis 2 is out of bounds", "dimension 2"]),
        (lambda x: anp.argsort(x, axis=-3), aotc.TracingError,
         ["argsort", "axis -3 is out of bounds"]),
        (lambda x: anp.sort(x[0, 0]), aotc.TracingError, ["sort", "0-d"]),
        (lambda x: anp.sort(x, order="f"), aotc.TracingError, ["order=", "structured"]),
        (lambda x: alax.top_k(x, 6), aotc.TracingError,
         ["top_k", "k=6", "shape (4, 5)", "last axis size 5"]),
        (lambda x: alax.top_k(x, -1), aotc.TracingError, ["top_k", "k=-1", "between 0"]),
        (lambda x: alax.top_k(x[0, 0], 1), aotc.TracingError, ["top_k", "0-d"]),
        (lambda x: alax.top_k(x, 1.5), aotc.TracingError, ["top_k", "static int", "1.5"]),
    ],
    ids=["sort-axis", "argsort-axis", "sort-0d", "sort-order", "top_k-too-big", "top_k-negative",
         "top_k-0d", "top_k-float-k"],
)
def test_sorting_errors(call, error, message):
    with raises_match(error, *message):
        aotc.jit(call).lower(aotc.ShapeDtypeStruct((4, 5), "float32"))
