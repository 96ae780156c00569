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

Which loops: an ``scf.for`` with one carry, whose body is that carry's element loop
nest plus scalar ops (the step's index arithmetic, constants, empties), which the tile
loop repeats per tile.
"""

from __future__ import annotations

import math

from .base import as_op, constant_index, element_bytes, read_metadata, write_metadata
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
    """The step loop ``loop`` inside a loop over tiles of its carry (module docstring)
    where its shape is one this handles: the outermost loop, the tile loop or ``loop``."""
    nest = _element_nest(loop)
    if nest is None:
        return loop
    extent = loop.results[0].type.shape[0]
    rows = tile_rows(loop.results[0].type)
    if rows is None or rows >= extent:
        return loop  # one tile: nothing to gain
    return _wrap_in_tiles(loop, nest, rows, extent)


def tile_rows(carry_type) -> int | None:
    """How many rows (along the first dimension) of a carry of ``carry_type`` one tile
    holds; None where one row is more than ``TILE_BYTES``."""
    row_bytes = math.prod(carry_type.shape[1:]) * element_bytes(carry_type.element_type)
    return TILE_BYTES // row_bytes if row_bytes <= TILE_BYTES else None


def _element_nest(loop):
    """The outermost ``scf.for`` of the carry's element loop nest in the body of the
    step loop ``loop``, if ``loop`` is a one-carry ``scf.for`` whose body is that nest
    (starting at the carry, over its first dimension from 0 in steps of 1, its result
    yielded) and ops of scalars; None otherwise."""
    from aotc._mlir import ir

    if loop.name != "scf.for" or len(loop.results) != 1:
        return None
    carry_type = loop.results[0].type
    if not (isinstance(carry_type, ir.RankedTensorType) and carry_type.rank >= 1
            and carry_type.has_static_shape):
        return None
    block = loop.regions[0].blocks[0]
    carry = block.arguments[1]
    operations = [as_op(op) for op in block.operations]
    terminator = operations[-1]
    nest = (as_op(terminator.operands[0].owner)
            if isinstance(terminator.operands[0], ir.OpResult) else None)
    if (nest is None or nest.name != "scf.for" or nest.operation.block != block
            or len(nest.results) != 1 or nest.operands[CARRIES_AT["scf.for"]] != carry
            or len(list(carry.uses)) != 1):
        return None
    lower, upper, step = (constant_index(v) for v in list(nest.operands)[:3])
    if (lower, upper, step) != (0, carry_type.shape[0], 1):
        return None
    if not all(op == nest or op == terminator or repeatable(op) for op in operations):
        return None
    return nest


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


def _wrap_in_tiles(loop, nest, rows: int, extent: int):
    """``for t in range(0, extent, rows): carry = loop(carry)`` with ``nest`` over rows
    [t, min(t + rows, extent)); the loop's attributes move to the tile loop (a mark
    ``row_loops.restore_originals`` finds it by)."""
    from aotc._mlir import arith, index_constant, ir, scf

    offset = CARRIES_AT["scf.for"]
    with ir.InsertionPoint(loop), loop.location:
        tiles = scf.ForOp(index_constant(0), index_constant(extent), index_constant(rows),
                          [loop.operands[offset]])
    for name in [loop.attributes[k].name for k in range(len(loop.attributes))]:
        tiles.operation.attributes[name] = loop.attributes[name]
        del loop.attributes[name]
    tiles.operation.attributes[TILE_LOOP] = ir.UnitAttr.get()
    loop.results[0].replace_all_uses_with(tiles.results[0])
    with ir.InsertionPoint(tiles.body), loop.location:
        start = tiles.induction_variable
        end = arith.minsi(arith.addi(start, index_constant(rows)), index_constant(extent))
        yielded = scf.YieldOp([loop.results[0]])
    loop.move_before(yielded)
    loop.operands[offset] = tiles.inner_iter_args[0]
    nest.operands[0] = start
    nest.operands[1] = end
    return as_op(tiles.operation)


def workgroups(loop) -> int:
    """How many workgroups the dispatch of ``loop`` runs on: one per tile of a loop over
    tiles (at most ``MAX_WORKGROUPS``), else 1."""
    if TILE_LOOP not in loop.attributes:
        return 1
    lower, upper, step = (constant_index(v) for v in list(loop.operands)[:3])
    return min(MAX_WORKGROUPS, -(-(upper - lower) // step))


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
    trips = [constant_index(v) for v in list(loop.operands)[:3]]
    if loop.name != "scf.for" or None in trips or trips[2] <= 0:
        return 0
    body = [as_op(op) for op in loop.regions[0].blocks[0].operations]
    return -(-(trips[1] - trips[0]) // trips[2]) * sum(1 for op in body if op_work(op))


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
