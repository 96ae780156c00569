"""float64 arcsin, arccos, arctan and arctan2: fdlibm's algorithms (as in musl), branch-free.

arcsin and arccos share a rational approximation R(z) of (arcsin(sqrt z) - sqrt z)/sqrt z^3
on [0, 1/4]; beyond |x| = 1/2 they use arcsin x = pi/2 - 2 arcsin sqrt((1 - x)/2) with
the square root split into an exact head and a correction. arctan reduces |x| to
[0, 7/16] with one of four identities (atan x = atan c + atan((x - c)/(1 + x c)) for
c = 1/2, 1, 3/2, inf) and evaluates an odd polynomial. Each element computes every
interval's formula and selects its own.
"""

from __future__ import annotations

import numpy as np

from .values import Float, horner, where

PIO2_HI = 1.57079632679489655800e+00
PIO2_LO = 6.12323399573676603587e-17
PI_HI = 3.1415926535897931160e+00
PI_LO = 1.2246467991473531772e-16
_P = (1.66666666666666657415e-01, -3.25565818622400915405e-01, 2.01212532134862925881e-01,
      -4.00555345006794114027e-02, 7.91534994289814532176e-04, 3.47933107596021167570e-05)
_Q = (1.0, -2.40339491173441421878e+00, 2.02094576023350569471e+00,
      -6.88283971605453293030e-01, 7.70381505559019352791e-02)
# atan c (head and tail) for the reduction points c = 1/2, 1, 3/2, inf.
_ATAN_HI = (4.63647609000806093515e-01, 7.85398163397448278999e-01,
            9.82793723247329054082e-01, 1.57079632679489655800e+00)
_ATAN_LO = (2.26987774529616870924e-17, 3.06161699786838301793e-17,
            1.39033110312309984516e-17, 6.12323399573676603587e-17)
_AT = (3.33333333333329318027e-01, -1.99999999998764832476e-01, 1.42857142725034663711e-01,
       -1.11111104054623557880e-01, 9.09088713343650656196e-02, -7.69187620504482999495e-02,
       6.66107313738753120669e-02, -5.83357013379057348645e-02, 4.97687799461593236017e-02,
       -3.65315727442169155270e-02, 1.62858201153657823623e-02)


def _r(z: Float) -> Float:
    return z * horner(z, _P) / horner(z, _Q)


def _sqrt_parts(z: Float):
    """(s, head, c): s = sqrt z, head = s with its low word zero, head + c = s to double
    the precision (c = (z - head^2) / (s + head))."""
    s = z.sqrt()
    head = s.with_low_word_cleared()
    c = (z - head * head) / (s + head)
    return s, head, where(z.equals(0.0), z, c)  # not 0/0 at z = 0


def arcsin(x: Float) -> Float:
    ax = abs(x)
    small = ax + ax * _r(x * x)                      # |x| < 1/2
    z = (1.0 - ax) * 0.5
    s, head, c = _sqrt_parts(z)
    r = _r(z)
    near_one = PIO2_HI - (2.0 * (s + s * r) - PIO2_LO)  # |x| >= 0.975
    middle = 0.5 * PIO2_HI - (2.0 * s * r - (PIO2_LO - 2.0 * c) - (0.5 * PIO2_HI - 2.0 * head))
    large = where(ax >= 0.975, near_one, middle)
    magnitude = where(ax < 0.5, small, large)
    magnitude = where(ax < 2.0 ** -26, ax, magnitude)
    magnitude = where(ax > 1.0, x.const(np.nan), magnitude)
    return magnitude.copysign(x)


def arccos(x: Float) -> Float:
    small = PIO2_HI - (x - (PIO2_LO - x * _r(x * x)))   # |x| < 1/2
    # x < -1/2: pi - 2 arcsin sqrt((1 + x)/2)
    z_neg = (1.0 + x) * 0.5
    s_neg = z_neg.sqrt()
    negative = 2.0 * (PIO2_HI - (s_neg + (_r(z_neg) * s_neg - PIO2_LO)))
    # x > 1/2: 2 arcsin sqrt((1 - x)/2)
    z_pos = (1.0 - x) * 0.5
    s_pos, head, c = _sqrt_parts(z_pos)
    positive = 2.0 * (head + (_r(z_pos) * s_pos + c))
    result = where(x < -0.5, negative, where(x > 0.5, positive, small))
    return where(abs(x) > 1.0, x.const(np.nan), result)


def _atan_magnitude(ax: Float) -> Float:
    """arctan of |x| (NaN stays NaN)."""
    # The reduction point index and the reduced argument for each interval of |x|.
    reduced = (
        (2.0 * ax - 1.0) / (2.0 + ax),     # [7/16, 11/16): c = 1/2
        (ax - 1.0) / (ax + 1.0),           # [11/16, 19/16): c = 1
        (ax - 1.5) / (1.0 + 1.5 * ax),     # [19/16, 39/16): c = 3/2
        -1.0 / ax,                         # [39/16, inf): c = inf
    )
    bounds = (0.6875, 1.1875, 2.4375)
    t = reduced[3]
    hi, lo = ax.const(_ATAN_HI[3]), ax.const(_ATAN_LO[3])
    for k in (2, 1, 0):
        below = ax < bounds[k]
        t = where(below, reduced[k], t)
        hi = where(below, _ATAN_HI[k], hi)
        lo = where(below, _ATAN_LO[k], lo)
    reduced_case = ax < 0.4375
    t = where(reduced_case, ax, t)
    z = t * t
    w = z * z
    s1 = z * horner(w, _AT[0::2])
    s2 = w * horner(w, _AT[1::2])
    series = t - t * (s1 + s2)
    shifted = hi - ((t * (s1 + s2) - lo) - t)
    result = where(reduced_case, series, shifted)
    return where(ax >= 2.0 ** 66, ax.const(_ATAN_HI[3] + _ATAN_LO[3]), result)


def arctan(x: Float) -> Float:
    # copysign keeps NaN and -0; the 2**66 clamp does not hide NaN (the compare is false).
    return _atan_magnitude(abs(x)).copysign(x)


def arctan2(y: Float, x: Float) -> Float:
    """C99's atan2: arctan of the smaller over the larger magnitude, then the octant from
    the signs, with pi/2 and pi as double-doubles so the sums lose nothing."""
    ax, ay = abs(x), abs(y)
    hi = where(ax > ay, ax, ay)
    lo = where(ax > ay, ay, ax)
    both_inf = (ax.equals(np.inf)) & (ay.equals(np.inf))
    ratio = where(hi.equals(0.0), x.const(0.0), where(both_inf, x.const(1.0), lo / hi))
    t = _atan_magnitude(ratio)
    t = where(ay > ax, PIO2_HI - (t - PIO2_LO), t)
    t = where(x.sign_bit(), PI_HI - (t - PI_LO), t)
    # NaN in either gives NaN (the selects above would pick a finite branch).
    t = where(x.is_nan() | y.is_nan(), x + y, t)
    return t.copysign(y)
