"""Array creation. Shapes and bounds are static, so the arrays are built with numpy at
trace time and become constants (splats stay splats, which IREE folds away); ``meshgrid``
reshapes its vectors and broadcasts them (``linalg.generic`` broadcasts that fuse with
their consumers)."""

from __future__ import annotations

import numpy as np

from .. import dtypes, x64
from ..core import Tracer, current_trace
from ..errors import TracingError
from . import elementwise as ew
from .arguments import as_operand, as_tracer, broadcast_result_shape, static_value
from .shape import broadcast_to, ravel, reshape, stack
from .static_args import static_ints

EXPORTS: dict[str, list[str]] = {
    "numpy": ["arange", "array", "asarray", "empty", "empty_like", "eye", "full", "full_like",
              "identity", "indices", "meshgrid", "ones", "ones_like", "zeros",
              "zeros_like"],
}


def _constant(array: np.ndarray, where: str, weak_from=None) -> Tracer:
    """``array`` as a constant; with x64 off it is weak when made from a Python scalar
    ``weak_from`` without a dtype, as JAX's ``full(3, 1.0)`` and ``array(1.0)`` are."""
    dtypes.canonicalize(array.dtype, where)
    if type(weak_from) in (int, float, complex) and not x64.enabled():
        out = current_trace().constant(array.astype(x64.narrow(array.dtype)))
        return Tracer(out.value, out.shape, out.dtype, weak=True)
    return current_trace().constant(array)


def _static_shape(shape, where: str) -> tuple[int, ...]:
    shape = static_value(shape, f"{where} shape")
    return (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)


def full(shape, fill_value, dtype=None) -> Tracer:
    shape = _static_shape(shape, "full")
    if isinstance(fill_value, Tracer):
        value = fill_value if dtype is None else ew.astype(fill_value, dtype)
        return broadcast_to(value, shape)
    return _constant(np.full(shape, fill_value, dtype=dtype), "full",
                     fill_value if dtype is None else None)


def zeros(shape, dtype=float) -> Tracer:
    return _constant(np.zeros(_static_shape(shape, "zeros"), dtype=dtype), "zeros")


def ones(shape, dtype=float) -> Tracer:
    return _constant(np.ones(_static_shape(shape, "ones"), dtype=dtype), "ones")


def empty(shape, dtype=float) -> Tracer:
    return zeros(shape, dtype)


def _like(a, dtype, shape):
    x = as_tracer(a, "like") if not isinstance(a, Tracer) else a
    return (x.shape if shape is None else shape), (x.dtype if dtype is None else dtype)


def zeros_like(a, dtype=None, shape=None) -> Tracer:
    return zeros(*_like(a, dtype, shape))


def ones_like(a, dtype=None, shape=None) -> Tracer:
    return ones(*_like(a, dtype, shape))


def empty_like(a, dtype=None, shape=None) -> Tracer:
    return zeros(*_like(a, dtype, shape))


def full_like(a, fill_value, dtype=None, shape=None) -> Tracer:
    s, d = _like(a, dtype, shape)
    return full(s, fill_value, d)


def arange(start, stop=None, step=None, dtype=None) -> Tracer:
    start, stop, step = (static_value(v, f"arange {name}")
                         for name, v in (("start", start), ("stop", stop), ("step", step)))
    return _constant(np.arange(start, stop, step, dtype=dtype), "arange")


def eye(N, M=None, k=0, dtype=float) -> Tracer:
    return _constant(np.eye(N, M, k, dtype=dtype), "eye")


def identity(n, dtype=float) -> Tracer:
    return eye(n, dtype=dtype)


def _holds_tracer(obj) -> bool:
    if isinstance(obj, Tracer):
        return True
    return isinstance(obj, (list, tuple)) and any(_holds_tracer(o) for o in obj)


def _leaves(obj, out: list, where: str) -> list:
    if isinstance(obj, (list, tuple)):
        for o in obj:
            _leaves(o, out, where)
    else:
        out.append(as_operand(obj, where))
    return out


def _nested(obj, dtype: np.dtype, where: str) -> Tracer:
    """A (nested) list or tuple of traced arrays, arrays and scalars as one array: the
    elements cast to ``dtype`` and stacked, level by level (every element of a level of
    one shape, as numpy requires)."""
    if not isinstance(obj, (list, tuple)):
        if isinstance(obj, Tracer):
            return ew.astype(obj, dtype)
        return _constant(np.asarray(obj, dtype=dtype), where)  # OverflowError as numpy
    if not obj:
        return _constant(np.zeros((0,), dtype), where)
    parts = [_nested(o, dtype, where) for o in obj]
    for k, p in enumerate(parts[1:], 1):
        if p.shape != parts[0].shape:
            raise TracingError(
                f"{where}: the sequence has an inhomogeneous shape: element 0 has shape "
                f"{parts[0].shape}, element {k} has shape {p.shape}. Fix: give every "
                f"element of a level the same shape (broadcast_to, reshape)")
    return stack(parts)


def _check_order(order, where: str) -> None:
    if order not in (None, "K", "A", "C"):
        raise TracingError(f"{where}: order={order!r} is not supported: traced arrays are "
                           f"laid out row-major (order 'K', 'A', 'C' or None)")


def asarray(a, dtype=None, order=None, *, copy=None) -> Tracer:
    """numpy.asarray: ``a`` as an array, ``a`` itself when it is one of ``dtype``
    (``copy=True``: always a new array; ``copy=False``: an error if a copy is needed).
    A (nested) list or tuple holding traced arrays is their stack (numpy's shape rule,
    the dtype by aotc's promotion: Python scalars are weak, as in JAX)."""
    _check_order(order, "asarray")
    if isinstance(a, Tracer):
        dt = a.dtype if dtype is None else dtypes.canonicalize(dtype, "asarray dtype")
        if dt == a.dtype:
            return Tracer(a.value, a.shape, a.dtype, weak=a.weak) if copy else a
        if copy is False:
            raise TracingError(f"asarray: copy=False, but converting {a.dtype} to {dt} makes "
                               f"a copy (numpy's ValueError: Unable to avoid copy). Fix: "
                               f"copy=None")
        return ew.astype(a, dt)
    if _holds_tracer(a):
        leaves = _leaves(a, [], "asarray")
        dt = dtypes.canonicalize(
            dtype if dtype is not None
            else dtypes.result_type(*[ew._promotion_operand(o) for o in leaves]), "asarray")
        if copy is False:
            raise TracingError("asarray: copy=False, but a sequence of traced arrays is "
                               "stacked into a new array. Fix: copy=None")
        return _nested(a, dt, "asarray")
    return _constant(np.asarray(a, dtype=dtype, copy=copy), "asarray",
                     a if dtype is None else None)


def array(object, dtype=None, *, copy=True, order="K", ndmin=0) -> Tracer:  # noqa: A002
    """numpy.array: a new array from ``object`` (``copy=False``: ``object`` itself where
    no copy is needed, numpy's rule); ``ndmin`` leading axes of size 1 added as needed.
    A (nested) list or tuple with traced arrays is stacked as ``asarray`` does.

    >>> f = aotc.jit(lambda t: aotc.numpy.array([[t, 1.0], [2.0, t]]))
    >>> f(np.float32(3))
    Array([[3., 1.],
           [2., 3.]], dtype=float32)
    """
    _check_order(order, "array")
    if not (isinstance(object, Tracer) or _holds_tracer(object)):
        return _constant(np.array(object, dtype=dtype, copy=copy, ndmin=ndmin), "array",
                         object if dtype is None else None)
    out = asarray(object, dtype, copy=copy)
    if out.ndim < ndmin:
        out = reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return out


# ---- grids -----------------------------------------------------------------------------

def meshgrid(*xi, copy=True, sparse=False, indexing="xy") -> tuple:
    """numpy.meshgrid: coordinate arrays (reshapes; broadcasts unless ``sparse``)."""
    if indexing not in ("xy", "ij"):
        raise TracingError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    vectors = [ravel(as_tracer(x, f"meshgrid array {i}")) for i, x in enumerate(xi)]
    ndim = len(vectors)
    shapes = [[1] * ndim for _ in vectors]
    for i, v in enumerate(vectors):
        shapes[i][i] = v.size
    if indexing == "xy" and ndim > 1:
        shapes[0][:2], shapes[1][:2] = [1, vectors[0].size], [vectors[1].size, 1]
    grids = [reshape(v, tuple(s)) for v, s in zip(vectors, shapes)]
    if not sparse:
        grid_shape = broadcast_result_shape([g.shape for g in grids], "meshgrid")
        grids = [broadcast_to(g, grid_shape) for g in grids]
    return tuple(grids)


def indices(dimensions, dtype=int, sparse=False):
    """numpy.indices: a constant grid of indices (static dimensions)."""
    dims = tuple(int(d) for d in static_ints(dimensions, "indices", "dimensions").reshape(-1))
    dtypes.canonicalize(dtype, "indices dtype")
    grid = np.indices(dims, dtype=dtype, sparse=sparse)
    if sparse:
        return tuple(current_trace().constant(np.ascontiguousarray(g)) for g in grid)
    return current_trace().constant(grid)
