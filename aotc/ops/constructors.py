"""Arrays made from other things: ``linspace``, ``logspace`` and ``geomspace`` (traced
endpoints, static ``num``), ``fromfunction`` (the function called on the index grids),
and the host-side constructors ``frombuffer``, ``fromstring``, ``fromiter`` and
``from_dlpack``, which numpy runs at trace time (the result is a constant, as any
captured numpy array is).

``frompyfunc`` is refused: a numpy object ufunc calls Python per element, which a compiled
program cannot; ``vectorize`` (aotc/ops/functional.py) maps a traceable function instead.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes, x64
from ..core import Tracer, current_trace
from ..errors import TracingError, UnsupportedOpError
from .arguments import as_tracer, static_value
from .creation import asarray
from .elementwise import astype, ufunc
from .shape import broadcast_to, concatenate, expand_dims, moveaxis, reshape

EXPORTS: dict[str, list[str]] = {
    "numpy": ["linspace", "logspace", "geomspace", "fromfunction", "frombuffer", "fromstring",
              "fromiter", "from_dlpack", "frompyfunc"],
}


def _count(num, where: str) -> int:
    num = static_value(num, f"{where} num")
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or num < 0:
        raise TracingError(f"{where}: num must be a non-negative integer, got {num!r}")
    return int(num)


def _evenly_spaced(start: Tracer, stop: Tracer, num: int, endpoint: bool) -> Tracer:
    """numpy.linspace's values along a new leading axis: ``i * step + start`` with
    ``step = (stop - start) / div``, the last one ``stop`` itself when ``endpoint``."""
    shape = np.broadcast_shapes(start.shape, stop.shape)
    start, stop = broadcast_to(start, shape), broadcast_to(stop, shape)
    div = num - 1 if endpoint else num
    steps = np.arange(num, dtype=np.float64).reshape((num,) + (1,) * len(shape))
    if div > 0:
        step = ufunc("divide", ufunc("subtract", stop, start), float(div))
        values = ufunc("add", ufunc("multiply", astype(steps, start.dtype), step), start)
    else:  # numpy: one point (or none) is start itself
        values = ufunc("add", astype(steps * 0, start.dtype), start)
    if endpoint and num > 1:
        values = concatenate([values[:-1], expand_dims(stop, 0)])
    return values


def _traced_pair(start, stop, dtype: np.dtype, where: str) -> tuple[Tracer, Tracer]:
    return (astype(as_tracer(start, f"{where} start"), dtype),
            astype(as_tracer(stop, f"{where} stop"), dtype))


def _finish(values: Tracer, dtype, axis) -> Tracer:
    if axis != 0:
        values = moveaxis(values, 0, axis)
    return values if dtype is None else astype(values, dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """numpy.linspace; ``start`` and ``stop`` may be traced (computed in numpy's dtype,
    floored before an integer ``dtype`` as numpy 2 does), ``num`` is static."""
    if not (isinstance(start, Tracer) or isinstance(stop, Tracer)):
        result = np.linspace(start, stop, num, endpoint=endpoint, retstep=retstep,
                             dtype=dtype, axis=axis)
        values = result[0] if retstep else result
        dtypes.canonicalize(values.dtype, "linspace")
        values = current_trace().constant(values)
        return (values, result[1]) if retstep else values
    num = _count(num, "linspace")
    computed = dtypes.result_type(*(v.dtype if isinstance(v, Tracer) else v
                                    for v in (start, stop)), float(num))
    low, high = _traced_pair(start, stop, computed, "linspace")
    values = _evenly_spaced(low, high, num, endpoint)
    if dtype is not None and dtypes.kind(np.dtype(dtype)) in ("int", "uint"):
        values = ufunc("floor", values)
    values = _finish(values, dtype, axis)
    if not retstep:
        return values
    div = num - 1 if endpoint else num
    if div <= 0:
        return values, np.nan  # numpy's step then: a float NaN, whatever the endpoints
    return values, ufunc("divide", ufunc("subtract", high, low), float(div))


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0) -> Tracer:
    """numpy.logspace: ``base ** linspace(start, stop, num)``; ``start``, ``stop`` and
    ``base`` may be traced, ``num`` is static."""
    num = _count(num, "logspace")
    if not any(isinstance(v, Tracer) for v in (start, stop, base)):
        return current_trace().constant(np.logspace(start, stop, num, endpoint, base, dtype,
                                                     axis))
    exponent_dtype = dtypes.result_type(*(v.dtype if isinstance(v, Tracer) else v
                                          for v in (start, stop)), float(num))
    low, high = _traced_pair(start, stop, exponent_dtype, "logspace")
    exponents = _evenly_spaced(low, high, num, endpoint)
    if isinstance(base, Tracer) or np.ndim(base):
        exponents, base = _base_along(exponents, base)
    return _finish(ufunc("power", base, exponents), dtype, axis)


def _base_along(exponents: Tracer, base) -> tuple[Tracer, Tracer]:
    """An array ``base`` broadcast as numpy's logspace does: over the endpoints' shape,
    with the new axis in front."""
    b = as_tracer(base, "logspace base")
    shape = np.broadcast_shapes(exponents.shape[1:], b.shape)
    exponents = broadcast_to(exponents, (exponents.shape[0],) + shape)
    return exponents, reshape(broadcast_to(b, shape), (1,) + shape)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0) -> Tracer:
    """numpy.geomspace: numbers spaced evenly on a log scale from ``start`` to ``stop``
    (same sign; the endpoints exact); traced endpoints (not checked for zero, as in JAX),
    static ``num``; at least float64, as numpy computes it."""
    num = _count(num, "geomspace")
    if not any(isinstance(v, Tracer) for v in (start, stop)):
        return current_trace().constant(np.geomspace(start, stop, num, endpoint, dtype, axis))
    computed = dtypes.result_type(*(v.dtype if isinstance(v, Tracer) else np.asarray(v) * 1.0
                                    for v in (start, stop)), float(num), x64.default_float())
    low, high = _traced_pair(start, stop, computed, "geomspace")
    sign = ufunc("sign", low)
    low, high = ufunc("divide", low, sign), ufunc("divide", high, sign)
    values = ufunc("power", 10.0, _evenly_spaced(ufunc("log10", low), ufunc("log10", high),
                                                 num, endpoint))
    # numpy: the endpoints are the arguments themselves, not 10 ** log10 of them
    if num > 0:
        ends = [expand_dims(low, 0)] + ([expand_dims(high, 0)] if num > 1 and endpoint else [])
        inner = values[1:num - len(ends) + 1]
        values = concatenate([ends[0], inner] + ends[1:])
    return _finish(ufunc("multiply", values, sign), dtype, axis)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """numpy.fromfunction: ``function(*indices(shape, dtype), **kwargs)``; the function is
    traced on the index grids (constants), so it may use aotc.numpy or numpy calls."""
    if not callable(function):
        raise TracingError(f"fromfunction: function must be callable, got "
                           f"{type(function).__name__}")
    try:
        grids = np.indices(tuple(shape), dtype=dtype)
    except TypeError:
        raise TracingError(f"fromfunction: shape must be a tuple of static ints, got "
                           f"{shape!r}") from None
    return function(*(asarray(g) for g in grids), **kwargs)


def _host(name: str, numpy_fn, what: str):
    def construct(*args, **kwargs) -> Tracer:
        for i, a in enumerate((*args, *kwargs.values())):
            if isinstance(a, Tracer):
                raise TracingError(f"{name}: argument {i} is a traced array; {name} reads "
                                   f"{what} on the host while tracing (use the traced array "
                                   f"itself, or aotc.numpy.asarray)")
        return current_trace().constant(np.asarray(numpy_fn(*args, **kwargs)))

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = (f"numpy.{name}: an array read from {what} by numpy while tracing "
                         f"(a constant).")
    return construct


frombuffer = _host("frombuffer", np.frombuffer, "a buffer (bytes, memoryview)")
fromiter = _host("fromiter", np.fromiter, "a Python iterable")
from_dlpack = _host("from_dlpack", np.from_dlpack, "a DLPack-exporting host array")


def _fromstring(string, dtype=float, count=-1, *, sep):
    return np.fromstring(string, dtype=dtype, count=count, sep=sep)


fromstring = _host("fromstring", _fromstring, "text (sep= is required, as numpy 2's binary "
                   "mode is gone)")


def frompyfunc(func, /, nin, nout, *, identity=None):
    """numpy.frompyfunc: refused. A numpy object ufunc calls Python once per element at
    run time, which a compiled program cannot do; write the function with array ops (it
    is then elementwise already) or map it with aotc.numpy.vectorize."""
    raise UnsupportedOpError(
        "frompyfunc: aotc cannot compile a numpy object ufunc (it calls Python once per "
        "element at run time); write the function with aotc.numpy operations, which are "
        "elementwise already, or map a traceable function with aotc.numpy.vectorize")
