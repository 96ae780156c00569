"""aotc-drop-carry-barriers: a loop's initial carry that is a returned update reads it
without the barrier the tracer put there.

The tracer puts a loop's computed initial carry behind a ``util.optimization_barrier``
marked ``aotc.carry_barrier`` (``ops/control._loop_input``: IREE 3.13 fails to order a
carry's producer fused with values read after the loop). But when the carry is an update
(``tensor.insert_slice``, a scatter, or a reshape of one) that is also returned, IREE
copied the update's buffer into itself at run time behind that barrier, when the buffer
was a donated argument's ("source and target ranges overlap within the same buffer":
fuzzer programs 6513+6514, 27953+27954). Such a barrier is dropped; a barrier over an
update that is not returned (read again after the loop: 57645) stays.

Invariants: values are unchanged; only marked barriers go; running the pass twice
changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, as_op, collect_ops, register
from .opset import DESTINATION, RESHAPE_OPS

CARRY_BARRIER = "aotc.carry_barrier"


def _returned_update(value) -> bool:
    """Is ``value`` an update (through reshapes) that is returned (through reshapes)?"""
    from aotc._mlir import ir

    source = value
    while isinstance(source, ir.OpResult) and as_op(source.owner).name in RESHAPE_OPS:
        source = as_op(source.owner).operands[0]
    if not (isinstance(source, ir.OpResult) and as_op(source.owner).name in DESTINATION):
        return False
    stack = [source]
    while stack:
        for use in stack.pop().uses:
            owner = as_op(use.owner)
            if owner.name == "func.return":
                return True
            if owner.name in RESHAPE_OPS:
                stack.extend(owner.results)
    return False


@register
@dataclass(frozen=True)
class DropCarryBarriers(ModulePass):
    """Drops the carry barriers over returned updates (see the module docstring)."""

    name = "aotc-drop-carry-barriers"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        for op, _ in collect_ops(module, lambda o: CARRY_BARRIER in o.attributes):
            op = as_op(op)
            if _returned_update(op.operands[0]):
                op.results[0].replace_all_uses_with(op.operands[0])
                op.erase()
