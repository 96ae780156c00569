"""The fuzzer's op table: one row per op, as source text over a module ``m``.

Each row gives the op as an expression over its operands (``{a}``, ``{b}``), the op's
error kind (``bounds.py``), which operands it accepts, and how to draw its parameters:
source fragments (axes, shifts, index arrays, dtypes) and, where the op needs one, a
fresh program input of a fitting shape (a matmul's right operand, a scatter's updates,
an index array). ``m`` is numpy or ``aotc.numpy``; ``lax`` and ``h`` are aotc.lax and
``helpers.AOTC`` under aotc, ``reference.LAX`` and ``helpers.NUMPY`` under numpy.
Anything numpy rejects for the drawn operands is redrawn, so rows need not filter
every dtype numpy refuses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]
MAX_ELEMENTS = 1 << 16


@dataclass(frozen=True)
class Op:
    name: str
    expr: str
    kind: str = "exact"
    arity: int = 1
    accepts: Callable[..., bool] = lambda *xs: True
    params: Callable[..., dict | None] | None = None  # (draw, *operands) -> fragments
    terms: Callable[..., int] | None = None  # summation length of a "linear" op
    needs_exact: bool = False  # a decision (cond's predicate) must not depend on rounding
    loose_zeros: bool = False  # the sign of a zero result depends on operand order


def _nd(k):
    return lambda x, *rest: np.ndim(x) >= k


def _floats(x, *rest):
    return np.asarray(x).dtype.kind == "f"


def _ints(x, *rest):
    return np.asarray(x).dtype.kind in "iu"


def _no_nan(x, *rest):
    return not (np.asarray(x).dtype.kind == "f" and np.isnan(x).any())


def _nonempty(k=1):
    return lambda x, *rest: np.ndim(x) >= k and np.size(x) > 0


def _axis(draw, x, allow_none=True):
    nd = np.ndim(x)
    choices = ([None] if allow_none else []) + list(range(-nd, nd))
    return choices[draw.rng.integers(len(choices))] if choices else None


def _reduction(name, expr, kind, **kw):
    def params(draw, x):
        return {"axis": repr(_axis(draw, x)), "keepdims": repr(bool(draw.rng.integers(2)))}
    return Op(name, expr, kind, params=params, terms=lambda x, p: max(np.size(x), 1), **kw)


def _unary(names, kind="exact", accepts=lambda *xs: True, **kw):
    return [Op(n, f"m.{n}({{a}})", kind, accepts=accepts, **kw) for n in names.split()]


def _binary(names, kind="exact", **kw):
    return [Op(n, f"m.{n}({{a}}, {{b}})", kind, arity=2, **kw) for n in names.split()]


def _matmul_params(draw, x):
    k = np.shape(x)[-1]
    n = int(draw.rng.choice([1, 3, 8, 17, 64]))
    shape = (k,) if draw.rng.integers(4) == 0 else (k, n)
    return {"w": draw.new_array(np.asarray(x).dtype, shape)}


def _einsum_params(draw, x):
    nd = np.ndim(x)
    letters = "ijk"[:nd]
    k = np.shape(x)[-1]
    w = draw.new_array(np.asarray(x).dtype, (k, 5))
    spec = f"{letters},{letters[-1]}z->{letters[:-1]}z"
    return {"spec": repr(spec), "w": w}


def _conv_params(draw, x):
    _, c, h, w = np.shape(x)
    kh, kw = int(draw.rng.integers(1, min(h, 3) + 1)), int(draw.rng.integers(1, min(w, 3) + 1))
    out_c = int(draw.rng.integers(1, 4))
    rhs = draw.new_array(np.asarray(x).dtype, (out_c, c, kh, kw))
    strides = (int(draw.rng.integers(1, 3)), int(draw.rng.integers(1, 3)))
    return {"rhs": rhs, "strides": repr(strides),
            "padding": repr(["VALID", "SAME"][draw.rng.integers(2)])}


def _index_array(draw, n, length):
    return draw.constant(draw.rng.integers(-n, n, size=length))


def _update_params(draw, x):
    """An index into ``x`` (int, slice with a step, integer array with repeats) and
    updates of the indexed shape: a fresh input, or a Python scalar."""
    n = np.shape(x)[0]
    form = draw.rng.integers(3)
    if form == 0:
        index, shape = str(int(draw.rng.integers(-n, n))), np.shape(x)[1:]
    elif form == 1:
        start, step = int(draw.rng.integers(0, n)), int(draw.rng.choice([1, 2, 3]))
        index, shape = f"np.s_[{start}::{step}]", (len(range(start, n, step)),) + np.shape(x)[1:]
    else:
        length = int(draw.rng.integers(1, 6))
        index, shape = _index_array(draw, n, length), (length,) + np.shape(x)[1:]
    if draw.rng.integers(3) == 0:
        value = draw.scalar(np.asarray(x).dtype)
    else:
        value = draw.new_array(np.asarray(x).dtype, shape)
    return {"index": index, "v": value}


def _take_params(draw, x):
    ax = _axis(draw, x, allow_none=False)
    n = np.shape(x)[ax]
    return {"idx": _index_array(draw, n, int(draw.rng.integers(0, 6))), "axis": repr(ax)}


def _take_along_params(draw, x):
    ax = _axis(draw, x, allow_none=False)
    shape = list(np.shape(x))
    shape[ax] = int(draw.rng.integers(1, 4))
    idx = draw.constant(draw.rng.integers(0, np.shape(x)[ax], size=shape))
    return {"idx": idx, "axis": repr(ax)}


def _mask_params(draw, x):
    return {"mask": draw.constant(draw.rng.integers(0, 2, size=np.shape(x)[:1]).astype(bool))}


def _perm_params(draw, x):
    return {"perm": repr(tuple(int(i) for i in draw.rng.permutation(np.ndim(x))))}


def _reshape_params(draw, x):
    shape = list(np.shape(x))
    if draw.rng.integers(2) and len(shape) >= 2:
        shape[:2] = [shape[0] * shape[1]]
    else:
        shape = shape + [1]
    if np.size(x) and draw.rng.integers(2):
        shape[int(draw.rng.integers(len(shape)))] = -1
    return {"shape": repr(tuple(shape))}


def _slice_params(draw, x):
    n = np.shape(x)[0]
    start, stop = sorted(int(i) for i in draw.rng.integers(-n - 2, n + 2, size=2))
    step = int(draw.rng.choice([1, 2, 3, -1, -2]))
    return {"s": f"{start}:{stop}:{step}"}


def _roll_params(draw, x):
    return {"shift": draw.static(), "axis": repr(_axis(draw, x))}


def _cast_params(draw, x):
    return {"dtype": repr(DTYPES[draw.rng.integers(len(DTYPES))])}


def _pad_params(draw, x):
    widths = tuple((int(draw.rng.integers(0, 3)), int(draw.rng.integers(0, 3)))
                   for _ in range(np.ndim(x)))
    return {"w": repr(widths), "mode": repr(["constant", "edge", "wrap"][draw.rng.integers(3)])}


def _half_size(draw, x):
    return {"half": str(np.size(x) // 2)}


def _scalar_operand(draw, x):
    return {"s": draw.scalar(np.asarray(x).dtype)}


def _shift_params(draw, x):
    bits = np.asarray(x).dtype.itemsize * 8
    return {"k": str(int(draw.rng.integers(0, bits)))}


def _power_params(draw, x):
    return {"e": repr(int(draw.rng.integers(0, 4)))}


def _triangle_params(draw, x):
    return {"k": repr(int(draw.rng.integers(-1, 2)))}


def _conv1d_params(draw, x):
    w = draw.new_array(np.asarray(x).dtype, (int(draw.rng.integers(1, min(np.size(x), 5) + 1)),))
    return {"w": w, "mode": repr(["full", "same", "valid"][draw.rng.integers(3)])}


OPS: list[Op] = [
    # elementwise, correctly rounded or exact
    *_unary("negative positive absolute square sqrt"),
    # numpy's integer reciprocal of 0 is C's undefined 1/0 (INT_MIN on x86): floats only
    *_unary("reciprocal", accepts=_floats),
    *_unary("floor ceil trunc rint sign isnan isinf isfinite logical_not", "discrete"),
    # a NaN's sign bit is unspecified (x86's 0/0 sets it, IREE's code need not): signbit
    # and copysign's sign operand observe it, so they take no NaNs
    *_unary("signbit", "discrete", accepts=_no_nan),
    Op("invert", "~{a}", "exact", accepts=lambda x, *r: np.asarray(x).dtype.kind in "biu"),
    # IREE's CPU code contracts a multiply feeding an add into one fma (numpy rounds the
    # product first): sums are within an ulp of their operands' magnitude, not exact
    *_binary("add subtract", "linear", terms=lambda x, p: 2),
    Op("copysign", "m.copysign({a}, {b})", arity=2, accepts=lambda x, y: _no_nan(y)),
    *_binary("multiply true_divide logical_and logical_xor bitwise_and bitwise_or "
             "bitwise_xor"),
    *_binary("maximum minimum fmax fmin", loose_zeros=True),
    *_binary("floor_divide remainder fmod", "discrete"),
    *_binary("less less_equal equal not_equal greater greater_equal", "discrete"),
    Op("x + s", "{a} + {s}", "linear", params=_scalar_operand, terms=lambda x, p: 2),
    Op("x * s", "{a} * {s}", params=_scalar_operand),
    Op("s - x", "{s} - {a}", "linear", params=_scalar_operand, terms=lambda x, p: 2),
    Op("x / s", "{a} / {s}", params=_scalar_operand),
    Op("x // s", "{a} // {s}", "discrete", params=_scalar_operand),
    Op("x % s", "{a} % {s}", "discrete", params=_scalar_operand),
    Op("maximum(x, s)", "m.maximum({a}, {s})", params=_scalar_operand, loose_zeros=True),
    Op("x < s", "{a} < {s}", "discrete", params=_scalar_operand),
    Op("x ** e", "{a} ** {e}", "rounded:2", params=_power_params),
    Op("x << k", "{a} << {k}", accepts=_ints, params=_shift_params),
    Op("x >> k", "{a} >> {k}", accepts=_ints, params=_shift_params),
    Op("where", "m.where({a} > 0, {a}, {b})", arity=2),
    Op("clip", "m.clip({a}, -2, 3)", loose_zeros=True),
    # math functions
    *_unary("exp exp2 expm1 log log2 log10 log1p sin cos tan arcsin arccos arctan sinh "
            "cosh tanh arcsinh arccosh arctanh cbrt", "rounded:8"),
    *_binary("arctan2 hypot", "rounded:8"),
    # max(a, b) + log1p(exp(-|a - b|)) cancels where the result is near 0: a few ulps of
    # the operands, not of the result (program 61763: 16 ulps of 0.0135)
    *_binary("logaddexp", "linear", terms=lambda x, p: 8),
    *_binary("power", "rounded:2"),  # passes/libm/power.py: within an ulp of numpy
    # reductions
    _reduction("sum", "m.sum({a}, axis={axis}, keepdims={keepdims})", "linear"),
    _reduction("prod", "m.prod({a}, axis={axis}, keepdims={keepdims})", "product"),
    _reduction("mean", "m.mean({a}, axis={axis}, keepdims={keepdims})", "mean"),
    _reduction("max", "m.max({a}, axis={axis}, keepdims={keepdims})", "max",
               accepts=_nonempty()),
    _reduction("min", "m.min({a}, axis={axis}, keepdims={keepdims})", "max",
               accepts=_nonempty()),
    _reduction("any", "m.any({a}, axis={axis}, keepdims={keepdims})", "discrete"),
    _reduction("all", "m.all({a}, axis={axis}, keepdims={keepdims})", "discrete"),
    Op("argmax", "m.argmax({a}, axis={axis})", "discrete", accepts=_nonempty(),
       params=lambda d, x: {"axis": repr(_axis(d, x))}),
    Op("argmin", "m.argmin({a}, axis={axis})", "discrete", accepts=_nonempty(),
       params=lambda d, x: {"axis": repr(_axis(d, x))}),
    Op("cumsum", "m.cumsum({a}, axis={axis})", "linear",
       params=lambda d, x: {"axis": repr(_axis(d, x))}, terms=lambda x, p: max(np.size(x), 1)),
    # contractions and convolutions
    Op("matmul", "{a} @ {w}", "linear", accepts=lambda x, *r: 1 <= np.ndim(x) <= 3,
       params=_matmul_params, terms=lambda x, p: np.shape(x)[-1] + 1),
    Op("einsum", "m.einsum({spec}, {a}, {w})", "linear",
       accepts=lambda x, *r: 1 <= np.ndim(x) <= 3, params=_einsum_params,
       terms=lambda x, p: np.shape(x)[-1] + 1),
    Op("convolve", "m.convolve({a}, {w}, mode={mode})", "linear",
       accepts=lambda x, *r: np.ndim(x) == 1 and np.size(x) > 0, params=_conv1d_params,
       terms=lambda x, p: 6),
    Op("conv", "lax.conv({a}, {rhs}, {strides}, {padding})", "linear",
       accepts=lambda x, *r: np.ndim(x) == 4 and np.size(x) > 0 and _floats(x),
       params=_conv_params, terms=lambda x, p: np.shape(x)[1] * 9 + 1),
    # updates, scatters and gathers
    Op("at.set", "h.at_set({a}, {index}, {v})", "move", accepts=_nonempty(), params=_update_params),
    Op("at.add", "h.at_add({a}, {index}, {v})", "linear", accepts=_nonempty(),
       params=_update_params, terms=lambda x, p: 6),
    Op("at.multiply", "h.at_multiply({a}, {index}, {v})", "product", accepts=_nonempty(),
       params=_update_params, terms=lambda x, p: 6),
    Op("at.min", "h.at_min({a}, {index}, {v})", "max", accepts=_nonempty(),
       params=_update_params, loose_zeros=True),
    Op("at.max", "h.at_max({a}, {index}, {v})", "max", accepts=_nonempty(),
       params=_update_params, loose_zeros=True),
    Op("take", "m.take({a}, {idx}, axis={axis})", "move", accepts=_nonempty(),
       params=_take_params),
    Op("x[idx]", "{a}[{idx}]", "move", accepts=_nonempty(),
       params=lambda d, x: {"idx": _index_array(d, np.shape(x)[0], int(d.rng.integers(0, 6)))}),
    Op("take_along_axis", "m.take_along_axis({a}, {idx}, axis={axis})", "move",
       accepts=_nonempty(), params=_take_along_params),
    Op("x[mask]", "{a}[{mask}]", "move", accepts=_nd(1), params=_mask_params),
    # data movement
    Op("transpose", "m.transpose({a}, {perm})", "move", params=_perm_params),
    Op("reshape", "m.reshape({a}, {shape})", "move", params=_reshape_params),
    Op("x[s]", "{a}[{s}]", "move", accepts=_nd(1), params=_slice_params),
    Op("x[..., 0]", "{a}[..., 0]", "move",
       accepts=lambda x, *r: np.ndim(x) >= 1 and np.shape(x)[-1] > 0),
    Op("x[None]", "{a}[None]", "move"),
    Op("flip", "m.flip({a}, axis={axis})", "move", params=lambda d, x: {"axis": repr(_axis(d, x))}),
    Op("roll", "m.roll({a}, {shift}, axis={axis})", "move", params=_roll_params),
    Op("concatenate", "m.concatenate([{a}, {a} * 2], axis={axis})", "exact", accepts=_nd(1),
       params=lambda d, x: {"axis": repr(_axis(d, x, allow_none=False))}),
    Op("stack", "m.stack([{a}, -{a}])", "exact"),
    Op("broadcast_to", "m.broadcast_to({a}, (3,) + {a}.shape)", "move"),
    Op("tile", "m.tile({a}, 2)", "move", accepts=lambda x, *r: np.size(x) <= 4096),
    Op("repeat", "m.repeat({a}, 2, axis={axis})", "move",
       params=lambda d, x: {"axis": repr(_axis(d, x))}),
    Op("pad", "m.pad({a}, {w}, mode={mode})", "move", accepts=_nonempty(1), params=_pad_params),
    Op("tril", "m.tril({a}, {k})", "move", accepts=_nd(2), params=_triangle_params),
    Op("diagonal", "m.diagonal({a})", "move", accepts=_nd(2)),
    Op("sort", "m.sort({a}, axis={axis})", "max", accepts=_nd(1), loose_zeros=True,
       params=lambda d, x: {"axis": repr(_axis(d, x, allow_none=False))}),
    Op("argsort", "m.argsort({a}, axis=-1, kind='stable')", "discrete", accepts=_nd(1)),
    Op("astype", "{a}.astype({dtype})", "exact", params=_cast_params),
    # control flow
    Op("cond", "lax.cond(m.sum({a} > 0) > {half}, lambda t: t * 2, lambda t: t - 1, {a})",
       "linear", params=_half_size, needs_exact=True, terms=lambda x, p: 2,
       accepts=lambda x, *r: np.asarray(x).dtype.kind != "b"),
    Op("fori_loop", "lax.fori_loop(0, 3, lambda i, c: c * 3 - 1, {a})", "linear",
       terms=lambda x, p: 60,
       accepts=lambda x, *r: np.asarray(x).dtype.kind != "b"),
    Op("scan", "lax.scan(lambda c, x: (c + x, c * 2), {a}[0] * 0, {a})[1]", "linear",
       accepts=_nonempty(1), terms=lambda x, p: np.shape(x)[0] + 1),
    Op("while_loop", "lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2 + 1), "
       "(0, {a}))[1]", "linear", accepts=lambda x, *r: np.asarray(x).dtype.kind != "b",
       terms=lambda x, p: 30),
]
OPS_BY_NAME = {op.name: op for op in OPS}
assert len(OPS_BY_NAME) == len(OPS), "op names must be unique"
