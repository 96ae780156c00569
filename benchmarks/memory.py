"""Memory of state updates: donated vs undonated aotc vs ``jax.jit(donate_argnums=...)``.

    python benchmarks/memory.py                     # table + benchmarks/results/memory.json
    python benchmarks/memory.py --steps 20 --only update

Two loops, each run for every variant in a fresh process (so one variant's cached
buffers never serve another):

* ``update``: 100 steps of ``x = 0.999 * x + 0.001`` on a 64 MiB float32 state;
* ``train``: 100 SGD steps of a 2-layer tanh MLP (512-1024-512, batch 256) whose
  parameters are the state (gradients written out by hand, the same in aotc and JAX).

Per variant: the process's peak resident memory during the loop above what it held
before the state was made (Linux ``VmHWM``, reset just before the loop; for the
``update`` loop, divided by the state size), aotc's own figures (``memory_stats``: peak
bytes in use, bytes asked for and bytes taken from the system per step, steady state
after the first step), and the median time per step. aotc runs on local-task (the
driver it picks for this much work) and on local-sync (whose allocator statistics see
every allocation, so ``new/step`` is exact there), once more there with reuse off
(``AOTC_REUSE=0``) to show what the caching allocator saves. JAX reports no memory statistics on
CPU: its rows have the process figures only. JAX is optional (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

STATE = 16 << 20  # float32 elements: 64 MiB
MLP = (512, 1024, 512, 256)  # inputs, hidden, outputs, batch
LR = 0.01

VARIANTS = {
    "update": ["aotc donated (local-task)", "aotc undonated (local-task)",
               "aotc donated (local-sync)", "aotc undonated (local-sync)",
               "aotc undonated, no reuse (local-sync)", "jax donated", "jax undonated"],
    "train": ["aotc donated", "aotc undonated", "jax donated", "jax undonated"],
}


# ---- memory of this process -------------------------------------------------------------

def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current resident size
        return True
    except OSError:
        return False


# ---- the workloads ----------------------------------------------------------------------

def update_step(lib, x):
    return 0.999 * x + 0.001


def mlp_step(lib, w1, w2, x, y):
    h = lib.tanh(x @ w1)
    d = h @ w2 - y
    g2 = h.T @ d
    g1 = x.T @ ((d @ w2.T) * (1 - h * h))
    return w1 - LR * g1, w2 - LR * g2


def _mlp_data():
    r = np.random.default_rng(0)
    n_in, n_hidden, n_out, batch = MLP
    w1 = (r.standard_normal((n_in, n_hidden)) / np.sqrt(n_in)).astype(np.float32)
    w2 = (r.standard_normal((n_hidden, n_out)) / np.sqrt(n_hidden)).astype(np.float32)
    x = r.standard_normal((batch, n_in)).astype(np.float32)
    y = r.standard_normal((batch, n_out)).astype(np.float32)
    return w1, w2, x, y


def run_variant(loop: str, variant: str, steps: int) -> dict:
    """Runs one variant in this process and returns its figures."""
    donated = "undonated" not in variant
    if variant.startswith("jax"):
        return _run_jax(loop, donated, steps)
    uri = "local-sync" if "local-sync" in variant else "local-task"
    return _run_aotc(loop, donated, steps, uri)


def _run_aotc(loop: str, donated: bool, steps: int, uri: str) -> dict:
    import aotc
    import aotc.numpy as anp
    from aotc import runtime

    donate = (0,) if loop == "update" else (0, 1)
    if loop == "update":
        spec = aotc.ShapeDtypeStruct((STATE,), "float32")
        art = aotc.export(lambda x: update_step(anp, x), spec, name="step",
                          donate_argnums=donate if donated else ())
        fill = aotc.export(lambda v: anp.broadcast_to(v, (STATE,)) * 1,
                           aotc.ShapeDtypeStruct((), "float32"), name="fill")
    else:
        w1, w2, x, y = _mlp_data()
        specs = [aotc.ShapeDtypeStruct(a.shape, "float32") for a in (w1, w2, x, y)]
        art = aotc.export(lambda *a: mlp_step(anp, *a), *specs, name="step",
                          donate_argnums=donate if donated else ())
    step = art.load(uri).step
    rss0 = _status("VmRSS")
    if loop == "update":
        state = (fill.load(uri).fill(np.float32(1.0)),)  # made on the device: no host copy
        rest: tuple = ()
        state_bytes = STATE * 4
    else:
        state = tuple(runtime.device_put(a, uri) for a in (w1, w2))
        rest = tuple(runtime.device_put(a, uri) for a in (x, y))
        state_bytes = (w1.nbytes + w2.nbytes)
    _reset_peak()
    runtime.reset_peak(uri)
    times, asked, new = [], [], []
    for _ in range(steps):
        before = runtime.memory_stats(uri)
        t = time.perf_counter()
        out = step(*state, *rest)
        times.append(time.perf_counter() - t)
        state = out if isinstance(out, tuple) else (out,)
        after = runtime.memory_stats(uri)
        asked.append(after.bytes_allocated - before.bytes_allocated)
        new.append(after.bytes_from_system - before.bytes_from_system)
    peak_rss = _status("VmHWM") - rss0
    stats = runtime.memory_stats(uri)
    check = float(np.asarray(state[0]).ravel()[0])
    return {
        "state_bytes": state_bytes, "peak_rss": peak_rss,
        "peak_in_use": stats.peak_bytes_in_use,
        "asked_per_step": statistics.mean(asked[1:]), "new_per_step": statistics.mean(new[1:]),
        "new_visible": uri == "local-sync", "step_ms": statistics.median(times) * 1e3,
        "check": check,
    }


def _run_jax(loop: str, donated: bool, steps: int) -> dict:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", False)
    donate = ((0,) if loop == "update" else (0, 1)) if donated else ()
    if loop == "update":
        step = jax.jit(lambda x: update_step(jnp, x), donate_argnums=donate)
        spec = jax.ShapeDtypeStruct((STATE,), jnp.float32)
        step = step.lower(spec).compile()
        fill = jax.jit(lambda: jnp.full((STATE,), 1.0, jnp.float32))
        fill.lower().compile()
        rss0 = _status("VmRSS")
        state = (fill(),)
        rest: tuple = ()
        state_bytes = STATE * 4
    else:
        w1, w2, x, y = _mlp_data()
        step = jax.jit(lambda *a: mlp_step(jnp, *a), donate_argnums=donate)
        step = step.lower(*[jax.ShapeDtypeStruct(a.shape, jnp.float32) for a in (w1, w2, x, y)]).compile()
        rss0 = _status("VmRSS")
        state = tuple(jax.device_put(a) for a in (w1, w2))
        rest = tuple(jax.device_put(a) for a in (x, y))
        state_bytes = w1.nbytes + w2.nbytes
    jax.block_until_ready(state)
    _reset_peak()
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        out = step(*state, *rest)
        jax.block_until_ready(out)
        times.append(time.perf_counter() - t)
        state = out if isinstance(out, tuple) else (out,)
    peak_rss = _status("VmHWM") - rss0
    check = float(np.asarray(state[0]).ravel()[0])
    return {"state_bytes": state_bytes, "peak_rss": peak_rss, "peak_in_use": None,
            "asked_per_step": None, "new_per_step": None, "new_visible": False,
            "step_ms": statistics.median(times) * 1e3, "check": check}


# ---- the driver -------------------------------------------------------------------------

def _mib(n) -> str:
    return "-" if n is None else f"{n / 2**20:.1f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--only", nargs="*", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--run", nargs=2, metavar=("LOOP", "VARIANT"), help=argparse.SUPPRESS)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "memory.json"))
    args = parser.parse_args()
    if args.run:
        print(json.dumps(run_variant(args.run[0], args.run[1], args.steps)))
        return

    try:
        import jax  # noqa: F401
        have_jax = True
    except ImportError:
        have_jax = False
    results: dict = {}
    for loop in args.only:
        results[loop] = {}
        for variant in VARIANTS[loop]:
            if variant.startswith("jax") and not have_jax:
                continue
            env = {**os.environ, "JAX_PLATFORMS": "cpu"}
            if "no reuse" in variant:
                env["AOTC_REUSE"] = "0"
            proc = subprocess.run(
                [sys.executable, __file__, "--run", loop, variant, "--steps", str(args.steps)],
                capture_output=True, text=True, env=env, check=False,
            )
            if proc.returncode != 0:
                print(f"{loop} / {variant}: failed\n{proc.stderr[-2000:]}", file=sys.stderr)
                continue
            results[loop][variant] = json.loads(proc.stdout.strip().splitlines()[-1])
        _table(loop, results[loop], args.steps)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"steps": args.steps, "results": results}, f, indent=2)
    print(f"\nwritten to {args.out}")


def _table(loop: str, rows: dict, steps: int) -> None:
    if not rows:
        return
    state = next(iter(rows.values()))["state_bytes"]
    title = (f"{steps}-step update loop, {_mib(state)} state" if loop == "update" else
             f"{steps}-step MLP training loop {MLP[0]}-{MLP[1]}-{MLP[2]}, batch {MLP[3]}, "
             f"{_mib(state)} of parameters")
    print(f"\n{title}")
    header = (f"{'variant':30s} {'peak RSS':>10s} {'x state':>8s} {'peak in use':>12s} "
              f"{'asked/step':>11s} {'new/step':>10s} {'ms/step':>8s}")
    print(header)
    print("-" * len(header))
    for variant, r in rows.items():
        new = _mib(r["new_per_step"]) if r["new_visible"] else "-"
        print(f"{variant:30s} {_mib(r['peak_rss']):>10s} {r['peak_rss'] / r['state_bytes']:>8.2f} "
              f"{_mib(r['peak_in_use']):>12s} {_mib(r['asked_per_step']):>11s} {new:>10s} "
              f"{r['step_ms']:>8.2f}")


if __name__ == "__main__":
    main()
