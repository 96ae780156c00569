"""Comparisons of whole arrays and questions about values: ``isclose``, ``allclose``,
``array_equal``, ``array_equiv``, ``isin``, ``isscalar``, ``isreal``, ``isrealobj``,
``iterable``.

All are compositions of ufuncs and reductions, as numpy defines them. Arrays whose shapes
differ are unequal at trace time: ``array_equal`` then returns a constant ``False``, as
JAX does.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core import Tracer, current_trace
from .arguments import as_operand, as_tracer
from .complex_parts import imag
from .creation import ones, zeros
from .elementwise import astype, ufunc
from .reductions import all as all_, any as any_
from .shape import ravel, reshape

EXPORTS: dict[str, list[str]] = {
    "numpy": ["isclose", "allclose", "array_equal", "array_equiv", "isin", "isscalar",
              "isreal", "isrealobj", "iterable"],
}


def _as_inexact(y):
    """numpy's isclose converts ``y`` to ``result_type(y, 1.0)`` (float64 for integers)."""
    operand = as_operand(y, "isclose b")
    if isinstance(operand, Tracer):
        return astype(operand, dtypes.result_type(operand.dtype, 1.0))
    if operand.weak:
        return float(operand.value)
    return np.asarray(operand.value).astype(dtypes.result_type(operand.dtype, 1.0))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tracer:
    """numpy.isclose: ``|a - b| <= atol + rtol * |b|`` for finite ``b``, or ``a == b``
    (equal infinities); NaNs equal with ``equal_nan``."""
    x, y = a, _as_inexact(b)
    tolerance = ufunc("add", atol, ufunc("multiply", rtol, ufunc("absolute", y)))
    near = ufunc("less_equal", ufunc("absolute", ufunc("subtract", x, y)), tolerance)
    result = ufunc("logical_or", ufunc("logical_and", near, ufunc("isfinite", y)),
                   ufunc("equal", x, y))
    if equal_nan:
        both_nan = ufunc("logical_and", ufunc("isnan", x), ufunc("isnan", y))
        result = ufunc("logical_or", result, both_nan)
    return result


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tracer:
    """numpy.allclose: ``all(isclose(...))``, a 0-d bool array."""
    return all_(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _constant_false() -> Tracer:
    return current_trace().constant(np.array(False))


def _all_equal(x: Tracer, y: Tracer, equal_nan: bool) -> Tracer:
    equal = ufunc("equal", x, y)
    if equal_nan:
        equal = ufunc("logical_or", equal,
                      ufunc("logical_and", ufunc("isnan", x), ufunc("isnan", y)))
    return all_(equal)


def array_equal(a1, a2, equal_nan=False) -> Tracer:
    """numpy.array_equal: same shape and equal elements (NaNs equal with ``equal_nan``);
    different shapes give a constant False."""
    x, y = as_tracer(a1, "array_equal a1"), as_tracer(a2, "array_equal a2")
    if x.shape != y.shape:
        return _constant_false()
    return _all_equal(x, y, equal_nan)


def array_equiv(a1, a2) -> Tracer:
    """numpy.array_equiv: shapes that broadcast together and equal elements; shapes that
    do not broadcast give a constant False."""
    x, y = as_tracer(a1, "array_equiv a1"), as_tracer(a2, "array_equiv a2")
    try:
        np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return _constant_false()
    return _all_equal(x, y, equal_nan=False)


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None) -> Tracer:
    """numpy.isin: whether each element of ``element`` is among ``test_elements`` (any
    shape); ``invert=True`` negates it. ``kind`` is accepted and ignored (one method)."""
    x, tests = as_tracer(element, "isin element"), as_tracer(test_elements, "isin test_elements")
    flat = ravel(tests)
    if flat.shape[0] == 0:
        found = zeros(x.shape, np.bool_)
    else:
        pairs = ufunc("equal", reshape(x, x.shape + (1,)), flat)
        found = any_(pairs, axis=-1)
    return ufunc("logical_not", found) if invert else found


def isscalar(element) -> bool:
    """jax.numpy.isscalar: numpy's scalars and 0-d arrays, traced ones included (numpy's
    isscalar is False for 0-d arrays)."""
    if np.isscalar(element):
        return True
    if isinstance(element, (np.ndarray, Tracer)):
        return element.ndim == 0
    return False


def isrealobj(x) -> bool:
    """numpy.isrealobj: whether the array's dtype is not complex (a trace-time bool)."""
    return not dtypes.is_complex(as_operand(x, "isrealobj").dtype)


def isreal(x) -> Tracer:
    """numpy.isreal: elements whose imaginary part is zero (every element of a real array)."""
    t = as_tracer(x, "isreal")
    if not dtypes.is_complex(t.dtype):
        return ones(t.shape, np.bool_)
    return ufunc("equal", imag(t), 0)


def iterable(y) -> bool:
    """numpy.iterable: whether ``iter(y)`` works (traced arrays of 1 or more dimensions)."""
    if isinstance(y, Tracer):
        return y.ndim > 0
    return bool(np.iterable(y))
