"""aotc-tile-convolutions (passes/conv_tiles.py): which channel-last convolutions get
register tiles of whole AVX2 vectors, and that they compute numpy's values on any host
(the setting is forced on: tile sizes are portable, only their speed was measured on one
CPU), gradients included."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.lax as alax
import aotc.nn as ann
from aotc import build
from aotc.passes.conv_tiles import setting
from aotc.passes.matmul_tiles import ATTRIBUTE

from .test_convolution import conv_reference

RNG = np.random.default_rng(11)
NHWC = ("NHWC", "HWIO", "NHWC")


def _tiles(info: str) -> tuple[str, str]:
    """(distribution, register tile) of a setting, the sizes of (n, rows, columns,
    channels) alone: the window's and the input channels' are 0."""
    body = info.split("distribution = ")[1]
    distribution, register_tile = body.split("]")[0], body.split("vector_common_parallel = ")[1]
    assert distribution.endswith(", 0, 0, 0") and register_tile.split("]")[0].endswith(", 0, 0, 0")
    return distribution[1:-9], register_tile.split("]")[0][1:-9]


def test_setting_takes_a_vector_of_channels_by_up_to_14_columns():
    """The CNN's second layer: 8 float32 channels (one AVX2 vector) by 14 columns, one input
    channel a step, workgroups of whole rows within 4096 output elements; float64 takes 4
    channels; 11 columns (a VALID 13x13) one tile of 11; 56 columns 14 a tile, 56 a
    workgroup, 64 channels of 128."""
    assert _tiles(setting((32, 14, 14, 32), (3, 3), 16, "f32", 32)) == (
        "1, 7, 14, 32", "1, 1, 14, 8")
    assert "vector_reduction = [0, 0, 0, 0, 1, 1, 1]" in setting((32, 14, 14, 32), (3, 3), 16,
                                                                  "f32", 32)
    assert _tiles(setting((32, 14, 14, 32), (3, 3), 16, "f64", 32)) == (
        "1, 7, 14, 32", "1, 1, 14, 4")
    assert _tiles(setting((8, 11, 11, 48), (3, 3), 32, "f32", 32)) == (
        "1, 1, 11, 48", "1, 1, 11, 8")
    assert _tiles(setting((4, 56, 56, 128), (3, 3), 128, "f32", 32)) == (
        "1, 1, 56, 64", "1, 1, 14, 8")


@pytest.mark.parametrize("output, window, channels, why", [
    ((8, 56, 56, 256), (1, 1), 64, "a 1x1 window is a matmul"),
    ((32, 28, 28, 16), (3, 3), 2, "fewer input channels than a vector's lanes"),
    ((16, 24, 24, 10), (5, 5), 8, "output channels not a multiple of the lanes"),
    ((8, 17, 17, 40), (3, 3), 24, "17 columns: no divisor from 4 to 14"),
])
def test_setting_leaves_irees_choice_where_it_measured_no_faster(output, window, channels, why):
    assert setting(output, window, channels, "f32", 32) is None, why


def test_the_rule_is_x86_without_avx512():
    from aotc import cpu_paths
    from aotc.targets import get_target

    names = ("x86_64:znver3", "x86_64:haswell", "x86_64:znver4", "x86_64:znver5", "aarch64",
             "riscv64", "vulkan")
    assert [cpu_paths.tiles_convolutions(get_target(n)) for n in names] == [
        True, True, False, False, False, False, False]


def _network(x, w1, w2, w3, b2):
    """Three convolutions that get settings (stride 2, dilation 2, VALID), a bias and relu
    fused after one, and one that keeps IREE's choice (1x1)."""
    h = ann.relu(alax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=NHWC) + b2)
    strided = alax.conv_general_dilated(h, w2, (2, 2), "SAME", dimension_numbers=NHWC)
    dilated = alax.conv_general_dilated(h, w2, (1, 1), "VALID", rhs_dilation=(2, 2),
                                        dimension_numbers=NHWC)
    pointwise = alax.conv_general_dilated(h, w3, (1, 1), "VALID", dimension_numbers=NHWC)
    return h, strided, dilated, pointwise


def _network_reference(x, w1, w2, w3, b2):
    def conv(a, w, strides, padding, dilation=None):
        return conv_reference(a, w, strides, padding, None, dilation, NHWC, 1, np.float64)

    h = np.maximum(conv(x, w1, (1, 1), "SAME") + b2, 0)
    return (h, conv(h, w2, (2, 2), "SAME"), conv(h, w2, (1, 1), "VALID", (2, 2)),
            conv(h, w3, (1, 1), "VALID"))


@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-4), (np.float64, 1e-12)])
def test_tiled_convolutions_compute_numpys_values(monkeypatch, dtype, tol):
    monkeypatch.setattr(build, "tiles_convolutions", lambda target: True)
    monkeypatch.setattr(build, "register_bytes", lambda target: 32)
    args = [RNG.standard_normal(s).astype(dtype) / np.sqrt(n) for s, n in (
        ((4, 14, 14, 16), 1), ((3, 3, 16, 32), 144), ((3, 3, 32, 16), 288), ((1, 1, 32, 8), 32),
        ((32,), 1))]
    jitted = aotc.jit(_network)
    text = jitted.lower(*args).as_text()
    assert text.count(f"{ATTRIBUTE} = ") == 3, text  # not the 1x1 convolution
    for got, want in zip(jitted(*args), _network_reference(*args)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def test_gradients_through_tiled_convolutions_match_finite_differences(monkeypatch):
    """The backward pass's convolutions (the image's cotangent is one; the weights' is
    not, its 3 columns too few) carry settings too; float64 central differences."""
    monkeypatch.setattr(build, "tiles_convolutions", lambda target: True)
    monkeypatch.setattr(build, "register_bytes", lambda target: 32)
    x = RNG.standard_normal((2, 12, 12, 8))
    w = RNG.standard_normal((3, 3, 8, 16)) / 8

    def loss(x, w):
        y = alax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=NHWC)
        return (y * y).sum()

    grad = aotc.jit(aotc.grad(loss, argnums=(0, 1)))
    assert grad.lower(x, w).as_text().count(f"{ATTRIBUTE} = ") == 2
    gx, gw = (np.asarray(g) for g in grad(x, w))
    value = aotc.jit(loss)
    eps = 1e-6
    for index in ((0, 3, 4, 2), (1, 11, 0, 7)):
        dx = np.zeros_like(x)
        dx[index] = eps
        want = (float(value(x + dx, w)) - float(value(x - dx, w))) / (2 * eps)
        np.testing.assert_allclose(gx[index], want, rtol=1e-6, atol=1e-6)
    for index in ((0, 2, 5, 9), (2, 1, 7, 0)):
        dw = np.zeros_like(w)
        dw[index] = eps
        want = (float(value(x, w + dw)) - float(value(x, w - dw))) / (2 * eps)
        np.testing.assert_allclose(gw[index], want, rtol=1e-6, atol=1e-6)
