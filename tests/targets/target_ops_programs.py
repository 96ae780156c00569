"""One program per op family added to aotc, with inputs and numpy references, for the
target matrix (tests/targets/test_target_ops.py).

Each program puts several ops of its family in one function that returns a dict, so one
compile per target covers the family. ``reference(*inputs)`` computes the same dict with
numpy (``None`` where the CPU run is the reference: the random bits, checked against
jax.random in tests/test_random.py). Shapes are small: the programs run under lavapipe
and qemu.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

import aotc.lax as alax
import aotc.nn as ann
import aotc.numpy as anp
import aotc.random as arandom
import aotc.scipy.linalg as ascipy_linalg

RNG = np.random.default_rng(7)


@dataclass(frozen=True)
class Program:
    fn: Callable
    inputs: tuple
    reference: Callable | None  # numpy: the same dict from the same inputs
    exact: bool = False  # float results must be bit-identical to the CPU run


# ---- control flow: cond, switch, while_loop, fori_loop (static and traced bounds), scan ----

def control(x, n):
    doubled = alax.cond(anp.sum(x) > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)
    switched = alax.switch(n, [lambda v: v + 1.0, lambda v: v * v, lambda v: -v], x)
    steps, grown = alax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 3, c[1] * 1.5),
                                   (anp.int32(0), x))
    fixed = alax.fori_loop(0, 5, lambda i, v: v + i.astype(anp.float32), x)
    traced = alax.fori_loop(0, n + 2, lambda i, v: v * 2 + i, anp.int32(1))
    total, prefix = alax.scan(lambda c, xi: (c + xi, c * xi), anp.float32(0), x)
    # a pointwise carry of 6000 floats: on CPUs, tile by tile over workgroups
    tiles = alax.fori_loop(0, 4, lambda i, v: v * 0.5 + i.astype(anp.float32), anp.tile(x, 1000))
    return {"cond": doubled, "switch": switched, "while_steps": steps, "while": grown,
            "fori": fixed, "fori_traced": traced, "scan_carry": total, "scan_ys": prefix,
            "fori_tiles": tiles}


def control_reference(x, n):
    doubled = x * 2 if x.sum() > 0 else x - 1
    switched = [x + 1, x * x, -x][int(np.clip(n, 0, 2))]
    steps, grown = 0, x.copy()
    while steps < 10:
        steps, grown = steps + 3, grown * np.float32(1.5)
    fixed = x + sum(np.float32(i) for i in range(5))
    traced = np.int32(1)
    for i in range(int(n) + 2):
        traced = traced * 2 + i
    carry, ys = np.float32(0), []
    for xi in x:
        carry, y = carry + xi, carry * xi
        ys.append(y)
    tiles = np.tile(x, 1000)
    for i in range(4):
        tiles = tiles * np.float32(0.5) + np.float32(i)
    return {"cond": doubled, "switch": switched, "while_steps": np.int32(steps), "while": grown,
            "fori": fixed, "fori_traced": np.int32(traced), "scan_carry": np.float32(carry),
            "scan_ys": np.array(ys, np.float32), "fori_tiles": tiles}


# ---- sorting and scans: sort, argsort, top_k, cumsum, cumprod ------------------------------

def sorting(x, m, k):
    values, indices = alax.top_k(m, 3)
    return {"sort": anp.sort(x), "argsort": anp.argsort(x), "sort_axis0": anp.sort(m, axis=0),
            "argsort_int": anp.argsort(k), "top_k": values, "top_k_indices": indices,
            "cumsum": anp.cumsum(m, axis=1), "cumsum_int": anp.cumsum(k),
            "cumprod": anp.cumprod(m[:, :4], axis=0)}


def sorting_reference(x, m, k):
    order = np.argsort(-m, axis=1, kind="stable")[:, :3]
    return {"sort": np.sort(x), "argsort": np.argsort(x, kind="stable"),
            "sort_axis0": np.sort(m, axis=0), "argsort_int": np.argsort(k, kind="stable"),
            "top_k": np.take_along_axis(m, order, 1), "top_k_indices": order.astype(np.int32),
            "cumsum": np.cumsum(m, axis=1), "cumsum_int": np.cumsum(k),
            "cumprod": np.cumprod(m[:, :4], axis=0)}


# ---- gathers and scatters: x[idx], take, take_along_axis, x.at[idx].add/set/max ----------

def gather_scatter(x, idx, counts):
    return {"getitem": x[idx], "take": anp.take(x, idx, axis=1),
            "take_along": anp.take_along_axis(x, anp.argsort(x, axis=0)[:2], axis=0),
            "at_add": x.at[idx].add(1.0), "at_set": x.at[idx, 1].set(-3.0),
            "at_max": x.at[:, idx].max(0.5), "at_add_int": counts.at[idx].add(1)}


def gather_scatter_reference(x, idx, counts):
    at_add, at_set, at_max, at_add_int = x.copy(), x.copy(), x.copy(), counts.copy()
    np.add.at(at_add, idx, np.float32(1))
    at_set[idx, 1] = -3
    np.maximum.at(at_max, (slice(None), idx), np.float32(0.5))
    np.add.at(at_add_int, idx, 1)
    return {"getitem": x[idx], "take": np.take(x, idx, axis=1),
            "take_along": np.take_along_axis(x, np.argsort(x, axis=0, kind="stable")[:2], 0),
            "at_add": at_add, "at_set": at_set, "at_max": at_max, "at_add_int": at_add_int}


# ---- convolutions and pooling ---------------------------------------------------------------

def convolution(img, w, wg, nhwc):
    return {"same": alax.conv_general_dilated(img, w, (1, 1), "SAME"),
            "strided_dilated": alax.conv_general_dilated(img, w, (2, 1), [(1, 0), (2, 2)],
                                                         rhs_dilation=(1, 2)),
            "grouped": alax.conv_general_dilated(img, wg, (1, 1), "VALID", feature_group_count=3),
            "max_pool": ann.max_pool(nhwc, (2, 2), strides=(2, 2)),
            "max_pool_same": ann.max_pool(nhwc, (3, 3), padding="SAME"),
            "avg_pool": ann.avg_pool(nhwc, (2, 3), strides=(1, 2))}


def conv_nchw(x, w, strides=(1, 1), pads=((0, 0), (0, 0)), dilation=(1, 1), groups=1):
    """A plain loop over kernel offsets: NCHW input, OIHW kernel, float64 sums."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), *pads))
    n, c, h, wd = x.shape
    o, i, kh, kw = w.shape
    oh = (h - (kh - 1) * dilation[0] - 1) // strides[0] + 1
    ow = (wd - (kw - 1) * dilation[1] - 1) // strides[1] + 1
    out = np.zeros((n, o, oh, ow))
    per = o // groups
    for g in range(groups):
        xs, ws = x[:, g * i:(g + 1) * i], w[g * per:(g + 1) * per].astype(np.float64)
        for a in range(kh):
            for b in range(kw):
                patch = xs[:, :, a * dilation[0]::strides[0],
                           b * dilation[1]::strides[1]][:, :, :oh, :ow]
                out[:, g * per:(g + 1) * per] += np.einsum("nchw,oc->nohw", patch, ws[:, :, a, b])
    return out.astype(np.float32)


def pool_nhwc(x, window, strides, pads, reduce):
    fill = -np.inf if reduce is np.max else 0.0
    x = np.pad(x, ((0, 0), *pads, (0, 0)), constant_values=fill)
    oh = (x.shape[1] - window[0]) // strides[0] + 1
    ow = (x.shape[2] - window[1]) // strides[1] + 1
    return np.stack([np.stack([reduce(x[:, r * strides[0]:r * strides[0] + window[0],
                                        c * strides[1]:c * strides[1] + window[1]], axis=(1, 2))
                               for c in range(ow)], 1) for r in range(oh)], 1).astype(np.float32)


def convolution_reference(img, w, wg, nhwc):
    return {"same": conv_nchw(img, w, pads=((1, 1), (1, 1))),
            "strided_dilated": conv_nchw(img, w, (2, 1), ((1, 0), (2, 2)), (1, 2)),
            "grouped": conv_nchw(img, wg, groups=3),
            "max_pool": pool_nhwc(nhwc, (2, 2), (2, 2), ((0, 0), (0, 0)), np.max),
            "max_pool_same": pool_nhwc(nhwc, (3, 3), (1, 1), ((1, 1), (1, 1)), np.max),
            "avg_pool": pool_nhwc(nhwc, (2, 3), (1, 2), ((0, 0), (0, 0)), np.mean)}


# ---- random: threefry2x32 on uint32, the same bits everywhere -------------------------------

def random(key):
    a, b = arandom.split(key)
    return {"split": arandom.split(key, 3), "fold_in": arandom.fold_in(a, 7),
            "bits": arandom.bits(b, (4, 5)), "uniform": arandom.uniform(a, (3, 7)),
            "uniform_range": arandom.uniform(b, (6,), minval=-2.0, maxval=3.0),
            "normal": arandom.normal(a, (2, 9)), "bernoulli": arandom.bernoulli(b, 0.3, (11,)),
            "randint": arandom.randint(a, (8,), -5, 40),
            "seeded": arandom.bits(arandom.PRNGKey(key[1].astype(anp.int32)), (3,))}


# ---- unsigned (and narrow signed) integers: wrap-around, division, shifts, comparisons,
# casts, reductions

def numpy_twin(ops: Callable) -> dict[str, Callable]:
    """``ops(m, *arrays)`` written once over a numpy-like module ``m``: the traced program
    (``fn``: ``m = aotc.numpy``, named as ``ops``) and its ``reference`` (``m = numpy``)."""
    def program(*arrays):
        return ops(anp, *arrays)

    program.__name__ = ops.__name__.lstrip("_")
    return {"fn": program, "reference": lambda *arrays: ops(np, *arrays)}


def _unsigned(m, a8, b32, c16):
    return {"add_wrap": a8 + a8, "floordiv": a8 // 3, "mod": a8 % 7, "gt": a8 > 200,
            "to_float": a8.astype(m.float32), "mul_wrap": b32 * m.uint32(2654435761),
            "div_high": b32 // m.uint32(3), "shift": b32 >> 3, "max": m.max(b32),
            "max8": m.max(a8), "shift8": a8 >> 2, "argmax8": m.argmax(a8),
            "signed_div8": a8.astype(m.int8) // m.int8(-3), "signed_mod8": a8.astype(m.int8) % 5,
            "signed_shift16": c16.astype(m.int16) >> 3, "signed_max16": m.max(c16.astype(m.int16)),
            "min16": m.minimum(c16, m.uint16(40000)), "sum16": m.sum(c16),
            # in range: a float-to-int cast out of range is undefined (CPUs differ)
            "from_float": (a8.astype(m.float32) * 0.75).astype(m.uint8)}


# ---- rearranging: pad, roll, tril, triu -------------------------------------------------------

def _rearrange(m, x, k):
    return {"pad": m.pad(x, ((1, 2), (0, 1)), constant_values=-1.0),
            "pad_reflect": m.pad(x, 2, mode="reflect"), "pad_edge": m.pad(k, (1, 3), mode="edge"),
            "roll": m.roll(x, 2, axis=1), "roll_flat": m.roll(k, -3),
            "tril": m.tril(x, -1), "triu": m.triu(x, 1)}


# ---- factorizations: blocked Cholesky, triangular solves, LU, QR, eigh, SVD -----------------
# (sequential kernels; the results compared are the ones numpy defines without a sign
# choice: solutions, determinants, R, eigenvalues and singular values; complex64 ones
# from the same kernels' complex arithmetic). The eigenvalues and singular values are
# of blocks small enough for lavapipe, which stops a shader after 65535 loop iterations:
# counted with their 30 sweeps per eigenvalue, a 40x40 eigensolver could take more.

def factorizations(a, b, z):
    identity = anp.eye(8, dtype=z.dtype)
    hermitian = z @ anp.conj(z).T + 8 * identity
    complex_results = {"complex_solve": anp.linalg.solve(z + 4 * identity, z[:, :2]),
                       "complex_cholesky": anp.linalg.cholesky(hermitian),
                       "complex_eigvalsh": anp.linalg.eigvalsh(hermitian),
                       "complex_qr_r": anp.linalg.qr(z, mode="r"),
                       "complex_svdvals": anp.linalg.svdvals(z)}
    return complex_results | _real_factorizations(a, b)


def _real_factorizations(a, b):
    factor = anp.linalg.cholesky(a)
    return {"cholesky": factor,
            "solve_lower": ascipy_linalg.solve_triangular(factor, b, lower=True),
            "solve_upper_t": ascipy_linalg.solve_triangular(factor.T, b, trans=1),
            "cho_solve": ascipy_linalg.cho_solve((factor, True), b),
            "lu_solve": anp.linalg.solve(a + b[:, :1], b), "det": anp.linalg.det(a[:8, :8]),
            "qr_r": anp.linalg.qr(a + b[:, :1], mode="r"),
            "eigvalsh": anp.linalg.eigvalsh(a[:16, :16]),
            "svdvals": anp.linalg.svdvals((a + b[:, :1])[:8, :8])}


def factorizations_reference(a, b, z):
    z = z.astype(np.complex128)
    hermitian = z @ z.conj().T + 8 * np.eye(8)
    complex_results = {"complex_solve": np.linalg.solve(z + 4 * np.eye(8), z[:, :2]),
                       "complex_cholesky": np.linalg.cholesky(hermitian),
                       "complex_eigvalsh": np.linalg.eigvalsh(hermitian),
                       "complex_qr_r": np.linalg.qr(z, mode="r"),
                       "complex_svdvals": np.linalg.svd(z, compute_uv=False)}
    return complex_results | _real_factorizations_reference(a, b)


def _real_factorizations_reference(a, b):
    factor = np.linalg.cholesky(a)
    general = a + b[:, :1]
    return {"cholesky": factor, "solve_lower": np.linalg.solve(factor, b),
            "solve_upper_t": np.linalg.solve(factor, b), "cho_solve": np.linalg.solve(a, b),
            "lu_solve": np.linalg.solve(general, b), "det": np.linalg.det(a[:8, :8]),
            "qr_r": np.linalg.qr(general, mode="r"), "eigvalsh": np.linalg.eigvalsh(a[:16, :16]),
            "svdvals": np.linalg.svd(general[:8, :8], compute_uv=False)}


# ---- Fourier transforms: radix 4, 3 and 2 stages, Bluestein (17 points), real transforms ----

def _fourier(m, x, y):
    z = x + 1j * x[::-1]
    return {"fft": m.fft.fft(z), "rfft": m.fft.rfft(x),
            "irfft": m.fft.irfft(m.fft.rfft(x, axis=0), 4, axis=0), "bluestein": m.fft.fft(y),
            "shifted": m.fft.fftshift(x, axes=1)}


def _spd(n):
    m = RNG.standard_normal((n, n))
    return (m @ m.T / n + np.eye(n)).astype(np.float32)


def _normal(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


_M = _normal(4, 9)
_M[1, 2] = _M[1, 5]  # a tie: top_k and argsort keep the lower index first

PROGRAMS: dict[str, Program] = {
    "control": Program(control, (_normal(6), np.int32(1)), control_reference),
    "sorting": Program(sorting, (_normal(13), _M, RNG.integers(-4, 4, 10).astype(np.int32)),
                       sorting_reference),
    "gather_scatter": Program(gather_scatter, (_normal(6, 5), np.array([4, 0, 4, 2], np.int32),
                                               np.zeros(6, np.int32)), gather_scatter_reference),
    "convolution": Program(convolution, (_normal(2, 3, 7, 8), _normal(4, 3, 3, 3),
                                         _normal(6, 1, 2, 2), _normal(2, 6, 7, 3)),
                           convolution_reference),
    "random": Program(random, (np.array([0, 42], np.uint32),), None, exact=True),
    # narrow integer arguments fill whole 4-byte words: Vulkan refuses others
    "unsigned": Program(**numpy_twin(_unsigned),
                        inputs=(RNG.integers(0, 256, 16).astype(np.uint8),
                                RNG.integers(0, 2**32, 16, dtype=np.uint64).astype(np.uint32),
                                RNG.integers(0, 2**16, 12).astype(np.uint16))),
    "rearrange": Program(**numpy_twin(_rearrange),
                         inputs=(_normal(4, 5), np.arange(7, dtype=np.int32) * 3)),
    "fourier": Program(**numpy_twin(_fourier), inputs=(_normal(4, 12), _normal(17))),
    # 40 = a 32 leaf and an 8 leaf: both kernels and the matmuls between them
    "factorizations": Program(factorizations, (_spd(40), _normal(40, 3),
                                               (_normal(8, 8) + 1j * _normal(8, 8)).astype(
                                                   np.complex64)),
                              lambda a, b, z: {k: v.astype(np.complex64 if v.dtype.kind == "c"
                                                           else np.float32) for k, v in
                                               factorizations_reference(a.astype(np.float64),
                                                                        b, z).items()}),
}

# float32 tolerances against numpy: sums in another order (conv, cumsum) and float32 ulps.
RTOL, ATOL = 1e-5, 1e-5


def compare(got: dict, want: dict, where: str, exact: bool = False) -> list[str]:
    """What differs between two result dicts (dtype, shape, values), as messages; exact:
    bit for bit. Integers and bools are always compared exactly."""
    problems = []
    if set(got) != set(want):
        return [f"{where}: keys {sorted(got)} != {sorted(want)}"]
    for name in want:
        g, r = np.asarray(got[name]), np.asarray(want[name])
        if g.dtype != r.dtype or g.shape != r.shape:
            problems.append(f"{where}[{name}]: {g.dtype}{list(g.shape)} != "
                            f"{r.dtype}{list(r.shape)}")
        elif exact or r.dtype.kind not in "fc":
            if g.tobytes() != r.tobytes():
                problems.append(f"{where}[{name}]: not bit-identical:\n{g}\n!=\n{r}")
        elif not np.allclose(g, r, rtol=RTOL, atol=ATOL, equal_nan=True):
            problems.append(f"{where}[{name}]: max |diff| {np.max(np.abs(g - r))}:\n{g}\n!=\n{r}")
    return problems
