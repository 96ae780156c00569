"""aotc-tile-matmuls (passes/matmul_tiles.py) in compiled programs: float32 matmuls that
carry its tile setting compute numpy's values, on any host (the setting is forced on:
tile sizes are portable, only their speed was measured on one CPU); a module that
carries settings loses them on a retry (compiler.compile_bytecode)."""

from __future__ import annotations

import numpy as np

import aotc
import aotc.numpy as anp
from aotc import build
from aotc.passes.matmul_tiles import ATTRIBUTE, without_tile_settings

RNG = np.random.default_rng(7)


def _layers(m, x, w1, b1, w2):
    h = m.maximum(x @ w1 + b1, 0.0)  # a layer: matmul, bias, relu
    return h @ w2, x @ w1.T.T, (x @ w1)[:, :3] * 2  # tiled matmuls with consumers


def test_tiled_matmuls_compute_numpys_values(monkeypatch):
    monkeypatch.setattr(build, "tiles_matmuls", lambda target: True)
    for rows in (64, 256, 33):
        x = RNG.standard_normal((rows, 784)).astype(np.float32)
        w1 = RNG.standard_normal((784, 512)).astype(np.float32) / 28
        b1 = RNG.standard_normal(512).astype(np.float32)
        w2 = RNG.standard_normal((512, 384)).astype(np.float32) / 22
        jitted = aotc.jit(lambda *a: _layers(anp, *a))
        text = jitted.lower(x, w1, b1, w2).as_text()
        assert text.count(f"{ATTRIBUTE} = ") >= 2, text
        got = jitted(x, w1, b1, w2)
        for g, want in zip(got, _layers(np, x.astype(np.float64), w1, b1, w2)):
            np.testing.assert_allclose(np.asarray(g), want, rtol=2e-4, atol=2e-4)


def test_a_retry_drops_the_settings(monkeypatch):
    monkeypatch.setattr(build, "tiles_matmuls", lambda target: True)
    x, w = np.ones((64, 512), np.float32), np.ones((512, 256), np.float32)
    lowered = aotc.jit(lambda x, w: x @ w).lower(x, w)  # weights as arguments: no data tiling
    mlir = lowered.as_text().encode()
    assert ATTRIBUTE.encode() in mlir
    plain = without_tile_settings(mlir)
    assert plain is not None and ATTRIBUTE.encode() not in plain
    assert without_tile_settings(plain) is None
