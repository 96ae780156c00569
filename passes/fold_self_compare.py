"""aotc-fold-self-comparisons: an integer comparison of a tensor with itself is a constant.

``x <= x``, ``x == x`` (true) and ``x < x``, ``x != x`` (false) on integer tensors are
known without reading ``x``. IREE 3.13 folds such a comparison into an i1 fill and then
folds a reduction over that fill wrongly: ``sum(x <= x)`` of an int16[8] came back 1
(numpy: 8), as did ``count_nonzero(x == x)`` (fuzzer program 22228). A dense i1 constant
is folded right, so this pass replaces the comparison by one first.

Only an all-parallel ``linalg.generic`` whose body is one ``arith.cmpi`` of two inputs
that are the same value read through the same map, with a static result shape, changes
(float comparisons are left alone: ``x == x`` is false where x is NaN).
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, as_op, collect_ops, operand_segments, register

# arith.cmpi predicates (their integer values) that hold when both sides are equal.
_TRUE_WHEN_EQUAL = {0: True, 1: False, 2: False, 3: True, 4: False, 5: True,
                    6: False, 7: True, 8: False, 9: True}  # eq ne slt sle sgt sge ult ule ugt uge


def _self_comparison(op):
    """The constant value of a generic comparing an input with itself, or None."""
    from aotc._mlir import ir

    if op.name != "linalg.generic" or len(op.results) != 1:
        return None
    if any("parallel" not in str(it) for it in op.attributes["iterator_types"]):
        return None
    result_type = op.results[0].type
    if not result_type.has_static_shape:
        return None
    body = [as_op(o) for o in op.regions[0].blocks[0].operations]
    if len(body) != 2 or body[0].name != "arith.cmpi" or body[1].operands[0] != body[0].results[0]:
        return None
    n_ins, _ = operand_segments(op)
    args = list(op.regions[0].blocks[0].arguments)
    maps = list(op.attributes["indexing_maps"])
    sides = []
    for v in body[0].operands:
        if not isinstance(v, ir.BlockArgument) or v.owner != op.regions[0].blocks[0]:
            return None
        k = args.index(v) if v in args else -1
        if not 0 <= k < n_ins:
            return None
        sides.append((op.operands[k], str(maps[k])))
    if sides[0] != sides[1]:
        return None
    predicate = ir.IntegerAttr(body[0].attributes["predicate"]).value
    return _TRUE_WHEN_EQUAL.get(predicate)


@register
@dataclass(frozen=True)
class FoldSelfComparisons(ModulePass):
    """Replaces integer self-comparisons by constants (see the module docstring)."""

    name = "aotc-fold-self-comparisons"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        from aotc._mlir import ir

        found = collect_ops(module, lambda o: _self_comparison(as_op(o)) is not None)
        for op, _ in found:
            op = as_op(op)
            value = _self_comparison(op)
            with ir.InsertionPoint(op), op.location:
                constant = ir.Operation.create(
                    "arith.constant", results=[op.results[0].type],
                    attributes={"value": ir.DenseElementsAttr.get_splat(
                        op.results[0].type,
                        ir.IntegerAttr.get(ir.IntegerType.get_signless(1), int(value)))})
            op.results[0].replace_all_uses_with(constant.results[0])
            op.erase()
