"""A value computed inside a control-flow region (a lax.cond/switch branch, a
while_loop/fori_loop/scan body) and kept in a Python variable is defined only inside that
region: using it after the op must raise a TracingError at the use, naming the function,
the region and the fix, for every way an array can be used (operators, reductions,
indexing, shape ops, nested control flow, vmap, returning it). Values from outside a
region stay usable inside it, also in nested regions and vmap.

Error cases only trace (``.lower``); the one compiled case checks numerics against numpy
(float32: rtol 1e-6, atol 1e-6).
"""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.lax as lax
import aotc.numpy as anp

from tests.ops.conftest import jit_call, raises_match


def _keep_from_cond(x, kept):
    def branch(v):
        kept.append(v * 2)
        return v
    return lax.cond(x[0] > 0, branch, lambda v: v, x)


def _keep_from_switch(x, kept):
    def branch(v):
        kept.append(v * 2)
        return v
    return lax.switch(1, [lambda v: v, branch], x)


def _keep_from_while(x, kept):
    def body(c):
        kept.append(c[1] * 2)
        return c[0] + 1, c[1]
    return lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]


def _keep_from_fori(x, kept):
    def body(i, v):
        kept.append(v + i)
        return v
    return lax.fori_loop(0, 3, body, x)


def _keep_from_scan(x, kept):
    def step(c, row):
        kept.append(c * row)
        return c, None
    return lax.scan(step, x, anp.ones((4, 3), np.float32))[0]


REGIONS = {"cond": _keep_from_cond, "switch": _keep_from_switch, "while_loop": _keep_from_while,
           "fori_loop": _keep_from_fori, "scan": _keep_from_scan}

# Every way an array reaches an op: each must meet the check.
USES = {
    "operator": lambda v: v + 1,
    "ufunc": lambda v: anp.maximum(v, 0),
    "where": lambda v: anp.where(v > 0, v, 0.0),
    "reduction": lambda v: anp.sum(v),
    "method": lambda v: v.mean(),
    "numpy_function": lambda v: np.sum(v),
    "argmax": lambda v: anp.argmax(v),
    "getitem": lambda v: v[0],
    "advanced_getitem": lambda v: v[np.array([0, 1])],
    "matmul": lambda v: v @ v,
    "einsum": lambda v: anp.einsum("i,i->", v, v),
    "reshape": lambda v: anp.reshape(v, (3, 1)),
    "transpose": lambda v: v.T,
    "concatenate": lambda v: anp.concatenate([v, v]),
    "astype": lambda v: v.astype(np.int32),
    "sort": lambda v: anp.sort(v),
    "cumsum": lambda v: anp.cumsum(v),
    "at_set": lambda v: v.at[0].set(1.0),
    "dynamic_slice": lambda v: lax.dynamic_slice(v, (0,), (1,)),
    "cond_operand": lambda v: lax.cond(True, lambda a: a, lambda a: -a, v),
    "closure_in_later_cond": lambda v: lax.cond(True, lambda: v, lambda: v),
    "vmap": lambda v: aotc.vmap(lambda a: a * 2)(v),
    "return": lambda v: v,
}

X = np.array([1.0, -2.0, 3.0], np.float32)


def _leaky(region, use):
    def leaky_fn(x):
        kept = []
        region(x, kept)
        return use(kept[0])
    return leaky_fn


@pytest.mark.parametrize("region", list(REGIONS), ids=list(REGIONS))
def test_use_after_region_names_function_region_and_fix(region):
    with raises_match(aotc.errors.TracingError, "in function 'leaky_fn'", "float32[3]",
                      "inside a lax.cond/switch branch or a while_loop/fori_loop/scan body",
                      f"{__file__}:", "cannot be used outside it", "Fix: return it from the body"):
        aotc.jit(_leaky(REGIONS[region], lambda v: v + 1)).lower(X)


@pytest.mark.parametrize("use", list(USES), ids=list(USES))
def test_every_use_is_checked(use):
    with pytest.raises(aotc.errors.TracingError, match="cannot be used outside it"):
        aotc.jit(_leaky(_keep_from_cond, USES[use])).lower(X)


def test_value_of_one_branch_in_the_other():
    def f(x):
        kept = []

        def true_fun(v):
            kept.append(v * 2)
            return v

        return lax.cond(x[0] > 0, true_fun, lambda v: kept[0] + v, x)

    with raises_match(aotc.errors.TracingError, "add() argument 0", "in function 'f'",
                      "cannot be used outside it"):
        aotc.jit(f).lower(X)


def test_value_of_an_inner_region_in_the_enclosing_body():
    def f(x):
        def body(i, v):
            kept = []
            lax.cond(v[0] > 0, lambda a: kept.append(a + 1) or a, lambda a: a, v)
            return v + kept[0]
        return lax.fori_loop(0, 2, body, x)

    with pytest.raises(aotc.errors.TracingError, match="cannot be used outside it"):
        aotc.jit(f).lower(X)


def test_values_from_outside_a_region_are_usable_inside():
    """Closures over the function's values and over an enclosing body's values, vmap of
    an outer value in a branch, and a region's value returned properly."""

    def f(x):
        outer = x * 3

        def body(i, v):
            inner = v + 1  # the enclosing body's value, used by the nested cond
            picked = lax.cond(i % 2 == 0, lambda: inner * outer, lambda: inner - outer)
            return picked / 4

        looped = lax.fori_loop(0, 3, body, x)
        mapped = lax.cond(x[0] > 0, lambda: aotc.vmap(lambda a, o: a * o, in_axes=(0, None))(
                              anp.stack([x, x]), outer),
                          lambda: anp.zeros((2, 3), np.float32))
        return {"looped": looped, "mapped": mapped}

    got = jit_call(f, X)
    v, outer = X.copy(), X * 3
    for i in range(3):
        v = ((v + 1) * outer if i % 2 == 0 else (v + 1) - outer) / 4
    np.testing.assert_allclose(got["looped"], v, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got["mapped"], np.stack([X, X]) * outer, rtol=1e-6, atol=1e-6)
