"""aotc-shield-strided-slices: a strided slice of a bit extension reads it stored.

IREE 3.13 clones a bit-extending generic (``base.bit_extending``: ``x.astype(float64)``
of a float32 x, a bool or uint8 widened, also once its fusion has merged the widening
into the generic after it, as ``clip`` of a bool) into each consumer's dispatch, and
where the consumer reads it through a ``tensor.extract_slice`` with a stride other than
1, the cloned extension read its source without the stride: ``x.astype(np.float64)[::2]
+ 1`` came back as ``x[:4] + 1`` (fuzz program 69581, an ``.at[0::2].add`` of a clipped
bool). The generic is seen as IREE's fusion leaves it (``fusion_probe``); such a slice
reads its result through a ``util.optimization_barrier``, so IREE stores it in a
dispatch of its own and the consumer slices the stored values.

Invariants: values are unchanged; running the pass twice changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, as_op, bit_extending, register
from .fusion_probe import probe


def _strided_slices(op) -> list:
    """The ``tensor.extract_slice`` users of ``op``'s results with a stride other than 1."""
    from aotc._mlir import ir

    found = []
    for result in op.results:
        for use in result.uses:
            user = as_op(use.owner)
            if user.name == "tensor.extract_slice" and use.operand_number == 0 and any(
                    s != 1 for s in ir.DenseI64ArrayAttr(user.attributes["static_strides"])):
                found.append(user)
    return found


@register
@dataclass(frozen=True)
class ShieldStridedSlices(ModulePass):
    """Puts a barrier between a bit extension and its strided slices (no options)."""

    name = "aotc-shield-strided-slices"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        from aotc._mlir import ir

        for op, extending in probe(module, lambda o: bool(_strided_slices(o)), bit_extending):
            if not extending:
                continue
            for user in _strided_slices(op):
                source = user.operands[0]
                with ir.InsertionPoint(user), user.location:
                    barrier = ir.Operation.create("util.optimization_barrier",
                                                  results=[source.type], operands=[source])
                user.operands[0] = barrier.results[0]
