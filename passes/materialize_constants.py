"""aotc-materialize-constants: a complex128 splat IREE would have to store is made by a
generic at run time (a splat constant, or a ``linalg.fill``).

IREE 3.13 cannot splat 16-byte elements: a complex128 splat returned or stored
(``zeros(3, complex128)``, ``full(n, 1j)``) failed to compile ("'stream.async.splat' op
operand #0 must be ... 64-bit signless integer, but got 'i128'"). An explicit copy is
folded back into the constant. This pass gives each such use ``runtime_copy(c)``:
``select(b, float(b), c)`` per element, where ``b`` is a ``false`` behind a
``util.optimization_barrier``, one parallel generic writing a fresh buffer at run time
(aotc-copy-shared-destinations uses it too). A use as an input of a ``linalg.generic``
stays: IREE folds the splat into the generic's body.

Invariants: values are unchanged; running the pass twice changes nothing more (the
constant's remaining uses are generics' inputs).
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import (ModulePass, as_op, collect_ops, element_bytes, operand_segments, register,
                   splat_constant)

_UNSPLATTABLE_BYTES = 16  # IREE's splats take patterns of 1 to 8 bytes


def _from_flag(element, flag):
    """A scalar of ``element`` computed from the barrier'd ``flag`` (what the copy would
    take if the flag held). Not a constant: a constant equal to the copied splat folded
    the copy back into that splat, which IREE hoisted into a global, and the update the
    copy was for then wrote into the global (two scatter-adds into one such zeros
    accumulated into each other: an adjoint in tests/test_autodiff.py)."""
    from aotc._mlir import arith, complex_dialect, ir

    if isinstance(element, ir.ComplexType):
        part = arith.uitofp(element.element_type, flag)
        return complex_dialect.CreateOp(element, part, part).result
    if isinstance(element, ir.IntegerType):
        return flag if element.width == 1 else arith.extui(element, flag)
    return arith.uitofp(element, flag)


def runtime_copy(op, value):
    """``value`` (a tensor of a static shape) copied, before ``op``, by a generic that
    selects it unless a barrier'd false holds: a new buffer IREE cannot fold away."""
    from aotc._mlir import PARALLEL, affine_maps, arith, dim_map, ir, iterator_types, linalg, tensor

    kind = ir.RankedTensorType(value.type)
    rank = kind.rank
    with ir.InsertionPoint(op), op.location:
        false = arith.constant(ir.IntegerType.get_signless(1), 0)
        hidden = ir.Operation.create("util.optimization_barrier", results=[false.type],
                                     operands=[false]).results[0]
        alternative = _from_flag(kind.element_type, hidden)
        init = tensor.EmptyOp(kind.shape, kind.element_type).result
        identity = dim_map(rank, list(range(rank)))
        copy = linalg.GenericOp([value.type], [value], [init], affine_maps([identity, identity]),
                                iterator_types([PARALLEL] * rank))
        block = copy.regions[0].blocks.append(kind.element_type, kind.element_type)
        with ir.InsertionPoint(block):
            linalg.YieldOp([arith.select(hidden, alternative, block.arguments[0])])
    return copy.results[0]


def _unsplattable(op) -> bool:
    """A complex128 splat constant, or a fill with a complex128 value (a derivative's
    zero tape or accumulator through a loop), which IREE also makes a splat."""
    from aotc._mlir import ir

    # the element size first: it is cheap, and splat_constant prints complex constants
    return (len(op.results) == 1 and isinstance(op.results[0].type, ir.RankedTensorType)
            and element_bytes(op.results[0].type.element_type) >= _UNSPLATTABLE_BYTES
            and (op.name == "linalg.fill" or splat_constant(op)))


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
                user.operands[number] = runtime_copy(user, user.operands[number])
