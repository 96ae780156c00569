"""``aotc.random``: ``jax.random``'s names and results, bit for bit, in traced functions.

    import aotc, aotc.numpy as anp, aotc.random as arandom

    @aotc.jit
    def dropout(x, key):
        keep = arandom.bernoulli(key, 0.9, x.shape)
        return anp.where(keep, x / 0.9, 0.0)

    dropout(x, arandom.PRNGKey(0))

Keys are raw ``uint32[2]`` arrays, as ``jax.random.PRNGKey`` makes them; ``key`` makes the
same array (aotc has no typed key arrays). A key may be an argument of the traced
function, a constant, or made inside it from a Python or traced integer seed.

The generator is JAX's default, threefry2x32 with ``jax_threefry_partitionable`` on (the
default in JAX 0.10): element ``i`` (row-major) of a draw of ``shape`` is the
threefry2x32 hash of the key and the 64-bit counter ``i``, split in two 32-bit words;
``bits`` xors the two output words, ``split`` keeps both as the new key,
``fold_in(key, d)`` hashes the counter ``d``. Counter-based sampling has no state and
no order: a key and a shape give the same bits on every target. ``uniform``,
``bernoulli``, ``randint`` and ``normal`` are JAX's transformations of those bits.
Seeds follow JAX's default 32-bit mode: ``PRNGKey(seed)`` is ``[0, seed mod 2**32]``.

Bit for bit with JAX on CPU: ``split``, ``fold_in``, ``bits``, ``randint``,
``bernoulli``, ``permutation``, ``choice`` (without weights) and ``uniform`` (whose
``unit * (maxval - minval) + minval`` is one ``math.fma``, as XLA's CPU code contracts
it; Vulkan's SPIR-V ``Fma`` may round the product first, so bounds other than [0, 1)
can differ there by an ulp of the product).
``normal`` evaluates XLA's ``erf_inv`` polynomial, but with aotc's ``log1p`` and
``sqrt``: a few ulps from JAX (3 float32 ulps seen), float16 included.

The MLIR each draw emits: the key's two words as 0-d tensors (``tensor.extract_slice``
plus ``tensor.collapse_shape``), then the one hashing ``linalg.generic`` of
``aotc.ops.threefry`` (``split``/``fold_in`` add ``arith.cmpi`` + ``select`` on the last
index to its body), ending in ``trunci``/``extui``/``bitcast``/``subf`` for the output
dtype. This module holds the keys, the argument checks and JAX's samplers. Ranges,
comparisons and ``erf_inv`` are ordinary aotc.numpy elementwise ``linalg.generic`` ops
(and ``math.fma`` in one of them); ``permutation`` and ``choice`` add aotc.numpy's
``argsort`` and ``take``/``take_along_axis``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import dtypes
from . import namespaces as _namespaces
from . import numpy as anp
from ._mlir import index_constant
from .core import Tracer, is_tracing, make_public
from .errors import NotTracingError, TracingError, UnsupportedDtypeError, UnsupportedOpError
from .lowering import loop_index
from .ops.arguments import as_tracer, normalize_axis
from .ops.scalar import cmpi, select
from .ops.threefry import U32, UNSIGNED, Finish, fma, hash_draw, random_bits, unit_floats

__all__ = ["PRNGKey", "key", "split", "fold_in", "bits", "uniform", "normal", "bernoulli",
           "randint", "permutation", "choice"]

# ---- argument checks ---------------------------------------------------------------------

def _require_trace(where: str) -> None:
    if not is_tracing():
        raise NotTracingError(
            f"aotc.random.{where} builds compiled code and runs only inside a function traced "
            f"by aotc.jit or aotc.export (the public functions run eagerly outside one)"
        )


def _describe(x) -> str:
    if isinstance(x, (Tracer, np.ndarray, np.generic)):
        return f"{np.dtype(x.dtype).name}{list(np.shape(x))}"
    return f"{type(x).__name__} {x!r}"


def _key(key, where: str) -> Tracer:
    """``key`` as a traced uint32[2] array, or a TracingError naming the argument."""
    _require_trace(where)
    if not isinstance(key, Tracer):
        if not isinstance(key, (np.ndarray, list, tuple)):
            raise TracingError(
                f"{where}: key must be a uint32[2] array from aotc.random.PRNGKey(seed) or "
                f"split, got {_describe(key)}"
            )
        key = np.asarray(key)
    shape, dtype = tuple(key.shape), np.dtype(key.dtype)
    if dtype != U32 or shape != (2,):
        hint = (" (a batch of keys: map over it with aotc.vmap)"
                if dtype == U32 and len(shape) > 1 and shape[-1] == 2 else "")
        raise TracingError(
            f"{where}: key must be a uint32[2] array from aotc.random.PRNGKey(seed) or "
            f"split, got {_describe(key)}{hint}"
        )
    return as_tracer(key, f"{where} key")


def _shape(shape, where: str) -> tuple:
    if isinstance(shape, (list, tuple)) and all(
        isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in shape
    ):
        return tuple(int(d) for d in shape)
    raise TracingError(
        f"{where}: shape must be a tuple of non-negative ints, got {shape!r} (a single "
        f"dimension is written (n,))"
    )


def _dtype(dtype, default, kinds: tuple[str, ...], where: str) -> np.dtype:
    dt = dtypes.canonicalize(default if dtype is None else dtype, f"{where} dtype")
    if dtypes.kind(dt) not in kinds:
        kind_names = {"float": "a float", "uint": "an unsigned integer", "int": "an integer"}
        names = " or ".join(kind_names[k] for k in kinds)
        raise UnsupportedDtypeError(f"{where}: dtype must be {names} dtype, got {dt.name}")
    return dt


def _check_broadcast(where: str, shape: tuple, **params) -> None:
    shapes = {name: tuple(np.shape(p)) if not isinstance(p, Tracer) else p.shape
              for name, p in params.items()}
    try:
        result = tuple(np.broadcast_shapes(shape, *shapes.values()))
    except ValueError:
        result = None
    if result != shape:
        given = ", ".join(f"{name} shape {s}" for name, s in shapes.items())
        raise TracingError(
            f"{where}: {given} must broadcast to the requested shape {shape}"
        )


def _as_dtype(value, dtype: np.dtype, where: str):
    """``value`` converted to ``dtype`` as JAX's convert_element_type does (a traced
    value stays traced; constants stay numpy)."""
    if isinstance(value, Tracer):
        return anp.astype(value, dtype)
    if isinstance(value, (bool, int, float, np.generic, np.ndarray, list, tuple)):
        return np.asarray(value).astype(dtype)
    raise TracingError(f"{where}: expected a number or an array, got {_describe(value)}")


# ---- keys --------------------------------------------------------------------------------

def PRNGKey(seed) -> np.ndarray | Tracer:
    """A key (uint32[2]) from an integer seed, as ``jax.random.PRNGKey`` in JAX's default
    32-bit mode: ``[0, seed mod 2**32]``.

    A Python or numpy integer gives a numpy array (usable anywhere, also as an argument
    of a compiled function); a traced integer scalar gives a traced key.
    """
    if isinstance(seed, Tracer):
        if seed.shape or dtypes.kind(seed.dtype) not in ("int", "uint"):
            raise TracingError(
                f"PRNGKey: seed must be an integer scalar, got {_describe(seed)}"
            )
        low = anp.astype(seed, U32)
        return anp.stack([anp.zeros((), U32), low])
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        if isinstance(seed, np.ndarray) and seed.ndim == 0 and seed.dtype.kind in "iu":
            return PRNGKey(seed[()])
        raise TracingError(
            f"PRNGKey: seed must be an integer scalar, got {_describe(seed)}"
        )
    return np.array([0, int(seed) & 0xFFFFFFFF], U32)


key = PRNGKey


def split(key, num: int | Sequence[int] = 2) -> Tracer:
    """``num`` new keys (shape ``(num, 2)``; a tuple ``num`` gives ``(*num, 2)``)."""
    k = _key(key, "split")
    shape = _shape(tuple(num) if isinstance(num, (tuple, list)) else (num,), "split num")
    return hash_draw(k, shape + (2,), len(shape), U32, _key_words(len(shape)))


def _key_words(dim: int) -> Finish:
    """Both hash words as a key: word 1 at index 0 of loop dimension ``dim``, word 2 at 1."""
    return lambda b1, b2: select(cmpi("ne", loop_index(dim), index_constant(0)), b2, b1)


def fold_in(key, data) -> Tracer:
    """A new key from ``key`` and an integer scalar ``data`` (taken mod 2**32)."""
    k = _key(key, "fold_in")
    if isinstance(data, Tracer):
        if data.shape or dtypes.kind(data.dtype) not in ("int", "uint", "bool"):
            raise TracingError(f"fold_in: data must be an integer scalar, got {_describe(data)}")
        counter = anp.astype(data, U32)
    elif isinstance(data, (int, np.integer)) or (
            isinstance(data, np.ndarray) and data.ndim == 0 and data.dtype.kind in "iub"):
        counter = as_tracer(np.array(int(data) & 0xFFFFFFFF, U32), "fold_in data")
    else:
        raise TracingError(f"fold_in: data must be an integer scalar, got {_describe(data)}")
    return hash_draw(k, (2,), 0, U32, _key_words(0), counter=counter)


# ---- samplers -------------------------------------------------------------------------------

def bits(key, shape: Sequence[int] = (), dtype=None) -> Tracer:
    """Uniform random bits of an unsigned dtype (default uint32)."""
    k = _key(key, "bits")
    dt = _dtype(dtype, U32, ("uint",), "bits")
    return random_bits(k, _shape(shape, "bits"), dtypes.info(dt).bits)


def uniform(key, shape: Sequence[int] = (), dtype=None, minval=0.0, maxval=1.0) -> Tracer:
    """Floats uniform in [minval, maxval) (default float32). As in JAX, maxval <= minval
    gives minval."""
    k = _key(key, "uniform")
    dt = _dtype(dtype, np.float32, ("float",), "uniform")
    shape = _shape(shape, "uniform")
    low, high = _as_dtype(minval, dt, "uniform minval"), _as_dtype(maxval, dt, "uniform maxval")
    _check_broadcast("uniform", shape, minval=low, maxval=high)
    unit = unit_floats(k, shape, dt)
    return anp.maximum(low, fma(unit, high - low, low, dt))


@dataclass(frozen=True)
class _ErfInvBranch:
    """One piece of XLA's erf_inv: for w = -log1p(-x*x) below ``bound`` (None: the rest),
    a polynomial (``coefficients``, highest degree first) in ``w - shift`` or, with
    ``sqrt``, in ``sqrt(w) - shift``; the result is the polynomial times x."""

    bound: float | None
    shift: float
    sqrt: bool
    coefficients: tuple[float, ...]


# XLA's erf_inv (the chlo decomposition JAX's CPU code runs): M. Giles, "Approximating
# the erfinv function", GPU Computing Gems Jade, 2011. float16 is computed in float32.
_ERF_INV = {
    "float32": (
        _ErfInvBranch(5.0, 2.5, False, (
            2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
            -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)),
        _ErfInvBranch(None, 3.0, True, (
            -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
            -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)),
    ),
    "float64": (
        _ErfInvBranch(6.25, 3.125, False, (
            -3.64441206401782e-21, -1.6850591381820166e-19, 1.28584807152564e-18,
            1.1157877678025181e-17, -1.333171662854621e-16, 2.0972767875968562e-17,
            6.637638134358324e-15, -4.054566272975207e-14, -8.151934197605472e-14,
            2.6335093153082323e-12, -1.2975133253453532e-11, -5.415412054294628e-11,
            1.0512122733215323e-09, -4.112633980346984e-09, -2.9070369957882005e-08,
            4.2347877827932404e-07, -1.3654692000834679e-06, -1.3882523362786469e-05,
            0.00018673420803405714, -0.000740702534166267, -0.006033670871430149,
            0.24015818242558962, 1.6536545626831027)),
        _ErfInvBranch(16.0, 3.25, True, (
            2.2137376921775787e-09, 9.075656193888539e-08, -2.7517406297064545e-07,
            1.8239629214389228e-08, 1.5027403968909828e-06, -4.013867526981546e-06,
            2.9234449089955446e-06, 1.2475304481671779e-05, -4.7318229009055734e-05,
            6.828485145957318e-05, 2.4031110387097894e-05, -0.0003550375203628475,
            0.0009532893797373805, -0.0016882755560235047, 0.002491442096107851,
            -0.003751208507569241, 0.005370914553590064, 1.0052589676941592,
            3.0838856104922208)),
        _ErfInvBranch(None, 5.0, True, (
            -2.7109920616438573e-11, -2.555641816996525e-10, 1.5076572693500548e-09,
            -3.789465440126737e-09, 7.61570120807834e-09, -1.496002662714924e-08,
            2.914795345090108e-08, -6.771199775845234e-08, 2.2900482228026655e-07,
            -9.9298272942317e-07, 4.526062597223154e-06, -1.968177810553167e-05,
            7.599527703001776e-05, -0.00021503011930044477, -0.00013871931833623122,
            1.0103004648645344, 4.849906401408584)),
    ),
}


def _erf_inv(x: Tracer) -> Tracer:
    """XLA's erf_inv: each branch's polynomial evaluated in one Horner loop (branches
    are sorted longest first; a shorter one stops early and keeps its value)."""
    if x.dtype == np.float16:
        return anp.astype(_erf_inv(anp.astype(x, np.float32)), np.float16)
    dt = x.dtype
    branches, t = _ERF_INV[dt.name], dt.type
    w = -anp.log1p(x * -x)
    below = [w < t(b.bound) for b in branches[:-1]]

    def by_branch(values):
        """values[k] where w falls in branch k (the first whose bound w is below)."""
        out = values[-1]
        for k in reversed(range(len(branches) - 1)):
            out = anp.where(below[k], values[k], out)
        return out

    root = anp.sqrt(w)
    z = by_branch([(root if b.sqrt else w) - t(b.shift) for b in branches])
    p = by_branch([t(b.coefficients[0]) for b in branches])
    for i in range(1, len(branches[0].coefficients)):
        coefficients = [t(b.coefficients[i] if i < len(b.coefficients) else 0.0)
                        for b in branches]
        step = fma(p, z, by_branch(coefficients), dt)
        active = sum(i < len(b.coefficients) for b in branches)
        p = step if active == len(branches) else anp.where(below[active - 1], step, p)
    return anp.where(anp.abs(x) == t(1.0), x * t(np.inf), p * x)


def normal(key, shape: Sequence[int] = (), dtype=None) -> Tracer:
    """Standard normal floats (default float32): ``sqrt(2) * erf_inv(u)`` with ``u``
    uniform in (-1, 1), as JAX computes them."""
    dt = _dtype(dtype, np.float32, ("float",), "normal")
    low = np.nextafter(np.array(-1.0, dt), np.array(0.0, dt))
    u = uniform(key, shape, dt, low, np.array(1.0, dt))
    return _erf_inv(u) * np.array(np.sqrt(2), dt)


def bernoulli(key, p=0.5, shape: Sequence[int] | None = None) -> Tracer:
    """Booleans that are True with probability ``p`` (a float or float array; a Python
    float is float32, as in JAX). ``shape`` defaults to ``p``'s shape."""
    if type(p) is float:  # not isinstance: np.float64 subclasses float
        p = np.float32(p)
    p_dtype = p.dtype if isinstance(p, (Tracer, np.ndarray, np.generic)) else None
    if p_dtype is None or dtypes.kind(p_dtype) != "float":
        raise UnsupportedDtypeError(
            f"bernoulli: p must be a float or an array of floats, got {_describe(p)}"
        )
    p_shape = p.shape if isinstance(p, Tracer) else tuple(np.shape(p))
    shape = p_shape if shape is None else _shape(shape, "bernoulli")
    _check_broadcast("bernoulli", shape, p=p)
    return uniform(key, shape, p_dtype) < p


# ---- randint ------------------------------------------------------------------------------

def _integer_bound(value, where: str):
    """minval/maxval as an integer array (traced or numpy); floats are truncated, as JAX's
    ``astype(int)`` does. Python ints are int64 here (JAX's 32-bit mode would reject
    those outside int32)."""
    if isinstance(value, Tracer):
        return value if dtypes.kind(value.dtype) in ("int", "uint") else anp.astype(value, np.int64)
    if isinstance(value, (bool, int, float, np.generic, np.ndarray, list, tuple)):
        array = np.asarray(value)
        return array if array.dtype.kind in "iu" else array.astype(np.int64)
    raise TracingError(f"{where}: expected an integer or an integer array, got {_describe(value)}")


def _clip_to(value, dtype: np.dtype):
    """JAX's _convert_and_clip_integer: clip to the range both dtypes share, then convert."""
    source = np.dtype(value.dtype)
    low = max(np.iinfo(dtype).min, np.iinfo(source).min)
    high = min(np.iinfo(dtype).max, np.iinfo(source).max)
    clipped = anp.clip(value, np.array(low, source), np.array(high, source))
    return anp.astype(clipped, dtype)


def _xla_rem(x, span):
    """XLA's unsigned remainder: x % 0 is x (numpy's and aotc's is 0)."""
    return anp.where(span == 0, x, x % span)


def randint(key, shape: Sequence[int], minval, maxval, dtype=None) -> Tracer:
    """Integers uniform in [minval, maxval) (default int32), by JAX's algorithm: two
    draws of random bits reduced modulo the span (slightly biased when the span is not a
    power of two, as in JAX). maxval <= minval gives minval. Dtypes below 32 bits are
    sampled as int32 and converted, as JAX does."""
    k = _key(key, "randint")
    dt = _dtype(dtype, np.int32, ("int", "uint"), "randint")
    shape = _shape(shape, "randint")
    low, high = _integer_bound(minval, "randint minval"), _integer_bound(maxval, "randint maxval")
    _check_broadcast("randint", shape, minval=low, maxval=high)
    info = np.iinfo(dt)
    if info.bits < 32:
        i32 = np.dtype(np.int32)
        low = anp.clip(anp.astype(low, i32), np.int32(info.min), np.int32(info.max))
        high = anp.clip(anp.astype(high, i32), np.int32(info.min), np.int32(info.max + 1))
        return anp.astype(_randint(k, shape, low, high, i32), dt)
    return _randint(k, shape, low, high, dt)


def _randint(key: Tracer, shape: tuple, low, high, dtype: np.dtype) -> Tracer:
    width = np.iinfo(dtype).bits
    unsigned = UNSIGNED[width]
    high_dtype = np.dtype(high.dtype)
    dtype_max = np.asarray(min(np.iinfo(dtype).max, np.iinfo(high_dtype).max), high_dtype)
    high_out_of_range = anp.greater(high, dtype_max)
    low, high = _clip_to(low, dtype), _clip_to(high, dtype)
    k1, k2 = split(key)
    higher, lower = random_bits(k1, shape, width), random_bits(k2, shape, width)
    span = anp.astype(anp.subtract(high, low), unsigned)
    one = np.asarray(1, unsigned)
    span = anp.where(anp.less_equal(high, low), one, span)
    # maxval past the dtype's max: the span is one larger (wrapping to 0 for the full range).
    span = anp.where(anp.logical_and(high_out_of_range, anp.greater(high, low)), span + one, span)
    multiplier = _xla_rem(np.asarray(2 ** (width // 2), unsigned), span)
    multiplier = _xla_rem(multiplier * multiplier, span)
    offset = _xla_rem(_xla_rem(higher, span) * multiplier + _xla_rem(lower, span), span)
    return anp.add(low, anp.astype(offset, dtype))


# ---- permutation and choice ------------------------------------------------------------------

def _static_int(x) -> int | None:
    """x as a Python int if it is an integer scalar known at trace time, else None."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return int(x)
    if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iu":
        return int(x)
    return None


def _shuffle(key: Tracer, x: Tracer, axis: int) -> Tracer:
    """JAX's _shuffle: sort by fresh random uint32 keys, stably, in as many rounds as make
    a repeated key among x.size elements unlikely (one round up to 1625 elements)."""
    rounds = math.ceil(3 * math.log(max(1, x.size)) / math.log(2**32 - 1))
    for _ in range(rounds):
        key, subkey = split(key)
        order = anp.argsort(random_bits(subkey, x.shape, 32), axis=axis)
        x = anp.take_along_axis(x, order, axis=axis)
    return x


def permutation(key, x, axis: int = 0, independent: bool = False) -> Tracer:
    """A shuffled ``arange(x)`` (int32) for an integer ``x``; else ``x`` shuffled along
    ``axis``: every slice alike, or each one on its own with ``independent=True``."""
    k = _key(key, "permutation")
    n = _static_int(x)
    if n is not None:
        if n < 0:
            raise TracingError(
                f"permutation: x must be a non-negative integer or an array, got {n}"
            )
        return _shuffle(k, anp.arange(n, dtype=np.int32), 0)
    array = as_tracer(x, "permutation x")
    if array.ndim == 0:
        raise TracingError(
            f"permutation: x must be an integer known at trace time or an array of at least "
            f"one dimension, got {_describe(x)}"
        )
    axis = normalize_axis(axis, array.ndim, "permutation")
    if independent or array.ndim == 1:
        return _shuffle(k, array, axis)
    order = _shuffle(k, anp.arange(array.shape[axis], dtype=np.int32), 0)
    return anp.take(array, order, axis=axis)


def choice(key, a, shape: Sequence[int] = (), replace: bool = True, p=None,
           axis: int = 0) -> Tracer:
    """``shape`` samples of ``arange(a)`` (an integer ``a``) or of ``a``'s slices along
    ``axis``, with or without replacement, as JAX draws them (randint, or the first of a
    permutation). Weights ``p`` are not supported yet."""
    k = _key(key, "choice")
    if not isinstance(shape, (tuple, list)):
        raise TracingError(f"choice: shape must be a sequence of ints, got {shape!r}")
    shape = _shape(shape, "choice")
    if p is not None:
        raise UnsupportedOpError("choice: weights p are not supported yet; draw with "
                                 "aotc.random.uniform and searchsorted-like code instead")
    n = _static_int(a)
    array = None if n is not None else as_tracer(a, "choice a")
    if array is not None:
        if array.ndim == 0:
            raise TracingError(f"choice: a must be an integer known at trace time or an "
                               f"array, got {_describe(a)}")
        axis = normalize_axis(axis, array.ndim, "choice")
        n = array.shape[axis]
    draws = math.prod(shape)
    if draws == 0:
        return anp.zeros(shape, np.int32 if array is None else array.dtype)
    if n <= 0:
        raise TracingError(f"choice: a must be greater than 0 unless no samples are taken, got {n}")
    if not replace and draws > n:
        raise TracingError(
            f"choice: cannot take a larger sample (size {draws}) than the population (size "
            f"{n}) when replace=False"
        )
    if replace:
        indices = randint(k, shape, 0, n)
        result = indices if array is None else anp.take(array, indices, axis=axis)
    else:
        shuffled = permutation(k, n if array is None else array, axis)
        result = shuffled[(slice(None),) * (0 if array is None else axis) + (slice(draws),)]
    final = shape if array is None else array.shape[:axis] + shape + array.shape[axis + 1:]
    return anp.reshape(result, final)


# Outside a trace each sampler runs eagerly (aotc/eager.py), with the bits it has under jit.
make_public("random", globals(), __all__)


def __getattr__(name: str):
    """A name aotc does not define: an AttributeError saying so (aotc/namespaces.py)."""
    raise _namespaces.missing_name('aotc.random', name)
