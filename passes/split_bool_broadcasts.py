"""aotc-split-bool-broadcasts: a scalar bool broadcast that IREE would yield beside its
own byte copy is computed in a dispatch of its own.

IREE stores a bool as a byte, so a fused elementwise generic that yields a 0-d bool
input broadcast (``%in``) and also that input widened to 8 bits (``arith.extui %in :
i1 to i8``) writes two identical results; IREE 3.13's CPU code generator then copies one
result into the other outside the workgroup loops and fails ("write affecting
operations on global resources are restricted to workgroup distributed contexts"). The
pair appears when IREE folds a comparison back to the bool it came from: ``v =
broadcast_to(b, s).astype(int8); return v != 0, v`` (fuzzer program 19274). A bool
broadcast along some axes, or any non-scalar bool, compiles.

Which ops: where any all-parallel generic's fused counterpart (``fusion_probe``) yields
such a pair, every generic reading a 0-d bool has its results read through a
``util.optimization_barrier``: it is computed in a dispatch of its own, and no consumer
yields the bool beside its byte (fusion keeps one of several fused ops' locations, so
the probe cannot say which original made the pair). Invariants: values are unchanged;
modules without a 0-d bool input of a generic are not probed; running the pass twice
changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, all_parallel, as_op, operand_segments, register
from .fusion_probe import generics, probe
from .donation.function import BARRIER


def _scalar_bool(value) -> bool:
    from aotc._mlir import ir

    return (isinstance(value.type, ir.RankedTensorType) and value.type.rank == 0
            and value.type.element_type == ir.IntegerType.get_signless(1))


def _reads_scalar_bool(op) -> bool:
    n_ins, _ = operand_segments(op)
    return any(_scalar_bool(v) for v in list(op.operands)[:n_ins])


def _yields_bool_and_its_byte(fused) -> bool:
    """``fused`` yields a 0-d bool input as it is and also its zero extension."""
    from aotc._mlir import ir

    n_ins, _ = operand_segments(fused)
    arguments = list(fused.regions[0].blocks[0].arguments)[:n_ins]
    scalar = {arguments[k] for k, v in enumerate(list(fused.operands)[:n_ins])
              if _scalar_bool(v)}
    terminator = as_op(list(fused.regions[0].blocks[0].operations)[-1])
    yielded = list(terminator.operands)
    widened = {as_op(v.owner).operands[0] for v in yielded
               if isinstance(v, ir.OpResult) and as_op(v.owner).name == "arith.extui"}
    return any(v in scalar and v in widened for v in yielded)


def _read_through_barrier(op, result) -> None:
    """Every use of ``result`` (of ``op``) reads it through one barrier after ``op``."""
    from aotc._mlir import ir

    with ir.InsertionPoint.after(op), op.location:
        barrier = ir.Operation.create(BARRIER, results=[result.type], operands=[result])
    result.replace_all_uses_with(barrier.results[0])
    barrier.operands[0] = result


@register
@dataclass(frozen=True)
class SplitBoolBroadcasts(ModulePass):
    """Barriers before the generics IREE would fuse into a bool and its byte copy."""

    name = "aotc-split-bool-broadcasts"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        readers = generics(module, _reads_scalar_bool)
        if not readers:
            return
        if not any(pair for _, pair in probe(module, all_parallel, _yields_bool_and_its_byte)):
            return
        # The fused op found may be any of several originals (fusion keeps one
        # location), so every generic reading a 0-d bool gets a dispatch of its own: its
        # results are read through barriers, and no consumer yields it beside its byte.
        for op in readers:
            for result in op.results:
                uses = list(result.uses)
                if uses and not all(as_op(u.owner).name == BARRIER for u in uses):
                    _read_through_barrier(op, result)
