"""Array creation. Shapes and bounds are static, so the arrays are built with numpy at
trace time and become constants (splats stay splats, which IREE folds away)."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core import Tracer, current_trace
from . import elementwise as ew
from .shape import as_tracer, broadcast_to


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
    result = np.linspace(start, stop, num, endpoint=endpoint, retstep=retstep, dtype=dtype, axis=axis)
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
