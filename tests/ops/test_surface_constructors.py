"""Window functions and i0 (aotc/ops/windows.py), linspace/logspace/geomspace, fromfunction and the
host-side constructors (aotc/ops/constructors.py) against numpy, their vmap against a
Python loop, and their errors.

Traced endpoints and ``beta`` are jit arguments; the static forms are constants numpy
computes, checked in the same compiled function. i0 is checked at conftest's
"transcendental" tolerance (float32 1e-5, float64 1e-12) over [-30, 30] and the
breakpoint 8.
"""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.errors import TracerConversionError, TracingError, UnsupportedOpError

from .conftest import assert_same, compare_ops, jit_call, param_dtypes, raises_match

I0_POINTS = np.concatenate([np.linspace(-30, 30, 121), [8.0, -8.0, 7.999, 8.001, 0.0, -0.0,
                                                        np.inf, -np.inf, np.nan]])

OPS = {
    "i0": lambda m, x, lo, hi, beta: m.i0(x),
    "bartlett": lambda m, x, lo, hi, beta: m.bartlett(7),
    "blackman": lambda m, x, lo, hi, beta: m.blackman(6),
    "hamming": lambda m, x, lo, hi, beta: m.hamming(1),
    "hanning": lambda m, x, lo, hi, beta: m.hanning(0),
    "kaiser(static beta)": lambda m, x, lo, hi, beta: m.kaiser(9, 14.0),
    "kaiser": lambda m, x, lo, hi, beta: m.kaiser(9, beta),
    "kaiser(M=1)": lambda m, x, lo, hi, beta: m.kaiser(1, beta),
    "logspace": lambda m, x, lo, hi, beta: m.logspace(lo, hi, 5),
    "logspace(endpoint=False, base=2)": lambda m, x, lo, hi, beta: m.logspace(
        lo, hi, 4, endpoint=False, base=2.0),
    "logspace(array stop, axis=1)": lambda m, x, lo, hi, beta: m.logspace(
        lo, hi * np.array([1.0, 0.5]), 3, axis=1),
    "logspace(num=1)": lambda m, x, lo, hi, beta: m.logspace(lo, hi, 1),
    "logspace(static)": lambda m, x, lo, hi, beta: m.logspace(0, 3, 4),
    "linspace": lambda m, x, lo, hi, beta: m.linspace(lo, hi, 5),
    "linspace(endpoint=False, array stop, axis=1)": lambda m, x, lo, hi, beta: m.linspace(
        lo, hi * np.array([1.0, 0.5]), 4, endpoint=False, axis=1),
    "linspace(num=1, retstep)": lambda m, x, lo, hi, beta: m.linspace(3, hi, 1, retstep=True),
    "linspace(retstep)": lambda m, x, lo, hi, beta: m.linspace(lo, 3, 7, retstep=True),
    "linspace(int16)": lambda m, x, lo, hi, beta: m.linspace(lo, beta, 6, dtype=np.int16),
    "geomspace": lambda m, x, lo, hi, beta: m.geomspace(hi, beta, 6),
    "geomspace(negative, endpoint=False)": lambda m, x, lo, hi, beta: m.geomspace(
        -beta, -hi, 4, endpoint=False),
    "geomspace(num=2, dtype)": lambda m, x, lo, hi, beta: m.geomspace(
        hi, 8.0, 2, dtype=np.float32),
    "geomspace(static)": lambda m, x, lo, hi, beta: m.geomspace(1, 1000, 4),
    "fromfunction": lambda m, x, lo, hi, beta: m.fromfunction(lambda i, j: i * 3 + j * lo,
                                                              (2, 3)),
    "fromfunction(dtype=int)": lambda m, x, lo, hi, beta: m.fromfunction(
        lambda i, j: i == j, (3, 3), dtype=int),
    "frombuffer": lambda m, x, lo, hi, beta: m.frombuffer(b"\x01\x02\x03\x04", np.uint8),
    "fromstring": lambda m, x, lo, hi, beta: m.fromstring("1 2 3.5", sep=" "),
    "fromiter": lambda m, x, lo, hi, beta: m.fromiter((i * i for i in range(4)), np.int32),
    "from_dlpack": lambda m, x, lo, hi, beta: m.from_dlpack(np.arange(3.0)),
}


@param_dtypes(["float32", "float64"])
def test_constructors_match_numpy(dtype):
    args = (I0_POINTS.astype(dtype), np.asarray(-1.5, dtype), np.asarray(2.25, dtype),
            np.asarray(5.5, dtype))
    compare_ops(OPS, *args, kinds="transcendental", where=dtype)


@param_dtypes(["int32", "float16", "bool"])
def test_i0_of_other_dtypes(dtype):
    x = np.array([0, 1, 3, 9], dtype)
    assert_same(jit_call(anp.i0, x), np.i0(x), "accumulate")


def test_vmap_matches_a_loop():
    betas = np.array([0.0, 2.5, 8.6], np.float32)
    ends = np.array([1.0, 2.0, -0.5], np.float32)

    def per_row(m, beta, end):
        return {"kaiser": m.kaiser(6, beta), "i0": m.i0(beta * np.arange(3.0, dtype="f4")),
                "logspace": m.logspace(0.0, end, 4), "geomspace": m.geomspace(1.0, end + 2, 3)}

    got = jit_call(aotc.vmap(lambda b, e: per_row(anp, b, e)), betas, ends)
    rows = [per_row(np, b, e) for b, e in zip(betas, ends)]
    for name in got:
        want = np.stack([r[name] for r in rows])
        assert_same(got[name], want.astype(got[name].dtype), "transcendental", name)


@pytest.mark.parametrize("call, error, fragments", [
    (lambda x: anp.hamming(x), TracerConversionError, ("hamming window length M",)),
    (lambda x: anp.bartlett(2.5), TracingError, ("bartlett", "integer", "2.5")),
    (lambda x: anp.logspace(0, x, -1), TracingError, ("logspace", "num", "-1")),
    (lambda x: anp.geomspace(1, x, 3.0), TracingError, ("geomspace", "num")),
    (lambda x: anp.frombuffer(x), TracingError, ("frombuffer", "traced array")),
    (lambda x: anp.fromfunction(3, (2,)), TracingError, ("fromfunction", "callable")),
    (lambda x: anp.frompyfunc(abs, 1, 1), UnsupportedOpError, ("frompyfunc", "vectorize")),
], ids=["window-traced-M", "window-float-M", "logspace-num", "geomspace-num",
        "frombuffer-traced", "fromfunction-callable", "frompyfunc"])
def test_errors_name_the_argument(call, error, fragments):
    with raises_match(error, *fragments):
        aotc.jit(call).lower(np.float32(3.0))
