"""complex64 and complex128: differential tests against numpy for every op family
(arithmetic, comparisons, the parts, transcendental functions, reductions, contractions,
indexing and updates, casts and promotion), vmap against a Python loop, writes through
``z.real``/``z.imag``, and an exported artifact run through the runtime.

Tolerances are conftest's, per part: complex64 as float32, complex128 as float64.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import aotc
import aotc.numpy as anp

from .conftest import compare_ops, jit_call

COMPLEX = ["complex64", "complex128"]


def _values(dtype, n=8, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    z = rng.uniform(-2, 2, n) + 1j * rng.uniform(-2, 2, n)
    z[:4] = [0, 1j, -1.5, 0.5 - 0.25j]  # zero, purely imaginary, real, small
    return z.astype(dtype)


ELEMENTWISE = {
    "z + w": lambda m, z, w: z + w,
    "z - w": lambda m, z, w: z - w,
    "z * w": lambda m, z, w: z * w,
    "z / w": lambda m, z, w: z / (w + 3),
    "-z": lambda m, z, w: -z,
    "z * 1j + 2": lambda m, z, w: z * 1j + 2,
    "z == w": lambda m, z, w: z == w,
    "z != z": lambda m, z, w: z != z,
    "z < w": lambda m, z, w: z < w,
    "z >= w": lambda m, z, w: z >= w,
    "abs": lambda m, z, w: m.abs(z),
    "conj": lambda m, z, w: m.conj(z),
    "real": lambda m, z, w: m.real(z),
    "imag": lambda m, z, w: m.imag(z),
    "z.real": lambda m, z, w: z.real,
    "z.imag": lambda m, z, w: z.imag,
    "angle": lambda m, z, w: m.angle(z),
    "angle(deg)": lambda m, z, w: m.angle(z, deg=True),
    "square": lambda m, z, w: m.square(z),
    "reciprocal": lambda m, z, w: m.reciprocal(z + 3),
    "sign": lambda m, z, w: m.sign(z),
    "exp": lambda m, z, w: m.exp(z),
    "expm1": lambda m, z, w: m.expm1(z),
    "log": lambda m, z, w: m.log(z + 3),
    "log1p": lambda m, z, w: m.log1p(z),
    "log10": lambda m, z, w: m.log10(z + 3),
    "log2": lambda m, z, w: m.log2(z + 3),
    "sqrt": lambda m, z, w: m.sqrt(z),
    "power": lambda m, z, w: m.power(z + 3, w),
    "z ** 2": lambda m, z, w: z ** 2,
    "sin": lambda m, z, w: m.sin(z),
    "cos": lambda m, z, w: m.cos(z),
    "tan": lambda m, z, w: m.tan(z),
    "arcsin": lambda m, z, w: m.arcsin(z),
    "arccos": lambda m, z, w: m.arccos(z),
    "arctan": lambda m, z, w: m.arctan(z * 0.5),  # (not at the poles +-i)
    "arcsinh": lambda m, z, w: m.arcsinh(z),
    "arccosh": lambda m, z, w: m.arccosh(z),
    "arctanh": lambda m, z, w: m.arctanh(z * 0.5),  # (not at the poles +-1)
    "sinh": lambda m, z, w: m.sinh(z),
    "cosh": lambda m, z, w: m.cosh(z),
    "tanh": lambda m, z, w: m.tanh(z),
    "isnan": lambda m, z, w: m.isnan(z),
    "isfinite": lambda m, z, w: m.isfinite(z / z),
    "iscomplex": lambda m, z, w: m.iscomplex(z),
    "isreal": lambda m, z, w: m.isreal(z),
    "where": lambda m, z, w: m.where(m.abs(z) > 1, z, w),
}

ARRAYS = {
    "sum": lambda m, z, w: m.sum(z),
    "prod": lambda m, z, w: m.prod(z[:4] + 1),
    "mean(axis)": lambda m, z, w: m.mean(z.reshape(2, 4), axis=1),
    "cumsum": lambda m, z, w: m.cumsum(z),
    "matmul": lambda m, z, w: m.outer(z, w) @ w,
    "einsum": lambda m, z, w: m.einsum("i,i->", z, m.conj(w)),
    "vdot": lambda m, z, w: m.vdot(z, w),
    "getitem": lambda m, z, w: z[::2],
    "take": lambda m, z, w: z[np.array([3, 0, 3])],
    "concatenate": lambda m, z, w: m.concatenate([z, w]),
    "transpose": lambda m, z, w: z.reshape(2, 4).T,
    "sort": lambda m, z, w: m.sort(z),
    "argsort": lambda m, z, w: m.argsort(z),
    "sort_complex": lambda m, z, w: m.sort_complex(z),
}

CASTS = {
    "astype(other complex)": lambda m, z, w: z.astype(
        np.complex128 if z.dtype == np.complex64 else np.complex64),
    "astype(bool)": lambda m, z, w: z.astype(bool),
    "float + complex": lambda m, z, w: m.real(z) + w,
    "int + complex": lambda m, z, w: m.arange(8) + z,
    "complex from real": lambda m, z, w: m.abs(z).astype(z.dtype),
}


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_ops_match_numpy(dtype):
    z, w = _values(dtype), _values(dtype, seed=1)
    with np.errstate(all="ignore"):
        compare_ops({**ELEMENTWISE, **ARRAYS, **CASTS}, z, w, where=f"{dtype} ops")


def test_complex_cast_to_real_keeps_the_real_part_as_numpy():
    z = _values("complex64")
    got = jit_call(lambda v: {"f": v.astype(np.float32), "i": (v * 3).astype(np.int32)}, z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        np.testing.assert_array_equal(got["f"], z.astype(np.float32))
        np.testing.assert_array_equal(got["i"], (z * 3).astype(np.int32))


def test_vmap_of_a_complex_function_matches_a_loop():
    z = _values("complex64", 12).reshape(3, 4)

    def per_row(r):
        return anp.sum(r * anp.conj(r)) + r[0] * 1j

    got = np.asarray(aotc.jit(aotc.vmap(per_row))(z))
    want = np.array([np.sum(r * np.conj(r)) + r[0] * 1j for r in z])
    np.testing.assert_allclose(got, want, rtol=2e-6)


def test_writes_through_real_and_imag_update_the_argument():
    z = _values("complex128")

    def kernel(v):
        v.real += 1.0
        v.imag = v.real * 2

    updated = z.copy()
    aotc.jit(kernel)(updated)
    want = z.copy()
    want.real += 1.0
    want.imag = want.real * 2
    np.testing.assert_array_equal(updated, want)


def test_iscomplexobj_is_a_trace_time_bool():
    seen = []

    def f(z, x):
        seen.extend([anp.iscomplexobj(z), anp.iscomplexobj(x), anp.iscomplexobj(1j)])
        return z

    jit_call(f, _values("complex64"), np.ones(2))
    assert seen == [np.iscomplexobj(_values("complex64")), False, True]


def test_imag_of_a_real_array_cannot_be_assigned():
    with pytest.raises(aotc.TracingError, match=r"x\.imag = \.\.\.: x is float32.*astype"):
        jit_call(lambda v: setattr(v, "imag", v), np.ones(3, np.float32))


def test_ordering_reductions_of_complex_say_what_to_do():
    with pytest.raises(aotc.UnsupportedDtypeError, match=r"max: complex arrays are not "
                       r"supported yet.*real, then imaginary.*abs\(x\)"):
        jit_call(anp.max, _values("complex64"))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_constants_returned_updated_and_reduced(dtype):
    """A complex128 splat returned or stored failed to compile (IREE splats at most 8-byte
    patterns: aotc-materialize-constants makes those constants at run time)."""
    z = _values(dtype, 4)

    def constants(m, z):
        ones = m.ones(4, dtype)
        return (m.zeros((3, 4), dtype), m.full((2, 3), 1 + 2j, dtype=dtype),
                m.asarray(1j, dtype=dtype), ones, m.where(m.arange(4) == 1, z[2], ones),
                m.ones((3, 4), dtype).sum(axis=0) + z, m.ones(4, dtype) * z)

    got = aotc.jit(lambda z: constants(anp, z))(z)
    for g, w in zip(got, constants(np, z)):
        np.testing.assert_array_equal(np.asarray(g), w)
        assert np.asarray(g).dtype == w.dtype


def test_exported_complex_artifact_runs_through_the_runtime(tmp_path):
    def rotate(z, theta):
        return z * anp.exp(1j * theta), anp.abs(z)

    spec = aotc.ShapeDtypeStruct((8,), "complex64")
    art = aotc.export(rotate, spec, aotc.ShapeDtypeStruct((8,), "float32"))
    module = aotc.runtime.load(art.save(tmp_path / "rotate.vmfb"))
    z, theta = _values("complex64"), np.linspace(0, 3, 8, dtype=np.float32)
    rotated, magnitude = module.rotate(z, theta)
    np.testing.assert_allclose(np.asarray(rotated), z * np.exp(1j * theta), rtol=2e-6, atol=1e-6)
    assert np.asarray(rotated).dtype == np.complex64
    np.testing.assert_allclose(np.asarray(magnitude), np.abs(z), rtol=2e-6)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_pad_of_complex_values(dtype):
    """IREE crashed the process on a tensor.pad of complex values (its pad-to-insert
    rewrite); aotc-complex-pads-as-inserts writes them as a fill and an insert."""
    z = (np.arange(12).reshape(3, 4) + 1j * np.arange(12)[::-1].reshape(3, 4)).astype(dtype)

    def pads(z):
        return {"zeros": anp.pad(z, ((1, 0), (0, 2))), "value": anp.pad(z, 1, constant_values=2j),
                "vector": anp.pad(z[0], (3, 1))}

    got = aotc.jit(pads)(z)
    want = {"zeros": np.pad(z, ((1, 0), (0, 2))), "value": np.pad(z, 1, constant_values=2j),
            "vector": np.pad(z[0], (3, 1))}
    for name, value in want.items():
        np.testing.assert_array_equal(np.asarray(got[name]), value, err_msg=name)
        assert np.asarray(got[name]).dtype == dtype
