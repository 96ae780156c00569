"""complex64 on Vulkan (lavapipe) as on the CPU, from one ``cpu,vulkan`` artifact;
complex128 refused for Vulkan before IREE runs (it has no float64), naming the line."""

from __future__ import annotations

import numpy as np
import pytest
from test_target_vulkan import vulkan  # noqa: F401 (a fixture)

import aotc
import aotc.numpy as anp
from aotc import runtime


def signal(z, w, theta):
    rotated = z * anp.exp(1j * theta)
    return {"rotated": rotated, "power": anp.abs(rotated) ** 2, "phase": anp.angle(z),
            "mix": anp.outer(z, anp.conj(w)) @ w, "total": anp.sum(z * w),
            "ratio": z / (w + 2), "sqrt": anp.sqrt(z), "log": anp.log(z + 3)}


def _inputs():
    rng = np.random.default_rng(5)
    z = (rng.standard_normal(16) + 1j * rng.standard_normal(16)).astype(np.complex64)
    w = (rng.standard_normal(16) + 1j * rng.standard_normal(16)).astype(np.complex64)
    return z, w, rng.uniform(-3, 3, 16).astype(np.float32)


def test_complex64_runs_on_vulkan_as_on_the_cpu(vulkan, tmp_path):  # noqa: F811
    z, w, theta = _inputs()
    specs = [aotc.ShapeDtypeStruct(a.shape, a.dtype) for a in (z, w, theta)]
    path = aotc.export(signal, *specs, target="cpu,vulkan").save(tmp_path / "signal.vmfb")
    on_cpu = runtime.load(path, device="local-task").signal(z, w, theta)
    on_gpu = runtime.load(path, device=vulkan).signal(z, w, theta)
    want = {"rotated": z * np.exp(1j * theta), "phase": np.angle(z), "total": np.sum(z * w),
            "mix": np.outer(z, np.conj(w)) @ w, "ratio": z / (w + 2), "sqrt": np.sqrt(z),
            "log": np.log(z + 3)}
    want["power"] = np.abs(want["rotated"]) ** 2
    for name, expected in want.items():
        for where, got in (("cpu", on_cpu), ("vulkan", on_gpu)):
            value = np.asarray(got[name])
            assert value.dtype == expected.dtype, (where, name, value.dtype)
            np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-5,
                                       err_msg=f"{name} on {where}")


def test_complex128_is_refused_for_vulkan():
    spec = aotc.ShapeDtypeStruct((4,), "complex128")
    with pytest.raises(aotc.CompileError, match=r"target 'vulkan' cannot compute") as info:
        aotc.export(lambda z: z * z, spec, target="vulkan")
    assert "argument 0 is complex<f64>" in str(info.value)
    assert "test_target_complex.py" in str(info.value)  # the user's line
