"""Reuse and visibility of device memory: a donated update loop allocates nothing per
step, an undonated one allocates the state each step (served from reuse), repeated calls
stop taking memory from the system on every driver, the peak and the budget are
reported, and cached memory can be returned."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from aotc.runtime import allocator

import aotc
from aotc import runtime

STATE = 1 << 20  # float32 elements: a 4 MiB state
NBYTES = STATE * 4


def step(x):
    return 2 * x + 1


def run_python(code: str, **env) -> str:
    """Runs ``code`` in a fresh interpreter (devices keep their allocator for life, so a
    different configuration needs a new process); returns its stdout."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
        env={**os.environ, **env}, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def _loop(fn, state, steps, uri):
    """Per-step deltas of (bytes asked for, new bytes from the system, bytes donated)."""
    deltas = []
    for _ in range(steps):
        before = runtime.memory_stats(uri)
        state = fn(state)
        after = runtime.memory_stats(uri)
        deltas.append((after.bytes_allocated - before.bytes_allocated,
                       after.bytes_from_system - before.bytes_from_system,
                       after.bytes_donated - before.bytes_donated))
    return state, deltas


def test_donated_loop_allocates_nothing_per_step():
    uri = "local-sync"  # the driver whose allocator statistics see every allocation
    m = aotc.export(step, aotc.ShapeDtypeStruct((STATE,), "float32"), donate_argnums=0).load(uri)
    state = runtime.device_put(np.zeros(STATE, np.float32), uri)
    state = m.step(state)  # the first step
    state, deltas = _loop(m.step, state, 5, uri)
    assert deltas == [(0, 0, NBYTES)] * 5
    np.testing.assert_array_equal(np.asarray(state)[:2], 63.0)


def test_a_donated_numpy_argument_is_copied_once_and_updated_there():
    """A donating function called with a numpy array, as numpy code is called: the copy
    made for the call becomes the result (one buffer asked for, the state's bytes
    donated, as with an Array) and the caller's array is untouched. An Array in the same
    place is still consumed."""
    uri = "local-sync"
    m = aotc.export(step, aotc.ShapeDtypeStruct((STATE,), "float32"), donate_argnums=0).load(uri)
    x = np.zeros(STATE, np.float32)
    m.step(x)  # the first call
    before = runtime.memory_stats(uri).num_allocs
    result, deltas = _loop(lambda _: m.step(x), None, 3, uri)
    assert runtime.memory_stats(uri).num_allocs - before == 3
    assert [(asked, donated) for asked, _, donated in deltas] == [(NBYTES, NBYTES)] * 3
    assert not x.any()
    np.testing.assert_array_equal(np.asarray(result)[:2], 1.0)
    state = runtime.device_put(x, uri)
    np.testing.assert_array_equal(np.asarray(m.step(state))[:2], 1.0)
    assert state.is_deleted()


def test_undonated_loop_allocates_the_state_every_step_from_reuse():
    # In a fresh interpreter: the reuse cache is process-wide, and buffers other tests
    # left in its free slots would change what it serves.
    out = run_python(f"""
        import numpy as np, aotc
        from aotc import runtime
        def step(x):
            return 2 * x + 1
        uri = "local-sync"
        m = aotc.export(step, aotc.ShapeDtypeStruct(({STATE},), "float32")).load(uri)
        state = runtime.device_put(np.zeros({STATE}, np.float32), uri)
        state = m.step(m.step(state))  # warm the reuse cache
        reused = runtime.memory_stats(uri).bytes_reused
        deltas = []
        for _ in range(5):
            before = runtime.memory_stats(uri)
            state = m.step(state)
            after = runtime.memory_stats(uri)
            deltas.append((after.bytes_allocated - before.bytes_allocated,
                           after.bytes_from_system - before.bytes_from_system,
                           after.bytes_donated - before.bytes_donated))
        print(deltas == [({NBYTES}, 0, 0)] * 5,
              runtime.memory_stats(uri).bytes_reused - reused, deltas)
    """)
    ok, reused, *_ = out.split(" ", 2)
    # A new result buffer is asked for every step; the freed previous state serves it.
    assert ok == "True", out
    assert int(reused) == 5 * NBYTES, out


def test_allocator_statistics_without_reuse_show_the_difference():
    """With reuse off, IREE's allocator statistics on local-sync count every new buffer:
    the undonated loop takes the state's size from the system each step, the donated
    loop nothing."""
    out = run_python(f"""
        import numpy as np, aotc
        from aotc import runtime
        n = {STATE}
        def step(x):
            return 2 * x + 1
        spec = aotc.ShapeDtypeStruct((n,), "float32")
        for donate in ((), (0,)):
            m = aotc.export(step, spec, donate_argnums=donate).load("local-sync")
            s = m.step(runtime.device_put(np.zeros(n, np.float32), "local-sync"))
            steps = []
            for _ in range(4):
                before = runtime.memory_stats("local-sync").bytes_from_system
                s = m.step(s)
                steps.append(runtime.memory_stats("local-sync").bytes_from_system - before)
            print(bool(donate), steps)
        print(runtime.memory_stats("local-sync").reuse)
    """, AOTC_REUSE="0")
    lines = out.split("\n")
    assert lines[0] == f"False {[NBYTES] * 4}"
    assert lines[1] == f"True {[0] * 4}"
    assert lines[2] == "none"


@pytest.mark.parametrize("uri", ["local-sync", "local-task"])
def test_repeated_calls_reuse_buffers_on_cpu_drivers(uri):
    def f(x, y):
        return x * y + 1

    spec = aotc.ShapeDtypeStruct((STATE // 4,), "float32")
    m = aotc.export(f, spec, spec).load(uri)
    x = np.ones(STATE // 4, np.float32)
    seen = []
    for _ in range(6):
        out = m.f(x, x)
        del out
        seen.append(runtime.memory_stats(uri).bytes_from_system)
    # From the second call on nothing new comes from the system. (local-task serves
    # results from its executor's own pool, invisible to these statistics: there they
    # count the argument copies.)
    assert seen[1:] == [seen[1]] * 5
    reused = runtime.memory_stats(uri).bytes_reused
    assert reused is None or reused > 0


def _vulkan():
    try:
        return runtime.get_device("vulkan")
    except runtime.DeviceError as e:
        pytest.skip(f"no Vulkan device here ({e}); CI installs Mesa's lavapipe")


def test_repeated_calls_reuse_buffers_on_vulkan():
    device = _vulkan()

    def f(x, y):
        return x * y + 1

    n = 1 << 16
    g = aotc.jit(f, target="vulkan")
    x = np.arange(n, dtype=np.float32)
    pool = device.pool
    assert device.reuse == "pool" and pool is not None
    counts, driver = [], []
    for _ in range(5):
        out = g(x, x)
        counts.append(pool.allocations)
        driver.append(runtime.memory_stats(device).bytes_from_system)
    np.testing.assert_array_equal(np.asarray(out)[:3], x[:3] * x[:3] + 1)
    assert counts[1:] == [counts[0]] * 4  # the argument buffers come back every call
    assert driver[1:] == [driver[0]] * 4
    assert pool.hits >= 8


def test_donation_on_vulkan():
    _vulkan()
    g = aotc.jit(step, target="vulkan", donate_argnums=0)
    s = runtime.device_put(np.zeros(1024, np.float32), "vulkan")
    for _ in range(3):
        old, s = s, g(s)
        assert old.is_deleted()
    np.testing.assert_array_equal(np.asarray(s)[:2], 7.0)


def test_peak_of_a_block_donated_vs_undonated():
    uri = "local-sync"
    spec = aotc.ShapeDtypeStruct((STATE,), "float32")
    donated = aotc.export(step, spec, donate_argnums=0).load(uri)
    plain = aotc.export(step, spec).load(uri)
    peaks = {}
    for name, m in (("donated", donated), ("plain", plain)):
        s = runtime.device_put(np.zeros(STATE, np.float32), uri)
        with runtime.track_memory(uri) as block:
            for _ in range(5):
                s = m.step(s)
        peaks[name] = block.peak_bytes_in_use
        assert block.bytes_in_use_after == block.bytes_in_use_before == NBYTES
        del s
    assert peaks["donated"] == NBYTES
    assert peaks["plain"] == 2 * NBYTES


def test_live_arrays_and_delete():
    a = runtime.device_put(np.ones(STATE, np.float32), "local-sync")
    b = runtime.device_put(np.ones(3, np.float32), "local-sync")
    live = runtime.live_arrays("local-sync")
    assert any(x is a for x in live) and any(x is b for x in live)
    in_use = runtime.memory_stats("local-sync").bytes_in_use
    a.delete()
    assert not any(x is a for x in runtime.live_arrays())
    assert runtime.memory_stats("local-sync").bytes_in_use == in_use - NBYTES


def test_trim_returns_cached_memory():
    uri = "local-sync"
    m = aotc.export(step, aotc.ShapeDtypeStruct((STATE,), "float32")).load(uri)
    out = m.step(np.zeros(STATE, np.float32))
    del out  # its buffer and the argument's go to the reuse cache
    reserved = runtime.memory_stats(uri).bytes_reserved
    released = runtime.trim(uri)
    after = runtime.memory_stats(uri).bytes_reserved
    assert released >= 2 * NBYTES and after <= reserved - 2 * NBYTES


def test_budget_refuses_and_reports():
    out = run_python("""
        import numpy as np, aotc
        from aotc import runtime
        a = runtime.device_put(np.ones(1 << 18, np.float32), "local-sync")  # 1 MiB
        try:
            runtime.device_put(np.ones(1 << 19, np.float32), "local-sync")  # 2 MiB more
        except runtime.OutOfMemoryError as e:
            print("device_put:", e)
        f = aotc.jit(lambda x: x + 1)
        try:
            f(np.ones(1 << 19, np.float32))
        except MemoryError as e:
            print("call:", e)
        print(runtime.memory_stats("local-sync").bytes_limit)
    """, AOTC_PREALLOCATE="2mib")
    lines = out.strip().split("\n")
    assert ("device_put: device_put: out of memory on local-sync: requested 2.0 MiB "
            "(2097152 bytes) with 1.0 MiB (1048576 bytes) in use by live arrays, "
            "limit 2.0 MiB") in lines[0]
    assert lines[1].startswith("call: _lambda_(): out of memory on local-sync: requested 4.0 MiB")
    assert lines[2] == str(2 << 20)


def test_preallocation_serves_the_first_call():
    out = run_python(f"""
        import numpy as np, aotc
        from aotc import runtime
        def step(x):
            return 2 * x + 1
        art = aotc.export(step, aotc.ShapeDtypeStruct(({STATE},), "float32"))
        m = art.load("local-sync")  # reserves the argument and result buffers
        before = runtime.memory_stats("local-sync").bytes_from_system
        m.step(np.zeros({STATE}, np.float32))
        print(before, runtime.memory_stats("local-sync").bytes_from_system - before)
    """, AOTC_PREALLOCATE="0.5")
    reserved, first_call = map(int, out.split())
    assert reserved >= 2 * NBYTES
    assert first_call == 0


def test_configuration():
    assert allocator.parse_size("512mib") == 512 << 20
    assert allocator.parse_size("*") is None
    with pytest.raises(ValueError, match="expected a size"):
        allocator.parse_size("lots")
    assert allocator.parse_budget("0.25") == allocator.system_memory() // 4
    config = allocator.ReuseConfig.from_env(
        {"AOTC_REUSE_CAPACITY": "1gib", "AOTC_REUSE_MAX_FREE": "8"})
    assert allocator.caching_spec(config) == f"caching:device_local=*;{1 << 30};8"
    assert allocator.ReuseConfig.from_env({"AOTC_REUSE": "0"}).enabled is False
    assert runtime.allocator_specs("vulkan") is None
    assert runtime.allocator_specs("local-task")[0].startswith("caching:device_local=*;")
    previous = runtime.reuse_config()
    try:
        assert runtime.configure_reuse(capacity="64mib").capacity == 64 << 20
    finally:
        runtime.configure_reuse(capacity=previous.capacity)


def test_memory_stats_reads_well():
    stats = runtime.memory_stats()
    assert stats.device == "all"
    text = str(runtime.memory_stats("local-sync"))
    assert text.startswith("memory on local-sync (reuse: caching)")
    assert "peak_bytes_in_use" in text and "bytes_from_system" in text
    assert set(stats.as_dict()) >= {"bytes_in_use", "peak_bytes_in_use", "num_allocs",
                                    "bytes_reused"}
