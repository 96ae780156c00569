"""Calls that carry their own derivative: ``custom_vjp``, ``custom_jvp``, ``checkpoint``.

A function with a user-defined derivative reaches the IR as a call of its forward
function that no inliner may touch (``no_inline``), marked with the unit of the rule:

    %outs:M, %residuals = func.call @f_fwd(%args:N, %closures:K, %bwd_closures)
        <no_inline> {aotc.custom_vjp = {backward = @f_bwd, arguments = N,
                                        captures = K, outputs = M, name = "f"}}

``@f_fwd`` computes the function's M outputs and the residuals its backward function
reads; ``@f_bwd(residuals, one cotangent per floating-point output, bwd_closures)``
returns one adjoint per floating-point explicit argument. The K closures are arrays of
the caller the forward function reads without taking them as arguments: they are
constants to the rule (differentiating with respect to one is refused, as JAX does); the
operands after them are the arrays the backward function closes over, handed to it at
the backward call.

The reverse-mode rule of such a call is a call of ``@f_bwd``, and the call it
differentiated loses its mark: to an enclosing derivative (``grad(grad(f))``) the
forward and backward functions are ordinary code, as in JAX. Once differentiation is
over (``build.finish_module``), ``aotc-drop-custom-derivatives`` removes the marks and
the calls are inlined like any other. Under ``vmap`` a marked call is batched by its own
rule (``passes/batching/batch.py``): both functions batched, the mark kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base import ModulePass, PassError, collect_ops, find_function, register, where
from .core import differentiable, rule, zeros

MARK = "aotc.custom_vjp"


@dataclass(frozen=True)
class CustomRule:
    """The parts of a marked call (see the module docstring)."""

    backward: str
    arguments: int
    captures: int
    outputs: int
    name: str


def custom_rule(op) -> CustomRule | None:
    from aotc._mlir import ir

    if MARK not in op.attributes:
        return None
    spec = ir.DictAttr(op.attributes[MARK])
    return CustomRule(ir.FlatSymbolRefAttr(spec["backward"]).value,
                      ir.IntegerAttr(spec["arguments"]).value,
                      ir.IntegerAttr(spec["captures"]).value,
                      ir.IntegerAttr(spec["outputs"]).value,
                      ir.StringAttr(spec["name"]).value)


def mark(call, spec: CustomRule) -> None:
    """Marks ``call`` (a ``func.call`` of the forward function) with ``spec``."""
    from aotc._mlir import ir

    i64 = ir.IntegerType.get_signless(64)
    call.attributes["no_inline"] = ir.UnitAttr.get()
    call.attributes[MARK] = ir.DictAttr.get({
        "backward": ir.FlatSymbolRefAttr.get(spec.backward),
        "arguments": ir.IntegerAttr.get(i64, spec.arguments),
        "captures": ir.IntegerAttr.get(i64, spec.captures),
        "outputs": ir.IntegerAttr.get(i64, spec.outputs),
        "name": ir.StringAttr.get(spec.name)})


@rule("func.call")
def call_rule(ad, op, adjoints) -> None:
    from aotc._mlir import func, ir

    spec = custom_rule(op)
    if spec is None:
        ad.refuse(op, "calls are inlined before differentiation and this one was not; "
                      "only calls of functions with a custom derivative stay calls")
    operands = list(op.operands)
    closures = operands[spec.arguments:spec.arguments + spec.captures]
    if any(v in ad.active for v in closures):
        raise PassError(
            f"{ad.pass_name}: detected differentiation of the custom-derivative function "
            f"{spec.name} (at {where(op)}) with respect to a closed-over value. That isn't "
            f"supported because the custom rule only specifies how to differentiate "
            f"{spec.name} with respect to its explicit arguments; pass the value as an "
            f"argument instead")
    results = list(op.results)
    cotangents = [a if a is not None else zeros(r.type)
                  for a, r in zip(adjoints[:spec.outputs], results[:spec.outputs])
                  if differentiable(r.type)]
    backward, _ = find_function(module_of(op), spec.backward, ad.pass_name)
    types = list(ir.FunctionType(ir.TypeAttr(backward.attributes["function_type"]).value).results)
    grads = func.CallOp(types, spec.backward,
                        results[spec.outputs:] + cotangents
                        + operands[spec.arguments + spec.captures:]).results
    explicit = [v for v in operands[:spec.arguments] if differentiable(v.type)]
    for operand, g in zip(explicit, grads):
        ad.add(operand, g)
    # Differentiated here, the call is ordinary code to any enclosing derivative (as in
    # JAX, which runs fwd and bwd as plain functions there): grad(grad(f)) differentiates
    # the forward and backward functions' bodies.
    del op.attributes[MARK]
    del op.attributes["no_inline"]


def referenced_functions(function) -> list[str]:
    """The functions ``function`` calls or names as a custom derivative's backward."""
    from aotc._mlir import ir

    def select(op):
        found = []
        if op.name == "func.call":
            found.append(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
            spec = custom_rule(op)
            if spec is not None:
                found.append(spec.backward)
        return found

    return [name for _, names in collect_ops(function, select) for name in names]


def module_of(op):
    """The ``builtin.module`` that holds ``op``."""
    while op.name != "builtin.module":
        op = op.parent
    return op


@register
@dataclass(frozen=True)
class DropCustomDerivatives(ModulePass):
    """Removes the marks of calls with a custom derivative, leaving plain calls an
    ``inline`` pass inlines."""

    name = "aotc-drop-custom-derivatives"

    def run(self, module) -> None:
        marked = collect_ops(module, lambda op: op.name == "func.call" and MARK in op.attributes)
        for op, _ in marked:
            del op.attributes[MARK]
            del op.attributes["no_inline"]
