"""Unsigned integer dtypes (uint8, uint16, uint32, uint64) against numpy: every ufunc and
operator over every pair of edge values (0, 1, max, max - 1, ...), power, weak Python
scalars, reductions, casts to and from every dtype, and mixed signed/unsigned/float
promotion. Integer results must be equal; float ones use conftest.py's tolerances.

One compiled function per unsigned dtype holds the elementwise ops; reductions, casts
and mixed promotion are one compiled function each, for all dtypes at once.
"""

from __future__ import annotations

import numpy as np

import aotc
import aotc.numpy as anp

from .conftest import (
    DTYPES,
    UNSIGNED,
    assert_all,
    compare_ops,
    cross,
    jit_call,
    param_dtypes,
    sample,
)
from .test_elementwise import BINARY, OPERATORS, POWER, _cast_extras, _cast_sources, unary_ops
from .test_reductions import reduction_ops

# float32 sin/cos/tan of 65535 hit IREE's range reduction (see test_elementwise.py's
# test_float32_trig_large_arguments): uint16 computes them in float32.
LARGE_TRIG_ARGUMENT = {"uint16": ("sin", "cos", "tan")}

# Weak Python scalars: they take the array's unsigned dtype, so x - 1 wraps at 0.
SCALARS = {
    "x + 1": lambda m, x: x + 1,
    "x - 1": lambda m, x: x - 1,
    "1 - x": lambda m, x: 1 - x,
    "x * 3": lambda m, x: x * 3,
    "7 // x": lambda m, x: 7 // x,
    "x // 3": lambda m, x: x // 3,
    "x % 3": lambda m, x: x % 3,
    "200 % x": lambda m, x: 200 % x,
    "x >> 1": lambda m, x: x >> 1,
    "x << 1": lambda m, x: x << 1,
    "x * 0.5": lambda m, x: x * 0.5,
    "x > 127": lambda m, x: x > 127,
    "maximum(x, 0)": lambda m, x: m.maximum(x, 0),
    "minimum(x, 2)": lambda m, x: m.minimum(x, 2),
    "where(x > 2, x, 1)": lambda m, x: m.where(x > 2, x, 1),
    "clip(x, 1, 200)": lambda m, x: m.clip(x, 1, 200),
}


# uint16 and uint32 run the float functions' conversions through a few of them: the float
# rules themselves are the float32/float64 ones (test_elementwise.py), and uint8 and uint64
# (the narrowest and the widest, whose max converts inexactly) run every one.
EVERY_UNARY = ("uint8", "uint64")
CONVERSION_PROBES = ("sqrt", "exp", "reciprocal", "true_divide", "arctan2")


def _unary_ops(dtype: str) -> dict:
    skip = LARGE_TRIG_ARGUMENT.get(dtype, ())
    ops = {n: op for n, op in unary_ops(dtype).items() if n not in skip}
    if dtype in EVERY_UNARY:
        return ops
    x = np.arange(3, dtype=dtype)
    with np.errstate(all="ignore"):
        return {n: op for n, op in ops.items()
                if n in CONVERSION_PROBES or np.asarray(op(np, x)).dtype.kind != "f"}


def _elementwise_ops(dtype: str) -> dict:
    """Every op as ``lambda m, x, y, e``: unary ops on x, binary ones on (x, y), power
    on (x, e) with small exponents, scalar ops on x."""
    ops = {n: (lambda m, x, y, e, op=op: op(m, x)) for n, op in _unary_ops(dtype).items()}
    ops.update({n: (lambda m, x, y, e, op=op: op(m, x, y))
                for n, op in {**BINARY, **OPERATORS}.items()})
    ops.update({n: (lambda m, x, y, e, op=op: op(m, x, e)) for n, op in POWER.items()})
    ops.update({n: (lambda m, x, y, e, op=op: op(m, x)) for n, op in SCALARS.items()})
    return ops


@param_dtypes(UNSIGNED)
def test_elementwise_edge_pairs(dtype):
    """Every pair of 0, 1, 2, 3, 7, 128, 255, max - 1, max: division and remainder by 0,
    logical right shift of values with the top bit set, unsigned comparisons and
    max/min, negative and 0 - 1 wrapping, conversions to float (uitofp) of max."""
    x, y = cross(dtype)
    assert x.max() == np.iinfo(dtype).max and x.min() == 0
    e = (y % 9).astype(dtype)  # small exponents: power wraps around but stays defined
    compare_ops(_elementwise_ops(dtype), x, y, e, where=f"elementwise {dtype}")


def test_reductions_all_unsigned_dtypes():
    """sum/prod (numpy: uint64 for uint8..uint32 alike), max/min, mean/var/std (float64),
    argmax/argmin, any/all, over every axis form; one input per dtype, with max values
    (so sums and products wrap as numpy's do)."""
    xs = [sample(d, (2, 3, 4), seed=21) for d in UNSIGNED]
    ops = {}
    for i, dtype in enumerate(UNSIGNED):
        for name, op in reduction_ops().items():
            ops[f"{name} {dtype}"] = lambda m, *args, op=op, i=i: op(m, args[i])
    got = compare_ops(ops, *xs, kinds="accumulate", where="unsigned reductions")
    for dtype in UNSIGNED:
        assert got[f"sum(axis=None) {dtype}"].dtype == np.uint64
        assert got[f"prod(axis=0) {dtype}"].dtype == np.uint64


def test_casts_to_and_from_unsigned():
    """astype from each unsigned dtype to every dtype, and from every dtype to
    uint16/uint32/uint64 (signed sources sign-extend, as C casts do; float sources are
    in range, where numpy defines the cast)."""
    targets = DTYPES + [d for d in UNSIGNED if d not in DTYPES]
    sources = {d: _cast_sources(d) for d in targets}
    names = list(sources)
    args = [a for d in names for a in (*sources[d], _cast_extras(d))]

    def casts(m, *arrays):
        out = {}
        for k, src in enumerate(names):
            signed, unsigned, extras = arrays[3 * k: 3 * k + 3]
            destinations = targets if src in UNSIGNED else [d for d in UNSIGNED if d not in DTYPES]
            for dst in destinations:
                x = (unsigned if (np.dtype(dst).kind == "u" and np.dtype(src).kind == "f")
                     else signed)
                out[f"{src}.astype({dst})"] = x.astype(dst) if m is np else m.astype(x, dst)
        return out

    with np.errstate(all="ignore"):
        want = {k: np.asarray(v) for k, v in casts(np, *args).items()}
    got = jit_call(lambda *a: casts(anp, *a), *args)
    assert_all(got, want, where="casts to and from unsigned")


# Mixed operands: numpy 2 promotes uint32 + int32 to int64, uint64 + int64 to float64,
# uint8 + int8 to int16, uint64 + float32 to float64.
MIXED_DTYPES = UNSIGNED + ["int8", "int32", "int64", "float32"]
MIXED_OPS = {
    "add": lambda m, a, b: a + b,
    "multiply": lambda m, a, b: a * b,
    "floor_divide": lambda m, a, b: m.floor_divide(a, b),
    "less": lambda m, a, b: a < b,
    "equal": lambda m, a, b: a == b,
    "maximum": lambda m, a, b: m.maximum(a, b),
    "where": lambda m, a, b: m.where(a > 1, a, b),
}


def _mixed_values(dtype: str) -> np.ndarray:
    """Six values per dtype with the extremes where integers differ by signedness."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return np.array([0, 1, -1, 3.5, 255, -128], dt)
    info = np.iinfo(dt)
    return np.array([0, 1, info.max, info.min, 3, info.max // 2 + 1], dt)


def test_mixed_signed_unsigned_promotion():
    """Every unsigned dtype against every other dtype of MIXED_DTYPES (both orders, so
    the loop dtype comes from numpy's table either way), with edge values."""
    values = [_mixed_values(d) for d in MIXED_DTYPES]
    ops = {}
    for i, a in enumerate(MIXED_DTYPES):
        for j, b in enumerate(MIXED_DTYPES):
            if i == j or (a not in UNSIGNED and b not in UNSIGNED):
                continue
            for name, op in MIXED_OPS.items():
                ops[f"{name}({a}, {b})"] = lambda m, *xs, op=op, i=i, j=j: op(m, xs[i], xs[j])
    got = compare_ops(ops, *values, where="mixed promotion")
    assert got["add(uint64, int64)"].dtype == np.float64
    assert got["add(uint32, int32)"].dtype == np.int64


def test_uint8_sum_is_uint64():
    """numpy sums and multiplies uint8 in uint64: 255 * 4 does not wrap at 8 bits."""
    x = np.full(4, 255, np.uint8)
    got = jit_call(lambda a: {"sum": anp.sum(a), "prod": anp.prod(a)}, x)
    assert_all(got, {"sum": np.sum(x), "prod": np.prod(x)}, where="uint8 sum/prod")
    assert got["sum"].dtype == got["prod"].dtype == np.uint64


def test_results_keep_unsigned_dtypes_at_the_abi():
    """Results come back with the unsigned dtype, on the host and through DLPack (IREE
    returns them as signless integers)."""
    xs = [np.array([0, 1, np.iinfo(d).max], d) for d in UNSIGNED]
    jitted = aotc.jit(lambda *a: [x + 1 for x in a])
    for x, result in zip(xs, jitted(*xs)):
        want = x + 1
        for host in (np.asarray(result), np.from_dlpack(result)):
            assert host.dtype == x.dtype
            np.testing.assert_array_equal(host, want)
