"""Values that do not fit: numpy 2's rules (NEP 50) for a Python scalar meeting an array
of a narrower dtype, under jit, eagerly and through an exported artifact; ndarray
subclasses whose data alone would mean something else; mixed integer arithmetic numpy
refuses."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from aotc.runtime import ArgumentError, ArgumentOverflowError

import aotc
import aotc.numpy as anp
from aotc import runtime


def _match(*fragments: str) -> str:
    return "(?s)" + "".join(f"(?=.*{re.escape(f)})" for f in fragments)


def _numpy(fn, *args):
    """numpy's answer: its value, or the class of the error it raises."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)
    except (OverflowError, TypeError, ValueError) as e:
        return next(c for c in (OverflowError, TypeError, ValueError) if isinstance(e, c))


multiply = aotc.jit(lambda v, k: v * k)
add = aotc.jit(lambda v, k: v + k)


# (array dtype, Python int): numpy raises OverflowError where the int does not fit.
INT_CASES = [
    (np.int32, 2**40), (np.int32, 2**31), (np.int32, 2**31 - 1), (np.int32, -2**31),
    (np.int32, -2**31 - 1), (np.int8, 127), (np.int8, 128), (np.int8, -129),
    (np.uint8, 255), (np.uint8, 300), (np.uint8, -1), (np.uint16, 70000),
    (np.int64, 2**63 - 1), (np.int64, 2**63), (np.int64, 2**64), (np.int64, -2**63),
]


@pytest.mark.parametrize("dtype,value", INT_CASES)
def test_python_int_argument_as_numpy(dtype, value):
    x = np.arange(3, dtype=dtype)
    want = _numpy(np.multiply, x, value)
    if want is OverflowError:
        with pytest.raises(OverflowError, match=_match("argument 'k'", str(value),
                                                       np.dtype(dtype).name)):
            multiply(x, value)
    else:
        np.testing.assert_array_equal(np.asarray(multiply(x, value)), want)


def test_overflow_error_names_argument_dtype_and_fix():
    with pytest.raises(ArgumentOverflowError) as info:
        multiply(np.arange(3, dtype=np.int32), 2**40)
    message = str(info.value)
    assert "_lambda_(): argument 'k': expected a Python int that fits int32" in message
    assert "got 1099511627776" in message
    assert "Python integer 1099511627776 out of bounds for int32" in message  # numpy's words
    assert "x.astype(np.int64)" in message
    assert isinstance(info.value, ArgumentError)  # and an OverflowError, as numpy's


def test_checked_against_every_dtype_the_argument_meets():
    """One Python int used with an int8 and a uint8 array must fit both."""
    f = aotc.jit(lambda a, b, k: (a + k, b + k))
    a, b = np.zeros(2, np.int8), np.zeros(2, np.uint8)
    out = f(a, b, 100)
    np.testing.assert_array_equal(np.asarray(out[0]), 100)
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        f(a, b, 200)  # fits uint8, not int8
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        f(a, b, -5)


def test_checked_through_vmap():
    """A Python int shared by every example (in_axes=None) is checked as without vmap:
    -1 against uint64 rows would otherwise wrap to 2**64 - 1 (every x < s True)."""
    rows = np.arange(6, dtype=np.uint64).reshape(2, 3)
    f = aotc.jit(aotc.vmap(lambda x, s: x < s, in_axes=(0, None)))
    np.testing.assert_array_equal(np.asarray(f(rows, 2)), rows < 2)
    with pytest.raises(ArgumentOverflowError, match="argument 's'.*fits uint64.*got -1"):
        f(rows, -1)


def test_a_wider_use_does_not_narrow():
    """Computed with an int64 or a float32 array, any int64 is fine (no check needed)."""
    f = aotc.jit(lambda v, w, k: (v * k, w * k))
    big = 2**40
    out = f(np.ones(2, np.int64), np.ones(2, np.float32), big)
    np.testing.assert_array_equal(np.asarray(out[0]), big)
    np.testing.assert_array_equal(np.asarray(out[1]), np.float32(big))


@pytest.mark.parametrize("dtype,value", [(np.float16, 1e10), (np.float16, 70000.0),
                                         (np.float32, 1e300), (np.float16, 2**20),
                                         (np.complex64, 1e300 + 0j)])
def test_python_float_that_overflows_warns_as_numpy(dtype, value):
    x = np.ones(2, dtype)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = np.asarray(multiply(x, value))
    assert any("overflow encountered in cast" in str(w.message) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(got, x * value)
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        multiply(x, value)  # numpy's errstate applies, as to numpy's own cast


def test_python_float_that_fits_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(np.asarray(multiply(np.ones(2, np.float16), 65504.0)),
                                      65504.0)


def test_python_complex_argument_is_weak():
    for dtype in (np.complex64, np.float32, np.float16, np.int64):
        x = np.ones(2, dtype)
        out = multiply(x, 1j)
        assert out.dtype == (x * 1j).dtype
        np.testing.assert_array_equal(np.asarray(out), x * 1j)


COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")


@pytest.mark.parametrize("op", COMPARISONS)
def test_comparisons_with_out_of_range_ints_are_exact(op):
    """numpy compares a Python int with an integer array exactly, in or out of its range
    (uint8 255 == -1 is False: wrapping -1 to uint8 would say True)."""
    u8 = np.array([0, 255, 7], np.uint8)
    as_argument = aotc.jit(eval(f"lambda v, k: v {op} k"))
    for k in (-1, 255, 256, 300, -2**40, 2**62):
        want = eval(f"u8 {op} k")
        np.testing.assert_array_equal(np.asarray(as_argument(u8, k)), want, err_msg=f"{k}")
        constant = aotc.jit(eval(f"lambda v: v {op} {k}"))
        np.testing.assert_array_equal(np.asarray(constant(u8)), want, err_msg=f"{k}")
        mirrored = aotc.jit(eval(f"lambda v: {k} {op} v"))
        np.testing.assert_array_equal(np.asarray(mirrored(u8)), eval(f"{k} {op} u8"))
    for k in (2**70, -2**70):  # beyond int64: constants only (an argument is int64)
        constant = aotc.jit(eval(f"lambda v: v {op} {k}"))
        np.testing.assert_array_equal(np.asarray(constant(u8)), eval(f"u8 {op} k"))


def test_clip_by_an_out_of_range_int_argument():
    u8 = np.array([0, 5, 255], np.uint8)
    f = aotc.jit(lambda a, lo, hi: anp.clip(a, lo, hi))
    for lo, hi in ((-5, 300), (3, 7), (-2**40, 2**40)):
        np.testing.assert_array_equal(np.asarray(f(u8, lo, hi)), np.clip(u8, lo, hi))


def test_python_int_constant_in_the_program():
    u8 = np.arange(3, dtype=np.uint8)
    with pytest.raises(OverflowError, match=_match("add", "Python integer 300 out of bounds "
                                                   "for uint8", "x.astype(np.int64)")):
        aotc.jit(lambda v: v + 300)(u8)
    with pytest.raises(aotc.ScalarOverflowError, match="-1 out of bounds for uint8"):
        aotc.jit(lambda v: v - (-1))(u8)  # noqa: B023


def test_eager_python_int_that_does_not_fit():
    i32 = np.arange(3, dtype=np.int32)
    with pytest.raises(OverflowError, match="1099511627776 out of bounds for int32"):
        anp.multiply(i32, 2**40)
    with pytest.raises(OverflowError, match="300 out of bounds for uint8"):
        anp.asarray(i32.astype(np.uint8)) + 300  # an Array's operator
    np.testing.assert_array_equal(np.asarray(anp.asarray(i32.astype(np.uint8)) + 255),
                                  i32.astype(np.uint8) + 255)


def test_exported_function_checks_python_scalars(tmp_path):
    """The artifact records what each Python scalar argument is computed in, and the
    runtime checks calls against it (a device without the compiler too)."""
    art = aotc.export(lambda v, k: v * k, aotc.ShapeDtypeStruct((3,), "int8"), 0)
    meta = art.functions["_lambda_"]
    assert meta.weak_casts == {"k": ["int8"]} and meta.args[1].dtype == "int64"
    m = runtime.load(art.save(tmp_path / "scale.vmfb"), device="local-sync")
    x = np.arange(3, dtype=np.int8)
    np.testing.assert_array_equal(np.asarray(m["_lambda_"](x, -128)), x * -128)
    with pytest.raises(ArgumentOverflowError, match=_match("argument 'k'", "fits int8",
                                                           "got 128")):
        m["_lambda_"](x, 128)
    with pytest.raises(ArgumentOverflowError, match=_match("fits int8", f"got {2**64}")):
        m["_lambda_"](x, 2**64)
    # Functions without narrowed scalars record nothing (their metadata is as before).
    plain = aotc.export(lambda v, k: v * k, aotc.ShapeDtypeStruct((3,), "int64"), 0)
    assert '"weak_casts"' not in plain.functions["_lambda_"].to_json()


def test_python_int_argument_with_x64_off():
    with aotc.config.override(x64=False):
        f = aotc.jit(lambda v, k: v * k)
        x = np.arange(3, dtype=np.int32)
        with pytest.raises(OverflowError, match=_match("argument 'k'", "fits int32")):
            f(x, 2**40)
        with pytest.raises(OverflowError, match=_match("argument 'k'", "fits int8")):
            f(x.astype(np.int8), 200)
        np.testing.assert_array_equal(np.asarray(f(x, 2**31 - 1)), x * (2**31 - 1))


# ---- mixed integer arithmetic ------------------------------------------------------------

MIXED = {
    "u64 & i64": lambda m, a, b: m.bitwise_and(a, b),
    "u64 ^ i8": lambda m, a, b: m.bitwise_xor(a, b.astype(np.int8)),
    "u64 << i64": lambda m, a, b: m.left_shift(a, b),
    "gcd u64 i64": lambda m, a, b: m.gcd(a, b),
    "u64 + i64": lambda m, a, b: m.add(a, b),
    "u64 // i64": lambda m, a, b: m.floor_divide(a, b),
    "u64 % i64": lambda m, a, b: m.remainder(a, b),
    "u64 max i64": lambda m, a, b: m.maximum(a, b),
    "u64 == i64": lambda m, a, b: m.equal(a, b),
    "u64 @ i64": lambda m, a, b: m.matmul(a, b),
}


@pytest.mark.parametrize("name", sorted(MIXED))
def test_mixed_integer_arithmetic_as_numpy(name):
    """uint64 with a signed int promotes to float64 in numpy, and the ufuncs without a
    float loop (bitwise, shifts, gcd) refuse the pair (TypeError): aotc gives the same."""
    fn = MIXED[name]
    a, b = np.arange(1, 4, dtype=np.uint64), np.arange(1, 4, dtype=np.int64)
    want = _numpy(fn, np, a, b)
    if isinstance(want, type):
        with pytest.raises(want):
            aotc.jit(lambda a, b: fn(anp, a, b))(a, b)
    else:
        got = aotc.jit(lambda a, b: fn(anp, a, b))(a, b)
        assert got.dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(np.asarray(got), want)


def test_integers_to_negative_integer_powers_are_refused():
    x = np.arange(1, 4, dtype=np.int32)
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        np.power(x, -1)  # numpy's behaviour, for reference
    for fn in (lambda v: v ** -1, lambda v: anp.power(v, -2),
               lambda v: anp.power(v, np.array([1, -1, 2], np.int32))):
        with pytest.raises(ValueError, match=_match("Integers to negative integer powers",
                                                    "float_power")):
            aotc.jit(fn)(x)
    np.testing.assert_array_equal(np.asarray(aotc.jit(lambda v: v ** 2)(x)), x ** 2)
    np.testing.assert_allclose(np.asarray(aotc.jit(lambda v: v ** -1.0)(x)), x ** -1.0)


# ---- ndarray subclasses ----------------------------------------------------------------

class Tagged(np.ndarray):
    """A subclass that only adds an attribute: numpy computes on its data."""

    def __array_finalize__(self, obj):
        self.tag = getattr(obj, "tag", "tagged")


class Units(np.ndarray):
    """A subclass that changes what ufuncs compute (as a units library does)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return NotImplemented


def test_masked_array_is_refused_everywhere(tmp_path):
    m = np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    fix = ("masked array", "mask would be dropped", "x.filled(value)", "np.ma.getdata(x)")
    f = aotc.jit(lambda v: v + 1)
    with pytest.raises(ArgumentError, match=_match("argument v", *fix)):
        f(m)
    f(np.ones(3))  # compiled for float64[3]: the fast path must refuse it too
    with pytest.raises(ArgumentError, match=_match("argument 'v'", *fix)):
        f(m)
    with pytest.raises(ArgumentError, match=_match("numpy.add() argument 0", *fix)):
        anp.add(m, 1)
    with pytest.raises(ArgumentError, match=_match("device_put", *fix)):
        runtime.device_put(m, "local-sync")
    with pytest.raises(ArgumentError, match=_match("argument", *fix)):
        aotc.jit(lambda v: v + m)(np.ones(3))  # captured by the function
    art = aotc.export(lambda v: v * 2, aotc.ShapeDtypeStruct((3,), "float64"))
    mod = runtime.load(art.save(tmp_path / "double.vmfb"), device="local-sync")
    with pytest.raises(ArgumentError, match=_match("argument 'v'", *fix)):
        mod["_lambda_"](m)
    np.testing.assert_array_equal(np.asarray(f(m.filled(0.0))), [2.0, 1.0, 4.0])


def test_matrix_and_semantic_subclasses_are_refused():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)  # numpy's, for np.matrix
        mat = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    f = aotc.jit(lambda v: v * v)
    with pytest.raises(ArgumentError, match=_match("np.matrix", "* is a matrix product",
                                                   "np.asarray(x)")):
        f(mat)
    np.testing.assert_array_equal(np.asarray(f(np.asarray(mat))), np.asarray(mat) ** 2)
    with pytest.raises(ArgumentError, match=_match("Units", "__array_ufunc__",
                                                   "np.asarray(x)")):
        f(np.ones(2).view(Units))


def test_plain_subclasses_are_their_data(tmp_path):
    f = aotc.jit(lambda v: v * 2)
    tagged = np.arange(3.0).view(Tagged)
    np.testing.assert_array_equal(np.asarray(f(tagged)), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(anp.multiply(tagged, 2)), [0.0, 2.0, 4.0])
    mapped = np.memmap(tmp_path / "data.bin", np.float64, "w+", shape=(3,))
    mapped[:] = [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(np.asarray(f(mapped)), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(np.asarray(runtime.device_put(mapped, "local-sync")),
                                  [1.0, 2.0, 3.0])
