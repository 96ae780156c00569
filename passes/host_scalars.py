"""aotc-host-scalars: rank-0 elementwise ops on values the host already holds are scalar
ops.

Traced code keeps every value in a tensor: a loop's counter is ``tensor.from_elements``
of its index, and ``x[i - 1]`` computes ``i - 1`` as a rank-0 ``linalg.generic`` whose
element a ``tensor.extract`` then reads for the slice offset. Where a loop keeps one
dispatch per op and step, IREE runs that generic as a dispatch of its own and the host
waits to read its result back: a dispatch and a wait per step, before the step's real
work can be submitted (the stream IR of a [16, 16384] row sweep held both).

This pass computes such a generic's body with scalar ops where the host has its
operands anyway: every input is ``tensor.from_elements`` of a host scalar (arithmetic
on loop counters, function-level index values and constants, never a value read from a
tensor, which would make the host wait for the device) or a rank-0 constant, and its
element type is an integer (index arithmetic and its comparisons; float math stays on
the device). Its results become ``tensor.from_elements`` of the scalars, which
canonicalization folds into their ``tensor.extract`` readers. Invariants: values are
unchanged (the same body, on the same element types); running the pass twice changes
nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, as_op, collect_ops, operand_segments, register
from .opset import SCALAR_DIALECTS
from .scalarize import body_values

# Marks the rank-0 generics ``_bools_from_bytes`` makes (never rewritten again).
BYTE_TO_BOOL = "aotc.byte_to_bool"


def _host_scalar(value, memo: dict) -> bool:
    """Whether the host computes ``value`` without reading a tensor: a block argument (a
    loop's counter or carried scalar, a function's scalar argument) or a scalar op
    (``opset.SCALAR_DIALECTS``) of such values."""
    from aotc._mlir import ir

    if not isinstance(value, ir.OpResult):
        return not isinstance(value.type, ir.ShapedType)
    if value in memo:
        return memo[value]
    owner = as_op(value.owner)
    found = (owner.name.split(".")[0] in SCALAR_DIALECTS
             and not owner.regions
             and not any(isinstance(r.type, ir.ShapedType) for r in owner.results)
             and all(_host_scalar(v, memo) for v in owner.operands))
    memo[value] = found
    return found


def _holds_host_scalar(value, memo: dict) -> bool:
    """Whether the rank-0 tensor ``value`` is ``from_elements`` of a host scalar or a
    constant (rank 0: a splat)."""
    from aotc._mlir import ir

    if not isinstance(value, ir.OpResult):
        return False
    owner = as_op(value.owner)
    if owner.name == "tensor.from_elements":
        return _host_scalar(owner.operands[0], memo)
    return owner.name == "arith.constant" and isinstance(owner.attributes["value"],
                                                         ir.DenseElementsAttr)


def _element(value):
    """The scalar a rank-0 tensor that ``_holds_host_scalar`` holds: the one
    ``from_elements`` was given, or the constant's element as a scalar constant."""
    from aotc._mlir import arith

    owner = as_op(value.owner)
    if owner.name == "tensor.from_elements":
        return owner.operands[0]
    return arith.ConstantOp(value.type.element_type,
                            owner.attributes["value"].get_splat_value()).result


def _integer(value) -> bool:
    from aotc._mlir import ir

    t = value.type
    return (isinstance(t, ir.RankedTensorType) and t.rank == 0
            and isinstance(t.element_type, (ir.IntegerType, ir.IndexType)))


def _candidate(op, memo: dict) -> bool:
    """A rank-0 generic of integers whose body is scalar ops on its inputs, which the host
    holds."""
    if op.name != "linalg.generic":
        return False
    if not all(_integer(v) for v in [*op.operands, *op.results]):
        return False
    if BYTE_TO_BOOL in op.attributes:
        return False  # (made by _bools_from_bytes)
    block = op.regions[0].blocks[0]
    count = operand_segments(op)[0]
    if any(as_op(b).name.split(".")[0] not in SCALAR_DIALECTS and as_op(b).name != "linalg.yield"
           for b in block.operations) or any(list(a.uses) for a in list(block.arguments)[count:]):
        return False  # (an output's element read in the body: not elementwise)
    return all(_holds_host_scalar(v, memo) for v in list(op.operands)[:count])


def _as_scalars(op) -> None:
    """Computes the body of the rank-0 generic ``op`` before it on its inputs' scalars
    (``scalarize.body_values``) and replaces its results by ``tensor.from_elements`` of
    the values it yields."""
    from aotc._mlir import ir, tensor

    count = operand_segments(op)[0]
    with ir.InsertionPoint(op), op.location:
        elements = [_element(v) for v in list(op.operands)[:count]]
        yielded = body_values(op, [], elements)
        for result, value in zip(op.results, yielded):
            result.replace_all_uses_with(tensor.FromElementsOp(result.type, [value]).result)
    op.erase()


def _bools_from_bytes(module) -> None:
    """Ops other than ``tensor.extract`` that read a rank-0 bool tensor made by
    ``from_elements`` (a float ``where`` on ``j > 0``) read it through a rank-0 generic
    from a byte tensor instead: IREE 3.13 makes bool tensors bytes inside a dispatch and
    left such a ``from_elements`` of an i1 making a byte tensor, which failed to verify
    (benchmarks/loops.py ``nussinov_60``). The generic fuses into its reader; an
    extract's read folds to the scalar."""
    from aotc._mlir import arith, ir, linalg, tensor

    def bools(op):
        return (op.name == "tensor.from_elements"
                and isinstance(op.results[0].type.element_type, ir.IntegerType)
                and op.results[0].type.element_type.width == 1
                and any(as_op(u.owner).name != "tensor.extract" for u in op.results[0].uses))
    for op, _ in collect_ops(module, lambda o: True if bools(as_op(o)) else None):
        op = as_op(op)
        result = op.results[0]
        readers = [(as_op(u.owner), u.operand_number) for u in result.uses
                   if as_op(u.owner).name != "tensor.extract"]
        byte = ir.IntegerType.get_signless(8)
        with ir.InsertionPoint(op), op.location:
            bytes_ = tensor.FromElementsOp(ir.RankedTensorType.get([], byte),
                                           [arith.ExtUIOp(byte, op.operands[0]).result]).result
            empty = tensor.EmptyOp([], result.type.element_type).result
            identity = ir.AffineMap.get(0, 0, [])
            generic = linalg.GenericOp([result.type], [bytes_], [empty],
                                       ir.ArrayAttr.get([ir.AffineMapAttr.get(identity)] * 2),
                                       ir.ArrayAttr.get([]))
            generic.operation.attributes[BYTE_TO_BOOL] = ir.UnitAttr.get()
            block = generic.regions[0].blocks.append(byte, result.type.element_type)
            with ir.InsertionPoint(block):
                linalg.YieldOp([arith.TruncIOp(result.type.element_type,
                                               block.arguments[0]).result])
        for reader, number in readers:
            reader.operands[number] = generic.results[0]


@register
@dataclass(frozen=True)
class HostScalars(ModulePass):
    """Rank-0 integer generics on host scalars as scalar ops (module docstring)."""

    name = "aotc-host-scalars"

    def run(self, module) -> None:
        # A rewritten generic's results are host scalars to the generics reading them.
        while True:
            memo: dict = {}
            found = [op for op, _ in collect_ops(
                module, lambda o: True if _candidate(as_op(o), memo) else None)]
            if not found:
                break
            for op in found:
                _as_scalars(as_op(op))
        _bools_from_bytes(module)
