"""Derivatives of the ``complex`` dialect's scalar ops in linalg bodies (numpy's complex64
and complex128 arithmetic, ``aotc/ops/scalar_complex.py``), as tangent rules beside the
real ones of ``scalar.py``.

A complex value's tangent is a complex value, and every rule is the real-linear map
the op's derivative is: ``f'(z) dz`` for the holomorphic ops (JAX's formulas), and for
the others the map on the real and imaginary parts (``conj``: conj(dz); ``re``, ``im``:
the part of dz; ``abs``: re(conj(z) dz) / |z|, 0 at 0 as JAX's). The reverse rule of a
generic (``generic.py``) pushes the seeds 1 and i through these maps and takes JAX's
cotangent convention from them (the cotangent of z = x + iy is dL/dx - i dL/dy).
"""

from __future__ import annotations

from .scalar import _add, _div, _mul, _sub, tangent


def _cx():
    from aotc._mlir import complex_dialect

    return complex_dialect


def _const(like, value: float):
    from .core import float_constant

    return float_constant(like.type, value)


def _zero_where_zero(r, value):
    """``value`` where the real ``r`` is nonzero, else zero (of ``value``'s type)."""
    from aotc.ops.scalar_builders import cmpf, select

    return select(cmpf("oeq", r, _const(r, 0.0)), _const(value, 0.0), value)


def _linear(name: str, op_class: str):
    """The rule of an op that is real-linear in its operand: the same op of the tangent."""
    @tangent(name)
    def rule(op, t):
        return getattr(_cx(), op_class)(t[0]).result
    return rule


for _name, _op_class in (("complex.conj", "ConjOp"), ("complex.re", "ReOp"),
                         ("complex.im", "ImOp")):
    _linear(_name, _op_class)


@tangent("complex.create")
def _create(op, t):
    from aotc._mlir import ir

    re, im = op.operands
    parts = [v if v is not None else _const(like, 0.0) for v, like in zip(t, (re, im))]
    return _cx().CreateOp(ir.ComplexType(op.results[0].type), *parts).result


@tangent("complex.abs")
def _abs(op, t):
    from aotc._mlir import arith

    z, r = op.operands[0], op.results[0]
    along = _cx().ReOp(_cx().MulOp(_cx().ConjOp(z).result, t[0]).result).result
    return _zero_where_zero(r, arith.divf(along, r))


@tangent("complex.sign")
def _sign(op, t):
    # s = z / |z|: ds = (dz - s re(conj(s) dz)) / |z|, 0 at 0
    from aotc._mlir import ir

    z, s = op.operands[0], op.results[0]
    r = _cx().AbsOp(z).result
    along = _cx().ReOp(_cx().MulOp(_cx().ConjOp(s).result, t[0]).result).result
    zero = _const(r, 0.0)
    radial = _cx().MulOp(s, _cx().CreateOp(ir.ComplexType(s.type), along, zero).result).result
    as_complex = _cx().CreateOp(ir.ComplexType(s.type), r, zero).result
    return _zero_where_zero(r, _div(_sub(t[0], radial), as_complex))


def _holomorphic(name: str, derivative):
    """A rule ``derivative(z, result) * dz``."""
    @tangent(name)
    def rule(op, t):
        return _mul(t[0], derivative(op.operands[0], op.results[0]))
    return rule


_holomorphic("complex.exp", lambda z, w: w)
_holomorphic("complex.expm1", lambda z, w: _cx().AddOp(w, _const(w, 1.0)).result)
_holomorphic("complex.log", lambda z, w: _cx().DivOp(_const(z, 1.0), z).result)
_holomorphic("complex.log1p", lambda z, w: _cx().DivOp(
    _const(z, 1.0), _cx().AddOp(z, _const(z, 1.0)).result).result)
_holomorphic("complex.sqrt", lambda z, w: _cx().DivOp(
    _const(w, 0.5), w).result)
_holomorphic("complex.sin", lambda z, w: _cx().CosOp(z).result)
_holomorphic("complex.cos", lambda z, w: _cx().NegOp(_cx().SinOp(z).result).result)
_holomorphic("complex.tan", lambda z, w: _cx().AddOp(
    _const(w, 1.0), _cx().MulOp(w, w).result).result)
_holomorphic("complex.tanh", lambda z, w: _cx().SubOp(
    _const(w, 1.0), _cx().MulOp(w, w).result).result)


@tangent("complex.pow")
def _pow(op, t):
    # d(a^b) = b a^(b-1) da + log(a) a^b db, log(a) taken as 0 at a = 0 (JAX's)
    from aotc.ops.scalar_builders import cmpf, select

    a, b = op.operands
    w = op.results[0]
    da = None
    if t[0] is not None:
        slope = _cx().MulOp(b, _cx().PowOp(a, _cx().SubOp(b, _const(b, 1.0)).result).result)
        da = _mul(t[0], slope.result)
    db = None
    if t[1] is not None:
        r = _cx().AbsOp(a).result
        safe = select(cmpf("oeq", r, _const(r, 0.0)), _const(a, 1.0), a)
        db = _mul(t[1], _cx().MulOp(_cx().LogOp(safe).result, w).result)
    return _add(da, db)
