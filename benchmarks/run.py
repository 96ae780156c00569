"""aotc vs numpy vs jax.jit, side by side in one process.

    python benchmarks/run.py                 # all workloads, table + benchmarks/results/latest.json
    python benchmarks/run.py --only mlp64 tiny --repeats 5

Each workload is timed for every framework in interleaved blocks (aotc, numpy, jax,
aotc, numpy, jax, ...), so drift in machine load hits all of them alike; the figure is
the median over blocks of each block's per-call median. Ratios are aotc/numpy and
aotc/JAX (below 1.0: aotc is faster). JAX is optional (`pip install -e '.[bench]'`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

import aotc
import aotc.lax
import aotc.numpy as anp

try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", False)
except ImportError:  # JAX is an optional reference
    jax = jnp = None


@dataclass
class Workload:
    name: str
    description: str
    make: Callable[[], tuple[Callable, Callable, Callable | None, tuple]]  # aotc, numpy, jax, args
    calls_per_block: int


def _rng():
    return np.random.default_rng(0)


def _mlp_params():
    r = _rng()
    sizes = [784, 512, 512, 10]
    return [((r.standard_normal((a, b)) * np.sqrt(2 / a)).astype(np.float32),
             np.zeros(b, np.float32))
            for a, b in zip(sizes[:-1], sizes[1:])]


def _mlp(lib, x, w1, b1, w2, b2, w3, b3):
    h = lib.maximum(x @ w1 + b1, 0.0)
    h = lib.maximum(h @ w2 + b2, 0.0)
    return h @ w3 + b3


def make_mlp(batch: int):
    def make():
        params = [a for pair in _mlp_params() for a in pair]
        x = _rng().standard_normal((batch, 784), np.float32)
        args = (x, *params)
        fa = aotc.jit(lambda *a: _mlp(anp, *a))
        fj = jax.jit(lambda *a: _mlp(jnp, *a)) if jax else None
        return fa, (lambda *a: _mlp(np, *a)), fj, args
    return make


def _elementwise(lib, x, a, b):
    return lib.tanh(x * a + b) * lib.exp(-x * x) + 1.0


def make_elementwise():
    r = _rng()
    x = r.standard_normal(1 << 20, np.float32)
    a, b = np.float32(0.5), np.float32(0.25)
    args = (x, np.full((), a), np.full((), b))
    fj = jax.jit(lambda *v: _elementwise(jnp, *v)) if jax else None
    return aotc.jit(lambda *v: _elementwise(anp, *v)), (lambda *v: _elementwise(np, *v)), fj, args


def make_matmul():
    r = _rng()
    args = (r.standard_normal((1024, 1024), np.float32),
            r.standard_normal((1024, 1024), np.float32))
    fj = jax.jit(lambda a, b: a @ b) if jax else None
    return aotc.jit(lambda a, b: a @ b), (lambda a, b: a @ b), fj, args


def _softmax(lib, x):
    e = lib.exp(x - lib.max(x, axis=-1, keepdims=True))
    return e / lib.sum(e, axis=-1, keepdims=True)


def make_softmax():
    x = _rng().standard_normal((256, 4096), np.float32)
    fj = jax.jit(lambda v: _softmax(jnp, v)) if jax else None
    return aotc.jit(lambda v: _softmax(anp, v)), (lambda v: _softmax(np, v)), fj, (x,)


def make_tiny():
    a = np.arange(4, dtype=np.float32)
    b = np.ones(4, np.float32)
    fj = jax.jit(lambda x, y: x + y) if jax else None
    return aotc.jit(lambda x, y: x + y), (lambda x, y: x + y), fj, (a, b)


def make_scan():
    """The Elman RNN of samples/rnn_scan.py over 128 steps: lax.scan in aotc and JAX, a
    Python loop in numpy. The weights are arguments; the per-step outputs are the result."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples"))
    import rnn_scan

    params = rnn_scan.init_params(64, 256, 64)
    names = sorted(params)
    r = _rng()
    args = (r.standard_normal((8, 256), np.float32) * np.float32(0.1),
            r.standard_normal((128, 8, 64), np.float32), *(params[n] for n in names))

    def outputs(lib, scan):
        return lambda h0, xs, *p: rnn_scan.run(lib, scan, dict(zip(names, p)), h0, xs)[1]

    fj = jax.jit(outputs(jnp, jax.lax.scan)) if jax else None
    return aotc.jit(outputs(anp, aotc.lax.scan)), outputs(np, rnn_scan.python_scan), fj, args


def make_cnn():
    """samples/cnn.py's classifier (conv 3x3 16, pool, conv 3x3 32, pool, dense 10,
    softmax; NHWC) on 32 images, weights as arguments; JAX runs the same layers with
    jax.lax.conv_general_dilated and reduce_window, numpy with sliding windows."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples"))
    import cnn

    x = _rng().standard_normal((32, *cnn.IMAGE), np.float32)
    args = (x, *(a for pair in cnn.init_params() for a in pair))

    def net(layers):
        return lambda x, *p: cnn.forward(layers, list(zip(p[0::2], p[1::2])), x)

    fj = jax.jit(net(cnn.Layers(
        conv=lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                       dimension_numbers=cnn.NHWC),
        relu=jax.nn.relu,
        max_pool=lambda x: jax.lax.reduce_window(x, -np.inf, jax.lax.max, (1, 2, 2, 1),
                                                 (1, 2, 2, 1), "VALID"),
        dense=lambda x, w, b: x @ w + b, softmax=jax.nn.softmax))) if jax else None
    return aotc.jit(net(cnn.AOTC)), net(cnn.NUMPY), fj, args


WORKLOADS = {
    w.name: w
    for w in (
        Workload("mlp64", "MLP 784-512-512-10, batch 64, weights as args", make_mlp(64), 100),
        Workload("mlp1", "MLP 784-512-512-10, batch 1, weights as args", make_mlp(1), 200),
        # batches that are not a multiple of 8 (their own register tiles)
        Workload("mlp10", "MLP 784-512-512-10, batch 10, weights as args", make_mlp(10), 200),
        Workload("mlp100", "MLP 784-512-512-10, batch 100, weights as args", make_mlp(100), 100),
        Workload("elementwise", "tanh(x*a+b)*exp(-x*x)+1 on 1M float32", make_elementwise, 100),
        Workload("matmul", "matmul 1024x1024x1024 float32", make_matmul, 3),
        Workload("softmax", "row softmax 256x4096 float32", make_softmax, 100),
        Workload("tiny", "add of two float32[4] (per-call overhead)", make_tiny, 2000),
        Workload("scan", "Elman RNN via lax.scan: 128 steps, batch 8, input 64, hidden 256",
                 make_scan, 20),
        Workload("cnn", "CNN conv16-pool-conv32-pool-dense10 on 32 28x28x1 images, weights as args",
                 make_cnn, 50),
    )
}


def _per_call(fn: Callable, args: tuple, calls: int, sync: Callable) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        out = fn(*args)
    sync(out)
    return (time.perf_counter() - start) / calls


# Warm-up before each timed block, at least this long: on the 2-core VM, a program on
# both cores ran at one core's speed for the first 20-70 ms after 0.2 s idle (a training
# step on IREE's local-task: 900 us a call for 25-75 calls, then 620 us), as if the host
# gave the second virtual core back only under load. Every contender gets the same
# warm-up, so the blocks time each at its steady speed.
WARM_UP_SECONDS = 0.2


def warm_up(fn: Callable, args: tuple, calls: int, sync: Callable) -> None:
    """At least ``calls`` calls, and calls until ``WARM_UP_SECONDS`` have passed."""
    start = time.perf_counter()
    _per_call(fn, args, calls, sync)
    while time.perf_counter() - start < WARM_UP_SECONDS:
        _per_call(fn, args, 1, sync)


def _sync_aotc(out):
    out.block_until_ready()  # as for JAX: wait for the result, leave it on the device


def _sync_jax(out):
    out.block_until_ready()


def run_workload(w: Workload, repeats: int) -> dict:
    fa, fn, fj, args = w.make()
    # aotc and JAX get device-resident inputs (their fast path, no copy per call); the
    # tiny call also shows numpy inputs separately (runtime_tiny_call_us).
    from aotc.runtime import device_put

    a_args = tuple(device_put(a) for a in args)
    j_args = tuple(jnp.asarray(a) for a in args) if fj else None
    expected = fn(*args)
    got = np.asarray(fa(*a_args))
    err = float(np.max(np.abs(got - expected)) / (np.max(np.abs(expected)) + 1e-30))
    contenders = [("aotc", fa, a_args, _sync_aotc), ("numpy", fn, args, lambda o: None)]
    if fj:
        fj(*j_args).block_until_ready()
        contenders.append(("jax", fj, j_args, _sync_jax))
    times: dict[str, list[float]] = {name: [] for name, *_ in contenders}
    for _ in range(repeats):
        for name, f, a, sync in contenders:
            # The previous contender's worker threads (OpenBLAS, JAX's and IREE's pools)
            # spin for a while after their last call and would steal cores on a 2-core
            # machine: let them go idle, then warm up, then time.
            time.sleep(0.2)
            warm_up(f, a, max(1, w.calls_per_block // 10), sync)
            samples = [_per_call(f, a, max(1, w.calls_per_block // 5), sync) for _ in range(5)]
            times[name].append(statistics.median(samples))
    med = {k: statistics.median(v) for k, v in times.items()}
    row = {"workload": w.name, "description": w.description, "max_rel_error": err,
           **{f"{k}_us": v * 1e6 for k, v in med.items()}}
    row["aotc/numpy"] = med["aotc"] / med["numpy"]
    if "jax" in med:
        row["aotc/jax"] = med["aotc"] / med["jax"]
    return row


def runtime_fast_path_us(calls: int = 20000) -> dict:
    """Per-call time of a loaded module's function with numpy inputs (the runtime path)."""
    art = aotc.export(lambda x, y: x + y, aotc.ShapeDtypeStruct((4,), "float32"),
                      aotc.ShapeDtypeStruct((4,), "float32"), name="add")
    from aotc.runtime import load

    out = {}
    for device in ("local-sync", "local-task"):
        fn = load(art.vmfb, device=device)["add"]
        a, b = np.arange(4, dtype=np.float32), np.ones(4, np.float32)
        arrays = [fn.call_flat([a, b])[0] for _ in range(10)]
        del arrays
        samples = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(calls // 5):
                np.asarray(fn(a, b))
            samples.append((time.perf_counter() - start) / (calls // 5))
        out[device] = statistics.median(samples) * 1e6
    return out


_COMPILE_SNIPPET = """
import time, numpy as np
t0 = time.perf_counter()
import aotc, aotc.numpy as anp
f = aotc.jit(lambda x, w: anp.maximum(x @ w, 0.0).sum(axis=1))
x, w = np.ones((64, 784), np.float32), np.ones((784, 512), np.float32)
t1 = time.perf_counter()
np.asarray(f(x, w))
t2 = time.perf_counter()
print(t1 - t0, t2 - t1, f.stats["compiles"], f.stats["disk_hits"])
"""


def compile_times() -> dict:
    """Cold compile (empty cache) and warm start (second process, disk cache hit)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, AOTC_CACHE_DIR=cache)
        runs = []
        for _ in range(2):
            out = subprocess.run([sys.executable, "-c", _COMPILE_SNIPPET], env=env,
                                 capture_output=True, text=True, check=True).stdout.split()
            runs.append(out)
    (imp0, cold, compiles0, _), (imp1, warm, _, hits1) = runs
    return {"import_s": float(imp0), "cold_first_call_ms": float(cold) * 1e3,
            "cold_compiles": int(compiles0), "disk_cached_first_call_ms": float(warm) * 1e3,
            "disk_hits": int(hits1)}


def print_rows(rows: list[dict], width: int = 12) -> None:
    """The table of run_workload rows: times, ratios and the largest relative error."""
    print(f"{'workload':<{width}} {'aotc us':>10} {'numpy us':>10} {'jax us':>10} "
          f"{'aotc/np':>8} {'aotc/jax':>8}  rel.err")
    for r in rows:
        print(f"{r['workload']:<{width}} {r['aotc_us']:>10.1f} {r['numpy_us']:>10.1f} "
              f"{r.get('jax_us', float('nan')):>10.1f} {r['aotc/numpy']:>8.2f} "
              f"{r.get('aotc/jax', float('nan')):>8.2f}  {r['max_rel_error']:.1e}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", nargs="*", choices=sorted(WORKLOADS), help="workloads to run")
    p.add_argument("--repeats", type=int, default=3, help="interleaved blocks per workload")
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "latest.json"))
    p.add_argument("--no-jax", action="store_true", help="leave JAX out even if installed")
    args = p.parse_args(argv)
    global jax, jnp
    if args.no_jax:
        jax = jnp = None
    rows = [run_workload(WORKLOADS[n], args.repeats) for n in (args.only or WORKLOADS)]
    report = {"rows": rows, "jax": jax.__version__ if jax else None, "numpy": np.__version__,
              "aotc": aotc.__version__}
    if not args.only:
        report["runtime_tiny_call_us"] = runtime_fast_path_us()
        report["compile"] = compile_times()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2))
    print_rows(rows)
    if "runtime_tiny_call_us" in report:
        print("runtime tiny call (numpy in, np.asarray out), us:",
              {k: round(v, 2) for k, v in report["runtime_tiny_call_us"].items()})
        print("compile:", report["compile"])
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
