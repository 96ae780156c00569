"""aotc-share-dear-values: an elementwise value computed with a transcendental function
and read by a reduction and by another generic is computed once, in a dispatch of its
own, instead of once in each reader's dispatch.

IREE 3.13 fuses an elementwise producer into every dispatch that reads it, computing it
again in each, and recognizes a softmax written out (``e = exp(x - max); e / sum(e)``)
as ``linalg.softmax``, whose CPU code computes the exponentials twice. For a value whose
elements cost many cycles (``opset.DEAR_OPS`` from the math dialect: exp, log, tanh,
...) storing it once is cheaper than computing it twice: a float32 row softmax of
256x4096 took 558 -> 233 us on local-task (565 -> 335 on local-sync), of 256x512 77 ->
37 us, of 64x10 2 -> 3 us (``iree-benchmark-module`` with its caching allocator). The
value goes through ``base.separated`` (a clone IREE forms no dispatch across; no host
wait). Only values whose readers are all generics are separated, so that returns and
in-place updates keep reading the value itself.

The compiler runs it for CPU targets, where it was measured (``build.finish_module``).
Invariants: values are unchanged; a separated value is read only by its clone, so
running the pass twice changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import (ModulePass, all_parallel, as_op, collect_ops, has_reduction, register,
                   separate_readers)
from .opset import DEAR_OPS

# The transcendental functions: a division is dear too, but cheaper to compute again
# than a tensor is to store and read back.
_TRANSCENDENTAL = frozenset(name for name in DEAR_OPS if name.startswith("math."))


def _computes_dearly(op) -> bool:
    return (op.name == "linalg.generic" and all_parallel(op) and len(op.results) == 1
            and any(as_op(o).name in _TRANSCENDENTAL
                    for o in op.regions[0].blocks[0].operations))


def _shared(op) -> bool:
    """``op``'s result is read by a reduction and by another op, all of them generics."""
    from aotc._mlir import ir

    result = op.results[0]
    if not (isinstance(result.type, ir.RankedTensorType) and result.type.has_static_shape):
        return False
    readers = {as_op(use.owner) for use in result.uses}
    return (len(readers) >= 2 and all(r.name == "linalg.generic" for r in readers)
            and any(has_reduction(r) for r in readers))


@register
@dataclass(frozen=True)
class ShareDearValues(ModulePass):
    """Dear elementwise values read by a reduction and another op, computed once (module
    docstring)."""

    name = "aotc-share-dear-values"

    def run(self, module) -> None:
        found = collect_ops(module, lambda o: _computes_dearly(as_op(o)) and _shared(as_op(o)))
        for op, _ in found:
            separate_readers(as_op(op).results[0])
