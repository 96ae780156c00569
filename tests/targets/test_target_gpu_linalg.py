"""The factorizations on GPU targets: on Vulkan (lavapipe) as numpy computes them, batched
by vmap as a loop would, refused where lavapipe would cut their kernels short; compiled for
CUDA (no GPU here) without crashing IREE. The op-family program covers every function on
Vulkan (test_target_ops.py); these are the GPU-specific rules, and the CUDA compile."""

from __future__ import annotations

import numpy as np
import pytest
from test_target_vulkan import vulkan  # noqa: F401 (a fixture)

import aotc
import aotc.numpy as anp
import aotc.scipy.linalg as asl
from aotc import runtime
from aotc.compiler import compile_bytecode

RNG = np.random.default_rng(7)


def _spd(*shape):
    m = RNG.standard_normal(shape).astype(np.float32)
    return m @ np.swapaxes(m, -1, -2) / shape[-1] + np.eye(shape[-1], dtype=np.float32)


def _on_vulkan(fn, *args):
    return runtime.load(aotc.export(fn, *args, target="vulkan").vmfb, device="vulkan")


def test_vmap_of_factorizations_matches_a_loop_on_vulkan(vulkan):  # noqa: F811
    """One kernel per factorization runs the batch in its one thread (the batch's loop
    iterations add up against lavapipe's limit: 3 x 40x40 would pass it)."""
    a = _spd(3, 16, 16)
    b = RNG.standard_normal((3, 16, 2)).astype(np.float32)

    def per_matrix(a, b):
        return {"cholesky": anp.linalg.cholesky(a), "solve": anp.linalg.solve(a, b),
                "r": anp.linalg.qr(a, mode="r"), "det": anp.linalg.det(a[:8, :8])}

    got = _on_vulkan(aotc.vmap(per_matrix), a, b).per_matrix(a, b)
    for i in range(3):
        want = {"cholesky": np.linalg.cholesky(a[i]), "solve": np.linalg.solve(a[i], b[i]),
                "r": np.linalg.qr(a[i], mode="r"), "det": np.linalg.det(a[i, :8, :8])}
        for name, value in want.items():
            np.testing.assert_allclose(np.asarray(got[name])[i], value, rtol=2e-4, atol=2e-4,
                                       err_msg=name)


def test_lu_of_a_64_matrix_on_vulkan(vulkan):  # noqa: F811
    """Two 32-column panels: the right half's rows are gathered by the left's pivots from
    a 32-wide column slice, which IREE's Vulkan code read wrong when the unchanged axis's
    indices came in as a constant array (take_along_axis now reads that axis's loop
    index)."""
    a = RNG.standard_normal((64, 64)).astype(np.float32) + 4 * np.eye(64, dtype=np.float32)
    lu, piv = (np.asarray(v) for v in _on_vulkan(asl.lu_factor, a).lu_factor(a))
    rows = np.arange(64)
    for i, p in enumerate(piv):  # LAPACK's swaps, in order
        rows[[i, p]] = rows[[p, i]]
    lower, upper = np.tril(lu, -1) + np.eye(64), np.triu(lu)
    np.testing.assert_allclose(lower @ upper, a[rows], rtol=1e-4, atol=1e-4)


def test_gather_from_a_column_slice_on_vulkan(vulkan):  # noqa: F811
    """Rows and columns both traced, from a slice at a column offset: IREE's Vulkan code
    misplaced the offset (off by up to 5.3) until aotc-separate-gather-slices gave the
    gather a copy of the slice."""
    a = RNG.standard_normal((64, 64)).astype(np.float32)
    rows = RNG.integers(0, 64, (64, 32)).astype(np.int32)
    cols = RNG.integers(0, 32, (64, 32)).astype(np.int32)

    def picked(a, rows, cols):
        return a[:, 32:][rows, cols]

    np.testing.assert_array_equal(np.asarray(_on_vulkan(picked, a, rows, cols).picked(
        a, rows, cols)), a[:, 32:][rows, cols])


def test_where_on_complex_values_on_vulkan(vulkan):  # noqa: F811
    x = RNG.standard_normal(6).astype(np.float32)
    z = (x + 2j * x[::-1]).astype(np.complex64)

    def pick(x, z):
        return anp.where(x > 0, z, 1j)

    np.testing.assert_array_equal(np.asarray(_on_vulkan(pick, x, z).pick(x, z)),
                                  np.where(x > 0, z, 1j).astype(np.complex64))


def test_lavapipe_refuses_kernels_it_would_cut_short(vulkan):  # noqa: F811
    """lavapipe stops a shader after 65535 loop iterations: an SVD whose kernel may make
    more (30 sweeps counted per eigenvalue) is refused when called, naming the driver; a
    Cholesky within the limit runs."""
    if vulkan.shader_loop_limit is None:
        pytest.skip(f"{vulkan.name} cuts no shader short")
    a = _spd(24, 24)
    art = aotc.export(anp.linalg.svdvals, a, target="vulkan")
    trips = art.functions["svdvals"].kernel_loop_trips
    assert trips > vulkan.shader_loop_limit
    module = runtime.load(art.vmfb, device=vulkan)
    with pytest.raises(runtime.DeviceLimitError,
                       match=rf"svdvals\(\): its factorization kernels make up to {trips} loop "
                             rf"iterations per dispatch, and llvmpipe.* stops a shader after "
                             rf"65535: the results would be wrong\. Run it on a hardware GPU"):
        module.svdvals(a)
    small = _on_vulkan(anp.linalg.cholesky, a)
    np.testing.assert_allclose(np.asarray(small.cholesky(a)), np.linalg.cholesky(a), rtol=1e-5,
                               atol=1e-5)


def test_cpu_artifacts_record_no_kernel_loop_trips():
    art = aotc.export(anp.linalg.cholesky, _spd(8, 8), target="cpu")
    assert art.functions["cholesky"].kernel_loop_trips == 0


def test_factorizations_compile_for_cuda():
    """Every kernel, with its one-thread root; and the complex reductions IREE's CUDA code
    generation crashed the process on (the largest magnitude, a norm, the complex
    eigensolver's and SVD's scaling: fused from complex values to real ones), which
    aotc-separate-complex-parts keeps apart."""
    z = (RNG.standard_normal((8, 8)) + 1j * RNG.standard_normal((8, 8))).astype(np.complex64)
    h = z @ z.conj().T + 8 * np.eye(8, dtype=np.complex64)
    a = _spd(40, 40)

    def factorizations(z, h, a):
        return {"abs_max": anp.max(anp.abs(z)), "norm": anp.linalg.norm(z),
                "eigvalsh": anp.linalg.eigvalsh(h), "svdvals": anp.linalg.svdvals(z),
                "solve": anp.linalg.solve(a, a[:, :2]), "cholesky": anp.linalg.cholesky(a),
                "r": anp.linalg.qr(a, mode="r"), "real_eigvalsh": anp.linalg.eigvalsh(a)}

    lowered = aotc.jit(factorizations, target="cuda:sm_80").lower(z, h, a)
    text = lowered.as_text()
    assert "flow.tensor.clone" in text and "BaseLowering" in text
    assert compile_bytecode(lowered.bytecode, lowered.flags, "factorizations")


def _rest_of_linalg(m, a, b):
    """The functions the op-family program leaves out, for numpy (``m`` = np) or aotc,
    at sizes within lavapipe's limit; results defined without a sign choice."""
    sign, logdet = m.linalg.slogdet(a)
    w, v = m.linalg.eigh(a)
    u, s, vt = m.linalg.svd(b, full_matrices=False)
    return {"inv": m.linalg.inv(a), "slogdet": sign * logdet, "eigh_rebuilt": (v * w) @ v.T,
            "svd_rebuilt": (u * s) @ vt, "lstsq": m.linalg.lstsq(b, a[:, :2], rcond=None)[0],
            "pinv": m.linalg.pinv(b), "rank": m.linalg.matrix_rank(b),
            "cond": m.linalg.cond(a), "power": m.linalg.matrix_power(a, 3),
            "tensorsolve": m.linalg.tensorsolve(a, a[:, 0])}


def test_the_rest_of_linalg_on_vulkan(vulkan):  # noqa: F811
    a = _spd(8, 8)
    b = RNG.standard_normal((8, 6)).astype(np.float32)
    got = _on_vulkan(lambda a, b: _rest_of_linalg(anp, a, b), a, b)["_lambda_"](a, b)
    want = _rest_of_linalg(np, a.astype(np.float64), b.astype(np.float64))
    for name, value in want.items():
        np.testing.assert_allclose(np.asarray(got[name]), value, rtol=1e-3, atol=1e-4,
                                   err_msg=name)


def test_scipy_factorizations_on_vulkan(vulkan):  # noqa: F811
    a = _spd(8, 8)
    b = RNG.standard_normal((8, 2)).astype(np.float32)

    def scipy_names(a, b):
        p, lower, upper = asl.lu(a)
        factor = asl.cho_factor(a, lower=True)
        return {"lu_rebuilt": p @ lower @ upper, "lu_solve": asl.lu_solve(asl.lu_factor(a), b),
                "cho_solve": asl.cho_solve(factor, b)}

    got = _on_vulkan(scipy_names, a, b).scipy_names(a, b)
    np.testing.assert_allclose(np.asarray(got["lu_rebuilt"]), a, rtol=1e-5, atol=1e-5)
    for name in ("lu_solve", "cho_solve"):
        np.testing.assert_allclose(np.asarray(got[name]), np.linalg.solve(a, b), rtol=1e-4,
                                   atol=1e-4, err_msg=name)
