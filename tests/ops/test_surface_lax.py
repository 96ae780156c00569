"""jax.lax's common array ops in aotc.lax (aotc/ops/lax_ops.py) against JAX itself (CPU,
x64 off, so float32/int32 inputs), their vmap against a Python loop, and lax's refusal
to promote mismatched dtypes.

One compiled function per dtype holds every op; results must have JAX's dtype and shape,
floats within conftest's float32 "accumulate" tolerance, integers and bools exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.lax as alax
import aotc.numpy as anp
from aotc.errors import TracingError, UnsupportedDtypeError

from .conftest import assert_same, jit_call, raises_match, sample

jax = pytest.importorskip("jax")
jlax = pytest.importorskip("jax.lax")


def _both(ops, *args):
    """aotc's results (one compile) and JAX's, entry by entry."""
    got = jit_call(lambda *a: {n: op(alax, anp, *a) for n, op in ops.items()}, *args)
    import jax.numpy as jnp

    for name, op in ops.items():
        want = op(jlax, jnp, *args)
        gots = got[name] if isinstance(got[name], tuple) else (got[name],)
        wants = want if isinstance(want, tuple) else (want,)
        for g, w in zip(gots, wants):
            assert_same(g, np.asarray(w), "accumulate", name)


UNARY = ["neg", "abs", "sign", "floor", "ceil", "sqrt", "exp", "log1p", "expm1", "tanh",
         "square", "is_finite", "reciprocal", "rsqrt", "logistic", "sin", "cos", "atan"]
BINARY = ["add", "sub", "mul", "div", "rem", "max", "min", "pow", "atan2", "nextafter", "eq",
          "ne", "lt", "le", "gt", "ge"]
INT_BINARY = ["add", "sub", "mul", "div", "rem", "max", "min", "eq", "lt", "bitwise_and",
              "bitwise_or", "bitwise_xor", "shift_left", "shift_right_arithmetic",
              "shift_right_logical"]

STRUCTURAL = {
    "select": lambda lx, m, x, y: lx.select(x > y, x, y),
    "select_n": lambda lx, m, x, y: lx.select_n((x > 0).astype(np.int32) + (y > 0), x, y, x * 2),
    "clamp": lambda lx, m, x, y: lx.clamp(y[0, 0], x, y[0, 0] + 2),
    "broadcast": lambda lx, m, x, y: lx.broadcast(x[0], (2,)),
    "broadcast_in_dim": lambda lx, m, x, y: lx.broadcast_in_dim(x[:, :1], (4, 3, 2), (0, 2)),
    "broadcasted_iota": lambda lx, m, x, y: lx.broadcasted_iota(np.int32, (3, 4), 1),
    "iota": lambda lx, m, x, y: lx.iota(np.float32, 5),
    "reshape": lambda lx, m, x, y: lx.reshape(x, (2, 8), dimensions=(1, 0)),
    "squeeze": lambda lx, m, x, y: lx.squeeze(x[:1], (0,)),
    "expand_dims": lambda lx, m, x, y: lx.expand_dims(x, (0, 2)),
    "transpose": lambda lx, m, x, y: lx.transpose(x, (1, 0)),
    "rev": lambda lx, m, x, y: lx.rev(x, (0, 1)),
    "slice": lambda lx, m, x, y: lx.slice(x, (1, 0), (4, 4), (2, 3)),
    "slice_in_dim": lambda lx, m, x, y: lx.slice_in_dim(x, 1, 3, axis=1),
    "index_in_dim": lambda lx, m, x, y: lx.index_in_dim(x, -1, axis=0, keepdims=False),
    "concatenate": lambda lx, m, x, y: lx.concatenate([x, y], 1),
    "pad": lambda lx, m, x, y: lx.pad(x, x.dtype.type(7), [(1, -1, 2), (-1, 2, 0)]),
    "dot": lambda lx, m, x, y: lx.dot(x, y.T),
    "dot_general": lambda lx, m, x, y: lx.dot_general(
        m.reshape(x, (2, 2, 4)), m.reshape(y, (2, 4, 2)), (((2,), (1,)), ((0,), (0,)))),
    "reduce_sum": lambda lx, m, x, y: lx.reduce_sum(x, (0,)),
    "reduce_max": lambda lx, m, x, y: lx.reduce_max(x, (0, 1)),
    "reduce_min": lambda lx, m, x, y: lx.reduce_min(x, (1,)),
    "reduce_prod": lambda lx, m, x, y: lx.reduce_prod(x, (1,)),
    "argmax": lambda lx, m, x, y: lx.argmax(x, 1, np.int32),
    "argmin": lambda lx, m, x, y: lx.argmin(x, 0, np.int32),
    "cumsum": lambda lx, m, x, y: lx.cumsum(x, axis=1, reverse=True),
    "cumprod": lambda lx, m, x, y: lx.cumprod(x, axis=0),
    "cummax": lambda lx, m, x, y: lx.cummax(x, axis=1),
    "cummin": lambda lx, m, x, y: lx.cummin(x, axis=0, reverse=True),
    "sort": lambda lx, m, x, y: lx.sort(x, dimension=0),
    "sort(2 operands, 2 keys)": lambda lx, m, x, y: lx.sort((x // 3, y, x), num_keys=2),
    "sort_key_val": lambda lx, m, x, y: lx.sort_key_val(x, y, dimension=1),
    "full": lambda lx, m, x, y: lx.full((2, 3), 1.5, np.float32),
    "full_like": lambda lx, m, x, y: lx.full_like(x, 3),
    "stop_gradient": lambda lx, m, x, y: lx.stop_gradient(x),
    "convert_element_type": lambda lx, m, x, y: lx.convert_element_type(x, np.int8),
    "integer_pow": lambda lx, m, x, y: lx.integer_pow(x, 3),
    "integer_pow(-2)": lambda lx, m, x, y: lx.integer_pow(x, -2) if x.dtype.kind == "f" else x,
    "round": lambda lx, m, x, y: lx.round(x * 0.5) if x.dtype.kind == "f" else x,
    "round(even)": lambda lx, m, x, y: lx.round(x * 0.5, 1) if x.dtype.kind == "f" else x,
}


def _elementwise(names):
    return {n: (lambda n: lambda lx, m, *xs: getattr(lx, n)(*xs))(n) for n in names}


def test_float_ops_match_jax():
    x = sample("float32", (4, 4), seed=1, with_specials=False, low=0.25, high=3)
    y = sample("float32", (4, 4), seed=2, with_specials=False, low=-3, high=3)
    ops = {**{f"{n}(x)": (lambda n: lambda lx, m, x, y: getattr(lx, n)(x))(n) for n in UNARY},
           **_elementwise(BINARY), **STRUCTURAL,
           "cumlogsumexp": lambda lx, m, x, y: lx.cumlogsumexp(x, axis=1, reverse=True),
           "bitcast_convert_type": lambda lx, m, x, y: lx.bitcast_convert_type(x, np.int32),
           "round(halves)": lambda lx, m, x, y: lx.round(m.asarray([0.5, -0.5, 1.5, -2.5],
                                                                 np.float32))}
    _both(ops, x, y)


def test_integer_ops_match_jax():
    x = sample("int32", (4, 4), seed=3, with_specials=False)
    y = (sample("int32", (4, 4), seed=4, with_specials=False) % 7 + 1).astype(np.int32)
    y[0, :2] = [-3, -1]
    ops = {**_elementwise(INT_BINARY), **STRUCTURAL,
           "neg": lambda lx, m, x, y: lx.neg(x), "sign": lambda lx, m, x, y: lx.sign(x),
           "bitwise_not": lambda lx, m, x, y: lx.bitwise_not(x),
           "shift_right_logical(negative)": lambda lx, m, x, y: lx.shift_right_logical(
               x - 30, m.abs(y)),
           "bitcast_convert_type": lambda lx, m, x, y: lx.bitcast_convert_type(x, np.float32)}
    _both(ops, x, y)


def test_vmap_matches_a_loop():
    xs = sample("float32", (3, 4, 4), seed=5, with_specials=False)

    def per_example(x):
        return {"pad": alax.pad(x, np.float32(0), [(1, 1, 1), (0, -1, 0)]),
                "select": alax.select(x > 0, x, -x), "clamp": alax.clamp(-1.0, x, 1.0),
                "dot_general": alax.dot_general(x, x, (((1,), (0,)), ((), ()))),
                "cummax": alax.cummax(x, axis=1, reverse=True), "sort": alax.sort(x, 0),
                "broadcast_in_dim": alax.broadcast_in_dim(x[0], (2, 4), (1,)),
                "reduce_max": alax.reduce_max(x, (1,)), "div": alax.div(x, 3.0)}

    got = jit_call(aotc.vmap(per_example), xs)
    rows = [jit_call(per_example, x) for x in xs]
    for name in got:
        assert_same(got[name], np.stack([r[name] for r in rows]), "accumulate", name)


@pytest.mark.parametrize("call, error, fragments", [
    (lambda x: alax.add(x, x.astype(np.int32)), UnsupportedDtypeError,
     ("lax.add", "same dtypes", "float32, int32")),
    (lambda x: alax.select(x, x, x), UnsupportedDtypeError, ("lax.select", "bool")),
    (lambda x: alax.concatenate([x, x.astype(np.float16)], 0), UnsupportedDtypeError,
     ("lax.concatenate", "same dtypes")),
    (lambda x: alax.pad(x, 0.0, [(0, 0, -1)]), TracingError, ("lax.pad", "interior")),
    (lambda x: alax.pad(x, 0.0, [(0, 0, 0)] * 2), TracingError, ("lax.pad", "padding_config")),
    (lambda x: alax.broadcast_in_dim(x, (3, 4), (0,)), TracingError,
     ("lax.broadcast_in_dim", "size 4")),
    (lambda x: alax.sort((x, x[:2]), num_keys=1), TracingError, ("lax.sort", "one shape")),
    (lambda x: alax.bitcast_convert_type(x, np.float64), TracingError,
     ("bitcast_convert_type", "last axis of 2", "(4,)")),
    (lambda x: alax.integer_pow(x, 1.5), TracingError, ("integer_pow", "int")),
], ids=["no-promotion", "select-pred", "concatenate", "pad-interior", "pad-config",
        "broadcast_in_dim", "sort-shapes", "bitcast-width", "integer_pow"])
def test_errors_name_the_argument(call, error, fragments):
    with raises_match(error, *fragments):
        aotc.jit(call).lower(np.ones(4, np.float32))
