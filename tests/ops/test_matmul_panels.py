"""Matmuls on packed panels (passes/matmul_panels.py, part of aotc-tile-matmuls for
AVX2's 32-byte registers): the rule, and numpy's values from programs whose matmuls run
on panels on any host (the setting is forced on: panels are portable, only their speed
was measured on one CPU), with padded rows and columns, transposed operands, consumers,
an accumulated init, layers that feed each other and a gradient."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc import build
from aotc.passes import matmul_panels
from aotc.passes.matmul_tiles import ATTRIBUTE

RNG = np.random.default_rng(11)
PANEL_SETTING = "vector_common_parallel = [1, 4, 1, "
# the panel product's loops (row block, row, panel, column, k)
PANEL_GENERIC = 'iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]' 


@pytest.fixture
def avx2(monkeypatch):
    monkeypatch.setattr(build, "tiles_matmuls", lambda target: True)
    monkeypatch.setattr(build, "register_bytes", lambda target: 32)


def test_the_rule():
    # float64 from 64 rows, float32 from 100, both from 2 * 256^3 flops
    assert matmul_panels.packs(64, 784, 512, 8)
    assert not matmul_panels.packs(32, 784, 512, 8)  # too few rows
    assert not matmul_panels.packs(64, 784, 512, 4)
    assert matmul_panels.packs(100, 784, 512, 4)
    assert not matmul_panels.packs(128, 512, 128, 8)  # too few flops
    assert matmul_panels.panel_columns(8, 32) == 8 and matmul_panels.panel_columns(4, 32) == 16
    # workgroups: the most register rows up to 8 that divide the row blocks, 4 panels
    assert "distribution = [8, 4, 4, 8, 0]" in matmul_panels.setting(512, 8)
    assert "distribution = [5, 4, 4, 16, 0]" in matmul_panels.setting(100, 16)
    assert "vector_common_parallel = [1, 1, 4, 1, 8, 0]" in matmul_panels.setting(64, 8, True)
    assert "distribution = [1, 4, 4, 8, 0]" in matmul_panels.setting(68, 8)  # 17 blocks


def _program(m, x, w, b, v, u, c):
    h = m.maximum(x @ w + b, 0.0)  # a layer: matmul, bias, relu
    out = h @ v  # fed by the layer before: its pack is a dispatch of its own
    # x @ u.T does too few flops per element of u for its copy (matmul_tiles), IREE's
    return out, x @ u.T, 1.5 * (x @ w) + c, (x @ w)[:, :5] * 2


@pytest.mark.parametrize("dtype, rows, rtol", [(np.float64, 66, 1e-12), (np.float32, 101, 2e-4)])
def test_programs_on_panels_compute_numpys_values(avx2, dtype, rows, rtol):
    """Rows and columns that are not whole register tiles and panels (66 or 101 rows, 500
    and 520 columns) are padded and cut off again."""
    x = RNG.standard_normal((rows, 784)).astype(dtype)
    w = (RNG.standard_normal((784, 500)) / 28).astype(dtype)
    b = RNG.standard_normal(500).astype(dtype)
    v = (RNG.standard_normal((500, 1040)) / 22).astype(dtype)
    u = (RNG.standard_normal((520, 784)) / 28).astype(dtype)  # read transposed
    c = RNG.standard_normal((rows, 500)).astype(dtype)
    args = (x, w, b, v, u, c)
    jitted = aotc.jit(lambda *a: _program(anp, *a))
    text = jitted.lower(*args).as_text()
    assert text.count(PANEL_GENERIC) == 2 and PANEL_SETTING in text, text
    wide = [a.astype(np.float64) for a in args]
    for got, want in zip(jitted(*args), _program(np, *wide)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=rtol)


def test_batch_matmuls_on_panels_compute_numpys_values(avx2):
    """One batch element a workgroup; 516 columns padded to whole panels."""
    a, b = RNG.standard_normal((2, 72, 512)), RNG.standard_normal((2, 512, 516))
    jitted = aotc.jit(lambda a, b: anp.matmul(a, b) - 1.0)
    text = jitted.lower(a, b).as_text()
    loops = "iterator_types = [" + '"parallel", ' * 5 + '"reduction"]'  # (batch, b, r, p, c, k)
    assert text.count(loops) == 1, text
    assert "distribution = [1, 6, 4, 4, 8, 0]" in text and "batch_matmul" not in text, text
    np.testing.assert_allclose(np.asarray(jitted(a, b)), a @ b - 1.0, rtol=1e-12, atol=1e-12)


def test_modules_all_on_panels_compile_without_data_tiling(avx2):
    """A float32 matmul large enough for data tiling (2 * 512^3 flops) runs on panels
    instead when every contraction of its module does; with one of too few rows for
    panels beside it (64), the module keeps data tiling (and the pass does not run)."""
    from aotc.targets import DATA_TILING

    a = RNG.standard_normal((256, 512)).astype(np.float32)
    b = RNG.standard_normal((512, 2048)).astype(np.float32)
    large = aotc.jit(lambda a, b: a @ b)
    lowered = large.lower(a, b)
    assert DATA_TILING[0] not in lowered.flags and PANEL_SETTING in lowered.as_text()
    np.testing.assert_allclose(np.asarray(large(a, b)), a.astype(np.float64) @ b,
                               rtol=1e-4, atol=1e-3)
    c = np.zeros((64, 4096), np.float32)
    d = np.zeros((4096, 1024), np.float32)
    lowered = aotc.jit(lambda a, b, c, d: (a @ b, c @ d)).lower(a, b, c, d)
    assert DATA_TILING[0] in lowered.flags and PANEL_SETTING not in lowered.as_text()


def test_without_avx2_registers_no_panels(monkeypatch):
    monkeypatch.setattr(build, "tiles_matmuls", lambda target: True)
    monkeypatch.setattr(build, "register_bytes", lambda target: 64)
    x, w = RNG.standard_normal((64, 784)), RNG.standard_normal((784, 512))
    text = aotc.jit(lambda x, w: x @ w).lower(x, w).as_text()
    assert PANEL_SETTING not in text and "linalg.matmul {" + ATTRIBUTE in text, text


def test_a_gradient_through_panels_matches_finite_differences(avx2):
    """The backward pass's products (x.T @ d and d @ w.T) run on panels too."""
    rng = np.random.default_rng(5)  # its own: the central difference's error depends on them
    x = rng.standard_normal((256, 320))
    w = rng.standard_normal((320, 384)) / 17
    v = rng.standard_normal((384, 64))

    def loss(m, w, x):
        return m.sum(m.tanh(x @ w) @ v)

    grad = aotc.jit(aotc.grad(lambda w, x: loss(anp, w, x), argnums=(0, 1)))
    assert grad.lower(w, x).as_text().count(PANEL_GENERIC) == 3  # and x @ w
    gw, gx = (np.asarray(g) for g in grad(w, x))
    t = np.tanh(x @ w)
    d = (1 - t * t) * v.sum(axis=1)  # the cotangent of x @ w
    np.testing.assert_allclose(gw, x.T @ d, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gx, d @ w.T, rtol=1e-10, atol=1e-10)
    # eps 1e-5: truncation error ~eps^2, rounding ~1e-13 (the loss's ulp) / eps
    eps, i, j = 1e-5, 3, 7
    bumped = w.copy()
    bumped[i, j] += eps
    lowered = w.copy()
    lowered[i, j] -= eps
    central = (loss(np, bumped, x) - loss(np, lowered, x)) / (2 * eps)
    np.testing.assert_allclose(gw[i, j], central, rtol=1e-6, atol=1e-7)
