"""Elementwise operations: numpy ufuncs, where, clip, astype.

Every elementwise op becomes one ``linalg.generic`` over the broadcast shape; operands
are cast to numpy's loop dtype inside the body, so IREE fuses chains of them into one
dispatch. Python scalars are weakly typed (NEP 50) and become constants in the body.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .. import dtypes
from ..core import Tracer, check_usable, current_trace
from ..errors import TracingError, UnsupportedDtypeError
from ..lowering import add_work, dim_map, drop_broadcast_dims, empty, generic, parallel, scalar_constant, wrap
from .scalar import convert, loop_body


@dataclass(frozen=True)
class Scalar:
    """A constant scalar operand. ``weak`` marks a Python scalar (dtype adapts to arrays)."""

    value: object
    dtype: np.dtype
    weak: bool


Operand = "Tracer | Scalar"
PY_SCALARS = (bool, int, float)


def as_operand(x, where: str):
    """Classifies an argument: Tracer, weak Python scalar, or a numpy constant."""
    if isinstance(x, Tracer):
        check_usable(x, where)
        return x
    if type(x) in PY_SCALARS:  # not isinstance: np.float64 subclasses float but is strongly typed
        return Scalar(x, np.dtype(type(x) if not isinstance(x, bool) else np.bool_), weak=True)
    if isinstance(x, np.generic):
        return Scalar(x, dtypes.canonicalize(x.dtype, where), weak=False)
    if isinstance(x, (np.ndarray, list, tuple)):
        array = np.asarray(x)
        if array.ndim == 0:
            return Scalar(array[()], dtypes.canonicalize(array.dtype, where), weak=False)
        dtypes.canonicalize(array.dtype, where)
        return current_trace().constant(x if isinstance(x, np.ndarray) else array)
    raise TracingError(
        f"{where}: expected an array, a traced array or a Python scalar, got "
        f"{type(x).__name__}"
    )


# Python bool is not weak in numpy 2 (NEP 50): it is np.bool_, and resolve_dtypes rejects
# the `bool` type, so weak bools promote as their dtype.
_WEAK_TYPES = {"bool": np.dtype(np.bool_), "int64": int, "float64": float}


def _operand_type(o):
    """What numpy's promotion sees: a dtype, or a Python type for weak scalars."""
    if isinstance(o, Tracer):
        return _WEAK_TYPES[o.dtype.name] if o.weak else o.dtype
    return _WEAK_TYPES[o.dtype.name] if o.weak else o.dtype


def broadcast_shapes(shapes: Sequence[tuple], where: str) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise TracingError(
            f"{where}: shapes {', '.join(str(tuple(s)) for s in shapes)} do not broadcast "
            f"together (numpy broadcasting: trailing dimensions must be equal or 1)"
        ) from None


def elementwise(
    operands: Sequence,
    in_dtypes: Sequence[np.dtype],
    out_dtype: np.dtype,
    body: Callable[..., object],
    where: str,
    out_shape: Sequence[int] | None = None,
) -> Tracer:
    """Emits one linalg.generic applying ``body`` to operands cast to ``in_dtypes``."""
    tracers = [o for o in operands if isinstance(o, Tracer)]
    shape = tuple(out_shape) if out_shape is not None else broadcast_shapes([t.shape for t in tracers], where)
    rank = len(shape)
    inputs = []
    for t in tracers:
        value, loop_dims = drop_broadcast_dims(t, range(rank - t.ndim, rank), shape)
        inputs.append((value, dim_map(rank, loop_dims)))
    init = empty(shape, out_dtype)

    def emit(*args):
        block_args = iter(args[: len(tracers)])
        values = []
        for o, dt in zip(operands, in_dtypes):
            if isinstance(o, Tracer):
                values.append(convert(next(block_args), o.dtype, dt))
            else:
                values.append(scalar_constant(_cast_scalar(o, dt, where), dt))
        return [body(*values)]

    (result,) = generic(inputs, [(init, dim_map(rank, list(range(rank))))], parallel(rank), emit)
    add_work(np.prod(shape, dtype=np.float64))
    return wrap(result, shape, out_dtype)


def _cast_scalar(s: Scalar, dtype: np.dtype, where: str):
    if not s.weak:
        return np.asarray(s.value).astype(dtype)
    try:
        return np.array(s.value, dtype=dtype)  # numpy 2 rejects a weak int that does not fit
    except OverflowError as e:
        raise TracingError(f"{where}: Python scalar {s.value!r} does not fit in {dtype.name}: {e}") from None


def _promotion_operand(o):
    if isinstance(o, Tracer):
        return {"bool": False, "int64": 0, "float64": 0.0}[o.dtype.name] if o.weak else o.dtype
    return o.value if o.weak else o.dtype


def ufunc(name: str, *args) -> Tracer:
    """Applies numpy ufunc ``name`` to traced arrays, numpy arrays and scalars."""
    operands = [as_operand(a, f"{name}() argument {i}") for i, a in enumerate(args)]
    # numpy finds no loop for Python types alone ((int, int) -> object): when every operand
    # is weak (a Python scalar argument or loop carry with a Python scalar), compute in
    # their own dtypes (int64, float64), as numpy does for Python scalars.
    weak_only = all(o.weak for o in operands)
    types = tuple(o.dtype if weak_only else _operand_type(o) for o in operands)
    loop = dtypes.ufunc_loop(name, types)
    in_dtypes, out_dtype = loop[: len(operands)], loop[len(operands)]
    for dt in loop:
        dtypes.canonicalize(dt, f"{name}() computes in")
    body = loop_body(name, in_dtypes)
    if not any(isinstance(o, Tracer) for o in operands):
        # All constants: still an array op, computed on a 0-d array.
        operands[0] = current_trace().constant(np.asarray(operands[0].value, operands[0].dtype))
    try:
        result = elementwise(operands, in_dtypes, out_dtype, body, name)
    except NotImplementedError:
        raise UnsupportedDtypeError(
            f"{name}: no implementation for dtype {in_dtypes[0].name}"
        ) from None
    # Only weak operands (Python scalars passed as arguments): the result stays weak.
    result.weak = all(o.weak for o in operands)
    return result


def astype(x, dtype) -> Tracer:
    dt = dtypes.canonicalize(dtype, "astype dtype")
    x = as_operand(x, "astype")
    if not isinstance(x, Tracer):
        return current_trace().constant(np.asarray(x.value).astype(dt))
    if x.dtype == dt:
        return x
    return elementwise([x], [x.dtype], dt, lambda v: convert(v, x.dtype, dt), "astype")


def where(condition, x, y) -> Tracer:
    c, a, b = (as_operand(v, f"where() argument {n}") for v, n in ((condition, "condition"), (x, "x"), (y, "y")))
    out_dtype = dtypes.canonicalize(
        np.result_type(*(_promotion_operand(o) for o in (a, b))),
        "where",
    )
    if not any(isinstance(o, Tracer) for o in (c, a, b)):
        return current_trace().constant(np.where(c.value, a.value, b.value).astype(out_dtype))
    from .._mlir import arith

    def body(cv, av, bv):
        return arith.SelectOp(cv, av, bv).result

    operands = [c, a, b]
    in_dtypes = [np.dtype(np.bool_), out_dtype, out_dtype]
    return elementwise(operands, in_dtypes, out_dtype, body, "where")
