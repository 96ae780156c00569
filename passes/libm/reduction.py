"""Argument reduction for float64 sin, cos and tan: x = n * pi/2 + (y0 + y1).

Two methods, both computed for every element (selects, not branches, so the code
vectorizes), and the right one picked per element:

- **Cody-Waite** for |x| <= 2**20: n = round(x * 2/pi), then x - n*pi/2 with pi/2 in three
  parts of 33 significant bits (fdlibm's ``pio2_1``, ``pio2_2``, ``pio2_3``), so each
  product n * part is exact and the remainder keeps about 118 bits of pi/2.
- **Payne-Hanek** for larger |x| (up to 1.8e308): x = m * 2**e with an integer m, and
  x * 2/pi mod 4 is the integer m times the bits of 2/pi that matter at that exponent, a
  window of 256 bits read from a table of 2/pi's 32-bit words. The product is formed in
  32-bit limbs (exact), and its top 128 bits are the quadrant and the fraction. That
  fraction times pi/2, in double-double arithmetic, is the reduced argument.

The closest a float64 comes to a multiple of pi/2 is about 2**-61 (x = 6381956970095103 *
2**797), so the fraction needs 61 + 53 bits and some guard bits past the binary point:
the window gives 126.
"""

from __future__ import annotations

import numpy as np

from .values import Float, Int, where

# fdlibm's Cody-Waite constants: pi/2 = PIO2_1 + PIO2_2 + PIO2_3 + PIO2_3T, each of the first
# three with 33 significant bits (n * PIO2_k is exact for |n| < 2**20); PIO2_kT is the tail
# after part k.
INV_PIO2 = 6.36619772367581382433e-01
PIO2_1 = 1.57079632673412561417e+00
PIO2_1T = 6.07710050650619224932e-11
PIO2_2 = 6.07710050630396597660e-11
PIO2_2T = 2.02226624879595063154e-21
PIO2_3 = 2.02226624871116645580e-21
PIO2_3T = 8.47842766036889956997e-32
CODY_WAITE_LIMIT = 2.0 ** 20

# pi/2 as a double-double, for the fraction Payne-Hanek leaves.
PIO2_HI = 1.5707963267948966
PIO2_LO = 6.123233995736766e-17
# Dekker's splitter: a float64 times this, minus itself, keeps the top 26 bits.
_SPLITTER = 134217729.0  # 2**27 + 1


def two_over_pi_words(count: int) -> np.ndarray:
    """The first ``count`` 32-bit words of 2/pi's binary fraction, computed exactly from
    Machin's formula with integers (pi = 16 atan(1/5) - 4 atan(1/239))."""
    bits = 32 * count + 64  # 64 guard bits absorb the truncation of the series
    one = 1 << bits

    def arctan_inverse(n: int) -> int:
        total, power, k, n2 = 0, one // n, 0, n * n
        while power:
            term = power // (2 * k + 1)
            total += -term if k % 2 else term
            power //= n2
            k += 1
        return total

    pi = 16 * arctan_inverse(5) - 4 * arctan_inverse(239)
    fraction = (2 * one * one // pi) >> 64  # 2/pi * 2**(32*count), 2/pi < 1
    return np.array([(fraction >> (32 * (count - 1 - i))) & 0xFFFFFFFF for i in range(count)],
                    dtype=np.int64)


# Three zero words in front make the window start at word 0 or later for every exponent
# from 2**-32 up; 38 words of 2/pi reach past the largest float64's exponent.
_LEADING_ZERO_WORDS = 3
TWO_OVER_PI = np.concatenate([np.zeros(_LEADING_ZERO_WORDS, np.int64), two_over_pi_words(38)])
# Words (256 bits) of 2/pi multiplied by the mantissa: the words after them add less than
# 2**-138 to x * 2/pi.
_WINDOW = 8
_LAST_START = len(TWO_OVER_PI) - _WINDOW
# _WORD_PAIRS[k] holds words k and k+1 of TWO_OVER_PI in its high and low halves.
_WORD_PAIRS = (TWO_OVER_PI[:-1] << 32) | TWO_OVER_PI[1:]


def cody_waite(x: Float) -> tuple[Int, Float, Float]:
    """(n, y0, y1) for |x| <= CODY_WAITE_LIMIT: fdlibm's three-round reduction, always
    all three rounds (each round only adds accuracy)."""
    fn = (x * INV_PIO2).rounded()
    r = x - fn * PIO2_1
    w = fn * PIO2_1T
    for part, tail in ((PIO2_2, PIO2_2T), (PIO2_3, PIO2_3T)):
        t = r
        w = fn * part
        r = t - w
        w = fn * tail - ((t - r) - w)
    y0 = r - w
    y1 = (r - y0) - w
    return fn.to_int32(), y0, y1


def _two_product(a: Float, b: float) -> tuple[Float, Float]:
    """(p, e) with p = fl(a*b) and p + e = a*b exactly (Dekker; no fused multiply-add,
    which some CPU targets lack)."""
    p = a * b
    c = a * _SPLITTER
    a_hi = c - (c - a)
    a_lo = a - a_hi
    b_hi = b * _SPLITTER - (b * _SPLITTER - b)  # the same split, in Python floats
    b_lo = b - b_hi
    e = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    return p, e


def payne_hanek(x: Float) -> tuple[Int, Float, Float]:
    """(n mod 4, y0, y1) for finite |x| >= 2**-32 (meant for |x| > CODY_WAITE_LIMIT)."""
    window = _WINDOW
    bits = abs(x).bits()
    mantissa = (bits & ((1 << 52) - 1)) | (1 << 52)
    exponent = bits.shr(52) - 1075 + 32 * _LEADING_ZERO_WORDS  # |x| = mantissa * 2**(exponent - 96)
    # The window starts at the word below which every product term is a multiple of 4
    # (x * 2/pi mod 4 ignores it); shift = exponent - 32*(start+1) is then in [-30, 1].
    start = ((exponent + 30) >> 5) - 1
    shift = (exponent + 30) & 31                    # that shift + 30, in [0, 31]
    start = start.maximum(0).minimum(_LAST_START)  # in range for every input
    words = []
    for i in range(0, window, 2):  # two words per read: table reads are the dear part
        pair = (start + i).lookup(_WORD_PAIRS)
        words += [pair.shr(32), pair & 0xFFFFFFFF]
    # product = mantissa * window in 32-bit limbs, lowest first: word i's products land at
    # limb window-1-i (with the mantissa's low half) and window-i (its high half); higher
    # limbs hold multiples of 4 only.
    halves = [mantissa & 0xFFFFFFFF, mantissa.shr(32)]
    products = [{window - 1 - i + h: half * w for i, w in enumerate(words)}
                for h, half in enumerate(halves)]
    limbs, carry = [], None
    for limb in range(window):
        terms = [carry] if carry is not None else []
        for placed in products:
            if limb in placed:
                terms.append(placed[limb] & 0xFFFFFFFF)
            if limb - 1 in placed:
                terms.append(placed[limb - 1].shr(32))
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        limbs.append(total & 0xFFFFFFFF)
        carry = total.shr(32)
    limbs = [mantissa.const(0)] * 2 + limbs  # bits below the product: zero
    # x * 2/pi = product * 2**(shift - 30 - 32*(window-1)), and mod 4 as a 128-bit fixed
    # point number (2 integer bits, 126 fraction bits): bits [32*(window-1) - 96 - shift,
    # 32*(window-1) + 32 - shift) of the product, in two 64-bit halves.
    def bits_from(top: int) -> Int:
        top += 2
        high = (limbs[top] << 32) | limbs[top - 1]
        return (high << shift) | limbs[top - 2].shr(32 - shift)
    fixed_hi, fixed_lo = bits_from(window - 1), bits_from(window - 3)
    # Round to the nearest quadrant: the fraction becomes signed, in [-1/2, 1/2).
    fraction_hi = (fixed_hi << 2) >> 2
    # the top two bits, plus one if rounded up
    quadrant = (fixed_hi - fraction_hi).shr(62).resize(32)
    # The fraction (in units of 2**-62) as a double-double from pieces that convert
    # exactly: fraction_hi = a * 2**22 + b, then fixed_lo's top 52 bits.
    a = (fraction_hi >> 22).exact_float() * 2.0 ** 22
    b = (fraction_hi & 0x3FFFFF).exact_float()
    c = fixed_lo.shr(12).exact_float(signed=False) * 2.0 ** -52
    head = a + b                       # |a| >= |b| or a == 0: fast two-sum
    rest = (b - (head - a)) + c
    f_hi = (head + rest) * 2.0 ** -62
    f_lo = (rest - ((head + rest) - head)) * 2.0 ** -62
    p, e = _two_product(f_hi, PIO2_HI)
    t = e + (f_hi * PIO2_LO + f_lo * PIO2_HI)
    y0 = p + t
    y1 = t - (y0 - p)
    negative = x.sign_bit()
    return (where(negative, (0 - quadrant) & 3, quadrant),
            where(negative, -y0, y0), where(negative, -y1, y1))


def reduce_pio2(x: Float) -> tuple[Int, Float, Float]:
    """(n, y0, y1) with x = n*pi/2 + y0 + y1 (|y0| <= pi/4 about, y1 the tail); only n mod 4
    matters. NaN and inf come out as NaN."""
    n_near, y0_near, y1_near = cody_waite(x)
    n_far, y0_far, y1_far = payne_hanek(x)
    near = abs(x) <= CODY_WAITE_LIMIT
    y0 = where(near, y0_near, y0_far)
    finite = abs(x) < np.inf
    return (where(near, n_near, n_far), where(finite, y0, x - x),
            where(near, y1_near, y1_far))
