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

from ..base import ModulePass, PassError, find_function, register, where
from .core import Batched, Batcher, rule

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


# ---- calls with a custom derivative ------------------------------------------------------

@rule("func.call")
def _custom_derivative_call(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    """A call of a ``custom_vjp``/``custom_jvp``/``checkpoint`` forward function
    (``passes/autodiff/calls.py``) under ``vmap``: a call of the batched forward function,
    marked with a batched backward function, so that a derivative taken outside the
    ``vmap`` still uses the user's rule (JAX batches both the same way). The backward
    function takes batched residuals and cotangents; the adjoint of an argument the call
    does not batch is summed over the examples (each example's rule gives its share)."""
    from aotc._mlir import func, ir

    from ..autodiff.calls import CustomRule, custom_rule, mark, module_of
    from ..autodiff.core import is_float

    spec = custom_rule(op)
    if spec is None:
        raise PassError(f"{bt.pass_name}: a call at {where(op)} (in @{bt.func_name}) with a "
                        f"batched operand: calls are inlined before batching, and only calls "
                        f"with a custom derivative stay calls")
    module = module_of(op)
    flags = [b.batched for b in operands]
    callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    forward = _batched_function(bt, module, callee, flags)
    results = list(op.results)
    n_cotangents = sum(1 for r in results[:spec.outputs] if is_float(r.type))
    backward_flags = ([True] * (len(results) - spec.outputs + n_cotangents)
                      + flags[spec.arguments + spec.captures:])
    backward = _batched_function(bt, module, spec.backward, backward_flags)
    explicit = [f for v, f in zip(list(op.operands)[:spec.arguments], flags) if is_float(v.type)]
    if not all(explicit):
        backward = _summed_over_examples(bt, module, backward, explicit)
    fn, _ = find_function(module, forward, bt.pass_name)
    types = list(ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).results)
    call = func.CallOp(types, forward, [b.value for b in operands])
    mark(call.operation, CustomRule(backward, spec.arguments, spec.captures, spec.outputs,
                                    spec.name))
    return [Batched(r, True) for r in call.results]


def _batched_function(bt: Batcher, module, name: str, batched: list[bool]) -> str:
    """The name of ``@name`` batched with ``batched`` arguments, built once per form."""
    size = "dyn" if bt.size is None else str(bt.size)
    target = f"{name}_batched{size}_{''.join('b' if b else 'u' for b in batched)}"
    src, funcs = find_function(module, name, bt.pass_name)
    if target not in funcs:
        if bt.size is None and not any(batched):
            raise PassError(f"{bt.pass_name}: cannot batch @{name} (a custom derivative's "
                            f"function) with a dynamic batch size: none of its arguments is "
                            f"batched; give vmap a static batch")
        Batch(func=name, batched=target, in_axes=tuple(0 if b else None for b in batched),
              size=bt.size)._build(src, tuple(0 if b else None for b in batched))
    return target


def _summed_over_examples(bt: Batcher, module, name: str, keep: list[bool]) -> str:
    """A function calling ``@name`` whose results marked False in ``keep`` are summed
    over their leading (batch) dimension."""
    from aotc._mlir import dim_map, func, ir

    from ..autodiff.builders import summed, zeros

    target = f"{name}_sum_{''.join('k' if k else 's' for k in keep)}"
    src, funcs = find_function(module, name, bt.pass_name)
    if target in funcs:
        return target
    ftype = ir.FunctionType(ir.TypeAttr(src.attributes["function_type"]).value)
    out_types = [t if k else _without_batch(t) for t, k in zip(ftype.results, keep)]
    with src.location, ir.InsertionPoint(module.regions[0].blocks[0]):
        fn = ir.Operation.create(
            "func.func", regions=1,
            attributes={"sym_name": ir.StringAttr.get(target),
                        "function_type": ir.TypeAttr.get(
                            ir.FunctionType.get(list(ftype.inputs), out_types)),
                        "sym_visibility": ir.StringAttr.get("private")})
        entry = fn.regions[0].blocks.append(*ftype.inputs)
        with ir.InsertionPoint(entry):
            values = func.CallOp(list(ftype.results), name, list(entry.arguments)).results
            outs = []
            for value, t, k in zip(values, out_types, keep):
                if k:
                    outs.append(value)
                    continue
                rank = ir.RankedTensorType(t).rank + 1
                outs.append(summed(value, zeros(t), dim_map(rank, list(range(1, rank))),
                                   set(range(1, rank))))
            func.ReturnOp(outs)
    return target


def _without_batch(t):
    from aotc._mlir import ir

    t = ir.RankedTensorType(t)
    return ir.RankedTensorType.get(list(t.shape)[1:], t.element_type)
