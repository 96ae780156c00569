"""Eager calls (aotc.numpy, aotc.random outside a traced function) vs JAX's eager dispatch.

    python benchmarks/eager.py            # both tables + results/eager.json (+ eager.png)
    python benchmarks/eager.py --calls 5000

Two figures:
- **warm op**: the cost of one eager call on a small array once it has run before (the
  same signature), per route of aotc/eager.py (host, direct, compiled), beside JAX's
  eager call of the same function; interleaved blocks, median per call.
- **cold script**: a script of 50 distinct eager ops (parameter initialization and data
  preprocessing, written once against a jax.numpy-like namespace) run in a new process
  with an empty compile cache, for aotc and for JAX (whose compile cache starts empty in
  a new process too): the wall time of the script itself, imports excluded.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import run  # noqa: E402  (run.jax: JAX where installed)


def script(jnp, random, np_=np):
    """50 distinct eager ops: what a training script does before its jitted step."""
    key = random.PRNGKey(0)                                   # 1
    k1, k2, k3, k4 = random.split(key, 4)                     # 2
    sizes = [(784, 256), (256, 128), (128, 10)]
    params = []
    for k, (m, n) in zip((k1, k2, k3), sizes):
        w = random.normal(k, (m, n), dtype=np_.float32) * jnp.sqrt(2.0 / m)  # 3-5, 6, 7
        b = jnp.zeros((n,), jnp.float32)                      # 8
        params.append((w, b))
    x = random.uniform(k4, (64, 784), dtype=np_.float32)      # 9
    labels = jnp.arange(64) % 10                              # 10, 11
    onehot = (labels[:, None] == jnp.arange(10)).astype(jnp.float32)  # 12-15
    mean = x.mean(axis=0)                                     # 16
    std = x.std(axis=0) + 1e-6                                # 17, 18
    xn = (x - mean) / std                                     # 19, 20
    xc = jnp.clip(xn, -3.0, 3.0)                              # 21
    flat = xc.reshape(64, 28, 28)                             # 22
    pooled = flat.max(axis=2)                                 # 23
    scale = jnp.linalg.norm(pooled, axis=1, keepdims=True)    # 24
    normalized = pooled / scale                               # 25
    total = jnp.sum(onehot, axis=0)                           # 26
    logits = xc @ params[0][0]                                # 27
    act = jnp.maximum(logits, 0.0)                            # 28
    soft = jnp.exp(act - act.max(axis=1, keepdims=True))      # 29-31
    probs = soft / soft.sum(axis=1, keepdims=True)            # 32, 33
    pred = jnp.argmax(probs, axis=1)                          # 34
    acc = jnp.mean((pred == labels).astype(jnp.float32))      # 35-37
    t = jnp.linspace(0.0, 1.0, 100)                           # 38
    wave = jnp.sin(2 * np_.pi * 5 * t) + 0.5 * jnp.cos(t)     # 39-44
    cum = jnp.cumsum(wave)                                    # 45
    order = jnp.argsort(wave)                                 # 46
    top = jnp.take(wave, order[-5:])                          # 47, 48
    stacked = jnp.concatenate([top, jnp.ones(3)])             # 49, 50
    both = jnp.where(stacked > 0.5, stacked, 0.0)             # 51
    return [np_.asarray(v) for v in (params[2][0], normalized, total, acc, cum, both)]


_CHILD = """
import sys, time, json
sys.path.insert(0, {bench!r})
import numpy as np
from eager import script
if {lib!r} == "aotc":
    import aotc.numpy as jnp, aotc.random as random
else:
    import jax.numpy as jnp, jax.random as random
script(jnp, random)  # imports and first-use initialization happen in the timed run too
"""


def cold_script_seconds(lib: str) -> float | None:
    """The script's wall time in a fresh process with an empty compile cache (imports not
    included: measured from after them)."""
    if lib == "jax" and run.jax is None:
        return None
    with tempfile.TemporaryDirectory(prefix="aotc-eager-") as cache:
        code = ("import time\nt0 = time.perf_counter()\n"
                + _CHILD.format(bench=str(Path(__file__).parent), lib=lib).replace(
                    "script(jnp, random)  #",
                    "t1 = time.perf_counter()\nscript(jnp, random)\n"
                    "print('SECONDS', time.perf_counter() - t1)  #"))
        env = dict(os.environ, AOTC_CACHE_DIR=cache, JAX_PLATFORMS="cpu")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=env, check=True)
    line = next(x for x in done.stdout.splitlines() if x.startswith("SECONDS"))
    return float(line.split()[1])


def warm_ops(calls: int) -> list[dict]:
    import aotc.lax as alax
    import aotc.nn as ann
    import aotc.numpy as anp
    import aotc.random as arandom

    jnp = run.jax.numpy if run.jax is not None else None
    x = anp.ones(16, np.float32)
    key = arandom.PRNGKey(0)
    cases = {
        "x + 1 (host)": (lambda: x + 1, "lambda: jx + 1"),
        "x[3] (host)": (lambda: x[3], "lambda: jx[3]"),
        "reshape (host)": (lambda: x.reshape(4, 4), "lambda: jx.reshape(4, 4)"),
        "shape (direct)": (lambda: anp.shape(x), "lambda: jnp.shape(jx)"),
        "tanh (host, numpy's)": (lambda: anp.tanh(x), "lambda: jnp.tanh(jx)"),
        "x.sum() (host, numpy's)": (lambda: x.sum(), "lambda: jx.sum()"),
        "nn.relu (compiled)": (lambda: ann.relu(x), "lambda: jax.nn.relu(jx)"),
        "lax.cumsum (compiled)": (lambda: alax.cumsum(x), "lambda: jax.lax.cumsum(jx)"),
        "random.normal (compiled)": (lambda: arandom.normal(key, (16,)),
                                     "lambda: jax.random.normal(jkey, (16,))"),
    }
    env = {}
    if jnp is not None:
        env = {"jnp": jnp, "jax": run.jax, "jx": jnp.ones(16, np.float32),
               "jkey": run.jax.random.PRNGKey(0)}
    rows = []
    for name, (ours, theirs) in cases.items():
        fns = {"aotc": ours}
        if jnp is not None:
            fns["jax"] = eval(theirs, env)  # noqa: S307 - a benchmark's own source text
        times = _interleaved(fns, calls)
        row = {"op": name, "aotc_us": times["aotc"]}
        if "jax" in times:
            row["jax_us"] = times["jax"]
            row["aotc/jax"] = times["aotc"] / times["jax"]
        rows.append(row)
    return rows


def _interleaved(fns: dict, calls: int, blocks: int = 7) -> dict:
    for fn in fns.values():  # first calls compile
        for _ in range(3):
            _block(fn())
    samples = {name: [] for name in fns}
    for _ in range(blocks):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            samples[name].append((time.perf_counter() - start) / calls * 1e6)
    return {name: float(np.median(s)) for name, s in samples.items()}


def _block(value):
    return getattr(value, "block_until_ready", lambda: value)()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "eager.json"))
    args = parser.parse_args(argv)
    warm = warm_ops(args.calls)
    print("warm eager op on float32[16] (us per call, median of interleaved blocks)")
    print(f"{'op':<26} {'aotc us':>9} {'jax us':>9} {'aotc/jax':>9}")
    for r in warm:
        print(f"{r['op']:<26} {r['aotc_us']:>9.1f} {r.get('jax_us', float('nan')):>9.1f} "
              f"{r.get('aotc/jax', float('nan')):>9.2f}")
    cold = {lib: cold_script_seconds(lib) for lib in ("aotc", "jax")}
    print("\nscript of 50 distinct eager ops, new process, empty compile cache")
    for lib, seconds in cold.items():
        if seconds is not None:
            print(f"  {lib:<6} {seconds:6.2f} s")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"warm_us": warm, "cold_script_s": cold}, indent=1))
    _plot(warm, out.with_suffix(".png"))
    return 0


def _plot(rows: list[dict], path: Path) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    names = [r["op"] for r in rows]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ys = np.arange(len(rows))
    ax.barh(ys - 0.2, [r["aotc_us"] for r in rows], 0.4, label="aotc")
    if all("jax_us" in r for r in rows):
        ax.barh(ys + 0.2, [r["jax_us"] for r in rows], 0.4, label="jax")
    ax.set_yticks(ys, names)
    ax.set_xlabel("us per warm eager call")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    sys.exit(main())
