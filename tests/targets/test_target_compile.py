"""Every named target compiles the MLP sample, and the code inside the .vmfb is for the
machine it names: the ELF machine type (and ABI flags) of embedded CPU code, the PTX
target and ISA version of CUDA code, SPIR-V for Vulkan."""

from __future__ import annotations

import re

import pytest
from target_programs import archive, embedded_elves

from aotc.targets import TARGETS, get_target

# ELF e_machine values and the executable format IREE names in the archive.
ELF = {"x86_64": (62, "embedded_elf_x86_64"), "aarch64": (183, "embedded_elf_arm_64"),
       "armv7": (40, "embedded_elf_arm_32"), "riscv64": (243, "embedded_elf_riscv_64")}
EF_RISCV_RVC, EF_RISCV_FLOAT_ABI_DOUBLE = 0x1, 0x4
EF_ARM_EABI_VER5, EF_ARM_ABI_FLOAT_HARD = 0x05000000, 0x400
PTX_ISA = {"sm_80": "7.6", "sm_86": "7.6", "sm_87": "7.6", "sm_89": "8.4", "sm_90": "8.0",
           "sm_100": "8.6", "sm_120": "8.7"}


@pytest.mark.parametrize("name", [n for n in TARGETS if get_target(n).is_cpu])
def test_cpu_target_embeds_code_for_its_machine(artifacts, name):
    art = artifacts.mlp(name)
    target = get_target(name)
    machine, fmt = ELF[target.arch]
    elves = embedded_elves(art.vmfb)
    assert elves and all(fmt in file for file in elves), elves
    for elf_class, e_machine, e_flags in elves.values():
        assert e_machine == machine == target.elf_machine
        assert elf_class == (1 if target.arch == "armv7" else 2)
        if target.arch == "riscv64":  # compressed instructions, hard-float double ABI
            assert e_flags & EF_RISCV_FLOAT_ABI_DOUBLE and e_flags & EF_RISCV_RVC
        if target.arch == "armv7":  # EABI 5, hard-float
            assert (e_flags & EF_ARM_EABI_VER5 == EF_ARM_EABI_VER5
                    and e_flags & EF_ARM_ABI_FLOAT_HARD)
    assert art.target == name
    assert all(m.target == name for m in art.functions.values())
    assert "_const.bin" in archive(art.vmfb)  # the weights travel inside
    assert 2_500_000 < len(art.vmfb) < 3_500_000


def test_riscv_vector_variants_say_so_in_their_attributes(artifacts):
    def arch_string(name):
        (code,) = [d for f, d in archive(artifacts.mlp(name).vmfb).items() if f.endswith(".so")]
        return re.search(rb"rv64[a-z0-9_]+", code).group().decode()

    assert "_v1p0" not in arch_string("riscv64") and "_d2p2" in arch_string("riscv64")
    assert "_v1p0" in arch_string("riscv64:rvv") and "zvl256b" not in arch_string("riscv64:rvv")
    assert "zvl256b" in arch_string("riscv64:rvv256")


def test_tuned_cpu_detail_compiles(artifacts):
    art = artifacts.mlp("aarch64:cortex-a76")
    assert {m for _, m, _ in embedded_elves(art.vmfb).values()} == {183}
    assert art.functions["predict"].target == "aarch64:cortex-a76"


@pytest.mark.parametrize("sm", [n.split(":")[1] for n in TARGETS if n.startswith("cuda:")])
def test_cuda_target_compiles_ptx_for_its_sm(artifacts, sm):
    art = artifacts.mlp(f"cuda:{sm}")
    files = archive(art.vmfb)
    (ptx,) = [data for name, data in files.items() if name.endswith("cuda_nvptx_fb.fb")]
    assert set(re.findall(rb"\.target (sm_\w+)", ptx)) == {sm.encode()}
    assert set(re.findall(rb"\.version ([0-9.]+)", ptx)) == {PTX_ISA[sm].encode()}
    assert art.functions["predict"].target == f"cuda:{sm}"
    if sm in ("sm_90", "sm_100"):  # IREE cannot name these by flag: the module does
        assert "hal.device.targets" in art.mlir and f'arch = "{sm}"' in art.mlir
        assert "--iree-cuda-target=sm_80" not in art.flags


def test_vulkan_compiles_spirv_with_mappable_results(artifacts):
    art = artifacts.mlp("vulkan")
    assert any(name.endswith("vulkan_spirv_fb.fb") for name in archive(art.vmfb))
    assert "--iree-hal-external-resources-mappable=true" in art.flags


def test_float64_is_refused_before_iree_for_vulkan():
    import numpy as np

    import aotc
    import aotc.numpy as anp

    def f(x):
        return anp.exp(x) * 2

    with pytest.raises(aotc.CompileError, match=r"(?s)target 'vulkan' cannot compute.*f64") as info:
        aotc.export(f, np.zeros(3, np.float64), target="cpu,vulkan")
    assert "test_target_compile.py" in str(info.value)  # the user's line


def test_float32_trig_is_widened_on_cpu_but_not_in_a_module_that_also_targets_vulkan():
    import numpy as np

    import aotc
    import aotc.numpy as anp

    x = np.ones(3, np.float32)
    cpu = aotc.jit(anp.sin).lower(x).as_text()
    assert "math.sin" not in cpu and "arith.extf" in cpu  # computed in float64, rounded
    both = aotc.jit(anp.sin, target="cpu,vulkan").lower(x).as_text()
    assert "math.sin" in both and "f64" not in both  # Vulkan has no float64
    vulkan = aotc.jit(anp.sin, target="vulkan").lower(x).as_text()
    assert "math.sin" in vulkan


def test_armv7_float_min_max_become_selects(artifacts):
    """32-bit Arm has no scalar float min/max: the rewritten module links (no fmaxf)."""
    art = artifacts.mlp("armv7")
    assert "arith.maximumf" not in art.mlir and "arith.cmpf" in art.mlir
    assert "arith.maximumf" in artifacts.mlp("aarch64").mlir  # other targets keep them


@pytest.mark.parametrize("name", [n for n in TARGETS if get_target(n).is_cpu
                                  and get_target(n).runs_here()[0]])
def test_cpu_targets_for_this_machine_run_here(artifacts, name):
    """cpu, and the portable target of this machine's architecture (x86_64 here)."""
    from target_programs import MLP_INPUT, check_mlp

    from aotc import runtime

    check_mlp(*runtime.load(artifacts.mlp(name).vmfb, device="local-sync").predict(MLP_INPUT))
