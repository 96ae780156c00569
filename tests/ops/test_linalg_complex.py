"""Complex factorizations (numpy.linalg, scipy.linalg, lax.linalg on complex64 and
complex128) against numpy and scipy (LAPACK's z/c routines).

Each case compiles one program returning every function's results, and checks them the
way the real tests do: values equal to LAPACK's where they are unique (solve, inv, det,
slogdet, Cholesky, QR's Q and R, LU's factors and pivots, eigenvalues, singular values,
pinv, lstsq, norms), and residuals, unitarity and reconstruction where they are not
(eigenvectors and singular vectors are unique only up to a phase).

Sizes: 6 (one leaf of each blocked algorithm) and 40 (a split at 32: the recursions'
matmuls with conjugate transposes, and Jacobi started from eigh's vectors). Tolerances
relative to the matrices' scale: 1e-11 for complex128 (times the size for residuals),
2e-4 for complex64.
"""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.lax
import aotc.numpy as anp
import aotc.scipy.linalg as asl


scipy_linalg = pytest.importorskip("scipy.linalg")
RNG = np.random.default_rng(21)
TOLERANCE = {np.complex64: 2e-4, np.complex128: 1e-11}


def complex_matrix(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def inputs(n, dtype):
    """A well-conditioned square a, a Hermitian positive definite h, a tall t, right-hand
    sides b (n, 3) and c (n + 4, 2), and a second positive definite hb."""
    a = (complex_matrix(n, n, dtype=dtype) + 2 * np.sqrt(n) * np.eye(n)).astype(dtype)
    g = complex_matrix(n, n, dtype=dtype)
    h = (g @ g.conj().T + n * np.eye(n)).astype(dtype)
    g2 = complex_matrix(n, n, dtype=dtype)
    hb = (g2 @ g2.conj().T + n * np.eye(n)).astype(dtype)
    return (a, h, complex_matrix(n + 4, n, dtype=dtype), complex_matrix(n, 3, dtype=dtype),
            complex_matrix(n + 4, 2, dtype=dtype), hb)


def numpy_functions(a, h, t, b, c, hb):
    la = anp.linalg
    sign, logdet = la.slogdet(a)
    w, v = la.eigh(h)
    u, s, vh = la.svd(t)
    q, r = la.qr(t)
    qc, rc = la.qr(t, mode="complete")
    x, residuals, rank, singular = la.lstsq(t, c)
    return dict(solve=la.solve(a, b), inv=la.inv(a), det=la.det(a), sign=sign, logdet=logdet,
                cholesky=la.cholesky(h), cholesky_upper=la.cholesky(h, upper=True),
                q=q, r=r, qc=qc, rc=rc, w=w, v=v, eigvalsh_upper=la.eigvalsh(h, UPLO="U"),
                u=u, s=s, vh=vh, svdvals_wide=la.svdvals(anp.swapaxes(t, -1, -2)),
                pinv=la.pinv(t), lstsq=x, residuals=residuals, rank=rank, lstsq_s=singular,
                matrix_rank=la.matrix_rank(t), cond=la.cond(a), norm_2=la.norm(a, 2),
                norm_fro=la.norm(a), norm_nuc=la.norm(a, "nuc"), norm_columns=la.norm(a, axis=0),
                norm_3=la.norm(a, 3, axis=1), norm_0=la.norm(a, 0, axis=1))


def assert_close(got, want, tol, scale=1.0, name=""):
    got = np.asarray(got)
    assert got.shape == np.shape(want), name
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=name)


# complex64 at 6 runs the leaves alone, complex128 at 40 the blocked algorithms too.
@pytest.mark.parametrize("n, dtype", [(6, np.complex64), (40, np.complex128)], ids=str)
def test_numpy_linalg_matches_lapack(n, dtype):
    a, h, t, b, c, hb = inputs(n, dtype)
    got = aotc.jit(numpy_functions)(a, h, t, b, c, hb)
    tol = TOLERANCE[dtype]
    real = np.float32 if dtype == np.complex64 else np.float64
    for name in ("w", "s", "logdet", "cond", "norm_2", "norm_fro", "norm_nuc", "eigvalsh_upper",
                 "residuals", "lstsq_s", "svdvals_wide", "norm_columns", "norm_3", "norm_0"):
        assert np.asarray(got[name]).dtype == real, name  # real results stay real
    wide = np.swapaxes(t, -1, -2)
    want = dict(solve=np.linalg.solve(a, b), inv=np.linalg.inv(a), det=np.linalg.det(a),
                cholesky=np.linalg.cholesky(h), cholesky_upper=np.linalg.cholesky(h, upper=True),
                pinv=np.linalg.pinv(t), lstsq=np.linalg.lstsq(t, c)[0],
                residuals=np.linalg.lstsq(t, c)[1], cond=np.linalg.cond(a),
                norm_2=np.linalg.norm(a, 2), norm_fro=np.linalg.norm(a),
                norm_nuc=np.linalg.norm(a, "nuc"), norm_columns=np.linalg.norm(a, axis=0),
                norm_3=np.linalg.norm(a, 3, axis=1), norm_0=np.linalg.norm(a, 0, axis=1),
                w=np.linalg.eigvalsh(h), eigvalsh_upper=np.linalg.eigvalsh(h, UPLO="U"),
                s=np.linalg.svd(t, compute_uv=False), lstsq_s=np.linalg.svd(t, compute_uv=False),
                svdvals_wide=np.linalg.svd(wide, compute_uv=False))
    want["sign"], want["logdet"] = np.linalg.slogdet(a)
    want["q"], want["r"] = np.linalg.qr(t)
    want["qc"], want["rc"] = np.linalg.qr(t, mode="complete")
    for name, value in want.items():
        scale = np.max(np.abs(value), initial=1.0)
        assert_close(got[name], value, tol, scale, name)
    assert int(got["rank"]) == n and int(got["matrix_rank"]) == n
    w, v = np.asarray(got["w"]), np.asarray(got["v"])
    identity = np.eye(n)
    assert_close(v.conj().T @ v, identity, tol * n, name="eigenvectors unitary")
    assert_close(h @ v, v * w, tol * n, np.abs(w).max(), "h v = v w")
    u, s, vh = (np.asarray(got[k]) for k in ("u", "s", "vh"))
    assert_close(u.conj().T @ u, np.eye(n + 4), tol * n, name="U unitary")
    assert_close(vh @ vh.conj().T, identity, tol * n, name="V unitary")
    assert_close((u[:, :n] * s) @ vh, t, tol * n, s.max(), "U S Vh = t")


def scipy_functions(a, h, b, hb):
    lower = anp.tril(a)
    lu, piv = asl.lu_factor(a)
    p, unit_lower, u = asl.lu(a)
    w, v = asl.eigh(h, hb)
    c_and_lower = asl.cho_factor(h)
    return dict(
        triangular=[asl.solve_triangular(lower, b, trans=trans, lower=True) for trans in (0, 1, 2)],
        lu=lu, piv=piv, p=p, l=unit_lower, u=u, lu_solve=[asl.lu_solve((lu, piv), b, trans=trans)
                                                 for trans in (0, 1, 2)],
        cholesky=asl.cholesky(h), cho_solve=asl.cho_solve(c_and_lower, b),
        solve_positive=asl.solve(h, b, assume_a="pos", lower=False), w=w, v=v,
        lax_triangular=aotc.lax.linalg.triangular_solve(lower, b, left_side=True, lower=True,
                                                        transpose_a=True, conjugate_a=True),
        lax_conjugated=aotc.lax.linalg.triangular_solve(lower, b, left_side=True, lower=True,
                                                        conjugate_a=True),
        lax_right=aotc.lax.linalg.triangular_solve(lower, anp.swapaxes(b, 0, 1), lower=True,
                                                   transpose_a=True, conjugate_a=True),
        lax_eigvals=aotc.lax.linalg.eigh(h, symmetrize_input=True)[1])


@pytest.mark.parametrize("n, dtype", [(6, np.complex64), (40, np.complex128)], ids=str)
def test_scipy_and_lax_linalg_match_scipy(n, dtype):
    a, h, _, b, _, hb = inputs(n, dtype)
    got = aotc.jit(scipy_functions)(a, h, b, hb)
    tol = TOLERANCE[dtype]
    lower = np.tril(a)
    lu, piv = scipy_linalg.lu_factor(a)
    p, unit_lower, u = scipy_linalg.lu(a)
    want = dict(lu=lu, p=p, l=unit_lower, u=u, cholesky=scipy_linalg.cholesky(h),
                cho_solve=scipy_linalg.cho_solve(scipy_linalg.cho_factor(h), b),
                solve_positive=scipy_linalg.solve(h, b, assume_a="pos"),
                w=scipy_linalg.eigh(h, hb, eigvals_only=True),
                lax_triangular=scipy_linalg.solve_triangular(lower, b, trans=2, lower=True),
                lax_conjugated=np.linalg.solve(lower.conj(), b),
                lax_right=np.linalg.solve(lower.conj(), b).T,
                lax_eigvals=np.linalg.eigvalsh(h))
    for trans in (0, 1, 2):
        want[f"triangular {trans}"] = scipy_linalg.solve_triangular(lower, b, trans=trans,
                                                                    lower=True)
        want[f"lu_solve {trans}"] = scipy_linalg.lu_solve((lu, piv), b, trans=trans)
        got[f"triangular {trans}"] = got["triangular"][trans]
        got[f"lu_solve {trans}"] = got["lu_solve"][trans]
    for name, value in want.items():
        assert_close(got[name], value, tol, np.max(np.abs(value)), name)
    np.testing.assert_array_equal(got["piv"], piv)  # zgetrf's pivots: |re| + |im|
    w, v = np.asarray(got["w"]), np.asarray(got["v"])
    assert_close(h @ v, (hb @ v) * w, tol * n, np.abs(w).max() * n, "h v = hb v w")
    assert_close(v.conj().T @ hb @ v, np.eye(n), tol * n, name="v is hb-orthonormal")


def test_stacks_and_vmap_match_a_loop():
    stack = complex_matrix(3, 7, 7) + 5 * np.eye(7)
    rhs = complex_matrix(3, 7)

    def per_matrix(a, b):
        return (anp.linalg.solve(a, b), anp.linalg.det(a),
                anp.linalg.eigvalsh(a @ anp.conj(a).T), anp.linalg.svd(a, compute_uv=False))
    mapped = aotc.jit(aotc.vmap(per_matrix))(stack, rhs)
    stacked = aotc.jit(lambda a: (anp.linalg.inv(a), anp.linalg.qr(a)[1]))(stack)
    for i in range(3):
        a = stack[i]
        want = (np.linalg.solve(a, rhs[i]), np.linalg.det(a),
                np.linalg.eigvalsh(a @ a.conj().T), np.linalg.svd(a, compute_uv=False))
        for got, value in zip(mapped, want):
            assert_close(np.asarray(got)[i], value, 1e-11, np.max(np.abs(value)))
        assert_close(np.asarray(stacked[0])[i], np.linalg.inv(a), 1e-11)
        assert_close(np.asarray(stacked[1])[i], np.linalg.qr(a)[1], 1e-11, 10.0)


def test_singular_matrices_give_numpys_determinant_and_non_finite_solutions():
    singular = complex_matrix(5, 5)
    singular[3] = (1 + 2j) * singular[1]  # rank 4
    zero = np.zeros((4, 4), np.complex128)
    det, (sign, logdet), x = aotc.jit(lambda a, z: (anp.linalg.det(z), anp.linalg.slogdet(z),
                                                    anp.linalg.solve(z, z[:, 0])))(
        singular, zero)
    assert complex(det) == 0 and complex(sign) == 0 and float(logdet) == -np.inf
    assert not np.all(np.isfinite(np.asarray(x)))
    rank = aotc.jit(anp.linalg.matrix_rank)(singular)
    assert int(rank) == np.linalg.matrix_rank(singular) == 4


def test_large_complex_constants_compile():
    """A complex constant IREE would keep in memory (over 256 bytes: here 1 KiB) is made
    from two real tables at run time (aotc/constants.py): before, the compiler process
    died of SIGFPE."""
    table = (np.arange(64) * (1 + 2j)).astype(np.complex128)
    got = aotc.jit(lambda x: (x * table, anp.linalg.inv(x[:6, None] * 0 + anp.eye(6) * 2j)))(
        np.ones(64, np.complex128))
    np.testing.assert_array_equal(got[0], table)
    np.testing.assert_allclose(got[1], np.eye(6) / 2j, rtol=1e-15)
