"""aotc-materialize-constants: constants IREE cannot splat where they are used are made
by a generic at run time.

IREE 3.13 splats a constant whose elements are 8 bytes wide with a dispatch of its own
(its fill command takes patterns of 1 to 4 bytes) and cannot splat 16-byte elements at
all. So (1) a constant of 8-byte or wider elements that is both updated in place
(``tensor.insert_slice``, a scatter) and used as it is (returned, or updated again)
failed to compile ("'stream.yield' op used resource not listed in explicit captures":
``v = ones(n, int64); return v, v.at[i].set(y)``, fuzzer program 3158), and with a
barrier before the update the update landed in the returned copy; (2) a complex128 splat
returned or stored (``zeros(3, complex128)``, ``full(n, 1j)``) failed ("'stream.async.splat'
op operand #0 must be ... 64-bit signless integer, but got 'i128'"). An explicit copy is
folded back into the constant, and a ``linalg.copy`` behind a barrier was compiled as a
write into the constant's global itself. This pass gives those uses a value IREE cannot
fold: ``select(b, 0, c)`` per element, where ``b`` is a ``false`` behind a
``util.optimization_barrier``: one parallel generic writing a fresh buffer at run time.

Which uses: (1) the destination (``opset.DESTINATION``) of an op when it has a static
shape, elements of 8 bytes or more and another use, and is computed from constants only
or made a constant by IREE's fusion and folds (``fusion_probe``: ``(x / s) ** 0``);
(2) every use of a complex128 splat constant other than as an input of a
``linalg.generic`` (which IREE folds into the generic's body). Invariants: values are
unchanged; running the pass twice changes nothing more (the new values read a barrier,
so they are not computed from constants only).
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import (ModulePass, as_op, collect_ops, computed_from_constants, operand_segments,
                   register, splat_constant)
from .fusion_probe import constant_results, probe
from .opset import DESTINATION

_WIDE_BYTES = 8  # IREE splats these with a dispatch of its own
_UNSPLATTABLE_BYTES = 16  # and these not at all


def _element_bytes(element) -> int:
    from aotc._mlir import ir

    if isinstance(element, ir.ComplexType):
        return 2 * _element_bytes(element.element_type)
    return getattr(element, "width", 0) // 8


def _shared_wide_destination(op):
    """The destination operand of ``op`` when its elements are 8 bytes or wider, its shape
    static and it has another use; else None."""
    from aotc._mlir import ir

    position = DESTINATION.get(op.name)
    if position is None:
        return None
    value = op.operands[position]
    if (isinstance(value.type, ir.RankedTensorType) and value.type.has_static_shape
            and _element_bytes(value.type.element_type) >= _WIDE_BYTES
            and len(list(value.uses)) > 1):
        return value
    return None


def _parallel(op) -> bool:
    return all("parallel" in str(it) for it in op.attributes["iterator_types"])


def _folded_by_iree(module) -> set:
    """Results of parallel generics that IREE's fusion and folds make constants
    (``(x / s) ** 0`` is ones)."""
    return {result for op, values in probe(module, _parallel, constant_results, same_results=True)
            for result, value in zip(op.results, values) if value is not None}


def _zero(element):
    """A zero scalar of ``element`` (what the copy would take if the barrier'd flag held)."""
    from aotc._mlir import arith, complex_dialect, ir

    if isinstance(element, ir.ComplexType):
        part = ir.FloatAttr.get(element.element_type, 0.0)
        return complex_dialect.ConstantOp(element, ir.ArrayAttr.get([part, part])).result
    if isinstance(element, ir.IntegerType):
        return arith.constant(element, 0)
    return arith.constant(element, 0.0)


def _runtime_copy(op, value):
    """``value`` copied by a generic that selects it unless a barrier'd false holds."""
    from aotc._mlir import PARALLEL, affine_maps, arith, dim_map, ir, iterator_types, linalg, tensor

    kind = ir.RankedTensorType(value.type)
    rank = kind.rank
    with ir.InsertionPoint(op), op.location:
        false = arith.constant(ir.IntegerType.get_signless(1), 0)
        hidden = ir.Operation.create("util.optimization_barrier", results=[false.type],
                                     operands=[false]).results[0]
        zero = _zero(kind.element_type)
        init = tensor.EmptyOp(kind.shape, kind.element_type).result
        identity = dim_map(rank, list(range(rank)))
        copy = linalg.GenericOp([value.type], [value], [init], affine_maps([identity, identity]),
                                iterator_types([PARALLEL] * rank))
        block = copy.regions[0].blocks.append(kind.element_type, kind.element_type)
        with ir.InsertionPoint(block):
            linalg.YieldOp([arith.select(hidden, zero, block.arguments[0])])
    return copy.results[0]


def _unsplattable(op) -> bool:
    from aotc._mlir import ir

    return (splat_constant(op) and isinstance(op.results[0].type, ir.RankedTensorType)
            and _element_bytes(op.results[0].type.element_type) >= _UNSPLATTABLE_BYTES)


def _stored(use) -> bool:
    """A use that needs the constant as a buffer (not folded into a generic's body)."""
    owner = use.owner
    return not (owner.name == "linalg.generic"
                and use.operand_number < operand_segments(owner)[0])


@register
@dataclass(frozen=True)
class MaterializeConstants(ModulePass):
    """Run-time copies of constants IREE cannot splat (module docstring)."""

    name = "aotc-materialize-constants"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        for op, _ in collect_ops(module, lambda o: _unsplattable(as_op(o))):
            for user, number in [(use.owner, use.operand_number)
                                 for use in as_op(op).results[0].uses if _stored(use)]:
                user.operands[number] = _runtime_copy(user, user.operands[number])
        shared = collect_ops(module, lambda o: _shared_wide_destination(as_op(o)))
        if not shared:
            return
        memo: dict = {}
        folded = _folded_by_iree(module)
        for op, value in shared:
            if value in folded or computed_from_constants(value, memo):
                op = as_op(op)
                op.operands[DESTINATION[op.name]] = _runtime_copy(op, value)
