"""aotc-tile-convolutions: channel-last 2-D convolutions carry register tiles of whole
vectors on x86 CPUs with AVX2's 32-byte registers and no AVX-512.

For a ``linalg.conv_2d_nhwc_hwcf``, IREE 3.13 picks register tiles of 4 output columns by
4 output channels, with 8 input channels a reduction step, on every x86 CPU without
AVX-512 (haswell, skylake, znver3, x86-64-v3 alike; with AVX-512 it picks 7 columns by 16
channels, one vector): an AVX2 register holds 8 float32 lanes, so each accumulator is
half a register and the code runs at 1-5 GFLOP/s. Measured on AMD Zen 3 with
``iree-benchmark-module`` on one core (local-sync), IREE's choice -> ``setting``'s:
[32, 14, 14, 16] * [3, 3, 16, 32] (the CNN's second layer) 14.9-28.6 -> 0.80-1.19 ms
(jax.jit 0.87 on two cores), [8, 56, 56, 64] * 3x3x64x64 83.5 -> 26.4-36.5, [4, 28, 28,
128] * 3x3x128x128 68.1 -> 14.8, the same at stride 2 65.9 -> 24.3, [8, 13, 13, 32] *
3x3x32x48 (VALID, 11 output columns) 2.22 -> 0.40, float64 [32, 14, 14, 16] * 3x3x16x32
9.26 -> 2.66.

The setting (``setting``): one vector of output channels by up to ``MAX_ROW_TILE``
output columns (14 accumulators of AVX2's 16 registers, the rest for the weights' vector
and the input's broadcast), one input channel a reduction step, workgroups of whole
output rows (up to 64 columns), up to 64 channels and as many rows as keep the
workgroup's output within ``WORKGROUP_ELEMENTS``. Where it measured no faster, IREE's
choice stays:
- 1x1 windows (a matmul): [8, 56, 56, 64] * 1x1x64x256 16.6 -> 20.2 ms;
- fewer input channels than a vector's lanes: [32, 28, 28, 2] * 3x3x2x16 0.44 -> 0.91 ms
  (the CNN's first layer, its one channel padded to two by ``ops/convolution.py``);
- output channels that are not a multiple of the lanes (masked vectors): 10 channels
  1.02 -> 8.29 ms;
- output columns with no divisor from ``MIN_ROW_TILE`` to ``MAX_ROW_TILE`` (a prime 17:
  one-column tiles 3.03 -> 3.18 ms; tiles that do not divide them 13-20 ms).

The compiler runs it for one x86_64 CPU target without AVX-512
(``cpu_paths.tiles_convolutions``); a module IREE cannot compile with the settings is
compiled again without them (``compiler.compile_bytecode``,
``matmul_tiles.without_tile_settings``, which removes every ``compilation_info``).

Invariants: values are unchanged (only code generation differs); a convolution that
carries a setting keeps it, so running the pass twice changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, as_op, collect_ops, register
from .matmul_tiles import ATTRIBUTE, ELEMENT_BYTES
from .opset import TILED_CONVOLUTIONS

# Output columns a register tile covers: the largest divisor of the output's columns in
# this range (module docstring).
MIN_ROW_TILE, MAX_ROW_TILE = 4, 14
# A workgroup's output columns and channels at most, and its output elements at most
# (rows are added while they fit): [8, 56, 56, 64] * 3x3x64x64 ran 26.4-27.7 ms in
# workgroups of 1792-3584 output elements ([1, 4, 14, 32], [1, 4, 28, 32], [1, 1, 56,
# 64]), 35.9-40.9 in workgroups of 14336 or more ([1, 4, 56, 64], [1, 28, 56, 64]).
WORKGROUP_COLUMNS = WORKGROUP_CHANNELS = 64
WORKGROUP_ELEMENTS = 4096

_PIPELINE = ("#iree_codegen.translation_info<pipeline = "
             "#iree_cpu.pipeline<ConvTileAndDecomposeExpert>>")


def _largest_divisor(n: int, low: int, high: int) -> int | None:
    return next((d for d in range(min(n, high), low - 1, -1) if n % d == 0), None)


def setting(output: tuple[int, int, int, int], window: tuple[int, int], channels: int,
            element: str, register_bytes: int) -> str | None:
    """The ``compilation_info`` of a convolution with NHWC ``output`` shape, a ``window``
    of (rows, columns) and ``channels`` input channels of ``element`` type, for vector
    registers of ``register_bytes`` (None: IREE's own choice stays)."""
    lanes = register_bytes // ELEMENT_BYTES[element]
    _, rows, columns, features = output
    row_tile = _largest_divisor(columns, MIN_ROW_TILE, MAX_ROW_TILE)
    if (window == (1, 1) or channels < lanes or features % lanes or row_tile is None):
        return None
    # at most 64 columns by 64 channels: the rows' bound is at least 1
    group_columns = row_tile * _largest_divisor(columns // row_tile, 1,
                                                WORKGROUP_COLUMNS // row_tile)
    group_features = lanes * _largest_divisor(features // lanes, 1, WORKGROUP_CHANNELS // lanes)
    group_rows = _largest_divisor(rows, 1, WORKGROUP_ELEMENTS // (group_columns * group_features))
    return ("#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<"
            f"distribution = [1, {group_rows}, {group_columns}, {group_features}, 0, 0, 0], "
            f"vector_common_parallel = [1, 1, {row_tile}, {lanes}, 0, 0, 0], "
            "vector_reduction = [0, 0, 0, 0, 1, 1, 1]>, "
            f"translation_info = {_PIPELINE}>")


def _setting_of(op, register_bytes: int) -> str | None:
    from aotc._mlir import ir

    if op.name not in TILED_CONVOLUTIONS or ATTRIBUTE in op.attributes:
        return None
    image, weights, out = (ir.RankedTensorType(v.type) for v in list(op.operands)[:3])
    element = str(out.element_type)
    if (element not in ELEMENT_BYTES or not all(t.has_static_shape for t in (image, weights, out))
            or {str(image.element_type), str(weights.element_type)} != {element}):
        return None
    return setting(tuple(out.shape), tuple(weights.shape[:2]), weights.shape[2], element,
                   register_bytes)


@register
@dataclass(frozen=True)
class TileConvolutions(ModulePass):
    """Attaches ``setting`` to the convolutions that should carry one (module docstring)."""

    name = "aotc-tile-convolutions"
    register_bytes: int = 32  # the target's vector register size

    @classmethod
    def from_options(cls, options):
        return cls(int(options.get("register-bytes", cls.register_bytes)))

    def run(self, module) -> None:
        from aotc._mlir import ir

        for op, info in collect_ops(module, lambda o: _setting_of(as_op(o), self.register_bytes)):
            as_op(op).attributes[ATTRIBUTE] = ir.Attribute.parse(info)
