"""The option ``x64``: JAX's dtypes with ``aotc.config.override(x64=False)`` against
``jax.numpy`` with ``jax_enable_x64`` off, numpy's (the default) unchanged.

Promotion is checked for every pair of dtypes and weak Python scalars (the lattice, a
traced function, the ufunc loops), a table of common calls for JAX's dtypes and values
under ``jit`` and eagerly, JAX's warnings for explicitly requested 64-bit dtypes, the
jit cache (a function traced in one mode is not reused in the other) and the
environment variable.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc import x64

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

# aotc's dtypes that exist with JAX's x64 off, then the 64-bit ones (narrowed on the way in)
NARROW_DTYPES = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16",
                 "float32", "complex64"]
WIDE_DTYPES = ["int64", "uint64", "float64", "complex128"]
WEAK = {"int": 1, "float": 1.5, "complex": 1j}  # weak Python scalars


@pytest.fixture(autouse=True)
def jax_x64_off():
    """JAX's default (x64 off) for the reference, whatever ran before in this process."""
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", False)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", previous)


@pytest.fixture
def x32():
    with aotc.config.override(x64=False):
        yield


def _jax_type(t):
    """What jax.dtypes.result_type takes for an operand of type ``t``."""
    return WEAK[t] if t in ("int", "float", "complex") else jnp.zeros((), t)


def _aotc_type(t):
    return {"int": int, "float": float, "complex": complex}.get(t) or np.dtype(t)


# ---- promotion ------------------------------------------------------------------------

LATTICE_TYPES = NARROW_DTYPES + ["int", "float", "complex"]


@pytest.mark.parametrize("a", LATTICE_TYPES)
def test_lattice_equals_jax_result_type(a):
    """x64.promote (JAX's lattice, x64 off) for ``a`` with every type, and with every
    pair of types: JAX's dtype and weak flag."""
    for others in itertools.chain(((b,) for b in LATTICE_TYPES),
                                  itertools.product(LATTICE_TYPES, repeat=2)):
        types = (a, *others)
        want = jax.dtypes.result_type(*map(_jax_type, types), return_weak_type_flag=True)
        got = x64.promote(*map(_aotc_type, types))
        assert (got[0], got[1]) == (np.dtype(want[0]), want[1]), types


# Traced: every pair of argument dtypes (64-bit numpy arrays included: they are narrowed
# as JAX narrows them) and Python scalars, through + and * and where.
ARGUMENT_DTYPES = NARROW_DTYPES + WIDE_DTYPES


PYTHON = {"py_bool": True, "py_int": 1, "py_float": 1.5, "py_complex": 1j}


def _pairs_fn(m):
    def f(*xs):
        named = dict(zip(ARGUMENT_DTYPES, xs), **PYTHON)
        out = {}
        for a, b in itertools.product(named, repeat=2):
            if a not in PYTHON or b not in PYTHON:
                out[f"{a}+{b}"] = m.add(named[a], named[b])
                out[f"where({a},{b})"] = m.where(True, named[a], named[b])
        return out
    return f


def test_traced_promotion_of_every_pair(x32):
    arrays = [np.zeros((2,), d) for d in ARGUMENT_DTYPES]
    want = jax.eval_shape(_pairs_fn(jnp), *arrays)
    lowered = aotc.jit(_pairs_fn(anp)).lower(*arrays)
    names = [r.name for r in lowered.metadata.results]
    got = {n[len("out['"):-2]: r.dtype for n, r in zip(names, lowered.metadata.results)}
    wrong = {k: (got[k], str(v.dtype)) for k, v in want.items() if got[k] != str(v.dtype)}
    assert not wrong, wrong
    assert [a.dtype for a in lowered.metadata.args] == [
        str(x64.narrow(d)) for d in ARGUMENT_DTYPES]


# The ufunc loops: numpy's rule per ufunc on JAX-promoted operands, against jax.numpy
# (dtype, and the weak flag of non-bool results).
BINARY = ["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder",
          "power", "maximum", "arctan2", "less", "logical_and", "bitwise_and", "left_shift",
          "float_power", "ldexp", "hypot", "copysign"]
UNARY = ["sqrt", "floor", "negative", "absolute", "exp", "sign", "reciprocal", "isnan",
         "square", "rint", "log10", "sin", "logical_not", "invert"]


def _jax_ufunc(name, types):
    fn = getattr(jnp, name)
    specs = [jax.ShapeDtypeStruct((), t) for t in types if t not in WEAK]

    def call(*xs):
        it = iter(xs)
        return fn(*[WEAK[t] if t in WEAK else next(it) for t in types])

    try:
        out = jax.eval_shape(call, *specs)
    except (TypeError, ValueError):
        return None
    return str(out.dtype), out.weak_type and out.dtype != np.bool_


@pytest.mark.parametrize("name", BINARY + UNARY)
def test_ufunc_loops_equal_jax(name):
    arity = 2 if name in BINARY else 1
    types = NARROW_DTYPES + ["int", "float", "complex"]
    checked = 0
    for combo in itertools.product(types, repeat=arity):
        if all(t in WEAK for t in combo):
            continue
        want = _jax_ufunc(name, combo)
        try:
            loop, weak = x64.ufunc_loop(name, tuple(map(_aotc_type, combo)))
        except TypeError:
            loop = None
        if want is None or loop is None:
            continue  # refused by one side (numpy has no complex arctan2, JAX no bool -)
        got = (str(loop[arity]), weak and loop[arity] != np.bool_)
        assert got == want, (name, combo)
        checked += 1
    assert checked > 0


# ---- common calls: JAX's dtypes and values ----------------------------------------------

# (name, function of (m, x, y)): m is aotc.numpy or jax.numpy; x is int32[4], y float32[4].
CALLS = {
    "arange(5)": lambda m, x, y: m.arange(5),
    "arange(5.0)": lambda m, x, y: m.arange(5.0),
    "arange(0, 1, 0.25)": lambda m, x, y: m.arange(0, 1, 0.25),
    "zeros(3)": lambda m, x, y: m.zeros(3),
    "ones((2, 2))": lambda m, x, y: m.ones((2, 2)),
    "eye(3)": lambda m, x, y: m.eye(3),
    "linspace(0, 1, 5)": lambda m, x, y: m.linspace(0, 1, 5),
    "full(3, 1.0)": lambda m, x, y: m.full(3, 1.0),
    "full(3, 7)": lambda m, x, y: m.full(3, 7),
    "array([1, 2])": lambda m, x, y: m.array([1, 2]),
    "array(1.0)": lambda m, x, y: m.array(1.0),
    "array([1, 2.5])": lambda m, x, y: m.array([1, 2.5]),
    "f16 * full(3, 2.0) (weak)": lambda m, x, y: y[:3].astype(m.float16) * m.full(3, 2.0),
    "sum(int32)": lambda m, x, y: m.sum(x),
    "sum(int8)": lambda m, x, y: m.sum(x.astype(m.int8)),
    "sum(uint8)": lambda m, x, y: m.sum(x.astype(m.uint8)),
    "sum(bool)": lambda m, x, y: m.sum(x > 1),
    "prod(int16)": lambda m, x, y: m.prod(x.astype(m.int16)),
    "cumsum(int32)": lambda m, x, y: m.cumsum(x),
    "cumsum(int8)": lambda m, x, y: m.cumsum(x.astype(m.int8)),
    "cumsum(bool)": lambda m, x, y: m.cumsum(x > 1),
    "mean(int32)": lambda m, x, y: m.mean(x),
    "var(int32)": lambda m, x, y: m.var(x),
    "mean(float16)": lambda m, x, y: m.mean(y.astype(m.float16)),
    "int32 / int32": lambda m, x, y: x / (x + 1),
    "int32 // 2": lambda m, x, y: x // 2,
    "argmax": lambda m, x, y: m.argmax(y),
    "argsort": lambda m, x, y: m.argsort(y),
    "searchsorted": lambda m, x, y: m.searchsorted(y, 2.0),
    "nonzero(size=)": lambda m, x, y: m.nonzero(x - 2, size=4)[0],
    "count_nonzero": lambda m, x, y: m.count_nonzero(x - 2),
    "int8 matmul float16": lambda m, x, y: m.outer(x, x).astype(m.int8) @ m.outer(y, y).astype(
        m.float16),
    "int32 matmul int32": lambda m, x, y: m.outer(x, x) @ m.outer(x, x),
    "int32 + float16": lambda m, x, y: x + y.astype(m.float16),
    "uint32 + int32": lambda m, x, y: x.astype(m.uint32) + x,
    "bool + 1": lambda m, x, y: (x > 1) + 1,
    "int8 * 2.0 (weak)": lambda m, x, y: x.astype(m.int8) * 2.0,
    "float16 * 2.0": lambda m, x, y: y.astype(m.float16) * 2.0,
    "float16 * (int8 * 2.0)": lambda m, x, y: y.astype(m.float16) * (x.astype(m.int8) * 2.0),
    "sqrt(int8)": lambda m, x, y: m.sqrt(x.astype(m.int8)),
    "where(c, int32, 1.0)": lambda m, x, y: m.where(x > 1, x, 1.0),
    "concatenate int32 float16": lambda m, x, y: m.concatenate([x, y.astype(m.float16)]),
    "astype(float64)": lambda m, x, y: x.astype(np.float64),
    "zeros(3, float64)": lambda m, x, y: m.zeros(3, np.float64),
    "x + captured float64": lambda m, x, y: x + np.linspace(0, 1, 4),
    "float16 + np.float64(2)": lambda m, x, y: y.astype(m.float16) + np.float64(2),
    "clip(int32, 0, 2.5)": lambda m, x, y: m.clip(x, 0, 2.5),
    "x * (size * 1.0)": lambda m, x, y: x * (x.size * 1.0),
    "median": lambda m, x, y: m.median(x),
    "interp": lambda m, x, y: m.interp(y, x, y),
    "abs(complex)": lambda m, x, y: m.abs(y * 1j),
    "x ** 2.5": lambda m, x, y: x ** 2.5,
    "tanh(int32)": lambda m, x, y: m.tanh(x),
    "linalg.norm(int32)": lambda m, x, y: m.linalg.norm(x),
}
X = np.array([1, 2, 3, 4], np.int32)
Y = np.array([0.5, -1.25, 3.0, 2.0], np.float32)


def _check(got, want, name):
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype}, JAX's {want.dtype}"
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, name
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=1e-6 if want.dtype.itemsize > 2 else 1e-3,
                                   atol=1e-6, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the requested float64s warn, in both
        return fn(*args)


def test_calls_under_jit(x32):
    """One jitted function computes the table (one compile); float64 arguments too."""
    def table(m):
        return lambda x, y: {name: f(m, x, y) for name, f in CALLS.items()}

    want = _quiet(jax.jit(table(jnp)), X, Y)
    got = _quiet(aotc.jit(table(anp)), X, Y)
    for name in CALLS:
        _check(got[name], want[name], name)
    # float64 and int64 numpy arrays as arguments: narrowed silently, as JAX does
    wide = (X.astype(np.int64), Y.astype(np.float64))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = aotc.jit(lambda x, y: (x + y, x * 2, y / 3))(*wide)
        want = jax.jit(lambda x, y: (x + y, x * 2, y / 3))(*wide)
    for g, w, name in zip(got, want, ("x + y", "x * 2", "y / 3")):
        _check(g, w, name)


EAGER = ["arange(5)", "zeros(3)", "linspace(0, 1, 5)", "full(3, 1.0)", "array([1, 2])",
         "sum(int8)", "sum(uint8)", "cumsum(int8)", "mean(int32)", "int32 / int32",
         "int32 + float16", "uint32 + int32", "int8 * 2.0 (weak)", "sqrt(int8)", "argmax",
         "argsort", "where(c, int32, 1.0)", "concatenate int32 float16", "astype(float64)",
         "x + captured float64", "count_nonzero", "clip(int32, 0, 2.5)", "tanh(int32)"]


def test_eager_calls(x32):
    """The same calls outside jit: numpy on the host in JAX's dtypes, or compiled where
    numpy would decide the dtype otherwise."""
    x, y = anp.asarray(X), anp.asarray(Y)
    for name in EAGER:
        want = _quiet(CALLS[name], jnp, jnp.asarray(X), jnp.asarray(Y))
        got = _quiet(CALLS[name], anp, x, y)
        _check(got, want, f"eager {name}")
    # numpy's float64 arrays given to eager calls and Array methods: float32
    assert anp.sin(np.ones(3)).dtype == np.float32
    assert (x + np.ones(4)).dtype == np.float32
    assert anp.asarray(np.ones(3)).dtype == np.float32
    assert anp.result_type(np.int32, np.float16) == np.float16


# ---- warnings ---------------------------------------------------------------------------

def _warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(str(w.message), w.category, os.path.basename(w.filename)) for w in caught]


REQUESTS = {
    "zeros": (lambda m: m.zeros(3, np.float64)),
    "astype": (lambda m: m.ones(3).astype(np.int64)),
    "array": (lambda m: m.array([1.0], dtype="float64")),
    "asarray": (lambda m: m.asarray(m.ones(2), m.float64)),
    "convert_element_type": (lambda m: (jax.lax if m is jnp else aotc.lax)
                             .convert_element_type(m.ones(2, m.int32), np.float64)),
}


@pytest.mark.parametrize("where", REQUESTS)
def test_requested_dtype_warns_as_jax(where, x32):
    """JAX's UserWarning, word for word, pointing at the caller's line: eagerly and
    while tracing (once per trace: a cached compile does not trace again)."""
    fn = REQUESTS[where]
    want = _warnings(lambda: fn(jnp))[0][0]
    assert f"requested in {where} is not available" in want
    for run in (lambda: fn(anp), lambda: aotc.jit(lambda: fn(anp))()):
        caught = _warnings(run)
        assert caught[:1] == [(want, UserWarning, "test_x64_option.py")], caught
    if where == "asarray":  # numpy's scalar type as a constructor of traced arrays
        caught = _warnings(lambda: aotc.jit(lambda x: anp.float64(x))(np.ones(2)))
        assert caught[:1] == [(want, UserWarning, "test_x64_option.py")], caught


def test_no_warning_where_jax_has_none(x32):
    quiet = [
        lambda: anp.zeros(3, float), lambda: anp.zeros(3, int), lambda: anp.asarray(np.ones(3)),
        lambda: aotc.jit(lambda x: x * 2)(np.ones(3)), lambda: anp.sin(np.ones(2)),
        lambda: anp.ones(3).astype(np.float32), lambda: aotc.random.uniform(
            aotc.random.PRNGKey(0), (2,)),
    ]
    for fn in quiet:
        assert _warnings(fn) == []
    # jax.random's name no function
    caught = _warnings(lambda: aotc.random.uniform(aotc.random.PRNGKey(0), (2,), np.float64))
    assert caught and caught[0][0].startswith(
        "Explicitly requested dtype float64 is not available, and will be truncated to "
        "dtype float32.")


# ---- the default and the jit cache -------------------------------------------------------

def test_x64_default_is_numpy():
    assert aotc.config.x64 is True
    f = aotc.jit(lambda x, y: (anp.arange(3), anp.zeros(2), x * np.float64(2), anp.sum(y),
                               anp.argmax(y), x * 2.0))
    out = f(np.ones(2, np.float16), np.ones(3, np.int32))
    assert [o.dtype.name for o in out] == ["int64", "float64", "float64", "int64", "int64",
                                           "float16"]


def test_jit_cache_keys_on_x64(caplog):
    """A function traced with one setting is traced again with the other, and the compile
    log says why."""
    f = aotc.jit(lambda x: x / 2 + anp.arange(3))
    x = np.ones(3, np.int32)
    assert f(x).dtype == np.float64
    with aotc.config.override(x64=False, explain_cache_misses=True):
        assert f(x).dtype == np.float32
        assert f(x).dtype == np.float32
        assert f(x.astype(np.int64)).dtype == np.float32  # narrowed to int32: cached
    assert f(x).dtype == np.float64
    assert f.stats["traces"] == 2
    assert "aotc.config.x64: True -> False" in caplog.text


def test_weak_python_scalars_as_arguments(x32):
    f = aotc.jit(lambda x, s: x * s)
    for s, want in ((2, np.int8), (2.5, np.float32), (1j, np.complex64)):
        assert f(np.ones(3, np.int8), s).dtype == want
    assert f(np.ones(3, np.float16), 2.5).dtype == np.float16
    spec = aotc.jit(lambda x: x).lower(aotc.ShapeDtypeStruct((3,), "float64"))
    assert spec.metadata.args[0].dtype == "float32"


def test_environment_variable():
    code = ("import aotc, aotc.numpy as anp, numpy as np; "
            "print(aotc.config.x64, anp.zeros(2).dtype, anp.arange(2).dtype, "
            "aotc.jit(lambda x: x / 2)(np.ones(2, np.int32)).dtype)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, AOTC_X64="0"), check=True).stdout.split()
    assert out == ["False", "float32", "int32", "float32"]
