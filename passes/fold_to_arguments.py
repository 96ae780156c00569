"""aotc-fold-to-arguments: a value that IREE's folds make an argument is that argument.

``where(x != x, 0, x)`` on integers, ``x & x``, ``maximum(x, x)`` are ``x`` once IREE has
folded them and erased the identity generic left over, after aotc's passes ran. The
donation analysis took such a value for a new tensor: returned, another result was
written into the donated ``x``'s buffer, which IREE then returned as both (fuzzer
program 10264: a returned value all zeros); read by another op (``arccos(x & x)``
beside ``fmod(x & x, x & x)`` written into x), that op was taken to read a value the
writer's dispatch computes, while IREE had it read x itself, after the write (44466+
44469). This pass runs IREE's own fusion and folds on a copy of the module
(``fusion_probe.folded_copy``) with each candidate value kept alive by a barrier at the
end of its function, and replaces a value by the argument the copy's barrier then
holds, so that the donation analysis sees the argument.

Which values: the results of the ``linalg.generic`` ops at the top level of a function
whose type is that of one of its arguments. Invariants: values are unchanged (IREE's
folds are); running the pass twice changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, as_op, collect_ops, register
from .fusion_probe import folded_copy

_SINK = "aotc.probe.sink"


def _candidates(module) -> dict:
    """``{function name: (func, [values])}``: the top-level generic results of each
    one-block function whose type is one of its arguments'."""
    from aotc._mlir import ir

    found = {}
    for op in module.regions[0].blocks[0].operations:
        op = as_op(op)
        if op.name != "func.func" or len(op.regions[0].blocks) != 1:
            continue
        block = op.regions[0].blocks[0]
        types = {str(a.type) for a in block.arguments}
        values = [r for o in block.operations if as_op(o).name == "linalg.generic"
                  for r in as_op(o).results if str(r.type) in types]
        found[ir.StringAttr(op.attributes["sym_name"]).value] = (op, values)
    return found


def _sink(copy) -> None:
    """A barrier over each function's candidates just before its return (in the copy)."""
    from aotc._mlir import ir

    for func, values in _candidates(copy).values():
        if values:
            ret = as_op(list(func.regions[0].blocks[0].operations)[-1])
            with ir.InsertionPoint(ret), ret.location:
                sink = ir.Operation.create("util.optimization_barrier",
                                           results=[v.type for v in values], operands=values)
                sink.attributes[_SINK] = ir.UnitAttr.get()


@register
@dataclass(frozen=True)
class FoldToArguments(ModulePass):
    """Replaces values IREE folds to an argument by that argument (see the docstring)."""

    name = "aotc-fold-to-arguments"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        from aotc._mlir import ir

        originals = _candidates(module)
        if not any(values for _, values in originals.values()):
            return
        with folded_copy(module, _sink) as copy:
            sinks = [as_op(op) for op, _ in collect_ops(copy, lambda o: _SINK in o.attributes)]
            for sink in sinks:
                func = as_op(sink.parent)
                name = ir.StringAttr(func.attributes["sym_name"]).value
                original_func, values = originals[name]
                arguments = list(original_func.regions[0].blocks[0].arguments)
                for value, folded in zip(values, sink.operands):
                    if (isinstance(folded, ir.BlockArgument) and as_op(folded.owner.owner) == func
                            and arguments[folded.arg_number].type == value.type):
                        value.replace_all_uses_with(arguments[folded.arg_number])
