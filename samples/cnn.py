"""A small convolutional image classifier compiled ahead of time, deployed as one .vmfb.

    python samples/cnn.py [OUT.vmfb]          (default: out/cnn.vmfb)

28x28x1 images -> conv 3x3, 16 -> relu -> max pool 2x2 -> conv 3x3, 32 -> relu ->
max pool 2x2 -> dense 10 -> softmax, channel-last (NHWC) with fixed random weights. The
weights are captured numpy arrays, so they become constants inside the artifact. The
script exports ``predict`` for a batch of 32 images, saves it, loads the saved file with
the runtime, runs it and compares the results with the same network in plain numpy. It
exits with status 1 on a mismatch.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Callable, NamedTuple

import numpy as np

import aotc
import aotc.lax
import aotc.nn
import aotc.numpy as anp
import aotc.runtime

from _common import output_path, print_classes, print_probs_error, verdict

IMAGE = (28, 28, 1)
CONV_FEATURES = (16, 32)
CLASSES = 10
BATCH = 32
RTOL = ATOL = 1e-4
NHWC = ("NHWC", "HWIO", "NHWC")


def init_params(seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """He-initialised float32 kernels (HWIO) and dense weights, small biases."""
    rng = np.random.default_rng(seed)
    params, channels = [], IMAGE[-1]
    for features in CONV_FEATURES:
        w = rng.standard_normal((3, 3, channels, features)) * np.sqrt(2.0 / (9 * channels))
        params.append((w.astype(np.float32),
                       (rng.standard_normal(features) * 0.01).astype(np.float32)))
        channels = features
    positions = (IMAGE[0] // 4) * (IMAGE[1] // 4)
    w = rng.standard_normal((positions, channels, CLASSES)) * np.sqrt(2.0 / (positions * channels))
    # relu features are positive, with one mean per channel: weights centred over the
    # positions of each channel favour no class for every image.
    w = (w - w.mean(axis=0)).reshape(positions * channels, CLASSES)
    params.append((w.astype(np.float32), (rng.standard_normal(CLASSES) * 0.01).astype(np.float32)))
    return params


PARAMS = init_params()


class Layers(NamedTuple):
    """The network's building blocks for one array library."""

    conv: Callable      # (x NHWC, w HWIO) -> 'SAME' 3x3 convolution, stride 1
    relu: Callable
    max_pool: Callable  # 2x2 windows, stride 2
    dense: Callable     # (x, w, b) -> x @ w + b
    softmax: Callable   # over the last axis


def forward(layers: Layers, params, x):
    """Class probabilities for a batch of NHWC images; one definition for every library."""
    (w1, b1), (w2, b2), (w3, b3) = params
    h = layers.max_pool(layers.relu(layers.conv(x, w1) + b1))
    h = layers.max_pool(layers.relu(layers.conv(h, w2) + b2))
    return layers.softmax(layers.dense(h.reshape(h.shape[0], -1), w3, b3))


AOTC = Layers(
    conv=lambda x, w: aotc.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=NHWC),
    relu=aotc.nn.relu,
    max_pool=lambda x: aotc.nn.max_pool(x, (2, 2), strides=(2, 2)),
    dense=aotc.nn.dense,
    softmax=aotc.nn.softmax,
)


def _numpy_conv(x, w):
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))  # n h w c i j
    return np.einsum("nhwcij,ijco->nhwo", windows, w, optimize=True)


def _numpy_max_pool(x):
    n, h, w, c = x.shape
    return x[:, : h // 2 * 2, : w // 2 * 2].reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


def _numpy_softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


NUMPY = Layers(conv=_numpy_conv, relu=lambda x: np.maximum(x, 0), max_pool=_numpy_max_pool,
               dense=lambda x, w, b: x @ w + b, softmax=_numpy_softmax)


def predict(x):
    """The network as aotc compiles it: probabilities and predicted classes."""
    probs = forward(AOTC, PARAMS, x)
    return probs, anp.argmax(probs, axis=1)


def predict_numpy(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same network in plain numpy: the reference."""
    probs = forward(NUMPY, PARAMS, x)
    return probs, np.argmax(probs, axis=1)


def main(argv: list[str]) -> int:
    path = output_path(argv, "cnn")

    # 1. Compile and save (the build machine).
    start = time.perf_counter()
    artifact = aotc.export(predict, aotc.ShapeDtypeStruct((BATCH, *IMAGE), "float32"))
    artifact.save(path)
    print(f"exported  {path} ({os.path.getsize(path) / 2**10:.0f} KiB, target "
          f"{artifact.target}) in {time.perf_counter() - start:.1f} s")

    # 2. Load the saved file and run it (the device: only the runtime is needed).
    module = aotc.runtime.load(path)
    print(f"loaded    {module.functions['predict']}")
    x = np.random.default_rng(1).standard_normal((BATCH, *IMAGE), dtype=np.float32)
    probs, classes = (np.asarray(r) for r in module.predict(x))

    # 3. Compare with numpy.
    ref_probs, ref_classes = predict_numpy(x)
    err = float(np.max(np.abs(probs - ref_probs)))
    probs_ok = np.allclose(probs, ref_probs, rtol=RTOL, atol=ATOL)
    classes_ok = classes.shape == ref_classes.shape and bool(np.all(classes == ref_classes))
    print_classes(BATCH, classes, ref_classes)
    print_probs_error(err, RTOL, ATOL, f"classes {'identical' if classes_ok else 'differ'}")
    return verdict(probs_ok and classes_ok)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
