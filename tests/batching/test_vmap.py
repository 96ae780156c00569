"""``aotc.vmap``: composition with jit, export and itself, dynamic batch artifacts, the IR it
hands to IREE, and its error messages. Results are compared with a Python loop +
``np.stack`` (float32, rtol 1e-5, atol 1e-5: batched matmuls may sum in another order)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import aotc
import aotc.numpy as anp

pytest.importorskip("iree.runtime")

TOL = dict(rtol=1e-5, atol=1e-5)


def _mlp(m):
    def mlp(x, w1, w2):
        h = m.tanh(x @ w1)
        return m.sum(h @ w2, axis=0), h.reshape(-1)
    return mlp


def _reference(args, in_axes, n):
    outs = []
    for i in range(n):
        ex = [a[i] if ax is not None else a for a, ax in zip(args, in_axes)]
        outs.append(_mlp(np)(*ex))
    return [np.stack([o[k] for o in outs]) for k in range(len(outs[0]))]


def _weights(rng):
    return (rng.standard_normal((8, 5)).astype(np.float32),
            rng.standard_normal((5, 3)).astype(np.float32))


def _loop(fn, args, in_axes, n, out_axis=0):
    per = [fn(*[np.take(a, i, axis=ax) if ax is not None else a for a, ax in zip(args, in_axes)])
           for i in range(n)]
    return np.moveaxis(np.stack(per), 0, out_axis)


_JIT_CHECK = """
import numpy as np, aotc, aotc.numpy as anp
from tests.batching.test_vmap import _mlp, _reference, _weights
rng = np.random.default_rng(0)
w1, w2 = _weights(rng)
f = aotc.jit(aotc.vmap(_mlp(anp), in_axes=(0, None, None)))
for n in (1, 7):
    xs = rng.standard_normal((n, 4, 8)).astype(np.float32)
    for g, w in zip(f(xs, w1, w2), _reference([xs, w1, w2], (0, None, None), n)):
        assert np.asarray(g).shape == w.shape
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5)
assert f.stats["traces"] == 2
print("ok")
"""


def test_jit_vmap_matches_loop():
    # In its own process: the runtime's default device keeps allocator statistics that
    # tests of the memory suite read from a fresh process state.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", _JIT_CHECK], cwd=root, capture_output=True,
                         text=True)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


def _count_compiles(monkeypatch, tmp_path) -> list:
    """IREE compiles by aotc.export from now on, from an empty disk cache (export shares
    jit's entries: an earlier test's program would be a hit)."""
    monkeypatch.setenv("AOTC_CACHE_DIR", str(tmp_path / "cache"))
    export_module = sys.modules[aotc.export.__module__]  # the module, not the function
    calls = []
    real = export_module.compile_bytecode
    monkeypatch.setattr(export_module, "compile_bytecode",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def test_dynamic_batch_artifact_one_compile(monkeypatch, tmp_path):
    calls = _count_compiles(monkeypatch, tmp_path)
    rng = np.random.default_rng(1)
    w1, w2 = _weights(rng)
    art = aotc.export(aotc.vmap(_mlp(anp), in_axes=(0, None, None)),
                      aotc.ShapeDtypeStruct((None, 4, 8), "float32"), w1, w2)
    assert len(calls) == 1
    meta = art.functions["mlp"]
    assert meta.args[0].shape == (None, 4, 8) and meta.args[1].shape == (8, 5)
    assert [r.shape for r in meta.results] == [(None, 3), (None, 20)]
    assert "tensor<?x4x8xf32>" in art.mlir
    assert "__vmap" not in art.mlir and "func.call" not in art.mlir
    from aotc import runtime

    fn = runtime.load(art.save(tmp_path / "mlp.vmfb"), device="local-task")["mlp"]
    for n in (1, 3, 64, 1000):
        xs = rng.standard_normal((n, 4, 8)).astype(np.float32)
        got = fn(xs, w1, w2)
        for g, w in zip(got, _reference([xs, w1, w2], (0, None, None), n)):
            assert np.asarray(g).shape == w.shape
            np.testing.assert_allclose(np.asarray(g), w, **TOL)
    assert len(calls) == 1
    with pytest.raises(runtime.errors.ShapeError, match=r"\(\?, 4, 8\)"):
        fn(np.zeros((3, 4, 9), np.float32), w1, w2)


def test_dynamic_batch_shared_by_arguments_is_checked(monkeypatch):
    # Two batched arguments with a None batch dimension share one named dimension, so the
    # runtime rejects calls whose batch sizes differ instead of reading out of bounds.
    spec = aotc.ShapeDtypeStruct((None, 3), "float32")
    art = aotc.export(aotc.vmap(lambda x, y: x * y + 1.0, in_axes=(0, 1), out_axes=1), spec,
                      aotc.ShapeDtypeStruct((3, None), "float32"), name="f")
    meta = art.functions["f"]
    assert meta.args[0].shape == ("batch", 3) and meta.args[1].shape == (3, "batch")
    assert meta.results[0].shape == (3, "batch")
    fn = art.load()["f"]
    x, y = np.arange(15, dtype=np.float32).reshape(5, 3), np.ones((3, 5), np.float32)
    np.testing.assert_allclose(np.asarray(fn(x, y)), (x * y.T + 1.0).T)
    with pytest.raises(aotc.runtime.errors.ShapeError, match="batch"):
        fn(x, np.ones((3, 4), np.float32))


def test_compositions_inside_jit():
    """vmap called inside a traced function: nested both ways, around jit, with pytrees,
    keyword arguments, Python values, out_axes variants and None."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((5, 4)).astype(np.float32)
    w = rng.standard_normal((4, 2)).astype(np.float32)
    xs = rng.standard_normal((4, 6)).astype(np.float32)  # batch along axis 1

    def dense(x, w, scale):
        return anp.tanh(x @ w) * scale

    @aotc.jit
    def f(a, b, w, xs):
        def pair(u, v):
            return u * v + 1.0
        return {
            "nested": aotc.vmap(aotc.vmap(pair, in_axes=(0, None)), in_axes=(None, 0))(a, b),
            "nested_out": aotc.vmap(aotc.vmap(pair, in_axes=(0, None), out_axes=1),
                                    in_axes=(None, 0), out_axes=-1)(a, b),
            "around_jit": aotc.vmap(aotc.jit(dense), in_axes=(1, None, None))(xs, w, 2.0),
            "pytree": aotc.vmap(lambda p: {"y": p["x"] @ p["w"], "n": p["w"].sum()},
                                in_axes=({"x": 0, "w": None},), out_axes={"y": 1, "n": None})(
                                    {"x": a, "w": w}),
            "kwargs": aotc.vmap(lambda u, *, v: u - v)(a, v=a * 2.0),
            "axis_size": aotc.vmap(lambda u: u.sum(), in_axes=None, axis_size=3)(w),
            "list_axes": aotc.vmap(lambda u, v: u + v, in_axes=[0, None])(a, b[0]),
        }

    got = {k: np.asarray(v) if not isinstance(v, dict) else {j: np.asarray(u) for j, u in v.items()}
           for k, v in f(a, b, w, xs).items()}
    nested = np.stack([np.stack([a[i] * b[j] + 1.0 for i in range(3)]) for j in range(5)])
    np.testing.assert_allclose(got["nested"], nested, **TOL)
    np.testing.assert_allclose(got["nested_out"], np.moveaxis(np.moveaxis(nested, 1, 2), 0, -1),
                               **TOL)
    np.testing.assert_allclose(got["around_jit"], np.tanh(xs.T @ w) * 2.0, **TOL)
    np.testing.assert_allclose(got["pytree"]["y"], (a @ w).T, **TOL)
    np.testing.assert_allclose(got["pytree"]["n"], w.sum(), **TOL)
    assert got["pytree"]["n"].shape == ()
    np.testing.assert_allclose(got["kwargs"], -a, **TOL)
    np.testing.assert_allclose(got["axis_size"], np.full(3, w.sum()), **TOL)
    np.testing.assert_allclose(got["list_axes"], a + b[0], **TOL)
    assert f.stats["compiles"] + f.stats["disk_hits"] == 1


def test_compositions_at_top_level():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((7, 3, 4)).astype(np.float32)
    w = rng.standard_normal((4, 2)).astype(np.float32)
    # vmap(jit(f)) called eagerly: jits itself once per signature.
    vj = aotc.vmap(aotc.jit(lambda u, v: u @ v), in_axes=(1, None), out_axes=1)
    np.testing.assert_allclose(np.asarray(vj(x, w)), np.einsum("ibk,kj->ibj", x, w), **TOL)
    vj(x, w)
    assert vj._jitted.stats["traces"] == 1
    # vmap(vmap(f)) called eagerly.
    vv = aotc.vmap(aotc.vmap(lambda u: anp.sum(u * u), in_axes=1), in_axes=0)
    np.testing.assert_allclose(np.asarray(vv(x)), (x * x).sum(axis=1), **TOL)
    # Static arguments of the enclosing jit pass through the vmap (in_axes=None).
    def tile(u, reps):
        return anp.concatenate([u] * reps, axis=0)
    js = aotc.jit(aotc.vmap(tile, in_axes=(2, None), out_axes=2), static_argnums=1)
    np.testing.assert_allclose(np.asarray(js(x, 2)), np.concatenate([x, x], axis=0), **TOL)
    np.testing.assert_allclose(np.asarray(js(x, 3)), np.concatenate([x] * 3, axis=0), **TOL)
    assert js.stats["traces"] == 2


def test_batched_ir_keeps_weights_unbatched():
    """The per-example MLP becomes one matmul over batch x rows with the weight as it
    is: no broadcast of the weight, no batch_matmul, no call left for IREE; a batch axis
    elsewhere than 0 is one linalg.transpose on entry and one on exit."""
    w1, w2 = _weights(np.random.default_rng(0))
    x = aotc.ShapeDtypeStruct((None, 4, 8), "float32")
    text = aotc.jit(aotc.vmap(_mlp(anp), in_axes=(0, None, None))).lower(x, w1, w2).as_text()
    assert len(re.findall(r"linalg\.matmul", text)) == 2, text
    assert "batch_matmul" not in text and "linalg.broadcast" not in text, text
    assert re.search(r"linalg\.matmul ins\([^)]*tensor<\?x8xf32>, tensor<8x5xf32>\)", text), text
    assert "func.call" not in text and "private" not in text, text
    moved = aotc.jit(aotc.vmap(lambda u, v: anp.tanh(u @ v), in_axes=(1, None), out_axes=1))
    text = moved.lower(aotc.ShapeDtypeStruct((4, 7, 8), "float32"), w1).as_text()
    assert text.count("linalg.transpose") == 2, text


def test_batched_vector_matrix_products_are_matmuls():
    """x @ W per example (a vector-matrix product, a generic) batched over x is one
    linalg.matmul, for floats and integers; W @ x per example stays a generic. Values
    match a loop."""
    rng = np.random.default_rng(5)
    xs, w = rng.standard_normal((6, 8)).astype(np.float32), rng.standard_normal((8, 5))
    ints = rng.integers(-9, 9, (6, 8)).astype(np.int32)
    w, wi = w.astype(np.float32), (w * 4).astype(np.int32)

    def per_example(x, xi):
        return anp.tanh(x @ w), xi @ wi, w.T @ x

    batched = aotc.jit(aotc.vmap(per_example))
    text = batched.lower(xs, ints).as_text()
    assert len(re.findall(r"linalg\.matmul ins", text)) == 2, text
    got = batched(xs, ints)
    want = [np.stack(r) for r in zip(*(
        (np.tanh(x @ w), xi @ wi, w.T @ x) for x, xi in zip(xs, ints)))]
    for g, v in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), v, **TOL)


# ---- errors --------------------------------------------------------------------------

def _x_w():
    return (np.zeros((2, 4, 8), np.float32), np.zeros((8, 5), np.float32),
            np.zeros((5, 3), np.float32))


def _raises(exc, *fragments):
    return pytest.raises(exc, match="(?s)" + "".join(f"(?=.*{re.escape(f)})" for f in fragments))


def test_batch_size_mismatch_lists_each_argument():
    f = aotc.jit(aotc.vmap(_mlp(anp), in_axes=(0, 1, None)))
    with _raises(aotc.AotcError, "different sizes", "x: 4 (axis 0 of shape (4, 4, 8))",
                 "w1: 5 (axis 1 of shape (8, 5, 5))", "in_axes=None"):
        f(np.zeros((4, 4, 8), np.float32), np.zeros((8, 5, 5), np.float32),
          np.zeros((5, 3), np.float32))
    g = aotc.jit(aotc.vmap(lambda p: p["a"] + p["b"]))
    with _raises(aotc.AotcError, "p['a']: 2", "p['b']: 3"):
        g({"a": np.zeros((2, 3)), "b": np.zeros((3, 3))})
    with _raises(aotc.AotcError, "x: 2 (axis 0", "axis_size=3"):
        aotc.jit(aotc.vmap(_mlp(anp), in_axes=(0, None, None), axis_size=3))(*_x_w())


def test_in_axes_structure_errors():
    x, w1, w2 = _x_w()
    with _raises(aotc.AotcError, "in_axes has 2 entries", "3 positional arguments (x, w1, w2)"):
        aotc.jit(aotc.vmap(_mlp(anp), in_axes=(0, None)))(x, w1, w2)
    def f(p):
        return p["a"] * p["b"]
    with _raises(aotc.AotcError, "in_axes for p has keys ['a', 'c']", "keys ['a', 'b']"):
        aotc.jit(aotc.vmap(f, in_axes=({"a": 0, "c": None},)))({"a": x, "b": x})
    with _raises(aotc.AotcError, "in_axes gives a tuple (0, None) for x", "give one int/None"):
        aotc.jit(aotc.vmap(_mlp(anp), in_axes=((0, None), None, None)))(x, w1, w2)
    with _raises(aotc.AotcError, "in_axes contains '0' (str)"):
        aotc.vmap(_mlp(anp), in_axes=("0", None, None))
    with _raises(aotc.AotcError, "argument n is a int (3)", "in_axes=None"):
        aotc.jit(aotc.vmap(lambda u, n: u * n), static_argnums=1)(x, 3)


def test_axis_errors():
    x, w1, w2 = _x_w()
    with _raises(aotc.AotcError, "in_axes=3 is out of range for argument x of shape (2, 4, 8)",
                 "[-3, 3)"):
        aotc.jit(aotc.vmap(_mlp(anp), in_axes=(3, None, None)))(x, w1, w2)
    with _raises(aotc.AotcError, "argument s is a 0-d array", "in_axes=None"):
        aotc.jit(aotc.vmap(lambda u, s: u * s))(x, np.float32(2))
    with _raises(aotc.AotcError, "no argument is batched", "give axis_size=N"):
        aotc.jit(aotc.vmap(_mlp(anp), in_axes=None))(x[0], w1, w2)
    with _raises(aotc.AotcError, "axis_size must be a non-negative int"):
        aotc.vmap(_mlp(anp), axis_size=-1)
    with _raises(aotc.AotcError, "dynamic dimension 1", "only the batch dimension may be dynamic"):
        aotc.export(aotc.vmap(lambda u: u * 2), aotc.ShapeDtypeStruct((None, None), "float32"))
    with _raises(aotc.AotcError, "different names", "u: 'n'", "v: 'm'"):
        aotc.export(aotc.vmap(lambda u, v: u + v), aotc.ShapeDtypeStruct(("n", 2), "float32"),
                    aotc.ShapeDtypeStruct(("m", 2), "float32"))


def test_out_axes_errors():
    x, w1, w2 = _x_w()
    with _raises(aotc.AotcError, "out_axes for the result has 3 entries", "the result has 2"):
        aotc.jit(aotc.vmap(_mlp(anp), in_axes=(0, None, None), out_axes=(0, 0, 0)))(x, w1, w2)
    with _raises(aotc.AotcError, "out_axes=2 is out of range for result out[0]", "shape (3,)",
                 "[-2, 2)"):
        aotc.jit(aotc.vmap(_mlp(anp), in_axes=(0, None, None), out_axes=2))(x, w1, w2)
    with _raises(aotc.AotcError, "out_axes is None for result out[1]", "depends on a batched",
                 "int out_axes"):
        aotc.jit(aotc.vmap(_mlp(anp), in_axes=(0, None, None), out_axes=(0, None)))(x, w1, w2)



def test_vmap_over_random_keys():
    """A batch of PRNG keys, one per example, as jax.vmap over keys."""
    import aotc.random as ar

    keys = np.asarray(aotc.jit(lambda k: ar.split(k, 5))(ar.PRNGKey(0)))
    one = aotc.jit(lambda k: ar.normal(k, (3,)))
    got = np.asarray(aotc.jit(aotc.vmap(lambda k: ar.normal(k, (3,))))(keys))
    np.testing.assert_array_equal(got, np.stack([np.asarray(one(k)) for k in keys]))
