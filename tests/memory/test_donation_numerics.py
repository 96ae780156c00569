"""Donation changes where results are stored, never their values: every pattern below
is run with and without donation, on both CPU drivers, and compared bit for bit. The
patterns include the ones IREE gets wrong when a donated buffer is written in place
while still being read (swaps, matmuls of the donated value, two results reading it);
the donation pass must either refuse those or order them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc import runtime

RNG = np.random.default_rng(7)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def step(x):
    return 2 * x + 1


def slice_update(x, d):
    return anp.concatenate([x[:2] + d, x[2:]])


def shifted(x):
    return anp.concatenate([x[1:], x[:1]])


def matmul_update(x, w):
    return x @ w


def fused_matmul_update(x, w):
    return anp.tanh(x @ w) + x


def transpose_update(x):
    return x.T + x


def two_readers(x):
    return x + 1, x * 2


def swap(a, b):
    return b * 1.5, a * 2.5


def returns_arg(a, b):
    return b, a + 1


def linreg(w, x, y):
    return w - 0.01 * (x.T @ (x @ w - y))


def mlp(w1, w2, x, y):
    h = anp.tanh(x @ w1)
    d = h @ w2 - y
    g2 = h.T @ d
    g1 = x.T @ ((d @ w2.T) * (1 - h * h))
    return w1 - 0.01 * g1, w2 - 0.01 * g2


def momentum(params, v, x, y):
    g = x.T @ (x @ params["w"] - y)
    v_new = 0.9 * v + g
    return {"w": params["w"] - 0.01 * v_new, "b": params["b"] * 0.5}, v_new, (v_new * v_new).sum()


def with_metric(s):
    new = s * 0.5 + 1
    return new, new.sum(), new.max()


def normalize(x):
    return x - x.mean(axis=1, keepdims=True)


def int_counter(c, x):
    return c + 1, x.astype(anp.float32) * 2


def traced_row_set(x, i, v):
    return x.at[i].set(v)


def row_from_another(x, i, j):
    return x.at[i].set(x[j] * 0.5)


def dynamic_update(x, u, i):
    return aotc.lax.dynamic_update_slice(x, u, (i, 0))


def scatter_add(x, v):
    return x.at[np.array([0, 3, 0])].add(v)


CASES = [
    ("step", step, lambda: (_f32(64, 64),), (0,)),
    ("slice_update", slice_update, lambda: (_f32(4, 8), _f32(2, 8)), (0,)),
    ("shifted", shifted, lambda: (_f32(4, 8),), (0,)),
    ("matmul_update", matmul_update, lambda: (_f32(32, 32), _f32(32, 32)), (0,)),
    ("fused_matmul_update", fused_matmul_update, lambda: (_f32(32, 32), _f32(32, 32)), (0,)),
    ("transpose_update", transpose_update, lambda: (_f32(32, 32),), (0,)),
    ("two_readers", two_readers, lambda: (_f32(64, 64),), (0,)),
    ("swap", swap, lambda: (_f32(16, 16), _f32(16, 16)), (0, 1)),
    ("returns_arg", returns_arg, lambda: (_f32(8), _f32(8)), (0, 1)),
    ("linreg", linreg, lambda: (_f32(64, 16), _f32(32, 64), _f32(32, 16)), (0,)),
    ("mlp", mlp, lambda: (_f32(64, 48), _f32(48, 48), _f32(32, 64), _f32(32, 48)), (0, 1)),
    ("momentum", momentum, lambda: ({"w": _f32(16, 8), "b": _f32(8)}, _f32(16, 8), _f32(4, 16),
                                     _f32(4, 8)), (0, 1)),
    ("with_metric", with_metric, lambda: (_f32(128, 64),), (0,)),
    ("normalize", normalize, lambda: (_f32(32, 16),), (0,)),
    ("int_counter", int_counter,
     lambda: (np.arange(6, dtype=np.int32), np.arange(6, dtype=np.int32)), (0, 1)),
    ("traced_row_set", traced_row_set, lambda: (_f32(16, 8), np.int32(5), _f32(8)), (0,)),
    ("row_from_another", row_from_another, lambda: (_f32(16, 8), np.int32(5), np.int32(9)), (0,)),
    ("dynamic_update", dynamic_update, lambda: (_f32(16, 8), _f32(3, 8), np.int32(14)), (0,)),
    ("scatter_add", scatter_add, lambda: (_f32(16, 8), _f32(3, 8)), (0,)),
]


def _host(tree):
    if isinstance(tree, dict):
        return {k: _host(v) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_host(v) for v in tree)
    return np.array(tree)


def _equal(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


def _put(tree, uri):
    if isinstance(tree, dict):
        return {k: _put(v, uri) for k, v in tree.items()}
    return runtime.device_put(tree, uri)


@pytest.mark.parametrize("name,fn,make,donate", CASES, ids=[c[0] for c in CASES])
def test_numerics_identical_with_and_without_donation(name, fn, make, donate, cpu_uri):
    args = make()
    host_args = _host(args)
    plain = aotc.jit(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # some of these donations are refused, by design
        donating = aotc.jit(fn, donate_argnums=donate)
        # Device arrays: the donated ones are consumed in place.
        device_args = [_put(a, cpu_uri) for a in args]
        expected = _host(plain(*[_put(a, cpu_uri) for a in args]))
        got = _host(donating(*device_args))
        # numpy arguments: copied once, never modified.
        got_from_numpy = _host(donating(*args))
    assert _equal(expected, got), name
    assert _equal(expected, got_from_numpy), name
    assert _equal(_host(args), host_args), f"{name}: a numpy argument was modified"


STATE_UPDATES = [c for c in CASES if c[0] in ("step", "slice_update", "linreg", "mlp", "momentum",
                                                "with_metric", "row_from_another", "scatter_add")]


@pytest.mark.parametrize("name,fn,make,donate", STATE_UPDATES, ids=[c[0] for c in STATE_UPDATES])
def test_loop_matches_numpy_reference(name, fn, make, donate):
    """Three chained steps, each consuming the previous results, against the same steps
    without donation: catches an in-place write that lands one step late."""
    args = make()
    plain, donating = aotc.jit(fn), aotc.jit(fn, donate_argnums=donate)
    a_state = b_state = list(args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(3):
            ra, rb = plain(*a_state), donating(*b_state)
            ra = ra if isinstance(ra, tuple) else (ra,)
            rb = rb if isinstance(rb, tuple) else (rb,)
            assert _equal(_host(ra), _host(rb)), name
            n = len(donate)
            a_state = list(ra[:n]) + list(args[n:])
            b_state = list(rb[:n]) + list(args[n:])
