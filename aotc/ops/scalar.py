"""Scalar arithmetic inside linalg bodies, with numpy's semantics per dtype kind.

Each numpy ufunc maps to a rule: ``rule(dtype, *values) -> value``, where ``dtype`` is the
numpy loop dtype (the dtype numpy computes in) and the values are MLIR scalars of that
type. Rules that differ by dtype kind are tables keyed by kind ("float", "int", "uint",
"bool"); a kind missing from a table means numpy has no loop for it either.
"""

from __future__ import annotations

import operator
from typing import Callable

import numpy as np

from .. import dtypes
from .._mlir import arith, ir, math
from . import scalar_fmod
from .scalar_builders import cmpf, cmpi, const, logical_not, select
from .scalar_power import float_power

Rule = Callable[..., ir.Value]


# ---- conversions ------------------------------------------------------------------------

# Casts from or to a dtype kind whose rules live in their own module (complex:
# ops/scalar_complex.py registers ``convert_complex``): kind -> cast(value, src, dst, convert).
KIND_CASTS: dict[str, Callable] = {}


def convert(value: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    """Casts a scalar as numpy's ``astype`` does (C casts; float->bool is x != 0)."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return value
    if "complex" in (dtypes.kind(src), dtypes.kind(dst)):
        return KIND_CASTS["complex"](value, src, dst, convert)
    sk, dk = dtypes.kind(src), dtypes.kind(dst)
    sb, db = dtypes.info(src).bits, dtypes.info(dst).bits
    ty = dtypes.mlir_type(dst)
    if dk == "bool":
        zero = const(0, src)
        return cmpf("une", value, zero) if sk == "float" else cmpi("ne", value, zero)
    if sk == "float" and dk == "float":
        return (arith.ExtFOp if db > sb else arith.TruncFOp)(ty, value).result
    if sk == "float":
        return (arith.FPToSIOp if dk == "int" else arith.FPToUIOp)(ty, value).result
    if dk == "float":
        signed = sk == "int"
        return (arith.SIToFPOp if signed else arith.UIToFPOp)(ty, value).result
    if db == sb:
        return value  # int8 <-> uint8: same bits, signless in MLIR
    if db < sb:
        return arith.TruncIOp(ty, value).result
    return (arith.ExtSIOp if sk == "int" else arith.ExtUIOp)(ty, value).result


# ---- helpers to build rule tables ---------------------------------------------------------

def by_kind(**rules: Rule) -> Rule:
    """A rule that dispatches on the loop dtype's kind; ``int`` covers ``uint`` unless given."""
    def rule(dtype, *xs):
        k = dtypes.kind(dtype)
        fn = rules.get(k) or (rules.get("int") if k == "uint" else None)
        if fn is None:
            raise NotImplementedError(f"no {k} rule")
        return fn(dtype, *xs)
    return rule


def op(builder) -> Rule:
    """A rule from an arith/math op class taking its operands only."""
    return lambda dtype, *xs: builder(*xs).result


# ---- numpy-exact integer and float division ----------------------------------------------

def _guarded_signed_divisor(dtype, b):
    """(b or 1 where division would trap, b == 0, b == -1). x // 0 and x % 0 are 0 in
    numpy; INT_MIN // -1 wraps to INT_MIN. Both trap in hardware division."""
    b_is_zero = cmpi("eq", b, const(0, dtype))
    b_is_minus_one = cmpi("eq", b, const(-1, dtype))
    safe_b = select(arith.OrIOp(b_is_zero, b_is_minus_one).result, const(1, dtype), b)
    return safe_b, b_is_zero, b_is_minus_one


def _int_floor_divide(dtype, a, b):
    zero = const(0, dtype)
    safe_b, b_is_zero, b_is_minus_one = _guarded_signed_divisor(dtype, b)
    q = arith.FloorDivSIOp(a, safe_b).result
    q = select(b_is_minus_one, arith.SubIOp(zero, a).result, q)
    return select(b_is_zero, zero, q)


def _int_remainder(dtype, a, b):
    zero = const(0, dtype)
    safe_b, b_is_zero, b_is_minus_one = _guarded_signed_divisor(dtype, b)
    r = arith.RemSIOp(a, safe_b).result
    # numpy's remainder takes the sign of the divisor.
    fix = arith.AndIOp(cmpi("ne", r, zero),
                       arith.XOrIOp(cmpi("slt", r, zero), cmpi("slt", safe_b, zero)).result).result
    r = select(fix, arith.AddIOp(r, safe_b).result, r)
    return select(arith.OrIOp(b_is_zero, b_is_minus_one).result, zero, r)


def _uint_division(op_class):
    """Unsigned // or %: a zero divisor gives 0, as in numpy."""
    def rule(dtype, a, b):
        zero = const(0, dtype)
        b_is_zero = cmpi("eq", b, zero)
        return select(b_is_zero, zero, op_class(a, select(b_is_zero, const(1, dtype), b)).result)
    return rule


_uint_floor_divide = _uint_division(arith.DivUIOp)
_uint_remainder = _uint_division(arith.RemUIOp)


def _fmod(dtype, a, b):
    """C fmod: arith.remf, which IREE lowers exactly, except float64 (scalar_fmod.py: there
    it is a libm call IREE's CPU code does not link)."""
    if np.dtype(dtype) == np.float64:
        return scalar_fmod.fmod_float64(a, b)
    return arith.RemFOp(a, b).result


def _float_divmod(dtype, a, b):
    """numpy's npy_divmod: (floor quotient, remainder with the divisor's sign); float64 in
    scalar_fmod.divmod_float64, which keeps it clear of subnormals."""
    if np.dtype(dtype) == np.float64:
        return scalar_fmod.divmod_float64(a, b, _npy_divmod)
    return _npy_divmod(dtype, a, b, _fmod(dtype, a, b))


def _npy_divmod(dtype, a, b, mod, nonzero=None, negative=None, dividend=None,
                b_is_zero=None):
    """npy_divmod from mod = fmod(a, b). ``nonzero``/``negative`` test mod and b (float
    compares unless given), ``dividend`` stands for a in a / b (a unless given), and
    ``b_is_zero`` is b == 0 (the float compare unless given)."""
    zero = const(0.0, dtype)
    nonzero = nonzero or (lambda x: cmpf("une", x, zero))
    negative = negative or (lambda x: cmpf("olt", x, zero))
    true_div = arith.DivFOp(a if dividend is None else dividend, b).result
    div = arith.DivFOp(arith.SubFOp(a, mod).result, b).result
    mod_nonzero = nonzero(mod)
    signs_differ = arith.XOrIOp(negative(b), negative(mod)).result
    adjust = arith.AndIOp(mod_nonzero, signs_differ).result
    mod = select(adjust, arith.AddFOp(mod, b).result, mod)
    div = select(adjust, arith.SubFOp(div, const(1.0, dtype)).result, div)
    mod = select(mod_nonzero, mod, math.CopySignOp(zero, b).result)
    floordiv = math.FloorOp(div).result
    round_up = cmpf("ogt", arith.SubFOp(div, floordiv).result, const(0.5, dtype))
    floordiv = select(round_up, arith.AddFOp(floordiv, const(1.0, dtype)).result, floordiv)
    floordiv = select(cmpf("une", div, zero), floordiv, math.CopySignOp(zero, true_div).result)
    # Division by zero: numpy gives a/b (inf or nan) for the quotient, nan for the rest.
    b_is_zero = cmpf("oeq", b, zero) if b_is_zero is None else b_is_zero
    floordiv = select(b_is_zero, true_div, floordiv)
    mod = select(b_is_zero, const(np.nan, dtype), mod)
    return floordiv, mod


def _float_floor_divide(dtype, a, b):
    return _float_divmod(dtype, a, b)[0]


def _float_remainder(dtype, a, b):
    return _float_divmod(dtype, a, b)[1]


def _int_power(dtype, a, e):
    """Exponentiation by squaring over every exponent bit, with numpy's wrap-around.

    Negative exponents (which numpy rejects for integer arrays) give JAX's answer:
    1 for base 1, +-1 for base -1, else 0.
    """
    bits = dtypes.info(dtype).bits
    one, zero = const(1, dtype), const(0, dtype)
    result, base = one, a
    for i in range(bits):
        bit = arith.AndIOp(arith.ShRUIOp(e, const(i, dtype)).result, one).result
        result = select(cmpi("ne", bit, zero), arith.MulIOp(result, base).result, result)
        base = arith.MulIOp(base, base).result
    if dtypes.kind(dtype) == "uint":
        return result
    minus_one = const(-1, dtype)
    odd = cmpi("ne", arith.AndIOp(e, one).result, zero)
    negative_result = select(
        cmpi("eq", a, one), one,
        select(cmpi("eq", a, minus_one), select(odd, minus_one, one), zero),
    )
    return select(cmpi("slt", e, zero), negative_result, result)


def _float_sign(dtype, x):
    """numpy's: 1, -1, 0 (also for -0.0) or NaN."""
    zero, one, minus_one = const(0.0, dtype), const(1.0, dtype), const(-1.0, dtype)
    zero_or_nan = select(cmpf("oeq", x, zero), zero, x)
    return select(cmpf("ogt", x, zero), one, select(cmpf("olt", x, zero), minus_one, zero_or_nan))


def _int_sign(dtype, x):
    zero, one, minus_one = const(0, dtype), const(1, dtype), const(-1, dtype)
    return select(cmpi("sgt", x, zero), one, select(cmpi("slt", x, zero), minus_one, zero))


def _uint_sign(dtype, x):
    return select(cmpi("ne", x, const(0, dtype)), const(1, dtype), const(0, dtype))


def _compare(float_pred: str, int_pred: str, uint_pred: str) -> Rule:
    return by_kind(
        float=lambda dt, a, b: cmpf(float_pred, a, b),
        int=lambda dt, a, b: cmpi(int_pred, a, b),
        uint=lambda dt, a, b: cmpi(uint_pred, a, b),
        bool=lambda dt, a, b: cmpi(uint_pred, a, b),
    )


# numpy's comparison loops for uint64 against int64 (``qQ->?``, ``Qq->?``) compare the
# values exactly, with no common dtype: a negative signed operand is below every unsigned
# one, else both compare as unsigned. ``ufunc name -> Python comparison``.
_MIXED_SIGN_COMPARISONS = {
    "equal": operator.eq, "not_equal": operator.ne, "less": operator.lt,
    "less_equal": operator.le, "greater": operator.gt, "greater_equal": operator.ge,
}


def _mixed_sign_compare(name: str, in_dtypes) -> Callable[..., ir.Value]:
    signed_first = dtypes.kind(in_dtypes[0]) == "int"
    signed_dtype = in_dtypes[0 if signed_first else 1]
    compare = _MIXED_SIGN_COMPARISONS[name]
    # The answer while the signed operand is negative (-1 stands for any negative value).
    if_negative = compare(-1, 0) if signed_first else compare(0, -1)
    unsigned_rule = UFUNC_RULES[name]

    def body(a, b):
        negative = cmpi("slt", a if signed_first else b, const(0, signed_dtype))
        as_unsigned = unsigned_rule(in_dtypes[1 if signed_first else 0], a, b)
        return select(negative, const(if_negative, np.bool_), as_unsigned)
    return body


def loop_body(name: str, in_dtypes) -> Callable[..., ir.Value]:
    """The scalar body of ufunc ``name`` for numpy's loop ``in_dtypes``: the rule of the
    first operand's dtype, or an exact signed/unsigned comparison when the loop mixes
    them."""
    kinds = {dtypes.kind(dt) for dt in in_dtypes}
    if kinds == {"int", "uint"} and name in _MIXED_SIGN_COMPARISONS:
        return _mixed_sign_compare(name, in_dtypes)
    rule = UFUNC_RULES[name]
    return lambda *xs: rule(in_dtypes[0], *xs)


def _to_bool(dtype, x):
    return convert(x, dtype, np.bool_)


def _logical(combine) -> Rule:
    return lambda dt, a, b: combine(_to_bool(dt, a), _to_bool(dt, b)).result


def _is_inf(dtype, x):
    return cmpf("oeq", math.AbsFOp(x).result, const(np.inf, dtype))


def _widen_f16(rule: Rule) -> Rule:
    """Computes a float16 rule in float32 and rounds once, as numpy's float16 loops do.

    IREE's float16 approximations are less accurate than float16 itself (exp2(13) came
    out as 8232, not 8192), and some (fmax, fmin) lower to libm calls that do not link.
    """
    def widened(dtype, *xs):
        if np.dtype(dtype) != np.float16:
            return rule(dtype, *xs)
        f32 = np.dtype(np.float32)
        wide = [convert(x, dtype, f32) for x in xs]
        return convert(rule(f32, *wide), f32, dtype)
    return widened


def _float_unary(builder) -> Rule:
    return by_kind(float=_widen_f16(op(builder)))


def _identity(dtype, x):
    return x


def _false(dtype, *xs):
    return const(False, np.bool_)


def _true(dtype, *xs):
    return const(True, np.bool_)


def _float_round(dtype, x):
    return math.RoundEvenOp(x).result


def _reciprocal(dtype, x):
    return arith.DivFOp(const(1.0, dtype), x).result


def _int_reciprocal(dtype, x):
    # numpy computes 1.0 / x and truncates toward zero (1 / -2 is 0, not floor's -1).
    # 1 / 0 is undefined there (a float->int cast of inf); 0 here.
    zero, one = const(0, dtype), const(1, dtype)
    is_zero = cmpi("eq", x, zero)
    divide = arith.DivSIOp if dtypes.kind(dtype) == "int" else arith.DivUIOp
    return select(is_zero, zero, divide(one, select(is_zero, one, x)).result)


def _float_square(dtype, x):
    return arith.MulFOp(x, x).result


def _int_square(dtype, x):
    return arith.MulIOp(x, x).result


def _shift_right(dtype, a, b):
    bits = dtypes.info(dtype).bits
    # numpy: shifting by >= the width gives 0 (or -1 for negative signed values).
    too_far = cmpi("uge", b, const(bits, dtype))
    if dtypes.kind(dtype) == "uint":
        return select(too_far, const(0, dtype), arith.ShRUIOp(a, b).result)
    return select(too_far,
                  select(cmpi("slt", a, const(0, dtype)), const(-1, dtype), const(0, dtype)),
                  arith.ShRSIOp(a, b).result)


def _shift_left(dtype, a, b):
    too_far = cmpi("uge", b, const(dtypes.info(dtype).bits, dtype))
    return select(too_far, const(0, dtype), arith.ShLIOp(a, b).result)


def _log_base(base: float) -> Rule:
    return lambda dt, x: arith.MulFOp(math.LogOp(x).result, const(1.0 / np.log(base), dt)).result


def _f64_or(float64_rule: Rule, other: Rule) -> Rule:
    """``float64_rule`` for float64 loops, ``other`` for the narrower floats."""
    def rule(dtype, *xs):
        return (float64_rule if np.dtype(dtype) == np.float64 else other)(dtype, *xs)
    return rule


def _fmax_fmin(extremum) -> Rule:
    # numpy's fmax/fmin ignore a NaN operand. arith.maxnumf/minnumf would, but IREE lowers
    # them to libm calls (fmaxf) that do not link for float16: select around NaNs instead.
    def rule(dtype, a, b):
        both = extremum(a, b).result
        return select(cmpf("uno", b, b), a, select(cmpf("uno", a, a), b, both))
    return rule


def _cbrt(dt, x):
    # IREE's float32 cbrt gives NaN for +-inf; numpy gives +-inf. (float64's is aotc's.)
    if np.dtype(dt) == np.float64:
        return math.CbrtOp(x).result
    return select(cmpf("oeq", math.AbsFOp(x).result, const(np.inf, dt)), x, math.CbrtOp(x).result)


def _sinh(dt, x):
    # IREE's float32 sinh is (e^x - e^-x)/2: 10**7 ulps off below 1e-10 (cancellation).
    # fdlibm's (t + t/(t + 1))/2 with t = expm1|x| below 1. (float64's is aotc's.)
    if np.dtype(dt) == np.float64:
        return math.SinhOp(x).result
    ax = math.AbsFOp(x).result
    t = math.ExpM1Op(ax).result
    half = const(0.5, dt)
    small = arith.MulFOp(half, arith.AddFOp(t, arith.DivFOp(
        t, arith.AddFOp(t, const(1.0, dt)).result).result).result).result
    value = select(cmpf("olt", ax, const(1.0, dt)), small, _past_exp_overflow(dt, ax,
                                                                              math.SinhOp(ax).result))
    return math.CopySignOp(value, x).result


# Where e^|x| overflows but sinh and cosh do not (float32 88.7-89.4, float64 709.8-710.5)
EXP_OVERFLOWS = {np.dtype(np.float32): 88.0, np.dtype(np.float64): 709.0}


def _past_exp_overflow(dt, ax, value):
    """sinh|x| or cosh|x| = e^|x| / 2 there, as fdlibm: (e^(|x|/2) / 2) * e^(|x|/2)."""
    limit = EXP_OVERFLOWS.get(np.dtype(dt))
    if limit is None:
        return value
    h = math.ExpOp(arith.MulFOp(const(0.5, dt), ax).result).result
    big = arith.MulFOp(arith.MulFOp(const(0.5, dt), h).result, h).result
    return select(cmpf("ogt", ax, const(limit, dt)), big, value)


def _cosh(dt, x):
    return _past_exp_overflow(dt, math.AbsFOp(x).result, math.CoshOp(x).result)


def _atanh(dt, x):
    # IREE's float32 atanh loses everything below 1e-5 (10**7 ulps at 1e-10): fdlibm's
    # 1/2 log1p(2|x| / (1 - |x|)), log1p being accurate near 0. (float64's is aotc's.)
    if np.dtype(dt) == np.float64:
        return math.AtanhOp(x).result
    ax = math.AbsFOp(x).result
    twice = arith.AddFOp(ax, ax).result
    ratio = arith.DivFOp(twice, arith.SubFOp(const(1.0, dt), ax).result).result
    value = arith.MulFOp(const(0.5, dt), math.Log1pOp(ratio).result).result
    value = select(cmpf("ogt", ax, const(1.0, dt)), const(np.nan, dt), value)
    return math.CopySignOp(value, x).result


# Above this magnitude, x*x + 1 == x*x in float64 too: asinh|x| = acosh x = log(x) + ln 2.
_HUGE = 2.0 ** 28


def _asinh(dt, x):
    # IREE's asinh is log(x + sqrt(x*x + 1)): -inf for x <= -128 in float16 (cancellation),
    # inf for |x| > 1e19 in float32 (x*x overflows). Odd symmetry plus log1p instead.
    # asinh|x| = log1p(|x| + x*x / (1 + sqrt(x*x + 1))), or log|x| + ln 2 when x*x + 1 == x*x.
    one = const(1.0, dt)
    ax = math.AbsFOp(x).result
    x2 = arith.MulFOp(ax, ax).result
    root = math.SqrtOp(arith.AddFOp(x2, one).result).result
    small = math.Log1pOp(
        arith.AddFOp(ax, arith.DivFOp(x2, arith.AddFOp(one, root).result).result).result).result
    large = arith.AddFOp(math.LogOp(ax).result, const(np.log(2.0), dt)).result
    return math.CopySignOp(select(cmpf("ogt", ax, const(_HUGE, dt)), large, small), x).result


def _acosh(dt, x):
    # IREE's acosh is log(x + sqrt(x*x - 1)): finite (not NaN) for x <= -1, inf for huge x.
    # acosh x = log1p(t + sqrt(t * (t + 2))) with t = x - 1, or log x + ln 2 for huge x.
    t = arith.SubFOp(x, const(1.0, dt)).result
    root = math.SqrtOp(arith.MulFOp(t, arith.AddFOp(t, const(2.0, dt)).result).result).result
    small = math.Log1pOp(arith.AddFOp(t, root).result).result
    large = arith.AddFOp(math.LogOp(x).result, const(np.log(2.0), dt)).result
    value = select(cmpf("ogt", x, const(_HUGE, dt)), large, small)
    return select(cmpf("olt", x, const(1.0, dt)), const(np.nan, dt), value)


def _signbit(dt, x):
    bits = dtypes.info(dt).bits
    return cmpi("slt", arith.BitcastOp(ir.IntegerType.get_signless(bits), x).result,
                const(0, f"int{bits}"))


def _atan2(dt, y, x):
    # IREE's float32 atan2 gives NaN for (+-0, +-0) and (+-inf, +-inf) and loses the sign of -0:
    # C99's atan2 from atan on [0, 1], then the octant from the signs.
    ax, ay = math.AbsFOp(x).result, math.AbsFOp(y).result
    hi, lo = arith.MaximumFOp(ax, ay).result, arith.MinimumFOp(ax, ay).result
    inf = const(np.inf, dt)
    both_inf = arith.AndIOp(cmpf("oeq", ax, inf), cmpf("oeq", ay, inf)).result
    ratio = select(cmpf("oeq", hi, const(0.0, dt)), const(0.0, dt),
                   select(both_inf, const(1.0, dt), arith.DivFOp(lo, hi).result))
    t = math.AtanOp(ratio).result
    t = select(cmpf("ogt", ay, ax), arith.SubFOp(const(np.pi / 2, dt), t).result, t)
    t = select(_signbit(dt, x), arith.SubFOp(const(np.pi, dt), t).result, t)
    return math.CopySignOp(t, y).result


# The table: numpy ufunc name -> scalar rule over the loop dtype.
UFUNC_RULES: dict[str, Rule] = {
    # arithmetic
    "add": by_kind(float=op(arith.AddFOp), int=op(arith.AddIOp), bool=op(arith.OrIOp)),
    "subtract": by_kind(float=op(arith.SubFOp), int=op(arith.SubIOp)),
    "multiply": by_kind(float=op(arith.MulFOp), int=op(arith.MulIOp), bool=op(arith.AndIOp)),
    "divide": by_kind(float=op(arith.DivFOp)),
    # numpy's float16 divmod is npy_divmodf of the widened operands
    "floor_divide": by_kind(float=_widen_f16(_float_floor_divide), int=_int_floor_divide,
                            uint=_uint_floor_divide),
    "remainder": by_kind(float=_widen_f16(_float_remainder), int=_int_remainder,
                         uint=_uint_remainder),
    "power": by_kind(float=_widen_f16(float_power), int=_int_power),
    "negative": by_kind(float=op(arith.NegFOp),
                        int=lambda dt, x: arith.SubIOp(const(0, dt), x).result),
    "positive": by_kind(float=_identity, int=_identity),
    "absolute": by_kind(float=op(math.AbsFOp), int=op(math.AbsIOp), uint=_identity, bool=_identity),
    "sign": by_kind(float=_float_sign, int=_int_sign, uint=_uint_sign),
    "square": by_kind(float=_float_square, int=_int_square, bool=op(arith.AndIOp)),
    "reciprocal": by_kind(float=_reciprocal, int=_int_reciprocal),
    # transcendental (numpy only has float loops for these)
    "exp": _float_unary(math.ExpOp),
    "exp2": _float_unary(math.Exp2Op),
    "log": _float_unary(math.LogOp),
    "log2": _float_unary(math.Log2Op),
    # math.log10 becomes a libm call (log10f) on IREE's CPU, and no libm is linked:
    # log(x) / ln(10) instead (float64's is replaced by aotc-expand-math).
    "log10": by_kind(float=_f64_or(op(math.Log10Op), _log_base(10.0))),
    "log1p": _float_unary(math.Log1pOp),
    "expm1": _float_unary(math.ExpM1Op),
    "sqrt": _float_unary(math.SqrtOp),
    "cbrt": by_kind(float=_widen_f16(_cbrt)),
    "sin": _float_unary(math.SinOp),
    "cos": _float_unary(math.CosOp),
    "tan": _float_unary(math.TanOp),
    "arcsin": _float_unary(math.AsinOp),
    "arccos": _float_unary(math.AcosOp),
    "arctan": _float_unary(math.AtanOp),
    "sinh": by_kind(float=_widen_f16(_sinh)),
    "cosh": by_kind(float=_widen_f16(_cosh)),
    "tanh": _float_unary(math.TanhOp),
    "arcsinh": by_kind(float=_widen_f16(_asinh)),
    "arccosh": by_kind(float=_widen_f16(_acosh)),
    "arctanh": by_kind(float=_widen_f16(_atanh)),
    "arctan2": by_kind(float=_widen_f16(_f64_or(op(math.Atan2Op), _atan2))),
    "floor": by_kind(float=op(math.FloorOp), int=_identity, bool=_identity),
    "ceil": by_kind(float=op(math.CeilOp), int=_identity, bool=_identity),
    "trunc": by_kind(float=op(math.TruncOp), int=_identity, bool=_identity),
    "rint": by_kind(float=_float_round, int=_identity, bool=_identity),
    # numpy's maximum/minimum propagate NaN: arith.maximumf does, maxnumf would not.
    "maximum": by_kind(float=op(arith.MaximumFOp), int=op(arith.MaxSIOp), uint=op(arith.MaxUIOp),
                       bool=op(arith.OrIOp)),
    "minimum": by_kind(float=op(arith.MinimumFOp), int=op(arith.MinSIOp), uint=op(arith.MinUIOp),
                       bool=op(arith.AndIOp)),
    "fmax": by_kind(float=_fmax_fmin(arith.MaximumFOp), int=op(arith.MaxSIOp),
                    uint=op(arith.MaxUIOp), bool=op(arith.OrIOp)),
    "fmin": by_kind(float=_fmax_fmin(arith.MinimumFOp), int=op(arith.MinSIOp),
                    uint=op(arith.MinUIOp), bool=op(arith.AndIOp)),
    # predicates
    "isnan": by_kind(float=lambda dt, x: cmpf("uno", x, x), int=_false, bool=_false),
    "isinf": by_kind(float=_is_inf, int=_false, bool=_false),
    "isfinite": by_kind(float=lambda dt, x: cmpf("one", math.AbsFOp(x).result, const(np.inf, dt)),
                        int=_true, bool=_true),
    "signbit": by_kind(float=_signbit, int=lambda dt, x: cmpi("slt", x, const(0, dt)),
                       uint=_false, bool=_false),
    # comparisons: NaN compares unequal to everything, as in numpy
    "equal": _compare("oeq", "eq", "eq"),
    "not_equal": _compare("une", "ne", "ne"),
    "less": _compare("olt", "slt", "ult"),
    "less_equal": _compare("ole", "sle", "ule"),
    "greater": _compare("ogt", "sgt", "ugt"),
    "greater_equal": _compare("oge", "sge", "uge"),
    # logic
    "logical_and": _logical(arith.AndIOp),
    "logical_or": _logical(arith.OrIOp),
    "logical_xor": _logical(arith.XOrIOp),
    "logical_not": lambda dt, x: logical_not(_to_bool(dt, x)),
    "bitwise_and": by_kind(int=op(arith.AndIOp), bool=op(arith.AndIOp)),
    "bitwise_or": by_kind(int=op(arith.OrIOp), bool=op(arith.OrIOp)),
    "bitwise_xor": by_kind(int=op(arith.XOrIOp), bool=op(arith.XOrIOp)),
    "invert": by_kind(int=lambda dt, x: arith.XOrIOp(x, const(-1, dt)).result,
                      bool=lambda dt, x: logical_not(x)),
    "left_shift": by_kind(int=_shift_left),
    "right_shift": by_kind(int=_shift_right),
}
