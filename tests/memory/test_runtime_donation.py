"""What donation means for the arrays a program holds: a donated Array is deleted by the
call (with a reason naming the function and argument), one array cannot be donated twice
in a call, a numpy array is copied and never modified, and a buffer another array (or a
host view) still shares is copied instead of overwritten. Plus the API around it:
donate_argnums/donate_argnames, strict_donation, warnings, export and inspect."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from aotc.runtime import ArgumentError, DeletedArrayError

import aotc
from aotc import runtime
from aotc.errors import AotcError, DonationError, DonationWarning


def step(x):
    return 2 * x + 1


def two_states(a, b):
    return a + 1, b * 2


def test_donated_array_is_deleted_with_a_reason(cpu_uri):
    f = aotc.jit(step, donate_argnums=0)
    x = runtime.device_put(np.arange(8, dtype=np.float32), cpu_uri)
    y = f(x)
    assert x.is_deleted() and not y.is_deleted()
    np.testing.assert_array_equal(np.asarray(y), 2 * np.arange(8) + 1)
    assert "donated to step(), argument 'x'" in repr(x)
    with pytest.raises(DeletedArrayError, match=r"donated to step\(\), argument 'x'"):
        np.asarray(x)
    with pytest.raises(DeletedArrayError, match=r"donated to step\(\), argument 'x'"):
        f(x)
    with pytest.raises(DeletedArrayError):
        x.to_host()
    assert x.shape == (8,) and x.dtype == np.float32  # metadata stays readable


def test_numpy_argument_is_copied_once_and_never_modified(cpu_uri):
    f = aotc.jit(step, donate_argnums=0)
    for size in (8, 64 * 1024):  # a small and a large (zero-copy readable) array
        x = np.arange(size, dtype=np.float32)
        before = x.copy()
        y = f(x)
        np.testing.assert_array_equal(x, before)
        assert x.flags.writeable
        np.testing.assert_array_equal(np.asarray(y), 2 * before + 1)
        y2 = f(x)  # the same numpy array again: still the original values
        np.testing.assert_array_equal(np.asarray(y2), 2 * before + 1)


def test_donating_one_array_twice_in_a_call_is_an_error(cpu_uri):
    f = aotc.jit(two_states, donate_argnums=(0, 1))
    a = runtime.device_put(np.ones(4, np.float32), cpu_uri)
    with pytest.raises(ArgumentError,
                       match=r"same Array is passed as argument 'a' and as argument 'b'"):
        f(a, a)
    assert not a.is_deleted()  # nothing ran
    b = runtime.device_put(np.ones(4, np.float32), cpu_uri)
    f(a, b)
    assert a.is_deleted() and b.is_deleted()


def test_donated_and_plain_use_of_one_array_is_an_error(cpu_uri):
    def f(state, other):
        return state + other

    g = aotc.jit(f, donate_argnums=0)
    a = runtime.device_put(np.ones(4, np.float32), cpu_uri)
    with pytest.raises(ArgumentError, match="one is donated"):
        g(a, a)
    np.testing.assert_array_equal(np.asarray(g(np.ones(4, np.float32), a)), 2.0)


def test_unusable_donation_warns_and_keeps_the_array():
    def f(x):
        return x + 1, x * 2

    g = aotc.jit(f, donate_argnums=0)
    x = runtime.device_put(np.ones(4, np.float32), "local-sync")
    with pytest.warns(DonationWarning) as record:
        g(x)
    message = str(record[0].message)
    assert "donated argument 'x'" in message and "cannot be used" in message
    assert record[0].filename == __file__  # points at the user's code
    assert not x.is_deleted()
    np.testing.assert_array_equal(np.asarray(x), 1.0)


def test_strict_donation_raises():
    def f(x):
        return x.sum()

    with pytest.raises(DonationError, match="donated argument 'x'.*no result has its type"):
        aotc.jit(f, donate_argnums=0, strict_donation=True)(np.ones(4, np.float32))
    with pytest.raises(DonationError):
        aotc.export(f, aotc.ShapeDtypeStruct((4,), "float32"), donate_argnums=0,
                    strict_donation=True)


def test_passthrough_result_shares_no_donated_update(cpu_uri):
    """A function returning its argument gives back the argument's buffer: donating
    either array afterwards must not change the other."""
    def keep(a, b):
        return a, b * 2

    k = aotc.jit(keep)
    f = aotc.jit(step, donate_argnums=0)
    x = runtime.device_put(np.arange(4, dtype=np.float32), cpu_uri)
    same, _ = k(x, np.ones(4, np.float32))
    out = f(same)
    assert same.is_deleted()
    np.testing.assert_array_equal(np.asarray(x), np.arange(4))  # untouched
    np.testing.assert_array_equal(np.asarray(out), 2 * np.arange(4) + 1)


def test_a_host_view_outlives_a_donation(cpu_uri):
    f = aotc.jit(step, donate_argnums=0)
    n = 64 * 1024  # above SMALL_HOST_COPY_BYTES: np.asarray is a zero-copy view
    s = f(np.zeros(n, np.float32))
    view = np.asarray(s)[:4]
    s2 = f(s)
    np.testing.assert_array_equal(view, 1.0)  # the old value, not 3.0
    np.testing.assert_array_equal(np.asarray(s2)[:4], 3.0)
    # Without outside views the buffer is reused in place: no copy is allocated.
    before = runtime.memory_stats(s2.device)
    s3 = f(s2)
    after = runtime.memory_stats(s2.device)
    assert after.bytes_allocated == before.bytes_allocated
    assert after.bytes_donated - before.bytes_donated == n * 4
    np.testing.assert_array_equal(np.asarray(s3)[:4], 7.0)


def test_donate_argnames_and_argnums_follow_jax():
    def f(x, y, *, scale):
        return x * scale + y, y

    by_name = aotc.jit(f, donate_argnames="x")
    assert by_name._binder.donate_argnums == {0}
    by_num = aotc.jit(f, donate_argnums=-2)
    assert by_num._binder.donate_argnames == {"x"}
    x = runtime.device_put(np.ones(4, np.float32), "local-sync")
    out, _ = by_name(x, np.ones(4, np.float32), scale=np.float32(2))
    assert x.is_deleted()
    np.testing.assert_array_equal(np.asarray(out), 3.0)
    # Passed by keyword: still donated.
    x = runtime.device_put(np.ones(4, np.float32), "local-sync")
    by_num(x=x, y=np.ones(4, np.float32), scale=np.float32(2))
    assert x.is_deleted()


def test_donation_argument_errors():
    def f(x, n):
        return x * n

    with pytest.raises(AotcError, match="both static and donated"):
        aotc.jit(f, static_argnums=1, donate_argnums=1)
    with pytest.raises(AotcError, match="both static and donated"):
        aotc.jit(f, static_argnames="n", donate_argnums=(1,))
    with pytest.raises(AotcError, match="refers to position 5"):
        aotc.jit(f, donate_argnums=5)
    with pytest.raises(AotcError, match="'z', which is not a parameter"):
        aotc.jit(f, donate_argnames="z")


def test_pytree_state_donates_every_leaf(cpu_uri):
    def sgd(params, grads):
        return {k: params[k] - 0.1 * grads[k] for k in params}

    f = aotc.jit(sgd, donate_argnums=0)
    params = {k: runtime.device_put(np.ones(3, np.float32), cpu_uri) for k in ("w", "b")}
    grads = {k: np.ones(3, np.float32) for k in ("w", "b")}
    new = f(params, grads)
    assert all(p.is_deleted() for p in params.values())
    assert "donated to sgd(), argument \"params['b']\"" in repr(params["b"])
    np.testing.assert_allclose(np.asarray(new["w"]), 0.9)


def test_export_records_and_runtime_applies_donation(tmp_path):
    spec = aotc.ShapeDtypeStruct((1024,), "float32")
    art = aotc.export(step, spec, donate_argnums=0)
    assert art.functions["step"].donated == {"x": 0}
    path = art.save(tmp_path / "step.vmfb")
    m = runtime.load(path, device="local-sync")
    s = runtime.device_put(np.zeros(1024, np.float32), "local-sync")
    s2 = m.step(s)
    assert s.is_deleted()
    np.testing.assert_array_equal(np.asarray(s2), 1.0)
    text = subprocess.run([sys.executable, "-m", "aotc.cli", "inspect", path],
                          capture_output=True, text=True, check=True).stdout
    assert "donated: x -> result 0" in text
    assert "donation saves 4.0 KiB per call" in text
    data = json.loads(subprocess.run(
        [sys.executable, "-m", "aotc.cli", "inspect", "--json", "--measure", path],
        capture_output=True, text=True, check=True).stdout)
    memory = data["functions"]["step"]["memory"]
    assert memory == {"argument_bytes": 4096, "result_bytes": 4096, "donated_bytes": 4096,
                      "new_result_bytes": 0, "residual_bytes": 0, "transient_bytes": 0}


def test_jit_retrace_keeps_donation():
    f = aotc.jit(step, donate_argnums=0)
    for n in (4, 8):
        x = runtime.device_put(np.ones(n, np.float32), "local-sync")
        f(x)
        assert x.is_deleted()
    assert f.stats["traces"] == 2


def test_inplace_update_allocates_nothing_in_ir():
    """The IR IREE gets: the donated argument carries iree.abi.output, no barrier is
    needed for an elementwise update, and nothing else changes."""
    text = aotc.jit(step, donate_argnums=0).lower(aotc.ShapeDtypeStruct((8,), "float32")).as_text()
    assert "{iree.abi.output = 0 : index}" in text
    assert "aotc.donate" not in text and "optimization_barrier" not in text
    plain = aotc.jit(step).lower(aotc.ShapeDtypeStruct((8,), "float32")).as_text()
    def body(t):
        return t[t.index("{\n", t.index("func.func")):]
    assert body(text) == body(plain)
