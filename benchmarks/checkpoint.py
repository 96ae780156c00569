"""``checkpoint``: the memory a gradient keeps against the time it recomputes, aotc vs
``jax.checkpoint``.

    python benchmarks/checkpoint.py     # table + results/checkpoint.json + checkpoint.png

``grad`` of an 8-layer tanh MLP (float64, activations [256, 512], weights [512, 512])
with respect to its weights, its layers checkpointed in 0 (none), 1, 2, 4 or 8 blocks.
Per row: the intermediate bytes of one step (``Compiled.memory_analysis()``
``temp_size_in_bytes``: aotc's the peak measured by running it once, JAX's as XLA plans
them) and the footprint, arguments + results + intermediates ("all": the figure that
compares, see train_step.py), the residuals aotc counts (what the backward pass keeps of
the forward one), and the step's time in interleaved blocks (see run.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from float64_math import paired_bars  # noqa: E402
from run import jax, jnp  # noqa: E402
from vmap import _time_pair  # noqa: E402

import aotc  # noqa: E402
import aotc.numpy as anp  # noqa: E402
from aotc.runtime import device_put  # noqa: E402

LAYERS, BATCH, WIDTH = 8, 256, 512
BLOCKS = (0, 1, 2, 4, 8)
MIB = 2.0 ** 20


def loss(lib, checkpoint, blocks: int):
    def block(h, ws):
        for w in ws:
            h = lib.tanh(h @ w)
        return h

    size = LAYERS // blocks if blocks else LAYERS

    def f(ws, x):
        h = x
        for start in range(0, LAYERS, size):
            h = (checkpoint(block) if blocks else block)(h, ws[start:start + size])
        return (h ** 2).sum()
    return f


def _footprint(memory) -> int:
    """Arguments + results + intermediates: the figure that compares (XLA places
    intermediates in the results' buffers before it writes the results; IREE gives
    results buffers of their own)."""
    return (memory.argument_size_in_bytes + memory.output_size_in_bytes
            + memory.temp_size_in_bytes)


def _sync(grads):
    grads[-1].block_until_ready()


def row(blocks: int, ws, x, repeats: int) -> dict:
    fa = aotc.jit(aotc.grad(loss(anp, aotc.checkpoint, blocks)))
    a_args = ([device_put(w) for w in ws], device_put(x))
    memory = fa.lower(*a_args).compile().memory_analysis()
    out = {"workload": f"{blocks} blocks" if blocks else "no checkpoint",
           "aotc_temp_mib": memory.temp_size_in_bytes / MIB,
           "aotc_footprint_mib": _footprint(memory) / MIB,
           "aotc_residual_mib": memory.residual_size_in_bytes / MIB}
    contenders = [("aotc", fa, a_args, _sync)]
    want = None
    if jax is not None:
        with jax.enable_x64(True):
            fj = jax.jit(jax.grad(loss(jnp, jax.checkpoint, blocks)))
            j_args = ([jnp.asarray(w) for w in ws], jnp.asarray(x))
            memory = fj.lower(*j_args).compile().memory_analysis()
            out["jax_temp_mib"] = memory.temp_size_in_bytes / MIB
            out["jax_footprint_mib"] = _footprint(memory) / MIB
            want = [np.asarray(g) for g in fj(*j_args)]
            contenders.append(("jax", fj, j_args, _sync))
            times = _time_pair(contenders, 10, repeats)
    else:
        times = _time_pair(contenders, 10, repeats)
    if want is not None:
        got = [np.asarray(g) for g in fa(*a_args)]
        out["max_rel_error"] = max(float(np.max(np.abs(g - w)) / np.max(np.abs(w)))
                                   for g, w in zip(got, want))
    out.update({f"{k}_ms": v * 1e3 for k, v in times.items()})
    if "jax" in times:
        out["aotc/jax"] = times["aotc"] / times["jax"]
    return out


def plot(rows, path: Path) -> None:
    jax_mib = (("jax.jit", [r["jax_temp_mib"] for r in rows])
               if all("jax_temp_mib" in r for r in rows) else None)
    paired_bars(path, [r["workload"] for r in rows],
                ("aotc", [r["aotc_temp_mib"] for r in rows]), jax_mib,
                "intermediate MiB of one step")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--blocks", type=int, nargs="*", default=list(BLOCKS))
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "checkpoint.json"))
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH) for _ in range(LAYERS)]
    x = rng.standard_normal((BATCH, WIDTH))
    rows = [row(b, ws, x, args.repeats) for b in args.blocks]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "jax": jax.__version__ if jax else None},
                              indent=1))
    plot(rows, out.with_suffix(".png"))
    columns = [("aotc_temp_mib", "aotc MiB", ".1f"), ("jax_temp_mib", "jax MiB", ".1f"),
               ("aotc_footprint_mib", "aotc all", ".1f"), ("jax_footprint_mib", "jax all", ".1f"),
               ("aotc_residual_mib", "residual", ".1f"), ("aotc_ms", "aotc ms", ".2f"),
               ("jax_ms", "jax ms", ".2f"), ("aotc/jax", "aotc/jax", ".2f")]
    print(f"{'checkpoint':<16}" + "".join(f"{title:>10}" for _, title, _ in columns))
    for r in rows:
        print(f"{r['workload']:<16}"
              + "".join(f"{r.get(key, np.nan):>10{spec}}" for key, _, spec in columns))
    print(f"written to {out} and {out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
