"""Pooling: ``nn.max_pool``/``avg_pool`` (flax's conventions) and ``lax.reduce_window``.

Windows are reduced in the canonical channel-last form of the convolutions
(``convolution.py``: its padding and window-map helpers): linalg's named pooling ops
for max and sum over one to three spatial dimensions, a ``linalg.generic`` with
reduction loops over the window otherwise (min, product, more dimensions, unsigned
types). ``reduce_window`` treats every dimension of its operand as a window dimension
of one image.
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import dtypes
from .._mlir import PARALLEL, REDUCTION, dim_map, linalg
from ..core import Tracer
from ..errors import TracingError, UnsupportedDtypeError, UnsupportedOpError
from ..lowering import add_work, empty, fill, generic, wrap
from . import elementwise as ew
from .arguments import as_tracer
from .convolution import (_exact_pads, _named, _out_size, _pad, _spatial_tuple, _window_map,
                          padding_pairs)
from .scalar import UFUNC_RULES
from .shape import reshape
from .static_args import known_value

EXPORTS: dict[str, list[str]] = {
    "numpy": [],
    "lax": ["reduce_window"],
    "nn": ["max_pool", "avg_pool"],
}

# Pooling over a window: input (N, S..., C), output (N, S..., C).
_POOL = {
    "max": {1: linalg.pooling_nwc_max, 2: linalg.pooling_nhwc_max, 3: linalg.pooling_ndhwc_max},
    "sum": {1: linalg.pooling_nwc_sum, 2: linalg.pooling_nhwc_sum, 3: linalg.pooling_ndhwc_sum},
}
# The scalar rule combining an accumulator with a window element, per pooling kind.
_POOL_COMBINE = {"max": "maximum", "sum": "add", "min": "minimum", "prod": "multiply"}
# lax.reduce_window's computations, by name (lax.max, jnp.maximum, operator.add, ...).
_REDUCE_WINDOW_KINDS = {"max": "max", "maximum": "max", "add": "sum", "min": "min",
                        "minimum": "min", "mul": "prod", "multiply": "prod"}


# ---- pooling ------------------------------------------------------------------------------

def _pool_windows(inputs, window_shape, strides, padding, where: str):
    """flax.linen.pool's conventions: inputs (batch..., window dims..., features), batch
    optional. Returns the input as canonical (N, S..., C), its batch shape, window, strides
    and (low, high) pads."""
    x = as_tracer(inputs, f"{where} inputs")
    if isinstance(window_shape, (int, np.integer)) or not builtins.all(
            isinstance(k, (int, np.integer)) and k >= 1 for k in window_shape):
        raise TracingError(f"{where}: window_shape must be a tuple of positive ints, "
                           f"got {window_shape!r}")
    window = tuple(int(k) for k in window_shape)
    rank = len(window)
    if x.ndim < rank + 1:
        raise TracingError(
            f"{where}: inputs of shape {x.shape} have too few dimensions for window_shape "
            f"{window}: expected (batch..., {rank} window dims, features)")
    strides = _spatial_tuple(strides, rank, "strides")
    batch_shape = x.shape[: x.ndim - rank - 1]
    n = int(np.prod(batch_shape, dtype=np.int64))
    x = reshape(x, (n,) + x.shape[len(batch_shape):])
    pads = padding_pairs(padding, x.shape[1:-1], window, strides, where)
    return x, batch_shape, window, strides, pads


def _pool(x: Tracer, window, strides, pads, kind: str, init) -> Tracer:
    """Reduces each window of canonical ``x`` (N, S..., C) with ``kind``, padding with ``init``."""
    rank = len(window)
    out_spatial = tuple(_out_size(n, 1, lo, hi, k, 1, s)
                        for n, k, s, (lo, hi) in zip(x.shape[1:-1], window, strides, pads))
    out_shape = (x.shape[0],) + out_spatial + (x.shape[-1],)
    if 0 in out_shape:
        return wrap(fill(out_shape, x.dtype, init), out_shape, x.dtype)
    pads = _exact_pads(x.shape[1:-1], (1,) * rank, pads, window, strides, out_spatial)
    x = _pad(x, pads, (1,) * rank, init)
    init_value = fill(out_shape, x.dtype, init)
    add_work(float(np.prod(out_shape, dtype=np.float64)) * float(np.prod(window)))
    named = _POOL.get(kind, {}).get(rank)
    if named is not None and dtypes.kind(x.dtype) in ("float", "int"):
        result = _named(named, [x.value, empty(window, x.dtype)], init_value, strides, (1,) * rank)
        return wrap(result, out_shape, x.dtype)
    n_loops = 2 * rank + 2
    out_dims = list(range(1, rank + 1))
    window_dims = list(range(rank + 2, 2 * rank + 2))
    x_map = _window_map(n_loops, out_dims, window_dims, strides, (1,) * rank, [0], [rank + 1])
    out_map = dim_map(n_loops, [0] + out_dims + [rank + 1])
    combine = UFUNC_RULES[_POOL_COMBINE[kind]]
    iterators = [PARALLEL] * (rank + 2) + [REDUCTION] * rank
    # The window operand only gives the window loops their sizes, as in the named ops.
    window_operand = (empty(window, x.dtype), dim_map(n_loops, window_dims))
    (result,) = generic([(x.value, x_map), window_operand], [(init_value, out_map)], iterators,
                        lambda v, _, acc: [combine(x.dtype, acc, v)])
    return wrap(result, out_shape, x.dtype)


def reduce_window(operand, init_value, computation, window_dimensions, window_strides,
                  padding, base_dilation=None, window_dilation=None) -> Tracer:
    """lax.reduce_window for the monoids JAX's pooling uses: ``computation`` is lax.max,
    lax.min, lax.add or lax.mul (or numpy's maximum, minimum, add, multiply), windows over
    every dimension of ``operand``, padded with ``init_value``.

    >>> x = np.arange(16.0, dtype=np.float32).reshape(1, 4, 4, 1)
    >>> pool = aotc.jit(lambda x: aotc.lax.reduce_window(
    ...     x, -np.inf, aotc.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"))
    >>> np.asarray(pool(x))[0, :, :, 0]
    array([[ 5.,  7.],
           [13., 15.]], dtype=float32)
    """
    where = "lax.reduce_window"
    x = as_tracer(operand, f"{where} operand")
    name = getattr(computation, "__name__", None)
    kind = _REDUCE_WINDOW_KINDS.get(name)
    if kind is None:
        raise UnsupportedOpError(
            f"{where}: computation {name or computation!r} is not supported; use lax.max, "
            f"lax.min, lax.add or lax.mul (the reductions pooling needs)")
    for label, value in (("base_dilation", base_dilation), ("window_dilation", window_dilation)):
        if value is not None and builtins.any(int(d) != 1 for d in value):
            raise UnsupportedOpError(f"{where}: {label} other than 1 is not supported, got "
                                     f"{tuple(value)}")
    window = _spatial_tuple(window_dimensions, x.ndim, "window_dimensions", where=where)
    strides = _spatial_tuple(window_strides, x.ndim, "window_strides", where=where)
    pads = padding_pairs(padding, x.shape, window, strides, where)
    # Every dimension is a window dimension: the canonical (N, S..., C) of one image.
    canonical = reshape(x, (1,) + x.shape + (1,))
    init = np.asarray(known_value(init_value, f"{where}: init_value")).item()
    y = _pool(canonical, window, strides, pads, kind, init)
    return reshape(y, y.shape[1:-1])


def _restore_batch(y: Tracer, batch_shape: tuple) -> Tracer:
    return reshape(y, batch_shape + y.shape[1:])


def _lowest(dtype: np.dtype):
    return -np.inf if dtypes.is_float(dtype) else np.iinfo(dtype).min


def max_pool(inputs, window_shape, strides=None, padding="VALID") -> Tracer:
    """flax.linen.max_pool: the maximum over each window.

    Args:
      inputs: (batch..., window dims..., features); the batch dims may be absent.
      window_shape: a tuple, one size per window dim.
      strides: a tuple or None (1 each).
      padding: 'SAME', 'SAME_LOWER', 'VALID' or (low, high) pairs; padding never wins.
    """
    x, batch_shape, window, strides, pads = _pool_windows(
        inputs, window_shape, strides, padding, "max_pool")
    if dtypes.kind(x.dtype) in ("uint", "bool"):
        raise UnsupportedDtypeError(
            f"max_pool: {x.dtype.name} inputs are not supported; convert with .astype(...)")
    return _restore_batch(_pool(x, window, strides, pads, "max", _lowest(x.dtype)), batch_shape)


def avg_pool(inputs, window_shape, strides=None, padding="VALID", count_include_pad=True) -> Tracer:
    """flax.linen.avg_pool: the mean over each window.

    With ``count_include_pad=True`` every window sum is divided by the window size; with
    False, by the number of input (not padding) elements the window covers.
    """
    x, batch_shape, window, strides, pads = _pool_windows(
        inputs, window_shape, strides, padding, "avg_pool")
    if dtypes.kind(x.dtype) in ("uint", "bool"):
        raise UnsupportedDtypeError(
            f"avg_pool: {x.dtype.name} inputs are not supported; convert with .astype(...)")
    total = _pool(x, window, strides, pads, "sum", 0)
    if count_include_pad:
        divisor = float(np.prod(window))  # a Python float: float inputs keep their dtype
    else:
        counts = _window_counts(x.shape[1:-1], window, strides, pads)
        divisor = counts.reshape((1,) + counts.shape + (1,)).astype(
            total.dtype if dtypes.is_float(total.dtype) else np.float64)
    return _restore_batch(ew.ufunc("divide", total, divisor), batch_shape)


def _window_counts(spatial, window, strides, pads) -> np.ndarray:
    """How many input elements each window covers (numpy, at trace time)."""
    per_axis = []
    for n, k, s, (lo, hi) in zip(spatial, window, strides, pads):
        m = _out_size(n, 1, lo, hi, k, 1, s)
        starts = np.arange(m) * s - lo
        per_axis.append(np.clip(starts + k, 0, n) - np.clip(starts, 0, n))
    counts = per_axis[0]
    for c in per_axis[1:]:
        counts = np.multiply.outer(counts, c)
    return counts
