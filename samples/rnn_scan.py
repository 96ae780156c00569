"""A recurrent network (an Elman RNN) over a sequence with ``aotc.lax.scan``, deployed as
one .vmfb.

    python samples/rnn_scan.py [OUT.vmfb]     (default: out/rnn_scan.vmfb)

Each step reads one time step of the input sequence and updates the hidden state:

    h_t = tanh(x_t @ Wx + h_{t-1} @ Wh + b)        y_t = h_t @ Wy + by

``lax.scan`` runs the cell over the sequence as one loop in the compiled program (an
``scf.for`` whose per-step outputs are written in place into the stacked result), so the
artifact has a fixed sequence length but no Python loop. The weights are captured numpy
arrays, so they become constants inside the artifact. The script exports ``rnn`` for one
batch shape, saves it, loads the saved file with the runtime, runs it and compares the
final state and every step's output with the same network as a plain Python loop in
numpy. It exits with status 1 on a mismatch.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import aotc
import aotc.lax
import aotc.numpy as anp
import aotc.runtime

from _common import output_path, verdict

SEQ, BATCH, INPUT, HIDDEN, OUTPUT = 32, 8, 16, 64, 10
RTOL = ATOL = 1e-4


def init_params(inputs: int, hidden: int, outputs: int, seed: int = 0) -> dict[str, np.ndarray]:
    """float32 weights scaled so that the state neither explodes nor dies out."""
    rng = np.random.default_rng(seed)

    def dense(n_in, n_out):
        return (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)

    return {"wx": dense(inputs, hidden), "wh": dense(hidden, hidden) * np.float32(0.9),
            "b": np.zeros(hidden, np.float32), "wy": dense(hidden, outputs),
            "by": (rng.standard_normal(outputs) * 0.01).astype(np.float32)}


PARAMS = init_params(INPUT, HIDDEN, OUTPUT)


def cell(xp, params, h, x):
    """One step: the new state, and the step's output. ``xp`` is aotc.numpy or numpy."""
    h = xp.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
    return h, h @ params["wy"] + params["by"]


def python_scan(f, init, xs):
    """lax.scan's meaning as a plain Python loop: the reference."""
    carry, ys = init, []
    for x in xs:
        carry, y = f(carry, x)
        ys.append(y)
    return carry, np.stack(ys)


def run(xp, scan, params, h0, xs):
    """The final hidden state and every step's output (time-major: xs[t] is step t)."""
    return scan(lambda h, x: cell(xp, params, h, x), h0, xs)


def rnn(h0, xs):
    """The network as aotc compiles it."""
    return run(anp, aotc.lax.scan, PARAMS, h0, xs)


def rnn_numpy(h0: np.ndarray, xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return run(np, python_scan, PARAMS, h0, xs)


def main(argv: list[str]) -> int:
    path = output_path(argv, "rnn_scan")

    # 1. Compile and save (the build machine).
    start = time.perf_counter()
    artifact = aotc.export(rnn, aotc.ShapeDtypeStruct((BATCH, HIDDEN), "float32"),
                           aotc.ShapeDtypeStruct((SEQ, BATCH, INPUT), "float32"))
    artifact.save(path)
    print(f"exported  {path} ({os.path.getsize(path) / 2**10:.0f} KiB, target {artifact.target}) "
          f"in {time.perf_counter() - start:.1f} s")

    # 2. Load the saved file and run it (the device: only the runtime is needed).
    module = aotc.runtime.load(path)
    print(f"loaded    {module.functions['rnn']}")
    rng = np.random.default_rng(1)
    h0 = rng.standard_normal((BATCH, HIDDEN), dtype=np.float32) * np.float32(0.1)
    xs = rng.standard_normal((SEQ, BATCH, INPUT), dtype=np.float32)
    h, ys = (np.asarray(a) for a in module.rnn(h0, xs))

    # 3. Compare with the Python loop.
    ref_h, ref_ys = rnn_numpy(h0, xs)
    err = max(float(np.max(np.abs(h - ref_h))), float(np.max(np.abs(ys - ref_ys))))
    ok = all(got.shape == want.shape and np.allclose(got, want, rtol=RTOL, atol=ATOL)
             for got, want in ((h, ref_h), (ys, ref_ys)))
    print(f"sequence  {SEQ} steps x batch {BATCH}, hidden {HIDDEN}: final state {h.shape}, "
          f"outputs {ys.shape}")
    print(f"max |aotc - numpy loop| = {err:.2e} (rtol {RTOL:g}, atol {ATOL:g})")
    return verdict(ok)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
