"""``jax.lax``'s common array ops, with JAX's semantics: no type promotion (operands of
different dtypes are a TypeError, as in JAX; Python scalars take the array's dtype),
C-style integer ``div``/``rem``, ``round`` away from zero by default, ``pad`` with
interior and negative padding, ``dot_general``, multi-operand ``sort``, cumulative ops
with ``reverse=``.

Each is written with aotc.numpy's functions. Many lax names are numpy's under another
name, so the table ``LAX`` maps each public name to its function (several share numpy's
names, e.g. ``sort``, ``reshape``: the lax versions take lax's arguments);
``ops/lax_names.py`` exports the table, so here every name keeps its numpy meaning.
"""

from __future__ import annotations

import string

import numpy as np

from .. import dtypes
from ..core import Tracer, user_location
from ..errors import TracingError, UnsupportedDtypeError
from .arguments import as_operand, as_tracer, normalize_axes, normalize_axis
from .contraction import einsum
from .creation import arange, full, full_like
from .cumulative import inclusive_scan
from .elementwise import astype, elementwise, elementwise_where, ufunc
from .reductions import all as all_, any as any_, argmax, argmin
from .reductions import max as max_, min as min_, prod, sum as sum_
from .selection import take, take_along_axis
from .shape import broadcast_to, concatenate, expand_dims, flip, reshape, squeeze, transpose
from .sorting import argsort

# ---- no promotion ---------------------------------------------------------------------------


def _same_dtypes(name: str, *args) -> None:
    """lax's rule: array operands share one dtype (Python scalars adapt)."""
    seen = {}
    for a in args:
        o = as_operand(a, f"lax.{name}")
        if not getattr(o, "weak", False):
            seen.setdefault(np.dtype(o.dtype).name, None)
    if len(seen) > 1:
        raise UnsupportedDtypeError(
            f"lax.{name} requires arguments to have the same dtypes, got {', '.join(seen)} "
            f"(lax does not promote: convert with lax.convert_element_type first)")


def _lax_ufunc(name: str, numpy_name: str):
    def fn(*args):
        _same_dtypes(name, *args)
        return ufunc(numpy_name, *args)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"jax.lax.{name}: numpy.{numpy_name} without type promotion."
    return fn


# lax name -> numpy ufunc computing it (for lax's dtypes, the same function)
_UFUNC_NAMES = {
    "add": "add", "sub": "subtract", "mul": "multiply", "max": "maximum", "min": "minimum",
    "neg": "negative", "abs": "absolute", "sign": "sign", "floor": "floor", "ceil": "ceil",
    "sqrt": "sqrt", "cbrt": "cbrt", "exp": "exp", "exp2": "exp2", "log": "log",
    "log1p": "log1p", "expm1": "expm1", "tanh": "tanh", "sin": "sin", "cos": "cos",
    "tan": "tan", "asin": "arcsin", "acos": "arccos", "atan": "arctan", "atan2": "arctan2",
    "sinh": "sinh", "cosh": "cosh", "asinh": "arcsinh", "acosh": "arccosh",
    "atanh": "arctanh", "square": "square", "eq": "equal", "ne": "not_equal", "lt": "less",
    "le": "less_equal", "gt": "greater", "ge": "greater_equal", "bitwise_and": "bitwise_and",
    "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor", "bitwise_not": "invert",
    "shift_left": "left_shift", "shift_right_arithmetic": "right_shift",
    "is_finite": "isfinite", "nextafter": "nextafter", "pow": "power", "rem": "fmod",
}


def _div(x, y) -> Tracer:
    """jax.lax.div: true division of floats, integer division rounding towards zero."""
    _same_dtypes("div", x, y)
    if dtypes.is_float(as_operand(x, "lax.div").dtype):
        return ufunc("divide", x, y)
    # (x - fmod(x, y)) is a multiple of y: its floor division is exact
    return ufunc("floor_divide", ufunc("subtract", x, ufunc("fmod", x, y)), y)


def _reciprocal(x) -> Tracer:
    """jax.lax.reciprocal: 1 / x."""
    return ufunc("divide", np.array(1, as_tracer(x, "lax.reciprocal").dtype), x)


def _rsqrt(x) -> Tracer:
    """jax.lax.rsqrt: 1 / sqrt(x)."""
    return _reciprocal(ufunc("sqrt", x))


def _logistic(x) -> Tracer:
    """jax.lax.logistic: 1 / (1 + exp(-x))."""
    t = as_tracer(x, "lax.logistic")
    one = np.array(1, t.dtype)
    return ufunc("divide", one, ufunc("add", one, ufunc("exp", ufunc("negative", t))))


def _round(x, rounding_method=0) -> Tracer:
    """jax.lax.round: halves away from zero (``rounding_method=0``) or to even (1)."""
    if int(rounding_method) == 1:
        return ufunc("rint", x)
    t = as_tracer(x, "lax.round")
    whole = ufunc("trunc", t)
    half_or_more = ufunc("greater_equal", ufunc("absolute", ufunc("subtract", t, whole)), 0.5)
    return elementwise_where(half_or_more, ufunc("add", whole, ufunc("sign", t)), whole)


def _integer_pow(x, y: int) -> Tracer:
    """jax.lax.integer_pow: x ** y for a static int y, by multiplications."""
    if not isinstance(y, (int, np.integer)) or isinstance(y, bool):
        raise TracingError(f"lax.integer_pow: y must be a Python int, got {y!r}")
    t = as_tracer(x, "lax.integer_pow")
    result, base, e = None, t, abs(int(y))
    while e:
        if e & 1:
            result = base if result is None else ufunc("multiply", result, base)
        e >>= 1
        if e:
            base = ufunc("multiply", base, base)
    if result is None:
        return full_like(t, 1)
    return _reciprocal(result) if y < 0 else result


def _shift_right_logical(x, y) -> Tracer:
    """jax.lax.shift_right_logical: shifts in zeros (signed ints as their unsigned bits)."""
    _same_dtypes("shift_right_logical", x, y)
    t = as_tracer(x, "lax.shift_right_logical")
    unsigned = np.dtype(f"uint{dtypes.info(t.dtype).bits}")
    shift = astype(as_tracer(y, "lax.shift_right_logical"), unsigned)
    return astype(ufunc("right_shift", astype(t, unsigned), shift), t.dtype)


def _convert_element_type(operand, new_dtype) -> Tracer:
    """jax.lax.convert_element_type: ``astype``."""
    return astype(operand, new_dtype)


def _bitcast_same_width(t: Tracer, dt: np.dtype) -> Tracer:
    from .._mlir import arith

    if dt == t.dtype:
        return t
    return elementwise([t], [t.dtype], dt,
                       lambda v: arith.BitcastOp(dtypes.mlir_type(dt), v).result,
                       "lax.bitcast_convert_type")


def _bitcast_convert_type(operand, new_dtype) -> Tracer:
    """jax.lax.bitcast_convert_type: the same bits read as ``new_dtype``. A narrower dtype
    adds a trailing axis of the width ratio, a wider one takes that axis away, the bytes
    in little-endian order (as numpy's ``view`` on the CPUs aotc targets)."""
    t = as_tracer(operand, "lax.bitcast_convert_type")
    dt = dtypes.canonicalize(new_dtype, "lax.bitcast_convert_type new_dtype")
    if dt == t.dtype:
        return t
    if {dtypes.kind(t.dtype), dtypes.kind(dt)} & {"bool", "complex"}:
        raise UnsupportedDtypeError(
            f"lax.bitcast_convert_type: bool and complex values need the operand and the new "
            f"dtype to match, got {t.dtype} to {dt}. Fix: use x.view(dtype), which handles them")
    a, b = dtypes.info(t.dtype).bits, dtypes.info(dt).bits
    if a == b:
        return _bitcast_same_width(t, dt)
    word = np.dtype(f"uint{max(a, b)}")
    if a > b:  # each element becomes a // b narrower ones, the lowest bits first
        u = _bitcast_same_width(t, word)
        parts = [astype(ufunc("right_shift", u, word.type(j * b)), f"uint{b}")
                 for j in range(a // b)]
        return _bitcast_same_width(concatenate([expand_dims(p, -1) for p in parts], -1), dt)
    if t.ndim == 0 or t.shape[-1] != b // a:
        raise TracingError(
            f"lax.bitcast_convert_type: {t.dtype} to the wider {dt} needs a last axis of "
            f"{b // a} elements, got shape {t.shape}")
    u = astype(_bitcast_same_width(t, np.dtype(f"uint{a}")), word)
    out = take(u, 0, axis=-1)
    for j in range(1, b // a):
        out = ufunc("bitwise_or", out, ufunc("left_shift", take(u, j, axis=-1), word.type(j * a)))
    return _bitcast_same_width(out, dt)


# ---- selection, clamping ---------------------------------------------------------------------

def _select(pred, on_true, on_false) -> Tracer:
    """jax.lax.select: ``on_true`` where ``pred``, else ``on_false``. As in JAX, the cases
    have one shape and dtype (no broadcasting; a Python scalar is a 0-d case), ``pred`` is
    a bool (or an integer 0/1, as ``select_n``) scalar or array of the cases' shape."""
    _same_dtypes("select", on_true, on_false)
    p = as_operand(pred, "lax.select pred")
    if dtypes.kind(p.dtype) not in ("bool", "int", "uint"):
        raise UnsupportedDtypeError(f"lax.select: pred must be a bool (or integer) scalar or "
                                    f"array, got {p.dtype}")
    shapes = [tuple(np.shape(c)) if not isinstance(c, Tracer) else c.shape
              for c in (on_true, on_false)]
    if shapes[0] != shapes[1]:
        raise TracingError(f"lax.select: the cases must have the same shapes, got {shapes}. "
                           f"Fix: broadcast them (lax.broadcast_in_dim), or use "
                           f"aotc.numpy.where, which broadcasts")
    p_shape = p.shape if isinstance(p, Tracer) else tuple(np.shape(p.value))
    if p_shape not in ((), shapes[0]):
        raise TracingError(f"lax.select: pred must be a scalar or have the cases' shape "
                           f"{shapes[0]}, got shape {p_shape}")
    if p.dtype != np.bool_:
        pred = ufunc("not_equal", pred, 0)
    return elementwise_where(pred, on_true, on_false)


def _select_n(which, *cases) -> Tracer:
    """jax.lax.select_n: ``cases[which]`` elementwise (``which`` bool for two cases, else
    an int32 array)."""
    if not cases:
        raise TracingError("lax.select_n: at least one case is required")
    _same_dtypes("select_n", *cases)
    out = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        chosen = (ufunc("logical_not", which) if i == 0 and len(cases) == 2
                  else ufunc("equal", which, i))
        out = elementwise_where(chosen, cases[i], out)
    return out


def _clamp(min, x, max) -> Tracer:  # noqa: A002 - lax's argument names
    """jax.lax.clamp(min, x, max): x limited to [min, max]."""
    _same_dtypes("clamp", min, x, max)
    return ufunc("minimum", ufunc("maximum", x, min), max)


# ---- shapes ----------------------------------------------------------------------------------

def _broadcast(operand, sizes) -> Tracer:
    """jax.lax.broadcast: new leading dimensions ``sizes``."""
    t = as_tracer(operand, "lax.broadcast")
    return broadcast_to(t, tuple(sizes) + t.shape)


def _broadcast_in_dim(operand, shape, broadcast_dimensions) -> Tracer:
    """jax.lax.broadcast_in_dim: operand dimension i becomes result dimension
    ``broadcast_dimensions[i]`` (size 1 or the result's size)."""
    t = as_tracer(operand, "lax.broadcast_in_dim")
    dims = tuple(broadcast_dimensions)
    if len(dims) != t.ndim or list(dims) != sorted(set(dims)):
        raise TracingError(f"lax.broadcast_in_dim: broadcast_dimensions must be increasing, "
                           f"one per operand dimension ({t.ndim}), got {dims}")
    placed = [1] * len(shape)
    for d, n in zip(dims, t.shape):
        if n not in (1, shape[d]):
            raise TracingError(f"lax.broadcast_in_dim: operand dimension of size {n} cannot "
                               f"go to result dimension {d} of size {shape[d]}")
        placed[d] = n
    return broadcast_to(reshape(t, tuple(placed)), tuple(shape))


def _iota(dtype, size: int) -> Tracer:
    """jax.lax.iota: 0, 1, ..., size - 1."""
    return arange(size, dtype=dtype)


def _broadcasted_iota(dtype, shape, dimension: int) -> Tracer:
    """jax.lax.broadcasted_iota: indices along ``dimension`` of an array of ``shape``."""
    dimension = normalize_axis(dimension, len(shape), "lax.broadcasted_iota")
    counting = tuple(n if d == dimension else 1 for d, n in enumerate(shape))
    return broadcast_to(reshape(arange(shape[dimension], dtype=dtype), counting), tuple(shape))


def _reshape(operand, new_sizes, dimensions=None) -> Tracer:
    """jax.lax.reshape: row-major reshape (after transposing by ``dimensions``)."""
    t = as_tracer(operand, "lax.reshape")
    if dimensions is not None:
        t = transpose(t, tuple(dimensions))
    return reshape(t, tuple(new_sizes))


def _rev(operand, dimensions) -> Tracer:
    """jax.lax.rev: reverses the given dimensions."""
    return flip(operand, axis=tuple(dimensions))


def _slice(operand, start_indices, limit_indices, strides=None) -> Tracer:
    """jax.lax.slice: ``operand[start:limit:stride]`` in every dimension."""
    t = as_tracer(operand, "lax.slice")
    strides = strides or (1,) * t.ndim
    if not len(start_indices) == len(limit_indices) == len(strides) == t.ndim:
        raise TracingError(f"lax.slice: start_indices, limit_indices and strides need one "
                           f"entry per dimension ({t.ndim})")
    bounds = zip(start_indices, limit_indices, strides)
    return t[tuple(slice(s, e, k) for s, e, k in bounds)]


def _slice_in_dim(operand, start_index, limit_index, stride=1, axis=0) -> Tracer:
    """jax.lax.slice_in_dim: a slice along one axis."""
    t = as_tracer(operand, "lax.slice_in_dim")
    axis = normalize_axis(axis, t.ndim, "lax.slice_in_dim")
    return t[(slice(None),) * axis + (slice(start_index, limit_index, stride),)]


def _index_in_dim(operand, index, axis=0, keepdims=True) -> Tracer:
    """jax.lax.index_in_dim: one index along an axis (kept as size 1 with ``keepdims``)."""
    t = as_tracer(operand, "lax.index_in_dim")
    axis = normalize_axis(axis, t.ndim, "lax.index_in_dim")
    index = int(index) % t.shape[axis] if t.shape[axis] else int(index)
    out = _slice_in_dim(t, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, axis)


def _concatenate(operands, dimension) -> Tracer:
    """jax.lax.concatenate: join along ``dimension`` (same dtypes)."""
    _same_dtypes("concatenate", *operands)
    return concatenate(list(operands), axis=dimension)


def _pad(operand, padding_value, padding_config) -> Tracer:
    """jax.lax.pad: per dimension ``(low, high, interior)`` padding with
    ``padding_value``; negative low/high crop. One gather and one select."""
    t = as_tracer(operand, "lax.pad")
    _same_dtypes("pad", t, padding_value)
    if len(padding_config) != t.ndim:
        raise TracingError(f"lax.pad: padding_config needs one (low, high, interior) per "
                           f"dimension ({t.ndim}), got {len(padding_config)}")
    sources = []
    for n, (low, high, interior) in zip(t.shape, padding_config):
        if interior < 0:
            raise TracingError(f"lax.pad: interior padding must be non-negative, got {interior}")
        size = low + high + (n + (n - 1) * interior if n else 0)
        if size < 0:
            raise TracingError(f"lax.pad: padding {low, high, interior} of a dimension of "
                               f"size {n} leaves a negative size {size}")
        position = np.arange(size) - low
        hit = (position >= 0) & (position % (interior + 1) == 0)
        source = np.where(hit, position // (interior + 1), -1)
        sources.append(np.where(source < n, source, -1))
    grids = np.meshgrid(*sources, indexing="ij") if sources else []
    inside = np.logical_and.reduce([g >= 0 for g in grids]) if grids else np.array(True)
    if inside.size == 0 or t.size == 0:
        return full(inside.shape, padding_value, t.dtype)
    flat = np.ravel_multi_index([np.maximum(g, 0) for g in grids], t.shape) if grids else 0
    gathered = take(reshape(t, (-1,)), np.asarray(flat))
    return elementwise_where(inside, gathered, padding_value)


# ---- contractions ----------------------------------------------------------------------------

def _dot_general(lhs, rhs, dimension_numbers, precision=None,
                 preferred_element_type=None) -> Tracer:
    """jax.lax.dot_general: contract ``(lhs_contracting, rhs_contracting)`` dimensions
    over ``(lhs_batch, rhs_batch)`` ones; the result is batch, lhs free, rhs free."""
    x, y = as_tracer(lhs, "lax.dot_general lhs"), as_tracer(rhs, "lax.dot_general rhs")
    if preferred_element_type is None:
        _same_dtypes("dot_general", x, y)
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter(string.ascii_letters)
    left = [next(letters) for _ in range(x.ndim)]
    right = [None] * y.ndim
    for a, b in zip(tuple(lc) + tuple(lb), tuple(rc) + tuple(rb)):
        right[b] = left[a]
    right = [r or next(letters) for r in right]
    batch = [left[a] for a in lb]
    free_left = [c for i, c in enumerate(left) if i not in tuple(lc) + tuple(lb)]
    free_right = [c for i, c in enumerate(right) if i not in tuple(rc) + tuple(rb)]
    spec = f"{''.join(left)},{''.join(right)}->{''.join(batch + free_left + free_right)}"
    if preferred_element_type is not None:
        dt = dtypes.canonicalize(preferred_element_type, "lax.dot_general")
        x, y = astype(x, dt), astype(y, dt)
    return einsum(spec, x, y)


def _dot(lhs, rhs, precision=None, preferred_element_type=None) -> Tracer:
    """jax.lax.dot: vector/matrix products of 1-d and 2-d arrays."""
    x, y = as_tracer(lhs, "lax.dot lhs"), as_tracer(rhs, "lax.dot rhs")
    if x.ndim not in (1, 2) or y.ndim not in (1, 2):
        raise TracingError(f"lax.dot: operands must be 1-d or 2-d, got shapes {x.shape} and "
                           f"{y.shape}")
    return _dot_general(x, y, (((x.ndim - 1,), (0,)), ((), ())), precision,
                        preferred_element_type)


# ---- reductions, cumulative ops, sorting -----------------------------------------------------

def _reduction(name: str, reduce):
    def fn(operand, axes) -> Tracer:
        t = as_tracer(operand, f"lax.{name}")
        axis = normalize_axes(tuple(axes), t.ndim, f"lax.{name}")
        if reduce in (sum_, prod):  # lax keeps the dtype (numpy widens small ints)
            return reduce(t, axis=axis, dtype=t.dtype)
        return reduce(t, axis=axis)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"jax.lax.{name}: reduces ``axes`` (a tuple of dimensions)."
    return fn


def _arg_reduction(name: str, reduce):
    def fn(operand, axis: int, index_dtype) -> Tracer:
        return astype(reduce(operand, axis=axis), index_dtype)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"jax.lax.{name}: the index along ``axis``, as ``index_dtype``."
    return fn


# (numpy ufunc combining neighbours, identity by dtype kind) of each cumulative op
_SCANS = {
    "cumsum": ("add", lambda dt: 0), "cumprod": ("multiply", lambda dt: 1),
    "cummax": ("maximum", lambda dt: -np.inf if dtypes.is_float(dt) else (
        False if dt == np.bool_ else np.iinfo(dt).min)),
    "cummin": ("minimum", lambda dt: np.inf if dtypes.is_float(dt) else (
        True if dt == np.bool_ else np.iinfo(dt).max)),
    "cumlogsumexp": ("logaddexp", lambda dt: -np.inf),
}


def _scan(name: str):
    combine, identity = _SCANS[name]

    def fn(operand, axis: int = 0, reverse: bool = False) -> Tracer:
        t = as_tracer(operand, f"lax.{name}")
        if name == "cumlogsumexp" and not dtypes.is_float(t.dtype):
            raise UnsupportedDtypeError(f"lax.cumlogsumexp: needs a float array, got {t.dtype}")
        axis = normalize_axis(axis, t.ndim, f"lax.{name}")
        x = flip(t, axis=axis) if reverse else t
        out = inclusive_scan(x, axis, combine, identity(t.dtype))
        return flip(out, axis=axis) if reverse else out

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"jax.lax.{name}: inclusive {combine} along ``axis`` (``reverse``: from the end)."
    return fn


def _sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """jax.lax.sort: sorts one array, or a tuple of same-shape arrays by their first
    ``num_keys`` (lexicographically, stable), NaNs last."""
    operands = list(operand) if isinstance(operand, (tuple, list)) else [operand]
    arrays = [as_tracer(o, "lax.sort operand") for o in operands]
    if len({a.shape for a in arrays}) != 1:
        raise TracingError(f"lax.sort: operands must have one shape, got "
                           f"{[a.shape for a in arrays]}")
    if not 1 <= num_keys <= len(arrays):
        raise TracingError(f"lax.sort: num_keys must be from 1 to the number of operands "
                           f"({len(arrays)}), got {num_keys}")
    axis = normalize_axis(dimension, arrays[0].ndim, "lax.sort")
    order = argsort(arrays[num_keys - 1], axis=axis, stable=True)
    for key in reversed(arrays[:num_keys - 1]):  # least significant key first
        order = take_along_axis(order, argsort(take_along_axis(key, order, axis), axis=axis,
                                               stable=True), axis)
    out = [take_along_axis(a, order, axis) for a in arrays]
    return tuple(out) if isinstance(operand, (tuple, list)) else out[0]


def _sort_key_val(keys, values, dimension=-1, is_stable=True):
    """jax.lax.sort_key_val: ``keys`` sorted, ``values`` in the same order."""
    return _sort((keys, values), dimension, is_stable, num_keys=1)


def _full(shape, fill_value, dtype=None) -> Tracer:
    """jax.lax.full: an array of ``shape`` filled with ``fill_value``."""
    return full(tuple(shape), fill_value, dtype)


def _full_like(x, fill_value, dtype=None, shape=None) -> Tracer:
    """jax.lax.full_like: ``full`` with ``x``'s shape and dtype unless given."""
    return full_like(x, fill_value, dtype=dtype, shape=shape)


def _stop_gradient(x):
    """jax.lax.stop_gradient: ``x``, a constant to differentiation (every array leaf of a
    pytree; non-float arrays pass as they are)."""
    from .. import tree_util
    from ..passes.autodiff.stop_gradient import stop_gradient

    def one(leaf):
        t = as_tracer(leaf, "lax.stop_gradient")
        if np.dtype(t.dtype).kind not in "fc":
            return t
        with user_location():
            return Tracer(stop_gradient(t.value), t.shape, t.dtype, t._trace, weak=t.weak)

    return tree_util.tree_map(one, x)


def _named(name: str, fn):
    fn.__name__ = fn.__qualname__ = name
    return fn


LAX = {
    **{name: _lax_ufunc(name, numpy_name) for name, numpy_name in _UFUNC_NAMES.items()},
    **{name: _named(name, fn) for name, fn in {
        "div": _div, "reciprocal": _reciprocal, "rsqrt": _rsqrt, "logistic": _logistic,
        "round": _round, "integer_pow": _integer_pow,
        "shift_right_logical": _shift_right_logical,
        "convert_element_type": _convert_element_type,
        "bitcast_convert_type": _bitcast_convert_type, "select": _select,
        "select_n": _select_n, "clamp": _clamp, "broadcast": _broadcast,
        "broadcast_in_dim": _broadcast_in_dim, "iota": _iota,
        "broadcasted_iota": _broadcasted_iota, "reshape": _reshape, "rev": _rev,
        "slice": _slice, "slice_in_dim": _slice_in_dim, "index_in_dim": _index_in_dim,
        "concatenate": _concatenate, "pad": _pad, "dot_general": _dot_general, "dot": _dot,
        "sort": _sort, "sort_key_val": _sort_key_val, "full": _full, "full_like": _full_like,
        "stop_gradient": _stop_gradient,
        "squeeze": lambda array, dimensions: squeeze(array, tuple(dimensions)),
        "expand_dims": lambda array, dimensions: expand_dims(array, tuple(dimensions)),
        "transpose": lambda operand, permutation: transpose(operand, tuple(permutation)),
    }.items()},
    **{name: _reduction(name, fn) for name, fn in {
        "reduce_sum": sum_, "reduce_prod": prod, "reduce_max": max_, "reduce_min": min_,
        "reduce_and": all_, "reduce_or": any_}.items()},
    "argmax": _arg_reduction("argmax", argmax),
    "argmin": _arg_reduction("argmin", argmin),
    **{name: _scan(name) for name in _SCANS},
}
for _name in ("squeeze", "expand_dims", "transpose"):
    LAX[_name].__doc__ = f"jax.lax.{_name}: numpy's, the dimensions given as a sequence."
