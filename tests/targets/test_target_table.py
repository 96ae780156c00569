"""The target table and target names: parsing, details, several targets, errors, flags,
and the runtime's reading of the same names."""

from __future__ import annotations

import pytest

from aotc import runtime
from aotc.cpu_paths import compile_flags
from aotc.errors import AotcError
from aotc.runtime import targets as rt_targets
from aotc.targets import (
    DATA_TILING,
    TARGETS,
    VULKAN_MAPPABLE,
    Contraction,
    device_targets_attribute,
    get_target,
)

NAMED = ["cpu", "x86_64", "aarch64", "android-arm64", "armv7", "riscv64", "riscv64:rvv",
         "riscv64:rvv256", "vulkan", "cuda:sm_80", "cuda:sm_86", "cuda:sm_87", "cuda:sm_89",
         "cuda:sm_90", "cuda:sm_100", "cuda:sm_120"]
LARGE_CONSTANT_MATMUL = [Contraction(1e6, True, "float32")]


def test_the_table_names_every_target():
    assert list(TARGETS) == NAMED
    for name, target in TARGETS.items():
        assert target.name == name and target.description
        assert rt_targets.family_of(name) is not None, name  # the runtime reads every name


@pytest.mark.parametrize("name,arch,elf", [
    ("x86_64", "x86_64", 62), ("aarch64", "aarch64", 183), ("android-arm64", "aarch64", 183),
    ("armv7", "armv7", 40), ("riscv64", "riscv64", 243), ("riscv64:rvv", "riscv64", 243),
])
def test_cpu_targets_know_their_code(name, arch, elf):
    target = get_target(name)
    assert target.is_cpu and target.device == "local-task"
    assert target.arch == arch and target.elf_machine == elf


def test_gpu_targets_run_on_their_driver():
    assert get_target("vulkan").device == "vulkan" and not get_target("vulkan").is_cpu
    assert get_target("cuda:sm_90").device == "cuda"
    assert get_target("cuda").name == "cuda:sm_80"  # the short name


def test_cpu_is_this_machine():
    assert get_target("cpu").arch == rt_targets.host_arch()
    assert "--iree-llvmcpu-target-cpu=host" in get_target("cpu").flags


def test_riscv_has_hard_float_and_vectors_only_in_the_variants():
    flags = " ".join(get_target("riscv64").flags)
    assert "+f,+d" in flags and "lp64d" in flags and "+v" not in flags
    assert "+v" in " ".join(get_target("riscv64:rvv").flags)
    assert "+zvl256b" in " ".join(get_target("riscv64:rvv256").flags)


def test_cpu_detail_sets_the_cpu():
    target = get_target("aarch64:cortex-a53")
    assert target.name == "aarch64:cortex-a53" and target.arch == "aarch64"
    assert "--iree-llvmcpu-target-cpu=cortex-a53" in target.flags
    assert "--iree-llvmcpu-target-cpu=generic" not in target.flags


def test_unknown_cpu_lists_the_known_ones():
    with pytest.raises(AotcError, match=r"target CPU 'cortex-z9' is not known.*cortex-a53"):
        get_target("aarch64:cortex-z9")


def test_vulkan_family_detail_reads_its_dtypes():
    assert get_target("vulkan").unsupported_dtypes == {"f16", "f64"}
    ampere = get_target("vulkan:ampere")  # NVIDIA's Vulkan: float16 and float64 native
    assert "--iree-vulkan-target=ampere" in ampere.flags
    assert ampere.unsupported_dtypes == frozenset()


@pytest.mark.parametrize("name,message", [
    ("tpu", r"target='tpu' is not a known target; choose one of: cpu, x86_64, aarch64"),
    ("cuda:sm_75", r"Older GPUs are not supported; newer ones run cuda:sm_80 code"),
    ("riscv64:zz", r"riscv64 takes no ':<detail>'; choose one of: riscv64, riscv64:rvv"),
    ("cpu,cpu", r"'cpu' is listed twice"),
    ("cuda:sm_80,cuda:sm_90", r"one artifact can hold one cuda target"),
    ("", r"expected at least one target"),
    ("vulkan:bogus", r"Unknown Vulkan target 'bogus'"),
])
def test_bad_names_say_what_to_do(name, message):
    with pytest.raises(AotcError, match=message):
        get_target(name)


def test_two_targets_of_one_code_format_are_refused():
    with pytest.raises(AotcError,
                       match="aarch64 and android-arm64 both compile to embedded-elf-arm_64"):
        device_targets_attribute(get_target("aarch64,android-arm64"))


def test_several_targets():
    multi = get_target("cpu, aarch64,vulkan")
    assert multi.name == "cpu,aarch64,vulkan"
    assert [t.name for t in multi.targets] == ["cpu", "aarch64", "vulkan"]
    assert get_target(["cpu", "aarch64,vulkan"]).name == "cpu,aarch64,vulkan"
    assert not multi.is_cpu
    # no device flags (the module carries them), Vulkan's readback flag; linked (each
    # device's executables apart: compiler._compile_in_stages)
    assert not any(f.startswith("--iree-hal-target-device") for f in multi.flags)
    assert set(VULKAN_MAPPABLE) <= set(multi.flags)
    assert not any("link-executables" in f for f in multi.flags)


def test_device_targets_attribute_shapes():
    assert device_targets_attribute(get_target("cpu")) is None  # flags say it all
    cpus = device_targets_attribute(get_target("cpu,aarch64,riscv64"))
    assert cpus.startswith('[#hal.device.target<"local", [#hal.executable.target<"llvm-cpu"')
    for fmt in ("embedded-elf-x86_64", "embedded-elf-arm_64", "embedded-elf-riscv_64"):
        assert f'"{fmt}"' in cpus
    mixed = device_targets_attribute(get_target("aarch64,vulkan,cuda:sm_90"))
    assert mixed.startswith("[#hal.device.select<[") and mixed.endswith("]> : !hal.device]")
    assert mixed.index('"local"') < mixed.index('"vulkan"') < mixed.index('"cuda"')


@pytest.mark.parametrize("sm,ptx", [("sm_90", "+ptx80"), ("sm_100", "+ptx86")])
def test_hopper_and_blackwell_edit_the_sm80_attribute(sm, ptx):
    target = get_target(f"cuda:{sm}")
    assert target.needs_attribute
    text = target.device_target()
    assert f'arch = "{sm}"' in text and f'features = "{ptx}"' in text
    assert "max_workgroup_memory_bytes = 232448" in text and "sm_80" not in text


def test_data_tiling_only_for_single_cpu_targets():
    assert DATA_TILING[0] in compile_flags(get_target("cpu"), LARGE_CONSTANT_MATMUL)
    assert DATA_TILING[0] in compile_flags(get_target("aarch64"), LARGE_CONSTANT_MATMUL)
    tiny = [Contraction(10.0, False, "float32")]
    assert DATA_TILING[0] not in compile_flags(get_target("cpu"), tiny)
    for name in ("riscv64:rvv", "cpu,aarch64", "vulkan", "cuda:sm_80"):
        assert DATA_TILING[0] not in compile_flags(get_target(name), LARGE_CONSTANT_MATMUL), name


def test_runs_here():
    ok, why = get_target("cpu").runs_here()
    assert ok and rt_targets.host_arch() in why
    foreign = "riscv64" if rt_targets.host_arch() != "riscv64" else "aarch64"
    ok, why = get_target(foreign).runs_here()
    assert not ok and f"this machine is {rt_targets.host_arch()}" in why
    assert get_target(f"{foreign},cpu").runs_here()[0]  # one of them runs


# ---- the runtime's side of the names ----------------------------------------------------

def _meta(target: str, work: float = 10.0):
    return runtime.FunctionMetadata("f", (), (), runtime.TreeDef("tuple"),
                                    runtime.TreeDef("tuple"), target, "0", "0", "",
                                    work_estimate=work)


def test_split_and_read_names():
    assert rt_targets.split_targets(" cpu, aarch64:cortex-a53 ,vulkan") == [
        "cpu", "aarch64:cortex-a53", "vulkan"]
    assert rt_targets.gpu_driver("cuda:sm_90") == "cuda"
    assert rt_targets.gpu_driver("aarch64:cortex-a53") is None
    assert rt_targets.family_of("bogus") is None


@pytest.mark.parametrize("host,target,expected", [
    ("x86_64", "cpu", "local-sync"),
    ("x86_64", "cpu,vulkan", "local-sync"),  # the host CPU unless told otherwise
    ("x86_64", "vulkan,cpu", "local-sync"),
    ("x86_64", "aarch64,vulkan", "vulkan"),  # no code for this CPU: the GPU
    ("aarch64", "aarch64,vulkan", "local-sync"),
    ("aarch64", "android-arm64", "local-sync"),
    ("x86_64", "aarch64,cuda:sm_90,vulkan", "cuda"),  # the first GPU target
    ("x86_64", "riscv64", "local-sync"),  # nothing runs: load explains
])
def test_default_device(monkeypatch, host, target, expected):
    monkeypatch.setattr(rt_targets, "host_arch", lambda: host)
    assert runtime.default_device_uri([_meta(target)]) == expected
    big = "local-task" if expected == "local-sync" else expected
    assert runtime.default_device_uri([_meta(target, work=1e9)]) == big


def test_device_targets(monkeypatch):
    monkeypatch.setattr(rt_targets, "host_arch", lambda: "aarch64")
    assert rt_targets.device_targets("local-task") == ["cpu", "aarch64", "android-arm64"]
    assert rt_targets.device_runs("local-sync", "android-arm64")
    assert not rt_targets.device_runs("local-sync", "vulkan")
    assert (rt_targets.device_runs("vulkan", "vulkan")
            and rt_targets.device_runs("cuda://0", "cuda:sm_90"))
    assert rt_targets.device_targets("vulkan") == ["vulkan"]
    monkeypatch.setattr(rt_targets, "cuda_compute_capabilities", lambda: ((9, 0),))
    assert rt_targets.device_targets("cuda") == ["cuda:sm_90"]
