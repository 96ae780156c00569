"""``aotc.numpy``: numpy's array API for traced functions.

    import aotc
    import aotc.numpy as anp

    @aotc.jit
    def predict(x, w, b):
        return anp.maximum(x @ w + b, 0.0)

Functions keep numpy's names, broadcasting, type promotion (numpy 2 rules: Python
scalars adapt to the array's dtype), negative axes and ``keepdims``. Inside a function
traced by ``aotc.jit`` or ``aotc.export`` they build the compiled program; called
outside one, on numpy arrays, runtime ``Array``s and Python scalars, they run eagerly
and return ``Array``s (``aotc/eager.py``).

This module is a namespace: the functions are defined in ``aotc/ops/*`` and listed in
each module's ``EXPORTS`` table (``aotc/namespaces.py``). Importing it installs the
operators and ndarray methods of traced arrays (``aotc/array_methods.py``).
"""

from __future__ import annotations

import abc as _abc
import sys as _sys

import numpy as _np

from . import array_methods as _array_methods
from . import fft  # noqa: F401  (anp.fft.fft, as np.fft.fft)
from . import linalg  # noqa: F401  (anp.linalg.norm, as np.linalg.norm)
from . import namespaces as _namespaces
from . import scalar_types as _scalar_types
from .core import Tracer as _Tracer
from .runtime.array import Array as _RuntimeArray
from .ops.elementwise import UFUNCS  # noqa: F401  (numpy ufunc name of each function)


class ndarray(_abc.ABC):  # noqa: N801 - numpy's name
    """The type of aotc's arrays in ``isinstance`` checks, as ``jax.numpy.ndarray`` (which
    is ``jax.Array``): traced arrays and the runtime's arrays (``aotc.runtime.Array``) are
    instances, numpy arrays are not."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        raise TypeError("aotc.numpy.ndarray is for isinstance checks; make arrays with "
                        "aotc.numpy.asarray(...) or aotc.numpy.array(...)")


ndarray.register(_Tracer)
ndarray.register(_RuntimeArray)

pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None
dtype = _np.dtype
# numpy's abstract scalar types (for issubdtype) and its dtype queries, as jax.numpy
# re-exports them; the concrete scalar types (float32, ...) are below.
generic, number, integer, signedinteger, unsignedinteger = (
    _np.generic, _np.number, _np.integer, _np.signedinteger, _np.unsignedinteger)
inexact, floating, character, flexible = _np.inexact, _np.floating, _np.character, _np.flexible
complexfloating = _np.complexfloating
ComplexWarning = _np.exceptions.ComplexWarning
finfo, iinfo = _np.finfo, _np.iinfo
promote_types, can_cast, issubdtype, isdtype = (
    _np.promote_types, _np.can_cast, _np.issubdtype, _np.isdtype)

# Functions of the ops modules that declare them in their EXPORTS table (aotc/namespaces.py).
globals().update(_namespaces.collect("numpy"))
# numpy's scalar types under their names (float32, int8, single, ...): numpy's types,
# which on traced values construct arrays, as JAX's (aotc/scalar_types.py).
globals().update(_scalar_types.scalar_types(asarray))  # noqa: F821 - collected above


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
