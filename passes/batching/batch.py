"""aotc-batch: build a batched copy of a per-example ``func.func``.

    aotc-batch{func=f batched=f_batched in-axes=0,none size=?}

The new function ``@batched`` takes the arguments of ``@func``; those marked ``0`` in
``in-axes`` get a leading batch dimension (``size=N`` static, ``size=?`` dynamic), those
marked ``none`` keep their type. Every result gets the leading batch dimension.

This module parses the options and builds the new function's signature; the body is
rebuilt op by op by ``core.Batcher`` with the rules of the other modules of this
package. Running the pass again when ``@batched`` exists changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..base import ModulePass, PassError, find_function, register
from .core import Batcher

DYNAMIC = "?"


def _parse_axes(text: str) -> tuple:
    axes = []
    for item in [t.strip() for t in str(text).split(",") if t.strip()]:
        if item.lower() in ("none", "null"):
            axes.append(None)
        elif item == "0":
            axes.append(0)
        else:
            raise ValueError(f"in-axes: expected 0 or none for each argument, got {item!r} "
                             f"(only a leading batch axis is supported)")
    return tuple(axes)


@register
@dataclass(frozen=True)
class Batch(ModulePass):
    """Builds ``@batched`` from ``@func`` with a leading batch dimension.

    Options: ``func`` (required), ``batched`` (default ``<func>_batched``), ``in-axes``
    (``0`` or ``none`` per argument; default all ``0``), ``size`` (an integer, or ``?``
    for a dynamic batch size; default ``?``).
    """

    name = "aotc-batch"
    func: str = ""
    batched: str = ""
    in_axes: tuple = ()
    size: Optional[int] = None

    @classmethod
    def from_options(cls, options):
        opts = {k.replace("-", "_"): v for k, v in options.items()}
        size = str(opts.get("size", DYNAMIC)).strip()
        if size == DYNAMIC:
            n = None
        elif size.isdigit():
            n = int(size)
        else:
            raise ValueError(f"size: expected a non-negative integer or ?, got {size!r}")
        if not opts.get("func"):
            raise ValueError("func: the name of the function to batch is required")
        return cls(func=opts["func"], batched=opts.get("batched", ""),
                   in_axes=_parse_axes(opts.get("in_axes", "")), size=n)

    @property
    def target(self) -> str:
        return self.batched or f"{self.func}_batched"

    def run(self, module) -> None:
        src, funcs = find_function(module, self.func, self.name)
        if self.target in funcs:
            return  # already batched: nothing to do
        block = src.regions[0].blocks[0]
        args = list(block.arguments)
        axes = self.in_axes or tuple(0 for _ in args)
        if len(axes) != len(args):
            given = ", ".join("none" if a is None else str(a) for a in axes)
            raise PassError(f"{self.name}: @{self.func} has {len(args)} arguments but in-axes "
                            f"gives {len(axes)} ({given}); give 0 or none for each argument")
        if all(a is None for a in axes) and self.size is None:
            raise PassError(f"{self.name}: no argument of @{self.func} is batched, so a "
                            f"dynamic size has nothing to take it from; give size=N")
        self._build(src, axes)
        module.verify()

    def _build(self, src, axes) -> None:
        from aotc._mlir import arith, func, ir, tensor

        with src.location:
            bt = Batcher(self.size, self.name, self.func)
            ftype = ir.FunctionType(ir.TypeAttr(src.attributes["function_type"]).value)
            in_types = [bt.batched_type(t) if a is not None else t
                        for t, a in zip(ftype.inputs, axes)]
            out_types = [bt.batched_type(t) for t in ftype.results]
            new_type = ir.FunctionType.get(in_types, out_types)
            with ir.InsertionPoint(src.parent.regions[0].blocks[0]):
                fn = ir.Operation.create(
                    "func.func", regions=1,
                    attributes={"sym_name": ir.StringAttr.get(self.target),
                                "function_type": ir.TypeAttr.get(new_type)})
            for name in ("arg_attrs", "sym_visibility"):
                if name in src.attributes:
                    fn.attributes[name] = src.attributes[name]
            entry = fn.regions[0].blocks.append(*in_types)
            with ir.InsertionPoint(entry):
                if self.size is None:
                    first = next(n for n, a in zip(entry.arguments, axes) if a is not None)
                    zero = arith.ConstantOp(ir.IndexType.get(), 0).result
                    bt.size_value = tensor.DimOp(first, zero).result
                results = bt.batch_block(src.regions[0].blocks[0], entry,
                                         [a is not None for a in axes])
                func.ReturnOp([bt.to_batched(b) for b in results])
