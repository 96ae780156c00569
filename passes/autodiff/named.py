"""Reverse-mode rules for linalg's structured ops: ``linalg.generic`` (the rule of
``generic.py``), and the named ops described as the generic they stand for
(``transpose``, ``broadcast``, ``copy``, the convolutions and poolings aotc has no
faster form for, through MLIR's ``linalg-generalize-named-ops``), except a plain (batch)
matmul, whose adjoints are named matmuls.
"""

from __future__ import annotations

from .. import opset
from . import convolution  # noqa: F401  (its rules first: the generalized rule takes the rest)
from ..base import as_op
from .builders import transposed
from .core import Adjoint, rule, zeros
from .generic import _of_generic, differentiate


@rule("linalg.generic")
def _generic(ad: Adjoint, op, adjoints: list) -> None:
    differentiate(ad, op, _of_generic(op), adjoints)


def _named_generic(op, maps: list, iterators: list, combine_body):
    """A detached-in-effect ``linalg.generic`` equivalent to the named ``op`` (same
    operands), built only to be read by the generic rule and erased after."""
    from aotc._mlir import affine_maps, iterator_types, linalg

    from .core import element_type

    operands = list(op.operands)
    n_in = len(operands) - len(op.results)  # destination style: one init per result
    ins, outs = operands[:n_in], operands[n_in:]
    g = linalg.GenericOp([v.type for v in outs], ins, outs, affine_maps(maps),
                         iterator_types(iterators))
    block = g.regions[0].blocks.append(*[element_type(v.type) for v in operands])
    from aotc._mlir import ir

    with ir.InsertionPoint(block):
        linalg.YieldOp([combine_body(*block.arguments)])
    return g


def _via_generic(ad: Adjoint, op, adjoints: list, maps, iterators, combine_body) -> None:
    _as_generic(ad, op, _named_generic(op, maps, iterators, combine_body), adjoints)


def _as_generic(ad: Adjoint, op, g, adjoints: list) -> None:
    """Differentiates ``op`` as ``g``, the generic it stands for (built only for this,
    erased after)."""
    s = _of_generic(g)
    s.results = list(op.results)
    try:
        differentiate(ad, op, s, adjoints)
    finally:
        g.erase()


def _multiply_add(a, b, acc):
    from aotc._mlir import arith

    if a.type != acc.type:
        a = arith.extf(acc.type, a)
    if b.type != acc.type:
        b = arith.extf(acc.type, b)
    return arith.addf(acc, arith.mulf(a, b))


def _explicit_maps(op):
    from aotc._mlir import ir

    if "indexing_maps" not in op.attributes:
        return None
    return [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _default_maps(rank: int) -> list:
    """A (batch) matmul's maps: ``(b..., i, k), (b..., k, j) -> (b..., i, j)``."""
    from aotc._mlir import dim_map

    n = rank + 1
    batch = list(range(rank - 2))
    i, j, k = rank - 2, rank - 1, rank
    return [dim_map(n, batch + [i, k]), dim_map(n, batch + [k, j]), dim_map(n, batch + [i, j])]


def _named_products(ad: Adjoint, op, adjoints: list, builder) -> bool:
    """A plain (batch) matmul's adjoints as named (batch) matmuls with a transposed
    operand: ``da = ct @ b^T``, ``db = a^T @ ct``. IREE's matmul code runs them about
    twice as fast as the same contraction written as a generic. False where the op has
    explicit maps or mixed element types (the generic rule handles those)."""
    from aotc._mlir import ir

    a, b, init = op.operands[0], op.operands[1], op.operands[2]
    ct = adjoints[0]
    types = {ir.RankedTensorType(v.type).element_type for v in (a, b, init)}
    rank = ir.RankedTensorType(a.type).rank
    if ct is None or len(types) != 1 or _explicit_maps(op) not in (None, _default_maps(rank)):
        return False
    swap = list(range(rank - 2)) + [rank - 1, rank - 2]

    if a in ad.active:
        ad.add(a, builder(ct, transposed(b, swap), outs=[zeros(a.type)]))
    if b in ad.active:
        ad.add(b, builder(transposed(a, swap), ct, outs=[zeros(b.type)]))
    if init in ad.active:
        ad.add(init, ct)
    return True


@rule("linalg.matmul")
def _matmul(ad: Adjoint, op, adjoints: list) -> None:
    from aotc._mlir import PARALLEL, REDUCTION, linalg

    if _named_products(ad, op, adjoints, linalg.matmul):
        return
    maps = _explicit_maps(op) or _default_maps(2)
    _via_generic(ad, op, adjoints, maps, [PARALLEL, PARALLEL, REDUCTION], _multiply_add)


@rule("linalg.batch_matmul")
def _batch_matmul(ad: Adjoint, op, adjoints: list) -> None:
    from aotc._mlir import PARALLEL, REDUCTION, linalg

    if _named_products(ad, op, adjoints, linalg.batch_matmul):
        return
    maps = _explicit_maps(op) or _default_maps(3)
    _via_generic(ad, op, adjoints, maps, [PARALLEL] * 3 + [REDUCTION], _multiply_add)


@rule("linalg.transpose")
def _transpose(ad: Adjoint, op, adjoints: list) -> None:
    from aotc._mlir import PARALLEL, dim_map, ir

    perm = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
    inverse = [perm.index(p) for p in range(len(perm))]
    rank = len(perm)
    _via_generic(ad, op, adjoints, [dim_map(rank, inverse), dim_map(rank, list(range(rank)))],
                 [PARALLEL] * rank, lambda x, acc: x)


@rule("linalg.broadcast")
def _broadcast(ad: Adjoint, op, adjoints: list) -> None:
    from aotc._mlir import PARALLEL, dim_map, ir

    added = set(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
    rank = ir.RankedTensorType(op.results[0].type).rank
    kept = [d for d in range(rank) if d not in added]
    _via_generic(ad, op, adjoints, [dim_map(rank, kept), dim_map(rank, list(range(rank)))],
                 [PARALLEL] * rank, lambda x, acc: x)


@rule("linalg.copy")
def _copy(ad: Adjoint, op, adjoints: list) -> None:
    from aotc._mlir import PARALLEL, dim_map, ir

    rank = ir.RankedTensorType(op.results[0].type).rank
    identity = dim_map(rank, list(range(rank)))
    _via_generic(ad, op, adjoints, [identity, identity], [PARALLEL] * rank, lambda x, acc: x)


def _generalized(op):
    """The ``linalg.generic`` a named op stands for, built at the current insertion point
    on the op's operands: MLIR's ``linalg-generalize-named-ops`` run on a copy of the op
    in a scratch module (the maps of every convolution and pooling layout, strides and
    dilations included, come from its definition, not from a table here)."""
    from aotc._mlir import func, ir, passmanager

    operands = list(op.operands)
    with ir.Location.unknown():
        scratch = ir.Module.create()
        with ir.InsertionPoint(scratch.body):
            fn = func.FuncOp("named", ([v.type for v in operands], [r.type for r in op.results]))
            entry = fn.add_entry_block()
            with ir.InsertionPoint(entry):
                copy = op.clone()
                for i, arg in enumerate(entry.arguments):
                    copy.operands[i] = arg
                func.ReturnOp(list(copy.results))
    passmanager.PassManager.parse(
        "builtin.module(func.func(linalg-generalize-named-ops))").run(scratch.operation)
    generic = next(as_op(o) for o in entry.operations if as_op(o).name == "linalg.generic")
    g = generic.clone()
    for i, v in enumerate(operands):
        g.operands[i] = v
    return g


# Every contraction of the vocabulary without a rule of its own (convolution.py has the
# channels-last convolutions): differentiated as its generalized generic.
@rule(*sorted(n for n in opset.CONTRACTION_OPS if opset.rule_of("vjp", n) is None))
def _named_contraction(ad: Adjoint, op, adjoints: list) -> None:
    """Convolutions and poolings: the generic rule on their generalized form (a filter's
    adjoint is a contraction, an input's a scatter of its contributions)."""
    _as_generic(ad, op, _generalized(op), adjoints)


@rule("linalg.fill")
def _fill(ad: Adjoint, op, adjoints: list) -> None:
    if op.operands[0] in ad.active:
        ad.refuse(op, "it fills a tensor with a scalar that depends on a differentiated "
                      "argument; broadcast a 0-d array instead")
    # The init is overwritten: no adjoint flows to it.

