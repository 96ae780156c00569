"""Batching rules for linalg's convolution and pooling ops and ``batch_matmul``, IREE's
LinalgExt ops (sort, scan, topk, scatter), ``flow.tensor.clone`` and
``util.optimization_barrier``.

Registered in ``RULES`` on import (see ``core``). Ops that already have a batch-like
leading dimension (the images of a convolution, the rows of a scatter) take the vmap
batch merged into it, so each stays one op IREE has a kernel for.
"""

from __future__ import annotations

from .. import opset
from ..base import PassError, where
from .core import Batched, Batcher, concat, rebuilt, rule


def merge_batch(bt: Batcher, value):
    """(B, n, ...) -> (B*n, ...): the batch merged into the next dimension."""
    from aotc._mlir import ir

    t = ir.RankedTensorType(value.type)
    rows = ir.ShapedType.get_dynamic_size() if bt.size is None else bt.size * t.shape[1]
    groups = [[0, 1]] + [[d] for d in range(2, t.rank)]
    merged = ir.RankedTensorType.get([rows] + list(t.shape[2:]), t.element_type)
    return bt.collapse(value, groups, merged)


def split_batch(bt: Batcher, value, result_type):
    """(B*n, ...) -> (B, n, ...), the inverse of ``merge_batch``."""
    from aotc._mlir import ir

    rank = ir.RankedTensorType(result_type).rank
    groups = [[0, 1]] + [[d] for d in range(2, rank)]
    return bt.expand(value, groups, result_type, bt.dynamic_sizes())


# ---- batch-major named ops: the vmap batch joins the images dimension -----------------

def _image_op_names() -> list[str]:
    """The vocabulary's convolutions, depthwise convolutions and poolings: the
    contractions whose first operand is a batch of images."""
    kinds = ("conv_", "depthwise_conv_", "pooling_")
    return [o.name for o in opset.OPS.values()
            if o.group == "contraction" and o.name.split(".", 1)[1].startswith(kinds)]


# Channel-last convolutions (images N, spatial..., channels C; filter spatial..., C, F) by
# their number of spatial dimensions: with a per-example filter they become one generic.
_CHANNEL_LAST_CONVS = {"linalg.conv_1d_nwc_wcf": 1, "linalg.conv_2d_nhwc_hwcf": 2,
                       "linalg.conv_3d_ndhwc_dhwcf": 3}


@rule(*_image_op_names())
def _images(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    image, window, out = operands
    if window.batched and op.name in _CHANNEL_LAST_CONVS:
        return [Batched(_conv_per_example_filter(bt, op, operands), True)]
    if window.batched:
        raise PassError(
            f"{bt.pass_name}: {op.name} at {where(op)} (in @{bt.func_name}) has a per-example "
            f"filter; batching supports a batched input with a shared filter. Move the "
            f"filter out of the vmapped arguments (in_axes=None for it)")
    init = bt.to_batched(out)
    merged_init = merge_batch(bt, init)
    new = rebuilt(bt, op, [merge_batch(bt, bt.to_batched(image)), window.value, merged_init],
                   [merged_init.type])
    return [Batched(split_batch(bt, new.results[0], init.type), True)]


def _conv_per_example_filter(bt: Batcher, op, operands: list[Batched]):
    """A channel-last convolution whose filter differs per example, as one
    ``linalg.generic`` over (batch, n, out positions..., f, window positions..., c):
    ``out[b, n, o, f] += image[b, n, o * stride + k * dilation, c] * filter[b, k, c, f]``."""
    from aotc._mlir import PARALLEL, REDUCTION, affine_maps, arith, ir, iterator_types, linalg

    rank = _CHANNEL_LAST_CONVS[op.name]
    image, window, init = (bt.to_batched(b) for b in operands)
    element = ir.RankedTensorType(init.type).element_type
    if any(ir.RankedTensorType(v.type).element_type != element for v in (image, window)):
        raise PassError(f"{bt.pass_name}: {op.name} at {where(op)} (in @{bt.func_name}) mixes "
                        f"element types; batching a per-example filter needs one type")
    strides = _attribute_list(op, "strides", rank)
    dilations = _attribute_list(op, "dilations", rank)
    # Loop dimensions: b, n, o_1..o_r, f, k_1..k_r, c.
    d = ir.AffineDimExpr.get
    b, n, f, c = 0, 1, 2 + rank, 3 + 2 * rank
    outs = [2 + i for i in range(rank)]
    ks = [3 + rank + i for i in range(rank)]
    n_dims = 4 + 2 * rank

    def scaled(dim, factor):
        return ir.AffineMulExpr.get(d(dim), ir.AffineConstantExpr.get(factor))

    positions = [ir.AffineAddExpr.get(scaled(o, s), scaled(k, dl))
                 for o, k, s, dl in zip(outs, ks, strides, dilations)]
    maps = [ir.AffineMap.get(n_dims, 0, [d(b), d(n), *positions, d(c)]),
            ir.AffineMap.get(n_dims, 0, [d(b), *[d(k) for k in ks], d(c), d(f)]),
            ir.AffineMap.get(n_dims, 0, [d(b), d(n), *[d(o) for o in outs], d(f)])]
    iterators = [PARALLEL] * (3 + rank) + [REDUCTION] * (rank + 1)
    g = linalg.GenericOp([init.type], [image, window], [init], affine_maps(maps),
                         iterator_types(iterators))
    block = g.regions[0].blocks.append(element, element, element)
    with ir.InsertionPoint(block):
        x, w, acc = block.arguments
        is_float = isinstance(element, (ir.F16Type, ir.F32Type, ir.F64Type, ir.BF16Type))
        product = arith.mulf(x, w) if is_float else arith.muli(x, w)
        linalg.YieldOp([arith.addf(acc, product) if is_float else arith.addi(acc, product)])
    return g.results[0]


def _attribute_list(op, name: str, rank: int) -> list[int]:
    """A named convolution's ``strides``/``dilations`` (dense i64 elements; 1s if absent)."""
    from aotc._mlir import ir

    if name not in op.attributes:
        return [1] * rank
    return [int(v) for v in ir.DenseIntElementsAttr(op.attributes[name])]


@rule("linalg.batch_matmul")
def _batch_matmul(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    """Batch and inner batch merged into one: (B, b, m, k) -> (B*b, m, k)."""
    from aotc._mlir import linalg

    merged = [merge_batch(bt, bt.to_batched(b)) for b in operands]
    out = linalg.batch_matmul(merged[0], merged[1], outs=[merged[2]])
    return [Batched(split_batch(bt, out, bt.batched_type(op.results[0].type)), True)]


# ---- IREE LinalgExt ----------------------------------------------------------------------

@rule("iree_linalg_ext.sort", "iree_linalg_ext.scan", "iree_linalg_ext.topk")
def _along_dimension(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    """Ops that work along one ``dimension`` of every operand: it moves by one; their
    results are their last operands (the outs)."""
    from aotc._mlir import ir

    values = [bt.to_batched(b) for b in operands]
    outs = values[len(values) - len(op.results):]
    new = rebuilt(bt, op, values, [v.type for v in outs])
    dim = ir.IntegerAttr(op.attributes["dimension"]).value
    new.attributes["dimension"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dim + 1)
    return [Batched(r, True) for r in new.results]


@rule("iree_linalg_ext.scatter")
def _scatter(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    """Rows of every lane scattered at once: the lane becomes one more index column (the
    first, naming the target's batch dimension) and the lanes' rows are concatenated."""
    from aotc._mlir import PARALLEL, affine_maps, arith, dim_map, ir, iterator_types, linalg

    updates, indices, target = (bt.to_batched(b) for b in operands)
    idx_t = ir.RankedTensorType(indices.type)
    count, depth = idx_t.shape[1], idx_t.shape[2]
    elt = idx_t.element_type
    # (B, count, 1) of lane numbers, joined before the index columns.
    lane_t = ir.RankedTensorType.get([bt.batch_dim(), count, 1], elt)
    g = linalg.GenericOp([lane_t], [], [bt.new_empty(list(lane_t.shape), elt, bt.dynamic_sizes())],
                         affine_maps([dim_map(3, [0, 1, 2])]), iterator_types([PARALLEL] * 3))
    block = g.regions[0].blocks.append(elt)
    with ir.InsertionPoint(block):
        linalg.YieldOp([arith.index_cast(elt, linalg.IndexOp(0).result)])
    joined_t = ir.RankedTensorType.get([bt.batch_dim(), count, depth + 1], elt)
    joined = concat([g.results[0], indices], 2, joined_t)
    dims = list(ir.DenseI64ArrayAttr(op.attributes["dimension_map"]))
    new = rebuilt(bt, op, [merge_batch(bt, updates), merge_batch(bt, joined), target],
                  [target.type])
    new.attributes["dimension_map"] = ir.DenseI64ArrayAttr.get([0] + [d + 1 for d in dims])
    return [Batched(new.results[0], True)]


@rule("flow.tensor.clone")
def _clone(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    """A copy of the batched value (its dynamic sizes are operands of the op)."""
    from aotc._mlir import ir

    if len(operands) != 1:
        raise PassError(f"{bt.pass_name}: {op.name} at {where(op)} of a dynamically shaped "
                        f"value is not supported by the batching pass yet")
    value = operands[0].value
    new = ir.Operation.create("flow.tensor.clone", results=[value.type],
                              operands=[value] + bt.dynamic_sizes())
    return [Batched(new.results[0], True)]


@rule("util.optimization_barrier")
def _barrier(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    new = rebuilt(bt, op, [b.value for b in operands], [b.value.type for b in operands])
    return [Batched(r, b.batched) for r, b in zip(new.results, operands)]
