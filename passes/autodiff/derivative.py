"""What ``aotc-vjp`` and ``aotc-jvp`` share: building ``@<target>`` once from ``@func``
(a clone of it, renamed, without the entry point's attributes), the ``wrt`` option and
its checks."""

from __future__ import annotations

from ..base import ModulePass, PassError, find_function
from .core import differentiable


class DerivativePass(ModulePass):
    """A pass that builds the function ``target`` from ``func`` (``_build``) unless the
    module has it already."""

    @property
    def target(self) -> str:
        raise NotImplementedError

    def run(self, module) -> None:
        from aotc._mlir import ir

        src, funcs = find_function(module, self.func, self.name)
        if self.target in funcs:
            return
        ftype = ir.FunctionType(ir.TypeAttr(src.attributes["function_type"]).value)
        inputs, results = list(ftype.inputs), list(ftype.results)
        self._build(module, src, inputs, results, self.wrt_of(self.wrt, inputs))
        module.verify()

    def _build(self, module, src, inputs: list, results: list, wrt: tuple) -> None:
        """Builds ``@target`` from ``src`` (input and result types ``inputs``,
        ``results``), differentiating the inputs ``wrt``."""
        raise NotImplementedError

    def checked(self, option: str, indices, types: list, kind: str, why: str) -> tuple:
        """``indices`` (an option naming arguments or results of ``types``), each a float
        one; ``why`` says what only floats have."""
        for i in indices:
            if i >= len(types) or not differentiable(types[i]):
                what = f"no such {kind}" if i >= len(types) else f"its type is {types[i]}"
                raise PassError(f"{self.name}: {option}={i} of @{self.func}: {what}; only "
                                f"floating-point {kind}s {why}")
        return tuple(indices)

    def wrt_of(self, wrt, inputs: list) -> tuple:
        """The ``wrt`` option (default: every floating-point argument), checked."""
        if wrt is None:
            return tuple(i for i, t in enumerate(inputs) if differentiable(t))
        return self.checked("wrt", wrt, inputs, "argument", "have derivatives")

    def clone(self, module, src):
        """``@func`` cloned as ``@target`` (no entry-point attributes): the clone, its
        entry block and that block's arguments."""
        from aotc._mlir import ir

        fn = src.clone(ip=ir.InsertionPoint(module.regions[0].blocks[0]))
        fn.attributes["sym_name"] = ir.StringAttr.get(self.target)
        for name in ("arg_attrs", "res_attrs", "iree.reflection"):
            if name in fn.attributes:
                del fn.attributes[name]
        entry = fn.regions[0].blocks[0]
        return fn, entry, list(entry.arguments)


def parse_indices(text) -> tuple:
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    for item in items:
        if not item.isdigit():
            raise ValueError(f"expected comma-separated indices, got {item!r}")
    return tuple(int(i) for i in items)


def options(options: dict) -> dict:
    """The options with ``-`` as ``_`` and ``func`` required; ``wrt`` parsed."""
    opts = {k.replace("-", "_"): v for k, v in options.items()}
    if not opts.get("func"):
        raise ValueError("func: the name of the function to differentiate is required")
    if "wrt" in opts:
        opts["wrt"] = parse_indices(opts["wrt"])
    return opts
