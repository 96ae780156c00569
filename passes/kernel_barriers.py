"""aotc-keep-unused-kernel-results: the barrier over a sequential kernel's results keeps
only the results nothing else reads.

A kernel of several results (``aotc/ops/sequential.py``) passes them through one
``util.optimization_barrier`` marked ``aotc.kernel_results``, so that every result of its
``flow.dispatch.region`` stays used: canonicalization would rebuild a region with an
unused result without its ``aotc.kernel`` name (which the batching pass needs), and IREE
turns an unused result into a stack allocation inside the dispatch, which fails beyond
32 KiB (a kernel's scratch vectors, the eigenvectors nobody asked for). But IREE 3.13
fails to verify such a barrier when it returns some results from the function and not
others ("failed to verify that all of {operands, results} have same type": returned
ones live in external buffers), and which values end up returned is only known after
IREE's own folding (a reshape or a 1x1 transpose of a result is the result). So before
IREE compiles the module, the results something reads take the region's values
directly, and the barrier is left holding the unused ones alone (or goes, when there
are none).

Invariants: only marked barriers change; uses of the region's results are unchanged in
meaning; running the pass twice changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, as_op, collect_ops, register

MARK = "aotc.kernel_results"


def _used(value) -> bool:
    return any(True for _ in value.uses)


@register
@dataclass(frozen=True)
class KeepUnusedKernelResults(ModulePass):
    """Narrows kernels' result barriers to their unused results (the module docstring)."""

    name = "aotc-keep-unused-kernel-results"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        from aotc._mlir import ir

        found = collect_ops(module, lambda o: as_op(o).name == "util.optimization_barrier"
                            and MARK in as_op(o).attributes
                            and any(_used(r) for r in as_op(o).results))
        for op, _ in found:
            op = as_op(op)
            unused = [v for r, v in zip(op.results, op.operands) if not _used(r)]
            for result, operand in zip(op.results, op.operands):
                result.replace_all_uses_with(operand)
            if unused:
                with ir.InsertionPoint(op), op.location:
                    ir.Operation.create("util.optimization_barrier",
                                        results=[v.type for v in unused], operands=unused,
                                        attributes={MARK: ir.UnitAttr.get()})
            op.erase()
