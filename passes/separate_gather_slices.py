"""aotc-separate-gather-slices: a gather reads a slice of a tensor from a copy of the slice,
on Vulkan.

IREE 3.13's Vulkan code read the wrong elements when a gather (a ``linalg.generic``
whose body reads a tensor from outside with ``tensor.extract``) took its column indices
from an input and its source was a slice at a column offset: ``a[:, 32:][rows, cols]`` of
a 64x64 matrix was off by up to 5.3 (IREE folds the slice into the gather's reads and
misplaces the offset; row gathers, whose columns come from the loop index, read right).
Reading the slice through a ``flow.tensor.clone`` (``base.separated``) keeps the slice out
of the gather's dispatch: the gather reads a contiguous copy.

Invariants: values are unchanged; each sliced source of an extract inside a generic is
rerouted once (a clone is no slice), so running the pass twice changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, as_op, collect_ops, register, separated, within


def _sliced_sources(generic) -> list:
    """(extract, source) for each ``tensor.extract`` in ``generic``'s body whose tensor
    is an ``extract_slice`` made outside the generic."""
    from aotc._mlir import ir

    found = []
    for op, _ in collect_ops(generic, lambda o: as_op(o).name == "tensor.extract"):
        source = as_op(op).operands[0]
        if isinstance(source, ir.OpResult) and as_op(source.owner).name == "tensor.extract_slice" \
                and not within(as_op(source.owner), generic):
            found.append((as_op(op), source))
    return found


@register
@dataclass(frozen=True)
class SeparateGatherSlices(ModulePass):
    """Gathers read slices through a copy (the module docstring)."""

    name = "aotc-separate-gather-slices"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        from aotc._mlir import ir

        for generic, _ in collect_ops(module, lambda o: as_op(o).name == "linalg.generic"):
            generic = as_op(generic)
            copies = {}
            for extract, source in _sliced_sources(generic):
                if source not in copies:
                    with ir.InsertionPoint(generic), generic.location:
                        copies[source] = separated(source)
                extract.operands[0] = copies[source]
