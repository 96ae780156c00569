"""``lax.stop_gradient`` in the IR, and ``aotc-drop-stop-gradients``.

``stop_gradient(x)`` is a ``util.optimization_barrier`` marked with the unit attribute
``aotc.stop_gradient``: the barrier survives every pass that runs before
differentiation (canonicalize would fold an identity ``linalg.generic``, and a vmap
canonicalizes its batched function), and the activity analysis of ``aotc-vjp`` treats
its result as a constant. Once the module is final (``build.finish_module``), the marks
have done their job and ``aotc-drop-stop-gradients`` replaces each marked barrier by its
operand, so the barrier costs IREE no fusion.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base import ModulePass, collect_ops, register

MARK = "aotc.stop_gradient"


def stops_gradient(op) -> bool:
    return MARK in op.attributes


def stop_gradient(value):
    """``value`` through a marked barrier (at the current insertion point)."""
    from aotc._mlir import ir

    op = ir.Operation.create("util.optimization_barrier", results=[value.type],
                             operands=[value])
    op.attributes[MARK] = ir.UnitAttr.get()
    return op.results[0]


@register
@dataclass(frozen=True)
class DropStopGradients(ModulePass):
    """Replaces every barrier marked ``aotc.stop_gradient`` by its operand."""

    name = "aotc-drop-stop-gradients"

    def run(self, module) -> None:
        marked = [op for op, _ in collect_ops(
            module, lambda op: op.name == "util.optimization_barrier" and stops_gradient(op))]
        for op in marked:
            for result, operand in zip(op.results, op.operands):
                result.replace_all_uses_with(operand)
            op.erase()
