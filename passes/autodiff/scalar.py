"""Derivatives of the scalar ops of linalg bodies: one tangent rule per op.

The reverse rule of a ``linalg.generic`` (``generic.py``) needs the partial derivative
of its body's yields with respect to one block argument. It clones the body and pushes a
tangent through the clone, op by op, with these rules: ``rule(op, tangents) -> tangent``
where ``op`` is the cloned op (its operands and result are the primal values) and
``tangents`` holds one entry per operand, an ``ir.Value`` or None for zero. Rules build
at the current insertion point; their formulas are JAX's JVP rules (``jax._src.lax``),
so gradients at kinks and special values agree with JAX's (``abs`` at 0 is 0, ``max``
of equal values splits the tangent in half).

Ops missing from ``TANGENTS`` fail with an error naming the op; non-float results
(comparisons, casts to integers) have no tangent. Rules are attached to the ops' rows of
the vocabulary as their ``"tangent"`` rule.
"""

from __future__ import annotations

import math as pymath
from typing import Callable

from .. import opset
from .core import by_type, float_constant, is_complex, is_float, reads, registrar

Tangent = Callable[[object, list], object]
TANGENTS: dict[str, Tangent] = {}


tangent = registrar("tangent", TANGENTS)


# ---- small builders (None is a zero tangent) ------------------------------------------

def _c(like, value: float):
    return float_constant(like.type, value)


_addf, _subf, _mulf, _divf = (by_type(r, c) for r, c in (
    ("addf", "AddOp"), ("subf", "SubOp"), ("mulf", "MulOp"), ("divf", "DivOp")))
_neg = by_type("negf", "NegOp")


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return _addf(a, b)


def _sub(a, b):
    if b is None:
        return a
    if a is None:
        return _neg(b)
    return _subf(a, b)


def _mul(t, x):
    return None if t is None else _mulf(t, x)


def _div(t, x):
    return None if t is None else _divf(t, x)


def _select(cond, a, b, like):
    from aotc.ops.scalar_builders import select

    if a is None and b is None:
        return None
    return select(cond, _c(like, 0.0) if a is None else a, _c(like, 0.0) if b is None else b)


def _ops():
    from aotc._mlir import arith, math

    return arith, math


# ---- arith ------------------------------------------------------------------------------

@tangent("arith.addf", "complex.add")
def _add_rule(op, t):
    return _add(t[0], t[1])


@tangent("arith.subf", "complex.sub")
def _sub_rule(op, t):
    return _sub(t[0], t[1])


@tangent("arith.mulf", "complex.mul")
def _mul_rule(op, t):
    a, b = op.operands
    return _add(_mul(t[0], b), _mul(t[1], a))


@tangent("arith.divf", "complex.div")
def _div_rule(op, t):
    a, b = op.operands
    # d(a/b) = (da - (a/b) db) / b
    return _div(_sub(t[0], _mul(t[1], op.results[0])), b)


@tangent("arith.negf", "complex.neg")
def _neg_rule(op, t):
    return _neg(t[0])


@tangent("arith.remf")
def _remf(op, t):
    # rem(a, b) = a - b * trunc(a / b): the quotient is piecewise constant.
    arith, math = _ops()
    a, b = op.operands
    return _sub(t[0], _mul(t[1], math.trunc(arith.divf(a, b))))


@tangent("arith.maximumf", "arith.maxnumf", "arith.minimumf", "arith.minnumf")
def _extremum(op, t):
    # JAX's max/min: the chosen operand's tangent; equal operands share it in halves.
    from aotc.ops.scalar_builders import cmpf

    arith, _ = _ops()
    a, b = op.operands
    r = op.results[0]
    half = _c(r, 0.5)
    a_chosen = cmpf("oeq", a, r)
    b_chosen = cmpf("oeq", b, r)
    both = arith.andi(a_chosen, b_chosen)
    weight_a = _select(both, half, _select(a_chosen, _c(r, 1.0), None, r), r)
    weight_b = _select(both, half, _select(b_chosen, _c(r, 1.0), None, r), r)
    return _add(_mul(t[0], weight_a), _mul(t[1], weight_b))


@tangent("arith.select")
def _select_rule(op, t):
    return _select(op.operands[0], t[1], t[2], op.results[0])


@tangent("arith.extf", "arith.truncf")
def _float_cast(op, t):
    from aotc._mlir import arith

    out = op.results[0].type
    wider = out.width > t[0].type.width
    return arith.extf(out, t[0]) if wider else arith.truncf(out, t[0])


# ---- math ---------------------------------------------------------------------------------

def _unary(names: str, derivative: Callable):
    """A rule ``t * derivative(x, result)`` for each op in ``names``."""

    def rule(op, t):
        return _mul(t[0], derivative(op.operands[0], op.results[0]))

    return tangent(*names.split())(rule)


def _sqrt_pi_2(x):
    return _c(x, 2.0 / pymath.sqrt(pymath.pi))


def _one_minus_square(x):
    arith, _ = _ops()
    return arith.subf(_c(x, 1.0), arith.mulf(x, x))


def _d_abs(x, r):
    # sign(x): 0 at 0, as JAX's abs rule (select(x > 0, 1, select(x < 0, -1, 0))).
    from aotc.ops.scalar_builders import cmpf, select

    return select(cmpf("ogt", x, _c(x, 0.0)), _c(x, 1.0),
                  select(cmpf("olt", x, _c(x, 0.0)), _c(x, -1.0), _c(x, 0.0)))


_DERIVATIVES = {
    "math.exp": lambda x, r: r,
    "math.exp2": lambda x, r: _ops()[0].mulf(r, _c(x, pymath.log(2.0))),
    "math.expm1": lambda x, r: _ops()[0].addf(r, _c(x, 1.0)),
    "math.log": lambda x, r: _ops()[0].divf(_c(x, 1.0), x),
    "math.log2": lambda x, r: _ops()[0].divf(_c(x, 1.0 / pymath.log(2.0)), x),
    "math.log10": lambda x, r: _ops()[0].divf(_c(x, 1.0 / pymath.log(10.0)), x),
    "math.log1p": lambda x, r: _ops()[0].divf(_c(x, 1.0), _ops()[0].addf(x, _c(x, 1.0))),
    "math.sqrt": lambda x, r: _ops()[0].divf(_c(x, 0.5), r),
    "math.rsqrt": lambda x, r: _ops()[0].mulf(_c(x, -0.5), _ops()[0].divf(r, x)),
    "math.cbrt": lambda x, r: _ops()[0].divf(r, _ops()[0].mulf(_c(x, 3.0), x)),
    "math.sin": lambda x, r: _ops()[1].cos(x),
    "math.cos": lambda x, r: _ops()[0].negf(_ops()[1].sin(x)),
    "math.tan": lambda x, r: _ops()[0].addf(_c(x, 1.0), _ops()[0].mulf(r, r)),
    "math.asin": lambda x, r: _ops()[1].rsqrt(_one_minus_square(x)),
    "math.acos": lambda x, r: _ops()[0].negf(_ops()[1].rsqrt(_one_minus_square(x))),
    "math.atan": lambda x, r: _ops()[0].divf(
        _c(x, 1.0), _ops()[0].addf(_c(x, 1.0), _ops()[0].mulf(x, x))),
    "math.sinh": lambda x, r: _ops()[1].cosh(x),
    "math.cosh": lambda x, r: _ops()[1].sinh(x),
    "math.tanh": lambda x, r: _one_minus_square(r),
    "math.atanh": lambda x, r: _ops()[0].divf(_c(x, 1.0), _one_minus_square(x)),
    "math.erf": lambda x, r: _ops()[0].mulf(
        _sqrt_pi_2(x), _ops()[1].exp(_ops()[0].negf(_ops()[0].mulf(x, x)))),
    "math.absf": _d_abs,
}

for _name, _derivative in _DERIVATIVES.items():
    _unary(_name, _derivative)

# Piecewise constant: zero almost everywhere (JAX's floor, ceil, round, sign).
tangent(*sorted(opset.FLAT_OPS))(lambda op, t: None)


@tangent("math.copysign")
def _copysign(op, t):
    # copysign(a, b) = |a| sign(b): d/da is sign(a) * sign(b), nothing flows to b.
    from aotc.ops.scalar_builders import cmpf, select

    a, b = op.operands
    r = op.results[0]
    same = cmpf("oeq", _ops()[1].copysign(_c(a, 1.0), a), _ops()[1].copysign(_c(a, 1.0), r))
    return _mul(t[0], select(same, _c(a, 1.0), _c(a, -1.0)))


@tangent("math.fma")
def _fma(op, t):
    a, b, _ = op.operands
    return _add(_add(_mul(t[0], b), _mul(t[1], a)), t[2])


@tangent("math.fpowi")
def _fpowi(op, t):
    # x ** n for an integer n: n * x ** (n - 1), computed as n * r / x where x != 0.
    from aotc._mlir import arith, ir, math

    x, n = op.operands
    one = arith.ConstantOp(n.type, ir.IntegerAttr.get(n.type, 1)).result
    n_float = arith.sitofp(x.type, n)
    return _mul(t[0], arith.mulf(n_float, math.fpowi(x, arith.subi(n, one))))


@tangent("math.powf")
def _powf(op, t):
    # JAX's pow rules: d/dx = y * x ** (y - 1) (0 where y == 0), d/dy = log(x) * x ** y
    # (0 where x == 0, so 0 ** y does not give NaN).
    from aotc.ops.scalar_builders import cmpf, select

    arith, math = _ops()
    x, y = op.operands
    r = op.results[0]
    dx = None
    if t[0] is not None:
        slope = arith.mulf(y, math.powf(x, arith.subf(y, _c(y, 1.0))))
        dx = arith.mulf(t[0], select(cmpf("oeq", y, _c(y, 0.0)), _c(y, 0.0), slope))
    dy = None
    if t[1] is not None:
        zero_x = cmpf("oeq", x, _c(x, 0.0))
        safe_x = select(zero_x, _c(x, 1.0), x)
        dy = arith.mulf(t[1], select(zero_x, _c(x, 0.0), arith.mulf(math.log(safe_x), r)))
    return _add(dx, dy)


@tangent("math.atan2")
def _atan2(op, t):
    # atan2(y, x): (x dy - y dx) / (x^2 + y^2)
    arith, _ = _ops()
    y, x = op.operands
    denom = arith.addf(arith.mulf(x, x), arith.mulf(y, y))
    return _div(_sub(_mul(t[0], x), _mul(t[1], y)), denom)


# Conversions that make a float out of integer bits or integers. When those integers
# were computed from the bits of a differentiated float (aotc's exact fmod and float64
# copysign work on the bits), the float they rebuild has a derivative the scalar rules
# cannot see: it is refused rather than silently zero. Bits that only feed comparisons
# (the sorting network's total order) choose between values and are fine.
FROM_BITS = opset.FLOAT_FROM_BITS
TO_BITS = opset.FLOAT_TO_BITS  # conversions that take a float apart


@tangent("tensor.extract")
def _extract(op, t):
    """An element read from a tensor with a tangent (a gather in a body): the tangent's
    element at the same indices."""
    from aotc._mlir import tensor

    return tensor.extract(t[0], list(op.operands)[1:]) if t[0] is not None else None


def propagate(ops: list, tangents: dict) -> dict:
    """Pushes ``tangents`` (value -> tangent) through ``ops`` (in order); returns the
    tangents of every value reached. An op without a rule, or a float rebuilt from the
    bits of a differentiated value, raises ``KeyError`` with the op's name."""
    bits = set()  # integer values computed from the bits of a differentiated float
    for op in ops:
        if len(op.regions) and any(v in tangents or v in bits for v in reads(op)):
            raise KeyError(op.name)  # control flow inside a body (scf.if): no rule yet
        operands = list(op.operands)
        results = list(op.results)
        ts = [tangents.get(v) for v in operands]
        from_bits = any(v in bits for v in operands)
        if op.name in TO_BITS and ts[0] is not None:
            bits.update(results)
            continue
        if from_bits:
            if op.name in FROM_BITS and any(is_float(r.type) for r in results):
                raise KeyError(op.name)
            bits.update(r for r in results if not is_float(r.type))
        t = tangent_of(op, ts)
        if t is not None:
            tangents[results[0]] = t
    return tangents


def tangent_of(op, tangents: list):
    """The tangent of ``op``'s (single float or complex) result, or None; an op without a
    rule raises ``KeyError`` with its name."""
    if all(t is None for t in tangents):
        return None
    results = list(op.results)
    if len(results) != 1 or not (is_float(results[0].type) or is_complex(results[0].type)):
        return None
    rule = TANGENTS.get(op.name)
    if rule is None:
        raise KeyError(op.name)
    return rule(op, tangents)
