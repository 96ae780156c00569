"""Small builders for the MLIR ops that every aotc operation is made of.

All of them emit at the current insertion point of the trace being built.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from . import dtypes
from ._mlir import (
    PARALLEL,
    affine_maps,
    arith,
    dim_map,
    index_constant,
    ir,
    iterator_types,
    linalg,
    reassociation,
    tensor,
)
from .constants import scalar_constant
from .core import Tracer, current_trace, user_location
from .work import Work
from .passes.opset import (
    GATHER_FUSING_OPS,
    INSERT_FUSED_PRODUCERS,
    POINTWISE_OPS,
)


def empty(shape: Sequence[int], dtype: np.dtype) -> ir.Value:
    return tensor.EmptyOp(list(shape), dtypes.mlir_type(dtype)).result


def fill(shape: Sequence[int], dtype: np.dtype, value) -> ir.Value:
    """A tensor filled with ``value`` (a Python scalar or a scalar ir.Value)."""
    if not isinstance(value, ir.Value):
        value = scalar_constant(value, dtype)
    return linalg.fill(value, outs=[empty(shape, dtype)])


def wrap(value: ir.Value, shape: Sequence[int], dtype: np.dtype) -> Tracer:
    return Tracer(value, shape, dtype)


def add_work(amount: float, contraction: bool = False, matvec: bool = False) -> None:
    """Counts one op of ``amount`` work (``work.Work``; ``contraction``: a matmul's flops,
    ``matvec``: a matrix-vector product's)."""
    trace = current_trace()
    amount = float(amount)
    trace.work += Work(amount, amount if contraction else 0.0, amount if matvec else 0.0)
    trace.ops += 1


BodyFn = Callable[..., Sequence[ir.Value]]


def generic(
    inputs: Sequence[tuple[ir.Value, ir.AffineMap]],
    outputs: Sequence[tuple[ir.Value, ir.AffineMap]],
    iterators: Sequence[str],
    body: BodyFn,
) -> list[ir.Value]:
    """A ``linalg.generic``: ``body(*input_scalars, *output_scalars)`` returns the yields."""
    in_values = [v for v, _ in inputs]
    out_values = [v for v, _ in outputs]
    # The user's source line goes on the op and on every op of its body, so errors about
    # any of them point at the line that asked for it.
    with user_location():
        op = linalg.GenericOp(
            [v.type for v in out_values],
            in_values,
            out_values,
            affine_maps([m for _, m in inputs] + [m for _, m in outputs]),
            iterator_types(list(iterators)),
        )
        arg_types = [ir.RankedTensorType(v.type).element_type for v in in_values + out_values]
        block = op.regions[0].blocks.append(*arg_types)
        with ir.InsertionPoint(block):
            results = body(*block.arguments)
            linalg.YieldOp(list(results))
    return list(op.results)


def loop_index(dim: int) -> ir.Value:
    """The current iteration index of loop dimension ``dim`` inside a linalg body."""
    return linalg.IndexOp(dim).result


def strided_index(dim: int, start: int, step: int) -> ir.Value:
    """``start + step * i`` for the iteration index ``i`` of loop dimension ``dim``."""
    i = loop_index(dim)
    if step != 1:
        i = arith.MulIOp(i, index_constant(step)).result
    if start != 0:
        i = arith.AddIOp(i, index_constant(start)).result
    return i


# ---- reshaping without data movement ------------------------------------------------------

def collapse(value: ir.Value, shape: Sequence[int], groups: Sequence[Sequence[int]],
             dtype) -> ir.Value:
    out_shape = [int(np.prod([shape[d] for d in g], dtype=np.int64)) for g in groups]
    return tensor.CollapseShapeOp(dtypes.tensor_type(out_shape, dtype), value,
                                  reassociation(groups)).result


def expand(value: ir.Value, out_shape: Sequence[int], groups: Sequence[Sequence[int]],
           dtype) -> ir.Value:
    return tensor.ExpandShapeOp(
        dtypes.tensor_type(out_shape, dtype), value, reassociation(groups), [], list(out_shape)
    ).result


def reshape_value(value: ir.Value, shape: Sequence[int], new_shape: Sequence[int],
                  dtype) -> ir.Value:
    """Reshapes through collapse/expand (row-major order, as numpy's reshape)."""
    shape, new_shape = tuple(shape), tuple(new_shape)
    if shape == new_shape:
        return value
    groups = _unit_dim_groups(shape, new_shape)
    if groups is not None:
        kind, grouping = groups
        if kind == "collapse":
            return collapse(value, shape, grouping, dtype)
        return expand(value, new_shape, grouping, dtype)
    flat = value
    if len(shape) != 1:
        flat = collapse(value, shape, [list(range(len(shape)))] if shape else [], dtype)
    if len(new_shape) == 1:
        return flat
    return expand(flat, new_shape, [list(range(len(new_shape)))] if new_shape else [], dtype)


def _unit_dim_groups(shape, new_shape):
    """A single collapse or expand when one shape merges runs of the other's dims.

    Returns ("collapse", groups) when ``new_shape`` merges runs of ``shape``, ("expand",
    groups) when it splits them, else None.
    """
    if len(new_shape) < len(shape):
        groups = merge_groups(shape, new_shape)
        return ("collapse", groups) if groups is not None else None
    if len(new_shape) > len(shape):
        groups = merge_groups(new_shape, shape)
        return ("expand", groups) if groups is not None else None
    return None


def merge_groups(big: Sequence[int], small: Sequence[int]) -> list[list[int]] | None:
    """Groups consecutive dims of ``big`` whose products give ``small``, or None."""
    if not small:
        return [] if all(d == 1 for d in big) else None
    groups, i = [], 0
    for target in small:
        group, prod = [], 1
        while i < len(big):
            group.append(i)
            prod *= big[i]
            i += 1
            if prod == target:
                break
        if prod != target:
            return None
        groups.append(group)
    if i < len(big):
        if any(big[k] != 1 for k in range(i, len(big))):
            return None
        groups[-1].extend(range(i, len(big)))
    return groups


def drop_broadcast_dims(t: Tracer, loop_dims: Sequence[int],
                        loop_shape: Sequence[int]) -> tuple[ir.Value, list[int]]:
    """Prepares an operand for a linalg op that broadcasts it over ``loop_shape``.

    ``loop_dims[i]`` is the loop dimension that axis ``i`` of ``t`` follows. Size-1 axes
    that the loop stretches are collapsed away, so the indexing map stays a projected
    permutation (which every IREE codegen path handles) instead of using constant 0s.
    Returns the value to use and the loop dims of its remaining axes.
    """
    keep = [i for i, d in enumerate(loop_dims) if not (t.shape[i] == 1 and loop_shape[d] != 1)]
    if len(keep) == len(loop_dims):
        return t.value, list(loop_dims)
    new_shape = [t.shape[i] for i in keep]
    value = reshape_value(t.value, t.shape, new_shape, t.dtype)
    return value, [loop_dims[i] for i in keep]


def identity_map(rank: int) -> ir.AffineMap:
    return dim_map(rank, list(range(rank)))


def parallel(rank: int) -> list[str]:
    return [PARALLEL] * rank


# ---- reading at computed indices ---------------------------------------------------------



def _views_strided_slice(value: ir.Value) -> bool:
    while isinstance(value, ir.OpResult):
        op = value.owner
        if op.name not in GATHER_FUSING_OPS:
            return False
        if op.name == "tensor.extract_slice" and _strided_innermost(op):
            return True
        value = op.operands[0]
    return False


def _strided_innermost(slice_op) -> bool:
    """Whether a ``tensor.extract_slice`` leaves its elements apart in memory along its
    innermost dimension of more than one element (unit dimensions are folded away): a
    step other than 1, or a dimension after it that the slice cuts to one element of
    several (``a[:, :, 32:]`` of a (2, 33, 33) array is a column, 33 elements apart)."""
    steps = ir.DenseI64ArrayAttr(slice_op.attributes["static_strides"])
    if any(s != 1 for s in steps):
        return True
    sizes = list(ir.DenseI64ArrayAttr(slice_op.attributes["static_sizes"]))
    source = ir.RankedTensorType(slice_op.operands[0].type).shape
    wide = [d for d, n in enumerate(sizes) if n != 1]
    return bool(wide) and any(n != 1 for n in source[wide[-1] + 1:])


def gather_source(x: Tracer) -> Tracer:
    """``x`` made safe to read with ``tensor.extract`` at computed indices.

    IREE 3.13's CPU backend fails ("LLVM Translation failed for operation:
    builtin.unrealized_conversion_cast": a ``vector.gather`` from a memref whose innermost
    stride is not 1) on such a read from a strided ``tensor.extract_slice``, also through
    reshapes and transposes, because it fuses them into the reading dispatch. A
    ``util.optimization_barrier`` stops that fusion: the slice is copied out by its own
    dispatch first.
    """
    if not _views_strided_slice(x.value):
        return x
    return materialized(x)


def materialized(t: Tracer) -> Tracer:
    """``t`` through a ``util.optimization_barrier``: IREE computes it in a dispatch of its
    own instead of fusing it into the dispatch that reads it."""
    with user_location():
        return wrap(barrier(t.value), t.shape, t.dtype)


def barrier(value: ir.Value, mark: str | None = None) -> ir.Value:
    """``value`` through a ``util.optimization_barrier`` (at the current location), marked
    with the unit attribute ``mark`` if given (for the passes that look for it)."""
    attributes = {} if mark is None else {mark: ir.UnitAttr.get()}
    return ir.Operation.create("util.optimization_barrier", results=[value.type],
                               operands=[value], attributes=attributes).results[0]


# ---- slices ---------------------------------------------------------------------------------

def mixed_offsets(starts) -> tuple[list, list]:
    """(dynamic offset values, static offsets with MLIR's dynamic marker) for slice ops;
    ``starts`` holds ints and ``index`` values."""
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    values = [s for s in starts if isinstance(s, ir.Value)]
    static = [dynamic if isinstance(s, ir.Value) else int(s) for s in starts]
    return values, static


def extract_slice(source: ir.Value, source_shape: Sequence[int], offsets, sizes: Sequence[int],
                  strides: Sequence[int] | None, dtype,
                  result_shape: Sequence[int] | None = None) -> ir.Value:
    """``tensor.extract_slice`` of ``sizes`` at ``offsets`` (ints or ``index`` values);
    ``result_shape`` drops unit dims (a rank-reducing slice), default ``sizes``.

    MLIR rejects every offset into a tensor with a size-0 dimension ("offset 0 is
    out-of-bounds: 0 >= 0"), so an empty source or result is a ``tensor.empty`` instead:
    there is nothing to read.
    """
    result_shape = list(sizes) if result_shape is None else list(result_shape)
    if 0 in source_shape or 0 in sizes:
        return empty(result_shape, dtype)
    values, static = mixed_offsets(offsets)
    strides = [1] * len(sizes) if strides is None else list(strides)
    result_type = dtypes.tensor_type(result_shape, dtype)
    if not values:
        written = _written_at(source, static, list(sizes), strides, result_type)
        if written is not None:
            return written
    with user_location():
        return tensor.ExtractSliceOp(result_type, source, values,
                                     [], [], static, list(sizes), strides).result


# How many earlier updates a read of a static window looks back through.
_FORWARD_DEPTH = 64


def _written_at(source: ir.Value, offsets: list, sizes: list, strides: list,
                result_type) -> ir.Value | None:
    """The value an earlier ``tensor.insert_slice`` wrote into exactly this static window
    of ``source``, looking back through updates of windows that do not overlap it; None
    when another update may have touched it or the types differ.

    numpy code writes an element and reads it back (``cov[i, j] = ...; cov[j, i] =
    cov[i, j]``). Read from the tensor, the value depends on the update, and the next
    update into that tensor then reads its own destination elsewhere, which costs a
    barrier (``_reads_elsewhere``) and a submission of its own for every element."""
    for _ in range(_FORWARD_DEPTH):
        if not isinstance(source, ir.OpResult):
            return None
        op = source.owner.operation
        if op.name != "tensor.insert_slice" or len(op.operands) != 2:  # dynamic offsets
            return None
        attrs = op.attributes
        window = [list(ir.DenseI64ArrayAttr(attrs[k]))
                  for k in ("static_offsets", "static_sizes", "static_strides")]
        if window == [offsets, sizes, strides]:
            written = op.operands[0]
            return written if written.type == result_type else None
        if not _disjoint(window, (offsets, sizes, strides)):
            return None
        source = op.operands[1]
    return None


def _disjoint(a, b) -> bool:
    """Whether two static windows (offsets, sizes, strides) share no element: their
    bounding boxes are apart along some dimension."""
    for a_off, a_size, a_stride, b_off, b_size, b_stride in zip(*a, *b):
        a_last, b_last = a_off + (a_size - 1) * a_stride, b_off + (b_size - 1) * b_stride
        if a_last < b_off or b_last < a_off:
            return True
    return False


def insert_slice(source: ir.Value, dest: ir.Value, dest_shape: Sequence[int], offsets,
                 sizes: Sequence[int], strides: Sequence[int] | None = None) -> ir.Value:
    """``tensor.insert_slice`` of ``source`` (``sizes``, possibly rank-reduced) into
    ``dest`` at ``offsets``; writing an empty slice (or into an empty tensor, where MLIR
    rejects every offset) leaves ``dest`` as it is."""
    if 0 in dest_shape or 0 in sizes:
        return dest
    values, static = mixed_offsets(offsets)
    strides = [1] * len(sizes) if strides is None else list(strides)
    with user_location():
        if _reads_elsewhere(source, dest, values, static, list(sizes), strides):
            source = barrier(source)
        return tensor.InsertSliceOp(source, dest, values, [], [], static, list(sizes),
                                    strides).result


def _reads_elsewhere(source: ir.Value, dest: ir.Value, dynamic, static, sizes, strides) -> bool:
    """Whether ``source``, about to be inserted into ``dest``, is computed from elements of
    ``dest`` other than the ones it overwrites (``y[1:10] += y[:9]``, ``y[:9] +=
    y[8::-1]``, ``A[1:-1] = A[:-2] + A[2:]``), or from the very window it overwrites but
    not element by element (``A[r, :] = A[r, :] @ C``).

    IREE 3.13 fuses the source's producers into the dispatch that writes the slice into
    ``dest``'s own buffer, and then reads elements it has already overwritten: measured,
    the element after the first vector of 8 comes out wrong, and a row times a matrix
    written over its row is wrong from the second tile of its columns. Only the producers
    IREE fuses (elementwise ops and reductions, slices, reshapes, element reads) are
    followed; a read of the very window being written through pointwise ops only
    (``x.at[1:3].add(v)``) is safe and gets no barrier. When this returns True the source
    is computed into a buffer of its own first.
    """
    stack, seen = [(source, True)], set()
    while stack:
        value, pointwise = stack.pop()
        if value == dest or not isinstance(value, ir.OpResult):
            continue
        op = value.owner.operation
        if (op, pointwise) in seen or op.name not in INSERT_FUSED_PRODUCERS:
            continue
        seen.add((op, pointwise))
        for inner in _ops_with_regions(op):
            for i, operand in enumerate(inner.operands):
                through = pointwise and _reads_pointwise(inner, i)
                if operand != dest:
                    stack.append((operand, through))
                elif not (through and _same_window(inner, i, dynamic, static, sizes, strides)):
                    return True
    return False


def _reads_pointwise(op, operand_index: int) -> bool:
    """Whether each element of ``op``'s result reads operand ``operand_index`` at its own
    position only (the vocabulary's ``pointwise`` rows); a linalg.generic only where that
    operand's indexing map is its result's and nothing is reduced (``A[r] @ C`` reads
    the whole row for each element)."""
    if op.name not in POINTWISE_OPS:
        return False
    if op.name != "linalg.generic":
        return True
    maps = [str(m) for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if any("reduction" in str(t) for t in ir.ArrayAttr(op.attributes["iterator_types"])):
        return False
    return operand_index >= len(maps) or maps[operand_index] == maps[-1]


def _ops_with_regions(op) -> list:
    """``op`` and every op nested in its regions (a generic's body reads captured values)."""
    found = [op]
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                found.extend(_ops_with_regions(inner.operation))
    return found


def _same_window(reader, operand_index: int, dynamic, static, sizes, strides) -> bool:
    """Whether ``reader`` reads exactly the window an insert with these offsets, sizes and
    strides writes (the source of a ``tensor.extract_slice``, same positions)."""
    if reader.name != "tensor.extract_slice" or operand_index != 0:
        return False
    attrs = reader.attributes
    same_static = (list(ir.DenseI64ArrayAttr(attrs["static_offsets"])) == list(static)
                   and list(ir.DenseI64ArrayAttr(attrs["static_sizes"])) == list(sizes)
                   and list(ir.DenseI64ArrayAttr(attrs["static_strides"])) == list(strides))
    offsets = list(reader.operands)[1:]
    return (same_static and len(offsets) == len(dynamic)
            and all(_same_value(a, b) for a, b in zip(offsets, dynamic)))


def _same_value(a: ir.Value, b: ir.Value, depth: int = 12) -> bool:
    """Whether two index values are one computation: the same value, or the same op with
    the same attributes on the same operands (the offsets of ``dynamic_slice`` and
    ``dynamic_update_slice`` at one index are clamped twice, before CSE merges them)."""
    if a == b:
        return True
    if depth == 0 or not (isinstance(a, ir.OpResult) and isinstance(b, ir.OpResult)):
        return False
    x, y = a.owner.operation, b.owner.operation
    if (x.name != y.name or a.result_number != b.result_number or list(x.regions)
            or len(x.operands) != len(y.operands)):
        return False
    attrs = [sorted((name, str(op.attributes[name])) for name in op.attributes)
             for op in (x, y)]
    return attrs[0] == attrs[1] and all(
        _same_value(p, q, depth - 1) for p, q in zip(x.operands, y.operands))
