"""One table from numpy dtypes to MLIR element types, and numpy as the type oracle.

aotc computes every op in the dtype numpy would use. Rather than re-deriving numpy's
promotion rules, it asks numpy: ``ufunc.resolve_dtypes`` gives the loop dtypes of a ufunc
for given operand dtypes, with Python scalars as weak types (NEP 50), exactly as numpy
2 computes them. With the option ``x64`` off, promotion is JAX's and numpy is asked for
the loop of the promoted dtype (aotc/x64.py).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import x64
from .errors import UnsupportedDtypeError
from .runtime import dtypes as _runtime_dtypes
from .runtime.dtypes import DType

# The dtypes aotc compiles, from the one table (runtime/dtypes.py): a name, its kind
# ("bool", "int", "uint", "float", "complex") and bits. Signedness lives there, not in MLIR: MLIR
# integers are signless and each op picks its signed or unsigned form from the kind.
DTYPES: dict[str, DType] = _runtime_dtypes.DTYPES

SUPPORTED = ", ".join(DTYPES)


def canonicalize(dtype, where: str = "dtype") -> np.dtype:
    """Returns the numpy dtype for ``dtype`` (a name, type or dtype) if aotc supports it."""
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise UnsupportedDtypeError(
            f"{where}: expected a numpy dtype, got {dtype!r}. Use one of: {SUPPORTED}"
        ) from e
    if dt.name not in DTYPES:
        raise UnsupportedDtypeError(
            f"{where}: dtype {dt.name} is not supported by aotc; supported dtypes are "
            f"{SUPPORTED}. Convert with .astype(...) before the call."
        )
    return dt


def info(dtype: np.dtype) -> DType:
    return DTYPES[np.dtype(dtype).name]


def kind(dtype: np.dtype) -> str:
    return DTYPES[np.dtype(dtype).name].kind


def is_float(dtype: np.dtype) -> bool:
    return kind(dtype) == "float"


def is_complex(dtype: np.dtype) -> bool:
    return kind(dtype) == "complex"


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype of a complex dtype's parts (complex64 -> float32); others unchanged."""
    dtype = np.dtype(dtype)
    return np.dtype(f"float{dtype.itemsize * 4}") if is_complex(dtype) else dtype


def mlir_type(dtype: np.dtype):
    from ._mlir import ir

    d = info(dtype)
    if d.kind == "float":
        return {16: ir.F16Type, 32: ir.F32Type, 64: ir.F64Type}[d.bits].get()
    if d.kind == "complex":
        return ir.ComplexType.get(mlir_type(real_dtype(dtype)))
    return ir.IntegerType.get_signless(d.bits)


def tensor_type(shape, dtype: np.dtype):
    from ._mlir import ir

    dims = [ir.ShapedType.get_dynamic_size() if d is None else d for d in shape]
    return ir.RankedTensorType.get(dims, mlir_type(dtype))


def ufunc_loop(ufunc_name: str, operand_types: tuple) -> tuple[np.dtype, ...]:
    """numpy's loop dtypes for a ufunc: (inputs..., output).

    ``operand_types`` holds numpy dtypes for arrays and the Python types ``int``,
    ``float``, ``complex`` for weakly typed Python scalars. With ``x64`` off, the loop
    numpy picks for the operands' JAX-promoted dtype (``x64.ufunc_loop``).
    """
    return ufunc_signature(ufunc_name, operand_types)[0]


def ufunc_signature(ufunc_name: str, operand_types: tuple) -> tuple[tuple[np.dtype, ...], bool]:
    """``ufunc_loop`` and whether the result is weak (JAX's rule; with ``x64`` on, only a
    ufunc of weak operands alone has a weak result, and the caller knows that)."""
    try:
        if x64.enabled():
            return _numpy_loop(ufunc_name, operand_types), False
        return x64.ufunc_loop(ufunc_name, operand_types)
    except TypeError as e:
        names = ", ".join(getattr(t, "name", getattr(t, "__name__", str(t))) for t in operand_types)
        raise UnsupportedDtypeError(
            f"{ufunc_name}: numpy has no loop for operand dtypes ({names}): {e}"
        ) from e


@lru_cache(maxsize=None)
def _numpy_loop(ufunc_name: str, operand_types: tuple) -> tuple[np.dtype, ...]:
    ufunc = getattr(np, ufunc_name)
    loop = ufunc.resolve_dtypes(tuple(operand_types) + (None,) * ufunc.nout)
    return tuple(np.dtype(t) for t in loop)


_PYTHON_SCALARS = (int, float, complex)


def result_type(*operands) -> np.dtype:
    """The promoted dtype of ``operands`` (dtypes, arrays, numpy scalars, Python scalars,
    which are weak): ``np.result_type``, or JAX's lattice with ``x64`` off."""
    if x64.enabled():
        return np.result_type(*operands)
    return x64.result_type(*(_promotion_type(o) for o in operands))


def _promotion_type(o):
    if type(o) in _PYTHON_SCALARS:
        return type(o)
    if o is int or o is float or o is complex:  # JAX: Python's types are weak too
        return o
    if type(o) is bool:
        return np.dtype(np.bool_)
    dtype = getattr(o, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) else np.dtype(o)


def weak_kind(dtype: np.dtype) -> type | np.dtype:
    """What promotion sees of a weak value of ``dtype``: the Python type of its kind
    (``int`` for int64, and for int32 with ``x64`` off); a bool is never weak."""
    return _WEAK_BY_KIND[DTYPES[np.dtype(dtype).name].kind]


_WEAK_BY_KIND = {"bool": np.dtype(np.bool_), "int": int, "uint": int, "float": float,
                 "complex": complex}


def index_dtype() -> np.dtype:
    """The dtype of indices and counts aotc returns: numpy's intp, JAX's int32 with
    ``x64`` off."""
    return np.dtype(np.int64) if x64.enabled() else np.dtype(np.int32)


def narrows(weak: np.dtype, dtype: np.dtype) -> bool:
    """Can ``dtype`` miss values of ``weak`` (a Python scalar's dtype, int64 or float64,
    int32 or float32 with ``x64`` off)? For numpy that is where a Python int raises
    ``OverflowError`` (``uint8_array + 300``) and a float overflows to inf with a
    warning (``float16_array + 1e5``). Casts to or from bool never fail."""
    weak, dtype = np.dtype(weak), np.dtype(dtype)
    if dtype == weak or dtype.kind == "b" or weak.kind == "b":  # True fits every dtype
        return False
    if dtype.kind in "iu":
        return weak.kind in "iu" and not np.can_cast(weak, dtype)
    return _magnitude(dtype) < _magnitude(weak)


def _magnitude(dtype: np.dtype) -> float:
    return float(np.finfo(dtype).max) if dtype.kind in "fc" else float(np.iinfo(dtype).max)
