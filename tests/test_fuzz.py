"""The program fuzzer (tests/fuzz) in CI: a fixed-seed slice in every mode, and the
disagreements it found, each as a small program of its own.

The slice is small (a few batches of programs: each batch is one compile); the long
run is ``python -m tests.fuzz --programs 10000``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from tests.fuzz.execute import MODES, run_batch
from tests.fuzz.helpers import AotcHelpers, NumpyHelpers
from tests.fuzz.programs import generate

SLICE_PROGRAMS = 6  # per mode


def assert_programs_agree(seeds, mode: str) -> None:
    """The programs of ``seeds``, compiled together in ``mode``, agree with numpy."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # donation warnings, numpy's RuntimeWarnings
        findings = run_batch([generate(seed) for seed in seeds], mode)
    assert not findings, "\n\n".join(str(f) for f in findings)


def assert_donated_call_matches_numpy(f, x) -> None:
    """``f(anp, x)`` under jit with x donated (the donation may be refused) gives
    ``f(np, x)``'s values exactly."""
    with np.errstate(all="ignore"):
        want = f(np, x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the donation may be refused
        got = aotc.jit(lambda x: f(anp, x), donate_argnums=0)(aotc.device_put(x))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)


@pytest.mark.parametrize("mode", MODES)
def test_fixed_seed_slice(mode):
    start = 1000 + 100 * MODES.index(mode)
    assert_programs_agree(range(start, start + SLICE_PROGRAMS), mode)


def test_the_bounds_catch_a_wrong_value():
    """The comparison can fail: a program's result perturbed by one ulp disagrees."""
    from tests.fuzz import bounds

    for seed in range(50):
        program = generate(seed)
        want = program.wants[0][0]
        data = np.asarray(want.data)
        if data.dtype.kind == "f" and data.size and not np.any(want.bound) and np.all(
                np.isfinite(data)):
            wrong = data.copy()
            wrong.flat[0] = np.nextafter(wrong.flat[0], np.inf)
            assert bounds.disagreement(data, want) is None
            assert "differ" in bounds.disagreement(wrong, want)
            return
    pytest.fail("no exact float result among 50 programs")


def test_a_chaotic_element_is_not_checked_but_its_neighbours_are():
    """cos of sinh(-169.85...) changes sign between neighbouring floats of its argument
    (an ulp of 2.9e73 is 3.4 radians): numpy's and aotc's one-ulp-apart sinh gave cos
    -0.77 and 0.77, and the corners and random points had all missed it (program 10119).
    That element is not checked; cos of arguments near 1 still is, to a few ulps."""
    from tests.fuzz import bounds

    want = generate(10119).wants[0][0]
    assert np.isinf(want.bound[5, 18])
    assert np.isfinite(want.bound).sum() > 200  # (its arguments are mostly huge)
    x = np.array([1.0, -3.5])
    got = bounds.propagate("rounded:8", np.cos, [bounds.Value(x, 8 * np.spacing(np.abs(x)))],
                           np.cos(x), np.random.default_rng(0))
    assert np.all((0 < got.bound) & (got.bound < 1e-14))


def test_a_product_that_may_underflow_to_zero_is_not_checked():
    """prod of [1.8e-307, 1.8e-307, -inf, 2.0]: numpy's order gives -inf, another gives
    1.8e-307 * 1.8e-307 = 0 first and then nan (program 26494 under vmap). Such an
    element is not checked; a product of ordinary factors with an infinite one is."""
    from tests.fuzz import bounds

    x = np.array([[1.78e-307, 1.78e-307, -np.inf, 2.0], [0.5, 3.0, -np.inf, 2.0]])
    value = bounds.Value(x)
    for kind, first in (("product", np.inf), ("linear", 0.0)):
        got = bounds.propagate(kind, lambda a: np.prod(a, axis=1), [value],
                               np.prod(x, axis=1), np.random.default_rng(0), terms=4)
        assert got.bound[0] == first and got.bound[1] == 0.0


def test_a_float32_product_whose_partial_products_underflow_is_not_checked():
    """The factors below 1 of a float32 row multiply to about 1e-46: positive in float64,
    zero in float32, so with -inf in the row the result is nan in one order and -inf in
    numpy's (program 67680). Such an element is not checked; ordinary factors are."""
    from tests.fuzz import bounds

    x = np.array([[9.4e-38, 0.026, 0.12, 0.0034, 1e-4, -np.inf, 2.0],
                  [0.5, 0.25, 3.0, 1.5, 0.5, -np.inf, 2.0]], np.float32)
    got = bounds.propagate("product", lambda a: np.prod(a, axis=1), [bounds.Value(x)],
                           np.prod(x, axis=1), np.random.default_rng(0), terms=7)
    assert got.bound[0] == np.inf and got.bound[1] == 0.0


def test_a_mean_whose_partial_sums_overflow_is_not_checked():
    """mean of [3.4e38, 8.5e37, -inf, ...] in float32: its partial sums overflow to +inf
    in one order (then nan with -inf) and not in numpy's (-inf), though the mean of the
    magnitudes is finite (program 78357). Such an element is not checked; a mean of
    ordinary values with -inf is."""
    from tests.fuzz import bounds

    x = np.array([[3.4028235e38, 8.5070587e37, -np.inf, 1.0, 0.5, 2.0, -3.0, 1.0],
                  [3.0, 8.0, -np.inf, 1.0, 0.5, 2.0, -3.0, 1.0]], np.float32)
    with np.errstate(all="ignore"):
        got = bounds.propagate("mean", lambda a: np.mean(a, axis=1), [bounds.Value(x)],
                               np.mean(x, axis=1), np.random.default_rng(0), terms=8)
    assert got.bound[0] == np.inf and got.bound[1] == 0.0


def test_an_unchecked_element_may_be_nan():
    """An element with an infinite bound is not checked: NaN there is no disagreement
    (a float16 convolution overflowing in one order and not in another: inf - inf in
    aotc's, finite in numpy's; program 35176), but NaN where the bound is finite is."""
    from tests.fuzz import bounds

    want = bounds.Value(np.array([1.0, 2.0]), np.array([np.inf, 0.0]))
    assert bounds.disagreement(np.array([np.nan, 2.0]), want) is None
    assert "1 of 2 elements differ" in bounds.disagreement(np.array([np.nan, np.nan]), want)


def test_exact_values_at_the_largest_float_have_a_bound():
    """``-x`` of x = -1.7976931348623157e308 had bound NaN (0 ulps of numpy's infinite
    spacing at the largest float), which no value meets (program 46516)."""
    from tests.fuzz import bounds

    x = np.array(-np.finfo(np.float64).max)
    got = bounds.propagate("exact", np.negative, [bounds.Value(x)], np.negative(x),
                           np.random.default_rng(0))
    assert got.bound == 0
    assert bounds.disagreement(np.negative(x), got) is None


def test_a_sum_over_an_unchecked_element_is_not_checked():
    """A convolution of a convolution: an element of the first that is not checked
    (-inf where aotc may give another value) reached a sum with an infinite term, inf in
    aotc's, nan in numpy's (program 50950). Elements a linear op computes from an
    unchecked operand element are not checked; the others still are."""
    from tests.fuzz import bounds

    data = np.array([np.inf, -np.inf, 1.0, 2.0])

    def pairs(a):
        return np.array([a[0] + a[1], a[2] + a[3]])

    for bound, unchecked in ((np.array([0.0, np.inf, 0.0, 0.0]), True), (0.0, False)):
        got = bounds.propagate("linear", pairs, [bounds.Value(data, bound)], pairs(data),
                               np.random.default_rng(0), terms=2)
        assert bool(np.isinf(got.bound[1])) == unchecked


# ---- disagreements the fuzzer found --------------------------------------------------


def test_returned_value_updated_in_place_keeps_its_value():
    """IREE gave ``v`` and ``v.at[i].add(u)`` one buffer when ``v`` came out of the sort
    network's loop: the first result came back with the update applied."""
    x = np.array([2, 100, 2, 2], np.int64)
    u = np.arange(5, dtype=np.int64) + 5
    idx = np.array([-3, 3, -3, -4, 3])

    def f(x, u):
        order = anp.argsort(x, kind="stable")
        return order, x + 1, order.at[idx].add(u), order.at[1:3].set(u[:2])

    order, plus, added, inserted = (np.asarray(r) for r in aotc.jit(f)(x, u))
    want = np.argsort(x, kind="stable")
    np.testing.assert_array_equal(order, want)
    expected = want.copy()
    np.add.at(expected, idx, u)
    np.testing.assert_array_equal(added, expected)
    np.testing.assert_array_equal(inserted, np.concatenate([want[:1], u[:2], want[3:]]))
    np.testing.assert_array_equal(plus, x + 1)


def test_returned_value_read_by_an_updated_op_keeps_its_value():
    # program 1921: IREE folds argsort(any over an empty axis) ^ order to order itself, and
    # then wrote the slice update into the returned order
    def f(x, u):
        order = anp.argsort(anp.any(x, axis=1), kind="stable")
        return order, anp.bitwise_xor(anp.any(x, axis=1), order).at[132:].add(u)

    x, u = np.zeros((256, 0), np.float32), np.full(124, 5, np.int64)
    order, updated = aotc.jit(f)(x, u)
    np.testing.assert_array_equal(np.asarray(order), np.arange(256))
    want = np.arange(256)
    want[132:] += 5
    np.testing.assert_array_equal(np.asarray(updated), want)


def test_donated_update_read_after_the_result_is_written():
    # program 7887: v = x.at[-4].add(u) lives in x's donated buffer; where(v > 0, v, v != 0)
    # was written there before v / s read v
    def f(x, u, s):
        v = x.at[-4].add(u)
        return anp.where(v > 0, v, anp.logical_and(v, v)), v / s

    rng = np.random.default_rng(1)
    x, u = rng.integers(-3, 3, (7, 16)), rng.integers(-3, 3, 16)
    v = x.copy()
    v[-4] += u
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the donation may be declined: the values count
        got = aotc.jit(f, donate_argnums=0)(aotc.device_put(x), u, 2)
    np.testing.assert_array_equal(np.asarray(got[0]), np.where(v > 0, v, v != 0))
    np.testing.assert_array_equal(np.asarray(got[1]), v / 2)


@pytest.mark.parametrize("n", [6, 1000])
def test_donated_flip_is_not_written_in_place(n):
    """A flip reads its input at other positions than it writes (with tensor.extract in
    its body): written into the donated buffer it gave wrong values from 1000 elements;
    and an elementwise consumer of it recomputed it from the overwritten buffer."""
    x = np.arange(n, dtype=np.float32)
    with pytest.warns(aotc.DonationWarning, match="reads 'x' at other positions"):
        got = aotc.jit(lambda x: anp.flip(x, 0), donate_argnums=0)(aotc.device_put(x.copy()))
    np.testing.assert_array_equal(np.asarray(got), x[::-1])
    flipped, inverted = aotc.jit(lambda x: (anp.flip(x, 0), -anp.flip(x, 0)),
                                 donate_argnums=0)(aotc.device_put(x.copy()))
    np.testing.assert_array_equal(np.asarray(flipped), x[::-1])
    np.testing.assert_array_equal(np.asarray(inverted), -x[::-1])
    inverted = aotc.jit(lambda x: -anp.flip(x, 0), donate_argnums=0)(aotc.device_put(x.copy()))
    np.testing.assert_array_equal(np.asarray(inverted), -x[::-1])


def test_donated_buffer_outlives_a_bool_read_twice():
    """Programs 10146 and 10154 donated together: IREE computes a bool value in every
    dispatch that uses it (it stores none between dispatches), so ``v``, returned and
    also read by the result written into ``x``, was computed again from ``x`` after that
    write (309 of 320 bools wrong). The donation is now refused with a warning."""
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(64, 5)).astype(np.float16), rng.normal(size=(5, 17, 4))

    def f(m, x, y):
        v = m.less_equal(m.isfinite(x), x)
        return v, m.arccos(v), y * 2, (y * 2)[np.array([-1])]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy's arccos of a bool in float16
        want = f(np, x, y)
    with pytest.warns(aotc.DonationWarning, match="'x' is also read by .* also returned"):
        got = aotc.jit(lambda x, y: f(anp, x, y), donate_argnums=(0, 1))(
            aotc.device_put(x), aotc.device_put(y))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)


def test_donated_buffer_read_through_an_update_of_it():
    """``z = x.at[i].add(1)`` lives in x's donated buffer; ``z[j]`` read it after another
    result was written there: the ordering barrier mixed z's buffer with temporaries and
    IREE rejected it (a compile error; programs 10208 and 10212 hit the same through a
    constant's reshape taken for a computed value)."""
    x, y, w = np.arange(16.0).reshape(4, 4), np.ones((4, 4)), np.arange(16.0).reshape(4, 4)
    idx, idx2 = np.array([0, 2]), np.array([2, 1, 0])

    def f(m, x, y, w):
        z = x.copy() if m is np else x
        if m is np:
            np.add.at(z, idx, 1.0)
        else:
            z = z.at[idx].add(1.0)
        return m.sum(z[idx2]), (y * 3) @ w

    got = aotc.jit(lambda x, y, w: f(anp, x, y, w), donate_argnums=0)(aotc.device_put(x), y, w)
    for g, want in zip(got, f(np, x, y, w)):
        np.testing.assert_array_equal(np.asarray(g), want)
    assert_programs_agree([10208, 10212], "donate")


def test_donated_update_returned_beside_a_value_computed_from_it():
    """Program 14525: ``v1 = x.at[-2].min(y)`` is made in the donated x's buffer; the
    result ``sort(x) & v1`` was then written there too, and v1 came back as it (12 of
    16 values wrong)."""
    x = np.array([7, 65534, 3, 9, 1, 65535, 0, 4, 8, 2, 65533, 6, 5, 11, 65534, 10],
                 np.uint16)
    y = np.uint16(70)

    def f(m, x, y):
        v0 = m.sort(x, axis=0)
        v1 = x.copy() if m is np else x.at[-2].min(y)
        if m is np:
            v1[-2] = min(v1[-2], y)
        return v0, v1, m.bitwise_and(v0, v1)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the donation may be declined: the values count
        got = aotc.jit(lambda x, y: f(anp, x, y), donate_argnums=0)(aotc.device_put(x), y)
    for g, want in zip(got, f(np, x, y)):
        np.testing.assert_array_equal(np.asarray(g), want)


def test_an_op_of_a_value_with_itself_is_the_value():
    """``fmin(x, x)``, ``x * x`` on bools and the like are ``x`` (aotc returns the operand,
    as IREE would fold it). Program 688: IREE folded ``x >= x * x`` to a constant and
    returned the wrong byte of its packed constants (False for False); program 17115:
    after IREE folded ``fmin(x, x)`` to the donated x, updates of it were made in x's
    buffer, which the donation analysis did not know."""
    def f(m, x):
        v1 = m.greater_equal(x, x * x)
        return v1, m.fmod(v1, v1), -m.fmod(v1, v1)

    for got, want in zip(aotc.jit(lambda x: f(anp, x))(np.array(False)), f(np, np.array(False))):
        np.testing.assert_array_equal(np.asarray(got), want)

    def updated(m, h, x, y, s):  # program 17115 as it was drawn then
        v0 = m.fmin(x, x)
        h.at_max(v0, np.array([3, -2, 3, -2]), y)
        return v0, h.at_max(v0, -2, s)

    x, y = np.linspace(-3, 3, 8), np.array([0.5, 9.0, -1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the donation may be refused
        got = aotc.jit(lambda x, y, s: updated(anp, AotcHelpers, x, y, s),
                       donate_argnums=0)(aotc.device_put(x), y, 7.5)
    for g, w in zip(got, updated(np, NumpyHelpers, x, y, 7.5)):
        np.testing.assert_array_equal(np.asarray(g), w)


def test_float64_fmod_of_a_multiple_keeps_the_dividend_sign():
    a = np.array([-3.0, 3.0, -2.5, -6.0, -0.0, 6.0])
    b = np.array([-3.0, 3.0, 1.25, 3.0, 2.0, -3.0])
    got = np.asarray(aotc.jit(anp.fmod)(a, b))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.fmod(a, b)))
    np.testing.assert_array_equal(got, np.fmod(a, b))


def test_loop_carry_and_values_after_the_loop_share_a_producer():
    """IREE fused the producer of a loop's initial carry with that of a value read after
    the loop, then failed to order the dispatch around the loop ("circular dependency")."""
    x = np.linspace(0.5, 3.0, 128, dtype=np.float32).reshape(2, 64)

    def f(x):
        b = anp.exp2(x)
        return anp.cosh(b) / aotc.lax.fori_loop(0, 3, lambda i, c: c * 3 - 1, anp.log1p(b))

    c = np.log1p(np.exp2(x))
    for _ in range(3):
        c = c * 3 - 1
    np.testing.assert_allclose(np.asarray(aotc.jit(f)(x)), np.cosh(np.exp2(x)) / c, rtol=1e-5)


def test_while_loop_carry_and_values_after_the_loop_share_a_producer():
    """The same around a while_loop (programs 7087 and 7088 compiled together; also
    4300+4303 and 4913+4918 exported)."""
    assert_programs_agree([7087, 7088], "jit")


def test_exported_bool_scalar_argument():
    """A Python bool argument of an exported function divided by: it crashed the
    overflow check of scalar arguments (no integer range for bool)."""
    x = np.array([1.0, 2.0, 4.0], np.float32)
    artifact = aotc.export(lambda x, s: x / s, x, True, name="divide")
    got = aotc.runtime.load(artifact.vmfb).divide(x, True)
    np.testing.assert_array_equal(np.asarray(got), x / True)


def test_integer_self_comparisons_reduce_to_the_count():
    """IREE folded ``x <= x`` on integers into an i1 fill and a sum over it to 1 (program
    22228): counts, sums and means of self-comparisons, against numpy, in one compile."""
    x = np.array([3, -7, 0, 32767, -32768, 5, 5, 1], np.int16)
    y = x.reshape(2, 4).astype(np.uint8)

    def counts(m, x, y):
        return (m.sum(x <= x), m.count_nonzero(x == x), m.sum(x < x), m.sum(x != x),
                m.sum((x >= x).astype(np.int32)), m.sum(y <= y, axis=1), m.mean(y == y),
                m.any(x > x), m.all(x == x), x == x)

    got = aotc.jit(lambda x, y: counts(anp, x, y))(x, y)
    for g, w in zip(got, counts(np, x, y)):
        np.testing.assert_array_equal(np.asarray(g), w)
        assert np.asarray(g).dtype == np.asarray(w).dtype


def test_reductions_of_bools_computed_from_constants():
    """IREE folded a sum over a bool tensor it could compute at compile time to one term
    (``sum(sort(ones(8, bool)))`` was 1; program 22228 under export and donation)."""
    x = np.array([3, -7, 0, 5, 5, 1, 9, -2], np.int16)

    def counts(m, x):
        return (m.sum(m.sort(m.ones(8, bool))) + 0 * x[0], m.sum(m.sort(x <= x)),
                m.count_nonzero(m.flip(m.arange(8) > 2)) + 0 * x[0],
                m.sum(m.ones((2, 3), bool), axis=1) + 0 * x[0])

    got = aotc.jit(lambda x: counts(anp, x))(x)
    for g, w in zip(got, counts(np, x)):
        np.testing.assert_array_equal(np.asarray(g), w)


def test_reductions_whose_values_fold_to_a_constant():
    """IREE's CPU code vectorized a reduction whose body reads no input wrongly (one term
    per vector): ``sum(x * 0 + 1)`` of 31 int32 was 2, the count behind ``power(s, s)``
    of program 15073 was 1, ``sum(sort(full(31, 3.0)))`` 12. Sums, products, extrema and
    partial sums of values that fold to constants, in one compile, against numpy."""
    x = np.arange(-15, 16, dtype=np.int32).reshape(31, 1)
    f = np.linspace(-2, 2, 31)

    def folded(m, x, f):
        s = m.sum(m.isfinite(x), keepdims=True)
        return (m.sum(x * 0 + 1), m.sum(m.where(x > 3, 1, 1)), m.sum(x & 0 | 1, axis=0),
                m.sum((x - x) == 0), m.count_nonzero(m.isinf(x) == False),  # noqa: E712
                m.prod(x * 0 + 2, axis=0), m.max((x ^ x) + 7), m.power(s, s),
                m.sum(m.ones(31, np.int32)[::-1]) + x[0, 0],
                m.sum(m.sort(m.full(31, 3.0))) + f[0], m.sum(x * 0 + 1, axis=1),
                m.mean(m.where(f > 0, 2.0, 2.0)), m.sum(f * 0.0 + 1.0))

    got = aotc.jit(lambda x, f: folded(anp, x, f))(x, f)
    for g, w in zip(got, folded(np, x, f)):
        np.testing.assert_array_equal(np.asarray(g), w)
    assert_programs_agree([15073, 17649], "donate")


def test_values_computed_from_nothing_updated_in_place():
    """IREE computes ``(b * 0) == 0`` or ``x == broadcast_to(x, s)`` from no input; updated
    in place and also returned, the update went into the copy returned unchanged and the
    updated copy was never written (zeros; program 19033 with scatters). The same with
    every dtype: a 64-bit splat updated in place and returned fails to compile in IREE,
    so those stay computed (aotc-fold-splats)."""
    x = np.arange(17, dtype=np.int32)
    y = np.zeros(17, bool)
    rows = np.array([0, -1, 2, 0])

    def updates(m, h, x, y):
        zero = (m.broadcast_to(x, (3, 17)) * 0) == 0
        same = m.equal(x, m.broadcast_to(x, (3, 17)))
        ones = [(m.broadcast_to(x, (3, 17)) * 0 + 1).astype(t)
                for t in (np.int8, np.int32, np.float32, np.int64, np.float64)]
        return (h.at_set(zero, 1, y), zero, h.at_min(same, rows, y), h.at_max(same, -3, y),
                *[r for v in ones for r in (h.at_set(v, 1, y.astype(v.dtype)), v)])

    got = aotc.jit(lambda x, y: updates(anp, AotcHelpers, x, y))(x, y)
    for g, w in zip(got, updates(np, NumpyHelpers, x, y)):
        np.testing.assert_array_equal(np.asarray(g), w)


@pytest.mark.parametrize("seeds, mode", [
    ([8812, 8819], "export:local-task"), ([13350, 13358], "export:local-task"),
    ([15620, 15627], "export:local-sync"), ([17978, 17979], "export:local-task"),
    ([19496, 19498, 19503], "vmap"), ([17113], "donate")])
def test_shared_update_destinations_beside_other_programs(seeds, mode):
    """An update made in place into a value also used otherwise (updated twice, stacked,
    read by a cumsum) came back wrong beside an unrelated program in one function, each
    program alone right: IREE's clone of the shared destination (aotc-copy-shared-
    destinations now makes the copy itself)."""
    assert_programs_agree(seeds, mode)


def test_returned_value_iree_folds_to_the_donated_argument():
    """``where(x != x > 0, ..., x)`` on uint64 is x once IREE has folded it: the donation
    analysis took it for a new tensor and wrote another result into the donated x's
    buffer (program 10264: the returned x all zeros)."""
    assert_programs_agree([10264], "donate")
    x = np.arange(17, dtype=np.uint64)

    def f(m, x):
        same = m.where((x != x) > 0, x * 0, x)
        return same, m.minimum(x == x, same) + 1

    assert_donated_call_matches_numpy(f, x)


def test_reduction_over_unit_axes_of_a_concatenation():
    """IREE failed to compile a min over a size-1 axis of a rolled array ("expected rank
    to be smaller or equal to the other rank": program 18385); a reduction over unit axes
    only is now an elementwise op. Every reduction kind over unit axes, against numpy."""
    x = np.array([[3.0, -1.0, 0.5], [-0.0, np.nan, 2.0]], np.float16)

    def unit(m, x):
        r = m.roll(m.prod(x, axis=-1, keepdims=True), -1, axis=None)
        return (m.min(r, axis=1), m.max(r, axis=1, keepdims=True), m.sum(r, axis=1),
                m.prod(r, axis=1), m.argmax(r, axis=1), m.any(r, axis=1), m.mean(r, axis=1),
                m.min(m.min(r, axis=1), axis=0, keepdims=True))

    got = aotc.jit(lambda x: unit(anp, x))(x)
    with np.errstate(all="ignore"):
        for g, w in zip(got, unit(np, x)):
            np.testing.assert_array_equal(np.asarray(g), w)
    assert_programs_agree([18385], "export:local-sync")


@pytest.mark.parametrize("dtype", ["int64", "float64", "complex64", "complex128"])
def test_wide_constant_returned_and_updated(dtype):
    """A constant of 8-byte elements returned and updated in place failed to compile
    ("stream.yield op used resource not listed in explicit captures"; program 3158), and
    updated twice the second update saw the first."""
    y = np.arange(1, 18).astype(dtype)

    def f(m, h, y):
        v = m.ones((3, 17), dtype)
        return v, h.at_set(v, 1, y), h.at_add(v, 0, y), h.at_set(v, np.s_[2, ::2], y[0])

    got = aotc.jit(lambda y: f(anp, AotcHelpers, y))(y)
    for g, w in zip(got, f(np, NumpyHelpers, y)):
        np.testing.assert_array_equal(np.asarray(g), w)
    if dtype == "int64":
        assert_programs_agree([3158], "export:local-sync")
    assert_programs_agree([19033], "jit")


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_scalar_bool_broadcast_returned_beside_its_bytes(dtype):
    """``v = broadcast_to(b, s).astype(int8); return v != 0, v`` of a bool scalar failed to
    compile ("write affecting operations on global resources are restricted to workgroup
    distributed contexts"; program 19274): IREE folds ``v != 0`` back to ``b`` and yields
    ``b`` beside its own byte copy (aotc-split-bool-broadcasts). Other widths and
    non-scalar bools, against numpy."""
    def f(m, b, rows):
        v = m.broadcast_to(b, (5, 33)).astype(dtype)
        w = m.broadcast_to(rows, (5, 33)).astype(dtype)
        f32 = m.broadcast_to(b, (5, 33)).astype(np.float32)
        return v != 0, v, w != 0, w, f32 != 0, f32, m.logical_and(v, v)

    rows = np.arange(33) % 3 == 0
    for b in (np.bool_(True), np.bool_(False)):
        got = aotc.jit(lambda b, rows: f(anp, b, rows))(b, rows)
        for g, w in zip(got, f(np, b, rows)):
            np.testing.assert_array_equal(np.asarray(g), w)


def test_bool_from_nothing_after_unit_dimensions_go():
    """``min(x, axis=0) >= x`` of a (1, n) bool is ``x >= x`` once IREE drops the unit
    dimension: IREE computed it from nothing in a dispatch of its own, which it then
    left outside every execution region beside a loop ("streamable op expected to be in
    an execution region"; program 13805). aotc-fold-splats' probe drops unit dimensions
    as IREE does, so it is a constant."""
    x = np.array([[False, False, True]])

    def f(m, x):
        same = m.min(x, axis=0) >= x
        return same, m.sort(m.fmod(same, m.min(x, axis=0)), axis=1)

    def loop(c):
        return aotc.lax.fori_loop(0, 3, lambda i, c: c * 3 - 1, c)

    got = aotc.jit(lambda x: (lambda s, r: (s, loop(r)))(*f(anp, x)))(x)
    with np.errstate(all="ignore"):
        same, rest = f(np, x)
    for _ in range(3):
        rest = rest * 3 - 1
    np.testing.assert_array_equal(np.asarray(got[0]), same)
    np.testing.assert_array_equal(np.asarray(got[1]), rest)


def test_vmap_of_a_diagonal_beside_other_uses_of_its_operand():
    """vmap of ``diagonal(x | y)`` beside other uses of ``x | y``: IREE raised the
    diagonal to a slice of ``x | y`` and formed dispatch regions reading it before its
    definition ("operand #0 does not dominate this use"; program 17636); the compile
    retries at dispatch-creation O1 (``compiler.FALLBACKS``). Against a loop."""
    rng = np.random.default_rng(0)
    x = rng.integers(-2**15, 2**15, size=2).astype(np.int16)
    y = rng.integers(-2**62, 2**62, size=(2, 1, 8))

    def f(m, x, y):
        both = m.bitwise_or(x, y)
        size = m.absolute(y)
        odd = m.logical_xor(size, both)
        return size, m.diagonal(both), odd, m.fmod(m.diagonal(both), odd)

    got = aotc.jit(aotc.vmap(lambda x, y: f(anp, x, y)))(x, y)
    with np.errstate(all="ignore"):
        want = [np.stack(r) for r in zip(*(f(np, a, b) for a, b in zip(x, y)))]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)


def test_donated_update_returned_and_fed_to_a_loop():
    """``v = x.at[i].add(u)`` of a donated x, returned and also a loop's initial carry:
    the carry's barrier made IREE copy x's buffer into itself at run time ("source and
    target ranges overlap within the same buffer"; programs 6513+6514). Against the
    undonated call, for a scatter, a slice update and a reshape of an update, beside
    unrelated work. An update also read together with the loop's result keeps its barrier
    (IREE fails to order it otherwise: "circular dependency", 57645, 9700 also in plain
    jit), and its donation is refused."""
    def scatter(x, u, y):
        v = x.at[np.array([3, 8, 3])].add(u)
        loop = aotc.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2 + 1),
                                   (0, v))[1]
        return v, loop, anp.hypot(y, 2.0)

    def rows(x, u, y):
        v = x.at[2:5].set(u)
        return v, aotc.lax.fori_loop(0, 3, lambda i, c: c * 2 + 1, v), anp.hypot(y, 2.0)

    def expanded(x, u, y):  # the carry a reshape of the update (27953+27954)
        v = x.at[-4].add(u[0])
        loop = aotc.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2 + 1),
                                   (0, v[None]))[1]
        return v, loop, anp.hypot(y, 2.0)

    def read_after(x, u, y):  # the update read again after the loop, not returned (57645)
        v = x.at[19].min(u[0])
        loop = aotc.lax.fori_loop(0, 3, lambda i, c: c * 3 - 1, v)
        return anp.sqrt(v), anp.fmod(loop, v + 1), anp.hypot(y, 2.0)

    def returned_and_read_after(x, u, y):  # both: returned and read with the loop (9700)
        v = x.at[np.array([0, 0, 0])].add(u)
        loop = aotc.lax.fori_loop(0, 3, lambda i, c: c * 3 - 1, v)
        return v, loop != anp.all(v), anp.hypot(y, 2.0)

    x, u, y = np.arange(31.0), np.array([1.0, 2.0, 3.0]), np.arange(16.0)
    for f in (scatter, rows, expanded, read_after, returned_and_read_after):
        want = [np.asarray(w) for w in aotc.jit(f)(x, u, y)]
        with warnings.catch_warnings():
            warnings.simplefilter("error" if f in (scatter, rows, expanded) else "ignore")
            got = aotc.jit(f, donate_argnums=0)(aotc.device_put(x), u, y)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), w)


def test_donated_bool_result_read_by_another_result():
    """``v = ~x`` written into a donated bool x's buffer, and ``rint(v)``: IREE computes
    ``~x`` again, from x's buffer, in the rint's dispatch, which read the new x (program
    22372: rint came back 1.0 where numpy's is 0.0). That use reads x: the donation is
    refused (a warning); ``~x`` alone is still written in place."""
    x = np.array([True, True, False])

    def both(x):
        v = ~x
        return v, anp.rint(v), anp.sum(v, keepdims=True)

    with pytest.warns(aotc.DonationWarning, match="read by"):
        got = aotc.jit(both, donate_argnums=0)(aotc.device_put(x))
    for g, w in zip(got, (~x, np.rint(~x), np.sum(~x, keepdims=True))):
        np.testing.assert_array_equal(np.asarray(g), w)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        alone = aotc.jit(lambda x: ~x, donate_argnums=0)(aotc.device_put(x))
    np.testing.assert_array_equal(np.asarray(alone), ~x)


def test_donated_argument_widened_and_returned_beside_its_update():
    """``v = x.astype(float64)`` of a donated uint8 x, returned, beside ``minimum(x,
    v != 0)`` written into x's buffer: IREE clones a widening into each dispatch that
    reads it, and the copy in the returned value's dispatch read the new x (program
    28188 beside 28195: 99 of 100 values 1.0 where numpy's are x). Against the
    undonated call."""
    x = (np.arange(100) * 37 % 251).astype(np.uint8)

    def f(m, x):
        v = x.astype("float64")
        return v, m.minimum(x, m.logical_and(v, v))

    assert_donated_call_matches_numpy(f, x)


def test_sort_of_a_column_of_a_loop_result():
    """argsort of ``ys[..., 0]``, ys a scan's stacked outputs, failed to compile ("LLVM
    Translation failed for operation: builtin.unrealized_conversion_cast"; programs
    21932, 22817): IREE fused the strided column into the sorting network's gathers.
    The network now reads a copy of a strided slice (``lowering.gather_source``)."""
    x = np.random.default_rng(0).normal(size=(31, 7))

    def stacked(x):
        rows, c = [], x[0] * 0
        for r in x:
            rows.append(c * 2)
            c = c + r
        return np.stack(rows)

    def f(x):
        ys = aotc.lax.scan(lambda c, r: (c + r, c * 2), x[0] * 0, x)[1]
        return anp.argsort(ys[..., 0], kind="stable"), anp.sort(ys[:, 3]), ys[..., 0]

    got = aotc.jit(f)(x)
    ys = stacked(x)
    for g, w in zip(got, (np.argsort(ys[..., 0], kind="stable"), np.sort(ys[:, 3]), ys[..., 0])):
        np.testing.assert_array_equal(np.asarray(g), w)
    # a narrow integer column: its widening to int32 carried the slice along (55512)
    u = (np.arange(8 * 8 * 31) * 7919 % 65521).astype(np.uint16).reshape(8, 8, 31)
    got = aotc.jit(lambda u: (u % 5, anp.argsort((u % 5)[..., 0], kind="stable")))(u)
    np.testing.assert_array_equal(np.asarray(got[1]), np.argsort((u % 5)[..., 0], kind="stable"))


def test_donated_update_ordered_after_a_loop_carry_that_is_returned():
    """``m = max(x, axis=0)``, a returned while_loop's initial carry, also reads the
    donated x before ``x.at[7].min(s)`` is written into it: the barrier ordering the
    update took m, which IREE keeps in the returned loop result's storage, beside its own
    temporaries ("all of {operands, results} have same type"; program 27104). The
    donation is now refused there (a warning) and the values are numpy's."""
    x = (np.arange(17 * 31) * 7919 % 65521).astype(np.uint16).reshape(17, 31)

    def f(x, s):
        m = anp.max(x, axis=0)
        loop = aotc.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2 + 1),
                                   (0, m))[1]
        return x.at[7].min(s), loop

    want_loop = x.max(axis=0)
    for _ in range(3):
        want_loop = want_loop * 2 + 1
    want = x.copy()
    want[7] = np.minimum(want[7], 7)
    with pytest.warns(aotc.DonationWarning, match="returned"):
        got = aotc.jit(f, donate_argnums=0)(aotc.device_put(x), 7)
    np.testing.assert_array_equal(np.asarray(got[0]), want)
    np.testing.assert_array_equal(np.asarray(got[1]), want_loop)


def test_donated_cond_result_ordered_by_tensors_only():
    """``lax.cond`` on a value computed from a donated scalar x, its result written into
    x's buffer after another result's read of x: the ordering barrier took the cond's
    i1 condition beside a tensor, and IREE's stream analysis then crashed the process in
    about half the compiles (program 38187). The barrier now takes the tensor the
    condition is read from, and the condition is read again after it."""
    import re

    def f(x, y):
        b = anp.broadcast_to(x, (3,))
        return anp.mean(b), aotc.lax.cond(anp.sum(b > 0) > 0, lambda t: t * 2,
                                          lambda t: t - 1, b[0]), y + 1

    x, y = np.int64(-3), np.arange(3.0)
    lowered = aotc.jit(f, donate_argnums=0).lower(x, y).as_text()
    barriers = re.findall(r"util.optimization_barrier [^\n]*: ([^\n]*)", lowered)
    assert barriers and all(
        all(t.strip().startswith("tensor<") for t in types.split(",")) for types in barriers)
    for x in (np.int64(-3), np.int64(5)):
        got = aotc.jit(f, donate_argnums=0)(aotc.device_put(x), y)
        want = (np.mean([x] * 3), x * 2 if x > 0 else x - 1, y + 1)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), w)


def test_scalars_computed_from_nothing_returned_together():
    """``v = x ^ x`` of a 0-d int64 x, ``power(v, v)``, ``fmin(v, power(v, v))``: IREE
    computed these from nothing in one dispatch and returned True for v and 0 for the
    power (program 31831). The probe now merges the repeated ops of fused bodies as IREE
    does, so aotc-fold-splats makes them constants."""
    def f(m, x):
        v = m.logical_xor(x, x)
        p = m.power(v, v)
        return v, p, m.fmin(v, p), m.signbit(m.logical_not(v))

    for x in (np.int64(2), np.int64(0)):
        got = aotc.jit(lambda x: f(anp, x))(x)
        for g, w in zip(got, f(np, x)):
            np.testing.assert_array_equal(np.asarray(g), w)


def test_donated_result_after_a_scan_whose_carry_is_dropped():
    """A scan over a donated bool x, its stacked outputs read by the result written into
    x and its final carry unused: the ordering barrier took that unused carry, which
    IREE gave a constant's storage ("all of {operands, results} have same type";
    program 31226). An unused reader result needs no order and is left out."""
    def f(x):
        ys = aotc.lax.scan(lambda c, xi: (c + xi, c * 2), x[0] * 0, x)[1]
        a = anp.arctan2(ys, ys + 1)
        return a >= 0

    x = np.array([True, False, True])
    ys, c = [], 0
    for xi in x:
        ys.append(c * 2)
        c = c + int(xi)
    want = np.arctan2(np.array(ys), np.array(ys) + 1) >= 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the donation may be refused
        got = aotc.jit(f, donate_argnums=0)(aotc.device_put(x))
    np.testing.assert_array_equal(np.asarray(got), want)


def test_values_fused_from_nothing_and_returned():
    """``tanh(x ^ x)`` of a float16 x returned beside ``isnan`` and ``log1p`` of it: IREE
    fused them into one generic computed once at load time, whose bool and float16
    results overlapped ("invalid Read access range ... of resource
    %__hoisted_tensor_i1"; program 32665). aotc-fold-splats now also finds returned
    values that are constants inside a fused generic."""
    def f(m, x):
        t = m.tanh(m.logical_xor(x, x))
        return t, m.isnan(t), m.log1p(m.isnan(t))

    for x in (np.float16(-93.75), np.float16(0)):
        got = aotc.jit(lambda x: f(anp, x))(x)
        for g, w in zip(got, f(np, x)):
            np.testing.assert_array_equal(np.asarray(g), w)


def test_donated_update_beside_a_stack_of_a_value_it_reads():
    """``v = x + isinf(x)`` of a donated int16 x, ``maximum(v, 2)`` written into x's
    buffer and ``stack([v, -v])`` returned: IREE computes v again inside the dispatch
    that writes it into the stack, which read the new x (program 35968: 30 of 56 values
    2). Such a value reads the argument where it is inserted; the donation is ordered
    or refused."""
    x = (np.arange(28, dtype=np.int16) * 37 - 500).reshape(7, 4)

    def f(m, x):
        v = m.add(m.isinf(x), x)
        return m.maximum(v, 2), m.stack([v[None], -v[None]])

    assert_donated_call_matches_numpy(f, x)


def test_donated_update_beside_a_reader_of_a_value_iree_folds_to_the_argument():
    """``v = x & x`` is x once IREE folds it: ``arccos(v)`` read x itself, after
    ``fmod(v, v)`` had been written into the donated x's buffer (programs 44466+44469:
    29 of 31 values arccos(0) where numpy's are NaN). aotc-fold-to-arguments makes such
    a value the argument before the donation analysis."""
    x = np.arange(31, dtype=np.uint32) * 7

    def f(m, x):
        v = m.bitwise_and(m.maximum(x, x), x + 0)
        return m.arccos(v), m.fmod(v, m.bitwise_or(v, 1))

    assert_donated_call_matches_numpy(f, x)


def test_compile_that_kept_too_much_stack():
    """IREE 3.13 kept more than its 32 KiB of stack for ``fmin(any(cos(x)), cos(x))`` of
    a uint64 (8, 2, 256) x (program 44193): the compile retries at dispatch-creation O1
    (``compiler.FALLBACKS``)."""
    assert_programs_agree([44193], "jit")


def test_diagonals_of_one_element():
    """The diagonal of a (1, 100, 1) value, a gather at constant positions, was raised by
    IREE to a slice of the wrong rank ("expected rank to be smaller or equal to the other
    rank"; program 49846): a diagonal of length one is a slice. Against numpy, with
    offsets and other axes."""
    x = np.arange(300, dtype=np.float64).reshape(3, 100, 1) / 7

    def f(m, x):
        return (m.diagonal(m.log1p(x[:1])), m.diagonal(x, 0, 1, 2), m.diagonal(x, 99, 1, 0),
                m.diagonal(x[0], -2), m.sin(m.diagonal(x[:1])))

    got = aotc.jit(lambda x: f(anp, x))(x)
    for g, w in zip(got, f(np, x)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-15)


def test_strided_slices_of_widened_arrays():
    """A widening cast read through a strided slice: IREE cloned the cast into the
    consumer's dispatch and dropped the stride (``x.astype(np.float64)[::2] + 1`` came
    back as ``x[:4] + 1``; program 69581: ``clip`` of a bool, ``.at[0::2].add``)."""
    rng = np.random.default_rng(7)
    flags = np.array([False, True, False, True, False, False, True, False])
    cases = [
        (rng.random(8).astype(np.float32), lambda m, h, x: x.astype(np.float64)[0::2] + 1),
        (rng.random(8).astype(np.float16), lambda m, h, x: x.astype(np.float32)[1::3] * 2),
        (rng.integers(0, 100, 8).astype(np.uint8), lambda m, h, x: x.astype(np.float32)[::2] - 1),
        (flags, lambda m, h, x: x.astype(np.int64)[0::2] + np.arange(4)),
        (flags, lambda m, h, x: h.at_add(m.clip(x, -2, 3), np.s_[0::2], np.arange(10, 50, 10))),
        (rng.integers(0, 9, (6, 6)).astype(np.int8),
         lambda m, h, x: x.astype(np.int32)[::2, 1::2] + 1),
    ]
    for x, f in cases:
        got = np.asarray(aotc.jit(lambda x: f(anp, AotcHelpers, x))(x))
        np.testing.assert_array_equal(got, f(np, NumpyHelpers, x))


# The long runs' findings of 2026-12-05 and -06 (seeds 0-109999), a batch per mode
# compiled as one module as the long run does: programs that failed only together stay
# together (15673+15675 and 19509+19512: the ordering barrier's copies of a dispatch's
# result updated in place and of a reader's update; 49556+49560+49562: a returned value
# read by a result aotc-fuse-siblings merged; 95761+95771: a loop dispatch run in the
# buffer of a mean read after it). The tests above reproduce most alone.
LONG_RUN_FINDINGS = {
    "donate": [6513, 6514, 9700, 13805, 15673, 15675, 19509, 19512, 22372, 27104, 27953, 27954,
               57645, 28188, 28195, 31226, 31831, 32665, 35968, 44466, 44469, 66992, 66995,
               95552],
    "vmap": [17636, 21932, 26494, 35176, 49556, 49560, 49562, 61763, 78357],
    "jit": [9700, 10119, 49846, 54132, 56480, 67680, 95761, 95771, 109070],
    "export:local-sync": [46516, 69581],
    "export:local-task": [22817, 50950, 55512, 62574, 62577, 63831, 63833, 77731, 111912],
}


@pytest.mark.parametrize("mode", sorted(LONG_RUN_FINDINGS))
def test_long_run_findings(mode):
    assert_programs_agree(LONG_RUN_FINDINGS[mode], mode)


def test_update_of_a_value_computed_from_constants_alone():
    """A sort of a constant (``isinf`` of integers) returned beside an update of a value
    computed from it (``signbit(fmax(...)).at[3::2].max(b)``): IREE evaluated both when
    compiling and the two results came back exchanged (program 111912, every mode). The
    update's destination gets a run-time copy (aotc-copy-shared-destinations)."""
    x, b = np.arange(100, dtype=np.int64), np.arange(49) % 3 == 0

    def f(m, h, x, b):
        v = m.sort(m.isinf(x))
        return v, h.at_max(m.signbit(m.fmax(v, m.isinf(x))), np.s_[3::2], b)
    got = aotc.jit(lambda x, b: f(anp, AotcHelpers, x, b))(x, b)
    want = f(np, NumpyHelpers, x, b)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)


def test_update_of_a_broadcast_matmul_result_that_reads_it():
    """``broadcast_to(a @ b, s).at[2::3].add(u)``: aotc's explicit copy of the shared
    destination (aotc-copy-shared-destinations) made IREE lose the update (program
    56480, plain jit: row 2 came back without u). A destination read only by the
    update's own source gets no copy."""
    a, b, u = np.array([87.43, -0.0]), np.linspace(-1, 2, 6).reshape(2, 3), np.ones((1, 3))

    def f(m, h, a, b, u):
        v = m.broadcast_to(a @ b, (3, 3))
        w = h.at_add(v, np.s_[2::3], u)
        return w, m.sum(w, axis=1, keepdims=True), h.at_add(v, 2, u[0])

    got = aotc.jit(lambda a, b, u: f(anp, AotcHelpers, a, b, u))(a, b, u)
    for g, w in zip(got, f(np, NumpyHelpers, a, b, u)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-14)


def test_pairwise_ops_of_a_reduction():
    """``n[:, None] + n[None, :]`` of ``n = sum(x * x, axis=1)`` (pairwise distances'
    norms), and the same over axis 0, a max, a pairwise fmin through a transpose of a
    min with NaNs: IREE 3.13 fused the reduction into the pairwise consumer and read
    values its tile had not reduced (sums off by up to 234; program 54132: 224 of 256
    NaNs lost). aotc-shield-reductions reads such a reduction through a barrier."""
    x = np.random.default_rng(0).normal(size=(100, 16)).astype(np.float32)
    y = np.ones((100, 16), np.float16)
    y[37] = np.nan

    def f(m, x, y):
        rows, cols, top = m.sum(x * x, axis=1), m.sum(x * x, axis=0), m.max(x, axis=0)
        low = m.min(y, axis=0)[None]
        return (rows[:, None] + rows[None, :], cols[:, None] + m.sqrt(cols)[None, :],
                top[:, None] - top[None, :], m.fmin(m.transpose(low, (1, 0)), low))

    got = aotc.jit(lambda x, y: f(anp, x, y))(x, y)
    for g, w in zip(got, f(np, x, y)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-6, atol=1e-4)
