"""aotc-tile-reductions: float32 row maxima and minima carry tile sizes that keep several
accumulators in flight, on AMD Zen 5.

For a reduction over the rows of a float32 [rows, n] array, IREE 3.13 picks workgroups of
32 rows, 8 rows a vector tile and one 16-lane vector of the row a step: each row's
reduction is one chain of dependent vector ops, 256 steps for a 4096-element row, bound
by the latency of the combining op. ``llvm.maximum`` (NaN-propagating max) is long:
``max(x, axis=1)`` of a [256, 4096] array took 124 us on one core (local-sync,
``iree-benchmark-module``), a sum over the same rows fused with a division 136. With two
rows of 128 elements a vector tile the max took 24 us; with four rows of 64, 8 rows of 64
and 2 of 128, the softmax's max with its exponentials 168, 204 and 170 against 289, its
sum with the division 106, 135 and 97 against 136. Through ``aotc.jit`` (two cores,
device arrays, per call): the max 130 -> 52 us; a sum of squares 62 -> 61, a norm of
[2048, 2048] rows 289 -> 330, ``std`` and ``logsumexp`` unchanged: sums keep IREE's
choice.

This pass attaches the setting (``setting``; two rows of 128 elements where the row
divides by 128, four of 64 where by 64) as the op's ``compilation_info`` to every float32
``linalg.generic`` over (rows, row) that reduces the row (its last loop) with a max or
min (``opset.FLOAT_EXTREMA``) and reads its two-dimensional inputs row-major, with rows
of at least ``MIN_ROW`` elements. Where an op as large as its input reads its result
(``_feeds_a_row_consumer``: a softmax's ``x - max``), the readers read it through a
``flow.tensor.clone``: IREE would fuse that consumer into the reduction's dispatch and
derive its vectors from the setting, whole rows (the softmax did not compile). Apart,
the consumer reads the input again (4 MiB more for the softmax) and the max runs at its
own speed: softmax 256 -> 230-233 us a call (JAX 207-211), ``log_softmax`` written out
550 -> 230, ``x - max`` 202 -> 199.

It runs for one CPU target of AMD Zen 5 (``cpu_paths.tiles_reductions``), where it was
measured; a module IREE cannot compile with the settings is compiled again without them
(``compiler.compile_bytecode``, ``matmul_tiles.without_tile_settings``, which removes
every ``compilation_info``; the clones stay, values unchanged).

Invariants: values are unchanged (only code generation differs; max and min do not
depend on the order); an op that carries a setting keeps it, so running the pass twice
changes nothing more.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .base import (ModulePass, as_op, collect_ops, indexing_maps, operand_segments,
                   read_downstream, register, separate_readers)
from .matmul_tiles import ATTRIBUTE
from .opset import FLOAT_EXTREMA

# Shorter rows took too few steps for the chains to matter (not measured below 1024).
MIN_ROW = 1024
# (row elements a vector step covers, rows a vector tile), the first whose width divides
# the row; the workgroup keeps IREE's 32 rows.
VECTOR_TILES = ((128, 2), (64, 4))
WORKGROUP_ROWS = 32


def setting(rows: int, row: int) -> str | None:
    """The ``compilation_info`` of a reduction over ``row`` elements of each of ``rows``
    rows (None: IREE's own choice stays)."""
    if row < MIN_ROW:
        return None
    tile = next(((width, count) for width, count in VECTOR_TILES if row % width == 0), None)
    if tile is None:
        return None
    width, count = tile
    workgroup = min(WORKGROUP_ROWS, rows)
    if workgroup % count:
        return None
    return ("#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<"
            f"distribution = [{workgroup}, 0], vector_common_parallel = [{count}, 0], "
            f"vector_reduction = [0, {width}]>, translation_info = "
            "#iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>"
            ">>")


def _row_reduction(op) -> tuple[int, int] | None:
    """(rows, row) of a float32 row max or min this pass tiles, else None."""
    from aotc._mlir import ir

    if (op.name != "linalg.generic" or ATTRIBUTE in op.attributes
            or as_op(op.parent).name != "func.func"):  # not in a loop or a formed dispatch
        return None
    iterators = [str(it) for it in op.attributes["iterator_types"]]
    if len(iterators) != 2 or "parallel" not in iterators[0] or "reduction" not in iterators[1]:
        return None
    body = list(op.regions[0].blocks[0].operations)
    if not any(as_op(b).name in FLOAT_EXTREMA for b in body):
        return None  # sums: their chains were not the limit (module docstring)
    n_ins, _ = operand_segments(op)
    values = list(op.operands)
    if not all(isinstance(v.type, ir.RankedTensorType) and v.type.has_static_shape
               for v in values):
        return None
    if not all(isinstance(ir.RankedTensorType(v.type).element_type, ir.F32Type)
               for v in values[n_ins:]):
        return None
    maps = indexing_maps(op)
    identity = ir.AffineMap.get_identity(2)
    rows_and_row = None
    for value, m in zip(values[:n_ins], maps[:n_ins]):
        if ir.RankedTensorType(value.type).rank == 2:
            if m != identity:
                return None  # a column read: the vector step would stride
            rows_and_row = tuple(ir.RankedTensorType(value.type).shape)
    return rows_and_row


def _feeds_a_row_consumer(op, elements: int) -> bool:
    """Does an op over as many elements as the reduction read (``x - max``) read its
    result, directly or through reshapes and smaller elementwise ops (``x - mean``: the
    sum divided first)? IREE would fuse it into the reduction's dispatch."""
    from aotc._mlir import ir

    return read_downstream(op, lambda user: any(
        isinstance(r.type, ir.RankedTensorType) and math.prod(r.type.shape) >= elements
        for r in user.results))


@register
@dataclass(frozen=True)
class TileReductions(ModulePass):
    """Attaches the measured vector tiles to float32 row maxima and minima (module
    docstring)."""

    name = "aotc-tile-reductions"

    def run(self, module) -> None:
        from aotc._mlir import ir

        for op, (rows, row) in collect_ops(module, lambda o: _row_reduction(as_op(o))):
            info = setting(rows, row)
            if info is None:
                continue
            op = as_op(op)
            if _feeds_a_row_consumer(op, rows * row):
                for result in op.results:
                    separate_readers(result)
            op.attributes[ATTRIBUTE] = ir.Attribute.parse(info)
