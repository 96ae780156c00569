"""Every supported dtype goes in and comes back with the metadata's dtype."""

from __future__ import annotations

import numpy as np
import pytest
from aotc.runtime import ArgumentError, dtypes

CASES = {
    "bool": (np.array([True, False, True, False]), np.array([False, True, False, True])),
    "int8": (np.array([-128, -1, 0, 126], np.int8), np.array([-127, 0, 1, 127], np.int8)),
    "int16": (np.array([-300, -1, 0, 32766], np.int16), np.array([-299, 0, 1, 32767], np.int16)),
    "int32": (np.array([-(2**31), -1, 0, 7], np.int32), np.array([1 - 2**31, 0, 1, 8], np.int32)),
    "int64": (np.array([-(2**40), -1, 2**40, 2**62], np.int64),
              np.array([1 - 2**40, 0, 2**40 + 1, 2**62 + 1], np.int64)),
    # uint8 is signless i8 in the function: 255 + 1 wraps to 0, 127 + 1 is 128 (not -128).
    "uint8": (np.array([0, 127, 254, 255], np.uint8), np.array([1, 128, 255, 0], np.uint8)),
    "uint16": (np.array([0, 2**15 - 1, 2**16 - 2, 2**16 - 1], np.uint16),
               np.array([1, 2**15, 2**16 - 1, 0], np.uint16)),
    "uint32": (np.array([0, 2**31 - 1, 2**32 - 2, 2**32 - 1], np.uint32),
               np.array([1, 2**31, 2**32 - 1, 0], np.uint32)),
    "uint64": (np.array([0, 2**63 - 1, 2**64 - 2, 2**64 - 1], np.uint64),
               np.array([1, 2**63, 2**64 - 1, 0], np.uint64)),
    # float16 arithmetic: 2048 + 1 rounds back to 2048.
    "float16": (np.array([0.5, -2, 1000, 2048], np.float16),
                np.array([1.5, -1, 1001, 2048], np.float16)),
    "float32": (np.array([0.25, -2, 1e30, 3], np.float32),
                np.array([1.25, -1, 1e30, 4], np.float32)),
    # float64 keeps its precision: 1 + 2**-40 is not representable in float32.
    "float64": (np.array([2.0**-40, -2, 1e300, 3], np.float64),
                np.array([1 + 2.0**-40, -1, 1e300, 4], np.float64)),
    # complex: the parts as numpy lays them out, through the runtime unchanged.
    "complex64": (np.array([1 + 2j, -0.5j, 3, 1e30 - 1j], np.complex64),
                  np.array([2 + 2j, 1 - 0.5j, 4, 1e30 - 1j], np.complex64)),
    "complex128": (np.array([2.0**-40 + 1j, -2j, 1e300, 3 - 3j], np.complex128),
                   np.array([1 + 2.0**-40 + 1j, 1 - 2j, 1e300, 4 - 3j], np.complex128)),
}


@pytest.mark.parametrize("dtype", list(CASES))
def test_round_trip(mod, dtype):
    given, expected = CASES[dtype]
    out = mod[f"inc_{dtype}"](given)
    assert out.dtype == np.dtype(dtype)
    host = np.asarray(out)
    assert host.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(host, expected)
    # The result goes back in as an argument without conversion.
    again = np.asarray(mod[f"inc_{dtype}"](out))
    np.testing.assert_array_equal(again, np.asarray(mod[f"inc_{dtype}"](expected)))


def test_bool_rejects_integers(mod):
    with pytest.raises(ArgumentError, match="expected dtype bool .* got an array of dtype uint8"):
        mod.inc_bool(np.array([1, 0, 1, 0], np.uint8))
    with pytest.raises(ArgumentError, match="expected bool"):
        mod.inc_bool(1)


def test_uint8_and_int8_are_distinct(mod):
    with pytest.raises(ArgumentError, match=r"x.astype\(np.uint8\)"):
        mod.inc_uint8(np.array([1, 2, 3, 4], np.int8))


def test_byte_order_is_checked(mod):
    big_endian = np.arange(4, dtype=">f4")
    with pytest.raises(ArgumentError, match="expected dtype float32"):
        mod.inc_float32(big_endian)


def test_table():
    assert set(dtypes.DTYPES) == set(CASES)
    assert dtypes.lookup("uint8").mlir == "i8"
    assert dtypes.lookup("bool").mlir == "i1"
    with pytest.raises(KeyError, match="bfloat16"):
        dtypes.lookup("bfloat16")
    assert dtypes.from_numpy(np.dtype(">f4")) is None
    assert dtypes.from_numpy(np.dtype(np.float16)).name == "float16"
