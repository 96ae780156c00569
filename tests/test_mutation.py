"""numpy's in-place semantics in traced functions, against numpy on copies of the inputs:
item assignment for every kind of index, augmented assignment with numpy's casting rule,
writes through views (and reads of views after writes), in-place methods, and the
caller's arrays after a call that writes into its arguments (jit, export + runtime)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import aotc
import aotc.lax as alax
from aotc import runtime
from aotc.errors import TracedValueStoredError, UnsupportedOpError, VmapError

RNG = np.random.default_rng(3)


def _copies(inputs):
    return [x.copy() if isinstance(x, np.ndarray) else x for x in inputs]


def check(fn, *inputs, static_argnums=()):
    """Runs ``fn`` with numpy and compiled on copies of ``inputs``: the results and every
    input array afterwards must be numpy's."""
    want_inputs = _copies(inputs)
    want = fn(*want_inputs)
    got_inputs = _copies(inputs)
    got = aotc.jit(fn, static_argnums=static_argnums)(*got_inputs)
    if want is None:
        assert got is None
    else:
        for w, g in zip(want if isinstance(want, tuple) else (want,),
                        got if isinstance(got, tuple) else (got,)):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-12)
            assert np.asarray(g).dtype == np.asarray(w).dtype
    for i, (w, g) in enumerate(zip(want_inputs, got_inputs)):
        if isinstance(w, np.ndarray):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12,
                                       err_msg=f"argument {i} after the call")


A = RNG.standard_normal((5, 6))
V = RNG.standard_normal(6)
IDX = np.array([4, 0, 2], np.int32)

SET_CASES = {
    "int": lambda a: a.__setitem__(1, 7.0),
    "negative int": lambda a: a.__setitem__((-1, -2), 3.0),
    "slice": lambda a: a.__setitem__(slice(1, 4), 0.5),
    "stepped slices": lambda a: a.__setitem__((slice(None, None, 2), slice(5, 0, -2)), -1.0),
    "interior": lambda a: a.__setitem__((slice(1, -1), slice(1, -1)), 2.0),
    "ellipsis and None": lambda a: a.__setitem__((Ellipsis, None, 3), 9.0),
    "row from array": lambda a: a.__setitem__(2, np.arange(6.0)),
    "broadcast column": lambda a: a.__setitem__((slice(None), slice(0, 1)), np.ones((5, 1))),
    "integer array": lambda a: a.__setitem__(IDX, 4.0),
    "integer arrays": lambda a: a.__setitem__((IDX, np.array([1, 2, 3])), np.array([1., 2, 3])),
    "static mask": lambda a: a.__setitem__(a > 0.5, 0.0),
    "int array with float": lambda a: a.astype(np.int64).__setitem__(0, 2.9),
}


@pytest.mark.parametrize("case", sorted(SET_CASES))
def test_item_assignment(case):
    def fn(a):
        SET_CASES[case](a)
        return a * 1.0

    check(fn, A)


def test_item_assignment_with_a_traced_index_and_mask():
    def fn(a, i):
        a[i] = -5.0
        a[a > 1.0] = 1.0  # a traced mask: a select
        a[i + 1, 2:4] += 10.0
        return a.sum()

    check(fn, A, np.int32(2))


AUGMENTED = ["+=", "-=", "*=", "/=", "//=", "%=", "**=", "&=", "|=", "^=", "<<=", ">>=", "@="]


@pytest.mark.parametrize("op", AUGMENTED)
def test_augmented_assignment(op):
    integer = op in ("&=", "|=", "^=", "<<=", ">>=")
    x = (RNG.integers(1, 7, (4, 4)) if integer else RNG.uniform(1, 2, (4, 4))).astype(
        np.int64 if integer else np.float64)
    y = (RNG.integers(1, 3, (4, 4)) if integer else RNG.uniform(1, 2, (4, 4))).astype(x.dtype)
    namespace: dict = {}
    row = "" if op == "@=" else f"    x[0] {op} y[1]\n"  # (1-d @= 1-d has no array result)
    exec(f"def fn(x, y):\n    x {op} y\n{row}", namespace)
    check(namespace["fn"], x, y)


def test_augmented_assignment_follows_same_kind_casting():
    with pytest.raises(TypeError, match="Cannot cast ufunc output from dtype\\('float64'\\) to "
                                        "dtype\\('int64'\\) with casting rule 'same_kind'"):
        def fn(a):
            a += 1.5
            return a
        aotc.jit(fn)(np.arange(3))

    def widening_is_fine(a, b):
        a += b  # float32 += float64 array: computed in float64, cast back (same kind)
        return a

    check(widening_is_fine, np.ones(3, np.float32), np.full(3, 0.25))
    with pytest.raises(ValueError, match="non-broadcastable output operand"):
        def grows(a, b):
            a += b
        aotc.jit(grows)(np.ones(3), np.ones((2, 3)))


def test_writes_through_views_reach_the_base_and_other_views():
    def fn(a):
        row = a[1]          # a view
        col = a[:, 2]       # another view, overlapping row at a[1, 2]
        row[2] = 100.0      # through one view ...
        seen = col * 1.0    # ... the other sees it
        sub = a[1:4, 1:5]
        inner = sub[1:, ::2]  # a view of a view
        inner += 1.0
        t = a.T
        t[0, 4] = -7.0      # a transposed view: a[4, 0]
        flat = a.reshape(-1)
        flat[:3] = 0.0      # a reshape of a contiguous array is a view
        return seen, row * 1.0, sub.sum()

    check(fn, A)


def test_copies_do_not_alias():
    def fn(a):
        b = a.copy()
        c = a.astype(a.dtype)
        d = a[[0, 2]]        # advanced indexing copies
        f = a.T.ravel()      # ravel of a non-contiguous array copies
        g = a.flatten()
        for x in (b, c, d, f, g):
            x[0] = 123.0
        return b.sum() + c.sum() + d.sum() + f.sum() + g.sum()

    check(fn, A)


def test_reshape_is_a_view_exactly_where_numpy_makes_one():
    def fn(a):
        t = a.T                      # (6, 5), strides (1, 6)
        split = t.reshape(2, 3, 5)   # splits the first axis: still a view
        split[1, 0, 0] = 50.0
        merged = t.reshape(30)       # merges non-adjacent strides: a copy
        merged[0] = -50.0
        s = a[:, 1:3].reshape(5, 2, 1)  # adds a unit axis: a view
        s[0, 0, 0] = 77.0
        return merged * 1.0

    check(fn, A)


def test_view_kept_across_loop_iterations():
    def fn(a, n):
        top = a[0]
        for i in range(1, n):
            a[i] += top       # reads the current first row
            top *= 0.5        # writes the first row through the view
        return a

    check(fn, A, 5, static_argnums=1)


def test_in_place_methods():
    def fn(a, b):
        a.sort(axis=1)
        b.fill(3.0)
        return a[0] * 1.0

    check(fn, A, V)


def test_kernels_that_mutate_their_arguments():
    def ger(a, u, v, alpha):
        a += alpha * np.outer(u, v)

    def lu(a, n):
        for k in range(n):
            for i in range(k + 1, n):
                a[i, k] /= a[k, k]
                a[i, k + 1:] -= a[i, k] * a[k, k + 1:]

    check(ger, A, RNG.standard_normal(5), V, 0.5)
    check(lu, RNG.standard_normal((6, 6)) + 6 * np.eye(6), 6, static_argnums=1)


def test_an_exported_artifact_writes_into_numpy_arguments(tmp_path, capsys):
    def scale_rows(a, s):
        a *= s[:, None]

    art = aotc.export(scale_rows, aotc.ShapeDtypeStruct((5, 6), "float64"),
                      aotc.ShapeDtypeStruct((5,), "float64"))
    meta = art.functions["scale_rows"]
    assert meta.mutated == {"a": 0} and meta.results[0].name == "a (written)"
    path = art.save(tmp_path / "scale.vmfb")
    from aotc import cli

    assert cli.main(["inspect", str(path)]) == 0
    assert "writes into: a (result 0)" in capsys.readouterr().out
    fn = runtime.load(path)["scale_rows"]
    a, s = A.copy(), np.arange(5.0)
    assert fn(a, s) is None
    np.testing.assert_array_equal(a, A * s[:, None])
    dev = runtime.device_put(A.copy())
    assert fn(dev, s) is None  # a runtime Array is updated on its device
    np.testing.assert_array_equal(np.asarray(dev), A * s[:, None])


# ---- runtime Arrays written into -----------------------------------------------------

BIG = RNG.standard_normal((64, 96))  # past the size under which Arrays are not tracked


def _scale_rows(a, s):
    a *= s[:, None]


@pytest.mark.parametrize("device", ["local-sync", "local-task"])
def test_an_array_written_into_keeps_its_buffer(device):
    """The written value goes into the Array's own buffer (donation): the caller's Array
    object holds numpy's result after each call, and the calls allocate nothing for it."""
    art = aotc.export(_scale_rows, aotc.ShapeDtypeStruct(BIG.shape, "float64"),
                      aotc.ShapeDtypeStruct(BIG.shape[:1], "float64"))
    assert art.functions["_scale_rows"].donated == {"a": 0}
    fn = runtime.load(art.vmfb, device=device)["_scale_rows"]
    a = runtime.device_put(BIG.copy(), device)
    s = runtime.device_put(np.linspace(0.5, 1.5, BIG.shape[0]), device)
    want = BIG.copy()
    before = runtime.memory_stats(device)
    for _ in range(3):
        assert fn(a, s) is None
        want *= np.asarray(s)[:, None]
        np.testing.assert_array_equal(np.asarray(a), want)
    after = runtime.memory_stats(device)
    assert after.num_allocs == before.num_allocs
    assert after.bytes_in_use == before.bytes_in_use
    assert after.bytes_donated - before.bytes_donated == 3 * BIG.nbytes
    assert not a.is_deleted() and a.device is runtime.get_device(device)


def test_jit_updates_array_arguments_of_a_kernel():
    def lu(a, n):
        for k in range(n):
            for i in range(k + 1, n):
                a[i, k] /= a[k, k]
                a[i, k + 1:] -= a[i, k] * a[k, k + 1:]

    m = RNG.standard_normal((6, 6)) + 6 * np.eye(6)
    want = m.copy()
    lu(want, 6)
    a = aotc.device_put(m.copy())
    assert aotc.jit(lu, static_argnums=1)(a, 6) is None
    np.testing.assert_allclose(np.asarray(a), want, rtol=1e-12)


def test_an_array_whose_new_value_cannot_be_in_place_takes_the_new_buffer():
    """a @ a cannot be written into a while it is read: the result gets a new buffer, and
    the Array takes it (same values as numpy, the old buffer released)."""
    def square(a):
        a[...] = a @ a

    art = aotc.export(square, aotc.ShapeDtypeStruct((8, 8), "float64"))
    assert art.functions["square"].donated == {}
    fn = runtime.load(art.vmfb)["square"]
    m = RNG.standard_normal((8, 8))
    a = runtime.device_put(m.copy())
    fn(a)
    fn(a)
    np.testing.assert_allclose(np.asarray(a), (m @ m) @ (m @ m), rtol=1e-12)


def test_a_host_view_taken_before_the_call_keeps_the_old_values():
    """An Array's host view is a snapshot, as for every Array: the call writes into a
    copy of a buffer someone still reads, and the Array holds the copy."""
    art = aotc.export(_scale_rows, aotc.ShapeDtypeStruct(BIG.shape, "float64"),
                      aotc.ShapeDtypeStruct(BIG.shape[:1], "float64"))
    fn = runtime.load(art.vmfb)["_scale_rows"]
    a = runtime.device_put(BIG.copy())
    view = np.asarray(a)
    fn(a, np.full(BIG.shape[0], 2.0))
    np.testing.assert_array_equal(view, BIG)
    np.testing.assert_array_equal(np.asarray(a), 2.0 * BIG)


def test_returning_the_written_argument_gives_its_new_value_twice():
    def bump(a):
        a += 1.0
        return a

    a = aotc.device_put(BIG.copy())
    out = aotc.jit(bump)(a)
    np.testing.assert_array_equal(np.asarray(out), BIG + 1.0)
    np.testing.assert_array_equal(np.asarray(a), BIG + 1.0)
    aotc.jit(bump)(a)  # the returned array shares a's buffer: it is not overwritten
    np.testing.assert_array_equal(np.asarray(out), BIG + 1.0)
    np.testing.assert_array_equal(np.asarray(a), BIG + 1.0 + 1.0)


def test_an_array_of_another_dtype_for_a_written_argument_is_refused():
    art = aotc.export(_scale_rows, aotc.ShapeDtypeStruct(BIG.shape, "float64"),
                      aotc.ShapeDtypeStruct(BIG.shape[:1], "float64"))
    fn = runtime.load(art.vmfb)["_scale_rows"]
    a = runtime.device_put(BIG.astype(np.float32))
    with pytest.raises(runtime.ArgumentError, match="(?s)argument a is written into.*exactly "
                       "its dtype float64.*got dtype float32"):
        fn(a, np.ones(64))
    np.testing.assert_array_equal(np.asarray(a), BIG.astype(np.float32))


def test_scalar_arguments_are_not_written_back():
    def fn(a, k):
        k += 1   # rebinds k in numpy; the caller's scalar is unchanged
        a[0] = k
        return k

    check(fn, V, 3.0)
    check(fn, V, np.float64(2.5))


def test_writes_into_outer_arrays_from_lax_regions_are_refused():
    def fn(a):
        def body(i, carry):
            a[i] = 0.0   # `a` lives outside the loop body
            return carry
        return alax.fori_loop(0, 3, body, a.sum())

    with pytest.raises(UnsupportedOpError, match="made outside the lax.cond/switch branch"):
        aotc.jit(fn).lower(A)


def test_writes_in_lax_bodies_into_their_own_values_work():
    def fn(a):
        def body(i, carry):
            carry[i] = carry[i] * 2.0
            return carry
        return alax.fori_loop(0, 3, body, a)

    want = A.copy()
    want[:3] *= 2.0
    np.testing.assert_array_equal(np.asarray(aotc.jit(fn)(A)), want)


def _lu(a, n):
    for k in range(n):
        for i in range(k + 1, n):
            a[i, k] /= a[k, k]
            a[i, k + 1:] -= a[i, k] * a[k, k + 1:]


def _write_rows(x):
    x[0] = 1.0
    x[2:] *= 2.0
    return x.sum()


@pytest.mark.parametrize("axis", [0, 1])
def test_vmap_of_a_writing_function_matches_a_loop(axis):
    """Each example writes into its slice of the batched argument: the caller's array ends
    as after the same function in a Python loop over the slices (numpy views)."""
    X = RNG.standard_normal((4, 6))
    want_x = X.copy()
    want = np.array([_write_rows(np.moveaxis(want_x, axis, 0)[i]) for i in range(X.shape[axis])])
    got_x = X.copy()
    got = aotc.jit(aotc.vmap(_write_rows, in_axes=axis))(got_x)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    np.testing.assert_array_equal(got_x, want_x)


def test_vmap_of_a_mutating_kernel_matches_a_loop():
    """A batch of LU factorizations in place (the corpus's lu), nested in vmap twice, on
    a view of the argument: every matrix of the caller's array is factorized."""
    m = RNG.standard_normal((2, 3, 5, 5)) + 5 * np.eye(5)
    want = m.copy()
    for b in range(2):
        for c in range(3):
            _lu(want[b, c], 5)

    def factor_all(ms):
        inner = aotc.vmap(lambda a: _lu(a, 5))
        aotc.vmap(inner)(ms[:, :, :, :])  # a view: the write reaches ms

    got = m.copy()
    assert aotc.jit(factor_all)(got) is None
    np.testing.assert_allclose(got, want, rtol=1e-12)
    dev = aotc.device_put(m.copy())
    aotc.jit(factor_all)(dev)
    np.testing.assert_allclose(np.asarray(dev), want, rtol=1e-12)


def test_vmap_writing_into_an_unbatched_or_numpy_argument_is_refused_clearly():
    def add_into(x, acc):
        acc += x

    with pytest.raises(VmapError, match="writes into argument acc, whose in_axes is None"):
        aotc.jit(aotc.vmap(add_into, in_axes=(0, None)))(np.ones((3, 4)), np.zeros(4))
    outside = np.zeros((3, 4))
    with pytest.raises(VmapError, match="writes into argument acc, a ndarray made outside"):
        aotc.jit(lambda x: aotc.vmap(add_into)(x, outside))(np.ones((3, 4)))
    np.testing.assert_array_equal(outside, 0.0)


def test_numpy_functions_that_write_into_an_array():
    def fn(a, idx, v):
        np.add(a, 1.0, out=a)
        np.add.at(a, idx, v)       # unbuffered: the repeated index accumulates
        np.multiply(a, 2, out=a)
        b = np.zeros_like(a)       # made from a traced array: traced too
        np.copyto(b, a[::-1])
        np.putmask(a, a > 3, np.array([-1.0, -2.0]))
        c = a.copy()
        np.place(c, c < 0, [10.0, 20.0, 30.0])
        np.maximum.at(c, [1, 1, 2], [50.0, 5.0, 0.0])
        return b, c

    check(fn, np.arange(8.0), np.array([0, 0, 3]), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="same_kind"):
        aotc.jit(lambda a: np.add(a, 0.5, out=a)).lower(np.arange(3))


def test_writing_into_a_numpy_array_made_inside_is_a_clear_error():
    def fn(x):
        out = np.zeros(3)
        np.copyto(out, x)
        return out

    with pytest.raises(UnsupportedOpError, match="destination is a numpy array"):
        aotc.jit(fn).lower(np.ones(3))


@pytest.mark.parametrize("store", ["out[0] = x[0]", "out[0:3] = x", "out[:] = x * 2"])
def test_storing_a_traced_value_into_a_numpy_array_names_the_line(store):
    namespace: dict = {"np": np}
    exec(f"def fn(x):\n    out = np.zeros(3)\n    {store}\n    return out\n", namespace)
    with pytest.raises(TracedValueStoredError, match="was stored into a numpy array at .*:3 "
                                                     ".*np.zeros_like"):
        aotc.jit(namespace["fn"]).lower(np.ones(3))


OVERLAPPING = {
    "reversed": lambda y: y.__setitem__(slice(0, 9), y[:9] + y[8::-1]),
    "shifted": lambda y: y.__setitem__(slice(1, 10), y[1:10] + y[:9]),
    "stencil": lambda y: y.__setitem__(slice(1, -1), 0.5 * (y[:-2] + y[2:])),
    "shift copy": lambda y: y.__setitem__(slice(0, 12), y[3:15]),
}


@pytest.mark.parametrize("case", sorted(OVERLAPPING))
def test_updates_that_read_other_elements_of_the_destination(case):
    """The updated slice is computed from other elements of the same array: every element
    must come from the values before the write (IREE would overwrite some first)."""
    def fn(x):
        y = x * 2.0  # an intermediate, not the argument
        OVERLAPPING[case](y)
        return y

    check(fn, np.arange(16.0))


WINDOW_READ_WHOLE = {
    "row times matrix": lambda A, C: [A.__setitem__((r, slice(None)), A[r, :] @ C)
                                      for r in range(A.shape[0])],
    "block times matrix": lambda A, C: A.__setitem__(slice(0, 8), A[0:8] @ C),
    "block transposed": lambda A, C: A.__setitem__((slice(0, 8), slice(0, 8)), A[0:8, 0:8].T),
    "row minus its sum": lambda A, C: A.__setitem__(1, A[1] - A[1].sum()),
}


@pytest.mark.parametrize("case", sorted(WINDOW_READ_WHOLE))
def test_updates_that_read_their_own_window_whole(case):
    """Each element of the update reads other elements of the very window it overwrites
    (a row times a matrix written over its row): IREE's tiles wrote the first columns
    before the later ones read the row, on CPUs with 4-wide float64 vectors and less."""
    rng = np.random.default_rng(3)
    check(lambda A, C: WINDOW_READ_WHOLE[case](A, C) and None,
          rng.standard_normal((12, 12)), rng.standard_normal((12, 12)))


def test_functional_update_reading_the_destination_elsewhere():
    def fn(x):
        y = x * 2.0
        return y.at[:9].set(y[:9] + y[8::-1])

    x2 = np.arange(12.0) * 2.0
    want = x2.copy()
    want[:9] = x2[:9] + x2[8::-1]
    np.testing.assert_array_equal(np.asarray(aotc.jit(fn)(np.arange(12.0))), want)


READ_BACK = {
    # (the function, barriers expected in its IR)
    "element read back": (lambda c, d: [c.__setitem__((i, j), d[i] * d[j]) or
                                        c.__setitem__((j, i), c[i, j])
                                        for i in range(4) for j in range(i, 4)], 0),
    "row read back past other rows": (lambda c, d: [c.__setitem__(0, d), c.__setitem__(2, d * 2),
                                                    c.__setitem__(1, c[0] + 1.0)], 0),
    "overlapping write between": (lambda c, d: [c.__setitem__(0, d),
                                                c.__setitem__((slice(0, 2), 1), -3.0),
                                                c.__setitem__(3, c[0] * 2.0)], 1),
    "strided windows apart": (lambda c, d: [c.__setitem__((1, slice(0, 4, 2)), d[:2]),
                                            c.__setitem__((1, slice(1, 4, 2)), d[2:]),
                                            c.__setitem__(2, c[1])], 1),
}


@pytest.mark.parametrize("case", sorted(READ_BACK))
def test_reading_back_a_written_window_uses_the_written_value(case):
    """An element or row written and read back later is the value written (numpy code's
    ``cov[j, i] = cov[i, j]``), also past writes of other windows: no read of the
    destination elsewhere, so no barrier before the next write (each cost a submission).
    A window another write may have touched is read from the array, as before."""
    fn, barriers = READ_BACK[case]

    def kernel(c, d):
        fn(c, d)

    c, d = np.zeros((4, 4)), np.arange(1.0, 5.0)
    check(kernel, c, d)
    text = aotc.jit(kernel).lower(c, d).as_text()
    # (not counted: the donation's barrier over the written argument and the result, and
    # those over constants, aotc-materialize-constants')
    hidden = re.findall(r"util.optimization_barrier %(\w+) :", text)
    assert len([v for v in hidden if not re.match(r"(false|true|cst)", v)]) == barriers
