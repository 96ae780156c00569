"""float64 math: aotc vs numpy vs jax.jit (x64), side by side in one process, as ratios.

    python benchmarks/float64_math.py                 # table + results/float64_math.json
    python benchmarks/float64_math.py --only haversine --repeats 5 --size 1000

The workloads are the float64 code numpy users write (haversine distances, rotations,
a Gaussian with a log-likelihood, phases of signals): aotc's own float64 sin/cos/tan/
arcsin/arctan2/expm1... (passes/libm) against numpy's (the C library's, some SIMD) and
XLA's; ``x % y`` (aotc's exact float64 fmod, ops/scalar_fmod.py) on ordinary and on huge
quotients; ``x ** y`` (passes/libm/power.py). Timing as benchmarks/run.py: interleaved
blocks, device-resident inputs, the median over blocks of each block's per-call median.
A bar chart of the ratios goes beside the JSON when matplotlib is installed.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import run  # noqa: E402  (the timing of benchmarks/run.py)

import aotc  # noqa: E402
import aotc.numpy as anp  # noqa: E402

if run.jax is not None:
    run.jax.config.update("jax_enable_x64", True)  # numpy's dtypes: float64 stays float64


def haversine(lib, lat1, lon1, lat2, lon2):
    a = (lib.sin((lat2 - lat1) / 2) ** 2
         + lib.cos(lat1) * lib.cos(lat2) * lib.sin((lon2 - lon1) / 2) ** 2)
    return 2 * 6371.0 * lib.arcsin(lib.sqrt(a))


def rotation(lib, theta, x, y):
    c, s = lib.cos(theta), lib.sin(theta)
    return lib.stack([c * x - s * y, s * x + c * y])


def gaussian_loglik(lib, x, mu, sigma):
    z = (x - mu) / sigma
    return lib.exp(-0.5 * z * z) / sigma + lib.log1p(z * z) - lib.tanh(z)


def phase(lib, re, im, t):
    return lib.arctan2(im, re) + lib.tan(0.1 * t) * lib.expm1(-t * t)


def remainder(lib, x, y):
    """x % y, quotients below 2**53: the one-fma path"""
    return x % y


def remainder_huge(lib, x, y):
    """x % y, quotients 2**60 to 2**1000: the exact reduction"""
    return x % y


def power(lib, x, y):
    """x ** y, results from 1e-200 to 1e200: passes/libm/power.py"""
    return x ** y


# Each function's inputs, from a seeded generator and the size.
INPUTS = {
    "remainder": lambda r, n: (r.standard_normal(n) * 100, r.uniform(0.5, 10, n)),
    "remainder_huge": lambda r, n: (np.ldexp(r.uniform(-2, 2, n), r.integers(60, 1000, n)),
                                    r.uniform(0.5, 10, n)),
    "haversine": lambda r, n: (r.uniform(-1.5, 1.5, n), r.uniform(-3, 3, n),
                               r.uniform(-1.5, 1.5, n), r.uniform(-3, 3, n)),
    "rotation": lambda r, n: (r.uniform(-1e3, 1e3, n), r.standard_normal(n),
                              r.standard_normal(n)),
    "gaussian_loglik": lambda r, n: (r.standard_normal(n), np.full((), 0.1), np.full((), 1.3)),
    "phase": lambda r, n: (r.standard_normal(n), r.standard_normal(n), r.uniform(-3, 3, n)),
    "power": lambda r, n: (r.uniform(0.01, 100, n), r.uniform(-100, 100, n)),
}


def _inputs(name: str, n: int):
    return INPUTS[name](np.random.default_rng(0), n)


FUNCTIONS = {f.__name__: f for f in (haversine, rotation, gaussian_loglik, phase, remainder,
                                      remainder_huge, power)}


def workload(name: str, n: int) -> run.Workload:
    fn = FUNCTIONS[name]

    def make():
        fj = run.jax.jit(functools.partial(fn, run.jnp)) if run.jax else None
        return aotc.jit(functools.partial(fn, anp)), functools.partial(fn, np), fj, _inputs(name, n)

    return run.Workload(f"{name}[{n}]", fn.__doc__ or name, make, max(5, 2_000_000 // n))


def paired_bars(path: Path, names, left: tuple, right: tuple | None, ylabel: str,
                unit_line: bool = False) -> None:
    """A bar chart of two series per workload (``left``, ``right``: (label, values); the
    right one may be None) at ``path``; nothing where matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    x = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(1.2 * len(names) + 2, 3.5))
    ax.bar(x - 0.2, left[1], 0.4, label=left[0])
    if right is not None:
        ax.bar(x + 0.2, right[1], 0.4, label=right[0])
    if unit_line:
        ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(x, names, rotation=20, ha="right")
    ax.set_ylabel(ylabel)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)


def plot(rows, path: Path) -> None:
    jax_ratios = (("aotc / jax.jit", [r["aotc/jax"] for r in rows])
                  if all("aotc/jax" in r for r in rows) else None)
    paired_bars(path, [r["workload"] for r in rows],
                ("aotc / numpy", [r.get("aotc/numpy", np.nan) for r in rows]), jax_ratios,
                "time ratio (below 1: aotc faster)", unit_line=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", nargs="*", choices=sorted(FUNCTIONS))
    p.add_argument("--size", type=int, nargs="*", default=[1000, 100_000])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "float64_math.json"))
    args = p.parse_args(argv)
    report([workload(name, n) for name in (args.only or FUNCTIONS) for n in args.size],
           args.repeats, Path(args.out))
    return 0


def library_workload(name: str, workloads: dict, libraries: dict) -> run.Workload:
    """Workload ``name`` of a table ``{name: (fn, inputs, calls)}`` whose ``fn(lib,
    *args)`` is written once over a library namespace: ``libraries["aotc"]``, ``["numpy"]``
    and ``["jax"]`` (None without JAX) are what it runs on."""
    fn, inputs, calls = workloads[name]

    def bound(library):
        return lambda *args: fn(libraries[library], *args)

    def make():
        fj = run.jax.jit(bound("jax")) if run.jax else None
        return aotc.jit(bound("aotc")), bound("numpy"), fj, inputs()

    return run.Workload(name, fn.__name__, make, calls)


def workload_main(doc: str, names, workload, out_name: str, argv=None) -> int:
    """The command line of a benchmark of named workloads: ``--only``, ``--repeats``,
    ``--out`` (default ``results/<out_name>``), then ``report``."""
    p = argparse.ArgumentParser(description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", nargs="*", choices=sorted(names))
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / out_name))
    args = p.parse_args(argv)
    report([workload(name) for name in (args.only or names)], args.repeats, Path(args.out))
    return 0


def report(workloads: list, repeats: int, out: Path) -> None:
    """Runs the workloads; writes their rows as JSON at ``out``, the bar chart beside it,
    and prints the table."""
    rows = [run.run_workload(w, repeats) for w in workloads]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows}, indent=2))
    plot(rows, out.with_suffix(".png"))
    run.print_rows(rows, width=24)


if __name__ == "__main__":
    sys.exit(main())
