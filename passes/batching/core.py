"""The batcher and the rule registry of ``aotc-batch``, and the helpers rules share.

The pass (``batch.py``) rebuilds a function's body op by op with a ``Batcher``. Each value
of the per-example function maps to a value of the new function and whether that value
carries the batch dimension (always leading, dimension 0). Unbatched values stay
unbatched: an op whose operands are all unbatched is copied as it is; a result that is
unbatched but must be batched (a function result, the init of an op whose inputs are
batched) is broadcast, except ``tensor.empty`` and ``linalg.fill`` of an empty, which are
re-created with the batch dimension.

An op with a batched operand is rewritten by its rule in ``RULES`` (keyed by op name),
with JAX's batching-rule contract: ``rule(bt, op, operands) -> results`` where
``operands`` and ``results`` are lists of ``Batched(value, batched)``. A rule builds its
ops at the current insertion point of the ``Batcher`` ``bt``, which offers the helpers
(batched types, batched/broadcast operands, the batch size as a value, rebuilding a
region's block). ``@rule("dialect.op")`` registers a rule and attaches it to the op's row
of the vocabulary (``passes/opset.py``) as its ``"batch"`` rule.

A scalar outside a linalg body (an index, a predicate) batches to a 1-d tensor of its
lanes (``index`` lanes stored as ``i64``), and arith/math ops on such lanes run as one
linalg.generic over the batch (the ``"<scalar>"`` rule); a linalg body that captures a
batched value reads it at its lane (``linalg.index 0``).

This module imports no rule module: the rules (``structured``, ``tensor``, ``linalg``,
``scf``) import it.
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Optional

from .. import opset
from ..base import PassError, as_op, where


class Batched(NamedTuple):
    """A value of the batched function and whether it has the leading batch dimension."""

    value: object  # ir.Value
    batched: bool


Rule = Callable[["Batcher", object, list], list]
RULES: dict[str, Rule] = {}

# The key of the rule for region-free arith/math ops on scalars: one rule serves every op
# of the scalar dialects, so it has no row of its own in the vocabulary.
SCALAR = "<scalar>"

# Dialects whose region-free ops on scalars are batched lane by lane (one linalg.generic
# over the batch): index arithmetic and predicates computed outside linalg bodies.
SCALAR_DIALECTS = opset.SCALAR_DIALECTS


def rule(*names: str):
    """Decorator: registers ``fn`` as the batching rule of each op in ``names`` and
    attaches it to the op's row (an op without a row fails here, at import)."""

    def add(fn: Rule) -> Rule:
        ops = [n for n in names if n != SCALAR]
        if ops:
            opset.attach("batch", *ops)(fn)
        for n in names:
            RULES[n] = fn
        return fn

    return add


def batch_rule(name: str) -> Optional[Rule]:
    """The batching rule of op ``name`` (``"<scalar>"``: the scalar rule), or None."""
    return RULES.get(name)


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
        owner = as_op(owner) if owner is not None else None
        if owner is not None and owner.name == "tensor.empty" and not list(owner.operands):
            out = self.batched_empty(b.value.type)
        elif (owner is not None and owner.name == "linalg.fill"
              and _is_empty(owner.operands[1])):
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
            init = self.new_empty([self.batch_dim()], lane_type(value.type),
                                  self.dynamic_sizes())
            return linalg.fill(to_lane(value), outs=[init])
        init = self.batched_empty(value.type)
        return linalg.broadcast(value, outs=[init], dimensions=[0]).results[0]

    def collapse(self, value, groups: list[list[int]], result_type):
        from aotc._mlir import ir, reassociation

        return ir.Operation.create(
            "tensor.collapse_shape", results=[result_type], operands=[value],
            attributes={"reassociation": reassociation(groups)}).result

    def expand(self, value, groups: list[list[int]], result_type, dynamic: list):
        from aotc._mlir import ir, reassociation

        t = ir.RankedTensorType(result_type)
        return ir.Operation.create(
            "tensor.expand_shape", results=[result_type], operands=[value] + list(dynamic),
            attributes={"reassociation": reassociation(groups),
                        "static_output_shape": ir.DenseI64ArrayAttr.get(list(t.shape))}).result

    def copy(self, op) -> list[Batched]:
        """A copy of an op whose operands are all unbatched (captured values remapped)."""
        new = op.clone()
        self.remap(new, top=True)
        return [Batched(r, False) for r in new.results]

    def remap(self, op, top: bool = False, captured: Optional[list] = None) -> None:
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
                            f"value in a region; capturing batched values is not supported "
                            f"here")
                    captured.append((op, i, b))
                    continue
                op.operands[i] = b.value
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    self.remap(as_op(inner), captured=captured)

    # -- ops and blocks ------------------------------------------------------------------

    def batch_block(self, src_block, dst_block, arg_batched: list) -> list:
        """Rebuilds the ops of ``src_block`` but its terminator at the current insertion
        point; ``dst_block``'s arguments (if given) stand for ``src_block``'s, batched as
        ``arg_batched`` says. Returns the terminator's operands as ``Batched`` values (the
        caller builds the terminator it needs)."""
        if dst_block is not None:
            for old, new, b in zip(src_block.arguments, dst_block.arguments, arg_batched):
                self.env[old] = Batched(new, b)
        ops = [as_op(o) for o in src_block.operations]
        for op in ops[:-1]:
            with op.location:
                self.batch_op(op)
        return [self.env[v] for v in ops[-1].operands]

    def batch_op(self, op) -> None:
        """Rebuilds one op: copied if nothing it reads is batched, else by its rule."""
        operands = [self.env[v] for v in op.operands]
        if not any(b.batched for b in operands) and not _captures_batched(self, op):
            results = self.copy(op)
        else:
            results = self._apply(self._rule_for(op, operands), op, operands)
        for old, new in zip(op.results, results):
            self.env[old] = new

    def _rule_for(self, op, operands: list[Batched]) -> Rule:
        if op.name in RULES:
            return RULES[op.name]
        if _is_scalar_op(op):
            return RULES[SCALAR]
        batched = ", ".join(str(i) for i, b in enumerate(operands) if b.batched)
        raise PassError(
            f"{self.pass_name}: no batching rule for {op.name} at {where(op)} (in "
            f"@{self.func_name}, operand(s) {batched or 'captured in its regions'} "
            f"batched). Add one in a rule module of passes/batching/: "
            f'`@rule("{op.name}") def rule(bt, op, operands) -> list[Batched]` (the op '
            f"needs a row in passes/opset.py too).")

    def _apply(self, fn: Rule, op, operands: list[Batched]) -> list[Batched]:
        """Runs a rule. A ``PassError`` is the rule refusing the op and passes through
        as it is; any other exception is a bug in the rule, reported with the op and its
        location and chained, so its traceback still shows the rule's line."""
        try:
            return fn(self, op, operands)
        except PassError:
            raise
        except Exception as e:
            raise PassError(
                f"{self.pass_name}: internal error in the batching rule "
                f"{fn.__module__}.{fn.__qualname__} for {op.name} at {where(op)} (in "
                f"@{self.func_name}): {type(e).__name__}: {e}") from e


def _is_scalar_op(op) -> bool:
    return (op.name.split(".")[0] in SCALAR_DIALECTS and not list(op.regions)
            and not any(is_tensor(v.type) for v in list(op.operands) + list(op.results)))


def captured_values(bt: Batcher, op):
    """The values defined outside ``op`` that ops in its regions read (nested regions
    included), in the order they are read, repeats included."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = as_op(inner)
                yield from (v for v in inner.operands if v in bt.env)
                yield from captured_values(bt, inner)


def _captures_batched(bt: Batcher, op) -> bool:
    return any(bt.env[v].batched for v in captured_values(bt, op))


def _is_empty(value) -> bool:
    from aotc._mlir import ir

    return (isinstance(value, ir.OpResult) and as_op(value.owner).name == "tensor.empty"
            and not list(as_op(value.owner).operands))


# ---------------------------------------------------------------------------------------
# Scalars and their lanes
# ---------------------------------------------------------------------------------------

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


def lane_generic(types: list, inputs: list, inits: list, body) -> list:
    """One parallel ``linalg.generic`` producing ``types`` (of one rank, the batch first)
    into ``inits``: each of ``inputs`` is ``(value, at_lane)``, a batched scalar read at
    the lane when ``at_lane``, else a value of that shape read at the position; the body
    yields ``body(*block_arguments)``."""
    from aotc._mlir import PARALLEL, affine_maps, dim_map, ir, iterator_types, linalg

    rank = ir.RankedTensorType(types[0]).rank
    identity = dim_map(rank, list(range(rank)))
    maps = ([dim_map(rank, [0]) if at_lane else identity for _, at_lane in inputs]
            + [identity] * len(inits))
    values = [v for v, _ in inputs]
    g = linalg.GenericOp(types, values, inits, affine_maps(maps),
                         iterator_types([PARALLEL] * rank))
    block = g.regions[0].blocks.append(
        *[ir.RankedTensorType(v.type).element_type for v in values + inits])
    with ir.InsertionPoint(block):
        linalg.YieldOp(body(*block.arguments))
    return list(g.results)


def lanewise(bt: Batcher, operands: list[Batched], operand_types: list, result_types: list,
             body) -> list[Batched]:
    """One ``linalg.generic`` over the batch computing ``body(*scalars) -> results`` per
    lane: batched operands are read at the lane (as scalars of ``operand_types``),
    unbatched ones are used as they are."""
    from aotc._mlir import ir

    batched = [b.value for b in operands if b.batched]
    lane_types = [bt.batched_type(t) for t in result_types]
    outs = [bt.new_empty([bt.batch_dim()], ir.RankedTensorType(t).element_type,
                         bt.dynamic_sizes())
            for t in lane_types]

    def lane_body(*block_args):
        args = iter(block_args)
        values = [from_lane(next(args), t) if b.batched else b.value
                  for b, t in zip(operands, operand_types)]
        return [to_lane(r) for r in body(*values)]

    results = lane_generic(lane_types, [(v, True) for v in batched], outs, lane_body)
    return [Batched(r, True) for r in results]


# ---------------------------------------------------------------------------------------
# Helpers several rule modules build with
# ---------------------------------------------------------------------------------------

def refuse(bt: Batcher, op, what: str):
    raise PassError(f"{bt.pass_name}: {op.name} at {where(op)} (in @{bt.func_name}): {what} "
                    f"is not supported by the batching pass yet")


def concat(values, dim: int, result_type):
    """``tensor.concat`` of ``values`` along ``dim``."""
    from aotc._mlir import ir

    dim_attr = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dim)
    return ir.Operation.create("tensor.concat", results=[result_type], operands=list(values),
                               attributes={"dim": dim_attr}).result


def reassociation_groups(attr) -> list[list[int]]:
    """A reshape's ``reassociation`` attribute as lists of dimensions."""
    from aotc._mlir import ir

    return [[ir.IntegerAttr(d).value for d in ir.ArrayAttr(g)] for g in ir.ArrayAttr(attr)]


def rebuilt(bt: Batcher, op, operands: list, result_types: list):
    """A clone of ``op`` reading ``operands`` and producing ``result_types``."""
    new = op.clone()
    bt.remap(new, top=True)
    for i, v in enumerate(operands):
        new.operands[i] = v
    for r, t in zip(new.results, result_types):
        r.set_type(t)
    return new
