"""aotc.lax control flow (cond, switch, while_loop, fori_loop, scan) against plain Python.

Every case is written once as ``lambda m, lax, *args`` and run twice: traced, with
``m = aotc.numpy`` and ``lax = aotc.lax`` (all cases of a dtype in one compiled function,
called on several inputs), and eagerly, with ``m = numpy`` and ``lax = PyLax`` below,
whose functions are the Python ``if`` / ``while`` / ``for`` the lax functions stand for.
Results must have the same dtype and shape; values match exactly for integers and
within conftest's "accumulate" tolerance for floats (float32: rtol 1e-5, atol 1e-5;
float64: 1e-12), since IREE may reorder sums inside a step.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import aotc
import aotc.lax
import aotc.numpy as anp
from aotc.runtime import tree

from .conftest import COMPILE_STATS, assert_all, jit_call, raises_match, sample, to_numpy

DTYPES = ["float32", "int32", "float64"]
S = aotc.ShapeDtypeStruct


def _tree_map(fn, *trees):
    leaves, treedef = tree.flatten(trees[0])
    others = [tree.flatten(t)[0] for t in trees[1:]]
    return tree.unflatten(treedef, [fn(*xs) for xs in zip(leaves, *others)])


def _weak_to(value, *others):
    """A Python scalar takes the dtype of another branch's array, as in lax.cond/switch."""
    like = next((o for o in others if hasattr(o, "dtype")), None)
    if type(value) in (int, float) and like is not None:
        return np.asarray(value, like.dtype)
    return value


def _chosen(outs: list, index: int):
    return _tree_map(lambda v, *others: _weak_to(v, *others), outs[index], *outs)


class PyLax:
    """The reference: what each lax function means, in plain Python on numpy."""

    @staticmethod
    def cond(pred, true_fun, false_fun, *operands):
        return _chosen([true_fun(*operands), false_fun(*operands)], 0 if pred else 1)

    @staticmethod
    def switch(index, branches, *operands):
        return _chosen([b(*operands) for b in branches], min(max(int(index), 0), len(branches) - 1))

    @staticmethod
    def while_loop(cond_fun, body_fun, val):
        while cond_fun(val):
            val = body_fun(val)
        return val

    @staticmethod
    def fori_loop(lower, upper, body_fun, val, unroll=None):
        for i in range(int(lower), int(upper)):
            counter = i if isinstance(lower, int) else np.asarray(i, np.result_type(lower, upper))
            val = body_fun(counter, val)
        return val

    @staticmethod
    def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
        n = length if xs is None else len(tree.flatten(xs)[0][0])
        steps = range(n - 1, -1, -1) if reverse else range(n)
        carry, ys = init, []
        for i in steps:
            carry, y = f(carry, _tree_map(lambda a: a[i], xs) if xs is not None else None)
            ys.append(y)
        if not ys:  # no step ran: the ys' shapes come from one call, as JAX traces f
            first = None if xs is None else _tree_map(lambda a: np.zeros(a.shape[1:], a.dtype), xs)
            return carry, _tree_map(lambda y: np.asarray(y)[None][:0], f(init, first)[1])
        ys = ys[::-1] if reverse else ys
        return carry, _tree_map(lambda *y: np.stack(y), *ys)


def _entries(name, value) -> dict:
    """A case's result as named leaves (None leaves dropped): ``name``, or ``name0``, ..."""
    leaves, treedef = tree.flatten(value)
    if treedef == tree.LEAF:
        return {name: value}
    return {f"{name}{i}": v for i, v in enumerate(leaves)}


def _run(cases: dict, arg_sets: list[tuple], where: str) -> None:
    """All ``cases`` in one compiled function, called on every argument tuple."""

    def traced(*args):
        out = {}
        for name, case in cases.items():
            out.update(_entries(name, case(anp, aotc.lax, *args)))
        return out

    jitted = aotc.jit(traced)
    for args in arg_sets:
        got = to_numpy(jitted(*args))
        want = {}
        for name, case in cases.items():
            with np.errstate(over="ignore"):
                entries = _entries(name, case(np, PyLax, *args))
            want.update({k: np.asarray(v) for k, v in entries.items()})
        shown = [np.asarray(a).tolist() for a in args[-3:]]
        assert_all(got, want, "accumulate", f"{where} args {shown}")
    COMPILE_STATS.update(jitted.stats)


# ---- branches ---------------------------------------------------------------------------

BRANCH_CASES = {
    "cond_sum": lambda m, lax, x, xs, k: lax.cond(
        m.sum(x) > 0, lambda v: v * 2, lambda v: v - 1, x),
    "cond_int_pred": lambda m, lax, x, xs, k: lax.cond(k, lambda v: v + 1, lambda v: v * 3, x),
    "cond_python_pred": lambda m, lax, x, xs, k: lax.cond(True, lambda v: v + 1, lambda v: v, x),
    "cond_pytree": lambda m, lax, x, xs, k: lax.cond(
        k > 1,
        lambda a, b: {"s": a + b, "t": (a, b[0])},
        lambda a, b: {"s": a - b, "t": (b, a[1])},
        x, xs[0]),
    "cond_python_scalar_branch": lambda m, lax, x, xs, k: lax.cond(
        k > 0, lambda v: v[0], lambda v: 7, x),
    "cond_closure": lambda m, lax, x, xs, k: (lambda outer: lax.cond(
        k > 1, lambda: outer + 1, lambda: outer - xs[1]))(x * 3),
    "cond_nested": lambda m, lax, x, xs, k: lax.cond(
        k > 0, lambda v: lax.cond(k > 2, lambda u: u * 2, lambda u: u + 5, v), lambda v: v, x),
    "switch": lambda m, lax, x, xs, k: lax.switch(
        k, [lambda v: v, lambda v: v * 2, lambda v: v + 3], x),
    "switch_one_branch": lambda m, lax, x, xs, k: lax.switch(k, [lambda v: v - 1], x),
    "switch_pytree": lambda m, lax, x, xs, k: lax.switch(
        k, [lambda a: (a, a[0]), lambda a: (a * 2, a[1]), lambda a: (a + a, 0)], x),
    "while_in_cond": lambda m, lax, x, xs, k: lax.cond(
        k > 1,
        lambda v: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + v), (0, v))[1],
        lambda v: v, x),
}


@pytest.mark.parametrize("dtype", DTYPES)
def test_branches_match_python_if(dtype):
    x = sample(dtype, (5,), seed=1, with_specials=False)
    xs = sample(dtype, (6, 5), seed=2, with_specials=False)
    # k chooses the branches: below 0 and above the last branch are clamped by switch.
    arg_sets = [(x, xs, np.int32(k)) for k in (-3, 0, 1, 2, 7)] + [(-x, xs, np.int32(1))]
    _run(BRANCH_CASES, arg_sets, f"branches {dtype}")


# ---- loops -----------------------------------------------------------------------------

def _step(m, lax):
    """A scan body with a pytree carry, pytree xs and pytree ys (one of them None)."""
    def f(c, x):
        s = c["s"] + x["a"] * 2
        n = c["n"] + 1
        return {"s": s, "n": n}, (s - x["b"], None, n)
    return f


def _scan_in(xs):
    return {"a": xs, "b": xs[:, 0]}


LOOP_CASES = {
    "while_count": lambda m, lax, x, xs, lo, hi: lax.while_loop(
        lambda c: c[0] < hi, lambda c: (c[0] + 1, c[1] + x), (0, x)),
    "while_promotes_python_init": lambda m, lax, x, xs, lo, hi: lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + x[0]), (0, 0)),
    "while_array_cond": lambda m, lax, x, xs, lo, hi: lax.while_loop(
        lambda v: m.max(v) < 40, lambda v: v + m.abs(x) + 1, x),
    "fori_static": lambda m, lax, x, xs, lo, hi: lax.fori_loop(
        0, 4, lambda i, a: a + i * x, m.zeros_like(x)),
    "fori_static_no_trip": lambda m, lax, x, xs, lo, hi: lax.fori_loop(3, 1, lambda i, a: a + x, x),
    "fori_unroll_remainder": lambda m, lax, x, xs, lo, hi: lax.fori_loop(
        1, 8, lambda i, c: (c[0] + i * x, c[1] + c[0][0]), (m.zeros_like(x), x[1]), unroll=3),
    "fori_unroll_all": lambda m, lax, x, xs, lo, hi: lax.fori_loop(
        0, 3, lambda i, a: a + xs[i], x, unroll=True),
    "fori_traced": lambda m, lax, x, xs, lo, hi: lax.fori_loop(
        lo, hi, lambda i, c: (c[0] + i, c[1] + x), (m.zeros((), lo.dtype), x)),
    "fori_traced_upper": lambda m, lax, x, xs, lo, hi: lax.fori_loop(
        0, hi, lambda i, a: a + xs[1], x),
    "scan": lambda m, lax, x, xs, lo, hi: lax.scan(_step(m, lax), {"s": x, "n": 0}, _scan_in(xs)),
    "scan_reverse": lambda m, lax, x, xs, lo, hi: lax.scan(
        _step(m, lax), {"s": x, "n": 0}, _scan_in(xs), reverse=True),
    "scan_unroll": lambda m, lax, x, xs, lo, hi: lax.scan(
        _step(m, lax), {"s": x, "n": 0}, _scan_in(xs), reverse=True, unroll=4),
    # ys of one type share one stacked buffer (separate ones got the same memory).
    "scan_ys_of_one_type": lambda m, lax, x, xs, lo, hi: lax.scan(
        lambda c, xt: (c + xt, (c, xt * 2, {"d": c - xt}, xt > 0, c > 0, xt < 0)), x, xs,
        unroll=2),
    "scan_length_no_xs": lambda m, lax, x, xs, lo, hi: lax.scan(
        lambda c, _: (c + x, c), x, None, length=4),
    "scan_zero_length": lambda m, lax, x, xs, lo, hi: lax.scan(
        lambda c, xt: (c + xt, c * 2), x, xs[:0]),
    "scan_zero_length_no_xs": lambda m, lax, x, xs, lo, hi: lax.scan(
        lambda c, _: (c, (c[0], c)), x, None, length=0),
    "scan_cond_inside": lambda m, lax, x, xs, lo, hi: lax.scan(
        lambda c, xt: (lambda c2: (c2, c2[0]))(
            lax.cond(m.sum(xt) > 0, lambda: c + xt, lambda: c - xt)),
        x, xs),
    "scan_while_inside": lambda m, lax, x, xs, lo, hi: lax.scan(
        lambda c, xt: (
            lax.while_loop(lambda v: v[0] < 2, lambda v: (v[0] + 1, v[1] + xt), (0, c))[1], c),
        x, xs),
    "scan_closure": lambda m, lax, x, xs, lo, hi: (lambda w: lax.scan(
        lambda c, xt: (c + w * xt, xt - w), x, xs))(x * 2),
    "scan_in_scan": lambda m, lax, x, xs, lo, hi: lax.scan(
        lambda c, row: lax.scan(lambda d, e: (d + e, d), c, row), x[0], xs),
    "fori_in_scan": lambda m, lax, x, xs, lo, hi: lax.scan(
        lambda c, xt: (lax.fori_loop(lo, hi, lambda i, a: a + xt, c), None), x, xs, reverse=True),
}


@pytest.mark.parametrize("dtype", DTYPES)
def test_loops_match_python_loops(dtype):
    x = sample(dtype, (5,), seed=3, with_specials=False)
    xs = sample(dtype, (6, 5), seed=4, with_specials=False)
    bounds = [(2, 6), (5, 1), (-1, 3), (0, 0)]
    _run(LOOP_CASES, [(x, xs, np.int32(lo), np.int32(hi)) for lo, hi in bounds], f"loops {dtype}")


def test_static_python_predicate_and_int64_index():
    """Python and numpy scalars as predicate, index and bounds give the same results."""
    def f(x):
        # numpy int32 bounds: i is a strongly typed int32, as the bounds are.
        count, total = aotc.lax.fori_loop(np.int32(1), np.int32(4),
                                          lambda i, c: (c[0] + i, c[1] + 1), (np.int32(0), x))
        return {
            "false": aotc.lax.cond(0, lambda v: v, lambda v: -v, x),
            "index": aotc.lax.switch(np.int64(5), [lambda v: v, lambda v: v * 2], x),
            "count": count,
            "total": total,
        }
    x = np.arange(3, dtype=np.float32)
    want = {"false": -x, "index": x * 2, "count": np.int32(6), "total": x + 3}
    assert_all(jit_call(f, x), {k: np.asarray(v) for k, v in want.items()}, "exact", "static")


def test_numpy_constant_first_used_inside_a_region_is_reusable_outside():
    """A captured numpy array becomes a constant where it is first used; one made inside a
    branch or loop body is not visible after it, so later uses get their own."""
    w = np.arange(9, dtype=np.float32).reshape(3, 3) / 10

    def f(x):
        branch = aotc.lax.cond(x[0] > 0, lambda: x @ w, lambda: x)
        looped = aotc.lax.fori_loop(0, 2, lambda i, c: c @ w + w[0], x)
        return {"branch": branch, "looped": looped, "after": x @ w + w[0]}

    x = np.array([1.0, 2.0, 3.0], np.float32)
    want = {"branch": x @ w, "looped": (x @ w + w[0]) @ w + w[0], "after": x @ w + w[0]}
    assert_all(jit_call(f, x), want, "accumulate", "constants")


# ---- the IR's form ----------------------------------------------------------------------

def test_scan_carries_ys_buffer_and_slices_xs():
    text = aotc.jit(lambda h, xs: aotc.lax.scan(lambda c, x: (c + x, c * x), h, xs)).lower(
        S((4,), "float32"), S((7, 4), "float32")).as_text()
    assert "scf.for" in text and "iter_args" in text
    assert re.search(r"tensor.extract_slice %\w+\[%", text)  # dynamic offset: the step index
    assert "tensor.insert_slice" in text and "tensor<7x4xf32>" in text


# ---- errors ----------------------------------------------------------------------------

def _lower(fn, *specs):
    return aotc.jit(fn).lower(*specs)


V3, V4 = S((3,), "float32"), S((4,), "float32")

ERRORS = [
    ("cond pred not scalar", lambda x: aotc.lax.cond(x > 0, lambda: x, lambda: x),
     (V3,), ["lax.cond", "scalar predicate", "bool[3]", "anp.any"]),
    ("cond shapes differ",
     lambda x: aotc.lax.cond(x[0] > 0, lambda: (x, {"h": x}), lambda: (x, {"h": x[:2]})),
     (V3,), ["lax.cond", "output[1]['h']", "true_fun returns float32[3]",
             "false_fun returns float32[2]", "Fix"]),
    ("cond dtypes differ",
     lambda x: aotc.lax.cond(x[0] > 0, lambda: x, lambda: x.astype(anp.float64)),
     (V3,), ["output", "float32[3]", "float64[3]", ".astype"]),
    ("cond structures differ", lambda x: aotc.lax.cond(x[0] > 0, lambda: (x, x), lambda: x),
     (V3,), ["lax.cond", "structure", "(*, *)", "Fix"]),
    ("switch float index", lambda x: aotc.lax.switch(x[0], [lambda: x, lambda: x]),
     (V3,), ["lax.switch", "integer index", "float32[]"]),
    ("switch no branches", lambda x: aotc.lax.switch(0, [], x), (V3,), ["lax.switch", "non-empty"]),
    ("while carry dtype",
     lambda x: aotc.lax.while_loop(lambda c: c[0] < 3,
                                   lambda c: (c[0] + 1, c[1] * 2.0 + anp.float64(1)), (0, x)),
     (V3,), ["lax.while_loop", "carry[1]", "float32[3]", "float64[3]", "astype('float32')"]),
    ("while carry shape",
     lambda x: aotc.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1][:2]), (0, x)),
     (V3,), ["carry[1]", "float32[3]", "float32[2]"]),
    ("while cond not bool", lambda x: aotc.lax.while_loop(lambda c: c, lambda c: c - 1, x[0]),
     (V3,), ["cond_fun must return a scalar bool", "float32[]", "i < n"]),
    ("scan lengths differ", lambda a, b: aotc.lax.scan(lambda c, x: (c, None), 0.0, (a, b)),
     (V3, V4), ["lax.scan", "xs[0]: 3", "xs[1]: 4"]),
    ("scan length disagrees", lambda a: aotc.lax.scan(lambda c, x: (c, None), 0.0, a, length=5),
     (V3,), ["lax.scan", "length: 5", "xs: 3"]),
    ("scan without xs or length", lambda a: aotc.lax.scan(lambda c, x: (c, None), a, None),
     (V3,), ["lax.scan", "length="]),
    ("scan f not a pair", lambda a: aotc.lax.scan(lambda c, x: c + x, 0.0, a),
     (V3,), ["lax.scan", "pair (carry, y)", "Tracer"]),
    ("scan carry dtype",
     lambda a: aotc.lax.scan(lambda c, x: (c + x.astype(anp.float64), None), anp.float32(0), a),
     (V3,), ["lax.scan", "carry", "float32[]", "float64[]"]),
    ("fori float bound", lambda x: aotc.lax.fori_loop(0, x[0], lambda i, a: a, x),
     (V3,), ["lax.fori_loop", "upper", "float32[]"]),
    ("fori unroll traced bounds",
     lambda x: aotc.lax.fori_loop(0, x.astype(anp.int32)[0], lambda i, a: a, x, unroll=2),
     (V3,), ["lax.fori_loop", "unroll=2", "static loop bounds"]),
    ("fori unroll negative", lambda x: aotc.lax.fori_loop(0, 3, lambda i, a: a, x, unroll=-1),
     (V3,), ["lax.fori_loop", "non-negative int or a bool", "-1"]),
    ("not callable", lambda x: aotc.lax.cond(x[0] > 0, x, lambda: x),
     (V3,), ["true_fun must be callable"]),
]


@pytest.mark.parametrize("name, fn, specs, fragments", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_name_what_and_how_to_fix(name, fn, specs, fragments):
    exc = TypeError if name == "not callable" else aotc.errors.TracingError
    with raises_match(exc, *fragments):
        _lower(fn, *specs)


def test_traced_after_an_error_in_a_region_still_compiles():
    """A failed branch leaves no ops behind: the function keeps tracing and compiles."""
    def f(x):
        try:
            aotc.lax.cond(x[0] > 0, lambda: x, lambda: x[:1])
        except aotc.errors.TracingError:
            pass
        return aotc.lax.cond(x[0] > 0, lambda: x * 2, lambda: x)
    x = np.array([1.0, 2.0], np.float32)
    np.testing.assert_array_equal(jit_call(f, x), x * 2)


def test_agrees_with_jax_lax_on_float32():
    """Where aotc's dtype rules and JAX's coincide (float32 data, weakly typed Python
    floats), results and dtypes equal jax.lax's."""
    jax = pytest.importorskip("jax")
    cases = {
        "scan_reverse_unroll": lambda lax, x, xs: lax.scan(
            lambda c, r: (c * 0.5 + r, (c, r.sum())), x, xs, reverse=True, unroll=2),
        "cond_weak_branch": lambda lax, x, xs: lax.cond(x[0] > 0, lambda: x.sum(), lambda: 1.5),
        "switch_clamped": lambda lax, x, xs: lax.switch(7, [lambda v: v, lambda v: v * 2.0], x),
        "while_promotes": lambda lax, x, xs: lax.while_loop(
            lambda c: c[1] < 10.0, lambda c: (c[0] * 2.0, c[1] + x[1]), (x, 0.0)),
        "fori_static": lambda lax, x, xs: lax.fori_loop(0, 3, lambda i, a: a * 1.5 + i, x),
        "fori_unroll": lambda lax, x, xs: lax.fori_loop(
            2, 9, lambda i, a: a * 0.75 + xs[i % 4], x, unroll=4),
        "fori_unroll_true": lambda lax, x, xs: lax.fori_loop(
            0, 5, lambda i, c: (c[0] * 1.5 + i, c[1] + x[0]), (x, 0.0), unroll=True),
        "fori_unroll_zero": lambda lax, x, xs: lax.fori_loop(1, 4, lambda i, a: a - i, x, unroll=0),
        "scan_unroll_zero": lambda lax, x, xs: lax.scan(
            lambda c, r: (c + r, c * r), x, xs, unroll=0),
    }
    x = np.array([0.5, 1.25, -2.0], np.float32)
    xs = sample("float32", (4, 3), seed=5, with_specials=False)
    got = jit_call(lambda x, xs: {k: c(aotc.lax, x, xs) for k, c in cases.items()}, x, xs)
    jx, jxs = jax.numpy.asarray(x), jax.numpy.asarray(xs)
    want = {k: to_numpy(c(jax.lax, jx, jxs)) for k, c in cases.items()}
    assert_all(_leaves(got), _leaves(want), "accumulate", "jax.lax")


def _leaves(results: dict) -> dict:
    return {f"{k}{i}": np.asarray(v)
            for k, t in results.items() for i, v in enumerate(tree.flatten(t)[0])}
