"""``aotc.numpy``: numpy's array API for traced functions.

    import aotc
    import aotc.numpy as anp

    @aotc.jit
    def predict(x, w, b):
        return anp.maximum(x @ w + b, 0.0)

Functions keep numpy's names, broadcasting, type promotion (numpy 2 rules: Python
scalars adapt to the array's dtype), negative axes and ``keepdims``. They only work on
arrays inside a function traced by ``aotc.jit`` or ``aotc.export``.

This module is a namespace: the functions are defined in ``aotc/ops/*`` and listed in
each module's ``EXPORTS`` table (``aotc/namespaces.py``). Importing it installs the
operators and ndarray methods of traced arrays (``aotc/array_methods.py``).
"""

from __future__ import annotations

import sys as _sys

import numpy as _np

from . import array_methods as _array_methods
from . import linalg  # noqa: F401  (anp.linalg.norm, as np.linalg.norm)
from . import namespaces as _namespaces
from .core import Tracer as _Tracer
from .ops.elementwise import UFUNCS  # noqa: F401  (numpy ufunc name of each function)

ndarray = _Tracer

# dtypes under their numpy names, so `anp.float32` works as in numpy.
bool_ = _np.bool_
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
float16, float32, float64 = _np.float16, _np.float32, _np.float64
complex64, complex128 = _np.complex64, _np.complex128
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None
dtype = _np.dtype
# numpy's other names for them, its abstract scalar types (for issubdtype) and its dtype
# queries, as jax.numpy re-exports them.
bool = _np.bool_  # noqa: A001 - numpy's name
half, single, double = _np.float16, _np.float32, _np.float64
float_, int_, uint = _np.float64, _np.int64, _np.uint64
generic, number, integer, signedinteger, unsignedinteger = (
    _np.generic, _np.number, _np.integer, _np.signedinteger, _np.unsignedinteger)
inexact, floating, character, flexible = _np.inexact, _np.floating, _np.character, _np.flexible
csingle, cdouble, complex_, complexfloating = (
    _np.complex64, _np.complex128, _np.complex128, _np.complexfloating)
ComplexWarning = _np.exceptions.ComplexWarning
finfo, iinfo = _np.finfo, _np.iinfo
promote_types, can_cast, issubdtype, isdtype = (
    _np.promote_types, _np.can_cast, _np.issubdtype, _np.isdtype)

# Functions of the ops modules that declare them in their EXPORTS table (aotc/namespaces.py).
globals().update(_namespaces.collect("numpy"))


def supported_functions() -> list[str]:
    """Every public function of aotc.numpy, for docs and error messages."""
    return sorted(
        n for n, v in globals().items()
        if not n.startswith("_") and callable(v) and not isinstance(v, type)
        and n not in {"dtype", "supported_functions"}
    )


_array_methods.install(_sys.modules[__name__], _namespaces.collect("methods"))


def __getattr__(name: str):
    """A name aotc does not define: an AttributeError saying so (aotc/namespaces.py)."""
    raise _namespaces.missing_name('aotc.numpy', name)
