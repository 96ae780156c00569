"""Array: the numpy protocol, host views, conveniences, deletion and lifetimes."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from aotc.runtime import Array, DeletedArrayError
from aotc.runtime.array import SMALL_HOST_COPY_BYTES, _HostView

from aotc import runtime

X = np.arange(4, dtype=np.float32)


@pytest.fixture
def a(mod) -> Array:
    return mod.add(X, X)  # [0, 2, 4, 6]


def test_metadata(a):
    assert a.shape == (4,)
    assert a.dtype == np.float32
    assert a.ndim == 1 and a.size == 4 and a.nbytes == 16
    assert len(a) == 4
    assert a.block_until_ready() is a


def test_array_protocol(a):
    host = np.asarray(a)
    assert type(host) is np.ndarray
    np.testing.assert_array_equal(host, 2 * X)
    assert not host.flags.writeable  # a cached view of an immutable value
    assert np.asarray(a) is host and a.to_host() is host
    copied = np.array(a)
    assert copied.flags.writeable and copied.base is None
    copied[0] = 99
    assert np.asarray(a)[0] == 0
    as_int = np.asarray(a, dtype=np.int64)
    assert as_int.dtype == np.int64 and as_int.tolist() == [0, 2, 4, 6]
    assert a.__array__(copy=True) is not host
    with pytest.raises(ValueError, match="copy=False"):
        a.__array__(np.int64, copy=False)


def test_conveniences(a):
    assert a[1] == 2 and a[1:3].tolist() == [2, 4]
    assert [float(v) for v in a] == [0, 2, 4, 6]
    assert (a + 1).tolist() == [1, 3, 5, 7]
    assert (1 + a).tolist() == [1, 3, 5, 7]
    assert (a * a).tolist() == [0, 4, 16, 36]
    assert (a - X).tolist() == [0, 1, 2, 3]
    assert (X - a).tolist() == [0, -1, -2, -3]
    assert (a / 2).tolist() == [0, 1, 2, 3]
    assert (-a).tolist() == [0, -2, -4, -6]
    assert (a == 2).tolist() == [False, True, False, False]
    assert (a > 2).tolist() == [False, False, True, True]
    assert (a @ X) == 28
    assert np.sum(a) == 12 and np.add(a, 1).tolist() == [1, 3, 5, 7]
    assert a.astype(np.int32).dtype == np.int32 and a.item(3) == 6 and a.tolist() == [0, 2, 4, 6]
    with pytest.raises(TypeError):
        hash(a)


def test_zero_d_and_empty(mod):
    s = mod.rowsum(np.ones((1, 4), np.float32))[0]  # indexing goes through numpy
    assert s == 4
    empty = mod.rowsum(np.zeros((0, 4), np.float32))
    assert empty.shape == (0,) and np.asarray(empty).shape == (0,)
    assert repr(empty) == "Array([], dtype=float32)"
    scalar = runtime.device_put(np.float32(2.5), mod.device)
    assert scalar.shape == () and float(scalar) == 2.5 and bool(scalar)
    with pytest.raises(TypeError, match="0-d"):
        len(scalar)


def test_repr(a, mod):
    assert repr(a) == "Array([0., 2., 4., 6.], dtype=float32)"
    b = mod.inc_bool(np.array([True, False, True, False]))
    assert repr(b) == "Array([False,  True, False,  True], dtype=bool)"


def test_delete(a):
    assert not a.is_deleted()
    a.delete()
    assert a.is_deleted()
    assert a.shape == (4,) and a.dtype == np.float32  # metadata stays readable
    assert "deleted" in repr(a)
    for use in (np.asarray, lambda x: x.to_host(), lambda x: x + 1, lambda x: x[0],
                lambda x: x.block_until_ready(), lambda x: x.__dlpack__()):
        with pytest.raises(DeletedArrayError) as info:
            use(a)
        assert str(info.value).startswith("Array was deleted (delete() was called on it)")


def test_delete_with_reason(mod):
    a = mod.add(X, X)
    a.delete("donated to step(), argument 'state'")
    a.delete("second delete is a no-op")
    with pytest.raises(DeletedArrayError, match=r"^Array was deleted \(donated to step\(\), "
                       r"argument 'state'\)"):
        np.asarray(a)


def test_host_view_survives_delete(mod):
    small = mod.add(X, X)
    small_host = np.asarray(small)
    big = mod.big(np.zeros(8192, np.float32))
    big_host = np.asarray(big)
    small.delete()
    big.delete()
    gc.collect()
    np.testing.assert_array_equal(small_host, 2 * X)
    np.testing.assert_array_equal(big_host, np.ones(8192))


def test_large_results_are_zero_copy(mod):
    big = mod.big(np.arange(8192, dtype=np.float32))
    assert big.nbytes > SMALL_HOST_COPY_BYTES
    view = np.asarray(big)
    # The view's base holds the _HostView, which keeps the device alive as long as the view.
    assert any(isinstance(b, _HostView) for b in view.base)
    assert not view.flags.writeable
    del big
    gc.collect()
    np.testing.assert_array_equal(view, np.arange(8192) + 1)


def test_slot_order_releases_buffers_before_the_device():
    # CPython clears __slots__ alphabetically; buffer holders must go before owners.
    def order(cls):
        return sorted(s for s in cls.__slots__ if not s.startswith("__"))

    slots = order(Array)
    assert slots.index("_bv") < slots.index("_owner")
    assert slots.index("_host") < slots.index("_owner")
    # _HostView: the buffer holder before the owner; "_hold" (ledger bytes) holds no buffer.
    assert order(_HostView) == ["_array", "_hold", "_owner"]
    assert max(_HostView.__slots__) == "_owner"


def test_dlpack_export(mod):
    u8 = mod.inc_uint8(np.array([1, 2, 254, 255], np.uint8))
    assert np.from_dlpack(u8).dtype == np.uint8  # not the signless int8 IREE returns
    assert np.from_dlpack(u8).tolist() == [2, 3, 255, 0]
    assert u8.__dlpack_device__() == (1, 0)


def test_device_put(mod):
    put = runtime.device_put(np.arange(6, dtype=np.int64).reshape(2, 3), mod.device)
    assert put.shape == (2, 3) and put.dtype == np.int64 and put.device is mod.device
    assert np.asarray(put).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert runtime.device_put(put, mod.device) is put
    with pytest.raises(runtime.ArgumentError, match="expected an array of one of the dtypes"):
        runtime.device_put(np.zeros(2, np.longdouble), mod.device)


EXIT_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from aotc import runtime

    m = runtime.load(sys.argv[1], device=sys.argv[2])
    small = m.add(np.ones(4, np.float32), np.ones(4, np.float32))
    small_host = np.asarray(small)
    big_host = np.asarray(m.big(np.zeros(8192, np.float32)))
    kept = m.big(np.zeros(8192, np.float32))
    if sys.argv[3] in ("drop-module", "drop-device-cache"):
        del m
    if sys.argv[3] == "drop-device-cache":
        # As if interpreter shutdown had cleared the device cache first: now only the
        # arrays and host views keep the device alive (a raw view would crash here).
        from aotc.runtime import device
        device._devices.clear()
        import gc
        gc.collect()
    holder = [kept, big_host]
    holder.append(holder)  # a cycle, collected last at exit
    print(small_host.sum(), big_host.sum(), np.asarray(kept).sum())
""")


@pytest.mark.parametrize("mode", ["keep-module", "drop-module", "drop-device-cache"])
def test_process_exit_is_clean(main_path, device_uri, mode, tmp_path):
    script = tmp_path / "exit.py"
    script.write_text(EXIT_SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), main_path, device_uri, mode],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["8.0", "8192.0", "8192.0"]
    assert done.stderr == ""  # no crash, no leak report
