"""aotc-drop-carry-barriers: a loop's initial carry that is a returned update reads it
without the barrier the tracer put there.

The tracer puts a loop's computed initial carry behind a ``util.optimization_barrier``
marked ``aotc.carry_barrier`` (``ops/control._loop_input``: IREE 3.13 fails to order a
carry's producer fused with values read after the loop). But when the carry is an update
(``tensor.insert_slice``, a scatter, or a reshape of one) that is also returned, IREE
copied the update's buffer into itself at run time behind that barrier, when the buffer
was a donated argument's ("source and target ranges overlap within the same buffer":
fuzzer programs 6513+6514, 27953+27954). Such a barrier is dropped, unless other ops
read both the update and the loop's results: IREE then fails to order the update's
producer ("circular dependency": 57645, where a value is computed from both and the
update is not returned; 9700, where it is; 95552, where one op reads the update,
``argmax(u)``, and another the loop's result, ``roll(loop(u))``), so that barrier stays.
A barrier over an argument or a constant (what the cleanup left of a computed carry:
``trunc`` of an integer array) goes as well: it orders nothing, and over an argument
another loop also carries, IREE left a result without a buffer ("ref is null":
62574+62577).

Invariants: values are unchanged; only marked barriers go; running the pass twice
changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, as_op, collect_ops, register
from .opset import DESTINATION, RESHAPE_OPS

CARRY_BARRIER = "aotc.carry_barrier"


def _top_level(op, block):
    """The ancestor of ``op`` (or ``op``) whose block is ``block``, else None."""
    while op is not None and op.operation.block != block:
        parent = op.operation.parent
        op = None if parent is None or parent.name == "builtin.module" else as_op(parent)
    return op


def _readers(values, block, skip: tuple = ()) -> set:
    """The ops of ``block`` computed from ``values`` (their forward slice, without
    ``func.return`` and without what only ``skip`` reads), as their operations."""
    seen, stack = set(), list(values)
    while stack:
        for use in stack.pop().uses:
            op = _top_level(as_op(use.owner), block)
            if op is None or op.name == "func.return" or op.operation in skip:
                continue
            if op.operation not in seen:
                seen.add(op.operation)
                stack.extend(op.results)
    return seen


def _read_with_the_loop(barrier) -> bool:
    """Do ops other than the loop and the return read both the barrier's source and a
    result of the loop it feeds?"""
    block = barrier.operation.block
    loops = [_top_level(as_op(use.owner), block) for use in barrier.results[0].uses]
    after = set()
    for loop in loops:
        if loop is not None:
            after |= _readers(loop.results, block)
    update_readers = _readers([barrier.operands[0]], block, skip=(barrier.operation,))
    return bool(after) and bool(update_readers)


def _not_computed(value) -> bool:
    """Is ``value`` an argument or a constant (the tracer's barrier was over an op the
    cleanup folded away, ``trunc`` of an integer array)? Such a barrier orders nothing,
    and over an argument that another loop also carries IREE 3.13 left a result
    without a buffer at run time ("ref is null": fuzz programs 62574+62577)."""
    from aotc._mlir import ir

    return isinstance(value, ir.BlockArgument) or (
        isinstance(value, ir.OpResult) and as_op(value.owner).name == "arith.constant")


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
            if _not_computed(op.operands[0]) or (
                    _returned_update(op.operands[0]) and not _read_with_the_loop(op)):
                op.results[0].replace_all_uses_with(op.operands[0])
                op.erase()
