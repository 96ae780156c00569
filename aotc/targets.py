"""One table from target names to IREE compiler flags.

A target is a name users can say (``target="cpu"``, ``"aarch64:cortex-a53"``,
``"cuda:sm_90"``), not flag soup. Names are ``"<family>[:<detail>]"``; the families and
which device runs each are ``aotc.runtime.targets.FAMILIES``, shared with the runtime.
Several targets in one artifact are written with commas (``"cpu,aarch64,vulkan"``) or
given as a list; the runtime then picks the code that fits the device it loads on.

How a target reaches IREE:
- one plain target: its flags (``Target.flags``);
- several targets, or a target IREE cannot name by flag (``cuda:sm_90``, ``cuda:sm_100``):
  the module carries IREE's device-target attribute (``hal.device.targets``), obtained by
  asking IREE what it makes of each target's flags and, for the latter, editing it
  (``device_targets_attribute``).

The CPU flags are the ones measured best on the host (see docs/architecture.md): O3
everywhere, data tiling only where it pays (``cpu_paths.wants_data_tiling``).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from .errors import AotcError
from .passes import opset
from .runtime import targets as rt_targets

LOCAL_CPU = (
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
)
# aotc computes in the dtype numpy would use: never let IREE narrow f64 or i64.
NO_DEMOTION = ("--iree-input-demote-f64-to-f32=false", "--iree-input-demote-i64-to-i32=false")
# At O2 and above IREE turns a concatenation along an inner dimension into transposes and
# one along the outer dimension; that path computed np.roll(x, -2, axis=-1) of a float32
# [8, 100] wrongly on x86 (112 of 800 values; fuzzer program 13558): concatenations stay.
OPT = ("--iree-opt-level=O3", "--iree-opt-outer-dim-concat=false")
DATA_TILING = ("--iree-opt-data-tiling",)
# Data-tiled matmuls lowered to iree_codegen.inner_tiled instead of linalg.mmt4d: float64
# matmuls 2.6-4.9x faster on x86 (Zen 5, 512^3 to 1024x1200x1100; about 1.1x at 256^3),
# float32 ones 1.2-1.4x slower (benchmarks/f64_contractions.py). Not measured elsewhere,
# so x86_64 only.
INNER_TILED = ("--iree-llvmcpu-enable-inner-tiled",)
# IREE leaves LLVM's loop vectorizer off: its own vectorization covers structured ops, not
# the scalar loops of the dispatches aotc forms (sequential kernels, loops in one
# dispatch). On, those loops run 2-7x faster (a 64x64 LU by masked updates 166 -> 25 us,
# eigh 256 18.6 -> 9.1 ms; the code of structured ops does not move), and such a module
# compiles 2-3% slower, so it is on for modules with such dispatches only
# (build.finish_module). SLP vectorization added nothing measurable.
LOOP_VECTORIZATION = ("--iree-llvmcpu-loop-vectorization",)
# Results in host-visible memory: on Vulkan devices whose host pointers cannot be
# imported (lavapipe, many drivers) results could otherwise not be read back.
VULKAN_MAPPABLE = ("--iree-hal-external-resources-mappable=true",)

# IREE 3.13's dispatch creation at O2/O3 fuses an elementwise result that is returned and
# also reduced (``y = f(x); return y, y.sum(1)``) into one SPIR-V dispatch that recomputes
# it per reduced element: a 256x1024 case ran > 100 s on lavapipe, 30 ms at O1. The MLP
# sample runs as fast at O1.
VULKAN_FUSION = ("--iree-dispatch-creation-opt-level=O1",)

CPU_FLAG = "--iree-llvmcpu-target-cpu"
VULKAN_FLAG = "--iree-vulkan-target"

# ELF e_machine of the code embedded for each CPU architecture.
ELF_MACHINES = {"x86_64": 62, "aarch64": 183, "armv7": 40, "riscv64": 243}


@dataclass(frozen=True)
class Target:
    """A named place code runs: one table entry, or several (``parts``) in one artifact."""

    name: str  # "cpu", "aarch64:cortex-a53", "cpu,aarch64,vulkan"
    device_flags: tuple[str, ...]  # select IREE's device and code generation target
    description: str
    extra_flags: tuple[str, ...] = ()  # other flags code for this target needs
    unsupported_dtypes: frozenset[str] = field(default_factory=frozenset)  # MLIR types: "f64"
    unsupported_ops: frozenset[str] = field(default_factory=frozenset)  # "math.sin:f64"
    # Textual edits of IREE's device-target attribute for the device_flags, for a target
    # IREE cannot name by flag: (old, new) pairs, each old text found exactly once.
    attribute_edits: tuple[tuple[str, str], ...] = ()
    detail_flag: str | None = None  # the flag a ":<detail>" sets ("aarch64:cortex-a76")
    passes: tuple[str, ...] = ()  # passes the module needs first: aotc's (REGISTRY) or upstream
    data_tiling: bool = True  # CPU targets: whether IREE's data tiling works for it
    parts: tuple[Target, ...] = ()  # a multi-target artifact: one Target per target

    @property
    def targets(self) -> tuple[Target, ...]:
        """The single targets this one is made of (itself, unless several)."""
        return self.parts or (self,)

    @property
    def family(self) -> rt_targets.Family:
        return rt_targets.FAMILIES[self.targets[0].name.split(":", 1)[0]]

    @property
    def is_cpu(self) -> bool:
        return all(t.family.is_cpu for t in self.targets)

    @property
    def device(self) -> str:
        """The runtime driver that runs it ("local-task", "vulkan", "cuda")."""
        return self.family.driver or "local-task"

    @property
    def arch(self) -> str | None:
        """CPU targets: the architecture of the code (``cpu``: this machine's)."""
        if not self.family.is_cpu:
            return None
        return self.family.arch or rt_targets.host_arch()

    @property
    def elf_machine(self) -> int | None:
        """CPU targets: the ELF ``e_machine`` of the code embedded in the ``.vmfb``."""
        return ELF_MACHINES.get(self.arch) if self.arch else None

    @property
    def needs_attribute(self) -> bool:
        """Whether the module must carry ``hal.device.targets`` (flags cannot say it)."""
        return len(self.targets) > 1 or bool(self.attribute_edits)

    @property
    def flags(self) -> tuple[str, ...]:
        """The IREE flags to compile with (without the device flags when the module
        carries the device-target attribute)."""
        extra: tuple[str, ...] = ()
        for t in self.targets:
            extra += tuple(f for f in t.extra_flags if f not in extra)
        device = () if self.needs_attribute else self.device_flags
        return device + OPT + NO_DEMOTION + extra

    def device_target(self) -> str:
        """IREE's ``#hal.device.target<...>`` attribute for one target, as text."""
        if self.parts:
            raise AotcError(f"target {self.name!r}: several targets have no single device target")
        text = _iree_device_target(self.device_flags)
        for old, new in self.attribute_edits:
            if text.count(old) != 1:
                raise AotcError(
                    f"target {self.name!r}: expected {old!r} once in IREE's device target "
                    f"for {' '.join(self.device_flags)}, got:\n  {text}\nThis IREE version "
                    f"describes the target differently; update attribute_edits in aotc/targets.py"
                )
            text = text.replace(old, new)
        return text

    def runs_here(self) -> tuple[bool, str]:
        """Whether code for this target can run on this machine, and why (or why not)."""
        answers = [_runs_here(t) for t in self.targets]
        ok = [why for can, why in answers if can]
        if ok:
            return True, "; ".join(ok)
        return False, "; ".join(why for _, why in answers)


# IREE's CPU code links no libm; for these float64 functions it has no inline version.
# aotc-expand-math replaces them (and the float64 and float32 functions IREE computes
# poorly) with its own; the check stays to catch an op that pass does not know.
CPU_MISSING_F64 = frozenset(f"{name}:f64" for name in opset.CPU_MISSING_F64)
# Complex ops become real arithmetic and math ops first (upstream's lowering, which IREE
# would run later), so that aotc-expand-math sees the float64 sin/cos/atan2 they use.
# The NaN guards come last: they also cover the exps aotc's expansions emit.
CPU_PASSES = ("convert-complex-to-standard", "aotc-expand-math", "aotc-expand-math-f32",
              "aotc-guard-known-nans")


def _cpu(name: str, description: str, triple: str | None, cpu: str | None = None,
         features: str | None = None, abi: str | None = None, detail: bool = True) -> Target:
    flags = LOCAL_CPU
    if triple:
        flags += (f"--iree-llvmcpu-target-triple={triple}",)
    if cpu:
        flags += (f"{CPU_FLAG}={cpu}",)
    if features:
        flags += (f"--iree-llvmcpu-target-cpu-features={features}",)
    if abi:
        flags += (f"--iree-llvmcpu-target-abi={abi}",)
    return Target(name, flags, description, unsupported_ops=CPU_MISSING_F64,
                  detail_flag=CPU_FLAG if detail else None, passes=CPU_PASSES)


# IREE 3.13 knows no sm_90/sm_100 target by flag (iree-org/iree#22147): their attribute
# is IREE's sm_80 one with the architecture, the PTX version (sm_90 needs PTX ISA 8.0,
# sm_100 8.6) and the shared memory per workgroup (227 KiB on both) edited.
SM80_MEMORY = "max_workgroup_memory_bytes = 166912"
SM80_SIZES = "max_workgroup_sizes = [1024, 1024, 1024]"


def _cuda(sm: str, gpus: str, from_sm80: str | None = None) -> Target:
    edits: tuple[tuple[str, str], ...] = ()
    if from_sm80:
        edits = (('arch = "sm_80"', f'arch = "{sm}"'),
                 ('features = "+ptx76"', f'features = "{from_sm80}"'),
                 (SM80_MEMORY, "max_workgroup_memory_bytes = 232448"),
                 (SM80_SIZES, "max_workgroup_sizes = [1024, 1024, 64]"))
    flags = ("--iree-hal-target-device=cuda", f"--iree-cuda-target={'sm_80' if from_sm80 else sm}")
    return Target(f"cuda:{sm}", flags, f"NVIDIA {gpus}",
                  attribute_edits=edits,
                  # its code generation crashes on reductions IREE fuses from complex values
                  passes=("aotc-separate-complex-parts",))


TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target(
            "cpu",
            LOCAL_CPU + (f"{CPU_FLAG}=host",),
            "this machine's CPU, with every instruction set it has",
            unsupported_ops=CPU_MISSING_F64,
            passes=CPU_PASSES,
        ),
        _cpu("x86_64", "x86-64 CPUs with AVX2 and FMA (x86-64-v3: 2013 on)",
             "x86_64-unknown-linux-gnu", "x86-64-v3"),
        _cpu("aarch64", "64-bit Arm Linux: Raspberry Pi 3/4/5, Jetson, Graviton",
             "aarch64-unknown-linux-gnu", "generic"),
        _cpu("android-arm64", "Android arm64-v8a with dot product (Armv8.2: 2018 on)",
             "aarch64-none-linux-android34", features="+neon,+dotprod"),
        replace(_cpu("armv7", "32-bit Arm Linux, NEON, hard-float: Cortex-A7/A9, Pi 2",
                     "armv7a-unknown-linux-gnueabihf", "generic", "+neon,+vfp4"),
                # no scalar float min/max instruction: LLVM would call fmaxf, unlinkable
                passes=CPU_PASSES + ("aotc-expand-float-minmax",)),
        _cpu("riscv64", "64-bit RISC-V Linux: RV64GC, lp64d ABI",
             "riscv64-unknown-linux-gnu", "generic-rv64", "+m,+a,+f,+d,+c", "lp64d",
             detail=False),
        # IREE 3.13's data tiling makes vectors too large to compile for VLEN 128.
        replace(_cpu("riscv64:rvv", "RV64GC with vectors (RVV 1.0), any VLEN",
                     "riscv64-unknown-linux-gnu", "generic-rv64", "+m,+a,+f,+d,+c,+v", "lp64d",
                     detail=False), data_tiling=False),
        _cpu("riscv64:rvv256", "RV64GC with RVV 1.0, VLEN >= 256 only: SpacemiT K1",
             "riscv64-unknown-linux-gnu", "generic-rv64", "+m,+a,+f,+d,+c,+v,+zvl256b", "lp64d",
             detail=False),
        Target(
            "vulkan",
            ("--iree-hal-target-device=vulkan",),
            "any Vulkan 1.1 GPU: 32-bit math, int64 emulated, no float16/64",
            extra_flags=VULKAN_MAPPABLE + VULKAN_FUSION,
            # float16 compiles for the baseline but computes wrong results on lavapipe.
            unsupported_dtypes=frozenset({"f16", "f64"}),
            detail_flag=VULKAN_FLAG,
            # IREE emulates 8/16-bit integers there in 32-bit words: without unsigned
            # division, shifts or comparisons, with a wrong uint8 max (aotc computes those
            # on i32), and reading a partial last word of an argument as 0 (refused).
            # Its SPIR-V code has no select of complex scalars, and misread gathers from
            # column slices.
            passes=("aotc-widen-narrow-ints", "aotc-check-narrow-arguments",
                    "aotc-split-complex-selects", "aotc-separate-gather-slices"),
        ),
        _cuda("sm_80", "A100, A30 (Ampere), and every later GPU"),
        _cuda("sm_86", "RTX 30xx, A10, A40 (Ampere)"),
        _cuda("sm_87", "Jetson AGX Orin / Orin Nano (Ampere)"),
        _cuda("sm_89", "RTX 40xx, L4, L40 (Ada)"),
        _cuda("sm_90", "H100, H200, GH200 (Hopper)", from_sm80="+ptx80"),
        _cuda("sm_100", "B200, GB200 (Blackwell)", from_sm80="+ptx86"),
        _cuda("sm_120", "RTX 50xx, RTX PRO 6000 (Blackwell)"),
    )
}

# Short names for table entries.
ALIASES = {"cuda": "cuda:sm_80"}


def get_target(name: str | Target | Sequence[str]) -> Target:
    """The target for a name, a comma-separated list of names, or a list of names.

    >>> get_target("aarch64:cortex-a53").name
    'aarch64:cortex-a53'
    >>> [t.name for t in get_target("cpu,vulkan").targets]
    ['cpu', 'vulkan']
    """
    if isinstance(name, Target):
        return name
    if isinstance(name, str):
        names = rt_targets.split_targets(name)
    elif isinstance(name, (list, tuple)) and all(isinstance(n, str) for n in name):
        names = [part for n in name for part in rt_targets.split_targets(n)]
    else:
        raise AotcError(f"target: expected a target name, a comma-separated list or a list "
                        f"of names, got {name!r}; choose from: {', '.join(TARGETS)}")
    if not names:
        raise AotcError(f"target={name!r}: expected at least one target; choose from: "
                        f"{', '.join(TARGETS)}")
    parts = [_one(n) for n in names]
    seen: set[str] = set()
    for t in parts:
        if t.name in seen:
            raise AotcError(f"target={name!r}: {t.name!r} is listed twice; list each target once")
        seen.add(t.name)
    if len(parts) == 1:
        return parts[0]
    drivers = [t.family.driver for t in parts if t.family.driver]
    for driver in set(drivers):
        same = [t.name for t in parts if t.family.driver == driver]
        if len(same) > 1:
            raise AotcError(
                f"target={name!r}: one artifact can hold one {driver} target, got "
                f"{', '.join(same)} (a device of that driver would always run the first). "
                f"Export one artifact per GPU target"
                + ("; cuda:sm_80 runs on every later GPU" if driver == "cuda" else "")
            )
    return Target(",".join(t.name for t in parts), (), "; ".join(t.description for t in parts),
                  parts=tuple(parts))


def _one(name: str) -> Target:
    key = ALIASES.get(name.strip().lower(), name.strip())
    if key in TARGETS:
        return TARGETS[key]
    family, _, detail = key.partition(":")
    family = family.lower()
    base = TARGETS.get(family)
    if base is None or not detail:
        cuda = family == "cuda" and detail
        raise AotcError(
            f"target={name!r} is not a known target; choose one of: {', '.join(TARGETS)}"
            + (" (a ':<cpu>' detail after x86_64, aarch64, android-arm64 or armv7 picks the "
               "CPU, after vulkan the GPU family)" if not cuda else
               ". Older GPUs are not supported; newer ones run cuda:sm_80 code")
        )
    if base.detail_flag is None:
        raise AotcError(f"target={name!r}: {family} takes no ':<detail>'; choose one of: "
                        f"{', '.join(n for n in TARGETS if n.split(':')[0] == family)}")
    flags = tuple(f for f in base.device_flags if not f.startswith(base.detail_flag + "="))
    target = replace(base, name=f"{family}:{detail}",
                     device_flags=flags + (f"{base.detail_flag}={detail}",),
                     description=f"{base.description}; code for {detail}")
    text = target.device_target()  # IREE checks the detail (unknown CPUs, GPU families)
    if not target.family.is_cpu:
        # A GPU family: what it computes natively decides the dtypes it cannot run.
        target = replace(target, unsupported_dtypes=_gpu_missing_dtypes(text))
    return target


def _gpu_missing_dtypes(device_target: str) -> frozenset[str]:
    match = re.search(r"compute = ([\w|]+)", device_target)
    compute = set(match.group(1).split("|")) if match else set()
    return frozenset(t for t, cap in (("f16", "fp16"), ("f64", "fp64")) if cap not in compute)


# ---- asking IREE for its device-target attribute ---------------------------------------

_PROBE = b"""func.func @probe(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, %a : tensor<4xf32>
  return %r : tensor<4xf32>
}
"""
_DEVICE_GLOBAL = re.compile(r"util\.global private @__device_0 = (#hal\.device\.target<.*>)"
                            r" : !hal\.device")


@functools.cache
def _iree_device_target(device_flags: tuple[str, ...]) -> str:
    """The ``#hal.device.target`` IREE builds for these flags: the iree-compile tool
    compiles a one-op module up to preprocessing (~0.3 s; in-process sessions cannot stop
    at a phase) and the device global is read from its output."""
    import subprocess

    from iree.compiler.tools.binaries import find_tool

    done = subprocess.run(
        [find_tool("iree-compile"), "-", *device_flags, "--compile-to=preprocessing"],
        input=_PROBE, capture_output=True, check=False,
    )
    text, diagnostics = done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
    unknown_cpu = re.search(r"'([^']*)' is not a recognized processor", diagnostics)
    if unknown_cpu:
        accepted = re.search(r"List of accepted CPUs: (.*)", diagnostics)
        raise AotcError(
            f"target CPU {unknown_cpu.group(1)!r} is not known to LLVM for this architecture; "
            f"choose one of: {accepted.group(1) if accepted else '(see LLVM)'}"
        )
    match = _DEVICE_GLOBAL.search(text)
    if done.returncode != 0 or match is None:
        errors = [line for line in diagnostics.splitlines() if "error" in line.lower()]
        raise AotcError(f"IREE made no device target of the flags {' '.join(device_flags)}:\n"
                        f"  {chr(10).join(errors[:5]) or diagnostics.strip() or text[:2000]}")
    return match.group(1)


_DEVICE = re.compile(r'^#hal\.device\.target<"([\w-]+)", \[(.*)\]>$', re.DOTALL)
_FORMAT = re.compile(r'#hal\.executable\.target<"[^"]+", "([^"]+)"')


def device_targets_attribute(target: Target) -> str | None:
    """The module attribute ``hal.device.targets`` for ``target``, as text; None when
    ``target.flags`` say everything (one plain target).

    CPU targets share one ``local`` device with one executable per target (the runtime
    loads the one for its CPU); each GPU target is a device of its own, and several
    devices become one ``#hal.device.select`` (the runtime takes the one it has).
    """
    if not target.needs_attribute:
        return None
    devices: list[str] = []
    local_executables: list[str] = []
    formats: dict[str, str] = {}
    for t in target.targets:
        text = t.device_target()
        match = _DEVICE.match(text)
        if match is None:
            raise AotcError(f"target {t.name!r}: IREE's device target has an unexpected "
                            f"form; update aotc/targets.py:\n  {text}")
        if match.group(1) != "local":
            devices.append(text)
            continue
        for fmt in _FORMAT.findall(match.group(2)):
            if fmt in formats:
                raise AotcError(
                    f"target={target.name!r}: {formats[fmt]} and {t.name} both compile to "
                    f"{fmt}, and a device would only ever load the first; keep one of them")
            formats[fmt] = t.name
        if not local_executables:
            devices.append("<local>")  # the shared CPU device keeps its first position
        local_executables.append(match.group(2))
    if local_executables:
        local = f'#hal.device.target<"local", [{", ".join(local_executables)}]>'
        devices[devices.index("<local>")] = local
    inner = devices[0] if len(devices) == 1 else f"#hal.device.select<[{', '.join(devices)}]>"
    return f"[{inner} : !hal.device]"


# ---- where code can run ----------------------------------------------------------------

# Instruction-set levels of x86_64 targets and a /proc/cpuinfo flag each needs.
_X86_LEVELS = {"x86-64-v2": ("sse4_2", "popcnt"), "x86-64-v3": ("avx2", "fma", "bmi2"),
               "x86-64-v4": ("avx512f", "avx512bw", "avx512vl")}


@functools.lru_cache(maxsize=None)
def _cpuinfo(field: str) -> str:
    """The first ``field`` line's value in /proc/cpuinfo ("" where there is none)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(field):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def _cpu_flags() -> set[str]:
    return set(_cpuinfo("flags").split())


def _runs_here(t: Target) -> tuple[bool, str]:
    host = rt_targets.host_arch()
    family = t.family
    if family.is_cpu:
        if family.arch is None:
            return True, f"this machine's CPU ({host})"
        if family.arch != host:
            return False, f"{family.arch} code; this machine is {host}"
        level = next((f.split("=", 1)[1] for f in t.device_flags
                      if f.startswith(CPU_FLAG + "=")), "")
        missing = [flag for flag in _X86_LEVELS.get(level, ()) if flag not in _cpu_flags()]
        if missing and os.path.exists("/proc/cpuinfo"):
            return False, f"{level} code; this CPU lacks {', '.join(missing)}"
        return True, f"{host} CPU"
    devices = rt_targets.available_devices(family.driver)
    if not devices:
        return False, f"no {family.driver} device here"
    if family.name == "cuda":
        sm = int(t.name.split("sm_", 1)[1])
        gpus = [major * 10 + minor for major, minor in rt_targets.cuda_compute_capabilities()]
        if gpus and max(gpus) < sm:
            return False, f"needs compute capability {sm / 10:.1f}; GPUs here: " + ", ".join(
                f"{g / 10:.1f}" for g in gpus)
    return True, f"{family.driver}: {devices[0].split(' (')[0]}"


# ---- data tiling -----------------------------------------------------------------------


class Contraction(NamedTuple):
    """A contraction (matmul, einsum, convolution) a trace emitted, as the compile flags
    see it."""

    flops: float
    constant: bool  # an operand is a compile-time constant
    dtype: str  # its operands' dtype
