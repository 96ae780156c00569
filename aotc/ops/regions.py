"""Blocks of structured control flow traced before their ``scf`` op exists.

``aotc.lax``'s ops (``ops/control.py``) trace each branch or body into a block held by a
placeholder op, learn the result types from what was traced, then build the ``scf`` op
around the blocks (``Regions``), on the one device every aotc module has.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._mlir import ir
from ..core import user_location

# IREE 3.13 gives the values carried by a host-side loop (and branch results) no device
# affinity, so each use of one in a dispatch gets a stream.async.transfer: a full copy per
# iteration (for scan, of the whole stacked ys: quadratic in the length). An aotc module
# has one device, @__device_0 (several targets become one #hal.device.select); naming it
# on the op shows IREE the transfers are no-ops, and ys is then updated in place.
AFFINITY = "#hal.device.affinity<@__device_0>"


class Regions:
    """Blocks traced before their scf op exists, each held by a placeholder op.

    ``build`` creates the op at the current insertion point (after the placeholders, so
    its operands may be made after tracing) and moves the blocks into it; leaving the
    ``with`` block on an error erases what was not built."""

    def __init__(self):
        self._holders: list[ir.Operation] = []

    def __enter__(self) -> "Regions":
        return self

    def __exit__(self, *exc) -> None:
        self.discard()

    def block(self, arg_types: Sequence[ir.Type] = ()) -> ir.Block:
        holder = ir.Operation.create("scf.execute_region", regions=1)
        self._holders.append(holder)
        return holder.regions[0].blocks.append(*arg_types)

    def build(self, name: str, result_types, operands, blocks: Sequence[ir.Block]) -> ir.Operation:
        with user_location():
            op = ir.Operation.create(name, results=list(result_types), operands=list(operands),
                                     attributes={"stream.affinity": ir.Attribute.parse(AFFINITY)},
                                     regions=len(blocks))
        for region, block in zip(op.regions, blocks):
            block.append_to(region)
        self.discard()
        return op

    def discard(self) -> None:
        for holder in self._holders:
            holder.erase()
        self._holders = []
