"""Donation never changes memory someone else still reads: a DLPack export or a live
host view of a donated Array makes the call work on a copy (the export keeps the old
values), and threads reading an Array while another thread donates it see its old
values entirely or DeletedArrayError, never a mix."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest
from aotc.runtime import DeletedArrayError

import aotc
from aotc import runtime

N = 64 * 1024  # float32 elements: above SMALL_HOST_COPY_BYTES, so host views are zero-copy


def step(x):
    return x + 1


@pytest.fixture(scope="module")
def donating():
    return aotc.jit(step, donate_argnums=0)


def _state(f, value: float, uri: str):
    """A large Array result of ``value`` (results are what a training loop donates)."""
    return f(runtime.device_put(np.full(N, value - 1, np.float32), uri))


def _allocated(array) -> int:
    return runtime.memory_stats(array.device).bytes_allocated


def test_dlpack_view_keeps_its_values(donating, cpu_uri):
    x = _state(donating, 1.0, cpu_uri)
    view = np.from_dlpack(x)  # DLPack 1.0: the read-only host view, visibly held
    assert not view.flags.writeable
    before = _allocated(x)
    y = donating(x)
    assert x.is_deleted()
    np.testing.assert_array_equal(view, 1.0)  # not 2.0: the call updated a copy
    np.testing.assert_array_equal(np.asarray(y), 2.0)
    assert _allocated(y) - before == N * 4  # the copy
    # Once the view is gone, the buffer is donated in place again: nothing allocated.
    del view
    before = _allocated(y)
    z = donating(y)
    assert _allocated(z) == before
    np.testing.assert_array_equal(np.asarray(z), 3.0)


class _LegacyConsumer:
    """A DLPack consumer older than DLPack 1.0 (no max_version): it gets IREE's capsule
    of the device buffer, whose holders no reference count shows."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_legacy_dlpack_export_is_never_donated_in_place(donating, cpu_uri):
    x = _state(donating, 1.0, cpu_uri)
    view = np.from_dlpack(_LegacyConsumer(x))
    y = donating(x)
    np.testing.assert_array_equal(view, 1.0)
    np.testing.assert_array_equal(np.asarray(y), 2.0)
    # An unconsumed capsule holds the buffer too.
    capsule = y.__dlpack__()
    before = _allocated(y)
    z = donating(y)
    assert _allocated(z) - before == N * 4
    del capsule
    np.testing.assert_array_equal(np.asarray(z), 3.0)


def test_dlpack_export_of_other_dtypes(donating, cpu_uri):
    """The DLPack 1.0 route exports the exact dtype (unsigned, bool, float16, complex)."""
    f = aotc.jit(lambda a: a)
    for dtype in (np.uint32, np.uint8, np.bool_, np.float16, np.complex64, np.int64):
        value = (np.arange(N) % 3).astype(dtype)
        out = f(runtime.device_put(value, cpu_uri))
        got = np.from_dlpack(out)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, value)


def test_views_of_the_host_view_are_seen(donating, cpu_uri):
    """A slice of np.asarray(x), or a memoryview of it, holds the host view too."""
    for keep in (lambda h: h[10:20], lambda h: memoryview(h), lambda h: h.reshape(8, -1).T):
        x = _state(donating, 5.0, cpu_uri)
        held = keep(np.asarray(x))
        donating(x)
        np.testing.assert_array_equal(np.asarray(held), 5.0)


def test_a_failed_check_consumes_nothing(donating, cpu_uri):
    """Donated Arrays are taken only once every argument is checked."""
    f = aotc.jit(lambda a, b: (a + 1, b * 2), donate_argnums=(0, 1))
    spec = aotc.ShapeDtypeStruct((N,), np.float32)
    function = f.lower(spec, spec).compile()._function  # the runtime's Function
    a = _state(donating, 1.0, cpu_uri)
    with pytest.raises(runtime.ArgumentError, match="argument 'b'"):
        function(a, np.ones(3, np.float32))
    assert not a.is_deleted()
    np.testing.assert_array_equal(np.asarray(a), 1.0)
    out, _ = function(a, np.ones(N, np.float32))
    assert a.is_deleted()
    np.testing.assert_array_equal(np.asarray(out), 2.0)


def _stress(donating, uri: str, rounds: int, readers: int) -> list[str]:
    """Each round: a fresh Array, reader threads spinning on np.asarray of it while the
    main thread donates it. Returns what went wrong."""
    problems: list[str] = []
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        for r in range(rounds):
            value = float(r % 100 + 1)
            x = _state(donating, value, uri)
            go = threading.Barrier(readers + 1)
            seen: list[np.ndarray] = []

            def read():
                go.wait()
                while True:
                    try:
                        host = np.asarray(x)
                    except DeletedArrayError:
                        return
                    if not (host[0] == value and host[-1] == value and (host == value).all()):
                        problems.append(f"round {r}: read {np.unique(host)} for {value}")
                        return
                    seen.append(host)

            threads = [threading.Thread(target=read) for _ in range(readers)]
            for t in threads:
                t.start()
            go.wait()
            y = donating(x)
            for t in threads:
                t.join()
            if not (np.asarray(y) == value + 1).all():
                problems.append(f"round {r}: result {np.unique(np.asarray(y))}")
            for host in seen:  # every view read before the donation keeps the old values
                if not (host == value).all():
                    problems.append(f"round {r}: a view changed to {np.unique(host)}")
                    break
    finally:
        sys.setswitchinterval(switch)
    return problems


def test_concurrent_reads_of_a_donated_array_are_never_torn(donating, cpu_uri):
    problems = _stress(donating, cpu_uri, rounds=150, readers=2)
    assert not problems, problems[:5]


def test_one_array_donated_by_two_threads_is_consumed_once(donating, cpu_uri):
    """Two threads donating the same Array: one call takes it, the other raises
    DeletedArrayError (or runs first and the other raises): never both."""
    for _ in range(50):
        x = _state(donating, 1.0, cpu_uri)
        outcomes: list = []
        go = threading.Barrier(2)

        def donate():
            go.wait()
            try:
                outcomes.append(np.asarray(donating(x)).copy())
            except DeletedArrayError:
                outcomes.append("deleted")

        threads = [threading.Thread(target=donate) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        results = [o for o in outcomes if not isinstance(o, str)]
        assert len(results) == 1 and len(outcomes) == 2, outcomes
        np.testing.assert_array_equal(results[0], 2.0)
