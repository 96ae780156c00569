"""8- and 16-bit integers (and bools) on targets that store them in 32-bit words: the
Vulkan baseline.

aotc-widen-narrow-ints: the ops whose result depends on how the bits are read (division,
shifts, comparisons, min/max) computed on 32 bits. IREE 3.13 emulates 8- and 16-bit
arithmetic there; its emulation has no pattern for the unsigned ops ("bitwidth emulation
is not implemented yet on unsigned op pattern version": ``arith.divui``, ``remui``,
``ceildivui``, ``shrui``, ``cmpi ult/ugt/...``) and gets ``arith.maxui`` on i8 wrong (a
uint8 max reduction returned 63 for 248 on lavapipe). This pass widens each such op:
operands zero-extended to i32, the op on i32, the result truncated back, which is
exact for every op in the table:

- division, remainder, min/max of values that fit in 8/16 bits fit in them again;
- a left shift keeps its low bits; a right shift of the extended value shifts in the
  zeros the narrow one would (amounts >= the width, poison on the narrow op, give 0);
- a comparison of extended values orders them as the narrow ones.

Invariants: operand and result types of the rewritten values are unchanged; the narrow
ops of the table are gone afterwards, so running the pass twice changes nothing.

aotc-check-narrow-arguments: refuses a function argument of such a type whose size is not
a whole number of 32-bit words. IREE binds an argument's buffer with its exact byte size
and the emulated loads read whole words, so the elements of a last, partial word read as
0 (a uint8[6] argument's last two on lavapipe; a 0-d uint8 or bool argument always), even
when the runtime uploads a zero-padded buffer. Values made inside the program are not
affected (IREE sizes those buffers itself).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import opset
from .base import ModulePass, PassError, collect_ops, is_private, read_metadata, register

# op name -> how its operands are read: "unsigned" (zero-extend) or "signed" (sign-extend),
# the ``widen`` property of the ops' rows in the vocabulary. (IREE's emulation computes the
# signed ones right: checked on lavapipe for i8 and i16.)
_WIDENED = opset.WIDENED
# arith.cmpi predicates (arith.CmpIPredicate values) ult ule ugt uge
_CMPI_READS = dict.fromkeys((6, 7, 8, 9), "unsigned")
_NARROW_WIDTHS = (8, 16)
_WIDE = 32
_WORD_BYTES = _WIDE // 8


def _reads(op) -> str | None:
    """How ``op``'s operands must be extended, or None when it needs no widening."""
    from aotc._mlir import ir

    if op.name == "arith.cmpi":
        reads = _CMPI_READS.get(ir.IntegerAttr(op.attributes["predicate"]).value)
    else:
        reads = _WIDENED.get(op.name)
    if reads is None:
        return None
    operand_type = op.operands[0].type
    if not isinstance(operand_type, ir.IntegerType):  # vectors, tensors: aotc emits none
        return None
    return reads if operand_type.width in _NARROW_WIDTHS else None


def _widen(op, reads: str) -> None:
    from aotc._mlir import arith, ir

    wide = ir.IntegerType.get_signless(_WIDE)
    extend = arith.ExtUIOp if reads == "unsigned" else arith.ExtSIOp
    narrow_result = op.results[0].type
    with ir.InsertionPoint(op), op.location:
        operands = [extend(wide, v).result for v in op.operands]
        result_type = narrow_result if op.name == "arith.cmpi" else wide
        attributes = {name: op.attributes[name] for name in op.attributes}
        new = ir.Operation.create(op.name, results=[result_type], operands=operands,
                                  attributes=attributes)
        result = new.results[0]
        if op.name != "arith.cmpi":
            result = arith.TruncIOp(narrow_result, result).result
    op.results[0].replace_all_uses_with(result)
    op.erase()


@register
@dataclass(frozen=True)
class WidenNarrowInts(ModulePass):
    """Computes 8/16-bit integer division, shifts, comparisons and min/max on i32."""

    name = "aotc-widen-narrow-ints"

    def run(self, module) -> None:
        for op, reads in collect_ops(module, _reads):
            _widen(op, reads)


def _argument_specs(func) -> list[str]:
    """``name: dtype[shape]`` of each argument, from aotc's reflection metadata."""
    meta = read_metadata(func)
    return [] if meta is None else [f"{a.name}: {a.dtype}{list(a.shape)}" for a in meta.args]


def _partial_word(arg_type) -> str | None:
    """Why a tensor of narrow integers may end in a partial word ("6 bytes", "its size
    is known only at run time"), or None when it fills whole words."""
    from aotc._mlir import ir

    if not isinstance(arg_type, ir.RankedTensorType):
        return None
    element = arg_type.element_type
    if not isinstance(element, ir.IntegerType) or element.width >= _WIDE:
        return None
    if not arg_type.has_static_shape:
        return "its size is known only at run time"
    nbytes = max(element.width // 8, 1) * math.prod(arg_type.shape)
    return None if nbytes % _WORD_BYTES == 0 else f"{nbytes} byte{'s' * (nbytes != 1)}"


@register
@dataclass(frozen=True)
class CheckNarrowArguments(ModulePass):
    """Refuses 8/16-bit integer and bool arguments that end in a partial 32-bit word."""

    name = "aotc-check-narrow-arguments"

    def run(self, module) -> None:
        from aotc._mlir import ir

        problems = []
        for op in module.regions[0].blocks[0].operations:
            func = op.operation
            if func.name != "func.func" or is_private(func):
                continue
            specs = _argument_specs(func)
            fn_name = ir.StringAttr(func.attributes["sym_name"]).value
            for i, arg in enumerate(func.regions[0].blocks[0].arguments):
                problem = _partial_word(arg.type)
                if problem:
                    spec = specs[i] if i < len(specs) else f"argument {i}: {arg.type}"
                    problems.append(f"{fn_name}({spec}): {problem}")
        if problems:
            raise PassError(
                f"{self.name}: Vulkan reads 8- and 16-bit integer and bool arguments in 4-byte "
                f"words, and IREE 3.13 gives an argument's buffer its exact size, so the "
                f"elements of a last, partial word would read as 0 (a wrong result):\n  "
                + "\n  ".join(problems)
                + f"\nFix: pass these arguments as int32 (.astype(np.int32), then convert inside "
                f"the function), or make their size a multiple of {_WORD_BYTES} bytes, or "
                f"export for another target."
            )
