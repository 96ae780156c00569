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
after the first step), and the median time per step: ``ms/step`` with every variant run in
one process, one step of each in turn (so load from elsewhere hits them alike), ``alone``
from the variant's own process. aotc runs on local-task (the
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


class Runner:
    """One variant of one loop: ``compile()``, then ``make_state()`` (on the device, no
    host copy of the state), then ``step()`` as often as wanted (synchronous)."""

    def __init__(self, loop: str, variant: str) -> None:
        self.loop, self.variant = loop, variant
        self.donated = "undonated" not in variant
        self.jax = variant.startswith("jax")
        self.uri = "local-sync" if "local-sync" in variant else "local-task"
        self.state: tuple = ()
        self.rest: tuple = ()
        # Host data is made before any measurement starts.
        self._data = _mlp_data() if loop == "train" else ()
        self.state_bytes = STATE * 4 if loop == "update" else sum(a.nbytes for a in self._data[:2])

    def compile(self) -> None:
        donate = ((0,) if self.loop == "update" else (0, 1)) if self.donated else ()
        if self.jax:
            import jax
            import jax.numpy as jnp

            jax.config.update("jax_enable_x64", False)
            if self.loop == "update":
                fn = jax.jit(lambda x: update_step(jnp, x), donate_argnums=donate)
                self._step = fn.lower(jax.ShapeDtypeStruct((STATE,), jnp.float32)).compile()
                self._fill = jax.jit(lambda: jnp.full((STATE,), 1.0, jnp.float32)).lower().compile()
            else:
                fn = jax.jit(lambda *a: mlp_step(jnp, *a), donate_argnums=donate)
                self._step = fn.lower(*[jax.ShapeDtypeStruct(a.shape, jnp.float32)
                                        for a in self._data]).compile()
            return
        import aotc
        import aotc.numpy as anp

        if self.loop == "update":
            spec = aotc.ShapeDtypeStruct((STATE,), "float32")
            art = aotc.export(lambda x: update_step(anp, x), spec, name="step",
                              donate_argnums=donate)
            self._fill = aotc.export(lambda v: anp.broadcast_to(v, (STATE,)) * 1,
                                     aotc.ShapeDtypeStruct((), "float32"),
                                     name="fill").load(self.uri).fill
        else:
            specs = [aotc.ShapeDtypeStruct(a.shape, "float32") for a in self._data]
            art = aotc.export(lambda *a: mlp_step(anp, *a), *specs, name="step",
                              donate_argnums=donate)
        self._step = art.load(self.uri).step

    def make_state(self) -> None:
        if self.jax:
            import jax

            if self.loop == "update":
                self.state = (self._fill(),)
            else:
                w1, w2, x, y = self._data
                self.state = (jax.device_put(w1), jax.device_put(w2))
                self.rest = (jax.device_put(x), jax.device_put(y))
            jax.block_until_ready(self.state)
            return
        from aotc import runtime

        if self.loop == "update":
            self.state = (self._fill(np.float32(1.0)),)
        else:
            w1, w2, x, y = self._data
            self.state = (runtime.device_put(w1, self.uri), runtime.device_put(w2, self.uri))
            self.rest = (runtime.device_put(x, self.uri), runtime.device_put(y, self.uri))

    def step(self) -> float:
        """One step; returns its time in seconds."""
        t = time.perf_counter()
        out = self._step(*self.state, *self.rest)
        if self.jax:
            import jax

            jax.block_until_ready(out)
        elapsed = time.perf_counter() - t
        self.state = out if isinstance(out, tuple) else (out,)
        return elapsed

    def check(self) -> float:
        return float(np.asarray(self.state[0]).ravel()[0])


def run_variant(loop: str, variant: str, steps: int) -> dict:
    """The memory figures of one variant, run alone in this process."""
    runner = Runner(loop, variant)
    runner.compile()
    rss0 = _status("VmRSS")
    runner.make_state()
    _reset_peak()
    if runner.jax:
        times = [runner.step() for _ in range(steps)]
        return {"state_bytes": runner.state_bytes, "peak_rss": _status("VmHWM") - rss0,
                "peak_in_use": None, "asked_per_step": None, "new_per_step": None,
                "new_visible": False, "alone_ms": statistics.median(times) * 1e3,
                "check": runner.check()}
    from aotc import runtime

    uri = runner.uri
    runtime.reset_peak(uri)
    times, asked, new = [], [], []
    for _ in range(steps):
        before = runtime.memory_stats(uri)
        times.append(runner.step())
        after = runtime.memory_stats(uri)
        asked.append(after.bytes_allocated - before.bytes_allocated)
        new.append(after.bytes_from_system - before.bytes_from_system)
    return {
        "state_bytes": runner.state_bytes, "peak_rss": _status("VmHWM") - rss0,
        "peak_in_use": runtime.memory_stats(uri).peak_bytes_in_use,
        "asked_per_step": statistics.mean(asked[1:]), "new_per_step": statistics.mean(new[1:]),
        "new_visible": uri == "local-sync", "alone_ms": statistics.median(times) * 1e3,
        "check": runner.check(),
    }


def time_interleaved(loop: str, variants: list[str], steps: int) -> dict[str, float]:
    """Median step time of each variant, all in this process, one step of each in turn,
    so load from elsewhere on the machine hits them alike."""
    runners = [Runner(loop, v) for v in variants]
    for r in runners:
        r.compile()
        r.make_state()
        r.step()  # first step (allocations, caches)
    times: dict[str, list[float]] = {r.variant: [] for r in runners}
    for _ in range(steps):
        for r in runners:
            times[r.variant].append(r.step())
    return {v: statistics.median(t) * 1e3 for v, t in times.items()}


# ---- the driver -------------------------------------------------------------------------

def _mib(n) -> str:
    return "-" if n is None else f"{n / 2**20:.1f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--only", nargs="*", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--run", nargs=2, metavar=("LOOP", "VARIANT"), help=argparse.SUPPRESS)
    parser.add_argument("--time", nargs=2, metavar=("LOOP", "VARIANTS"), help=argparse.SUPPRESS)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "memory.json"))
    args = parser.parse_args()
    if args.run:
        print(json.dumps(run_variant(args.run[0], args.run[1], args.steps)))
        return
    if args.time:
        print(json.dumps(time_interleaved(args.time[0], args.time[1].split(","), args.steps)))
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
        timed = [v for v in results[loop] if "no reuse" not in v]
        proc = subprocess.run(
            [sys.executable, __file__, "--time", loop, ",".join(timed), "--steps", str(args.steps)],
            capture_output=True, text=True, env={**os.environ, "JAX_PLATFORMS": "cpu"}, check=False,
        )
        if proc.returncode == 0:
            for variant, ms in json.loads(proc.stdout.strip().splitlines()[-1]).items():
                results[loop][variant]["step_ms"] = ms
        else:
            print(f"{loop}: interleaved timing failed\n{proc.stderr[-2000:]}", file=sys.stderr)
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
    header = (f"{'variant':38s} {'peak RSS':>10s} {'x state':>8s} {'peak in use':>12s} "
              f"{'asked/step':>11s} {'new/step':>10s} {'ms/step':>8s} {'alone':>7s}")
    print(header)
    print("-" * len(header))
    for variant, r in rows.items():
        new = _mib(r["new_per_step"]) if r["new_visible"] else "-"
        step = r.get("step_ms")
        print(f"{variant:38s} {_mib(r['peak_rss']):>10s} {r['peak_rss'] / r['state_bytes']:>8.2f} "
              f"{_mib(r['peak_in_use']):>12s} {_mib(r['asked_per_step']):>11s} {new:>10s} "
              f"{'-' if step is None else f'{step:.2f}':>8s} {r['alone_ms']:>7.2f}")


if __name__ == "__main__":
    main()
