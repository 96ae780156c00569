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
(batched types, batched/broadcast operands, the batch size as a value, rebuilding a
region's block). To support a new op, write a rule and register it with
``@rule("dialect.op")``. This file holds the rules for linalg.generic, fill-free named
ops and reshapes; ``batching_tensor.py`` those for tensor slices/joins/pads and scalars,
``batching_linalg.py`` convolutions, pooling and IREE's LinalgExt ops,
``batching_scf.py`` control flow.

A scalar outside a linalg body (an index, a predicate) batches to a 1-d tensor of its
lanes, and arith/math ops on such lanes run as one linalg.generic over the batch; a
linalg body that captures a batched value reads it at its lane (``linalg.index 0``).

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

    def __init__(self, size: Optional[int], pass_name: str, func_name: str = "") -> None:
        self.size = size  # None: dynamic
        self.pass_name = pass_name
        self.func_name = func_name
        self.env: dict = {}  # old value -> Batched
        self.size_value = None  # index value of the batch size (dynamic only)
        # (new unbatched value, block it is needed in) -> its batched version: a broadcast
        # made inside a region must not be reused outside it.
        self._as_batched: dict = {}

    # -- types -------------------------------------------------------------------------

    def batch_dim(self) -> int:
        from aotc._mlir import ir

        return ir.ShapedType.get_dynamic_size() if self.size is None else self.size

    def batched_type(self, t):
        """``t`` with a leading batch dimension. A scalar (an ``index``, ``i1``, ``f32``
        outside a linalg body) batches to a 1-d tensor of its lanes; ``index`` lanes are
        stored as ``i64`` (tensors of ``index`` do not reach IREE's dispatches well)."""
        from aotc._mlir import ir

        if not is_tensor(t):
            return ir.RankedTensorType.get([self.batch_dim()], lane_type(t))
        t = ir.RankedTensorType(t)
        return ir.RankedTensorType.get([self.batch_dim()] + list(t.shape), t.element_type)

    def dynamic_sizes(self) -> list:
        """The operands a ``tensor.empty`` with a leading batch dimension needs."""
        return [self.size_value] if self.size is None else []

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
        key = (b.value, ir.InsertionPoint.current.block)
        if key in self._as_batched:
            return self._as_batched[key]
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
        self._as_batched[key] = out
        return out

    def broadcast(self, value):
        """``linalg.broadcast`` of an unbatched value along a new leading dimension (a
        scalar: a ``linalg.fill`` of its lanes)."""
        from aotc._mlir import linalg

        if not is_tensor(value.type):
            init = self.new_empty([self.batch_dim()], lane_type(value.type), self.dynamic_sizes())
            return linalg.fill(to_lane(value), outs=[init])
        init = self.batched_empty(value.type)
        return linalg.broadcast(value, outs=[init], dimensions=[0]).results[0]

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

    def _remap(self, op, top: bool = False, captured: Optional[list] = None) -> None:
        """Replaces uses of values of the old function (operands of ``op`` and values its
        regions capture) by their new values. A batched value captured in a region is
        set aside in ``captured`` as ``(inner_op, operand_index, Batched)`` for the rule
        to rewrite (it needs the lane index), or refused when the rule cannot."""
        for i, operand in enumerate(op.operands):
            if operand in self.env:
                b = self.env[operand]
                if b.batched and not top:
                    if captured is None:
                        raise PassError(
                            f"{self.pass_name}: {op.name} at {where(op)} captures a batched "
                            f"value in a region; capturing batched values is not supported here")
                    captured.append((op, i, b))
                    continue
                op.operands[i] = b.value
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    self._remap(_op(inner), captured=captured)

    # -- ops and blocks ------------------------------------------------------------------

    def batch_block(self, src_block, dst_block, arg_batched: list) -> list:
        """Rebuilds the ops of ``src_block`` but its terminator at the current insertion
        point; ``dst_block``'s arguments (if given) stand for ``src_block``'s, batched as
        ``arg_batched`` says. Returns the terminator's operands as ``Batched`` values (the
        caller builds the terminator it needs)."""
        if dst_block is not None:
            for old, new, b in zip(src_block.arguments, dst_block.arguments, arg_batched):
                self.env[old] = Batched(new, b)
        ops = [_op(o) for o in src_block.operations]
        for op in ops[:-1]:
            with op.location:
                self.batch_op(op)
        return [self.env[v] for v in ops[-1].operands]

    def batch_op(self, op) -> None:
        """Rebuilds one op: copied if nothing it reads is batched, else by its rule."""
        operands = [self.env[v] for v in op.operands]
        if not any(b.batched for b in operands) and not _captures_batched(self, op):
            results = self.copy(op)
        elif op.name in RULES:
            results = RULES[op.name](self, op, operands)
        elif _is_scalar_op(op):
            results = RULES["<scalar>"](self, op, operands)
        else:
            raise PassError(
                f"{self.pass_name}: no batching rule for {op.name} at {where(op)} (in "
                f"@{self.func_name}, operand(s) "
                f"{', '.join(str(i) for i, b in enumerate(operands) if b.batched) or 'captured in its regions'} "
                f"batched). Add one in passes/batching.py: write "
                f"`def rule(bt, op, operands) -> list[Batched]` and register it with "
                f'`RULES["{op.name}"] = rule`.')
        for old, new in zip(op.results, results):
            self.env[old] = new


# Dialects whose region-free ops on scalars are batched lane by lane (one linalg.generic
# over the batch): index arithmetic and predicates computed outside linalg bodies.
SCALAR_DIALECTS = ("arith", "math")


def _is_scalar_op(op) -> bool:
    return (op.name.split(".")[0] in SCALAR_DIALECTS and not list(op.regions)
            and not any(is_tensor(v.type) for v in list(op.operands) + list(op.results)))


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
    captured: list = []
    bt._remap(new, top=True, captured=captured)
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
    if captured:
        read_lanes(new.regions[0].blocks[0], captured)
    return [Batched(r, True) for r in new.results]


def read_lanes(body, captured: list) -> None:
    """Inside a linalg body whose loop dimension 0 is the batch: a captured batched
    tensor read with ``tensor.extract`` reads this lane's slice (the lane index goes
    first), any other captured batched value (a batched scalar) is read at this lane."""
    from aotc._mlir import ir, linalg, tensor

    with ir.InsertionPoint.at_block_begin(body):
        lane = linalg.IndexOp(0).result
    # Batched scalars first: a tensor.extract whose source and indices are both captured
    # is rebuilt last, from its already rewritten indices.
    for inner, i, b in sorted(captured, key=lambda c: c[0].name == "tensor.extract" and c[1] == 0):
        with inner.location:
            if inner.name == "tensor.extract" and i == 0:
                with ir.InsertionPoint(inner):
                    read = tensor.extract(b.value, [lane] + list(inner.operands)[1:])
                inner.results[0].replace_all_uses_with(read)
                inner.erase()
                continue
            with ir.InsertionPoint(inner):
                value = from_lane(tensor.extract(b.value, [lane]), inner.operands[i].type)
            inner.operands[i] = value


def _shift_indices(region) -> None:
    """``linalg.index k`` -> ``linalg.index k+1`` (the batch loop is now dimension 0)."""
    from aotc._mlir import ir

    for block in region.blocks:
        for inner in block.operations:
            inner = _op(inner)
            if inner.name == "linalg.index":
                dim = ir.IntegerAttr(inner.attributes["dim"]).value
                inner.attributes["dim"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dim + 1)


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


def _batched_groups(groups: list[list[int]], expanded_type) -> list[list[int]]:
    """A reshape's reassociation with the batch as its own leading group; a reshape to or
    from 0-d (no groups: every dimension is a unit) puts its unit dimensions with the batch."""
    from aotc._mlir import ir

    if not groups:
        return [list(range(ir.RankedTensorType(expanded_type).rank + 1))]
    return [[0]] + [[d + 1 for d in g] for g in groups]


@rule("tensor.collapse_shape")
def _collapse(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    (x,) = operands
    groups = _batched_groups(_groups(op.attributes["reassociation"]), op.operands[0].type)
    out = bt.collapse(x.value, groups, bt.batched_type(op.results[0].type))
    return [Batched(out, True)]


@rule("tensor.expand_shape")
def _expand(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    x = operands[0]
    if len(operands) > 1:
        raise PassError(f"{bt.pass_name}: tensor.expand_shape at {where(op)} with dynamic "
                        f"output sizes is not supported")
    groups = _batched_groups(_groups(op.attributes["reassociation"]), op.results[0].type)
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
        self._build(src, axes)
        module.verify()

    def _build(self, src, axes) -> None:
        from aotc._mlir import arith, func, ir, tensor

        with src.location:
            bt = Batcher(self.size, self.name, self.func)
            ftype = ir.FunctionType(ir.TypeAttr(src.attributes["function_type"]).value)
            in_types = [bt.batched_type(t) if a is not None else t for t, a in zip(ftype.inputs, axes)]
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
                results = bt.batch_block(src.regions[0].blocks[0], entry, [a is not None for a in axes])
                func.ReturnOp([bt.to_batched(b) for b in results])


def is_tensor(t) -> bool:
    from aotc._mlir import ir

    return isinstance(t, ir.RankedTensorType)


def lane_type(t):
    """How one lane of a batched scalar of type ``t`` is stored in a tensor."""
    from aotc._mlir import ir

    return ir.IntegerType.get_signless(64) if isinstance(t, ir.IndexType) else t


def to_lane(value):
    """A scalar as it is stored in a lane (``index`` -> ``i64``)."""
    from aotc._mlir import arith, ir

    if isinstance(value.type, ir.IndexType):
        return arith.index_cast(ir.IntegerType.get_signless(64), value)
    return value


def from_lane(value, t):
    """A lane's stored value back as a scalar of type ``t``."""
    from aotc._mlir import arith, ir

    if isinstance(t, ir.IndexType) and not isinstance(value.type, ir.IndexType):
        return arith.index_cast(ir.IndexType.get(), value)
    return value


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


# Rules for tensor shape ops, scalars and scf control flow live beside this file; importing
# them registers them in RULES.
from . import batching_linalg, batching_scf, batching_tensor  # noqa: E402,F401
