"""``aotc.numpy``: numpy's array API for traced functions.

    import aotc
    import aotc.numpy as anp

    @aotc.jit
    def predict(x, w, b):
        return anp.maximum(x @ w + b, 0.0)

Functions keep numpy's names, broadcasting, type promotion (numpy 2 rules: Python
scalars adapt to the array's dtype), negative axes and ``keepdims``. They only work on
arrays inside a function traced by ``aotc.jit`` or ``aotc.export``.
"""

from __future__ import annotations

import builtins as _builtins

import numpy as _np

from . import dtypes as _dtypes
from . import linalg  # noqa: F401  (anp.linalg.norm, as np.linalg.norm)
from . import namespaces as _namespaces
from . import errors as _errors
from .core import Tracer as _Tracer
from .ops import elementwise as _ew
from .ops.contraction import dot, einsum, inner, matmul, outer, vdot  # noqa: F401
from .ops.creation import (  # noqa: F401
    arange, array, asarray, empty, empty_like, eye, full, full_like, identity, linspace,
    ones, ones_like, zeros, zeros_like,
)
from .ops.reductions import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, max, mean, min, prod, std, sum, var,
)
from .ops.shape import (  # noqa: F401
    array_split, broadcast_arrays, broadcast_to, concatenate, expand_dims, flatten, flip,
    moveaxis, ravel, reshape, split, squeeze, stack, swapaxes, transpose,
)
from .ops.shape import getitem as _getitem  # noqa: F401  (used by Tracer.__getitem__)

ndarray = _Tracer

# dtypes under their numpy names, so `anp.float32` works as in numpy.
bool_ = _np.bool_
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
float16, float32, float64 = _np.float16, _np.float32, _np.float64
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None
dtype = _np.dtype

# numpy ufuncs traced one-to-one: name in aotc.numpy -> numpy ufunc name.
UFUNCS = {
    name: name
    for name in (
        "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power",
        "negative", "positive", "absolute", "sign", "square", "reciprocal", "exp", "exp2",
        "log", "log2", "log10", "log1p", "expm1", "sqrt", "cbrt", "sin", "cos", "tan",
        "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh",
        "arccosh", "arctanh", "floor", "ceil", "trunc", "rint", "maximum", "minimum",
        "fmax", "fmin", "isnan", "isinf", "isfinite", "signbit", "equal", "not_equal",
        "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
        "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "invert",
        "left_shift", "right_shift",
    )
}
UFUNCS.update({
    "abs": "absolute", "mod": "remainder", "true_divide": "divide", "pow": "power",
    "bitwise_not": "invert", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
    "atan2": "arctan2", "fix": "trunc",
})


def _make_ufunc(public: str, numpy_name: str):
    def fn(*args):
        return _ew.ufunc(numpy_name, *args)

    fn.__name__ = public
    fn.__qualname__ = public
    fn.__doc__ = f"numpy.{numpy_name}, traced: elementwise with broadcasting and numpy's dtype rules."
    return fn


for _public, _numpy_name in UFUNCS.items():
    globals()[_public] = _make_ufunc(_public, _numpy_name)

# Exponents numpy computes without calling pow (ndarray.__pow__ fast paths).
_FAST_POWERS = {2: "square", 0.5: "sqrt", 1: "positive", -1: "reciprocal"}


def _pow_operator(x1, x2):
    """``x1 ** x2``: numpy's ndarray.__pow__ fast paths (not np.power, which has none):
    float arrays raised to 2, 0.5, 1 or -1 use square/sqrt/copy/reciprocal, integer and
    bool arrays raised to the int 2 use square (so bool ** 2 is int8)."""
    if isinstance(x1, _Tracer) and _dtypes.is_float(x1.dtype) and type(x2) in (int, float) and x2 in _FAST_POWERS:
        return _ew.ufunc(_FAST_POWERS[x2], x1)
    if isinstance(x1, _Tracer) and not x1.weak and type(x2) is int and x2 == 2:
        return _ew.ufunc("square", x1)
    return _ew.ufunc("power", x1, x2)


astype = _ew.astype


def _clip_bound(a, bound):
    # numpy clips an integer array by a Python int outside its dtype's range as if the
    # bound were the dtype's min or max (as a weak scalar it would not fit).
    dtype = _ew.as_operand(a, "clip").dtype
    if type(bound) is int and _dtypes.kind(dtype) in ("int", "uint"):
        info = _np.iinfo(dtype)
        return _builtins.min(_builtins.max(bound, int(info.min)), int(info.max))
    return bound


def clip(a, a_min=None, a_max=None):
    """numpy.clip: ``minimum(maximum(a, a_min), a_max)``; either bound may be None."""
    if a_min is None and a_max is None:
        raise ValueError("clip: at least one of a_min and a_max must be given")
    out = a
    if a_min is not None:
        out = _ew.ufunc("maximum", out, _clip_bound(a, a_min))
    if a_max is not None:
        out = _ew.ufunc("minimum", out, _clip_bound(a, a_max))
    return out


def round(a, decimals=0):  # noqa: A001 - numpy's name
    """numpy.round: half to even; with ``decimals``, scaled by 10**decimals as numpy does."""
    dtype = _ew.as_operand(a, "round").dtype
    kind = _dtypes.kind(dtype)
    if kind in ("int", "uint"):
        if decimals >= 0:
            return a  # numpy returns integers unchanged
        # numpy rounds integers in float64 (half to even: 25 -> 20) and casts back.
        scale = 10.0 ** -decimals
        return astype(multiply(rint(divide(astype(a, float64), scale)), scale), dtype)  # noqa: F821
    if decimals == 0:
        return _ew.ufunc("rint", a)
    if kind == "bool":
        raise _errors.UnsupportedDtypeError(
            f"round: numpy cannot round a bool array to decimals={decimals} (the scaled "
            f"result is float); convert it with .astype(...) first"
        )
    # Same operations as numpy: a * 10**d for d > 0, a / 10**-d for d < 0 (0.1 is inexact).
    if decimals > 0:
        return divide(rint(multiply(a, 10.0 ** decimals)), 10.0 ** decimals)  # noqa: F821
    return multiply(rint(divide(a, 10.0 ** -decimals)), 10.0 ** -decimals)  # noqa: F821


around = round


def shape(a):
    return a.shape if isinstance(a, _Tracer) else _np.shape(a)


def ndim(a):
    return len(shape(a))


def size(a):
    return int(_np.prod(shape(a), dtype=_np.int64))


def result_type(*args):
    return _np.result_type(*[(x.dtype if isinstance(x, _Tracer) else x) for x in args])


# Functions of the ops modules that declare them in their EXPORTS table (aotc/namespaces.py).
globals().update(_namespaces.collect("numpy"))


def supported_functions() -> list[str]:
    """Every public function of aotc.numpy, for docs and error messages."""
    return sorted(
        n for n, v in globals().items()
        if not n.startswith("_") and callable(v) and not isinstance(v, type)
        and n not in {"dtype", "supported_functions"}
    )
