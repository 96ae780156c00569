"""Loops: aotc vs a numpy Python loop vs jax.jit, and a loop of scalar steps as one
dispatch vs one dispatch per op and iteration (``loop_dispatch_max_work``), interleaved,
as ratios.

    python benchmarks/loops.py                  # table + results/loops.json + loops.png
    python benchmarks/loops.py --only recurrence_1000 recurrence_1000_per_op

- ``recurrence_T``: T steps of ``x[j] = 0.5 * x[j - 1] + x[j]`` on a float32[16384]
  (64 KiB), a scalar read-modify-write per step (T = 10 .. 10^5: the trip-count curve).
- ``prefix_T``: a ``while_loop`` with a counter, a scalar accumulator and an element
  update per step over a float32[T].
  Both also run ``_per_op``, compiled with ``loop_dispatch_max_work=0``: one dispatch
  per op and iteration, the form before loops ran as one dispatch.
- ``rows_RxW``: a row sweep ``x[i] = 0.5 * (x[i - 1] + x[i])`` over a float32[R, W]
  (its row ops become scalar loops in one dispatch), ``elementwise_N`` (100 steps of
  ``x = x * 0.999 + 0.001`` over N float32) and ``leapfrog_N`` (100 steps of ``v -=
  0.01 * x; x += 0.01 * v``, two carries; x returned), carries computed afresh
  pointwise, which run tile by tile in one dispatch (passes/pointwise_tiles.py), and
  ``rnn_H`` (50 steps of ``h = tanh(h @ w)``, h: [8, H]), which keeps the per-op form.

- Loop kernels as a JAX user writes them: ``trisolve_N`` (forward substitution, a row
  dot per step, float64 [N, N]), ``lu_N`` (Doolittle LU without pivoting, a column
  scaling and a masked rank-one update of the whole matrix per step), ``seidel_N`` (one
  Gauss-Seidel sweep of 3x3 means, element by element in two nested loops) and
  ``nussinov_N`` (the RNA-folding dynamic program: three nested loops, a max per cell).

aotc and JAX run ``fori_loop``/``while_loop``; numpy runs the same loop in Python (for
the loop kernels, the corpus's numpy kernels: tests/kernels/polybench.py).
Timing as benchmarks/run.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import run  # noqa: E402  (the timing of benchmarks/run.py)
from corpus import polybench  # noqa: E402  (the numpy kernels of tests/kernels)
from float64_math import workload_main  # noqa: E402  (the same JSON, bar chart and table)

import aotc  # noqa: E402
import aotc.lax  # noqa: E402
import aotc.numpy as anp  # noqa: E402

N_RECURRENCE = 16384


def recurrence(lax, trips):
    def body(i, x):
        j = i % (N_RECURRENCE - 1) + 1
        return x.at[j].set(0.5 * x[j - 1] + x[j])
    return lambda x: lax.fori_loop(0, trips, body, x)


def recurrence_numpy(trips):
    def f(x):
        x = x.copy()
        for i in range(trips):
            j = i % (N_RECURRENCE - 1) + 1
            x[j] = 0.5 * x[j - 1] + x[j]
        return x
    return f


def rows(lax, _):
    def body(i, x):
        return x.at[i].set(0.5 * (x[i - 1] + x[i]))
    return lambda x: lax.fori_loop(1, x.shape[0], body, x)


def rows_numpy(_):
    def f(x):
        x = x.copy()
        for i in range(1, x.shape[0]):
            x[i] = 0.5 * (x[i - 1] + x[i])
        return x
    return f


def prefix(lax, _):
    def f(x):
        def body(c):
            i, total, y = c
            return i + 1, total + x[i], y.at[i].set(total)
        return lax.while_loop(lambda c: c[0] < x.shape[0], body, (0, x[0] * 0, x * 0))[2]
    return f


def prefix_numpy(_):
    def f(x):
        y, total = np.zeros_like(x), np.float32(0)
        for i in range(x.shape[0]):
            y[i] = total
            total = total + x[i]
        return y
    return f


def elementwise(lax, _):
    return lambda x: lax.fori_loop(0, 100, lambda i, x: x * 0.999 + 0.001, x)


def elementwise_numpy(_):
    def f(x):
        for _ in range(100):
            x = x * np.float32(0.999) + np.float32(0.001)
        return x
    return f


def leapfrog(lax, _):
    def step(i, c):
        x, v = c
        v = v - 0.01 * x
        return x + 0.01 * v, v
    return lambda x, v: lax.fori_loop(0, 100, step, (x, v))[0]


def leapfrog_numpy(_):
    def f(x, v):
        for _ in range(100):
            v = v - np.float32(0.01) * x
            x = x + np.float32(0.01) * v
        return x
    return f


def rnn(lax, lib):
    return lambda h, w: lax.fori_loop(0, 50, lambda i, h: lib.tanh(h @ w), h)


def rnn_numpy(_):
    def f(h, w):
        for _ in range(50):
            h = np.tanh(h @ w)
        return h
    return f


def trisolve(lax, lib):
    def f(lower, b):
        n = b.shape[0]

        def step(i, x):
            row = lib.where(lib.arange(n) < i, lower[i], 0.0)
            return x.at[i].set((b[i] - row @ x) / lower[i, i])
        return lax.fori_loop(0, n, step, lib.zeros_like(b))
    return f


def trisolve_numpy(_):
    def f(lower, b):
        x = np.zeros_like(b)
        polybench().trisolv(b.shape[0], lower, x, b)
        return x
    return f


def lu(lax, lib):
    def f(a):
        n = a.shape[0]
        rows = lib.arange(n)[:, None]
        cols = lib.arange(n)[None, :]

        def step(k, a):
            column = lib.where(rows[:, 0] > k, a[:, k] / a[k, k], 0.0)
            pivot_row = lib.where(cols[0] > k, a[k], 0.0)
            a = a - column[:, None] * pivot_row[None, :]
            return lib.where((rows > k) & (cols == k), column[:, None], a)
        return lax.fori_loop(0, n - 1, step, a)
    return f


def _on_a_copy(kernel):
    """numpy's column for a corpus kernel that updates its array in place."""
    def f(a):
        a = a.copy()
        kernel(a)
        return a
    return f


def lu_numpy(_):
    # the same factors, row by row (Doolittle)
    return _on_a_copy(lambda a: polybench().lu(a.shape[0], a))


def seidel(lax, lib):
    def f(a):
        n = a.shape[0]

        def row(i, a):
            def cell(j, a):
                block = lax.dynamic_slice(a, (i - 1, j - 1), (3, 3))
                return a.at[i, j].set(lib.sum(block) / 9.0)
            return lax.fori_loop(1, n - 1, cell, a)
        return lax.fori_loop(1, n - 1, row, a)
    return f


def seidel_numpy(_):
    return _on_a_copy(lambda a: polybench().seidel_2d(1, a.shape[0], a))


def nussinov(lax, lib):
    def f(seq):
        n = seq.shape[0]

        def match(b1, b2):
            return lib.where(b1 + b2 == 3, 1, 0)

        def row(t, table):
            i = n - 1 - t

            def cell(j, table):
                best = table[i, j]
                best = lib.maximum(best, lib.where(j > 0, table[i, j - 1], best))
                best = lib.maximum(best, lib.where(i + 1 < n, table[i + 1, j], best))
                inner = lib.where(i < j - 1, table[i + 1, j - 1] + match(seq[i], seq[j]),
                                  table[i + 1, j - 1])
                best = lib.maximum(best, lib.where(j > 0, inner, best))

                def split(k, best):
                    return lib.maximum(best, table[i, k] + table[k + 1, j])
                best = lax.fori_loop(i + 1, j, split, best)
                return table.at[i, j].set(best)
            return lax.fori_loop(i + 1, n, cell, table)
        return lax.fori_loop(0, n, row, lib.zeros((n, n), seq.dtype))
    return f


def nussinov_numpy(_):
    def f(seq):
        table = np.zeros((seq.shape[0],) * 2, seq.dtype)
        polybench().nussinov(seq.shape[0], seq, table)
        return table
    return f


def _lower(n):
    rng = np.random.default_rng(n)
    return np.tril(rng.standard_normal((n, n))) + n * np.eye(n)


def _general(n):
    return np.random.default_rng(n + 1).standard_normal((n, n)) + n * np.eye(n)


def _floats(*shape):
    return (np.random.default_rng(sum(shape)).standard_normal(shape) * 0.1).astype(np.float32)


# name -> (aotc/JAX builder, numpy builder, builder argument, inputs, calls per block)
KERNELS = {
    **{f"recurrence_{t}": (recurrence, recurrence_numpy, t,
                           lambda: (_floats(N_RECURRENCE),), max(2, 20000 // t))
       for t in (10, 100, 1000, 10000, 100000)},
    **{f"prefix_{t}": (prefix, prefix_numpy, None, (lambda t=t: (_floats(t),)),
                       max(2, 20000 // t))
       for t in (100, 4096)},
    **{f"rows_{r}x{w}": (rows, rows_numpy, None, (lambda r=r, w=w: (_floats(r, w),)),
                         max(2, 200000 // (r * w)))
       for r, w in ((256, 64), (16, 16384))},
    **{f"elementwise_{n}": (elementwise, elementwise_numpy, None,
                            (lambda n=n: (_floats(n),)), max(2, 2_000_000 // n))
       for n in (4096, 16384, 65536, 262144, 1048576)},
    **{f"leapfrog_{n}": (leapfrog, leapfrog_numpy, None,
                         (lambda n=n: (_floats(n), _floats(n) + 1)), max(2, 2_000_000 // n))
       for n in (4096, 262144)},
    **{f"rnn_{h}": (rnn, rnn_numpy, "lib", (lambda h=h: (_floats(8, h), _floats(h, h))), 20)
       for h in (32, 512)},
    **{f"trisolve_{n}": (trisolve, trisolve_numpy, "lib",
                         (lambda n=n: (_lower(n), np.random.default_rng(5).standard_normal(n))),
                         20) for n in (64, 256)},
    **{f"lu_{n}": (lu, lu_numpy, "lib", (lambda n=n: (_general(n),)), 20) for n in (32, 64, 128)},
    **{f"seidel_{n}": (seidel, seidel_numpy, "lib",
                       (lambda n=n: (np.random.default_rng(6).random((n, n)),)), 10)
       for n in (40,)},
    **{f"nussinov_{n}": (nussinov, nussinov_numpy, "lib",
                         (lambda n=n: (np.random.default_rng(7).integers(0, 4, n)
                                       .astype(np.int32),)), 5)
       for n in (60,)},
}
# The forms compared: max_work for each suffix.
FORMS = {"": None, "_per_op": 0}
RULE_KERNELS = [k for k in KERNELS if k.startswith(("recurrence", "prefix"))]
WORKLOADS = {**{k: (k, None) for k in KERNELS},
             **{k + s: (k, m) for k in RULE_KERNELS for s, m in FORMS.items() if s}}


def workload(name: str) -> run.Workload:
    kernel, max_work = WORKLOADS[name]
    build, build_numpy, arg, inputs, calls = KERNELS[kernel]

    def make():
        args = inputs()
        fa = aotc.jit(build(aotc.lax, anp if arg == "lib" else arg))
        # Compiled here, with this form's bound, for the device arrays the timed calls
        # pass (which then reuse it).
        with aotc.config.override(**({} if max_work is None
                                     else {"loop_dispatch_max_work": max_work})):
            fa(*(aotc.device_put(a) for a in args))
        fj = None
        if run.jax is not None:
            fj = run.jax.jit(build(run.jax.lax, run.jnp if arg == "lib" else arg))
        return fa, build_numpy(arg), fj, args

    return run.Workload(name, kernel, make, calls)


def main(argv=None) -> int:
    return workload_main(__doc__, WORKLOADS, workload, "loops.json", argv)


if __name__ == "__main__":
    sys.exit(main())
