"""Reverse-mode rules for the tensor dialect's views and placements, barriers, and the
ops whose differentiation is refused with a reason.

Each view's adjoint is the inverse view of the cotangent: a slice's adjoint is the
cotangent placed into zeros where the slice was read, a reshape's the reshape back, a
placement's the slices its operands were placed at.
"""

from __future__ import annotations

from .builders import (ones_like, pad_with_zeros, reassociation_of, reversed_along, scatter_add,
                       segments)
from .. import opset
from .core import SCATTER_REFUSAL, Adjoint, float_constant, real_tensor_type, rule, zeros

_SLICE_ATTRS = ("static_offsets", "static_sizes", "static_strides")


def _slice_operands(op, first: int) -> tuple[list, dict]:
    """The dynamic offsets/sizes/strides of a slice op (from operand ``first`` on) and its
    static attributes."""
    return list(op.operands)[first:], {a: op.attributes[a] for a in _SLICE_ATTRS}


def _dynamic_counts(op, first: int) -> list[int]:
    from aotc._mlir import ir

    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    return sizes[first:]


def insert_slice(source, dest, dynamic: list, counts: list[int], statics: dict):
    from aotc._mlir import ir

    return ir.Operation.create(
        "tensor.insert_slice", results=[dest.type], operands=[source, dest] + dynamic,
        attributes={**statics, "operandSegmentSizes": segments(1, 1, *counts)}).result


def extract_slice(source, result_type, dynamic: list, counts: list[int], statics: dict):
    from aotc._mlir import ir

    return ir.Operation.create(
        "tensor.extract_slice", results=[result_type], operands=[source] + dynamic,
        attributes={**statics, "operandSegmentSizes": segments(1, *counts)}).result


@rule("tensor.extract_slice")
def _extract_slice(ad: Adjoint, op, adjoints: list) -> None:
    source = op.operands[0]
    dynamic, statics = _slice_operands(op, 1)
    counts = _dynamic_counts(op, 1)
    padded = _padded(adjoints[0], source.type, dynamic, counts, statics)
    ad.add(source, padded if padded is not None
           else insert_slice(adjoints[0], zeros(source.type), dynamic, counts, statics))


def _padded(ct, source_type, dynamic: list, counts: list[int], statics: dict):
    """The cotangent of a unit-stride slice surrounded by zeros to the source's shape, as
    a ``tensor.pad`` (None for a strided slice or dynamic sizes). Not an insert into
    zeros: IREE 3.13 wrote two inserts into one (CSE'd) zero tensor in the same buffer
    when a fused producer computed both sources."""
    from aotc._mlir import arith, ir
    from aotc.lowering import merge_groups

    offsets = list(ir.DenseI64ArrayAttr(statics["static_offsets"]))
    sizes = list(ir.DenseI64ArrayAttr(statics["static_sizes"]))
    strides = list(ir.DenseI64ArrayAttr(statics["static_strides"]))
    if counts[1] or counts[2] or any(st != 1 for st in strides):
        return None
    shape = list(ir.RankedTensorType(source_type).shape)
    t = ir.RankedTensorType(ct.type)
    if t.rank != len(sizes):  # a rank-reducing slice: its unit dims back first
        groups = merge_groups(sizes, list(t.shape))
        if groups is None:
            return None
        ct = ir.Operation.create(
            "tensor.expand_shape", results=[ir.RankedTensorType.get(sizes, t.element_type)],
            operands=[ct], attributes={"reassociation": reassociation_of(groups),
                                       "static_output_shape": ir.DenseI64ArrayAttr.get(sizes)}
        ).result
    marker = ir.ShapedType.get_dynamic_stride_or_offset()
    values = iter(dynamic[:counts[0]])
    low, high = [], []
    for offset, size, extent in zip(offsets, sizes, shape):
        if offset == marker:
            start = next(values)
            rest = arith.ConstantOp(ir.IndexType.get(), extent - size).result
            low.append(start)
            high.append(arith.subi(rest, start))
        else:
            low.append(offset)
            high.append(extent - size - offset)
    return pad_with_zeros(ct, low, high, source_type)


@rule("tensor.insert_slice")
def _insert_slice(ad: Adjoint, op, adjoints: list) -> None:
    source, dest = op.operands[0], op.operands[1]
    dynamic, statics = _slice_operands(op, 2)
    counts = _dynamic_counts(op, 2)
    ct = adjoints[0]
    ad.add(source, extract_slice(ct, source.type, dynamic, counts, statics))
    if dest in ad.active:
        ad.add(dest, _outside_window(ct, dynamic, counts, statics))


def _outside_window(ct, dynamic: list, counts: list[int], statics: dict):
    """``ct`` with zeros in the window a slice op addresses: one elementwise generic
    comparing each position with the window, which leaves ``ct`` itself untouched for
    the source's adjoint (a slice of it) to read."""
    from aotc._mlir import arith, ir, linalg
    from aotc.ops.scalar_builders import cmpi, select

    marker = ir.ShapedType.get_dynamic_stride_or_offset()
    values = iter(dynamic)
    fields = []
    for name, count in zip(_SLICE_ATTRS, counts):
        static = list(ir.DenseI64ArrayAttr(statics[name]))
        fields.append([next(values) if v == marker else v for v in static])
    offsets, sizes, strides = fields
    index = ir.IndexType.get()

    def constant(v):
        return v if isinstance(v, ir.Value) else arith.ConstantOp(index, v).result

    def body(x):
        inside = None
        for d, (offset, size, stride) in enumerate(zip(offsets, sizes, strides)):
            i = arith.subi(linalg.IndexOp(d).result, constant(offset))
            extent = arith.muli(constant(size), constant(stride))
            ok = arith.andi(cmpi("sge", i, constant(0)), cmpi("slt", i, extent))
            if stride != 1:
                ok = arith.andi(ok, cmpi("eq", arith.remsi(i, constant(stride)), constant(0)))
            inside = ok if inside is None else arith.andi(inside, ok)
        if inside is None:
            return float_constant(x.type, 0.0)
        return select(inside, float_constant(x.type, 0.0), x)

    from .core import elementwise

    return elementwise(ct.type, [ct], body)


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


@rule("iree_linalg_ext.scan")
def _scan(ad: Adjoint, op, adjoints: list) -> None:
    """A cumulative sum (``cumsum``): the adjoint is the cumulative sum of the cotangent
    taken from the other end (reversed, scanned with the same op, reversed back)."""
    from aotc._mlir import ir


    body = list(op.regions[0].blocks[0].operations)
    combine = body[0].operation if len(body) == 2 else None
    if combine is None or combine.name not in opset.FLOAT_ADDS:
        ad.refuse(op, "only cumulative sums are differentiable (not cumprod, cummax, ...)")
    if len(adjoints) > 1 and adjoints[1] is not None:
        ad.refuse(op, "the scan's final accumulator is read; only its cumulative result "
                      "is differentiable")
    source, accumulator = op.operands[0], op.operands[2]
    if accumulator in ad.active:
        ad.refuse(op, "its initial accumulator depends on a differentiated argument")
    dim = ir.IntegerAttr(op.attributes["dimension"]).value
    operands = [reversed_along(adjoints[0], [dim]),
                ir.Operation.create("tensor.empty", results=[op.operands[1].type]).result,
                zeros(accumulator.type)]
    scan = op.clone()  # after its operands
    for i, v in enumerate(operands):
        scan.operands[i] = v
    ad.add(source, reversed_along(scan.results[0], [dim]))


@rule("iree_linalg_ext.scatter")
def _scatter(ad: Adjoint, op, adjoints: list) -> None:
    """``x.at[idx].set(u)`` / ``.add(u)``: the updates' adjoint is the cotangent read at
    the indices (a gather); the original's is the cotangent itself for ``add``, and the
    cotangent with the written rows zeroed for ``set`` (masked by a scatter of ones into
    zeros, not by writing into the cotangent: see ``_padded``)."""
    from aotc._mlir import arith, ir, linalg
    from aotc._mlir import tensor as tensor_dialect


    updates, indices, original = op.operands[0], op.operands[1], op.operands[2]
    ct = adjoints[0]
    body = [o.operation for o in op.regions[0].blocks[0].operations]
    block_args = list(op.regions[0].blocks[0].arguments)
    yielded = body[-1].operands[0]
    if yielded == block_args[0]:
        kind = "set"
    elif (len(body) == 2 and body[0].name in opset.FLOAT_ADDS
          and set(body[0].operands) == set(block_args)):
        kind = "add"
    else:
        ad.refuse(op, SCATTER_REFUSAL)
    depth = len(list(ir.DenseI64ArrayAttr(op.attributes["dimension_map"])))
    if list(ir.DenseI64ArrayAttr(op.attributes["dimension_map"])) != list(range(depth)):
        ad.refuse(op, "a scatter whose indices name dimensions out of order")
    it = ir.RankedTensorType(indices.type)
    if it.rank != 2:
        ad.refuse(op, "a scatter with more than one batch dimension of indices")
    if updates in ad.active:
        index = ir.IndexType.get()

        def gather():
            ut = ir.RankedTensorType(updates.type)
            position = [linalg.IndexOp(d).result for d in range(ut.rank)]
            at = []
            for column in range(depth):
                c = arith.ConstantOp(index, column).result
                value = tensor_dialect.extract(indices, [position[0], c])
                at.append(arith.index_cast(index, value))
            return tensor_dialect.extract(ct, at + position[1:])

        from .core import elementwise

        ad.add(updates, elementwise(updates.type, [], gather))
    if original in ad.active:
        if kind == "add":
            ad.add(original, ct)
        else:
            # the mask in real numbers: a complex one would need complex comparisons
            real = real_tensor_type(updates.type)
            mask = scatter_add(ones_like(real), indices, zeros(real_tensor_type(original.type)),
                               depth)
            ad.add(original, _masked(ct, mask))


def _masked(ct, mask):
    """``ct`` where ``mask`` is 0, else 0."""
    from aotc.ops.scalar_builders import cmpf, select

    from .core import elementwise

    def body(c, m):
        return select(cmpf("oeq", m, float_constant(m.type, 0.0)), c,
                      float_constant(c.type, 0.0))

    return elementwise(ct.type, [ct, mask], body)


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


