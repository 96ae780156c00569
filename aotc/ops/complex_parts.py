"""The parts of complex numbers: ``real``, ``imag``, ``angle``, ``iscomplex``, and the
``x.real``/``x.imag`` properties (assignable, as numpy's: ``z.imag = 0`` writes into z).

numpy's rules: for a real array ``real(x)`` is x and ``imag(x)`` zeros of its dtype;
``angle`` of a real is 0 or pi by sign, in float64 for integers; Python complex scalars
are weak (``x * 1j`` stays complex64 for a float32 x).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .._mlir import complex_dialect as cx
from ..core import Tracer
from . import elementwise as ew
from .arguments import as_operand, as_tracer
from .creation import zeros

EXPORTS = {
    "numpy": ["real", "imag", "angle", "iscomplex", "iscomplexobj", "sort_complex"],
}


def _part(x, op_class, where: str) -> Tracer:
    t = as_tracer(x, where)
    part = dtypes.real_dtype(t.dtype)
    return ew.elementwise([t], [t.dtype], part, lambda z: op_class(z).result, where)


def real(val) -> Tracer:
    """numpy.real: the real part (a real array: itself)."""
    t = as_tracer(val, "real")
    return _part(t, cx.ReOp, "real") if dtypes.is_complex(t.dtype) else t


def imag(val) -> Tracer:
    """numpy.imag: the imaginary part (a real array: zeros of its dtype)."""
    t = as_tracer(val, "imag")
    return _part(t, cx.ImOp, "imag") if dtypes.is_complex(t.dtype) else zeros(t.shape, t.dtype)


def angle(z, deg: bool = False) -> Tracer:
    """numpy.angle: the argument of each element, in radians (degrees with ``deg``);
    arctan2(imag, real), so -0.0 and negative reals give -pi/pi as numpy."""
    t = as_tracer(z, "angle")
    result = ew.ufunc("arctan2", imag(t), real(t))
    return ew.ufunc("multiply", result, 180.0 / np.pi) if deg else result


def iscomplex(x) -> Tracer:
    """numpy.iscomplex: elements with a nonzero imaginary part (False for real arrays)."""
    t = as_tracer(x, "iscomplex")
    return ew.ufunc("not_equal", imag(t), 0)


def iscomplexobj(x) -> bool:
    """numpy.iscomplexobj: whether the array's dtype is complex (a trace-time bool)."""
    o = as_operand(x, "iscomplexobj")
    return dtypes.is_complex(o.dtype)


def sort_complex(a) -> Tracer:
    """numpy.sort_complex: sorted by real, then imaginary part, as a complex array."""
    from .sorting import sort

    t = as_tracer(a, "sort_complex")
    if not dtypes.is_complex(t.dtype):
        t = ew.astype(t, dtypes.result_type(t.dtype, np.complex64))
    return sort(t)


def complex_from_parts(re, im) -> Tracer:
    """``re + 1j * im`` in numpy's complex dtype for the parts, built directly (a complex
    multiply by 1j would turn inf * 0 into NaN)."""
    re_t, im_t = as_tracer(re, "complex_from_parts"), as_tracer(im, "complex_from_parts")
    part = dtypes.result_type(re_t.dtype, im_t.dtype, np.float32)  # no complex32
    dtype = dtypes.result_type(part, np.complex64)
    return ew.elementwise([re_t, im_t], [part, part], dtype,
                          lambda a, b: cx.CreateOp(dtypes.mlir_type(dtype), a, b).result,
                          "complex_from_parts")


def set_real(z: Tracer, value) -> None:
    """``z.real = value``: writes the real parts (through views, as ``z[...] = ...``)."""
    _check_complex(z, "real")
    z[...] = complex_from_parts(ew.astype(value, dtypes.real_dtype(z.dtype)), imag(z))


def set_imag(z: Tracer, value) -> None:
    """``z.imag = value``: writes the imaginary parts."""
    _check_complex(z, "imag")
    z[...] = complex_from_parts(real(z), ew.astype(value, dtypes.real_dtype(z.dtype)))


def _check_complex(z: Tracer, part: str) -> None:
    if not dtypes.is_complex(z.dtype):
        from ..errors import TracingError
        raise TracingError(f"x.{part} = ...: x is {z.dtype.name}, not complex; numpy allows "
                           f"it only for x.real (use x[...] = value)" if part == "real" else
                           f"x.imag = ...: x is {z.dtype.name}, which has no imaginary part "
                           f"(numpy raises TypeError too); cast with x.astype(np.complex64)")
