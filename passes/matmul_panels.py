"""Matmuls on AVX2 read their operands from packed panels: part of aotc-tile-matmuls.

With the operands as stored, a register tile of 4 rows by two vectors of columns reads,
at each K step, 4 elements of A spread over 4 rows and one short strip of B from a row
K steps long: A's 4 streams and B's strided strip leave the loads behind the FMAs. On
AMD Zen 3 (AVX2) IREE's code for such a tile reached about 17 GFLOP/s a core in float64,
8.6 at 1024^3 (B's rows 8 KiB apart), against OpenBLAS's 36. Copying each operand into
panels first, A as [M/4, K, 4] (a register tile's 4 rows side by side at each K step)
and B as [N/P, K, P] (P columns: two vectors), makes each tile's reads two contiguous
streams. The matmul is then a ``linalg.generic`` over (row block, row, panel, column,
k) whose result [M/4, 4, N/P, P] is the [M, N] product in row-major order (a collapse,
no copy). Each pack goes through a clone (``base.separated``): without one IREE folds
the packs back into a plain matmul.

One core (``iree-benchmark-module``, local-sync), the packs included, plain 4x8 (float32
4x16) register tiles -> panels, numpy on one thread:

| float64 | plain | panels | numpy |
|---|---|---|---|
| 512^3 | 15.2-16.4 ms | 7.5-8.4 | 7.5 |
| 1024^3 | 251 ms | 59-89 | 59 |
| [64, 784] @ [784, 512] | 3.05 ms | 1.76 | 1.62 |
| [100, 784] @ [784, 512] | 4.81 ms | 2.48 | |
| [64, 512] @ [512, 512] | 1.64 ms | 1.46 | |
| 256^3 | 1.13 ms | 0.91 | 0.91 |

float32 (panels of 16 columns): [100, 784] @ [784, 512] 1.64-2.12 -> 1.21-1.25 ms, [128,
784] @ [784, 512] 2.46-2.82 -> 1.87-2.23, 512^3 4.93-5.51 -> 3.43-3.53; [64, 784] @ [784, 512]
1.06-1.39 -> 1.16-1.26 (no gain: packing its [784, 512] weights alone takes 0.26-0.43 ms,
numpy's own copy into that order 0.28).

Smaller matmuls pay for the packs on every call and ran slower packed ([8, 784] @ [784,
512] float32 0.16 -> 0.48 ms, float64 0.36 -> 0.53; [32, 784] @ [784, 512] float64 1.29 ->
1.63; 128 x 512 x 128 float64 0.57 -> 0.86; 192^3 0.45 -> 0.54), so only matmuls of at
least ``MIN_ROWS`` rows and ``MIN_FLOPS`` get panels (``packs``). Rows and columns that
are not whole register tiles and panels are padded with zeros, the product cut back
through a clone. Workgroups of up to ``WORKGROUP_ROW_BLOCKS`` register rows by
``WORKGROUP_PANELS`` panels (32 rows by 4 panels ran 7.5-8.4 ms at 512^3, 16 rows 10.6;
at 1024^3 the measurements' noise exceeded the differences between shapes). A batch
matmul keeps its batch dimension in front of the panels, one batch element a workgroup,
and the rule applies to one element (two cores through ``aotc.jit``: float64 8 x 256^3
6.7 -> 5.9 ms, numpy 5.9).
"""

from __future__ import annotations

from .base import element_bytes, separate_readers, separated

REGISTER_ROWS = 4
REGISTER_VECTORS = 2  # a panel's columns: two vector registers' worth
# The fewest rows that run on panels, by element bytes: float32 [64, 784] @ [784, 512]
# ran 1.06-1.39 ms plain against 1.16-1.26 on panels, [100, 784] @ [784, 512] 1.64-2.12
# against 1.21-1.25.
MIN_ROWS = {8: 64, 4: 100}
MIN_FLOPS = 2 * 256**3
WORKGROUP_ROW_BLOCKS = 8
WORKGROUP_PANELS = 4
# IREE's CPU pipeline of these settings (and aotc-tile-matmuls'), its options and closing
# bracket left to the setting.
DOUBLE_TILING_PIPELINE = ("#iree_codegen.translation_info<pipeline = "
                          "#iree_cpu.pipeline<DoubleTilingExpert>")


def panel_columns(element_bytes_: int, register_bytes: int) -> int:
    """A panel's columns for elements of ``element_bytes_`` bytes in vector registers of
    ``register_bytes``."""
    return REGISTER_VECTORS * register_bytes // element_bytes_


def packs(rows: int, depth: int, columns: int, element_bytes_: int) -> bool:
    """Whether a static [rows, depth] @ [depth, columns] matmul runs on panels (module
    docstring)."""
    return rows >= MIN_ROWS[element_bytes_] and 2 * rows * depth * columns >= MIN_FLOPS


def _whole(size: int, multiple: int) -> int:
    return -(-size // multiple) * multiple


def setting(rows: int, panel: int, batched: bool = False) -> str:
    """The ``compilation_info`` of the panel product of a matmul with ``rows`` rows and
    panels of ``panel`` columns: loops ([batch,] row block, row, panel, column, k), one
    batch element a workgroup."""
    blocks = rows // REGISTER_ROWS
    workgroup_blocks = max(b for b in range(1, WORKGROUP_ROW_BLOCKS + 1) if blocks % b == 0)
    ones, zeros = ("1, ", "0, ") if batched else ("", "")
    return ("#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<"
            f"distribution = [{ones}{workgroup_blocks}, {REGISTER_ROWS}, {WORKGROUP_PANELS}, "
            f"{panel}, 0], vector_common_parallel = [{ones}1, {REGISTER_ROWS}, 1, {panel}, 0], "
            f"vector_reduction = [{zeros}0, 0, 0, 0, 1]>, translation_info = "
            f"{DOUBLE_TILING_PIPELINE}>>")


def as_panel_product(matmul, register_bytes: int, separate_result: bool) -> None:
    """``matmul`` (a static ``linalg.matmul`` or ``linalg.batch_matmul`` that ``packs``)
    as the product of its operands' panels, with its setting; ``separate_result``: its
    readers read it through a clone (``matmul_tiles.SEPARATED_RESULTS``)."""
    from aotc._mlir import PARALLEL, REDUCTION, affine_maps, dim_map, ir, iterator_types, \
        linalg, tensor

    from .autodiff.builders import transposed

    lhs, rhs, init = list(matmul.operands)
    shape = ir.RankedTensorType(lhs.type).shape
    batch, (rows, depth) = list(shape[:-2]), shape[-2:]
    columns = ir.RankedTensorType(rhs.type).shape[-1]
    out = ir.RankedTensorType(init.type)
    element = out.element_type
    panel = panel_columns(element_bytes(element), register_bytes)
    # Rows and columns that are not whole register tiles and panels are padded with zeros.
    rows_, columns_ = _whole(rows, REGISTER_ROWS), _whole(columns, panel)
    blocks, panels = rows_ // REGISTER_ROWS, columns_ // panel
    n = len(batch)  # the leading batch dimension, if any, is kept as it is
    lead, lead_groups = list(range(n)), [[i] for i in range(n)]

    def expanded(value, shape, groups):
        return tensor.expand_shape(ir.RankedTensorType.get(shape, element), value,
                                   lead_groups + [[n + i for i in g] for g in groups], [], shape)

    # A pack is a dispatch of its own, apart from the operand's producer too: IREE fused
    # the next layer's pack into a layer's matmul, which then stored its result in the
    # pack's order and ran its setting on the wrong loops (an MLP at batch 64 1.2 -> 7.1 ms).
    with ir.InsertionPoint(matmul), matmul.location:
        lhs = grown(separated(lhs), batch + [rows_, depth])
        rhs = grown(separated(rhs), batch + [depth, columns_])
        lhs_panels = separated(transposed(
            expanded(lhs, batch + [blocks, REGISTER_ROWS, depth], [[0, 1], [2]]),
            lead + [n, n + 2, n + 1]))
        rhs_panels = separated(transposed(
            expanded(rhs, batch + [depth, panels, panel], [[0], [1, 2]]),
            lead + [n + 1, n, n + 2]))
        tiled = ir.RankedTensorType.get(batch + [blocks, REGISTER_ROWS, panels, panel], element)
        acc = expanded(grown(init, batch + [rows_, columns_]), list(tiled.shape),
                       [[0, 1], [2, 3]])
        # loops ([batch,] row block b, row r, panel p, column c, k)
        maps = [dim_map(n + 5, lead + [n + d for d in dims])
                for dims in ((0, 4, 1), (2, 4, 3), (0, 1, 2, 3))]
        product = linalg.GenericOp([tiled], [lhs_panels, rhs_panels], [acc], affine_maps(maps),
                                   iterator_types([PARALLEL] * (n + 4) + [REDUCTION]))
        body = product.regions[0].blocks.append(element, element, element)
        with ir.InsertionPoint(body):
            linalg.YieldOp([multiply_add(*body.arguments)])
        product.attributes["compilation_info"] = ir.Attribute.parse(
            setting(rows_, panel, batched=bool(n)))
        whole = ir.RankedTensorType.get(batch + [rows_, columns_], element)
        result = tensor.collapse_shape(whole, product.results[0],
                                       lead_groups + [[n, n + 1], [n + 2, n + 3]])
        if (rows_, columns_) != (rows, columns):
            # through a clone: IREE fuses the slice into the product, which then runs at
            # the odd shape again (as matmul_tiles._pad_rows)
            result = tensor.extract_slice(out, separated(result), [], [], [], [0] * (n + 2),
                                          out.shape, [1] * (n + 2))
    matmul.results[0].replace_all_uses_with(result)
    matmul.erase()
    if separate_result:
        separate_readers(result)


def grown(value, shape):
    """``value`` (static) with zeros added after its last two dimensions' elements up to
    ``shape``, or itself where it has that shape."""
    from aotc._mlir import ir, tensor

    from .autodiff.core import zeros

    t = ir.RankedTensorType(value.type)
    if list(t.shape) == list(shape):
        return value
    return tensor.insert_slice(value, zeros(ir.RankedTensorType.get(shape, t.element_type)),
                               [], [], [], [0] * t.rank, t.shape, [1] * t.rank)


def multiply_add(a, b, acc):
    """``acc + a * b`` (floats) at the current insertion point."""
    from aotc._mlir import arith

    return arith.addf(acc, arith.mulf(a, b))

