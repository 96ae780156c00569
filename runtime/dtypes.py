"""The one table from dtype names (as written in the metadata) to numpy and IREE types.

At the ABI every integer is signless, as in MLIR: an ``i8`` tensor is fed with the
signless ``INT_8`` element type whether the data is ``int8`` or ``uint8`` (IREE's
``hal.buffer_view.assert`` accepts signless, signed and unsigned types of the width
alike, but signless is what the compiled function declares); the same holds for
``uint16``/``uint32``/``uint64``. Results come back signless too
(``INT_8``), so they are always presented with the dtype from the metadata, by a
zero-copy ``.view``. ``bool`` is ``i1`` in MLIR and one byte per element at the ABI
(``BOOL_8``), which numpy's ``bool`` already is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from iree.runtime import HalElementType


@dataclass(frozen=True)
class DType:
    """One dtype aotc compiles: the compiler's view (``kind``, ``bits``, the MLIR element
    type) and the runtime's (the HAL element types); ``short`` is its name in CLI specs."""

    name: str  # numpy's name, as stored in the metadata
    numpy: np.dtype
    element_type: int  # the HAL element type arguments are passed with
    exact_element_type: int  # signed/unsigned, for handing buffers to other libraries
    kind: str  # "bool" | "int" | "uint" | "float" | "complex"; signedness lives here
    bits: int  # 1 for bool; both parts for complex (64 for complex64)

    @property
    def mlir(self) -> str:
        """The element type the compiled function uses: MLIR integers are signless."""
        if self.kind == "complex":
            return f"complex<f{self.bits // 2}>"
        return f"{'f' if self.kind == 'float' else 'i'}{self.bits}"

    @property
    def short(self) -> str:
        """``i8``, ``u16``, ``f32``, ``c64``, ``bool``."""
        return "bool" if self.kind == "bool" else f"{self.kind[0]}{self.bits}"


_KINDS = {"b": "bool", "i": "int", "u": "uint", "f": "float", "c": "complex"}


def _entry(name: str, element_type: HalElementType,
           exact: HalElementType | None = None) -> tuple[str, DType]:
    dtype = np.dtype(name)
    kind = _KINDS[dtype.kind]
    exact_type = int(element_type if exact is None else exact)
    bits = 1 if kind == "bool" else dtype.itemsize * 8
    return name, DType(name, dtype, int(element_type), exact_type, kind, bits)


# The one dtype table: the compiler (aotc/dtypes.py) and the CLI derive theirs from it.
DTYPES: dict[str, DType] = dict(
    [
        _entry("bool", HalElementType.BOOL_8),
        _entry("int8", HalElementType.INT_8),
        _entry("int16", HalElementType.INT_16),
        _entry("int32", HalElementType.INT_32),
        _entry("int64", HalElementType.INT_64),
        _entry("uint8", HalElementType.INT_8, HalElementType.UINT_8),
        _entry("uint16", HalElementType.INT_16, HalElementType.UINT_16),
        _entry("uint32", HalElementType.INT_32, HalElementType.UINT_32),
        _entry("uint64", HalElementType.INT_64, HalElementType.UINT_64),
        _entry("float16", HalElementType.FLOAT_16),
        _entry("float32", HalElementType.FLOAT_32),
        _entry("float64", HalElementType.FLOAT_64),
        _entry("complex64", HalElementType.COMPLEX_64),
        _entry("complex128", HalElementType.COMPLEX_128),
    ]
)

# Element types a result may come back with, for functions without aotc metadata (the
# dtype cannot be taken from the metadata, so signless integers read as signed).
_RESULT_DTYPES: dict[int, np.dtype] = {
    int(HalElementType.BOOL_8): np.dtype(np.bool_),
    int(HalElementType.INT_8): np.dtype(np.int8),
    int(HalElementType.SINT_8): np.dtype(np.int8),
    int(HalElementType.UINT_8): np.dtype(np.uint8),
    int(HalElementType.INT_16): np.dtype(np.int16),
    int(HalElementType.SINT_16): np.dtype(np.int16),
    int(HalElementType.UINT_16): np.dtype(np.uint16),
    int(HalElementType.INT_32): np.dtype(np.int32),
    int(HalElementType.SINT_32): np.dtype(np.int32),
    int(HalElementType.UINT_32): np.dtype(np.uint32),
    int(HalElementType.INT_64): np.dtype(np.int64),
    int(HalElementType.SINT_64): np.dtype(np.int64),
    int(HalElementType.UINT_64): np.dtype(np.uint64),
    int(HalElementType.FLOAT_16): np.dtype(np.float16),
    int(HalElementType.FLOAT_32): np.dtype(np.float32),
    int(HalElementType.FLOAT_64): np.dtype(np.float64),
    int(HalElementType.COMPLEX_64): np.dtype(np.complex64),
    int(HalElementType.COMPLEX_128): np.dtype(np.complex128),
}

SUPPORTED = ", ".join(DTYPES)


def lookup(name: str) -> DType:
    """The table entry for a dtype name; ``KeyError`` naming the supported ones."""
    try:
        return DTYPES[name]
    except KeyError:
        raise KeyError(f"dtype {name!r} is not supported; supported dtypes: {SUPPORTED}") from None


# By the numpy dtype itself: a dict lookup, where ``dtype.name`` costs ~3 us. Byte order
# counts ('>f4' is not the native float32 the ABI takes, and compares unequal).
_BY_NUMPY = {entry.numpy: entry for entry in DTYPES.values()}


def from_numpy(dtype: np.dtype) -> DType | None:
    """The table entry for a numpy dtype, or None (the dtype has no ABI type here)."""
    return _BY_NUMPY.get(dtype)


def result_dtype(element_type: int) -> np.dtype:
    """The numpy dtype to present a result with when no metadata names one."""
    dtype = _RESULT_DTYPES.get(element_type)
    if dtype is None:
        raise TypeError(
            f"result element type {element_type_name(element_type)} has no numpy dtype "
            f"in aotc.runtime; supported dtypes: {SUPPORTED}"
        )
    return dtype


def element_type_name(element_type: int) -> str:
    try:
        return HalElementType(element_type).name
    except ValueError:
        return hex(element_type)
