"""Loops of scalar steps as one dispatch (passes/loops_in_dispatch.py): the same values as numpy's
Python loops and as the per-op form (``loop_dispatch_max_work=0``), the loop really in
one dispatch (no silent retry without it), arguments left unchanged, donation, the
loops that keep their form, and the compile's retry without the dispatches."""

from __future__ import annotations

import re

import numpy as np
import pytest

import aotc
import aotc.lax as lax
import aotc.numpy as anp
from aotc import compiler, targets
from aotc.errors import CompileError
from aotc.passes import loops_in_dispatch, row_loops, scalarize, unroll_loops
from tests.fuzz.helpers import AotcHelpers, NumpyHelpers

from .test_control_flow import PyLax


# Each case is written once over (m, lax, h): aotc.numpy, aotc.lax and the fuzzer's .at
# helpers, or numpy, test_control_flow's Python-loop PyLax and their numpy twins.

def _recurrence(m, lax_, h, x):
    return lax_.fori_loop(1, x.shape[0], lambda i, x: h.at_set(x, i, 0.5 * x[i - 1] + x[i]), x)


def _prefix_sums(m, lax_, h, x):
    """A while loop with a counter, a scalar accumulator and an element update."""
    def body(c):
        i, s, y = c
        return i + 1, s + x[i], h.at_set(y, i, s)
    return lax_.while_loop(lambda c: c[0] < x.shape[0], body, (0, x[0] * 0, m.zeros_like(x)))


def _rows(m, lax_, h, x):
    """Nested loops: a row sweep whose rows are built element by element."""
    def row(i, a):
        return lax_.fori_loop(0, a.shape[1], lambda j, a: h.at_add(a, (i, j), a[i - 1, j]), a)
    return lax_.fori_loop(1, x.shape[0], row, x)


def _scan_scalar_carry(m, lax_, h, x):
    return lax_.scan(lambda c, v: (c * 0.5 + v, c), x[0] * 0, x)


def _traced_bounds(m, lax_, h, x, n):
    return lax_.fori_loop(0, n, lambda i, c: (c[0] + x[i], h.at_multiply(c[1], i, 2)),
                          (x[0] * 0, x))


def _dynamic_programming(m, lax_, h, seq):
    """Nussinov-style cells whose choices are bools of the loop counters (``j > 0``),
    which the host computes (aotc-host-scalars) and selects on the device read whole."""
    n = seq.shape[0]

    def row(t, table):
        i = n - 1 - t

        def cell(j, table):
            best = m.maximum(table[i, j], m.where(j > 0, table[i, j - 1], table[i, j]))
            best = m.maximum(best, m.where(i + 1 < n, table[i + 1, j], best))
            pair = m.where(seq[i] + seq[j] == 3, 1, 0)
            inner = m.where(i < j - 1, table[i + 1, j - 1] + pair, table[i + 1, j - 1])
            return h.at_set(table, (i, j), m.maximum(best, m.where(j > 0, inner, best)))
        return lax_.fori_loop(i + 1, n, cell, table)
    return lax_.fori_loop(0, n, row, m.zeros((n, n), seq.dtype))


def _traced(case):
    return lambda *args: case(anp, lax, AotcHelpers, *args)


def _numpy(case, *args):
    return case(np, PyLax, NumpyHelpers, *args)


def _no_retry(monkeypatch):
    """Fails the test if a compile falls back to the per-op form."""
    def refuse(mlir):
        raise AssertionError("the compile fell back to the loops' per-op form")
    monkeypatch.setattr(loops_in_dispatch, "without_loop_dispatches", refuse)


CASES = {
    "recurrence": (_recurrence, lambda: (np.linspace(-1, 1, 300).astype(np.float32),)),
    "prefix_sums": (_prefix_sums, lambda: (np.arange(1, 65, dtype=np.int32),)),
    "rows": (_rows, lambda: (np.arange(48, dtype=np.float64).reshape(6, 8) / 7,)),
    "scan_scalar_carry": (_scan_scalar_carry,
                          lambda: (np.linspace(0, 3, 40).astype(np.float32),)),
    "traced_bounds": (_traced_bounds, lambda: (np.arange(10, dtype=np.float32), np.int32(7))),
    "dynamic_programming": (_dynamic_programming,
                            lambda: (np.random.default_rng(7).integers(0, 4, 14, np.int32),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_small_loop_is_one_dispatch_with_numpy_values(name, monkeypatch):
    _no_retry(monkeypatch)
    case, inputs = CASES[name]
    args = inputs()
    jitted = aotc.jit(_traced(case))
    assert "flow.dispatch.workgroups" in jitted.lower(*args).as_text()
    got = aotc.tree_util.tree_leaves(jitted(*args))
    want = aotc.tree_util.tree_leaves(_numpy(case, *args))
    with aotc.config.override(loop_dispatch_max_work=0):
        per_op = aotc.jit(_traced(case))
        assert "flow.dispatch.workgroups" not in per_op.lower(*args).as_text()
        per_op_got = aotc.tree_util.tree_leaves(per_op(*args))
    for g, p, w in zip(got, per_op_got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(p))


def test_carried_argument_is_left_unchanged(monkeypatch):
    """The dispatch updates its loop's carry in place, in a copy of the argument."""
    _no_retry(monkeypatch)
    x = np.linspace(-1, 1, 300).astype(np.float32)
    kept = x.copy()
    on_device = aotc.device_put(x)
    jitted = aotc.jit(_traced(_recurrence))
    first = np.asarray(jitted(on_device))
    second = np.asarray(jitted(on_device))
    np.testing.assert_array_equal(x, kept)
    np.testing.assert_array_equal(np.asarray(on_device), kept)
    np.testing.assert_array_equal(first, second)


def test_donated_carry(monkeypatch):
    """Donation of a loop's carry is refused (the in-place analysis does not look into
    loops): a warning, the values of the undonated call, the argument intact."""
    _no_retry(monkeypatch)
    x = np.linspace(-1, 1, 16384).astype(np.float32)
    want = np.asarray(aotc.jit(_traced(_recurrence))(x))
    donated = aotc.jit(_traced(_recurrence), donate_argnums=0)
    state = aotc.device_put(x)
    with pytest.warns(aotc.DonationWarning, match="scf.for"):
        got = donated(state)
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(state), x)


def test_constant_initial_values_are_not_shared():
    """Two loops start from equal constants (IREE stores them once): the one in a
    dispatch does not write into the other's (a counter started at 27, not 0)."""
    def f(x, lo, hi):
        first = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + x[0]), (0, 0))
        second = lax.fori_loop(lo, hi, lambda i, c: (c[0] + i, c[1] + x),
                               (anp.zeros((), lo.dtype), x))
        return first, second

    x = np.array([9, 18, 16, 0, 18], np.int32)
    got = aotc.jit(f)(x, np.int32(2), np.int32(6))
    (count, total), (indices, sums) = [[np.asarray(v) for v in pair] for pair in got]
    assert (count, total, indices) == (3, 27, 14)
    np.testing.assert_array_equal(sums, 5 * x)


def _row_sweep(x):
    return lax.fori_loop(1, x.shape[0], lambda i, x: x.at[i].set(0.5 * (x[i - 1] + x[i])), x)


def _row_sweep_numpy(x):
    x = x.copy()
    for i in range(1, x.shape[0]):
        x[i] = 0.5 * (x[i - 1] + x[i])
    return x


def _triangular_solve(lower, b):
    """Forward substitution by rows: a dot product of a masked row per step."""
    def step(i, x):
        row = anp.where(anp.arange(b.shape[0]) < i, lower[i], 0.0)
        return x.at[i].set((b[i] - row @ x) / lower[i, i])
    return lax.fori_loop(0, b.shape[0], step, anp.zeros_like(b))


def test_row_updates_run_as_one_dispatch():
    """A loop whose steps update rows (elementwise ops, reductions and slice writes of
    more than one element) runs as one dispatch with those ops as scalar loops
    (passes/scalarize.py), with numpy's values."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((40, 24)).astype(np.float32)
    lower = np.tril(rng.standard_normal((30, 30))) + 6 * np.eye(30)
    b = rng.standard_normal(30)
    for fn, args, want in ((_row_sweep, (x,), _row_sweep_numpy(x)),
                           (_triangular_solve, (lower, b), np.linalg.solve(lower, b)),
                           (lambda x: lax.fori_loop(0, 3, lambda i, x: x.at[i].multiply(2.0), x),
                            (x,), np.concatenate([2 * x[:3], x[3:]]))):
        jitted = aotc.jit(fn)
        text = jitted.lower(*args).as_text()
        assert "flow.dispatch.workgroups" in text and "aotc.scalarized_loop" in text
        np.testing.assert_allclose(np.asarray(jitted(*args)), want, rtol=1e-6, atol=1e-12)


def _matrix_row_sums(a, y):
    """Each step sums every row of ``a * y``: a sum per output element (a parallel loop
    around the reduction), of which one is written."""
    def step(i, y):
        return y.at[i].set(anp.sum(a * y[None, :], axis=1)[i] + y[i])
    return lax.fori_loop(0, y.shape[0], step, y)


def _matrix_row_sums_numpy(a, y):
    y = y.copy()
    for i in range(y.shape[0]):
        y[i] = np.sum(a * y[None, :], axis=1)[i] + y[i]
    return y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [15, 16, 37])
def test_float_sums_in_loops_run_as_partial_sums(n, dtype):
    """A float sum over a row in a loop dispatch runs as scalarize.SUM_CHAINS partial
    sums (rows of at least twice as many elements; the rest added to the first), with
    numpy's values: a row dot per step (forward substitution), every row's sum per step."""
    rng = np.random.default_rng(3)
    lower = (np.tril(rng.standard_normal((n, n))) + 4 * np.eye(n)).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    a = (rng.standard_normal((n, n)) * 0.1).astype(dtype)
    element = np.dtype(dtype).itemsize * 8
    partial_sums = re.compile(rf"-> \((f{element}, ){{7}}f{element}\)")
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    for fn, args, want in ((_triangular_solve, (lower, b), np.linalg.solve(lower, b)),
                           (_matrix_row_sums, (a, b), _matrix_row_sums_numpy(a, b))):
        jitted = aotc.jit(fn)
        text = jitted.lower(*args).as_text()
        assert "flow.dispatch.workgroups" in text
        assert bool(partial_sums.search(text)) == (n >= 2 * scalarize.SUM_CHAINS)
        np.testing.assert_allclose(np.asarray(jitted(*args)), want, rtol=tolerance,
                                   atol=tolerance)


def _python_loop(step, x, trips):
    for i in range(trips):
        x = step(np, i, x)
    return x


@pytest.mark.parametrize("name, step", [
    ("affine", lambda m, i, x: x * 0.999 + 0.001),
    ("reads a reduction first", lambda m, i, x: x / m.sum(x) + m.float32(i) * x),
    ("with a neighbour's value", lambda m, i, x: m.roll(x, 1) * 0.5 + x),
], ids=lambda v: v if isinstance(v, str) else "")
def test_small_carries_computed_afresh_are_written_in_place(name, step):
    """A carry computed afresh by elementwise ops that read it only at the element they
    write is written in place by scalar loops, in one dispatch (one tile of
    pointwise_tiles: larger carries run tile by tile); one read at another element
    (``roll``) keeps one dispatch per op. numpy's values either way."""
    x = np.linspace(0.5, 1.5, 200).astype(np.float32)
    jitted = aotc.jit(lambda x: lax.fori_loop(0, 20, lambda i, x: step(anp, i, x), x))
    in_dispatch = "flow.dispatch.workgroups" in jitted.lower(x).as_text()
    assert in_dispatch == (name != "with a neighbour's value")
    np.testing.assert_allclose(np.asarray(jitted(x)), _python_loop(step, x, 20), rtol=2e-5)


@pytest.mark.parametrize("shape, dtype", [
    ((262144,), np.float32), ((10000,), np.float32), ((300, 100), np.float32),
    ((30000,), np.float64)], ids=str)
def test_pointwise_loops_run_tile_by_tile_on_many_workgroups(shape, dtype):
    """A pointwise carry of more than one tile (``pointwise_tiles``) runs all its steps
    tile by tile, the tiles shared out over workgroups (one per tile), in one dispatch:
    numpy's values, with another array read pointwise and the step number in the
    update, for 1-D and 2-D carries (rows of 400 bytes: 20 per tile) and float64; the
    function counts as one op."""
    x = np.random.default_rng(3).standard_normal(shape).astype(dtype)
    w = np.linspace(0.5, 1.0, x.size).reshape(shape).astype(dtype)

    def step(m, i, x):
        return x * w * 0.99 + m.asarray(i, dtype) * 0.001

    jitted = aotc.jit(lambda x: lax.fori_loop(0, 30, lambda i, x: step(anp, i, x), x))
    lowered = jitted.lower(x)
    text = lowered.as_text()
    assert text.count("flow.dispatch.workgroups[") == 1 and "aotc.tile_loop" in text
    # one op to the runtime's driver choice, not 30 steps' worth (its workgroups need
    # local-task's workers)
    assert lowered.cost_analysis()["ops"] == 1
    want = x
    for i in range(30):
        want = step(np, i, want)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(np.asarray(jitted(x)), want, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(np.asarray(jitted(x)), want, rtol=rtol, atol=rtol)  # again


@pytest.mark.parametrize("coupling, tiled", [("pointwise", True), ("neighbour", False)])
def test_carries_updated_together_run_tile_by_tile_where_pointwise(coupling, tiled):
    """Two carries updated from each other (a leapfrog step: v from the old x, x from the
    new v) run tile by tile together when every read is at the element computed; a read
    of the other carry at another element (``roll``) keeps them whole. numpy's values
    either way."""
    def step(m, x, v):
        other = x if coupling == "pointwise" else m.roll(x, 1)
        v = v - 0.01 * other
        return x + 0.01 * v, v

    x = np.linspace(-1, 1, 6000).astype(np.float32)
    v = np.cos(x).astype(np.float32)
    jitted = aotc.jit(lambda x, v: lax.fori_loop(0, 40, lambda i, c: step(anp, *c), (x, v)))
    assert ("aotc.tile_loop" in jitted.lower(x, v).as_text()) == tiled
    want = (x, v)
    for _ in range(40):
        want = step(np, *want)
    for got, expected in zip(jitted(x, v), want):
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("trips", [12, 50, 11, 97])
def test_loops_of_matmul_steps_run_several_steps_per_iteration(trips):
    """A loop whose step is a matmul keeps one dispatch per op; aotc-unroll-loops runs
    several steps per iteration of IREE's loop (a factor from 2 to 10), the steps left
    over by whole iterations (11 and 97 trips) in a copy of the loop after it. numpy's
    values, the step number read right in every copy and in the remainder."""
    rng = np.random.default_rng(4)
    h = rng.standard_normal((8, 16)).astype(np.float32)
    w = (rng.standard_normal((16, 16)) * 0.2).astype(np.float32)

    def step(m, i, h):
        return m.tanh(h @ w + m.float32(i) * 0.01)

    jitted = aotc.jit(lambda h: lax.fori_loop(0, trips, lambda i, h: step(anp, i, h), h))
    text = jitted.lower(h).as_text()
    assert "flow.dispatch" not in text
    factors = [int(k) for k in re.findall(r"aotc.unrolled = (\d+)", text)]
    assert 1 < factors[0] <= unroll_loops.MAX_FACTOR
    assert factors[1:] == ([1] if trips % factors[0] else [])  # the remainder's loop
    want = h
    for i in range(trips):
        want = step(np, i, want)
    np.testing.assert_allclose(np.asarray(jitted(h)), want, rtol=1e-5, atol=1e-6)


def test_masked_updates_of_a_whole_matrix_match_numpy():
    """A Doolittle LU written with masks (a column scaled and a rank-one update of the
    whole matrix per step, as in benchmarks/loops.py) runs as one dispatch with numpy's
    values: its carry is written in place, and its bool mask, read by two ops, is stored
    as bytes by the scalar loops (IREE keeps bools as bytes in a dispatch: a tensor.insert
    of an i1 failed to verify there). The float64 0.0 of ``where`` fills a float64 tensor
    through the fill's own body."""
    def lu(a):
        rows, cols = anp.arange(12)[:, None], anp.arange(12)[None, :]

        def step(k, a):
            column = anp.where(rows[:, 0] > k, a[:, k] / a[k, k], 0.0)
            pivot_row = anp.where(cols[0] > k, a[k], 0.0)
            a = a - column[:, None] * pivot_row[None, :]
            return anp.where((rows > k) & (cols == k), column[:, None], a)
        return lax.fori_loop(0, 11, step, a)

    a = np.random.default_rng(9).standard_normal((12, 12)) + 12 * np.eye(12)
    want = a.copy()
    for k in range(11):
        want[k + 1:, k] /= want[k, k]
        want[k + 1:, k + 1:] -= np.outer(want[k + 1:, k], want[k, k + 1:])
    jitted = aotc.jit(lu)
    lowered = jitted.lower(a)
    assert "flow.dispatch.workgroups" in lowered.as_text()
    # its scalar loops are LLVM's to vectorize (build.forms_dispatches)
    assert set(targets.LOOP_VECTORIZATION) <= set(lowered.flags)
    np.testing.assert_allclose(np.asarray(jitted(a)), want, rtol=1e-12)


def test_rows_read_where_they_are_written_need_no_copies():
    """Rows of the carry read at the element being written (x[i - 1], x[i]; x[0]) are
    read from the carry as the loop updates it: a [4, 16384] float32 sweep, whose copies
    of them (128 KiB) would not fit the dispatch's stack (IREE: 32 KiB), runs as one
    dispatch. A row read reversed or shifted along the row is copied: such a sweep of
    that size keeps one dispatch per op. numpy's values either way."""
    x = np.random.default_rng(8).standard_normal((4, 16384)).astype(np.float32)
    sweeps = {
        "in place": (_row_sweep, _row_sweep_numpy, True),
        "row 0": (lambda v: lax.fori_loop(1, 4, lambda i, v: v.at[i].set(v[i] * 2 + v[0]), v),
                  lambda v: _numpy_loop(v, lambda i, v: v[i] * 2 + v[0]), True),
        "reversed": (lambda v: lax.fori_loop(1, 4, lambda i, v: v.at[i].set(v[i - 1][::-1] + v[i]),
                                             v),
                     lambda v: _numpy_loop(v, lambda i, v: v[i - 1][::-1] + v[i]), False),
    }
    for name, (fn, numpy_fn, one_dispatch) in sweeps.items():
        jitted = aotc.jit(fn)
        assert ("flow.dispatch.workgroups" in jitted.lower(x).as_text()) == one_dispatch, name
        np.testing.assert_allclose(np.asarray(jitted(x)), numpy_fn(x), rtol=1e-6, err_msg=name)
    shifted = aotc.jit(lambda v: lax.fori_loop(1, 4, lambda i, v: v.at[i, 1:].set(v[i, :-1] + 1),
                                                v))
    want = x.copy()
    for i in range(1, 4):
        want[i, 1:] = want[i, :-1] + 1
    np.testing.assert_allclose(np.asarray(shifted(x)), want, rtol=1e-6)


def _numpy_loop(x, row):
    x = x.copy()
    for i in range(1, x.shape[0]):
        x[i] = row(i, x)
    return x


@pytest.mark.parametrize("kind", ["wide_rows", "large_op"])
def test_loops_that_keep_their_form(kind):
    """A pointwise carry whose rows are each larger than a tile
    (``pointwise_tiles.TILE_BYTES``) and has more than ``ROW_MAX_WORK`` elements, and
    ops that cannot be scalar loops (a matmul), keep one dispatch per op."""
    if kind == "wide_rows":
        shape = (2, row_loops.ROW_MAX_WORK)
        fn, args = (lambda x: lax.fori_loop(0, 5, lambda i, x: x * 0.5 + 1, x),
                    (np.ones(shape, np.float32),))
        want = np.full(shape, 1.96875, np.float32)
    else:
        fn, args = (lambda h, w: lax.fori_loop(0, 3, lambda i, h: anp.tanh(h @ w), h),
                    (np.full((64, 256), 0.01, np.float32), np.eye(256, dtype=np.float32)))
        want = np.tanh(np.tanh(np.tanh(args[0])))
    jitted = aotc.jit(fn)
    lowered = jitted.lower(*args)
    assert "flow.dispatch.workgroups" not in lowered.as_text()
    assert not set(targets.LOOP_VECTORIZATION) & set(lowered.flags)
    np.testing.assert_allclose(np.asarray(jitted(*args)), want, rtol=1e-6)


def test_failed_compile_retries_without_the_dispatches(monkeypatch):
    """A module whose loop dispatch IREE cannot compile is compiled again with its
    loops back in the function, by the iree-compile tool in a process of its own (a
    crash there is an error, not the end of the program); the values are the same."""
    real, real_tool = compiler._compile_with_fallbacks, compiler._compile_with_tool
    tried, tool = [], []

    def with_the_tool(mlir, flags, name):
        tool.append(name)
        return real_tool(mlir, flags, name)
    monkeypatch.setattr(compiler, "_compile_with_tool", with_the_tool)

    def fail_with_dispatches(mlir, flags, name):
        tried.append(loops_in_dispatch.LOOP_DISPATCH.encode() in mlir)
        if tried[-1]:
            raise CompileError("simulated failure of a loop dispatch", "")
        return real(mlir, flags, name)

    monkeypatch.setattr(compiler, "_compile_with_fallbacks", fail_with_dispatches)
    monkeypatch.setenv("AOTC_DISABLE_CACHE", "1")  # a compile, not a disk-cache hit
    x = np.linspace(-1, 1, 300).astype(np.float32)
    got = np.asarray(aotc.jit(_traced(_recurrence))(x))
    assert tried == [True, False] and len(tool) == 1
    np.testing.assert_allclose(got, np.asarray(_numpy(_recurrence, x)), rtol=1e-6)
    # a loop of row ops comes back as it was before they became scalar loops
    rows = np.linspace(-1, 1, 64).astype(np.float32).reshape(8, 8)
    got = np.asarray(aotc.jit(_row_sweep)(rows))
    assert tried[2:] == [True, False]
    np.testing.assert_allclose(got, _row_sweep_numpy(rows), rtol=1e-6)
    # and a pointwise loop spread over workgroups, without its workgroup numbers
    many = np.linspace(-1, 1, 5000).astype(np.float32)
    got = np.asarray(aotc.jit(lambda x: lax.fori_loop(0, 4, lambda i, x: x * 0.5 + 1, x))(many))
    assert tried[4:] == [True, False]
    np.testing.assert_allclose(got, _python_loop(lambda m, i, x: x * 0.5 + 1, many, 4),
                               rtol=1e-6)
