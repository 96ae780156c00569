"""Random programs: compositions (depth 2-4) of elementwise, reduction, shape and indexing
ops on random shapes (0-d, size 0 and 1 included) and dtypes (float32, float64, int32,
int8), compiled with aotc.jit and compared with numpy evaluating the same composition.
Half the programs are written against ``aotc.numpy``, the other half against numpy itself
(``np.sum(x)`` on traced arrays, dispatched through ``__array_function__`` /
``__array_ufunc__``). Ops that land later (``take``, ``cumsum``, integer-array indexing,
``roll``, ...) join the pool when aotc.numpy has them.

The examples are derandomized (the same programs every run) and not shrunk, to bound the
compile time; every program and disagreement is counted, and the last test of this file
reports the counts (also printed in pytest's terminal summary). ``AOTC_PROPERTY_EXAMPLES``
sets the number of programs (default 30; e.g. 300 for a one-off deeper run). Tolerances:
exact for integers and bool; rtol = atol = 1e-4 for float32 (compositions amplify the
per-op differences of conftest.py's table), 1e-10 for float64.
"""

from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import aotc
import aotc.numpy as anp

from .conftest import COMPILE_STATS, PROPERTY_STATS, compare_ops, sample, to_numpy

MAX_EXAMPLES = int(os.environ.get("AOTC_PROPERTY_EXAMPLES", "30"))
DTYPES = ["float32", "float64", "int32", "int8"]
TOLERANCE = {"float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10), "float16": (1e-2, 1e-2)}


def _axis(x):
    return st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)) if x.ndim else st.none()


def _int_axis(x):
    return st.integers(-x.ndim, x.ndim - 1)


def _broadcasts(x, y):
    try:
        np.broadcast_shapes(x.shape, y.shape)
        return True
    except ValueError:
        return False


def _float(x):
    return x.dtype.kind == "f"


def _nonempty(x):
    return x.size > 0


def _traces(fn) -> bool:
    """Whether aotc traces ``fn`` on a float32[3] (ops that may not have landed yet)."""
    try:
        aotc.jit(fn).lower(aotc.ShapeDtypeStruct((3,), "float32"))
        return True
    except aotc.AotcError:
        return False


def _available(name: str) -> bool:
    return hasattr(anp, name)


def _indices(x, axis):
    """Index arrays valid for ``axis`` of ``x`` (negative ones included), length 0-4."""
    n = x.shape[axis]
    indices = st.lists(st.integers(-n, n - 1), min_size=0, max_size=4)
    return indices.map(lambda i: np.array(i, np.int64))


def _two_axes(name: str):
    """An op entry ``m.<name>(x, axis1, axis2)`` for arrays of 2 dimensions or more."""
    return (
        lambda x, y: x.ndim >= 2,
        lambda x: st.tuples(_int_axis(x), _int_axis(x)),
        lambda m, x, y, p: getattr(m, name)(x, *p),
    )


INTEGER_ARRAY_INDEXING = _traces(lambda x: x[np.array([0, 2])])


# name -> (applies(x, y), parameter strategy(x), fn(m, x, y, p)); ``m`` is aotc.numpy or
# numpy (numpy's functions on traced arrays are dispatched to aotc.numpy's).
OPS = {
    "negative": (lambda x, y: True, lambda x: st.none(), lambda m, x, y, p: -x),
    "absolute": (lambda x, y: True, lambda x: st.none(), lambda m, x, y, p: m.absolute(x)),
    "square": (lambda x, y: True, lambda x: st.none(), lambda m, x, y, p: m.square(x)),
    "sign": (lambda x, y: True, lambda x: st.none(), lambda m, x, y, p: m.sign(x)),
    "tanh": (lambda x, y: _float(x), lambda x: st.none(), lambda m, x, y, p: m.tanh(x)),
    "exp(-|x|)": (lambda x, y: _float(x), lambda x: st.none(), lambda m, x, y, p: m.exp(-m.abs(x))),
    "sqrt(|x|)": (lambda x, y: _float(x), lambda x: st.none(), lambda m, x, y, p: m.sqrt(m.abs(x))),
    "invert": (lambda x, y: x.dtype.kind == "i", lambda x: st.none(), lambda m, x, y, p: ~x),
    "add y": (_broadcasts, lambda x: st.none(), lambda m, x, y, p: x + y),
    "subtract y": (_broadcasts, lambda x: st.none(), lambda m, x, y, p: m.subtract(y, x)),
    "multiply y": (_broadcasts, lambda x: st.none(), lambda m, x, y, p: x * y),
    "maximum y": (_broadcasts, lambda x: st.none(), lambda m, x, y, p: m.maximum(x, y)),
    "where(x > y, x, y)": (
        _broadcasts,
        lambda x: st.none(),
        lambda m, x, y, p: m.where(x > y, x, y),
    ),
    "x + k": (lambda x, y: True, lambda x: st.integers(-3, 3), lambda m, x, y, p: x + p),
    "x * k": (lambda x, y: True, lambda x: st.integers(-3, 3), lambda m, x, y, p: x * p),
    "x // k": (
        lambda x, y: True,
        lambda x: st.sampled_from([-3, -2, 2, 3]),
        lambda m, x, y, p: x // p,
    ),
    "x % k": (lambda x, y: True, lambda x: st.sampled_from([-3, 2, 5]), lambda m, x, y, p: x % p),
    "where(x > k, x, -x)": (
        lambda x, y: True,
        lambda x: st.integers(-2, 2),
        lambda m, x, y, p: m.where(x > p, x, -x),
    ),
    "sum": (
        lambda x, y: True,
        lambda x: st.tuples(_axis(x), st.booleans()),
        lambda m, x, y, p: m.sum(x, axis=p[0], keepdims=p[1]),
    ),
    "max": (
        lambda x, y: _nonempty(x),
        lambda x: st.tuples(_axis(x), st.booleans()),
        lambda m, x, y, p: m.max(x, axis=p[0], keepdims=p[1]),
    ),
    "min": (lambda x, y: _nonempty(x), lambda x: _axis(x), lambda m, x, y, p: m.min(x, axis=p)),
    "mean": (lambda x, y: _nonempty(x), lambda x: _axis(x), lambda m, x, y, p: m.mean(x, axis=p)),
    "argmax": (
        lambda x, y: _nonempty(x),
        lambda x: _axis(x),
        lambda m, x, y, p: m.argmax(x, axis=p),
    ),
    "transpose": (lambda x, y: x.ndim >= 2, lambda x: st.none(), lambda m, x, y, p: m.transpose(x)),
    "swapaxes": _two_axes("swapaxes"),
    "reshape(-1)": (lambda x, y: True, lambda x: st.none(), lambda m, x, y, p: m.reshape(x, -1)),
    "expand_dims(0)": (
        lambda x, y: True,
        lambda x: st.none(),
        lambda m, x, y, p: m.expand_dims(x, 0),
    ),
    "flip": (lambda x, y: x.ndim >= 1, lambda x: _int_axis(x), lambda m, x, y, p: m.flip(x, p)),
    "x[a:b:s]": (
        lambda x, y: x.ndim >= 1,
        lambda x: st.tuples(
            st.integers(-4, 4), st.integers(-4, 4), st.sampled_from([-2, -1, 1, 2])
        ),
        lambda m, x, y, p: x[p[0] : p[1] : p[2]],
    ),
    "x[..., a::s]": (
        lambda x, y: x.ndim >= 1,
        lambda x: st.tuples(st.integers(-3, 3), st.sampled_from([-1, 1, 2])),
        lambda m, x, y, p: x[..., p[0] :: p[1]],
    ),
    "x[i]": (
        lambda x, y: x.ndim >= 1 and x.shape[0] > 0,
        lambda x: st.integers(-x.shape[0], x.shape[0] - 1),
        lambda m, x, y, p: x[p],
    ),
    "x[None]": (lambda x, y: True, lambda x: st.none(), lambda m, x, y, p: x[None]),
    "astype": (
        lambda x, y: True,
        lambda x: st.sampled_from(["float32", "int32", "float64", "int8"]),
        lambda m, x, y, p: x.astype(p),
    ),
    "divide y": (_broadcasts, lambda x: st.none(), lambda m, x, y, p: m.divide(x, m.abs(y) + 1)),
    "minimum k": (
        lambda x, y: True,
        lambda x: st.integers(-2, 2),
        lambda m, x, y, p: m.minimum(x, p),
    ),
    "x > y": (_broadcasts, lambda x: st.none(), lambda m, x, y, p: x > y),
    "logical_not(x > 0)": (
        lambda x, y: True,
        lambda x: st.none(),
        lambda m, x, y, p: m.logical_not(x > 0),
    ),
    "clip": (lambda x, y: True, lambda x: st.none(), lambda m, x, y, p: m.clip(x, -2, 2)),
    "prod": (
        lambda x, y: True,
        lambda x: _axis(x),
        lambda m, x, y, p: m.prod(m.clip(x, -2, 2), axis=p),
    ),
    "any": (lambda x, y: True, lambda x: _axis(x), lambda m, x, y, p: m.any(x > 0, axis=p)),
    "all": (lambda x, y: True, lambda x: _axis(x), lambda m, x, y, p: m.all(x > 0, axis=p)),
    "std": (lambda x, y: _nonempty(x), lambda x: _axis(x), lambda m, x, y, p: m.std(x, axis=p)),
    "argmin": (
        lambda x, y: _nonempty(x),
        lambda x: _axis(x),
        lambda m, x, y, p: m.argmin(x, axis=p),
    ),
    "add.reduce": (
        lambda x, y: x.ndim >= 1,
        lambda x: _int_axis(x),
        lambda m, x, y, p: np.add.reduce(x, axis=p),
    ),
    "reshape(reversed shape)": (
        lambda x, y: True, lambda x: st.none(), lambda m, x, y, p: m.reshape(x, m.shape(x)[::-1])
    ),
    "ravel": (lambda x, y: True, lambda x: st.none(), lambda m, x, y, p: m.ravel(x)),
    "squeeze": (lambda x, y: 1 in x.shape, lambda x: st.none(), lambda m, x, y, p: m.squeeze(x)),
    "moveaxis": _two_axes("moveaxis"),
    "expand_dims(-1)": (
        lambda x, y: True,
        lambda x: st.none(),
        lambda m, x, y, p: m.expand_dims(x, -1),
    ),
    "broadcast_to(2, ...)": (
        lambda x, y: True,
        lambda x: st.none(),
        lambda m, x, y, p: m.broadcast_to(x, (2,) + m.shape(x)),
    ),
    "concatenate [x, x]": (
        lambda x, y: x.ndim >= 1,
        lambda x: _int_axis(x),
        lambda m, x, y, p: m.concatenate([x, m.flip(x, p)], axis=p),
    ),
    "stack [x, x * 2]": (
        lambda x, y: True,
        lambda x: st.integers(-x.ndim - 1, x.ndim),
        lambda m, x, y, p: m.stack([x, x * 2], axis=p),
    ),
    "x[::-1, None, 1:]": (
        lambda x, y: x.ndim >= 2, lambda x: st.none(), lambda m, x, y, p: x[::-1, None, 1:]
    ),
    "x[..., i]": (
        lambda x, y: x.ndim >= 1 and x.shape[-1] > 0,
        lambda x: st.integers(-x.shape[-1], x.shape[-1] - 1),
        lambda m, x, y, p: x[..., p],
    ),
}

# Ops that need functions or indexing still being added: in the pool once they trace.
LATER_OPS = {
    "x[idx]": (
        INTEGER_ARRAY_INDEXING,
        lambda x, y: x.ndim >= 1 and x.shape[0] > 0,
        lambda x: _indices(x, 0),
        lambda m, x, y, p: x[p],
    ),
    "x[:, idx]": (
        INTEGER_ARRAY_INDEXING,
        lambda x, y: x.ndim >= 2 and x.shape[1] > 0,
        lambda x: _indices(x, 1),
        lambda m, x, y, p: x[:, p],
    ),
    "take": (
        _available("take"),
        lambda x, y: x.ndim >= 1 and x.shape[-1] > 0,
        lambda x: _indices(x, -1),
        lambda m, x, y, p: m.take(x, p, axis=-1),
    ),
    "cumsum": (
        _available("cumsum"),
        lambda x, y: True,
        lambda x: _axis(x),
        lambda m, x, y, p: m.cumsum(x, axis=p),
    ),
    "roll": (
        _available("roll"),
        lambda x, y: x.ndim >= 1,
        lambda x: st.tuples(st.integers(-5, 5), _int_axis(x)),
        lambda m, x, y, p: m.roll(x, p[0], axis=p[1]),
    ),
    "tile": (
        _available("tile"),
        lambda x, y: x.size <= 16,
        lambda x: st.integers(1, 3),
        lambda m, x, y, p: m.tile(x, p),
    ),
    "pad": (
        _available("pad"),
        lambda x, y: x.ndim >= 1,
        lambda x: st.integers(0, 2),
        lambda m, x, y, p: m.pad(x, p),
    ),
    "sort": (
        _available("sort"),
        lambda x, y: x.ndim >= 1,
        lambda x: _int_axis(x),
        lambda m, x, y, p: m.sort(x, axis=p),
    ),
    "tril": (
        _available("tril"),
        lambda x, y: x.ndim >= 2,
        lambda x: st.integers(-1, 1),
        lambda m, x, y, p: m.tril(x, p),
    ),
}
OPS.update({name: rest for name, (available, *rest) in LATER_OPS.items() if available})

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)


@st.composite
def programs(draw):
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(shapes)
    x = sample(dtype, shape, seed=draw(st.integers(0, 9999)), with_specials=False, low=-3, high=3)
    # y broadcasts against x: a suffix of x's shape with some dims set to 1.
    suffix = shape[len(shape) - draw(st.integers(0, len(shape))) :]
    y_shape = tuple(1 if draw(st.booleans()) else d for d in suffix)
    y = sample(dtype, y_shape, seed=draw(st.integers(0, 9999)), with_specials=False, low=-3, high=3)
    steps, current = [], x
    for _ in range(draw(st.integers(2, 4))):
        names = sorted(n for n, (applies, _, _) in OPS.items() if applies(current, y))
        while True:  # an op numpy rejects for these operands (bool - bool, ...) is redrawn
            name = draw(st.sampled_from(names))
            param = draw(OPS[name][1](current))
            try:
                with np.errstate(all="ignore"):
                    current = np.asarray(OPS[name][2](np, current, y, param))
                break
            except (TypeError, ValueError, OverflowError):
                names.remove(name)
        steps.append((name, param))
    traced_with = draw(st.sampled_from(["aotc.numpy", "numpy"]))
    return x, y, steps, traced_with


def run_steps(m, x, y, steps):
    for name, param in steps:
        x = OPS[name][2](m, x, y, param)
    return x


def describe(x, y, steps, traced_with="aotc.numpy") -> str:
    operands = f"x: {x.dtype}{list(x.shape)}, y: {y.dtype}{list(y.shape)}, {traced_with}; "
    return operands + " -> ".join(
        f"{n}({p})" if p is not None else n for n, p in steps
    )


def _disagreement(x, y, steps, traced_with="aotc.numpy") -> str | None:
    with np.errstate(all="ignore"):
        want = np.asarray(run_steps(np, x, y, steps))
    m = anp if traced_with == "aotc.numpy" else np
    jitted = aotc.jit(lambda a, b: run_steps(m, a, b, steps))
    try:
        got = to_numpy(jitted(x, y))
    except Exception as e:  # aotc rejected a program numpy runs
        return f"aotc raised {type(e).__name__}: {str(e)[:300]}"
    finally:
        COMPILE_STATS.update(jitted.stats)
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"got {got.dtype}{list(got.shape)}, numpy {want.dtype}{list(want.shape)}"
    if want.dtype.kind == "f":
        rtol, atol = TOLERANCE[want.dtype.name]
        ok = np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        ok = np.array_equal(got, want)
    return None if ok else f"values differ:\n  aotc  {got!r}\n  numpy {want!r}"


@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
)
@given(programs())
def test_random_compositions(program):
    PROPERTY_STATS["programs"] += 1
    problem = _disagreement(*program)
    if problem is not None:
        PROPERTY_STATS["disagreements"] += 1
        PROPERTY_STATS["details"].append(f"{describe(*program)}: {problem}")


def test_random_compositions_summary():
    """Reports how many random programs ran and how many disagreed with numpy."""
    s = PROPERTY_STATS
    assert s["programs"] > 0, "test_random_compositions did not run"
    assert s["disagreements"] == 0, (
        f"{s['disagreements']} of {s['programs']} random programs disagree with numpy:\n"
        + "\n".join(s["details"])
    )


def test_slicing_arrays_with_a_size_0_dimension():
    """Found by the random programs: slices of an array with a size-0 dimension (MLIR
    rejects every offset into such a tensor, so aotc makes the empty result directly)."""
    ops = {
        "x[:, 1:]": lambda m, x: x[:, 1:],
        "x[::-1, None, 1:]": lambda m, x: x[::-1, None, 1:],
        "x[..., 0]": lambda m, x: x[..., 0],
        "x[1:, ::2]": lambda m, x: x[1:, ::2],
    }
    compare_ops(ops, sample("int8", (0, 2)), where="int8[0, 2]")
    compare_ops(ops, sample("float32", (2, 0, 3)), where="float32[2, 0, 3]")
