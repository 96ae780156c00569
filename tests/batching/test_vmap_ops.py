"""``aotc.vmap`` of every op family against a Python loop + ``np.stack``.

A family is a per-example function written once over a module ``m`` (``aotc.numpy`` or
numpy; ``lax(m)`` gives ``aotc.lax`` or the plain-Python reference of ``jax.lax``'s
control flow). Every family is vmapped with each argument batched at every axis (and
``None``), inside one jitted function per (family, batch size) that returns all the
variants: one IREE compile per case. Results must have numpy's dtype and shape, and
float32 values within the conftest "accumulate" tolerance (rtol 1e-5, atol 1e-5: the
batched code may sum in another order); integers and bools exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from tests.ops.conftest import COMPILE_STATS, assert_same, to_numpy

pytest.importorskip("iree.runtime")


# ---- plain-Python references of the lax functions the families use ---------------------

def _np_while(cond, body, val):
    while cond(val):
        val = body(val)
    return val


def _np_scan(f, init, xs):
    carry, ys = init, []
    for x in xs:
        carry, y = f(carry, x)
        ys.append(y)
    return carry, np.stack(ys)


def _np_conv(lhs, rhs, window_strides, padding):
    """NCHW x OIHW, VALID padding, unit strides: the reference of lax.conv."""
    assert padding == "VALID" and tuple(window_strides) == (1, 1)
    kh, kw = rhs.shape[2:]
    oh, ow = lhs.shape[2] - kh + 1, lhs.shape[3] - kw + 1
    out = np.zeros((lhs.shape[0], rhs.shape[0], oh, ow), lhs.dtype)
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,oc->nohw", lhs[:, :, i:i + oh, j:j + ow], rhs[:, :, i, j])
    return out


NP_LAX = SimpleNamespace(
    cond=lambda p, t, f, *ops: t(*ops) if p else f(*ops),
    while_loop=_np_while,
    fori_loop=lambda lo, hi, body, val: _np_while(
        lambda c: c[0] < hi, lambda c: (c[0] + 1, body(c[0], c[1])), (lo, val))[1],
    scan=_np_scan,
    conv=_np_conv,
)


def lax(m):
    return aotc.lax if m is anp else NP_LAX


def at_set(m, x, index, value):
    if m is anp:
        return x.at[index].set(value)
    y = x.copy()
    y[index] = value
    return y


def at_add(m, x, index, value):
    if m is anp:
        return x.at[index].add(value)
    y = x.copy()
    np.add.at(y, index, value)
    return y


# ---- families ------------------------------------------------------------------------

@dataclass
class Family:
    fn: Callable  # m -> per-example function returning a tuple of arrays
    shapes: list  # per-example argument shapes
    dtypes: tuple = ()  # per argument; default float32
    int_high: int = 3  # integer arguments are drawn from [0, int_high)
    shared: tuple = ()  # arguments never batched (in_axes None)

    def dtype(self, i: int) -> np.dtype:
        return np.dtype(self.dtypes[i] if i < len(self.dtypes) else "float32")


def _elementwise(m):
    def f(x, y):
        return (m.tanh(x) * y + m.exp(-x * x), m.maximum(x, y), m.where(x > y, x, -y),
                (x * 3).astype("int32"), m.abs(x) <= 1.0, m.sqrt(m.abs(y)) / (1.0 + x * x))
    return f


def _broadcasting(m):
    def f(x, row, s):
        return x + row, x * s, row - x, m.minimum(x, s), (x[:, :1] * row)
    return f


def _reductions(m):
    def f(x):
        return (m.sum(x, axis=0), m.sum(x, axis=1), m.sum(x, axis=2), m.sum(x), m.mean(x, axis=1),
                m.max(x, axis=-1), m.min(x, axis=(0, 2)), m.var(x, axis=1),
                m.prod(x, axis=0, keepdims=True), m.any(x > 1.0, axis=1))
    return f


def _arg_reductions(m):
    def f(x):
        return m.argmax(x, axis=0), m.argmin(x, axis=2), m.argmax(x, axis=1), m.argmax(x)
    return f


def _matmul(m):
    def f(a, b, v):
        return a @ b, v @ b, a @ v[:4], m.dot(a, b).T, m.einsum("ij,jk->ki", a, b), m.outer(v, v)
    return f


def _shape_ops(m):
    def f(x, y):
        return (x.reshape(12), x.reshape(2, 6), x.T, m.transpose(y, (2, 0, 1)), x[1:, ::2],
                x[-1], y[:, 1], m.concatenate([x, x * 2], axis=1), m.concatenate([x, x], axis=0),
                m.expand_dims(x, 0), m.expand_dims(x, -1), m.squeeze(y[:1], 0),
                m.moveaxis(y, 0, -1), m.stack([x, x + 1], axis=1), m.flip(x, 1))
    return f


def _creation(m):
    def f(x):
        return (m.zeros_like(x) + x, m.ones((3,)) * x[:, 0], m.arange(4) * x, m.eye(3) @ x,
                m.full_like(x, 2.0) - x, m.zeros((2, 2)))
    return f


def _indexing(m):
    def f(x, idx):
        return (m.take(x, idx, axis=1), m.take(x, idx, axis=0), x[idx], x[:, idx],
                m.take_along_axis(x, m.argsort(x, axis=1), axis=1))
    return f


def _updates(m):
    def f(x, v):
        return at_set(m, x, 1, v), at_add(m, x, (slice(None), 2), v[:3]), at_set(m, x, (0, 0), v[0])
    return f


def _cumulative(m):
    def f(x):
        return m.cumsum(x, axis=0), m.cumsum(x, axis=1), m.cumsum(x), m.cumprod(x, axis=1)
    return f


def _sorting(m):
    def f(x):
        return m.sort(x, axis=0), m.sort(x, axis=-1), m.argsort(x, axis=1)
    return f


def _padding(m):
    def f(x):
        return (m.pad(x, ((1, 2), (0, 1))), m.pad(x, 1, constant_values=3.0),
                m.pad(x, ((0, 0), (2, 0)), mode="edge"))
    return f


def _conv(m):
    def f(img, k):
        return (lax(m).conv(img, k, (1, 1), "VALID"),)
    return f


def _control(m):
    def f(x, s):
        c = lax(m).cond(s > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)
        w = lax(m).while_loop(lambda t: t[0] < 3, lambda t: (t[0] + 1, t[1] * 0.5 + s), (0, x))[1]
        carry, ys = lax(m).scan(lambda h, r: (h + r, h * r), x[0] * 0.0, x)
        fl = lax(m).fori_loop(0, 3, lambda i, v: v + s * i, x)
        return c, w, carry, ys, fl
    return f


FAMILIES = {
    "elementwise": Family(_elementwise, [(3, 4), (3, 4)]),
    "broadcasting": Family(_broadcasting, [(3, 4), (4,), ()]),
    "reductions": Family(_reductions, [(3, 4, 2)]),
    "arg_reductions": Family(_arg_reductions, [(3, 4, 2)]),
    "matmul": Family(_matmul, [(3, 4), (4, 5), (4,)]),
    "shape_ops": Family(_shape_ops, [(3, 4), (2, 3, 4)]),
    "creation": Family(_creation, [(3, 4)]),
    "indexing": Family(_indexing, [(3, 4), (2,)], ("float32", "int64")),
    "updates": Family(_updates, [(3, 4), (4,)]),
    "cumulative": Family(_cumulative, [(3, 4)]),
    "sorting": Family(_sorting, [(3, 4)]),
    "padding": Family(_padding, [(3, 4)]),
    "conv": Family(_conv, [(1, 2, 5, 5), (3, 2, 2, 2)], shared=(1,)),
    "conv_batched_filter": Family(_conv, [(1, 2, 5, 5), (3, 2, 2, 2)]),
    "control": Family(_control, [(3, 4), ()]),
}


def in_axes_variants(shapes, shared=()) -> list[tuple]:
    """Each argument at each of its axes (0 .. ndim, and -1) and None, the others at 0
    (arguments in ``shared``: always None). The case with nothing batched needs
    axis_size and is added by the test."""
    variants = []
    for i, shape in enumerate(shapes):
        for axis in [None, *range(len(shape) + 1), -1]:
            v = tuple(None if j in shared else axis if j == i else 0 for j in range(len(shapes)))
            if v not in variants and any(a is not None for a in v):
                variants.append(v)
    return variants


def _inputs(family: Family, in_axes, n, rng):
    args = []
    for i, (shape, axis) in enumerate(zip(family.shapes, in_axes)):
        full = list(shape)
        if axis is not None:
            full.insert(axis % (len(shape) + 1), n)
        dt = family.dtype(i)
        if dt.kind in "iu":
            args.append(rng.integers(0, family.int_high, full).astype(dt))
        else:
            args.append(rng.standard_normal(full).astype(dt))
    return args


def loop_reference(fn, args, in_axes, n, out_axes=0):
    """``np.stack`` of ``fn`` over the examples; for n == 0, empty results of the right
    shape and dtype (computed from a zero example)."""
    def example(i):
        return [np.take(a, i, axis=ax) if ax is not None else a for a, ax in zip(args, in_axes)]

    if n == 0:
        zero = [np.zeros(np.delete(a.shape, ax), a.dtype) if ax is not None else a
                for a, ax in zip(args, in_axes)]
        outs = [np.asarray(o) for o in fn(*zero)]
        stacked = [np.zeros((0,) + o.shape, o.dtype) for o in outs]
    else:
        per = [[np.asarray(o) for o in fn(*example(i))] for i in range(n)]
        stacked = [np.stack([p[k] for p in per]) for k in range(len(per[0]))]
    return [np.moveaxis(s, 0, out_axes) for s in stacked]


@dataclass
class Case:
    n: int
    in_axes: tuple
    out_axes: int
    axis_size: int | None
    args: list
    outer: int = 0  # > 0: vmap(vmap(f, in_axes), outer_axes) with this outer batch size
    outer_axes: tuple = ()

    @property
    def key(self) -> str:
        nested = f" nested in {self.outer}" if self.outer else ""
        return f"n={self.n} in_axes={self.in_axes} out_axes={self.out_axes}{nested}"

    def vmapped(self, fn):
        vm = aotc.vmap(fn, in_axes=self.in_axes, out_axes=self.out_axes, axis_size=self.axis_size)
        return aotc.vmap(vm, in_axes=self.outer_axes) if self.outer else vm

    def reference(self, fn) -> list:
        out_axes = self.out_axes if self.axis_size is None else 0
        if not self.outer:
            return loop_reference(fn, self.args, self.in_axes, self.n, out_axes)
        per = [loop_reference(fn, [a[j] if ax is not None else a
                                   for a, ax in zip(self.args, self.outer_axes)],
                              self.in_axes, self.n, out_axes)
               for j in range(self.outer)]
        return [np.stack([p[k] for p in per]) for k in range(len(per[0]))]


def family_cases(family: Family, sizes=(1, 7, 0)) -> list[Case]:
    rng = np.random.default_rng(0)
    cases = []
    for n in sizes:
        variants = in_axes_variants(family.shapes, family.shared)
        cases += [Case(n, v, 0, None, _inputs(family, v, n, rng)) for v in variants]
        # One variant with the batch as the last result axis, one with nothing batched.
        cases.append(Case(n, variants[-1], -1, None, cases[-1].args))
        no_batch = (None,) * len(family.shapes)
        cases.append(Case(n, no_batch, 0, n, _inputs(family, no_batch, n, rng)))
    cases.append(nested_case(family, variants[len(variants) // 2], rng))
    return cases


def nested_case(family: Family, inner: tuple, rng) -> Case:
    """The inner vmap over ``inner``, the outer over the leading axis of every argument
    that is not shared; per outer example, float arguments differ by a constant."""
    outer_axes = tuple(None if j in family.shared else 0 for j in range(len(family.shapes)))
    args = [a if ax is None else
            np.stack([a] * 2) + (np.arange(2).reshape((2,) + (1,) * a.ndim).astype(a.dtype)
                                 if a.dtype.kind == "f" else 0)
            for a, ax in zip(_inputs(family, inner, 3, rng), outer_axes)]
    return Case(3, inner, 0, None, args, outer=2, outer_axes=outer_axes)


@pytest.mark.parametrize("family_name", list(FAMILIES))
def test_family_matches_loop(family_name):
    """Every in_axes variant at batch sizes 1, 7 and 0, and one nested in another vmap,
    in one compiled function."""
    family = FAMILIES[family_name]
    check_cases(family_name, family_cases(family))


def check_cases(family_name: str, cases: list[Case]) -> None:
    """Runs every case of a family in one compiled function; compares with the loop."""
    family = FAMILIES[family_name]
    traced_fn = family.fn(anp)

    def batch(*flat):
        out, k = {}, 0
        for case in cases:
            for j, r in enumerate(case.vmapped(traced_fn)(*flat[k:k + len(case.args)])):
                out[f"{case.key} result {j}"] = r
            k += len(case.args)
        return out

    jitted = aotc.jit(batch)
    try:
        got = to_numpy(jitted(*[a for case in cases for a in case.args]))
    finally:
        COMPILE_STATS.update(jitted.stats)
    failures = []
    for case in cases:
        for j, w in enumerate(case.reference(family.fn(np))):
            key = f"{case.key} result {j}"
            try:
                assert_same(got[key], w, "accumulate", f"{family_name} {key}")
            except AssertionError as e:
                failures.append(str(e))
    assert not failures, "\n".join(failures)


def test_argmax_out_axes():
    # IREE 3.13's transpose propagation drops a result of argmax's two-result generic when
    # its result is transposed; the compiler retries without it (compiler.FALLBACKS).
    x = np.random.default_rng(0).standard_normal((3, 4, 7)).astype(np.float32)
    got = aotc.jit(aotc.vmap(lambda v: anp.argmax(v, axis=0), in_axes=-1, out_axes=-1))(x)
    np.testing.assert_array_equal(np.asarray(got), np.argmax(x, axis=0))
