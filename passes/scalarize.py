"""Structured ops rewritten as scalar loops over tensor elements, for a loop dispatch.

aotc-loops-in-dispatch runs a loop as one dispatch only if IREE 3.13 can compile its
body there: IREE picks any structured op of more than one element in the dispatch as
its root and distributes it over workgroups, and the loop's other writes then fall
outside the distributed loops. Written as ``scf.for`` nests of ``tensor.extract`` and
``tensor.insert`` (the form of the factorizations' sequential kernels), a row update
``x[i] = 0.5 * (x[i - 1] + x[i])`` has no structured op left, and IREE compiles the whole
loop into one function.

``scalarizable(op)`` says whether ``scalarize(op)`` can rewrite ``op``:

    linalg.generic       one loop per iteration dimension over its static ranges; each
                         input element read at its map's indices (dimensions and
                         constants), the body cloned, the yielded values inserted into
                         the outputs
    linalg.fill          one loop per dimension inserting the value
    tensor.insert_slice  one loop per dimension of the source, unit strides: each element
                         inserted at the offset (the offsets may be dynamic)

A float sum over the last loop runs as ``SUM_CHAINS`` partial sums (``split_sum``).

Everything else a row body holds (slices read, reshapes, element reads and writes,
scalar arithmetic) needs no rewrite. An all-parallel generic whose one result only one
rewritten op reads (through barriers and unit reshapes) is computed element by element
inside its reader's loops (``fused``, ``read``): ``x[i] = 0.5 * (x[i - 1] + x[i])`` makes
no new tensor, only the loop writing row i from the two rows it reads, which it reads
from the carry it writes (``in_place_reads``), not from copies of them.
"""

from __future__ import annotations

from .base import all_parallel, as_op, indexing_maps, loop_ranges, operand_segments
from .opset import BARRIER_OPS, RESHAPE_OPS

def _static(value) -> bool:
    from aotc._mlir import ir

    t = value.type
    return not isinstance(t, ir.ShapedType) or (t.has_rank and t.has_static_shape)


def _simple_map(m) -> bool:
    from aotc._mlir import ir

    return all(isinstance(e, (ir.AffineDimExpr, ir.AffineConstantExpr)) for e in m.results)


def _nest(ranges: list[int], carried: list, body) -> list:
    """``body(indices, carried) -> carried`` inside ``scf.for`` loops over ``ranges``."""
    from aotc._mlir import index_constant, scf

    def level(depth, indices, carried):
        if depth == len(ranges):
            return body(indices, carried)
        loop = scf.ForOp(index_constant(0), index_constant(ranges[depth]), index_constant(1),
                         list(carried))
        from aotc._mlir import ir

        with ir.InsertionPoint(loop.body):
            scf.YieldOp(level(depth + 1, [*indices, loop.induction_variable],
                              list(loop.inner_iter_args)))
        return list(loop.results)
    return level(0, [], carried)


def _at(m, indices: list) -> list:
    """The element indices map ``m`` gives for the loop ``indices``."""
    from aotc._mlir import index_constant, ir

    return [indices[e.position] if isinstance(e, ir.AffineDimExpr) else index_constant(e.value)
            for e in m.results]


def body_values(op, indices: list, elements: list) -> list:
    """The values the body of the generic ``op`` yields for the loop ``indices``, its
    block's arguments being ``elements``: the body's ops cloned at the insertion point
    (``linalg.index`` is the index itself)."""
    from aotc._mlir import ir

    block = op.regions[0].blocks[0]
    body_ops = [as_op(o) for o in block.operations]
    mapping = dict(zip(block.arguments, elements))
    for inner in body_ops[:-1]:
        if inner.name == "linalg.index":
            mapping[inner.results[0]] = indices[ir.IntegerAttr(inner.attributes["dim"]).value]
            continue
        clone = inner.clone()
        for i, operand in enumerate(clone.operands):
            if operand in mapping:
                clone.operands[i] = mapping[operand]
        for old, new in zip(inner.results, clone.results):
            mapping[old] = new
    return [mapping.get(v, v) for v in body_ops[-1].operands]


def through(value):
    """``value`` seen through a barrier (a loop dispatch drops them) and a reshape that
    only adds or removes unit dimensions: (the value underneath, how the element
    indices of ``value`` map to its own)."""
    from aotc._mlir import ir

    if not isinstance(value, ir.OpResult):
        return value, None
    owner = as_op(value.owner)
    if owner.name in BARRIER_OPS:
        return owner.operands[value.result_number], (lambda indices: indices)
    if owner.name in RESHAPE_OPS and "reassociation" in owner.attributes:  # expand, collapse
        source = owner.operands[0]
        inner = [n for n in source.type.shape]
        outer = list(value.type.shape)
        if [n for n in inner if n != 1] == [n for n in outer if n != 1]:
            return source, lambda indices: _unit_reindex(indices, outer, inner)
    return value, None


def _unit_reindex(indices: list, outer: list[int], inner: list[int]) -> list:
    """Indices into a shape that differs from ``outer`` only by unit dimensions."""
    from aotc._mlir import index_constant

    kept = [i for i, n in zip(indices, outer) if n != 1]
    it = iter(kept)
    return [index_constant(0) if n == 1 else next(it) for n in inner]


def underneath(value):
    """``value`` seen through barriers and unit reshapes (``through``)."""
    while True:
        below, _ = through(value)
        if below == value:
            return value
        value = below


def fused(value) -> bool:
    """Whether reading ``value``'s elements computes them in place (``read``): it is the
    one result of an all-parallel generic with an identity output map, seen through
    barriers and unit reshapes, and read by nothing else."""
    from aotc._mlir import ir

    while True:
        if len(list(value.uses)) != 1 or not isinstance(value, ir.OpResult):
            return False
        underneath, _ = through(value)
        if underneath == value:
            break
        value = underneath
    op = as_op(value.owner)
    if op.name != "linalg.generic" or len(op.results) != 1 or not scalarizable(op):
        return False
    parallel = all_parallel(op)
    out_map = indexing_maps(op)[-1]
    identity = [getattr(e, "position", None) for e in out_map.results] == list(
        range(out_map.n_dims))
    return parallel and identity


def read(value, indices: list, sources: dict | None = None):
    """The element of ``value`` at ``indices``: computed from its producer's operands
    where it is ``fused``, else read from the tensor, or by the reader ``sources`` holds
    for it: the loop's own updated copy of an output it reads (the same element, not yet
    written, and no second buffer for IREE's bufferization), or the bytes that hold a
    bool tensor (``scalarize_bools``)."""
    from aotc._mlir import tensor

    sources = sources or {}
    if value in sources:
        return sources[value](indices)
    if not fused(value):
        return tensor.ExtractOp(value, indices).result
    while True:
        underneath, reindex = through(value)
        if underneath == value:
            break
        value, indices = underneath, reindex(indices)
    op = as_op(value.owner)
    count = operand_segments(op)[0]
    elements = [_read_mapped(v, m, indices, sources) for v, m in
                zip(list(op.operands)[:count], indexing_maps(op))]
    elements.append(tensor.ExtractOp(op.operands[count], indices).result)
    return body_values(op, indices, elements)[0]


def _read_mapped(value, m, indices: list, sources: dict):
    from aotc._mlir import ir

    if isinstance(value.type, ir.ShapedType):
        return read(value, _at(m, indices), sources)
    return value


def _extract(tensor_value):
    """A reader of ``tensor_value``'s elements (for ``read``'s sources)."""
    from aotc._mlir import tensor

    return lambda indices: tensor.ExtractOp(tensor_value, indices).result


def _bool_from_byte(byte_tensor):
    """A reader of the bools a byte tensor holds (for ``read``'s sources)."""
    from aotc._mlir import arith, ir

    extract = _extract(byte_tensor)
    return lambda indices: arith.TruncIOp(ir.IntegerType.get_signless(1),
                                          extract(indices)).result


def _loops(op, stored: dict, outs: list, load, keep) -> list:
    """The generic ``op`` as scalar loops over its iteration space writing ``outs``:
    ``load(tensor)`` reads an output's elements, ``keep(value)`` is what an element
    written becomes; ``stored`` maps the bool tensors already stored as bytes to their
    readers."""
    from aotc._mlir import tensor

    count = operand_segments(op)[0]
    operands = list(op.operands)
    op_maps = indexing_maps(op)

    def body(indices, carried):
        sources = {**stored, **{out: _extract(c) for out, c in zip(operands[count:], carried)}}
        elements = [_read_mapped(v, m, indices, sources)
                    for v, m in zip(operands[:count], op_maps)]
        elements += [load(c)(_at(m, indices)) for c, m in zip(carried, op_maps[count:])]
        yielded = body_values(op, indices, elements)
        return [tensor.InsertOp(keep(y), c, _at(m, indices)).result
                for y, c, m in zip(yielded, carried, op_maps[count:])]
    return _nest(loop_ranges(op), outs, body)


def _generic(op, stored: dict) -> list:
    if split_sum(op):
        return _split_sum_loops(op, stored)
    return _loops(op, stored, list(op.operands)[operand_segments(op)[0]:], _extract,
                  lambda value: value)


# Partial sums a float sum over the last loop keeps in flight. Summed into one value,
# each add waits for the one before (3-4 cycles); independent partial sums fill the
# FMA pipes, and LLVM vectorizes them. Forward substitution on [256, 256] float64 (a
# row dot per step), one dispatch: 59 -> 27 us with 8.
SUM_CHAINS = 8


def split_sum(op) -> bool:
    """Whether the generic ``op`` is a float sum that ``scalarize`` splits into
    ``SUM_CHAINS`` partial sums: its last loop alone is a reduction, of a static extent of
    at least two chains' worth, and its one output's element is read only by the
    ``arith.addf`` that the body yields. The sums are then added in another order than
    one by one, as XLA and BLAS add them."""
    from aotc._mlir import ir

    kinds = ["reduction" in str(it) for it in op.attributes["iterator_types"]]
    if kinds[-1:] != [True] or any(kinds[:-1]) or operand_segments(op)[1] != 1:
        return False
    extent = loop_ranges(op)[-1]
    if extent is None or extent < 2 * SUM_CHAINS:
        return False
    block = op.regions[0].blocks[0]
    out = block.arguments[len(block.arguments) - 1]
    if not isinstance(out.type, ir.FloatType) or len(list(out.uses)) != 1:
        return False
    yielded = as_op(list(block.operations)[-1]).operands[0]
    if not isinstance(yielded, ir.OpResult):
        return False
    add = as_op(yielded.owner)
    return (add.name == "arith.addf" and out in list(add.operands)
            and len(list(yielded.uses)) == 1)


def _split_sum_loops(op, stored: dict) -> list:
    """The ``split_sum`` generic ``op`` as scalar loops: for each element of the output,
    ``SUM_CHAINS`` partial sums over the last loop in steps of as many, the first
    starting from the output's element and the others from -0.0 (adding it changes no
    sum, -0.0 included), the remainder added to the first, then the partial sums added
    pairwise."""
    from aotc._mlir import arith, index_constant, ir, scf, tensor

    count = operand_segments(op)[0]
    operands = list(op.operands)
    op_maps = indexing_maps(op)
    ranges = loop_ranges(op)
    extent = ranges[-1]
    whole = extent - extent % SUM_CHAINS
    element_type = op.results[0].type.element_type
    minus_zero = arith.ConstantOp(element_type, ir.FloatAttr.get(element_type, -0.0)).result

    def term(indices, carried, partial):
        sources = {**stored, operands[count]: _extract(carried)}
        elements = [_read_mapped(v, m, indices, sources)
                    for v, m in zip(operands[:count], op_maps)]
        return body_values(op, indices, [*elements, partial])[0]

    def body(indices, carried):
        (out,) = carried
        at = _at(op_maps[count], [*indices, index_constant(0)])  # the sum's element
        first = tensor.ExtractOp(out, at).result
        loop = scf.ForOp(index_constant(0), index_constant(whole), index_constant(SUM_CHAINS),
                         [first] + [minus_zero] * (SUM_CHAINS - 1))
        with ir.InsertionPoint(loop.body):
            step = loop.induction_variable
            scf.YieldOp([
                term([*indices, arith.AddIOp(step, index_constant(j)).result], out, partial)
                for j, partial in enumerate(loop.inner_iter_args)])
        partials = list(loop.results)
        for k in range(whole, extent):
            partials[0] = term([*indices, index_constant(k)], out, partials[0])
        while len(partials) > 1:
            partials = [arith.AddFOp(a, b).result for a, b in zip(partials[::2], partials[1::2])]
        return [tensor.InsertOp(partials[0], out, at).result]
    return _nest(ranges[:-1], [operands[count]], body)


def scalarize_bools(op, stored: dict) -> None:
    """The bool results of the generic ``op`` as bytes (0 or 1) written by scalar loops:
    IREE 3.13 keeps bool tensors as bytes inside a dispatch, and a ``tensor.insert`` of
    an i1 there failed to verify. Each result's reader goes into ``stored`` (for
    ``read``); ``op`` stays until its readers, which must all be rewritten by
    ``scalarize`` with ``stored``, are gone (``forget_bools``)."""
    from aotc._mlir import arith, ir, tensor

    byte = ir.IntegerType.get_signless(8)
    with ir.InsertionPoint(op), op.location:
        outs = [tensor.EmptyOp(list(r.type.shape), byte).result for r in op.results]
        results = _loops(op, stored, outs, _bool_from_byte,
                         lambda value: arith.ExtUIOp(byte, value).result)
    stored.update((r, _bool_from_byte(b)) for r, b in zip(op.results, results))


def forget_bools(stored: dict) -> None:
    """Erases the bool generics ``scalarize_bools`` rewrote (nothing reads them now)."""
    for owner in {as_op(value.owner) for value in stored}:
        if not any(list(r.uses) for r in owner.results):
            owner.erase()


def _fill(op, stored: dict) -> list:
    """The fill's value at every element, converted to the element type by the fill's
    own body (a float64 0.0 filling a float32 tensor is truncated there)."""
    from aotc._mlir import tensor

    value, out = op.operands[0], op.operands[1]

    def body(indices, carried):
        element = value
        if value.type != out.type.element_type:
            current = tensor.ExtractOp(carried[0], indices).result
            element = body_values(op, indices, [value, current])[0]
        return [tensor.InsertOp(element, carried[0], indices).result]
    return _nest(list(out.type.shape), [out], body)


def _insert_slice(op, stored: dict) -> list:
    """Each element of the source at its place: the destination's index along a
    dimension is the offset plus the source's (a dimension the slice drops, of size 1,
    takes the offset alone). Slices of the destination the source reads at the element
    being written (``in_place_reads``) are read from the destination as the loop updates
    it: no copy of them is made."""
    from aotc._mlir import arith, tensor

    source, dest = op.operands[0], op.operands[1]
    offsets = _offsets(op)
    kept = _kept_dims(list(op.attributes["static_sizes"]), list(source.type.shape))
    views = in_place_reads(op)

    def body(indices, carried):
        loop = [indices[k] for k, n in enumerate(source.type.shape) if n != 1]
        readers = {view: _slice_reader(view, carried[0], loop) for view in views}
        element = read(source, indices, {**stored, **readers})
        at = list(offsets)
        for k, d in enumerate(kept):
            at[d] = arith.AddIOp(offsets[d], indices[k]).result
        return [tensor.InsertOp(element, carried[0], at).result]
    return _nest(list(source.type.shape), [dest], body)


def _offsets(op) -> list:
    """The offsets of a slice op (``tensor.extract_slice``, ``insert_slice``) as index
    values."""
    from aotc._mlir import index_constant, ir

    first = 1 if op.name == "tensor.extract_slice" else 2  # after the source (and dest)
    dynamic = iter(list(op.operands)[first:])
    return [next(dynamic) if o == ir.ShapedType.get_dynamic_stride_or_offset()
            else index_constant(o) for o in op.attributes["static_offsets"]]


def in_place_reads(insert) -> list:
    """The values the source of ``insert`` (a ``tensor.insert_slice``) reads through
    ``read`` that are slices of its destination (seen through unit reshapes) laid out as
    the insert writes: the same sizes, unit strides and the same static offsets along
    every dimension of more than one element (a dynamic offset only along unit ones, as
    ``x[i - 1]`` and ``x[i]``). Read at the element being written, such a slice's
    element is never one the insert has already written: another row, or the element
    itself before its write. (Read elsewhere, ``_slice_reader`` reads the slice.)"""
    dest = insert.operands[1]
    sizes = list(insert.attributes["static_sizes"])
    offsets = list(insert.attributes["static_offsets"])
    found: list = []

    def visit(value):
        if fused(value):
            producer = as_op(underneath(value).owner)
            for v in list(producer.operands)[:operand_segments(producer)[0]]:
                visit(v)
            return
        below = underneath(value)
        if _is_slice_of(below, dest) and _laid_out_as(as_op(below.owner), sizes, offsets):
            found.append(value)
    visit(insert.operands[0])
    return found


def _is_slice_of(value, dest) -> bool:
    from aotc._mlir import ir

    return (isinstance(value, ir.OpResult) and as_op(value.owner).name == "tensor.extract_slice"
            and as_op(value.owner).operands[0] == dest)


def _laid_out_as(extract, sizes: list, offsets: list) -> bool:
    from aotc._mlir import ir

    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    mine = list(extract.attributes["static_offsets"])
    return (list(extract.attributes["static_sizes"]) == sizes
            and all(s == 1 for s in extract.attributes["static_strides"])
            and all(n == 1 or (a == b != dynamic) for n, a, b in zip(sizes, mine, offsets)))


def _slice_reader(view, dest, loop: list):
    """A reader of ``view`` (``in_place_reads``) for ``read``: at the loop's own indices
    along its dimensions of more than one element, the element of ``dest`` (the
    destination as the loop has updated it so far); elsewhere, the view's own."""
    from aotc._mlir import arith, tensor

    extract = as_op(underneath(view).owner)
    offsets = _offsets(extract)
    sizes = list(extract.attributes["static_sizes"])

    def reader(indices):
        own = [i for i, n in zip(indices, view.type.shape) if n != 1]
        if own != loop:
            return tensor.ExtractOp(view, indices).result
        it = iter(loop)
        at = [o if n == 1 else arith.AddIOp(o, next(it)).result for o, n in zip(offsets, sizes)]
        return tensor.ExtractOp(dest, at).result
    return reader


def _kept_dims(sizes: list[int], source: list[int]) -> list[int]:
    """The destination dimensions the source's dimensions stand for, matching sizes from
    the left (unit dimensions of the slice the source lacks are dropped; where that is
    ambiguous, the unit dimensions all take the offset alone either way)."""
    kept, k = [], 0
    for d, n in enumerate(sizes):
        if k < len(source) and source[k] == n:
            kept.append(d)
            k += 1
    return kept


_REWRITES = {"linalg.generic": _generic, "linalg.fill": _fill,
             "tensor.insert_slice": _insert_slice}


def scalarizable(op) -> bool:
    """Whether ``scalarize`` can rewrite ``op`` (see the module docstring)."""
    op = as_op(op)
    if op.name not in _REWRITES or not all(_static(v) for v in [*op.operands, *op.results]):
        return False
    if op.name == "linalg.generic":
        ranges = loop_ranges(op)
        return None not in ranges and all(_simple_map(m) for m in indexing_maps(op))
    if op.name == "tensor.insert_slice":
        strides = op.attributes["static_strides"]
        return all(s == 1 for s in strides) and len(list(op.operands)) >= 2
    return True


def scalarize(op, stored: dict | None = None) -> None:
    """Replaces ``op`` (``scalarizable``) by scalar loops computing the same results,
    reading the bool tensors in ``stored`` (``scalarize_bools``) from their bytes; an op
    whose results nothing reads any more (each was ``fused`` into its reader's loop) is
    erased."""
    from aotc._mlir import ir

    op = as_op(op)
    if not any(list(r.uses) for r in op.results):
        op.erase()
        return
    with ir.InsertionPoint(op), op.location:
        results = _REWRITES[op.name](op, stored or {})
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    op.erase()
