"""Functional updates with JAX's spelling, ``x.at[index].set(v)`` (``.add``, ``.subtract``,
``.multiply``, ``.min``, ``.max``, ``.get``), and ``aotc.lax.dynamic_update_slice``.

An update returns a new array; IREE writes it in place when ``x`` is not used afterwards
(or is donated). How it lowers, by what the index holds:

- static ints and slices: ``tensor.insert_slice`` of the new values (for ``add`` etc.
  the old ones are read with ``tensor.extract_slice`` and combined elementwise);
- traced 0-d integers among those: the same at offsets computed at run time;
- integer arrays: one ``iree_linalg_ext.scatter`` whose region combines old and new
  values, so repeated indices accumulate for add/multiply/min/max, as in JAX and
  ``np.add.at``.

Out-of-range traced indices are dropped (JAX's rule for updates): a traced scalar index
that is out of range leaves ``x`` unchanged (the slice is written back as it was); array
updates with traced out-of-range indices are clamped and made to change nothing (a neutral
value such as 0 for add; for set, a repeat of a kept entry), so no copy of ``x`` is made.
``mode="clip"`` clamps them instead. Constant indices are checked at trace time.
``lax.dynamic_update_slice`` clamps its start indices, as JAX does.
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import dtypes
from ..core import Tracer, differentiating
from ..errors import TracingError
from ..lowering import add_work, extract_slice, insert_slice, wrap
from . import elementwise as ew
from . import reductions as red
from . import shape as shape_ops
from .arguments import as_tracer
from .dynamic_slicing import dynamic_starts, in_dim
from .indexing import Array as IndexArray
from .indexing import (
    Int,
    NewAxis,
    ScalarIndex,
    Slice,
    as_index_array,
    basic_index,
    gather,
    getitem,
    getitem_items,
    in_range,
    is_advanced,
    layout,
    normalized,
    parse_index,
    place_axes,
    scalar_slice,
    slice_at,
)
from .linalg_ext import scatter
from .selection import default_fill

EXPORTS: dict[str, list[str]] = {
    "numpy": [],
    "lax": ["dynamic_update_slice", "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim"],
    "nn": [],
}

# Update method -> (the numpy ufunc combining old and new values, None: replace; what it
# does, for its docstring).
METHODS = {
    "set": (None, "x[index] = values"),
    "add": ("add", "x[index] += values, repeated indices accumulating (np.add.at)"),
    "subtract": ("subtract", "x[index] -= values, repeated indices accumulating"),
    "multiply": ("multiply", "x[index] *= values, repeated indices accumulating"),
    "min": ("minimum", "x[index] = minimum(x[index], values), NaN propagating"),
    "max": ("maximum", "x[index] = maximum(x[index], values), NaN propagating"),
}

# ``mode=`` of the update methods -> drop out-of-range traced indices (True) or clamp them.
DROPS = {None: True, "drop": True, "fill": True, "clip": False, "promise_in_bounds": False}
GET_MODES = ("clip", "fill", "promise_in_bounds")


class IndexUpdateHelper:
    """``x.at``: ``x.at[index]`` names the elements an update method replaces."""

    __slots__ = ("array",)

    def __init__(self, array: Tracer):
        self.array = array

    def __getitem__(self, index) -> "IndexUpdateRef":
        return IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


class IndexUpdateRef:
    """``x.at[index]``: each method (``set``, ``add``, ``subtract``, ``multiply``,
    ``min``, ``max``) returns a new array, ``x`` with the indexed elements updated (``x``
    itself is unchanged, as in JAX). Values broadcast to ``x[index]``'s shape and are cast
    to x's dtype. ``mode``: None/"drop" drops out-of-range traced indices, "clip" clamps.

    >>> x = np.zeros(4, np.float32)
    >>> f = aotc.jit(lambda x: (x.at[0].set(1.0), x.at[np.array([1, 3, 3])].add(2.0)))
    >>> f(x)                # repeated indices add up, as np.add.at
    (Array([1., 0., 0., 0.], dtype=float32), Array([0., 2., 0., 4.], dtype=float32))
    """

    __slots__ = ("array", "index")

    def __init__(self, array: Tracer, index):
        self.array, self.index = array, index

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None) -> Tracer:
        """``x[index]``, with JAX's ``mode``: None (aotc's rule: constant indices out of
        range raise, traced ones are clamped), "clip" or "promise_in_bounds" (every index
        clamped, negative ones counted from the end first), "fill" (an integer index out of
        range reads ``fill_value``: by default NaN, the most negative signed int, the largest
        unsigned int, True; slices are clamped as always)."""
        if mode is None:
            return getitem(self.array, self.index)
        if mode not in GET_MODES:
            raise TracingError(f"at[...].get: mode must be one of {GET_MODES} or None, got "
                               f"{mode!r}")
        x = self.array
        items = parse_index(x.shape, self.index, "at[...].get", static_out_of_range="traced")
        if mode != "fill":
            return getitem_items(x, items)
        if not builtins.any(isinstance(it, (ScalarIndex, IndexArray)) for it in items):
            return getitem_items(x, items)
        fill = default_fill(x.dtype) if fill_value is None else fill_value
        # Traced scalars as 0-d index arrays: one gather, which reads fill_value outside.
        items = [IndexArray(it.axis, it.value) if isinstance(it, ScalarIndex) else it
                 for it in items]
        return gather(x, items, "fill", fill)

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"


def _update_method(method: str, what: str):
    def apply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        if mode not in DROPS:
            raise TracingError(f"at[...].{method}: mode must be one of "
                               f"{sorted(m for m in DROPS if m)} or None, got {mode!r}")
        # With a mode, constant indices out of range follow it as traced ones do (JAX's).
        return update(self.array, self.index, values, method, DROPS[mode], bool(unique_indices),
                      "raise" if mode is None else "traced")

    apply.__name__ = apply.__qualname__ = method
    apply.__doc__ = f"``x`` with ``{what}``."
    return apply


for _method, (_, _what) in METHODS.items():
    setattr(IndexUpdateRef, _method, _update_method(_method, _what))


def _values_for(x: Tracer, values, shape: tuple, where: str) -> Tracer:
    """``values`` cast to x's dtype and broadcast to ``shape`` (leading 1s dropped, as numpy
    assignment does)."""
    v = ew.astype(values, x.dtype)
    while v.ndim > len(shape) and v.shape[0] == 1:
        v = shape_ops.reshape(v, v.shape[1:])
    try:
        fits = v.ndim <= len(shape) and np.broadcast_shapes(v.shape, shape) == tuple(shape)
    except ValueError:
        fits = False
    if not fits:
        raise TracingError(
            f"{where}: values of shape {v.shape} cannot be broadcast to the indexed shape "
            f"{tuple(shape)}"
        )
    return shape_ops.broadcast_to(v, shape)


def _combine(method: str, old: Tracer, new: Tracer) -> Tracer:
    ufunc = METHODS[method][0]
    return new if ufunc is None else ew.astype(ew.ufunc(ufunc, old, new), old.dtype)


def update(x: Tracer, index, values, method: str, drop: bool = True,
           unique: bool = False, static_out_of_range: str = "raise") -> Tracer:
    """``x`` with ``x[index]`` combined with ``values`` by ``method`` (a ``METHODS`` key)."""
    where = f"at[...].{method}"
    x = as_tracer(x, where)
    items = parse_index(x.shape, index, where, static_out_of_range)
    v = _values_for(x, values, layout(items, where).out_shape, where)
    if is_advanced(items):
        return _scatter(x, items, v, method, drop, unique, where)
    if builtins.any(isinstance(it, ScalarIndex) for it in items):
        return _dynamic_update(x, items, v, method, drop)
    return _static_update(x, items, v, method)


def insert_at(x: Tracer, source: Tracer, starts) -> Tracer:
    """``tensor.insert_slice`` of ``source`` into ``x`` at ``starts`` (ints or ``index`` values)."""
    if source.shape == x.shape:
        return source
    result = insert_slice(source.value, x.value, x.shape, starts, source.shape)
    add_work(source.size)
    return wrap(result, x.shape, x.dtype)


def _static_update(x: Tracer, items, v: Tracer, method: str) -> Tracer:
    """Static ints and slices: one (strided) extract_slice / insert_slice pair."""
    offsets, sizes, strides, reversed_axes = [], [], [], []
    for it in items:
        if isinstance(it, Int):
            offsets.append(it.value)
            sizes.append(1)
            strides.append(1)
        elif isinstance(it, Slice):
            if it.step < 0 and it.count > 1:  # the same elements, walked forwards
                reversed_axes.append(it.axis)
                offsets.append(it.start + it.step * (it.count - 1))
            else:
                offsets.append(it.start)
            sizes.append(it.count)
            strides.append(builtins.abs(it.step) if it.count > 1 else 1)
    if 0 in sizes:
        return x
    region = shape_ops.reshape(v, tuple(sizes))
    if reversed_axes:
        region = shape_ops.flip(region, tuple(reversed_axes))
    if tuple(sizes) == x.shape and builtins.all(s == 1 for s in strides):
        return _combine(method, x, region)
    if METHODS[method][0] is not None:
        old = extract_slice(x.value, x.shape, offsets, sizes, strides, x.dtype)
        region = _combine(method, wrap(old, sizes, x.dtype), region)
    result = insert_slice(region.value, x.value, x.shape, offsets, sizes, strides)
    add_work(region.size)
    return wrap(result, x.shape, x.dtype)


def _dynamic_update(x: Tracer, items, v: Tracer, method: str, drop: bool) -> Tracer:
    """Traced scalar indices: update the slice at run-time offsets; when an index is out
    of range and ``drop``, the slice is written back unchanged."""
    starts, sizes = scalar_slice(x.shape, items)
    old = slice_at(x, starts, sizes)
    new = _static_update(old, parse_index(old.shape, basic_index(items)), v, method)
    if drop:
        valid = None
        for it in items:
            if isinstance(it, ScalarIndex):
                ok = in_range(it.value, x.shape[it.axis])
                valid = ok if valid is None else ew.ufunc("logical_and", valid, ok)
        new = ew.elementwise_where(valid, new, old)
    return insert_at(x, new, starts)


# ---- scatters ---------------------------------------------------------------------------------


def _placed(t, dims, lead_shape) -> Tracer:
    """``t`` (a tracer or numpy array) with its axes at result dims ``dims``, broadcast to
    ``lead_shape``."""
    t = as_tracer(as_index_array(t) if isinstance(t, np.ndarray) else t, "index")
    return shape_ops.broadcast_to(place_axes(t, dims, len(lead_shape)), tuple(lead_shape))


def _scatter(x: Tracer, items, v: Tracer, method: str, drop: bool, unique: bool,
             where: str) -> Tracer:
    """Integer-array indices: ``iree_linalg_ext.scatter`` of rows of ``x``.

    The trailing axes indexed by full slices stay whole rows of the update (a row scatter);
    each other axis gets one column of the scatter's index matrix, which IREE requires to
    name the leading axes of ``x``."""
    lay = layout(items, where)
    trailing = 0
    for it in reversed(items):
        if not (isinstance(it, Slice) and it.full(x.shape[it.axis])):
            break
        trailing += 1
    depth = x.ndim - trailing
    lead_shape = lay.out_shape[:len(lay.out_shape) - trailing]
    rows = x.shape[depth:]
    count = int(np.prod(lead_shape, dtype=np.int64))
    if count == 0 or v.size == 0:
        return x
    columns, valid = [], None
    for k, it in enumerate(items):
        if isinstance(it, NewAxis) or it.axis >= depth:
            continue
        n = x.shape[it.axis]
        if isinstance(it, Slice):
            steps = np.arange(it.count) * it.step + it.start
            columns.append(_placed(steps, [lay.slice_dims[k]], lead_shape))
        elif isinstance(it, Int):
            columns.append(_placed(np.full((), it.value), [], lead_shape))
        else:
            shape = tuple(it.value.shape)
            dims = lay.adv_dims(shape)
            columns.append(_placed(normalized(it.value, n, "clamp"), dims, lead_shape))
            if drop and isinstance(it.value, Tracer):
                ok = _placed(in_range(it.value, n), dims, lead_shape)
                valid = ok if valid is None else ew.ufunc("logical_and", valid, ok)
    indices = shape_ops.reshape(shape_ops.stack(columns, axis=-1), (count, depth))
    updates = shape_ops.reshape(v, (count,) + rows)
    if valid is not None:
        # Out-of-range entries keep their clamped index but change nothing there, so the
        # scatter writes into x itself (in place when x is donated), with no copy of x.
        keep = shape_ops.reshape(valid, (count,))
        updates, indices = _dropped_change_nothing(x, updates, indices, keep, method)
    if differentiating() and dtypes.is_float(x.dtype) and method in _DIFFERENTIABLE_FORMS:
        return _DIFFERENTIABLE_FORMS[method](x, indices, updates, depth, unique)
    result = scatter(x, indices, updates, depth, METHODS[method][0], unique)
    add_work(updates.size)
    return result


# ---- scatters in a derivative's trace ------------------------------------------------------
# The scatter op's derivative rules cover set and add. Where something differentiates, the
# other float methods become scatters of those, gathers and elementwise ops with the same
# values and JAX's derivatives.

def _rows_at(x: Tracer, indices: Tracer, depth: int) -> Tracer:
    """The rows of ``x`` at the scatter's index matrix (count, depth): (count, *rows)."""
    return x[tuple(indices[:, d] for d in range(depth))]


def _subtract_form(x, indices, updates, depth, unique):
    # a - b is a + (-b), bit for bit
    return scatter(x, indices, ew.ufunc("negative", updates), depth, "add", unique)


def _multiply_form(x, indices, updates, depth, unique):
    """With ``unique_indices=True``: x[i] = x[i] * u as a gather and a scatter-set (JAX
    differentiates the updates of a multiply only then: with repeated indices each
    update's derivative is the product of the others). Otherwise the scatter itself, which
    the derivative refuses, naming the fix."""
    if not unique:
        return scatter(x, indices, updates, depth, "multiply", unique)
    return scatter(x, indices, ew.ufunc("multiply", _rows_at(x, indices, depth), updates),
                   depth, None, unique)


def _extremum_form(ufunc: str):
    def form(x, indices, updates, depth, unique):
        """The scatter's values r, plus zero-valued terms whose derivative is JAX's: each
        element's tangent is shared equally by the operand and the updates equal to r
        there (ties split). The terms are -0.0 (``-(stop(v) - v)``), so r + them is r
        bit for bit, -0.0 and NaN included."""
        from .lax_ops import _stop_gradient

        r = _stop_gradient(scatter(x, indices, updates, depth, ufunc, unique))
        x_wins = ew.ufunc("equal", x, r)
        u_wins = ew.ufunc("equal", updates, _rows_at(r, indices, depth))
        minus_zero = np.asarray(-0.0, x.dtype)

        def zero_valued(v, wins):  # -0.0 where v wins, carrying v's tangent
            return ew.elementwise_where(
                wins, ew.ufunc("negative", ew.ufunc("subtract", _stop_gradient(v), v)),
                minus_zero)

        x_ties = ew.astype(x_wins, x.dtype)
        ties = scatter(x_ties, indices, ew.astype(u_wins, x.dtype), depth, "add", unique)
        spread = scatter(zero_valued(x, x_wins), indices, zero_valued(updates, u_wins), depth,
                         "add", unique)
        add_work(updates.size)
        return ew.ufunc("add", r, ew.ufunc("divide", spread, ties))
    return form


_DIFFERENTIABLE_FORMS = {"subtract": _subtract_form, "multiply": _multiply_form,
                         "min": _extremum_form("minimum"), "max": _extremum_form("maximum")}


# Update value that leaves an element unchanged when combined by each method (-0.0 for add:
# x + -0.0 is x for every x, -0.0 included; NaN stays NaN under min and max).
NEUTRAL = {
    "add": lambda dt: -0.0 if dtypes.kind(dt) == "float" else 0,
    "subtract": lambda dt: 0,
    "multiply": lambda dt: 1,
    "min": lambda dt: (np.inf if dtypes.kind(dt) == "float"
                       else (True if dt == np.bool_ else np.iinfo(dt).max)),
    "max": lambda dt: (-np.inf if dtypes.kind(dt) == "float"
                       else (False if dt == np.bool_ else np.iinfo(dt).min)),
}


def _dropped_change_nothing(x: Tracer, updates: Tracer, indices: Tracer, keep: Tracer,
                            method: str) -> tuple[Tracer, Tracer]:
    """(updates, indices) where the entries not in ``keep`` change nothing: they combine
    the method's neutral value; for ``set`` they repeat the first kept entry (the same row
    written twice with the same values), or, when none is kept, write back the row of x
    at their (clamped) index."""
    rows_keep = shape_ops.reshape(keep, keep.shape + (1,) * (updates.ndim - 1))
    if method != "set":
        neutral = np.asarray(NEUTRAL[method](x.dtype), dtype=x.dtype)
        return ew.elementwise_where(rows_keep, updates, neutral), indices
    first = red.argmax(keep)  # 0 when nothing is kept
    index = indices[first]
    row = ew.elementwise_where(red.any(keep), updates[first],
                               x[tuple(index[d] for d in range(indices.shape[1]))])
    return (ew.elementwise_where(rows_keep, updates, row),
            ew.elementwise_where(shape_ops.reshape(keep, keep.shape + (1,)), indices, index))


# ---- jax.lax ------------------------------------------------------------------------------------


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True) -> Tracer:
    """jax.lax.dynamic_update_slice: ``operand`` with ``update`` written at
    ``start_indices`` (traced or static scalars), clamped so that it fits, as in JAX.

    >>> def put_row(state, row, i):
    ...     return aotc.lax.dynamic_update_slice(state, row[None], (i, 0))
    >>> state, row = np.zeros((4, 3), np.float32), np.ones(3, np.float32)
    >>> print(aotc.jit(put_row).lower(state, row, np.int32(1)).metadata.signature)
    put_row(state: float32[4,3], row: float32[3], i: int32[]) -> (out: float32[4,3])
    """
    x = as_tracer(operand, "dynamic_update_slice operand")
    u = as_tracer(update, "dynamic_update_slice update")
    if u.ndim != x.ndim:
        raise TracingError(
            f"dynamic_update_slice: update must have the operand's rank {x.ndim}, got shape "
            f"{u.shape} for operand shape {x.shape}"
        )
    if u.dtype != x.dtype:
        raise TracingError(
            f"dynamic_update_slice: update dtype {u.dtype.name} differs from operand dtype "
            f"{x.dtype.name}; convert it with .astype({x.dtype.name!r})"
        )
    starts = dynamic_starts(x, start_indices, u.shape, "dynamic_update_slice",
                            allow_negative_indices)
    return insert_at(x, u, starts)


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int, *,
                                allow_negative_indices=True) -> Tracer:
    """jax.lax.dynamic_update_slice_in_dim: ``update`` written from ``start_index`` on ``axis``."""
    x, _, starts = in_dim(operand, start_index, axis, "dynamic_update_slice_in_dim")
    return dynamic_update_slice(x, update, starts, allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand, update, index, axis: int, *,
                                allow_negative_indices=True) -> Tracer:
    """jax.lax.dynamic_update_index_in_dim: ``update`` (with or without the size-1 ``axis``)
    written at ``index`` of ``axis``."""
    x, ax, starts = in_dim(operand, index, axis, "dynamic_update_index_in_dim")
    u = as_tracer(update, "dynamic_update_index_in_dim update")
    if u.ndim == x.ndim - 1:
        u = shape_ops.expand_dims(u, ax)
    return dynamic_update_slice(x, u, starts, allow_negative_indices=allow_negative_indices)
