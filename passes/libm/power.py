"""pow(x, y) for x >= 0: fdlibm's e_pow.c (float64), branch-free; float32 in float64.

IREE's own powf is exp(y * log x) in working precision: the rounding error of y * log x,
about |y log x| * 2**-53, becomes the result's relative error, 1000 ulps in float64 and
120 in float32 where |y log x| is near 700 (or 88 in float32). numpy's (the C library's)
is below 1 ulp.

float64, fdlibm's algorithm and constants:

1. log2 x = n + log2 m with n and m from the bits (m in [sqrt(3)/2, sqrt 3), subnormals
   normalized by integer arithmetic first: IREE's CPU runtime reads subnormal operands as
   0), and log2 m from s = (m - c)/(m + c), c = 1 or 1.5, by an odd series; all of it as
   a double-double t1 + t2 whose head t1 has its low 32 bits zero. For |y| > 2**31 only x
   within 2**-20 of 1 can give a finite, non-zero result: there log2 x comes from the
   Taylor series of log(1 + t), t = x - 1 exact (with a shorter head of 1/ln 2 than
   fdlibm's, whose product with t is not exact).
2. y * log2 x = p_h + p_l, with y split the same way, so y1 * t1 is exact: the product
   keeps about 64 bits, enough for |y log2 x| up to 1075 (the range's end).
3. 2**(p_h + p_l) = 2**k * 2**f with k an integer and |f| <= 1/2, 2**f by fdlibm's exp
   kernel, 2**k put into the exponent bits. Subnormal results (which a multiplication would
   flush to zero on IREE's CPU runtime) are rounded to their integer mantissa in the
   normal range and then placed in the bits.

float32, in float64 without IREE's float64 exp and log (together 3x the time of this):
log2 m = s * P(s^2) with m in [sqrt(2)/2, sqrt 2) and 2**f = 1 + f * Q(f) for
|f| <= 1/2, minimax-like fits with relative errors of 2**-52 and 2**-50, so x**y is within
2**-45 of the exact value (the rounding of y * log2 x, |y log2 x| < 150, dominates) and
one rounding to float32 is within 0.5 + 2**-21 ulp. Subnormal float32 results are built
from the bits as in float64; subnormal float32 operands are read as 0 (the widening to
float64 flushes them, as for every float32 function computed in float64).

Special values are C99's for x >= 0 (x**0 and 1**y are 1, also for NaN; 0**y, inf**y and
x**+-inf are 0 or inf); a negative x gives NaN: the frontend's power rule
(aotc/ops/scalar_power.py) passes |x| and puts in the sign and numpy's negative-base cases.

Measured on the pairs of tests/ops/test_elementwise.py (about 8,400 per dtype: x over the
whole range, results from below the smallest subnormal to past overflow, x near 1 with
|y| up to 2**60, negative x with integer y): against the exact value (mpmath), float64 at
most 0.77 ulp (numpy 0.64), float32 0.50 (numpy 0.97); against numpy at most 1 ulp in
both, subnormal results included. On 1e6 elements (2 cores, AVX2) float64 takes 7 ms
(IREE's powf 9 to 12, numpy 2.3), float32 2.5 to 3 ms (IREE's 1.3, numpy 0.8).
"""

from __future__ import annotations

import numpy as np

from aotc._mlir import arith, ir
from .values import Float, horner, where

# 2/(3 ln 2) and ln 2 as heads of 24 and 21 bits (their products with values whose low
# word is zero are exact) and tails.
_CP, _CP_H, _CP_L = 9.61796693925975554329e-01, 9.61796700954437255859e-01, \
    -7.02846165095275826516e-09
_IVLN2 = 1.44269504088896338700e+00
# 1/ln 2 again, head with 21 bits: near 1, t = x - 1 has at most 32, so _IVLN2_21 * t is
# exact (fdlibm's 24-bit head there makes pow(1 + 2**-22, 4e9) 600 ulps off).
_IVLN2_21, _IVLN2_21_TAIL = 1.4426946640014648, 3.768874985636099e-07
_LG2, _LG2_H, _LG2_L = 6.93147180559945286227e-01, 6.93147182464599609375e-01, \
    -1.90465429995776804525e-09
# log2(1.5) as head and tail: the second reduction point.
_DP_H, _DP_L = 5.84962487220764160156e-01, 1.35003920212974897128e-08
# (3/2) * (log(m) - 2s - 2/3 s^3) / s^4 in s^2, and exp's kernel R(r^2) - 2.
_L = (5.99999999999994648725e-01, 4.28571428578550184252e-01, 3.33333329818377432918e-01,
      2.72728123808534006489e-01, 2.30660745775561754067e-01, 2.06975017800338417784e-01)
_P = (1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05,
      -1.65339022054652515390e-06, 4.13813679705723846039e-08)
# How far p_l may go before 2**(p_h + p_l) at p_h + p_l = 1024 rounds to infinity.
_OVT = 8.0085662595372944372e-17
_MAGIC = 1.5 * 2.0 ** 52  # x + _MAGIC - _MAGIC rounds x to an integer (|x| < 2**51)
_MAGIC_BITS = 0x4338000000000000
_HIGH_WORD = 1 << 32
# float32 in float64: log2 m = s * LOG2_ODD(s^2), s = (m - 1)/(m + 1) (|s| < 0.1716), and
# 2**f = 1 + f * EXP2_M1(f) (|f| <= 1/2; exact at 0, so powers of 2 are), near-minimax
# fits with relative errors of 2**-52 and 2**-50.
_SQRT2_FRACTION = 0x6A09E667F3BCD
_LOG2_ODD = (2.885390081777927, 0.9617966939243315, 0.5770780172475638, 0.4121984018607766,
             0.32061640096794664, 0.2614438451587222, 0.2429208498633138)
_EXP2_M1 = (0.6931471805599462, 0.24022650695909836, 0.05550410866465355, 0.009618129107747628,
            0.0013333558200418778, 0.00015403530238756191, 1.5252673165560665e-05,
            1.3215550964277846e-06, 1.0205857244822564e-07, 7.053302971945615e-09)


def power(x: Float, y: Float) -> Float:
    """x**y in float64 (see the module docstring)."""
    ax = abs(x)
    t1, t2 = _log2(ax)
    series_t1, series_t2 = _log2_near_one(ax)
    huge_y = abs(y) > 2.0 ** 31
    t1, t2 = where(huge_y, series_t1, t1), where(huge_y, series_t2, t2)
    y1 = y.with_low_word_cleared()
    p_l = (y - y1) * t1 + y * t2
    p_h = y1 * t1
    value = _exp2(p_h, p_l)
    # |y| > 2**31 and x outside [1 - 2**-21, 1 + 2**-20): |y log2 x| > 1075, beyond the range.
    far_from_one = (ax < 1.0 - 2.0 ** -21) | (ax >= 1.0 + 2.0 ** -20)
    return _special_values(x, y, value, huge_y & far_from_one)


def power_float32(x: Float, y: Float) -> Float:
    """x**y for float32 ``x`` and ``y`` widened to float64, as a float32."""
    ax = abs(x)
    bits = ax.bits()
    # ax = 2**n * m with m in [sqrt(2)/2, sqrt 2) (a widened float32 is normal or 0).
    fraction = bits & ((1 << 52) - 1)
    above_sqrt2 = fraction > _SQRT2_FRACTION
    m = (fraction | where(above_sqrt2, bits.const(1022 << 52), bits.const(1023 << 52))).as_float()
    n = bits.shr(52) - where(above_sqrt2, bits.const(1022), bits.const(1023))
    s = (m - 1.0) / (m + 1.0)
    z = y * (n.exact_float() + s * horner(s * s, _LOG2_ODD))
    z = where(z > 200.0, z.const(200.0), where(z < -200.0, z.const(-200.0), z))
    rounded = z + _MAGIC
    k = rounded.bits() - _MAGIC_BITS
    f = z - (rounded - _MAGIC)  # exact, |f| <= 1/2
    exp2_f = 1.0 + f * horner(f, _EXP2_M1)
    value = (exp2_f.bits() + (k << 52)).as_float()  # 2**k is normal: |k| <= 200
    value = _special_values(x, y, value, None)
    rounded32 = Float(arith.TruncFOp(ir.F32Type.get(), value.value).result)
    # value * 2**149 is the float32 subnormal's integer mantissa, rounded in the mantissa
    # of 2**52 + it (the smallest normal, 2**23, rounds there too).
    mantissa = ((value * 2.0 ** 149 + 2.0 ** 52).bits() - 0x4330000000000000).resize(32)
    return where(value < 2.0 ** -126, mantissa.as_float(), rounded32)


def _log2(ax: Float) -> tuple[Float, Float]:
    """log2 ax as t1 + t2 (t1's low word zero) for finite ax > 0 (fdlibm's main path)."""
    bits = ax.bits()
    subnormal = bits < (1 << 52)
    # A subnormal's mantissa field as a float is ax * 2**1074, normal.
    scaled = (bits & ((1 << 52) - 1)).exact_float(signed=False)
    bits = where(subnormal, scaled.bits(), bits)
    high = bits.shr(32)
    n = (high >> 20) - 0x3FF + where(subnormal, bits.const(-1074), bits.const(0))
    j = high & 0xFFFFF
    # m in [1, sqrt(3/2)) reduces around 1, [sqrt(3/2), sqrt 3) around 1.5, the rest
    # is halved (n + 1) and reduces around 1.
    around_3_2 = (j > 0x3988E) & (j < 0xBB67A)
    halved = j >= 0xBB67A
    n = where(halved, n + 1, n)
    high = where(halved, (j | 0x3FF00000) - 0x00100000, j | 0x3FF00000)
    m = ((high << 32) | (bits & (_HIGH_WORD - 1))).as_float()
    c = where(around_3_2, m.const(1.5), m.const(1.0))
    dp_h = where(around_3_2, m.const(_DP_H), m.const(0.0))
    dp_l = where(around_3_2, m.const(_DP_L), m.const(0.0))

    # s = s_h + s_l = (m - c)/(m + c), s_h with its low word zero.
    u = m - c
    v = 1.0 / (m + c)
    s = u * v
    s_h = s.with_low_word_cleared()
    # t_h = m + c to 21 bits, from the exponent and mantissa bits directly.
    t_h = (((high >> 1) | 0x20000000) + 0x00080000
           + where(around_3_2, high.const(1 << 18), high.const(0))) << 32
    t_h = t_h.as_float()
    t_l = m - (t_h - c)
    s_l = v * ((u - s_h * t_h) - s_h * t_l)
    # log m = 2s + 2/3 s^3 + s^4 * L(s^2), scaled by 3/2 and summed as a double-double.
    s2 = s * s
    r = s2 * s2 * horner(s2, _L)
    r = r + s_l * (s_h + s)
    s2 = s_h * s_h
    t_h = (3.0 + s2 + r).with_low_word_cleared()
    t_l = r - ((t_h - 3.0) - s2)
    u = s_h * t_h
    v = s_l * t_h + t_l * s
    p_h = (u + v).with_low_word_cleared()
    p_l = v - (p_h - u)
    # 2/(3 ln 2) * (s + ...) = log2 m - log2 c.
    z_h = _CP_H * p_h
    z_l = _CP_L * p_h + p_l * _CP + dp_l
    t = n.exact_float()
    t1 = (((z_h + z_l) + dp_h) + t).with_low_word_cleared()
    t2 = z_l - (((t1 - t) - dp_h) - z_h)
    return t1, t2


def _log2_near_one(ax: Float) -> tuple[Float, Float]:
    """log2 ax as t1 + t2 for ax in [1 - 2**-21, 1 + 2**-20): log(1 + t) = t - t^2/2 + t^3/3
    - t^4/4."""
    t = ax - 1.0
    w = (t * t) * (0.5 - t * (0.3333333333333333333333 - t * 0.25))
    u = _IVLN2_21 * t
    v = t * _IVLN2_21_TAIL - w * _IVLN2
    t1 = (u + v).with_low_word_cleared()
    return t1, v - (t1 - u)


def _exp2(p_h: Float, p_l: Float) -> Float:
    """2**(p_h + p_l) for finite p_h + p_l; 0 and inf beyond the range."""
    z = p_h + p_l
    overflow = (z > 1024.0) | (z.equals(1024.0) & (p_l + _OVT > z - p_h))
    underflow = (z < -1075.0) | (z.equals(-1075.0) & (p_l <= z - p_h))
    rounded = z + _MAGIC
    k = rounded.bits() - _MAGIC_BITS
    p_h = p_h - (rounded - _MAGIC)  # exact: p_h has 42 significant bits, |p_h - k| < 1
    t = (p_l + p_h).with_low_word_cleared()
    u = t * _LG2_H
    v = (p_l - (t - p_h)) * _LG2 + t * _LG2_L
    z = u + v
    w = v - (z - u)
    t = z * z
    t1 = z - t * horner(t, _P)
    r = (z * t1) / (t1 - 2.0) - (w + z * w)
    f = 1.0 - (r - z)  # 2**f, in [sqrt(2)/2, sqrt 2]
    f_bits = f.bits()
    normal = (f_bits + (k << 52)).as_float()
    # Below 2**-1022: f * 2**(k + 1074) is the subnormal's integer mantissa, rounded in the
    # mantissa of 2**52 + it (so a result rounding up to 2**-1022 gets its bits too).
    scale = ((k + (1074 + 1023)).maximum(0).minimum(2046) << 52).as_float()
    mantissa = (f * scale + 2.0 ** 52).bits() - 0x4330000000000000
    value = where(f_bits.shr(52) + k <= 0, mantissa.as_float(), normal)
    value = where(overflow, value.const(np.inf), value)
    return where(underflow, value.const(0.0), value)


def _special_values(x: Float, y: Float, value: Float, beyond_range) -> Float:
    """C99's pow at 0, 1, inf and NaN (x >= 0), NaN for x < 0; ``beyond_range``: where
    x**y is known to be 0 or inf from the signs alone."""
    ax = abs(x)
    zero_x = ax.bits().equals(0)  # not ax == 0: a subnormal compares equal to 0 on the CPU
    limit = zero_x | ax.equals(np.inf) | abs(y).equals(np.inf)
    if beyond_range is not None:
        limit = limit | beyond_range
    grows = ((y > 0.0) & (ax > 1.0)) | ((y < 0.0) & (ax < 1.0))
    value = where(limit, where(grows, value.const(np.inf), value.const(0.0)), value)
    value = where(x < 0.0, value.const(np.nan), value)
    value = where(x.is_nan() | y.is_nan(), x + y, value)
    return where(y.equals(0.0) | x.equals(1.0), value.const(1.0), value)

