"""The kernel corpus of tests/kernels/polybench.py: aotc.jit vs numpy, kernel by kernel.

    python benchmarks/kernels.py                     # every kernel, table + results/kernels.json
    python benchmarks/kernels.py --only gemm lu adi --repeats 5

For each kernel, at the corpus's (small) default sizes: the first call (trace, compile
and run; the compile is cold, in a fresh cache directory, unless --keep-cache), the
largest difference from numpy over the result and the arguments afterwards (relative,
as max |got - want| / max |want|), and the time per call of numpy and of the compiled
kernel. Both get numpy arrays and leave numpy arrays: the compiled kernel writes the
arguments it mutates back into them and its results are read with ``np.asarray``, so
its figure includes the transfers. Every call gets fresh copies of the inputs (copied
outside the timed region), so time-stepping kernels do not drift.

Where JAX is installed, the kernels of ``kernels_jax.py`` (hand-written functional
versions: ``.at[]`` updates, ``lax.fori_loop`` time steps) run under ``jax.jit`` too: its
first call (trace and XLA compile), its difference from numpy, and its time per call with
every returned array read back with ``np.asarray``.

Timing is interleaved (numpy block, aotc block, jax block, numpy block, ...); the figure
is the median over blocks of each block's per-call median. A kernel that fails to compile or
disagrees with numpy is listed with the reason and not timed. Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import aotc

sys.path.insert(0, str(Path(__file__).parent))
from corpus import polybench  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


KERNELS = polybench().KERNELS

try:  # the jax.jit column, where JAX is installed
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from kernels_jax import JAX_KERNELS
except ImportError:
    JAX_KERNELS = {}


def _copies(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _leaves(out):
    if isinstance(out, (tuple, list)):
        return [leaf for o in out for leaf in _leaves(o)]
    if isinstance(out, dict):
        return [leaf for o in out.values() for leaf in _leaves(o)]
    return [] if out is None else [out]


def _arrays(out, args):
    """The result leaves and the array arguments, as numpy arrays."""
    return ([np.asarray(x) for x in _leaves(out)]
            + [a for a in args if isinstance(a, np.ndarray)])


def _rel_error(got, want) -> float:
    if len(got) != len(want):
        return float("inf")
    err = 0.0
    for g, w in zip(got, want):
        if g.shape != w.shape:
            return float("inf")
        w64, g64 = w.astype(np.float64), g.astype(np.float64)
        scale = max(float(np.max(np.abs(w64), initial=0.0)), 1e-300)
        err = max(err, float(np.max(np.abs(g64 - w64), initial=0.0)) / scale)
    return err


def _per_call(fn, pristine, calls: int, read) -> float:
    times = []
    for _ in range(calls):
        args = _copies(pristine)
        start = time.perf_counter()
        read(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _read_numpy(out):
    return out


def _read_aotc(out):
    for leaf in _leaves(out):
        np.asarray(leaf)


def _jax_jitted(name: str, kernel):
    """jax.jit of the kernel's JAX version (None where there is none)."""
    import jax

    fn = JAX_KERNELS.get(name)
    if fn is None:
        return None
    return jax.jit(fn, static_argnums=kernel.static)


def run_kernel(name: str, repeats: int, calls: int, tolerance: float) -> dict:
    kernel = KERNELS[name]
    pristine = kernel.init(kernel.sizes)
    row = {"kernel": name, "sizes": kernel.sizes, "mutates": list(kernel.mutates)}

    want_args = _copies(pristine)
    want = _arrays(kernel.fn(*want_args), want_args)
    jitted = aotc.jit(kernel.fn, static_argnums=kernel.static)
    got_args = _copies(pristine)
    start = time.perf_counter()
    try:
        out = jitted(*got_args)
        got = _arrays(out, got_args)
    except Exception as e:  # a kernel aotc cannot compile yet is reported, not fatal
        row["status"] = f"error: {type(e).__name__}: {str(e).splitlines()[0][:120]}"
        return row
    row["first_call_s"] = time.perf_counter() - start
    row["max_rel_error"] = _rel_error(got, want)
    if not row["max_rel_error"] <= tolerance:
        row["status"] = "mismatch"
        return row

    runs = {"numpy": (kernel.fn, _read_numpy), "aotc": (jitted, _read_aotc)}
    jax_fn = _jax_jitted(name, kernel)
    if jax_fn is not None:
        start = time.perf_counter()
        out = [np.asarray(x) for x in jax_fn(*_copies(pristine))]
        row["jax_first_call_s"] = time.perf_counter() - start
        row["jax_rel_error"] = _rel_error(out, want)
        runs["jax"] = (jax_fn, _read_aotc)
    times = {k: [] for k in runs}
    for _ in range(repeats):
        for k, (fn, read) in runs.items():
            times[k].append(_per_call(fn, pristine, calls, read))
    med = {k: statistics.median(v) for k, v in times.items()}
    row.update({f"{k}_us": v * 1e6 for k, v in med.items()})
    row["aotc/numpy"] = med["aotc"] / med["numpy"]
    if "jax" in med:
        row["aotc/jax"] = med["aotc"] / med["jax"]
    row["status"] = "ok"
    return row


def _cell(row: dict, key: str, fmt: str, width: int) -> str:
    return format(row[key], fmt).rjust(width) if key in row else " " * width


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", nargs="*", choices=sorted(KERNELS), help="kernels to run")
    p.add_argument("--repeats", type=int, default=3, help="interleaved blocks per kernel")
    p.add_argument("--calls", type=int, default=20, help="calls per block")
    p.add_argument("--tolerance", type=float, default=1e-10,
                   help="largest relative difference from numpy still timed")
    p.add_argument("--keep-cache", action="store_true",
                   help="use the configured compile cache (first calls may hit it)")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "kernels.json"))
    args = p.parse_args(argv)

    names = args.only or list(KERNELS)
    with tempfile.TemporaryDirectory(prefix="aotc-kernels-") as cache:
        if not args.keep_cache:
            os.environ["AOTC_CACHE_DIR"] = cache
        rows = []
        for name in names:
            rows.append(run_kernel(name, args.repeats, args.calls, args.tolerance))
            print(f"  {name}: {rows[-1]['status']}", file=sys.stderr, flush=True)

    report = {"rows": rows, "numpy": np.__version__, "aotc": aotc.__version__}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2))

    print(f"{'kernel':<17} {'first call s':>12} {'jax 1st s':>9} {'numpy us':>10} "
          f"{'aotc us':>10} {'jax us':>10} {'aotc/np':>8} {'aotc/jax':>8}  {'rel.err':>7}  "
          f"{'jax err':>7}  status")
    for r in rows:
        print(f"{r['kernel']:<17} {_cell(r, 'first_call_s', '.2f', 12)} "
              f"{_cell(r, 'jax_first_call_s', '.2f', 9)} "
              f"{_cell(r, 'numpy_us', '.1f', 10)} {_cell(r, 'aotc_us', '.1f', 10)} "
              f"{_cell(r, 'jax_us', '.1f', 10)} {_cell(r, 'aotc/numpy', '.2f', 8)} "
              f"{_cell(r, 'aotc/jax', '.2f', 8)}  {_cell(r, 'max_rel_error', '.0e', 7)}  "
              f"{_cell(r, 'jax_rel_error', '.0e', 7)}  {r['status']}")
    ok = [r for r in rows if r["status"] == "ok"]
    if ok:
        ratio = statistics.geometric_mean(r["aotc/numpy"] for r in ok)
        print(f"{len(ok)}/{len(rows)} kernels timed; geometric mean aotc/numpy {ratio:.2f}")
    with_jax = [r for r in ok if "aotc/jax" in r]
    if with_jax:
        ratio = statistics.geometric_mean(r["aotc/jax"] for r in with_jax)
        print(f"{len(with_jax)} kernels with a JAX version; geometric mean aotc/jax "
              f"{ratio:.2f}")
    _plot(ok, Path(args.out).with_suffix(".png"))
    print(f"written to {args.out} (plot beside it)")
    return 0


def _plot(rows: list[dict], path: Path) -> None:
    """Time per call relative to numpy's, per kernel (log scale): aotc and jax.jit."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    if not rows:
        return
    ys = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(rows) + 1.2))
    ax.barh(ys - 0.2, [r["aotc/numpy"] for r in rows], 0.4, label="aotc")
    ax.barh(ys + 0.2, [r["jax_us"] / r["numpy_us"] if "jax_us" in r else 0 for r in rows],
            0.4, label="jax.jit")
    ax.axvline(1.0, color="grey", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yticks(ys, [r["kernel"] for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("time per call / numpy's (lower is faster)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    sys.exit(main())
