"""cumsum, cumprod, cumulative_sum and cumulative_prod against numpy.

Integer and bool results are exact (the platform-int accumulation wraps the same in any
order); float results use the "accumulate" tolerances of conftest.py, although the scan
adds in numpy's order."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp

from .conftest import DTYPES, compare_ops, jit_call, ops_for, param_dtypes, raises_match, sample

SHAPES = [(), (0,), (1,), (7,), (3, 4), (2, 0, 3)]

CUMULATIVE = {
    "cumsum(0-d)": lambda m, s, e, o, v, a, z: m.cumsum(s),
    "cumsum(0-d, axis=0)": lambda m, s, e, o, v, a, z: m.cumsum(s, axis=0),
    "cumsum(size 0)": lambda m, s, e, o, v, a, z: m.cumsum(e),
    "cumsum(size 1)": lambda m, s, e, o, v, a, z: m.cumsum(o),
    "cumsum(1-D)": lambda m, s, e, o, v, a, z: m.cumsum(v),
    "cumsum(2-D)": lambda m, s, e, o, v, a, z: m.cumsum(a),
    "cumsum(2-D, axis=0)": lambda m, s, e, o, v, a, z: m.cumsum(a, axis=0),
    "cumsum(2-D, axis=-1)": lambda m, s, e, o, v, a, z: m.cumsum(a, axis=-1),
    "cumsum(2x0x3, axis=2)": lambda m, s, e, o, v, a, z: m.cumsum(z, axis=2),
    "cumsum(dtype=float32)": lambda m, s, e, o, v, a, z: m.cumsum(a, axis=1, dtype=np.float32),
    "cumsum(dtype=int8)": lambda m, s, e, o, v, a, z: m.cumsum(a, axis=0, dtype=np.int8),
    "x.cumsum(1)": lambda m, s, e, o, v, a, z: a.cumsum(1),
    "cumprod(1-D)": lambda m, s, e, o, v, a, z: m.cumprod(v),
    "cumprod(2-D, axis=1)": lambda m, s, e, o, v, a, z: m.cumprod(a, axis=1),
    "cumprod(size 0)": lambda m, s, e, o, v, a, z: m.cumprod(e),
    "cumprod(dtype=int16)": lambda m, s, e, o, v, a, z: m.cumprod(a, axis=0, dtype=np.int16),
    "cumulative_sum(1-D)": lambda m, s, e, o, v, a, z: m.cumulative_sum(v),
    "cumulative_sum(axis=0)": lambda m, s, e, o, v, a, z: m.cumulative_sum(a, axis=0),
    "cumulative_sum(include_initial)": lambda m, s, e, o, v, a, z: m.cumulative_sum(
        a, axis=1, include_initial=True),
    "cumulative_sum(2-D, no axis)": lambda m, s, e, o, v, a, z: m.cumulative_sum(a),
    "cumulative_prod(axis=-1)": lambda m, s, e, o, v, a, z: m.cumulative_prod(a, axis=-1),
    "cumulative_prod(size 0, include_initial)": lambda m, s, e, o, v, a, z: m.cumulative_prod(
        e, include_initial=True),
}


@param_dtypes(DTYPES)
def test_cumulative(dtype):
    # Small values so products stay finite in float16 (overflow would not be compared).
    arrays = [sample(dtype, shape, seed=70 + i, low=-2, high=2) for i, shape in enumerate(SHAPES)]
    compare_ops(ops_for(CUMULATIVE, dtype, *arrays), *arrays, kinds="accumulate",
                where=f"cumulative {dtype}")


def test_cumulative_large_float32_matches_numpy_order():
    """1M elements: the scan adds in numpy's order, so the sums agree to the last bit."""
    x = np.random.default_rng(71).standard_normal(1 << 20).astype(np.float32)
    got = np.asarray(aotc.jit(anp.cumsum)(x))
    np.testing.assert_array_equal(got, np.cumsum(x))


def test_cumulative_on_vulkan():
    """iree_linalg_ext.scan compiles and runs on Vulkan (Mesa's lavapipe here)."""
    from aotc.runtime import targets as rt_targets

    if not rt_targets.available_devices("vulkan"):
        pytest.skip("no Vulkan device: apt-get install mesa-vulkan-drivers libvulkan1")
    x = sample("float32", (3, 70), seed=73, with_specials=False, low=-1, high=1)
    i = sample("int8", (4, 70), seed=74)  # whole 4-byte words: Vulkan reads int8 in words
    got = jit_call(lambda x, i: {"cumsum": anp.cumsum(x, axis=1), "cumprod": anp.cumprod(x, axis=0),
                                 "cumsum int8": anp.cumsum(i)}, x, i, target="vulkan")
    np.testing.assert_allclose(got["cumsum"], np.cumsum(x, axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["cumprod"], np.cumprod(x, axis=0), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got["cumsum int8"], np.cumsum(i))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x: anp.cumsum(x, axis=2), ["cumsum", "axis 2 is out of bounds"]),
        (lambda x: anp.cumprod(x, axis=-3), ["cumprod", "axis -3 is out of bounds"]),
        (lambda x: anp.cumulative_sum(x), ["cumulative_sum", "axis argument", "(4, 5)"]),
    ],
    ids=["cumsum-axis", "cumprod-axis", "cumulative_sum-no-axis"],
)
def test_cumulative_errors(call, message):
    with raises_match(aotc.TracingError, *message):
        aotc.jit(call).lower(aotc.ShapeDtypeStruct((4, 5), "float32"))
