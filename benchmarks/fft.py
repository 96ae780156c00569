"""Fourier transforms: aotc vs numpy (pocketfft) vs jax.jit (x64, ducc), interleaved, as ratios.

    python benchmarks/fft.py                     # table + results/fft.json + .png
    python benchmarks/fft.py --only fft_65536

``fft`` of complex128 and complex64 signals, ``rfft`` and ``irfft`` of float64 ones at
n = 2^10, 2^16, 2^20, the prime 65537 (Bluestein's algorithm in aotc), 48000 (radices
4, 2, 3 and 5: an audio second) and ``fft2`` of a 512 x 512 image. aotc's transforms are
the Stockham stages of aotc/ops/fourier.py. Timing as benchmarks/run.py: device-resident
inputs, interleaved blocks, the median over blocks of each block's per-call median.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import run  # noqa: E402  (the timing of benchmarks/run.py)
from float64_math import library_workload, workload_main  # noqa: E402  (shared table and chart)

import aotc.numpy as anp  # noqa: E402

if run.jax is not None:
    run.jax.config.update("jax_enable_x64", True)

LIBRARIES = {"aotc": anp, "numpy": np, "jax": run.jnp if run.jax else None}


def fft(m, z):
    return m.fft.fft(z)


def rfft(m, x):
    return m.fft.rfft(x)


def irfft(m, spectrum):
    return m.fft.irfft(spectrum)


def fft2(m, image):
    return m.fft.fft2(image)


def _complex(n, dtype=np.complex128):
    rng = np.random.default_rng(n)
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)


def _real(n):
    return np.random.default_rng(n + 1).standard_normal(n)


SIZES = {2**10: 500, 2**16: 20, 2**20: 3, 65537: 10, 48000: 20}
WORKLOADS = {}
for _n, _calls in SIZES.items():
    WORKLOADS[f"fft_{_n}"] = (fft, lambda n=_n: (_complex(n),), _calls)
    WORKLOADS[f"fft_c64_{_n}"] = (fft, lambda n=_n: (_complex(n, np.complex64),), _calls)
    WORKLOADS[f"rfft_{_n}"] = (rfft, lambda n=_n: (_real(n),), _calls)
    WORKLOADS[f"irfft_{_n}"] = (irfft, lambda n=_n: (np.fft.rfft(_real(n)),), _calls)
WORKLOADS["fft2_512x512"] = (fft2, lambda: (_complex(512 * 512).reshape(512, 512),), 10)


def workload(name: str) -> run.Workload:
    return library_workload(name, WORKLOADS, LIBRARIES)


def main(argv=None) -> int:
    return workload_main(__doc__, WORKLOADS, workload, "fft.json", argv)


if __name__ == "__main__":
    sys.exit(main())
