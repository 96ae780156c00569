"""aotc-donate: let results reuse the buffers of donated arguments.

The tracer marks each donated argument of a ``func.func`` with ``aotc.donate = "<name>"``.
This pass pairs every marked argument with a result of identical type and sets IREE's
``iree.abi.output = <result index> : index`` on it, so IREE writes that result into the
argument's buffer instead of allocating a new one. The marker is removed, so running the
pass again changes nothing.

IREE takes ``iree.abi.output`` as a promise: it writes the result into the buffer without
checking whether anything still has to read the argument's old contents there (measured
with IREE 3.13: ``(b, a)`` from donated ``(a, b)``, ``x @ w``, ``flip(x)``, ``(x + 1, x *
2)`` all come out wrong). So a pairing is made only where the in-place analysis
(``analysis.InPlaceAnalysis``) finds the write safe; ``pairing.pair_donations`` chooses
among the candidates. Where the write is safe only once some readers of the argument have
run, the pass adds that order (``_sequence``): the writer group moves after them, its
computed inputs and their results going through one ``util.optimization_barrier``.

An argument the function writes into (``aotc.written = <result index>``: numpy's in-place
updates) is paired the same way, with the result that is its final value only; where that
cannot be in place the runtime updates the caller's array from a new buffer instead.

A donated argument that no result can use is reported: a ``DonationWarning`` naming the
argument and why, or, with ``strict=true``, a failure of the pass. An argument only
written into is not reported (nobody asked for its buffer to be reused).

Arguments that are not donated are kept intact by the next pass,
``aotc-keep-undonated-arguments`` (``keep_arguments``); the compiler runs both.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from ..base import ModulePass, PassError, as_op, bool_option, register
from ..materialize_constants import runtime_copy
from ..opset import DESTINATION
from .analysis import InPlaceAnalysis
from .function import (
    MARKER,
    OUTPUT,
    WRITTEN,
    arg_dicts,
    arg_label,
    donated_pairs,
    functions,
    insert_barrier,
    set_arg_dicts,
    symbol,
)
from .pairing import Candidate, pair_donations


def _user_stacklevel() -> int:
    """The stacklevel that points a warning at the first frame outside aotc."""
    import aotc

    here = os.path.abspath(__file__)
    roots = {os.path.dirname(os.path.dirname(os.path.dirname(here))),
             os.path.dirname(os.path.dirname(os.path.abspath(aotc.__file__)))}
    inside = tuple(os.path.join(r, d) + os.sep
                   for r in roots for d in ("aotc", "passes", "runtime"))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(inside):
        frame, level = frame.f_back, level + 1
    return level


@register
@dataclass(frozen=True)
class Donate(ModulePass):
    """Pairs donated arguments (``aotc.donate``) with results (``iree.abi.output``).

    Options: ``strict`` (``strict=true``): an argument that cannot be donated fails the
    pass instead of giving a ``DonationWarning``.
    """

    name = "aotc-donate"
    strict: bool = False

    @classmethod
    def from_options(cls, options):
        return cls(strict=bool_option(options, "strict", False))

    def run(self, module) -> None:
        problems = [text for func_op in functions(module) for text in self._pair(func_op)]
        if not problems:
            return
        if self.strict:
            raise PassError("\n".join(problems) + "\nFix: donate only arguments that a result "
                            "of the same shape and dtype replaces, or pass strict_donation=False "
                            "to donate what can be and warn about the rest.")
        from aotc.errors import DonationWarning

        for text in problems:
            try:
                warnings.warn(text, DonationWarning, stacklevel=_user_stacklevel())
            except DonationWarning as e:  # warnings turned into errors (-W error)
                raise PassError(str(e)) from None

    def _pair(self, func_op) -> list[str]:
        """Pairs the marked arguments of one function; returns the problems."""
        from aotc._mlir import ir

        dicts = arg_dicts(func_op)
        donors = [i for i, d in enumerate(dicts) if MARKER in d or WRITTEN in d]
        if not donors:
            return []
        # An argument the function writes into may hold only the result that is its final
        # value (the runtime updates the caller's array from it), and that result is kept
        # for it. Only the arguments the user donated are reported when they cannot be.
        written = {i: ir.IntegerAttr(d[WRITTEN]).value for i, d in enumerate(dicts)
                   if WRITTEN in d}
        requested = {i for i in donors if MARKER in dicts[i]}
        name = symbol(func_op)
        labels = {i: arg_label(func_op, i) for i in donors}
        analysis = InPlaceAnalysis(func_op)
        block = analysis.block
        taken = set(donated_pairs(func_op).values())
        candidates: dict[int, list[Candidate]] = {}
        reasons: dict[int, str] = {}
        for i in donors:
            arg = block.arguments[i]
            arg_type = arg.type
            if not isinstance(arg_type, ir.ShapedType) or not arg_type.has_static_shape:
                reasons[i] = f"its type {arg_type} has no static shape"
                continue
            found, why = [], []
            for k, value in enumerate(analysis.results):
                if value.type != arg_type or k in taken:
                    continue
                if (k != written[i] if i in written else k in written.values()):
                    continue  # not its final value / kept for the argument written into
                outcome = analysis.candidate(arg, k)
                if isinstance(outcome, Candidate):
                    found.append(outcome)
                else:
                    why.append(f"result {k}: {outcome}")
            candidates[i] = found
            if not found:
                same_type = [k for k, v in enumerate(analysis.results) if v.type == arg_type]
                if not same_type:
                    reasons[i] = f"no result has its type {arg_type}"
                elif all(k in taken for k in same_type):
                    reasons[i] = (f"every result of its type {arg_type} already holds a donated "
                                  f"buffer")
                else:
                    reasons[i] = "; ".join(why)
        pairs = pair_donations([i for i in donors if i in candidates], candidates, taken)
        for i in donors:
            if i in candidates and i not in pairs and i not in reasons:
                holders = sorted(labels.get(j, str(j)) for j, c in pairs.items()
                                 if any(c.result == o.result for o in candidates[i]))
                reasons[i] = (f"the results it could hold are taken by "
                              f"{', '.join(holders)}")
        # Apply: barriers first (they re-check on the edited IR), then the attributes.
        applied: dict[int, int] = {}
        for i in sorted(pairs, key=lambda a: (len(pairs[a].order) > 0, a)):
            cand = pairs[i]
            if cand.order:
                analysis = InPlaceAnalysis(func_op)  # the IR may have changed
                again = analysis.candidate(analysis.block.arguments[i], cand.result)
                if not isinstance(again, Candidate):
                    reasons[i] = again
                    continue
                if again.order:
                    _sequence(analysis, analysis.block.arguments[i], cand.result, again.order)
            applied[i] = cand.result
        dicts = arg_dicts(func_op)
        index_type = ir.IndexType.get()
        for i in donors:
            dicts[i].pop(MARKER, None)
            dicts[i].pop(WRITTEN, None)
            if i in applied:
                dicts[i][OUTPUT] = ir.IntegerAttr.get(index_type, applied[i])
        set_arg_dicts(func_op, dicts)
        return [
            f"aotc-donate: @{name}: donated argument {labels[i]} ({block.arguments[i].type}) "
            f"cannot be used: {reasons[i]}. The argument is not donated (a new buffer is "
            f"allocated for the result instead)."
            for i in donors if i in reasons and i not in applied and i in requested
        ]


def _fresh(before, value):
    """``value``, or a copy of it made before ``before`` where IREE builds it by updating
    a buffer in place (``opset.DESTINATION`` ops, concatenations): such a value can live
    in the caller's buffers (an update whose source is the donated argument), and IREE
    3.13 rejects a barrier over values of the caller's and its own buffers together
    ("all of {operands, results} have same type": fuzzer programs 19509+19512)."""
    from aotc._mlir import ir

    if (isinstance(value, ir.OpResult) and isinstance(value.type, ir.RankedTensorType)
            and value.type.has_static_shape
            and (as_op(value.owner).name in DESTINATION
                 or as_op(value.owner).name == "tensor.concat")):
        return runtime_copy(before, value)
    return value


def _tensor_of(value):
    """``value`` when it is a tensor, the tensor a ``tensor.extract`` reads it from,
    else None."""
    from aotc._mlir import ir

    if isinstance(value.type, ir.RankedTensorType):
        return value
    if isinstance(value, ir.OpResult) and as_op(value.owner).name == "tensor.extract":
        return as_op(value.owner).operands[0]
    return None


def _read_again(before, value, tensor):
    """``value``'s ``tensor.extract`` made again from ``tensor``, before ``before``."""
    from aotc._mlir import ir

    read = as_op(value.owner)
    with ir.InsertionPoint(before), read.location:
        return ir.Operation.create("tensor.extract", results=[value.type],
                                   operands=[tensor, *list(read.operands)[1:]]).results[0]


def _dispatched(value) -> bool:
    """``value`` is a linalg op's result: a tensor of IREE's own that a dispatch writes."""
    from aotc._mlir import ir

    return isinstance(value, ir.OpResult) and as_op(value.owner).name.startswith("linalg.")


def _sequence(analysis: InPlaceAnalysis, arg, k: int, readers: Sequence) -> None:
    """Makes the writer group of result ``k`` start after ``readers``: moves the group and
    everything after it to the end of the block, and routes the group's computed inputs
    through one ``util.optimization_barrier`` together with the readers' results."""
    group = analysis.writer_group(analysis.results[k], arg, analysis.views(arg))
    # The group and its dependents, in program order; the first is a group op (a
    # dependent comes after what it depends on).
    moved = sorted(analysis.forward(group.ops), key=lambda o: analysis.index[o])
    for op in moved:
        op.move_before(analysis.ret)
    # An input computed from another op of the group (a write, then a view of it read by
    # the next write) is already ordered after the group starts, and is defined after the
    # barrier: it is not routed through it.
    later = {r for op in moved for r in op.results}
    inputs = [v for v in group.inputs if v not in later]
    # A reader's result nothing uses needs no order: what it reads late is never read
    # (and IREE gave such a loop result a constant's storage, beside its own temporaries
    # in the barrier: "all of {operands, results} have same type", fuzzer program 31226).
    extra = [r for op in readers for r in op.results
             if r not in group.inputs and any(True for _ in r.uses)]
    # Tensors only: a scalar beside tensors in one barrier crashed IREE 3.13's stream
    # analysis (a use-after-free, in about half the compiles: fuzzer program 38187, an
    # scf.if's condition). A scalar read from a tensor goes through as that tensor and
    # is read again after the barrier; another scalar is computed on the host before the
    # group anyway and is left out.
    routed = {v: _tensor_of(v) for v in inputs + extra}
    routed = {v: t for v, t in routed.items() if t is not None}
    if not routed:
        return
    barrier = insert_barrier(moved[0], [_fresh(moved[0], t) for t in routed.values()])
    through = dict(zip(routed, barrier.results))
    replacement = {v: through[v] if v.type == through[v].type else _read_again(moved[0], v,
                                                                               through[v])
                   for v in inputs if v in through}
    source = {through[v]: v for v in inputs if v in through}
    members = set(group.ops)
    for op in members:
        for n, operand in enumerate(op.operands):
            if operand in replacement:
                op.operands[n] = replacement[operand]
        # A value a dispatch computes that the group updates in place (a scatter into a
        # convolution's result) would be the barrier's only result stored in the
        # caller's buffer, which IREE 3.13 retypes alone ("all of {operands, results}
        # have same type": fuzzer programs 15673+15675). The update goes into a copy
        # made after the barrier, the copy IREE would otherwise make into that buffer.
        # (A loop's result may already live there: copied, the barrier failed alike,
        # 17113.)
        position = DESTINATION.get(op.name)
        destination = op.operands[position] if position is not None else None
        if destination in source and _dispatched(source[destination]):
            op.operands[position] = runtime_copy(op, destination)
