"""float64 sin, cos and tan: argument reduction (``reduction.py``), then fdlibm's kernels.

The kernels are fdlibm's (as in musl): minimax polynomials on [-pi/4, pi/4] that take the
reduced argument as a double-double y0 + y1, so the tail of the reduction is not lost.
Each element computes both kernels and picks by its quadrant n mod 4 (selects vectorize;
branches would not):

    n mod 4      0       1       2       3
    sin x      sin y   cos y  -sin y  -cos y
    cos x      cos y  -sin y  -cos y   sin y
    tan x      tan y  -1/tan y  tan y  -1/tan y
"""

from __future__ import annotations

from .reduction import reduce_pio2
from .values import Float, Int, where

_S = (-1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
      2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10)
_C = (4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
      -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11)
_T = (3.33333333333334091986e-01, 1.33333333333201242699e-01, 5.39682539762260521377e-02,
      2.18694882948595424599e-02, 8.86323982359930005737e-03, 3.59207910759131235356e-03,
      1.45620945432529025516e-03, 5.88041240820264096874e-04, 2.46463134818469906812e-04,
      7.81794442939557092300e-05, 7.14072491382608190305e-05, -1.85586374855275456654e-05,
      2.59073051863633712884e-05)
_TINY = 2.0 ** -27
_PIO4 = 7.85398163397448278999e-01
_PIO4_LO = 3.06161699786838301793e-17


def kernel_sin(x: Float, y: Float | None) -> Float:
    """sin(x + y) for |x + y| <= pi/4, y the tail of x (None: no tail)."""
    s1, s2, s3, s4, s5, s6 = _S
    z = x * x
    w = z * z
    r = s2 + z * (s3 + z * s4) + z * w * (s5 + z * s6)
    v = z * x
    if y is None:
        return x + v * (s1 + z * r)
    return x - ((z * (0.5 * y - v * r) - y) - v * s1)


def kernel_cos(x: Float, y: Float | None) -> Float:
    """cos(x + y) for |x + y| <= pi/4, y the tail of x (None: no tail)."""
    c1, c2, c3, c4, c5, c6 = _C
    z = x * x
    w = z * z
    r = z * (c1 + z * (c2 + z * c3)) + w * w * (c4 + z * (c5 + z * c6))
    hz = 0.5 * z
    w = 1.0 - hz
    tail = z * r if y is None else z * r - x * y
    return w + (((1.0 - w) - hz) + tail)


def kernel_tan(x: Float, y: Float, odd: Int) -> Float:
    """tan(x + y) (``odd`` 0) or -1/tan(x + y) (``odd`` 1) for |x + y| <= pi/4."""
    # Near pi/4, tan x = tan(pi/4 - x') is computed from x' = pi/4 - x, which is small.
    big = abs(x) >= 0.6744
    negative = x.sign_bit()
    flip_x, flip_y = where(negative, -x, x), where(negative, -y, y)
    x = where(big, (_PIO4 - flip_x) + (_PIO4_LO - flip_y), x)
    y = where(big, x.const(0.0), y)
    t = _T
    z = x * x
    w = z * z
    r = t[1] + w * (t[3] + w * (t[5] + w * (t[7] + w * (t[9] + w * t[11]))))
    v = z * (t[2] + w * (t[4] + w * (t[6] + w * (t[8] + w * (t[10] + w * t[12])))))
    s = z * x
    r = y + z * (s * (r + v) + y) + s * t[0]
    w = x + r
    # |x| >= 0.6744: (1 - 2*odd) - 2*(x + (r - w*w/(w + s'))) with the sign put back.
    sign = 1.0 - 2.0 * odd.to_float(x)
    near_pio4 = sign - 2.0 * (x + (r - w * w / (w + sign)))
    near_pio4 = where(negative, -near_pio4, near_pio4)
    # odd: -1/(x + r) to about 1 ulp, with the head of w and of -1/w exact (low words 0).
    w0 = w.with_low_word_cleared()
    v = r - (w0 - x)
    a = -1.0 / w
    a0 = a.with_low_word_cleared()
    reciprocal = a0 + a * (1.0 + a0 * w0 + a0 * v)
    small = where(odd.equals(0), w, reciprocal)
    return where(big, near_pio4, small)


def by_quadrant(quadrant: Int, choices) -> Float:
    """choices[n mod 4] for each element."""
    q = quadrant & 3
    result = choices[3]
    for k in (2, 1, 0):
        result = where(q.equals(k), choices[k], result)
    return result


def sin(x: Float) -> Float:
    n, y0, y1 = reduce_pio2(x)
    s, c = kernel_sin(y0, y1), kernel_cos(y0, y1)
    return by_quadrant(n, (s, c, -s, -c))


def cos(x: Float) -> Float:
    n, y0, y1 = reduce_pio2(x)
    s, c = kernel_sin(y0, y1), kernel_cos(y0, y1)
    return by_quadrant(n, (c, -s, -c, s))


def tan(x: Float) -> Float:
    n, y0, y1 = reduce_pio2(x)
    # tan x = x below 2**-27, also keeping the sign of -0 (the kernel would give +0).
    return where(abs(x) < _TINY, x, kernel_tan(y0, y1, n & 1))
