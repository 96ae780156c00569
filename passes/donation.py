"""aotc-donate: let results reuse the buffers of donated arguments.

The tracer marks each donated argument of a ``func.func`` with ``aotc.donate = "<name>"``.
This pass pairs every marked argument with a result of identical type and sets IREE's
``iree.abi.output = <result index> : index`` on it, so IREE writes that result into the
argument's buffer instead of allocating a new one. The marker is removed, so running the
pass again changes nothing.

IREE takes ``iree.abi.output`` as a promise: it writes the result into the buffer without
checking whether anything still has to read the argument's old contents there (measured
with IREE 3.13: ``(b, a)`` from donated ``(a, b)``, ``x @ w``, ``flip(x)``, ``(x + 1, x * 2)``
all come out wrong). So a pairing is made only where the in-place write is safe, which
this pass decides from the IR:

* the ops that compute the result and may run in the same dispatch as its write (the
  *writer group*: the defining op and its elementwise, slice and concatenation producers)
  read the argument only at the position they write (``2*x + 1``; ``concatenate([x[:k] +
  d, x[k:]])`` writes each slice back where it came from);
* the writer group may also hold ``tensor.insert_slice`` ops at offsets computed at run
  time (``x.at[i].set(v)``, ``lax.dynamic_update_slice``) and ``iree_linalg_ext.scatter``
  ops (``x.at[idx].add(v)``): an insert_slice writes only its window and a scatter only
  the rows its indices name, and the scatter's region reads the original only at the row
  it writes (repeated indices included: each combine reads and writes the same row). A
  run-time offset is a sum of index values (``RuntimeCoord``); two positions are the same
  when their constants and index values are (after CSE, one computation is one value), so
  ``x.at[i].add(v)`` reads ``x[i]`` where it writes it. A position not known to be the
  same is another position: an elementwise op in the group reading the argument there
  (``x.at[i].set(x[j])``) is computed before the group instead, like any other reader,
  and a scatter's updates and indices are inputs of the group, never read in place;
* every other op that reads the argument runs before the writer group starts. An op the
  result already depends on, which IREE cannot fuse into the writer's dispatch, does (the
  ``x @ w`` inside ``w - lr * x.T @ (x @ w - y)``). For the others the pass adds the
  order: the writer group's computed inputs and those readers' results go through one
  ``util.optimization_barrier``, which IREE neither fuses across nor reorders.

A donated argument that no result can use is reported: a ``DonationWarning`` naming the
argument and why, or, with ``strict=true``, a failure of the pass.

Arguments that are not donated (or whose donation is refused) must keep their values, but
IREE 3.13 writes an insert_slice or a scatter into the argument it updates when nothing
reads that argument afterwards. The pass adds that read (``_keep_arguments``): IREE then
updates a copy, as without the update ops.

The analysis (``InPlaceAnalysis``) describes each candidate pairing; ``pair_donations`` is a
pure function that chooses the pairs; ``Donate.run`` applies them.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .base import ModulePass, PassError, register

MARKER = "aotc.donate"
OUTPUT = "iree.abi.output"
BARRIER = "util.optimization_barrier"

# Ops whose result is a view of their first operand (no data is computed).
VIEW_OPS = frozenset({
    "tensor.extract_slice", "tensor.collapse_shape", "tensor.expand_shape", "tensor.cast",
    "tensor.reshape", "tensor.bitcast",
})
# Elementwise ops: one loop iteration per output element, nothing reduced; IREE fuses them
# with their producers and consumers freely.
ELEMENTWISE_OPS = frozenset({
    "linalg.generic", "linalg.map", "linalg.transpose", "linalg.broadcast", "linalg.copy",
    "linalg.fill", "linalg.elementwise", "linalg.add", "linalg.sub", "linalg.mul",
    "linalg.div", "linalg.max", "linalg.min", "linalg.exp", "linalg.log", "linalg.abs",
    "linalg.negf", "linalg.sqrt", "linalg.rsqrt", "linalg.tanh", "linalg.floor",
    "linalg.ceil", "linalg.square", "linalg.reciprocal", "linalg.powf", "linalg.erf",
})
# Ops that place their operands into a new tensor (IREE writes each operand's producer
# straight into its region of the result).
PLACING_OPS = frozenset({"tensor.concat", "tensor.insert_slice"})
# Ops that create values without reading tensors.
SOURCE_OPS = frozenset({"tensor.empty", "arith.constant", "tensor.splat"})
# Combines rows of its updates into its original at rows its indices name.
SCATTER = "iree_linalg_ext.scatter"
# First operand of the offsets in the operand list of the slice ops.
OFFSETS_AT = {"tensor.extract_slice": 1, "tensor.insert_slice": 2}

_DYNAMIC = -(2 ** 63)  # ShapedType.get_dynamic_size() / kDynamic in static_offsets


# ---------------------------------------------------------------------------------------
# The pairing (pure)
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Candidate:
    """A result that a donated argument's buffer can safely hold.

    ``rank`` orders the choices: 0 the result *is* the argument (nothing is written),
    1 the result updates the argument in place (its writer reads the argument at the
    positions it writes), 2 the result overwrites the buffer with unrelated data. ``order``
    lists the ops that must be sequenced before the writer with a barrier (empty: none).
    """

    result: int
    rank: int
    order: tuple = ()

    @property
    def key(self) -> tuple[int, int, int]:
        return (self.rank, len(self.order) > 0, self.result)


def pair_donations(
    donors: Sequence[int],
    candidates: Mapping[int, Sequence[Candidate]],
    taken: Collection[int] = (),
) -> dict[int, Candidate]:
    """Pairs donated arguments with results: argument index -> the chosen ``Candidate``.

    Invariants of the returned pairing:

    1. each result index appears at most once, and never one in ``taken`` (results that
       already hold a buffer, e.g. from an earlier run of the pass): one buffer holds one
       result;
    2. each argument is paired at most once, and only with one of its ``candidates``
       (which the caller has checked: identical type, safe to write in place);
    3. the number of pairs is maximal: an argument with no free candidate left takes one
       from an earlier argument only if that one can move to another of its candidates
       (an augmenting path, Kuhn's algorithm);
    4. it is deterministic: arguments are served in the order of ``donors``, each taking
       its best free candidate by ``Candidate.key`` (the argument itself first, then
       in-place updates, then writes that need no barrier, then lower result index);
    5. it is idempotent: pairing again with the chosen results added to ``taken`` and
       the paired arguments removed from ``donors`` pairs nothing new from the same
       candidates.

    >>> c = {0: [Candidate(0, 1), Candidate(1, 2)], 1: [Candidate(0, 1)]}
    >>> {a: p.result for a, p in pair_donations([0, 1], c).items()}
    {0: 1, 1: 0}
    >>> c = {0: [Candidate(0, 2), Candidate(1, 2)], 1: [Candidate(0, 2), Candidate(1, 2)]}
    >>> {a: p.result for a, p in pair_donations([0, 1], c).items()}
    {0: 0, 1: 1}
    """
    taken = frozenset(taken)
    options = {
        arg: sorted((c for c in candidates.get(arg, ()) if c.result not in taken),
                    key=lambda c: c.key)
        for arg in donors
    }
    holder: dict[int, int] = {}  # result -> argument
    chosen: dict[int, Candidate] = {}

    def augment(arg: int, visited: set[int]) -> bool:
        for cand in options[arg]:
            if cand.result in visited:
                continue
            visited.add(cand.result)
            other = holder.get(cand.result)
            if other is None or augment(other, visited):
                holder[cand.result] = arg
                chosen[arg] = cand
                return True
        return False

    for arg in donors:
        free = next((c for c in options[arg] if c.result not in holder), None)
        if free is not None:
            holder[free.result] = arg
            chosen[arg] = free
        else:
            augment(arg, set())
    # An augmenting path may have moved an argument to another result: keep the final one.
    return {arg: chosen[arg] for arg in donors if arg in chosen and holder.get(chosen[arg].result) == arg}


# ---------------------------------------------------------------------------------------
# The in-place analysis
# ---------------------------------------------------------------------------------------

def _op(value_owner):
    """The ``ir.Operation`` of an owner (an OpView, an Operation or a Block)."""
    return getattr(value_owner, "operation", value_owner)


def _defining_op(value):
    from aotc._mlir import ir

    if isinstance(value, ir.OpResult):
        return _op(value.owner)
    return None  # a block argument


def where(op) -> str:
    """``file.py:12`` from an op's location (``loc("file.py":12:3)``), else the raw text."""
    text = str(op.location)
    match = re.search(r'"([^"]+)":(\d+)', text)
    if match:
        return f"{os.path.basename(match.group(1))}:{match.group(2)}"
    return text


def _describe(op) -> str:
    return f"{op.name} at {where(op)}"


def _identity_map(attr) -> bool:
    from aotc._mlir import ir

    amap = ir.AffineMapAttr(attr).value
    return amap == ir.AffineMap.get_identity(amap.n_dims)


def _int_attr(op, name: str) -> int:
    from aotc._mlir import ir

    return ir.IntegerAttr(op.attributes[name]).value


def _static_ints(op, name: str) -> list[int] | None:
    from aotc._mlir import ir

    if name not in op.attributes:
        return None
    values = list(ir.DenseI64ArrayAttr(op.attributes[name]))
    return None if any(v == _DYNAMIC for v in values) else values


@dataclass(frozen=True)
class RuntimeCoord:
    """A coordinate known at run time: ``const`` plus the sum of the ``index`` values in
    ``terms`` (a frozenset of (value, multiplicity))."""

    const: int
    terms: frozenset


def _plus(*parts):
    """The sum of coordinates (ints, ``RuntimeCoord``s, ``index`` values): an int when no
    run-time value is left."""
    from collections import Counter

    const, terms = 0, Counter()
    for part in parts:
        if isinstance(part, int):
            const += part
        elif isinstance(part, RuntimeCoord):
            const += part.const
            terms.update(dict(part.terms))
        else:
            terms[part] += 1
    return RuntimeCoord(const, frozenset(terms.items())) if terms else const


def _constant_index(value) -> int | None:
    from aotc._mlir import ir

    op = _defining_op(value)
    if op is not None and op.name == "arith.constant" and isinstance(op.attributes["value"], ir.IntegerAttr):
        return ir.IntegerAttr(op.attributes["value"]).value
    return None


def _slice_offsets(op) -> list | None:
    """The offsets of a unit-stride ``tensor.extract_slice``/``insert_slice``: ints, and
    ``index`` values where they are computed at run time; None for other strides."""
    strides = _static_ints(op, "static_strides")
    if strides is None or any(s != 1 for s in strides):
        return None
    from aotc._mlir import ir

    dynamic = iter(list(op.operands)[OFFSETS_AT[op.name]:])
    offsets = []
    for v in ir.DenseI64ArrayAttr(op.attributes["static_offsets"]):
        if v != _DYNAMIC:
            offsets.append(v)
            continue
        value = next(dynamic)
        known = _constant_index(value)
        offsets.append(value if known is None else known)
    return offsets


def _runtime_offsets(op) -> list:
    """The ``index`` values among a slice op's offsets (what its position depends on)."""
    if op.name not in OFFSETS_AT:
        return []
    return [v for v in (_slice_offsets(op) or []) if not isinstance(v, int)]


def _generic_inputs(op) -> list[tuple[object, bool]]:
    """(operand, read at the written position?) for each tensor an elementwise op reads.
    Outputs count only when the body reads them."""
    from aotc._mlir import ir

    name = op.name
    operands = list(op.operands)
    if name in ("linalg.generic",):
        sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        n_in = sizes[0]
        maps = list(op.attributes["indexing_maps"])
        out_map = maps[n_in]
        body_args = list(op.regions[0].blocks[0].arguments)
        reads = []
        for i, operand in enumerate(operands):
            if i >= n_in and not list(body_args[i].uses):
                continue  # an output whose old value is never read
            same = (_identity_map(maps[i]) and maps[i] == out_map
                    and _shape(operand) == _shape(op.results[0]))
            reads.append((operand, same))
        return reads
    if name == "linalg.fill":
        return []
    if name == "linalg.transpose":
        perm = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
        return [(operands[0], perm == sorted(perm))]
    if name == "linalg.broadcast":
        return [(operands[0], False)]
    # Named elementwise ops (linalg.add, linalg.copy, ...): inputs of the output's type
    # are read at the written position; the output operand's value is not read.
    result_shape = _shape(op.results[0]) if len(op.results) else None
    inputs = operands[:-1] if len(operands) > 1 else operands
    return [(operand, _shape(operand) == result_shape) for operand in inputs]


def _shape(value) -> tuple | None:
    shape = getattr(value.type, "shape", None)
    return None if shape is None else tuple(shape)


def _computed(value) -> bool:
    """Is ``value`` computed from other tensors (not an argument, constant, empty or fill)?"""
    op = _defining_op(value)
    return op is not None and op.name not in SOURCE_OPS and op.name != "linalg.fill"


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


def _is_view(op) -> bool:
    return op.name in VIEW_OPS


# How the placing ops write their operands into their result, for the writer group: op
# -> rule(op, offset of the result, views of the argument) giving ([(operand, its offset)]
# written in place, [operands read at any position]), or None when the op cannot be
# placed (a strided slice, a rank change, a scatter reading the argument's rows).

def _concat_placement(op, offset, views):
    dim = _int_attr(op, "dim")
    aligned, start = [], 0
    for operand in op.operands:
        aligned.append((operand, tuple(_plus(o, start) if d == dim else o for d, o in enumerate(offset))))
        start += operand.type.shape[dim]
    return aligned, []


def _insert_placement(op, offset, views):
    source, dest = op.operands[0], op.operands[1]
    offsets = _slice_offsets(op)
    if offsets is None or len(source.type.shape) != len(offset):
        return None
    return [(dest, offset), (source, tuple(_plus(o, s) for o, s in zip(offset, offsets)))], []


def _scatter_placement(op, offset, views):
    # Rows are combined where the original is read (the region gets (update, original));
    # the updates and indices are read whatever row is written.
    updates, indices, original = op.operands[:3]
    if updates in views or indices in views:
        return None
    return [(original, offset)], [updates, indices]


PLACEMENTS = {
    "tensor.concat": _concat_placement,
    "tensor.insert_slice": _insert_placement,
    SCATTER: _scatter_placement,
}


# Ops IREE performs in the storage of one operand (tied to their result): op -> the operand.
DESTINATION = {"tensor.insert_slice": 1, SCATTER: 2}
# Views IREE keeps in their operand's storage (a slice is a copy once it is materialized).
RESHAPES = VIEW_OPS - {"tensor.extract_slice"}


def _same_storage(value) -> list:
    """``value`` and its reshapes."""
    found, stack = [value], [value]
    while stack:
        for use in stack.pop().uses:
            op = _op(use.owner)
            if op.name in RESHAPES and use.operand_number == 0 and op.results[0] not in found:
                found.append(op.results[0])
                stack.append(op.results[0])
    return found


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
        self.ops = [_op(o) for o in self.block.operations]
        self.index = {op: i for i, op in enumerate(self.ops)}
        self.ret = self.ops[-1]
        self.results = list(self.ret.operands)

    def user(self, use):
        """The op of this function's block that a use belongs to (an op nested in a
        region counts as its top-level ancestor, which reads what the nested op reads)."""
        op = _op(use.owner)
        while op.parent is not None and op.parent != self.func:
            op = _op(op.parent)
        return op

    # -- slices ------------------------------------------------------------------------

    def backward(self, values: Iterable) -> set:
        """All ops the given values depend on."""
        seen: set = set()
        stack = [v for v in values]
        while stack:
            op = _defining_op(stack.pop())
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
                op = _op(use.owner)
                if not _is_view(op) or use.operand_number != 0 or op not in self.index:
                    continue
                result = op.results[0]
                if result in found:
                    continue
                offset = None
                base = found[value]
                if op.name == "tensor.extract_slice" and base is not None:
                    offsets = _slice_offsets(op)
                    if offsets is not None and len(result.type.shape) == rank:
                        offset = tuple(_plus(b, o) for b, o in zip(base, offsets))
                elif op.name == "tensor.cast" and base is not None and len(result.type.shape) == rank:
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

    def writer(self, result, arg, views: Mapping) -> Writer:
        """The ops that compute ``result`` and may write it into the buffer (see the
        module docstring), with the positions they write; a problem if one of them
        reads ``arg`` anywhere else than where it writes."""
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
            op = _defining_op(value)
            if op is None or op.name in SOURCE_OPS:
                continue  # another argument, a constant, an uninitialized tensor
            if op in placed:
                if placed[op] != offset:
                    inputs.append(value)  # needed at two places: computed separately
                continue
            if _is_elementwise(op):
                reads = _generic_inputs(op)
                bad = [v for v, aligned in reads if self._read_elsewhere(v, aligned, offset, views)]
                if bad:
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
            if op.name in PLACEMENTS:
                placement = PLACEMENTS[op.name](op, offset, views)
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
            if _is_view(op) and op.operands[0] not in views and not self._derived(op.operands[0], views):
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
            op = _defining_op(v)
            if op is None or op in seen or not (_is_elementwise(op) or _is_view(op)):
                continue
            seen.add(op)
            stack.extend(op.operands)
        return False

    def fusable(self, group: Writer) -> set:
        """Ops IREE may put in the same dispatch as the writer group: elementwise
        producers, and at most one contraction or reduction per dispatch (the writer may
        be fused into it as a consumer) with its own elementwise producers."""
        has_root = any(not (_is_elementwise(op) or _is_view(op) or op.name in PLACING_OPS)
                       for op in group.ops)
        found: set = set()
        stack = [(v, has_root) for v in group.inputs]
        for op in group.ops:
            stack.extend((v, has_root) for v in op.operands)
        while stack:
            value, root_seen = stack.pop()
            op = _defining_op(value)
            if op is None or op in found or op in group.ops or op.name in SOURCE_OPS:
                continue
            light = _is_elementwise(op) or _is_view(op) or op.name in PLACING_OPS
            if not light:
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
        for m, other in enumerate(self.results):
            if m != k and other in views:
                return (f"{self._arg_name(arg)} is also returned unchanged as result {m}, "
                        f"which must keep the old value")
        group = self.writer(result, arg, views)
        if group.problem:
            return group.problem
        readers = self.readers(arg, views, set(group.ops))
        readers.discard(self.ret)
        if not readers:
            return Candidate(k, 1 if group.reads_arg else 2)
        after = self.forward(group.ops)
        late = sorted((r for r in readers if r in after), key=lambda o: self.index[o])
        if late:
            return (f"{self._arg_name(arg)} is read by {_describe(late[0])} after its new "
                    f"value is computed")
        # Run-time offsets are read on the host before the write is issued: what they are
        # computed from is ordered before the group too.
        ancestors = self.backward(list(group.inputs) + [
            v for op in group.ops for v in _runtime_offsets(op)])
        fusable = self.fusable(group)
        unordered = sorted((r for r in readers if r not in ancestors or r in fusable),
                           key=lambda o: self.index[o])
        if not unordered:
            return Candidate(k, 1 if group.reads_arg else 2)
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
        returned = next((v for v in through if self._returned(v)), None)
        if returned is not None:
            # IREE 3.13 gives a returned tensor another storage type than a temporary one,
            # and its util.optimization_barrier verifier rejects the mix.
            return (f"{self._arg_name(arg)} is also read by {_describe(unordered[0])}, which "
                    f"must run before the in-place write, and the barrier that orders it would "
                    f"take the value of {_describe(_defining_op(returned))}, which is also "
                    f"returned (IREE 3.13 rejects a barrier over a result)")
        return Candidate(k, 1 if group.reads_arg else 2, frontier)

    def _returned(self, value) -> bool:
        """Is ``value``, or a reshape of it, a result? (A slice is copied out when
        returned.)"""
        return any(v in self.results for v in _same_storage(value))

    def in_place_writers(self, arg) -> list:
        """The ops that IREE writes into ``arg``'s own storage (an insert_slice into it, a
        scatter into it, also through reshapes), in program order."""
        storage = set(_same_storage(arg))
        return [op for op in self.ops
                if op.name in DESTINATION and op.operands[DESTINATION[op.name]] in storage]

    # -- helpers ---------------------------------------------------------------------------

    def _arg_name(self, arg) -> str:
        return _arg_label(self.func, arg.arg_number)


# ---------------------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------------------

def _arg_dicts(func_op) -> list[dict]:
    """The argument attribute dictionaries of a func.func as {name: Attribute} dicts."""
    from aotc._mlir import ir

    n = len(func_op.regions[0].blocks[0].arguments)
    if "arg_attrs" not in func_op.attributes:
        return [{} for _ in range(n)]
    out = []
    for attr in ir.ArrayAttr(func_op.attributes["arg_attrs"]):
        d = ir.DictAttr(attr)
        out.append({named.name: named.attr for named in d})
    return out + [{} for _ in range(n - len(out))]


def _set_arg_dicts(func_op, dicts: list[dict]) -> None:
    from aotc._mlir import ir

    func_op.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in dicts])


def _marker_name(attr) -> str | None:
    from aotc._mlir import ir

    if isinstance(attr, ir.StringAttr):
        return attr.value
    return None


def _arg_label(func_op, index: int) -> str:
    attrs = _arg_dicts(func_op)[index]
    name = _marker_name(attrs[MARKER]) if MARKER in attrs else None
    if name is None and "iree.abi.name" in attrs:
        name = _marker_name(attrs["iree.abi.name"])
    return f"'{name}'" if name else f"argument {index}"


def _symbol(func_op) -> str:
    from aotc._mlir import ir

    return ir.StringAttr(func_op.attributes["sym_name"]).value


def donated_pairs(func_op) -> dict[int, int]:
    """Argument index -> result index for the arguments that carry ``iree.abi.output``."""
    from aotc._mlir import ir

    pairs = {}
    for i, attrs in enumerate(_arg_dicts(func_op)):
        if OUTPUT in attrs:
            pairs[i] = ir.IntegerAttr(attrs[OUTPUT]).value
    return pairs


def _user_stacklevel() -> int:
    """The stacklevel that points a warning at the first frame outside aotc."""
    import aotc

    roots = {os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
             os.path.dirname(os.path.dirname(os.path.abspath(aotc.__file__)))}
    inside = tuple(os.path.join(r, d) + os.sep for r in roots for d in ("aotc", "passes", "runtime"))
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
        value = str(options.get("strict", "false")).lower()
        if value not in ("true", "false", "1", "0"):
            raise ValueError(f"strict: expected true or false, got {value!r}")
        return cls(strict=value in ("true", "1"))

    def run(self, module) -> None:
        problems: list[str] = []
        for op in list(module.regions[0].blocks[0].operations):
            op = _op(op)
            if op.name == "func.func" and op.regions[0].blocks:
                problems.extend(self._run_on(op))
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

    def _run_on(self, func_op) -> list[str]:
        """Pairs the marked arguments of one function and keeps the others intact;
        returns the problems."""
        problems = self._pair(func_op)
        _keep_arguments(func_op)
        return problems

    def _pair(self, func_op) -> list[str]:
        """Pairs the marked arguments of one function; returns the problems."""
        from aotc._mlir import ir

        dicts = _arg_dicts(func_op)
        donors = [i for i, d in enumerate(dicts) if MARKER in d]
        if not donors:
            return []
        name = _symbol(func_op)
        labels = {i: _arg_label(func_op, i) for i in donors}
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
        dicts = _arg_dicts(func_op)
        index_type = ir.IndexType.get()
        for i in donors:
            dicts[i].pop(MARKER, None)
            if i in applied:
                dicts[i][OUTPUT] = ir.IntegerAttr.get(index_type, applied[i])
        _set_arg_dicts(func_op, dicts)
        return [
            f"aotc-donate: @{name}: donated argument {labels[i]} ({block.arguments[i].type}) "
            f"cannot be used: {reasons[i]}. The argument is not donated (a new buffer is "
            f"allocated for the result instead)."
            for i in donors if i in reasons and i not in applied
        ]


def _keep_arguments(func_op) -> None:
    """Keeps the arguments that are not donated intact. IREE 3.13 performs an insert_slice
    or a scatter in the storage of the argument it updates when nothing reads the argument
    afterwards (iree-org/iree#16168): the caller's array. A read afterwards is one
    ``util.optimization_barrier`` over a result computed from the update and those
    arguments, just before the return (all are the caller's buffers, so IREE accepts it):
    IREE then copies the argument before updating the copy. (Where only results written
    into donated buffers depend on the update, no barrier fits and none is added.)"""
    from aotc._mlir import ir

    analysis = InPlaceAnalysis(func_op)
    outputs = donated_pairs(func_op)
    # A result written into a donated buffer is a temporary copied there: not one of the
    # caller's buffers, so it cannot share the barrier.
    free = [k for k in range(len(analysis.results)) if k not in outputs.values()]
    kept: dict[int, list] = {}  # result index -> the arguments it keeps
    for arg in analysis.block.arguments:
        if arg.arg_number in outputs or _kept(analysis, arg):
            continue
        writers = analysis.in_place_writers(arg)
        after = analysis.forward(writers)
        k = next((k for k in free if _defining_op(analysis.results[k]) in after), None)
        if writers and k is not None:  # (an update no result depends on is never run)
            kept.setdefault(k, []).append(arg)
    ret = analysis.ret
    for k, args in kept.items():
        operands = [analysis.results[k]] + args
        with ir.InsertionPoint(ret), ret.location:
            barrier = ir.Operation.create(BARRIER, results=[v.type for v in operands], operands=operands)
        ret.operands[k] = barrier.results[0]


def _kept(analysis: InPlaceAnalysis, arg) -> bool:
    """Does a barrier that feeds the return already read ``arg`` (an earlier run)?"""
    return any(_op(use.owner).name == BARRIER and any(v in analysis.results for v in _op(use.owner).results)
               for use in arg.uses)


def _sequence(analysis: InPlaceAnalysis, arg, k: int, readers: Sequence) -> None:
    """Makes the writer group of result ``k`` start after ``readers``: moves the group and
    everything after it to the end of the block, and routes the group's computed inputs
    through one ``util.optimization_barrier`` together with the readers' results."""
    from aotc._mlir import ir

    group = analysis.writer(analysis.results[k], arg, analysis.views(arg))
    # The group and its dependents, in program order; the first is a group op (a
    # dependent comes after what it depends on).
    moved = sorted(analysis.forward(group.ops), key=lambda o: analysis.index[o])
    for op in moved:
        op.move_before(analysis.ret)
    first = moved[0]
    extra = [r for op in readers for r in op.results if r not in group.inputs]
    operands = list(group.inputs) + extra
    with ir.InsertionPoint(first), first.location:
        barrier = ir.Operation.create(
            BARRIER, results=[v.type for v in operands], operands=operands)
    replacement = dict(zip(group.inputs, barrier.results))
    members = set(group.ops)
    for op in members:
        for n, operand in enumerate(op.operands):
            if operand in replacement:
                op.operands[n] = replacement[operand]
