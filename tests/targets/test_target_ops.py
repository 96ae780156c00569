"""The op families (control flow, sorting and scans, gathers and scatters, convolutions and
pooling, random, unsigned integers, pad/roll/tril) on every target: one program per family
(target_ops_programs.py), exported once as ``cpu,aarch64,vulkan`` and run on this CPU, on
Vulkan (Mesa's lavapipe) and on aarch64 (qemu user mode, IREE's iree-run-module), and once
as ``riscv64,cuda:sm_80``, compile only (no board, no GPU here).

Every run matches numpy (float32 within RTOL/ATOL, integers and bools exactly) and the
CPU run: integer and bool results bit for bit; random draws bit for bit too, except the
few float draws listed in VULKAN_INEXACT, whose SPIR-V math is not correctly rounded.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np
import pytest
from target_ops_programs import PROGRAMS, compare
from target_programs import archive, elf_header
from test_target_edge import aarch64, iree_run_module, value_flag  # noqa: F401 (a fixture)
from test_target_vulkan import vulkan  # noqa: F401 (a fixture)

import aotc
import aotc.numpy as anp
from aotc import cache, runtime
from aotc.compiler import compile_bytecode
from aotc.errors import CompileError
from aotc.runtime.metadata import FunctionMetadata
from aotc.targets import ELF_MACHINES

RUN_HERE = "cpu,aarch64,vulkan"
COMPILE_ONLY = "riscv64,cuda:sm_80"
FAMILIES = list(PROGRAMS)
# Families whose GPU code comes in an artifact of its own (one serving CPUs and GPUs is
# refused when tracing: test_factorizations_are_refused_for_mixed_targets). Their CUDA
# compile is test_target_gpu_linalg.py's, of a smaller program (the suite's time).
GPU_APART = {"factorizations"}


def run_here_targets(family: str) -> str:
    return "cpu,aarch64" if family in GPU_APART else RUN_HERE


def vulkan_targets(family: str) -> str:
    return "vulkan" if family in GPU_APART else RUN_HERE


def compile_only_targets(family: str) -> str:
    return "riscv64" if family in GPU_APART else COMPILE_ONLY

# Random float draws that Vulkan computes with other roundings, and by how many float32
# ulps they may differ from the CPU: normal's erf_inv takes log1p, which IREE's SPIR-V
# code computes as Log(1 + x) with the driver's Log (half of lavapipe's draws differ by one
# ulp; sqrt and the polynomial match); uniform with bounds other than [0, 1) takes one fma
# (SPIR-V's Fma may round the product first).
VULKAN_INEXACT = {"normal": 4, "uniform_range": 1}


@dataclass(frozen=True)
class Built:
    vmfb: bytes
    metadata: FunctionMetadata


def build(family: str, target: str) -> Built:
    """The family's program compiled for ``target``, through aotc's disk cache (a warm
    run compiles nothing). Not loaded: compile-only targets have no device here."""
    p = PROGRAMS[family]
    lowered = aotc.jit(p.fn, target=target).lower(*p.inputs)
    key = lowered.cache_key() if cache.enabled() else None
    vmfb = cache.load(key) if key else None
    if vmfb is None:
        vmfb = compile_bytecode(lowered.bytecode, lowered.flags, family)
        if key:
            cache.store(key, vmfb)
    return Built(vmfb, lowered.metadata)


@pytest.fixture(scope="module")
def exported():
    """``exported(family, target)``: built once per module run."""
    return functools.cache(build)


@pytest.fixture(scope="module")
def on_cpu(exported):
    """``on_cpu(family)``: the results of the run-here artifact on this CPU (local-sync)."""
    results: dict[str, dict] = {}

    def get(family: str) -> dict:
        if family not in results:
            results[family] = run_here(exported(family, run_here_targets(family)), family,
                                       "local-sync")
        return results[family]

    return get


def run_here(built: Built, family: str, device) -> dict:
    """The family's results from the run-here artifact on ``device``, as numpy arrays."""
    module = runtime.load(built.vmfb, device=device)
    results = module[built.metadata.name](*PROGRAMS[family].inputs)
    return {k: np.asarray(v) for k, v in results.items()}


def check_against_numpy(family: str, got: dict, where: str) -> None:
    p = PROGRAMS[family]
    if p.reference is not None:
        problems = compare(got, p.reference(*p.inputs), where)
        assert not problems, "\n".join(problems)


def check_against_cpu(family: str, got: dict, cpu: dict, where: str, inexact=None) -> None:
    """Integers and bools bit for bit; floats too for ``exact`` programs, except the
    entries of ``inexact`` (name -> float32 ulps)."""
    inexact = inexact or {}
    exact_part = {k: v for k, v in got.items() if k not in inexact}
    problems = compare(exact_part, {k: cpu[k] for k in exact_part}, where,
                       exact=PROGRAMS[family].exact)
    for name, ulps in inexact.items():
        tolerance = ulps * np.spacing(np.abs(cpu[name]).astype(np.float32))
        if got[name].dtype != cpu[name].dtype or np.any(np.abs(got[name] - cpu[name]) > tolerance):
            problems.append(f"{where}[{name}]: more than {ulps} ulps from the CPU:\n"
                            f"{got[name]}\n!=\n{cpu[name]}")
    assert not problems, "\n".join(problems)


# ---- this CPU -------------------------------------------------------------------------------

@pytest.mark.parametrize("family", FAMILIES)
def test_runs_on_the_cpu_and_matches_numpy(on_cpu, family):
    check_against_numpy(family, on_cpu(family), f"{family} on the CPU")


# ---- Vulkan (lavapipe) -----------------------------------------------------------------------

@pytest.mark.parametrize("family", FAMILIES)
def test_runs_on_vulkan_as_on_the_cpu(exported, on_cpu, vulkan, family):  # noqa: F811
    got = run_here(exported(family, vulkan_targets(family)), family, vulkan)
    where = f"{family} on Vulkan"
    check_against_numpy(family, got, where)
    check_against_cpu(family, got, on_cpu(family), where,
                      VULKAN_INEXACT if family == "random" else None)


# ---- aarch64 (qemu) ----------------------------------------------------------------------------

@pytest.mark.parametrize("family", FAMILIES)
def test_runs_on_aarch64_as_on_the_cpu(exported, on_cpu, aarch64, family, tmp_path):  # noqa: F811
    _check_on_aarch64(exported(family, run_here_targets(family)), family, on_cpu, aarch64,
                      tmp_path)


def test_loops_as_one_dispatch_run_on_aarch64(exported, on_cpu, aarch64, tmp_path):  # noqa: F811
    """An artifact for CPU targets only runs its loops of scalar steps as one dispatch
    each (passes/loops_in_dispatch.py): the same values on aarch64 as numpy and the
    host's run of the multi-target artifact, whose loops keep the per-op form."""
    program = PROGRAMS["control"]
    lowered = aotc.jit(program.fn, target="cpu,aarch64").lower(*program.inputs).as_text()
    assert "flow.dispatch.workgroups" in lowered
    _check_on_aarch64(exported("control", "cpu,aarch64"), "control", on_cpu, aarch64, tmp_path)


def _check_on_aarch64(built, family, on_cpu, aarch64, tmp_path):  # noqa: F811
    p = PROGRAMS[family]
    (tmp_path / "m.vmfb").write_bytes(built.vmfb)
    inputs = [value_flag("--input", a, tmp_path / f"in{i}") for i, a in enumerate(p.inputs)]
    results = built.metadata.results
    outputs = [f"--output=@{tmp_path}/out{i}.npy" for i in range(len(results))]
    done = iree_run_module(aarch64, "--device=local-task", f"--module={tmp_path}/m.vmfb",
                           f"--function={built.metadata.name}", *inputs, *outputs)
    assert done.returncode == 0, done.stdout + done.stderr
    got = {}
    for i, spec in enumerate(results):
        key = spec.name.removeprefix("out['").removesuffix("']")
        # iree-run-module writes signless integers as signed, i1 as int8: same bits
        got[key] = np.load(tmp_path / f"out{i}.npy").view(np.dtype(spec.dtype)).reshape(spec.shape)
    where = f"{family} on aarch64"
    check_against_numpy(family, got, where)
    check_against_cpu(family, got, on_cpu(family), where)


# ---- riscv64 and CUDA: compile only --------------------------------------------------------------

@pytest.mark.parametrize("family", FAMILIES)
def test_compiles_for_riscv64_and_cuda(exported, family):
    files = archive(exported(family, compile_only_targets(family)).vmfb)
    riscv = {n: elf_header(d) for n, d in files.items() if n.endswith("_embedded_elf_riscv_64.so")}
    cuda = [n for n in files if n.endswith("_cuda_nvptx_fb.fb")]
    # every dispatch for both (families apart: for riscv64 alone)
    assert riscv and len(cuda) == (0 if family in GPU_APART else len(riscv)), sorted(files)
    assert {machine for _, machine, _ in riscv.values()} == {ELF_MACHINES["riscv64"]}


# ---- what Vulkan cannot do is refused when compiling ---------------------------------------

@pytest.mark.parametrize("target", ["cpu,vulkan", "aarch64,cuda:sm_80"])
def test_factorizations_are_refused_for_mixed_targets(target):
    p = PROGRAMS["factorizations"]
    with pytest.raises(aotc.UnsupportedOpError,
                       match="for CPU targets or for GPU targets, not for both in one artifact"):
        aotc.jit(p.fn, target=target).lower(*p.inputs)


def test_narrow_arguments_ending_in_a_partial_word_are_refused_for_vulkan():
    """Vulkan reads uint8/int16/bool arguments in 4-byte words and IREE binds an
    argument's exact bytes: the last elements of a uint8[6] would read as 0."""
    def f(pixels, flag, counts):
        return pixels.astype(np.int32) + flag + counts

    args = (np.arange(6, dtype=np.uint8), np.bool_(True), np.arange(6, dtype=np.int32))
    with pytest.raises(CompileError) as info:
        aotc.export(f, *args, target="cpu,vulkan")
    message = str(info.value)
    assert "aotc-check-narrow-arguments: Vulkan reads 8- and 16-bit integer and bool" in message
    assert "f(pixels: uint8[6]): 6 bytes" in message and "f(flag: bool[]): 1 byte\n" in message
    assert "counts" not in message and "Fix: pass these arguments as int32" in message
    aotc.export(f, *args, target="cpu,aarch64")  # CPU targets read bytes: no refusal


NARROW_UNSIGNED_OPS = re.compile(r"arith\.(divui|remui|shrui|shli|maxui|cmpi (ult|ule|ugt|uge)),? "
                                 r".*: i(8|16)$", re.MULTILINE)


def test_vulkan_computes_narrow_integer_ops_on_32_bits():
    """The IR handed to IREE for Vulkan has no unsigned 8/16-bit division, shift,
    comparison or max left (IREE's emulation lacks or miscomputes them); the CPU's keeps
    them, and signed ones stay narrow (the emulation computes them)."""
    def f(a, h):
        return {"div": a // 3, "mod": a % 7, "shift": a >> 2, "gt": a > 200, "max": anp.max(a),
                "signed": (h // -3) >> 1, "signed_lt": h < 5}

    args = (np.arange(8, dtype=np.uint8), np.arange(4, dtype=np.int16))
    for_vulkan = aotc.jit(f, target="vulkan").lower(*args).as_text()
    for_cpu = aotc.jit(f, target="cpu").lower(*args).as_text()
    assert not NARROW_UNSIGNED_OPS.findall(for_vulkan), NARROW_UNSIGNED_OPS.findall(for_vulkan)
    assert ("arith.extui" in for_vulkan
            and re.search(r"arith\.floordivsi .*: i16$", for_vulkan, re.M))
    found_on_cpu = {m[0].split()[0] for m in NARROW_UNSIGNED_OPS.findall(for_cpu)}
    assert found_on_cpu >= {"divui", "remui", "shrui", "cmpi", "maxui"}
