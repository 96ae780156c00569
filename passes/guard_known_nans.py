"""aotc-guard-known-nans: a float32 exp, cosh or sinh whose operand the compiler can know
to be NaN is fed 0 there and returns the NaN.

IREE's float32 expansions of these convert the reduced argument to an integer, and
LLVM's conversion of a NaN is poison, which its folds propagate through the selects
that would discard it: ``exp(x * 0 + nan)`` of float32 came back as garbage, or as the
memory of an earlier call that the dispatch never wrote (the result of ``x * 0 + nan``
is NaN for every x, and LLVM folds the rest). A NaN that arrives at run time is
computed right (the conversion then gives some integer, and the NaN wins). So only the
ops whose operand, once IREE's fusion has put the producers into the op's body
(``fusion_probe``, on a copy; elementwise producers left out of it are followed, since
IREE clones them into the dispatch), reads a non-finite float constant or no input at
all get
``select(isnan(x), x, f(select(isnan(x), 0, x)))``: a guard on every exp would also hide
the softmax IREE recognizes (one dispatch more in the MLP sample).

Which ops: ``opset.CPU_EXPANSION["f32-guard"]`` on float32. Invariants: values are
unchanged; a guarded op carries ``aotc.nan_guarded`` and is not guarded again.
"""

from __future__ import annotations

import math as pymath
from dataclasses import dataclass

from . import opset
from .base import ModulePass, all_parallel, as_op, operand_segments, register
from .fusion_probe import probe

GUARDED = "aotc.nan_guarded"


def _candidate(op) -> bool:
    return (len(op.results) == 1 and str(op.results[0].type) == "f32"
            and GUARDED not in op.attributes)


def _knowable_nan(value) -> bool:
    """Whether ``value``'s computation reads a NaN or infinite float constant, or nothing
    that varies (no function argument, no loop index), following the inputs of its
    generic into the elementwise generics that produce them (IREE clones those into the
    consumer's dispatch, where LLVM sees their constants; a reduction's init, such as
    max's -inf, is not followed)."""
    from aotc._mlir import ir

    stack, seen, varies = [value], set(), False
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if isinstance(v, ir.BlockArgument):
            source = _input_of(v)
            if source is None:
                varies = True
            else:
                stack.append(source)
            continue
        owner = as_op(v.owner)
        if owner.name == "linalg.index":
            varies = True
        elif owner.name == "arith.constant":
            if _non_finite(owner):
                return True
        elif owner.name == "linalg.generic":
            if not all_parallel(owner):
                varies = True
            else:  # the value it yields for this result
                terminator = list(owner.regions[0].blocks[0].operations)[-1]
                stack.append(terminator.operands[v.result_number])
        elif owner.regions or not isinstance(v.type, (ir.FloatType, ir.IntegerType,
                                                       ir.IndexType)):
            varies = True  # a loop's, a sort's or a gather's values: not followed
        else:
            stack.extend(owner.operands)
    return not varies


def _input_of(argument):
    """The tensor an input block argument of a ``linalg.generic`` reads, else None."""
    parent = as_op(argument.owner.owner)
    if parent.name != "linalg.generic":
        return None
    n_ins, _ = operand_segments(parent)
    return parent.operands[argument.arg_number] if argument.arg_number < n_ins else None


def _non_finite(constant) -> bool:
    from aotc._mlir import ir

    attr = constant.attributes["value"]
    if isinstance(attr, ir.FloatAttr):
        return not pymath.isfinite(attr.value)
    if isinstance(attr, ir.DenseFPElementsAttr) and attr.is_splat:
        return not pymath.isfinite(attr.get_splat_value().value)
    return False


@opset.attach("guard-known-nans", *opset.CPU_EXPANSION["f32-guard"])
def _guard(op) -> None:
    """``op(x)`` as ``select(isnan(x), x, op(select(isnan(x), 0, x)))``."""
    from aotc._mlir import arith, ir

    with ir.InsertionPoint(op), op.location:
        x = op.operands[0]
        nan = arith.CmpFOp(arith.CmpFPredicate.UNO, x, x).result
        zero = arith.ConstantOp(x.type, 0.0).result
        safe = arith.SelectOp(nan, zero, x).result
        attributes = {name: op.attributes[name] for name in op.attributes}
        attributes[GUARDED] = ir.UnitAttr.get()
        inner = ir.Operation.create(op.name, results=[op.results[0].type], operands=[safe],
                                    attributes=attributes)
        result = arith.SelectOp(nan, x, inner.results[0]).result
    op.results[0].replace_all_uses_with(result)
    op.erase()


@register
@dataclass(frozen=True)
class GuardKnownNans(ModulePass):
    """NaN guards on float32 exp, cosh, sinh of knowable NaNs (see the docstring)."""

    name = "aotc-guard-known-nans"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        found = probe(module, _candidate, lambda fused: _knowable_nan(fused.operands[0]),
                      names=opset.CPU_EXPANSION["f32-guard"])
        # an op fused into several consumers is found once per copy: guard it once
        for op in {op: None for op, knowable in found if knowable}:
            _guard(op)
