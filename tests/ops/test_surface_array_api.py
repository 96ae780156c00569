"""The array API's names and numpy's shape helpers (aotc/ops/array_api.py) against numpy,
their vmap against a Python loop, and their errors.

One compiled function per dtype holds every op (conftest.compare_ops) over a (2, 3, 4)
array, a (3, 4) matrix and a 4-vector; products use conftest's "accumulate" tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.errors import TracingError

from .conftest import assert_same, compare_ops, jit_call, param_dtypes, raises_match, sample

DTYPES = ["float32", "float64", "int8", "int32", "uint8", "bool"]


def inputs(dtype):
    return (sample(dtype, (2, 3, 4), seed=1), sample(dtype, (3, 4), seed=2),
            sample(dtype, (4,), seed=3))


OPS = {
    "concat": lambda m, t, a, v: m.concat([a, a[:1]]),
    "concat(axis=None)": lambda m, t, a, v: m.concat([t, a, v], axis=None),
    "concat(axis=-1)": lambda m, t, a, v: m.concat([a, a], axis=-1),
    "permute_dims": lambda m, t, a, v: m.permute_dims(t, (2, 0, 1)),
    "matrix_transpose": lambda m, t, a, v: m.matrix_transpose(t),
    "vecdot": lambda m, t, a, v: m.vecdot(t, v),
    "vecdot(axis=0)": lambda m, t, a, v: m.vecdot(a, a[::-1], axis=0),
    "matvec": lambda m, t, a, v: m.matvec(t, v),
    "matvec(broadcast)": lambda m, t, a, v: m.matvec(a, t),
    "vecmat": lambda m, t, a, v: m.vecmat(a[:, 0], t),
    "unstack": lambda m, t, a, v: m.unstack(t),
    "unstack(axis=-1)": lambda m, t, a, v: m.unstack(a, axis=-1),
    "rollaxis": lambda m, t, a, v: m.rollaxis(t, 2),
    "rollaxis(start=3)": lambda m, t, a, v: m.rollaxis(t, 0, 3),
    "rollaxis(start=-1)": lambda m, t, a, v: m.rollaxis(t, 2, -2),
    "rollaxis(1, 1)": lambda m, t, a, v: m.rollaxis(t, 1, 1),
    "hsplit": lambda m, t, a, v: m.hsplit(a, 2),
    "hsplit(1-d)": lambda m, t, a, v: m.hsplit(v, [1, 3]),
    "vsplit": lambda m, t, a, v: m.vsplit(t, 2),
    "dsplit": lambda m, t, a, v: m.dsplit(t, [1]),
    "block": lambda m, t, a, v: m.block([[a, a], [a[:1], a[:1]]]),
    "block(1-d)": lambda m, t, a, v: m.block([v, v[:2], 7]),
    "block(mixed ndim)": lambda m, t, a, v: m.block([[t], [t[:1]]]),
    "block(vector rows)": lambda m, t, a, v: m.block([[v], [v]]),
}


@param_dtypes(DTYPES)
def test_array_api_names_match_numpy(dtype):
    compare_ops(OPS, *inputs(dtype), kinds="accumulate", where=dtype)


def test_block_of_one_array_is_the_array():
    x = sample("float32", (2, 2), seed=4)
    assert_same(jit_call(lambda x: anp.block(x), x), np.block(x))


def test_vmap_matches_a_loop():
    ts = sample("float32", (3, 2, 3, 4), seed=5)
    vs = sample("float32", (3, 4), seed=6)

    def per_row(m, t, v):
        return {"vecdot": m.vecdot(t, v), "matvec": m.matvec(t, v),
                "vecmat": m.vecmat(t[:, :, 0], t), "matrix_transpose": m.matrix_transpose(t),
                "rollaxis": m.rollaxis(t, 2), "block": m.block([[t[0], t[1]]]),
                "unstack": m.unstack(t, axis=1)[2], "dsplit": m.dsplit(t, 2)[1],
                "concat": m.concat([t, t], axis=None)}

    got = jit_call(aotc.vmap(lambda t, v: per_row(anp, t, v)), ts, vs)
    rows = [per_row(np, t, v) for t, v in zip(ts, vs)]
    for name in got:
        assert_same(got[name], np.stack([r[name] for r in rows]), "accumulate", name)


@pytest.mark.parametrize("call, fragments", [
    (lambda x: anp.matrix_transpose(x[0, 0]), ("matrix_transpose", "at least 2", "(4,)")),
    (lambda x: anp.vecdot(x, x[..., :3]), ("vecdot", "4 and 3")),
    (lambda x: anp.matvec(x[0, 0], x), ("matvec", "x1", "at least 2")),
    (lambda x: anp.rollaxis(x, 0, 5), ("rollaxis", "start", "-3 to 3", "5")),
    (lambda x: anp.vsplit(x[0, 0], 2), ("vsplit", "2 or more", "(4,)")),
    (lambda x: anp.dsplit(x[0], 2), ("dsplit", "3 or more")),
    (lambda x: anp.block([[x], x]), ("block", "different depths")),
    (lambda x: anp.block([x, []]), ("block", "arrays[1]", "empty list")),
    (lambda x: anp.block((x, x)), ("block", "tuple")),
], ids=["matrix_transpose-1d", "vecdot-lengths", "matvec-1d", "rollaxis-start", "vsplit-1d",
        "dsplit-2d", "block-depth", "block-empty", "block-tuple"])
def test_errors_name_the_argument(call, fragments):
    with raises_match(TracingError, *fragments):
        aotc.jit(call).lower(np.ones((2, 3, 4), np.float32))
