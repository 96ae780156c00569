"""Multi-target artifacts (one .vmfb, code for several targets) and the error for an
artifact loaded on a device it has no code for."""

from __future__ import annotations

import pytest
from target_edge import require
from target_programs import MLP_INPUT, OPS_ALL, archive, check_mlp, check_ops

from aotc import runtime
from aotc.runtime import LoadError
from aotc.runtime import targets as rt_targets

MULTI = "cpu,aarch64,vulkan"
HOST = rt_targets.host_arch()
HOST_TARGETS = ", ".join(rt_targets.device_targets("local-sync"))


def test_multi_target_artifact_carries_every_target(artifacts):
    art = artifacts.mlp(MULTI)
    files = archive(art.vmfb)
    host_format = {"x86_64": "x86_64", "aarch64": "arm_64"}.get(HOST, HOST)
    # every dispatch of the MLP for Vulkan; the CPU code linked, one ELF per CPU target
    # (compiler._compile_in_stages)
    assert sum("vulkan_spirv_fb" in name for name in files) == 5, sorted(files)
    for fmt in (f"embedded_elf_{host_format}", "embedded_elf_arm_64"):
        assert sum(fmt in name for name in files) == 1, (fmt, sorted(files))
    assert art.target == MULTI and art.functions["predict"].target == MULTI
    assert 'hal.device.select' in art.mlir


def test_multi_target_runs_on_the_host_cpu_by_default(artifacts):
    module = runtime.load(artifacts.path("mlp", MULTI))
    assert module.device.uri == "local-task"  # the host CPU; the MLP is large work
    check_mlp(*module.predict(MLP_INPUT))
    check_mlp(*runtime.load(artifacts.mlp(MULTI).vmfb, device="local-sync").predict(MLP_INPUT))


def test_multi_target_runs_on_vulkan_when_asked(artifacts):
    require(rt_targets.available_devices("vulkan"), "no Vulkan device (mesa-vulkan-drivers)")
    module = runtime.load(artifacts.path("mlp", MULTI), device="vulkan")
    assert module.device.uri == "vulkan"
    check_mlp(*module.predict(MLP_INPUT))


def test_list_of_targets_with_other_dtypes(artifacts):
    """CPU-only multi-target (one device, several CPU code formats) with int and float64."""
    art = artifacts.ops("cpu,aarch64,riscv64")
    assert art.target == "cpu,aarch64,riscv64"
    check_ops(runtime.load(art.vmfb), OPS_ALL)


def test_cpu_and_gpu_without_a_gpu_runs_on_the_cpu(artifacts):
    art = artifacts.ops("cpu,cuda:sm_90")
    module = runtime.load(art.vmfb)  # the host CPU: no CUDA needed
    assert module.device.is_host
    check_ops(module, OPS_ALL)


# ---- the wrong device -------------------------------------------------------------------

def _load_error(source, device) -> str:
    with pytest.raises(LoadError) as info:
        runtime.load(source, device=device)
    return str(info.value)


def test_cpu_code_of_another_machine():
    foreign = "riscv64" if HOST != "riscv64" else "aarch64"
    from target_programs import X, clip_argmax

    import aotc

    art = aotc.export(clip_argmax, X, target=foreign)
    message = _load_error(art.vmfb, "local-sync")
    assert message.startswith(f"<{len(art.vmfb)} bytes>: compiled for target {foreign}, which "
                              f"device 'local-sync' cannot run: it runs {HOST} CPU code "
                              f"(targets {HOST_TARGETS}). Re-export it for target 'cpu' "
                              f"(or add it: target='{foreign},cpu'), or load it where its "
                              f"code runs: {foreign} hardware.")
    assert "INCOMPATIBLE" in message  # IREE's own diagnostic, shortened
    assert len(message) < 900


def test_gpu_code_on_the_cpu(artifacts):
    path = artifacts.path("mlp", "vulkan")
    message = _load_error(path, "local-task")
    assert message.startswith(f"{path}: compiled for target vulkan, which device 'local-task' "
                              f"cannot run")
    assert "Re-export it for target 'cpu' (or add it: target='vulkan,cpu')" in message
    assert "load it where its code runs: device='vulkan'" in message


def test_cpu_code_on_vulkan(artifacts):
    require(rt_targets.available_devices("vulkan"), "no Vulkan device (mesa-vulkan-drivers)")
    message = _load_error(artifacts.mlp("cpu").vmfb, "vulkan")
    assert "compiled for target cpu, which device 'vulkan' cannot run: it runs vulkan code " \
           "(targets vulkan). Re-export it for target 'vulkan' (or add it: " \
           "target='cpu,vulkan'), or load it where its code runs: device='local-task'" in message


def test_several_targets_none_of_which_fit(artifacts):
    art = artifacts.ops("aarch64,riscv64" if HOST == "x86_64" else "x86_64,riscv64")
    message = _load_error(art.vmfb, "local-task")
    names = art.target.split(",")
    assert f"compiled for targets {', '.join(names)}, which device 'local-task'" in message
    assert f"target='{art.target},cpu'" in message


def test_cpu_and_gpu_targets_none_of_which_fit(artifacts):
    """A CPU+GPU artifact whose CPU code is for another machine: IREE's device selection
    refuses the host CPU (its executables, linked per device, are each for one device:
    passes/device_executables.py), and the error gives the same advice."""
    foreign = "aarch64" if HOST == "x86_64" else "x86_64"
    art = artifacts.ops(f"{foreign},vulkan")
    message = _load_error(art.vmfb, "local-task")
    assert (f"compiled for targets {foreign}, vulkan, which device 'local-task' cannot run"
            in message)
    assert "not found or unavailable" in message and f"target='{art.target},cpu'" in message


def test_cuda_artifact_without_cuda():
    if rt_targets.available_devices("cuda"):
        pytest.skip("this machine has a CUDA device")
    from target_programs import X, clip_argmax

    import aotc

    art = aotc.export(clip_argmax, X, target="cuda:sm_90")
    with pytest.raises(runtime.DeviceError, match=r"get_device\('cuda'\)"):
        runtime.load(art.vmfb)  # device=None: its GPU driver, which is missing here
    message = _load_error(art.vmfb, "local-sync")
    assert "compiled for target cuda:sm_90" in message and "device='cuda'" in message


def test_cuda_code_for_a_newer_gpu_says_which_sm_to_use(monkeypatch):
    """No GPU here: the message for CUDA code the GPU's generation cannot load, composed
    from what the driver would report (this machine's GPU: sm_90)."""
    from types import SimpleNamespace

    from aotc.runtime import module as rt_module

    monkeypatch.setattr(rt_targets, "cuda_compute_capabilities", lambda: ((9, 0),))
    device = SimpleNamespace(uri="cuda", driver="cuda")
    meta = {"f": runtime.FunctionMetadata("f", (), (), runtime.TreeDef("tuple"),
                                          runtime.TreeDef("tuple"), "cuda:sm_120", "0", "0", "")}
    error = RuntimeError("CUDA_ERROR_NO_BINARY_FOR_GPU; while loading executable")
    message = rt_module._link_error("m.vmfb", meta, device, error)
    assert message.startswith("m.vmfb: compiled for target cuda:sm_120, which device 'cuda' "
                              "cannot run: it runs cuda code (targets cuda:sm_90). Re-export "
                              "it for target 'cuda:sm_90'. (IREE: CUDA_ERROR_NO_BINARY_FOR_GPU")
