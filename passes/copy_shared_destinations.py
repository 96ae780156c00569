"""aotc-copy-shared-destinations: an update made in place into a value that is also used
otherwise is made into an explicit copy of it.

``v.at[i].set(y)`` (``tensor.insert_slice``, a scatter: ``opset.DESTINATION``) is done in
the buffer of ``v``; when ``v`` has other uses (returned, read later, updated again),
IREE 3.13 must give the update a clone, and it got that wrong in modules with more work
around it: values of the update or of the other use came back wrong (fuzzer programs
8812, 13350, 15620, 17978, 19498: each alone right, wrong beside an unrelated program in
one function), a constant of 8-byte elements updated and also returned failed to compile
("'stream.yield' op used resource not listed in explicit captures": ``v = ones(n,
int64); return v, v.at[i].set(y)``, program 3158), and with a barrier before the update
the update landed in the returned copy. An explicit copy is folded away, and a
``linalg.copy`` behind a barrier was compiled as a write into a constant's global. This
pass gives such an update ``runtime_copy(v)`` (aotc-materialize-constants): a generic
writing a fresh buffer that IREE cannot fold, so IREE never has to clone ``v`` itself.
The copy is the one IREE would have made; IREE could skip it where every other use
reads ``v`` before the update, which this pass does not try to see.

An update of a value computed by ops from constants alone gets the copy too, even as its
only use: IREE evaluates the value when compiling (const-eval) and may give it the storage of
an equal constant the program also returns (fuzz 111912: ``sort(isinf(int_array))``
returned beside ``signbit(fmax(that, ...)).at[3::2].max(b)``, both all false before the
update, came back with their values exchanged).

Which operands: the destination of an op when it is an op's result (an argument's
updates are the donation passes'), has a static shape and has another use or is computed
from constants alone, and is not a barrier's result: a copy of one of the donation
pass's multi-value barriers made IREE retype that barrier, which then failed to verify
(fuzzer program 17113). Invariants:
values are unchanged; running the pass twice changes nothing more (the copy has one use).
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, as_op, collect_ops, computed_from_constants, register
from .materialize_constants import runtime_copy
from .opset import CONSTANT_LIKE_OPS, DESTINATION


def _shared_destination(op, memo: dict):
    """The destination operand of ``op`` when an op computes it, its shape is static and
    it has another use or is computed from constants alone; else None (``memo``: the
    answers of ``base.computed_from_constants`` in this run)."""
    from aotc._mlir import ir

    position = DESTINATION.get(op.name)
    if position is None:
        return None
    value = op.operands[position]
    if (isinstance(value, ir.OpResult) and isinstance(value.type, ir.RankedTensorType)
            and value.type.has_static_shape
            and as_op(value.owner).name != "util.optimization_barrier"
            and ((len(list(value.uses)) > 1 and not _read_by_the_update_only(op, value))
                 or (as_op(value.owner).name not in CONSTANT_LIKE_OPS
                     and computed_from_constants(value, memo)))):
        # (a constant itself is not copied: IREE materializes an updated constant in a
        # buffer of its own; nor is anything behind a barrier, runtime_copy's flag)
        return value
    return None


def _read_by_the_update_only(op, value) -> bool:
    """Is every other use of ``value`` an op the update ``op`` itself reads from (``x.at[i]
    .add(u)`` reads x[i] for the new row)? IREE orders such a read before its update and
    needs no clone; with aotc's copy, the update of a broadcast matmul result was lost
    (fuzzer program 56480: ``broadcast_to(a @ b, s).at[2::3].add(u)``)."""
    feeding, stack = set(), [v for k, v in enumerate(op.operands)
                             if k != DESTINATION[op.name]]
    while stack:
        v = stack.pop()
        owner = v.owner
        if not hasattr(owner, "operands"):  # a block argument
            continue
        owner = as_op(owner)
        if owner not in feeding:
            feeding.add(owner)
            stack.extend(owner.operands)
    return all(as_op(use.owner) in feeding or as_op(use.owner) == op for use in value.uses)


@register
@dataclass(frozen=True)
class CopySharedDestinations(ModulePass):
    """Explicit copies for updates of values used otherwise (see the module docstring)."""

    name = "aotc-copy-shared-destinations"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        memo: dict = {}
        for op, value in collect_ops(module, lambda o: _shared_destination(as_op(o), memo)):
            op = as_op(op)
            op.operands[DESTINATION[op.name]] = runtime_copy(op, value)
