"""aotc-unroll-loops: a loop kept at one dispatch per op and step runs several steps per
iteration of IREE's loop.

IREE runs an ``scf.for`` in its VM, and each iteration submits its dispatches and waits
for them on its own: measured, 50 steps of ``h = tanh(h @ w)`` (h [8, 512], one
dispatch per step of 18.4 us on one core) took 1.2-1.5 ms in process, 24-30 us per step;
traced with ``unroll=10``, 685 us, and with all 50 steps in line, 605 (jax.jit: 709-750).
At h [8, 32]: 54 -> 23 us (jax.jit 28-35). Unrolled, k steps are one submission.

Which loops: an ``scf.for`` outside a dispatch (aotc-loops-in-dispatch runs first and
keeps the loops it makes one dispatch) and outside the copies it keeps for a retry, with
static bounds and no loop or branch in its body, whose body has ops that do work
(``loops_in_dispatch.op_work``). The factor, at most ``MAX_FACTOR``, is the one leaving
the fewest iterations of IREE's loops: the unrolled loop's, and those of a copy of the
loop as it was after it, which runs the steps a whole iteration would overrun (11 trips:
one of 10 steps, then one). The unrolled body keeps within ``MAX_UNROLLED_OPS`` such ops
(the module grows by as much; IREE shares the identical dispatches' code: rnn_512
unrolled by 10 has one executable and 10 dispatches) and ``MAX_UNROLLED_BYTES`` of their
results. Not in modules with reverse-mode derivatives (aotc/build.py). Invariants:
values are unchanged (the same steps in the same order); an unrolled loop and its
remainder are marked, so running the pass twice changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import (ModulePass, as_op, collect_ops, register, static_bounds, static_trips,
                   tensor_bytes)
from .loops_in_dispatch import op_work
from .row_loops import ORIGINAL_LOOP

UNROLLED = "aotc.unrolled"
# Steps per iteration, at most: 10 took rnn_512's 50 steps from 24-30 to 13.7 us each,
# within 14% of all 50 in line (benchmarks/loops.py).
MAX_FACTOR = 10
# Ops that do work in the unrolled body, at most: the compile's cost grows with them.
MAX_UNROLLED_OPS = 32
# Bytes the unrolled body's working ops make, at most: IREE packs one iteration's
# transients together, so a step's temporaries are live k times over (a loop making
# tensors of dynamic shape is not unrolled).
MAX_UNROLLED_BYTES = 1 << 20


def _left_alone(op) -> bool:
    """Whether ``op`` is inside a dispatch, or inside the copy of a loop as it was that
    aotc-loops-in-dispatch keeps for a retry (``row_loops.keep_as_it_was``: the retry
    puts that loop back as it is)."""
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name.startswith("flow.dispatch.") or ORIGINAL_LOOP in parent.attributes:
            return True
        parent = parent.parent
    return False


def factor(loop) -> int:
    """How many steps of ``loop`` one iteration of the unrolled loop runs (module
    docstring); 1 where it is not unrolled."""
    trips = static_trips(loop)
    if UNROLLED in loop.attributes or trips is None or _left_alone(loop):
        return 1
    body = [as_op(op) for op in loop.regions[0].blocks[0].operations]
    if any(op.name.startswith("scf.") and op.name != "scf.yield" for op in body):
        return 1
    working = [op for op in body if op_work(op)]
    sizes = [tensor_bytes(r) for op in working for r in op.results]
    if not working or None in sizes:  # (a dynamic shape: its size is not known)
        return 1
    made = sum(sizes)
    fits = [k for k in range(2, min(MAX_FACTOR, trips) + 1)
            if k * len(working) <= MAX_UNROLLED_OPS and k * made <= MAX_UNROLLED_BYTES]
    # the fewest iterations of the VM's loops: the unrolled one and the remainder's
    return min(fits, key=lambda k: (trips // k + trips % k, -k), default=1)


def unroll(loop, k: int) -> None:
    """``loop`` runs ``k`` steps per iteration: its body cloned ``k - 1`` times after
    itself, each copy reading the previous one's yielded values as its carries and the
    induction variable advanced by its steps; the steps a whole iteration would overrun
    run in a copy of the loop as it was after it (``_remainder_after``)."""
    from aotc._mlir import arith, index_constant, ir

    lower, upper, step = static_bounds(loop)
    whole = lower + static_trips(loop) // k * k * step
    if whole < upper:
        _remainder_after(loop, whole)
    block = loop.regions[0].blocks[0]
    induction, carries = block.arguments[0], list(block.arguments)[1:]
    operations = [as_op(op) for op in block.operations]
    terminator, body = operations[-1], operations[:-1]
    yielded = list(terminator.operands)
    for copy in range(1, k):
        with ir.InsertionPoint(terminator), loop.location:
            mapping = {induction: arith.addi(induction, index_constant(copy * step))}
        mapping.update(zip(carries, yielded))
        for op in body:
            clone = op.clone(ip=ir.InsertionPoint(terminator))
            _remap(clone, mapping)
            mapping.update(zip(op.results, clone.results))
        yielded = [mapping.get(v, v) for v in terminator.operands]
    for i, value in enumerate(yielded):
        terminator.operands[i] = value
    with ir.InsertionPoint(loop), loop.location:
        loop.operands[2] = index_constant(k * step)
    loop.attributes[UNROLLED] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k)


def _remainder_after(loop, whole: int) -> None:
    """The steps of ``loop`` from ``whole`` on run in a copy of it after it, which starts
    at ``loop``'s results and gives the values its users read; ``loop`` stops at
    ``whole``."""
    from aotc._mlir import index_constant, ir

    remainder = loop.clone(ip=ir.InsertionPoint(loop))
    remainder.move_after(loop)
    for old, new in zip(loop.results, remainder.results):
        old.replace_all_uses_with(new)
    offset = len(list(remainder.operands)) - len(loop.results)
    for i, value in enumerate(loop.results):
        remainder.operands[offset + i] = value
    with ir.InsertionPoint(loop), loop.location:
        boundary = index_constant(whole)
    loop.operands[1] = boundary
    remainder.operands[0] = boundary
    remainder.attributes[UNROLLED] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 1)


def _remap(op, mapping: dict) -> None:
    """Every operand of ``op`` and of the ops nested in it that ``mapping`` maps is
    replaced (a clone still reads the original body's values)."""
    from aotc._mlir import ir

    def visit(inner):
        inner = as_op(inner)
        for i, value in enumerate(list(inner.operands)):
            if value in mapping:
                inner.operands[i] = mapping[value]
        return ir.WalkResult.ADVANCE

    op.walk(visit)


@register
@dataclass(frozen=True)
class UnrollLoops(ModulePass):
    """Loops of per-op steps unrolled (module docstring)."""

    name = "aotc-unroll-loops"

    def run(self, module) -> None:
        for loop, _ in collect_ops(module, lambda o: True if as_op(o).name == "scf.for"
                                   else None):
            loop = as_op(loop)
            k = factor(loop)
            if k > 1:
                unroll(loop, k)
