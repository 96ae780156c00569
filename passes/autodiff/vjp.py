"""aotc-vjp: build the reverse-mode derivative of a ``func.func``.

    aotc-vjp{func=f vjp=f_vjp wrt=0,2 seeded=0}

``@vjp`` takes ``@func``'s arguments followed by one cotangent per result listed in
``seeded`` (default: every result), and returns ``@func``'s results followed by the
adjoints of the arguments listed in ``wrt`` (the vector-Jacobian product): its body is
``@func``'s body, then the adjoint ops the rules of this package build, last op first
(``core.Adjoint``). An argument no cotangent reaches gets zeros. Running the pass again
when ``@vjp`` exists changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..base import ModulePass, PassError, as_op, find_function, register
from .core import Adjoint, activity, is_float, zeros


def _parse_indices(text) -> tuple:
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    for item in items:
        if not item.isdigit():
            raise ValueError(f"expected comma-separated indices, got {item!r}")
    return tuple(int(i) for i in items)


@register
@dataclass(frozen=True)
class Vjp(ModulePass):
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
        opts = {k.replace("-", "_"): v for k, v in options.items()}
        if not opts.get("func"):
            raise ValueError("func: the name of the function to differentiate is required")
        return cls(func=opts["func"], vjp=opts.get("vjp", ""),
                   wrt=_parse_indices(opts["wrt"]) if "wrt" in opts else None,
                   seeded=_parse_indices(opts["seeded"]) if "seeded" in opts else None)

    @property
    def target(self) -> str:
        return self.vjp or f"{self.func}_vjp"

    def run(self, module) -> None:
        src, funcs = find_function(module, self.func, self.name)
        if self.target in funcs:
            return
        self._build(module, src)
        module.verify()

    def _build(self, module, src) -> None:
        from aotc._mlir import func, ir

        ftype = ir.FunctionType(ir.TypeAttr(src.attributes["function_type"]).value)
        inputs, results = list(ftype.inputs), list(ftype.results)
        wrt = (self.wrt if self.wrt is not None
               else tuple(i for i, t in enumerate(inputs) if is_float(t)))
        seeded = self.seeded if self.seeded is not None else tuple(range(len(results)))
        for i in wrt:
            if i >= len(inputs) or not is_float(inputs[i]):
                what = "no such argument" if i >= len(inputs) else f"its type is {inputs[i]}"
                raise PassError(f"{self.name}: wrt={i} of @{self.func}: {what}; only "
                                f"floating-point arguments have derivatives")
        for j in seeded:
            if j >= len(results) or not is_float(results[j]):
                what = "no such result" if j >= len(results) else f"its type is {results[j]}"
                raise PassError(f"{self.name}: seeded={j} of @{self.func}: {what}; only "
                                f"floating-point results take cotangents")
        with src.location:
            fn = src.clone(ip=ir.InsertionPoint(module.regions[0].blocks[0]))
            fn.attributes["sym_name"] = ir.StringAttr.get(self.target)
            for name in ("arg_attrs", "res_attrs", "iree.reflection"):
                if name in fn.attributes:
                    del fn.attributes[name]
            entry = fn.regions[0].blocks[0]
            args = list(entry.arguments)
            cotangents = [entry.add_argument(results[j], src.location) for j in seeded]
            ret = as_op(list(entry.operations)[-1])
            values = list(ret.operands)
            ad = Adjoint(self.name, self.func, activity(entry, {args[i] for i in wrt}))
            with ir.InsertionPoint(ret):
                for j, ct in zip(seeded, cotangents):
                    ad.add(values[j], ct)
                for op in reversed([as_op(o) for o in entry.operations][:-1]):
                    ad.visit(op)
                grads = [ad.adjoint_of(args[i]) for i in wrt]
                grads = [g if g is not None else zeros(args[i].type)
                         for g, i in zip(grads, wrt)]
                func.ReturnOp(values + grads)
            ret.erase()
            fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                inputs + [results[j] for j in seeded], results + [g.type for g in grads]))
