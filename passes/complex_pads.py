"""aotc-complex-pads-as-inserts: a ``tensor.pad`` of complex values becomes the value
inserted into a filled tensor.

IREE 3.13 crashes the compiling process (a segmentation fault in its
TensorPadToTensorInsertSlice pass, building a ``linalg.fill`` from the pad's complex
padding value) on any pad of complex values: ``np.pad`` of a complex array, and the
adjoint of a slice of complex values in a loop (``grad`` through a ``scan`` over complex
state). A crash would take the user's Python process down with it. This pass writes the
same thing IREE's rewrite meant to: a ``linalg.fill`` of the padded shape with the
padding value, and ``tensor.insert_slice`` of the value at the low padding.

Invariants: values are unchanged; pads of other element types, and pads whose padding
value depends on the position, stay; no complex pad of a constant is left, so running the
pass twice changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, as_op, collect_ops, register, within


def _padding(op):
    return list(op.regions[0].blocks[0].operations)[-1].operands[0]


def _complex_pad(op) -> bool:
    from aotc._mlir import ir

    op = as_op(op)
    if op.name != "tensor.pad":
        return False
    element = ir.RankedTensorType(op.results[0].type).element_type
    if not isinstance(element.maybe_downcast(), ir.ComplexType):
        return False
    padding = _padding(op)
    # a padding value made inside the region (from the position) cannot move out
    if isinstance(padding, ir.BlockArgument):
        return padding.owner != op.regions[0].blocks[0]
    return not within(as_op(padding.owner), op)


def _as_insert(op) -> None:
    from aotc._mlir import index_constant, ir, linalg, tensor
    from aotc.lowering import mixed_offsets

    op = as_op(op)
    source = op.operands[0]
    source_type = ir.RankedTensorType(source.type)
    result_type = ir.RankedTensorType(op.results[0].type)
    dynamic = ir.ShapedType.get_dynamic_size()
    amounts = iter(list(op.operands)[1:])  # the dynamic low amounts, then the high ones
    low, high = ([next(amounts) if v == dynamic else v
                  for v in ir.DenseI64ArrayAttr(op.attributes[name])]
                 for name in ("static_low", "static_high"))
    with ir.InsertionPoint(op), op.location:
        sizes = [tensor.DimOp(source, index_constant(d)).result
                 if source_type.is_dynamic_dim(d) else n for d, n in enumerate(source_type.shape)]
        padded = [_sum(sizes[d], low[d], high[d]) if result_type.is_dynamic_dim(d) else n
                  for d, n in enumerate(result_type.shape)]
        filled = linalg.fill(_padding(op), outs=[tensor.EmptyOp(
            padded, result_type.element_type).result])
        (offsets, static_offsets), (dynamic_sizes, static_sizes) = map(mixed_offsets,
                                                                       (low, sizes))
        inserted = tensor.InsertSliceOp(source, filled, offsets, dynamic_sizes, [],
                                        static_offsets, static_sizes,
                                        [1] * source_type.rank).result
    op.results[0].replace_all_uses_with(inserted)
    op.erase()


def _sum(*parts):
    """The ``index`` sum of ints and ``index`` values."""
    from aotc._mlir import arith, index_constant, ir

    values = [p for p in parts if isinstance(p, ir.Value)]
    constant = sum(p for p in parts if not isinstance(p, ir.Value))
    total = values[0] if values else index_constant(constant)
    for value in values[1:]:
        total = arith.AddIOp(total, value).result
    return arith.AddIOp(total, index_constant(constant)).result if values and constant \
        else total


@register
@dataclass(frozen=True)
class ComplexPadsAsInserts(ModulePass):
    """Rewrites complex pads as a fill and an insert (the module docstring)."""

    name = "aotc-complex-pads-as-inserts"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        for op, _ in collect_ops(module, _complex_pad):
            _as_insert(op)
