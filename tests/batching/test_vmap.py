"""``aotc.vmap`` under ``aotc.jit`` and ``aotc.export`` against a Python loop + ``np.stack``."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import aotc
import aotc.numpy as anp

pytest.importorskip("iree.runtime")


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
    out = subprocess.run([sys.executable, "-c", _JIT_CHECK], cwd=root, capture_output=True, text=True)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


def test_export_dynamic_batch_one_compile(monkeypatch):
    export_module = sys.modules[aotc.export.__module__]  # the module, not the function
    calls = []
    real = export_module.compile_bytecode
    monkeypatch.setattr(export_module, "compile_bytecode",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    rng = np.random.default_rng(1)
    w1, w2 = _weights(rng)
    art = aotc.export(aotc.vmap(_mlp(anp), in_axes=(0, None, None)),
                      aotc.ShapeDtypeStruct((None, 4, 8), "float32"), w1, w2)
    assert len(calls) == 1
    meta = art.functions["mlp"]
    assert meta.args[0].shape == (None, 4, 8) and meta.args[1].shape == (8, 5)
    assert [r.shape for r in meta.results] == [(None, 3), (None, 20)]
    assert "tensor<?x4x8xf32>" in art.mlir and "mlp__example" not in art.mlir
    fn = art.load("local-task")["mlp"]
    for n in (1, 3, 64, 1000):
        xs = rng.standard_normal((n, 4, 8)).astype(np.float32)
        got = fn(xs, w1, w2)
        for g, w in zip(got, _reference([xs, w1, w2], (0, None, None), n)):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5)
    assert len(calls) == 1
    with pytest.raises(aotc.runtime.errors.ShapeError, match=r"\(\?, 4, 8\)"):
        fn(np.zeros((3, 4, 9), np.float32), w1, w2)


def test_batch_size_mismatch_lists_each_argument():
    f = aotc.jit(aotc.vmap(_mlp(anp), in_axes=(0, 0, None)))
    with pytest.raises(aotc.AotcError) as e:
        f(np.zeros((4, 4, 8), np.float32), np.zeros((5, 8, 5), np.float32), np.zeros((5, 3), np.float32))
    msg = str(e.value)
    assert "different sizes" in msg and "x: 4 (axis 0)" in msg and "w1: 5 (axis 0)" in msg
    assert "in_axes=None" in msg


def test_unsupported_out_axes():
    with pytest.raises(aotc.UnsupportedOpError, match=r"out_axes=1 is not supported yet; only out_axes=0"):
        aotc.vmap(_mlp(anp), out_axes=1)


def test_in_axes_errors():
    x, w1, w2 = np.zeros((2, 4, 8), np.float32), np.zeros((8, 5), np.float32), np.zeros((5, 3), np.float32)
    with pytest.raises(aotc.AotcError, match="in_axes has 2 entries"):
        aotc.jit(aotc.vmap(_mlp(anp), in_axes=(0, None)))(x, w1, w2)
    with pytest.raises(aotc.UnsupportedOpError, match="only the leading axis"):
        aotc.jit(aotc.vmap(_mlp(anp), in_axes=(1, None, None)))(x, w1, w2)
    with pytest.raises(aotc.AotcError, match="give axis_size=N"):
        aotc.jit(aotc.vmap(_mlp(anp), in_axes=None))(x[0], w1, w2)
