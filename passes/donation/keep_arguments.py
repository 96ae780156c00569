"""aotc-keep-undonated-arguments: arguments that are not donated keep their values.

IREE 3.13 performs a ``tensor.insert_slice`` or an ``iree_linalg_ext.scatter`` in the
storage of the argument it updates when nothing reads that argument afterwards
(iree-org/iree#16168): the caller's array is overwritten although it was not donated
(or its donation was refused). This pass adds that read: one
``util.optimization_barrier`` over a result computed from the update and those arguments,
just before the return. All of them are the caller's buffers, so IREE accepts the
barrier, and it then copies the argument before updating the copy, as without the update
ops.

It runs after ``aotc-donate`` (which decides which arguments are donated: those carrying
``iree.abi.output``); a barrier it added earlier is recognized, so running it again
changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base import ModulePass, as_op, register
from .analysis import InPlaceAnalysis
from .function import BARRIER, defining_op, donated_pairs, functions, insert_barrier


@register
@dataclass(frozen=True)
class KeepUndonatedArguments(ModulePass):
    """Makes IREE update copies of the arguments that are not donated (no options)."""

    name = "aotc-keep-undonated-arguments"

    def run(self, module) -> None:
        for func_op in functions(module):
            _keep_arguments(func_op)


def _keep_arguments(func_op) -> None:
    """Reads each undonated argument that an update writes in place again, in a barrier
    before the return. (Where only results written into donated buffers depend on the
    update, no barrier fits and none is added.)"""
    analysis = InPlaceAnalysis(func_op)
    outputs = donated_pairs(func_op)
    # A result written into a donated buffer is a temporary copied there: not one of the
    # caller's buffers, so it cannot share the barrier.
    free = [k for k in range(len(analysis.results)) if k not in outputs.values()]
    kept: dict[int, list] = {}  # result index -> the arguments it keeps
    for arg in analysis.block.arguments:
        if arg.arg_number in outputs or _kept(analysis, arg):
            continue
        writers = analysis.in_place_writers(arg)
        after = analysis.forward(writers)
        k = next((k for k in free if defining_op(analysis.results[k]) in after), None)
        if writers and k is not None:  # (an update no result depends on is never run)
            kept.setdefault(k, []).append(arg)
    ret = analysis.ret
    for k, args in kept.items():
        barrier = insert_barrier(ret, [analysis.results[k]] + args)
        ret.operands[k] = barrier.results[0]


def _kept(analysis: InPlaceAnalysis, arg) -> bool:
    """Does a barrier that feeds the return already read ``arg`` (an earlier run)?"""
    users = [as_op(use.owner) for use in arg.uses]
    return any(op.name == BARRIER and any(v in analysis.results for v in op.results)
               for op in users)
