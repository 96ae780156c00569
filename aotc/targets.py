"""One table from target names to IREE compiler flags.

A target is a name users can say (``target="cpu"``), not flag soup. The CPU flags are
the ones measured best on the host (see docs/architecture.md): O3 everywhere, data
tiling only where it pays (``wants_data_tiling``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import AotcError

LOCAL_CPU = (
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
)
# aotc computes in the dtype numpy would use: never let IREE narrow f64 or i64.
NO_DEMOTION = ("--iree-input-demote-f64-to-f32=false", "--iree-input-demote-i64-to-i32=false")
OPT = ("--iree-opt-level=O3",)
DATA_TILING = ("--iree-opt-data-tiling",)


@dataclass(frozen=True)
class Target:
    name: str
    flags: tuple[str, ...]
    device: str  # the runtime driver that runs it
    description: str
    unsupported_dtypes: frozenset[str] = field(default_factory=frozenset)  # MLIR types: "f64"
    unsupported_ops: frozenset[str] = field(default_factory=frozenset)  # "math.sin:f64"
    host_runnable: bool = True


# IREE's CPU code links no libm; for these float64 functions it has no inline version
# (exp, log, expm1, log1p, tanh, cbrt, log2, log10 are inline or rewritten by aotc).
CPU_MISSING_F64 = frozenset(
    f"math.{name}:f64" for name in ("sin", "cos", "tan", "asin", "acos", "atan", "atan2")
)


TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target(
            "cpu",
            LOCAL_CPU + ("--iree-llvmcpu-target-cpu=host",) + OPT + NO_DEMOTION,
            "local-task",
            "this machine's CPU, with every instruction set it has",
            unsupported_ops=CPU_MISSING_F64,
        ),
    )
}


def get_target(name: str) -> Target:
    if isinstance(name, Target):
        return name
    try:
        return TARGETS[name]
    except KeyError:
        raise AotcError(
            f"target={name!r} is not a known target; choose one of: {', '.join(TARGETS)}"
        ) from None


# Data tiling repacks matmul operands. It pays for large matmuls and for weights that are
# compile-time constants (packed once, at compile time), and costs 1.3-2x on small and
# medium matmuls whose operands arrive at run time (repacked on every call).
DATA_TILING_MIN_FLOPS = 2 * 512**3


def wants_data_tiling(contractions: list[tuple[float, bool]]) -> bool:
    """``contractions``: (flops, has a constant operand) for each contraction traced."""
    return bool(contractions) and all(
        flops >= DATA_TILING_MIN_FLOPS or constant for flops, constant in contractions
    )


def compile_flags(target: Target, contractions: list[tuple[float, bool]]) -> tuple[str, ...]:
    flags = target.flags
    if target.name == "cpu" and wants_data_tiling(contractions):
        flags += DATA_TILING
    return flags
