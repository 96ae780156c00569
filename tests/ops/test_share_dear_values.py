"""aotc-share-dear-values (passes/share_dear_values.py) in compiled programs: a softmax
written out, whose exponentials a reduction and a division read, computes them once (one
flow.tensor.clone in the module IREE compiles) and gives numpy's values, also with
infinities, batched by vmap and differentiated."""

from __future__ import annotations

import numpy as np

import aotc
import aotc.nn as ann
import aotc.numpy as anp

from .conftest import jit_call

RNG = np.random.default_rng(21)


def _softmax(m, x):
    e = m.exp(x - m.max(x, axis=-1, keepdims=True))
    return e / m.sum(e, axis=-1, keepdims=True)


def _programs(m, x, t):
    y = m.tanh(t)
    return {"softmax": _softmax(m, x), "rows": _softmax(m, x.T).T,
            "tanh shared": y * m.sum(y, axis=0)}


def test_shared_transcendentals_compute_numpys_values():
    for dtype, rtol in ((np.float32, 1e-5), (np.float64, 1e-12)):
        x = RNG.standard_normal((64, 300)).astype(dtype) * 4
        x[3, 7], x[5] = -np.inf, -np.inf  # an element that vanishes, a row of NaNs
        t = RNG.standard_normal((17, 9)).astype(dtype)
        text = aotc.jit(lambda x, t: _programs(anp, x, t)).lower(x, t).as_text()
        assert text.count("flow.tensor.clone") == 3, text
        got = jit_call(lambda x, t: _programs(anp, x, t), x, t)
        with np.errstate(invalid="ignore"):
            want = _programs(np, x, t)
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=rtol, atol=rtol / 10,
                                       equal_nan=True, err_msg=f"{name} {dtype.__name__}")


def test_shared_transcendentals_under_vmap_and_grad():
    x = RNG.standard_normal((6, 5, 40))
    w = RNG.standard_normal(40)

    def loss(x, w):
        return anp.sum(_softmax(anp, x * w) * w)

    batched = jit_call(aotc.vmap(lambda x: _softmax(anp, x)), x)
    np.testing.assert_allclose(batched, [_softmax(np, v) for v in x], rtol=1e-12)
    grad = jit_call(aotc.grad(loss, argnums=1), x, w)
    eps = 1e-6
    numeric = [(np.sum(_softmax(np, x * (w + eps * e)) * (w + eps * e))
                - np.sum(_softmax(np, x * (w - eps * e)) * (w - eps * e))) / (2 * eps)
               for e in np.eye(40)]
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jit_call(ann.softmax, x), _softmax(np, x), rtol=1e-12)
