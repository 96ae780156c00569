"""Index arrays and the conversions between flat and multi-dimensional indices:
``tril_indices``/``triu_indices`` (and ``_from``), ``diag_indices`` (and ``_from``),
``mask_indices``, ``ix_``, ``ravel_multi_index``, ``unravel_index`` and ``fill_diagonal``.

Indices that depend only on shapes are computed by numpy at trace time (constants);
``ix_``, ``ravel_multi_index`` and ``unravel_index`` take traced indices, with JAX's
rules where tracing changes them: ``ravel_multi_index(mode="raise")`` needs concrete
indices (use "wrap" or "clip"), and ``unravel_index`` clips out-of-range indices instead
of raising. ``fill_diagonal`` returns the filled array (JAX's ``inplace=False``).
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..core import Tracer, current_trace
from ..errors import TracingError
from .arguments import as_tracer, static_value
from .elementwise import astype, clip, elementwise_where, ufunc
from .rearrange import resize
from .shape import ravel, reshape
from .updates import update

EXPORTS: dict[str, list[str]] = {
    "numpy": ["tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from",
              "diag_indices", "diag_indices_from", "mask_indices", "ix_", "ravel_multi_index",
              "unravel_index", "fill_diagonal"],
}


def is_integer(dtype) -> bool:
    """Whether ``dtype`` is a signed or unsigned integer (what indices must be)."""
    return dtypes.kind(dtype) in ("int", "uint")


def _constants(arrays) -> tuple:
    return tuple(current_trace().constant(np.asarray(a)) for a in arrays)


def _static_int(value, name: str, where: str) -> int:
    value = static_value(value, f"{where} {name}")
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TracingError(f"{where}: {name} must be an int, got {value!r}")
    return int(value)


def _triangle_indices(name: str):
    numpy_fn = getattr(np, name)

    def indices(n, k=0, m=None) -> tuple:
        n = _static_int(n, "n", name)
        m = None if m is None else _static_int(m, "m", name)
        return _constants(numpy_fn(n, _static_int(k, "k", name), m))

    indices.__name__ = indices.__qualname__ = name
    indices.__doc__ = (f"numpy.{name}: the row and column indices of the "
                       f"{'lower' if 'tril' in name else 'upper'} triangle of an (n, m) "
                       f"array (static sizes: constants).")
    return indices


def _square(arr, where: str) -> Tracer:
    shape = np.shape(arr) if not isinstance(arr, Tracer) else arr.shape
    if len(shape) != 2:
        raise TracingError(f"{where}: arr must be 2-d, got shape {tuple(shape)}")
    return shape


tril_indices, triu_indices = _triangle_indices("tril_indices"), _triangle_indices("triu_indices")


def tril_indices_from(arr, k=0) -> tuple:
    """numpy.tril_indices_from: tril_indices for a 2-d array's shape."""
    rows, cols = _square(arr, "tril_indices_from")
    return tril_indices(rows, k, cols)


def triu_indices_from(arr, k=0) -> tuple:
    """numpy.triu_indices_from: triu_indices for a 2-d array's shape."""
    rows, cols = _square(arr, "triu_indices_from")
    return triu_indices(rows, k, cols)


def diag_indices(n, ndim=2) -> tuple:
    """numpy.diag_indices: ``ndim`` copies of ``arange(n)``, the main diagonal's indices."""
    return _constants(np.diag_indices(_static_int(n, "n", "diag_indices"),
                                      _static_int(ndim, "ndim", "diag_indices")))


def diag_indices_from(arr) -> tuple:
    """numpy.diag_indices_from: the main diagonal's indices of an array whose axes all
    have the same length (at least 2 of them)."""
    shape = arr.shape if isinstance(arr, Tracer) else np.shape(arr)
    if len(shape) < 2:
        raise TracingError(f"diag_indices_from: input array must be at least 2-d, got "
                           f"shape {tuple(shape)}")
    if len(set(shape)) != 1:
        raise TracingError(f"diag_indices_from: all dimensions of input must be of equal "
                           f"length, got shape {tuple(shape)}")
    return diag_indices(shape[0], len(shape))


def mask_indices(n, mask_func, k=0) -> tuple:
    """numpy.mask_indices: the indices where ``mask_func(ones((n, n)), k)`` is nonzero;
    mask_func runs on a numpy array at trace time (np.triu, np.tril, ...)."""
    n = _static_int(n, "n", "mask_indices")
    mask = mask_func(np.ones((n, n), int), k)
    if isinstance(mask, Tracer):
        raise TracingError("mask_indices: mask_func must compute on numpy arrays (e.g. "
                           "np.triu, np.tril), not aotc.numpy functions: the indices are "
                           "static and numpy finds them while tracing")
    return _constants(np.nonzero(np.asarray(mask) != 0))


def ix_(*args) -> tuple:
    """numpy.ix_: 1-d index sequences shaped (n, 1, ..), (1, n, ..), ... to index an open
    mesh; traced integer arrays are reshaped, boolean masks must be static (numpy)."""
    out = []
    for i, seq in enumerate(args):
        if isinstance(seq, Tracer):
            if seq.dtype == np.bool_:
                raise TracingError(f"ix_: argument {i} is a traced boolean mask; its number "
                                   f"of True entries is known only at run time (pass integer "
                                   f"indices, e.g. nonzero(mask, size=...)[0])")
            t = seq
        else:
            array = np.asarray(seq)
            if array.dtype == np.bool_:
                array = np.nonzero(array)[0]
            elif array.size == 0:
                array = array.astype(np.intp)
            t = as_tracer(array, f"ix_ argument {i}")
        if t.ndim != 1:
            raise TracingError(f"ix_: cross index must be 1-dimensional, argument {i} has "
                               f"shape {t.shape}")
        if not is_integer(t.dtype) and t.dtype != np.bool_:
            raise TracingError(f"ix_: argument {i} must hold integers, got {t.dtype}")
        out.append(reshape(t, (1,) * i + (-1,) + (1,) * (len(args) - i - 1)))
    return tuple(out)


def _strides(dims: tuple, order: str, where: str) -> list[int]:
    if order not in ("C", "F"):
        raise TracingError(f"{where}: order must be 'C' or 'F', got {order!r}")
    axes = range(len(dims)) if order == "F" else reversed(range(len(dims)))
    strides, step = [0] * len(dims), 1
    for d in axes:
        strides[d], step = step, step * dims[d]
    return strides


def _static_dims(dims, where: str) -> tuple[int, ...]:
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    return tuple(_static_int(d, "dims entry", where) for d in dims)


# How ravel_multi_index brings traced indices into range (mode="raise" needs values).
_INTO_RANGE = {
    "wrap": lambda i, d: ufunc("remainder", i, d),
    "clip": lambda i, d: clip(i, 0, d - 1),
}


def ravel_multi_index(multi_index, dims, mode="raise", order="C") -> Tracer:
    """numpy.ravel_multi_index: flat indices of coordinate arrays into an array of shape
    ``dims`` (int64). Traced coordinates take JAX's modes "wrap" or "clip" ("raise", the
    default, checks values, which only concrete coordinates have)."""
    where = "ravel_multi_index"
    dims = _static_dims(dims, where)
    if len(multi_index) != len(dims):
        raise TracingError(f"{where}: multi_index has {len(multi_index)} coordinate arrays "
                           f"for {len(dims)} dims")
    if not any(isinstance(i, Tracer) for i in multi_index):
        modes = mode if isinstance(mode, str) else tuple(mode)
        return current_trace().constant(np.ravel_multi_index(
            tuple(np.asarray(i) for i in multi_index), dims, mode=modes, order=order))
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    if "raise" in modes:
        raise TracingError(f"{where}: mode='raise' checks the coordinates' values, which "
                           f"traced arrays do not have; use mode='wrap' or mode='clip'")
    flat = None
    for index, d, m, stride in zip(multi_index, dims, modes, _strides(dims, order, where)):
        if m not in _INTO_RANGE:
            raise TracingError(f"{where}: mode must be 'raise', 'wrap' or 'clip', got {m!r}")
        t = as_tracer(index, f"{where} multi_index")
        if not is_integer(t.dtype):
            raise TracingError(f"{where}: only int indices permitted, got {t.dtype}")
        term = ufunc("multiply", _INTO_RANGE[m](astype(t, np.int64), d), stride)
        flat = term if flat is None else ufunc("add", flat, term)
    return flat


def unravel_index(indices, shape, order="C") -> tuple:
    """numpy.unravel_index: the coordinates of flat ``indices`` in an array of ``shape``
    (int64). Traced indices are not checked: as in JAX, out-of-range ones are clipped to
    the nearest valid coordinates (negative ones count from the end, as numpy's don't)."""
    where = "unravel_index"
    dims = _static_dims(shape, where)
    if not isinstance(indices, Tracer):
        return _constants(np.unravel_index(indices, dims, order=order))
    if not is_integer(indices.dtype):
        raise TracingError(f"{where}: indices must be integers, got {indices.dtype}")
    size = math.prod(dims)
    flat = astype(indices, np.int64)
    flat = clip(elementwise_where(ufunc("less", flat, 0), ufunc("add", flat, size), flat),
                0, max(size - 1, 0))
    return tuple(ufunc("remainder", ufunc("floor_divide", flat, stride), d)
                 for d, stride in zip(dims, _strides(dims, order, where)))


def fill_diagonal(a, val, wrap=False, *, inplace=True) -> Tracer:
    """numpy.fill_diagonal as JAX has it: the array with its main diagonal set to ``val``
    (repeated as needed), returned (``inplace=False`` is required: traced arrays are
    values). An array of more than 2 axes must have them of equal length."""
    if inplace:
        raise TracingError("fill_diagonal: aotc returns the filled array instead of "
                           "writing into `a`; pass inplace=False (as JAX requires)")
    x = as_tracer(a, "fill_diagonal")
    if x.ndim < 2:
        raise TracingError(f"fill_diagonal: array must be at least 2-d, got shape {x.shape}")
    if x.ndim > 2 and len(set(x.shape)) != 1:
        raise TracingError(f"fill_diagonal: all dimensions of input must be of equal length, "
                           f"got shape {x.shape}")
    if wrap:
        raise TracingError("fill_diagonal: wrap=True is not supported (as in JAX)")
    n = min(x.shape)
    values = astype(val, x.dtype)
    if values.ndim:
        values = resize(ravel(values), (n,))
    return update(x, diag_indices(n, x.ndim), values, "set")

