"""numpy's type promotion for every pair of dtypes, conversion errors on traced values,
unsupported dtypes, and a check that the op tests cover every function of aotc.numpy."""

from __future__ import annotations

import importlib
import pathlib
import re

import numpy as np
import pytest

import aotc
import aotc.numpy as anp

from .conftest import DTYPES, compare_ops, jit_call, param_dtypes, raises_match, sample

PAIR_OPS = ("add", "subtract", "multiply", "divide", "maximum", "less", "bitwise_xor")


def _pair(op, i, j):
    return lambda m, *xs: getattr(m, op)(xs[i], xs[j])


@param_dtypes(DTYPES)
def test_promotion_with_every_dtype(dtype):
    """``lhs <op> rhs`` for this lhs dtype and each of the 9 rhs dtypes: numpy's result
    dtype and values (pairs numpy rejects, like bool - bool, must be rejected too)."""
    arrays = [
        sample(d, (2, 3), seed=70 + k, with_specials=False, low=0, high=3)
        for k, d in enumerate(DTYPES)
    ]
    i = DTYPES.index(dtype)
    ops = {
        f"{op}({dtype}, {other})": _pair(op, i, j)
        for op in PAIR_OPS
        for j, other in enumerate(DTYPES)
    }
    compare_ops(ops, *arrays, where=f"promotion {dtype}")


# ---- values that cannot exist while tracing ------------------------------------------------


def _bool_of(x):
    return x * 2 if bool(x[0] > 0) else x


def _if_of(x):
    if x.sum() > 0:
        return x
    return -x


def _int_of(x):
    return anp.zeros(int(x[0]))


def _float_of(x):
    return x * float(x[0])


def _item_of(x):
    return x + x[0].item()


def _asarray_of(x):
    return np.asarray(x)


def _while_of(x):
    while x[0] < 3:
        x = x + 1
    return x


@pytest.mark.parametrize(
    "fn, what",
    [
        (_bool_of, "bool()"),
        (_if_of, "bool()"),
        (_int_of, "int()"),
        (_float_of, "float()"),
        (_item_of, "item()"),
        (_asarray_of, "conversion to a numpy array"),
        (_while_of, "bool()"),
    ],
    ids=["bool", "if", "int", "float", "item", "np.asarray", "while"],
)
def test_tracer_conversion_errors(fn, what):
    """The error names the function, the file and line that asked, and the fixes."""
    import inspect

    lines, first = inspect.getsourcelines(fn)
    x = np.ones(3, np.float32)
    with pytest.raises(aotc.TracerConversionError) as info:
        jit_call(fn, x)
    message = str(info.value)
    line_numbers = range(first, first + len(lines))
    assert what in message, message
    assert f"'{fn.__name__}'" in message, message
    assert "static_argnums" in message, message
    assert any(f"{__file__}:{n}" in message for n in line_numbers), message
    assert isinstance(info.value, TypeError)  # as numpy/JAX users expect to catch


def test_static_argument_fixes_the_conversion():
    f = aotc.jit(lambda x, n: anp.zeros(int(n)) + x[:1], static_argnums=1)
    got = np.asarray(f(np.ones(3, np.float32), 4))
    np.testing.assert_array_equal(got, np.ones(4))


# ---- dtypes aotc does not support -----------------------------------------------------------

SUPPORTED_LIST = ("bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, "
                  "float32, float64, complex64, complex128")


@pytest.mark.parametrize("dtype", ["longdouble", "clongdouble"])
def test_unsupported_dtype_argument(dtype):
    x = np.ones(3, dtype=dtype)
    with raises_match(aotc.UnsupportedDtypeError, np.dtype(dtype).name, SUPPORTED_LIST):
        jit_call(lambda a: a + 1, x)


def test_unsupported_dtype_in_ops():
    x = np.ones(3, np.float32)
    with raises_match(aotc.UnsupportedDtypeError, "float128", SUPPORTED_LIST):
        jit_call(lambda a: a.astype(np.longdouble), x)
    with raises_match(aotc.UnsupportedDtypeError, "float128", SUPPORTED_LIST):
        jit_call(lambda a: anp.ones(3, dtype=np.longdouble), x)
    with raises_match(aotc.UnsupportedDtypeError, "expected a numpy dtype"):
        jit_call(lambda a: a.astype("not-a-dtype"), x)
    with raises_match(aotc.UnsupportedDtypeError, "complex256"):
        jit_call(lambda a: anp.sum(a, dtype=np.clongdouble), x)


def test_no_loop_for_dtype_is_rejected():
    """Ops numpy has no loop for (bool - bool, float & float, float << int) fail at trace
    time, as in numpy, with the op named."""
    b = np.ones(3, bool)
    f = np.ones(3, np.float32)
    with raises_match(aotc.UnsupportedDtypeError, "subtract", "bool"):
        jit_call(lambda a: a - a, b)
    with raises_match(aotc.UnsupportedDtypeError, "bitwise_and", "float32"):
        jit_call(lambda a: a & a, f)
    with raises_match(aotc.UnsupportedDtypeError, "invert", "float32"):
        jit_call(lambda a: ~a, f)


# ---- coverage ------------------------------------------------------------------------------


def test_every_function_is_tested():
    """Each name in aotc.numpy.supported_functions() is called by some test in tests/ops
    (as ``m.<name>`` / ``anp.<name>`` / ``x.<name>(``, or by name in the ufunc and
    reduction batches)."""
    here = pathlib.Path(__file__).parent
    source = "\n".join(p.read_text() for p in here.glob("test_*.py"))
    used = set(re.findall(r"\b(?:m|anp)\.([a-z_0-9]+)\b", source))
    # batches of ops given by name: ("fmod", "gcd", ...) passed to a getattr helper
    used |= set(re.findall(r'"([a-z_0-9]+)"', source)) & set(anp.supported_functions())
    used |= set(re.findall(r"\bx\.([a-z_0-9]+)\(", source))
    elementwise = importlib.import_module(__package__ + ".test_elementwise")
    reductions = importlib.import_module(__package__ + ".test_reductions")
    used |= (
        set(elementwise.UNARY_UFUNCS) | set(elementwise.BINARY_UFUNCS) | set(reductions.REDUCTIONS)
    )
    missing = sorted(set(anp.supported_functions()) - used)
    assert not missing, f"functions of aotc.numpy without a differential test: {missing}"
