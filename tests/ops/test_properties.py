"""Random programs: compositions (depth 2-4) of elementwise, reduction, shape and indexing
ops on random shapes and dtypes (float32, int32), compiled with aotc.jit and compared with
numpy evaluating the same composition.

The examples are derandomized (the same programs every run) and not shrunk, to bound the
compile time; every program and disagreement is counted, and the last test of this file
reports the counts (also printed in pytest's terminal summary). Tolerances: exact for
integers and bool; rtol = atol = 1e-4 for float32 (compositions amplify the per-op
differences of conftest.py's table), 1e-10 for float64.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import aotc
import aotc.numpy as anp

from .conftest import COMPILE_STATS, PROPERTY_STATS, sample, to_numpy

MAX_EXAMPLES = 25
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


# name -> (applies(x, y), parameter strategy(x), fn(m, x, y, p))
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
    "swapaxes": (
        lambda x, y: x.ndim >= 2,
        lambda x: st.tuples(_int_axis(x), _int_axis(x)),
        lambda m, x, y, p: m.swapaxes(x, *p),
    ),
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
        lambda x: st.sampled_from(["float32", "int32"]),
        lambda m, x, y, p: x.astype(p),
    ),
}

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)


@st.composite
def programs(draw):
    dtype = draw(st.sampled_from(["float32", "int32"]))
    shape = draw(shapes)
    x = sample(dtype, shape, seed=draw(st.integers(0, 9999)), with_specials=False, low=-3, high=3)
    # y broadcasts against x: a suffix of x's shape with some dims set to 1.
    suffix = shape[len(shape) - draw(st.integers(0, len(shape))) :]
    y_shape = tuple(1 if draw(st.booleans()) else d for d in suffix)
    y = sample(dtype, y_shape, seed=draw(st.integers(0, 9999)), with_specials=False, low=-3, high=3)
    steps, current = [], x
    for _ in range(draw(st.integers(2, 4))):
        names = sorted(n for n, (applies, _, _) in OPS.items() if applies(current, y))
        name = draw(st.sampled_from(names))
        param = draw(OPS[name][1](current))
        with np.errstate(all="ignore"):
            current = np.asarray(OPS[name][2](np, current, y, param))
        steps.append((name, param))
    return x, y, steps


def run_steps(m, x, y, steps):
    for name, param in steps:
        x = OPS[name][2](m, x, y, param)
    return x


def describe(x, y, steps) -> str:
    return f"x: {x.dtype}{list(x.shape)}, y: {y.dtype}{list(y.shape)}; " + " -> ".join(
        f"{n}({p})" if p is not None else n for n, p in steps
    )


def _disagreement(x, y, steps) -> str | None:
    with np.errstate(all="ignore"):
        want = np.asarray(run_steps(np, x, y, steps))
    jitted = aotc.jit(lambda a, b: run_steps(anp, a, b, steps))
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
    x, y, steps = program
    PROPERTY_STATS["programs"] += 1
    problem = _disagreement(x, y, steps)
    if problem is not None:
        PROPERTY_STATS["disagreements"] += 1
        PROPERTY_STATS["details"].append(f"{describe(x, y, steps)}: {problem}")


def test_random_compositions_summary():
    """Reports how many random programs ran and how many disagreed with numpy."""
    s = PROPERTY_STATS
    assert s["programs"] > 0, "test_random_compositions did not run"
    assert s["disagreements"] == 0, (
        f"{s['disagreements']} of {s['programs']} random programs disagree with numpy:\n"
        + "\n".join(s["details"])
    )
