"""``h`` and ``lax`` of the fuzzer's programs: the same operations for aotc and numpy.

``.at`` updates are written ``h.at_add(x, index, v)``: ``x.at[index].add(v)`` under aotc,
``np.add.at`` on a copy under numpy (repeated indices accumulate on both sides). The
numpy ``lax`` runs control flow as Python loops and convolutions as sums over windows.
"""

from __future__ import annotations

import types

import numpy as np


def _at(method: str):
    return staticmethod(lambda x, index, v: getattr(x.at[index], method)(v))


class AotcHelpers:
    at_set, at_add, at_multiply = _at("set"), _at("add"), _at("multiply")
    at_min, at_max = _at("min"), _at("max")


def _updated(ufunc):
    def update(x, index, v):
        y = np.array(x, copy=True)
        ufunc.at(y, index, np.asarray(v).astype(y.dtype))
        return y
    return staticmethod(update)


class NumpyHelpers:
    @staticmethod
    def at_set(x, index, v):
        y = np.array(x, copy=True)
        y[index] = v
        return y

    at_add = _updated(np.add)
    at_multiply = _updated(np.multiply)
    at_min = _updated(np.minimum)
    at_max = _updated(np.maximum)


def _cond(pred, true_fun, false_fun, *operands):
    return true_fun(*operands) if pred else false_fun(*operands)


def _fori_loop(lower, upper, body, init):
    carry = init
    for i in range(lower, upper):
        carry = body(i, carry)
    return carry


def _while_loop(cond, body, init):
    carry = init
    while cond(carry):
        carry = body(carry)
    return carry


def _scan(f, init, xs):
    carry, ys = init, []
    for x in xs:
        carry, y = f(carry, x)
        ys.append(y)
    return carry, np.stack(ys)


def _conv(lhs, rhs, window_strides, padding):
    """lax.conv (NCHW input, OIHW kernel), as numpy sums over windows."""
    kh, kw = rhs.shape[2:]
    if padding == "SAME":
        pads = []
        for size, k, s in zip(lhs.shape[2:], (kh, kw), window_strides):
            out = -(-size // s)
            total = max((out - 1) * s + k - size, 0)
            pads.append((total // 2, total - total // 2))
        lhs = np.pad(lhs, [(0, 0), (0, 0), *pads])
    windows = np.lib.stride_tricks.sliding_window_view(lhs, (kh, kw), axis=(2, 3))
    windows = windows[:, :, ::window_strides[0], ::window_strides[1]]
    return np.einsum("nchwij,ocij->nohw", windows, rhs).astype(np.result_type(lhs, rhs))


NUMPY_LAX = types.SimpleNamespace(cond=_cond, fori_loop=_fori_loop, while_loop=_while_loop,
                                  scan=_scan, conv=_conv)
