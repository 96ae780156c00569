"""Trace time, compile time and IR size of a Python loop over a static range, by trip count.

    python benchmarks/unrolled_loops.py                 # T = 10, 100, 300, 1000
    python benchmarks/unrolled_loops.py 10 100

A numpy-style jacobi-1d kernel (two in-place stencil updates per time step) is traced
with ``aotc.jit(kernel, static_argnums=2)``: the Python loop unrolls, so the program grows
with the trip count. Each trip count compiles cold, in a fresh cache directory. The
figures show whether compile time stays linear in the trip count.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import numpy as np

import aotc


def jacobi_1d(A, B, steps):
    for _ in range(steps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def main(trips: list[int]) -> None:
    os.environ["AOTC_CACHE_DIR"] = tempfile.mkdtemp(prefix="aotc-unrolled-")
    print(f"{'steps':>6} {'trace s':>8} {'compile s':>10} {'IR ops':>8} {'ops/step':>9}")
    for steps in trips:
        a = np.linspace(0.0, 1.0, 400)
        start = time.perf_counter()
        lowered = aotc.jit(jacobi_1d, static_argnums=2).lower(a, a.copy(), steps)
        traced = time.perf_counter()
        ops = lowered.as_text().count(" = ")
        lowered.compile()
        done = time.perf_counter()
        print(f"{steps:>6} {traced - start:>8.2f} {done - traced:>10.2f} {ops:>8} "
              f"{ops / steps:>9.1f}", flush=True)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10, 100, 300, 1000])
