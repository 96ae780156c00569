"""Several reductions of the same data: aotc (merged by aotc-fuse-siblings) vs the same
reductions compiled one dispatch each vs numpy vs jax.jit.

    python benchmarks/sibling_reductions.py                   # [2048, 2048] and [256, 256]
    python benchmarks/sibling_reductions.py --shape 8192x1024 --repeats 60

Each case is a function returning independent reductions of one float32 array. "merged"
is what ``aotc.jit`` compiles; "separate" is the same function compiled with the pass
told to leave reductions apart (what GPU targets get), so their ratio is the pass's
effect. Timing is interleaved call by call (merged, separate, numpy, JAX, ...); the
figure is each one's median. aotc and JAX get device-resident inputs and are
synchronised. Nothing here is asserted; results go to results/sibling_reductions.json.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

import aotc
import aotc.build

CASES = {
    "min, max, sum over axis 1": lambda m, x: (x.min(axis=1), x.max(axis=1), x.sum(axis=1)),
    "sum, sum of squares over axis 1": lambda m, x: (x.sum(axis=1), (x * x).sum(axis=1)),
    "mean, mean of squares, max |x| over axis 0": lambda m, x: (
        x.mean(axis=0), (x * x).mean(axis=0), m.abs(x).max(axis=0)),
    "min, max over axis 0": lambda m, x: (x.min(axis=0), x.max(axis=0)),
    "min, max, sum of all": lambda m, x: (x.min(), x.max(), x.sum()),
}


def _separate(fn, x):
    """``fn`` compiled for ``x`` (jit compiles at the first call) with reductions left
    apart (the pass's GPU setting)."""
    merging = aotc.build.FuseSiblings
    aotc.build.FuseSiblings = lambda reductions, returned: merging(reductions=False,
                                                                   returned=returned)
    try:
        compiled = aotc.jit(fn)
        compiled(x)
        return compiled
    finally:
        aotc.build.FuseSiblings = merging


def _timed(call, sync) -> float:
    start = time.perf_counter()
    sync(call())
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", nargs="*", default=["2048x2048", "256x256"])
    parser.add_argument("--repeats", type=int, default=40)
    args = parser.parse_args()
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        jax = None
    import aotc.numpy as anp

    rows = []
    for text in args.shape:
        shape = tuple(int(s) for s in text.split("x"))
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        xd = aotc.device_put(x)
        for name, case in CASES.items():
            runs = {"merged": aotc.jit(lambda v, case=case: case(anp, v)),
                    "separate": _separate(lambda v, case=case: case(anp, v), xd)}
            calls = {k: (lambda f=f: f(xd)) for k, f in runs.items()}
            syncs = {k: (lambda out: [o.block_until_ready() for o in out]) for k in runs}
            calls["numpy"], syncs["numpy"] = (lambda: case(np, x)), (lambda out: None)
            if jax is not None:
                jitted, xj = jax.jit(lambda v, case=case: case(jnp, v)), jnp.asarray(x)
                calls["jax.jit"] = lambda: jitted(xj)
                syncs["jax.jit"] = lambda out: [o.block_until_ready() for o in out]
            for key, call in calls.items():
                syncs[key](call())  # compile and warm up
            times = {key: [] for key in calls}
            for _ in range(args.repeats):
                for key, call in calls.items():
                    times[key].append(_timed(call, syncs[key]))
            medians = {key: float(np.median(t)) for key, t in times.items()}
            rows.append({"shape": text, "case": name, **{k: v * 1e6 for k, v in medians.items()}})
            ratio = medians["merged"] / medians["separate"]
            others = "  ".join(f"{k} {v * 1e6:9.1f} us" for k, v in medians.items())
            print(f"{text:>10s}  {name:44s} {others}  merged/separate {ratio:.2f}", flush=True)
    out = Path(__file__).resolve().parent / "results"
    os.makedirs(out, exist_ok=True)
    (out / "sibling_reductions.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
