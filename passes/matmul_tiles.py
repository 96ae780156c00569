"""aotc-tile-matmuls: float32 and float64 matmuls and batch matmuls carry the tile sizes
that run them fastest on AMD Zen 5.

IREE 3.13 picks, for a float32 ``linalg.matmul`` on such a CPU
(``--iree-llvmcpu-target-cpu=host`` on an AMD Zen 5), workgroups of 32x64 or 64x64
elements with 8x16 register tiles and a K step of 16: 100-220 GFLOP/s on one core, whose
float32 peak is 286. Measured with ``iree-benchmark-module`` on one core (local-sync),
workgroups of 32x128 with 8x32 register tiles and a K step of 1 run at 200-275 GFLOP/s:
[64, 784] @ [784, 512] 430 -> 200 us, [512, 784] @ [784, 512] 2.73 -> 1.55 ms, 1024^3
24.8 -> 10.5 ms, [784, 64] @ [64, 512] (a weight gradient) 295 -> 210 us. Workgroups
whose rows do not divide the matmul's ran 3-4x slower than IREE's choice, so the rows are
the first of ``WORKGROUP_ROWS`` that divides them. A float32 matmul whose rows are not a
multiple of 8 gets register tiles whose rows divide its own (``ODD_ROW_TILES``), in
workgroups of whole register tiles: IREE's choice there chains few registers ([100, 784]
@ [784, 512] 635 -> 358 us, 20 rows 133 -> 66, 50 rows 367-408 -> 170, a prime 97 rows
3.71 -> 1.19-1.47 ms, 2-7 rows 38-61 -> 18-28 us; workgroups of 8-32 rows that do not
divide the rows ran 1.29-1.80 ms at 100). This pass attaches the setting as the op's
``compilation_info`` (IREE's per-op override) to every float32 or float64
``linalg.matmul`` and ``linalg.batch_matmul`` (one batch element per workgroup) of at
least ``MIN_DEPTH`` reduction steps and ``MIN_COLUMNS`` columns. float64 gets its own
tiles (``TILES``), and its results reach their readers through a clone
(``SEPARATED_RESULTS``); a module whose contractions it all tiles is compiled without
data tiling (``tiles_every_contraction``).

A vector-matrix product ``x @ W`` (x one row, W [K, N] as stored: a batch-1 layer) is a
``linalg.generic`` over (n, k) reading x[k] and W[k, n] (``x @ W`` of a 1-D x is one
already; a one-row matmul is rewritten into one). IREE's own setting for it,
``vector_common_parallel = [16]`` with a K step of 16, chains every product of a
16-column strip into one register: [1, 784] @ [784, 512] ran 46-49 us (float64 108)
against numpy's 17 (33) on one core. ``vector_setting`` keeps 8 registers of columns
(128, or 64 below 128 columns) and a K step of 1: 16-18 us (float64 33); [1, 784] @
[784, 300] 23 -> 10 us, [784, 1000] 46 -> 33, [784, 96] 6 -> 4 with 64 columns (128
padded it to 15).

A matrix-vector product ``A @ v`` (A [M, K] as stored) is a ``linalg.generic`` over (m, k)
reading A[m, k] and v[k]. IREE's own setting for it, 8 or 16 rows with a K step of one
vector, chains each row's products through one register: a float64 [2048, 2048] @ v
took 1.01 ms on one core against numpy's 0.68 (one thread). ``MATRIX_VECTOR_SETTING``
takes one row at a time with a K step of 32 (several vectors in flight) and peels the
remainder: 2048² float64 0.64 ms, float32 267 -> 143 us (numpy 163); [512, 512] 41 ->
21 us (float32 17 -> 12), [4096, 256] 154 -> 78, [100, 1000] 15 -> 7, [2048, 100] 26 ->
16. Without the peeling a K that 32 does not divide ran 2-4x slower than IREE's choice.

A float32 matmul whose rows alone are dynamic (the batch an exported function leaves
open: ``ShapeDtypeStruct((None, 784))``) gets the workgroups and register tiles of 32 rows
and IREE's loop peeling (``PEELED_PIPELINE``): the full register tiles run as for
static rows, the last rows apart. Without peeling, the code read each K step's column of
8 rows element by element behind a bounds check, 4x slower than IREE's own setting. One
core, [M, 784] @ [784, 512], IREE's setting -> this one: M = 64 243 -> 187 us (static
rows: 187), 100 434 -> 361, 256 895 -> 762, 1 205 -> 64; 7 59 -> 90 and 13 94 -> 111
(fewer rows than a register tile's, the cost of not knowing them).

A transposed operand (the backward pass's ``d @ W.T`` and ``x.T @ d``) is one IREE fuses
into the matmul, where a K step of 1 ran 3-20x slower than IREE's choice. Where the
matmul does enough work per element (``MIN_FLOPS_PER_TRANSPOSED_ELEMENT``), the pass
copies the transposed operand through a ``flow.tensor.clone`` (IREE forms no dispatch
across it, and it elides the copy itself afterwards) and tiles the matmul; otherwise the
matmul keeps IREE's choice. A copied ``W.T`` larger than d runs as ``(W @ d.T).T``
(``_copies_the_smaller_side``): IREE computes a weight's copy when the program starts and
keeps it to the backward pass.

The compiler runs it for one CPU target of AMD Zen 5 or Zen 3 (``cpu_paths.tiles_matmuls``),
and for float32 products alone (``elements``) on AMD Zen 4
(``cpu_paths.tiles_float32_matmuls``), on modules without data tiling
(``build.finish_module``); a module IREE cannot compile with it is compiled again without
(``compiler.compile_bytecode``, ``without_tile_settings``). The tiles were measured with
AVX-512's 64-byte registers; a CPU with AVX2's 32-byte ones (Zen 3) gets the same
register counts, each of half the columns (``register_bytes``, ``narrowed``), but at most
``AVX2_MAX_ACCUMULATORS`` of its 16 registers accumulate (a layer's own tiles,
``AVX2_TILES``, are 4x16 for float32 and 4x8 for float64): there IREE's own choice ran
the batch-1 MLP at 207-221 us, the narrowed tiles at 71-78 (the unnarrowed ones at
81-94: 16 registers of accumulators leave AVX2's none for the operands). There large
static matmuls and batch matmuls run on packed panels instead (passes/matmul_panels.py,
``runs_on_panels``), and a module whose contractions all do is not data-tiled
(``panels_for_every_contraction``).

Invariants: values are unchanged (only code generation differs); a matmul that carries a
setting keeps it, so running the pass twice changes nothing more.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .base import (ModulePass, as_op, collect_ops, indexing_maps, multiplies_inputs, register,
                   separate_readers, separated)
from .matmul_panels import DOUBLE_TILING_PIPELINE, as_panel_product, grown, multiply_add, packs
from .opset import CONTRACTION_OPS, MATMUL_RANKS

# The smallest matmul that gets a setting: below these, IREE's choice ran as fast.
MIN_DEPTH = 64
MIN_COLUMNS = 64
# Workgroup rows, largest first: the first that divides the matmul's rows is used. A
# workgroup tile that does not divide the rows ran 3-4x slower than IREE's choice
# ([784, 256] @ [256, 512]: 32 rows 4.3 ms, 16 rows 0.75 ms, IREE's 1.2 ms); columns
# need not divide ([64, 512] @ [512, 784] ran 357 -> 209 us).
WORKGROUP_ROWS = (32, 16, 8)
# A transposed operand is copied when the matmul does at least this many flops per
# element copied: [256, 512] @ [512, 512].T (512 per element) 655 -> 550 us,
# [512, 64].T-shaped weight gradients (1024) 200 -> 140 us; [64, 512] @ [512, 512].T (128)
# ran 170 us fused against 190 copied. The copy is a clone (``base.separated``).
MIN_FLOPS_PER_TRANSPOSED_ELEMENT = 512


# float32 matmuls whose rows are not a multiple of 8: (divisor, register tile) in order
# of preference, the first divisor of the rows chooses; fewer than 8 rows take
# ``(rows, 64)`` (7: ``(7, 32)``) in workgroups of 256 columns, more take workgroups of
# 128 columns and the most rows, a multiple of the tile's, that divide theirs up to
# ``MAX_ODD_WORKGROUP_ROWS``. One core, [M, 784] @ [784, 512], us (IREE's choice ->
# these): M = 2 61 -> 21 ((2, 128): 18), 4 38-47 -> 20, 5 47 -> 22, 6 46 -> 22, 7 41-60 ->
# 28, 10 72 -> 33 ((5, 32): 41, (10, 32): 36), 12 99-117 -> 43, 20 133 -> 66 ((5, 32):
# 88), 30 241-257 -> 93 ((6, 64): 94), 36 212 -> 117 (12 rows a workgroup: 150), 50
# 341-408 -> 155 (50 rows a workgroup: 176), 100 635 -> 358-378.
# Rows with none of these divisors are padded to a multiple of 8 (float32: 13 rows 555 ->
# 65 us, 22 rows 501 -> 125, 97 rows 3710 -> 321; with 2- or 3-row registers 172, 150 at
# 33, 1- 1470 at 97), the padded rows cut off the result read through a clone (IREE fused
# the slice into the matmul, which then ran at the odd rows again: 1.43 ms at 97).
# float64 gets half the register columns (M = 5: 92 -> 56 us, 30: inner_tiled's 462 ->
# 237, 100: 1190 -> 1010).
ODD_ROW_TILES = ((4, (4, 64)), (5, (5, 64)), (6, (6, 64)), (7, (7, 32)))
MAX_ODD_WORKGROUP_ROWS = 40


# Per element type: workgroup columns and the register tile (rows, columns). float64's
# were measured against IREE's data-tiled inner_tiled code (one core, then two):
# [64, 784] @ [784, 512] 745 -> 486 us (8x16 tiles; 8x32 647, 4x32 596), 256^3 600 ->
# 247 us, 512^3 3.41 -> 2.31 ms (two cores 3.73 -> 1.49), 768^3 10.4 -> 6.8 ms (6.8 ->
# 4.5), 1024x1200x1100 30.4 -> 27.9 ms (16.6 -> 12.0); 1024^3 22.6 -> 27.5 ms on one
# core, 14.4 -> 13.6 on two; IREE's own float64 choice ran 5-7x slower than either.
TILES = {"f32": (128, (8, 32)), "f64": (64, (8, 16))}
# Element types whose tiled matmuls keep their consumers (a bias, a relu) out of their
# dispatch: fused, a float64 [64, 784] @ [784, 512] + bias, relu ran 485-623 us on two
# cores against 307-327 separated (one core: 472-483 against 483-494); float32's ran as
# fast either way (an MLP at batch 64: 264-282 against 265-274 us).
SEPARATED_RESULTS = frozenset({"f64"})
# A vector-matrix product's register columns: the first not above its N (module docstring).
VECTOR_COLUMNS = (128, 64)
# The vector register size the tiles above were measured with (AVX-512); CPUs with
# narrower registers (AVX2: 32 bytes) get as many registers of fewer columns (``narrowed``),
# but for the element types of ``AVX2_TILES``.
FULL_REGISTER_BYTES = 64
# Workgroup columns and register tiles for 32-byte registers where narrowing is not what
# runs fastest (AMD Zen 3, interleaved in one process, min over blocks): float64's 8x16
# narrowed to 8x8 keeps 16 accumulators in AVX2's 16 registers and ran as IREE's own
# choice (512^3 10.5 ms either way); 4 rows of 8 columns ran 512^3 10.5 -> 6.7-7.4 ms,
# 1024^3 90-107 -> 73-84, the MLP layer [64, 784] @ [784, 512] + bias 1.85-1.97 -> 1.62-1.80,
# alpha * A @ B + beta * C at 512 11.8 -> 7.3, 8 x 256^3 batched 6.0-7.8 -> 6.3; 4x12 and
# 6x8 ran 4-5x slower (rows or columns no power of two). float32's 8x32 narrowed to 8x16
# holds 16 accumulators too: one core, [64, 784] @ [784, 512] 1.87-1.99 ms against IREE's
# 1.44-1.56 and 4x16's 1.30-1.45 (8x8 1.23-1.69, 4x16 in workgroups of 32 or 128 columns
# 1.34-1.44).
AVX2_TILES = {"f32": (64, (4, 16)), "f64": (32, (4, 8))}
# The most accumulators a narrowed register tile keeps in AVX2's 16 registers (the rest
# hold the operands); a tile of more runs with its columns halved until it fits. One
# core, [M, 784] @ [784, 512] float32 (narrowed -> halved, IREE's choice): M = 6 (6x32 ->
# 6x16) 178-199 -> 97-123 us (141-176), 10 (5x32 -> 5x16) 255-310 -> 170-235 (330-343),
# 30 461-620 against 812 (644-821), 100 3.07-3.10 -> 1.51-1.94 ms (2.07-2.52); 7 rows'
# 7x16 (14) and 7x8 ran alike.
AVX2_MAX_ACCUMULATORS = 12
ELEMENT_BYTES = {"f32": 4, "f64": 8}
# x[k] and W[k, n] into y[n], loops (n, k): the form IREE's own matvec rewrite makes.
VECTOR_MAPS = ("(d0, d1) -> (d1)", "(d0, d1) -> (d1, d0)", "(d0, d1) -> (d0)")
# A[m, k] and v[k] into y[m], loops (m, k): a matrix-vector product (module docstring).
MATRIX_VECTOR_MAPS = ("(d0, d1) -> (d0, d1)", "(d0, d1) -> (d1)", "(d0, d1) -> (d0)")


def narrowed(columns: int, register_bytes: int) -> int:
    """``columns`` of a tile measured with 64-byte vector registers (AVX-512), for a CPU
    whose registers hold ``register_bytes``: as many registers, each of fewer columns."""
    return columns * register_bytes // FULL_REGISTER_BYTES


def tiles(rows: int, element: str = "f32", batched: bool = False,
          register_bytes: int = FULL_REGISTER_BYTES):
    """(workgroup rows, workgroup columns, register rows, register columns) of a matmul
    with ``rows`` rows on a CPU whose vector registers hold ``register_bytes``, or None
    where it keeps IREE's choice (or is padded: ``padded``). Narrower registers than
    AVX-512's get ``AVX2_TILES`` where it has the element type and the rows are whole
    register tiles, else the same tiles ``narrowed``, their columns halved down to
    ``AVX2_MAX_ACCUMULATORS``."""
    found = _full_register_tiles(rows, element, batched)
    if found is None or register_bytes >= FULL_REGISTER_BYTES:
        return found
    workgroup, columns, vector_rows, vector_columns = found
    if element in AVX2_TILES and rows % WORKGROUP_ROWS[-1] == 0:
        columns, (vector_rows, vector_columns) = AVX2_TILES[element]
        return workgroup, columns, vector_rows, vector_columns
    vector_columns = narrowed(vector_columns, register_bytes)
    lanes = register_bytes // ELEMENT_BYTES[element]
    while vector_rows * vector_columns // lanes > AVX2_MAX_ACCUMULATORS:
        vector_columns //= 2
    return workgroup, narrowed(columns, register_bytes), vector_rows, vector_columns


def _full_register_tiles(rows: int, element: str, batched: bool):
    """``tiles`` for AVX-512's 64-byte registers, where they were measured."""
    columns, (vector_rows, vector_columns) = TILES[element]
    if rows % WORKGROUP_ROWS[-1] == 0:
        return next(t for t in WORKGROUP_ROWS if rows % t == 0), columns, vector_rows, \
            vector_columns
    if batched:  # not measured
        return None
    # float64 registers hold half as many columns (the same registers as float32's)
    halve = 2 if element == "f64" else 1
    if rows < WORKGROUP_ROWS[-1]:
        register_columns = 32 if rows == 7 else 64
        return rows, 256 // halve, rows, register_columns // halve
    divisor, (register_rows, register_columns) = next(
        ((d, t) for d, t in ODD_ROW_TILES if rows % d == 0), (None, (0, 0)))
    if divisor is None:
        return None
    workgroup = max(k for k in range(divisor, MAX_ODD_WORKGROUP_ROWS + 1, divisor)
                    if rows % k == 0)
    return workgroup, 128 // halve, register_rows, register_columns // halve


def padded(rows: int, element: str = "f32", batched: bool = False) -> int | None:
    """The rows a float32 matmul with ``rows`` rows runs at, zero rows added below, where
    no register tile's rows divide its own (``ODD_ROW_TILES``): the next multiple of 8.
    None where it runs at its own rows or keeps IREE's choice (float64: at 13 rows the
    padded matmul ran 235 us against inner_tiled's 170)."""
    if element != "f32" or batched or tiles(rows, element, batched) is not None:
        return None
    return -(-rows // WORKGROUP_ROWS[-1]) * WORKGROUP_ROWS[-1]


# Deep matmuls run their K in blocks of this many steps within a workgroup, so that a
# register tile's strip of the second operand stays in L1 across the workgroup's rows.
# One core (iree-benchmark-module), float32 1024^3 11.2-11.9 -> 9.3-9.8 ms (two cores 6.40 ->
# 5.79), [512, 1024] @ [1024, 512] 3.02 -> 2.07, [256, 2048] @ [2048, 256] 1.30 -> 1.06,
# [128, 4096] @ [4096, 128] 0.61 -> 0.55; float64 1024^3 26.0 -> 20.6 ms. K of 512-784 and
# the MLP's shapes moved within 2% either way, so it is kept for K of at least
# ``CACHE_MIN_DEPTH``; a K or N the blocks do not divide ran up to 6x slower (float64
# [1024, 1200] @ [1200, 1100]: 29 -> 191 ms), so only whole blocks get it.
CACHE_DEPTH = 256
CACHE_MIN_DEPTH = 1024


def cache_blocks(depth: int, columns: int, workgroup_columns: int) -> bool:
    """Whether a matmul of ``depth`` K steps and ``columns`` N, in workgroups of
    ``workgroup_columns``, runs its K in blocks of ``CACHE_DEPTH``."""
    return (depth >= CACHE_MIN_DEPTH and depth % CACHE_DEPTH == 0
            and columns % workgroup_columns == 0)


STATIC_PIPELINE = DOUBLE_TILING_PIPELINE + ">"
# Remainder iterations peeled off the loops (a matmul with dynamic rows, whose IREE
# setting carries the same option; a matrix-vector product's K).
PEELED_PIPELINE = DOUBLE_TILING_PIPELINE + ", {enable_loop_peeling}>"


def setting(rows: int | None, element: str = "f32", batched: bool = False, depth: int = 0,
            columns: int = 0, register_bytes: int = FULL_REGISTER_BYTES) -> str:
    """The ``compilation_info`` of a float32 or float64 (``element``) matmul with ``rows``
    rows (``tiles``; None: dynamic rows, tiled as 32); ``batched``: a batch_matmul, one
    batch element a workgroup; ``depth`` and ``columns`` (its K and N, where known) add
    the K blocks of ``cache_blocks``; ``register_bytes``: the CPU's vector register size."""
    workgroup, wg_columns, vector_rows, vector_columns = tiles(
        WORKGROUP_ROWS[0] if rows is None else rows, element, batched, register_bytes)
    batch = [1] if batched else []  # one batch element per workgroup and register tile

    def sizes(values):
        return ", ".join(str(v) for v in values)

    cache = ""
    if rows is not None and not batched and cache_blocks(depth, columns, wg_columns):
        cache = f"cache_reduction = [0, 0, {CACHE_DEPTH}], "
    return ("#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<"
            f"distribution = [{sizes(batch + [workgroup, wg_columns, 0])}], {cache}"
            "vector_common_parallel"
            f" = [{sizes(batch + [vector_rows, vector_columns, 0])}], vector_reduction = "
            f"[{sizes([0] * len(batch) + [0, 0, 1])}]>, translation_info = "
            f"{STATIC_PIPELINE if rows is not None else PEELED_PIPELINE}>")


def vector_setting(columns: int) -> str:
    """The ``compilation_info`` of a vector-matrix product: ``columns`` (one of
    ``VECTOR_COLUMNS``) in registers, two such strips a workgroup, a K step of 1."""
    return ("#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<"
            f"distribution = [{2 * columns}, 0], vector_common_parallel = [{columns}, 0], "
            f"vector_reduction = [0, 1]>, translation_info = {STATIC_PIPELINE}>")


# One row at a time, a K step of 32 elements, 64 rows a workgroup, the remainder peeled.
MATRIX_VECTOR_SETTING = (
    "#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<"
    "distribution = [64, 0], vector_common_parallel = [1, 0], vector_reduction = [0, 32]>, "
    f"translation_info = {PEELED_PIPELINE}>")

ATTRIBUTE = "compilation_info"


def _transposed(value) -> bool:
    from aotc._mlir import ir

    return isinstance(value, ir.OpResult) and as_op(value.owner).name == "linalg.transpose"


def _plan(op):
    """(the rows it runs at, element type, transposed operands to copy) for a matmul that
    should get a setting, else None."""
    from aotc._mlir import ir

    if op.name not in MATMUL_RANKS or ATTRIBUTE in op.attributes:
        return None
    operands = list(op.operands)[:2]
    lhs, rhs = (ir.RankedTensorType(v.type) for v in operands)
    element = str(lhs.element_type)
    if not (element in TILES and str(rhs.element_type) == element):
        return None
    if not (lhs.has_static_shape and rhs.has_static_shape):
        return _dynamic_rows_plan(op, lhs, rhs, element)
    batch = lhs.shape[0] if MATMUL_RANKS[op.name] == 3 else 1
    (rows, depth), columns = lhs.shape[-2:], rhs.shape[-1]
    if depth < MIN_DEPTH or columns < MIN_COLUMNS:
        return None
    if rows == 1 and batch == 1:  # a vector-matrix product (rewritten by the pass)
        return (1, element, []) if not _transposed(operands[1]) else None
    batched = MATMUL_RANKS[op.name] == 3
    runs_at = padded(rows, element, batched) or rows
    if tiles(runs_at, element, batched) is None:
        return None
    flops = 2 * batch * rows * depth * columns
    copies = [i for i, v in enumerate(operands) if _transposed(v)]
    copied = sum(math.prod(ir.RankedTensorType(operands[i].type).shape) for i in copies)
    if copied and flops < MIN_FLOPS_PER_TRANSPOSED_ELEMENT * copied:
        return None
    return runs_at, element, copies


def _dynamic_rows_plan(op, lhs, rhs, element: str):
    """``_plan`` of a float32 ``linalg.matmul`` whose rows alone are dynamic (rows None),
    of static depth and columns that get a setting and no transposed operand; else None."""
    if (op.name != "linalg.matmul" or element != "f32" or not rhs.has_static_shape
            or lhs.is_dynamic_dim(1) or any(_transposed(v) for v in list(op.operands)[:2])):
        return None
    depth, columns = rhs.shape
    return (None, element, []) if depth >= MIN_DEPTH and columns >= MIN_COLUMNS else None


def tiles_every_contraction(module) -> bool:
    """Every contraction of ``module`` is a matmul this pass gives a setting (the compiler
    then compiles a float64 module with these tiles instead of data tiling)."""
    found = collect_ops(module, lambda o: as_op(o).name in CONTRACTION_OPS or None)
    return bool(found) and all(_plan(as_op(op)) for op, _ in found)


def panels_for_every_contraction(module, register_bytes: int) -> bool:
    """Every contraction of ``module`` is a matmul this pass runs on packed panels for
    registers of ``register_bytes`` (the compiler then compiles it without data tiling:
    float32 1024^3 on AMD Zen 3, two cores, 24.0 ms data-tiled against 17.3 on panels,
    JAX 17.2)."""
    if register_bytes >= FULL_REGISTER_BYTES:  # no panels: no walk
        return False

    def on_panels(op) -> bool:
        plan = _plan(op)
        return plan is not None and runs_on_panels(op, plan[0], plan[1], register_bytes)

    found = collect_ops(module, lambda o: as_op(o).name in CONTRACTION_OPS or None)
    return bool(found) and all(on_panels(as_op(op)) for op, _ in found)


def runs_on_panels(op, planned_rows, element: str, register_bytes: int) -> bool:
    """Whether ``op`` (a matmul or batch matmul with a plan, ``_plan``) runs on packed
    panels (passes/matmul_panels.py): AVX2 registers and static rows (``planned_rows``
    None: dynamic)."""
    from aotc._mlir import ir

    if register_bytes >= FULL_REGISTER_BYTES or planned_rows is None:
        return False
    (rows, depth), columns = (ir.RankedTensorType(op.operands[0].type).shape[-2:],
                              ir.RankedTensorType(op.operands[1].type).shape[-1])
    return packs(rows, depth, columns, ELEMENT_BYTES[element])


@register
@dataclass(frozen=True)
class TileMatmuls(ModulePass):
    """Register and workgroup tiles for float32 and float64 matmuls (module docstring)."""

    name = "aotc-tile-matmuls"
    elements: tuple[str, ...] = ("f32", "f64")  # the element types whose products it tiles
    register_bytes: int = FULL_REGISTER_BYTES  # the target's vector register size

    @classmethod
    def from_options(cls, options):
        elements = options.get("elements")
        return cls(tuple(elements.split(",")) if elements else cls.elements,
                   int(options.get("register-bytes", FULL_REGISTER_BYTES)))

    def run(self, module) -> None:
        from aotc._mlir import ir

        for op, (rows, element, copies) in collect_ops(module, lambda o: _plan(as_op(o))):
            op = as_op(op)
            if element not in self.elements:
                continue
            if copies == [1] and _copies_the_smaller_side(op, element):  # d @ W.T
                op = _as_transposed_product(op)
                rows, element, copies = _plan(op)
            if rows == 1:
                _as_vector_product(op)
                continue
            # packs copy transposed operands too
            if runs_on_panels(op, rows, element, self.register_bytes):
                as_panel_product(op, self.register_bytes, element in SEPARATED_RESULTS)
                continue
            for i in copies:
                value = op.operands[i]
                with ir.InsertionPoint(op), op.location:
                    op.operands[i] = separated(value)
            if rows is not None and rows != ir.RankedTensorType(op.operands[0].type).shape[-2]:
                _pad_rows(op, rows)
            depth, columns = ir.RankedTensorType(op.operands[1].type).shape[-2:]
            op.attributes[ATTRIBUTE] = ir.Attribute.parse(setting(
                rows, element, batched=MATMUL_RANKS[op.name] == 3, depth=depth, columns=columns,
                register_bytes=self.register_bytes))
            if element in SEPARATED_RESULTS:
                separate_readers(op.results[0])
        for op, columns in collect_ops(module,
                                       lambda o: _vector_columns(as_op(o), self.register_bytes)):
            if _element(op) in self.elements:
                as_op(op).attributes[ATTRIBUTE] = ir.Attribute.parse(vector_setting(columns))
        # AVX2's matrix-vector products keep IREE's choice: float64 [2048, 2048] @ v ran
        # 1.02-1.21 ms with it, 1.28-1.42 with this setting (AMD Zen 3).
        if self.register_bytes < FULL_REGISTER_BYTES:
            return
        for op, _ in collect_ops(module, lambda o: _matrix_vector(as_op(o))):
            if _element(op) in self.elements:
                as_op(op).attributes[ATTRIBUTE] = ir.Attribute.parse(MATRIX_VECTOR_SETTING)


def _element(op) -> str:
    """The element type of ``op``'s result, as ``TILES`` names it."""
    from aotc._mlir import ir

    return str(ir.RankedTensorType(as_op(op).results[0].type).element_type)


def _copies_the_smaller_side(op, element: str) -> bool:
    """Whether ``d @ W.T`` (``op``, a matmul whose second operand alone is a transpose,
    which the pass would copy) should run as ``(W @ d.T).T``: where d is the smaller
    matrix. A weight's transposed copy depends only on the weight, so IREE computes it
    when the program starts and keeps it until its matmul runs, in the backward pass: an
    8-layer float64 MLP's gradient held 7 at once (14 of its 30 MiB of intermediates).
    d.T and the product's transpose back are made when d is, and are smaller. Where the
    pass would not copy the weight (it fuses: [64, 512] @ [512, 512].T), rewriting it too
    measured no faster and kept more (the MLP training step at batch 64: 768 -> 1024 KiB
    of intermediates; at 256 3.0 -> 3.9 ms). ``W @ d.T`` must get tiles of its own: W's
    rows, d's rows as columns (at least 256, for the copy to pay)."""
    from aotc._mlir import ir

    lhs, rhs = (ir.RankedTensorType(v.type) for v in list(op.operands)[:2])
    rows = rhs.shape[1]  # W's
    return (op.name == "linalg.matmul" and math.prod(lhs.shape) < math.prod(rhs.shape)
            and tiles(padded(rows, element) or rows, element) is not None)


def _as_transposed_product(matmul):
    """``d @ W.T`` as ``(W @ d.T).T``: a matmul of the weight as stored and d's transpose
    (which the tiling copies), its result transposed back for the readers (IREE fuses that
    transpose into them). The init is transposed too (a fill's folds away). Returns the new
    matmul."""
    from aotc._mlir import ir, linalg

    from .autodiff.builders import transposed

    d, weight_t, init = list(matmul.operands)[:3]
    weight = as_op(weight_t.owner).operands[0]
    with ir.InsertionPoint(matmul), matmul.location:
        product = linalg.matmul(weight, transposed(d, [1, 0]), outs=[transposed(init, [1, 0])])
        # The clone keeps IREE from folding the transpose back into the matmul, which
        # then read both operands across ([256, 512] @ [512, 512].T took 20 ms).
        back = transposed(separated(product), [1, 0])
    matmul.results[0].replace_all_uses_with(back)
    matmul.erase()
    return as_op(product.owner)


def _pad_rows(matmul, rows: int) -> None:
    """``matmul`` runs at ``rows`` rows: its row operand and its init get zero rows below
    (their padded copies separated, so that the padding is no part of the matmul's
    dispatch), and its readers read the rows it had through a clone and a slice."""
    from aotc._mlir import ir, tensor

    def padded_copy(value):
        return separated(grown(value, [rows, ir.RankedTensorType(value.type).shape[1]]))

    product = matmul.results[0]
    result = ir.RankedTensorType(product.type)
    with ir.InsertionPoint(matmul), matmul.location:
        matmul.operands[0] = padded_copy(matmul.operands[0])
        matmul.operands[2] = padded_copy(matmul.operands[2])
        product.set_type(ir.RankedTensorType.get([rows, result.shape[1]], result.element_type))
    with ir.InsertionPoint.after(matmul), matmul.location:
        copy = separated(product)
        cut = tensor.extract_slice(result, copy, [], [], [], [0, 0], result.shape, [1, 1])
    product.replace_all_uses_except(cut, as_op(copy.owner))


def _product_matrix(op, maps: tuple[str, ...], matrix_operand: int):
    """The matrix type of a float32 or float64 multiply-add generic with ``maps`` (a
    vector-matrix or matrix-vector product) that has no setting yet, its matrix (operand
    ``matrix_operand``) of static shape, not a transpose's result, and its vector of the
    same element type; else None."""
    from aotc._mlir import ir

    if (op.name != "linalg.generic" or ATTRIBUTE in op.attributes or len(op.operands) != 3
            or tuple(str(m) for m in indexing_maps(op)) != maps
            or not multiplies_inputs(op.regions[0].blocks[0])):
        return None
    matrix = ir.RankedTensorType(op.operands[matrix_operand].type)
    vector = ir.RankedTensorType(op.operands[1 - matrix_operand].type)
    if (str(matrix.element_type) not in TILES or not matrix.has_static_shape
            or str(vector.element_type) != str(matrix.element_type)
            or _transposed(op.operands[matrix_operand])):
        return None
    return matrix


def _vector_columns(op, register_bytes: int) -> int | None:
    """The register columns of a vector-matrix product generic that should get a
    setting (``VECTOR_MAPS``, ``_product_matrix``, at least ``MIN_DEPTH`` x
    ``MIN_COLUMNS``; ``narrowed`` to ``register_bytes``), else None."""
    matrix = _product_matrix(op, VECTOR_MAPS, 1)
    if matrix is None or matrix.shape[0] < MIN_DEPTH:
        return None
    return next((narrowed(c, register_bytes) for c in VECTOR_COLUMNS
                 if c <= matrix.shape[1]), None)


def _matrix_vector(op) -> bool | None:
    """A matrix-vector product generic (``MATRIX_VECTOR_MAPS``, ``_product_matrix``) of at
    least ``MIN_DEPTH`` columns, which gets ``MATRIX_VECTOR_SETTING``; else None."""
    matrix = _product_matrix(op, MATRIX_VECTOR_MAPS, 0)
    return True if matrix is not None and matrix.shape[1] >= MIN_DEPTH else None


def _as_vector_product(matmul) -> None:
    """A one-row ``linalg.matmul`` as the ``VECTOR_MAPS`` generic of its row (the form the
    pass gives its setting; IREE's matvec rewrite drops a matmul's)."""
    from aotc._mlir import PARALLEL, REDUCTION, affine_maps, ir, iterator_types, linalg, tensor

    lhs, rhs, init = list(matmul.operands)
    row, out = ir.RankedTensorType(lhs.type), ir.RankedTensorType(init.type)
    with ir.InsertionPoint(matmul), matmul.location:
        vector = tensor.collapse_shape(ir.RankedTensorType.get(row.shape[1:], row.element_type),
                                       lhs, [[0, 1]])
        flat = ir.RankedTensorType.get(out.shape[1:], out.element_type)
        acc = tensor.collapse_shape(flat, init, [[0, 1]])
        maps = [ir.AffineMap.get(2, 0, [ir.AffineDimExpr.get(d) for d in dims])
                for dims in ((1,), (1, 0), (0,))]
        product = linalg.GenericOp([flat], [vector, rhs], [acc], affine_maps(maps),
                                   iterator_types([PARALLEL, REDUCTION]))
        body = product.regions[0].blocks.append(row.element_type, row.element_type,
                                                out.element_type)
        with ir.InsertionPoint(body):
            linalg.YieldOp([multiply_add(*body.arguments)])
        result = tensor.expand_shape(out, product.results[0], [[0, 1]], [], out.shape)
    matmul.results[0].replace_all_uses_with(result)
    matmul.erase()


def without_tile_settings(mlir: bytes) -> bytes | None:
    """``mlir`` (text or bytecode) with the settings this pass attached removed, or None
    when it has none."""
    from aotc import _mlir

    if ATTRIBUTE.encode() not in mlir:
        return None
    module = _mlir.parse_module(mlir)
    found = False
    for op, _ in collect_ops(module.operation,
                             lambda o: ATTRIBUTE in as_op(o).attributes or None):
        del as_op(op).attributes[ATTRIBUTE]
        found = True
    return _mlir.bytecode(module) if found else None
