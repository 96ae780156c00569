"""Donated in-place updates: ``x.at[i].set(v)`` with traced ``i``,
``lax.dynamic_update_slice`` and scatters write into the donated buffer when the pass can
prove it safe, and refuse (DonationWarning naming why) when not. Either way the values
are those of the undonated function, bit for bit, over chained steps whose indices move
(in range, negative, out of range), and those of numpy (rtol 2e-6, atol 1e-6: repeated
scatter indices may add in another order); an argument that is not donated keeps its
value. A donated update loop asks for no memory."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc import runtime
from aotc.errors import DonationWarning

lax = aotc.lax
RNG = np.random.default_rng(11)
ROWS = np.array([0, 2, 0])  # a repeated row: add accumulates
PAIR = np.array([1, 3])


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _in(i, n):
    return -n <= i < n


def _start(i, n, size):
    """lax.dynamic_update_slice's start: negative counts from the end, then clamped."""
    i = i + n if i < 0 else i
    return min(max(i, 0), n - size)


# ---- numpy references ----------------------------------------------------------------------

def _np_set(x, i, v):
    x = x.copy()
    if _in(i, len(x)):
        x[i] = v
    return x


def _np_add(x, i, v):
    x = x.copy()
    if _in(i, len(x)):
        x[i] += v
    return x


def _np_dus(x, u, i):
    x = x.copy()
    s = _start(i, len(x), len(u))
    x[s:s + len(u)] = u
    return x


def _np_dus_self(x, i):
    s = _start(i, len(x), 2)
    return _np_dus(x, x[s:s + 2] * 2, i)


def _np_multiply_3d(x, i, j, v):
    x = x.copy()
    if _in(i, x.shape[0]) and _in(j, x.shape[2]):
        x[i, :, j] *= v
    return x


def _np_chain(x, i, j, a, b):
    return _np_add(_np_set(x, i, a), j, b)


def _np_set_other(x, i, j):
    j = min(max(j + len(x) if j < 0 else j, 0), len(x) - 1)  # reads clamp (JAX's rule)
    return _np_set(x, i, x[j])


def _np_add_other(x, i, j):
    return _np_add(x, i, x[j] * 2)


def _np_scatter(method):
    def apply(x, idx, v):
        x = x.copy()
        keep = (idx >= -len(x)) & (idx < len(x))
        if method == "set":
            x[idx[keep]] = v[keep]
        else:
            getattr(np, method).at(x, idx[keep], v[keep])
        return x
    return apply


def _np_scatter_from_x(x):
    x = x.copy()
    x[PAIR] += x[:2] * 2
    return x


def _np_index_from_x(x, v):
    return _np_set(x, 4 if x[0, 0] > 0 else 3, v)


# ---- cases: (name, function, numpy reference or None, state, per-step extra arguments,
# expected pairing: "in place", "barrier" (in place after a barrier the pass adds to order
# a read) or a part of the refusal's reason) ------------------------------------------------

_NEGATIVE_ZERO_ROWS = _f32(8, 4)
_NEGATIVE_ZERO_ROWS[[0, 7]] = -0.0  # where dropped entries are clamped to


def _rows(*ints):
    return [(np.int32(i),) for i in ints]


CASES = [
    ("set_row", lambda x, i, v: x.at[i].set(v), _np_set, _f32(8, 4),
     [(np.int32(3), _f32(4)), (np.int32(-2), _f32(4)), (np.int32(11), _f32(4))], "in place"),
    ("add_row", lambda x, i, v: x.at[i].add(v), _np_add, _f32(8, 4),
     [(np.int32(5), _f32(4)), (np.int32(-8), _f32(4)), (np.int32(-9), _f32(4))], "in place"),
    ("add_1d_int", lambda x, i, v: x.at[i].add(v), _np_add, np.arange(6, dtype=np.int32),
     [(np.int32(5), np.int32(3)), (np.int32(0), np.int32(-7)), (np.int32(6), np.int32(1))],
     "in place"),
    ("multiply_3d", lambda x, i, j, v: x.at[i, :, j].multiply(v), _np_multiply_3d, _f32(3, 4, 5),
     [(np.int32(1), np.int32(4), _f32(4)), (np.int32(-1), np.int32(0), _f32(4)),
      (np.int32(3), np.int32(2), _f32(4))], "in place"),
    ("dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 0)), _np_dus,
     _f32(8, 4), [(_f32(2, 4), np.int32(7)), (_f32(2, 4), np.int32(-1)), (_f32(2, 4), np.int32(0))],
     "in place"),
    ("dynamic_update_slice_of_itself",
     lambda x, i: lax.dynamic_update_slice(x, lax.dynamic_slice(x, (i, 0), (2, 4)) * 2, (i, 0)),
     _np_dus_self, _f32(8, 4), _rows(3, 7, -3), "in place"),
    ("chain", lambda x, i, j, a, b: x.at[i].set(a).at[j].add(b), _np_chain, _f32(8, 4),
     [(np.int32(2), np.int32(2), _f32(4), _f32(4)), (np.int32(1), np.int32(5), _f32(4), _f32(4)),
      (np.int32(9), np.int32(0), _f32(4), _f32(4))], "in place"),
    ("index_read_from_x", lambda x, v: x.at[(x[0, 0] > 0).astype(anp.int32) + 3].set(v),
     _np_index_from_x, _f32(8, 4), [(_f32(4),), (_f32(4),), (_f32(4),)], "barrier"),
    ("set_from_other_row", lambda x, i, j: x.at[i].set(x[j]), _np_set_other, _f32(8, 4),
     [(np.int32(2), np.int32(3)), (np.int32(5), np.int32(5)), (np.int32(-1), np.int32(0))],
     "barrier"),
    ("add_from_other_row", lambda x, i, j: x.at[i].add(x[j] * 2), _np_add_other, _f32(8, 4),
     [(np.int32(2), np.int32(3)), (np.int32(4), np.int32(4)), (np.int32(0), np.int32(7))],
     "barrier"),
    # The row read from elsewhere in x is computed behind a barrier by the lowering (IREE
    # would fuse the read into the in-place write), so the update is in place after it.
    ("set_from_other_row_clipped", lambda x, i, j: x.at[i].set(x[j], mode="clip"), None, _f32(8, 4),
     [(np.int32(2), np.int32(3)), (np.int32(5), np.int32(1))], "barrier"),
    ("scatter_add_repeated", lambda x, v: x.at[ROWS].add(v),
     lambda x, v: _np_scatter("add")(x, ROWS, v),
     _f32(8, 4), [(_f32(3, 4),)] * 3, "in place"),
    ("scatter_set", lambda x, v: x.at[PAIR].set(v), lambda x, v: _np_scatter("set")(x, PAIR, v),
     _f32(8, 4), [(_f32(2, 4),), (_f32(2, 4),)], "in place"),
    ("scatter_min_int", lambda x, v: x.at[ROWS].min(v),
     lambda x, v: _np_scatter("minimum")(x, ROWS, v),
     RNG.integers(-50, 50, (6, 3)).astype(np.int32),
     [(RNG.integers(-60, 60, (3, 3)).astype(np.int32),)] * 2, "in place"),
    ("scatter_from_x", lambda x: x.at[PAIR].add(x[:2] * 2), _np_scatter_from_x, _f32(8, 4),
     [()] * 3, "in place"),
    # The lowering computes a scatter's updates first (behind a barrier), so rows of x
    # scattered elsewhere in x are read before the write.
    ("scatter_of_a_view", lambda x: x.at[PAIR].set(x[:2]), None, _f32(8, 4), [()] * 2, "in place"),
    # Traced indices: a dropped entry is clamped onto a row (7 or 0 here) and changes
    # nothing there: -0.0 stays -0.0 under add, a kept entry for the same row still wins
    # under set, and when every entry is dropped x is unchanged.
    ("scatter_traced_add", lambda x, idx, v: x.at[idx].add(v), _np_scatter("add"),
     _NEGATIVE_ZERO_ROWS,
     [(np.array([1, 9, 1], np.int32), _f32(3, 4)), (np.array([-8, 7, -9], np.int32), _f32(3, 4)),
      (np.array([3, 3, 12], np.int32), _f32(3, 4))], "in place"),
    ("scatter_traced_max", lambda x, idx, v: x.at[idx].max(v), _np_scatter("maximum"), _f32(8, 4),
     [(np.array([2, 8, 2], np.int32), _f32(3, 4)), (np.array([-20, 30, 7], np.int32), _f32(3, 4))],
     "in place"),
    ("scatter_traced_set", lambda x, idx, v: x.at[idx].set(v), _np_scatter("set"), _f32(8, 4),
     [(np.array([1, -9, 5], np.int32), _f32(3, 4)), (np.array([9, 7, 12], np.int32), _f32(3, 4)),
      (np.array([8, -9, 30], np.int32), _f32(3, 4))], "in place"),
    ("update_and_a_returned_reader", lambda x, i, v: (x.at[i].set(v), x * 2), None, _f32(8, 4),
     [(np.int32(3), _f32(4)), (np.int32(1), _f32(4))], "which is also returned"),
]


def _ordering_barriers(text: str) -> int:
    return len(re.findall(r"util\.optimization_barrier (?!.*%arg\d)", text))


def _call(fn, state, extra, uri, kept: bool):
    """The results on the host; ``kept``: the state array must keep its value (not donated,
    or a refused donation)."""
    x = runtime.device_put(state, uri)
    out = fn(x, *extra)
    if kept:
        assert not x.is_deleted() and np.array_equal(np.asarray(x), state), "the argument changed"
    return [np.asarray(r) for r in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("name,fn,reference,state,steps,expected", CASES, ids=[c[0] for c in CASES])
def test_donated_updates_match_undonated_and_numpy(name, fn, reference, state, steps, expected,
                                                   cpu_uri):
    plain = aotc.jit(fn)
    donating = aotc.jit(fn, donate_argnums=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DonationWarning)
        lowered = donating.lower(state, *steps[0])
    reasons = [str(w.message) for w in caught if issubclass(w.category, DonationWarning)]
    # Barriers the donation pass adds to order reads (the lowering puts scatter updates
    # behind one too; the one that keeps an undonated argument reads the argument).
    added = (_ordering_barriers(lowered.as_text())
             - _ordering_barriers(plain.lower(state, *steps[0]).as_text()))
    if expected in ("in place", "barrier"):
        assert lowered.metadata.donated == {"x": 0} and not reasons, reasons
        assert (added > 0) == (expected == "barrier"), name
    else:
        assert lowered.metadata.donated == {} and len(reasons) == 1, reasons
        assert expected in reasons[0], reasons[0]
    a = b = np.asarray(state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DonationWarning)
        for k, extra in enumerate(steps):
            got_plain = _call(plain, a, extra, cpu_uri, kept=True)
            got_donated = _call(donating, b, extra, cpu_uri, kept=not lowered.metadata.donated)
            for p, d in zip(got_plain, got_donated):
                assert p.dtype == d.dtype and np.array_equal(p, d), f"{name}, step {k}"
            if reference is not None:
                want = reference(b, *extra)
                np.testing.assert_allclose(got_donated[0], want, rtol=2e-6, atol=1e-6,
                                           err_msg=f"{name}, step {k}")
                assert np.array_equal(np.signbit(got_donated[0]), np.signbit(want)), \
                    f"{name}, step {k}"
            a, b = got_plain[0], got_donated[0]


# ---- memory ------------------------------------------------------------------------------

ROWS_N, COLS = 1024, 1024  # a 4 MiB float32 state
NBYTES = ROWS_N * COLS * 4
S = aotc.ShapeDtypeStruct

LOOPS = {
    "set_row": (lambda x, i, v: x.at[i].set(v),
                lambda k: (np.int32(k), np.full(COLS, k, np.float32)),
                (S((), "int32"), S((COLS,), "float32"))),
    "dynamic_update_slice": (lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 0)),
                             lambda k: (np.full((4, COLS), k, np.float32), np.int32(4 * k)),
                             (S((4, COLS), "float32"), S((), "int32"))),
    "scatter_add": (lambda x, v: x.at[ROWS].add(v), lambda k: (np.ones((3, COLS), np.float32),),
                    (S((3, COLS), "float32"),)),
}


def _per_step(call, state, make, uri, steps=5):
    """(bytes asked for, bytes donated) per step, the step's arguments already on the device."""
    deltas = []
    for k in range(steps):
        extra = [runtime.device_put(np.asarray(a), uri) for a in make(k + 2)]
        before = runtime.memory_stats(uri)
        state = call(state, *extra)
        after = runtime.memory_stats(uri)
        deltas.append((after.bytes_allocated - before.bytes_allocated,
                       after.bytes_donated - before.bytes_donated))
    return state, deltas


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_donated_update_loop_asks_for_no_memory(name):
    """On local-sync, whose statistics see every allocation: the donated loop writes each
    step's rows into the state's own buffer; the undonated one asks for a new state."""
    uri = "local-sync"
    fn, make, specs = LOOPS[name]
    start = np.zeros((ROWS_N, COLS), np.float32)
    finals = {}
    for donate in ((0,), ()):
        m = aotc.export(fn, S((ROWS_N, COLS), "float32"), *specs, donate_argnums=donate).load(uri)
        call = m[next(iter(m.functions))]
        state = call(runtime.device_put(start, uri), *make(0))
        state = call(state, *make(1))
        state, deltas = _per_step(call, state, make, uri)
        expected = (0, NBYTES) if donate else (NBYTES, 0)
        assert deltas == [expected] * 5, (name, donate, deltas)
        finals[bool(donate)] = np.asarray(state)
    np.testing.assert_array_equal(finals[True], finals[False])
