"""Array creation (zeros, ones, full, *_like, arange, linspace, eye, identity, array,
asarray, empty) and numpy arrays captured as constants, against numpy (exact, except
linspace: "exact" float tolerance of conftest.py)."""

from __future__ import annotations

import numpy as np

import aotc
import aotc.numpy as anp

from .conftest import assert_all, compare_ops, jit_call, raises_match, sample

CREATION = {
    "zeros((2, 3))": lambda m, x, i: m.zeros((2, 3)),
    "zeros(3, int8)": lambda m, x, i: m.zeros(3, dtype=np.int8),
    "zeros((0, 3), bool)": lambda m, x, i: m.zeros((0, 3), bool),
    "ones((2,), bool)": lambda m, x, i: m.ones((2,), dtype=bool),
    "ones((2, 2), 'float16')": lambda m, x, i: m.ones((2, 2), "float16"),
    "ones(4, uint8)": lambda m, x, i: m.ones(4, np.uint8),
    "full((2, 2), 7, uint8)": lambda m, x, i: m.full((2, 2), 7, dtype=np.uint8),
    "full((3,), 2.5)": lambda m, x, i: m.full((3,), 2.5),
    "full(3, True)": lambda m, x, i: m.full(3, True),
    "full((2, 3), 7)": lambda m, x, i: m.full((2, 3), 7),
    "full((2, 2), nan, float32)": lambda m, x, i: m.full((2, 2), np.nan, np.float32),
    "full((2, 3), x[0, 0])": lambda m, x, i: m.full((2, 3), x[0, 0]),
    "full((2,), x[0, 0], int16)": lambda m, x, i: m.full((2,), x[0, 0], dtype=np.int16),
    "full((0, 3), 1)": lambda m, x, i: m.full((0, 3), 1),
    "zeros_like(x)": lambda m, x, i: m.zeros_like(x),
    "zeros_like(i, shape=(4,))": lambda m, x, i: m.zeros_like(i, shape=(4,)),
    "ones_like(x, float16)": lambda m, x, i: m.ones_like(x, dtype=np.float16),
    "ones_like(i)": lambda m, x, i: m.ones_like(i),
    "full_like(x, 3)": lambda m, x, i: m.full_like(x, 3),
    "full_like(i, 0.5)": lambda m, x, i: m.full_like(i, 0.5),
    "full_like(i, -1.7, float32)": lambda m, x, i: m.full_like(i, -1.7, dtype=np.float32),
    "full_like(x, 2, shape=(1, 2))": lambda m, x, i: m.full_like(x, 2, shape=(1, 2)),
    "arange(5)": lambda m, x, i: m.arange(5),
    "arange(1, 7, 2)": lambda m, x, i: m.arange(1, 7, 2),
    "arange(5, dtype=float32)": lambda m, x, i: m.arange(5, dtype=np.float32),
    "arange(0, 1, 0.25)": lambda m, x, i: m.arange(0, 1, 0.25),
    "arange(10, 0, -3)": lambda m, x, i: m.arange(10, 0, -3),
    "arange(3, 3)": lambda m, x, i: m.arange(3, 3),
    "arange(-2.5, 2, dtype=int8)": lambda m, x, i: m.arange(-2, 2, dtype=np.int8),
    "linspace(0, 1, 5)": lambda m, x, i: m.linspace(0, 1, 5),
    "linspace(0, 1, 4, endpoint=False)": lambda m, x, i: m.linspace(0, 1, 4, endpoint=False),
    "linspace(-1, 1, 7, dtype=float32)": lambda m, x, i: m.linspace(-1, 1, 7, dtype=np.float32),
    "linspace(0, 10, 6, dtype=int32)": lambda m, x, i: m.linspace(0, 10, 6, dtype=np.int32),
    "linspace(0, 2, 5, retstep)[0]": lambda m, x, i: m.linspace(0, 2, 5, retstep=True)[0],
    "linspace([0, 1], 2, 3, axis=1)": lambda m, x, i: m.linspace([0, 1], 2, 3, axis=1),
    "eye(3)": lambda m, x, i: m.eye(3),
    "eye(3, 4, k=1, int8)": lambda m, x, i: m.eye(3, 4, k=1, dtype=np.int8),
    "eye(2, k=-1)": lambda m, x, i: m.eye(2, k=-1),
    "eye(3, dtype=bool)": lambda m, x, i: m.eye(3, dtype=bool),
    "identity(3)": lambda m, x, i: m.identity(3),
    "identity(2, uint8)": lambda m, x, i: m.identity(2, dtype=np.uint8),
    "array([1, 2, 3])": lambda m, x, i: m.array([1, 2, 3]),
    "array([[1.5, 2]], float16)": lambda m, x, i: m.array([[1.5, 2]], dtype=np.float16),
    "array([True, False])": lambda m, x, i: m.array([True, False]),
    "asarray([[1, 2]], int16)": lambda m, x, i: m.asarray([[1, 2]], dtype=np.int16),
    "asarray(x)": lambda m, x, i: m.asarray(x),
    "asarray(x, float64)": lambda m, x, i: m.asarray(x, dtype=np.float64),
    "arange(6).reshape(2, 3) + x": lambda m, x, i: m.arange(6, dtype=np.float32).reshape(2, 3) + x,
    "zeros_like(x) + i": lambda m, x, i: m.zeros_like(x) + i,
    "eye(3)[::-1] @ ones(3)": lambda m, x, i: m.eye(3)[::-1] @ m.ones(3),
}


def test_creation():
    x = sample("float32", (2, 3), seed=60)
    i = sample("int16", (2, 3), seed=61)
    compare_ops(CREATION, x, i, where="creation")


def test_empty_has_shape_and_dtype():
    """numpy's empty holds garbage: only the shape and dtype are compared."""
    x = np.ones((2, 3), np.int8)
    got = jit_call(
        lambda a: {
            "empty": anp.empty((4, 2)),
            "empty_int": anp.empty(3, dtype=np.int32),
            "empty_like": anp.empty_like(a),
            "empty_like_f": anp.empty_like(a, dtype=np.float16),
        },
        x,
    )
    want = {
        "empty": np.empty((4, 2)),
        "empty_int": np.empty(3, dtype=np.int32),
        "empty_like": np.empty_like(x),
        "empty_like_f": np.empty_like(x, dtype=np.float16),
    }
    for k in want:
        assert (got[k].shape, got[k].dtype) == (want[k].shape, want[k].dtype), k


def test_creation_errors():
    x = np.ones(3, np.float32)
    with raises_match(aotc.UnsupportedDtypeError, "float128", "supported dtypes", "float32"):
        jit_call(lambda a: anp.zeros(3, dtype=np.longdouble), x)
    with raises_match(aotc.TracerConversionError, "arange stop", "static_argnums"):
        jit_call(lambda a: anp.arange(0, a[0]), x)
    with raises_match(aotc.TracerConversionError, "zeros shape", "static_argnums"):
        jit_call(lambda a: anp.zeros(a), x)


# ---- numpy arrays captured from the enclosing scope: compile-time constants -----------------

C_BOOL = np.array([[True, False, True], [False, False, True]])
C_U8 = np.array([[0, 1, 127], [128, 200, 255]], np.uint8)
C_NAN = np.array([[np.nan, 1.5, -np.inf], [np.inf, -0.0, np.nan]], np.float32)
C_I64 = np.array([2**40, -(2**40) - 1, 2**62, -(2**63), 2**63 - 1, 0], np.int64).reshape(2, 3)
C_F16 = np.array([[65504, -0.000123, 1.5], [-2, 3, 0.1]], np.float16)
C_SPLAT = np.full((2, 3), 7, np.int32)
C_NAN_SPLAT = np.full((2, 3), np.nan, np.float64)
C_I8 = np.array([[-128, 127, -1], [0, 5, -7]], np.int8)
C_0D = np.array(5, np.int16)

CONSTANTS = {
    "x + C_NAN": lambda m, x: x + C_NAN,
    "C_NAN * 2": lambda m, x: C_NAN * 2 + m.zeros_like(x),
    "C_BOOL & (x > 0)": lambda m, x: C_BOOL & (x > 0),
    "where(C_BOOL, x, C_NAN)": lambda m, x: m.where(C_BOOL, x, C_NAN),
    "C_U8 + x": lambda m, x: C_U8 + x,
    "C_U8 // 3 + 0 * x": lambda m, x: C_U8 // m.full_like(C_U8, 3),
    "C_I64 + x (float64)": lambda m, x: C_I64 + x.astype(np.float64),
    "C_I64 - 1": lambda m, x: m.subtract(C_I64, m.ones((1,), np.int64)),
    "maximum(C_U8, 100)": lambda m, x: m.maximum(C_U8, m.full((1,), 100, np.uint8)),
    "C_F16 * x": lambda m, x: C_F16 * x,
    "C_SPLAT * x": lambda m, x: C_SPLAT * x,
    "C_NAN_SPLAT + x": lambda m, x: C_NAN_SPLAT + x,
    "C_I8 * 2": lambda m, x: C_I8 * m.full_like(C_I8, 2),
    "C_0D + x": lambda m, x: C_0D + x,
    "isnan(C_NAN)": lambda m, x: m.isnan(m.asarray(C_NAN)),
    "sum(C_U8, dtype=int64)": lambda m, x: m.sum(C_U8, dtype=np.int64),
    "C_BOOL twice": lambda m, x: m.logical_xor(m.asarray(C_BOOL), m.asarray(C_BOOL)[::-1]),
    "C_U8.T @ C_U8 as int32": lambda m, x: m.matmul(
        m.asarray(C_U8.T, dtype=np.int32), C_U8.astype(np.int32)
    ),
}


def test_captured_constants():
    """numpy arrays from the enclosing scope become constants: bool, uint8 (bits above
    127), int64 beyond 32 bits, float16, NaN/inf (also in splats), 0-d."""
    x = sample("float32", (2, 3), seed=62)
    compare_ops(CONSTANTS, x, where="captured constants")


def test_returned_constants():
    """A function may return numpy arrays and scalars as they are."""
    got = jit_call(
        lambda a: {"u8": C_U8, "nan": C_NAN, "bool": C_BOOL, "i64": C_I64, "x": a},
        np.ones(2, np.int8),
    )
    want = {"u8": C_U8, "nan": C_NAN, "bool": C_BOOL, "i64": C_I64, "x": np.ones(2, np.int8)}
    assert_all(got, want, where="returned constants")


# Run in a subprocess: the bug crashes the interpreter (a segfault in MLIR's canonicalizer).
ZERO_D_SCRIPT = """
import numpy as np, aotc, aotc.numpy as anp
cases = {
    "zeros(())": (lambda a: anp.zeros(()), np.zeros(())),
    "array(3.0)": (lambda a: anp.array(3.0), np.array(3.0)),
    "maximum(u8, asarray(np.uint8(100)))": (
        lambda a: anp.maximum(np.arange(3, dtype=np.uint8), anp.asarray(np.uint8(100))),
        np.maximum(np.arange(3, dtype=np.uint8), np.uint8(100))),
    "add(np.float32(1), 2)": (lambda a: anp.add(np.float32(1), 2), np.add(np.float32(1), 2)),
    "sum(np.float32(3))": (lambda a: anp.sum(np.float32(3)), np.sum(np.float32(3))),
    "returned np.float16(1.5)": (lambda a: np.float16(1.5), np.float16(1.5)),
    "returned 3": (lambda a: 3, np.asarray(3)),
}
x = np.ones(2, np.float32)
for name, (op, want) in cases.items():
    got = np.asarray(aotc.jit(op)(x))
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (name, got.dtype, got.shape)
    np.testing.assert_array_equal(got, want, err_msg=name)
print("ok")
"""


def test_zero_d_constants():
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", ZERO_D_SCRIPT], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0 and "ok" in proc.stdout, (proc.returncode, proc.stderr[-1500:])


def test_unsupported_constant_dtype():
    c = np.ones(3, np.longdouble)
    with raises_match(aotc.UnsupportedDtypeError, "float128", "supported dtypes"):
        jit_call(lambda a: a + c, np.ones(3, np.float32))
    text = np.array(["a", "b"])
    with raises_match(aotc.UnsupportedDtypeError, "str32", "astype"):
        jit_call(lambda a: a + text, np.ones(2, np.float32))
