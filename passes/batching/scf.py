"""Batching rules for ``scf`` control flow.

Registered in ``RULES`` on import (see ``core``). A control-flow op is rewritten only
when something it reads (an operand or a value its regions capture) is batched; then
every result and loop-carried value is batched (unbatched ones are broadcast where they
meet), which keeps the rules simple and costs a broadcast at most.

- ``scf.if`` with an unbatched condition stays an ``scf.if`` over batched branches; with a
  batched condition both branches run and each lane selects its branch's results.
- ``scf.index_switch`` likewise (an unbatched index becomes a chain of ``scf.if``); a
  batched index runs every case and selects per lane.
- ``scf.for`` keeps its (unbatched) bounds and batches its body and carried values.
- ``scf.while`` with a batched condition runs until every lane is done: the body
  computes the lanes' own conditions again from the forwarded values, and a finished
  lane keeps its values.
"""

from __future__ import annotations

from .core import Batched, Batcher, as_op, lane_generic, lanewise, refuse, rule


def _region_block(op, k: int):
    return op.regions[k].blocks[0]


def _keep_attributes(old, new) -> None:
    """Dialect attributes of the original op (``stream.affinity``: without it IREE copies
    every loop-carried tensor on each iteration) go on its batched replacement."""
    for name in [getattr(a, "name", a) for a in old.attributes]:
        if "." in name:
            new.operation.attributes[name] = old.attributes[name]


def _yield_batched(bt: Batcher, values: list[Batched]) -> None:
    from aotc._mlir import scf

    scf.YieldOp([bt.to_batched(b) for b in values])


def select_lanes(bt: Batcher, lanes, on_true, on_false):
    """Per lane ``lanes ? on_true : on_false`` (``lanes``: a batched ``i1`` scalar, the
    values: batched values of one type)."""
    from aotc._mlir import arith, ir

    t = ir.RankedTensorType(on_true.type)
    init = bt.new_empty(list(t.shape), t.element_type, bt.dynamic_sizes())
    return lane_generic([t], [(lanes, True), (on_true, False), (on_false, False)], [init],
                        lambda lane, a, b, _: [arith.select(lane, a, b)])[0]


def _any_lane(bt: Batcher, lanes):
    """``i1``: whether any lane of a batched ``i1`` scalar is true."""
    from aotc._mlir import (
        REDUCTION,
        affine_maps,
        arith,
        dim_map,
        ir,
        iterator_types,
        linalg,
        tensor,
    )

    i1 = ir.IntegerType.get_signless(1)
    false = arith.ConstantOp(i1, 0).result
    init = linalg.fill(false, outs=[bt.new_empty([], i1, [])])
    g = linalg.GenericOp([init.type], [lanes], [init],
                         affine_maps([dim_map(1, [0]), dim_map(1, [])]),
                         iterator_types([REDUCTION]))
    block = g.regions[0].blocks.append(i1, i1)
    with ir.InsertionPoint(block):
        linalg.YieldOp([arith.ori(block.arguments[0], block.arguments[1])])
    return tensor.extract(g.results[0], [])


def _inline_regions(bt: Batcher, op) -> list[list[Batched]]:
    """Every region of ``op`` rebuilt at the current insertion point; their yields."""
    return [bt.batch_block(_region_block(op, k), None, []) if len(op.regions[k].blocks) else []
            for k in range(len(op.regions))]


def _select_chain(bt: Batcher, conditions: list, branches: list[list[Batched]],
                  fallback: list[Batched]):
    """Per lane, the results of the first branch whose condition holds, else ``fallback``."""
    results = [bt.to_batched(b) for b in fallback]
    for cond, values in reversed(list(zip(conditions, branches))):
        results = [select_lanes(bt, cond, bt.to_batched(v), r) for v, r in zip(values, results)]
    return [Batched(r, True) for r in results]


@rule("scf.if")
def _if(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir, scf

    (cond,) = operands
    if len(op.regions[1].blocks) == 0 and len(op.results):
        refuse(bt, op, "an scf.if with results and no else branch")
    if cond.batched:
        then_values, *rest = _inline_regions(bt, op)
        return _select_chain(bt, [cond.value], [then_values], rest[0] if rest else [])
    types = [bt.batched_type(r.type) for r in op.results]
    has_else = len(op.regions[1].blocks) > 0
    new = scf.IfOp(cond.value, types, has_else=has_else)
    _keep_attributes(op, new)
    for k, block in enumerate([new.then_block] + ([new.else_block] if has_else else [])):
        with ir.InsertionPoint(block):
            _yield_batched(bt, bt.batch_block(_region_block(op, k), None, []))
    return [Batched(r, True) for r in new.results]


@rule("scf.index_switch")
def _index_switch(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import arith, ir

    (index,) = operands
    cases = list(ir.DenseI64ArrayAttr(op.attributes["cases"]))
    if index.batched:
        # Region 0 is the default; regions 1.. are the cases in order.
        default, *case_values = _inline_regions(bt, op)
        conditions = []
        for c in cases:
            def equals(i, _c=c):
                case = arith.ConstantOp(ir.IndexType.get(), _c).result
                return [arith.cmpi(arith.CmpIPredicate.eq, i, case)]
            lanes = lanewise(bt, [index], [op.operands[0].type],
                             [ir.IntegerType.get_signless(1)], equals)
            conditions.append(lanes[0].value)
        return _select_chain(bt, conditions, case_values, default)
    # A chain of scf.if on `index == case`: IREE 3.13 cannot resolve the result sizes of
    # an scf.index_switch whose results have a dynamic (batch) dimension.
    types = [bt.batched_type(r.type) for r in op.results]
    return [Batched(r, True) for r in _if_chain(bt, op, index.value, cases, 0, types)]


def _if_chain(bt: Batcher, op, index, cases: list[int], k: int, types) -> list:
    from aotc._mlir import arith, ir, scf

    if k == len(cases):  # the default region
        return [bt.to_batched(b) for b in bt.batch_block(_region_block(op, 0), None, [])]
    case = arith.ConstantOp(ir.IndexType.get(), cases[k]).result
    new = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, index, case), types, has_else=True)
    _keep_attributes(op, new)
    with ir.InsertionPoint(new.then_block):
        _yield_batched(bt, bt.batch_block(_region_block(op, k + 1), None, []))
    with ir.InsertionPoint(new.else_block):
        scf.YieldOp(_if_chain(bt, op, index, cases, k + 1, types))
    return list(new.results)


@rule("scf.for")
def _for(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir, scf

    lower, upper, step, *inits = operands
    if lower.batched or upper.batched or step.batched:
        refuse(bt, op, "a loop whose bounds differ per example (write it with "
                        "aotc.lax.while_loop, which the batching pass masks per example)")
    new = scf.ForOp(lower.value, upper.value, step.value, [bt.to_batched(b) for b in inits])
    _keep_attributes(op, new)
    with ir.InsertionPoint(new.body):
        _yield_batched(bt, bt.batch_block(_region_block(op, 0), new.body,
                                          [False] + [True] * len(inits)))
    return [Batched(r, True) for r in new.results]


def _forwarded_positions(before) -> list:
    """For each argument of a while loop's condition region, the position at which
    ``scf.condition`` forwards it unchanged (None if it does not)."""
    forwarded = list(as_op(list(before.operations)[-1]).operands)[1:]
    return [next((j for j, v in enumerate(forwarded) if v == arg), None)
            for arg in before.arguments]


@rule("scf.while")
def _while(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir, scf

    before, after = _region_block(op, 0), _region_block(op, 1)
    inits = [bt.to_batched(b) for b in operands]
    carried = [bt.batched_type(a.type) for a in before.arguments]
    forwarded = [bt.batched_type(r.type) for r in op.results]
    # Every region keeps the loop's signature: a while whose body took the lanes'
    # conditions as one more forwarded value made IREE 3.13's stream conversion abort
    # the compiler ("LLVM ERROR: out of memory"), so the body computes them again from
    # the forwarded values, which hold every carried value.
    new = scf.WhileOp(forwarded, inits)
    _keep_attributes(op, new)
    new_before = new.before.blocks.append(*carried)
    new_after = new.after.blocks.append(*forwarded)
    with ir.InsertionPoint(new_before):
        cond, *values = bt.batch_block(before, new_before, [True] * len(carried))
        # A finished lane must keep its carried values, so each must reach the body: as
        # one of the forwarded values, unchanged (a nested vmap forwards more besides).
        forwarded_from = _forwarded_positions(before)
        if cond.batched and None in forwarded_from:
            refuse(bt, op, "a while loop with a per-example condition whose condition "
                            "region does not pass every carried value through unchanged")
        go = _any_lane(bt, bt.to_batched(cond)) if cond.batched else cond.value
        scf.ConditionOp(go, [bt.to_batched(v) for v in values])
    with ir.InsertionPoint(new_after):
        state = list(new_after.arguments)
        if cond.batched:
            for old, j in zip(before.arguments, forwarded_from):
                bt.env[old] = Batched(state[j], True)
            lanes = bt.to_batched(bt.batch_block(before, None, [])[0])
        results = bt.batch_block(after, new_after, [True] * len(forwarded))
        stepped = [bt.to_batched(b) for b in results]
        if cond.batched:
            # A finished lane keeps its values; the others take the step.
            stepped = [select_lanes(bt, lanes, s, state[j])
                       for s, j in zip(stepped, forwarded_from)]
        scf.YieldOp(stepped)
    return [Batched(r, True) for r in new.results]
