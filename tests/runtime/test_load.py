"""load(), devices and Module: sources, bad artifacts, device choice, function lookup."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from aotc.runtime import (
    ArtifactNotFoundError,
    DeviceError,
    FunctionNotFoundError,
    LoadError,
)

from aotc import runtime

X = np.arange(4, dtype=np.float32)


@pytest.mark.parametrize("kind", ["str", "pathlib", "bytes", "bytearray", "memoryview"])
def test_load_sources(kind, main_path, main_vmfb):
    source = {
        "str": main_path,
        "pathlib": pathlib.Path(main_path),
        "bytes": main_vmfb,
        "bytearray": bytearray(main_vmfb),
        "memoryview": memoryview(main_vmfb),
    }[kind]
    module = runtime.load(source, device="local-sync")
    np.testing.assert_array_equal(np.asarray(module.add(X, X)), 2 * X)


def test_missing_file(tmp_path):
    path = tmp_path / "nope.vmfb"
    with pytest.raises(ArtifactNotFoundError) as info:
        runtime.load(path)
    assert isinstance(info.value, FileNotFoundError)
    assert str(path) in str(info.value)
    assert info.value.filename == str(path)


def test_directory(tmp_path):
    with pytest.raises(LoadError, match="got a directory"):
        runtime.load(tmp_path)


def test_load_rejects_other_types():
    with pytest.raises(TypeError, match="expected a path .* or bytes, got int"):
        runtime.load(42)


@pytest.mark.parametrize("content", [b"", b"garbage" * 20, bytes(range(256)) * 4])
def test_corrupt_file(tmp_path, content):
    path = tmp_path / "bad.vmfb"
    path.write_bytes(content)
    with pytest.raises(LoadError) as info:
        runtime.load(path)
    message = str(info.value)
    # The container is checked before IREE reads it (runtime/integrity.py).
    assert message.startswith(f"{path}: the .vmfb is damaged: expected a .vmfb archive")
    assert message.endswith("Export it again (aotc.export or aotc compile) or copy it again "
                            "from its source")


@pytest.mark.parametrize("fraction", [0.05, 0.3, 0.6, 0.9])
def test_truncated_file(tmp_path, main_vmfb, fraction):
    path = tmp_path / "cut.vmfb"
    path.write_bytes(main_vmfb[: int(len(main_vmfb) * fraction)])
    with pytest.raises(LoadError, match="the .vmfb is damaged: expected"):
        runtime.load(path)


def test_corrupt_bytes_name_the_source():
    with pytest.raises(LoadError, match=r"^<300 bytes>: the .vmfb is damaged"):
        runtime.load(b"\x01" * 300)


def test_other_target(aarch64_vmfb):
    with pytest.raises(LoadError) as info:
        runtime.load(aarch64_vmfb, device="local-sync")
    message = str(info.value)
    assert "compiled for target aarch64:generic" in message
    assert "'local-sync'" in message
    assert "INCOMPATIBLE" in message  # IREE's diagnostic is kept


def test_default_device_follows_work(main_vmfb, heavy_vmfb):
    small = runtime.FunctionMetadata(
        "f", (), (), runtime.TreeDef("tuple"), runtime.TreeDef("tuple"), "cpu", "0", "0", "",
        work_estimate=10.0)
    large = runtime.FunctionMetadata(
        "g", (), (), runtime.TreeDef("tuple"), runtime.TreeDef("tuple"), "cpu", "0", "0", "",
        work_estimate=runtime.LOCAL_SYNC_MAX_WORK)
    assert runtime.default_device_uri([small]) == "local-sync"
    assert runtime.default_device_uri([small, large]) == "local-task"
    assert runtime.default_device_uri([small, None]) == "local-task"  # unknown work
    # As much work in many small steps (a loop of small dispatches): local-sync.
    from dataclasses import replace

    steps = replace(large, op_estimate=4 * runtime.LOCAL_SYNC_MAX_WORK
                    / runtime.LOCAL_SYNC_MAX_WORK_PER_OP)
    assert runtime.default_device_uri([small, steps]) == "local-sync"
    assert runtime.default_device_uri([replace(large, op_estimate=1.0)]) == "local-task"
    # Matmul flops weigh less (CONTRACTION_WORK_WEIGHT): as much work done by matmuls
    # stays on local-sync, twenty times as much does not.
    matmuls = replace(large, contraction_estimate=large.work_estimate)
    assert runtime.default_device_uri([matmuls]) == "local-sync"
    assert runtime.default_device_uri([replace(matmuls, work_estimate=20 * large.work_estimate,
                                               contraction_estimate=20 * large.work_estimate)
                                       ]) == "local-task"
    # Matrix-vector flops count half (MATVEC_WORK_WEIGHT): one unit per multiply-add.
    matvec = replace(large, matvec_estimate=large.work_estimate)
    assert runtime.default_device_uri([matvec]) == "local-sync"
    assert runtime.default_device_uri([replace(matvec, work_estimate=2 * large.work_estimate,
                                               matvec_estimate=2 * large.work_estimate)
                                       ]) == "local-task"
    # main_vmfb has a function without metadata: local-task.
    assert runtime.load(main_vmfb).device.uri == "local-task"
    assert runtime.load(heavy_vmfb).device.uri == "local-task"


def test_default_device_small_artifact():
    from runtime_artifacts import compile_mlir, meta, unary

    m = meta("neg", [("x", [4], "float32")], [("out0", [4], "float32")], work=8.0)
    src = "#m1 = affine_map<(d0) -> (d0)>\n" + unary(
        "neg", "tensor<4xf32>", "f32", "%r = arith.negf %v : f32", m)
    module = runtime.load(compile_mlir(src))
    assert module.device.uri == "local-sync"
    np.testing.assert_array_equal(np.asarray(module.neg(X)), -X)


def test_unsupported_dtype_in_metadata():
    from runtime_artifacts import compile_mlir, meta, unary

    m = meta("neg", [("x", [4], "bfloat16")], [("out0", [4], "float32")])
    src = "#m1 = affine_map<(d0) -> (d0)>\n" + unary(
        "neg", "tensor<4xf32>", "f32", "%r = arith.negf %v : f32", m)
    with pytest.raises(LoadError, match=r"function neg: expected aotc metadata, got an "
                       r"unreadable record \(args\[0\]\.dtype: expected one of bool, .*, "
                       r"got 'bfloat16'"):
        runtime.load(compile_mlir(src), device="local-sync")


def test_gpu_target_picks_its_driver():
    cuda = runtime.FunctionMetadata(
        "f", (), (), runtime.TreeDef("tuple"), runtime.TreeDef("tuple"), "cuda:sm_80", "0", "0",
        "")
    assert runtime.default_device_uri([cuda]) == "cuda"


def test_devices_are_cached():
    a = runtime.get_device("local-sync")
    assert runtime.get_device("local-sync") is a
    assert runtime.get_device(a) is a
    assert repr(a) == "Device('local-sync')"
    assert runtime.get_device("local-task") is not a


def test_unknown_device():
    with pytest.raises(DeviceError) as info:
        runtime.get_device("tpu")
    assert "local-sync" in str(info.value) and "'tpu'" in str(info.value)


def test_unavailable_driver():
    try:
        runtime.get_device("cuda")
    except DeviceError as e:
        assert "get_device('cuda'): the driver is known but no device could be created" in str(e)
        assert "libcuda" in str(e)  # IREE's reason is kept
    else:
        pytest.skip("this machine has a CUDA device")


def test_device_argument_types(main_vmfb):
    device = runtime.get_device("local-sync")
    assert runtime.load(main_vmfb, device=device).device is device
    with pytest.raises(TypeError, match="expected a device URI string"):
        runtime.load(main_vmfb, device=3)


def test_task_topology_flag_is_set():
    from aotc.runtime import device as device_module

    runtime.get_device("local-task")
    assert device_module._task_flags_set
    assert 1 <= device_module._task_group_count() <= runtime.TASK_WORKER_GROUPS_MAX


def test_functions_and_signatures(modules):
    module = modules["local-sync"]
    functions = module.functions
    assert str(functions["add"]) == "add(x: float32[4], y: float32[4]) -> (out0: float32[4])"
    assert str(functions["addn"]) == (
        "addn(x: float32[n,3], y: float32[n,3]) -> (out0: float32[n,3])")
    assert str(functions["rowsum"]) == "rowsum(x: float32[?,4]) -> (out0: float32[?])"
    assert isinstance(functions["add"], runtime.FunctionMetadata)
    assert str(functions["plain_neg"]).startswith("plain_neg(%input0: tensor<4xf32>)")
    assert "__init" not in functions
    assert "'add': add(x: float32[4], y: float32[4]) -> (out0: float32[4])" in repr(functions)
    assert module.metadata["add"].target == "cpu"
    assert module.metadata["plain_neg"] is None
    assert module.device.uri == "local-sync"
    assert "add" in module and "nope" not in module
    assert set(module) == set(functions) and len(module) == len(functions)
    assert "add" in dir(module)


def test_function_access(modules):
    module = modules["local-sync"]
    assert module.add is module["add"]
    assert module.add.name == "add"
    assert "add(x: float32[4]" in repr(module.add)
    text = repr(module)
    assert text.startswith("<aotc Module <") and text.endswith(" on local-sync>")
    assert "\n" not in text and f": {len(module)} functions (add, " in text
    assert "rowsum(x: float32[?,4]) -> (out0: float32[?])" in repr(module.functions)


def test_unknown_function(modules):
    module = modules["local-sync"]
    with pytest.raises(AttributeError) as info:
        _ = module.predict
    assert isinstance(info.value, FunctionNotFoundError)
    message = str(info.value)
    assert "got 'predict'" in message and "add, addn, axpy" in message
    with pytest.raises(KeyError) as info:
        module["predict"]
    assert str(info.value).startswith("<")  # not quoted the way KeyError quotes
    assert not hasattr(module, "predict")


def test_plain_function(modules, device_uri):
    module = modules[device_uri]
    result = module.plain_neg(X)
    assert isinstance(result, runtime.Array)
    np.testing.assert_array_equal(np.asarray(result), -X)
    np.testing.assert_array_equal(np.asarray(module.plain_neg.call_flat([X])[0]), -X)
    with pytest.raises(runtime.InvocationError) as info:
        module.plain_neg(np.zeros(5, np.float32))
    assert "expected 4 but have 5" in str(info.value)
    assert "no aotc metadata" in str(info.value)
