"""One training step (loss, gradients, SGD update): aotc vs jax.jit vs numpy.

    python benchmarks/train_step.py       # table + results/train_step.json + train_step.png

The step of an MLP 784-512-512-10 (ReLU, softmax cross-entropy on one-hot labels) at
batch 64 and 256, and of samples/cnn.py's CNN (conv 3x3 16, max pool, conv 3x3 32, max
pool, dense 10) on 32 28x28 images: ``value_and_grad`` of the loss and an SGD update,
under ``aotc.jit`` and ``jax.jit``; numpy runs the MLP's step with the gradients derived
by hand (the CNN's errors are against JAX). Timed in interleaved blocks (see run.py);
ratios below 1.0 mean aotc is faster.
Memory: the temporary bytes of one step (``Compiled.memory_analysis()``
``temp_size_in_bytes``: aotc's measured by running it once, JAX's as XLA plans them), and
the step's footprint: arguments + results + temporaries. The footprint is the figure to
compare: XLA places temporaries in the results' buffers before the results are written
(its MLP step at batch 64 holds four 128 KiB activations at once, 512 KiB, yet reports
389 KiB of temporaries), IREE gives results buffers of their own.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples"))
import cnn  # noqa: E402
from float64_math import plot as ratio_chart  # noqa: E402
from run import _mlp_params, jax, jnp  # noqa: E402
from vmap import _time_pair  # noqa: E402

import aotc  # noqa: E402
import aotc.lax  # noqa: E402
import aotc.numpy as anp  # noqa: E402
from aotc.runtime import device_put  # noqa: E402

LEARNING_RATE = 0.01


def loss(lib, stop_gradient, params, x, labels):
    h = x
    for w, b in params[:-1]:
        h = lib.maximum(h @ w + b, 0.0)
    w, b = params[-1]
    logits = h @ w + b
    shifted = logits - stop_gradient(lib.max(logits, axis=1, keepdims=True))
    log_probs = shifted - lib.log(lib.sum(lib.exp(shifted), axis=1, keepdims=True))
    return -lib.mean(lib.sum(labels * log_probs, axis=1))


def step(lib, value_and_grad, stop_gradient):
    def train(params, x, labels):
        value, grads = value_and_grad(lambda p: loss(lib, stop_gradient, p, x, labels))(params)
        new = [(w - LEARNING_RATE * gw, b - LEARNING_RATE * gb)
               for (w, b), (gw, gb) in zip(params, grads)]
        return value, new
    return train


def numpy_step(params, x, labels):
    """The same step, gradients by hand (the reference)."""
    acts = [x]
    for w, b in params[:-1]:
        acts.append(np.maximum(acts[-1] @ w + b, 0.0))
    w, b = params[-1]
    logits = acts[-1] @ w + b
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    n = x.shape[0]
    value = -np.mean(np.sum(labels * log_probs, axis=1))
    d = (np.exp(log_probs) - labels) / n
    grads = []
    for i in range(len(params) - 1, -1, -1):
        w, b = params[i]
        grads.append((acts[i].T @ d, d.sum(0)))
        if i:
            d = (d @ w.T) * (acts[i] > 0)
    grads.reverse()
    new = [(w - LEARNING_RATE * gw, b - LEARNING_RATE * gb)
           for (w, b), (gw, gb) in zip(params, grads)]
    return value, new


def _sync(out):
    value, new = out
    for leaf in (value, new[-1][-1]):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()


def _interleaved(contenders, calls: int, repeats: int) -> dict:
    return _time_pair([(name, fn, args, _sync) for name, fn, args in contenders], calls,
                      repeats)


def _max_rel(got, want) -> float:
    got_leaves = [np.asarray(got[0])] + [np.asarray(a) for pair in got[1] for a in pair]
    want_leaves = [np.asarray(want[0])] + [a for pair in want[1] for a in pair]
    return max(float(np.max(np.abs(g - w)) / (np.max(np.abs(w)) + 1e-30))
               for g, w in zip(got_leaves, want_leaves))


def _memory(stats) -> tuple:
    """(temporary bytes, arguments + results + temporaries) of a memory analysis."""
    parts = [getattr(stats, f"{k}_size_in_bytes", None) for k in ("temp", "argument", "output")]
    return parts[0], (None if None in parts else sum(parts))


def compare(name: str, description: str, steps: dict, args: tuple, repeats: int,
            reference=None) -> dict:
    """Times ``steps`` (framework -> (function, its arguments)); errors against
    ``reference`` (numpy's result), else against JAX's."""
    fa, a_args = steps["aotc"]
    row = {"workload": name, "description": description}
    contenders = [("aotc", fa, a_args)]
    if "numpy" in steps:
        contenders.append(("numpy",) + steps["numpy"])
    row["aotc_temp_bytes"], row["aotc_footprint_bytes"] = _memory(
        fa.lower(*a_args).compile().memory_analysis())
    if "jax" in steps:
        fj, j_args = steps["jax"]
        contenders.append(("jax", fj, j_args))
        row["jax_temp_bytes"], row["jax_footprint_bytes"] = _memory(
            fj.lower(*j_args).compile().memory_analysis())
        if reference is None:
            reference = jax.tree_util.tree_map(np.asarray, fj(*j_args))
        else:
            row["jax_error"] = _max_rel(fj(*j_args), reference)
    if reference is not None:
        row["aotc_error"] = _max_rel(fa(*a_args), reference)
    med = _interleaved(contenders, 20, repeats)
    row.update({f"{k}_us": v * 1e6 for k, v in med.items()})
    if "numpy" in med:
        row["aotc/numpy"] = med["aotc"] / med["numpy"]
    if "jax" in med:
        row["aotc/jax"] = med["aotc"] / med["jax"]
    return row


def _device(params, *arrays):
    return ([tuple(device_put(a) for a in pair) for pair in params],
            *(device_put(a) for a in arrays))


def _jax_arrays(params, *arrays):
    return ([tuple(jnp.asarray(a) for a in pair) for pair in params],
            *(jnp.asarray(a) for a in arrays))


def run_batch(batch: int, repeats: int) -> dict:
    params = [tuple(pair) for pair in _mlp_params()]
    rng = np.random.default_rng(1)
    x = rng.standard_normal((batch, 784), np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
    steps = {"aotc": (aotc.jit(step(anp, aotc.value_and_grad, aotc.lax.stop_gradient)),
                      _device(params, x, labels)),
             "numpy": (numpy_step, (params, x, labels))}
    if jax is not None:
        steps["jax"] = (jax.jit(step(jnp, jax.value_and_grad, jax.lax.stop_gradient)),
                        _jax_arrays(params, x, labels))
    return compare(f"mlp_step{batch}", f"MLP 784-512-512-10 training step, batch {batch}",
                   steps, (), repeats, reference=numpy_step(params, x, labels))


def cnn_step(layers, value_and_grad, log):
    def train(params, x, labels):
        def loss(p):
            probs = cnn.forward(layers, p, x)
            return -(log(probs) * labels).sum() / x.shape[0]
        value, grads = value_and_grad(loss)(params)
        return value, [(w - LEARNING_RATE * gw, b - LEARNING_RATE * gb)
                       for (w, b), (gw, gb) in zip(params, grads)]
    return train


def run_cnn(repeats: int) -> dict | None:
    if jax is None:
        return None
    params = cnn.init_params()
    rng = np.random.default_rng(2)
    x = rng.standard_normal((cnn.BATCH, *cnn.IMAGE), np.float32)
    labels = np.eye(cnn.CLASSES, dtype=np.float32)[rng.integers(0, cnn.CLASSES, cnn.BATCH)]
    jax_layers = cnn.Layers(
        conv=lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                       dimension_numbers=cnn.NHWC),
        relu=jax.nn.relu,
        max_pool=lambda x: jax.lax.reduce_window(x, -np.inf, jax.lax.max, (1, 2, 2, 1),
                                                 (1, 2, 2, 1), "VALID"),
        dense=lambda x, w, b: x @ w + b, softmax=jax.nn.softmax)
    steps = {"aotc": (aotc.jit(cnn_step(cnn.AOTC, aotc.value_and_grad, anp.log)),
                      _device(params, x, labels)),
             "jax": (jax.jit(cnn_step(jax_layers, jax.value_and_grad, jnp.log)),
                     _jax_arrays(params, x, labels))}
    return compare("cnn_step", "CNN conv16-pool-conv32-pool-dense10 step, 32 images", steps,
                   (), repeats)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=int, nargs="*", default=[64, 256])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--no-cnn", action="store_true")
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "train_step.json"))
    args = p.parse_args(argv)
    rows = [run_batch(b, args.repeats) for b in args.batch]
    if not args.no_cnn:
        row = run_cnn(args.repeats)
        rows += [row] if row else []
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "jax": jax.__version__ if jax else None,
                               "numpy": np.__version__, "aotc": aotc.__version__}, indent=2))
    ratio_chart(rows, out.with_suffix(".png"))
    print(f"{'workload':<14}{'aotc us':>10}{'numpy us':>10}{'jax us':>10}{'/numpy':>8}"
          f"{'/jax':>7}{'temp KiB aotc/jax':>19}{'footprint aotc/jax':>20}  errors (aotc, jax)")
    for r in rows:
        kib = [(r.get(k) or 0) / 1024 for k in ("aotc_temp_bytes", "jax_temp_bytes")]
        temps = f"{kib[0]:.0f}/{kib[1]:.0f}"
        nan = float("nan")
        footprint = (r.get("aotc_footprint_bytes") or nan) / (r.get("jax_footprint_bytes") or nan)
        print(f"{r['workload']:<14}{r['aotc_us']:>10.0f}{r.get('numpy_us', nan):>10.0f}"
              f"{r.get('jax_us', nan):>10.0f}{r.get('aotc/numpy', nan):>8.2f}"
              f"{r.get('aotc/jax', nan):>7.2f}{temps:>19}{footprint:>20.3f}  "
              f"{r.get('aotc_error', nan):.1e}, "
              f"{r.get('jax_error', nan):.1e}")
    print(f"written to {out} and {out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
