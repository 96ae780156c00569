"""aotc-fold-empty-loops: a structured op that iterates zero times is its init.

A ``linalg.generic`` whose iteration domain is empty (a loop of range 0: ``x[:, :0].sum(1)``,
``a @ b`` with an inner dimension of 0, a reduction of a 0-d slice of a constant) runs
its body zero times, so its results are its ``outs`` operands as given (the sums' zeros,
the maxima's -inf, or an empty tensor). So is a contraction (matmul, convolution,
pooling) with an operand of size 0. This pass replaces such results by those operands.
IREE 3.13's CPU code generation divides by zero on some of them (a SIGFPE that kills the
process: a contraction of a [3, 0] and a [0, 5] constant when IREE's const-eval does not
fold it first, two merged reductions over a [3, 0] array), so none reaches it.

Invariants: only ops whose domain is provably empty change (a generic's loop ranges are
read where its maps index an operand with a plain loop variable); values are unchanged;
running the pass twice changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, as_op, collect_ops, loop_ranges, operand_segments, register
from .opset import CONTRACTION_OPS


def _has_size_zero(value) -> bool:
    from aotc._mlir import ir

    return isinstance(value.type, ir.RankedTensorType) and 0 in value.type.shape


def _iterates_zero_times(op) -> bool:
    if op.name in CONTRACTION_OPS:
        return any(_has_size_zero(v) for v in op.operands)
    return op.name == "linalg.generic" and 0 in loop_ranges(op)


@register
@dataclass(frozen=True)
class FoldEmptyLoops(ModulePass):
    """Replaces the results of ops that iterate zero times (see the module docstring)."""

    name = "aotc-fold-empty-loops"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        for op, _ in collect_ops(module, lambda o: _iterates_zero_times(as_op(o))):
            op = as_op(op)
            n_ins, n_outs = operand_segments(op)
            outs = list(op.operands)[n_ins:n_ins + n_outs]
            for result, init in zip(op.results, outs):
                result.replace_all_uses_with(init)
            op.erase()
