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
    from aotc._mlir import arith, index_constant, ir, linalg, tensor

    op = as_op(op)
    padding = _padding(op)
    source = op.operands[0]
    source_type = ir.RankedTensorType(source.type)
    result_type = ir.RankedTensorType(op.results[0].type)
    dynamic = ir.ShapedType.get_dynamic_size()
    static_low = list(ir.DenseI64ArrayAttr(op.attributes["static_low"]))
    static_high = list(ir.DenseI64ArrayAttr(op.attributes["static_high"]))
    operands = list(op.operands)[1:]
    low_values = operands[:sum(1 for v in static_low if v == dynamic)]
    high_values = operands[len(low_values):]
    with ir.InsertionPoint(op), op.location:
        def mixed(static, values):
            it = iter(values)
            return [next(it) if v == dynamic else v for v in static]
        low, high = mixed(static_low, low_values), mixed(static_high, high_values)
        sizes = [tensor.DimOp(source, index_constant(d)).result
                 if source_type.is_dynamic_dim(d) else n for d, n in enumerate(source_type.shape)]
        result_sizes = []
        for d in range(result_type.rank):
            if not result_type.is_dynamic_dim(d):
                continue
            total = sizes[d] if isinstance(sizes[d], ir.Value) else index_constant(sizes[d])
            for extra in (low[d], high[d]):
                extra = extra if isinstance(extra, ir.Value) else index_constant(extra)
                total = arith.AddIOp(total, extra).result
            result_sizes.append(total)
        filled = linalg.fill(padding, outs=[tensor.EmptyOp(
            _sizes_for(result_type, result_sizes), result_type.element_type).result])
        inserted = tensor.InsertSliceOp(
            source, filled, [v for v in low if isinstance(v, ir.Value)],
            [v for v in sizes if isinstance(v, ir.Value)], [],
            [dynamic if isinstance(v, ir.Value) else v for v in low],
            [dynamic if isinstance(v, ir.Value) else v for v in sizes],
            [1] * source_type.rank).result
        if inserted.type != result_type:
            inserted = tensor.CastOp(result_type, inserted).result
    op.results[0].replace_all_uses_with(inserted)
    op.erase()


def _sizes_for(result_type, dynamic_sizes: list) -> list:
    """Each dimension of ``result_type``: its static size, or the next dynamic size."""
    it = iter(dynamic_sizes)
    return [next(it) if result_type.is_dynamic_dim(d) else n
            for d, n in enumerate(result_type.shape)]


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
