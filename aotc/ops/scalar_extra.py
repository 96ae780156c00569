"""Scalar rules of numpy's other ufuncs (hypot, copysign, fmod, logaddexp, ldexp,
nextafter, gcd, ...), registered into ``scalar.UFUNC_RULES``.

They live apart from ``ops/scalar.py`` (which is near the module size limit) and are
added to its table when this module is imported (``ops/elementwise.py`` imports it
before it makes one function per rule). Each rule follows numpy's loop for the dtype:
``rule(dtype, *values)`` with ``dtype`` the loop dtype, as in ``scalar.py``.

Rules that need exp, log1p or power call the rule of that ufunc from the table when they
run, so they compute with whatever implementation that ufunc has for the dtype.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .._mlir import arith, ir, math
from .scalar import (
    UFUNC_RULES,
    _fmod,
    _guarded_signed_divisor,
    _uint_remainder,
    _widen_f16,
    by_kind,
    cmpf,
    cmpi,
    const,
    convert,
    op,
    select,
)


def _call(name: str, dtype, *xs) -> ir.Value:
    """The current rule of ufunc ``name`` (sin, exp, log1p ...) applied to ``xs``."""
    return UFUNC_RULES[name](dtype, *xs)


def _int_type(dtype) -> np.dtype:
    return np.dtype(f"int{dtypes.info(dtype).bits}")


def _bits(dtype, x) -> ir.Value:
    return arith.BitcastOp(dtypes.mlir_type(_int_type(dtype)), x).result


def _from_bits(dtype, bits) -> ir.Value:
    return arith.BitcastOp(dtypes.mlir_type(dtype), bits).result


def _is_nan(x) -> ir.Value:
    return cmpf("uno", x, x)


def _is_zero_inf_or_nan(dtype, x) -> ir.Value:
    """x == 0, +-inf or NaN: the values frexp and ldexp return unchanged."""
    magnitude = math.AbsFOp(x).result
    return arith.OrIOp(cmpf("ueq", magnitude, const(0.0, dtype)),
                       cmpf("ueq", magnitude, const(np.inf, dtype))).result


# ---- sign, magnitude, angles ---------------------------------------------------------------

def _scale_by(factor: float):
    """x * factor, the constant rounded to the dtype first, as numpy's deg2rad does."""
    return _widen_f16(lambda dt, x: arith.MulFOp(x, const(factor, dt)).result)


def _hypot(dt, x, y):
    # Scaled by the larger magnitude so x*x cannot overflow or underflow: hi * sqrt(1 + r*r)
    # with r = lo / hi <= 1. C99: hypot(+-inf, NaN) is inf; hypot(0, 0) is 0.
    ax, ay = math.AbsFOp(x).result, math.AbsFOp(y).result
    hi, lo = arith.MaximumFOp(ax, ay).result, arith.MinimumFOp(ax, ay).result
    zero, inf = const(0.0, dt), const(np.inf, dt)
    ratio = arith.DivFOp(lo, select(cmpf("oeq", hi, zero), const(1.0, dt), hi)).result
    root = math.SqrtOp(math.FmaOp(ratio, ratio, const(1.0, dt)).result).result
    value = arith.MulFOp(hi, root).result
    any_inf = arith.OrIOp(cmpf("oeq", ax, inf), cmpf("oeq", ay, inf)).result
    return select(any_inf, inf, select(cmpf("oeq", hi, zero), zero, value))


def _heaviside(dt, x, h):
    zero, one = const(0.0, dt), const(1.0, dt)
    step = select(cmpf("olt", x, zero), zero, select(cmpf("ogt", x, zero), one, h))
    return select(_is_nan(x), x, step)


# ---- logaddexp -----------------------------------------------------------------------------

def _logaddexp(exp_name: str, log1p_scale: float, equal_offset: float):
    """numpy's npy_logaddexp(2): max + log1p(exp(-|x - y|)) (log1p scaled for base 2);
    x == y (equal infinities too) gives x + log(2) (or x + 1)."""
    def rule(dt, x, y):
        high = arith.MaximumFOp(x, y).result  # NaN in, NaN out
        gap = arith.NegFOp(math.AbsFOp(arith.SubFOp(x, y).result).result).result
        tail = _call("log1p", dt, _call(exp_name, dt, gap))
        if log1p_scale != 1.0:
            tail = arith.MulFOp(tail, const(log1p_scale, dt)).result
        equal = cmpf("oeq", x, y)
        return select(equal, arith.AddFOp(x, const(equal_offset, dt)).result,
                      arith.AddFOp(high, tail).result)
    return _widen_f16(rule)


# ---- integer remainders, gcd, lcm ---------------------------------------------------------

def _int_fmod(dtype, a, b):
    """C's % (truncated, the dividend's sign): x fmod 0 and INT_MIN fmod -1 are 0."""
    safe_b, b_is_zero, b_is_minus_one = _guarded_signed_divisor(dtype, b)
    trapped = arith.OrIOp(b_is_zero, b_is_minus_one).result
    return select(trapped, const(0, dtype), arith.RemSIOp(a, safe_b).result)


def _euclid_steps(dtype) -> int:
    """Euclid's algorithm takes at most ~1.44 * bits steps (consecutive Fibonacci numbers)."""
    return int(1.45 * dtypes.info(dtype).bits) + 2


def _unsigned_gcd(dtype, a, b):
    """gcd of magnitudes as unsigned values: Euclid unrolled over its worst-case steps."""
    zero, one = const(0, dtype), const(1, dtype)
    for _ in range(_euclid_steps(dtype)):
        b_is_zero = cmpi("eq", b, zero)
        rest = arith.RemUIOp(a, select(b_is_zero, one, b)).result
        a, b = select(b_is_zero, a, b), select(b_is_zero, zero, rest)
    return a


def _magnitude(dtype, x):
    if dtypes.kind(dtype) != "int":
        return x
    return select(cmpi("slt", x, const(0, dtype)), arith.SubIOp(const(0, dtype), x).result, x)


def _gcd(dtype, a, b):
    # numpy's gcd is non-negative; |INT_MIN| wraps to INT_MIN, as numpy's does.
    return _unsigned_gcd(dtype, _magnitude(dtype, a), _magnitude(dtype, b))


def _lcm(dtype, a, b):
    # numpy: |a // gcd(a, b) * b|, 0 when either is 0.
    divisor = _gcd(dtype, a, b)
    zero = const(0, dtype)
    is_zero = cmpi("eq", divisor, zero)
    quotient = arith.DivUIOp(_magnitude(dtype, a), select(is_zero, const(1, dtype), divisor))
    return select(is_zero, zero, arith.MulIOp(quotient.result, _magnitude(dtype, b)).result)


# ---- float bits: nextafter, spacing, frexp, ldexp -------------------------------------------

def _nextafter(dt, x, y):
    # One step of the bit pattern towards y: +1 away from zero, -1 towards it; from 0 the
    # smallest subnormal with y's sign. NaN in, NaN out; x == y gives y.
    it = _int_type(dt)
    bits = _bits(dt, x)
    away = arith.XOrIOp(cmpf("olt", x, y), cmpf("olt", x, const(0.0, dt))).result
    stepped = select(away, arith.AddIOp(bits, const(1, it)).result,
                     arith.SubIOp(bits, const(1, it)).result)
    from_zero = math.CopySignOp(_from_bits(dt, const(1, it)), y).result
    value = select(cmpf("oeq", x, const(0.0, dt)), from_zero, _from_bits(dt, stepped))
    value = select(cmpf("oeq", x, y), y, value)
    either_nan = cmpf("uno", x, y)
    return select(either_nan, arith.AddFOp(x, y).result, value)


def _spacing(dt, x):
    # numpy: nextafter(x, copysign(inf, x)) - x (exact: a power of two); NaN for +-inf.
    # numpy's float16 spacing (npy_half_spacing) steps towards +inf instead: never negative.
    inf = const(np.inf, dt)
    towards = inf if np.dtype(dt) == np.float16 else math.CopySignOp(inf, x).result
    gap = arith.SubFOp(_nextafter(dt, x, towards), x).result
    return select(cmpf("oeq", math.AbsFOp(x).result, inf), const(np.nan, dt), gap)


def _float_layout(dtype) -> tuple[int, int, int]:
    """(mantissa bits, exponent bias, smallest normal exponent) of a float dtype."""
    fi = np.finfo(dtype)
    return fi.nmant, fi.maxexp - 1, fi.minexp


def _pow2(dtype, exponent) -> ir.Value:
    """2 ** exponent for an int exponent (of the dtype's int width) in the normal range."""
    mantissa_bits, bias, _ = _float_layout(dtype)
    it = _int_type(dtype)
    biased = arith.AddIOp(exponent, const(bias, it)).result
    return _from_bits(dtype, arith.ShLIOp(biased, const(mantissa_bits, it)).result)


def frexp_parts(dtype, x) -> tuple[ir.Value, ir.Value]:
    """C frexp: (mantissa in [0.5, 1) with x's sign, exponent as int32); 0, +-inf and NaN
    give (x, 0). Read from the bits, not by float arithmetic: IREE's CPU code treats
    subnormal operands as 0. A subnormal's mantissa field, as a float, is normal; its
    parts are that float's, the exponent moved down to the subnormal scale."""
    mantissa_bits, bias, min_exponent = _float_layout(dtype)
    it = _int_type(dtype)
    bits = _bits(dtype, x)
    field_mask = (1 << (dtypes.info(dtype).bits - 1 - mantissa_bits)) - 1
    fraction_mask = (1 << mantissa_bits) - 1
    field = arith.AndIOp(arith.ShRUIOp(bits, const(mantissa_bits, it)).result,
                         const(field_mask, it)).result
    fraction = arith.AndIOp(bits, const(fraction_mask, it)).result
    subnormal = cmpi("eq", field, const(0, it))
    fraction_value = convert(fraction, it, dtype)  # exact: fewer bits than the mantissa
    fraction_bits = _bits(dtype, fraction_value)
    normalized = select(subnormal, fraction_bits, bits)
    normalized_field = arith.AndIOp(arith.ShRUIOp(normalized, const(mantissa_bits, it)).result,
                                    const(field_mask, it)).result
    exponent = arith.SubIOp(normalized_field, const(bias - 1, it)).result
    subnormal_shift = const(min_exponent - mantissa_bits, it)
    exponent = select(subnormal, arith.AddIOp(exponent, subnormal_shift).result, exponent)
    sign = arith.AndIOp(bits, const(_signed(1 << (dtypes.info(dtype).bits - 1), it), it))
    half_bits = arith.OrIOp(arith.AndIOp(normalized, const(fraction_mask, it)).result,
                            const((bias - 1) << mantissa_bits, it)).result
    half_bits = arith.OrIOp(half_bits, sign.result).result
    zero = arith.AndIOp(subnormal, cmpi("eq", fraction, const(0, it))).result
    special = arith.OrIOp(zero, cmpi("eq", field, const(field_mask, it))).result
    mantissa = select(special, x, _from_bits(dtype, half_bits))
    exponent = convert(select(special, const(0, it), exponent), it, np.int32)
    return mantissa, exponent


def _signed(value: int, dtype: np.dtype) -> int:
    """An unsigned bit pattern as the signed integer of the same bits."""
    bits = np.dtype(dtype).itemsize * 8
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _ldexp(dt, x, e):
    """x * 2**e rounded once: with x = m * 2**k (frexp), 2m * 2**(k + e - 1) is exact while
    the exponent is normal; below it, the product is made at the smallest normal exponent
    and scaled down in one rounding step; above it, +-inf."""
    mantissa_bits, bias, min_exponent = _float_layout(dt)
    it = _int_type(dt)
    e_dtype = np.dtype(f"int{ir.IntegerType(e.type).width}")
    limit = 2 * (bias + mantissa_bits + 2)  # beyond it every result is 0 or inf anyway
    e = arith.MinSIOp(arith.MaxSIOp(e, const(-limit, e_dtype)).result,
                      const(limit, e_dtype)).result
    mantissa, exponent = frexp_parts(dt, x)
    power = arith.AddIOp(convert(e, e_dtype, it),
                         arith.SubIOp(convert(exponent, np.int32, it), const(1, it)).result)
    power = power.result
    normal_power = arith.MinSIOp(arith.MaxSIOp(power, const(min_exponent, it)).result,
                                 const(bias, it)).result
    below = arith.MinSIOp(arith.SubIOp(const(min_exponent, it), power).result,
                          const(mantissa_bits + 2, it)).result
    below = arith.MaxSIOp(below, const(0, it)).result
    significand = arith.MulFOp(mantissa, const(2.0, dt)).result  # in [1, 2)
    exact = arith.MulFOp(significand, _pow2(dt, normal_power)).result
    value = arith.MulFOp(exact, _pow2(dt, arith.SubIOp(const(0, it), below).result)).result
    overflow = cmpi("sgt", power, const(bias, it))
    value = select(overflow, math.CopySignOp(const(np.inf, dt), x).result, value)
    return select(_is_zero_inf_or_nan(dt, x), x, value)


def _ldexp_widening_f16(dt, x, e):
    # float16 through float32: every float16 result is a float32 normal, rounded once.
    if np.dtype(dt) != np.float16:
        return _ldexp(dt, x, e)
    f32 = np.dtype(np.float32)
    return convert(_ldexp(f32, convert(x, dt, f32), e), f32, dt)


def _float_only(rule):
    return by_kind(float=rule)


# numpy's other ufuncs: name -> scalar rule (same conventions as scalar.UFUNC_RULES).
MORE_UFUNC_RULES = {
    "fabs": _float_only(op(math.AbsFOp)),
    "copysign": _float_only(op(math.CopySignOp)),
    "fmod": by_kind(float=_widen_f16(_fmod), int=_int_fmod, uint=_uint_remainder),
    "hypot": _float_only(_widen_f16(_hypot)),
    "heaviside": _float_only(_heaviside),
    "deg2rad": _float_only(_scale_by(np.pi / 180.0)),
    "radians": _float_only(_scale_by(np.pi / 180.0)),
    "rad2deg": _float_only(_scale_by(180.0 / np.pi)),
    "degrees": _float_only(_scale_by(180.0 / np.pi)),
    "logaddexp": _float_only(_logaddexp("exp", 1.0, float(np.log(2.0)))),
    "logaddexp2": _float_only(_logaddexp("exp2", float(1.0 / np.log(2.0)), 1.0)),
    "float_power": _float_only(lambda dt, x, y: _call("power", dt, x, y)),
    "gcd": by_kind(int=_gcd),
    "lcm": by_kind(int=_lcm),
    "nextafter": _float_only(_nextafter),
    "spacing": _float_only(_spacing),
    "ldexp": _float_only(_ldexp_widening_f16),
}

UFUNC_RULES.update(MORE_UFUNC_RULES)
