"""An iterative solver with ``aotc.lax.while_loop``: conjugate gradient for ``A x = b``
(A symmetric positive definite), run to a tolerance with an iteration cap, deployed as
one .vmfb.

    python samples/solver_while.py [OUT.vmfb]     (default: out/solver_while.vmfb)

The loop's trip count depends on the data, so it cannot be unrolled at trace time:
``lax.while_loop`` makes it one ``scf.while`` in the compiled program, carrying the
iterate, residual, search direction, squared residual norm and iteration count. The
script exports ``solve(A, b)`` for one matrix size, saves it, loads the saved file with
the runtime, solves a system and compares the result with the same algorithm as a plain
Python ``while`` loop in numpy (and with ``numpy.linalg.solve``). It exits with status 1
on a mismatch.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import aotc
import aotc.lax
import aotc.numpy as anp
import aotc.runtime

from _common import output_path, verdict

N = 64
TOL = 1e-10        # stop when |r| <= TOL * |b|
MAX_ITER = 4 * N   # in exact arithmetic CG needs at most N steps
RTOL = ATOL = 1e-8


def python_while_loop(cond_fun, body_fun, val):
    """lax.while_loop's meaning as a plain Python loop: the reference."""
    while cond_fun(val):
        val = body_fun(val)
    return val


def conjugate_gradient(xp, while_loop, a, b):
    """The solution, the iterations used and the final residual norm.

    ``xp`` is the array module and ``while_loop`` the loop: aotc.numpy and
    aotc.lax.while_loop to compile it, numpy and a Python loop for the reference.
    """
    limit = TOL * TOL * (b @ b)

    def keep_going(state):
        _, _, _, rs, k = state
        return xp.logical_and(rs > limit, k < MAX_ITER)

    def step(state):
        x, r, p, rs, k = state
        ap = a @ p
        alpha = rs / (p @ ap)
        x = x + alpha * p
        r = r - alpha * ap
        rs_new = r @ r
        p = r + (rs_new / rs) * p
        return x, r, p, rs_new, k + 1

    x0 = b * 0
    x, _, _, rs, k = while_loop(keep_going, step, (x0, b, b, b @ b, 0))
    return x, k, xp.sqrt(rs)


def solve(a, b):
    """The solver as aotc compiles it."""
    return conjugate_gradient(anp, aotc.lax.while_loop, a, b)


def solve_numpy(a: np.ndarray, b: np.ndarray):
    return conjugate_gradient(np, python_while_loop, a, b)


def spd_system(n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """A well-conditioned symmetric positive definite matrix and a right-hand side."""
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, n))
    return m @ m.T / n + np.eye(n), rng.standard_normal(n)


def main(argv: list[str]) -> int:
    path = output_path(argv, "solver_while")

    # 1. Compile and save (the build machine).
    start = time.perf_counter()
    artifact = aotc.export(solve, aotc.ShapeDtypeStruct((N, N), "float64"),
                           aotc.ShapeDtypeStruct((N,), "float64"))
    artifact.save(path)
    print(f"exported  {path} ({os.path.getsize(path) / 2**10:.0f} KiB, target {artifact.target}) "
          f"in {time.perf_counter() - start:.1f} s")

    # 2. Load the saved file and run it (the device: only the runtime is needed).
    module = aotc.runtime.load(path)
    print(f"loaded    {module.functions['solve']}")
    a, b = spd_system(N)
    x, iterations, residual = (np.asarray(v) for v in module.solve(a, b))

    # 3. Compare with the Python loop and with a direct solve.
    ref_x, ref_iterations, ref_residual = solve_numpy(a, b)
    exact = np.linalg.solve(a, b)
    err = float(np.max(np.abs(x - ref_x)))
    print(f"system    {N}x{N} float64, tolerance {TOL:g}, at most {MAX_ITER} iterations")
    print(f"  aotc    {int(iterations)} iterations, residual {float(residual):.2e}")
    print(f"  numpy   {int(ref_iterations)} iterations, residual {float(ref_residual):.2e}")
    print(f"max |x - numpy loop| = {err:.2e}; max |x - linalg.solve| = "
          f"{float(np.max(np.abs(x - exact))):.2e} (rtol {RTOL:g}, atol {ATOL:g})")
    # Rounding may move the last residual across the tolerance: one iteration more or less.
    ok = (abs(int(iterations) - int(ref_iterations)) <= 1
          and float(residual) <= TOL * np.linalg.norm(b)
          and all(np.allclose(x, want, rtol=RTOL, atol=ATOL) for want in (ref_x, exact)))
    return verdict(ok)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
