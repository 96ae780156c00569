"""aotc-expose-kernels and aotc-guard-kernels: the same factorization of the same matrix
runs once.

A derivative computes a factorization several times over: ``grad`` of ``slogdet`` has
the forward LU, its rule's LU and the LU of the inverse the rule needs, all of the same
matrix; a program computing ``solve(a, b)`` and ``det(a)`` factors ``a`` twice too. The
copies are identical, but ``cse`` cannot see it: every sequential kernel
(``aotc/ops/sequential.py``) reads its inputs through a ``util.optimization_barrier``
(marked ``aotc.kernel_input``) and gives its results of several through another (marked
``aotc.kernel_results``), and a barrier is never merged with another, nor anything that
reads one.

So, around one ``cse`` (``SHARE_KERNELS``):

- aotc-expose-kernels turns each input barrier into a ``tensor.cast`` to the same type
  with the same mark (which ``cse`` merges like any pure op), lets the readers of a
  results barrier read its operands, and gives each kernel its own copies of the
  ``tensor.empty`` ops it reads, at the start of its body, numbered by first use
  (``aotc.kernel_leaf``: ``cse`` merged some with equal ops before the region earlier,
  differently in each copy, and would merge two scratch tensors). ``cse``
  then merges identical kernel regions (a region of pure ops is pure) and, in the same
  walk, whatever the blocked algorithm computes from their results, down to the next
  kernel.
- aotc-guard-kernels puts the barriers back: each marked cast becomes a marked barrier
  again, the numbers go, and each exposed kernel region (marked ``aotc.kernel_exposed``
  meanwhile) of several results gives them through one marked barrier (readers read
  its results), as ``sequential.build`` made them.

Exposing is skipped when no kernel name occurs twice (nothing could merge). Invariants:
values are unchanged; after the guard every kernel input is a barrier's result and every
kernel of several results is read through one marked barrier; running the pair twice
changes nothing more.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

from .base import ModulePass, as_op, collect_ops, register
from .kernel_barriers import MARK as RESULTS_MARK
from .kernel_roots import KERNEL

INPUT_MARK = "aotc.kernel_input"  # sequential.build's barrier over each kernel input
EXPOSED = "aotc.kernel_exposed"  # on the regions whose results barrier the guard rebuilds


def _kernel_regions(module) -> list:
    return [op for op, _ in collect_ops(module, lambda o: as_op(o).name == "flow.dispatch.region"
                                        and KERNEL in as_op(o).attributes)]


def _marked(op, name: str, mark: str) -> bool:
    op = as_op(op)
    return op.name == name and mark in op.attributes


def _replace(op, name: str, mark: str) -> None:
    """``op`` (one operand, one result, ``mark``ed) as a ``name`` op of the same operand,
    type and mark."""
    from aotc._mlir import ir

    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create(name, results=[op.results[0].type], operands=[op.operands[0]],
                                  attributes={mark: ir.UnitAttr.get()})
    op.results[0].replace_all_uses_with(new.results[0])
    op.erase()


# The tensor.empty ops a kernel reads. ``cse`` may already have replaced a kernel's own by
# an equal one before its region, so two copies of a kernel can differ by what preceded
# them; and ``cse`` would merge two scratch tensors of one type in a kernel (which IREE
# then copies, on the stack). (Constants are no such case: canonicalization has put them
# all at the function's start, before every kernel.)
LEAF_MARK = "aotc.kernel_leaf"


def _is_leaf(op) -> bool:
    return op.name == "tensor.empty" and len(op.operands) == 0


def _internalize_leaves(region) -> None:
    """Each ``tensor.empty`` ``region`` reads (its own at any depth, or one before it) as a
    copy at the start of its body, numbered by first use (``LEAF_MARK``): the same in
    every copy of a kernel, and equal to nothing else for ``cse``."""
    from aotc._mlir import ir

    uses: dict = {}  # leaf op -> [(reader, operand number)], in first-use order
    own = []

    def visit(op):
        op = as_op(op)
        if _is_leaf(op):
            own.append(op)
        for number, value in enumerate(op.operands):
            if isinstance(value, ir.OpResult) and _is_leaf(as_op(value.owner)):
                uses.setdefault(as_op(value.owner), []).append((op, number))
        return ir.WalkResult.ADVANCE

    for block in region.regions[0].blocks:
        for op in block.operations:
            as_op(op).walk(visit, ir.WalkOrder.PRE_ORDER)
    body = region.regions[0].blocks[0]
    start = ir.InsertionPoint.at_block_begin(body)
    for k, (leaf, readers) in enumerate(uses.items()):
        copy = leaf.clone(ip=start)
        copy.attributes[LEAF_MARK] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k)
        for reader, number in readers:
            reader.operands[number] = copy.results[0]
    for leaf in own:
        if leaf in uses:  # replaced by its copy
            leaf.erase()


@register
@dataclass(frozen=True)
class ExposeKernels(ModulePass):
    """Kernel barriers as ops ``cse`` can merge (the module docstring)."""

    name = "aotc-expose-kernels"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        from aotc._mlir import ir

        regions = [as_op(op) for op in _kernel_regions(module)]
        names = collections.Counter(ir.StringAttr(op.attributes[KERNEL]).value
                                    for op in regions)
        if not any(count > 1 for count in names.values()):
            return
        for op in regions:
            op.attributes[EXPOSED] = ir.UnitAttr.get()
            _internalize_leaves(op)
        for op, _ in collect_ops(module, lambda o: _marked(o, "util.optimization_barrier",
                                                           INPUT_MARK)):
            _replace(as_op(op), "tensor.cast", INPUT_MARK)
        for op, _ in collect_ops(module, lambda o: _marked(o, "util.optimization_barrier",
                                                           RESULTS_MARK)):
            op = as_op(op)
            for result, operand in zip(op.results, op.operands):
                result.replace_all_uses_with(operand)
            op.erase()


@register
@dataclass(frozen=True)
class GuardKernels(ModulePass):
    """Kernel barriers back in place (the module docstring)."""

    name = "aotc-guard-kernels"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        from aotc._mlir import ir

        for op, _ in collect_ops(module, lambda o: _marked(o, "tensor.cast", INPUT_MARK)):
            _replace(as_op(op), "util.optimization_barrier", INPUT_MARK)
        for region in _kernel_regions(module):
            region = as_op(region)
            if EXPOSED not in region.attributes:
                continue
            del region.attributes[EXPOSED]
            for leaf, _ in collect_ops(region, lambda o: LEAF_MARK in as_op(o).attributes):
                del as_op(leaf).attributes[LEAF_MARK]
            results = list(region.results)
            if len(results) < 2:
                continue
            readers = [[(as_op(use.owner), use.operand_number) for use in r.uses]
                       for r in results]
            with ir.InsertionPoint.after(region), region.location:
                guard = ir.Operation.create(
                    "util.optimization_barrier", results=[r.type for r in results],
                    operands=results, attributes={RESULTS_MARK: ir.UnitAttr.get()})
            for value, uses in zip(guard.results, readers):
                for reader, number in uses:
                    reader.operands[number] = value


# The pipeline that shares identical kernels (and what they feed).
SHARE_KERNELS = (ExposeKernels(), "cse", GuardKernels())
