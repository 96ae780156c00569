"""float32 sin, cos and tan, computed in float64 (the value widened by ``extf``, the
result rounded back by ``truncf``): within 0.5 ulp plus 2**-29 of the exact value.

A float32 result needs far fewer bits than ``trig.py``'s float64 algorithm carries, so
this one is about a third of its size (fewer ops to compile and to run per element):

- **Reduction**, one method for every finite float32: x * 2/pi mod 4 from 2/pi cut into
  26-bit chunks C_k (C_0 the first 26 bits of the fraction, ...). x has a 24-bit
  mantissa, so every product x * C_k is exact in float64. The chunks whose products are
  multiples of 4 are skipped (which ones depends on |x|: four thresholds pick the first
  chunk, a leading zero chunk covering |x| < 2**25), and five chunks from there give the
  fraction to about 2**-79 absolute: the closest a float32 comes to a multiple of pi/2
  is about 2**-30 (relative error under 2**-48). The products are reduced mod 4 with
  exact float64 roundings and summed into a double-double fraction F in [-1/2, 1/2];
  y = F * pi/2 in plain float64 (relative error about 2**-52, ample for float32).
- **Kernels**: fdlibm's float64 sin and cos polynomials on |y| <= pi/4 (``trig.py``,
  without the tail, errors about 2**-58); tan is their quotient (sin/cos, or -cos/sin in
  odd quadrants). Shorter float kernels (FreeBSD's, 2**-34) would leave 0.5014 ulp.
"""

from __future__ import annotations

from .reduction import PIO2_HI, PIO2_LO, two_over_pi_words
from .trig import by_quadrant, kernel_cos, kernel_sin
from .values import Float, Int, where

_CHUNK_BITS = 26
_CHUNKS_USED = 5


def _two_over_pi_chunks(count: int) -> tuple[float, ...]:
    """2/pi's binary fraction cut into ``count`` floats of 26 bits each (exact), after
    one leading zero chunk."""
    words = two_over_pi_words((count * _CHUNK_BITS + 31) // 32 + 1)
    fraction = 0
    for w in words:
        fraction = (fraction << 32) | int(w)
    total = 32 * len(words)
    chunks = [0.0]
    for k in range(count):
        bits = (fraction >> (total - _CHUNK_BITS * (k + 1))) & ((1 << _CHUNK_BITS) - 1)
        chunks.append(float(bits) * 2.0 ** (-_CHUNK_BITS * (k + 1)))
    return tuple(chunks)


# A float32 of magnitude >= 2**e has a mantissa ulp >= 2**(e-23): at the thresholds below
# (2**25, 2**51, ...) the first chunk's product is a multiple of 4 and the next one starts.
_FIRST_CHUNK_THRESHOLDS = (2.0 ** 25, 2.0 ** 51, 2.0 ** 77, 2.0 ** 103)
_CHUNKS = _two_over_pi_chunks(len(_FIRST_CHUNK_THRESHOLDS) + _CHUNKS_USED - 1)


def _mod4(q: Float) -> Float:
    """q minus the nearest multiple of 4 (exact for |q| < 2**53)."""
    return q - 4.0 * (q * 0.25).rounded()


def _two_sum(a: Float, b: Float) -> tuple[Float, Float]:
    """(s, e) with s = fl(a + b) and s + e = a + b exactly (Knuth)."""
    s = a + b
    b_virtual = s - a
    e = (a - (s - b_virtual)) + (b - b_virtual)
    return s, e


def reduce_pio2(x: Float) -> tuple[Int, Float]:
    """(n, y) with x = n*pi/2 + y, |y| <= pi/4 about, for x a float32 value widened to
    float64; only n mod 4 matters. NaN and inf give NaN."""
    magnitude = abs(x)
    starts_later = [magnitude >= t for t in _FIRST_CHUNK_THRESHOLDS]

    def chunk(j: int) -> Float:
        value = x.const(_CHUNKS[j])
        for k, later in enumerate(starts_later, start=1):
            value = where(later, x.const(_CHUNKS[j + k]), value)
        return value

    p = [x * chunk(j) for j in range(_CHUNKS_USED)]  # exact products, decreasing
    # p[0] < 2**51 and p[1] < 2**25: their parts mod 4 are exact, and so is their sum
    # (both are multiples of p[1]'s last bit, within [-4, 4]).
    whole = _mod4(p[0]) + _mod4(p[1])
    n_whole = whole.rounded()
    head, error = _two_sum(whole - n_whole, p[2])   # |p[2]| < 1/2
    n_head = head.rounded()
    hi = head - n_head                              # exact, |hi| <= 1/2
    lo = error + (p[3] + p[4])
    fraction = hi + lo
    fraction_lo = lo - (fraction - hi)
    y = fraction * PIO2_HI + (fraction * PIO2_LO + fraction_lo * PIO2_HI)
    quadrant = (n_whole + n_head).to_int32()
    finite = magnitude < float("inf")
    return quadrant, where(finite, y, x - x)


def _sin_cos(x: Float) -> tuple[Int, Float, Float]:
    """(n, sin y, cos y) for x = n*pi/2 + y."""
    n, y = reduce_pio2(x)
    return n, kernel_sin(y, None), kernel_cos(y, None)


def sin(x: Float) -> Float:
    n, s, c = _sin_cos(x)
    return where(x.equals(0.0), x, by_quadrant(n, (s, c, -s, -c)))  # sin(-0) = -0


def cos(x: Float) -> Float:
    n, s, c = _sin_cos(x)
    return by_quadrant(n, (c, -s, -c, s))


def tan(x: Float) -> Float:
    n, s, c = _sin_cos(x)
    return where(x.equals(0.0), x, where((n & 1).equals(0), s / c, -c / s))
