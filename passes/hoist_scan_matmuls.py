"""aotc-hoist-scan-matmuls: a matmul a loop does once per step on that step's slice of a
sequence, with a weight that does not change, is done once for the whole sequence
before the loop; each step reads its rows of the result.

A ``lax.scan`` over ``xs`` whose body computes ``x_t @ W`` (an RNN's input projection)
runs a small matmul per step: [8, 64] @ [64, 256] in the Elman RNN of
benchmarks/run.py, a dispatch per step of 0.26 MFLOP. Before the loop it is one
[1024, 64] @ [64, 256] matmul that IREE's tiled matmul code runs at full speed, and the
loop has one dispatch less per step.

Which matmuls: a ``linalg.matmul`` directly in an ``scf.for`` from 0 to ``n`` by 1 whose
left operand is ``tensor.extract_slice`` of a tensor defined outside the loop, at the
loop's index in its leading dimension (size 1, dropped) and whole in the others, and
whose right operand is defined outside the loop and whose accumulator is a fill of a
value from outside, when the sequence's leading extent is ``n`` (the loop reads every step) and the
hoisted result is at most ``MAX_HOISTED_BYTES``. Invariants: values are unchanged (each
row of the product is the step's product); a hoisted matmul is outside the loop, so
running the pass twice changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import (ModulePass, as_op, collect_ops, constant_index, element_bytes, register,
                   within)

# The hoisted product lives through the loop: a sequence's products up to this size are
# hoisted (a judgement, not a measurement: 16 MiB is 4096 steps of a batch of 8 and a
# hidden size of 128 in float32), longer ones keep one matmul per step.
MAX_HOISTED_BYTES = 16 << 20


def _outside(value, loop) -> bool:
    """``value`` is defined outside ``loop`` (an argument of an enclosing block or the
    result of an op that is not inside the loop)."""
    from aotc._mlir import ir

    owner = as_op(value.owner if isinstance(value, ir.OpResult) else value.owner.owner)
    return owner != loop and not within(owner, loop)


def _plan(op):
    """(loop, the sequence) for a matmul to hoist, else None."""
    from aotc._mlir import ir

    if op.name != "linalg.matmul" or op.parent is None or as_op(op.parent).name != "scf.for":
        return None
    loop = as_op(op.parent)
    lhs, rhs, acc = list(op.operands)[:3]
    if not isinstance(lhs, ir.OpResult) or as_op(lhs.owner).name != "tensor.extract_slice":
        return None
    piece = as_op(lhs.owner)
    source = piece.operands[0]
    rank = ir.RankedTensorType(source.type).rank
    index = loop.regions[0].blocks[0].arguments[0]
    static = list(ir.DenseI64ArrayAttr(piece.attributes["static_offsets"]))
    sizes = list(ir.DenseI64ArrayAttr(piece.attributes["static_sizes"]))
    strides = list(ir.DenseI64ArrayAttr(piece.attributes["static_strides"]))
    shape = list(ir.RankedTensorType(source.type).shape)
    dynamic = list(piece.operands)[1:]
    if (rank != 3 or dynamic != [index] or static[1:] != [0] * (rank - 1)
            or sizes != [1, *shape[1:]] or strides != [1] * rank):
        return None
    bounds = [constant_index(v) for v in list(loop.operands)[:3]]
    if bounds != [0, shape[0], 1] or not all(_outside(v, loop) for v in (source, rhs)):
        return None
    if (not isinstance(acc, ir.OpResult) or as_op(acc.owner).name != "linalg.fill"
            or not _outside(as_op(acc.owner).operands[0], loop)):
        return None
    columns = ir.RankedTensorType(rhs.type).shape[1]
    element = ir.RankedTensorType(op.results[0].type).element_type
    if shape[0] * shape[1] * columns * element_bytes(element) > MAX_HOISTED_BYTES:
        return None
    return loop, source


@register
@dataclass(frozen=True)
class HoistScanMatmuls(ModulePass):
    """Per-step matmuls of a sequence's slices, done once before the loop (module
    docstring)."""

    name = "aotc-hoist-scan-matmuls"

    def run(self, module) -> None:
        from aotc._mlir import ir, linalg, tensor

        for op, (loop, source) in collect_ops(module, lambda o: _plan(as_op(o))):
            op = as_op(op)
            steps, rows, depth = ir.RankedTensorType(source.type).shape
            rhs, acc = op.operands[1], op.operands[2]
            fill = as_op(acc.owner)
            columns = ir.RankedTensorType(rhs.type).shape[1]
            element = ir.RankedTensorType(op.results[0].type).element_type
            with ir.InsertionPoint(loop), op.location:
                flat = tensor.collapse_shape(
                    ir.RankedTensorType.get([steps * rows, depth],
                                            ir.RankedTensorType(source.type).element_type),
                    source, [[0, 1], [2]])
                init = linalg.fill(fill.operands[0], outs=[tensor.empty(
                    [steps * rows, columns], element)])
                product = linalg.matmul(flat, rhs, outs=[init])
                stacked = tensor.expand_shape(
                    ir.RankedTensorType.get([steps, rows, columns], element), product,
                    [[0, 1], [2]], [], [steps, rows, columns])
            with ir.InsertionPoint(op), op.location:
                index = loop.regions[0].blocks[0].arguments[0]
                step = tensor.extract_slice(
                    ir.RankedTensorType.get([rows, columns], element), stacked, [index], [],
                    [], [ir.ShapedType.get_dynamic_size(), 0, 0], [1, rows, columns],
                    [1, 1, 1])
            op.results[0].replace_all_uses_with(step)
            op.erase()  # the step's fill, if nothing else reads it, goes in the cleanup
