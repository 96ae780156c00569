"""The programs compiled for every target: the MLP sample and a small set of functions
over other dtypes, with their inputs and numpy references."""

from __future__ import annotations

import io
import struct
import sys
import zipfile
from pathlib import Path

import numpy as np

import aotc.numpy as anp

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
sys.path.insert(0, str(SAMPLES))
import mlp  # noqa: E402  (samples/mlp.py: the model users deploy)
import train_mlp  # noqa: E402, F401  (samples/train_mlp.py: a training step that ships)

sys.path.remove(str(SAMPLES))

MLP_INPUT = np.random.default_rng(1).standard_normal((mlp.BATCH, mlp.LAYERS[0]), dtype=np.float32)
RTOL = ATOL = 1e-4


def mlp_spec():
    import aotc

    return aotc.ShapeDtypeStruct((mlp.BATCH, mlp.LAYERS[0]), "float32")


def check_mlp(probs, classes) -> None:
    """Asserts results of the MLP on ``MLP_INPUT`` match numpy (classes may differ only
    where numpy's top two probabilities tie within the tolerance)."""
    ref_probs, ref_classes = mlp.predict_numpy(MLP_INPUT)
    probs, classes = np.asarray(probs), np.asarray(classes)
    np.testing.assert_allclose(probs, ref_probs, rtol=RTOL, atol=ATOL)
    top2 = np.sort(ref_probs, axis=1)[:, -2:]
    tie = (top2[:, 1] - top2[:, 0]) <= ATOL
    assert classes.dtype == np.int64 and classes.shape == ref_classes.shape
    assert np.all((classes == ref_classes) | tie)


# ---- small functions over other dtypes (32-bit ones run on the Vulkan baseline too) ----

def scale_shift(x, n):
    """float32 elementwise math and a reduction, int32 arithmetic numpy-exactly."""
    y = anp.tanh(x) * 2.0 + anp.exp(-anp.abs(x))
    m = (n * 3 + 7) // 2 - n % 5
    return y, anp.sum(y, axis=1), m, anp.where(n > 0, n, -n)


def clip_argmax(x):
    """Comparisons, bool results and an int64 argmax."""
    c = anp.clip(x, -0.5, 0.5)
    return c, anp.argmax(x, axis=0), x > 0


def wide(x):
    """float64 math and int64 sums (not on targets without float64)."""
    x64 = x.astype(anp.float64)
    return anp.tanh(x64) * anp.exp(x64 / 4), anp.sum(anp.arange(12, dtype=anp.int64) * 3)


X = np.linspace(-2, 2, 8 * 16, dtype=np.float32).reshape(8, 16)
N = np.arange(-12, 12, 3, dtype=np.int32)

OPS_32 = {"scale_shift": (scale_shift, X, N), "clip_argmax": (clip_argmax, X)}
OPS_ALL = {**OPS_32, "wide": (wide, X)}


def numpy_reference(name: str, *args):
    """The same functions on numpy arrays (aotc.numpy follows numpy's semantics)."""
    x = args[0]
    if name == "scale_shift":
        n = args[1]
        y = np.tanh(x) * np.float32(2.0) + np.exp(-np.abs(x))
        return y, np.sum(y, axis=1), (n * 3 + 7) // 2 - n % 5, np.where(n > 0, n, -n)
    if name == "clip_argmax":
        return np.clip(x, -0.5, 0.5), np.argmax(x, axis=0), x > 0
    if name == "wide":
        x64 = x.astype(np.float64)
        return np.tanh(x64) * np.exp(x64 / 4), np.sum(np.arange(12, dtype=np.int64) * 3)
    raise KeyError(name)


def check_ops(module, names) -> None:
    """Runs every function of an ops artifact and compares it with numpy."""
    table = OPS_ALL
    for name in names:
        _, *args = table[name]
        got = module[name](*args)
        got = got if isinstance(got, (tuple, list)) else (got,)
        for g, r in zip(got, numpy_reference(name, *args)):
            g, r = np.asarray(g), np.asarray(r)
            assert g.dtype == r.dtype and g.shape == r.shape, (name, g.dtype, r.dtype)
            np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6, err_msg=name)


# ---- reading a .vmfb -----------------------------------------------------------------

def archive(vmfb: bytes) -> dict[str, bytes]:
    """The files of a .vmfb (a zip archive: module.fb, constants, one file per executable)."""
    with zipfile.ZipFile(io.BytesIO(vmfb)) as z:
        return {info.filename: z.read(info) for info in z.infolist()}


def elf_header(data: bytes) -> tuple[int, int, int]:
    """(ELF class: 1 = 32-bit, 2 = 64-bit; e_machine; e_flags) of little-endian ELF bytes."""
    assert data[:4] == b"\x7fELF" and data[5] == 1, "not a little-endian ELF file"
    elf_class = data[4]
    machine = struct.unpack_from("<H", data, 18)[0]
    flags = struct.unpack_from("<I", data, 48 if elf_class == 2 else 36)[0]
    return elf_class, machine, flags


def embedded_elves(vmfb: bytes) -> dict[str, tuple[int, int, int]]:
    return {name: elf_header(data) for name, data in archive(vmfb).items() if name.endswith(".so")}
