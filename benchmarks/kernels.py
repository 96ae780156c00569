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

Timing is interleaved (numpy block, aotc block, numpy block, ...); the figure is the
median over blocks of each block's per-call median. A kernel that fails to compile or
disagrees with numpy is listed with the reason and not timed. Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import aotc

ROOT = Path(__file__).resolve().parent.parent


def _load_corpus():
    path = ROOT / "tests" / "kernels" / "polybench.py"
    spec = importlib.util.spec_from_file_location("polybench", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["polybench"] = module
    spec.loader.exec_module(module)
    return module.KERNELS


KERNELS = _load_corpus()


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

    times = {"numpy": [], "aotc": []}
    for _ in range(repeats):
        times["numpy"].append(_per_call(kernel.fn, pristine, calls, _read_numpy))
        times["aotc"].append(_per_call(jitted, pristine, calls, _read_aotc))
    med = {k: statistics.median(v) for k, v in times.items()}
    row.update({f"{k}_us": v * 1e6 for k, v in med.items()})
    row["aotc/numpy"] = med["aotc"] / med["numpy"]
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

    print(f"{'kernel':<17} {'first call s':>12} {'numpy us':>10} {'aotc us':>10} "
          f"{'aotc/np':>8}  {'rel.err':>7}  status")
    for r in rows:
        print(f"{r['kernel']:<17} {_cell(r, 'first_call_s', '.2f', 12)} "
              f"{_cell(r, 'numpy_us', '.1f', 10)} {_cell(r, 'aotc_us', '.1f', 10)} "
              f"{_cell(r, 'aotc/numpy', '.2f', 8)}  {_cell(r, 'max_rel_error', '.0e', 7)}  "
              f"{r['status']}")
    ok = [r for r in rows if r["status"] == "ok"]
    if ok:
        ratio = statistics.geometric_mean(r["aotc/numpy"] for r in ok)
        print(f"{len(ok)}/{len(rows)} kernels timed; geometric mean aotc/numpy {ratio:.2f}")
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
