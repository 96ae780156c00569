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

from .base import (ModulePass, all_parallel, as_op, computed_from_constants, has_reduction,
                   operand_segments, register, splat_constant)
from .donation.function import BARRIER, insert_barrier
from .fusion_probe import generics, probe, yielded_without_inputs
from .opset import ELEMENTWISE_OPS, VIEW_OPS


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
        for op in generics(module, lambda o: True):
            positions = _pairwise_reads(op)
            if positions:
                shielded[op] = sorted(set(shielded.get(op) or []) | set(positions))
        for op, positions in shielded.items():
            shield_inputs(op, positions)


def _reduced_from(value):
    """The reduction result ``value`` is a view or a one-input elementwise function of
    (a transpose, a reshape, ``sqrt(n)``), else None."""
    from aotc._mlir import ir

    while isinstance(value, ir.OpResult):
        op = as_op(value.owner)
        if op.name == "linalg.generic" and has_reduction(op):
            return value
        if op.name in VIEW_OPS:
            tensors = list(op.operands)[:1]
        elif op.name in ELEMENTWISE_OPS and "operandSegmentSizes" in op.attributes:
            tensors = [v for v in _inputs(op) if isinstance(v.type, ir.RankedTensorType)]
        elif op.name in ELEMENTWISE_OPS and len(op.operands) == 2:  # a transpose: in, init
            tensors = list(op.operands)[:1]
        else:
            return None
        if len(tensors) != 1:
            return None
        value = tensors[0]
    return None


def _pairwise_reads(op) -> list:
    """Positions of ``op``'s inputs that come from one reduction result through two or
    more inputs (``n[:, None] + n[None, :]`` of ``n = sum(x * x, axis=1)``). IREE 3.13
    fuses the reduction into such a consumer and reads, for the second view, values its
    tile has not reduced: every pairwise sum of squares came back wrong, by up to 234
    (fuzzer program 54132, a pairwise fmin of a min over axis 0)."""
    if not all_parallel(op):
        return []
    sources: dict = {}
    for k, v in enumerate(_inputs(op)):
        root = _reduced_from(v)
        if root is not None:
            sources.setdefault(root, []).append(k)
    return [k for ks in sources.values() if len(ks) > 1 for k in ks]


def shield_inputs(op, positions=None) -> None:
    """Each input of ``op`` at ``positions`` (default: all) that an op other than a
    barrier computes is read through a barrier of its own."""
    for k in range(len(_inputs(op))) if positions is None else positions:
        if _result_of(op.operands[k], (BARRIER,)):  # not already shielded
            op.operands[k] = insert_barrier(op, [op.operands[k]]).results[0]
