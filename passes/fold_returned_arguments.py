"""aotc-fold-returned-arguments: a returned value that IREE's folds make an argument is
returned as that argument.

``where(x != x, 0, x)`` on integers is ``x`` once IREE has folded the comparison and the
select and erased the identity generic left over, after aotc's passes ran: the donation
analysis took the result for a new tensor and wrote another result into the donated
``x``'s buffer, which IREE then returned as both (fuzzer program 10264: a returned value
all zeros). This pass runs IREE's own fusion and folds on a copy of the module
(``fusion_probe.folded_copy``) and returns the argument itself where the copy does,
so that the donation analysis sees the alias.

Invariants: values are unchanged; only ``func.return`` operands change, to an argument of
the same type; running the pass twice changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, as_op, collect_ops, register
from .fusion_probe import folded_copy


def _returns(module) -> dict:
    """``{function name: its func.return}`` of the module's functions with one block."""
    from aotc._mlir import ir

    found = {}
    for op in module.regions[0].blocks[0].operations:
        op = as_op(op)
        if op.name == "func.func" and len(op.regions[0].blocks) == 1:
            ret = list(op.regions[0].blocks[0].operations)[-1]
            found[ir.StringAttr(op.attributes["sym_name"]).value] = (op, as_op(ret))
    return found


@register
@dataclass(frozen=True)
class FoldReturnedArguments(ModulePass):
    """Returns the argument where IREE's folds make a result one (see the docstring)."""

    name = "aotc-fold-returned-arguments"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        from aotc._mlir import ir

        if not collect_ops(module, lambda o: o.name == "linalg.generic"):
            return
        originals = _returns(module)
        with folded_copy(module) as copy:
            for name, (func, ret) in _returns(copy).items():
                if name not in originals:
                    continue
                original_func, original_ret = originals[name]
                arguments = list(original_func.regions[0].blocks[0].arguments)
                for i, value in enumerate(ret.operands):
                    if (isinstance(value, ir.BlockArgument) and value.owner.owner == func
                            and i < len(original_ret.operands)
                            and not isinstance(original_ret.operands[i], ir.BlockArgument)
                            and arguments[value.arg_number].type == original_ret.operands[i].type):
                        original_ret.operands[i] = arguments[value.arg_number]
