"""aotc-separate-returned-updates: a returned value that an op also updates in place is
returned through a ``util.optimization_barrier``.

In tensor semantics ``return v, v.at[i].add(u)`` returns two values; IREE 3.13 gives them
one buffer when ``v`` comes out of an ``scf.for`` (a sort's network, ``argsort``) and the
update (``iree_linalg_ext.scatter``, ``tensor.insert_slice``) is done in place: the first
result comes back with the update applied. An explicit copy does not help (it is folded
away); a barrier between ``v`` and the return does, and costs nothing, since ``v`` needs
a buffer of its own anyway. Found by the fuzzer (tests/fuzz). So does a returned ``v``
read by an elementwise op whose result is updated: IREE may fold that op to ``v``
(``argsort(any(x[:, :0])) ^ ...`` is the argsort itself) after aotc's passes ran.

The ops that update an operand in place are the vocabulary's (``opset.DESTINATION``).

Invariants: only ``func.return`` operands change, and only op results (not arguments)
with a destination use;
running the pass twice changes nothing (the return then uses the barrier, whose only use
is the return).
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, collect_ops, register
from .opset import DESTINATION


def _updated_in_place(value) -> bool:
    from aotc._mlir import ir

    if isinstance(value, ir.BlockArgument):
        # an argument returned unchanged keeps its buffer: the runtime records it as an
        # alias ("arg <i>"), which a barrier would hide
        return False
    return any(_is_destination(use) or _may_fold_to_a_destination(use) for use in value.uses)


def _is_destination(use) -> bool:
    return DESTINATION.get(use.owner.name) == use.operand_number


def _may_fold_to_a_destination(use) -> bool:
    """``v`` read by an elementwise op whose result is updated in place: IREE may fold the
    op to ``v`` itself (``v ^ any(empty)`` is ``v ^ False``), which makes ``v`` the
    destination after aotc's passes ran."""
    owner = use.owner
    return owner.name == "linalg.generic" and any(
        _is_destination(u) for r in owner.results for u in r.uses)


@register
@dataclass(frozen=True)
class SeparateReturnedUpdates(ModulePass):
    """Barriers between the return and values also updated in place (module docstring)."""

    name = "aotc-separate-returned-updates"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        from aotc._mlir import ir

        for ret, _ in collect_ops(module, lambda op: op.name == "func.return"):
            for i, value in enumerate(ret.operands):
                if _updated_in_place(value):
                    with ir.InsertionPoint(ret), ret.location:
                        shielded = ir.Operation.create(
                            "util.optimization_barrier", results=[value.type], operands=[value]
                        ).results[0]
                    ret.operands[i] = shielded
