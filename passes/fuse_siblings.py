"""aotc-fuse-siblings: independent generics over one iteration domain become one
multi-result ``linalg.generic``.

IREE 3.13 fuses producers into consumers, never siblings: each reduction is its own
dispatch, and so is each elementwise result only the return reads. A function computing
many of them over the same data (``x.min(1), x.max(1), x.sum(1)``; ``{"exp": exp(x),
"sin": sin(x), ...}``) is one dispatch each: each is code generated, launched and reads
its inputs on its own. This pass merges, per group, the generics that

- share an iteration domain: the same loop ranges, iterator types and output maps;
- are reductions (dispatch roots in IREE: their elementwise producers and consumers
  still fuse into the merged one) over an outer loop or a small domain
  (``SMALL_REDUCTION``), or are all-parallel with results only the return uses (an
  elementwise op read by another is left for IREE to fuse into its reader); a
  reduction whose result reaches a ``linalg.transpose`` stays apart (IREE 3.13's
  transpose propagation crashes on a multi-result producer);
- do not depend on one another, directly or through other groups;

into one generic whose inputs are the union of theirs (an input read the same way by
several is read once) and whose body is their bodies side by side; the block is then
put back in an order where each op follows what it reads.

Measured on the CPU (2 cores, float32, interleaved medians, merged / separate):
20 unary functions of one [64, 65] array compiled in 0.87 s of CPU instead of 1.86 s;
the statistics test's module (74 reductions) in 95 -> 56 dispatches, 7.3 -> 5.0 s; the
unsigned reductions test's in 197 -> 37 dispatches, 9.4 -> 3.6 s. At run time, [2048,
2048]: mean, mean of squares and max of |x| over axis 0 0.36x, min and max over axis 0
0.66x; [256, 256]: the same 0.52x and 0.86x. Row and full reductions were neutral
(0.93-1.05x) where they merge (up to ``SMALL_REDUCTION`` iterations) and up to 1.6x
slower at [256, 256] (min and max over axis 1): those stay apart.

A group is bounded by ``MAX_OPERANDS`` (each operand is a binding of the dispatch, which
GPUs cap). Bodies holding ops with regions are left alone. The compiler runs the pass
twice (``build.finish_module``): reductions before the in-place analysis of donation, in
every function, so that donating an argument never changes which reductions merge (a
merged reduction may sum in another order: results with and without donation stay bit
for bit the same); returned elementwise results after it, in functions without a
donated argument (the analysis pairs a donated argument with one result of an op, and
merging those never changes a value). A function whose arguments are already paired
with results (``iree.abi.output``) is left alone.

Invariants: the merged op computes each result as before (its body ops are clones, in
order); every op still follows its operands; running the pass twice changes nothing
more (a merged generic has no independent sibling left to take).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

from .base import (ModulePass, as_op, bool_option, loop_ranges, nested_operands,
                   operand_segments, read_downstream, register)
from .opset import RESHAPE_OPS
from .donation.function import OUTPUT, arg_dicts, functions

MAX_OPERANDS = 16
# Reductions merge where it was measured not to slow the call (the module docstring):
# over an outer loop (the innermost loop is parallel: each vector of the input is read
# once for all of them), or over at most this many iterations.
SMALL_REDUCTION = 1 << 14
# A generic may join one of the last few groups of its domain only: the search for the
# groups that reach it then looks back over a bounded stretch of the function, not the
# whole of it (a 300-step unrolled loop took 9 s with every group open).
RECENT_GROUPS = 8


def _domain(op, ret) -> tuple | None:
    """The group key of a generic this pass may merge, None for any other op."""
    from aotc._mlir import ir

    if op.name != "linalg.generic":
        return None
    n_ins, n_outs = operand_segments(op)
    values = list(op.operands)
    if not all(isinstance(v.type, ir.RankedTensorType) for v in values):
        return None
    maps = [ir.AffineMapAttr(m).value for m in op.attributes["indexing_maps"]]
    out_maps = {str(m) for m in maps[n_ins:]}
    if len(out_maps) != 1:
        return None
    body = op.regions[0].blocks[0]
    if any(len(as_op(b).regions) for b in body.operations):
        return None
    iterators = tuple(str(it) for it in op.attributes["iterator_types"])
    reduction = any("reduction" in it for it in iterators)
    if not reduction:
        if str(maps[n_ins]) != str(ir.AffineMap.get_identity(maps[n_ins].n_dims)):
            return None  # the iteration domain is the output's shape
        if any(list(body.arguments[n_ins + i].uses) for i in range(n_outs)):
            return None  # reads its output's old value: keep its own outs
        if not all(as_op(use.owner) == ret for r in op.results for use in r.uses):
            return None
        if any(_returned(v, ret) for v in values[:n_ins]):
            # merged, IREE 3.13 returned another result's values for the returned input
            # (cos(fmod(x, x)) returned and read by a merged fmin: NaNs, fuzzer
            # programs 49556+49560+49562)
            return None
    ranges = tuple(loop_ranges(op))
    if None in ranges or 0 in ranges:
        return None  # IREE 3.13's CPU tiling divides by zero on a merged empty reduction
    if reduction and "parallel" not in iterators[-1] and math.prod(ranges) > SMALL_REDUCTION:
        return None
    if reduction and _feeds_transpose(op):
        return None  # IREE 3.13's transpose propagation crashes on a multi-result producer
    return (reduction, ranges, iterators, out_maps.pop())


def _returned(value, ret) -> bool:
    """Is ``value``, or a reshape of it, returned?"""
    stack = [value]
    while stack:
        for use in stack.pop().uses:
            owner = as_op(use.owner)
            if owner == ret:
                return True
            if owner.name in RESHAPE_OPS:
                stack.extend(owner.results)
    return False


def _feeds_transpose(op) -> bool:
    """Whether a ``linalg.transpose`` reads a result of ``op``, directly or through
    reshapes and elementwise generics (IREE moves transposes up through those)."""
    return read_downstream(op, lambda user: user.name == "linalg.transpose")


def _predecessors(ops: list) -> list[set[int]]:
    """For each op of a block, the positions of the ops of that block whose results it
    (or an op nested in it) reads."""
    from aotc._mlir import ir

    position = {}
    for i, op in enumerate(ops):
        for r in op.results:
            position[r] = i
    preds = []
    for op in ops:
        preds.append({position[v] for v in nested_operands(op)
                      if isinstance(v, ir.OpResult) and v in position})
    return preds


def _groups(ops: list, ret, reductions: bool, returned: bool) -> list[list[int]]:
    """Positions of the ops to merge, one list per group. A generic joins the first of
    the ``RECENT_GROUPS`` latest groups of its domain that does not reach it (in the
    graph where each group is one node: merging it then cannot make a cycle) and has
    room for its operands."""
    preds = _predecessors(ops)
    group_of: dict[int, int] = {}
    members: list[list[int]] = []
    by_key: dict[tuple, list[int]] = {}  # the groups of each domain, oldest first
    counts: list[int] = []
    for i, op in enumerate(ops):
        key = _domain(op, ret)
        if key is None or not (reductions if key[0] else returned):
            continue
        open_groups = [g for g in by_key.get(key, ())
                       if counts[g] + len(op.operands) <= MAX_OPERANDS][-RECENT_GROUPS:]
        chosen = None
        if open_groups:
            reached = _reached_groups(i, preds, group_of, members,
                                      _horizon(min(members[g][0] for g in open_groups),
                                               members))
            chosen = next((g for g in open_groups if g not in reached), None)
        if chosen is None:
            chosen = len(members)
            members.append([])
            by_key.setdefault(key, []).append(chosen)
            counts.append(0)
        members[chosen].append(i)
        group_of[i] = chosen
        counts[chosen] += len(op.operands)  # shared inputs are counted per user: a bound
    return [m for m in members if len(m) > 1]


def _horizon(first: int, members: list[list[int]]) -> int:
    """How far back a path from a group with no member before ``first`` can lead: along
    reads positions only grow, but a path may enter a group at a late member and leave it
    at an early one, so a group with members on both sides moves the horizon back to its
    first member (and so on, until no group spans it).

    >>> _horizon(5, [[0, 1], [2, 7], [6, 8]])  # [2, 7] spans 5
    2
    >>> _horizon(5, [[0, 3], [2, 7]])  # then [0, 3] spans 2
    0
    """
    moved = True
    while moved:
        moved = False
        for group in members:
            if group[0] < first <= group[-1]:
                first, moved = group[0], True
    return first


def _reached_groups(start: int, preds, group_of, members, first: int) -> set[int]:
    """The groups from which op ``start`` is reachable, looking back no further than
    position ``first`` (a ``_horizon``: no path from the groups asked about goes before
    it). Op 4 below reads op 1, which reads op 0 of group 0, whose op 3 reads group 1:
    merged, group 1 would read itself through op 4 (found by the full test tables of
    gradients: a multi-result generic used before its operands were defined).

    >>> preds = [set(), {0}, set(), {2}, {1}]
    >>> members, group_of = [[0, 3], [2]], {0: 0, 3: 0, 2: 1}
    >>> sorted(_reached_groups(4, preds, group_of, members, _horizon(2, members)))
    [0, 1]
    """
    reached, seen, stack = set(), set(), list(preds[start])
    while stack:
        i = stack.pop()
        if i in seen or i < first:
            continue
        seen.add(i)
        g = group_of.get(i)
        if g is not None and g not in reached:
            reached.add(g)
            for j in members[g]:  # a group reads what each of its members reads
                stack.extend(preds[j])
        stack.extend(preds[i])
    return reached


def _reorder(block, order: list[int]) -> None:
    """Moves the ops of ``block`` into an order where each follows the ops it reads,
    keeping the order of their ranks (``order``, one per op) wherever the reads allow."""
    ops = [as_op(o) for o in block.operations]
    ret, ops = ops[-1], ops[:-1]
    preds = _predecessors(ops)
    users: list[list[int]] = [[] for _ in ops]
    waiting = [len(p) for p in preds]
    for i, p in enumerate(preds):
        for j in p:
            users[j].append(i)
    ready = [(order[k], k) for k in range(len(ops)) if not waiting[k]]
    heapq.heapify(ready)
    while ready:
        _, k = heapq.heappop(ready)
        ops[k].move_before(ret)
        for u in users[k]:
            waiting[u] -= 1
            if not waiting[u]:
                heapq.heappush(ready, (order[u], u))


def _merge(group: list, ret):
    from aotc._mlir import ir

    ins, in_maps, in_index = [], [], {}  # (value, map text) -> position in ins
    outs, out_maps, yields_of = [], [], []
    plans = []
    for op in group:
        n_ins, n_outs = operand_segments(op)
        maps = list(op.attributes["indexing_maps"])
        positions = []
        for value, m in zip(list(op.operands)[:n_ins], maps[:n_ins]):
            key = (value, str(m))
            if key not in in_index:
                in_index[key] = len(ins)
                ins.append(value)
                in_maps.append(m)
            positions.append(in_index[key])
        first_out = len(outs)
        outs.extend(list(op.operands)[n_ins:])
        out_maps.extend(maps[n_ins:])
        plans.append((op, n_ins, positions, first_out))
    element_types = [ir.RankedTensorType(v.type).element_type for v in ins + outs]
    result_types = [v.type for v in outs]
    iterators = group[0].attributes["iterator_types"]
    with ir.InsertionPoint(ret), group[0].location:  # the first op's user line
        merged = ir.Operation.create(
            "linalg.generic", results=result_types, operands=ins + outs,
            attributes={
                "indexing_maps": ir.ArrayAttr.get(in_maps + out_maps),
                "iterator_types": iterators,
                "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(ins), len(outs)]),
            },
            regions=1)
        block = merged.regions[0].blocks.append(*element_types)
    with ir.InsertionPoint(block), group[0].location:
        for op, n_ins, positions, first_out in plans:
            old = op.regions[0].blocks[0]
            mapping = {}
            for i, pos in enumerate(positions):
                mapping[old.arguments[i]] = block.arguments[pos]
            for j in range(len(op.results)):
                mapping[old.arguments[n_ins + j]] = block.arguments[len(ins) + first_out + j]
            for body_op in old.operations:
                body_op = as_op(body_op)
                if body_op.name == "linalg.yield":
                    yields_of.append([mapping.get(v, v) for v in body_op.operands])
                    continue
                clone = body_op.clone(ip=ir.InsertionPoint(block))
                for k, v in enumerate(clone.operands):
                    if v in mapping:
                        clone.operands[k] = mapping[v]
                for a, b in zip(body_op.results, clone.results):
                    mapping[a] = b
        ir.Operation.create("linalg.yield", operands=[v for ys in yields_of for v in ys])
    k = 0
    for op in group:
        for r in op.results:
            r.replace_all_uses_with(merged.results[k])
            k += 1
        op.erase()
    return merged


@register
@dataclass(frozen=True)
class FuseSiblings(ModulePass):
    """Merges independent generics over one domain (see the module docstring)."""

    name = "aotc-fuse-siblings"
    # Which generics merge: reductions (for CPU code only: IREE's GPU reduction
    # pipelines are not measured on merged reductions), all-parallel returned ones.
    reductions: bool = True
    returned: bool = True

    @classmethod
    def from_options(cls, options):
        return cls(**{name: bool_option(options, name, True)
                      for name in ("reductions", "returned")})

    def run(self, module) -> None:
        for func in functions(module):
            if any(OUTPUT in d for d in arg_dicts(func)):
                continue
            block = func.regions[0].blocks[0]
            ops = [as_op(o) for o in block.operations]
            ret = ops[-1]
            groups = _groups(ops[:-1], ret, self.reductions, self.returned)
            if not groups:
                continue
            for group in groups:
                _merge([ops[i] for i in group], ret)
            # The block now holds the ops no group took, in their order, then the
            # merged ones in the order of their groups: each ranks where its first was.
            grouped = {i for group in groups for i in group}
            _reorder(block, [i for i in range(len(ops) - 1) if i not in grouped]
                     + [group[0] for group in groups])
