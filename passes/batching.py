"""aotc-batch: build a batched copy of a per-example ``func.func``.

    aotc-batch{func=f batched=f_batched in-axes=0,none size=?}

The new function ``@batched`` takes the arguments of ``@func``; those marked ``0`` in
``in-axes`` get a leading batch dimension (``size=N`` static, ``size=?`` dynamic), those
marked ``none`` keep their type. Every result gets the leading batch dimension.

The body is rebuilt op by op in program order. Each value of ``@func`` maps to a value of
the new function and whether that value carries the batch dimension (always leading,
dimension 0). Unbatched values stay unbatched: an op whose operands are all unbatched is
copied as it is; a result that is unbatched but must be batched (a function result, the
init of an op whose inputs are batched) is broadcast, except ``tensor.empty`` and
``linalg.fill`` of an empty, which are re-created with the batch dimension.

An op with a batched operand is rewritten by its rule in ``RULES`` (keyed by op name),
with JAX's batching-rule contract: ``rule(bt, op, operands) -> results`` where
``operands`` and ``results`` are lists of ``Batched(value, batched)``. A rule builds its
ops at the current insertion point of the ``Batcher`` ``bt``, which offers the helpers
(batched types, batched/broadcast operands, the batch size as a value). To support a new
op, write a rule and add ``RULES["dialect.op"] = rule`` in this file.

Running the pass again when ``@batched`` exists changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple, Optional

from .base import ModulePass, PassError, register
from .donation import where

DYNAMIC = "?"


class Batched(NamedTuple):
    """A value of the batched function and whether it has the leading batch dimension."""

    value: object  # ir.Value
    batched: bool


Rule = Callable[["Batcher", object, list], list]
RULES: dict[str, Rule] = {}


def rule(*names: str):
    def add(fn: Rule) -> Rule:
        for n in names:
            RULES[n] = fn
        return fn
    return add


def _op(x):
    return getattr(x, "operation", x)


# ---------------------------------------------------------------------------------------
# The batcher: state and helpers the rules use
# ---------------------------------------------------------------------------------------

class Batcher:
    """Rebuilds one function's body with a leading batch dimension."""

    def __init__(self, size: Optional[int], pass_name: str) -> None:
        self.size = size  # None: dynamic
        self.pass_name = pass_name
        self.env: dict = {}  # old value -> Batched
        self.size_value = None  # index value of the batch size (dynamic only)
        self._as_batched: dict = {}  # new unbatched value -> its batched version

    # -- types -------------------------------------------------------------------------

    def batch_dim(self) -> int:
        from aotc._mlir import ir

        return ir.ShapedType.get_dynamic_size() if self.size is None else self.size

    def batched_type(self, t):
        from aotc._mlir import ir

        t = ir.RankedTensorType(t)
        return ir.RankedTensorType.get([self.batch_dim()] + list(t.shape), t.element_type)

    # -- values ------------------------------------------------------------------------

    def lookup(self, value) -> Batched:
        return self.env[value]

    def new_empty(self, shape: list, element_type, dynamic: list):
        from aotc._mlir import ir

        t = ir.RankedTensorType.get(shape, element_type)
        return ir.Operation.create("tensor.empty", results=[t], operands=list(dynamic)).result

    def batched_empty(self, t):
        """``tensor.empty`` of ``t`` with a leading batch dimension."""
        from aotc._mlir import ir

        t = ir.RankedTensorType(t)
        if not t.has_static_shape:
            raise PassError(f"{self.pass_name}: cannot batch a tensor.empty of {t} "
                            f"(dynamic sizes are not supported yet)")
        dyn = [self.size_value] if self.size is None else []
        return self.new_empty([self.batch_dim()] + list(t.shape), t.element_type, dyn)

    def to_batched(self, b: Batched):
        """The value with the batch dimension: itself if batched, else re-created
        (``tensor.empty``, ``linalg.fill`` of an empty) or broadcast."""
        from aotc._mlir import ir

        if b.batched:
            return b.value
        if b.value in self._as_batched:
            return self._as_batched[b.value]
        owner = b.value.owner if isinstance(b.value, ir.OpResult) else None
        owner = _op(owner) if owner is not None else None
        if owner is not None and owner.name == "tensor.empty" and not list(owner.operands):
            out = self.batched_empty(b.value.type)
        elif owner is not None and owner.name == "linalg.fill" and _is_empty(owner.operands[1]):
            init = self.batched_empty(b.value.type)
            clone = owner.clone()
            clone.operands[1] = init
            clone.results[0].set_type(init.type)
            out = clone.results[0]
        else:
            out = self.broadcast(b.value)
        self._as_batched[b.value] = out
        return out

    def broadcast(self, value):
        """``linalg.broadcast`` of an unbatched value along a new leading dimension."""
        from aotc._mlir import linalg

        init = self.batched_empty(value.type)
        return linalg.broadcast(value, outs=[init], dimensions=[0])

    def collapse(self, value, groups: list[list[int]], result_type):
        from aotc._mlir import ir

        return ir.Operation.create(
            "tensor.collapse_shape", results=[result_type], operands=[value],
            attributes={"reassociation": _reassociation(groups)}).result

    def expand(self, value, groups: list[list[int]], result_type, dynamic: list):
        from aotc._mlir import ir

        t = ir.RankedTensorType(result_type)
        return ir.Operation.create(
            "tensor.expand_shape", results=[result_type], operands=[value] + list(dynamic),
            attributes={"reassociation": _reassociation(groups),
                        "static_output_shape": ir.DenseI64ArrayAttr.get(list(t.shape))}).result

    def copy(self, op) -> list[Batched]:
        """A copy of an op whose operands are all unbatched (captured values remapped)."""
        new = op.clone()
        self._remap(new, top=True)
        return [Batched(r, False) for r in new.results]

    def _remap(self, op, top: bool = False) -> None:
        """Replaces uses of values of the old function (operands of ``op`` and values its
        regions capture) by their unbatched new values."""
        for i, operand in enumerate(op.operands):
            if operand in self.env:
                b = self.env[operand]
                if b.batched and not top:
                    raise PassError(
                        f"{self.pass_name}: {op.name} at {where(op)} captures a batched value "
                        f"in a region; capturing batched values is not supported")
                op.operands[i] = b.value
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    self._remap(_op(inner))


def _is_empty(value) -> bool:
    from aotc._mlir import ir

    return (isinstance(value, ir.OpResult) and _op(value.owner).name == "tensor.empty"
            and not list(_op(value.owner).operands))


def _reassociation(groups):
    from aotc._mlir import ir

    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g])
                             for g in groups])


def _groups(attr) -> list[list[int]]:
    from aotc._mlir import ir

    return [[ir.IntegerAttr(d).value for d in ir.ArrayAttr(g)] for g in ir.ArrayAttr(attr)]


def _shift_map(amap, batched: bool):
    """``(d0..dn) -> exprs`` as ``(d0..dn+1) -> ([d0,] exprs with di -> di+1)``."""
    from aotc._mlir import ir

    n = amap.n_dims
    shift = ir.AffineMap.get(n + 1, amap.n_symbols, [ir.AffineDimExpr.get(i + 1) for i in range(n)])
    results = [e.compose(shift) for e in amap.results]
    if batched:
        results = [ir.AffineDimExpr.get(0)] + results
    return ir.AffineMap.get(n + 1, amap.n_symbols, results)


# ---------------------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------------------

@rule("linalg.generic")
def _generic(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir

    n_in = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))[0]
    ins, outs = operands[:n_in], operands[n_in:]
    new_outs = [bt.to_batched(o) for o in outs]
    new = op.clone()
    bt._remap(new, top=True)
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    new_maps = [_shift_map(m, b.batched) for m, b in zip(maps, ins)] + [
        _shift_map(m, True) for m in maps[n_in:]]
    for i, b in enumerate(ins):
        new.operands[i] = b.value
    for k, v in enumerate(new_outs):
        new.operands[n_in + k] = v
        new.results[k].set_type(v.type)
    new.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in new_maps])
    iters = [ir.Attribute.parse("#linalg.iterator_type<parallel>")] + list(
        ir.ArrayAttr(op.attributes["iterator_types"]))
    new.attributes["iterator_types"] = ir.ArrayAttr.get(iters)
    _shift_indices(new.regions[0])
    return [Batched(r, True) for r in new.results]


def _shift_indices(region) -> None:
    """``linalg.index k`` -> ``linalg.index k+1`` (the batch loop is now dimension 0)."""
    from aotc._mlir import ir

    for block in region.blocks:
        for inner in block.operations:
            inner = _op(inner)
            if inner.name == "linalg.index":
                dim = ir.IntegerAttr(inner.attributes["dim"]).value
                inner.attributes["dim"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dim + 1)


@rule("linalg.fill")
def _fill(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    scalar, out = operands
    if scalar.batched:
        raise PassError(f"{bt.pass_name}: linalg.fill at {where(op)} with a batched scalar "
                        f"is not supported")
    new = op.clone()
    new.operands[0] = scalar.value
    new.operands[1] = out.value
    new.results[0].set_type(out.value.type)
    return [Batched(new.results[0], True)]


@rule("linalg.matmul")
def _matmul(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir, linalg

    a, b, c = operands
    res_t = ir.RankedTensorType(op.results[0].type)
    m, n = res_t.shape
    elt = res_t.element_type
    if a.batched and not b.batched:
        # Fold the batch into the rows: (B*M, K) @ (K, N) -> (B*M, N) -> (B, M, N).
        a_t = ir.RankedTensorType(a.value.type)
        k = a_t.shape[2]
        rows = ir.ShapedType.get_dynamic_size() if bt.size is None else bt.size * m
        a2 = bt.collapse(a.value, [[0, 1], [2]], ir.RankedTensorType.get([rows, k], a_t.element_type))
        c3 = bt.to_batched(c)
        c2 = bt.collapse(c3, [[0, 1], [2]], ir.RankedTensorType.get([rows, n], elt))
        new = op.clone()
        new.operands[0] = a2
        new.operands[1] = b.value
        new.operands[2] = c2
        new.results[0].set_type(c2.type)
        dyn = [bt.size_value] if bt.size is None else []
        out = bt.expand(new.results[0], [[0, 1], [2]], c3.type, dyn)
        return [Batched(out, True)]
    # Both batched, or a batched weight: a batch_matmul (the unbatched operand broadcast).
    a3, b3, c3 = bt.to_batched(a), bt.to_batched(b), bt.to_batched(c)
    return [Batched(linalg.batch_matmul(a3, b3, outs=[c3]), True)]


@rule("linalg.transpose")
def _transpose(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir

    x, init = operands
    out = bt.to_batched(init)
    perm = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
    new = op.clone()
    new.operands[0] = bt.to_batched(x)
    new.operands[1] = out
    new.results[0].set_type(out.type)
    new.attributes["permutation"] = ir.DenseI64ArrayAttr.get([0] + [p + 1 for p in perm])
    return [Batched(new.results[0], True)]


@rule("tensor.collapse_shape")
def _collapse(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    (x,) = operands
    groups = [[0]] + [[d + 1 for d in g] for g in _groups(op.attributes["reassociation"])]
    out = bt.collapse(x.value, groups, bt.batched_type(op.results[0].type))
    return [Batched(out, True)]


@rule("tensor.expand_shape")
def _expand(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir

    x = operands[0]
    if len(operands) > 1:
        raise PassError(f"{bt.pass_name}: tensor.expand_shape at {where(op)} with dynamic "
                        f"output sizes is not supported")
    groups = [[0]] + [[d + 1 for d in g] for g in _groups(op.attributes["reassociation"])]
    dyn = [bt.size_value] if bt.size is None else []
    out = bt.expand(x.value, groups, bt.batched_type(op.results[0].type), dyn)
    return [Batched(out, True)]


# ``tensor.empty`` and ``arith.constant`` have no tensor operands: they are always copied
# unbatched (``Batcher.copy``) and batched on demand by ``Batcher.to_batched``.


# ---------------------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------------------

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
        from aotc._mlir import ir

        funcs = {}
        for op in module.regions[0].blocks[0].operations:
            op = _op(op)
            if op.name == "func.func":
                funcs[ir.StringAttr(op.attributes["sym_name"]).value] = op
        if self.func not in funcs:
            raise PassError(f"{self.name}: no function @{self.func} in the module "
                            f"(functions: {', '.join('@' + f for f in funcs) or 'none'})")
        if self.target in funcs:
            return  # already batched: nothing to do
        src = funcs[self.func]
        block = src.regions[0].blocks[0]
        args = list(block.arguments)
        axes = self.in_axes or tuple(0 for _ in args)
        if len(axes) != len(args):
            raise PassError(f"{self.name}: @{self.func} has {len(args)} arguments but in-axes "
                            f"gives {len(axes)} ({', '.join('none' if a is None else str(a) for a in axes)}); "
                            f"give 0 or none for each argument")
        if all(a is None for a in axes) and self.size is None:
            raise PassError(f"{self.name}: no argument of @{self.func} is batched, so a "
                            f"dynamic size has nothing to take it from; give size=N")
        self._build(src, args, axes)
        module.verify()

    def _build(self, src, args, axes) -> None:
        from aotc._mlir import arith, ir, tensor

        with src.location:
            self._build_at(src, args, axes)

    def _build_at(self, src, args, axes) -> None:
        from aotc._mlir import arith, ir, tensor

        bt = Batcher(self.size, self.name)
        ftype = ir.FunctionType(ir.TypeAttr(src.attributes["function_type"]).value)
        in_types = [bt.batched_type(t) if a is not None else t for t, a in zip(ftype.inputs, axes)]
        out_types = [bt.batched_type(t) for t in ftype.results]
        new_type = ir.FunctionType.get(in_types, out_types)
        with src.location, ir.InsertionPoint(src.parent.regions[0].blocks[0]):
            fn = ir.Operation.create(
                "func.func", regions=1,
                attributes={"sym_name": ir.StringAttr.get(self.target),
                            "function_type": ir.TypeAttr.get(new_type)})
        for name in ("arg_attrs", "sym_visibility"):
            if name in src.attributes:
                fn.attributes[name] = src.attributes[name]
        entry = fn.regions[0].blocks.append(*in_types)
        for old, new, a in zip(args, entry.arguments, axes):
            bt.env[old] = Batched(new, a is not None)
        with ir.InsertionPoint(entry):
            if self.size is None:
                first = next(n for n, a in zip(entry.arguments, axes) if a is not None)
                with src.location:
                    zero = arith.ConstantOp(ir.IndexType.get(), 0).result
                    bt.size_value = tensor.DimOp(first, zero).result
            for op in src.regions[0].blocks[0].operations:
                op = _op(op)
                with op.location:
                    self._batch_op(bt, op, out_types)

    def _batch_op(self, bt: Batcher, op, out_types) -> None:
        from aotc._mlir import func

        operands = [bt.env[v] for v in op.operands]
        if op.name == "func.return":
            func.ReturnOp([bt.to_batched(b) for b in operands])
            return
        if not any(b.batched for b in operands) and not _captures_batched(bt, op):
            results = bt.copy(op)
        elif op.name in RULES:
            results = RULES[op.name](bt, op, operands)
        else:
            raise PassError(
                f"{self.name}: no batching rule for {op.name} at {where(op)} (in @{self.func}, "
                f"operand(s) {', '.join(str(i) for i, b in enumerate(operands) if b.batched)} "
                f"batched). Add one in passes/batching.py: write "
                f"`def rule(bt, op, operands) -> list[Batched]` and register it with "
                f'`RULES["{op.name}"] = rule`.')
        for old, new in zip(op.results, results):
            bt.env[old] = new


def _captures_batched(bt: Batcher, op) -> bool:
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = _op(inner)
                if any(v in bt.env and bt.env[v].batched for v in inner.operands):
                    return True
                if _captures_batched(bt, inner):
                    return True
    return False
