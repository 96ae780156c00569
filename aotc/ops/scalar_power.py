"""numpy's float power (``x ** y``, ``np.power``, ``np.float_power``, ``lax.pow``): C99's
pow built around ``math.powf`` of |x|.

``math.powf`` is computed for x >= 0 only: on CPU targets aotc-expand-math replaces it by
aotc's own (passes/libm/power.py: within 1 ulp of numpy in float64, correctly rounded but
for double rounding in float32), elsewhere it is IREE's (exp(y * log x), NaN for every
negative base, and wrong for pow(1, inf) and for pow(x, 0) with x inf or NaN). This rule
adds what depends on the sign of x and the cases every target must get exactly:

- x < 0: NaN for non-integer y, -|x|**y for odd integer y ((-2.0) ** 3 == -8), and -0.0
  for odd y gives -0.0 or -inf;
- x ** 0 and 1 ** y are 1 (NaN or inf included), and so is (-1) ** +-inf.

The sign of x is read from its bits: IREE's CPU code compares a subnormal as 0, and
-1e-310 ** 0.5 is NaN in numpy.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .._mlir import arith, ir, math
from ..constants import scalar_constant
from .scalar_builders import cmpf, cmpi, logical_not, select


def _is_integral(x) -> ir.Value:
    """|x| rounded to an integer (by adding and subtracting 2**mantissa bits) is |x|: LLVM
    turns floor(x) == x into a call to libm's trunc, which 32-bit Arm code cannot link."""
    dtype = np.dtype(np.float64 if str(x.type) == "f64" else np.float32)
    magnitude = math.AbsFOp(x).result
    shift = scalar_constant(2.0 ** (np.finfo(dtype).nmant), dtype)
    rounded = arith.SubFOp(arith.AddFOp(magnitude, shift).result, shift).result
    large = cmpf("oge", magnitude, shift)  # every float from 2**mantissa bits on
    return arith.OrIOp(large, cmpf("oeq", rounded, magnitude)).result


def float_power(dt, x, y) -> ir.Value:
    """x ** y for float ``x`` and ``y`` of loop dtype ``dt`` (see the module docstring)."""
    def const(value):
        return scalar_constant(value, dt)

    int_type = np.dtype(f"int{dtypes.info(dt).bits}")
    magnitude = math.AbsFOp(x).result
    r = math.PowFOp(magnitude, y).result
    y_integral = _is_integral(y)
    y_odd = arith.AndIOp(y_integral, logical_not(_is_integral(arith.MulFOp(y, const(0.5)).result)))
    negative = cmpi("slt", arith.BitcastOp(dtypes.mlir_type(int_type), x).result,
                     scalar_constant(0, int_type))  # the sign bit: -0.0 too
    r = select(arith.AndIOp(negative, y_odd.result).result, arith.NegFOp(r).result, r)
    nonzero = cmpi("ne", arith.BitcastOp(dtypes.mlir_type(int_type), magnitude).result,
                    scalar_constant(0, int_type))
    negative_base = arith.AndIOp(arith.AndIOp(negative, nonzero).result,
                                 cmpf("ogt", x, const(-np.inf))).result
    r = select(arith.AndIOp(negative_base, logical_not(y_integral)).result, const(np.nan), r)
    y_inf = cmpf("oeq", math.AbsFOp(y).result, const(np.inf))
    minus_one_inf = arith.AndIOp(cmpf("oeq", x, const(-1.0)), y_inf).result
    exact_one = arith.OrIOp(cmpf("oeq", y, const(0.0)), cmpf("oeq", x, const(1.0))).result
    return select(arith.OrIOp(exact_one, minus_one_inf).result, const(1.0), r)
