"""aotc-drop-kernel-barriers: the barrier that keeps a sequential kernel's results together
is removed once aotc's own passes are done.

A kernel of several results (``aotc/ops/sequential.py``) passes them through one
``util.optimization_barrier`` marked ``aotc.kernel_results``: without it, canonicalization
rebuilds a ``flow.dispatch.region`` one of whose results is unused, and the rebuilt
region has lost its ``aotc.kernel`` name, which the batching pass needs. Before IREE
compiles the module the barrier must go: IREE 3.13 fails to verify a barrier some of
whose results are returned and others not ("failed to verify that all of {operands,
results} have same type", the lifetimes differ).

Invariants: only marked barriers change (each result replaced by its operand, the
barrier erased); running the pass twice changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, as_op, collect_ops, register

MARK = "aotc.kernel_results"


@register
@dataclass(frozen=True)
class DropKernelBarriers(ModulePass):
    """Removes the barriers over kernels' results (see the module docstring)."""

    name = "aotc-drop-kernel-barriers"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        found = collect_ops(module, lambda o: as_op(o).name == "util.optimization_barrier"
                            and MARK in as_op(o).attributes)
        for op, _ in found:
            op = as_op(op)
            for result, operand in zip(op.results, op.operands):
                result.replace_all_uses_with(operand)
            op.erase()
