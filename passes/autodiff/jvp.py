"""aotc-jvp: build the forward-mode derivative of a ``func.func``.

    aotc-jvp{func=f jvp=f_jvp wrt=0,2}

``@jvp`` takes ``@func``'s arguments followed by one tangent per argument listed in
``wrt`` (default: every floating-point argument), and returns ``@func``'s results
followed by the tangent of each floating-point result (the Jacobian-vector product): its
body is ``@func``'s body with the tangent ops the rules of ``forward.py`` build after
each op. A result no tangent reaches gets zeros. Running the pass again when ``@jvp``
exists changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..base import as_op, register
from .core import differentiable
from .derivative import DerivativePass, options as derivative_options
from .forward import Forward


@register
@dataclass(frozen=True)
class Jvp(DerivativePass):
    """Builds ``@jvp`` (see the module docstring).

    Options: ``func`` (required), ``jvp`` (default ``<func>_jvp``), ``wrt`` (argument
    indices, default all floating-point arguments).
    """

    name = "aotc-jvp"
    func: str = ""
    jvp: str = ""
    wrt: Optional[tuple] = None

    @classmethod
    def from_options(cls, options):
        opts = derivative_options(options)
        return cls(func=opts["func"], jvp=opts.get("jvp", ""), wrt=opts.get("wrt"))

    @property
    def target(self) -> str:
        return self.jvp or f"{self.func}_jvp"

    def _build(self, module, src, inputs: list, results: list, wrt: tuple) -> None:
        from aotc._mlir import func, ir

        with src.location:
            fn, entry, args = self.clone(module, src)
            tangents = [entry.add_argument(inputs[i], src.location) for i in wrt]
            # Valid at every step (a custom derivative's rule runs aotc-vjp on the module).
            fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                inputs + [inputs[i] for i in wrt], results))
            ops = [as_op(o) for o in entry.operations]
            ret = ops[-1]
            fw = Forward(self.name, self.func, {args[i]: t for i, t in zip(wrt, tangents)})
            fw.sweep(ops[:-1], ret)
            values = list(ret.operands)
            floats = [v for v in values if differentiable(v.type)]
            with ir.InsertionPoint(ret):
                outs = [fw.or_zero(v) for v in floats]
                func.ReturnOp(values + outs)
            ret.erase()
            fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                inputs + [inputs[i] for i in wrt], results + [v.type for v in floats]))
