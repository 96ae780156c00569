"""matmul, dot, einsum, inner, outer, vdot and the @ operator against numpy. Float
results use the "accumulate" tolerances of conftest.py; integer and bool ones are exact
(integer sums wrap identically in any order)."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.runtime import targets as rt_targets

from .conftest import compare_ops, jit_call, param_dtypes, raises_match, sample

# Operand shapes, passed as one tuple of arrays; each op picks its operands by name.
SHAPES = {
    "m34": (3, 4),
    "m45": (4, 5),
    "v4": (4,),
    "v5": (5,),
    "b234": (2, 3, 4),
    "b245": (2, 4, 5),
    "c2134": (2, 1, 3, 4),
    "c542": (5, 4, 2),
    "m04": (0, 4),
    "m30": (3, 0),
    "m05": (0, 5),
    "s": (),
    "sq": (4, 4),
    "b145": (1, 4, 5),
}
NAMES = list(SHAPES)


def _op(fn):
    return lambda m, *xs: fn(m, dict(zip(NAMES, xs)))


CONTRACTIONS = {
    # matmul: 1-D / 2-D / N-D with broadcast batch dims, size-0 dims
    "matmul(2D, 2D)": _op(lambda m, a: m.matmul(a["m34"], a["m45"])),
    "matmul(1D, 2D)": _op(lambda m, a: m.matmul(a["v4"], a["m45"])),
    "matmul(2D, 1D)": _op(lambda m, a: m.matmul(a["m34"], a["v4"])),
    "matmul(1D, 1D)": _op(lambda m, a: m.matmul(a["v4"], a["v4"])),
    "matmul(3D, 2D)": _op(lambda m, a: m.matmul(a["b234"], a["m45"])),
    "matmul(3D, 3D)": _op(lambda m, a: m.matmul(a["b234"], a["b245"])),
    "matmul(3D, 1D)": _op(lambda m, a: m.matmul(a["b234"], a["v4"])),
    "matmul(1D, 3D)": _op(lambda m, a: m.matmul(a["v4"], a["b245"])),
    "matmul(2D, 3D)": _op(lambda m, a: m.matmul(a["m34"], a["b245"])),
    "matmul(4D, 3D) broadcast batch": _op(lambda m, a: m.matmul(a["c2134"], a["c542"])),
    "matmul(3D, 3D) batch 1": _op(lambda m, a: m.matmul(a["b234"], a["b145"])),
    "matmul(0x4, 4x5)": _op(lambda m, a: m.matmul(a["m04"], a["m45"])),
    "matmul(3x0, 0x5)": _op(lambda m, a: m.matmul(a["m30"], a["m05"])),
    "x @ y": _op(lambda m, a: a["m34"] @ a["m45"]),
    "x @ y (3D)": _op(lambda m, a: a["b234"] @ a["b245"]),
    "v @ v": _op(lambda m, a: a["v4"] @ a["v4"]),
    "ndarray @ x": _op(lambda m, a: np.arange(12, dtype=np.int8).reshape(3, 4) @ a["m45"]),
    # dot: every numpy case
    "dot(0D, 2D)": _op(lambda m, a: m.dot(a["s"], a["m34"])),
    "dot(2D, 0D)": _op(lambda m, a: m.dot(a["m34"], a["s"])),
    "dot(1D, 1D)": _op(lambda m, a: m.dot(a["v4"], a["v4"])),
    "dot(2D, 2D)": _op(lambda m, a: m.dot(a["m34"], a["m45"])),
    "dot(2D, 1D)": _op(lambda m, a: m.dot(a["m34"], a["v4"])),
    "dot(1D, 2D)": _op(lambda m, a: m.dot(a["v4"], a["m45"])),
    "dot(3D, 1D)": _op(lambda m, a: m.dot(a["b234"], a["v4"])),
    "dot(3D, 3D)": _op(lambda m, a: m.dot(a["b234"], a["b245"])),
    "dot(2D, 3D)": _op(lambda m, a: m.dot(a["m34"], a["b245"])),
    "x.dot(y)": _op(lambda m, a: a["m34"].dot(a["m45"])),
    # einsum with one and two operands
    "einsum(ij,jk->ik)": _op(lambda m, a: m.einsum("ij,jk->ik", a["m34"], a["m45"])),
    "einsum(bij,bjk->bik)": _op(lambda m, a: m.einsum("bij,bjk->bik", a["b234"], a["b245"])),
    "einsum(i,i->)": _op(lambda m, a: m.einsum("i,i->", a["v4"], a["v4"])),
    "einsum(ij->ji)": _op(lambda m, a: m.einsum("ij->ji", a["m34"])),
    "einsum(ij,jk) implicit": _op(lambda m, a: m.einsum("ij,jk", a["m34"], a["m45"])),
    "einsum(ba,ac) implicit": _op(lambda m, a: m.einsum("ba,ac", a["m34"], a["m45"])),
    "einsum(...ij,jk->...ik)": _op(lambda m, a: m.einsum("...ij,jk->...ik", a["b234"], a["m45"])),
    "einsum(...ij,jk->...ik) 2D": _op(lambda m, a: m.einsum("...ij,jk->...ik", a["m34"], a["m45"])),
    "einsum(i,j->ij)": _op(lambda m, a: m.einsum("i,j->ij", a["v4"], a["v5"])),
    "einsum(ij,ij->ij)": _op(lambda m, a: m.einsum("ij,ij->ij", a["m34"], a["m34"])),
    "einsum(ij->)": _op(lambda m, a: m.einsum("ij->", a["m34"])),
    "einsum(ij->j)": _op(lambda m, a: m.einsum("ij->j", a["m34"])),
    "einsum(bij,jk->bk)": _op(lambda m, a: m.einsum("bij,jk->bk", a["b234"], a["m45"])),
    "einsum(ij, jk -> ki) spaces": _op(lambda m, a: m.einsum("ij, jk -> ki", a["m34"], a["m45"])),
    # inner, outer, vdot
    "inner(1D, 1D)": _op(lambda m, a: m.inner(a["v4"], a["v4"])),
    "inner(2D, 2D)": _op(lambda m, a: m.inner(a["m34"], a["m34"])),
    "inner(3D, 1D)": _op(lambda m, a: m.inner(a["b234"], a["v4"])),
    "inner(0D, 2D)": _op(lambda m, a: m.inner(a["s"], a["m34"])),
    "outer(1D, 1D)": _op(lambda m, a: m.outer(a["v4"], a["v5"])),
    "outer(2D, 1D)": _op(lambda m, a: m.outer(a["m34"], a["v5"])),
    "vdot(1D, 1D)": _op(lambda m, a: m.vdot(a["v4"], a["v4"])),
    "vdot(2D, 2D)": _op(lambda m, a: m.vdot(a["m34"], a["m34"])),
    "vdot(0D, 0D)": _op(lambda m, a: m.vdot(a["s"], a["s"])),
    "outer(0D, 1D)": _op(lambda m, a: m.outer(a["s"], a["v4"])),
    "inner(2D, 0D)": _op(lambda m, a: m.inner(a["m34"], a["s"])),
    "matmul(1D, 3D) batch 5": _op(lambda m, a: m.matmul(a["v4"], a["c542"])),
    "matmul(4D, 1D)": _op(lambda m, a: m.matmul(a["c2134"], a["v4"])),
    "dot(0D, 0D)": _op(lambda m, a: m.dot(a["s"], a["s"])),
    "tensordot(3D, 3D, axes=1) size 0": _op(lambda m, a: m.tensordot(a["m30"], a["m05"], axes=1)),
}


def operands(dtype):
    return [
        sample(dtype, shape, seed=40 + i, with_specials=False, low=-2, high=2)
        for i, shape in enumerate(SHAPES.values())
    ]


@param_dtypes(["float32", "float64", "float16", "int32", "int8", "int64", "bool"])
def test_contractions(dtype):
    compare_ops(CONTRACTIONS, *operands(dtype), kinds="accumulate", where=f"contractions {dtype}")


MIXED = {
    "matmul(f32, i8)": lambda m, f, i, b: m.matmul(f, i.T),
    "matmul(i8, bool)": lambda m, f, i, b: m.matmul(i, b.T),
    "dot(i8, f32)": lambda m, f, i, b: m.dot(i, f.T),
    "einsum(ij,kj->ik) f32 i8": lambda m, f, i, b: m.einsum("ij,kj->ik", f, i),
    "outer(bool, f32)": lambda m, f, i, b: m.outer(b[0], f[0]),
    "inner(i8, i8)": lambda m, f, i, b: m.inner(i, i),
}


def test_contractions_mixed_dtypes():
    f = sample("float32", (3, 4), seed=50, with_specials=False)
    i = sample("int8", (3, 4), seed=51, with_specials=False)
    b = sample("bool", (3, 4), seed=52)
    compare_ops(MIXED, f, i, b, kinds="accumulate", where="mixed contractions")


def test_einsum_dtype_argument():
    x = sample("int8", (3, 4), seed=53, with_specials=False)
    got = jit_call(lambda a: anp.einsum("ij,kj->ik", a, a, dtype=np.float32), x)
    np.testing.assert_allclose(got, np.einsum("ij,kj->ik", x, x, dtype=np.float32))
    assert got.dtype == np.float32


COMPLEX = {
    "matmul": lambda m, z, w, x: m.matmul(z, w),
    "batched matmul": lambda m, z, w, x: m.matmul(z.reshape(2, 3, 4), w[:4, :].reshape(1, 4, 5)),
    "einsum bij,jk": lambda m, z, w, x: m.einsum("ij,jk->ki", z, w),
    "real @ complex": lambda m, z, w, x: m.matmul(x, w),
    "complex @ real": lambda m, z, w, x: m.matmul(z, w.real),
    "matvec (generic)": lambda m, z, w, x: m.matmul(z, w[:, 0]),
}


@param_dtypes(["complex64", "complex128"])
def test_complex_contractions_are_real_matmuls(dtype):
    """A complex matmul-shaped contraction is one real matmul of the stacked real and
    imaginary parts (ops/contraction._complex_matmul): numpy's values, no complex matmul
    in the IR."""
    rng = np.random.default_rng(56)
    real = np.float32 if dtype == "complex64" else np.float64
    z = (rng.standard_normal((6, 8)) + 1j * rng.standard_normal((6, 8))).astype(dtype)
    w = (rng.standard_normal((8, 5)) + 1j * rng.standard_normal((8, 5))).astype(dtype)
    x = rng.standard_normal((3, 8)).astype(real)
    compare_ops(COMPLEX, z, w, x, kinds="accumulate", where=f"complex contractions {dtype}")
    text = aotc.jit(lambda a, b: a @ b).lower(z, w).as_text()
    part = "f32" if real == np.float32 else "f64"
    assert "linalg.matmul" in text and f"tensor<12x10x{part}>" in text


def test_matmul_larger_float32():
    """Big enough for IREE's tiled matmul kernels (and data tiling for the constant)."""
    rng = np.random.default_rng(54)
    a = rng.standard_normal((64, 96)).astype(np.float32)
    b = rng.standard_normal((96, 80)).astype(np.float32)
    w = rng.standard_normal((80, 16)).astype(np.float32)
    got = jit_call(lambda x, y: (x @ y) @ w, a, b)
    np.testing.assert_allclose(got, (a @ b) @ w, rtol=1e-4, atol=1e-4)


# 299 rows (13 x 23): no register tile of aotc-tile-matmuls divides them, so on the CPUs
# that get its tiles too the module stays data-tiled.
@pytest.mark.parametrize("shapes", [((299, 260), (260, 270)), ((1, 4096), (4096, 2100))],
                         ids=["odd-sizes", "vector-times-matrix"])
def test_large_float64_matmuls_compile_inner_tiled(shapes):
    """float64 matmuls of at least 2 * 256^3 flops returned as they are compile data-tiled
    through inner_tiled (odd sizes: its tiles have remainders); a vector operand, which
    inner_tiled cannot compile, is left to the rule's exclusion (a unit dimension)."""
    from aotc.targets import INNER_TILED

    rng = np.random.default_rng(55)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    lowered = aotc.jit(lambda x, y: x @ y).lower(a, b)
    inner = set(INNER_TILED) <= set(lowered.flags)
    assert inner == (shapes[0][0] > 1 and _inner_tiles_here())
    np.testing.assert_allclose(jit_call(lambda x, y: x @ y, a, b), a @ b, rtol=1e-12,
                               atol=1e-12)


def _inner_tiles_here() -> bool:
    """The rule's CPUs: x86_64 with AVX-512."""
    from aotc.cpu_paths import has_avx512
    from aotc.targets import get_target

    return rt_targets.host_arch() == "x86_64" and has_avx512(get_target("cpu"))


def test_inner_tiling_rule():
    """Only modules whose contractions are all large float64 matmuls of two matrices, on
    x86_64 with AVX-512 (a batch or a vector fails in inner_tiled's lowering; float32 gets
    slower, and so does float64 without AVX-512)."""
    from aotc.cpu_paths import compile_flags
    from aotc.targets import DATA_TILING, INNER_TILED, Contraction, get_target

    cpu = get_target("x86_64:x86-64-v4")
    assert not set(INNER_TILED) & set(compile_flags(get_target("x86_64"), [
        Contraction(2 * 512**3, False, "float64")], True))  # AVX2
    big64, big32 = Contraction(2 * 512**3, False, "float64"), Contraction(2 * 512**3, False,
                                                                          "float32")
    small64 = Contraction(2 * 64**3, False, "float64")
    assert compile_flags(cpu, [big64], True)[-2:] == DATA_TILING + INNER_TILED
    assert compile_flags(cpu, [big64], False)[-1:] == DATA_TILING
    assert not set(INNER_TILED) & set(compile_flags(get_target("aarch64"), [big64], True))
    for contractions in ([big32], [big64, big32], [big64, small64]):
        assert not set(INNER_TILED) & set(compile_flags(cpu, contractions, True))
    rng = np.random.default_rng(56)
    x, y = rng.standard_normal((8, 300, 300)), rng.standard_normal((8, 300, 300))
    assert not set(INNER_TILED) & set(aotc.jit(anp.matmul).lower(x, y).flags)  # a batch


def test_fused_float64_matmul_consumers_run_after_a_barrier():
    """A bias and relu on a large float64 matmul: aotc-isolate-matmuls keeps them out of
    the matmul's dispatch, so it compiles through inner_tiled; numpy's values."""
    from aotc.targets import INNER_TILED

    rng = np.random.default_rng(57)
    # 299 rows: data-tiled also where aotc-tile-matmuls runs (see above)
    a, b = rng.standard_normal((299, 300)), rng.standard_normal((300, 300))
    bias = rng.standard_normal(300)
    fused = aotc.jit(lambda x, y, z: (anp.maximum(x @ y + z, 0.0), 2.0 * (x @ y)))
    lowered = fused.lower(a, b, bias)
    if _inner_tiles_here():
        assert set(INNER_TILED) <= set(lowered.flags)
        assert lowered.as_text().count("util.optimization_barrier") == 1  # x @ y once (CSE)
    relu, twice = (np.asarray(r) for r in fused(a, b, bias))
    np.testing.assert_allclose(relu, np.maximum(a @ b + bias, 0.0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(twice, 2.0 * (a @ b), rtol=1e-12, atol=1e-12)


def test_einsum_diagonal():
    """A subscript repeated in one operand: the diagonal ("ii->i") and the trace ("ii")."""
    x = sample("float32", (4, 4), seed=55, with_specials=False)
    compare_ops(
        {
            "einsum(ii->i)": lambda m, a: m.einsum("ii->i", a),
            "einsum(ii)": lambda m, a: m.einsum("ii", a),
            "einsum(ij,jj->i)": lambda m, a: m.einsum("ij,jj->i", a, a),
        },
        x,
        kinds="accumulate",
        where="einsum diagonal",
    )


GENERAL = {
    # several operands, contracted pairwise (greedy order)
    "einsum(ij,jk,kl->il)": lambda m, a, b, c, d, v, t: m.einsum("ij,jk,kl->il", a, b, c),
    "einsum(ij,jk,kl) implicit": lambda m, a, b, c, d, v, t: m.einsum("ij,jk,kl", a, b, c),
    "einsum(i,ij,j->)": lambda m, a, b, c, d, v, t: m.einsum("i,ij,j->", v, a, b[:, 0]),
    "einsum(ij,ij,ij->i)": lambda m, a, b, c, d, v, t: m.einsum("ij,ij,ij->i", a, a, a),
    "einsum(bij,bjk,bkl->bli)": lambda m, a, b, c, d, v, t: m.einsum(
        "bij,bjk,bkl->bli", t, t.transpose(0, 2, 1), t),
    "einsum(i,j,k->ijk)": lambda m, a, b, c, d, v, t: m.einsum("i,j,k->ijk", v, v, c[0]),
    # repeated subscripts in one operand: diagonals and traces
    "einsum(ii->i)": lambda m, a, b, c, d, v, t: m.einsum("ii->i", d),
    "einsum(ii->)": lambda m, a, b, c, d, v, t: m.einsum("ii->", d),
    "einsum(ii) implicit trace": lambda m, a, b, c, d, v, t: m.einsum("ii", d),
    "einsum(iij->j)": lambda m, a, b, c, d, v, t: m.einsum("iij->j", m.reshape(d, (2, 2, 4))),
    "einsum(ii,ij->j)": lambda m, a, b, c, d, v, t: m.einsum("ii,ij->j", d, d),
    "einsum(bii->bi)": lambda m, a, b, c, d, v, t: m.einsum("bii->bi", m.stack([d, d + 1])),
    # ellipsis with broadcasting
    "einsum(...ij,...jk->...ik) broadcast": lambda m, a, b, c, d, v, t: m.einsum(
        "...ij,...jk->...ik", t[:, None], m.stack([b, b, b])),
    "einsum(...i,...i) implicit": lambda m, a, b, c, d, v, t: m.einsum("...i,...i", t, a),
    "einsum(i...->...)": lambda m, a, b, c, d, v, t: m.einsum("i...->...", t),
    "einsum(ij->...)": lambda m, a, b, c, d, v, t: m.einsum("ij->...", a),
    # tensordot: int and pair-of-sequence axes
    "tensordot(axes=1)": lambda m, a, b, c, d, v, t: m.tensordot(a, b, axes=1),
    "tensordot(axes=0)": lambda m, a, b, c, d, v, t: m.tensordot(v, c[0], axes=0),
    "tensordot(axes=2)": lambda m, a, b, c, d, v, t: m.tensordot(
        t, m.transpose(t, (1, 2, 0)), axes=2),
    "tensordot(([1, 2], [1, 2]))": lambda m, a, b, c, d, v, t: m.tensordot(
        t, t, axes=([1, 2], [1, 2])),
    "tensordot(([0], [0]))": lambda m, a, b, c, d, v, t: m.tensordot(t, t, axes=([0], [0])),
    "tensordot((1, 0))": lambda m, a, b, c, d, v, t: m.tensordot(a, b, axes=(1, 0)),
    "tensordot(([-1], [-2]))": lambda m, a, b, c, d, v, t: m.tensordot(t, b, axes=([-1], [-2])),
    # kron
    "kron(2-D, 2-D)": lambda m, a, b, c, d, v, t: m.kron(a, d),
    "kron(1-D, 2-D)": lambda m, a, b, c, d, v, t: m.kron(v, a),
    "kron(3-D, 1-D)": lambda m, a, b, c, d, v, t: m.kron(t, v),
    "kron(0-D, 1-D)": lambda m, a, b, c, d, v, t: m.kron(v[0], v),
}


@param_dtypes(["float32", "float64", "int32", "int8", "bool"])
def test_general_contractions(dtype):
    a, b, c, d, v, t = (
        sample(dtype, shape, seed=80 + i, with_specials=False, low=-2, high=2)
        for i, shape in enumerate([(3, 4), (4, 5), (5, 2), (4, 4), (3,), (2, 3, 4)])
    )
    compare_ops(GENERAL, a, b, c, d, v, t, kinds="accumulate",
                where=f"general contractions {dtype}")


def test_contraction_chain_uses_matmul():
    """A three-operand chain and a multi-axis tensordot become named matmuls."""
    spec = aotc.ShapeDtypeStruct
    text = aotc.jit(lambda a, b, c: (
        anp.einsum("ij,jk,kl->il", a, b, c),
        anp.tensordot(b.reshape(2, 2, 6), c.reshape(2, 2, 6), axes=([0, 1], [0, 1])),
    )).lower(
        spec((8, 4), "float32"), spec((4, 6), "float32"), spec((6, 4), "float32")).as_text()
    assert text.count("linalg.matmul ") == 3, text
    assert "reduction" not in text, text  # no contraction left as a generic


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda a, b: anp.matmul(a, a), ["matmul", "core dimension", "size 3 is different from 4"]),
        (lambda a, b: a @ b.T, ["matmul", "core dimension"]),
        (lambda a, b: anp.matmul(a, a[0, 0]), ["at least 1-dimensional"]),
        (
            lambda a, b: anp.matmul(anp.reshape(a, (3, 1, 4)), anp.stack([b, b])),
            ["batch dimensions", "do not broadcast"],
        ),
        (lambda a, b: anp.dot(a, a), ["dot", "not aligned"]),
        (lambda a, b: anp.dot(a, b[:3, 0]), ["dot", "not aligned"]),
        (lambda a, b: anp.einsum("ij,jk->ik", a), ["einsum", "2 operands, got 1"]),
        (lambda a, b: anp.einsum("ijk,jk->i", a, b), ["operand 0 has 2 dimensions", "'ijk'"]),
        (lambda a, b: anp.einsum("ij,ij->i", a, b), ["size", "does not match"]),
        (lambda a, b: anp.einsum("ij->ik", a), ["output subscript 'k'"]),
        (lambda a, b: anp.einsum("i->ii", a[0]), ["output subscript 'i' appears more than once"]),
        (lambda a, b: anp.einsum("i1", a), ["invalid subscript '1'", "letters"]),
        (lambda a, b: anp.einsum("..i", a[0]), ["'.' that is not part of", "'...'"]),
        (lambda a, b: anp.einsum("ij->i->j", a), ["more than one '->'"]),
        (
            lambda a, b: anp.einsum("ii", a),
            ["operand 0 has size 4 for subscript 'i'", "size 3 seen before"],
        ),
        (lambda a, b: anp.einsum("...j->j", b[None]), ["'...'", "no '...'"]),
        (
            lambda a, b: anp.tensordot(a, b, axes=2),
            ["tensordot", "shape-mismatch", "size 3", "size 4"],
        ),
        (
            lambda a, b: anp.tensordot(a, b, axes=([0], [0, 1])),
            ["tensordot", "1 axes of a", "2 of b"],
        ),
        (
            lambda a, b: anp.tensordot(a, b, axes=([2], [0])),
            ["tensordot axes of a", "axis 2 is out of bounds"],
        ),
        (lambda a, b: anp.tensordot(a, b, axes=3), ["tensordot", "axes=3", "between 0"]),
        (lambda a, b: anp.vdot(a, b), ["vdot", "12 and 20 elements"]),
        (lambda a, b: anp.inner(a, b), ["inner", "last dimensions", "4 != 5"]),
    ],
    ids=[
        "matmul-core",
        "matmul-op",
        "matmul-0d",
        "matmul-batch",
        "dot-2d",
        "dot-1d",
        "einsum-count",
        "einsum-rank",
        "einsum-size",
        "einsum-output",
        "einsum-repeated-output",
        "einsum-bad-letter",
        "einsum-bad-dot",
        "einsum-two-arrows",
        "einsum-diagonal-sizes",
        "einsum-ellipsis-output",
        "tensordot-sizes",
        "tensordot-axis-counts",
        "tensordot-axis-range",
        "tensordot-too-many",
        "vdot-sizes",
        "inner-sizes",
    ],
)
def test_contraction_errors(call, message):
    a = np.ones((3, 4), np.float32)
    b = np.ones((4, 5), np.float32)
    with raises_match(aotc.TracingError, *message):
        jit_call(call, a, b)


def test_einsum_dtype_casting_error():
    """numpy casts einsum operands to dtype= with casting='safe': float32 to int32 fails."""
    with raises_match(aotc.UnsupportedDtypeError, "cannot cast operand 0", "float32", "int32",
                      "casting="):
        aotc.jit(lambda a: anp.einsum("ij->i", a, dtype=np.int32)).lower(
            np.ones((2, 2), np.float32))
