"""aotc-vjp: build the reverse-mode derivative of a ``func.func``.

    aotc-vjp{func=f vjp=f_vjp wrt=0,2 seeded=0}

``@vjp`` takes ``@func``'s arguments followed by one cotangent per result listed in
``seeded`` (default: every result), and returns ``@func``'s results followed by the
adjoints of the arguments listed in ``wrt`` (the vector-Jacobian product): its body is
``@func``'s body, then the adjoint ops the rules of this package build, last op first
(``core.Adjoint``). An argument no cotangent reaches gets zeros. Running the pass again
when ``@vjp`` exists changes nothing. ``@vjp`` carries ``aotc.residual_bytes``: the bytes
of forward values its backward ops read (``residual_bytes``), which the metadata records
and ``Compiled.memory_analysis()`` and ``aotc inspect`` report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from ..base import as_op, element_bytes, find_function, register
from ..opset import CONSTANT_LIKE_OPS
from .core import Adjoint, activity, reads, zeros
from .derivative import DerivativePass, options as derivative_options, parse_indices


# The attribute of a built function: the bytes of the values its backward part reads from
# its forward part (and of the tapes its loops record), the memory the derivative keeps.
RESIDUAL_BYTES = "aotc.residual_bytes"


def residual_bytes(block, forward: list, saved: list) -> int:
    """The bytes of the forward ops' results that ops after them in ``block`` (the
    backward ops) read, constants and fills left out, plus those of ``saved``: an upper
    bound of what stays live from one part to the other (IREE may recompute a fused
    elementwise value instead). Values of dynamic shape are not counted."""
    from aotc._mlir import ir

    produced = {r for op in forward for r in op.results}
    kept = dict.fromkeys(saved)
    for op in [as_op(o) for o in block.operations][len(forward):-1]:  # not the return
        kept.update(dict.fromkeys(v for v in reads(op) if v in produced))
    total = 0
    for v in kept:
        if as_op(v.owner).name in CONSTANT_LIKE_OPS:  # made again where they are read
            continue
        t = v.type
        if isinstance(t, ir.RankedTensorType) and t.has_static_shape:
            total += math.prod(t.shape) * element_bytes(t.element_type)
    return total


def recorded_residual_bytes(module, name: str) -> int:
    """The ``aotc.residual_bytes`` of ``@name`` in ``module`` (0 if not recorded)."""
    from aotc._mlir import ir

    fn, _ = find_function(module.operation, name, "aotc-vjp")
    return ir.IntegerAttr(fn.attributes[RESIDUAL_BYTES]).value if RESIDUAL_BYTES in \
        fn.attributes else 0


@register
@dataclass(frozen=True)
class Vjp(DerivativePass):
    """Builds ``@vjp`` (see the module docstring).

    Options: ``func`` (required), ``vjp`` (default ``<func>_vjp``), ``wrt`` (argument
    indices, default all floating-point arguments), ``seeded`` (result indices that take
    a cotangent, default all).
    """

    name = "aotc-vjp"
    func: str = ""
    vjp: str = ""
    wrt: Optional[tuple] = None
    seeded: Optional[tuple] = None

    @classmethod
    def from_options(cls, options):
        opts = derivative_options(options)
        seeded = parse_indices(opts["seeded"]) if "seeded" in opts else None
        return cls(func=opts["func"], vjp=opts.get("vjp", ""), wrt=opts.get("wrt"),
                   seeded=seeded)

    @property
    def target(self) -> str:
        return self.vjp or f"{self.func}_vjp"

    def _build(self, module, src, inputs: list, results: list, wrt: tuple) -> None:
        from aotc._mlir import func, ir

        seeded = (self.checked("seeded", self.seeded, results, "result", "take cotangents")
                  if self.seeded is not None else tuple(range(len(results))))
        with src.location:
            fn, entry, args = self.clone(module, src)
            cotangents = [entry.add_argument(results[j], src.location) for j in seeded]
            ret = as_op(list(entry.operations)[-1])
            values = list(ret.operands)
            ad = Adjoint(self.name, self.func, activity(entry, {args[i] for i in wrt}))
            forward = [as_op(o) for o in entry.operations][:-1]
            with ir.InsertionPoint(ret):
                for j, ct in zip(seeded, cotangents):
                    ad.add(values[j], ct)
                for op in reversed(forward):
                    ad.visit(op)
                grads = [ad.adjoint_of(args[i]) for i in wrt]
                grads = [g if g is not None else zeros(args[i].type)
                         for g, i in zip(grads, wrt)]
                func.ReturnOp(values + grads)
            ret.erase()
            fn.attributes[RESIDUAL_BYTES] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(64), residual_bytes(entry, forward, ad.saved))
            fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                inputs + [results[j] for j in seeded], results + [g.type for g in grads]))
