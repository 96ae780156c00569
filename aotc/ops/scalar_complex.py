"""Scalar rules of numpy's ufuncs for complex64 and complex128, registered into
``scalar.UFUNC_RULES`` (each rule keeps its real kinds and gains a complex one).

Complex values are MLIR ``complex<f32>``/``complex<f64>`` scalars and the ops are the
``complex`` dialect's (IREE compiles and runs them on CPU and Vulkan, and numpy complex
arrays go in and out of its runtime as they are); where numpy's result is more accurate
than the dialect's formula, the rule builds it from real parts (``sinh``, ``cosh``).
Conversions to and from complex are ``convert_complex`` (numpy's ``astype``: a real
becomes ``x + 0j``; a complex cast to a real type keeps the real part).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .. import dtypes
from .._mlir import arith, complex_dialect as cx, ir, math
from .scalar import KIND_CASTS, UFUNC_RULES, cmpf, const, select


def _parts(z: ir.Value) -> tuple[ir.Value, ir.Value]:
    return cx.ReOp(z).result, cx.ImOp(z).result


def _make(dtype, re: ir.Value, im: ir.Value) -> ir.Value:
    return cx.CreateOp(dtypes.mlir_type(dtype), re, im).result


def convert_complex(value: ir.Value, src: np.dtype, dst: np.dtype, convert) -> ir.Value:
    """numpy's cast from or to a complex dtype (``convert`` casts the real parts)."""
    src_part, dst_part = dtypes.real_dtype(src), dtypes.real_dtype(dst)
    if dtypes.is_complex(src) and dtypes.is_complex(dst):
        re, im = _parts(value)
        return _make(dst, convert(re, src_part, dst_part), convert(im, src_part, dst_part))
    if dtypes.is_complex(src):
        if dtypes.kind(dst) == "bool":
            return cx.NotEqualOp(value, _zero(src)).result
        return convert(cx.ReOp(value).result, src_part, dst)  # numpy drops the imaginary part
    re = convert(value, src, dst_part)
    return _make(dst, re, const(0.0, dst_part))


def _zero(dtype) -> ir.Value:
    return const(0, dtype)


def _op(op_class) -> Callable:
    return lambda dtype, *zs: op_class(*zs).result


def _square(dtype, z):
    return cx.MulOp(z, z).result


def _reciprocal(dtype, z):
    return cx.DivOp(const(1, dtype), z).result


def _scaled_log(base: float) -> Callable:
    def rule(dtype, z):
        re, im = _parts(cx.LogOp(z).result)
        k = const(1.0 / np.log(base), dtypes.real_dtype(dtype))
        return _make(dtype, arith.MulFOp(re, k).result, arith.MulFOp(im, k).result)
    return rule


def _hyperbolic(real_first, real_second) -> Callable:
    """sinh(a+bi) = sinh a cos b + i cosh a sin b; cosh(a+bi) = cosh a cos b + i sinh a sin b:
    from real parts, without the cancellation of (e^z -+ e^-z)/2 near 0."""
    def rule(dtype, z):
        a, b = _parts(z)
        re = arith.MulFOp(real_first(a).result, math.CosOp(b).result).result
        im = arith.MulFOp(real_second(a).result, math.SinOp(b).result).result
        return _make(dtype, re, im)
    return rule


def _either(test) -> Callable:
    """isnan/isinf of a complex: of either part."""
    def rule(dtype, z):
        part = dtypes.real_dtype(dtype)
        re, im = _parts(z)
        return arith.OrIOp(test(part, re), test(part, im)).result
    return rule


def _is_nan(dtype, x):
    return cmpf("uno", x, x)


def _is_inf(dtype, x):
    return cmpf("oeq", math.AbsFOp(x).result, const(np.inf, dtype))


def _is_finite(dtype, z):
    part = dtypes.real_dtype(dtype)
    re, im = _parts(z)
    finite = [cmpf("one", math.AbsFOp(p).result, const(np.inf, part)) for p in (re, im)]
    return arith.AndIOp(*finite).result


def _lexicographic(strict: str, loose: str) -> Callable:
    """numpy orders complex numbers by real part, then imaginary part."""
    def rule(dtype, a, b):
        ar, ai = _parts(a)
        br, bi = _parts(b)
        by_real = cmpf(strict, ar, br)
        tie = arith.AndIOp(cmpf("oeq", ar, br), cmpf(loose, ai, bi)).result
        return arith.OrIOp(by_real, tie).result
    return rule


def _sign(dtype, z):
    # numpy 2: z / |z|, and 0 for 0.
    is_zero = cx.EqualOp(z, _zero(dtype)).result
    return select(is_zero, _zero(dtype), cx.SignOp(z).result)


def _times_i(dtype, z, sign: float = 1.0):
    """i*z (sign 1) or -i*z (sign -1), exactly: a swap of the parts and one negation."""
    re, im = _parts(z)
    if sign > 0:
        return _make(dtype, arith.NegFOp(im).result, re)
    return _make(dtype, im, arith.NegFOp(re).result)


def _arcsinh(dtype, z):
    # asinh z = log1p(z + z^2 / (1 + sqrt(z^2 + 1))): no cancellation near 0; odd, so the
    # left half plane is -asinh(-z) (z + sqrt(z^2 + 1) would cancel there).
    one = const(1, dtype)
    part = dtypes.real_dtype(dtype)
    left = cmpf("olt", cx.ReOp(z).result, const(0.0, part))
    w = select(left, cx.NegOp(z).result, z)
    w2 = cx.MulOp(w, w).result
    root = cx.SqrtOp(cx.AddOp(w2, one).result).result
    value = cx.Log1pOp(cx.AddOp(w, cx.DivOp(w2, cx.AddOp(one, root).result).result).result).result
    return select(left, cx.NegOp(value).result, value)


def _arcsin(dtype, z):
    # asin z = -i asinh(i z)
    return _times_i(dtype, _arcsinh(dtype, _times_i(dtype, z)), -1.0)


def _arccos(dtype, z):
    # acos z = pi/2 - asin z
    return cx.SubOp(const(np.pi / 2, dtype), _arcsin(dtype, z)).result


def _arctanh(dtype, z):
    # atanh z = (log1p(z) - log1p(-z)) / 2
    diff = cx.SubOp(cx.Log1pOp(z).result, cx.Log1pOp(cx.NegOp(z).result).result).result
    return cx.MulOp(diff, const(0.5, dtype)).result


def _arctan(dtype, z):
    # atan z = -i atanh(i z)
    return _times_i(dtype, _arctanh(dtype, _times_i(dtype, z)), -1.0)


def _arccosh(dtype, z):
    # acosh z = log(z + sqrt(z + 1) sqrt(z - 1)): the principal branch (C99's cacosh)
    one = const(1, dtype)
    roots = cx.MulOp(cx.SqrtOp(cx.AddOp(z, one).result).result,
                     cx.SqrtOp(cx.SubOp(z, one).result).result).result
    re, im = _parts(cx.LogOp(cx.AddOp(z, roots).result).result)
    # C99: Re >= 0 and Im has z's imaginary sign (on the cut, the sign of its zero), which
    # rounding in the product above can flip.
    return _make(dtype, math.AbsFOp(re).result, math.CopySignOp(im, cx.ImOp(z).result).result)


# numpy ufunc name -> complex rule (dtype, *complex values) -> value
COMPLEX_RULES: dict[str, Callable] = {
    "add": _op(cx.AddOp),
    "subtract": _op(cx.SubOp),
    "multiply": _op(cx.MulOp),
    "divide": _op(cx.DivOp),
    "negative": _op(cx.NegOp),
    "positive": lambda dtype, z: z,
    "absolute": _op(cx.AbsOp),
    "square": _square,
    "reciprocal": _reciprocal,
    "sign": _sign,
    "exp": _op(cx.ExpOp),
    "expm1": _op(cx.Expm1Op),
    "log": _op(cx.LogOp),
    "log1p": _op(cx.Log1pOp),
    "log2": _scaled_log(2.0),
    "log10": _scaled_log(10.0),
    "sqrt": _op(cx.SqrtOp),
    "power": _op(cx.PowOp),
    "sin": _op(cx.SinOp),
    "cos": _op(cx.CosOp),
    "tan": _op(cx.TanOp),
    "tanh": _op(cx.TanhOp),
    "arcsin": _arcsin,
    "arccos": _arccos,
    "arctan": _arctan,
    "arcsinh": _arcsinh,
    "arccosh": _arccosh,
    "arctanh": _arctanh,
    "sinh": _hyperbolic(math.SinhOp, math.CoshOp),
    "cosh": _hyperbolic(math.CoshOp, math.SinhOp),
    "equal": _op(cx.EqualOp),
    "not_equal": _op(cx.NotEqualOp),
    "less": _lexicographic("olt", "olt"),
    "less_equal": _lexicographic("olt", "ole"),
    "greater": _lexicographic("ogt", "ogt"),
    "greater_equal": _lexicographic("ogt", "oge"),
    "isnan": _either(_is_nan),
    "isinf": _either(_is_inf),
    "isfinite": _is_finite,
}


def _with_complex(real_rule: Callable, complex_rule: Callable) -> Callable:
    def rule(dtype, *xs):
        return (complex_rule if dtypes.is_complex(dtype) else real_rule)(dtype, *xs)
    return rule


for _name, _rule in COMPLEX_RULES.items():
    UFUNC_RULES[_name] = _with_complex(UFUNC_RULES[_name], _rule)
KIND_CASTS["complex"] = convert_complex
