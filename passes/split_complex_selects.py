"""aotc-split-complex-selects: a select of complex scalars as selects of their parts.

IREE 3.13's SPIR-V code generation has no lowering for ``arith.select`` on
``complex<f32>`` ("failed to legalize operation 'arith.select'"), which ``where`` on
complex arrays and the factorization kernels' complex pivots emit. The select is rewritten
as ``complex.create`` of a select of the real parts and one of the imaginary parts, which
every target compiles.

Invariants: the condition and the result type are unchanged; no select of complex scalars
is left, so running the pass twice changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, collect_ops, register


def _is_complex_select(op) -> bool:
    from aotc._mlir import ir

    return (op.name == "arith.select"
            and isinstance(op.results[0].type.maybe_downcast(), ir.ComplexType))


def _split(op) -> None:
    from aotc._mlir import arith, complex_dialect as cx, ir

    condition, when_true, when_false = op.operands
    with ir.InsertionPoint(op), op.location:
        parts = [arith.SelectOp(condition, part(when_true).result, part(when_false).result).result
                 for part in (cx.ReOp, cx.ImOp)]
        result = cx.CreateOp(op.results[0].type, *parts).result
    op.results[0].replace_all_uses_with(result)
    op.erase()


@register
@dataclass(frozen=True)
class SplitComplexSelects(ModulePass):
    """Rewrites selects of complex scalars into selects of parts (the module docstring)."""

    name = "aotc-split-complex-selects"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        for op, _ in collect_ops(module, _is_complex_select):
            _split(op)
