"""aotc-separate-complex-parts: an elementwise op from complex values to real ones is not
fused into what reads it, on CUDA targets.

IREE 3.13's CUDA code generation crashes the compiling process (a segmentation fault in
its GPU padding pass, building a ``tensor.pad`` of complex values) on a reduction that
reads complex values and yields real ones, which IREE's fusion makes of ``max(abs(z))``,
``linalg.norm(z)`` and the complex eigensolvers' and SVD's scaling: aotc emits the
elementwise ``abs`` (or ``re``/``im``, then squares and sums: ``norm``) and the
reduction apart, and IREE fuses the chain into the reduction. Every reader of such an
elementwise op's result reads it through a ``flow.tensor.clone`` (``base.separated``),
so the complex values stay in their own dispatch and the reduction reads real ones,
which compiles; the clone costs one pass over the real values.

Invariants: values are unchanged; each such op's readers are rerouted once (they then
read a clone, which is no such op), so running the pass twice changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .autodiff.core import is_complex
from .base import (ModulePass, all_parallel, as_op, collect_ops, operand_segments, register,
                   separate_readers)


def _complex_to_real(op) -> bool:
    """``op`` is an elementwise generic reading complex values, with real results."""
    op = as_op(op)
    if op.name != "linalg.generic" or not all_parallel(op):
        return False
    ins, _ = operand_segments(op)
    return (any(is_complex(v.type) for v in list(op.operands)[:ins])
            and not any(is_complex(r.type) for r in op.results))


def _read_only_through_clones(op) -> bool:
    return all(as_op(use.owner).name == "flow.tensor.clone"
               for r in as_op(op).results for use in r.uses)


@register
@dataclass(frozen=True)
class SeparateComplexParts(ModulePass):
    """Keeps complex-to-real elementwise ops apart from their readers (module docstring)."""

    name = "aotc-separate-complex-parts"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        for op, _ in collect_ops(module, lambda o: _complex_to_real(o)
                                 and not _read_only_through_clones(o)):
            for result in as_op(op).results:
                separate_readers(result)
