"""Rearranging arrays with numpy's semantics: pad, tile, repeat, roll, rot90, the stacking
helpers, insert/delete/append, resize.

Every shape, width, shift and index list is static, so each op reduces at trace time to
a few data movements along one axis at a time:

* ``pad(mode="constant")``: ``tensor.pad`` yielding the constant;
* tiling and uniform repeats: a broadcasting ``linalg.generic`` followed by a
  ``tensor.collapse_shape`` (no index arithmetic, fuses with its consumers);
* everything else that picks positions along an axis (the other pad modes, roll,
  per-element repeats, insert, delete) is ``take_static``: numpy computes the source
  position of every output position on an ``arange``, the list is cut into arithmetic
  runs, and each run is a slice (``tensor.extract_slice``; a reversing run is the
  gather generic of basic indexing; a constant run a broadcast) joined by
  ``tensor.concat``. Lists with many runs become one gather generic instead.

The static arguments (widths, counts, shifts, positions, pad modes and constants) are
read and checked with numpy's rules by ``aotc.ops.static_args``.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence

import numpy as np

from .. import dtypes
from .._mlir import arith, dim_map, ir, tensor
from ..constants import scalar_constant
from ..core import Tracer, current_trace, user_location
from ..errors import TracingError, UnsupportedDtypeError, UnsupportedOpError
from ..lowering import (
    add_work,
    empty,
    gather_source,
    generic,
    identity_map,
    loop_index,
    parallel,
    wrap,
)
from . import elementwise as ew
from .arguments import as_tracer, broadcast_result_shape, normalize_axis, static_value
from .shape import (
    basic_getitem,
    broadcast_to,
    concatenate,
    flip,
    moveaxis,
    ravel,
    reshape,
    transpose,
)
from .static_args import (
    check_pad_mode,
    insert_positions,
    pad_pairs,
    pad_widths,
    static_ints,
    stored_as,
)

EXPORTS: dict[str, list[str]] = {
    "methods": ["repeat"],
    "numpy": [
        "pad", "tile", "repeat", "roll", "rot90", "fliplr", "flipud", "atleast_1d",
        "atleast_2d", "atleast_3d", "hstack", "vstack", "dstack", "column_stack", "append",
        "insert", "delete", "broadcast_shapes", "resize",
    ],
    "lax": [],
    "nn": [],
}

# A position list cut into more arithmetic runs than this becomes one gather generic:
# beyond it, the slices and the concat cost more than one indexed read per element.
MAX_SLICED_RUNS = 8


# ---- taking positions along one axis ---------------------------------------------------

def arithmetic_runs(positions: np.ndarray) -> list[tuple[int, int, int]]:
    """``positions`` as maximal runs ``(first, step, count)`` of constant step, greedily.

    Two positions that are not neighbours or equal make a run of one: any two positions
    form an arithmetic run, and taking them together would cut a contiguous run after
    them short (``roll``'s ``[4, 0, 1, 2, 3]`` is ``[4] + [0, 1, 2, 3]``, not
    ``[4, 0] + [1, 2, 3]``).
    """
    runs, i, n = [], 0, len(positions)
    while i < n:
        step = int(positions[i + 1] - positions[i]) if i + 1 < n else 1
        j = i + 1
        while j < n and positions[j] - positions[j - 1] == step:
            j += 1
        if j - i == 2 and abs(step) > 1:
            j, step = i + 1, 1
        runs.append((int(positions[i]), step, j - i))
        i = j
    return runs


def _axis_index(ndim: int, axis: int, item) -> tuple:
    return (slice(None),) * axis + (item,) + (slice(None),) * (ndim - axis - 1)


def _run(x: Tracer, axis: int, first: int, step: int, count: int) -> Tracer:
    if step == 0:
        one = basic_getitem(x, _axis_index(x.ndim, axis, slice(first, first + 1)))
        shape = list(one.shape)
        shape[axis] = count
        return broadcast_to(one, tuple(shape))
    stop = first + step * count
    run = slice(first, stop if stop >= 0 else None, step)
    return basic_getitem(x, _axis_index(x.ndim, axis, run))


def take_static(x: Tracer, positions, axis: int) -> Tracer:
    """``x`` read at the static ``positions`` along ``axis`` (numpy's ``take``, in range)."""
    positions = np.asarray(positions, np.int64).reshape(-1)
    n = x.shape[axis]
    if len(positions) == n and np.array_equal(positions, np.arange(n)):
        return x
    if len(positions) == 0:
        return basic_getitem(x, _axis_index(x.ndim, axis, slice(0, 0)))
    runs = arithmetic_runs(positions)
    if len(runs) > MAX_SLICED_RUNS:
        return _gather(x, positions, axis)
    if builtins.any(step < 0 for _, step, _ in runs):
        x = gather_source(x)  # reversed runs are gathers too
    return concatenate([_run(x, axis, *run) for run in runs], axis=axis)


def _gather(x: Tracer, positions: np.ndarray, axis: int) -> Tracer:
    """One ``linalg.generic`` over the output: it reads ``x`` with ``tensor.extract`` at the
    position a constant index table gives for its loop index along ``axis``."""
    x = gather_source(x)
    table_dtype = np.int32 if positions.max(initial=0) < 2**31 else np.int64
    table = current_trace().constant(positions.astype(table_dtype))
    rank = x.ndim
    out_shape = list(x.shape)
    out_shape[axis] = len(positions)

    def body(position, _out):
        index = arith.IndexCastOp(ir.IndexType.get(), position).result
        indices = [index if d == axis else loop_index(d) for d in range(rank)]
        return [tensor.ExtractOp(x.value, indices).result]

    (result,) = generic([(table.value, dim_map(rank, [axis]))],
                        [(empty(out_shape, x.dtype), identity_map(rank))], parallel(rank), body)
    add_work(math.prod(out_shape))
    return wrap(result, out_shape, x.dtype)


# ---- pad ------------------------------------------------------------------------------

def constant_pad(x: Tracer, low: Sequence[int], high: Sequence[int], value) -> Tracer:
    """``tensor.pad`` of ``x`` by ``low``/``high`` per axis, yielding ``value`` (a scalar
    stored as in an array of x's dtype, or a 0-d traced array)."""
    out_shape = tuple(n + lo + hi for n, lo, hi in zip(x.shape, low, high))
    if isinstance(value, Tracer):
        fill = tensor.ExtractOp(ew.astype(value, x.dtype).value, []).result
    with user_location():
        op = tensor.PadOp(dtypes.tensor_type(out_shape, x.dtype), x.value, [], [], list(low),
                          list(high))
        block = op.regions[0].blocks.append(*[ir.IndexType.get()] * x.ndim)
        with ir.InsertionPoint(block):
            tensor.YieldOp(fill if isinstance(value, Tracer) else scalar_constant(value, x.dtype))
    add_work(math.prod(out_shape))
    return wrap(op.result, out_shape, x.dtype)


def _pad_constant(x: Tracer, widths, constant_values) -> Tracer:
    low, high = [b for b, _ in widths], [a for _, a in widths]
    if isinstance(constant_values, Tracer):
        if constant_values.ndim != 0:
            raise UnsupportedOpError(
                f"pad: a traced constant_values must be 0-d, got shape {constant_values.shape}; "
                f"pass per-axis values as Python numbers"
            )
        return constant_pad(x, low, high, constant_values)
    values = pad_pairs(constant_values, x.ndim, "pad", "constant_values")
    cells = [[stored_as(v, x.dtype, "pad constant_values") for v in pair] for pair in values]
    flat = np.array([c for pair in cells for c in pair], x.dtype).reshape(-1, 2)
    if len({v.tobytes() for v in flat.reshape(-1)}) <= 1:  # one value (bitwise: -0.0, NaN)
        value = flat.flat[0] if flat.size else x.dtype.type(0)
        return constant_pad(x, low, high, value)
    # Per-side values: one pad per side, axis after axis; numpy fills each axis's pad
    # across the already padded earlier axes, so the later axis owns the corners.
    for axis, ((before, after), (v_before, v_after)) in enumerate(zip(widths, cells)):
        for side, width, value in ((0, before, v_before), (1, after, v_after)):
            if width:
                low, high = [0] * x.ndim, [0] * x.ndim
                (low if side == 0 else high)[axis] = width
                x = constant_pad(x, low, high, value)
    return x


def pad(array, pad_width, mode="constant", **kwargs) -> Tracer:
    """numpy.pad with static widths: modes constant (per-axis, per-side constant_values),
    edge, reflect, symmetric, wrap and empty (padded with zeros).

    >>> pad = aotc.jit(lambda x: anp.pad(x, (2, 3), mode="reflect"))
    >>> pad(np.array([1, 2, 3, 4], np.int32))
    Array([3, 2, 1, 2, 3, 4, 3, 2, 1], dtype=int32)
    """
    x = as_tracer(array, "pad")
    check_pad_mode(mode, kwargs)
    widths = pad_widths(pad_width, x.ndim)
    if not builtins.any(b or a for b, a in widths):
        return x
    if mode in ("constant", "empty"):
        return _pad_constant(x, widths, kwargs.get("constant_values", 0))
    for axis, (before, after) in enumerate(widths):
        if not (before or after):
            continue
        if x.shape[axis] == 0:
            raise TracingError(f"pad: can't extend empty axis {axis} (shape {x.shape}) using "
                               f"mode {mode!r}; only 'constant' and 'empty' can pad empty axes")
        positions = np.pad(np.arange(x.shape[axis]), (before, after), mode=mode)
        x = take_static(x, positions, axis)
    return x


# ---- tile and repeat ------------------------------------------------------------------

def _replicate(x: Tracer, counts: Sequence[int], inner: bool) -> Tracer:
    """Every axis ``d`` of ``x`` replicated ``counts[d]`` times as one broadcast generic and
    a collapse: each element repeated in place (``inner``: repeat) or the whole axis
    repeated (tile)."""
    split_shape, unit_shape, out_shape = [], [], []
    for n, r in zip(x.shape, counts):
        if r == 1:
            split_shape.append(n)
            unit_shape.append(n)
        else:
            split_shape.extend([n, r] if inner else [r, n])
            unit_shape.extend([n, 1] if inner else [1, n])
        out_shape.append(n * r)
    if tuple(out_shape) == x.shape:
        return x
    spread = broadcast_to(reshape(x, tuple(unit_shape)), tuple(split_shape))
    return reshape(spread, tuple(out_shape))


def tile(A, reps) -> Tracer:
    """numpy.tile: ``A`` repeated ``reps`` times along each axis (static reps)."""
    x = as_tracer(A, "tile")
    reps = [int(r) for r in static_ints(reps, "tile", "reps").reshape(-1)]
    if builtins.any(r < 0 for r in reps):
        raise TracingError(f"tile: reps {tuple(reps)} must be non-negative")
    ndim = builtins.max(x.ndim, len(reps))
    x = reshape(x, (1,) * (ndim - x.ndim) + x.shape)
    return _replicate(x, [1] * (ndim - len(reps)) + reps, inner=False)


def repeat(a, repeats, axis=None) -> Tracer:
    """numpy.repeat with static repeats: one count for all elements, or one per element."""
    x, ax = _flat_axis(as_tracer(a, "repeat"), axis, "repeat")
    counts = static_ints(repeats, "repeat", "repeats")
    n = x.shape[ax]
    if counts.ndim > 1 or (counts.size != 1 and counts.shape != (n,)):
        raise TracingError(
            f"repeat: repeats of shape {counts.shape} do not match axis {ax} of length {n}: "
            f"pass one count, or {n} counts (one per element)"
        )
    if (counts < 0).any():
        raise TracingError(f"repeat: repeats may not contain negative values, got {repeats!r}")
    if counts.size == 1 or (n and (counts == counts.flat[0]).all()):
        r = int(counts.flat[0]) if counts.size else 1
        return _replicate(x, [r if d == ax else 1 for d in range(x.ndim)], inner=True)
    return take_static(x, np.repeat(np.arange(n), counts), ax)


# ---- roll and rotations ---------------------------------------------------------------

def roll(a, shift, axis=None) -> Tracer:
    """numpy.roll: elements shifted along axes (static shifts), wrapping around."""
    x = as_tracer(a, "roll")
    if axis is None:
        long = [d for d, n in enumerate(x.shape) if n > 1]
        if x.ndim and len(long) <= 1:
            # The flat order is that axis' order: no reshapes. IREE 3.13 failed to compile
            # the concatenation expanded back to a trailing unit dimension and sliced
            # ("expected rank to be smaller or equal to the other rank": np.roll(x, 1)[0]
            # of a [31, 1] array, fuzz program 109070).
            return roll(x, shift, long[0] if long else 0)
        return reshape(roll(ravel(x), shift, 0), x.shape)
    shifts = static_ints(shift, "roll", "shift")
    axes = static_ints(axis, "roll", "axis")
    try:
        pairs = np.broadcast(shifts, axes)
    except ValueError:
        raise TracingError(f"roll: shift {shift!r} and axis {axis!r} should be scalars or 1-d "
                           f"sequences of the same length") from None
    if pairs.nd > 1:
        raise TracingError(f"roll: shift {shift!r} and axis {axis!r} should be scalars or 1-d "
                           f"sequences")
    total = [0] * x.ndim
    for s, ax in pairs:
        total[normalize_axis(int(ax), x.ndim, "roll")] += int(s)
    for ax, s in enumerate(total):
        if x.shape[ax] and s % x.shape[ax]:
            x = take_static(x, np.roll(np.arange(x.shape[ax]), s), ax)
    return x


def rot90(m, k=1, axes=(0, 1)) -> Tracer:
    """numpy.rot90: rotation by 90 degrees ``k`` times in the plane of ``axes``."""
    x = as_tracer(m, "rot90")
    axes = tuple(axes)
    if len(axes) != 2:
        raise TracingError(f"rot90: axes must name 2 axes (len(axes) must be 2), got {axes}")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == x.ndim:
        raise TracingError(f"rot90: axes {axes} must be different axes of the {x.ndim}-d array")
    if builtins.any(not -x.ndim <= ax < x.ndim for ax in axes):
        raise TracingError(f"rot90: axes={axes} out of range for array of ndim={x.ndim}")
    k = int(k) % 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, axes[0]), axes[1])
    perm = list(range(x.ndim))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 1:
        return transpose(flip(x, axes[1]), perm)
    return flip(transpose(x, perm), axes[1])


def fliplr(m) -> Tracer:
    x = as_tracer(m, "fliplr")
    if x.ndim < 2:
        raise TracingError(f"fliplr: input must be >= 2-d, got shape {x.shape}")
    return flip(x, 1)


def flipud(m) -> Tracer:
    x = as_tracer(m, "flipud")
    if x.ndim < 1:
        raise TracingError("flipud: input must be >= 1-d, got a 0-d array")
    return flip(x, 0)


# ---- at least n dimensions, stacking helpers ------------------------------------------

# Where numpy puts the new size-1 axes, by target rank and input rank.
_ATLEAST_SHAPES = {
    1: {0: lambda s: (1,)},
    2: {0: lambda s: (1, 1), 1: lambda s: (1,) + s},
    3: {0: lambda s: (1, 1, 1), 1: lambda s: (1,) + s + (1,), 2: lambda s: s + (1,)},
}


def _atleast(ndim: int, arys, where: str):
    out = []
    for i, a in enumerate(arys):
        x = as_tracer(a, f"{where} array {i}")
        grow = _ATLEAST_SHAPES[ndim].get(x.ndim)
        out.append(reshape(x, grow(x.shape)) if grow else x)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys):
    return _atleast(1, arys, "atleast_1d")


def atleast_2d(*arys):
    return _atleast(2, arys, "atleast_2d")


def atleast_3d(*arys):
    return _atleast(3, arys, "atleast_3d")


def _join(arrays: Sequence[Tracer], axis: int, dtype, casting: str, where: str) -> Tracer:
    """concatenate with numpy's ``dtype``/``casting`` check of the stacking helpers."""
    target = np.dtype(dtype) if dtype is not None else None
    if target is not None:
        for i, t in enumerate(arrays):
            if not np.can_cast(t.dtype, target, casting):
                raise UnsupportedDtypeError(
                    f"{where}: cannot cast array {i} from {t.dtype.name} to {target.name} "
                    f"according to the rule {casting!r}; pass casting='unsafe' to allow it"
                )
    return concatenate(arrays, axis=axis, dtype=dtype)


def _as_list(result) -> list:
    return list(result) if isinstance(result, tuple) else [result]


def _sequence(tup, where: str) -> list:
    if isinstance(tup, Tracer) or not isinstance(tup, (list, tuple)):
        raise TracingError(f"{where}: expected a list or tuple of arrays, got {type(tup).__name__}")
    if not tup:
        raise TracingError(f"{where}: need at least one array to concatenate")
    return list(tup)


def hstack(tup, *, dtype=None, casting="same_kind") -> Tracer:
    arrays = _as_list(atleast_1d(*_sequence(tup, "hstack")))
    return _join(arrays, 0 if arrays[0].ndim == 1 else 1, dtype, casting, "hstack")


def vstack(tup, *, dtype=None, casting="same_kind") -> Tracer:
    return _join(_as_list(atleast_2d(*_sequence(tup, "vstack"))), 0, dtype, casting, "vstack")


def dstack(tup) -> Tracer:
    return concatenate(_as_list(atleast_3d(*_sequence(tup, "dstack"))), axis=2)


def column_stack(tup) -> Tracer:
    columns = []
    for i, a in enumerate(_sequence(tup, "column_stack")):
        x = as_tracer(a, f"column_stack array {i}")
        columns.append(reshape(x, (x.size, 1)) if x.ndim < 2 else x)
    return concatenate(columns, axis=1)


# ---- append, insert, delete -----------------------------------------------------------

def append(arr, values, axis=None) -> Tracer:
    x = as_tracer(arr, "append")
    v = as_tracer(values, "append values")
    if axis is None:
        return concatenate([ravel(x), ravel(v)], axis=0)
    return concatenate([x, v], axis=axis)


def _flat_axis(x: Tracer, axis, where: str) -> tuple[Tracer, int]:
    if axis is None:
        return ravel(x), 0
    return x, normalize_axis(axis, x.ndim, where)


def _cast_values(values, dtype: np.dtype, where: str) -> Tracer:
    """Values to insert, converted to the array's dtype as numpy's ``array(values, dtype=)``."""
    if isinstance(values, Tracer):
        return ew.astype(as_tracer(values, where), dtype)
    try:
        return current_trace().constant(np.array(values, dtype=dtype))
    except (TypeError, ValueError, OverflowError) as e:
        raise TracingError(f"{where}: values {values!r} cannot be stored in a {dtype.name} "
                           f"array: {e}") from None


def insert(arr, obj, values, axis=None) -> Tracer:
    """numpy.insert with a static ``obj``: ``values`` inserted before the given indices."""
    x, ax = _flat_axis(as_tracer(arr, "insert"), axis, "insert")
    n = x.shape[ax]
    positions = insert_positions(obj, n, "insert")
    v = _cast_values(values, x.dtype, "insert values")
    slot = list(x.shape)
    if positions.size == 1:
        index = int(positions.reshape(()) if positions.ndim == 0 else positions[0])
        if not -n <= index <= n:
            raise TracingError(
                f"insert: index {index} is out of bounds for axis {ax} with size {n}"
            )
        index += n if index < 0 else 0
        v = reshape(v, (1,) * (x.ndim - v.ndim) + v.shape) if v.ndim < x.ndim else v
        if positions.ndim == 0:
            v = moveaxis(v, 0, ax)  # numpy: a scalar index inserts values' first axis
        slot[ax] = v.shape[ax]
        v = _broadcast_into(v, tuple(slot), "insert")
        head = basic_getitem(x, _axis_index(x.ndim, ax, slice(0, index)))
        tail = basic_getitem(x, _axis_index(x.ndim, ax, slice(index, n)))
        return concatenate([head, v, tail], axis=ax)
    positions = np.where(positions < 0, positions + n, positions)
    if ((positions < 0) | (positions > n)).any():
        raise TracingError(f"insert: indices {obj!r} are out of bounds for axis {ax} with size {n}")
    count = len(positions)
    slot[ax] = count
    v = _broadcast_into(v, tuple(slot), "insert")
    order = np.argsort(positions, kind="stable")
    new_positions = positions.copy()
    new_positions[order] += np.arange(count)
    source = np.empty(n + count, np.int64)
    is_old = np.ones(n + count, bool)
    is_old[new_positions] = False
    source[new_positions] = n + np.arange(count)
    source[is_old] = np.arange(n)
    return take_static(concatenate([x, v], axis=ax), source, ax)


def _broadcast_into(v: Tracer, shape: tuple, where: str) -> Tracer:
    try:
        fits = v.ndim <= len(shape) and np.broadcast_shapes(v.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise TracingError(f"{where}: could not broadcast values of shape {v.shape} into the "
                           f"inserted block of shape {shape}")
    return broadcast_to(v, shape)


def delete(arr, obj, axis=None) -> Tracer:
    """numpy.delete with a static ``obj`` (an int, ints, a slice or booleans)."""
    x, ax = _flat_axis(as_tracer(arr, "delete"), axis, "delete")
    obj = static_value(obj, "delete obj")
    try:
        keep = np.delete(np.arange(x.shape[ax]), obj)
    except (IndexError, ValueError) as e:
        raise TracingError(f"delete: obj {obj!r} for axis {ax} of shape {x.shape}: {e}") from None
    return take_static(x, keep, ax)


# ---- shapes -------------------------------------------------------------------------

def broadcast_shapes(*shapes) -> tuple:
    """numpy.broadcast_shapes, on static shapes (ints or tuples)."""
    tuples = [(int(s),) if isinstance(s, (int, np.integer)) else tuple(int(d) for d in s)
              for s in shapes]
    return broadcast_result_shape(tuples, "broadcast_shapes")


def resize(a, new_shape) -> Tracer:
    """numpy.resize: the flattened array repeated (or cut) to fill ``new_shape``."""
    x = ravel(as_tracer(a, "resize"))
    shape = tuple(int(d) for d in static_ints(new_shape, "resize", "new_shape").reshape(-1))
    if builtins.any(d < 0 for d in shape):
        raise TracingError(f"resize: all elements of new_shape {shape} must be non-negative")
    size = math.prod(shape)
    if x.size == 0 or size == 0:
        return current_trace().constant(np.zeros(shape, x.dtype))
    tiled = tile(x, -(-size // x.size))
    return reshape(basic_getitem(tiled, slice(0, size)), shape)
