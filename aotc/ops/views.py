"""numpy's in-place semantics on traced arrays: views, ``a[idx] = v``, ``a += b``.

A traced array is a reference whose value a write replaces (``Tracer.assign``): the
write becomes the functional update it stands for (``tensor.insert_slice``, a scatter, a
select, a whole new value), so donation, vmap and every target work on the result as on
any other program. Views are what numpy makes views of: basic indexing (ints, slices,
``None``, ``...``, traced integer scalars), transposes (``.T``, ``transpose``,
``swapaxes``, ``moveaxis``) and reshapes (``reshape``, ``ravel``, ``squeeze``,
``expand_dims``) where numpy returns a view. A view remembers how it is read from its base
and how a new value of it is written back (``core.View``), so a write through a view
updates its base and every other view of it, and a later read sees it. Whether a reshape
is a view is numpy's own answer: each traced array keeps numpy's strides (in elements of
its root's row-major layout), and numpy reshapes a stand-in array with those strides and
no data (``np.reshape(..., copy=False)`` fails exactly where numpy would copy). Every
other function returns a new array, never one of its inputs, so a write into a result
never reaches an argument (``returns_new_arrays``).
"""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from .. import dtypes
from ..core import Tracer, View, check_usable, current_trace
from ..errors import TracingError, UnsupportedOpError
from . import complex_parts, lax_ops
from . import elementwise as ew
from . import indexing
from . import shape as shape_ops
from .arguments import as_tracer
from .contraction import matmul
from .cumulative import cumsum
from .rearrange import resize
from .selection import take
from .updates import update

# ---- numpy's strides on a stand-in array ------------------------------------------------


def _stand_in(x: Tracer) -> np.ndarray:
    """An array with x's shape and numpy strides over one byte: numpy's view functions
    run on it without touching memory (element strides = byte strides, int8)."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), shape=x.shape,
                                           strides=x.element_strides)


def _make_view(base: Tracer, out: Tracer, read: Callable, write: Callable | None,
               what: str, strides: tuple) -> Tracer:
    if out is base:  # a view that changes nothing is still another array object
        out = Tracer(base.value, base.shape, base.dtype, weak=base.weak)
    view = View(base, read, write, what)
    view.seen = view.root.version
    out.view_of = view
    out.element_strides = tuple(int(s) for s in strides)
    return out


def _fresh(t):
    """A new root array holding ``t``'s value (a copy, as numpy's result is)."""
    return Tracer(t.value, t.shape, t.dtype, weak=t.weak)


# ---- reshapes and transposes -----------------------------------------------------------------


def _reshaped_view(x: Tracer, out: Tracer, what: str) -> Tracer:
    """``out`` (x reshaped) as a view of x where numpy's reshape is one, else a copy."""
    try:
        strides = np.reshape(_stand_in(x), out.shape, copy=False).strides
    except ValueError:  # numpy would copy
        return _fresh(out)
    shape = out.shape
    return _make_view(x, out, lambda b: shape_ops.reshape(b, shape),
                      lambda b, new: shape_ops.reshape(new, b.shape), what, strides)


def reshape_view(a, shape, order="C") -> Tracer:
    x = as_tracer(a, "reshape")
    return _reshaped_view(x, shape_ops.reshape(x, shape, order), "reshape")


def ravel_view(a, order="C") -> Tracer:
    x = as_tracer(a, "ravel")
    out = shape_ops.ravel(x, order)
    # numpy's ravel is a view only of a C-contiguous array (reshape(-1) may be in more cases)
    if not _stand_in(x).flags.c_contiguous:
        return _fresh(out)
    return _reshaped_view(x, out, "ravel")


def squeeze_view(a, axis=None) -> Tracer:
    x = as_tracer(a, "squeeze")
    return _reshaped_view(x, shape_ops.squeeze(x, axis), "squeeze")


def expand_dims_view(a, axis) -> Tracer:
    x = as_tracer(a, "expand_dims")
    return _reshaped_view(x, shape_ops.expand_dims(x, axis), "expand_dims")


def _permuted_view(x: Tracer, numpy_fn: Callable, what: str) -> Tracer:
    """A transpose of x as a view: the permutation is read off numpy's own function applied
    to a stand-in with distinct dimension sizes."""
    sizes = tuple(range(2, x.ndim + 2))
    probe = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), shape=sizes,
                                            strides=(0,) * x.ndim)
    perm = tuple(sizes.index(d) for d in numpy_fn(probe).shape)
    inverse = tuple(int(i) for i in np.argsort(perm))
    out = shape_ops.transpose(x, perm)
    strides = tuple(x.element_strides[p] for p in perm)
    return _make_view(x, out, lambda b: shape_ops.transpose(b, perm),
                      lambda b, new: shape_ops.transpose(new, inverse), what, strides)


def transpose_view(a, axes=None) -> Tracer:
    x = as_tracer(a, "transpose")
    shape_ops.transpose(x, axes)  # numpy's errors for bad axes
    return _permuted_view(x, lambda p: np.transpose(p, axes), "transpose")


def swapaxes_view(a, axis1, axis2) -> Tracer:
    x = as_tracer(a, "swapaxes")
    shape_ops.swapaxes(x, axis1, axis2)
    return _permuted_view(x, lambda p: np.swapaxes(p, axis1, axis2), "swapaxes")


def moveaxis_view(a, source, destination) -> Tracer:
    x = as_tracer(a, "moveaxis")
    shape_ops.moveaxis(x, source, destination)
    return _permuted_view(x, lambda p: np.moveaxis(p, source, destination), "moveaxis")


def matrix_transpose_view(a) -> Tracer:
    """``x.mT``: the last two axes swapped, a view (numpy's)."""
    x = as_tracer(a, "x.mT")
    if x.ndim < 2:
        raise TracingError(f"x.mT: matrix transpose with ndim < 2 is undefined (got shape "
                           f"{x.shape})")
    return _permuted_view(x, lambda p: np.swapaxes(p, -1, -2), "mT")


# ---- reading the bytes as another dtype --------------------------------------------------


def _as_bits(x: Tracer) -> Tracer:
    """x's bytes as integers or floats that ``lax.bitcast_convert_type`` takes: a bool as
    uint8 (0 or 1, numpy's bytes), a complex as its (real, imaginary) pairs on a last axis
    twice as long."""
    kind = dtypes.kind(x.dtype)
    if kind == "bool":
        return ew.astype(x, np.uint8)
    if kind == "complex":
        pairs = shape_ops.stack([complex_parts.real(x), complex_parts.imag(x)], axis=-1)
        return shape_ops.reshape(pairs, x.shape[:-1] + (2 * x.shape[-1],) if x.ndim else (2,))
    return x


def _reinterpret(x: Tracer, dt: np.dtype, shape: tuple) -> Tracer:
    """x's bytes read as ``dt`` in ``shape`` (numpy's ``view``, checked by numpy already)."""
    if dt == x.dtype:
        return x
    kind = dtypes.kind(dt)
    bits = _as_bits(x)
    target = (np.dtype(np.uint8) if kind == "bool"
              else np.dtype(f"float{dt.itemsize * 4}") if kind == "complex" else dt)
    ratio = bits.dtype.itemsize / target.itemsize
    if ratio < 1:  # wider elements: group the last axis
        last = int(round(1 / ratio))
        bits = shape_ops.reshape(bits, bits.shape[:-1] + (bits.shape[-1] // last, last))
    out = lax_ops.LAX["bitcast_convert_type"](bits, target)
    if kind == "bool":
        out = ew.ufunc("not_equal", out, np.uint8(0))
    elif kind == "complex":
        pairs = shape_ops.reshape(out, tuple(shape) + (2,))
        out = complex_parts.complex_from_parts(*(shape_ops.basic_getitem(pairs, (Ellipsis, k))
                                                 for k in (0, 1)))
    return shape_ops.reshape(out, tuple(shape))


def dtype_view(a, dtype=None, type=None) -> Tracer:
    """``x.view(dtype)``: x's bytes read as ``dtype``, as numpy's ``view`` (a different
    itemsize rescales the last axis, which must be contiguous; a 0-d array keeps its
    itemsize), little-endian; a view, so writes into it reach x."""
    x = as_tracer(a, "x.view")
    if type is not None:
        raise UnsupportedOpError(f"x.view(type={type!r}): aotc has one array type; drop type=")
    dt = x.dtype if dtype is None else dtypes.canonicalize(dtype, "x.view dtype")
    probe = np.lib.stride_tricks.as_strided(np.zeros(1, x.dtype), shape=x.shape,
                                            strides=x.strides)
    try:
        numpy_view = probe.view(dt)
    except ValueError as e:
        raise TracingError(f"x.view({dt.name}) of a {x.dtype.name}{list(x.shape)} array: "
                           f"{e}") from None
    shape = numpy_view.shape
    out = _reinterpret(x, dt, shape)
    if any(s % dt.itemsize for s in numpy_view.strides):
        return _fresh(out)
    return _make_view(x, out, lambda b: _reinterpret(b, dt, shape),
                      lambda b, new: _reinterpret(new, b.dtype, b.shape), "view",
                      tuple(s // dt.itemsize for s in numpy_view.strides))


# ---- indexing ----------------------------------------------------------------------------


def _is_basic(index) -> bool:
    """numpy's basic indexing: ints, slices, None, ``...`` (and traced integer scalars,
    which select like ints): the result is a view."""
    for item in index if isinstance(index, tuple) else (index,):
        if isinstance(item, Tracer):
            if item.ndim or item.dtype.kind not in "iu":
                return False
        elif isinstance(item, (bool, np.bool_)) or not (
                item is None or item is Ellipsis
                or isinstance(item, (slice, int, np.integer))):
            return False
    return True


def _static_index(index):
    """The index with traced scalars replaced by 0, for the stand-in's strides."""
    items = index if isinstance(index, tuple) else (index,)
    return tuple(0 if isinstance(it, Tracer) else it for it in items)


def getitem(x: Tracer, index) -> Tracer:
    """``x[index]``: a view for basic indices, a new array for advanced ones."""
    out = indexing.getitem(x, index)
    if not _is_basic(index):
        return _fresh(out) if out is x else out
    strides = _stand_in(x)[_static_index(index)].strides
    return _make_view(x, out, lambda b: indexing.getitem(b, index),
                      lambda b, new: update(b, index, new, "set"), "basic indexing", strides)


# ---- writes ------------------------------------------------------------------------------


def _check_writable(x: Tracer, where: str) -> None:
    check_usable(x, where)
    if x.root.scope is not current_trace().scope:
        raise UnsupportedOpError(
            f"{where}: the array written was made outside the lax.cond/switch branch or "
            f"while_loop/fori_loop/scan body being traced, and a write inside a region "
            f"cannot reach it. Carry the array through the loop (part of the carry, or a "
            f"branch output) and write into the carried value, or use a Python for loop "
            f"over a static range")


def setitem(x: Tracer, index, value) -> None:
    """``x[index] = value`` with numpy's semantics: ``value`` is cast to x's dtype and
    broadcast to the indexed shape; a traced boolean mask of x's shape selects."""
    _check_writable(x, "x[index] = value")
    if isinstance(index, Tracer) and index.dtype == np.bool_:
        x.assign(_masked_set(x, index, value))
        return
    x.assign(update(x, index, value, "set"))


def _masked_set(x: Tracer, mask: Tracer, value) -> Tracer:
    """``x[mask] = value`` for a traced mask: only a value that is the same for every
    selected element (a scalar, or shape () / (1,)) has a static meaning."""
    v = as_tracer(value, "x[mask] = value")
    if v.size != 1:
        raise UnsupportedOpError(
            f"x[mask] = value with a traced boolean mask and {v.size} values: which element "
            f"gets which value depends on how many are selected, known only at run time. "
            f"Write x = np.where(mask, values_of_x_shape, x), or assign a scalar")
    if mask.shape != x.shape[:mask.ndim]:
        raise TracingError(f"boolean index of shape {mask.shape} does not match the indexed "
                           f"array of shape {x.shape}")
    keep = shape_ops.reshape(mask, mask.shape + (1,) * (x.ndim - mask.ndim))
    scalar = shape_ops.reshape(ew.astype(v, x.dtype), ())
    return ew.elementwise_where(keep, scalar, x)


# Python's augmented assignments -> the function computing the new value.
AUGMENTED: dict[str, Callable] = {
    "iadd": functools.partial(ew.ufunc, "add"),
    "isub": functools.partial(ew.ufunc, "subtract"),
    "imul": functools.partial(ew.ufunc, "multiply"),
    "itruediv": functools.partial(ew.ufunc, "divide"),
    "ifloordiv": functools.partial(ew.ufunc, "floor_divide"),
    "imod": functools.partial(ew.ufunc, "remainder"),
    "ipow": ew.power_operator,
    "imatmul": matmul,
    "iand": functools.partial(ew.ufunc, "bitwise_and"),
    "ior": functools.partial(ew.ufunc, "bitwise_or"),
    "ixor": functools.partial(ew.ufunc, "bitwise_xor"),
    "ilshift": functools.partial(ew.ufunc, "left_shift"),
    "irshift": functools.partial(ew.ufunc, "right_shift"),
}


def augmented(name: str, x: Tracer, other) -> Tracer:
    """``x <op>= other`` in place, as numpy."""
    where = f"x {name[1:]}= ..."
    _check_writable(x, where)
    store(x, AUGMENTED[name](x, other), where)
    return x


def store(x: Tracer, result: Tracer, where: str) -> None:
    """Writes ``result`` into x as numpy writes a ufunc's output into ``out=x``: cast to
    x's dtype with the ``same_kind`` rule (``int_array += 1.5`` raises) and of x's shape."""
    _check_writable(x, where)
    if not np.can_cast(result.dtype, x.dtype, "same_kind"):
        raise TypeError(
            f"Cannot cast ufunc output from dtype('{result.dtype.name}') to "
            f"dtype('{x.dtype.name}') with casting rule 'same_kind' (numpy's rule for "
            f"{where}); compute a new array and convert it with .astype(...) instead")
    if result.shape != x.shape:
        raise ValueError(f"non-broadcastable output operand with shape {x.shape} doesn't "
                         f"match the broadcast shape {result.shape}")
    x.assign(ew.astype(result, x.dtype) if result.dtype != x.dtype else result)


def assign_all(x: Tracer, new: Tracer, where: str) -> None:
    """In-place methods (``x.sort()``, ``x.fill(v)``): x's value becomes ``new``."""
    _check_writable(x, where)
    x.assign(ew.astype(new, x.dtype) if new.dtype != x.dtype else new)


# ---- numpy's functions that write into an array ------------------------------------------


def _destination(dst, where: str) -> Tracer:
    if not isinstance(dst, Tracer):
        raise UnsupportedOpError(
            f"{where}: the destination is a numpy array, which cannot hold traced values. "
            f"Create it from a traced array (np.zeros_like(x), np.empty_like(x)) or with "
            f"aotc.numpy (anp.zeros(shape)) so that it is traced too")
    _check_writable(dst, where)
    return dst


def copyto(dst, src, casting="same_kind", where=True) -> None:
    """numpy.copyto: ``dst[...] = src`` where ``where``, cast by ``casting``."""
    d = _destination(dst, "copyto")
    s = as_tracer(src, "copyto src")
    if not s.weak and not isinstance(src, (bool, int, float)) and not np.can_cast(
            s.dtype, d.dtype, casting):
        raise TypeError(f"Cannot cast array data from dtype('{s.dtype.name}') to "
                        f"dtype('{d.dtype.name}') according to the rule '{casting}'")
    value = shape_ops.broadcast_to(ew.astype(s, d.dtype), d.shape)
    if where is not True:
        value = ew.elementwise_where(where, value, d)
    d.assign(value)


def putmask(a, mask, values) -> None:
    """numpy.putmask: ``a.flat[n] = values.flat[n % values.size]`` where ``mask.flat[n]``."""
    d = _destination(a, "putmask")
    repeated = ew.astype(resize(values, d.shape), d.dtype)
    d.assign(ew.elementwise_where(mask, repeated, d))


def place(arr, mask, vals) -> None:
    """numpy.place: the k-th element where ``mask`` is true gets ``vals.flat[k % vals.size]``;
    which k an element is, is its running count of true elements."""
    d = _destination(arr, "place")
    m = shape_ops.ravel(ew.astype(as_tracer(mask, "place mask"), np.bool_))
    v = shape_ops.ravel(ew.astype(as_tracer(vals, "place vals"), d.dtype))
    if v.size == 0:
        raise ValueError("Cannot insert from an empty array!")
    k = ew.ufunc("remainder", ew.ufunc("subtract", cumsum(ew.astype(m, np.int64)), 1), v.size)
    chosen = take(v, ew.ufunc("maximum", k, 0))
    flat = ew.elementwise_where(m, chosen, shape_ops.ravel(d))
    d.assign(shape_ops.reshape(flat, d.shape))


EXPORTS: dict[str, list[str]] = {"numpy": ["copyto", "putmask", "place"]}


# ---- results are new arrays ---------------------------------------------------------------


def returns_new_arrays(fn: Callable) -> Callable:
    """``fn`` whose results are never one of its argument objects: an op that computes
    nothing (``astype`` to the same dtype, ``copy``) still returns a new array, as numpy
    does, so a write into it does not reach the argument."""

    @functools.wraps(fn)
    def fresh_results(*args, **kwargs):
        out = fn(*args, **kwargs)
        if isinstance(out, Tracer):
            return _fresh(out) if any(out is a for a in args) else out
        if isinstance(out, (tuple, list)) and any(isinstance(o, Tracer) for o in out):
            items = [_fresh(o) if isinstance(o, Tracer) and any(o is a for a in args) else o
                     for o in out]
            make = getattr(type(out), "_make", None)  # a NamedTuple takes its fields apart
            return make(items) if make is not None else type(out)(items)
        return out

    return fresh_results


# The namespace functions that return views (the rest return new arrays), and the
# functions that may return their argument itself as numpy does (``asarray(x) is x``).
VIEW_FUNCTIONS: dict[str, Callable] = {
    "reshape": reshape_view, "ravel": ravel_view, "squeeze": squeeze_view,
    "expand_dims": expand_dims_view, "transpose": transpose_view, "swapaxes": swapaxes_view,
    "moveaxis": moveaxis_view,
}
SAME_OBJECT = frozenset({"asarray", "array"})  # array(x, copy=False)
