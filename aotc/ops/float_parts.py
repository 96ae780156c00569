"""numpy's ufuncs with two results (``frexp``, ``modf``, ``divmod``) and the float
cleanups and tests built from ufuncs (``nan_to_num``, ``isposinf``, ``isneginf``,
``sinc``).

Each two-result ufunc is two elementwise ops over numpy's loop dtypes (IREE fuses them):
frexp's scalar rule is ``scalar_extra.frexp_parts``; modf and divmod are numpy's own
definitions in terms of trunc and floor_divide/remainder.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes, x64
from ..core import Tracer
from ..errors import UnsupportedDtypeError
from .arguments import as_operand, as_tracer
from .elementwise import _operand_type, astype, elementwise, elementwise_where, ufunc
from .scalar import convert
from .scalar_extra import frexp_parts

EXPORTS: dict[str, list[str]] = {
    "numpy": ["frexp", "modf", "divmod", "nan_to_num", "isposinf", "isneginf", "sinc"],
}


def _loop(name: str, x) -> tuple[Tracer, tuple[np.dtype, ...]]:
    """``x`` as a traced array and numpy's loop dtypes of ufunc ``name`` for it."""
    operand = as_operand(x, name)
    loop = dtypes.ufunc_loop(name, (_operand_type(operand),))
    return as_tracer(x, name), loop


def frexp(x) -> tuple[Tracer, Tracer]:
    """numpy.frexp: mantissas in [0.5, 1) (x's sign) and int32 exponents, ``x = m * 2**e``;
    0, +-inf and NaN give (x, 0)."""
    t, (in_dtype, mantissa_dtype, exponent_dtype) = _loop("frexp", x)
    # float16 through float32: its subnormals are normal there, the parts are exact.
    wide = np.dtype(np.float32) if in_dtype == np.float16 else in_dtype

    def part(index: int, out_dtype):
        def body(v):
            value = frexp_parts(wide, convert(v, in_dtype, wide))[index]
            return convert(value, np.int32 if index else wide, out_dtype)
        return elementwise([t], [in_dtype], out_dtype, body, "frexp")

    return part(0, mantissa_dtype), part(1, exponent_dtype)


def modf(x) -> tuple[Tracer, Tracer]:
    """numpy.modf: (fractional part, integral part), both with x's sign (C's modf):
    modf(-2.0) is (-0.0, -2.0), modf(inf) is (0.0, inf)."""
    t, (in_dtype, _, _) = _loop("modf", x)
    t = astype(t, in_dtype)
    integral = ufunc("trunc", t)
    fraction = elementwise_where(ufunc("isinf", t), 0.0, ufunc("subtract", t, integral))
    return ufunc("copysign", fraction, t), integral


def divmod(x1, x2) -> tuple[Tracer, Tracer]:  # noqa: A001 - numpy's name
    """numpy.divmod: ``(floor_divide(x1, x2), remainder(x1, x2))``."""
    return ufunc("floor_divide", x1, x2), ufunc("remainder", x1, x2)


def _infinity_test(name: str, sign: float):
    def test(x) -> Tracer:
        t = as_tracer(x, name)
        if not dtypes.is_float(t.dtype):
            if dtypes.kind(t.dtype) not in ("int", "uint", "bool"):
                raise UnsupportedDtypeError(f"{name}: expected a real array, got {t.dtype}")
            return ufunc("not_equal", t, t)  # all False, in the input's shape
        return ufunc("equal", t, np.array(sign * np.inf, t.dtype))

    test.__name__ = test.__qualname__ = name
    test.__doc__ = f"numpy.{name}: whether each element is {'+' if sign > 0 else '-'}inf."
    return test


isposinf = _infinity_test("isposinf", 1.0)
isneginf = _infinity_test("isneginf", -1.0)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None) -> Tracer:
    """numpy.nan_to_num: NaN to ``nan`` (0.0), +inf to ``posinf`` and -inf to ``neginf``
    (default: the dtype's largest and lowest finite values); integers and bools as they are."""
    t = as_tracer(x, "nan_to_num")
    if not dtypes.is_float(t.dtype):
        return t
    info = np.finfo(t.dtype)
    replacements = ((ufunc("isnan", t), nan),
                    (isposinf(t), info.max if posinf is None else posinf),
                    (isneginf(t), info.min if neginf is None else neginf))
    out = t
    for where, value in replacements:
        out = elementwise_where(where, np.array(value).astype(t.dtype), out)
    return out


def sinc(x) -> Tracer:
    """numpy.sinc: sin(pi x) / (pi x), 1 at 0; integers are computed in float64."""
    t = as_tracer(x, "sinc")
    if not dtypes.is_float(t.dtype):
        t = astype(t, x64.default_float())
    y = ufunc("multiply", np.array(np.pi, t.dtype), t)
    # numpy: where pi * x == 0 it divides sin(eps) by eps (1.0 in every dtype).
    eps = np.array(np.finfo(t.dtype).eps, t.dtype)
    safe = elementwise_where(ufunc("equal", y, 0), eps, y)
    return ufunc("divide", ufunc("sin", safe), safe)
