"""Batching rules for linalg's structured ops: ``linalg.generic``, ``matmul``,
``transpose``, ``broadcast`` and ``fill``.

Registered in ``RULES`` on import (see ``core``). A ``linalg.generic`` gets the batch as
a new leading parallel loop dimension; a named op keeps its name where a batched form
exists (a matmul with a batched left operand folds the batch into its rows).
"""

from __future__ import annotations

from ..base import indexing_maps, multiplies_inputs
from .core import Batched, Batcher, as_op, from_lane, lane_generic, rule


def _shift_map(amap, batched: bool):
    """``(d0..dn) -> exprs`` as ``(d0..dn+1) -> ([d0,] exprs with di -> di+1)``."""
    from aotc._mlir import ir

    n = amap.n_dims
    shift = ir.AffineMap.get(n + 1, amap.n_symbols,
                             [ir.AffineDimExpr.get(i + 1) for i in range(n)])
    results = [e.compose(shift) for e in amap.results]
    if batched:
        results = [ir.AffineDimExpr.get(0)] + results
    return ir.AffineMap.get(n + 1, amap.n_symbols, results)


@rule("linalg.generic")
def _generic(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir

    n_in = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))[0]
    ins, outs = operands[:n_in], operands[n_in:]
    new_outs = [bt.to_batched(o) for o in outs]
    new = op.clone()
    captured: list = []
    bt.remap(new, top=True, captured=captured)
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    new_maps = [_shift_map(m, b.batched) for m, b in zip(maps, ins)] + [
        _shift_map(m, True) for m in maps[n_in:]]
    for i, b in enumerate(ins):
        new.operands[i] = b.value
    for k, v in enumerate(new_outs):
        new.operands[n_in + k] = v
        new.results[k].set_type(v.type)
    new.attributes["indexing_maps"] = ir.ArrayAttr.get(
        [ir.AffineMapAttr.get(m) for m in new_maps])
    iters = [ir.Attribute.parse("#linalg.iterator_type<parallel>")] + list(
        ir.ArrayAttr(op.attributes["iterator_types"]))
    new.attributes["iterator_types"] = ir.ArrayAttr.get(iters)
    _shift_indices(new.regions[0])
    if captured:
        read_lanes(new.regions[0].blocks[0], captured)
    named = _as_matmul(new)
    if named is not None:
        return [Batched(named, True)]
    return [Batched(r, True) for r in new.results]


def _as_matmul(op):
    """A batched vector-matrix product (``x @ W`` per example, the batch now its rows) as a
    ``linalg.matmul`` (replacing the generic ``op``), else None: IREE's matmul code and
    aotc-tile-matmuls key on the named op (a vmapped MLP layer ran 1.6x the batched one's
    time as a generic)."""
    from aotc._mlir import ir, linalg

    maps = [str(m) for m in indexing_maps(op)]
    if (maps != list(_MATMUL_MAPS) or len(op.operands) != 3 or len(op.results) != 1
            or not multiplies_inputs(op.regions[0].blocks[0])):
        return None
    with ir.InsertionPoint(op), op.location:
        named = linalg.matmul(op.operands[0], op.operands[1], outs=[op.operands[2]])
    op.erase()
    return named


_MATMUL_MAPS = ("(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)",
                "(d0, d1, d2) -> (d0, d1)")


def read_lanes(body, captured: list) -> None:
    """Inside a linalg body whose loop dimension 0 is the batch: a captured batched
    tensor read with ``tensor.extract`` reads this lane's slice (the lane index goes
    first), any other captured batched value (a batched scalar) is read at this lane."""
    from aotc._mlir import ir, linalg, tensor

    with ir.InsertionPoint.at_block_begin(body):
        lane = linalg.IndexOp(0).result
    # Batched scalars first: a tensor.extract whose source and indices are both captured
    # is rebuilt last, from its already rewritten indices.
    for inner, i, b in sorted(captured,
                              key=lambda c: c[0].name == "tensor.extract" and c[1] == 0):
        with inner.location:
            if inner.name == "tensor.extract" and i == 0:
                with ir.InsertionPoint(inner):
                    read = tensor.extract(b.value, [lane] + list(inner.operands)[1:])
                inner.results[0].replace_all_uses_with(read)
                inner.erase()
                continue
            with ir.InsertionPoint(inner):
                value = from_lane(tensor.extract(b.value, [lane]), inner.operands[i].type)
            inner.operands[i] = value


def _shift_indices(region) -> None:
    """``linalg.index k`` -> ``linalg.index k+1`` (the batch loop is now dimension 0)."""
    from aotc._mlir import ir

    for block in region.blocks:
        for inner in block.operations:
            inner = as_op(inner)
            if inner.name == "linalg.index":
                dim = ir.IntegerAttr(inner.attributes["dim"]).value
                inner.attributes["dim"] = ir.IntegerAttr.get(
                    ir.IntegerType.get_signless(64), dim + 1)


@rule("linalg.matmul")
def _matmul(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir, linalg

    a, b, c = operands
    res_t = ir.RankedTensorType(op.results[0].type)
    m, n = res_t.shape
    elt = res_t.element_type
    if a.batched and not b.batched:
        # Fold the batch into the rows: (B*M, K) @ (K, N) -> (B*M, N) -> (B, M, N).
        a_t = ir.RankedTensorType(a.value.type)
        k = a_t.shape[2]
        rows = ir.ShapedType.get_dynamic_size() if bt.size is None else bt.size * m
        a2 = bt.collapse(a.value, [[0, 1], [2]],
                         ir.RankedTensorType.get([rows, k], a_t.element_type))
        c3 = bt.to_batched(c)
        c2 = bt.collapse(c3, [[0, 1], [2]], ir.RankedTensorType.get([rows, n], elt))
        new = op.clone()
        new.operands[0] = a2
        new.operands[1] = b.value
        new.operands[2] = c2
        new.results[0].set_type(c2.type)
        dyn = [bt.size_value] if bt.size is None else []
        out = bt.expand(new.results[0], [[0, 1], [2]], c3.type, dyn)
        return [Batched(out, True)]
    # Both batched, or a batched weight: a batch_matmul (the unbatched operand broadcast).
    a3, b3, c3 = bt.to_batched(a), bt.to_batched(b), bt.to_batched(c)
    return [Batched(linalg.batch_matmul(a3, b3, outs=[c3]), True)]


@rule("linalg.transpose")
def _transpose(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir

    x, init = operands
    out = bt.to_batched(init)
    perm = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
    new = op.clone()
    new.operands[0] = bt.to_batched(x)
    new.operands[1] = out
    new.results[0].set_type(out.type)
    new.attributes["permutation"] = ir.DenseI64ArrayAttr.get([0] + [p + 1 for p in perm])
    return [Batched(new.results[0], True)]


@rule("linalg.broadcast")
def _broadcast(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir, linalg

    x, init = operands
    dims = [d + 1 for d in ir.DenseI64ArrayAttr(op.attributes["dimensions"])]
    out = linalg.broadcast(bt.to_batched(x), outs=[bt.to_batched(init)],
                           dimensions=dims).results[0]
    return [Batched(out, True)]


@rule("linalg.fill")
def _fill(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    scalar, out = operands
    init = bt.to_batched(out)
    if not scalar.batched:
        new = op.clone()
        new.operands[0] = scalar.value
        new.operands[1] = init
        new.results[0].set_type(init.type)
        return [Batched(new.results[0], True)]
    # Each lane filled with its own value: a broadcast of the lanes.
    out = lane_generic([init.type], [(scalar.value, True)], [init],
                       lambda lane, _: [from_lane(lane, op.operands[0].type)])
    return [Batched(out[0], True)]
