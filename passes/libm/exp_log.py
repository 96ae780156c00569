"""float64 expm1, exp2, sinh, cbrt, log1p and the functions built on them.

IREE's CPU code has float64 exp and log to within half an ulp, but its expm1 returns
garbage below |x| = 1e-5 (10**15 ulps at 1e-20), its exp2 loses 1 ulp per doubling of x
(400 ulps near 1024) and its log1p loses precision below 0.22. These are rebuilt from
exp, log and exact arithmetic:

- expm1: Kahan's (u - 1) * x / log u with u = exp x, which cancels exp's rounding;
- exp2: 2**n * exp(f * ln 2) with n = round(x) and |f| <= 1/2 exact (also float32,
  whose IREE version is 57 ulps off near 100);
- log1p: Goldberg's log(u) * x / (u - 1) with u = 1 + x, the same cancellation;
- sinh: (t + t/(t + 1)) / 2 with t = expm1|x| (fdlibm), exp|x|/2 from |x| = 22 on;
- cbrt: fdlibm's (an exponent estimate, a polynomial, one exact-residual Newton step).
"""

from __future__ import annotations

import numpy as np

from aotc._mlir import math
from .values import Float, where

_LN2 = 0.6931471805599453
_HALF_LN_MAX = 709.0  # exp(709) < max float64 < exp(710)


def expm1(x: Float) -> Float:
    u = _exp(x)
    u_minus_one = u - 1.0
    value = u_minus_one * (x / _log(u))  # x / log u is near 1: no overflow near 709
    value = where(u.equals(1.0), x, value)             # |x| below 2**-53: x itself
    value = where(u_minus_one.equals(-1.0), u_minus_one, value)  # x < -37: -1
    return where(u.equals(np.inf), u, value)           # x > 709.78: inf (NaN stays NaN)


def log1p(x: Float) -> Float:
    u = x + 1.0
    u_minus_one = u - 1.0
    value = _log(u) * (x / u_minus_one)
    value = where(u_minus_one.equals(0.0), x, value)
    return where(u.equals(np.inf), u, value)


def exp2(x: Float) -> Float:
    """2**x for float64 and float32 (the float's own width throughout)."""
    mantissa_bits, bias = (52, 1023) if x.dtype == np.float64 else (23, 127)
    limit = 2.0 * (bias + mantissa_bits + 1)  # 2**limit overflows, 2**-limit is 0
    clamped = where(abs(x) > limit, x.const(limit).copysign(x), x)  # 2**n stays in range
    n = clamped.rounded()
    f = clamped - n                # exact, |f| <= 1/2
    value = _scale_by_power_of_two(_exp(f * _LN2), n, mantissa_bits, bias)
    return where(x.is_nan(), x, value)


def _scale_by_power_of_two(y: Float, n: Float, mantissa_bits: int, bias: int) -> Float:
    """y * 2**n for an integer n in [-limit, limit], in two steps so each factor is a
    normal float (2**n alone leaves the range for |n| > bias)."""
    bits = y.dtype.itemsize * 8
    k = n.to_int32()
    half = k >> 1
    first = ((half + bias).maximum(0).minimum(2 * bias).resize(bits) << mantissa_bits).as_float()
    second = ((k - half + bias).maximum(0).minimum(2 * bias).resize(bits)
              << mantissa_bits).as_float()
    return (y * first) * second


def sinh(x: Float) -> Float:
    ax = abs(x)
    t = expm1(ax)
    small = 0.5 * (t + t / (t + 1.0))
    # exp|x| / 2, as exp(|x|/2) * exp(|x|/2) / 2 past 709 where exp|x| itself overflows.
    half = _exp(0.5 * ax)
    large = where(ax > _HALF_LN_MAX, (0.5 * half) * half, 0.5 * _exp(ax))
    magnitude = where(ax < 22.0, small, large)
    return where(ax < 2.0 ** -28, x, magnitude.copysign(x))


def tanh(x: Float) -> Float:
    # tanh|x| = -expm1(-2|x|) / (expm1(-2|x|) + 2): no overflow, no cancellation near 0.
    t = expm1(abs(x) * -2.0)
    return (-t / (t + 2.0)).copysign(x)


def arctanh(x: Float) -> Float:
    # fdlibm: 1/2 log1p(2x + 2x^2/(1 - x)) below 1/2, 1/2 log1p(2x/(1 - x)) above.
    ax = abs(x)
    twice = ax + ax
    small = 0.5 * log1p(twice + twice * ax / (1.0 - ax))
    large = 0.5 * log1p(twice / (1.0 - ax))
    magnitude = where(ax < 0.5, small, large)
    magnitude = where(ax > 1.0, x.const(np.nan), magnitude)
    return magnitude.copysign(x)


# fdlibm's cbrt: exponent / 3 by integer arithmetic, then a degree-4 polynomial in
# r = t^3/x to 23 bits, then t rounded to 22 bits (so t*t is exact) and one Newton step.
_CBRT_B1 = 715094163  # (1023 - 1023/3 - 0.03306235651) * 2**20
_ONE_THIRD = 2863311531  # ceil(2**33 / 3): (n * it) >> 33 == n // 3 for n < 2**32 (armv7
# has no integer division instruction, and a runtime-library call would not link)
_CBRT_P = (1.87595182427177009643, -1.88497979543377169875, 1.621429720105354466140,
           -0.758397934778766047437, 0.145996192886612446982)


def cbrt(x: Float) -> Float:
    bits = x.bits()
    high = bits.shr(32) & 0x7FFFFFFF
    third = (high * _ONE_THIRD).shr(33)  # high // 3 (high < 2**31), without a division
    estimate = ((third + _CBRT_B1) << 32) | (bits & -(1 << 63))  # x's sign
    t = estimate.as_float()
    p0, p1, p2, p3, p4 = _CBRT_P
    r = (t * t) * (t / x)
    t = t * ((p0 + r * (p1 + r * p2)) + ((r * r) * r) * (p3 + r * p4))
    t = ((t.bits() + 0x80000000) & -0x40000000).as_float()
    s = t * t
    r = x / s
    w = t + t
    r = (r - t) / (w + r)
    t = t + t * r
    # zero (and subnormals, which the runtime flushes), inf and NaN are their own cbrt
    passes_through = (high < 0x00100000) | (high >= 0x7FF00000)
    return where(passes_through, x + x, t)


# 1/ln(10) and 1/ln(2) as double-doubles (head, tail).
INVERSE_LN10 = (0.4342944819032518, 1.098319650216765e-17)
INVERSE_LN2 = (1.4426950408889634, 2.0355273740931033e-17)


def log_base(x: Float, inverse_ln_base: tuple[float, float]) -> Float:
    """log(x) / ln(base) with 1/ln(base) as a double-double: one rounding of the constant
    less than log(x) * (1/ln base)."""
    hi, lo = inverse_ln_base
    value = _log(x)
    return value * hi + value * lo


def _exp(x: Float) -> Float:
    return Float(math.ExpOp(x.value).result)


def _log(x: Float) -> Float:
    return Float(math.LogOp(x.value).result)
