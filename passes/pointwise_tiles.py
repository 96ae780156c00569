"""A loop of pointwise steps runs tile by tile: all its steps on one tile of the carry,
then all on the next, so the tile stays in the core's L1 cache through every step.

``x = fori_loop(0, 100, lambda i, x: x * 0.999 + 0.001, x)`` is, once aotc-loops-in-
dispatch has made its generic a scalar loop writing the carry in place
(``row_loops.pointwise_update``), a loop over steps around a loop over elements. Each
element's steps read and write that element alone, so the two loops can trade places
blockwise (loop tiling and interchange): an outer loop over tiles of the carry's first
dimension, the steps inside it, and the element loop over the tile. The step loop then
reads the carry from memory once, not once per step, and the tiles are independent, so
the dispatch's workgroups share them out (``distribute``). Measured, 100 steps on
262144 float32 (2-core AMD Zen 5, benchmarks/loops.py ``elementwise_262144``): 1860 us
as one dispatch per op and step, 621 us tile by tile on one thread, 369 us on two
workgroups (jax.jit 800-1700 us); on 2^20 float32 5731 -> 1329 us (jax.jit 2220-2440).

Which loops: an ``scf.for`` whose carries, of one shape, are each updated pointwise
(``row_loops.tiled_update``: also from each other's old or new values, but only at the
element computed, as a leapfrog step ``v -= dt * x; x += dt * v``), so that its body is
their element loop nests plus scalar ops (the step's index arithmetic, constants,
empties), which the tile loop repeats per tile. Such a leapfrog on 262144 float32, 100
steps: 4.4-4.9 ms per op and step, 0.81 ms tile by tile (jax.jit 3.2-4.4 ms).
"""

from __future__ import annotations

import math

from .base import (as_op, element_bytes, read_metadata, static_bounds, static_trips, within,
                   write_metadata)
from .opset import CARRIES_AT

# Marks the loop over tiles (``distribute`` spreads it over workgroups).
TILE_LOOP = "aotc.tile_loop"
# A dispatch's workgroup number and count along x, and their values on one workgroup.
WORKGROUP_OPS = {"flow.dispatch.workgroup.id": 0, "flow.dispatch.workgroup.count": 1}
# IREE's limit on a dimension of a dispatch's workgroup grid.
MAX_WORKGROUPS = 65535

# The bytes of the carry one tile holds: with the loop's other operands read pointwise
# alongside, it stays in a 32-48 KiB L1 data cache. Measured (100 steps of x * 0.999 +
# 0.001 on 65536 / 262144 / 2^20 float32, us): 8 KiB 130 / 383 / 1317, 16 KiB 142 / 377 /
# 1377, 32 KiB 205 / 378 / 1326.
TILE_BYTES = 8 << 10


def tile_steps(loop):
    """The step loop ``loop`` inside a loop over tiles of its carries (module docstring)
    where its shape is one this handles: the outermost loop, the tile loop or ``loop``."""
    nests = _element_nests(loop)
    if nests is None:
        return loop
    extent = loop.results[0].type.shape[0]
    rows = tile_rows([r.type for r in loop.results])
    if rows is None or rows >= extent:
        return loop  # one tile: nothing to gain
    return _wrap_in_tiles(loop, nests, rows, extent)


def tile_rows(carry_types: list) -> int | None:
    """How many rows (along the first dimension) of carries of ``carry_types`` one tile
    holds, by the widest carry's rows; None where one of its rows is more than
    ``TILE_BYTES``."""
    row_bytes = max(math.prod(t.shape[1:]) * element_bytes(t.element_type) for t in carry_types)
    return TILE_BYTES // row_bytes if row_bytes <= TILE_BYTES else None


def _element_nests(loop) -> list | None:
    """The outermost ``scf.for`` of each carry's element loop nest in the body of the step
    loop ``loop``, if ``loop`` is an ``scf.for`` whose carries are tensors of one shape
    and whose body is those nests (each starting at its carry, over the first dimension
    from 0 in steps of 1, its result yielded for that carry; a carry read elsewhere only
    inside the nests) and ops of scalars; None otherwise."""
    from aotc._mlir import ir

    if loop.name != "scf.for" or not loop.results:
        return None
    shape = loop.results[0].type.shape if isinstance(loop.results[0].type,
                                                       ir.RankedTensorType) else None
    if not shape or not all(isinstance(r.type, ir.RankedTensorType) and r.type.has_static_shape
                            and r.type.shape == shape for r in loop.results):
        return None
    block = loop.regions[0].blocks[0]
    operations = [as_op(op) for op in block.operations]
    terminator = operations[-1]
    nests = []
    for value, carry in zip(terminator.operands, list(block.arguments)[1:]):
        nest = as_op(value.owner) if isinstance(value, ir.OpResult) else None
        if (nest is None or nest.name != "scf.for" or nest.operation.block != block
                or len(nest.results) != 1 or nest.operands[CARRIES_AT["scf.for"]] != carry
                or nest in nests):
            return None
        if static_bounds(nest) != (0, shape[0], 1):
            return None
        nests.append(nest)
    for carry, nest in zip(list(block.arguments)[1:], nests):
        for use in carry.uses:
            reader = as_op(use.owner)
            if reader != nest and not any(within(reader, other) for other in nests):
                return None
    if not all(op in nests or op == terminator or repeatable(op) for op in operations):
        return None
    return nests


def repeatable(op) -> bool:
    """Whether ``op`` is cheap to repeat per tile: its results are scalars or tensors of
    at most one element (or empty tensors, which hold no data), and it has no region but
    a rank-0 generic's body (no loop of its own)."""
    from aotc._mlir import ir

    if op.name.startswith("flow.") or (len(op.regions) and op.name != "linalg.generic"):
        return False
    for result in op.results:
        t = result.type
        if isinstance(t, ir.ShapedType) and op.name != "tensor.empty" and not (
                t.has_static_shape and math.prod(t.shape) <= 1):
            return False
    return True


def _wrap_in_tiles(loop, nests: list, rows: int, extent: int):
    """``for t in range(0, extent, rows): carries = loop(carries)`` with each of ``nests``
    over rows [t, min(t + rows, extent)); the loop's attributes move to the tile loop (a
    mark ``row_loops.restore_originals`` finds it by)."""
    from aotc._mlir import arith, index_constant, ir, scf

    offset = CARRIES_AT["scf.for"]
    with ir.InsertionPoint(loop), loop.location:
        tiles = scf.ForOp(index_constant(0), index_constant(extent), index_constant(rows),
                          list(loop.operands)[offset:])
    for name in [loop.attributes[k].name for k in range(len(loop.attributes))]:
        tiles.operation.attributes[name] = loop.attributes[name]
        del loop.attributes[name]
    tiles.operation.attributes[TILE_LOOP] = ir.UnitAttr.get()
    for old, new in zip(loop.results, tiles.results):
        old.replace_all_uses_with(new)
    with ir.InsertionPoint(tiles.body), loop.location:
        start = tiles.induction_variable
        end = arith.minsi(arith.addi(start, index_constant(rows)), index_constant(extent))
        yielded = scf.YieldOp(list(loop.results))
    loop.move_before(yielded)
    for k, carry in enumerate(tiles.inner_iter_args):
        loop.operands[offset + k] = carry
    for nest in nests:
        nest.operands[0] = start
        nest.operands[1] = end
    return as_op(tiles.operation)


def workgroups(loop) -> int:
    """How many workgroups the dispatch of ``loop`` runs on: one per tile of a loop over
    tiles (at most ``MAX_WORKGROUPS``), else 1."""
    if TILE_LOOP not in loop.attributes:
        return 1
    return min(MAX_WORKGROUPS, static_trips(loop))


def distribute(loop) -> None:
    """Workgroup k of n runs the tiles k, k + n, k + 2n, ... of the loop over tiles
    ``loop``, inside its dispatch: tiles are independent, so the workgroups need no
    synchronization, and each writes only its tiles of the carry, in place (the
    dispatch's result is tied to the carry's binding; ``loops_in_dispatch._tie`` runs the
    dispatch on one workgroup where it is not). Measured, 100 steps on 262144 float32:
    651 us on one workgroup, 383 us on two workers (local-task)."""
    from aotc._mlir import arith, ir

    index = ir.IndexType.get()
    with ir.InsertionPoint(loop), loop.location:
        number, count = (
            ir.Operation.create(name, results=[index],
                                attributes={"dimension": ir.IntegerAttr.get(index, 0)}).result
            for name in WORKGROUP_OPS)
        rows = loop.operands[2]
        loop.operands[0] = arith.muli(number, rows)
        loop.operands[2] = arith.muli(count, rows)


def workgroup_grid(region) -> None:
    """The workgroup count region of ``region``: its one workload value along x."""
    from aotc._mlir import index_constant, ir

    with region.location:
        block = region.regions[1].blocks.append(ir.IndexType.get())
    with ir.InsertionPoint(block), region.location:
        one = index_constant(1)
        ir.Operation.create("flow.return", operands=[block.arguments[0], one, one])


def one_workgroup(dispatch) -> None:
    """``dispatch`` runs on one workgroup (its workload, the first operand, becomes 1):
    a loop over tiles whose carry is not tied to its binding makes each workgroup store
    the whole carry."""
    from aotc._mlir import index_constant, ir

    with ir.InsertionPoint(dispatch), dispatch.location:
        dispatch.operands[0] = index_constant(1)


def workload_size(dispatch) -> int:
    """How many of ``dispatch``'s operands are its workload (they come first)."""
    from aotc._mlir import ir

    return ir.DenseI32ArrayAttr(dispatch.attributes["operandSegmentSizes"])[0]


def counted_ops(loop, op_work) -> int:
    """The ops the tracer counted for the loop ``loop``: those of its body that do work
    (``op_work``: loops_in_dispatch.op_work), once per trip
    (``aotc/ops/control._outer_work``); 0 where its trip count is not static."""
    trips = static_trips(loop) if loop.name == "scf.for" else None
    if trips is None:
        return 0
    body = [as_op(op) for op in loop.regions[0].blocks[0].operations]
    return trips * sum(1 for op in body if op_work(op))


def count_as_one_op(loop, counted: int) -> None:
    """The function's ``op_estimate`` counts ``loop``, whose ``counted`` ops now run as
    one dispatch, as one op: the runtime's driver choice (runtime/device.py) keeps a
    function of many small ops on one thread, and this dispatch's workgroups need the
    worker pool (100 steps on 262144 float32: 621 us on local-sync, 383 on local-task)."""
    from dataclasses import replace

    func = loop.parent
    while func.name != "func.func":
        func = func.parent
    metadata = read_metadata(func)
    if metadata is not None and metadata.op_estimate:
        ops = max(1.0, metadata.op_estimate - counted + 1)
        write_metadata(func, replace(metadata, op_estimate=ops))
