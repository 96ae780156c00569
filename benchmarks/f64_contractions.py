"""float64 contractions: aotc vs numpy (its BLAS) vs jax.jit (x64), interleaved, as ratios.

    python benchmarks/f64_contractions.py            # table + results/f64_contractions.json
    python benchmarks/f64_contractions.py --only matmul_1024 mlp_layer

Matmuls from 128^3 to 1024x1200x1100, an MLP layer (a [64, 784] batch times [784, 512]
weights plus bias and relu), a gemm-style ``alpha * A @ B + beta * C``, a batched matmul
and a matrix-vector product, all float64. float64 contractions of at least 2 * 256^3
flops compile data-tiled through IREE's inner_tiled lowering (aotc/cpu_paths.py
``wants_inner_tiling``). Timing as benchmarks/run.py: device-resident inputs, interleaved
blocks, the median over blocks of each block's per-call median. A bar chart of the
ratios goes beside the JSON.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import run  # noqa: E402  (the timing of benchmarks/run.py)
from float64_math import workload_main  # noqa: E402  (the same JSON, bar chart and table)

import aotc  # noqa: E402
import aotc.numpy as anp  # noqa: E402

if run.jax is not None:
    run.jax.config.update("jax_enable_x64", True)


def matmul(lib, a, b):
    return a @ b


def mlp_layer(lib, x, w, bias):
    return lib.maximum(x @ w + bias, 0.0)


def gemm(lib, alpha, beta, a, b, c):
    return alpha * (a @ b) + beta * c


def batched(lib, a, b):
    return lib.matmul(a, b)


def _normal(*shape):
    return np.random.default_rng(len(shape) + sum(shape)).standard_normal(shape)


# name -> (function, inputs, calls per block)
WORKLOADS = {
    "matmul_128": (matmul, lambda: (_normal(128, 128), _normal(128, 128)), 200),
    "matmul_256": (matmul, lambda: (_normal(256, 256), _normal(256, 256)), 50),
    "matmul_512": (matmul, lambda: (_normal(512, 512), _normal(512, 512)), 10),
    "matmul_1024": (matmul, lambda: (_normal(1024, 1024), _normal(1024, 1024)), 3),
    "matmul_1024x1200x1100": (matmul, lambda: (_normal(1024, 1200), _normal(1200, 1100)), 3),
    "mlp_layer": (mlp_layer, lambda: (_normal(64, 784), _normal(784, 512), _normal(512)), 50),
    "gemm_512": (gemm, lambda: (np.float64(1.5), np.float64(1.2), _normal(512, 512),
                                _normal(512, 512), _normal(512, 512)), 10),
    "batched_8x256": (batched, lambda: (_normal(8, 256, 256), _normal(8, 256, 256)), 10),
    "matvec_2048": (matmul, lambda: (_normal(2048, 2048), _normal(2048)), 50),
}


def workload(name: str) -> run.Workload:
    fn, inputs, calls = WORKLOADS[name]

    def make():
        fj = run.jax.jit(functools.partial(fn, run.jnp)) if run.jax else None
        return aotc.jit(functools.partial(fn, anp)), functools.partial(fn, np), fj, inputs()

    return run.Workload(name, fn.__name__, make, calls)


def main(argv=None) -> int:
    return workload_main(__doc__, WORKLOADS, workload, "f64_contractions.json", argv)


if __name__ == "__main__":
    sys.exit(main())
