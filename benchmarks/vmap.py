"""aotc.vmap of a per-example MLP against the alternatives, side by side in one process.

    python benchmarks/vmap.py                  # table + benchmarks/results/vmap.json
    python benchmarks/vmap.py --repeats 5 --batch 256

The network is the 784-512-512-10 MLP of benchmarks/run.py, weights passed as
(device-resident) arguments. Comparisons, each timed in interleaved blocks (A, B, A,
B, ...) as in run.py, the figure being the median over blocks of per-call medians:

  vmap_vs_batched   jit(vmap(per-example MLP)) vs the MLP written for batches (target <= 1.1)
  vmap_vs_loop      the same vs a Python loop of a jitted per-example call (target >= 20x faster)
  vmap_vs_jax       the same vs jax.jit(jax.vmap(per-example MLP)) (target <= 1.0)
  dynamic_vs_static an exported vmap with a None batch dim vs one with batch 64, both
                    called with 64 examples (target <= 1.1)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from run import _mlp, _mlp_params, _per_call, _sync_aotc, jax, jnp, warm_up  # noqa: E402

import aotc  # noqa: E402
import aotc.numpy as anp  # noqa: E402
from aotc.runtime import device_put  # noqa: E402

PARAM_AXES = (None,) * 6  # the six weights and biases are shared by every example


def _per_example(lib):
    """The MLP for one example: x is float32[784]."""
    return lambda x, *params: _mlp(lib, x, *params)


def _time_pair(contenders, calls: int, repeats: int) -> dict:
    """Median per-call seconds of each (name, fn, args, sync), in interleaved blocks."""
    times = {name: [] for name, *_ in contenders}
    for _ in range(repeats):
        for name, fn, args, sync in contenders:
            time.sleep(0.2)  # let the previous contender's worker threads go idle
            warm_up(fn, args, max(1, calls // 10), sync)
            times[name].append(statistics.median(
                [_per_call(fn, args, max(1, calls // 5), sync) for _ in range(5)]))
    return {k: statistics.median(v) for k, v in times.items()}


def _rel_error(got, want) -> float:
    got = np.asarray(got)
    return float(np.max(np.abs(got - want)) / (np.max(np.abs(want)) + 1e-30))


def _python_loop(f1):
    def loop(xs, *params):
        return [f1(x, *params) for x in xs]
    return loop


def _sync_last(outs):
    outs[-1].block_until_ready()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "vmap.json"))
    args = p.parse_args(argv)

    params = [a for pair in _mlp_params() for a in pair]
    x = np.random.default_rng(1).standard_normal((args.batch, 784), np.float32)
    want = _mlp(np, x, *params)
    d_params = [device_put(a) for a in params]
    d_x = device_put(x)

    vmapped = aotc.jit(aotc.vmap(_per_example(anp), in_axes=(0, *PARAM_AXES)))
    batched = aotc.jit(lambda *a: _mlp(anp, *a))
    per_example = aotc.jit(_per_example(anp))
    loop = _python_loop(per_example)
    errors = {"vmap": _rel_error(vmapped(d_x, *d_params), want),
              "batched": _rel_error(batched(d_x, *d_params), want),
              "loop": _rel_error(np.stack([np.asarray(o) for o in loop(x, *d_params)]), want)}
    calls = 20
    rows = {}
    med = _time_pair([("vmap", vmapped, (d_x, *d_params), _sync_aotc),
                      ("batched", batched, (d_x, *d_params), _sync_aotc)], calls, args.repeats)
    rows["vmap_vs_batched"] = {**{f"{k}_us": v * 1e6 for k, v in med.items()},
                               "ratio": med["vmap"] / med["batched"], "target": "<= 1.1"}
    # The loop indexes a host array (one example per call), as a Python loop would.
    med = _time_pair([("vmap", vmapped, (d_x, *d_params), _sync_aotc),
                      ("loop", loop, (x, *d_params), _sync_last)], 10, args.repeats)
    rows["vmap_vs_loop"] = {**{f"{k}_us": v * 1e6 for k, v in med.items()},
                            "speedup": med["loop"] / med["vmap"], "target": ">= 20"}
    if jax is not None:
        fj = jax.jit(jax.vmap(_per_example(jnp), in_axes=(0, *PARAM_AXES)))
        j_args = tuple(jnp.asarray(a) for a in (x, *params))
        errors["jax"] = _rel_error(fj(*j_args), want)
        med = _time_pair([("vmap", vmapped, (d_x, *d_params), _sync_aotc),
                          ("jax", fj, j_args, lambda o: o.block_until_ready())],
                         calls, args.repeats)
        rows["vmap_vs_jax"] = {**{f"{k}_us": v * 1e6 for k, v in med.items()},
                               "ratio": med["vmap"] / med["jax"], "target": "<= 1.0"}

    n = 64
    specs = [aotc.ShapeDtypeStruct(a.shape, a.dtype) for a in params]
    fns = {}
    for name, batch_dim in (("dynamic", None), ("static", n)):
        art = aotc.export(aotc.vmap(_per_example(anp), in_axes=(0, *PARAM_AXES)),
                          aotc.ShapeDtypeStruct((batch_dim, 784), "float32"), *specs, name="mlp")
        fns[name] = art.load("local-task")["mlp"]
    x64 = device_put(x[:n])
    for name, fn in fns.items():
        errors[name] = _rel_error(fn(x64, *d_params), want[:n])
    med = _time_pair([(name, fn, (x64, *d_params), _sync_aotc) for name, fn in fns.items()],
                     calls, args.repeats)
    rows["dynamic_vs_static"] = {**{f"{k}_us": v * 1e6 for k, v in med.items()},
                                 "ratio": med["dynamic"] / med["static"], "target": "<= 1.1"}

    report = {"batch": args.batch, "rows": rows, "max_rel_error": errors,
              "jax": jax.__version__ if jax else None, "numpy": np.__version__,
              "aotc": aotc.__version__}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2))
    for name, row in rows.items():
        figures = ", ".join(f"{k} {v:.1f}" if isinstance(v, float) and k.endswith("_us") else
                            f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                            for k, v in row.items())
        print(f"{name:<18} {figures}")
    print("max rel. error:", {k: f"{v:.1e}" for k, v in errors.items()})
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
