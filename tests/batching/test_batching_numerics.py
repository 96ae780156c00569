"""aotc-batch against a Python loop + ``np.stack``: traced per-example functions are batched
by the pass, compiled with IREE and run at several batch sizes."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.compiler import compile_bytecode
from aotc.passes import Batch, run_pipeline

iree_rt = pytest.importorskip("iree.runtime")


def _spec(shape):
    return aotc.ShapeDtypeStruct(shape, "float32")


# Each function is written once over a module ``m``: aotc.numpy (traced) or numpy (loop).
def _mlp(m):
    def mlp(x, w, b):
        h = m.tanh(x @ w + b)
        return m.sum(h.T, axis=0), h.reshape(-1)
    return mlp


def _elementwise(m):
    def elementwise(x, y):
        return m.exp(x) * y + 1.0
    return elementwise


def _bilinear(m):
    def bilinear(x, y):
        return (x @ y).T
    return bilinear


mlp, elementwise, bilinear = _mlp, _elementwise, _bilinear


# (function, per-example shapes, in_axes)
CASES = [
    (mlp, [(4, 8), (8, 3), (3,)], (0, None, None)),
    (mlp, [(4, 8), (8, 3), (3,)], (0, 0, 0)),
    (mlp, [(4, 8), (8, 3), (3,)], (None, 0, None)),
    (elementwise, [(5, 2), (5, 2)], (0, None)),
    (bilinear, [(3, 4), (4, 2)], (0, 0)),
    (bilinear, [(3, 4), (4, 2)], (None, 0)),
]


def _batched_vmfb(fn, shapes, in_axes, size):
    lowered = aotc.jit(fn(anp)).lower(*[_spec(s) for s in shapes])
    module = lowered._module
    run_pipeline(module, [Batch(func=fn(np).__name__, in_axes=in_axes, size=size),
                          "canonicalize", "cse"])
    return compile_bytecode(module.operation.get_asm(binary=True), lowered.flags)


def _call(vmfb, name, args):
    config = iree_rt.Config("local-task")
    ctx = iree_rt.SystemContext(config=config)
    ctx.add_vm_module(iree_rt.VmModule.copy_buffer(config.vm_instance, vmfb))
    out = ctx.modules.module[name](*args)
    out = out if isinstance(out, (tuple, list)) else (out,)
    return [np.asarray(o.to_host()) for o in out]


def _inputs(shapes, in_axes, n, rng):
    return [rng.standard_normal(((n,) if a is not None else ()) + s).astype(np.float32)
            for s, a in zip(shapes, in_axes)]


def _reference(fn, args, in_axes, n):
    outs = []
    for i in range(n):
        ex = [np.asarray(a[i]) if ax is not None else a for a, ax in zip(args, in_axes)]
        r = fn(np)(*ex)
        outs.append(r if isinstance(r, tuple) else (r,))
    return [np.stack([o[k] for o in outs]) for k in range(len(outs[0]))]


def _check(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fn,shapes,in_axes", CASES,
                         ids=lambda c: c(np).__name__ if callable(c) else str(c))
@pytest.mark.parametrize("n", [1, 7])
def test_static_batch_matches_loop(fn, shapes, in_axes, n):
    rng = np.random.default_rng(0)
    vmfb = _batched_vmfb(fn, shapes, in_axes, n)
    args = _inputs(shapes, in_axes, n, rng)
    _check(_call(vmfb, f"{fn(np).__name__}_batched", args), _reference(fn, args, in_axes, n))


def test_dynamic_batch_one_compile(monkeypatch):
    import aotc.compiler as compiler

    calls = []
    real = compiler.compile_bytecode
    monkeypatch.setattr(compiler, "compile_bytecode",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    lowered = aotc.jit(mlp(anp)).lower(_spec((4, 8)), _spec((8, 3)), _spec((3,)))
    module = lowered._module
    run_pipeline(module, [Batch(func="mlp", in_axes=(0, None, None), size=None),
                          "canonicalize", "cse"])
    assert "tensor<?x4x8xf32>" in str(module)
    vmfb = compiler.compile_bytecode(module.operation.get_asm(binary=True), lowered.flags)
    rng = np.random.default_rng(1)
    for n in (1, 3, 64):
        args = _inputs([(4, 8), (8, 3), (3,)], (0, None, None), n, rng)
        _check(_call(vmfb, "mlp_batched", args), _reference(mlp, args, (0, None, None), n))
    assert len(calls) == 1
