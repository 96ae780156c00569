"""Reverse-mode rules for the tensor dialect's views and placements, barriers, and the
ops whose differentiation is refused with a reason.

Each view's adjoint is the inverse view of the cotangent: a slice's adjoint is the
cotangent placed into zeros where the slice was read, a reshape's the reshape back, a
placement's the slices its operands were placed at.
"""

from __future__ import annotations

from .core import Adjoint, rule, zeros

_SLICE_ATTRS = ("static_offsets", "static_sizes", "static_strides")


def _slice_operands(op, first: int) -> tuple[list, dict]:
    """The dynamic offsets/sizes/strides of a slice op (from operand ``first`` on) and its
    static attributes."""
    return list(op.operands)[first:], {a: op.attributes[a] for a in _SLICE_ATTRS}


def _segments(*counts):
    from aotc._mlir import ir

    return ir.DenseI32ArrayAttr.get(list(counts))


def _dynamic_counts(op, first: int) -> list[int]:
    from aotc._mlir import ir

    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    return sizes[first:]


def insert_slice(source, dest, dynamic: list, counts: list[int], statics: dict):
    from aotc._mlir import ir

    return ir.Operation.create(
        "tensor.insert_slice", results=[dest.type], operands=[source, dest] + dynamic,
        attributes={**statics, "operandSegmentSizes": _segments(1, 1, *counts)}).result


def extract_slice(source, result_type, dynamic: list, counts: list[int], statics: dict):
    from aotc._mlir import ir

    return ir.Operation.create(
        "tensor.extract_slice", results=[result_type], operands=[source] + dynamic,
        attributes={**statics, "operandSegmentSizes": _segments(1, *counts)}).result


@rule("tensor.extract_slice")
def _extract_slice(ad: Adjoint, op, adjoints: list) -> None:
    source = op.operands[0]
    dynamic, statics = _slice_operands(op, 1)
    ad.add(source, insert_slice(adjoints[0], zeros(source.type), dynamic,
                                _dynamic_counts(op, 1), statics))


@rule("tensor.insert_slice")
def _insert_slice(ad: Adjoint, op, adjoints: list) -> None:
    source, dest = op.operands[0], op.operands[1]
    dynamic, statics = _slice_operands(op, 2)
    counts = _dynamic_counts(op, 2)
    ct = adjoints[0]
    ad.add(source, extract_slice(ct, source.type, dynamic, counts, statics))
    if dest in ad.active:
        ad.add(dest, insert_slice(zeros(source.type), ct, dynamic, counts, statics))


@rule("tensor.collapse_shape")
def _collapse(ad: Adjoint, op, adjoints: list) -> None:
    from aotc._mlir import ir

    source = op.operands[0]
    shape = list(ir.RankedTensorType(source.type).shape)
    ad.add(source, ir.Operation.create(
        "tensor.expand_shape", results=[source.type], operands=[adjoints[0]],
        attributes={"reassociation": op.attributes["reassociation"],
                    "static_output_shape": ir.DenseI64ArrayAttr.get(shape)}).result)


@rule("tensor.expand_shape")
def _expand(ad: Adjoint, op, adjoints: list) -> None:
    from aotc._mlir import ir

    source = op.operands[0]
    ad.add(source, ir.Operation.create(
        "tensor.collapse_shape", results=[source.type], operands=[adjoints[0]],
        attributes={"reassociation": op.attributes["reassociation"]}).result)


@rule("tensor.cast")
def _cast(ad: Adjoint, op, adjoints: list) -> None:
    from aotc._mlir import ir

    source = op.operands[0]
    ad.add(source, ir.Operation.create("tensor.cast", results=[source.type],
                                       operands=[adjoints[0]]).result)


@rule("tensor.concat")
def _concat(ad: Adjoint, op, adjoints: list) -> None:
    from aotc._mlir import ir

    dim = ir.IntegerAttr(op.attributes["dim"]).value
    ct = adjoints[0]
    rank = ir.RankedTensorType(ct.type).rank
    offset = 0
    for value in op.operands:
        shape = list(ir.RankedTensorType(value.type).shape)
        if value in ad.active:
            offsets = [offset if d == dim else 0 for d in range(rank)]
            statics = {"static_offsets": ir.DenseI64ArrayAttr.get(offsets),
                       "static_sizes": ir.DenseI64ArrayAttr.get(shape),
                       "static_strides": ir.DenseI64ArrayAttr.get([1] * rank)}
            ad.add(value, extract_slice(ct, value.type, [], [0, 0, 0], statics))
        offset += shape[dim]


@rule("tensor.pad")
def _pad(ad: Adjoint, op, adjoints: list) -> None:
    from aotc._mlir import ir

    from .core import reads

    source = op.operands[0]
    yielded = [v for v in reads(op) if v not in list(op.operands)]
    if any(v in ad.active for v in yielded):
        ad.refuse(op, "its padding value depends on a differentiated argument")
    shape = list(ir.RankedTensorType(source.type).shape)
    rank = len(shape)
    n_low = _dynamic_counts(op, 1)[0]
    dynamic_low = list(op.operands)[1:1 + n_low]
    statics = {"static_offsets": op.attributes["static_low"],
               "static_sizes": ir.DenseI64ArrayAttr.get(shape),
               "static_strides": ir.DenseI64ArrayAttr.get([1] * rank)}
    ad.add(source, extract_slice(adjoints[0], source.type, dynamic_low, [n_low, 0, 0],
                                 statics))


@rule("util.optimization_barrier", "flow.tensor.clone")
def _identity(ad: Adjoint, op, adjoints: list) -> None:
    for value, ct in zip(op.operands, adjoints):
        ad.add(value, ct)


@rule("tensor.extract")
def _extract(ad: Adjoint, op, adjoints: list) -> None:
    from aotc._mlir import ir

    source = op.operands[0]
    ad.add(source, ir.Operation.create(
        "tensor.insert", results=[source.type],
        operands=[adjoints[0], zeros(source.type)] + list(op.operands)[1:]).result)


@rule("tensor.from_elements")
def _from_elements(ad: Adjoint, op, adjoints: list) -> None:
    from aotc._mlir import arith, ir

    t = ir.RankedTensorType(op.results[0].type)
    shape = list(t.shape)
    for flat, value in enumerate(op.operands):
        index, rest = [], flat
        for size in reversed(shape):
            index.append(rest % size)
            rest //= size
        indices = [arith.ConstantOp(ir.IndexType.get(), i).result for i in reversed(index)]
        ad.add(value, ir.Operation.create("tensor.extract", results=[value.type],
                                          operands=[adjoints[0]] + indices).result)


