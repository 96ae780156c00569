"""IR builders the differentiation rules share: zero tensors the backward code writes
into, reversals, dilations and paddings of cotangents, transposes, reshapes and the
scatter-add of contributions. Each builds at the current insertion point; none is a rule.
"""

from __future__ import annotations

from .core import add_scalars, float_constant, zeros  # noqa: F401  (zeros: re-exported)


def dilated(ct, dim: int, stride: int):
    """``ct`` with ``stride - 1`` zeros between its elements along ``dim``: an
    elementwise generic that reads ``ct`` where the position is a multiple of the stride
    (no insert into zeros: see ``tensor._padded``)."""
    from aotc._mlir import arith, ir, linalg
    from aotc.ops.scalar_builders import cmpi, select

    if stride == 1:
        return ct
    t = ir.RankedTensorType(ct.type)
    shape = list(t.shape)
    shape[dim] = (shape[dim] - 1) * stride + 1
    index = ir.IndexType.get()

    def body():
        position = [linalg.IndexOp(d).result for d in range(len(shape))]
        step = arith.ConstantOp(index, stride).result
        hit = cmpi("eq", arith.remsi(position[dim], step), arith.ConstantOp(index, 0).result)
        position[dim] = arith.divsi(position[dim], step)
        from aotc._mlir import tensor

        read = tensor.extract(ct, position)
        return select(hit, read, float_constant(t.element_type, 0.0))

    from .core import elementwise

    return elementwise(ir.RankedTensorType.get(shape, t.element_type), [], body)


def reversed_along(value, axes: list[int]):
    """``value`` reversed along ``axes`` (elementwise, each element read at its mirror)."""
    from aotc._mlir import arith, ir, linalg, tensor

    t = ir.RankedTensorType(value.type)
    index = ir.IndexType.get()

    def body():
        position = [linalg.IndexOp(d).result for d in range(t.rank)]
        for a in axes:
            last = arith.ConstantOp(index, t.shape[a] - 1).result
            position[a] = arith.subi(last, position[a])
        return tensor.extract(value, position)

    from .core import elementwise

    return elementwise(t, [], body)


def zero_padded(ct, dim: int, low: int, high: int):
    from aotc._mlir import ir

    rank = ir.RankedTensorType(ct.type).rank
    return pad_with_zeros(ct, [low if d == dim else 0 for d in range(rank)],
                          [high if d == dim else 0 for d in range(rank)])


def collapse_all(value, shape: list):
    from aotc._mlir import ir

    t = ir.RankedTensorType(value.type)
    groups = [list(range(t.rank))] if t.rank else []
    return ir.Operation.create(
        "tensor.collapse_shape",
        results=[ir.RankedTensorType.get(shape, t.element_type)], operands=[value],
        attributes={"reassociation": reassociation_of(groups)}).result


def reassociation_of(groups):
    from aotc._mlir import reassociation

    return reassociation(groups)


def stack_columns(columns: list, sizes: list, count: int, depth: int):
    """``(count, depth)`` indices from one tensor of the loop shape per coordinate."""
    from aotc._mlir import ir

    i64 = ir.IntegerType.get_signless(64)
    flat = [collapse_all(c, [count]) for c in columns]
    expanded = [ir.Operation.create(
        "tensor.expand_shape", results=[ir.RankedTensorType.get([count, 1], i64)],
        operands=[c], attributes={"reassociation": reassociation_of([[0, 1]]),
                                  "static_output_shape": ir.DenseI64ArrayAttr.get([count, 1])}
    ).result for c in flat]
    if depth == 1:
        return expanded[0]
    dim = ir.IntegerAttr.get(i64, 1)
    return ir.Operation.create("tensor.concat",
                               results=[ir.RankedTensorType.get([count, depth], i64)],
                               operands=expanded, attributes={"dim": dim}).result


def scatter_add(updates, indices, target, depth: int):
    """``iree_linalg_ext.scatter`` adding ``updates[i]`` into ``target`` at
    ``indices[i]`` (repeated indices accumulate)."""
    from aotc._mlir import ir

    # IREE 3.13's CPU code fuses the producers of the updates and indices into the
    # scatter's dispatch and keeps them on the stack (over the 32 KiB limit): computed
    # first, behind a barrier, as aotc's own scatters (ops/linalg_ext.py).
    updates, indices = (ir.Operation.create("util.optimization_barrier", results=[v.type],
                                            operands=[v]).result for v in (updates, indices))
    elem = ir.RankedTensorType(target.type).element_type
    op = ir.Operation.create(
        "iree_linalg_ext.scatter", results=[target.type], operands=[updates, indices, target],
        attributes={"dimension_map": ir.DenseI64ArrayAttr.get(list(range(depth))),
                    "unique_indices": ir.BoolAttr.get(False)},
        regions=1)
    block = op.regions[0].blocks.append(elem, elem)
    with ir.InsertionPoint(block):
        ir.Operation.create("iree_linalg_ext.yield",
                            operands=[add_scalars(block.arguments[1], block.arguments[0])])
    return op.results[0]


def filled(t, value: float):
    from aotc._mlir import ir, linalg

    t = ir.RankedTensorType(t)
    empty = ir.Operation.create("tensor.empty", results=[t]).result
    return linalg.fill(float_constant(t.element_type, value), outs=[empty])


def pad_with_zeros(value, low: list, high: list, result_type=None):
    """``tensor.pad`` of ``value`` with zeros: ``low``/``high`` per dimension, ints or
    ``index`` values (``result_type``: the padded type where dynamic padding has a
    static result)."""
    from aotc._mlir import ir

    t = ir.RankedTensorType(value.type)
    dynamic = ir.ShapedType.get_dynamic_size()
    low_values = [v for v in low if isinstance(v, ir.Value)]
    high_values = [v for v in high if isinstance(v, ir.Value)]
    shape = []
    for d, size in enumerate(t.shape):
        if isinstance(low[d], ir.Value) or isinstance(high[d], ir.Value):
            shape.append(None)
        else:
            shape.append(size + low[d] + high[d])
    result = result_type or ir.RankedTensorType.get(
        [dynamic if n is None else n for n in shape], t.element_type)
    pad = ir.Operation.create(
        "tensor.pad", results=[result], operands=[value] + low_values + high_values,
        attributes={"static_low": ir.DenseI64ArrayAttr.get(
                        [dynamic if isinstance(v, ir.Value) else v for v in low]),
                    "static_high": ir.DenseI64ArrayAttr.get(
                        [dynamic if isinstance(v, ir.Value) else v for v in high]),
                    "operandSegmentSizes": segments(1, len(low_values), len(high_values))},
        regions=1)
    block = pad.regions[0].blocks.append(*[ir.IndexType.get()] * t.rank)
    with ir.InsertionPoint(block):
        ir.Operation.create("tensor.yield", operands=[float_constant(t.element_type, 0.0)])
    return pad.result


def segments(*counts):
    from aotc._mlir import ir

    return ir.DenseI32ArrayAttr.get(list(counts))


def transposed(value, permutation: list[int]):
    from aotc._mlir import ir, linalg

    t = ir.RankedTensorType(value.type)
    shape = [t.shape[p] for p in permutation]
    init = ir.Operation.create(
        "tensor.empty", results=[ir.RankedTensorType.get(shape, t.element_type)]).result
    return linalg.transpose(value, outs=[init], permutation=permutation).results[0]


def ones_like(t):
    from aotc._mlir import arith, ir

    t = ir.RankedTensorType(t)
    return arith.ConstantOp(t, ir.DenseElementsAttr.get_splat(
        t, ir.FloatAttr.get(t.element_type, 1.0))).result


def summed(value, init, out_map, kept: set):
    """``value`` (indexed by the loops, one per dimension) added into ``init`` (read at
    ``out_map``) over the loop dimensions not in ``kept``."""
    from aotc._mlir import PARALLEL, REDUCTION, affine_maps, dim_map, ir, \
        iterator_types, linalg

    rank = ir.RankedTensorType(value.type).rank
    elem = ir.RankedTensorType(init.type).element_type
    g = linalg.GenericOp([init.type], [value], [init],
                         affine_maps([dim_map(rank, list(range(rank))), out_map]),
                         iterator_types([PARALLEL if d in kept else REDUCTION
                                         for d in range(rank)]))
    block = g.regions[0].blocks.append(elem, elem)
    with ir.InsertionPoint(block):
        linalg.YieldOp([add_scalars(block.arguments[1], block.arguments[0])])
    return g.results[0]
