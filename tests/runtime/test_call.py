"""Calling functions: argument kinds, pytrees, dynamic dims and every argument error."""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest
from aotc.runtime import (
    ArgumentError,
    ArgumentOverflowError,
    DeletedArrayError,
    DeviceMismatchError,
    ShapeError,
)

from aotc import runtime

X = np.arange(4, dtype=np.float32)
Y = np.full(4, 10, dtype=np.float32)


def host(a):
    return np.asarray(a)


def test_add(mod):
    out = mod.add(X, Y)
    assert isinstance(out, runtime.Array)
    assert out.shape == (4,) and out.dtype == np.float32
    np.testing.assert_array_equal(host(out), X + Y)
    assert out.device is mod.device


def test_call_flat(mod):
    outs = mod.add.call_flat([X, Y])
    assert isinstance(outs, list) and len(outs) == 1
    np.testing.assert_array_equal(host(outs[0]), X + Y)
    np.testing.assert_array_equal(host(mod.axpy.call_flat((2.0, X))[0]), 2 * X)


def test_many_calls_give_independent_results(mod):
    results = [mod.add(X, np.full(4, i, np.float32)) for i in range(50)]
    for i, r in enumerate(results):
        np.testing.assert_array_equal(host(r), X + i)


def test_arrays_as_arguments(mod):
    a = mod.add(X, Y)
    b = mod.add(a, a)  # device buffers go back in without a host round trip
    np.testing.assert_array_equal(host(b), 2 * (X + Y))
    np.testing.assert_array_equal(host(mod.add(a, X)), 2 * X + Y)
    put = runtime.device_put(X, mod.device)
    np.testing.assert_array_equal(host(mod.add(put, put)), 2 * X)


def test_arrays_move_between_cpu_drivers(modules):
    # load() picks local-sync or local-task per artifact: their results must mix.
    from_task = modules["local-task"].add(X, X)
    from_sync = modules["local-sync"].add(X, X)
    np.testing.assert_array_equal(host(modules["local-sync"].add(from_task, X)), 3 * X)
    np.testing.assert_array_equal(host(modules["local-task"].add(from_sync, from_task)), 4 * X)


def test_array_from_another_device(modules):
    # A stand-in for a GPU device (none here): same buffers, but not host memory.
    sync = runtime.get_device("local-sync")
    gpu = runtime.Device("cuda://fake", "cuda", sync.hal)
    assert not gpu.is_host
    on_gpu = runtime.Array(modules["local-sync"].add(X, X)._bv, np.dtype(np.float32), gpu)
    with pytest.raises(DeviceMismatchError) as info:
        modules["local-sync"].add(on_gpu, X)
    message = str(info.value)
    assert "argument 'x': expected an array on local-sync, got one on cuda://fake" in message
    assert "np.asarray" in message


def test_python_scalars(mod):
    np.testing.assert_array_equal(host(mod.axpy(2.5, X)), 2.5 * X)
    np.testing.assert_array_equal(host(mod.axpy(3, X)), 3 * X)  # int -> float32
    np.testing.assert_array_equal(host(mod.axpy(True, X)), X)
    np.testing.assert_array_equal(host(mod.axpy(np.float32(2), X)), 2 * X)
    np.testing.assert_array_equal(host(mod.axpy(np.array(2, np.float32), X)), 2 * X)
    np.testing.assert_array_equal(host(mod.shift(3, np.arange(3, dtype=np.int32))), [3, 4, 5])


def test_float_scalar_for_int_argument(mod):
    with pytest.raises(ArgumentError) as info:
        mod.shift(1.5, np.arange(3, dtype=np.int32))
    message = str(info.value)
    assert "shift(): argument 'k': expected int32[], got a Python float (1.5)" in message
    assert "np.int32(1.5)" in message


def test_scalar_out_of_range(mod):
    with pytest.raises(ArgumentOverflowError,
                       match="argument 'k': expected a value that fits int32, got 8589934592"):
        mod.shift(2**33, np.arange(3, dtype=np.int32))
    with pytest.raises(OverflowError, match="out of bounds for int32"):  # numpy's error
        mod.shift(-2**31 - 1, np.arange(3, dtype=np.int32))
    np.testing.assert_array_equal(  # the extremes fit
        np.asarray(mod.shift(-2**31, np.zeros(3, np.int32))), np.full(3, -2**31, np.int32))


def test_strongly_typed_numpy_scalar(mod):
    with pytest.raises(ArgumentError, match="expected dtype float32"):
        mod.axpy(np.float64(2.0), X)


def test_scalar_for_array_argument(mod):
    with pytest.raises(ShapeError, match=r"argument 'x': expected shape \(4,\) .*got \(\)"):
        mod.add(1.0, 2.0)


def test_non_array_argument(mod):
    with pytest.raises(ArgumentError) as info:
        mod.add("abc", X)
    assert "argument 'x': expected an array (float32[4]), got str" in str(info.value)


def test_non_contiguous_and_other_array_likes(mod):
    strided = np.arange(8, dtype=np.float32)[::2]
    assert not strided.flags.c_contiguous
    np.testing.assert_array_equal(host(mod.add(strided, X)), strided + X)
    fortran = np.asfortranarray(np.ones((5, 4), np.float32))
    np.testing.assert_array_equal(host(mod.rowsum(fortran[:, :])), np.full(5, 4.0))
    readonly = X.copy()
    readonly.flags.writeable = False
    np.testing.assert_array_equal(host(mod.add(readonly, readonly)), 2 * X)
    np.testing.assert_array_equal(host(mod.add(memoryview(X), X)), 2 * X)


def test_count_error(mod):
    with pytest.raises(ArgumentError) as info:
        mod.add(X)
    assert str(info.value).startswith(
        "add() takes 2 array arguments (x: float32[4], y: float32[4]), got 1")
    with pytest.raises(ArgumentError, match=re.escape(
            "rowsum() takes 1 array argument (x: float32[?,4]), got 2")):
        mod.rowsum(X, X)
    with pytest.raises(ArgumentError, match="takes 2 array arguments"):
        mod.add.call_flat([X, X, X])


def test_keyword_arguments(mod):
    with pytest.raises(ArgumentError, match="expected positional arguments only, got keyword"):
        mod.add(X, y=Y)


def test_shape_error(mod):
    with pytest.raises(ShapeError) as info:
        mod.add(X, np.zeros(5, np.float32))
    message = str(info.value)
    assert message.startswith("add(): argument 'y': expected shape (4,) (float32[4]), got (5,).")
    assert "reshape" in message and "dynamic" in message
    assert isinstance(info.value, ValueError) and isinstance(info.value, ArgumentError)
    with pytest.raises(ShapeError, match=r"expected shape \(4,\) .*got \(2, 2\)"):
        mod.add(X, np.zeros((2, 2), np.float32))
    with pytest.raises(ShapeError, match=r"expected shape \(\?, 4\)"):
        mod.rowsum(np.zeros((3, 5), np.float32))


def test_dtype_error(mod):
    with pytest.raises(ArgumentError) as info:
        mod.add(X, Y.astype(np.float64))
    message = str(info.value)
    assert message.startswith(
        "add(): argument 'y': expected dtype float32 (float32[4]), got an array of dtype float64")
    assert "y.astype(np.float32)" in message
    assert isinstance(info.value, TypeError)
    with pytest.raises(ArgumentError,
                       match="expected dtype float32 .* got the Array of dtype int32"):
        mod.add(mod.shift(1, np.arange(3, dtype=np.int32)), X)


def test_dynamic_dims(mod):
    for n in (1, 2, 7, 64):
        x = np.arange(n * 4, dtype=np.float32).reshape(n, 4)
        out = mod.rowsum(x)
        assert out.shape == (n,)
        np.testing.assert_allclose(host(out), x.sum(axis=1))
        a = np.ones((n, 3), np.float32)
        np.testing.assert_array_equal(host(mod.addn(a, 2 * a)), 3 * a)


def test_named_dim_must_agree(mod):
    with pytest.raises(ShapeError) as info:
        mod.addn(np.ones((2, 3), np.float32), np.ones((5, 3), np.float32))
    message = str(info.value)
    assert message.startswith(
        "addn(): argument 'y' dimension 0 ('n'): expected 2, the size of 'n' in argument 'x', "
        "got 5")


def test_pytree_arguments_and_results(mod):
    a, b = np.array([1, 2], np.float32), np.array([3, 4], np.float32)
    u = np.array([5, 6], np.float32)
    v = np.array([7, 8], np.int32)
    out = mod.tree((a, b), {"v": v, "u": u})
    assert set(out) == {"pair", "sum"}
    pair0, pair1 = out["pair"]
    np.testing.assert_array_equal(host(pair0), u)
    np.testing.assert_array_equal(host(pair1), v)
    np.testing.assert_array_equal(host(out["sum"]), a + b)


def test_structure_error(mod):
    a = np.zeros(2, np.float32)
    with pytest.raises(ArgumentError) as info:
        mod.tree(a, a, a, a)
    message = str(info.value)
    assert message.startswith(
        "tree(): expected arguments with structure ((*, *), {'u': *, 'v': *}), got (*, *, *, *)")
    assert "tree(a: float32[2]" in message
    with pytest.raises(ArgumentError, match=r"got \(\(\*, \*\), \{'u': \*\}\)"):
        mod.tree((a, a), {"u": a})
    with pytest.raises(ArgumentError, match=r"structure \(\*, \*\), got \(\(\*, \*\), \*\)"):
        mod.add((X, X), X)
    with pytest.raises(ArgumentError, match=r"got \(None, \*\)"):
        mod.add(None, X)


def test_list_pytree_for_tuple(mod):
    a = np.zeros(2, np.float32)
    v = np.zeros(2, np.int32)
    # The exported in_tree says tuple; a list has another structure.
    with pytest.raises(ArgumentError, match=r"got \(\[\*, \*\]"):
        mod.tree([a, a], {"u": a, "v": v})


def test_deleted_array_argument(mod):
    a = mod.add(X, X)
    a.delete("donated to step(), argument 'state'")
    with pytest.raises(DeletedArrayError) as info:
        mod.add(a, X)
    message = str(info.value)
    assert "argument 'x'" in message
    assert "donated to step(), argument 'state'" in message


def test_concurrent_calls(mod):
    errors = []

    def work(k: int) -> None:
        for i in range(200):
            x = np.full(4, 1000 * k + i, np.float32)
            if not (np.asarray(mod.add(x, x)) == 2 * x).all():
                errors.append((k, i))
            n = i % 5 + 1
            if np.asarray(mod.rowsum(np.ones((n, 4), np.float32))).tolist() != [4.0] * n:
                errors.append((k, i, n))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_results_outlive_module(main_vmfb, device_uri):
    module = runtime.load(main_vmfb, device=device_uri)
    out = module.add(X, Y)
    big = module.big(np.zeros(8192, np.float32))
    view = np.asarray(big)
    del module
    import gc

    gc.collect()
    np.testing.assert_array_equal(host(out), X + Y)
    np.testing.assert_array_equal(view[:4], np.ones(4))
