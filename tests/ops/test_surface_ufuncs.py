"""numpy's other ufuncs (aotc/ops/scalar_extra.py: hypot, copysign, fmod, logaddexp, ldexp,
nextafter, spacing, gcd, lcm, ...), the two-result ones and float cleanups
(aotc/ops/float_parts.py), array predicates (aotc/ops/predicates.py) and numpy's dtype
names, against numpy; their vmap against a Python loop; the error of a missing name.

One compiled function per dtype holds every op (conftest.compare_ops); inputs hold every
pair of the dtype's special values (NaN, +-inf, +-0, extremes) and, for floats, values
at the subnormal and overflow edges of ldexp and frexp. Tolerances: conftest's; float64
fmod, remainder, floor_divide and divmod: numpy's bits.
"""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.lax as alax
import aotc.nn as ann
import aotc.numpy as anp
import aotc.random as arandom

from .conftest import (
    FLOATS,
    assert_same,
    compare_ops,
    cross,
    jit_call,
    numpy_ops,
    param_dtypes,
    raises_match,
    sample,
    traced_ops,
)


def _binary(name):
    return lambda m, x, y, e: getattr(m, name)(x, y)


def _unary(name):
    return lambda m, x, y, e: getattr(m, name)(x)


FLOAT_OPS = {
    **{n: _binary(n) for n in ("hypot", "copysign", "fmod", "heaviside", "logaddexp",
                               "logaddexp2", "nextafter", "float_power", "divmod",
                               "isclose", "allclose", "array_equal", "array_equiv")},
    **{n: _unary(n) for n in ("fabs", "deg2rad", "rad2deg", "degrees", "radians", "spacing",
                              "frexp", "modf", "nan_to_num", "isposinf", "isneginf",
                              "isreal")},
    "ldexp(x, e)": lambda m, x, y, e: m.ldexp(x, e),
    "ldexp(x, int64 e)": lambda m, x, y, e: m.ldexp(x, e.astype(np.int64) * 40),
    "ldexp(x, 2)": lambda m, x, y, e: m.ldexp(x, 2),
    "frexp(subnormals)": lambda m, x, y, e: m.frexp(
        (np.finfo(x.dtype).smallest_subnormal * (np.arange(1, 7) ** 3)).astype(x.dtype)),
    "isclose(x, y, equal_nan)": lambda m, x, y, e: m.isclose(x, y, rtol=0.1, atol=0.5,
                                                             equal_nan=True),
    "isclose(x, 1)": lambda m, x, y, e: m.isclose(x, 1),
    "array_equal(x, x, equal_nan)": lambda m, x, y, e: m.array_equal(x, x, equal_nan=True),
    "array_equal(x, x[0])": lambda m, x, y, e: m.array_equal(x, x[0]),
    "array_equiv(x, x[0])": lambda m, x, y, e: m.array_equiv(x, x[:1]),
    "isin(x, y[2])": lambda m, x, y, e: m.isin(x, y[2]),
    "isin(x, y[:2], invert)": lambda m, x, y, e: m.isin(x, y[:2], invert=True),
    "isin(x, empty)": lambda m, x, y, e: m.isin(x, np.zeros(0, x.dtype)),
    "nan_to_num(x, nan=1, posinf=2)": lambda m, x, y, e: m.nan_to_num(x, nan=1.0, posinf=2.0),
    "hypot(huge)": lambda m, x, y, e: m.hypot(np.array(np.finfo(x.dtype).max / 2, x.dtype),
                                              x),
}


def _exponents(shape) -> np.ndarray:
    """Exponents from -40 to 40 (with a few far beyond every float's range)."""
    e = (np.arange(int(np.prod(shape))) % 81 - 40).astype(np.int32).reshape(shape)
    e.flat[:4] = [-5000, 5000, -1100, 1100]
    return e


# Results below the normal range: IREE's CPU code flushes float32 and float64 subnormal
# results to zero (tests/ops/test_elementwise.py), float16 ones (computed in float32) not.
SUBNORMAL_RESULTS = {
    "ldexp(tiny, -e)": lambda m, x, y, e: m.ldexp(
        m.asarray(np.finfo(x.dtype).tiny * 1.375).astype(x.dtype), -abs(e)),
}


@param_dtypes(FLOATS)
def test_float_ufuncs_match_numpy(dtype):
    x, y = cross(dtype)
    ops = {**FLOAT_OPS, **(SUBNORMAL_RESULTS if dtype == "float16" else {})}
    compare_ops(ops, x, y, _exponents(x.shape), where=dtype)


INT_OPS = {
    **{n: _binary(n) for n in ("fmod", "gcd", "lcm", "divmod", "isclose", "array_equal")},
    **{n: _unary(n) for n in ("nan_to_num", "isposinf", "isneginf", "frexp", "modf", "isreal",
                              "fabs", "spacing", "deg2rad")},
    "ldexp(x, e)": lambda m, x, y, e: m.ldexp(x, e),
    "isin(x, y[1])": lambda m, x, y, e: m.isin(x, y[1]),
}


@param_dtypes(["int8", "int32", "int64", "uint8", "uint32", "bool"])
def test_integer_ufuncs_match_numpy(dtype):
    x, y = cross(dtype)
    compare_ops(INT_OPS, x, y, _exponents(x.shape) % 5, where=dtype)


# ---- float64 fmod and what numpy builds on it: bit for bit -------------------------------

F64_EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0, -7.5, 0.1, 1000.0, 2.0**53,
             2.0**53 + 2, 1e30, -3e20, 1e300, np.finfo(np.float64).max, -np.finfo(np.float64).max,
             2.0**-1022, -(2.0**-1022), 5e-324, -5e-324, 1e-310, 2.0**-969, -(2.0**-970)]

FLOAT64_DIVISION = {
    "fmod": lambda m, x, y: m.fmod(x, y),
    "remainder": lambda m, x, y: m.remainder(x, y),
    "x % y": lambda m, x, y: x % y,
    "x % 1000.0": lambda m, x, y: x % 1000.0,
    "floor_divide": lambda m, x, y: m.floor_divide(x, y),
    "x // y": lambda m, x, y: x // y,
    "divmod": lambda m, x, y: m.divmod(x, y),
    "lax.rem": lambda m, x, y: alax.rem(x, y) if m is anp else np.fmod(x, y),
}


def _float64_division_pairs() -> tuple[np.ndarray, np.ndarray]:
    """Every pair of F64_EDGES, then random pairs of both signs: exponents anywhere in the
    range (quotients from below 2**-2000 to 2**2000), subnormal operands, divisors below
    2**-969 (where remainders can be subnormal), and dividends next to multiples of the
    divisor around the quotient 2**53, where the one-fma path ends."""
    rng = np.random.default_rng(5)
    n = 2000

    def signed(values):
        return values * rng.choice([-1.0, 1.0], values.size)

    def anywhere(low=-1075, high=1024):
        return signed(np.ldexp(rng.uniform(1, 2, n), rng.integers(low, high, n)))

    def subnormal():
        return signed(rng.integers(1, 2**52, n).view(np.float64))

    near = anywhere(-900, 900)
    multiples = near * np.ldexp(rng.uniform(1, 2, n), rng.integers(48, 58, n)).round()
    grid_x, grid_y = np.meshgrid(F64_EDGES, F64_EDGES)
    x = [grid_x.ravel(), anywhere(), subnormal(), anywhere(), subnormal(), anywhere(),
         np.nextafter(multiples, rng.choice([-np.inf, np.inf], n))]
    y = [grid_y.ravel(), anywhere(), anywhere(), subnormal(), subnormal(), anywhere(-1074, -960),
         near]
    return np.concatenate(x), np.concatenate(y)


def test_float64_fmod_remainder_and_floor_divide_are_numpys_bit_for_bit():
    """C's fmod is exact, and numpy's %, //, divmod and remainder are built on it: aotc's
    float64 ones must give numpy's bits (NaN: where numpy's is) on ~12,000 pairs, in one
    compiled function (aotc/ops/scalar_fmod.py)."""
    x, y = _float64_division_pairs()
    want, _ = numpy_ops(FLOAT64_DIVISION, x, y)
    got = jit_call(traced_ops(FLOAT64_DIVISION), x, y)
    failures = []
    for name, expected in want.items():
        value = got[name]
        same = (value.view(np.int64) == expected.view(np.int64)) | (np.isnan(value)
                                                                      & np.isnan(expected))
        if not same.all():
            i = np.flatnonzero(~same)[0]
            failures.append(f"{name}: {np.sum(~same)} of {same.size} differ, first "
                            f"x={x[i]!r} y={y[i]!r}: {value[i]!r}, numpy {expected[i]!r}")
    assert not failures, "\n".join(failures)


def test_float16_division_is_numpys_widened_bit_for_bit():
    """numpy's float16 //, %, fmod and divmod are float32's on the widened operands,
    rounded once: every finite float16 by a few divisors, bits equal (a float16 divmod
    rounded ``x - fmod(x, y)`` first: 16376 // 3 gave 5460, numpy 5456)."""
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    x = x[np.isfinite(x)]
    divisors = np.array([3.0, -3.0, 0.7, 7.0, 1e-3, 100.0], np.float16)
    x, y = np.repeat(x, len(divisors)), np.tile(divisors, len(x))
    ops = {"x // y": lambda m, a, b: a // b, "x % y": lambda m, a, b: a % b,
           "fmod": lambda m, a, b: m.fmod(a, b), "divmod": lambda m, a, b: m.divmod(a, b)}
    want, _ = numpy_ops(ops, x, y)
    got = jit_call(traced_ops(ops), x, y)
    for name, expected in want.items():
        same = (got[name].view(np.uint16) == expected.view(np.uint16)) | (
            np.isnan(got[name]) & np.isnan(expected))
        assert same.all(), (f"{name}: {np.sum(~same)} of {same.size} differ, first at "
                            f"x={x[~same][0]!r} y={y[~same][0]!r}")


def test_gcd_worst_cases():
    """Consecutive Fibonacci numbers take Euclid's most steps."""
    fib = [1, 2]
    while fib[-1] < 2**62:
        fib.append(fib[-1] + fib[-2])
    a = np.array(fib[1:], np.int64)
    b = np.array(fib[:-1], np.int64)
    got = jit_call(lambda a, b: (anp.gcd(a, b), anp.lcm(a[:20], b[:20])), a, b)
    assert_same(got[0], np.gcd(a, b))
    assert_same(got[1], np.lcm(a[:20], b[:20]))


def test_sinc_matches_numpy():
    x = np.linspace(-3, 3, 13).astype(np.float32)
    got = jit_call(lambda x: (anp.sinc(x), anp.sinc(x.astype(np.float16))), x)
    np.testing.assert_allclose(got[0], np.sinc(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], np.sinc(x.astype(np.float16)), rtol=2e-3, atol=2e-3)


def test_scalar_questions():
    def f(x):
        assert anp.isscalar(x[0]) and not anp.isscalar(x) and anp.isscalar(1.5)
        assert not anp.isscalar([1.0]) and anp.isscalar(np.float32(1))
        assert anp.iterable(x) and not anp.iterable(x[0]) and anp.isrealobj(x)
        return x

    jit_call(f, np.ones(3, np.float32))


def test_dtype_names_are_numpys():
    # aotc's scalar types (aotc/scalar_types.py) are numpy's dtypes, and numpy's scalars
    # are their instances, as with jax.numpy's
    for name, numpy_type in [("bool", np.bool_), ("double", np.float64), ("single", np.float32),
                             ("int_", np.int64), ("uint", np.uint64), ("float_", np.float64)]:
        assert np.dtype(getattr(anp, name)) == np.dtype(numpy_type), name
        assert isinstance(numpy_type(1), getattr(anp, name)), name
    assert anp.issubdtype(anp.float32, anp.floating)
    assert anp.issubdtype(anp.uint8, anp.unsignedinteger)
    assert not anp.issubdtype(anp.int8, anp.inexact)
    assert anp.promote_types(anp.int8, anp.uint8) == np.int16
    assert anp.finfo(anp.float16).eps == np.finfo(np.float16).eps
    assert anp.iinfo(anp.int8).min == -128 and anp.can_cast(anp.int8, anp.int32)
    assert anp.isdtype(anp.float32, "real floating")


def test_vmap_matches_a_loop():
    xs = sample("float32", (4, 6), seed=3)
    ys = sample("float32", (4, 6), seed=4)

    def per_row(m, x, y):
        mantissa, exponent = m.frexp(x)
        return {"hypot": m.hypot(x, y), "logaddexp": m.logaddexp(x, y),
                "copysign": m.copysign(x, y), "fmod": m.fmod(x, y),
                "nextafter": m.nextafter(x, y), "ldexp": m.ldexp(x, exponent),
                "mantissa": mantissa, "isclose": m.isclose(x, y, atol=1.0),
                "allclose": m.allclose(x, x), "isin": m.isin(x, y),
                "nan_to_num": m.nan_to_num(x), "modf": m.modf(x)[0]}

    got = jit_call(aotc.vmap(lambda x, y: per_row(anp, x, y)), xs, ys)
    with np.errstate(all="ignore"):
        rows = [per_row(np, x, y) for x, y in zip(xs, ys)]
    for name in got:
        assert_same(got[name], np.stack([r[name] for r in rows]), name=name)


# ---- errors -----------------------------------------------------------------------------

def test_ufuncs_without_a_loop_are_refused():
    x = np.ones(3, np.int32)
    with raises_match(aotc.errors.UnsupportedDtypeError, "gcd", "float32"):
        aotc.jit(lambda x: anp.gcd(x, x)).lower(x.astype(np.float32))
    with raises_match(aotc.errors.UnsupportedDtypeError, "ldexp", "float32, float"):
        aotc.jit(lambda x: anp.ldexp(x, 1.5)).lower(x.astype(np.float32))


@pytest.mark.parametrize("module, name, reference", [
    (anp, "polynomial", "numpy.polynomial exists"),
    (anp.linalg, "eig", "numpy.linalg.eig exists"),
    (anp, "no_such_function", None),
    (alax, "no_such_function", None),
    (ann, "no_such_function", None),
    (arandom, "no_such_function", None),
], ids=["numpy.polynomial", "linalg.eig", "numpy", "lax", "nn", "random"])
def test_a_missing_name_says_aotc_does_not_support_it(module, name, reference):
    namespace = {"aotc.linalg": "aotc.numpy.linalg"}.get(module.__name__, module.__name__)
    fragments = [f"aotc does not support {namespace}.{name} yet", "docs/supported.md"]
    with raises_match(AttributeError, *fragments, *([reference] if reference else [])):
        getattr(module, name)
    assert not hasattr(module, name)
    with pytest.raises(AttributeError, match=r"^module 'aotc[.\w]+' has no attribute '__x'$"):
        module.__x
