"""Elementwise operations: numpy ufuncs, where, clip, astype.

Every elementwise op becomes one ``linalg.generic`` over the broadcast shape; operands
are cast to numpy's loop dtype inside the body, so IREE fuses chains of them into one
dispatch. Python scalars are weakly typed (NEP 50) and become constants in the body.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .. import dtypes, x64
from ..constants import scalar_constant
from ..core import Tracer, current_trace
from ..errors import ScalarOverflowError, TracingError, UnsupportedDtypeError
from ..lowering import (
    add_work,
    dim_map,
    drop_broadcast_dims,
    empty,
    generic,
    parallel,
    wrap,
)
from . import scalar_complex, scalar_extra  # noqa: F401  (add rules to UFUNC_RULES)
from .arguments import Scalar, as_operand, broadcast_result_shape
from .scalar import UFUNC_RULES, convert, loop_body

def _operand_type(o):
    """What promotion sees: a dtype, or a Python type for weak scalars (numpy 2 treats
    Python bools as np.bool_ (NEP 50), and resolve_dtypes rejects the `bool` type)."""
    return dtypes.weak_kind(o.dtype) if o.weak else o.dtype


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
    shape = (tuple(out_shape) if out_shape is not None
             else broadcast_result_shape([t.shape for t in tracers], where))
    rank = len(shape)
    inputs = []
    for t in tracers:
        value, loop_dims = drop_broadcast_dims(t, range(rank - t.ndim, rank), shape)
        inputs.append((value, dim_map(rank, loop_dims)))
    init = empty(shape, out_dtype)
    for o, dt in zip(operands, in_dtypes):
        if isinstance(o, Tracer) and o.weak and o.dtype != dt:
            current_trace().note_weak_cast(o, dt)  # a Python scalar argument: checked per call

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
    except OverflowError:
        raise ScalarOverflowError(
            f"{where}: Python integer {s.value} out of bounds for {dtype.name} (numpy 2 "
            f"computes a Python int with the array's dtype). Pass a value in range, or "
            f"cast the array to a wider dtype first (x.astype(np.int64))") from None


_WEAK_VALUES = {"bool": False, "int": 0, "uint": 0, "float": 0.0, "complex": 0j}


def _promotion_operand(o):
    """What ``dtypes.result_type`` sees: a dtype, or a Python scalar for weak values."""
    if o.weak:
        return o.value if isinstance(o, Scalar) else _WEAK_VALUES[dtypes.kind(o.dtype)]
    return o.dtype


# ufunc name -> how it is traced where something differentiates it (None: as here):
# aotc.ufunc_derivatives puts its custom_jvp rules here when aotc's differentiation is
# imported, for the ufuncs whose scalar code works on bits.
WITH_DERIVATIVE_RULE: dict[str, Callable] = {}


def ufunc(name: str, *args) -> Tracer:
    """Applies numpy ufunc ``name`` to traced arrays, numpy arrays and scalars."""
    if name in WITH_DERIVATIVE_RULE:
        with_rule = WITH_DERIVATIVE_RULE[name](name, args)
        if with_rule is not None:
            return with_rule
    operands = [as_operand(a, f"{name}() argument {i}") for i, a in enumerate(args)]
    weak_only = all(o.weak for o in operands)
    if x64.enabled():
        # numpy finds no loop for Python types alone ((int, int) -> object): when every
        # operand is weak (a Python scalar argument or loop carry with a Python scalar),
        # compute in their own dtypes (int64, float64), as numpy does for Python scalars.
        types = tuple(o.dtype if weak_only else _operand_type(o) for o in operands)
        loop, weak = dtypes.ufunc_loop(name, types), weak_only
    else:
        loop, weak = dtypes.ufunc_signature(name, tuple(_operand_type(o) for o in operands))
    in_dtypes, out_dtype = loop[: len(operands)], loop[len(operands)]
    for dt in loop:
        dtypes.canonicalize(dt, f"{name}() computes in")
    if _idempotent(name, operands, in_dtypes, out_dtype):
        # x op x is x: IREE folds it anyway, after aotc's passes have taken the result
        # for a new tensor (a donated x then had a second name the donation analysis
        # did not see: fuzz program 17115, fmin(x, x) updated in place).
        return operands[0]
    if name in _COMPARISONS:
        in_dtypes, decided = _compare_python_int(name, operands, in_dtypes)
        if decided is not None:
            return decided
    if name == "power" and dtypes.kind(in_dtypes[1]) == "int":
        _check_exponent(operands[1])
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
    # Weak operands alone (Python scalars passed as arguments), or JAX's weak result with
    # x64 off (x_i8 * 2.0): the result stays weak.
    result.weak = weak
    return result


# Binary ufuncs with f(x, x) == x for every x of the dtypes listed (None: every dtype),
# NaN and -0.0 included.
_IDEMPOTENT = {"fmin": None, "fmax": None, "minimum": None, "maximum": None,
               "bitwise_and": None, "bitwise_or": None, "logical_and": ("bool",),
               "logical_or": ("bool",), "multiply": ("bool",)}


def _idempotent(name: str, operands: list, in_dtypes: tuple, out_dtype) -> bool:
    """Is this ``x op x`` (one traced array twice) that is ``x`` itself?"""
    if name not in _IDEMPOTENT or len(operands) != 2 or operands[0] is not operands[1]:
        return False
    x, kinds = operands[0], _IDEMPOTENT[name]
    return (isinstance(x, Tracer) and np.dtype(x.dtype) == np.dtype(in_dtypes[0])
            == np.dtype(out_dtype) and (kinds is None or np.dtype(x.dtype).name in kinds))


def _check_exponent(o) -> None:
    """numpy 2 refuses integers to negative integer powers (a ValueError); a constant
    exponent is checked here (a traced one is not known until the call)."""
    value = o.value if isinstance(o, Scalar) else current_trace().constant_value(o)
    if value is not None and np.any(np.asarray(value) < 0):
        raise TracingError(
            "power: Integers to negative integer powers are not allowed (numpy 2 raises "
            f"ValueError too), got the exponent {np.min(value)}. Raise a float instead: "
            "x.astype(np.float64) ** n, or np.float_power(x, n)")


_COMPARISONS = frozenset(("equal", "not_equal", "less", "less_equal", "greater",
                          "greater_equal"))
_MIRRORED = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
             "greater_equal": "less_equal"}


def _compare_python_int(name: str, operands: list, in_dtypes: tuple) -> tuple:
    """numpy 2 compares a Python int with an integer array exactly, whatever its value
    (``uint8_array == 300`` is all False, ``uint8_array > -1`` all True), where other
    ufuncs raise. A constant out of the loop dtype's range decides every element: the
    result is that constant. A Python scalar argument (any value) is compared in a dtype
    holding both (int64 for uint8 and int64); uint64 against int64 has none, so there the
    argument must fit uint64 (checked per call). Returns the loop and the decided result
    (None when the op has to compute)."""
    loop = np.dtype(in_dtypes[0])
    if loop.kind not in "iu" or len(operands) != 2:
        return in_dtypes, None
    for k, o in enumerate(operands):
        if not o.weak or dtypes.kind(o.dtype) not in ("int", "uint"):
            continue
        if isinstance(o, Scalar):
            info = np.iinfo(loop)
            if info.min <= o.value <= info.max:
                continue
            op = name if k == 1 else _MIRRORED.get(name, name)  # as "array op scalar"
            above = o.value > info.max
            value = {"equal": False, "not_equal": True, "less": above, "less_equal": above,
                     "greater": not above, "greater_equal": not above}[op]
            shape = broadcast_result_shape(
                [t.shape for t in operands if isinstance(t, Tracer)], name)
            return in_dtypes, current_trace().constant(np.full(shape, value, np.bool_))
        wide = np.promote_types(loop, o.dtype)
        if wide.kind in "iu":
            in_dtypes = (wide, wide)
    return in_dtypes, None


def astype(x, dtype) -> Tracer:
    dt = dtypes.canonicalize(dtype, "astype dtype")
    x = as_operand(x, "astype")
    if not isinstance(x, Tracer):
        return current_trace().constant(np.asarray(x.value).astype(dt))
    if x.dtype == dt:
        return x
    return elementwise([x], [x.dtype], dt, lambda v: convert(v, x.dtype, dt), "astype")


def elementwise_where(condition, x, y) -> Tracer:
    """numpy.where with three arguments: ``x`` where ``condition``, else ``y``
    (aotc.numpy.where, in ops/indexing.py, also takes the one-argument form)."""
    c, a, b = (as_operand(v, f"where() argument {n}")
               for v, n in ((condition, "condition"), (x, "x"), (y, "y")))
    if x64.enabled():
        promoted, weak = dtypes.result_type(*(_promotion_operand(o) for o in (a, b))), False
    else:
        promoted, weak = x64.promote(_operand_type(a), _operand_type(b))
    out_dtype = dtypes.canonicalize(promoted, "where")
    if not any(isinstance(o, Tracer) for o in (c, a, b)):
        return current_trace().constant(np.where(c.value, a.value, b.value).astype(out_dtype))
    from .._mlir import arith

    def body(cv, av, bv):
        return arith.SelectOp(cv, av, bv).result

    operands = [c, a, b]
    in_dtypes = [np.dtype(np.bool_), out_dtype, out_dtype]
    result = elementwise(operands, in_dtypes, out_dtype, body, "where")
    result.weak = weak
    return result


# ---- the ufuncs as functions of numpy's names ------------------------------------------

# Every ufunc with a scalar rule (ops/scalar.py UFUNC_RULES) is a function of numpy's
# name: adding a ufunc is adding its rule. Then numpy 2's (and jax.numpy's) other names
# for them. Name in aotc.numpy -> numpy ufunc name.
UFUNCS = {name: name for name in UFUNC_RULES}
UFUNCS.update({
    "abs": "absolute", "mod": "remainder", "true_divide": "divide", "pow": "power",
    "bitwise_not": "invert", "bitwise_invert": "invert", "bitwise_left_shift": "left_shift",
    "bitwise_right_shift": "right_shift", "asin": "arcsin", "acos": "arccos",
    "atan": "arctan", "atan2": "arctan2", "asinh": "arcsinh", "acosh": "arccosh",
    "atanh": "arctanh", "fix": "trunc",
})


def _make_ufunc(public: str, numpy_name: str):
    def fn(*args):
        return ufunc(numpy_name, *args)

    fn.__name__ = public
    fn.__qualname__ = public
    fn.__doc__ = (f"numpy.{numpy_name}, traced: elementwise with broadcasting and numpy's "
                  f"dtype rules.")
    return fn


globals().update({public: _make_ufunc(public, name) for public, name in UFUNCS.items()})

# Exponents numpy computes without calling pow (ndarray.__pow__ fast paths).
_FAST_POWERS = {2: "square", 0.5: "sqrt", 1: "positive", -1: "reciprocal"}


def power_operator(x1, x2):
    """``x1 ** x2``: numpy's ndarray.__pow__ fast paths (not np.power, which has none):
    float arrays raised to 2, 0.5, 1 or -1 use square/sqrt/copy/reciprocal, integer and
    bool arrays raised to the int 2 use square (so bool ** 2 is int8)."""
    if (isinstance(x1, Tracer) and dtypes.is_float(x1.dtype) and type(x2) in (int, float)
            and x2 in _FAST_POWERS):
        return ufunc(_FAST_POWERS[x2], x1)
    if isinstance(x1, Tracer) and not x1.weak and type(x2) is int and x2 == 2:
        return ufunc("square", x1)
    return ufunc("power", x1, x2)


def _clip_bound(a, bound):
    # numpy clips an integer array by a Python int outside its dtype's range as if the
    # bound were the dtype's min or max (as a weak scalar it would not fit).
    dtype = as_operand(a, "clip").dtype
    if type(bound) is int and dtypes.kind(dtype) in ("int", "uint"):
        info = np.iinfo(dtype)
        return min(max(bound, int(info.min)), int(info.max))
    if (isinstance(bound, Tracer) and bound.weak and dtypes.kind(dtype) in ("int", "uint")
            and dtypes.kind(bound.dtype) in ("int", "uint")
            and dtypes.narrows(bound.dtype, dtype)):
        # A Python int argument, the same rule: clamped where it is still a Python int.
        info, own = np.iinfo(dtype), np.iinfo(bound.dtype)
        low, high = max(int(info.min), int(own.min)), min(int(info.max), int(own.max))
        return ufunc("minimum", ufunc("maximum", bound, low), high)
    return bound


def clip(a, a_min=None, a_max=None):
    """numpy.clip: ``minimum(maximum(a, a_min), a_max)``; either bound may be None."""
    if a_min is None and a_max is None:
        raise ValueError("clip: at least one of a_min and a_max must be given")
    out = a
    if a_min is not None:
        out = ufunc("maximum", out, _clip_bound(a, a_min))
    if a_max is not None:
        out = ufunc("minimum", out, _clip_bound(a, a_max))
    return out


def round(a, decimals=0):  # noqa: A001 - numpy's name
    """numpy.round: half to even; with ``decimals``, scaled by 10**decimals as numpy does."""
    dtype = as_operand(a, "round").dtype
    kind = dtypes.kind(dtype)
    if kind in ("int", "uint"):
        if decimals >= 0:
            return a  # numpy returns integers unchanged
        # numpy rounds integers in float64 (half to even: 25 -> 20) and casts back.
        scale = 10.0 ** -decimals
        scaled = ufunc("rint", ufunc("divide", astype(a, x64.default_float()), scale))
        return astype(ufunc("multiply", scaled, scale), dtype)
    if decimals == 0:
        return ufunc("rint", a)
    if kind == "bool":
        raise UnsupportedDtypeError(
            f"round: numpy cannot round a bool array to decimals={decimals} (the scaled "
            f"result is float); convert it with .astype(...) first"
        )
    # Same operations as numpy: a * 10**d for d > 0, a / 10**-d for d < 0 (0.1 is inexact).
    if decimals > 0:
        return ufunc("divide", ufunc("rint", ufunc("multiply", a, 10.0 ** decimals)),
                     10.0 ** decimals)
    return ufunc("multiply", ufunc("rint", ufunc("divide", a, 10.0 ** -decimals)),
                 10.0 ** -decimals)


around = round

EXPORTS: dict[str, list[str]] = {
    "numpy": [*UFUNCS, "astype", "clip", "round", "around"],
    "methods": ["clip", "round"],
}
