"""Argument helpers every op shares: classifying operands, axes, broadcasting.

The lowest layer of the ops: it imports no op module, so every op module can import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .. import dtypes, x64
from ..core import Tracer, check_usable, current_trace
from ..errors import TracingError
from ..runtime.array import Array
from ..runtime.errors import ArgumentError
from ..runtime.subclasses import subclass_refusal


@dataclass(frozen=True)
class Scalar:
    """A constant scalar operand. ``weak`` marks a Python scalar (dtype adapts to arrays)."""

    value: object
    dtype: np.dtype
    weak: bool


PY_SCALARS = (bool, int, float, complex)


def as_operand(x, where: str):
    """Classifies an argument: Tracer, weak Python scalar, or a numpy constant."""
    if isinstance(x, Tracer):
        return check_usable(x, where)
    # not isinstance: np.float64 subclasses float but is strongly typed
    if type(x) in PY_SCALARS:
        return Scalar(x, x64.python_dtype(type(x)), weak=True)  # int64 or int32, ...
    if isinstance(x, np.generic):
        return Scalar(x, dtypes.canonicalize(x.dtype, where), weak=False)
    if isinstance(x, Array):  # a runtime array (an eager result) kept in a closure
        x = x.to_host()
    if isinstance(x, (np.ndarray, list, tuple)):
        if type(x) not in (np.ndarray, list, tuple) and isinstance(x, np.ndarray):
            refusal = subclass_refusal(x, where)  # a masked array, np.matrix, ...
            if refusal is not None:
                raise ArgumentError(refusal)
        array = np.asarray(x)
        if array.ndim == 0:
            return Scalar(array[()], dtypes.canonicalize(array.dtype, where), weak=False)
        dtypes.canonicalize(array.dtype, where)
        return current_trace().constant(x if isinstance(x, np.ndarray) else array)
    raise TracingError(
        f"{where}: expected an array, a traced array or a Python scalar, got "
        f"{type(x).__name__}"
    )


def static_value(value, what: str):
    """``value`` itself, or for a traced array the value of the constant it was made
    from (as JAX's concrete arrays inside jit; a 0-d one as a numpy scalar): ``what``, the
    argument a value was asked for, names it in the error a computed array raises."""
    return value._known_value(what) if isinstance(value, Tracer) else value


def as_tracer(x, where: str) -> Tracer:
    """``x`` as a traced array: scalars and numpy arrays become constants."""
    o = as_operand(x, where)
    if isinstance(o, Tracer):
        return o
    return current_trace().constant(np.asarray(o.value, o.dtype))


def broadcast_result_shape(shapes: Sequence[tuple], where: str) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise TracingError(
            f"{where}: shapes {', '.join(str(tuple(s)) for s in shapes)} do not broadcast "
            f"together (numpy broadcasting: trailing dimensions must be equal or 1)"
        ) from None


def normalize_axis(axis: int, ndim: int, where: str) -> int:
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TracingError(f"{where}: axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise TracingError(
            f"{where}: axis {axis} is out of bounds for an array of dimension {ndim} "
            f"(valid: {-ndim} to {ndim - 1})" if ndim
            else f"{where}: axis {axis} given for a 0-d array"
        )
    return int(axis) % ndim


def normalize_axes(axis, ndim: int, where: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(normalize_axis(a, ndim, where) for a in axes)
    if len(set(out)) != len(out):
        raise TracingError(f"{where}: repeated axis in {axis!r}")
    return out


def ufunc_axes(axis, ndim: int, where: str) -> tuple[int, ...]:
    """``normalize_axes`` for numpy's ufunc reductions (sum, max, argmax, ...), which also
    take axis 0 or -1 (not a tuple) of a 0-d array: it reduces nothing."""
    if ndim == 0 and type(axis) in (int, np.int32, np.int64) and axis in (0, -1):
        return ()
    return normalize_axes(axis, ndim, where)
