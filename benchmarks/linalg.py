"""Factorizations: aotc vs numpy (LAPACK) vs jax.jit (x64), float64, interleaved, as ratios.

    python benchmarks/linalg.py                  # table + results/linalg.json + .png
    python benchmarks/linalg.py --only cholesky_1024

Cholesky (``numpy.linalg.cholesky``), a triangular solve with 16 right-hand sides
(``scipy.linalg.solve_triangular``; numpy has none, so its column is scipy's) and a
Cholesky solve (``cho_solve(cho_factor(a), b)``), LU (``scipy.linalg.lu_factor``) and
what is built on it (``numpy.linalg.solve`` with 16 right-hand sides, ``inv``, ``det``),
QR (``numpy.linalg.qr``, Q and R) at n = 64, 256, 1024, and ``eigh`` and ``svd``
(reduced) at 64 and 256 (their vectors compared by magnitude: signs are a choice).
complex128 (LAPACK's z routines): Cholesky, solve and QR at 64, 256 and 1024, eigh and
svd at 64 and 256 (``complex_*``). Gradients at 64 and 256 (aotc/linalg_derivatives.py):
``grad`` of ``sum(solve(a, b)**2)``, ``slogdet(a)[1]`` and ``sum(eigvalsh(a)**2)`` with
respect to ``a``, against ``jax.grad`` and the closed form a numpy user writes by hand.
aotc's are the algorithms of aotc/ops/triangular.py, lu.py, qr.py, eigen.py and svd.py.
Timing as benchmarks/run.py: device-resident inputs, interleaved blocks, the median over
blocks of each block's per-call median.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import scipy.linalg

sys.path.insert(0, str(Path(__file__).parent))
import run  # noqa: E402  (the timing of benchmarks/run.py)
from float64_math import library_workload, workload_main  # noqa: E402  (shared table and chart)

import aotc  # noqa: E402
import aotc.numpy as anp  # noqa: E402
import aotc.scipy.linalg as aotc_scipy_linalg  # noqa: E402

if run.jax is not None:
    run.jax.config.update("jax_enable_x64", True)
    import jax.scipy.linalg  # noqa: E402

LIBRARIES = {
    "aotc": SimpleNamespace(numpy=anp, linalg=anp.linalg, scipy=aotc_scipy_linalg,
                            grad=aotc.grad),
    "numpy": SimpleNamespace(numpy=np, linalg=np.linalg, scipy=scipy.linalg, grad=None),
    "jax": SimpleNamespace(numpy=run.jnp, linalg=run.jnp.linalg,
                           scipy=jax.scipy.linalg, grad=run.jax.grad) if run.jax else None,
}


def cholesky(lib, a):
    return lib.linalg.cholesky(a)


def solve_triangular(lib, factor, b):
    return lib.scipy.solve_triangular(factor, b, lower=True)


def cho_solve(lib, a, b):
    return lib.scipy.cho_solve(lib.scipy.cho_factor(a, lower=True), b)


def lu_factor(lib, a):
    lu, pivots = lib.scipy.lu_factor(a)  # one array (the timing syncs one): pivots below
    return lib.numpy.concatenate([lu, pivots[None, :].astype(lu.dtype)])


def qr(lib, a):
    q, r = lib.linalg.qr(a)  # one array (the timing syncs one)
    return lib.numpy.concatenate([q, r])


def eigh(lib, a):
    w, v = lib.linalg.eigh(a)  # one array (the timing syncs one)
    return lib.numpy.concatenate([w[None, :], lib.numpy.abs(v)])


def svd(lib, a):
    u, s, vh = lib.linalg.svd(a, full_matrices=False)
    return lib.numpy.concatenate([s[None, :], lib.numpy.abs(u), lib.numpy.abs(vh)])


def solve(lib, a, b):
    return lib.linalg.solve(a, b)


def inv(lib, a):
    return lib.linalg.inv(a)


def det(lib, a):
    return lib.linalg.det(a)


def grad_solve(lib, a, b):
    if lib.grad is None:  # by hand: x = a^-1 b, d/da sum(x**2) = -(a^-T 2x) x^T
        x = np.linalg.solve(a, b)
        return -np.linalg.solve(a.T, 2 * x) @ x.T
    return lib.grad(lambda a: lib.numpy.sum(lib.linalg.solve(a, b) ** 2))(a)


def grad_slogdet(lib, a):
    if lib.grad is None:  # by hand: d log|det a| / da = a^-T
        return np.linalg.inv(a).T
    return lib.grad(lambda a: lib.linalg.slogdet(a)[1])(a)


def grad_eigvalsh(lib, a):
    if lib.grad is None:  # by hand: d sum(w**2) / da = V diag(2w) V^T, on the lower triangle
        w, v = np.linalg.eigh(a)
        g = (v * (2 * w)) @ v.T
        return np.tril(g) + np.tril(g, -1)  # the upper triangle is not read
    return lib.grad(lambda a: lib.numpy.sum(lib.linalg.eigvalsh(a) ** 2))(a)


def _general(n):
    return np.random.default_rng(n + 2).standard_normal((n, n)) + np.sqrt(n) * np.eye(n)


def _unit_det(n):
    """A general matrix scaled so that |det| = 1 (no overflow at n = 1024)."""
    a = _general(n)
    return a / np.exp(np.linalg.slogdet(a)[1] / n)


def _spd(n):
    m = np.random.default_rng(n).standard_normal((n, n))
    return m @ m.T / n + np.eye(n)


def _rhs(n):
    return np.random.default_rng(n + 1).standard_normal((n, 16))


def _complex_general(n):
    rng = np.random.default_rng(n + 3)
    return (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
            + np.sqrt(2 * n) * np.eye(n))


def _hermitian(n):
    rng = np.random.default_rng(n + 4)
    m = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    return m @ m.conj().T / n + np.eye(n)


def _complex_rhs(n):
    rng = np.random.default_rng(n + 5)
    return rng.standard_normal((n, 16)) + 1j * rng.standard_normal((n, 16))


CALLS = {64: 200, 256: 20, 1024: 3}
WORKLOADS = {}
for _n in CALLS:
    WORKLOADS[f"cholesky_{_n}"] = (cholesky, lambda n=_n: (_spd(n),), CALLS[_n])
    WORKLOADS[f"solve_triangular_{_n}"] = (
        solve_triangular, lambda n=_n: (np.linalg.cholesky(_spd(n)), _rhs(n)), CALLS[_n])
    WORKLOADS[f"cho_solve_{_n}"] = (cho_solve, lambda n=_n: (_spd(n), _rhs(n)), CALLS[_n])
    WORKLOADS[f"lu_factor_{_n}"] = (lu_factor, lambda n=_n: (_general(n),), CALLS[_n])
    WORKLOADS[f"solve_{_n}"] = (solve, lambda n=_n: (_general(n), _rhs(n)), CALLS[_n])
    WORKLOADS[f"inv_{_n}"] = (inv, lambda n=_n: (_general(n),), CALLS[_n])
    WORKLOADS[f"det_{_n}"] = (det, lambda n=_n: (_unit_det(n),), CALLS[_n])
    WORKLOADS[f"qr_{_n}"] = (qr, lambda n=_n: (_general(n),), CALLS[_n])
    if _n <= 256:  # their scalar kernels take seconds at 1024 (docs/architecture.md)
        WORKLOADS[f"eigh_{_n}"] = (eigh, lambda n=_n: (_spd(n),), CALLS[_n])
        WORKLOADS[f"svd_{_n}"] = (svd, lambda n=_n: (_general(n),), CALLS[_n])


for _n in CALLS:
    WORKLOADS[f"complex_cholesky_{_n}"] = (cholesky, lambda n=_n: (_hermitian(n),), CALLS[_n])
    WORKLOADS[f"complex_solve_{_n}"] = (solve, lambda n=_n: (_complex_general(n),
                                                             _complex_rhs(n)), CALLS[_n])
    WORKLOADS[f"complex_qr_{_n}"] = (qr, lambda n=_n: (_complex_general(n),), CALLS[_n])
    if _n <= 256:
        WORKLOADS[f"complex_eigh_{_n}"] = (eigh, lambda n=_n: (_hermitian(n),), CALLS[_n])
        WORKLOADS[f"complex_svd_{_n}"] = (svd, lambda n=_n: (_complex_general(n),), CALLS[_n])

for _n in (64, 256):
    WORKLOADS[f"grad_solve_{_n}"] = (grad_solve, lambda n=_n: (_general(n), _rhs(n)), CALLS[_n])
    WORKLOADS[f"grad_slogdet_{_n}"] = (grad_slogdet, lambda n=_n: (_general(n),), CALLS[_n])
    WORKLOADS[f"grad_eigvalsh_{_n}"] = (grad_eigvalsh, lambda n=_n: (_spd(n),), CALLS[_n])


def workload(name: str) -> run.Workload:
    return library_workload(name, WORKLOADS, LIBRARIES)


def main(argv=None) -> int:
    return workload_main(__doc__, WORKLOADS, workload, "linalg.json", argv)


if __name__ == "__main__":
    sys.exit(main())
