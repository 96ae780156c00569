"""aotc-expand-math and aotc-expand-math-f32: math functions IREE's CPU code lacks or gets
wrong, rewritten into aotc's own arith-only versions (``passes/libm``).

IREE's CPU code links no libm. For float64 it refuses sin, cos, tan, asin, acos, atan and
atan2, and its expm1, exp2, log1p, sinh, tanh, atanh, cbrt, log2 and powf are inaccurate
(expm1 is 10**15 ulps off below 1e-5, exp2 400 ulps near 1024, powf 1000 ulps near
2**1000). Its float32 sin, cos and tan reduce the argument with a float32 pi/2 (40 ulps
off at 100, values above 1 past 1e9), and its float32 atan, asin, acos, cbrt, exp2 and
expm1 are up to 57 ulps off, powf 120.

Which ops, and how, is each op's ``cpu_expansion`` in the vocabulary (passes/opset.py):

- ``aotc-expand-math`` replaces each float64 op marked "f64" by its expansion
  (``libm.FLOAT64``), and the float32 ops marked "f32-own" by float32 ones;
- ``aotc-expand-math-f32`` replaces each float32 op marked "f32" (sin, cos, tan, asin,
  acos, atan, atan2, cbrt, expm1, powf) by the float64
  expansion between an ``extf`` and a ``truncf``: rounded twice, within 0.5 ulp
  plus 2**-29 of the exact value (powf has a version of its own for float32 operands,
  ``libm.FLOAT32_INPUT``, which rounds to float32 itself). It introduces float64, so a
  module that also targets a device without float64 (Vulkan) skips it
  (``build.finish_module``).

The frontend emits plain ``math`` ops, so the traced IR stays readable and the batching
(and later differentiation) passes see ``math.sin``, not its bit arithmetic; only the
CPU targets' modules are rewritten, last, before IREE. CUDA's libdevice has accurate
versions of all of them.

Invariants: operand and result types are unchanged; scalars only (the ops sit in linalg
bodies); the rewritten ops are gone afterwards, so running the pass twice changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from . import opset
from .base import ModulePass, collect_ops, register


@opset.attach("expand-math", *opset.CPU_EXPANSION["f64"])
def _expand(op, how: str) -> None:
    from aotc._mlir import arith, ir

    from .libm import FLOAT32, FLOAT32_INPUT, FLOAT64
    from .libm.values import Float

    widen = how == "f32"
    table = {"f64": FLOAT64, "f32-own": FLOAT32, "f32": FLOAT32_INPUT}[how]
    implementation = table.get(op.name, FLOAT64[op.name])
    with ir.InsertionPoint(op), op.location:
        operands = list(op.operands)
        if widen:
            f64 = ir.F64Type.get()
            operands = [arith.ExtFOp(f64, v).result for v in operands]
        result = implementation(*(Float(v) for v in operands)).value
        # An implementation may round to float32 itself (pow builds subnormal float32
        # results from their bits: truncf would flush them on IREE's CPU runtime).
        if widen and result.type != op.result.type:
            result = arith.TruncFOp(op.result.type, result).result
    op.result.replace_all_uses_with(result)
    op.erase()


# (the pass's element type, the op's) -> the kind of expansion it does (opset.CPU_EXPANSION)
_HOW = {("f64", "f64"): "f64", ("f64", "f32"): "f32-own", ("f32", "f32"): "f32"}


@register
@dataclass(frozen=True)
class ExpandMath(ModulePass):
    """float64 math ops into aotc's arith expansions (see the module docstring)."""

    name = "aotc-expand-math"
    element_type: ClassVar[str] = "f64"
    introduces: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def from_options(cls, options):
        return cls()

    def _selects(self, op) -> str | None:
        """How to rewrite ``op`` (a kind of ``opset.CPU_EXPANSION``), or None."""
        if len(op.results) != 1:
            return None
        how = _HOW.get((self.element_type, str(op.result.type)))
        return how if how and op.name in opset.CPU_EXPANSION[how] else None

    def run(self, module) -> None:
        for op, how in collect_ops(module, self._selects):
            _expand(op, how)


@register
@dataclass(frozen=True)
class ExpandFloat32Math(ExpandMath):
    """float32 math ops IREE gets wrong, computed in float64 (see the module docstring)."""

    name = "aotc-expand-math-f32"
    element_type: ClassVar[str] = "f32"
    introduces: ClassVar[frozenset[str]] = frozenset({"f64"})
