"""Scalars that emit arith ops for Python's operators, to write float algorithms as formulas.

``Float``, ``Int`` and ``Bool`` wrap MLIR scalar values inside a linalg body (the values a
ufunc rule receives). Arithmetic on them builds ``arith`` ops at the current insertion
point; a Python number on either side becomes a constant of the other side's type.
Comparisons are ordered (false when either side is NaN), as C's are.

    y = x * x + 1.0          # arith.mulf, arith.addf
    small = abs(x) < 0.5     # math.absf, arith.cmpf olt
    r = where(small, x, y)   # arith.select

An ``Int`` has the float's width (i64 for float64, i32 for float32): the bit-level parts
of the algorithms (exponents, masks, Payne-Hanek's fixed point) work on the float's bits.
"""

from __future__ import annotations

import numpy as np

from aotc._mlir import arith, ir, math, tensor
from aotc.constants import dense_constant, scalar_constant

_FLOAT_PREDICATES = {"oeq": 1, "ogt": 2, "oge": 3, "olt": 4, "ole": 5, "one": 6, "uno": 14}
_INT_PREDICATES = {"eq": 0, "ne": 1, "slt": 2, "sle": 3, "sgt": 4, "sge": 5,
                   "ult": 6, "ule": 7, "ugt": 8, "uge": 9}


def _predicate(table: dict, name: str) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), table[name])


class _Scalar:
    __slots__ = ("value",)

    def __init__(self, value: ir.Value):
        self.value = value

    def _operand(self, other) -> ir.Value:
        if isinstance(other, _Scalar):
            return other.value
        return scalar_constant(other, self.dtype)

    def _binary(self, op_class, other, swap=False):
        a, b = self.value, self._operand(other)
        return type(self)(op_class(b, a).result if swap else op_class(a, b).result)


class Bool(_Scalar):
    dtype = np.dtype(np.bool_)

    def __and__(self, other):
        return self._binary(arith.AndIOp, other)

    def __or__(self, other):
        return self._binary(arith.OrIOp, other)


class Float(_Scalar):
    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.float64 if str(self.value.type) == "f64" else np.float32)

    def const(self, value) -> "Float":
        return Float(scalar_constant(value, self.dtype))

    def __add__(self, other):
        return self._binary(arith.AddFOp, other)

    def __radd__(self, other):
        return self._binary(arith.AddFOp, other, swap=True)

    def __sub__(self, other):
        return self._binary(arith.SubFOp, other)

    def __rsub__(self, other):
        return self._binary(arith.SubFOp, other, swap=True)

    def __mul__(self, other):
        return self._binary(arith.MulFOp, other)

    def __rmul__(self, other):
        return self._binary(arith.MulFOp, other, swap=True)

    def __truediv__(self, other):
        return self._binary(arith.DivFOp, other)

    def __rtruediv__(self, other):
        return self._binary(arith.DivFOp, other, swap=True)

    def __neg__(self):
        return Float(arith.NegFOp(self.value).result)

    def __abs__(self):
        return Float(math.AbsFOp(self.value).result)

    def _compare(self, name: str, other) -> Bool:
        return Bool(arith.CmpFOp(_predicate(_FLOAT_PREDICATES, name), self.value,
                                 self._operand(other)).result)

    def __lt__(self, other):
        return self._compare("olt", other)

    def __le__(self, other):
        return self._compare("ole", other)

    def __gt__(self, other):
        return self._compare("ogt", other)

    def __ge__(self, other):
        return self._compare("oge", other)

    def equals(self, other) -> Bool:
        return self._compare("oeq", other)

    def is_nan(self) -> Bool:
        return self._compare("uno", self)

    def rounded(self) -> "Float":
        """The nearest integer (ties to even), by adding and subtracting 1.5 * 2**m (m the
        mantissa's bits): exact for |value| < 2**(m-1)."""
        magic = 1.5 * 2.0 ** (np.finfo(self.dtype).nmant)
        return (self + magic) - magic

    def sqrt(self) -> "Float":
        return Float(math.SqrtOp(self.value).result)

    def copysign(self, sign: "Float") -> "Float":
        return Float(math.CopySignOp(self.value, sign.value).result)

    def bits(self) -> "Int":
        ty = ir.IntegerType.get_signless(self.dtype.itemsize * 8)
        return Int(arith.BitcastOp(ty, self.value).result)

    def to_int32(self) -> "Int":
        """Rounded toward zero (C's cast) to int32, and 0 for a value out of its range or
        NaN: LLVM's conversion of those is poison, which its folds propagate through the
        selects that discard it (f16 ``sin(nan)``, computed at compile time, came back 0:
        fuzzer program 17509). (No conversion to or from int64: 32-bit Arm has no
        instruction for it, and the runtime-library call would not link.)"""
        inside = abs(self) < 2.0 ** 31  # false for NaN
        safe = where(inside, self, 0.0)
        return Int(arith.FPToSIOp(ir.IntegerType.get_signless(32), safe.value).result)

    def sign_bit(self) -> Bool:
        return self.bits() < 0

    def with_low_word_cleared(self) -> "Float":
        """The float with the low half of its bits zero (fdlibm's SET_LOW_WORD(x, 0)): a
        value whose products with another such value are exact."""
        half = self.dtype.itemsize * 4
        return (self.bits() & (-1 << half)).as_float()


class Int(_Scalar):
    @property
    def dtype(self) -> np.dtype:
        return np.dtype(f"int{ir.IntegerType(self.value.type).width}")

    def __add__(self, other):
        return self._binary(arith.AddIOp, other)

    def __radd__(self, other):
        return self._binary(arith.AddIOp, other, swap=True)

    def __sub__(self, other):
        return self._binary(arith.SubIOp, other)

    def __rsub__(self, other):
        return self._binary(arith.SubIOp, other, swap=True)

    def __mul__(self, other):
        return self._binary(arith.MulIOp, other)

    def __and__(self, other):
        return self._binary(arith.AndIOp, other)

    def __or__(self, other):
        return self._binary(arith.OrIOp, other)

    def __xor__(self, other):
        return self._binary(arith.XOrIOp, other)

    def __lshift__(self, other):
        return self._binary(arith.ShLIOp, other)

    def __rshift__(self, other):
        """Arithmetic (sign-extending) shift; ``shr`` is the logical one."""
        return self._binary(arith.ShRSIOp, other)

    def const(self, value: int) -> "Int":
        return Int(scalar_constant(value, self.dtype))

    def shr(self, other) -> "Int":
        return self._binary(arith.ShRUIOp, other)

    def _compare(self, name: str, other) -> Bool:
        return Bool(arith.CmpIOp(_predicate(_INT_PREDICATES, name), self.value,
                                 self._operand(other)).result)

    def __lt__(self, other):
        return self._compare("slt", other)

    def __le__(self, other):
        return self._compare("sle", other)

    def __gt__(self, other):
        return self._compare("sgt", other)

    def __ge__(self, other):
        return self._compare("sge", other)

    def equals(self, other) -> Bool:
        return self._compare("eq", other)

    def minimum(self, other) -> "Int":
        return self._binary(arith.MinSIOp, other)

    def maximum(self, other) -> "Int":
        return self._binary(arith.MaxSIOp, other)

    def as_float(self) -> Float:
        """The float with these bits."""
        ty = ir.F64Type.get() if self.dtype.itemsize == 8 else ir.F32Type.get()
        return Float(arith.BitcastOp(ty, self.value).result)

    def to_float(self, like: Float) -> Float:
        """The nearest float of ``like``'s type to this int32 (signed)."""
        if self.dtype.itemsize != 4:
            raise TypeError("only int32 converts to float (32-bit Arm has no int64 conversion)")
        return Float(arith.SIToFPOp(like.value.type, self.value).result)

    def exact_float(self, signed: bool = True) -> Float:
        """This int64 as a float64 without a conversion instruction (LLVM turns int64
        conversions into runtime-library calls on 32-bit Arm, which do not link): the
        integer placed in the mantissa of 1.5 * 2**52 (2**52 unsigned), which is then
        subtracted. Exact for |value| < 2**51 (signed) or value < 2**52 (unsigned)."""
        offset = 1.5 * 2.0 ** 52 if signed else 2.0 ** 52
        biased = self + 0x4338000000000000 if signed else self | 0x4330000000000000
        return biased.as_float() - offset

    def resize(self, bits: int) -> "Int":
        """Sign-extended or truncated to ``bits``."""
        width = self.dtype.itemsize * 8
        if bits == width:
            return self
        ty = ir.IntegerType.get_signless(bits)
        op_class = arith.ExtSIOp if bits > width else arith.TruncIOp
        return Int(op_class(ty, self.value).result)

    def lookup(self, table: np.ndarray) -> "Int":
        """``table[self]``: a read of a constant table at this index (in range)."""
        constant = dense_constant(np.asarray(table, self.dtype))
        index = arith.IndexCastOp(ir.IndexType.get(), self.value).result
        return Int(tensor.ExtractOp(constant, [index]).result)


def where(condition: Bool, a, b):
    """``a`` where ``condition`` holds, else ``b`` (``arith.select``; both are computed)."""
    like = a if isinstance(a, _Scalar) else b
    return type(like)(arith.SelectOp(condition.value, like._operand(a),
                                     like._operand(b)).result)


def horner(x: Float, coefficients) -> Float:
    """c0 + x*(c1 + x*(c2 + ...)) for ``coefficients`` = (c0, c1, c2, ...)."""
    *rest, last = coefficients
    result = x.const(last)
    for c in reversed(rest):
        result = result * x + c
    return result
