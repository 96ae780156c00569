"""Accuracy of aotc's float math against the exact values, per function and dtype.

For each float ufunc, one compiled function evaluates it on a sweep of arguments over
its domain (uniform, log-uniform magnitudes, huge arguments, the edges); errors are in
ulps of the exact result (mpmath at high precision, rounded to the dtype), on a sample
of the sweep plus every point where aotc and numpy disagree by 1 ulp or more. numpy's
own error on the same points is beside it. Results whose exact value is subnormal are
left out (IREE's CPU runtime flushes them to zero; counted in the last column).

    python benchmarks/accuracy.py            # writes docs/accuracy.md
    python benchmarks/accuracy.py --quick    # fewer points
"""

from __future__ import annotations

import argparse
import pathlib
import time

import mpmath
import numpy as np

import aotc
import aotc.numpy as anp

RESULTS = pathlib.Path(__file__).parents[1] / "docs" / "accuracy.md"

# name -> (exact function, domain as (low, high) ranges; "log" ranges are log10 magnitudes
# of both signs)
FUNCTIONS = {
    "sin": (mpmath.sin, [(-10, 10), ("log", -300, 308)]),
    "cos": (mpmath.cos, [(-10, 10), ("log", -300, 308)]),
    "tan": (mpmath.tan, [(-10, 10), ("log", -300, 300)]),
    "arcsin": (mpmath.asin, [(-1, 1), ("log", -300, 0)]),
    "arccos": (mpmath.acos, [(-1, 1), ("log", -300, 0)]),
    "arctan": (mpmath.atan, [(-10, 10), ("log", -300, 308)]),
    "sinh": (mpmath.sinh, [(-10, 10), ("log", -300, 2.85)]),
    "cosh": (mpmath.cosh, [(-10, 10), ("log", -300, 2.85)]),
    "tanh": (mpmath.tanh, [(-10, 10), ("log", -300, 3)]),
    "arcsinh": (mpmath.asinh, [(-10, 10), ("log", -300, 308)]),
    "arccosh": (mpmath.acosh, [(1, 10), ("pos", 0, 308)]),
    "arctanh": (mpmath.atanh, [(-1, 1), ("log", -300, 0)]),
    "exp": (mpmath.exp, [(-745, 709)]),
    "exp2": (lambda x: mpmath.power(2, x), [(-1074, 1023)]),
    "expm1": (mpmath.expm1, [(-40, 709), ("log", -300, 0)]),
    "log": (mpmath.log, [(0, 10), ("pos", -307, 308)]),
    "log2": (lambda x: mpmath.log(x, 2), [(0, 10), ("pos", -307, 308)]),
    "log10": (mpmath.log10, [(0, 10), ("pos", -307, 308)]),
    "log1p": (mpmath.log1p, [(-1, 10), ("log", -300, 308)]),
    "sqrt": (mpmath.sqrt, [("pos", -307, 308)]),
    "cbrt": (mpmath.cbrt, [("log", -307, 308)]),
}
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0 ** -27, 2.0 ** 20, 1e22,
           6381956970095103 * 2.0 ** 797]


def sweep(domains, dtype, n, rng) -> np.ndarray:
    info = np.finfo(dtype)
    parts = [np.array(SPECIAL)]
    for domain in domains:
        if domain[0] in ("log", "pos"):
            lo, hi = max(domain[1], np.log10(info.tiny)), min(domain[2], np.log10(info.max))
            magnitudes = 10.0 ** rng.uniform(lo, hi, n)
            parts.append(magnitudes if domain[0] == "pos" else magnitudes * rng.choice([-1, 1], n))
        else:
            parts.append(np.clip(rng.uniform(*domain, n), -info.max, info.max))
    x = np.concatenate(parts).astype(dtype)
    return x[np.isfinite(x)]


def ulp_errors(name, x, got, dtype, precision):
    exact_fn = FUNCTIONS[name][0]
    errors, flushed = [], 0
    tiny = np.finfo(dtype).tiny
    with mpmath.workprec(precision):
        for xi, gi in zip(x, got):
            try:
                exact = exact_fn(mpmath.mpf(float(xi)))
            except (ValueError, ZeroDivisionError):
                continue
            if isinstance(exact, mpmath.mpc) or not mpmath.isfinite(exact):
                continue
            rounded = dtype(float(exact))
            if not np.isfinite(rounded):
                continue
            if abs(rounded) < tiny:
                flushed += 1
                continue
            spacing = float(np.spacing(np.abs(rounded)))
            errors.append(float(abs(mpmath.mpf(float(gi)) - exact)) / spacing
                          if not np.isnan(gi) else np.inf)
    return np.array(errors), flushed


def measure(dtype, n, sample, rng):
    xs = {name: sweep(domains, dtype, n, rng) for name, (_, domains) in FUNCTIONS.items()}

    def every(*args):
        return {name: getattr(anp, name)(a) for name, a in zip(FUNCTIONS, args)}

    start = time.perf_counter()
    got = aotc.jit(every)(*xs.values())
    compile_s = time.perf_counter() - start
    rows = {}
    for name, x in xs.items():
        g = np.asarray(got[name])
        with np.errstate(all="ignore"):
            want = getattr(np, name)(x)
        differ = np.nonzero(~((g == want) | (np.isnan(g) & np.isnan(want))))[0]
        chosen = np.unique(np.concatenate([rng.choice(len(x), min(sample, len(x)), replace=False),
                                           differ[:sample]]))
        precision = 1500 if name in ("sin", "cos", "tan") else 200
        ours, flushed = ulp_errors(name, x[chosen], g[chosen], dtype, precision)
        theirs, _ = ulp_errors(name, x[chosen], want[chosen], dtype, precision)
        rows[name] = (ours, theirs, flushed, len(x))
    return rows, compile_s


def render(results) -> str:
    lines = ["# Accuracy of aotc's float math on the CPU (ulps of the exact value)", "",
             "<!-- Generated by `python benchmarks/accuracy.py`; do not edit by hand. -->", "",
             "Errors in ulps of the exact value (mpmath), on a sample of a sweep of each "
             "function's domain plus every point where aotc and numpy differ; numpy's own "
             "error on the same points beside it. Subnormal results are left out: IREE's CPU "
             "runtime flushes them to zero.", ""]
    for dtype, (rows, _) in results.items():
        lines += [f"## {np.dtype(dtype).name}", "",
                  "| function | aotc max | aotc mean | numpy max | numpy mean | points | "
                  "subnormal results left out |", "|---|---|---|---|---|---|---|"]
        for name, (ours, theirs, flushed, swept) in rows.items():
            lines.append(f"| {name} | {ours.max():.2f} | {ours.mean():.3f} | {theirs.max():.2f} | "
                         f"{theirs.mean():.3f} | {len(ours)} of {swept} | {flushed} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer points")
    parser.add_argument("--float64", action="store_true", help="float64 only")
    parser.add_argument("--out", default=str(RESULTS), help="the markdown table to write")
    args = parser.parse_args()
    n, sample = (2000, 300) if args.quick else (100_000, 2000)
    rng = np.random.default_rng(0)
    dtypes = [np.float64] if args.float64 else [np.float64, np.float32]
    results = {dt: measure(dt, n, sample, rng) for dt in dtypes}
    text = render(results)
    pathlib.Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
