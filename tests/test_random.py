"""``aotc.random`` against two references: ``jax.random`` (bit for bit; skipped without
JAX) and ``NumpyRandom`` below, a plain numpy threefry2x32 checked on Random123's
known-answer vectors, so the tests mean something without JAX too.

Every draw is exact (integers, bools, and floats bit for bit) except ``normal``: its
``erf_inv`` is XLA's polynomial but uses aotc's ``log1p`` and ``sqrt``, so it matches JAX
within NORMAL_VS_JAX (3 float32 ulps seen), and the reference (an exact inverse error
function, by Newton's method) within NORMAL_VS_EXACT, the polynomial's own error.

All draws are in one compiled function (keys and seeds are its arguments), called for
several seeds; the Vulkan test compiles the 32-bit ones once more for ``vulkan`` and
requires the CPU's bits. Error tests only trace.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Callable

import numpy as np
import pytest

import aotc
import aotc.random as arandom
from aotc.runtime import targets as rt_targets

U32, U64 = np.dtype(np.uint32), np.dtype(np.uint64)
SEEDS = [0, 42, 2**31 + 5]
# normal's (rtol, atol) against JAX (the same polynomial, another log1p) and against the
# exact inverse error function (the polynomial's own error: 1.1e-5 seen for float32).
NORMAL_VS_JAX = {"float64": (1e-13, 1e-13), "float32": (2e-6, 2e-6), "float16": (2e-3, 1e-3)}
NORMAL_VS_EXACT = {"float64": (1e-13, 1e-13), "float32": (1e-5, 3e-5), "float16": (2e-3, 1e-3)}


# ---- the numpy reference ------------------------------------------------------------------

def threefry2x32(key, x1, x2):
    """Threefry-2x32, 20 rounds (Salmon et al. 2011), on uint32 numpy arrays."""
    x1, x2 = np.asarray(x1, U32), np.asarray(x2, U32)
    k1, k2 = U32.type(key[0]), U32.type(key[1])
    ks = [k1, k2, k1 ^ k2 ^ U32.type(0x1BD11BDA)]
    rotations = [(13, 15, 26, 6), (17, 29, 16, 24)]
    x = [x1 + ks[0], x2 + ks[1]]
    for group in range(5):
        for r in rotations[group % 2]:
            x[0] = x[0] + x[1]
            x[1] = x[0] ^ ((x[1] << U32.type(r)) | (x[1] >> U32.type(32 - r)))
        x[0] = x[0] + ks[(group + 1) % 3]
        x[1] = x[1] + ks[(group + 2) % 3] + U32.type(group + 1)
    return x[0], x[1]


def fma(a, b, c):
    """a * b + c rounded once, as aotc (math.fma) and XLA's CPU code compute uniform's
    ``unit * (maxval - minval) + minval``. float16/float32: the product is exact in
    float64, the sum may round at 53 bits before the final rounding (a double rounding
    that no draw here hits); float64: exact rational arithmetic, rounded once."""
    dt = np.asarray(a).dtype
    a, b, c = np.broadcast_arrays(*(np.asarray(v, dt) for v in (a, b, c)))
    if dt == np.float64:
        exact = [Fraction(x) * Fraction(y) + Fraction(z) for x, y, z in zip(a.flat, b.flat, c.flat)]
        return np.array([float(v) for v in exact], dt).reshape(a.shape)
    return (a.astype(np.float64) * b + c).astype(dt)


def erf_inv(u):
    """The inverse error function in float64 by Newton's method on math.erf (|u| < 0.5)
    or math.erfc (else, where 1 - |u| is exact), from Winitzki's approximation: a
    reference independent of the polynomial XLA and aotc evaluate."""
    a = np.abs(u)
    log_term = np.log1p(-a * a)
    c = 0.147
    first = 2 / (np.pi * c) + log_term / 2
    x = np.sqrt(np.sqrt(first * first - log_term / c) - first)
    erf, erfc = np.vectorize(math.erf), np.vectorize(math.erfc)
    with np.errstate(all="ignore"):
        for _ in range(6):
            residual = np.where(a < 0.5, erf(x) - a, (1 - a) - erfc(x))
            x = x - residual / (2 / math.sqrt(math.pi) * np.exp(-x * x))
    return np.copysign(np.where(a == 1, np.inf, x), u)


def _counters(shape):
    """JAX's iota_2x32_shape: the row-major index as (high word, low word)."""
    i = np.arange(math.prod(shape), dtype=U64)
    return (i >> U64.type(32)).astype(U32), (i & U64.type(0xFFFFFFFF)).astype(U32)


class NumpyRandom:
    """jax.random's default generator (threefry2x32, partitionable) in numpy."""

    @staticmethod
    def PRNGKey(seed):
        return np.array([0, int(seed) & 0xFFFFFFFF], U32)

    @staticmethod
    def split(key, num=2):
        shape = tuple(num) if isinstance(num, (tuple, list)) else (num,)
        w1, w2 = threefry2x32(key, *_counters(shape))
        return np.stack([w1, w2], axis=-1).reshape(*shape, 2)

    @staticmethod
    def fold_in(key, data):
        w1, w2 = threefry2x32(key, [0], [int(data) & 0xFFFFFFFF])
        return np.array([w1[0], w2[0]], U32)

    @staticmethod
    def bits(key, shape=(), dtype=U32):
        dt = np.dtype(dtype)
        w1, w2 = threefry2x32(key, *_counters(shape))
        if dt.itemsize == 8:
            out = (w1.astype(U64) << U64.type(32)) | w2.astype(U64)
        else:
            out = (w1 ^ w2).astype(dt)
        return out.reshape(shape)

    @staticmethod
    def uniform(key, shape=(), dtype=np.float32, minval=0.0, maxval=1.0):
        dt = np.dtype(dtype)
        info = np.finfo(dt)
        uint = np.dtype(f"uint{info.bits}")
        b = NumpyRandom.bits(key, shape, uint)
        one = np.array(1.0, dt).view(uint)
        unit = ((b >> uint.type(info.bits - info.nmant)) | one).view(dt) - dt.type(1)
        low, high = np.asarray(minval).astype(dt), np.asarray(maxval).astype(dt)
        return np.maximum(low, fma(unit, high - low, low))

    @staticmethod
    def normal(key, shape=(), dtype=np.float32):
        dt = np.dtype(dtype)
        low = np.nextafter(np.array(-1.0, dt), np.array(0.0, dt))
        u = NumpyRandom.uniform(key, shape, dt, low, np.array(1.0, dt))
        return erf_inv(u.astype(np.float64)).astype(dt) * np.array(np.sqrt(2), dt)

    @staticmethod
    def bernoulli(key, p=0.5, shape=None):
        p = np.float32(p) if type(p) is float else np.asarray(p)
        shape = np.shape(p) if shape is None else shape
        return NumpyRandom.uniform(key, shape, p.dtype) < p

    @staticmethod
    def randint(key, shape, minval, maxval, dtype=np.int32):
        dt = np.dtype(dtype)
        info = np.iinfo(dt)
        low, high = (np.asarray(v) if np.asarray(v).dtype.kind in "iu"
                     else np.asarray(v).astype(np.int64)
                     for v in (minval, maxval))
        if info.bits < 32:
            low = np.clip(low.astype(np.int32), info.min, info.max)
            high = np.clip(high.astype(np.int32), info.min, info.max + 1)
            return NumpyRandom._randint(key, shape, low, high, np.dtype(np.int32)).astype(dt)
        return NumpyRandom._randint(key, shape, low, high, dt)

    @staticmethod
    def _randint(key, shape, low, high, dt):
        width = np.iinfo(dt).bits
        uint = np.dtype(f"uint{width}")

        def clip_to(v):
            lo = max(np.iinfo(dt).min, np.iinfo(v.dtype).min)
            hi = min(np.iinfo(dt).max, np.iinfo(v.dtype).max)
            return np.broadcast_to(np.clip(v, lo, hi).astype(dt), shape)

        def rem(x, span):  # XLA's: x % 0 is x
            return np.where(span == 0, x, x % np.where(span == 0, uint.type(1), span))

        out_of_range = high > min(np.iinfo(dt).max, np.iinfo(high.dtype).max)
        low, high = clip_to(low), clip_to(high)
        k1, k2 = NumpyRandom.split(key)
        higher, lower = NumpyRandom.bits(k1, shape, uint), NumpyRandom.bits(k2, shape, uint)
        with np.errstate(over="ignore"):
            span = (high - low).astype(uint)
            span = np.where(high <= low, uint.type(1), span)
            span = np.where(out_of_range & (high > low), span + uint.type(1), span)
            multiplier = rem(uint.type(2 ** (width // 2)), span)
            multiplier = rem(multiplier * multiplier, span)
            offset = rem(rem(higher, span) * multiplier + rem(lower, span), span)
            return (low + offset.astype(dt)).astype(dt)


    @staticmethod
    def _shuffle(key, x, axis):
        rounds = math.ceil(3 * math.log(max(1, x.size)) / math.log(2**32 - 1))
        for _ in range(rounds):
            key, subkey = NumpyRandom.split(key)
            order = np.argsort(NumpyRandom.bits(subkey, x.shape), axis=axis, kind="stable")
            x = np.take_along_axis(x, order, axis=axis)
        return x

    @staticmethod
    def permutation(key, x, axis=0, independent=False):
        if np.ndim(x) == 0:
            return NumpyRandom._shuffle(key, np.arange(int(x), dtype=np.int32), 0)
        x = np.asarray(x)
        if independent or x.ndim == 1:
            return NumpyRandom._shuffle(key, x, axis)
        order = NumpyRandom._shuffle(key, np.arange(x.shape[axis], dtype=np.int32), 0)
        return np.take(x, order, axis=axis)

    @staticmethod
    def choice(key, a, shape=(), replace=True, axis=0):
        array = None if np.ndim(a) == 0 else np.asarray(a)
        n = int(a) if array is None else array.shape[axis]
        if replace:
            indices = NumpyRandom.randint(key, shape, 0, n)
            result = indices if array is None else np.take(array, indices, axis=axis)
        else:
            shuffled = NumpyRandom.permutation(key, n if array is None else array, axis)
            result = shuffled[(slice(None),) * (0 if array is None else axis)
                              + (slice(math.prod(shape)),)]
        final = (shape if array is None
                 else array.shape[:axis] + tuple(shape) + array.shape[axis + 1:])
        return result.reshape(final)


def test_reference_threefry_known_answers():
    """Random123's known-answer vectors for threefry2x32_20 (kat_vectors)."""
    cases = [
        ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
        ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
        ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
    ]
    for key, counter, expected in cases:
        got = threefry2x32(np.array(key, U32), [counter[0]], [counter[1]])
        assert (int(got[0][0]), int(got[1][0])) == expected, (key, counter)


# ---- the draws: one table for aotc.random, jax.random and NumpyRandom ----------------------

Draw = Callable  # (R, key) -> array, with R one of the three namespaces

M = np.arange(12, dtype=np.float32).reshape(3, 4)  # rows and columns to shuffle and choose

# Draws JAX computes in its default 32-bit mode.
DRAWS_32: dict[str, Draw] = {
    "split": lambda R, k: R.split(k),
    "split(3)": lambda R, k: R.split(k, 3),
    "split((2, 3))": lambda R, k: R.split(k, (2, 3)),
    "split(1)": lambda R, k: R.split(k, 1),
    "fold_in(7)": lambda R, k: R.fold_in(k, 7),
    "fold_in(2**32 - 1)": lambda R, k: R.fold_in(k, 2**32 - 1),
    "split then fold_in": lambda R, k: R.fold_in(R.split(k)[1], 3),
    "bits((5, 3))": lambda R, k: R.bits(k, (5, 3)),
    "bits(())": lambda R, k: R.bits(k),
    "bits((0, 4))": lambda R, k: R.bits(k, (0, 4)),
    "bits((7,), uint8)": lambda R, k: R.bits(k, (7,), np.uint8),
    "bits((1,), uint16)": lambda R, k: R.bits(k, (1,), np.uint16),
    "uniform((4, 5))": lambda R, k: R.uniform(k, (4, 5)),
    "uniform(())": lambda R, k: R.uniform(k),
    "uniform((9,), float16)": lambda R, k: R.uniform(k, (9,), np.float16),
    "uniform(-2.0, 3.5)": lambda R, k: R.uniform(k, (6,), minval=-2.0, maxval=3.5),
    "uniform(array bounds)": lambda R, k: R.uniform(
        k, (2, 3), minval=np.array([0.0, 1.0, -4.0], np.float32), maxval=np.float32(7.0)),
    "uniform(maxval < minval)": lambda R, k: R.uniform(k, (4,), minval=2.0, maxval=1.0),
    "normal((300,))": lambda R, k: R.normal(k, (300,)),
    "normal((8,), float16)": lambda R, k: R.normal(k, (8,), np.float16),
    "bernoulli(0.3, (10,))": lambda R, k: R.bernoulli(k, 0.3, (10,)),
    "bernoulli(p array)": lambda R, k: R.bernoulli(k, np.array([0.0, 0.5, 1.0, 0.9], np.float32)),
    "randint((10,), -5, 100)": lambda R, k: R.randint(k, (10,), -5, 100),
    "randint(uint8, 0, 256)": lambda R, k: R.randint(k, (12,), 0, 256, np.uint8),
    "randint(int8, -128, 127)": lambda R, k: R.randint(k, (12,), -128, 127, np.int8),
    "randint(int16, -300, 300)": lambda R, k: R.randint(k, (12,), -300, 300, np.int16),
    "randint(uint32, whole range)": lambda R, k: R.randint(
        k, (12,), 0, np.uint32(2**32 - 1), np.uint32),
    "randint(maxval == minval)": lambda R, k: R.randint(k, (5,), 3, 3),
    "randint(maxval < minval)": lambda R, k: R.randint(k, (5,), 9, -9),
    "randint(array bounds)": lambda R, k: R.randint(k, (2, 3), np.array([0, 10, -5], np.int32), 20),
    "permutation(10)": lambda R, k: R.permutation(k, 10),
    "permutation(2000) (two sorts)": lambda R, k: R.permutation(k, 2000),
    "permutation(M, axis=1)": lambda R, k: R.permutation(k, M, axis=1),
    "permutation(M, independent)": lambda R, k: R.permutation(k, M, axis=1, independent=True),
    "choice(5, (3,))": lambda R, k: R.choice(k, 5, (3,)),
    "choice(M, (2,), replace=False)": lambda R, k: R.choice(k, M, (2,), replace=False),
    "choice(M, (2, 2), axis=1)": lambda R, k: R.choice(k, M, (2, 2), axis=1),
}

# Draws JAX computes only with jax_enable_x64.
DRAWS_64: dict[str, Draw] = {
    "bits((5,), uint64)": lambda R, k: R.bits(k, (5,), np.uint64),
    "uniform((6,), float64, -1, 2)": lambda R, k: R.uniform(k, (6,), np.float64, -1.0, 2.0),
    "normal((300,), float64)": lambda R, k: R.normal(k, (300,), np.float64),
    "randint(int64, +-2**40)": lambda R, k: R.randint(k, (8,), -(2**40), 2**40, np.int64),
    "randint(uint64, 3, 2**63)": lambda R, k: R.randint(k, (8,), 3, np.uint64(2**63), np.uint64),
    "bernoulli(float64 p)": lambda R, k: R.bernoulli(k, np.float64(0.25), (8,)),
}

# Large draws for distribution checks (aotc only).
N = 100_000
SAMPLES: dict[str, Draw] = {
    "uniform": lambda R, k: R.uniform(k, (N,)),
    "normal": lambda R, k: R.normal(k, (N,)),
    "bernoulli(0.3)": lambda R, k: R.bernoulli(k, 0.3, (N,)),
    "randint(0, 10)": lambda R, k: R.randint(k, (N,), 0, 10),
    "bits": lambda R, k: R.bits(k, (N,)),
}


def _all_draws(key, seed32, seed64):
    out = {name: draw(arandom, key) for name, draw in {**DRAWS_32, **DRAWS_64, **SAMPLES}.items()}
    out["PRNGKey(traced int32)"] = arandom.PRNGKey(seed32)
    out["PRNGKey(traced int64)"] = arandom.PRNGKey(seed64)
    out["key(traced) then uniform"] = arandom.uniform(arandom.key(seed32), (3,))
    out["fold_in(traced int32)"] = arandom.fold_in(key, seed32)
    return out


_compiled = aotc.jit(_all_draws)


@pytest.fixture(scope="module", params=SEEDS, ids=lambda s: f"seed{s}")
def drawn(request):
    """(seed, key, aotc's results) for one seed: one compile for all seeds."""
    seed = request.param
    key = np.asarray(arandom.PRNGKey(seed))  # a numpy key: JAX takes it too
    seeds = (np.array(seed).astype(np.int32)[()], np.int64(-seed - 2**40))
    out = _compiled(key, *seeds)
    return seed, key, seeds, {name: np.asarray(v) for name, v in out.items()}


def assert_draw(name: str, got, want, normal_tolerance=NORMAL_VS_JAX) -> None:
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (
        f"{name}: {got.dtype}{got.shape}, expected {want.dtype}{want.shape}")
    if name.startswith("normal"):
        rtol, atol = normal_tolerance[want.dtype.name]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_matches_numpy_reference(drawn):
    _, key, seeds, got = drawn
    for name, draw in {**DRAWS_32, **DRAWS_64}.items():
        assert_draw(name, got[name], draw(NumpyRandom, key), NORMAL_VS_EXACT)
    assert_draw("PRNGKey(traced int32)", got["PRNGKey(traced int32)"],
                NumpyRandom.PRNGKey(seeds[0]))
    assert_draw("PRNGKey(traced int64)", got["PRNGKey(traced int64)"],
                NumpyRandom.PRNGKey(seeds[1]))
    assert_draw("key(traced) then uniform", got["key(traced) then uniform"],
                NumpyRandom.uniform(NumpyRandom.PRNGKey(seeds[0]), (3,)))
    assert_draw("fold_in(traced int32)", got["fold_in(traced int32)"],
                NumpyRandom.fold_in(key, seeds[0]))


def test_matches_jax_bit_for_bit(drawn):
    jax = pytest.importorskip("jax")
    import jax.random as jr

    assert jax.config.jax_threefry_partitionable, "JAX's default generator changed"
    seed, key, seeds, got = drawn
    draws_32, draws_64 = _jax_draws()
    want = draws_32(key)
    with jax.enable_x64(True):
        want.update(draws_64(key))
    for name, value in want.items():
        assert_draw(name, got[name], value)
    np.testing.assert_array_equal(got["PRNGKey(traced int32)"], jr.PRNGKey(seeds[0]))
    np.testing.assert_array_equal(got["fold_in(traced int32)"], jr.fold_in(key, seeds[0]))
    np.testing.assert_array_equal(key, jr.PRNGKey(seed))


@functools.lru_cache(maxsize=None)
def _jax_draws():
    """The two tables as jax.jit functions of the key: XLA compiles each once."""
    import jax
    import jax.random as jr

    return tuple(jax.jit(lambda k, table=table: {n: draw(jr, k) for n, draw in table.items()})
                 for table in (DRAWS_32, DRAWS_64))


@pytest.mark.parametrize("seed", [0, 1, -1, 2**31 - 1, 2**31, 2**32 + 5, -(2**31), 2**40 + 3])
def test_prngkey_of_python_seed_matches_jax(seed):
    """JAX's default 32-bit mode keeps the seed's low 32 bits: [0, seed mod 2**32]."""
    key = arandom.PRNGKey(seed)
    assert key.dtype == np.uint32 and key.shape == (2,)
    np.testing.assert_array_equal(key, NumpyRandom.PRNGKey(seed))
    np.testing.assert_array_equal(arandom.key(np.int64(seed)), key)
    jr = pytest.importorskip("jax.random")
    np.testing.assert_array_equal(key, jr.PRNGKey(seed))


def test_distributions(drawn):
    """Moments of 1e5 samples within 5 standard errors (deterministic for a seed)."""
    got = drawn[3]
    u, z, b, r, bits = (got[n] for n in SAMPLES)
    se = 5 / math.sqrt(N)
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < se * math.sqrt(1 / 12) and abs(u.var() - 1 / 12) < se * 0.075
    assert abs(z.mean()) < se and abs(z.var() - 1) < se * math.sqrt(2)
    assert abs(b.mean() - 0.3) < se * math.sqrt(0.21)
    assert r.min() == 0 and r.max() == 9 and abs(r.mean() - 4.5) < se * math.sqrt(8.25)
    counts = np.bincount(r, minlength=10) / N
    assert np.all(np.abs(counts - 0.1) < se * 0.3)
    ones = np.unpackbits(bits.view(np.uint8)).reshape(N, 32).mean(axis=0)
    assert np.all(np.abs(ones - 0.5) < se * 0.5)
    assert len(np.unique(bits)) > N - 10  # about one repeat expected among 1e5 uint32


# ---- Vulkan ----------------------------------------------------------------------------------

# float16 is not a Vulkan dtype; the 2048-wide sort of permutation(2000) only costs compile
# time there (its ops are those of permutation(10)).
VULKAN_DRAWS = {n: d for n, d in DRAWS_32.items() if "float16" not in n and "2000" not in n}
# uniform with a range whose products are inexact: unit * (maxval - minval) + minval.
FMA_DRAWS = ("uniform(-2.0, 3.5)", "uniform(array bounds)")


def test_same_results_on_vulkan(drawn):
    """Counter-based draws are the same bits on every target: Vulkan (lavapipe) gives the
    CPU's results, normal within its tolerance, uniform with bounds other than [0, 1)
    within one ulp (its fma)."""
    if not rt_targets.available_devices("vulkan"):
        pytest.skip("no Vulkan device: install Mesa's software one (apt-get install "
                    "mesa-vulkan-drivers libvulkan1)")
    _, key, _, cpu = drawn
    on_vulkan = _vulkan(key)
    for name in VULKAN_DRAWS:
        if name in FMA_DRAWS:
            # SPIR-V's Fma may round the product first (lavapipe does): within one float32
            # ulp of the largest product here, unit * (maxval - minval) < 8.
            np.testing.assert_allclose(on_vulkan[name], cpu[name], rtol=0,
                                       atol=np.spacing(np.float32(4)), err_msg=name)
        else:
            assert_draw(name, on_vulkan[name], cpu[name])
    assert_draw("bits((5,), uint64)", on_vulkan["bits((5,), uint64)"], cpu["bits((5,), uint64)"])


_vulkan_compiled = aotc.jit(
    lambda key: {**{n: d(arandom, key) for n, d in VULKAN_DRAWS.items()},
                 "bits((5,), uint64)": arandom.bits(key, (5,), np.uint64)},
    target="vulkan",
)


def _vulkan(key):
    return {name: np.asarray(v) for name, v in _vulkan_compiled(key).items()}


@pytest.fixture(autouse=True, scope="module")
def _drop_the_vulkan_program():
    """The loaded program holds the Vulkan device, which must not outlive this module
    (tests/conftest.py)."""
    yield
    _vulkan_compiled.clear_cache()


# ---- errors ------------------------------------------------------------------------------------

def _trace(fn, *args):
    """Traces ``fn`` (no IREE compile)."""
    return aotc.jit(fn).lower(*args)


KEY = np.array([0, 1], np.uint32)


@pytest.mark.parametrize(
    "bad_key, fragments",
    [
        (np.zeros(3, np.uint32), ["split: key must be a uint32[2]", "got uint32[3]"]),
        (np.zeros(2, np.int32), ["uint32[2]", "got int32[2]"]),
        (np.zeros((4, 2), np.uint32), ["got uint32[4, 2]", "aotc.vmap"]),
        (0, ["uint32[2]", "got int 0"]),
    ],
    ids=["shape", "dtype", "batch", "int"],
)
def test_bad_key(bad_key, fragments):
    with _raises(aotc.TracingError, *fragments):
        _trace(lambda x: arandom.split(bad_key), np.float32(0))
    if isinstance(bad_key, np.ndarray):
        with _raises(aotc.TracingError, "uniform: key must be", *fragments[1:]):
            _trace(lambda k: arandom.uniform(k, (2,)), bad_key)  # as a traced argument


BAD_ARGUMENTS = {
    "uniform int dtype": (lambda k: arandom.uniform(k, (2,), np.int32), aotc.UnsupportedDtypeError,
                          ["uniform", "float", "int32"]),
    "normal uint dtype": (lambda k: arandom.normal(k, (2,), np.uint8), aotc.UnsupportedDtypeError,
                          ["normal", "float", "uint8"]),
    "bits signed dtype": (lambda k: arandom.bits(k, (2,), np.int32), aotc.UnsupportedDtypeError,
                          ["bits", "unsigned", "int32"]),
    "randint float dtype": (lambda k: arandom.randint(k, (2,), 0, 5, np.float32),
                            aotc.UnsupportedDtypeError, ["randint", "integer", "float32"]),
    "shape int": (lambda k: arandom.uniform(k, 3), aotc.TracingError,
                  ["uniform: shape must be a tuple", "3", "(n,)"]),
    "shape negative": (lambda k: arandom.bits(k, (2, -1)), aotc.TracingError,
                       ["bits: shape", "(2, -1)"]),
    "bernoulli int p": (lambda k: arandom.bernoulli(k, 1, (2,)), aotc.UnsupportedDtypeError,
                        ["bernoulli: p must be a float", "int 1"]),
    "uniform minval shape": (lambda k: arandom.uniform(k, (4,), minval=np.zeros(5, np.float32)),
                             aotc.TracingError, ["uniform", "minval shape (5,)", "(4,)"]),
    "randint minval shape": (lambda k: arandom.randint(k, (2,), np.zeros(3, np.int32), 4),
                             aotc.TracingError, ["randint", "minval shape (3,)", "(2,)"]),
    "fold_in float": (lambda k: arandom.fold_in(k, 1.5), aotc.TracingError,
                      ["fold_in: data must be an integer scalar", "1.5"]),
    "PRNGKey of a key": (lambda k: arandom.PRNGKey(k), aotc.TracingError,
                         ["PRNGKey: seed must be an integer scalar", "uint32[2]"]),
    "PRNGKey float seed": (lambda k: arandom.PRNGKey(k[0] * 0.5), aotc.TracingError,
                           ["seed must be an integer", "float64"]),
    "choice larger than population": (lambda k: arandom.choice(k, 3, (4,), replace=False),
                                      aotc.TracingError,
                                      ["choice: cannot take a larger sample (size 4)", "(size 3)"]),
    "choice weights": (lambda k: arandom.choice(k, 3, (2,), p=np.ones(3) / 3),
                       aotc.UnsupportedOpError, ["choice: weights p are not supported yet"]),
    "choice of nothing": (lambda k: arandom.choice(k, 0, (2,)), aotc.TracingError,
                          ["a must be greater than 0", "got 0"]),
    "permutation of a traced scalar":
        (lambda k: arandom.permutation(k, k[0]), aotc.TracingError,
         ["permutation: x must be an integer known at trace time", "uint32[]"]),
}


@pytest.mark.parametrize("case", BAD_ARGUMENTS)
def test_bad_arguments(case):
    call, error, fragments = BAD_ARGUMENTS[case]
    with _raises(error, *fragments):
        _trace(call, KEY)


def test_python_seed_errors_and_calls_outside_a_trace():
    with _raises(aotc.TracingError, "PRNGKey: seed must be an integer scalar", "float 1.5"):
        arandom.PRNGKey(1.5)
    with _raises(aotc.TracingError, "seed must be an integer scalar", "float32[2]"):
        arandom.PRNGKey(np.zeros(2, np.float32))
    # Outside a trace the samplers run eagerly, with the bits they have under jit.
    eager = np.asarray(arandom.split(KEY))
    np.testing.assert_array_equal(eager, np.asarray(aotc.jit(arandom.split)(KEY)))


def _raises(error, *fragments):
    import re

    return pytest.raises(error, match="(?s)" + "".join(f"(?=.*{re.escape(f)})" for f in fragments))
