"""An MLP classifier (784-512-512-10) compiled ahead of time, deployed as one .vmfb.

    python samples/mlp.py [OUT.vmfb]          (default: out/mlp.vmfb)

The weights are numpy arrays captured from the enclosing scope, so they become
constants inside the artifact: the .vmfb alone is the deployable model. The script
exports ``predict`` for a batch of 64 images, saves it, loads the saved file with the
runtime (as a device would, without the compiler), runs it on a batch and compares the
results with the same network in plain numpy. It exits with status 1 on a mismatch.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import aotc
import aotc.numpy as anp
import aotc.runtime

from _common import output_path, print_classes, print_probs_error, verdict

LAYERS = (784, 512, 512, 10)
BATCH = 64
RTOL = ATOL = 1e-4


def init_params(seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """He-initialised float32 weights and small biases, deterministic for ``seed``."""
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(LAYERS[:-1], LAYERS[1:]):
        w = rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in)
        b = rng.standard_normal(fan_out) * 0.01
        params.append((w.astype(np.float32), b.astype(np.float32)))
    return params


PARAMS = init_params()


def forward(xp, x):
    """Class probabilities (softmax) and predicted classes for a batch of images.

    ``xp`` is the array module: ``aotc.numpy`` to compile it, ``numpy`` for the reference.
    One definition serves both because aotc.numpy has numpy's names and semantics.
    """
    (w1, b1), (w2, b2), (w3, b3) = PARAMS
    h = xp.maximum(x @ w1 + b1, 0.0)
    h = xp.maximum(h @ w2 + b2, 0.0)
    logits = h @ w3 + b3
    z = logits - xp.max(logits, axis=1, keepdims=True)
    e = xp.exp(z)
    probs = e / xp.sum(e, axis=1, keepdims=True)
    # softmax keeps the order of the logits: their argmax is the predicted class.
    return probs, xp.argmax(logits, axis=1)


def predict(x):
    """The network as aotc compiles it."""
    return forward(anp, x)


def predict_numpy(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same network in plain numpy: the reference."""
    return forward(np, x)


def main(argv: list[str]) -> int:
    path = output_path(argv, "mlp")

    # 1. Compile and save (the build machine).
    start = time.perf_counter()
    artifact = aotc.export(predict, aotc.ShapeDtypeStruct((BATCH, LAYERS[0]), "float32"))
    artifact.save(path)
    compile_s = time.perf_counter() - start
    print(f"exported  {path} ({os.path.getsize(path) / 2**20:.2f} MiB, target "
          f"{artifact.target}) in {compile_s:.1f} s")

    # 2. Load the saved file and run it (the device: only the runtime is needed).
    module = aotc.runtime.load(path)
    print(f"loaded    {module.functions['predict']}")
    x = np.random.default_rng(1).standard_normal((BATCH, LAYERS[0]), dtype=np.float32)
    probs, classes = module.predict(x)
    probs, classes = np.asarray(probs), np.asarray(classes)

    # 3. Compare with numpy.
    ref_probs, ref_classes = predict_numpy(x)
    err = float(np.max(np.abs(probs - ref_probs)))
    probs_ok = np.allclose(probs, ref_probs, rtol=RTOL, atol=ATOL)
    # A class may differ only where numpy's top two probabilities tie within tolerance.
    top2 = np.sort(ref_probs, axis=1)[:, -2:]
    near_tie = (top2[:, 1] - top2[:, 0]) <= ATOL
    class_diff = classes != ref_classes
    classes_ok = classes.shape == ref_classes.shape and bool(np.all(~class_diff | near_tie))

    print_classes(BATCH, classes, ref_classes)
    print_probs_error(err, RTOL, ATOL, f"{int(class_diff.sum())} of {BATCH} classes differ")
    return verdict(probs_ok and classes_ok)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
