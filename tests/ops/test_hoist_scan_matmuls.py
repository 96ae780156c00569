"""aotc-hoist-scan-matmuls (passes/hoist_scan_matmuls.py) in compiled programs: an RNN's
input projection in a ``lax.scan`` is one matmul before the loop, with the values of the
same network as a Python loop in numpy, and its gradient's and its vmap's too."""

from __future__ import annotations

import numpy as np

import aotc
import aotc.lax
import aotc.numpy as anp

from tests.fuzz.helpers import NUMPY_LAX
from .conftest import jit_call

RNG = np.random.default_rng(31)
STEPS, BATCH, INPUTS, HIDDEN = 12, 8, 16, 32


def _rnn(m, scan, h0, xs, wx, wh):
    def cell(h, x):
        h = m.tanh(x @ wx + h @ wh)
        return h, h * 2
    return scan(cell, h0, xs)


def _args():
    return (RNG.standard_normal((BATCH, HIDDEN)), RNG.standard_normal((STEPS, BATCH, INPUTS)),
            RNG.standard_normal((INPUTS, HIDDEN)) / 4, RNG.standard_normal((HIDDEN, HIDDEN)) / 6)


def test_input_projection_is_hoisted_with_numpys_values():
    args = _args()
    rnn = aotc.jit(lambda *a: _rnn(anp, aotc.lax.scan, *a))
    text = rnn.lower(*args).as_text()
    assert f"tensor<{STEPS * BATCH}x{INPUTS}xf64>" in text, text  # the sequence's matmul
    got = jit_call(lambda *a: _rnn(anp, aotc.lax.scan, *a), *args)
    want = _rnn(np, NUMPY_LAX.scan, *args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_hoisted_scan_under_grad_and_vmap():
    h0, xs, wx, wh = _args()

    def loss(wx, xs):
        return anp.sum(_rnn(anp, aotc.lax.scan, h0, xs, wx, wh)[1] ** 2)

    def numpy_loss(wx, xs):
        return np.sum(_rnn(np, NUMPY_LAX.scan, h0, xs, wx, wh)[1] ** 2)

    grad = jit_call(aotc.grad(loss), wx, xs)
    eps = 1e-6
    for i, j in ((0, 0), (3, 7), (15, 31)):
        step = np.zeros_like(wx)
        step[i, j] = eps
        numeric = (numpy_loss(wx + step, xs) - numpy_loss(wx - step, xs)) / (2 * eps)
        np.testing.assert_allclose(grad[i, j], numeric, rtol=1e-6)
    many = RNG.standard_normal((3, STEPS, BATCH, INPUTS))
    batched = jit_call(aotc.vmap(lambda xs: _rnn(anp, aotc.lax.scan, h0, xs, wx, wh)[1]), many)
    np.testing.assert_allclose(batched, [_rnn(np, NUMPY_LAX.scan, h0, x, wx, wh)[1] for x in many],
                               rtol=1e-12, atol=1e-12)
