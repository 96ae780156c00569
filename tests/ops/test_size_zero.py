"""Slices of arrays with a size-0 dimension, and empty slices of non-empty arrays.

MLIR rejects every ``tensor.extract_slice``/``insert_slice`` offset into a tensor with a
size-0 dimension ("offset 0 is out-of-bounds: 0 >= 0"); each op that slices must still
give numpy's (or jax.lax's) result: an empty array of the right shape and dtype, and the
other results unchanged. All cases run in one compiled function; results are compared
exactly (empty arrays, integer counts and sums of exact float32 values).
"""

from __future__ import annotations

import numpy as np
import pytest

import aotc.lax as lax
import aotc.numpy as anp

from .conftest import assert_all, jit_call

EMPTY = np.zeros((3, 0), np.float32)  # rows with no elements
FULL = np.arange(12, dtype=np.float32).reshape(3, 4)


# name: (traced(empty, full, i), numpy's result); i is a traced start or index, and the
# results do not depend on it (they are empty, or the unchanged array).
CASES = {
    "dynamic_slice(empty, (i, 0), (2, 0))":
        (lambda e, f, i: lax.dynamic_slice(e, (i, 0), (2, 0)), EMPTY[:2]),
    "dynamic_slice(empty, (1, 0), (2, 0))":
        (lambda e, f, i: lax.dynamic_slice(e, (1, 0), (2, 0)), EMPTY[1:3]),
    "dynamic_slice(full, (i, 1), (2, 0))":
        (lambda e, f, i: lax.dynamic_slice(f, (i, 1), (2, 0)), FULL[:2, :0]),
    "dynamic_index_in_dim(empty, i)":
        (lambda e, f, i: lax.dynamic_index_in_dim(e, i), EMPTY[:1]),
    "empty[i]": (lambda e, f, i: e[i], EMPTY[0]),
    "empty[::-1]": (lambda e, f, i: e[::-1], EMPTY[::-1]),
    "split(empty, 3)": (lambda e, f, i: anp.split(e, 3), np.split(EMPTY, 3)),
    "empty.at[i].add(1)": (lambda e, f, i: e.at[i].add(1.0), EMPTY),
    "empty.at[1].set(1)": (lambda e, f, i: e.at[1].set(1.0), EMPTY),
    "dynamic_update_slice(empty, zeros(2, 0), (i, 0))":
        (lambda e, f, i: lax.dynamic_update_slice(e, anp.zeros((2, 0), np.float32), (i, 0)),
         EMPTY),
    "full.at[i, 1:1].set(5)": (lambda e, f, i: f.at[i, 1:1].set(5.0), FULL),
    # scan over rows of no elements: x is (0,) at every step; ys stack to (3, 0).
    "scan(empty)":
        (lambda e, f, i: lax.scan(lambda c, r: (c + r.sum() + 1, r * 2), np.float32(0), e),
         (np.float32(3), EMPTY)),
    "scan(empty, reverse, unroll=2)":
        (lambda e, f, i: lax.scan(lambda c, r: (c + r.sum() + 1, r * 2), np.float32(0), e,
                                  reverse=True, unroll=2),
         (np.float32(3), EMPTY)),
    # non-empty xs, empty ys
    "scan(full) -> empty ys":
        (lambda e, f, i: lax.scan(lambda c, r: (c + r.sum(), r[:0]), np.float32(0), f),
         (np.float32(FULL.sum()), FULL[:, :0])),
    "conv(N=0, cropped)":
        (lambda e, f, i: lax.conv_general_dilated(anp.zeros((0, 1, 5), np.float32),
                                                  anp.ones((1, 1, 2), np.float32),
                                                  (1,), [(-1, -1)]),
         np.zeros((0, 1, 2), np.float32)),
    "conv(W cropped to 0)":
        (lambda e, f, i: lax.conv_general_dilated(anp.ones((1, 1, 2), np.float32),
                                                  anp.ones((1, 1, 1), np.float32),
                                                  (1,), [(-1, -1)]),
         np.zeros((1, 1, 0), np.float32)),
}


def _entries(name, value) -> dict:
    if isinstance(value, (tuple, list)):
        return {f"{name}[{k}]": v for k, v in enumerate(value)}
    return {name: value}


def _batch(e, f, i):
    out = {}
    for name, (traced, _) in CASES.items():
        out.update(_entries(name, traced(e, f, i)))
    return out


@pytest.mark.parametrize("i", [1, -1, 7])  # one compile: i is a traced argument
def test_slices_of_size_zero_dimensions(i):
    got = jit_call(_batch, EMPTY, FULL, np.int32(i))
    want = {}
    for name, (_, reference) in CASES.items():
        want.update({k: np.asarray(v) for k, v in _entries(name, reference).items()})
    assert_all(got, want, where=f"i={i}")
