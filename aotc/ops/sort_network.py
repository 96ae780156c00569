"""A bitonic sorting network of linalg ops: sorts the rows of a [rows, n] tensor.

Why a network and not ``iree_linalg_ext.sort``: IREE 3.13 lowers that op to a bubble sort
per row (measured on the CPU: 1000 float32 in 12 ms, 4000 in 360 ms; numpy: 0.1 and 0.3
ms), it fails to compile once a row's copy exceeds the 32 KiB stack (8192 float32), and
it sorts in place, which needs copies IREE mishandles (a sort of a slice of an argument
fails to compile; behind a ``util.optimization_barrier`` two sorts of one value see each
other's writes).

The network sorts the original indices of rows padded to a power of two, 2**p, in
p(p+1)/2 data-parallel steps, each one ``linalg.generic`` that writes a new index tensor:
position i compares its element with that of position i ^ j (both read through their
indices with ``tensor.extract`` from the unsorted rows) and keeps the first or the second
of the pair, by the direction bit i & k of the bitonic merge. The first step (k = 2, j =
1) makes the indices from its loop index; the others run in two nested ``scf.for`` loops
over k = 4, ..., 2**p and j = k/2, ..., 1, so the program has two steps whatever p is; a
last generic reads the sorted values. Padding is never materialized: indices >= n read a
clamped element and ``before`` orders them last. Only one tensor is carried through the
loops: with two (values and indices, made by one dispatch) IREE 3.13 fails at run time
on Vulkan ("indirect buffer reference slot 0 is out range of the declared binding
capacity of the command buffer") once a function has several sorts; padding with
``tensor.concat`` failed the same way.

``before`` is a strict total order on (value, index) pairs, so equal values keep their
index order (a stable sort) and every pair has exactly one first element.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import dtypes
from .._mlir import arith, index_constant, ir, scf, tensor
from ..lowering import add_work, empty, generic, identity_map, loop_index, parallel
from .scalar import cmpi, select

# before(a, index_a, b, index_b): whether (a, index_a) comes first; an i1.
Before = Callable[[ir.Value, ir.Value, ir.Value, ir.Value], ir.Value]


def padded_width(size: int) -> int:
    """The row length the network sorts: ``size`` rounded up to a power of two."""
    return 1 << (size - 1).bit_length()


def sort_rows(source: ir.Value, before: Before, index_dtype) -> tuple[ir.Value, ir.Value]:
    """Sorts each row of ``source`` ([rows, n], n >= 2); returns the sorted rows and each
    element's original index, both [rows, padded_width(n)] with the padding last."""
    rows, size = ir.RankedTensorType(source.type).shape
    width = padded_width(size)
    levels = width.bit_length() - 1
    read = _reader(source, width)
    one = index_constant(1)
    indices = _first_step(read, rows, width, index_dtype, before)
    merges = scf.ForOp(index_constant(2), index_constant(levels + 1), one, [indices])
    with ir.InsertionPoint(merges.body):
        level = merges.induction_variable  # k = 2**level: the size of the blocks merged
        block = arith.ShLIOp(one, level).result
        steps = scf.ForOp(index_constant(0), level, one, list(merges.inner_iter_args))
        with ir.InsertionPoint(steps.body):
            # j = k / 2**(step + 1): the distance of the elements compared
            shift = arith.SubIOp(arith.SubIOp(level, one).result, steps.induction_variable).result
            distance = arith.ShLIOp(one, shift).result
            scf.YieldOp([_step(read, steps.inner_iter_args[0], distance, block, before)])
        scf.YieldOp(list(steps.results))
    indices = merges.results[0]
    add_work(rows * width * levels * (levels + 1) / 2)
    element = ir.RankedTensorType(source.type).element_type
    (values,) = generic([(indices, identity_map(2))],
                        [(tensor.EmptyOp([rows, width], element).result, identity_map(2))],
                        parallel(2), lambda index, _out: [read(loop_index(0), index)])
    return values, indices


def _reader(source: ir.Value, width: int):
    """``read(row, index)``: the element of ``source`` at an original index (an integer
    of the index dtype); padding indices (>= n) read the row's last element."""
    size = ir.RankedTensorType(source.type).shape[1]
    last = index_constant(size - 1)

    def read(row, index):
        position = arith.IndexCastOp(ir.IndexType.get(), index).result
        if width > size:
            position = arith.MinUIOp(position, last).result
        return tensor.ExtractOp(source, [row, position]).result
    return read


def _kept(read, row, i, index_a, partner, index_b, block, before: Before) -> ir.Value:
    """The index element i keeps of the pair (its own, its partner's)."""
    ascending = cmpi("eq", arith.AndIOp(i, block).result, index_constant(0))
    lower = cmpi("ult", i, partner)
    # The lower element of an ascending pair (the upper of a descending one) keeps the
    # one that comes first.
    first = before(read(row, index_a), index_a, read(row, index_b), index_b)
    return select(cmpi("eq", first, cmpi("eq", lower, ascending)), index_a, index_b)


def _first_step(read, rows: int, width: int, index_dtype, before: Before) -> ir.Value:
    """Step k = 2, j = 1 over the padded rows: the indices each position keeps."""
    index_type = dtypes.mlir_type(index_dtype)

    def body(_out):
        row, i = loop_index(0), loop_index(1)
        partner = arith.XOrIOp(i, index_constant(1)).result
        index_a, index_b = (arith.IndexCastOp(index_type, v).result for v in (i, partner))
        return [_kept(read, row, i, index_a, partner, index_b, index_constant(2), before)]

    (indices,) = generic([], [(empty([rows, width], index_dtype), identity_map(2))],
                         parallel(2), body)
    return indices


def _step(read, indices: ir.Value, distance: ir.Value, block: ir.Value, before: Before) -> ir.Value:
    """One compare-exchange step of the network over every position."""
    shape = ir.RankedTensorType(indices.type).shape

    def body(index_a, _out):
        row, i = loop_index(0), loop_index(1)
        partner = arith.XOrIOp(i, distance).result
        index_b = tensor.ExtractOp(indices, [row, partner]).result
        return [_kept(read, row, i, index_a, partner, index_b, block, before)]

    out = tensor.EmptyOp(shape, ir.RankedTensorType(indices.type).element_type).result
    (result,) = generic([(indices, identity_map(2))], [(out, identity_map(2))], parallel(2), body)
    return result
