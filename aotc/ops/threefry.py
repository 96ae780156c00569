"""threefry2x32, the counter-based hash behind ``aotc.random``, and the one
``linalg.generic`` that hashes a whole draw.

``threefry2x32`` builds the 20-round hash of Salmon et al. on i32 scalars (inside a
``linalg.generic`` body). ``hash_draw`` emits the draw: a ``linalg.generic`` (all
``parallel``) over the output shape whose only inputs are the key's two words as 0-d
tensors, broadcast by the empty indexing map ``(d0, ...) -> ()``; its body reads the
element's row-major counter with ``linalg.index`` (``arith.muli``/``addi`` on ``index``,
``arith.index_castui`` to i32), hashes it with i32 ``arith.addi``, ``xori``, ``ori``,
``shli`` and ``shrui``, and hands the two output words to a ``Finish`` callback that
makes the element (``bits_of_width``: JAX's random bits of 8 to 64 bits; ``unit_floats``:
floats in [0, 1)). ``fma`` is ``math.fma`` as an elementwise op, for the samplers that
must round ``a * b + c`` once, as XLA's CPU code does. ``aotc.random`` builds keys,
argument checks and JAX's samplers on these.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Callable, Sequence

import numpy as np

from .. import dtypes
from .._mlir import PARALLEL, arith, dim_map, index_constant, ir
from .._mlir import math as mlir_math
from ..core import Tracer
from ..errors import UnsupportedOpError
from ..lowering import add_work, empty, generic, loop_index, wrap
from . import elementwise as ew
from .arguments import as_operand
from .scalar import const

U32 = np.dtype(np.uint32)
UNSIGNED = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: U32, 64: np.dtype(np.uint64)}

# ---- threefry2x32 on scalars ---------------------------------------------------------------

# Rotation amounts of the 20 rounds (four per group, groups alternate) and the key
# schedule's parity constant: Salmon et al., "Parallel random numbers: as easy as 1, 2,
# 3" (SC 2011), as in JAX's _threefry2x32_lowering.
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KEY_PARITY = 0x1BD11BDA

# Integer ops per element of a draw (20 rounds of add, rotate, xor, plus key injection),
# for the work estimate that picks a driver.
_OPS_PER_ELEMENT = 120


def _u32(value: int) -> ir.Value:
    return const(value, U32)


def _add(a, b):
    return arith.AddIOp(a, b).result


def _xor(a, b):
    return arith.XOrIOp(a, b).result


def _rotate_left(x, r: int):
    left = arith.ShLIOp(x, _u32(r)).result
    return arith.OrIOp(left, arith.ShRUIOp(x, _u32(32 - r)).result).result


def _rotate_left_host(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


# The hash's four word operations, as MLIR ops on i32 scalars (inside a linalg.generic
# body) or as numpy operations on uint32 arrays (wrapping, as i32 addition does).
MLIR_WORDS = (_add, _xor, _rotate_left, _u32)
NUMPY_WORDS = (np.add, np.bitwise_xor, _rotate_left_host, np.uint32)


def threefry2x32(k1, k2, x1, x2, words=MLIR_WORDS):
    """The threefry2x32 hash of the counter words (x1, x2) under key (k1, k2): i32 scalars,
    or uint32 numpy arrays with ``words=NUMPY_WORDS`` (the same bits, on the host)."""
    add, xor, rotate_left, u32 = words
    ks = (k1, k2, xor(xor(k1, k2), u32(_KEY_PARITY)))
    x = [add(x1, ks[0]), add(x2, ks[1])]
    for group in range(5):
        for r in _ROTATIONS[group % 2]:
            x[0] = add(x[0], x[1])
            x[1] = xor(x[0], rotate_left(x[1], r))
        x[0] = add(x[0], ks[(group + 1) % 3])
        x[1] = add(add(x[1], ks[(group + 2) % 3]), u32(group + 1))
    return x[0], x[1]


def host_key_words(key: np.ndarray, counters: np.ndarray) -> np.ndarray:
    """``fold_in(key, c)`` for every counter ``c`` (uint32 ``counters``): the two hash
    words of ``(0, c)``, on the host, shape ``counters.shape + (2,)``. ``split(key, n)``
    is this for ``c = 0 .. n-1``."""
    k1, k2 = np.uint32(key[0]), np.uint32(key[1])
    counters = np.asarray(counters, np.uint32)
    b1, b2 = threefry2x32(k1, k2, np.zeros_like(counters), counters, NUMPY_WORDS)
    return np.stack([b1, b2], axis=-1)


# ---- the hashing linalg.generic ------------------------------------------------------------

Finish = Callable[[ir.Value, ir.Value], ir.Value]

# The counter of a draw of one element (shape ``()``) while ``counting`` is active: a
# sampler traced for one element of counter ``c`` and batched over ``c`` (aotc.vmap)
# draws a whole array of any size with one compiled program, the elements being those
# of a draw of that many elements (the counter is the row-major index).
_element_counter = contextvars.ContextVar("aotc_element_counter", default=None)


@contextlib.contextmanager
def counting(counter: Tracer):
    """Draws of one element use the 0-d uint32 ``counter`` as their counter."""
    token = _element_counter.set(counter)
    try:
        yield
    finally:
        _element_counter.reset(token)


def flat_index(shape: Sequence[int]) -> ir.Value:
    """The row-major index of the current element over the leading ``len(shape)`` loop
    dimensions, as the low counter word (i32)."""
    if not shape:
        return _u32(0)
    flat = None
    for d in range(len(shape)):
        term, stride = loop_index(d), math.prod(shape[d + 1:])
        if stride != 1:
            term = arith.MulIOp(term, index_constant(stride)).result
        flat = term if flat is None else arith.AddIOp(flat, term).result
    return arith.IndexCastUIOp(ir.IntegerType.get_signless(32), flat).result


def hash_draw(key: Tracer, shape: tuple, counted: int, out_dtype, finish: Finish,
              counter: Tracer | None = None) -> Tracer:
    """One linalg.generic over ``shape`` whose elements are ``finish(word1, word2)`` of the
    threefry hash of ``key`` and a counter: the row-major index over the first ``counted``
    dimensions (JAX's ``iota_2x32_shape``), or the 0-d uint32 ``counter`` if given."""
    if counter is None and counted == 0:
        counter = _element_counter.get()
    count = math.prod(shape[:counted])
    if count > 2**32:
        # The high counter word is 0 below; JAX counts up to 2**64.
        raise UnsupportedOpError(
            f"aotc.random: {count} values in one draw; at most 2**32 are supported"
        )
    rank = len(shape)
    scalars = [key[0], key[1]] + ([counter] if counter is not None else [])
    inputs = [(t.value, dim_map(rank, [])) for t in scalars]

    def body(k1, k2, *rest):
        low = rest[0] if counter is not None else flat_index(shape[:counted])
        return [finish(*threefry2x32(k1, k2, _u32(0), low))]

    out = empty(shape, out_dtype)
    outputs = [(out, dim_map(rank, list(range(rank))))]
    (result,) = generic(inputs, outputs, [PARALLEL] * rank, body)
    add_work(float(math.prod(shape)) * _OPS_PER_ELEMENT)
    return wrap(result, shape, out_dtype)


def bits_of_width(width: int) -> Finish:
    """JAX's partitionable random bits: both words xored (truncated below 32 bits), or
    word1:word2 as one 64-bit value."""
    if width == 64:
        i64 = ir.IntegerType.get_signless(64)

        def wide(b1, b2):
            high = arith.ShLIOp(arith.ExtUIOp(i64, b1).result, const(32, np.uint64)).result
            return arith.OrIOp(high, arith.ExtUIOp(i64, b2).result).result
        return wide
    if width == 32:
        return _xor
    narrow = ir.IntegerType.get_signless(width)
    return lambda b1, b2: arith.TruncIOp(narrow, _xor(b1, b2)).result


def random_bits(key: Tracer, shape: tuple, width: int) -> Tracer:
    """Uniform random bits of ``shape``, as unsigned integers of ``width`` bits."""
    return hash_draw(key, shape, len(shape), UNSIGNED[width], bits_of_width(width))


def unit_floats(key: Tracer, shape: tuple, dtype: np.dtype) -> Tracer:
    """Floats in [0, 1) from random mantissa bits under the exponent of 1.0, minus 1.0
    (JAX's ``_uniform``)."""
    finfo = np.finfo(dtype)
    width, mantissa = finfo.bits, finfo.nmant
    uint = UNSIGNED[width]
    one_bits = int(np.array(1.0, dtype).view(uint))
    to_bits = bits_of_width(width)
    float_type = dtypes.mlir_type(dtype)

    def finish(b1, b2):
        fraction = arith.ShRUIOp(to_bits(b1, b2), const(width - mantissa, uint)).result
        with_exponent = arith.OrIOp(fraction, const(one_bits, uint)).result
        in_one_two = arith.BitcastOp(float_type, with_exponent).result
        return arith.SubFOp(in_one_two, const(1.0, dtype)).result

    return hash_draw(key, shape, len(shape), dtype, finish)


def fma(a, b, c, dtype: np.dtype) -> Tracer:
    """``a * b + c`` rounded once (``math.fma``). XLA's CPU code contracts JAX's
    ``a * b + c`` into an fma; writing it explicitly gives those bits on every target
    instead of whatever each backend's contraction rules make of a multiply and an add."""
    operands = [as_operand(v, "fma") for v in (a, b, c)]
    return ew.elementwise(operands, [dtype] * 3, dtype,
                          lambda x, y, z: mlir_math.FmaOp(x, y, z).result, "fma")
