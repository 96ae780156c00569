"""Loops of row updates made fit for one dispatch: which ops to scalarize, and the loop
as it was kept beside them for the compile that retries without loop dispatches.

aotc-loops-in-dispatch runs a loop as one dispatch when its steps are scalar; a loop
whose steps update rows (``x[i] = 0.5 * (x[i - 1] + x[i])``: elementwise ops,
reductions and slice writes of more than one element) gets there once those ops are
scalar loops (``scalarize.py``). ``row_ops`` picks them; ``keep_as_it_was`` keeps a copy
of the loop as it was, which ``restore_originals`` puts back when the dispatches are
undone (``loops_in_dispatch.unwrap``), so the retry compiles IREE's own form of the
row ops rather than scalar loops run one step at a time by its VM.
"""

from __future__ import annotations

import itertools

from .base import (all_parallel, as_op, indexing_maps, operand_segments, tensor_bytes,
                   within)
from .opset import CARRIES_AT, RESHAPE_OPS
from .pointwise_tiles import repeatable, tile_rows
from .scalarize import fused, in_place_reads, scalarizable, underneath

# Per op of a loop whose larger ops are all ``scalarize``-able: rewritten as scalar loops,
# they run in the loop's dispatch too (one thread, no structured op for IREE to
# distribute); measured in benchmarks/loops.py. A pointwise update of the carry run tile
# by tile (``tiled_update``) has no such bound; untiled, 100 steps of ``x * 0.999 +
# 0.001`` on 262144 float32 took 1957 us as one thread's loop against 1848 per op, and
# 23000 against 5300 on 2^20 (2-core AMD Zen 5).
ROW_MAX_WORK = 1 << 16
# The bytes of the new tensors the scalarized ops of one loop may make: they live on the
# dispatch's stack, which IREE 3.13 limits to 32 KiB (a [16, 16384] float32 row sweep
# needed 192 KiB and failed to compile before its rows were read in place).
ROW_TEMPORARY_BYTES = 24 << 10


# A loop whose row ops were scalarized, and a copy of it as it was, after the dispatch in
# an ``scf.if`` on a constant false (IREE folds it away), both marked with one number:
# ``unwrap`` puts the copy back in the loop's place. (An unused copy inside the dispatch
# was compiled there, and one at the function's level run: its barriers keep it.)
SCALARIZED_LOOP = "aotc.scalarized_loop"
ORIGINAL_LOOP = "aotc.original_loop"


def row_ops(loop, max_work: int, op_work, tiled: set = frozenset()) -> list | None:
    """The ops of the nest of ``loop`` to ``scalarize`` so that it can run as one
    dispatch: every op of more than ``max_work`` element-steps (``op_work``) is
    scalarizable (or a slice read) of at most ``ROW_MAX_WORK`` (or one of ``tiled``, the
    loop's ``tiled_update``, which runs tile by tile), and the new tensors they make fit
    ``ROW_TEMPORARY_BYTES``; None where not."""
    found = []
    for region in loop.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = as_op(inner)
                if inner.name.startswith("flow."):
                    return None
                if inner.name.startswith("scf."):
                    nested = row_ops(inner, max_work, op_work)
                    if nested is None:
                        return None
                    found.extend(nested)
                    continue
                work = op_work(inner)
                if work is None or (work > ROW_MAX_WORK and inner not in tiled):
                    return None
                if inner.name == "tensor.extract_slice" and work > max_work:
                    found.append(inner)  # not rewritten; its copy counts (_temporary_bytes)
                    continue
                if work <= max_work:
                    continue
                if not scalarizable(inner):
                    return None
                found.append(inner)
    if any(stores_bools(op) and not _bools_read_by(op, found) for op in found):
        return None
    # (a tiled update is written into its carry: no new tensor)
    temporary = _temporary_bytes([op for op in found if op not in tiled])
    return found if temporary <= ROW_TEMPORARY_BYTES else None


def pointwise_update(value, carry) -> bool:
    """Whether ``value``, which a loop yields for ``carry``, can be computed in the
    carry's buffer: the one result of an all-parallel generic of the carry's type with an
    identity output map, whose reads of the carry, in its own body and in the producers
    fused into it (``scalarize.fused``), are each at the element being written (``x *
    0.999 + 0.001``: element j reads x[j] before x[j] is written). Other ops may read the
    carry only before it (they run first); the loop is an ``scf.for`` whose body does not
    read the carry's initial value (a scan's carry started at x and added x each step, or
    stored the old carry after the update: IREE's bufferization copied, and the loop's
    dispatch failed to compile)."""
    from aotc._mlir import ir

    if not (isinstance(value, ir.OpResult) and value.type == carry.type
            and value.type.has_static_shape):
        return False
    op = as_op(value.owner)
    if (op.name != "linalg.generic" or len(op.results) != 1 or not scalarizable(op)
            or not all_parallel(op) or not _identity(indexing_maps(op)[-1])):
        return False
    readers: set = set()
    return (_carry_reads(op, carry, readers) is not None
            and _read_before_only(carry, op, readers) and _initial_value_unread(carry))


def tiled_update(loop) -> set:
    """The ops that compute the updates of the carries of ``loop`` where each is a
    pointwise update (``pointwise_update``) of one shape, every read of a carry or of
    another carry's update is at the element being computed, and the loop's other ops
    are ``repeatable``: the generics and the producers fused into them, which then run
    tile by tile (``pointwise_tiles``); an empty set otherwise."""
    if loop.name != "scf.for" or not loop.results:
        return set()
    block = loop.regions[0].blocks[0]
    operations = [as_op(op) for op in block.operations]
    carries = list(block.arguments)[1:]
    pairs = list(zip(operations[-1].operands, carries))
    if not all(pointwise_update(value, carry) for value, carry in pairs) \
            or len({str(c.type.shape) for c in carries}) != 1 \
            or tile_rows([c.type for c in carries]) is None:
        return set()
    tree: set = set()
    for value, _ in pairs:
        _fused_tree(as_op(value.owner), tree)
    shared = {*carries, *(value for value, _ in pairs)}
    if not all(_read_pointwise_only(op, shared) for op in tree):
        return set()
    return tree if all(op in tree or repeatable(op) for op in operations[:-1]) else set()


def _read_pointwise_only(op, values: set) -> bool:
    """Whether the generic ``op`` reads each of ``values`` it reads (directly or through a
    reshape) with an identity map."""
    for v, m in zip(list(op.operands)[:operand_segments(op)[0]], indexing_maps(op)):
        if underneath(v) in values and (v not in values or not _identity(m)):
            return False
    return True


def _fused_tree(op, tree: set) -> None:
    """``op`` and the producers fused into it (``scalarize.fused``), into ``tree``."""
    from aotc._mlir import ir

    tree.add(op)
    for v in list(op.operands)[:operand_segments(op)[0]]:
        if isinstance(v, ir.OpResult) and fused(v):
            _fused_tree(as_op(underneath(v).owner), tree)


def _carry_reads(op, carry, readers: set) -> str | None:
    """How the fused tree of the generic ``op`` reads ``carry``: "none", "pointwise"
    (each read at the element ``op`` computes), or None (elsewhere, or through a reshape,
    which is not handled); the ops that read it directly go into ``readers``."""
    from aotc._mlir import ir

    reads = "none"
    count = operand_segments(op)[0]
    for v, m in zip(list(op.operands)[:count], indexing_maps(op)):
        if v == carry:
            if not _identity(m):
                return None
            readers.add(op)
            reads = "pointwise"
        elif underneath(v) == carry:
            return None
        elif isinstance(v, ir.OpResult) and fused(v):
            producer = as_op(underneath(v).owner)
            inner = _carry_reads(producer, carry, readers)
            if inner is None or (inner == "pointwise" and not (
                    _identity(m) and _identity(indexing_maps(producer)[-1]))):
                return None
            reads = "pointwise" if inner == "pointwise" else reads
    return reads


def _read_before_only(carry, op, readers: set) -> bool:
    """Whether every op reading ``carry`` other than ``readers`` (those in the fused tree
    of ``op``) comes before ``op`` in its block."""
    before = set()
    for other in op.operation.block.operations:
        other = as_op(other)
        if other == op:
            break
        before.add(other)
    return all(as_op(use.owner) in readers or as_op(use.owner) in before
               for use in carry.uses)


def _initial_value_unread(carry) -> bool:
    """Whether ``carry`` is an ``scf.for`` carry whose initial value the loop does not
    read."""
    loop = as_op(carry.owner.owner)
    if loop.name != "scf.for":
        return False
    init = list(loop.operands)[CARRIES_AT[loop.name] + carry.arg_number - 1]
    return not any(within(as_op(use.owner), loop) for use in init.uses)


def _identity(m) -> bool:
    from aotc._mlir import ir

    return all(isinstance(e, ir.AffineDimExpr) and e.position == k
               for k, e in enumerate(m.results)) and len(m.results) == m.n_dims


def write_into(value, carry) -> None:
    """``value``'s generic (``pointwise_update``) writes into ``carry``: its output
    operand becomes the carry, which its scalar loops then update in place."""
    op = as_op(value.owner)
    count = operand_segments(op)[0]
    op.operands[count] = carry


def stores_bools(op) -> bool:
    """Whether the scalar loops of ``op`` would write bools into a tensor (bools computed
    in their reader's loop, ``fused``, are never stored): IREE 3.13 keeps bool tensors as
    bytes inside a dispatch, and a ``tensor.insert`` of an i1 there fails to verify, so
    such a generic writes bytes instead (``scalarize.scalarize_bools``)."""
    from aotc._mlir import ir

    return any(isinstance(r.type.element_type, ir.IntegerType) and r.type.element_type.width == 1
               and not fused(r) for r in op.results)


def _bools_read_by(op, found: list) -> bool:
    """Whether ``op`` is a generic whose results only inputs of generics in ``found``
    read (which then read the bytes that hold them)."""
    if op.name != "linalg.generic":
        return False
    for result in op.results:
        for use in result.uses:
            reader = as_op(use.owner)
            if (reader not in found or reader.name != "linalg.generic"
                    or use.operand_number >= operand_segments(reader)[0]):
                return False
    return True


def _temporary_bytes(ops: list) -> int:
    """The bytes of the new tensors ``ops`` make on the dispatch's stack: the results
    written into a ``tensor.empty`` (not into an operand's buffer) that are not ``fused``
    into their reader, and the slices read, which IREE's bufferization copies where the
    loop writes the tensor they are read from (a [16, 16384] row sweep copied both rows
    it reads: 128 KiB), unless the loop reads them in place (``in_place_reads``, each
    reader at the element written)."""
    from aotc._mlir import ir

    total = 0
    in_place = {underneath(v) for op in ops if op.name == "tensor.insert_slice"
                for v in in_place_reads(op)}
    for op in ops:
        if op.name == "tensor.extract_slice":
            if op.results[0] not in in_place or not _read_pointwise(op.results[0]):
                total += tensor_bytes(op.results[0])
            continue
        for result, init in zip(op.results, list(op.operands)[-len(op.results):]):
            fresh = isinstance(init, ir.OpResult) and as_op(init.owner).name == "tensor.empty"
            if fresh and not fused(result):
                total += tensor_bytes(result)
    return total


def _read_pointwise(value) -> bool:
    """Whether every reader of ``value`` (through unit reshapes) is a generic reading it
    with an identity map: read at the element its loop writes, a slice ``in_place_reads``
    finds is read from the updated destination, never copied."""
    for use in value.uses:
        reader = as_op(use.owner)
        if reader.name in RESHAPE_OPS:
            if not _read_pointwise(reader.results[0]):
                return False
            continue
        if (reader.name != "linalg.generic" or use.operand_number >= operand_segments(reader)[0]
                or not _identity(indexing_maps(reader)[use.operand_number])):
            return False
    return True


def keep_as_it_was(loop, number: int):
    """A copy of ``loop`` in an ``scf.if`` on false after it (yielding the loop's initial
    values otherwise), the ``scf.if`` and ``loop`` marked with ``number``."""
    from aotc._mlir import arith, ir, scf

    with ir.InsertionPoint(loop), loop.location:
        never = arith.constant(ir.IntegerType.get_signless(1), 0)
        guard = scf.IfOp(never, [r.type for r in loop.results], has_else=True)
        with ir.InsertionPoint(guard.then_block):
            scf.YieldOp(list(loop.clone().results))
        with ir.InsertionPoint(guard.else_block):
            scf.YieldOp(list(loop.operands)[CARRIES_AT[loop.name]:])
    guard = as_op(guard.operation)
    guard.move_after(loop)
    mark = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), number)
    guard.attributes[ORIGINAL_LOOP] = mark
    loop.attributes[SCALARIZED_LOOP] = mark
    return guard


def _marked(module) -> dict:
    """{mark name: {number: op}} of the ops ``keep_as_it_was`` marked."""
    from aotc._mlir import ir

    marked = {ORIGINAL_LOOP: {}, SCALARIZED_LOOP: {}}

    def visit(op):
        op = as_op(op)
        for name, found in marked.items():
            if name in op.attributes:
                found[ir.IntegerAttr(op.attributes[name]).value] = op
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return marked


def kept_numbers(module):
    """The numbers ``keep_as_it_was`` may use next in ``module`` (after any in use)."""
    return itertools.count(max(_marked(module)[ORIGINAL_LOOP], default=-1) + 1)


def restore_originals(module) -> None:
    """Each scalarized loop replaced by the copy ``keep_as_it_was`` made of it (once the
    dispatches are undone, both are in the function)."""
    marked = _marked(module)
    for number, guard in marked[ORIGINAL_LOOP].items():
        changed = marked[SCALARIZED_LOOP][number]
        original = as_op(list(guard.regions[0].blocks[0].operations)[0])
        original.move_before(changed)
        for old, new in zip(changed.results, original.results):
            old.replace_all_uses_with(new)
        changed.erase()
        guard.erase()
