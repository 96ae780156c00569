"""Scalar arithmetic for the sequential kernels, real or complex by the element type.

The factorization kernels (``sequential.py``, ``sequential_eigen.py``) are written once
for both: each op here builds ``arith``/``math`` ops for a float scalar and ``complex``
dialect ops for a ``complex<f32>``/``complex<f64>`` one, and ``conj`` is the identity on
a real scalar, so a kernel written with the conjugations of LAPACK's complex routine
(zpotrf, zgetrf, zgeqrf, zhetrd) is that routine for complex input and the real one
(dpotrf, ...) for real input, with no extra ops.
"""

from __future__ import annotations

from .._mlir import arith, complex_dialect as cx, ir, math


def is_complex(element: ir.Type) -> bool:
    return isinstance(element.maybe_downcast(), ir.ComplexType)


def real_type(element: ir.Type) -> ir.Type:
    """The type of a scalar's real part (the type itself for a float)."""
    return ir.ComplexType(element).element_type if is_complex(element) else element


def constant(element: ir.Type, value: float) -> ir.Value:
    """The real number ``value`` as a scalar of type ``element``."""
    if not is_complex(element):
        return arith.ConstantOp(element, value).result
    part = real_type(element)
    return cx.ConstantOp(element, ir.ArrayAttr.get([ir.FloatAttr.get(part, value),
                                                    ir.FloatAttr.get(part, 0.0)])).result


def zero(element: ir.Type) -> ir.Value:
    return constant(element, 0.0)


def minus_zero(element: ir.Type) -> ir.Value:
    """-0.0 (-0.0 - 0.0i): adding it changes no value, -0.0 included."""
    if not is_complex(element):
        return arith.ConstantOp(element, -0.0).result
    part = real_type(element)
    return cx.ConstantOp(element, ir.ArrayAttr.get([ir.FloatAttr.get(part, -0.0),
                                                    ir.FloatAttr.get(part, -0.0)])).result


def _typed(real_op, complex_op):
    def op(a: ir.Value, b: ir.Value) -> ir.Value:
        return (complex_op if is_complex(a.type) else real_op)(a, b).result
    return op


add = _typed(arith.AddFOp, cx.AddOp)
sub = _typed(arith.SubFOp, cx.SubOp)
mul = _typed(arith.MulFOp, cx.MulOp)
div = _typed(arith.DivFOp, cx.DivOp)


def neg(a: ir.Value) -> ir.Value:
    return (cx.NegOp if is_complex(a.type) else arith.NegFOp)(a).result


def conj(a: ir.Value) -> ir.Value:
    """The complex conjugate; a real scalar itself."""
    return cx.ConjOp(a).result if is_complex(a.type) else a


def real(a: ir.Value) -> ir.Value:
    return cx.ReOp(a).result if is_complex(a.type) else a


def imag(a: ir.Value) -> ir.Value:
    """The imaginary part (0 of a real scalar's type for a real one)."""
    return cx.ImOp(a).result if is_complex(a.type) else zero(a.type)


def from_real(x: ir.Value, element: ir.Type) -> ir.Value:
    """The real scalar ``x`` as a scalar of type ``element`` (x + 0i for a complex one)."""
    if not is_complex(element):
        return x
    return cx.CreateOp(element, x, zero(real_type(element))).result


def scale(x: ir.Value, a: ir.Value) -> ir.Value:
    """The real scalar ``x`` times ``a`` (two real multiplies for a complex ``a``, where
    the complex product of x + 0i would take four and an add)."""
    if not is_complex(a.type):
        return arith.MulFOp(x, a).result
    return cx.CreateOp(a.type, arith.MulFOp(x, real(a)).result,
                       arith.MulFOp(x, imag(a)).result).result


def abs_squared(a: ir.Value) -> ir.Value:
    """|a|^2 as a real scalar."""
    re = real(a)
    squared = arith.MulFOp(re, re).result
    if not is_complex(a.type):
        return squared
    im = imag(a)
    return arith.AddFOp(squared, arith.MulFOp(im, im).result).result


def magnitude(a: ir.Value) -> ir.Value:
    """|a| as a real scalar (the complex dialect's abs scales, so it neither overflows
    nor underflows)."""
    return (cx.AbsOp if is_complex(a.type) else math.AbsFOp)(a).result


def pivot_magnitude(a: ir.Value) -> ir.Value:
    """LAPACK's cabs1, |re| + |im|: how zgetrf's izamax compares pivot candidates (for a
    real scalar, |a|), so that aotc picks the rows numpy's LAPACK picks."""
    if not is_complex(a.type):
        return math.AbsFOp(a).result
    return arith.AddFOp(math.AbsFOp(real(a)).result, math.AbsFOp(imag(a)).result).result


def nonzero(a: ir.Value) -> ir.Value:
    """Whether ``a`` is not zero (true for NaN), as an i1."""
    if is_complex(a.type):
        return cx.NotEqualOp(a, zero(a.type)).result
    return arith.CmpFOp(arith.CmpFPredicate.UNE, a, zero(a.type)).result


def over(a: ir.Value, x: ir.Value) -> ir.Value:
    """``a`` divided by the real scalar ``x`` (part by part for a complex ``a``: exact
    where x is a power of two, and cheaper than a complex division)."""
    if not is_complex(a.type):
        return arith.DivFOp(a, x).result
    return cx.CreateOp(a.type, arith.DivFOp(real(a), x).result,
                       arith.DivFOp(imag(a), x).result).result
