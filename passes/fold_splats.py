"""aotc-fold-splats: an elementwise result that IREE would compute from no input is a
dense splat constant.

IREE fuses elementwise producers into their consumers and folds the fused bodies, so
``x <= x``, ``x == broadcast_to(x, s)``, ``(x * 0) == 0`` or ``x * 0 + 1`` on integers
become tensors computed from nothing, and IREE 3.13 mishandles some of those: a bool
one updated in place and also returned had the update written into the copy returned
unchanged while the updated copy was never written (``v = (b * 0) == 0; return
v.at[1].set(y), v`` returned zeros and the update; fuzzer program 19033 with scatters),
and a reduction over one came back 1 (``sum(x <= x)`` of an int16[8]; program 22228).
A dense constant is handled right, so this pass replaces such a result by one before
IREE sees it; aotc-shield-reductions then knows every value computed from it as a
constant.

Which results: each integer or float result (narrower than 64 bits) with a static shape
of an all-parallel
``linalg.generic`` whose fused counterpart (``fusion_probe``: IREE's own fusion and
folds on a copy of the module) yields an ``arith.constant`` for it, and each returned
value that the copy returns from a generic yielding a constant (a value fused into its
consumer's multi-result generic has no counterpart of its own: ``tanh(x ^ x)``, returned
beside ``isnan`` of it, was left for IREE to compute once at load time, where its
bool and float16 results of one dispatch overlapped: program 32665). Float comparisons
stay (IREE does not fold ``x == x`` on floats: NaN). Invariants: values are unchanged; a
generic none of whose results is used any more is erased; running the pass twice
changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, all_parallel, as_op, register
from .fusion_probe import GENERIC, constant_results, probe
from .opset import RESHAPE_OPS


def _static(value) -> bool:
    """A tensor of a static shape whose elements IREE splats with a fill command: 64-bit
    splats become a dispatch of IREE's own, and one updated in place and also used as it
    is fails to compile ("stream.yield op used resource not listed in explicit
    captures"), where the generic IREE computes at load time compiles."""
    from aotc._mlir import ir

    if not (isinstance(value.type, ir.RankedTensorType) and value.type.has_static_shape):
        return False
    element = value.type.element_type
    return (isinstance(element, (ir.IntegerType, ir.FloatType))
            and element.width < 64)


def _parallel(op) -> bool:
    return all_parallel(op) and any(_static(r) for r in op.results)


def _splat_values(fused) -> list:
    return [value if _static(r) else None
            for r, value in zip(fused.results, constant_results(fused))]


def _returned_values(ret) -> list:
    """Per operand of a ``func.return`` in the copy: the constant it is at every point
    (a result of a generic that yields one, through reshapes), else None. A value fused
    into a multi-result generic is found here, where its own generic is gone."""
    from aotc._mlir import ir

    found = []
    for v in ret.operands:
        while isinstance(v, ir.OpResult) and as_op(v.owner).name in RESHAPE_OPS:
            v = as_op(v.owner).operands[0]
        found.append(constant_results(as_op(v.owner))[v.result_number]
                     if isinstance(v, ir.OpResult) and as_op(v.owner).name in GENERIC else None)
    return found


def _constant(value) -> bool:
    from aotc._mlir import ir

    return isinstance(value, ir.OpResult) and as_op(value.owner).name == "arith.constant"


def _selected(op) -> bool:
    return op.name == "func.return" or _parallel(op)


def _inspect(fused):
    return _returned_values(fused) if fused.name == "func.return" else _splat_values(fused)


@register
@dataclass(frozen=True)
class FoldSplats(ModulePass):
    """Replaces results IREE would compute from nothing by splat constants."""

    name = "aotc-fold-splats"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        for op, values in probe(module, _selected, _inspect, same_results=True,
                                names=GENERIC | {"func.return"}):
            if op.name == "func.return":
                for k, value in enumerate(values):
                    if value is not None and _static(op.operands[k]) and not _constant(
                            op.operands[k]):
                        op.operands[k] = _splat(op, op.operands[k].type, value)
                continue
            for result, value in zip(op.results, values):
                if value is not None:
                    result.replace_all_uses_with(_splat(op, result.type, value))
            if all(not list(r.uses) for r in op.results):
                op.erase()


def _splat(before, kind, value):
    """A splat constant of type ``kind`` made before ``before``."""
    from aotc._mlir import ir

    with ir.InsertionPoint(before), before.location:
        return ir.Operation.create(
            "arith.constant", results=[kind],
            attributes={"value": ir.DenseElementsAttr.get_splat(kind, value)}).results[0]
