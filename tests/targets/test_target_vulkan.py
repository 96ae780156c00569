"""Vulkan for real: the samples run on a Vulkan device (Mesa's lavapipe in CI) and match
numpy; results are read back from host-visible memory; the device is made without IREE's
caching allocator (with it, every queue allocation on Vulkan fails)."""

from __future__ import annotations

import numpy as np
import pytest
from target_edge import require
from target_programs import MLP_INPUT, OPS_32, check_mlp, check_ops

from aotc import runtime
from aotc.runtime import targets as rt_targets


@pytest.fixture(scope="module")
def vulkan():
    require(rt_targets.available_devices("vulkan"),
            "no Vulkan device: install Mesa's software one (apt-get install mesa-vulkan-drivers "
            "libvulkan1), as .ci/run does")
    return runtime.get_device("vulkan")


def test_mlp_runs_on_vulkan(artifacts, vulkan):
    module = runtime.load(artifacts.path("mlp", "vulkan"))  # device=None: its GPU target
    assert module.device is vulkan
    check_mlp(*module.predict(MLP_INPUT))


def test_results_are_host_mappable(artifacts, vulkan):
    """Compiled with mappable results, IREE's own readback works on lavapipe: it maps
    the result (without the flag it imports host memory for a staging copy, which lavapipe
    refuses unless aligned to 4 KiB)."""
    import iree.runtime as rt

    config = rt.Config(device=vulkan.hal)
    vm_module = rt.VmModule.copy_buffer(config.vm_instance, artifacts.mlp("vulkan").vmfb)
    context = rt.SystemContext(vm_modules=[vm_module], config=config)
    probs, classes = context.modules.module["predict"](MLP_INPUT)
    for result in (probs, classes):
        buffer = result._buffer_view.get_buffer()
        assert int(buffer.memory_type()) & int(rt.MemoryType.HOST_VISIBLE)
        assert int(buffer.allowed_usage()) & int(rt.BufferUsage.MAPPING_SCOPED)
    check_mlp(probs.to_host(), classes.to_host())
    del probs, classes, context


def test_ops_run_on_vulkan(artifacts, vulkan):
    module = runtime.load(artifacts.ops("vulkan").vmfb, device="vulkan")
    check_ops(module, OPS_32)


def test_results_feed_the_next_call_on_the_device(artifacts, vulkan):
    module = runtime.load(artifacts.ops("vulkan").vmfb, device=vulkan)
    x, n = OPS_32["scale_shift"][1:]
    y, _, m, _ = module.scale_shift(x, n)
    y2, _, m2, _ = module.scale_shift(y, m)  # device arrays in, no host round trip
    ref = module.scale_shift(np.asarray(y), np.asarray(m))
    np.testing.assert_allclose(np.asarray(y2), np.asarray(ref[0]), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(m2), np.asarray(ref[2]))


def test_vulkan_devices_never_use_the_caching_allocator():
    specs = runtime.allocator_specs("vulkan") or []
    assert not any(s.split(":")[0] in ("caching", "debug") for s in specs), specs


def test_many_calls_do_not_grow_memory(artifacts, vulkan):
    """Results are freed when dropped: a loop of calls keeps working (no leak that would
    exhaust lavapipe's heap) and gives the same answer every time."""
    module = runtime.load(artifacts.ops("vulkan").vmfb, device=vulkan)
    x = OPS_32["clip_argmax"][1]
    first = np.asarray(module.clip_argmax(x)[0]).copy()
    for _ in range(200):
        out = module.clip_argmax(x)
    np.testing.assert_array_equal(np.asarray(out[0]), first)


def test_a_result_returned_and_reduced_compiles_with_less_fusion(vulkan):
    """``y`` returned and also summed: at IREE's default fusion the Vulkan code recomputes
    ``y`` per reduced element (minutes on lavapipe); the vulkan target fuses less. The
    check is on the flags the artifact was built with (speed belongs in benchmarks/), and
    the results must still match."""
    import aotc
    import aotc.numpy as anp
    from aotc.targets import VULKAN_FUSION

    def f(x):
        y = anp.tanh(x) * 2.0 + anp.exp(-anp.abs(x))
        return y, anp.sum(y, axis=1)

    x = np.random.default_rng(0).standard_normal((256, 1024), dtype=np.float32)
    art = aotc.export(f, x, target="vulkan")
    assert set(VULKAN_FUSION) <= set(art.flags)
    y, s = runtime.load(art.vmfb, device=vulkan).f(x)
    np.testing.assert_allclose(np.asarray(s), np.asarray(y).sum(axis=1), rtol=1e-4)


def test_an_array_written_into_is_updated_on_the_gpu(vulkan):
    """numpy's in-place update of an argument, exported for Vulkan: the device Array the
    caller holds has numpy's values after each call (written into its own buffer)."""
    import aotc

    def relax(u, f):
        u[1:-1] = 0.5 * (u[:-2] + u[2:]) - f[1:-1]

    n = 4096
    art = aotc.export(relax, aotc.ShapeDtypeStruct((n,), "float32"),
                      aotc.ShapeDtypeStruct((n,), "float32"), target="vulkan")
    assert art.functions["relax"].donated == {"u": 0}
    fn = runtime.load(art.vmfb, device=vulkan)["relax"]
    rng = np.random.default_rng(0)
    u0, f = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    u = runtime.device_put(u0.copy(), vulkan)
    want = u0.copy()
    for _ in range(3):
        assert fn(u, f) is None
        relax(want, f)
    np.testing.assert_allclose(np.asarray(u), want, rtol=1e-5, atol=1e-5)
    assert u.device is vulkan
