"""aotc-expand-float-minmax: float minimum/maximum as compares and selects.

IREE lowers ``arith.maximumf``/``minimumf``/``maxnumf``/``minnumf`` to LLVM's min/max
intrinsics. CPUs without a min/max instruction for scalars (32-bit Arm before Armv8)
turn those into calls to ``fmaxf``/``fminf``, which IREE's embedded executables cannot
link (they link no libm). This pass rewrites each op into ``arith.cmpf`` + ``arith.select``
with numpy's NaN rules, which every CPU has:

- ``maximumf``/``minimumf`` (``np.maximum``/``np.minimum``): NaN if either operand is NaN;
- ``maxnumf``/``minnumf`` (``np.fmax``/``np.fmin``): the other operand if one is NaN.

Invariants: operand and result types are unchanged (scalars or vectors); the rewritten
ops are gone afterwards, so running the pass twice changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import opset
from .base import ModulePass, collect_ops, register

# op name -> (the ordered compare under which lhs wins, what a NaN operand does)
_RULES = {
    "arith.maximumf": ("ogt", "propagate"),
    "arith.minimumf": ("olt", "propagate"),
    "arith.maxnumf": ("ogt", "ignore"),
    "arith.minnumf": ("olt", "ignore"),
}


# Attached to the ops' rows, so an op this table names must be in the vocabulary (a row
# missing fails at import, naming the row to add).
@opset.attach("expand-minmax", *_RULES)
def _expand(op) -> None:
    from aotc._mlir import arith, ir

    predicate, nan_rule = _RULES[op.name]
    lhs, rhs = op.operands
    with ir.InsertionPoint(op), op.location:
        # pick = lhs where it wins an ordered compare, else rhs (rhs also when one is NaN)
        wins = arith.CmpFOp(getattr(arith.CmpFPredicate, predicate.upper()), lhs, rhs).result
        pick = arith.SelectOp(wins, lhs, rhs).result
        if nan_rule == "propagate":
            # a NaN lhs must win too (a NaN rhs already does: the compare was false)
            lhs_nan = arith.CmpFOp(arith.CmpFPredicate.UNO, lhs, lhs).result
            result = arith.SelectOp(lhs_nan, lhs, pick).result
        else:
            # a NaN rhs must lose (a NaN lhs already does)
            rhs_nan = arith.CmpFOp(arith.CmpFPredicate.UNO, rhs, rhs).result
            result = arith.SelectOp(rhs_nan, lhs, pick).result
    op.result.replace_all_uses_with(result)
    op.erase()


@register
@dataclass(frozen=True)
class ExpandFloatMinMax(ModulePass):
    """Rewrites float min/max ops into compares and selects (see the module docstring)."""

    name = "aotc-expand-float-minmax"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        for op, _ in collect_ops(module, lambda op: op.name in _RULES):
            _expand(op)
