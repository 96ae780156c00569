"""The in-place analysis: may a result be written into a donated argument's buffer?

IREE takes ``iree.abi.output`` as a promise: it writes the result into the argument's
buffer without checking whether anything still has to read the argument's old contents
there. ``InPlaceAnalysis.candidate`` decides from the IR whether the in-place write is
safe, and what must be ordered before it:

* the ops that compute the result and may run in the same dispatch as its write (the
  *writer group*, ``Writer``: the defining op and its elementwise, slice and
  concatenation producers) read the argument only at the position they write (``2*x +
  1``; ``concatenate([x[:k] + d, x[k:]])`` writes each slice back where it came from);
* the writer group may also hold ``tensor.insert_slice`` ops at offsets computed at run
  time (``x.at[i].set(v)``, ``lax.dynamic_update_slice``) and ``iree_linalg_ext.scatter``
  ops (``x.at[idx].add(v)``): an insert_slice writes only its window and a scatter only
  the rows its indices name, and the scatter's region reads the original only at the row
  it writes (repeated indices included: each combine reads and writes the same row).
  Positions are compared as ``positions`` describes: an elementwise op in the group
  reading the argument at a position not known to be the one it writes
  (``x.at[i].set(x[j])``) is computed before the group instead, like any other reader,
  and a scatter's updates and indices are inputs of the group, never read in place;
* a value the group updates the argument's storage into before the result is written
  there (``v = x.at[i].add(u)`` under ``where(v > 0, v, 0)``) lives in the buffer: an op
  outside the group reading it (``v / s``) reads the argument;
* a bool value the group computes from the argument and something outside the group
  also uses is computed before the group (``writer_group``): IREE computes it again in
  each dispatch that uses it, and that copy reads the argument;
* an update made in the argument's buffer (``z = x.at[i].add(u)``), by the group or not,
  is a view of it: ``z[j]`` reads the argument (``_held``), and ``z`` returned as
  another result keeps the buffer (the result cannot be written there);
* every other op that reads the argument runs before the writer group starts. An op the
  result already depends on, which IREE cannot fuse into the writer's dispatch, does (the
  ``x @ w`` inside ``w - lr * x.T @ (x @ w - y)``). For the others the candidate names
  the readers (``Candidate.order``) whose results, with the writer group's computed
  inputs, must go through one ``util.optimization_barrier``, which IREE neither fuses
  across nor reorders (``aotc-donate`` inserts it).
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from .. import opset
from ..base import as_op, bit_extending, where
from ..drop_carry_barriers import CARRY_BARRIER
from ..opset import (
    BARRIER_OPS,
    CARRIES_AT,
    CONSTANT_LIKE_OPS,
    DESTINATION,
    ELEMENTWISE_OPS,
    PLACING_OPS,
    RESHAPE_OPS,
    SOURCE_OPS,
    VIEW_OPS,
)
from .function import arg_label, defining_op
from .pairing import Candidate
from .positions import generic_inputs, plus, runtime_offsets, slice_offsets


def _describe(op) -> str:
    return f"{op.name} at {where(op)}"


def _computed(value) -> bool:
    """Is ``value`` computed from other tensors (not an argument, constant, empty or fill,
    nor a view or reshape of one, which IREE folds into a constant of its own)?"""
    op = defining_op(value)
    while op is not None and (_is_view(op) or op.name in RESHAPE_OPS):
        op = defining_op(op.operands[0])
    return op is not None and op.name not in CONSTANT_LIKE_OPS


def _is_elementwise(op) -> bool:
    if op.name not in ELEMENTWISE_OPS:
        return False
    if op.name == "linalg.generic":
        iterators = [str(a) for a in op.attributes["iterator_types"]]
        if any("parallel" not in it for it in iterators):
            return False
        if len(op.results) != 1:
            return False
    return True


def _is_bool(value) -> bool:
    from aotc._mlir import ir

    element = getattr(value.type, "element_type", None)
    return isinstance(element, ir.IntegerType) and element.width == 1


def _recomputed(value) -> bool:
    """Is ``value`` computed again, from its inputs, in each dispatch that reads it? IREE
    stores no bool tensor between dispatches, and clones a bit-extending generic
    (``base.bit_extending``) into every consumer's dispatch (program 28188: a uint8 ->
    float64 conversion of the donated x, returned, was also recomputed in the dispatch
    that wrote x)."""
    if _is_bool(value):
        return True
    op = defining_op(value)
    if op is not None and _is_elementwise(op) and _inserted(value):
        return True
    return op is not None and bit_extending(op)


def _inserted(value) -> bool:
    """Is ``value`` (or a reshape of it) inserted into another tensor: a concatenation's
    operand or an insert_slice's source? IREE fuses its elementwise producer into the
    dispatch that writes the slice (``lowering._reads_elsewhere``), where it is computed
    again (program 35968: ``v = x + isinf(x)`` stacked with ``-v`` while ``max(v, s)`` was
    written into x)."""
    for v in _same_storage(value):
        for use in v.uses:
            owner = as_op(use.owner)
            if owner.name == "tensor.concat" or (
                    owner.name == "tensor.insert_slice" and use.operand_number == 0):
                return True
    return False


def _is_view(op) -> bool:
    return op.name in VIEW_OPS


def _light(op) -> bool:
    """Does IREE fuse ``op`` with its producers and consumers freely (no dispatch root)?"""
    return _is_elementwise(op) or _is_view(op) or op.name in PLACING_OPS


def _same_storage(value) -> list:
    """``value`` and its reshapes."""
    found, stack = [value], [value]
    while stack:
        for use in stack.pop().uses:
            op = as_op(use.owner)
            if op.name in RESHAPE_OPS and use.operand_number == 0 and op.results[0] not in found:
                found.append(op.results[0])
                stack.append(op.results[0])
    return found


def _carried_storage(value) -> list:
    """``value`` and the values IREE may keep in its storage: its reshapes, the results
    of barriers over it, and the results of loops it is an initial carry of."""
    found, stack = [value], [value]
    while stack:
        for use in stack.pop().uses:
            op = as_op(use.owner)
            n = use.operand_number
            if op.name in RESHAPE_OPS and n == 0:
                nexts = [op.results[0]]
            elif op.name in BARRIER_OPS:  # a clone IREE elides keeps the storage too
                nexts = [op.results[n]]
            elif op.name in CARRIES_AT and n >= CARRIES_AT[op.name]:
                k = n - CARRIES_AT[op.name]
                nexts = [op.results[k]] if k < len(op.results) else list(op.results)
            else:
                continue
            for v in nexts:
                if v not in found:
                    found.append(v)
                    stack.append(v)
    return found


def _writes_into(op, storage: set) -> bool:
    """Is ``op`` an in-place update (insert_slice, scatter) of one of ``storage``'s values?"""
    return op.name in DESTINATION and op.operands[DESTINATION[op.name]] in storage


@dataclass
class Writer:
    """The writer group of one result for one donated argument."""

    ops: list = field(default_factory=list)  # in program order
    inputs: list = field(default_factory=list)  # computed values the group reads
    problem: str | None = None
    reads_arg: bool = False


class InPlaceAnalysis:
    """What writing a result into a donated argument's buffer would touch, for one
    ``func.func`` with a single block (the functions aotc traces)."""

    def __init__(self, func_op) -> None:
        self.func = func_op
        self.block = func_op.regions[0].blocks[0]
        self.ops = [as_op(o) for o in self.block.operations]
        self.index = {op: i for i, op in enumerate(self.ops)}
        self.ret = self.ops[-1]
        self.results = list(self.ret.operands)

    def user(self, use):
        """The op of this function's block that a use belongs to (an op nested in a
        region counts as its top-level ancestor, which reads what the nested op reads)."""
        op = as_op(use.owner)
        while op.parent is not None and op.parent != self.func:
            op = as_op(op.parent)
        return op

    # -- slices ------------------------------------------------------------------------

    def backward(self, values: Iterable) -> set:
        """All ops the given values depend on."""
        seen: set = set()
        stack = [v for v in values]
        while stack:
            op = defining_op(stack.pop())
            if op is None or op in seen:
                continue
            seen.add(op)
            stack.extend(op.operands)
        return seen

    def forward(self, ops: Iterable) -> set:
        """The given ops and every op that depends on them (``func.return`` excluded)."""
        seen: set = set()
        stack = list(ops)
        while stack:
            op = stack.pop()
            if op in seen or op == self.ret:
                continue
            seen.add(op)
            for result in op.results:
                for use in result.uses:
                    stack.append(self.user(use))
        return seen

    # -- what reads the argument --------------------------------------------------------

    def views(self, arg) -> dict:
        """Values that are views of ``arg`` -> their offset into it (None: unknown)."""
        rank = len(arg.type.shape)
        found = {arg: (0,) * rank}
        stack = [arg]
        while stack:
            value = stack.pop()
            for use in value.uses:
                op = as_op(use.owner)
                if not _is_view(op) or use.operand_number != 0 or op not in self.index:
                    continue
                result = op.results[0]
                if result in found:
                    continue
                offset = None
                base = found[value]
                if op.name == "tensor.extract_slice" and base is not None:
                    offsets = slice_offsets(op)
                    if offsets is not None and len(result.type.shape) == rank:
                        offset = tuple(plus(b, o) for b, o in zip(base, offsets))
                elif (op.name == "tensor.cast" and base is not None
                      and len(result.type.shape) == rank):
                    offset = base
                found[result] = offset
                stack.append(result)
        return found

    def readers(self, arg, views: Mapping, group: Collection = ()) -> set:
        """Ops outside ``group`` that may read ``arg``'s buffer: users of its views, and,
        because IREE may fuse an elementwise op into its only consumer, the users of
        elementwise ops that read it. Values the writer group computes are computed once
        (IREE clones only trivial ops such as fills into several dispatches): reading them
        reads them, not the argument."""
        found: set = set()
        stack = list(views)
        seen_values = set(views)
        while stack:
            value = stack.pop()
            for use in value.uses:
                op = self.user(use)
                if _is_view(op) and value in views:
                    continue  # a view of the argument: its users are visited instead
                if op in found or op in group:
                    continue
                found.add(op)
                if op != self.ret and _is_elementwise(op):
                    for result in op.results:
                        if result not in seen_values:
                            seen_values.add(result)
                            stack.append(result)
        return found

    # -- the writer group ----------------------------------------------------------------

    def writer(self, result, arg, views: Mapping, cut: Collection = ()) -> Writer:
        """The ops that compute ``result`` and may write it into the buffer (see the
        module docstring), with the positions they write; a problem if one of them
        reads ``arg`` anywhere else than where it writes. Values in ``cut`` are computed
        before the group (inputs), whatever computes them."""
        group = Writer()
        placed: dict = {}  # op -> offset of its output within the result
        rank = len(result.type.shape)
        stack = [(result, (0,) * rank, True, self.ret)]
        inputs: list = []

        def misplaced(op, offset) -> str:
            return (f"its value is computed by {_describe(op)}, which reads "
                    f"{self._arg_name(arg)} at other positions than it writes")

        while stack:
            value, offset, top, user = stack.pop()
            if value in views:
                group.reads_arg = True
                if views[value] != offset:
                    return Writer(problem=(
                        f"it would move elements of {self._arg_name(arg)} to other "
                        f"positions ({_describe(user)})"))
                continue
            if value in cut and not top:
                inputs.append(value)
                continue
            op = defining_op(value)
            if op is None or op.name in SOURCE_OPS:
                continue  # another argument, a constant, an uninitialized tensor
            if op in placed:
                if placed[op] != offset:
                    inputs.append(value)  # needed at two places: computed separately
                continue
            if _is_elementwise(op):
                reads = generic_inputs(op)
                if any(self._read_elsewhere(v, aligned, offset, views) for v, aligned in reads):
                    if top:
                        return Writer(problem=misplaced(op, offset))
                    inputs.append(value)  # computed (and read) before the group
                    continue
                placed[op] = offset
                for operand, aligned in reads:
                    if aligned:
                        stack.append((operand, offset, False, op))
                    elif _computed(operand):
                        inputs.append(operand)
                continue
            rule = opset.rule_of("placement", op.name)
            if rule is not None:
                placement = rule(op, offset, views)
                if placement is None:
                    if top:
                        return Writer(problem=misplaced(op, offset))
                    inputs.append(value)  # computed (and read) before the group
                    continue
                aligned, read_anywhere = placement
                placed[op] = offset
                stack.extend((operand, at, False, op) for operand, at in aligned)
                inputs.extend(v for v in read_anywhere if _computed(v))
                continue
            if (_is_view(op) and op.operands[0] not in views
                    and not self._derived(op.operands[0], views)):
                placed[op] = offset  # a view of some other value: free
                if _computed(op.operands[0]):
                    inputs.append(op.operands[0])
                continue
            # Anything else (a contraction, a reduction, an op aotc does not know).
            if top:
                if any(v in views or self._derived(v, views) for v in op.operands):
                    return Writer(problem=misplaced(op, offset))
                placed[op] = offset
                inputs.extend(v for v in op.operands if _computed(v))
                continue
            if _computed(value):
                inputs.append(value)

        group.ops = sorted(placed, key=lambda o: self.index[o])
        seen = set()
        group.inputs = [v for v in inputs if not (v in seen or seen.add(v))]
        return group

    def writer_group(self, result, arg, views: Mapping) -> Writer:
        """``writer``, with the values it computes from the argument that are also used
        outside it and that IREE computes again in each dispatch that uses them (bools,
        bit extensions: ``_recomputed``) computed before it instead: such a copy reads
        the argument whenever it runs, after the in-place write, unordered (measured: a
        returned ``v = x <= c`` beside ``arccos(v)`` written into ``x``; a returned
        ``x.astype(float64)`` of a uint8 x beside ``minimum(x, ...)`` written into
        ``x``, program 28188). Computed before the group, the value is a reader like any
        other, ordered by the barrier or refused. (Other values used in and outside the
        group are computed once, by the group's dispatch.)"""
        cut: set = set()
        while True:
            group = self.writer(result, arg, views, cut)
            if group.problem:
                return group
            shared = {v for op in group.ops if op != defining_op(result) and _is_elementwise(op)
                      for v in op.results
                      if v not in cut and _recomputed(v) and self._derived(v, views)
                      and any(self.user(use) not in group.ops for use in v.uses)}
            if not shared:
                return group
            cut |= shared

    def _read_elsewhere(self, value, aligned: bool, offset: tuple, views: Mapping) -> bool:
        """Does an elementwise op writing at ``offset`` read the argument elsewhere through
        ``value``: an unaligned read of something derived from it, or an aligned read of a
        view of another (or an unknown) position?"""
        if aligned:
            return value in views and views[value] != offset
        return value in views or self._derived(value, views)

    def _derived(self, value, views: Mapping) -> bool:
        """Is ``value`` an elementwise function of the argument (which IREE may recompute
        from the argument's buffer wherever it is read)?"""
        stack, seen = [value], set()
        while stack:
            v = stack.pop()
            if v in views:
                return True
            op = defining_op(v)
            if op is None or op in seen or not (_is_elementwise(op) or _is_view(op)):
                continue
            seen.add(op)
            stack.extend(op.operands)
        return False

    def fusable(self, group: Writer) -> set:
        """Ops IREE may put in the same dispatch as the writer group: elementwise
        producers, and at most one contraction or reduction per dispatch (the writer may
        be fused into it as a consumer) with its own elementwise producers."""
        has_root = any(not _light(op) for op in group.ops)
        found: set = set()
        stack = [(v, has_root) for v in group.inputs]
        for op in group.ops:
            stack.extend((v, has_root) for v in op.operands)
        while stack:
            value, root_seen = stack.pop()
            op = defining_op(value)
            if op is None or op in found or op in group.ops or op.name in SOURCE_OPS:
                continue
            if not _light(op):
                if root_seen:
                    continue
                root_seen = True
            found.add(op)
            stack.extend((v, root_seen) for v in op.operands)
        return found

    # -- one candidate ---------------------------------------------------------------------

    def candidate(self, arg, k: int) -> Candidate | str:
        """Whether result ``k`` can be written into ``arg``'s buffer: a ``Candidate`` or
        the reason it cannot."""
        result = self.results[k]
        if result == arg:
            return Candidate(k, 0)
        views = self.views(arg)
        held = self._held(arg, result)
        for m, other in enumerate(self.results):
            if m != k and other in views:
                return (f"{self._arg_name(arg)} is also returned unchanged as result {m}, "
                        f"which must keep the old value")
            if m != k and other in held:
                # IREE made the update in the argument's buffer; writing result k there
                # would overwrite it (fuzz program 14525: x.at[-2].min(y) and a value
                # computed from it, both returned).
                return (f"result {m} is an update {self._arg_name(arg)} gets in its own "
                        f"buffer, which must keep its value")
        if any(CARRY_BARRIER in as_op(use.owner).attributes
               for v in _same_storage(result) for use in v.uses):
            # aotc-drop-carry-barriers kept the barrier (a value computed from the result
            # is also computed from the loop's); IREE 3.13 copies the result into the
            # loop's carry within the argument's own buffer (fuzz program 9700: "source
            # and target ranges overlap within the same buffer").
            return (f"result {k} is also the initial carry of a loop whose results are "
                    f"read together with it, which IREE 3.13 would copy within "
                    f"{self._arg_name(arg)}'s own buffer")
        group = self.writer_group(result, arg, views)
        if group.problem:
            return group.problem
        rank = 1 if group.reads_arg else 2
        # A value the group computes from the argument that IREE computes again in each
        # dispatch that uses it (``_recomputed``: bools, bit extensions) is read from
        # the argument's buffer there: its users read the argument (program 22372:
        # ``v = ~x`` written into x's buffer, ``rint(v)`` then computed ``~x`` from the
        # new x).
        recomputed = {v: None for op in group.ops for v in op.results
                      if _recomputed(v) and self._derived(v, views)}
        readers = self.readers(arg, {**views, **held, **recomputed},
                               set(group.ops))
        readers.discard(self.ret)
        if not readers:
            return Candidate(k, rank)
        after = self.forward(group.ops)
        late = sorted((r for r in readers if r in after), key=lambda o: self.index[o])
        if late:
            return (f"{self._arg_name(arg)} is read by {_describe(late[0])} after its new "
                    f"value is computed")
        # Run-time offsets are read on the host before the write is issued: what they are
        # computed from is ordered before the group too.
        ancestors = self.backward(list(group.inputs) + [
            v for op in group.ops for v in runtime_offsets(op)])
        fusable = self.fusable(group)
        unordered = sorted((r for r in readers if r not in ancestors or r in fusable),
                           key=lambda o: self.index[o])
        if not unordered:
            return Candidate(k, rank)
        if not group.inputs:
            return (f"{self._arg_name(arg)} is also read by {_describe(unordered[0])}, which "
                    f"its new value does not depend on, and nothing computed orders that read "
                    f"before the in-place write")
        # The barrier waits for the readers whose results leave the set of readers (an
        # elementwise reader that only feeds another reader, such as the transpose in
        # ``d @ w.T``, completes before that one): fewer values are materialized, and
        # IREE forms the same dispatches as without the barrier.
        unordered_set = set(unordered)
        frontier = tuple(r for r in unordered if not r.results or any(
            self.user(use) not in unordered_set for v in r.results for use in v.uses))
        through = list(group.inputs) + [v for r in frontier for v in r.results]
        external = next((v for v in through if self._external(v)), None)
        if external is not None:
            # IREE 3.13 gives a returned tensor, and one updated in an argument's buffer,
            # another storage type than a temporary one, and its util.optimization_barrier
            # verifier rejects the mix.
            where_it_lives = ("returned" if self._returned(external)
                              else "kept in an argument's buffer")
            return (f"{self._arg_name(arg)} is also read by {_describe(unordered[0])}, which "
                    f"must run before the in-place write, and the barrier that orders it would "
                    f"take the value of {_describe(defining_op(external))}, which is also "
                    f"{where_it_lives} (IREE 3.13 rejects a barrier over such a value)")
        return Candidate(k, rank, frontier)

    def _held(self, arg, result) -> dict:
        """Values that updates of ``arg``'s storage leave in its buffer before the result
        is written there (``v = x.at[i].add(u)``, inside the writer group or not), with
        their views: a read of one outside the group reads the buffer, which the
        result's write then overwrites (``v / s`` after ``where(v > 0, v, 0)`` was
        written saw its values; ``v[j]`` after an unrelated result was)."""
        final = set(_same_storage(result))
        storage = set(_same_storage(arg))  # grows along a chain of in-place updates
        held: dict = {}
        for op in self.ops:
            if not _writes_into(op, storage):
                continue
            updated = _same_storage(op.results[0])
            storage.update(updated)
            if op.results[0] not in final:
                for v in updated:
                    held.update(self.views(v))
        return held

    def _returned(self, value) -> bool:
        """Is ``value``, or a reshape of it, a result, also through barriers and as a
        loop's initial carry whose final value is one (IREE carries it in the result's
        storage: program 27104, a reduction both ordered by the barrier and a returned
        while_loop's carry)? (A slice is copied out when returned.)"""
        return any(v in self.results for v in _carried_storage(value))

    def _external(self, value) -> bool:
        """Does ``value`` live outside IREE's temporaries: is it returned, or an update
        made in an argument's own buffer?"""
        return self._returned(value) or value in self._argument_updates

    @functools.cached_property
    def _argument_updates(self) -> set:
        """The updates made in the arguments' own buffers, with their reshapes."""
        return {v for a in self.block.arguments for op in self.in_place_writers(a)
                for v in _same_storage(op.results[0])}

    def in_place_writers(self, arg) -> list:
        """The ops that IREE writes into ``arg``'s own storage (an insert_slice into it, a
        scatter into it, also through reshapes), in program order."""
        storage = set(_same_storage(arg))
        return [op for op in self.ops if _writes_into(op, storage)]

    # -- helpers ---------------------------------------------------------------------------

    def _arg_name(self, arg) -> str:
        return arg_label(self.func, arg.arg_number)

