"""Loops of row updates made fit for one dispatch: which ops to scalarize, and the loop
as it was kept beside them for the compile that retries without loop dispatches.

aotc-loops-in-dispatch runs a loop as one dispatch when its steps are scalar; a loop
whose steps update rows (``x[i] = 0.5 * (x[i - 1] + x[i])``: elementwise ops,
reductions and slice writes of more than one element) gets there once those ops are
scalar loops (``scalarize.py``). ``row_ops`` picks them; ``keep_as_it_was`` keeps a copy
of the loop as it was, which ``restore_originals`` puts back when the dispatches are
undone (``loops_in_dispatch.unwrap``), so the retry compiles IREE's own form of the
row ops rather than scalar loops run one step at a time by its VM.
"""

from __future__ import annotations

import itertools
import math

from .base import as_op
from .materialize_constants import element_bytes
from .opset import CARRIES_AT
from .scalarize import fused, scalarizable

# Per op of a loop whose larger ops are all ``scalarize``-able: rewritten as scalar loops,
# they run in the loop's dispatch too (one thread, no structured op for IREE to
# distribute); measured in benchmarks/loops.py.
ROW_MAX_WORK = 1 << 16
# The bytes of the new tensors the scalarized ops of one loop may make: they live on the
# dispatch's stack, which IREE 3.13 limits to 32 KiB (a [16, 16384] float32 row sweep
# needed 192 KiB and failed to compile).
ROW_TEMPORARY_BYTES = 24 << 10


# A loop whose row ops were scalarized, and a copy of it as it was, after the dispatch in
# an ``scf.if`` on a constant false (IREE folds it away), both marked with one number:
# ``unwrap`` puts the copy back in the loop's place. (An unused copy inside the dispatch
# was compiled there, and one at the function's level run: its barriers keep it.)
SCALARIZED_LOOP = "aotc.scalarized_loop"
ORIGINAL_LOOP = "aotc.original_loop"


def row_ops(loop, max_work: int, op_work) -> list | None:
    """The ops of the nest of ``loop`` to ``scalarize`` so that it can run as one
    dispatch: every op of more than ``max_work`` element-steps (``op_work``) is
    scalarizable (or a slice read) of at most ``ROW_MAX_WORK``, and the new tensors they
    make fit ``ROW_TEMPORARY_BYTES``; None where not."""
    found = []
    for region in loop.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = as_op(inner)
                if inner.name.startswith("flow."):
                    return None
                if inner.name.startswith("scf."):
                    nested = row_ops(inner, max_work, op_work)
                    if nested is None:
                        return None
                    found.extend(nested)
                    continue
                work = op_work(inner)
                if work is None or work > ROW_MAX_WORK:
                    return None
                if inner.name == "tensor.extract_slice" and work > max_work:
                    found.append(inner)  # not rewritten; its copy counts (_temporary_bytes)
                    continue
                if work <= max_work:
                    continue
                if not scalarizable(inner):
                    return None
                found.append(inner)
    return found if _temporary_bytes(found) <= ROW_TEMPORARY_BYTES else None


def _temporary_bytes(ops: list) -> int:
    """The bytes of the new tensors ``ops`` make on the dispatch's stack: the results
    written into a ``tensor.empty`` (not into an operand's buffer) that are not ``fused``
    into their reader, and the slices read, which IREE's bufferization copies where the
    loop writes the tensor they are read from (a [16, 16384] row sweep copied both rows
    it reads: 128 KiB)."""
    from aotc._mlir import ir

    total = 0
    for op in ops:
        if op.name == "tensor.extract_slice":
            total += _bytes(op.results[0])
            continue
        for result, init in zip(op.results, list(op.operands)[-len(op.results):]):
            fresh = isinstance(init, ir.OpResult) and as_op(init.owner).name == "tensor.empty"
            if fresh and not fused(result):
                total += _bytes(result)
    return total


def _bytes(value) -> int:
    return math.prod(value.type.shape) * max(1, element_bytes(value.type.element_type))


def keep_as_it_was(loop, number: int):
    """A copy of ``loop`` in an ``scf.if`` on false after it (yielding the loop's initial
    values otherwise), the ``scf.if`` and ``loop`` marked with ``number``."""
    from aotc._mlir import arith, ir, scf

    with ir.InsertionPoint(loop), loop.location:
        never = arith.constant(ir.IntegerType.get_signless(1), 0)
        guard = scf.IfOp(never, [r.type for r in loop.results], has_else=True)
        with ir.InsertionPoint(guard.then_block):
            scf.YieldOp(list(loop.clone().results))
        with ir.InsertionPoint(guard.else_block):
            scf.YieldOp(list(loop.operands)[CARRIES_AT[loop.name]:])
    guard = as_op(guard.operation)
    guard.move_after(loop)
    mark = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), number)
    guard.attributes[ORIGINAL_LOOP] = mark
    loop.attributes[SCALARIZED_LOOP] = mark
    return guard


def _marked(module) -> dict:
    """{mark name: {number: op}} of the ops ``keep_as_it_was`` marked."""
    from aotc._mlir import ir

    marked = {ORIGINAL_LOOP: {}, SCALARIZED_LOOP: {}}

    def visit(op):
        op = as_op(op)
        for name, found in marked.items():
            if name in op.attributes:
                found[ir.IntegerAttr(op.attributes[name]).value] = op
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return marked


def kept_numbers(module):
    """The numbers ``keep_as_it_was`` may use next in ``module`` (after any in use)."""
    return itertools.count(max(_marked(module)[ORIGINAL_LOOP], default=-1) + 1)


def restore_originals(module) -> None:
    """Each scalarized loop replaced by the copy ``keep_as_it_was`` made of it (once the
    dispatches are undone, both are in the function)."""
    marked = _marked(module)
    for number, guard in marked[ORIGINAL_LOOP].items():
        changed = marked[SCALARIZED_LOOP][number]
        original = as_op(list(guard.regions[0].blocks[0].operations)[0])
        original.move_before(changed)
        for old, new in zip(changed.results, original.results):
            old.replace_all_uses_with(new)
        changed.erase()
        guard.erase()
