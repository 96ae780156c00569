"""Array creation. Shapes and bounds are static, so the arrays are built with numpy at
trace time and become constants (splats stay splats, which IREE folds away); ``meshgrid``
reshapes its vectors and broadcasts them (``linalg.generic`` broadcasts that fuse with
their consumers)."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core import Tracer, current_trace
from ..errors import TracingError
from . import elementwise as ew
from .arguments import as_tracer, broadcast_result_shape
from .shape import broadcast_to, ravel, reshape
from .static_args import static_ints

EXPORTS: dict[str, list[str]] = {
    "numpy": ["arange", "array", "asarray", "empty", "empty_like", "eye", "full", "full_like",
              "identity", "indices", "linspace", "meshgrid", "ones", "ones_like", "zeros",
              "zeros_like"],
}


def _constant(array: np.ndarray, where: str) -> Tracer:
    dtypes.canonicalize(array.dtype, where)
    return current_trace().constant(array)


def _static_shape(shape, where: str) -> tuple[int, ...]:
    if isinstance(shape, Tracer):
        shape._no_value(f"{where} shape")
    return (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)


def full(shape, fill_value, dtype=None) -> Tracer:
    shape = _static_shape(shape, "full")
    if isinstance(fill_value, Tracer):
        value = fill_value if dtype is None else ew.astype(fill_value, dtype)
        return broadcast_to(value, shape)
    return _constant(np.full(shape, fill_value, dtype=dtype), "full")


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
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, Tracer):
            v._no_value(f"arange {name}")
    return _constant(np.arange(start, stop, step, dtype=dtype), "arange")


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    for name, v in (("start", start), ("stop", stop)):
        if isinstance(v, Tracer):
            v._no_value(f"linspace {name}")
    result = np.linspace(start, stop, num, endpoint=endpoint, retstep=retstep, dtype=dtype,
                         axis=axis)
    if retstep:
        return _constant(result[0], "linspace"), result[1]
    return _constant(result, "linspace")


def eye(N, M=None, k=0, dtype=float) -> Tracer:
    return _constant(np.eye(N, M, k, dtype=dtype), "eye")


def identity(n, dtype=float) -> Tracer:
    return eye(n, dtype=dtype)


def asarray(a, dtype=None) -> Tracer:
    if isinstance(a, Tracer):
        return a if dtype is None else ew.astype(a, dtype)
    return _constant(np.asarray(a, dtype=dtype), "asarray")


array = asarray


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
