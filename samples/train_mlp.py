"""Training on the device: one SGD-with-momentum step of a small MLP, differentiated by
``aotc.value_and_grad``, exported as one .vmfb and run with the runtime alone.

    python samples/train_mlp.py [OUT.vmfb]     (default: out/train_mlp.vmfb)

The step takes the parameters, the momentum and a batch, and returns the loss and the new
parameters and momentum; parameters and momentum are donated, so the runtime updates
them in place. The script exports the step, saves it, loads the saved file with the
runtime, trains for STEPS steps on a fixed synthetic regression task, and compares every
step's loss with the same training written in numpy with hand-derived gradients. It
exits with status 1 on a mismatch.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import aotc
import aotc.numpy as anp
import aotc.runtime

from _common import output_path, verdict

BATCH, INPUT, HIDDEN, OUTPUT = 32, 16, 64, 4
STEPS, LEARNING_RATE, MOMENTUM = 40, 0.05, 0.9
RTOL = 1e-4


def init(seed: int = 0):
    rng = np.random.default_rng(seed)
    params = {"w1": (rng.standard_normal((INPUT, HIDDEN)) / np.sqrt(INPUT)).astype(np.float32),
              "b1": np.zeros(HIDDEN, np.float32),
              "w2": (rng.standard_normal((HIDDEN, OUTPUT)) / np.sqrt(HIDDEN)).astype(np.float32),
              "b2": np.zeros(OUTPUT, np.float32)}
    x = rng.standard_normal((BATCH, INPUT)).astype(np.float32)
    y = np.sin(x[:, :OUTPUT] * 2).astype(np.float32)  # a smooth target the net can fit
    return params, x, y


def loss(params, x, y):
    h = anp.tanh(x @ params["w1"] + params["b1"])
    return anp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


def step(params, velocity, x, y):
    value, grads = aotc.value_and_grad(loss)(params, x, y)
    velocity = {k: MOMENTUM * velocity[k] + grads[k] for k in params}
    params = {k: params[k] - LEARNING_RATE * velocity[k] for k in params}
    return value, params, velocity


def step_numpy(params, velocity, x, y):
    """The same step with the gradients derived by hand (the reference)."""
    h = np.tanh(x @ params["w1"] + params["b1"])
    err = h @ params["w2"] + params["b2"] - y
    value = np.mean(err ** 2)
    d_out = 2 * err / err.size
    d_h = (d_out @ params["w2"].T) * (1 - h ** 2)
    grads = {"w2": h.T @ d_out, "b2": d_out.sum(0), "w1": x.T @ d_h, "b1": d_h.sum(0)}
    velocity = {k: MOMENTUM * velocity[k] + grads[k] for k in params}
    params = {k: params[k] - LEARNING_RATE * velocity[k] for k in params}
    return value, params, velocity


def main(argv: list[str]) -> int:
    path = output_path(argv, "train_mlp")
    params, x, y = init()
    velocity = {k: np.zeros_like(v) for k, v in params.items()}

    # 1. Differentiate, compile and save (the build machine).
    start = time.perf_counter()
    artifact = aotc.export(step, params, velocity, x, y, donate_argnums=(0, 1))
    artifact.save(path)
    print(f"exported  {path} ({os.path.getsize(path) / 2**10:.0f} KiB, target {artifact.target}) "
          f"in {time.perf_counter() - start:.1f} s")

    # 2. Load the saved file and train (the device: only the runtime is needed).
    module = aotc.runtime.load(path)
    print(f"loaded    {module.functions['step']}")
    p = {k: aotc.runtime.device_put(v) for k, v in params.items()}
    v = {k: aotc.runtime.device_put(a) for k, a in velocity.items()}
    xd, yd = aotc.runtime.device_put(x), aotc.runtime.device_put(y)
    losses = []
    allocations = []
    for _ in range(STEPS):
        before = aotc.runtime.memory_stats().num_allocs
        value, p, v = module.step(p, v, xd, yd)
        allocations.append(aotc.runtime.memory_stats().num_allocs - before)
        losses.append(float(np.asarray(value)))

    # 3. The same training in numpy.
    ref, rp, rv = [], params, velocity
    for _ in range(STEPS):
        value, rp, rv = step_numpy(rp, rv, x, y)
        ref.append(float(value))
    losses, ref = np.array(losses), np.array(ref)
    err = float(np.max(np.abs(losses - ref) / ref))
    print(f"loss      step 1 {losses[0]:.4f} -> step {STEPS} {losses[-1]:.4f} "
          f"(numpy {ref[0]:.4f} -> {ref[-1]:.4f})")
    print(f"max relative |loss - numpy| = {err:.2e} (rtol {RTOL:g})")
    # Parameters and momentum are donated and updated in place: a step allocates only
    # its loss.
    print(f"buffers allocated per step after the first: {max(allocations[1:])} (the loss)")
    params_err = max(float(np.max(np.abs(np.asarray(p[k]) - rp[k]))) for k in params)
    print(f"max |params - numpy| = {params_err:.2e}")
    return verdict(err < RTOL and losses[-1] < losses[0] / 2 and params_err < 1e-3)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
