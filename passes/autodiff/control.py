"""Reverse-mode rules for structured control flow: ``scf.if`` (``lax.cond``,
``lax.switch``) and ``scf.for`` with a static trip count (``lax.fori_loop``, ``lax.scan``).

A region's adjoint cannot read the values its primal region computed (they do not
dominate it), so each adjoint region recomputes its primal region from the values it
entered with and sweeps it backward (``core.sweep``).

- ``scf.if``: the adjoint is an ``scf.if`` on the same condition whose branches return
  the adjoints of the outside values the primal branches read.
- ``scf.for``: a recording loop runs the body again and stores each iteration's carried
  values in a tape (one ``(trips, ...)`` tensor per carry; a carry the body only writes
  slices into, as ``scan``'s stacked outputs, is not stored: its adjoint needs no values),
  then a reverse loop walks the iterations last to first, reading the carries back,
  recomputing the body and sweeping it backward; the carries' adjoints and those of the
  outside values the body reads are its loop-carried values. Memory: the carries of every
  iteration, as JAX's scan.
- ``scf.while`` (``lax.while_loop``, a ``fori_loop`` with traced bounds) is refused: its
  trip count is unknown when the tape is sized (JAX refuses it too).
"""

from __future__ import annotations

from ..base import as_op, constant_index
from .core import (Adjoint, add_tensors, clone_block, differentiable, reads, region_reads, rule,
                   sweep, zeros)
from .tensor import extract_slice, insert_slice


def _outside_reads(ad: Adjoint, op) -> list:
    """The active floating-point values from outside ``op`` its regions read, once each
    in order."""
    seen, out = set(), []
    for v in region_reads(op):
        if v in seen:
            continue
        seen.add(v)
        if v in ad.active and differentiable(v.type):
            out.append(v)
    return out


@rule("scf.if")
def _if(ad: Adjoint, op, adjoints: list) -> None:
    from aotc._mlir import ir, scf

    captured = _outside_reads(ad, op)
    if not captured:
        return
    branch = scf.IfOp(op.operands[0], [v.type for v in captured], has_else=True)
    for src, dst in ((op.regions[0].blocks[0], branch.then_block),
                     (op.regions[1].blocks[0] if len(op.regions[1].blocks) else None,
                      branch.else_block)):
        with ir.InsertionPoint(dst):
            if src is None:  # an if without else yields nothing: no adjoint flows
                scf.YieldOp([zeros(v.type) for v in captured])
                continue
            scf.YieldOp(sweep(ad, src, {}, adjoints, captured))
    for v, g in zip(captured, branch.results):
        ad.add(v, g)


def _only_written_into(arg, body) -> bool:
    """Whether the body uses ``arg`` only as the destination of ``tensor.insert_slice``
    (scan's stacked outputs): its adjoint needs none of its values."""
    users = [as_op(o) for o in body.operations if arg in list(as_op(o).operands)]
    nested = any(arg in list(reads(as_op(o))) and arg not in list(as_op(o).operands)
                 for o in body.operations)
    return bool(users) and not nested and all(
        (u.name == "tensor.insert_slice" and u.operands[1] == arg
         and arg not in list(u.operands)[2:] and u.operands[0] != arg)
        or u.name == "scf.yield" for u in users)


@rule("scf.for")
def _for(ad: Adjoint, op, adjoints: list) -> None:
    from aotc._mlir import arith, ir, scf

    lower, upper, step = (constant_index(v) for v in list(op.operands)[:3])
    if None in (lower, upper, step):
        ad.refuse(op, "a loop whose bounds are traced values (lax.fori_loop with traced "
                      "bounds becomes a while loop) cannot be reversed: its trip count is "
                      "unknown; give fori_loop Python ints as bounds")
    trips = len(range(lower, upper, step))
    inits = list(op.operands)[3:]
    body = op.regions[0].blocks[0]
    index, carries = body.arguments[0], list(body.arguments)[1:]
    for c in carries:
        if not isinstance(c.type, ir.RankedTensorType):
            ad.refuse(op, f"a loop carrying a scalar ({c.type}) cannot be reversed yet; "
                          f"carry a 0-d array")
    captured = _outside_reads(ad, op)
    floats = [j for j, c in enumerate(carries) if differentiable(c.type)]
    if trips == 0:
        for j in floats:
            ad.add(inits[j], adjoints[j])
        return
    taped = [j for j, c in enumerate(carries) if not _only_written_into(c, body)]

    def index_value(k):
        """The primal loop index of iteration ``k``: lower + k * step."""
        return arith.addi(_index(lower), arith.muli(k, _index(step)))

    # 1. The recording loop: the carries each iteration starts from.
    tapes = [_empty_tape(carries[j].type, trips) for j in taped]
    record = scf.ForOp(_index(0), _index(trips), _index(1), inits + tapes)
    with ir.InsertionPoint(record.body):
        k = record.induction_variable
        state = list(record.inner_iter_args)
        mapping = {index: index_value(k)}
        mapping.update(zip(carries, state[:len(carries)]))
        new_tapes = [_store(tape, state[j], k)
                     for tape, j in zip(state[len(carries):], taped)]
        _, yielded = clone_block(body, mapping)
        scf.YieldOp(yielded + new_tapes)
    stored = dict(zip(taped, list(record.results)[len(carries):]))
    ad.saved.extend(stored.values())

    # 2. The reverse loop: carry adjoints and the outside values' adjoints.
    seeds = [adjoints[j] if adjoints[j] is not None else zeros(carries[j].type)
             for j in floats]
    accumulated = [zeros(v.type) for v in captured]
    # (No barrier on the initial carries, as aotc's own loops take: a barrier's result
    # shares its operand's buffer, and two loops starting from one zero tensor then
    # updated it in place together.)
    reverse = scf.ForOp(_index(0), _index(trips), _index(1), seeds + accumulated)
    with ir.InsertionPoint(reverse.body):
        r = reverse.induction_variable
        k = arith.subi(_index(trips - 1), r)
        state = list(reverse.inner_iter_args)
        carry_cts, sums = state[:len(floats)], state[len(floats):]
        mapping = {index: index_value(k)}
        for j, c in enumerate(carries):
            mapping[c] = (_load(stored[j], c.type, k) if j in stored
                          else ir.Operation.create("tensor.empty", results=[c.type]).result)
        cotangents = [None] * len(carries)
        for j, ct in zip(floats, carry_cts):
            cotangents[j] = ct
        starts = [mapping[carries[j]] for j in floats]
        grads = sweep(ad, body, mapping, cotangents, starts + captured)
        new_sums = [add_tensors(a, g) for a, g in zip(sums, grads[len(floats):])]
        scf.YieldOp(grads[:len(floats)] + new_sums)
    results = list(reverse.results)
    for j, g in zip(floats, results[:len(floats)]):
        ad.add(inits[j], g)
    for v, g in zip(captured, results[len(floats):]):
        ad.add(v, g)


def _index(value: int):
    from aotc._mlir import arith, ir

    return arith.ConstantOp(ir.IndexType.get(), value).result


def _empty_tape(t, trips: int):
    """Zeros, not a ``tensor.empty``: IREE 3.13 gave two loop-carried values that start
    from one (CSE'd) empty tensor one buffer, and the tape was overwritten."""
    from aotc._mlir import ir

    t = ir.RankedTensorType(t)
    tape = ir.RankedTensorType.get([trips] + list(t.shape), t.element_type)
    return zeros(tape)


def _slot(t) -> tuple[dict, list]:
    """The static attributes of row ``k`` (dynamic) of a tape of ``t``'s."""
    from aotc._mlir import ir

    shape = list(ir.RankedTensorType(t).shape)
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    return {"static_offsets": ir.DenseI64ArrayAttr.get([dynamic] + [0] * len(shape)),
            "static_sizes": ir.DenseI64ArrayAttr.get([1] + shape),
            "static_strides": ir.DenseI64ArrayAttr.get([1] * (len(shape) + 1))}, [1, 0, 0]


def _store(tape, value, k):
    statics, counts = _slot(value.type)
    return insert_slice(value, tape, [k], counts, statics)


def _load(tape, t, k):
    statics, counts = _slot(t)
    return extract_slice(tape, t, [k], counts, statics)


@rule("scf.while", "scf.index_switch", "scf.execute_region")
def _refused(ad: Adjoint, op, adjoints: list) -> None:
    if op.name == "scf.while":
        ad.refuse(op, "reverse-mode differentiation does not work for lax.while_loop or "
                      "lax.fori_loop with traced bounds (the trip count is unknown); use "
                      "fori_loop with Python int bounds or lax.scan")
    ad.refuse(op, "this control flow is not differentiable yet")
