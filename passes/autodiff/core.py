"""The adjoint builder of ``aotc-vjp`` and the registry of its rules.

Reverse mode is a direct adjoint pass over the traced function (see
``docs/architecture.md``, "Differentiation"): the function is cloned, then its ops are
visited last to first and each op whose results have adjoints (cotangents) adds the
adjoints of its operands, built by the op's rule just before the clone's return. The
forward values the rules read are the clone's own values, so nothing is saved or
recomputed twice: IREE schedules the forward and backward ops of one function.

A rule has the contract ``rule(ad, op, adjoints) -> None``: ``adjoints`` holds one entry
per result of ``op`` (an ``ir.Value`` or None where no adjoint reaches it); the rule
calls ``ad.add(operand, contribution)`` for each operand whose adjoint it computes.
``@rule("dialect.op")`` registers a rule and attaches it to the op's row of the
vocabulary (``passes/opset.py``) as its ``"vjp"`` rule.

Only floating-point values have adjoints: integers, booleans and indices are constant
to differentiation (JAX's float0). A value is *active* when it depends on an argument
being differentiated; rules run only for ops with an active operand whose result has an
adjoint, so the backward function computes no adjoint nobody reads.
"""

from __future__ import annotations

from typing import Callable

from .. import opset
from ..base import PassError, as_op, where

Rule = Callable[["Adjoint", object, list], None]
RULES: dict[str, Rule] = {}


# Why a scatter other than an add or a set has no derivative here: the frontend emits
# the others as adds, sets and gathers where something differentiates (ops/updates.py),
# except a multiply with repeated indices (as JAX, which differentiates its updates only
# with unique indices).
SCATTER_REFUSAL = ("a scatter-multiply has a derivative only with unique indices: pass "
                   "unique_indices=True to .at[...].multiply when the indices do not repeat")


def registrar(kind: str, table: dict):
    """A decorator factory: ``@register(*names)`` puts a function into ``table`` under
    each op name and attaches it to the op's row as its ``kind`` rule (an op without a
    row fails here, at import)."""

    def register(*names: str):
        def add(fn):
            opset.attach(kind, *names)(fn)
            for n in names:
                table[n] = fn
            return fn

        return add

    return register


# ``@rule("dialect.op")``: the reverse-mode rule of an op.
rule = registrar("vjp", RULES)


def is_float(t) -> bool:
    """Whether values of type ``t`` (a scalar or tensor type) carry derivatives."""
    from aotc._mlir import ir

    if isinstance(t, ir.RankedTensorType):
        t = t.element_type
    return isinstance(t, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type))


def is_complex(t) -> bool:
    """Whether values of type ``t`` are complex: they carry derivatives through the ops of
    ``opset.COMPLEX_DERIVATIVES``; any other op refuses them (``COMPLEX_REFUSAL``)."""
    from aotc._mlir import ir

    if isinstance(t, ir.RankedTensorType):
        t = t.element_type
    return isinstance(t, ir.ComplexType)


def differentiable(t) -> bool:
    """Float or complex: values of type ``t`` have tangents where a rule supports them."""
    return is_float(t) or is_complex(t)


# Where a derivative would pass through complex values of an op whose rule takes real
# ones only. Refused rather than cut: before complex values had derivatives, a real loss
# of complex intermediates (abs(fft(x)) ** 2) was silently constant.
COMPLEX_REFUSAL = ("the derivative passes through complex values, and this op's rule takes "
                   "real ones only; differentiate a function of the real and imaginary "
                   "parts computed in real arithmetic, or keep the complex part out of the "
                   "differentiated path (lax.stop_gradient)")


def through_complex(op, active) -> bool:
    """Whether ``op`` computes complex values from ``active`` ones, or reads an active
    complex value, and has no rule for them (``opset.COMPLEX_DERIVATIVES``)."""
    from .. import opset

    if op.name in opset.COMPLEX_DERIVATIVES:
        return False
    read = [v for v in reads(op) if v in active]
    return bool(read) and (any(is_complex(v.type) for v in read)
                           or any(is_complex(r.type) for r in op.results))


def real_tensor_type(t):
    """The tensor type ``t`` with a complex element type's parts (``t`` when real)."""
    from aotc._mlir import ir

    t = ir.RankedTensorType(t)
    if not isinstance(t.element_type, ir.ComplexType):
        return t
    return ir.RankedTensorType.get(t.shape, ir.ComplexType(t.element_type).element_type)


def element_type(t):
    from aotc._mlir import ir

    return ir.RankedTensorType(t).element_type if isinstance(t, ir.RankedTensorType) else t


class Adjoint:
    """The state of one reverse sweep: active values and accumulated adjoints.

    Ops are built at the current insertion point (just before the function's return);
    ``where`` names the user's line in errors.
    """

    def __init__(self, pass_name: str, func_name: str, active: set) -> None:
        self.pass_name = pass_name
        self.func_name = func_name
        self.active = active
        self.adjoints: dict = {}  # value -> accumulated adjoint value
        # Values rules build for the backward pass to read (a loop's tapes): with the
        # forward values the backward ops read, what the derivative keeps in memory.
        self.saved: list = []

    # -- adjoints ------------------------------------------------------------------------

    def add(self, value, contribution) -> None:
        """Adds ``contribution`` to the adjoint of ``value`` (inactive values take none)."""
        if contribution is None or value not in self.active:
            return
        have = self.adjoints.get(value)
        self.adjoints[value] = contribution if have is None else add_tensors(have, contribution)

    def adjoint_of(self, value):
        return self.adjoints.get(value)

    # -- the sweep -----------------------------------------------------------------------

    def visit(self, op) -> None:
        """Runs ``op``'s rule if one of its results has an adjoint and an operand (or a
        value its regions read) is active."""
        results = list(op.results)
        adjoints = [self.adjoints.get(r) for r in results]
        if all(a is None for a in adjoints):
            return
        if not any(v in self.active for v in reads(op)):
            return
        if through_complex(op, self.active):
            self.refuse(op, COMPLEX_REFUSAL)
        fn = RULES.get(op.name)
        if fn is None:
            raise PassError(self.no_rule(op))
        try:
            with op.location:
                fn(self, op, adjoints)
        except PassError:
            raise
        except Exception as e:  # a bug in the rule: say which rule and where
            raise PassError(
                f"{self.pass_name}: internal error in the differentiation rule "
                f"{fn.__module__}.{fn.__qualname__} for {op.name} at {where(op)} (in "
                f"@{self.func_name}): {type(e).__name__}: {e}") from e

    def no_rule(self, op) -> str:
        return (f"{self.pass_name}: cannot differentiate {op.name} at {where(op)} (in "
                f"@{self.func_name}): it has no reverse-mode rule. Keep it out of the "
                f"differentiated path (lax.stop_gradient on its inputs), or add a rule in "
                f"passes/autodiff/: `@rule(\"{op.name}\") def rule(ad, op, adjoints)` "
                f"calling ad.add(operand, adjoint) for each differentiable operand")

    def refuse(self, op, what: str):
        raise PassError(f"{self.pass_name}: cannot differentiate {op.name} at {where(op)} "
                        f"(in @{self.func_name}): {what}")


def reads(op):
    """The values ``op`` reads: its operands and the outside values its regions use."""
    yield from op.operands
    yield from region_reads(op)


def region_reads(op):
    """The values from outside ``op`` that ops in its regions read."""
    for region in op.regions:
        for block in region.blocks:
            inside = set(block.arguments)
            for inner in block.operations:
                inner = as_op(inner)
                for v in reads(inner):
                    if v not in inside:
                        yield v
                inside.update(inner.results)


def activity(block, seeds: set) -> set:
    """The floating-point values of ``block`` that depend on ``seeds``."""
    return activity_of([as_op(o) for o in block.operations], seeds)


def activity_of(ops: list, seeds: set) -> set:
    """The floating-point (and complex: ``is_complex``) values ``ops`` (in order) compute
    from ``seeds``, and the floating-point seeds themselves."""
    from .stop_gradient import stops_gradient

    active = {v for v in seeds if differentiable(v.type)}
    for op in ops:
        if stops_gradient(op):
            continue
        if any(v in active for v in reads(op)):
            active.update(r for r in op.results if differentiable(r.type))
    return active


def remap(op, mapping: dict) -> None:
    """Replaces the values of ``mapping`` read by ``op`` or inside its regions."""
    for i, v in enumerate(op.operands):
        if v in mapping:
            op.operands[i] = mapping[v]
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                remap(as_op(inner), mapping)


def clone_block(src_block, mapping: dict) -> list:
    """Clones the ops of ``src_block`` but its terminator at the current insertion
    point, reading ``mapping``'s values for its arguments (and recording each clone's
    results in ``mapping``); returns the clones and the terminator's operands, mapped."""
    ops = [as_op(o) for o in src_block.operations]
    clones = []
    for op in ops[:-1]:
        clone = op.clone()
        remap(clone, mapping)
        for old, new in zip(op.results, clone.results):
            mapping[old] = new
        clones.append(clone)
    return clones, [mapping.get(v, v) for v in ops[-1].operands]


def sweep(parent: Adjoint, src_block, mapping: dict, cotangents: list, wanted: list) -> list:
    """The adjoints of ``wanted`` (values the block's ops read: its arguments, mapped, or
    values from outside) from one run of ``src_block``: its ops are recomputed at the
    current insertion point (a region of the adjoint op cannot see the primal region's
    values) and swept backward with ``cotangents`` for its terminator's operands. Zeros
    where nothing reaches a wanted value (non-float values get None)."""
    clones, yielded = clone_block(src_block, mapping)
    seeds = {v for v in wanted if v in parent.active or v in mapping.values()}
    active = parent.active | activity_of(clones, seeds | parent.active)
    child = Adjoint(parent.pass_name, parent.func_name, active)
    for value, ct in zip(yielded, cotangents):
        if ct is not None:
            child.add(value, ct)
    for op in reversed(clones):
        child.visit(op)
    parent.saved.extend(child.saved)
    out = []
    for v in wanted:
        if not differentiable(v.type):
            out.append(None)
            continue
        g = child.adjoint_of(v)
        out.append(g if g is not None else zeros(v.type))
    return out


# ---------------------------------------------------------------------------------------
# Builders the rules share
# ---------------------------------------------------------------------------------------

def float_constant(t, value: float, imaginary: float = 0.0):
    """A scalar constant of the float or complex type ``t``."""
    from aotc._mlir import arith, complex_dialect, ir

    if isinstance(t, ir.ComplexType):
        parts = [ir.FloatAttr.get(t.element_type, value),
                 ir.FloatAttr.get(t.element_type, imaginary)]
        return complex_dialect.ConstantOp(t, ir.ArrayAttr.get(parts)).result
    return arith.ConstantOp(t, ir.FloatAttr.get(t, value)).result


def by_type(real: str, complex_: str):
    """A builder of the arith op ``real`` on floats and the complex dialect's ``complex_``
    on complex values: the rules serve both (``complex.add``'s is ``arith.addf``'s)."""
    def build(*operands):
        from aotc._mlir import arith, complex_dialect, ir

        if isinstance(operands[0].type, ir.ComplexType):
            return getattr(complex_dialect, complex_)(*operands).result
        return getattr(arith, real)(*operands)
    return build


add_scalars = by_type("addf", "AddOp")


def zeros(t):
    """A tensor of type ``t`` filled with zeros."""
    from aotc._mlir import ir, linalg

    t = ir.RankedTensorType(t)
    empty = ir.Operation.create("tensor.empty", results=[t]).result
    return linalg.fill(float_constant(t.element_type, 0.0), outs=[empty])


def elementwise(result_type, inputs: list, body) -> object:
    """One parallel ``linalg.generic`` of ``inputs`` (all of ``result_type``'s shape)
    yielding ``body(*scalars)``."""
    from aotc._mlir import PARALLEL, affine_maps, dim_map, ir, iterator_types, linalg

    t = ir.RankedTensorType(result_type)
    identity = dim_map(t.rank, list(range(t.rank)))
    init = ir.Operation.create("tensor.empty", results=[t]).result
    g = linalg.GenericOp([t], list(inputs), [init], affine_maps([identity] * (len(inputs) + 1)),
                         iterator_types([PARALLEL] * t.rank))
    block = g.regions[0].blocks.append(*[element_type(v.type) for v in inputs], t.element_type)
    with ir.InsertionPoint(block):
        linalg.YieldOp([body(*block.arguments[:len(inputs)])])
    return g.results[0]


def add_tensors(a, b):
    from aotc._mlir import ir

    if not isinstance(a.type, ir.RankedTensorType):
        return add_scalars(a, b)
    if _alike_zero_pads(a, b):
        # Two slices' cotangents of one region (x[:, :3] read twice): their sum padded
        # once, half the work. IREE 3.13 failed to compile the two pads added after a
        # matmul that fused into one of them ("write affecting operations on global
        # resources are restricted to workgroup distributed contexts"), retrying the
        # whole module at a lower fusion level: the gradient of sum(cholesky(s @ s))
        # with s = x[:, :3] + x[:, :3].T.
        summed = add_tensors(as_op(a.owner).operands[0], as_op(b.owner).operands[0])
        pad = as_op(a.owner).clone(ip=ir.InsertionPoint.current)
        pad.operands[0] = summed
        return pad.results[0]
    return elementwise(a.type, [a, b], add_scalars)


def _alike_zero_pads(a, b) -> bool:
    """Are ``a`` and ``b`` zero paddings (static) of values of one type, by the same
    amounts?"""
    from aotc._mlir import ir

    pads = [as_op(v.owner) for v in (a, b) if isinstance(v, ir.OpResult)]
    if len(pads) != 2 or any(p.name != "tensor.pad" or len(p.operands) != 1 for p in pads):
        return False
    first, second = pads
    return (first.operands[0].type == second.operands[0].type
            and all(str(first.attributes[k]) == str(second.attributes[k])
                    for k in ("static_low", "static_high"))
            and all(_pads_with_zero(p) for p in pads))


def _pads_with_zero(pad) -> bool:
    from aotc._mlir import ir

    value = list(pad.regions[0].blocks[0].operations)[-1].operands[0]
    if not isinstance(value, ir.OpResult) or as_op(value.owner).name != "arith.constant":
        return False
    attr = as_op(value.owner).attributes["value"]
    return isinstance(attr, ir.FloatAttr) and attr.value == 0.0
