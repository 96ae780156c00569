"""Batching rules for ``tensor`` ops (reshapes, slices, joins, pads, element reads) and
for arith/math ops on scalars (the ``"<scalar>"`` rule).

Registered in ``RULES`` on import (see ``core``): the batch is the leading dimension of
every batched value, and a batched scalar is a 1-d tensor of its lanes (``index`` lanes
stored as ``i64``). A slice at per-example offsets becomes a gather (an insert at
per-example offsets, a select inside each lane's window); element reads at per-example
indices read one element per lane.
"""

from __future__ import annotations

from ..base import PassError, where
from .core import (
    SCALAR,
    Batched,
    Batcher,
    concat,
    from_lane,
    lanewise,
    reassociation_groups,
    refuse,
    rule,
)


def _i64_array(values):
    from aotc._mlir import ir

    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def _array(attr) -> list[int]:
    from aotc._mlir import ir

    return list(ir.DenseI64ArrayAttr(attr))


def _segments(op) -> list[int]:
    from aotc._mlir import ir

    return list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))


def _split(values: list, sizes: list[int]) -> list[list]:
    out, start = [], 0
    for n in sizes:
        out.append(values[start:start + n])
        start += n
    return out


def _batch_size_entry(bt: Batcher):
    """The static size entry and dynamic size operands for a leading batch dimension."""
    from aotc._mlir import ir

    if bt.size is None:
        return ir.ShapedType.get_dynamic_size(), [bt.size_value]
    return bt.size, []


# ---- scalars, lane by lane ----------------------------------------------------------

@rule(SCALAR)
def _scalar(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    """An arith/math op on scalars with a batched operand, lane by lane."""
    def body(*values):
        new = op.clone()
        for i, v in enumerate(values):
            new.operands[i] = v
        return list(new.results)

    return lanewise(bt, operands, [v.type for v in op.operands], [r.type for r in op.results], body)


@rule("tensor.extract")
def _extract(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir, tensor

    src, indices = operands[0], operands[1:]
    if not indices:
        # A batched 0-d tensor is already the batched scalar's representation.
        return [Batched(bt.to_batched(src), True)]
    if not any(i.batched for i in indices):
        size, dyn = _batch_size_entry(bt)
        n = len(indices)
        element = ir.RankedTensorType(src.value.type).element_type
        result = ir.RankedTensorType.get([bt.batch_dim()], element)
        dynamic = ir.ShapedType.get_dynamic_size()
        out = tensor.ExtractSliceOp(
            result, src.value, [i.value for i in indices], dyn, [],
            _i64_array([0] + [dynamic] * n), _i64_array([size] + [1] * n),
            _i64_array([1] * (n + 1)))
        return [Batched(out.result, True)]
    # Per-lane indices: a gather, one element per lane.
    source = bt.to_batched(src) if src.batched else src.value

    def gather(*idx):
        from aotc._mlir import linalg

        lane = [linalg.IndexOp(0).result] if src.batched else []
        return [tensor.extract(source, lane + list(idx))]

    return lanewise(bt, indices, [v.type for v in op.operands[1:]], [op.results[0].type], gather)


@rule("tensor.from_elements")
def _from_elements(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir

    t = ir.RankedTensorType(op.results[0].type)
    if t.rank == 0:
        return [Batched(bt.to_batched(operands[0]), True)]
    lanes = [bt.to_batched(b) for b in operands]
    # Each element's lanes as a (B, 1) column, joined along the new axis, then reshaped.
    col_t = ir.RankedTensorType.get([bt.batch_dim(), 1], t.element_type)
    cols = [bt.expand(v, [[0, 1]], col_t, bt.dynamic_sizes()) for v in lanes]
    flat_t = ir.RankedTensorType.get([bt.batch_dim(), len(cols)], t.element_type)
    flat = concat(cols, 1, flat_t)
    if t.rank == 1:
        return [Batched(flat, True)]
    out_t = bt.batched_type(t)
    out = bt.expand(flat, [[0], list(range(1, t.rank + 1))], out_t, bt.dynamic_sizes())
    return [Batched(out, True)]


# ---- tensor shape ops -------------------------------------------------------------------

@rule("tensor.concat")
def _concat_rule(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir

    dim = ir.IntegerAttr(op.attributes["dim"]).value
    values = [bt.to_batched(b) for b in operands]
    return [Batched(concat(values, dim + 1, bt.batched_type(op.results[0].type)), True)]


def _batched_slice_attributes(bt: Batcher, op, leading: list[int], offsets, sizes, strides):
    """The attributes of ``op`` (an extract/insert_slice with ``leading`` tensor operand
    segments) taking the whole batch dimension first, and the dynamic size operand that
    goes before ``sizes`` when the batch size is dynamic."""
    from aotc._mlir import ir

    size, dyn = _batch_size_entry(bt)
    attrs = {
        "static_offsets": _i64_array([0] + _array(op.attributes["static_offsets"])),
        "static_sizes": _i64_array([size] + _array(op.attributes["static_sizes"])),
        "static_strides": _i64_array([1] + _array(op.attributes["static_strides"])),
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get(
            leading + [len(offsets), len(dyn) + len(sizes), len(strides)]),
    }
    return attrs, dyn


@rule("tensor.extract_slice")
def _extract_slice(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir

    src, offsets, sizes, strides = _split(operands, _segments(op))
    if any(b.batched for b in sizes + strides):
        refuse(bt, op, "a slice whose size or stride differs per example")
    if any(b.batched for b in offsets):
        return [Batched(_gather_slice(bt, op, src[0], offsets), True)]
    attrs, dyn = _batched_slice_attributes(bt, op, [1], offsets, sizes, strides)
    new = ir.Operation.create(
        "tensor.extract_slice", results=[bt.batched_type(op.results[0].type)],
        operands=[src[0].value] + [b.value for b in offsets] + dyn + [b.value for b in sizes]
        + [b.value for b in strides], attributes=attrs)
    return [Batched(new.result, True)]


def _static_window(bt: Batcher, op, what: str):
    """(sizes, strides) of a slice op whose sizes and strides are static."""
    from aotc._mlir import ir

    sizes, strides = _array(op.attributes["static_sizes"]), _array(op.attributes["static_strides"])
    if any(ir.ShapedType.is_dynamic_size(v) for v in sizes + strides):
        refuse(bt, op, f"{what} with per-example offsets and a dynamic size or stride")
    return sizes, strides


def _kept_dims(sizes: list[int], shape: list[int]) -> list[int]:
    """Which slice dimensions a rank-reduced slice of ``shape`` keeps (unit sizes not in
    ``shape`` are dropped, left to right as MLIR infers them)."""
    kept, j = [], 0
    for k, s in enumerate(sizes):
        if j < len(shape) and shape[j] == s and (s != 1 or len(sizes) - k - 1 < len(shape) - j
                                                 or len(sizes) - k == len(shape) - j):
            kept.append(k)
            j += 1
    return kept


def _offsets_with_lanes(bt: Batcher, op, offsets: list[Batched]) -> list:
    """The slice's offsets per source dimension, as scalars inside a linalg body whose loop
    dimension 0 is the batch (a batched offset is read at the lane)."""
    from aotc._mlir import index_constant, ir, linalg, tensor

    dynamic = iter(offsets)
    lane = linalg.IndexOp(0).result
    values = []
    for off in _array(op.attributes["static_offsets"]):
        if ir.ShapedType.is_dynamic_size(off):
            b = next(dynamic)
            values.append(from_lane(tensor.extract(b.value, [lane]), ir.IndexType.get())
                          if b.batched else b.value)
        else:
            values.append(index_constant(off))
    return values


def _gather_slice(bt: Batcher, op, src: Batched, offsets: list[Batched]):
    """``extract_slice`` at per-example offsets: a linalg.generic over the batched result
    that reads ``src[lane?, offset + i * stride]``."""
    from aotc._mlir import (
        PARALLEL,
        affine_maps,
        arith,
        dim_map,
        index_constant,
        ir,
        iterator_types,
        linalg,
        tensor,
    )

    sizes, strides = _static_window(bt, op, "an extract_slice")
    result_t = bt.batched_type(op.results[0].type)
    shape = list(ir.RankedTensorType(op.results[0].type).shape)
    kept = _kept_dims(sizes, shape)
    rank = len(shape) + 1
    init = bt.new_empty(list(result_t.shape), result_t.element_type, bt.dynamic_sizes())
    g = linalg.GenericOp([result_t], [], [init], affine_maps([dim_map(rank, list(range(rank)))]),
                         iterator_types([PARALLEL] * rank))
    block = g.regions[0].blocks.append(result_t.element_type)
    with ir.InsertionPoint(block):
        starts = _offsets_with_lanes(bt, op, offsets)
        index = [linalg.IndexOp(0).result] if src.batched else []
        for k, start in enumerate(starts):
            if k in kept:
                i = linalg.IndexOp(kept.index(k) + 1).result
                step = arith.muli(i, index_constant(strides[k])) if strides[k] != 1 else i
                start = arith.addi(start, step)
            index.append(start)
        linalg.YieldOp([tensor.extract(src.value, index)])
    return g.results[0]


@rule("tensor.insert_slice")
def _insert_slice(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir

    src, dest, offsets, sizes, strides = _split(operands, _segments(op))
    if any(b.batched for b in sizes + strides):
        refuse(bt, op, "a slice whose size or stride differs per example")
    if any(b.batched for b in offsets):
        return [Batched(_scatter_slice(bt, op, src[0], dest[0], offsets), True)]
    attrs, dyn = _batched_slice_attributes(bt, op, [1, 1], offsets, sizes, strides)
    new_dest = bt.to_batched(dest[0])
    new = ir.Operation.create(
        "tensor.insert_slice", results=[new_dest.type],
        operands=[bt.to_batched(src[0]), new_dest] + [b.value for b in offsets] + dyn
        + [b.value for b in sizes] + [b.value for b in strides], attributes=attrs)
    return [Batched(new.result, True)]


def _scatter_slice(bt: Batcher, op, src: Batched, dest: Batched, offsets: list[Batched]):
    """``insert_slice`` at per-example offsets: a linalg.generic over the batched
    destination that takes ``src`` inside each lane's window and ``dest`` elsewhere."""
    from aotc._mlir import (
        PARALLEL,
        affine_maps,
        arith,
        dim_map,
        index_constant,
        ir,
        iterator_types,
        linalg,
        tensor,
    )

    sizes, strides = _static_window(bt, op, "an insert_slice")
    if any(s != 1 for s in strides):
        refuse(bt, op, "a strided insert_slice with per-example offsets")
    dest_v = bt.to_batched(dest)
    dest_t = ir.RankedTensorType(dest_v.type)
    src_shape = list(ir.RankedTensorType(op.operands[0].type).shape)
    kept = _kept_dims(sizes, src_shape)
    rank = dest_t.rank
    identity = dim_map(rank, list(range(rank)))
    init = bt.new_empty(list(dest_t.shape), dest_t.element_type, bt.dynamic_sizes())
    g = linalg.GenericOp([dest_t], [dest_v], [init], affine_maps([identity, identity]),
                         iterator_types([PARALLEL] * rank))
    block = g.regions[0].blocks.append(dest_t.element_type, dest_t.element_type)
    ult = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 6)  # arith.cmpi ult
    with ir.InsertionPoint(block):
        starts = _offsets_with_lanes(bt, op, offsets)
        inside = None
        index = [linalg.IndexOp(0).result] if src.batched else []
        for k, start in enumerate(starts):
            rel = arith.subi(linalg.IndexOp(k + 1).result, start)
            # Unsigned compare: a position before the window wraps to a huge value.
            ok = arith.CmpIOp(ult, rel, index_constant(sizes[k])).result
            inside = ok if inside is None else arith.andi(inside, ok)
            if k in kept:
                # Clamped so the read stays in bounds in lanes where it is not used.
                index.append(arith.minui(rel, index_constant(max(sizes[k] - 1, 0))))
        read = tensor.extract(src.value, index)
        linalg.YieldOp([arith.select(inside, read, block.arguments[0])])
    return g.results[0]


@rule("tensor.pad")
def _pad(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir

    src, low, high = _split(operands, _segments(op))
    if any(b.batched for b in low + high):
        refuse(bt, op, "padding that differs per example")
    new = op.clone()
    bt.remap(new, top=True)  # a batched padding value captured in the region is refused
    new.operands[0] = bt.to_batched(src[0])
    new.attributes["static_low"] = _i64_array([0] + _array(op.attributes["static_low"]))
    new.attributes["static_high"] = _i64_array([0] + _array(op.attributes["static_high"]))
    new.results[0].set_type(bt.batched_type(op.results[0].type))
    # The region's block has one index argument per dimension. aotc pads with a value that
    # does not depend on the position, so the batch's argument can go at the end unused.
    body = new.regions[0].blocks[0]
    if any(len(list(a.uses)) for a in body.arguments):
        refuse(bt, op, "a tensor.pad whose padding value depends on the position")
    body.add_argument(ir.IndexType.get(), new.location)
    return [Batched(new.results[0], True)]


# ---- reshapes ---------------------------------------------------------------------------

def _batched_groups(groups: list[list[int]], expanded_type) -> list[list[int]]:
    """A reshape's reassociation with the batch as its own leading group; a reshape to or
    from 0-d (no groups: every dimension is a unit) puts its unit dimensions with the
    batch."""
    from aotc._mlir import ir

    if not groups:
        return [list(range(ir.RankedTensorType(expanded_type).rank + 1))]
    return [[0]] + [[d + 1 for d in g] for g in groups]


@rule("tensor.collapse_shape")
def _collapse(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    (x,) = operands
    groups = _batched_groups(reassociation_groups(op.attributes["reassociation"]),
                             op.operands[0].type)
    out = bt.collapse(x.value, groups, bt.batched_type(op.results[0].type))
    return [Batched(out, True)]


@rule("tensor.expand_shape")
def _expand(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    x = operands[0]
    if len(operands) > 1:
        raise PassError(f"{bt.pass_name}: tensor.expand_shape at {where(op)} with dynamic "
                        f"output sizes is not supported")
    groups = _batched_groups(reassociation_groups(op.attributes["reassociation"]),
                             op.results[0].type)
    dyn = [bt.size_value] if bt.size is None else []
    out = bt.expand(x.value, groups, bt.batched_type(op.results[0].type), dyn)
    return [Batched(out, True)]
