"""Fixtures: the test artifacts, compiled once per session, and both CPU drivers."""

from __future__ import annotations

import pytest
from runtime_artifacts import AARCH64_FLAGS, compile_mlir, main_mlir, meta, unary


@pytest.fixture(scope="session")
def main_vmfb() -> bytes:
    return compile_mlir(main_mlir())


@pytest.fixture(scope="session")
def main_path(main_vmfb, tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("artifacts") / "main.vmfb"
    path.write_bytes(main_vmfb)
    return str(path)


@pytest.fixture(scope="session")
def aarch64_vmfb() -> bytes:
    m = meta("neg", [("x", [4], "float32")], [("out0", [4], "float32")], target="aarch64:generic")
    src = "#m1 = affine_map<(d0) -> (d0)>\n" + unary(
        "neg", "tensor<4xf32>", "f32", "%r = arith.negf %v : f32", m)
    return compile_mlir(src, AARCH64_FLAGS)


@pytest.fixture(scope="session")
def heavy_vmfb() -> bytes:
    """One function whose metadata claims much work: load picks local-task for it."""
    m = meta("neg", [("x", [4], "float32")], [("out0", [4], "float32")], work=1e9)
    src = "#m1 = affine_map<(d0) -> (d0)>\n" + unary(
        "neg", "tensor<4xf32>", "f32", "%r = arith.negf %v : f32", m)
    return compile_mlir(src)


@pytest.fixture(scope="session", params=["local-sync", "local-task"])
def device_uri(request) -> str:
    return request.param


@pytest.fixture(scope="session")
def modules(main_vmfb) -> dict:
    """The main artifact loaded once per driver."""
    from aotc import runtime

    return {uri: runtime.load(main_vmfb, device=uri) for uri in ("local-sync", "local-task")}


@pytest.fixture
def mod(modules, device_uri):
    return modules[device_uri]
