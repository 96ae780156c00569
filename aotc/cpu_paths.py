"""Which path a CPU target's contractions take through IREE: data tiling, inner_tiled,
or aotc-tile-matmuls' tile settings, by their sizes and dtypes and by the CPU model the
code is for, as each was measured (docs/architecture.md, "Data tiling only for large or
constant-weight contractions", "float64 matmuls through inner_tiled", "float32 and
float64 matmuls carry their tiles")."""

from __future__ import annotations

from collections.abc import Sequence

from .runtime import targets as rt_targets
from .targets import (CPU_FLAG, DATA_TILING, INNER_TILED, Contraction, Target, _cpu_flags,
                      _cpuinfo)


# Data tiling repacks matmul operands. It pays for large matmuls and for weights that are
# compile-time constants (packed once, at compile time), and costs 1.3-2x on small and
# medium matmuls whose operands arrive at run time (repacked on every call).
DATA_TILING_MIN_FLOPS = 2 * 512**3


# float64 contractions data-tile through inner_tiled from this size on: measured faster
# than without from 256^3 (1.85-1.88 against 1.98-2.18 ms a call), slower at 128^3 and
# below (pack and unpack cost more than they save). IREE 3.13's inner_tiled compiles only
# a matmul of two matrices alone in its dispatch (``build.matrix_matmuls`` and the pass
# aotc-isolate-matmuls); compiler.FALLBACKS retries without it should another form reach
# it.
INNER_TILED_MIN_FLOPS = 2 * 256**3


def _architecture(target: Target) -> str:
    """The CPU architecture a (single) CPU target compiles for: its triple's, else the
    host's."""
    for flag in target.device_flags:
        if flag.startswith("--iree-llvmcpu-target-triple="):
            return flag.split("=", 1)[1].split("-", 1)[0]
    return rt_targets.host_arch()


def wants_data_tiling(contractions: Sequence[Contraction]) -> bool:
    return bool(contractions) and all(
        c.flops >= DATA_TILING_MIN_FLOPS or c.constant for c in contractions
    )


def wants_inner_tiling(contractions: Sequence[Contraction]) -> bool:
    """Every contraction is a float64 one of at least ``INNER_TILED_MIN_FLOPS`` (the flag
    is module-wide, and slows float32 matmuls down)."""
    return bool(contractions) and all(
        c.dtype == "float64" and c.flops >= INNER_TILED_MIN_FLOPS for c in contractions
    )


def _tiles(target: Target) -> bool:
    # Several CPU targets in one module: IREE 3.13 resolves the data-tiling layouts for
    # one architecture and overflows the stack of another's code; tile single targets only.
    return target.is_cpu and not target.parts and target.data_tiling


def inner_tiling(target: Target, contractions: Sequence[Contraction]) -> bool:
    """Whether the module's matmuls should compile through inner_tiled, if they all have
    its one form (``build.matrix_matmuls``): on x86 CPUs with AVX-512, where it was
    measured faster (Zen 5). Without AVX-512 it is slower than IREE's default code (Zen 2,
    AVX2, float64: 3.95 against 1.09 ms at 256^3, 14.7 against 9.1 at 512^3, 111 against
    100 at 1024^3; benchmarks/f64_contractions.py)."""
    return (_tiles(target) and wants_inner_tiling(contractions)
            and _architecture(target) == "x86_64" and has_avx512(target))


def _cpu_level(target: Target) -> str:
    """The ``--iree-llvmcpu-target-cpu`` a target names ("" where it names none)."""
    return next((f.split("=", 1)[1] for f in target.device_flags
                 if f.startswith(CPU_FLAG + "=")), "")


def _single_x86(target: Target) -> bool:
    """One CPU target (no others beside it) whose code is for x86_64."""
    return target.is_cpu and not target.parts and _architecture(target) == "x86_64"


def _amd_family(target: Target, family: str, level: str) -> bool:
    """A single x86_64 CPU target for an AMD CPU of ``family`` (``host`` code on one) or
    named by its LLVM CPU ``level``."""
    if not _single_x86(target):
        return False
    if _cpu_level(target) == "host":
        return _cpuinfo("vendor_id") == "AuthenticAMD" and _cpuinfo("cpu family") == family
    return _cpu_level(target) == level


def tiles_matmuls(target: Target) -> bool:
    """Whether float32 and float64 matmuls get aotc-tile-matmuls' tile settings: a single
    CPU target for AMD Zen 5 (``host`` code on one, CPU family 26, or ``znver5``) or Zen
    3 (family 25 without AVX-512, or ``znver3``: its own float64 register tiles,
    ``matmul_tiles.AVX2_TILES``), where they were measured; other CPUs keep IREE's
    choice."""
    return (_amd_family(target, "26", "znver5")
            or (_amd_family(target, "25", "znver3") and not has_avx512(target)))


def tiles_reductions(target: Target) -> bool:
    """Whether float32 row maxima get aotc-tile-reductions' vector tiles: AMD Zen 5, where
    they were measured."""
    return _amd_family(target, "26", "znver5")


def tiles_float32_matmuls(target: Target) -> bool:
    """Whether float32 matmuls (not float64 ones, nor reductions) get aotc-tile-matmuls'
    tiles where ``tiles_matmuls`` says no: a single CPU target for AMD Zen 4 (``host``
    code on one, CPU family 25 with AVX-512, or ``znver4``). Measured there with
    ``benchmarks/run.py``, two interleaved pairs: the MLP at batch 1 110-114 -> 50-60 us,
    at 10 211-252 -> 151-160, at 64 and 100 unchanged; its float64 tiles were slower than
    IREE's choice at 1024^3 and faster at 256^3, so they stay Zen 5's (and Zen 3's)."""
    return _amd_family(target, "25", "znver4") and has_avx512(target)


def tiles_convolutions(target: Target) -> bool:
    """Whether channel-last convolutions get aotc-tile-convolutions' register tiles: a
    single x86_64 CPU target without AVX-512, for which IREE picks the same half-register
    tiles whatever the CPU (measured on AMD Zen 3; passes/conv_tiles.py)."""
    return _single_x86(target) and not has_avx512(target)


def register_bytes(target: Target) -> int:
    """The vector register size of an x86 CPU target's code: 64 with AVX-512, else 32
    (AVX2; aotc-tile-matmuls then narrows its tiles, benchmarks/README.md "Matmul tiles on
    AVX2")."""
    return 64 if has_avx512(target) else 32


def has_avx512(target: Target) -> bool:
    """Whether an x86 CPU target's code may use AVX-512: ``host`` code where this CPU has
    it, else the x86-64-v4 level or an explicit ``+avx512f``."""
    level = _cpu_level(target)
    features = next((f.split("=", 1)[1] for f in target.device_flags
                     if f.startswith("--iree-llvmcpu-target-cpu-features=")), "")
    if level == "host":
        return "avx512f" in _cpu_flags()
    return level in _AVX512_CPUS or "+avx512f" in features.split(",")


# LLVM's x86 CPU names whose instruction sets include AVX-512.
_AVX512_CPUS = frozenset({
    "x86-64-v4", "znver4", "znver5", "skylake-avx512", "cascadelake", "cooperlake",
    "cannonlake", "icelake-client", "icelake-server", "tigerlake", "rocketlake",
    "sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d", "diamondrapids"})


def compile_flags(target: Target, contractions: Sequence[Contraction],
                  matrix_matmuls: bool = False, tiled: bool = False) -> tuple[str, ...]:
    """``matrix_matmuls``: every contraction is a matmul of two matrices, its consumers
    kept out of its dispatch (``build.finish_module``); ``tiled``: every contraction is a
    float64 matmul that aotc-tile-matmuls gives its tiles, or (AVX2) one it runs on packed
    panels, which run faster than data tiling (passes/matmul_tiles.py,
    passes/matmul_panels.py)."""
    flags = target.flags
    if tiled:
        return flags
    if matrix_matmuls and inner_tiling(target, contractions):
        flags += DATA_TILING + INNER_TILED
    elif _tiles(target) and wants_data_tiling(contractions):
        flags += DATA_TILING
    return flags
