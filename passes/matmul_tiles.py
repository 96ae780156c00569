"""aotc-tile-matmuls: float32 matmuls of a few rows carry the tile sizes that run them
fastest on x86 CPUs with AVX-512.

IREE 3.13 picks, for a float32 ``linalg.matmul`` of 64-256 rows on such a CPU
(``--iree-llvmcpu-target-cpu=host`` on an AMD Zen 5), workgroups of 32x64 elements with
8x16 register tiles and a K step of 16, which ran an MLP's layers at 100-220 GFLOP/s.
Measured with ``iree-benchmark-module`` (local-task, two worker groups, each setting
twice, interleaved): workgroups of 32x128 with 8x32 register tiles and a K step of 1
took [64, 784] @ [784, 512] from 430-470 to 196-213 us, [64, 512] @ [512, 784] from 424
to 144-166, [256, 784] @ [784, 512] from 1140-1210 to 675-707, [256, 512] @ [512, 512]
from 691-710 to 450-508; a matmul of few columns or a short K ([64, 512] @ [512, 10],
[784, 64] @ [64, 512]: the weight gradients of a batch of 64) ran as fast or 2-3x slower
with it, so those keep IREE's choice. This pass attaches that setting as the op's
``compilation_info`` (IREE's per-op override) to every float32 matmul with at most
``MAX_ROWS`` rows, at least ``MIN_DEPTH`` reduction steps and ``MIN_COLUMNS`` columns.
The compiler runs it for one CPU target of AMD Zen 5 (``targets.tiles_matmuls``), without
data tiling (``build.finish_module``); a module IREE cannot compile with it is compiled again
without (``compiler.compile_bytecode``, ``without_tile_settings``).

Invariants: values are unchanged (only code generation differs); a matmul that carries a
setting keeps it, so running the pass twice changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, as_op, collect_ops, register

MAX_ROWS = 256
MIN_DEPTH = 256
MIN_COLUMNS = 128

SETTING = ("#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<"
           "distribution = [32, 128, 0], vector_common_parallel = [8, 32, 0], "
           "vector_reduction = [0, 0, 1]>, translation_info = #iree_codegen.translation_info<"
           "pipeline = #iree_cpu.pipeline<DoubleTilingExpert>" ">>")  # (not a doctest prompt)
ATTRIBUTE = "compilation_info"


def _wants_setting(op) -> bool:
    from aotc._mlir import ir

    if op.name != "linalg.matmul" or ATTRIBUTE in op.attributes:
        return False
    lhs, rhs = (ir.RankedTensorType(v.type) for v in list(op.operands)[:2])
    if not (isinstance(lhs.element_type, ir.F32Type) and isinstance(rhs.element_type, ir.F32Type)
            and lhs.has_static_shape and rhs.has_static_shape):
        return False
    (rows, depth), (_, columns) = lhs.shape, rhs.shape
    transposed = any(isinstance(v, ir.OpResult) and as_op(v.owner).name == "linalg.transpose"
                     for v in list(op.operands)[:2])
    return (rows <= MAX_ROWS and depth >= MIN_DEPTH and columns >= MIN_COLUMNS
            and not transposed)


@register
@dataclass(frozen=True)
class TileMatmuls(ModulePass):
    """Register and workgroup tiles for float32 matmuls of few rows (module docstring)."""

    name = "aotc-tile-matmuls"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        from aotc._mlir import ir

        for op, _ in collect_ops(module, lambda o: _wants_setting(as_op(o)) or None):
            as_op(op).attributes[ATTRIBUTE] = ir.Attribute.parse(SETTING)


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
