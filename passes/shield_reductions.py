"""aotc-shield-reductions: a reduction whose summed values IREE would compute from no
input reads them through a barrier.

IREE 3.13's CPU code generator vectorizes a reduction whose body reads none of its
inputs wrongly: one term per vector instead of one per element (``sum(x * 0 + 1)`` of
31 int32 came back 2, ``sum(where(m, 1, 1))`` 4, ``sum((x - x) == 0)`` 4; a reduction
of 8, 16 or 64 ones was right, of 3, 4 or 31 not). Such a body appears after IREE has
fused an elementwise producer whose values are constant (after its folds) into the
reduction, or folded a constant it computed at compile time into it (``sum(sort(ones(8,
bool)))`` was 1, ``sum(sort(full(31, 3.0)))`` 12). This pass finds both kinds before IREE
and puts each input of such a reduction that an op computes through a
``util.optimization_barrier``, which IREE neither fuses nor folds across: the reduction
then reads a materialized tensor.

Which reductions: (1) an input computed from constants only (no block argument reaches
it), a splat constant among them (aotc-fold-splats makes them; a reduction merged with
others by aotc-fuse-siblings over one came back wrong too), while a dense constant of
several values is read as it is, and (2) a reduction some result
of which depends on no input and no loop index once a copy of the module has gone
through IREE's own elementwise fusion and folds (``fusion_probe``; a result that is only
its init is left alone). Invariants: values are unchanged; only inputs of those
reductions get a barrier, one per input; running the pass twice changes nothing more (a
barrier's result is not rewrapped, and a shielded reduction reads its inputs).
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import (ModulePass, as_op, computed_from_constants, has_reduction, operand_segments,
                   register, splat_constant)
from .donation.function import BARRIER, insert_barrier
from .fusion_probe import generics, probe, yielded_without_inputs


def _result_of(value, excluded: tuple[str, ...]) -> bool:
    """``value`` is an op's result, the op not one of ``excluded``."""
    from aotc._mlir import ir

    return isinstance(value, ir.OpResult) and as_op(value.owner).name not in excluded


def _several_values(value) -> bool:
    """``value`` is a dense constant that is not a splat (a table: read as it is)."""
    owner = as_op(value.owner)
    return owner.name == "arith.constant" and not splat_constant(owner)


def _inputs(op) -> list:
    n_ins, _ = operand_segments(op)
    return list(op.operands)[:n_ins]


@register
@dataclass(frozen=True)
class ShieldReductions(ModulePass):
    """Barriers before the reductions IREE would compute wrongly (see the docstring)."""

    name = "aotc-shield-reductions"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        memo: dict = {}
        shielded = {}
        for op in generics(module, has_reduction):
            positions = [k for k, v in enumerate(_inputs(op))
                         if _result_of(v, (BARRIER,)) and computed_from_constants(v, memo)
                         and not _several_values(v)]
            if positions:
                shielded[op] = positions
        for op, invariant in probe(module, has_reduction,
                                   lambda fused: any(v is not None for v in
                                                     yielded_without_inputs(fused))):
            if invariant:  # a plain constant too: IREE folds a splat into the body
                shielded[op] = None
        for op, positions in shielded.items():
            shield_inputs(op, positions)


def shield_inputs(op, positions=None) -> None:
    """Each input of ``op`` at ``positions`` (default: all) that an op other than a
    barrier computes is read through a barrier of its own."""
    for k in range(len(_inputs(op))) if positions is None else positions:
        if _result_of(op.operands[k], (BARRIER,)):  # not already shielded
            op.operands[k] = insert_barrier(op, [op.operands[k]]).results[0]
