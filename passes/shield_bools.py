"""aotc-shield-constant-bools: a bool tensor computed from constants reaches a reduction
through a barrier.

IREE 3.13's global optimization folds a reduction over an i1 tensor it can compute at
compile time to one term: ``sum(sort(ones(8, bool)))`` came back 1 (numpy: 8), and so
did a ``linalg.fill`` of true summed (fuzzer program 22228, whose bools were ``x <= x``:
see ``aotc-fold-self-comparisons``). Dense i1 constants and bools computed from the
arguments are summed right. This pass puts each i1 input of a reduction that depends on
no argument of its function through a ``util.optimization_barrier``, which IREE does not
fold across: the reduction then runs (on a handful of constant bools).

Invariants: values are unchanged; only reductions' i1 inputs that no function argument
reaches get a barrier; running the pass twice changes nothing more (a barrier's result
is not rewrapped).
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, as_op, collect_ops, operand_segments, register
from .donation.function import BARRIER, insert_barrier


def _is_bool_tensor(value) -> bool:
    from aotc._mlir import ir

    return (isinstance(value.type, ir.RankedTensorType)
            and str(value.type.element_type) == "i1")


def _from_constants(value, memo: dict) -> bool:
    """Whether ``value`` is computed from constants only (no block argument reaches it,
    through any op or the ops nested in its regions)."""
    from aotc._mlir import ir

    if value in memo:
        return memo[value]
    memo[value] = False  # a cycle (cannot happen in SSA) or a pending answer: not constant
    if not isinstance(value, ir.OpResult):
        return False
    stack, ops = [as_op(value.owner)], []
    while stack:
        op = stack.pop()
        ops.append(op)
        for region in op.regions:
            for block in region.blocks:
                stack.extend(as_op(o) for o in block.operations)
    inner = {r for op in ops for r in op.results}
    inner |= {a for op in ops for region in op.regions for b in region.blocks for a in b.arguments}
    answer = all(v in inner or _from_constants(v, memo) for op in ops for v in op.operands)
    memo[value] = answer
    return answer


def _shielded_inputs(op, memo) -> list[int]:
    if op.name != "linalg.generic":
        return []
    if not any("reduction" in str(it) for it in op.attributes["iterator_types"]):
        return []
    n_ins, _ = operand_segments(op)
    return [i for i, v in enumerate(list(op.operands)[:n_ins])
            if _is_bool_tensor(v) and _from_constants(v, memo)
            and as_op(v.owner).name != BARRIER]


@register
@dataclass(frozen=True)
class ShieldConstantBools(ModulePass):
    """Barriers between constant bools and reductions (see the module docstring)."""

    name = "aotc-shield-constant-bools"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        memo: dict = {}
        for op, positions in collect_ops(module, lambda o: _shielded_inputs(as_op(o), memo)):
            op = as_op(op)
            barrier = insert_barrier(op, [op.operands[i] for i in positions])
            for k, i in enumerate(positions):
                op.operands[i] = barrier.results[k]
