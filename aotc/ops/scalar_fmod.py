"""float64 fmod exact for every input, and the scaling that keeps numpy's float64 divmod
clear of subnormals.

Why this is not ``arith.remf``: on float64 it becomes a call to libm's fmod, which IREE's
CPU code does not link. C's fmod is exact, and numpy's ``%``, ``//``, ``divmod`` and
``remainder`` are built on it (``scalar._float_divmod``), so all of them inherit any
error here.

Two things make the obvious expansion wrong:

- ``a - trunc(a/b)*b`` in one fma is exact only while the quotient fits the 53-bit
  mantissa (|a/b| < 2**53); 1e30 fmod 1000 came out as 6.6e12.
- IREE's CPU runtime runs with subnormals flushed: a subnormal operand of any float op
  reads as 0 and a subnormal result becomes 0 (selects, ``absf``, ``negf``,
  ``copysign`` and bitcasts keep the bits). A remainder can be subnormal whenever the
  divisor is below 2**-969 (``TINY_DIVISOR``), even with normal operands.

So the fast path (one fma) is taken where it is exact: quotient below 2**53 and divisor
not tiny (or a NaN/inf/zero operand, which it answers as C does). The rest takes the exact
path: with |a| = X * 2**ea and |b| = Y * 2**eb, X and Y integers below 2**53 read from the
bits, fmod is (X * 2**(ea - eb)) mod Y, reduced 50 bits of the exponent gap per step
(at most 42 steps: the gap is at most 2097 bits). Every value it computes with is an
integer-valued double >= 1 (or 0), so nothing it does is subnormal; the result is built
from the bits.

The exact path sits in an ``scf.if`` (its loop an ``scf.while``) inside the elementwise
body; ``%``, ``//`` and ``divmod`` put everything that can meet a subnormal there too
(``divmod_float64``). IREE vectorizes no linalg body holding a region, nor LLVM a loop
with a loop inside, so these ops become scalar code. On 1e6 elements (2-core Zen 4), ordinary
values: ``fmod`` 4.6 ms and ``%`` 7.8 ms, against 0.83 and 1.24 ms for the inexact
vectorized fma (numpy: 27 and 21 ms); quotients 2**60 to 2**1000: 56 and 81 ms (numpy:
1.65 s and 254 ms). The branch-free form (all 42 steps for every element, vectorized) took
33 ms for ``fmod`` whatever the inputs, slower than numpy on ordinary values. Figures:
benchmarks/README.md (``python benchmarks/float64_math.py --only remainder
remainder_huge --size 1000000``).
"""

from __future__ import annotations

import numpy as np

from .._mlir import arith, ir, math, scf
from ..constants import scalar_constant
from .scalar_builders import cmpf, cmpi, logical_not, select

F64, I64 = np.dtype(np.float64), np.dtype(np.int64)
MANTISSA_BITS = 52
MANTISSA_MASK = (1 << MANTISSA_BITS) - 1
IMPLICIT_BIT = 1 << MANTISSA_BITS
SIGN_MASK = -(1 << 63)  # the sign bit, as a signed int64
EXPONENT_BIAS_OF_INTEGERS = 1075  # x = mantissa integer * 2**(field - 1075) for normal x
TINY_DIVISOR = 2.0 ** -969  # from here down a nonzero remainder can be below 2**-1022
STEP_BITS = 50  # the exponent gap one step removes (the quotient bound below needs <= 50)
DIVMOD_SCALE = 128  # tiny divisors times 2**128 are >= 2**-946; a dividend that overflows
# there divides to inf either way (its quotient is >= 2**(1024 - 128 + 969))


def _f(value) -> ir.Value:
    return scalar_constant(value, F64)


def _i(value) -> ir.Value:
    return scalar_constant(value, I64)


def _bits(x) -> ir.Value:
    return arith.BitcastOp(ir.IntegerType.get_signless(64), x).result


def _from_bits(bits) -> ir.Value:
    return arith.BitcastOp(ir.F64Type.get(), bits).result


def _field(x) -> ir.Value:
    """The biased exponent field of a non-negative x."""
    return arith.ShRUIOp(_bits(x), _i(MANTISSA_BITS)).result


def _abs_bits(x) -> ir.Value:
    return arith.AndIOp(_bits(x), _i(~SIGN_MASK)).result


def nonzero(x) -> ir.Value:
    """x is not +-0, subnormal x included, as an i1.

    Not ``bits(|x|) != 0``: LLVM turns that into ``x != 0.0`` (equal where subnormals are
    kept), which reads a subnormal x as 0 under the flushing runtime. The square of the
    bits as an integer-valued double (normal, or 0) is a float LLVM cannot see through."""
    magnitude = arith.UIToFPOp(ir.F64Type.get(), _abs_bits(x)).result
    return cmpf("une", arith.MulFOp(magnitude, magnitude).result, _f(0.0))


def _tiny_divisor(b) -> ir.Value:
    """0 < |b| < 2**-969: remainders can be subnormal."""
    return arith.AndIOp(cmpf("olt", math.AbsFOp(b).result, _f(TINY_DIVISOR)), nonzero(b)).result


def sign_bit(x) -> ir.Value:
    return cmpi("slt", _bits(x), _i(0))


def _power_of_two(exponent) -> ir.Value:
    """2**exponent for an int64 exponent in [-1022, 1023], from the bits."""
    biased = arith.AddIOp(exponent, _i(1023)).result
    return _from_bits(arith.ShLIOp(biased, _i(MANTISSA_BITS)).result)


def _clamp(x, low: int, high: int) -> ir.Value:
    return arith.MinSIOp(arith.MaxSIOp(x, _i(low)).result, _i(high)).result


# ---- the exact path -----------------------------------------------------------------------

def _integer_and_exponent(x):
    """(X, e): |x| = X * 2**(e - 1075), X an integer below 2**53 (as a double: exact)."""
    magnitude = _abs_bits(x)
    field = arith.ShRUIOp(magnitude, _i(MANTISSA_BITS)).result
    fraction = arith.AndIOp(magnitude, _i(MANTISSA_MASK)).result
    normal = cmpi("ne", field, _i(0))
    integer = select(normal, arith.OrIOp(fraction, _i(IMPLICIT_BIT)).result, fraction)
    return (arith.SIToFPOp(ir.F64Type.get(), integer).result,
            arith.MaxSIOp(field, _i(1)).result)


def _reduce_step(t, y, inverse_y_upper):
    """t mod y for integers t < y * 2**50, y in [2**52, 2**53): the quotient estimate is
    never low and at most one high (see ``_exact_fmod``), so fma(-q, y, t) lies in
    (-y, y), an integer below 2**53: exact."""
    q = math.TruncOp(arith.MulFOp(t, inverse_y_upper).result).result
    r = math.FmaOp(arith.NegFOp(q).result, y, t).result
    return select(cmpf("olt", r, _f(0.0)), arith.AddFOp(r, y).result, r)


def _from_integer(r, exponent, sign_of):
    """r * 2**(exponent - 1075) with sign_of's sign, from the bits: r an integer below
    2**53 (as a double), the product a double (a remainder is), subnormal ones too."""
    result_field = arith.SubIOp(arith.AddIOp(_field(r), exponent).result,
                                _i(EXPONENT_BIAS_OF_INTEGERS)).result
    mantissa = arith.OrIOp(arith.AndIOp(_bits(r), _i(MANTISSA_MASK)).result,
                           _i(IMPLICIT_BIT)).result
    # A subnormal result: the mantissa moved down, its field 0; the bits moved out are 0.
    shift = _clamp(arith.SubIOp(_i(1), result_field).result, 0, 63)
    stored_field = arith.SubIOp(arith.MaxSIOp(result_field, _i(1)).result, _i(1)).result
    magnitude = arith.AddIOp(arith.ShRUIOp(mantissa, shift).result,
                             arith.ShLIOp(stored_field, _i(MANTISSA_BITS)).result).result
    magnitude = select(cmpf("oeq", r, _f(0.0)), _i(0), magnitude)
    sign = arith.AndIOp(_bits(sign_of), _i(SIGN_MASK)).result
    return _from_bits(arith.OrIOp(magnitude, sign).result)


def _exact_fmod(a, b):
    """fmod for finite a and nonzero finite b, subnormals included.

    |a| = X * 2**ea and |b| = Y * 2**eb with Y moved into [2**52, 2**53) (a subnormal b's
    integer is smaller). fmod = ((X * 2**(ea - eb)) mod Y) * 2**eb, computed as r = X mod Y
    and then r = (r * 2**c) mod Y for c = 50, 50, ..., the rest of the gap. Each step's
    quotient is below 2**50; the estimate t * (1/y)(1 + 2**-51), rounded three times,
    is at least the true one and less than it plus 7/8 (2**50 * 7 * 2**-53), so its
    truncation is the floor or one more."""
    x, a_exponent = _integer_and_exponent(a)
    y_integer, b_exponent = _integer_and_exponent(b)
    # y_integer as a double is normal: its field says how far it is below 2**52.
    shift = arith.SubIOp(_i(EXPONENT_BIAS_OF_INTEGERS), _field(y_integer)).result
    y = _from_bits(arith.AddIOp(_bits(y_integer),
                                arith.ShLIOp(shift, _i(MANTISSA_BITS)).result).result)
    b_exponent = arith.SubIOp(b_exponent, shift).result
    gap = arith.SubIOp(a_exponent, b_exponent).result
    r = select(cmpf("oge", x, y), arith.SubFOp(x, y).result, x)  # x < 2**53 <= 2y
    inverse_y_upper = arith.MulFOp(arith.DivFOp(_f(1.0), y).result, _f(1 + 2.0 ** -51)).result

    f64, i64 = ir.F64Type.get(), ir.IntegerType.get_signless(64)
    loop = scf.WhileOp([f64, i64], [r, gap])
    before = loop.before.blocks.append(f64, i64)
    after = loop.after.blocks.append(f64, i64)
    with ir.InsertionPoint(before):
        scf.ConditionOp(cmpi("sgt", before.arguments[1], _i(0)), list(before.arguments))
    with ir.InsertionPoint(after):
        r_step, gap_left = after.arguments
        c = arith.MinSIOp(gap_left, _i(STEP_BITS)).result
        shifted = arith.MulFOp(r_step, _power_of_two(c)).result
        scf.YieldOp([_reduce_step(shifted, y, inverse_y_upper),
                     arith.SubIOp(gap_left, c).result])
    remainder = _from_integer(loop.results[0], b_exponent, a)
    return select(cmpi("slt", gap, _i(0)), a, remainder)  # gap < 0: |a| < |b|


# ---- fmod ---------------------------------------------------------------------------------

def _fast_fmod(a, b, q):
    """a - q*b in one fma (q = trunc(a/b)), moved back into (-|b|, |b|) when a/b rounded
    up to the next integer: exact while |a/b| < 2**53 and no step is subnormal."""
    zero = _f(0.0)
    r = math.FmaOp(arith.NegFOp(q).result, b, a).result
    signs_differ = arith.XOrIOp(cmpf("olt", r, zero), cmpf("olt", a, zero)).result
    overshot = arith.AndIOp(cmpf("une", r, zero), signs_differ).result
    r = select(overshot,
                arith.AddFOp(r, math.CopySignOp(math.AbsFOp(b).result, a).result).result, r)
    # C's fmod is exact: a zero remainder has a's sign (the fma gives +0 for -6 mod 3)
    r = select(cmpf("oeq", r, zero), math.CopySignOp(zero, a).result, r)
    # |a| < |b| (b = inf included): a itself, bits and all (a subnormal a reads as 0 in
    # the fma)
    return select(cmpf("olt", math.AbsFOp(a).result, math.AbsFOp(b).result), a, r)


def _exact_needed(a, b, q):
    """Where the fast path is not exact: finite a, nonzero b (a subnormal b compares equal
    to 0), and a quotient from 2**53 up or a tiny divisor."""
    finite_nonzero = arith.AndIOp(cmpf("olt", math.AbsFOp(a).result, _f(np.inf)),
                                  nonzero(b)).result
    hard = arith.OrIOp(cmpf("oge", math.AbsFOp(q).result, _f(2.0 ** 53)),
                       cmpf("olt", math.AbsFOp(b).result, _f(TINY_DIVISOR))).result
    return arith.AndIOp(finite_nonzero, hard).result


def fmod_float64(a, b) -> ir.Value:
    """C's fmod on float64 scalars, bit for bit (see the module docstring)."""
    q = math.TruncOp(arith.DivFOp(a, b).result).result
    branch = scf.IfOp(_exact_needed(a, b, q), [ir.F64Type.get()], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp([_exact_fmod(a, b)])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([_fast_fmod(a, b, q)])
    return branch.results[0]


def divmod_float64(a, b, npy_divmod):
    """numpy's float64 (floor quotient, remainder): ``npy_divmod`` (scalar._npy_divmod)
    on the fast fmod where that is exact and nothing is subnormal; elsewhere, in an
    scf.if, on the exact fmod, with the zero and sign tests read from the bits and a
    tiny divisor's operands scaled by 2**128 (``scale_tiny_divisor``)."""
    q = math.TruncOp(arith.DivFOp(a, b).result).result
    subnormal_a = arith.AndIOp(nonzero(a), cmpf("olt", math.AbsFOp(a).result,
                                                 _f(2.0 ** -1022))).result
    # A tiny divisor with a NaN or inf dividend too: a subnormal one reads as 0.
    rare = arith.OrIOp(arith.OrIOp(_exact_needed(a, b, q), subnormal_a).result,
                       _tiny_divisor(b)).result
    f64 = ir.F64Type.get()
    branch = scf.IfOp(rare, [f64, f64], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        mod = fmod_float64(a, b)
        # numpy's a / 0 is inf for a subnormal a, which reads as 0 here (0 / 0: NaN)
        dividend = select(subnormal_a, math.CopySignOp(_f(1.0), a).result, a)
        b_is_zero = logical_not(nonzero(b))
        tiny, a_scaled, b_scaled, mod_scaled = scale_tiny_divisor(a, b, mod)
        floordiv, mod = npy_divmod(F64, a_scaled, b_scaled, mod_scaled, nonzero=nonzero,
                                   negative=sign_bit, dividend=dividend, b_is_zero=b_is_zero)
        scf.YieldOp([floordiv, unscale_remainder(tiny, mod)])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp(list(npy_divmod(F64, a, b, _fast_fmod(a, b, q))))
    return tuple(branch.results)


# ---- divmod with a tiny divisor -------------------------------------------------------------

def _scaled_up(x):
    """x * 2**128 exactly, subnormal x included (from its bits); a finite x that
    overflows becomes inf, as the multiplication gives."""
    subnormal = cmpi("eq", _field(math.AbsFOp(x).result), _i(0))
    integer = arith.SIToFPOp(ir.F64Type.get(),
                             arith.AndIOp(_bits(x), _i(MANTISSA_MASK)).result).result
    from_bits = arith.MulFOp(integer, _f(2.0 ** (DIVMOD_SCALE - 1074))).result
    return select(subnormal, math.CopySignOp(from_bits, x).result,
                   arith.MulFOp(x, _f(2.0 ** DIVMOD_SCALE)).result)


def _scaled_down(x):
    """x * 2**-128 exactly for an x whose product is a double (a remainder), subnormal
    products included (from the bits); inf and NaN stay."""
    result_field = arith.SubIOp(_field(math.AbsFOp(x).result), _i(DIVMOD_SCALE)).result
    mantissa = arith.OrIOp(arith.AndIOp(_bits(x), _i(MANTISSA_MASK)).result,
                           _i(IMPLICIT_BIT)).result
    shift = _clamp(arith.SubIOp(_i(1), result_field).result, 0, 63)
    subnormal = arith.OrIOp(arith.ShRUIOp(mantissa, shift).result,
                            arith.AndIOp(_bits(x), _i(SIGN_MASK)).result).result
    return select(cmpi("slt", result_field, _i(1)), _from_bits(subnormal),
                   arith.MulFOp(x, _f(2.0 ** -DIVMOD_SCALE)).result)


def scale_tiny_divisor(a, b, mod):
    """(tiny, a, b, mod): where 0 < |b| < 2**-969, all three times 2**128, so numpy's divmod
    steps on them (a - mod, mod + b, the quotient) see no subnormal and round as on the
    originals (scaling by a power of two commutes with rounding in the normal range;
    the steps that would be subnormal unscaled are exact both ways). ``unscale_remainder``
    takes the remainder back."""
    tiny = _tiny_divisor(b)
    return (tiny, *(select(tiny, _scaled_up(v), v) for v in (a, b, mod)))


def unscale_remainder(tiny, mod):
    return select(tiny, _scaled_down(mod), mod)
