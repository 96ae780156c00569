"""aotc-tile-matmuls (passes/matmul_tiles.py) in compiled programs: float32 matmuls that
carry its tile setting compute numpy's values, on any host (the setting is forced on:
tile sizes are portable, only their speed was measured on one CPU); a module that
carries settings loses them on a retry (compiler.compile_bytecode)."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc import build
from aotc.passes import matmul_tiles
from aotc.passes.matmul_tiles import ATTRIBUTE, without_tile_settings

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _avx512_registers(monkeypatch):
    """The settings these tests name are the ones for 64-byte vector registers (AVX-512),
    whatever this host's: the compiler would otherwise narrow them on an AVX2 host."""
    monkeypatch.setattr(build, "register_bytes", lambda target: 64)


def _layers(m, x, w1, b1, w2):
    h = m.maximum(x @ w1 + b1, 0.0)  # a layer: matmul, bias, relu
    return h @ w2, x @ w1.T.T, (x @ w1)[:, :3] * 2  # tiled matmuls with consumers


def test_tiled_matmuls_compute_numpys_values(monkeypatch):
    monkeypatch.setattr(build, "tiles_matmuls", lambda target: True)
    for rows in (64, 256, 24):
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


def _backward(m, x, d, w):
    return x.T @ d, d @ w.T, (x.T @ d)[::3] - 1  # a weight gradient, a cotangent


def test_vector_matrix_products_compute_numpys_values(monkeypatch):
    """A batch-1 layer (one-row x @ W, rewritten into the vector-matrix generic) and a
    1-D x @ W get the vector setting (128 or 64 register columns, N not a multiple of
    either), float32 and float64; numpy's values."""
    monkeypatch.setattr(build, "tiles_matmuls", lambda target: True)

    def layers(m, x, w1, b1, w2, v):
        h = m.maximum(x @ w1 + b1, 0.0)
        return h @ w2, v @ w1[:, :96], (v @ w1)[::2]

    for dtype, rtol in ((np.float32, 2e-4), (np.float64, 1e-12)):
        x = RNG.standard_normal((1, 784)).astype(dtype)
        w1 = (RNG.standard_normal((784, 300)) / 28).astype(dtype)
        b1, v = RNG.standard_normal(300).astype(dtype), RNG.standard_normal(784).astype(dtype)
        w2 = (RNG.standard_normal((300, 200)) / 17).astype(dtype)
        jitted = aotc.jit(lambda *a: layers(anp, *a))
        text = jitted.lower(x, w1, b1, w2, v).as_text()
        assert text.count("vector_common_parallel = [128, 0]") + text.count(
            "vector_common_parallel = [64, 0]") >= 2, text
        for g, want in zip(jitted(x, w1, b1, w2, v),
                           layers(np, *(a.astype(np.float64) for a in (x, w1, b1, w2, v)))):
            np.testing.assert_allclose(np.asarray(g), want, rtol=rtol, atol=rtol)


def test_matrix_vector_products_compute_numpys_values(monkeypatch):
    """A @ v gets the one-row setting (a K that 32 divides and ones it does not, peeled),
    with a fused bias and tanh; float32 and float64, numpy's values."""
    monkeypatch.setattr(build, "tiles_matmuls", lambda target: True)
    for dtype, rtol in ((np.float32, 2e-4), (np.float64, 1e-12)):
        for rows, depth in ((70, 1000), (64, 512), (3, 100)):
            a = (RNG.standard_normal((rows, depth)) / 30).astype(dtype)
            v, b = RNG.standard_normal(depth).astype(dtype), RNG.standard_normal(rows).astype(dtype)
            jitted = aotc.jit(lambda a, v, b: (a @ v, anp.tanh(a @ v + b)))
            assert "vector_reduction = [0, 32]" in jitted.lower(a, v, b).as_text()
            wide = [x.astype(np.float64) for x in (a, v, b)]
            for got, want in zip(jitted(a, v, b), (wide[0] @ wide[1],
                                                   np.tanh(wide[0] @ wide[1] + wide[2]))):
                np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=rtol)


def test_transposed_operands_are_copied_and_tiled(monkeypatch):
    """x.T @ d copies x.T; d @ w.T, whose d is smaller than w, runs as (w @ d.T).T (a
    weight's copy would live from the program's start); numpy's values."""
    monkeypatch.setattr(build, "tiles_matmuls", lambda target: True)
    x = RNG.standard_normal((256, 784)).astype(np.float32)
    d = RNG.standard_normal((256, 512)).astype(np.float32)
    w = RNG.standard_normal((784, 512)).astype(np.float32) / 28
    jitted = aotc.jit(lambda *a: _backward(anp, *a))
    text = jitted.lower(x, d, w).as_text()
    assert text.count("flow.tensor.clone") >= 2 and text.count(f"{ATTRIBUTE} = ") >= 2, text
    assert "tensor<784x512xf32>, tensor<512x256xf32>) outs" in text, text
    for g, want in zip(jitted(x, d, w), _backward(np, *(a.astype(np.float64) for a in (x, d, w)))):
        np.testing.assert_allclose(np.asarray(g), want, rtol=2e-4, atol=2e-3)


def test_rows_not_a_multiple_of_8_get_register_tiles_that_divide_them(monkeypatch):
    """float32: 100 rows take 4-row register tiles, 6 rows all six, 33 and a prime 97
    rows run at 40 and 104 (zero rows added, cut off after); float64 60 rows take 4-row
    tiles of half the columns, 33 keep IREE's choice. numpy's values."""
    monkeypatch.setattr(build, "tiles_matmuls", lambda target: True)
    for dtype, sizes, tiles, rtol in (
            (np.float32, (33, 100, 97, 6), ("[4, 64, 0]", "[6, 64, 0]", "tensor<40x256xf32>",
                                            "tensor<104x256xf32>"), 2e-4),
            (np.float64, (60,), ("[4, 32, 0]",), 1e-12)):
        w = RNG.standard_normal((512, 256)).astype(dtype)
        jitted = aotc.jit(lambda w, *xs: [x @ w for x in xs])  # w an argument: no data tiling
        xs = [RNG.standard_normal((rows, 512)).astype(dtype) for rows in sizes]
        text = jitted.lower(w, *xs).as_text()
        for tile in tiles:
            assert tile in text, (tile, text)
        for got, x in zip(jitted(w, *xs), xs):
            np.testing.assert_allclose(np.asarray(got), x.astype(np.float64) @ w, rtol=rtol,
                                       atol=rtol * 10)
    odd = RNG.standard_normal((33, 512))
    assert ATTRIBUTE not in aotc.jit(lambda x, w: x @ w).lower(odd, odd.T[:, :256]).as_text()


def test_dynamic_rows_get_the_peeled_setting(monkeypatch):
    """An exported vmap of two MLP layers, the batch left open: the 32-row setting with
    loop peeling; numpy's values at batches that fill no register tile, one, several and
    some with a remainder."""
    monkeypatch.setattr(build, "tiles_matmuls", lambda target: True)
    w1 = RNG.standard_normal((784, 512)).astype(np.float32) / 28
    b1 = RNG.standard_normal(512).astype(np.float32)
    w2 = RNG.standard_normal((512, 384)).astype(np.float32) / 22
    def mlp(m, x, w1, b1, w2):
        return m.maximum(x @ w1 + b1, 0.0) @ w2

    per_example = aotc.vmap(lambda *a: mlp(anp, *a), in_axes=(0, None, None, None))
    art = aotc.export(per_example, aotc.ShapeDtypeStruct((None, 784), "float32"), w1, b1, w2)
    assert art.mlir.count("enable_loop_peeling") >= 1, art.mlir
    assert art.mlir.count(f"{ATTRIBUTE} = ") >= 2, art.mlir
    fn = art.load()[next(iter(art.functions))]
    for rows in (1, 7, 32, 64, 100, 257):
        x = RNG.standard_normal((rows, 784)).astype(np.float32)
        np.testing.assert_allclose(np.asarray(fn(x, w1, b1, w2)),
                                   mlp(np, x.astype(np.float64), w1, b1, w2),
                                   rtol=2e-4, atol=2e-4)


def test_deep_matmuls_run_their_k_in_blocks(monkeypatch):
    """A K of 1024 (and 2048) in blocks of 256, float32 and float64: numpy's values."""
    monkeypatch.setattr(build, "tiles_matmuls", lambda target: True)
    for dtype, rtol in ((np.float32, 2e-4), (np.float64, 1e-12)):
        for rows, depth in ((64, 1024), (32, 2048)):
            a = (RNG.standard_normal((rows, depth)) / 32).astype(dtype)
            b = RNG.standard_normal((depth, 256)).astype(dtype)
            jitted = aotc.jit(lambda a, b: a @ b)
            assert "cache_reduction = [0, 0, 256]" in jitted.lower(a, b).as_text()
            np.testing.assert_allclose(np.asarray(jitted(a, b)),
                                       a.astype(np.float64) @ b.astype(np.float64),
                                       rtol=rtol, atol=rtol * 10)


def test_a_retry_drops_the_settings(monkeypatch):
    monkeypatch.setattr(build, "tiles_matmuls", lambda target: True)
    x, w = np.ones((64, 512), np.float32), np.ones((512, 256), np.float32)
    lowered = aotc.jit(lambda x, w: x @ w).lower(x, w)  # weights as arguments: no data tiling
    mlir = lowered.as_text().encode()
    assert ATTRIBUTE.encode() in mlir
    plain = without_tile_settings(mlir)
    assert plain is not None and ATTRIBUTE.encode() not in plain
    assert without_tile_settings(plain) is None


def test_float64_modules_compile_tiled_instead_of_data_tiled(monkeypatch):
    """On a CPU that gets the tiles, a module whose contractions are all tileable float64
    matmuls compiles with their tiles and no data tiling, its consumers (bias, relu) read
    through clones; batch matmuls get them too (float32 ones where not data-tiled); one
    with a matmul of 13 rows (no register tile divides them) keeps the data-tiled path.
    numpy's values either way."""
    from aotc.targets import DATA_TILING

    monkeypatch.setattr(build, "tiles_matmuls", lambda target: True)
    x = RNG.standard_normal((64, 784))
    w = RNG.standard_normal((784, 512)) / 28
    b = RNG.standard_normal(512)
    layer = aotc.jit(lambda x, w, b: anp.maximum(x @ w + b, 0.0))
    lowered = layer.lower(x, w, b)
    text = lowered.as_text()
    assert "vector_common_parallel = [8, 16, 0]" in text and "flow.tensor.clone" in text, text
    assert DATA_TILING[0] not in lowered.flags
    np.testing.assert_allclose(np.asarray(layer(x, w, b)), np.maximum(x @ w + b, 0.0),
                               rtol=1e-12, atol=1e-12)
    a, b = RNG.standard_normal((4, 64, 96)), RNG.standard_normal((4, 96, 72))
    batched = aotc.jit(anp.matmul)
    assert "vector_common_parallel = [1, 8, 16, 0]" in batched.lower(a, b).as_text()
    np.testing.assert_allclose(np.asarray(batched(a, b)), a @ b, rtol=1e-12, atol=1e-12)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    assert "vector_common_parallel = [1, 8, 32, 0]" in batched.lower(a32, b32).as_text()
    np.testing.assert_allclose(np.asarray(batched(a32, b32)), a @ b, rtol=2e-4, atol=2e-4)
    odd = RNG.standard_normal((13, 784))  # no register tile's rows divide 13
    assert ATTRIBUTE not in aotc.jit(lambda x, w: x @ w).lower(odd, w).as_text()
    np.testing.assert_allclose(np.asarray(aotc.jit(lambda x, w: x @ w)(odd, w)), odd @ w,
                               rtol=1e-12, atol=1e-12)


def test_float32_tiles_alone_leave_float64_products_to_iree(monkeypatch):
    """Where only float32 matmuls get tiles (AMD Zen 4: cpu_paths.tiles_float32_matmuls), a
    float32 layer, its batch-1 row and a matrix-vector product carry settings and their
    float64 twins none; numpy's values."""
    monkeypatch.setattr(build, "tiles_matmuls", lambda target: False)
    monkeypatch.setattr(build, "tiles_float32_matmuls", lambda target: True)

    def products(x, w, v):
        return x @ w, x[:1] @ w, w @ v[:256]

    for dtype, tiled, rtol in ((np.float32, True, 2e-4), (np.float64, False, 1e-12)):
        x = RNG.standard_normal((64, 512)).astype(dtype)
        w = (RNG.standard_normal((512, 256)) / 22).astype(dtype)
        v = RNG.standard_normal(512).astype(dtype)
        jitted = aotc.jit(products)
        text = jitted.lower(x, w, v).as_text()
        assert text.count(f"{ATTRIBUTE} = ") == (3 if tiled else 0), text
        wide = [a.astype(np.float64) for a in (x, w, v)]
        for got, want in zip(jitted(x, w, v), products(*wide)):
            np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=rtol * 10)


def test_avx2_registers_get_tiles_of_at_most_12_accumulators(monkeypatch):
    """On a CPU with 32-byte vector registers (AMD Zen 3, AVX2: cpu_paths.register_bytes)
    a float32 layer gets 4x16 register tiles in workgroups of 64 columns, a batch-1 row
    64 register columns (128 narrowed); float64 layers get 4x8 tiles in workgroups of 32
    columns and matrix-vector products none; other tiles are narrowed to at most 12
    accumulators; numpy's values. The rule: Zen 5 and Zen 3 tile both dtypes, Zen 4
    float32 alone, reductions only Zen 5; the register size from the instruction set."""
    from aotc import cpu_paths
    from aotc.targets import get_target

    cpus = ("znver3", "znver4", "znver5", "skylake")
    targets = [get_target(f"x86_64:{cpu}") for cpu in cpus]
    assert [cpu_paths.register_bytes(t) for t in targets] == [32, 64, 64, 32]
    assert [cpu_paths.tiles_matmuls(t) for t in targets] == [True, False, True, False]
    assert [cpu_paths.tiles_float32_matmuls(t) for t in targets] == [False, True, False, False]
    assert [cpu_paths.tiles_reductions(t) for t in targets] == [False, False, True, False]
    # odd rows: the narrowed tile's columns halved to at most 12 accumulators (8 lanes of
    # float32, 4 of float64 a register): 5x32 -> 5x16, float64 5x16 -> 5x8; 2x32 fits
    assert matmul_tiles.tiles(10, "f32", False, 32) == (10, 64, 5, 16)
    assert matmul_tiles.tiles(10, "f64", False, 32) == (10, 32, 5, 8)
    assert matmul_tiles.tiles(2, "f32", False, 32) == (2, 128, 2, 32)
    monkeypatch.setattr(build, "tiles_matmuls", lambda target: True)
    monkeypatch.setattr(build, "register_bytes", lambda target: 32)
    for dtype, layer, rtol in ((np.float32, "[32, 64, 0], vector_common_parallel = [4, 16, 0]",
                                2e-4),
                               (np.float64, "[32, 32, 0], vector_common_parallel = [4, 8, 0]",
                                1e-12)):
        x = RNG.standard_normal((32, 784)).astype(dtype)  # too few rows for panels
        w = (RNG.standard_normal((784, 512)) / 28).astype(dtype)
        jitted = aotc.jit(lambda x, w: (x @ w, x[:1] @ w, w @ x[0, :512]))
        text = jitted.lower(x, w).as_text()
        assert f"distribution = {layer}" in text, text
        assert "vector_common_parallel = [64, 0]" in text, text
        assert text.count(f"{ATTRIBUTE} = ") == 2, text  # not the matrix-vector product
        xw, ww = x.astype(np.float64), w.astype(np.float64)
        for got, want in zip(jitted(x, w), (xw @ ww, xw[:1] @ ww, ww @ xw[0, :512])):
            np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=rtol)
