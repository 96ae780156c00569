"""Eager calls: aotc's functions outside a traced function run now and return Arrays with
jit's dtypes, shapes and values (aotc/eager.py), and runtime Arrays behave like
jax.Array (operators, methods, pickling)."""

from __future__ import annotations

import copy
import operator
import pickle

import numpy as np
import pytest

import aotc
import aotc.lax as lax
import aotc.nn as nn
import aotc.numpy as anp
import aotc.random as arandom
from aotc import config, eager
from aotc.runtime import Array, array as runtime_array

RNG = np.random.default_rng(0)
F32 = np.array([1.5, -2.25, 0.0, -0.0, np.nan, np.inf, -np.inf, 3e-8, 7.0], np.float32)
F64 = RNG.standard_normal(9) * 10
F64[[2, 3, 4]] = [0.0, -0.0, np.nan]
I32 = np.array([5, -7, 0, 2**31 - 1, -(2**31), 3, 1, -1, 9], np.int32)
U8 = np.array([0, 1, 255, 7, 128, 3, 9, 200, 5], np.uint8)
BOOL = np.array([True, False, True, True, False, False, True, False, True])
C64 = (RNG.standard_normal(9) + 1j * RNG.standard_normal(9)).astype(np.complex64)
OPERANDS = {"float32": F32, "float64": F64, "int32": I32, "uint8": U8, "bool": BOOL,
            "complex64": C64}


def _jitted(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` under aotc.jit, the array arguments passed as arguments."""
    leaves, structure = aotc.runtime.tree.flatten((args, kwargs))
    positions = [i for i, x in enumerate(leaves) if isinstance(x, (np.ndarray, np.generic))]

    def program(*arrays):
        filled = list(leaves)
        for i, a in zip(positions, arrays):
            filled[i] = a
        a, k = aotc.runtime.tree.unflatten(structure, filled)
        return fn(*a, **k)

    return aotc.jit(program)(*[leaves[i] for i in positions])


def _jitted_table(cases: dict) -> dict:
    """``{key: fn(*args)}`` for ``cases = {key: (fn, args)}``, all computed by one jitted
    function (one compile), the array arguments passed as its arguments."""
    keys = sorted(cases)
    flat = [aotc.runtime.tree.flatten(cases[k][1]) for k in keys]
    positions = [[i for i, x in enumerate(leaves) if isinstance(x, (np.ndarray, np.generic))]
                 for leaves, _ in flat]

    def program(*arrays):
        it = iter(arrays)
        out = {}
        for key, (leaves, structure), where in zip(keys, flat, positions):
            filled = list(leaves)
            for i in where:
                filled[i] = next(it)
            out[key] = cases[key][0](*aotc.runtime.tree.unflatten(structure, filled))
        return out

    inputs = [leaves[i] for (leaves, _), where in zip(flat, positions) for i in where]
    return aotc.jit(program)(*inputs)


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    if got.dtype.kind in "fc":
        nan = np.isnan(got)
        np.testing.assert_array_equal(nan, np.isnan(want))
        view = {8: np.uint64, 4: np.uint32, 2: np.uint16}
        g = got[~nan] if got.dtype.kind == "f" else got.real[~nan]
        w = want[~nan] if got.dtype.kind == "f" else want.real[~nan]
        np.testing.assert_array_equal(g.view(view[g.dtype.itemsize]),
                                      w.view(view[w.dtype.itemsize]))
    else:
        np.testing.assert_array_equal(got, want)


@pytest.fixture
def no_compile(monkeypatch):
    """Fails the test if an eager call compiles (it must take the host or direct route)."""
    def refuse(*args, **kwargs):
        raise AssertionError("an eager call that must run on the host was compiled")
    monkeypatch.setattr(eager, "_compiled", refuse)


# ---- route 1: numpy on the host, bit for bit where HOST_EXACT says so -------------------

def _elementwise_cases():
    unary = ["negative", "positive", "absolute", "floor", "ceil", "trunc", "rint", "sign",
             "square", "sqrt", "isnan", "isinf", "isfinite", "signbit", "logical_not"]
    binary = ["add", "subtract", "multiply", "divide", "minimum", "maximum", "fmin", "fmax",
              "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
              "logical_and", "logical_or", "copysign", "nextafter", "heaviside"]
    integer = ["floor_divide", "remainder", "bitwise_and", "bitwise_or", "bitwise_xor",
               "left_shift", "right_shift", "gcd", "lcm"]
    for dtype, x in OPERANDS.items():
        for name in unary + binary + integer + ["invert", "bitwise_not"]:
            kinds = eager.HOST_EXACT[name]
            if x.dtype.kind not in kinds:
                continue
            if name in ("floor", "ceil", "trunc", "rint", "sign", "sqrt") and x.dtype.kind in "biu":
                continue  # numpy computes these in float for integers: not aotc's dtype rule
            if name in ("left_shift", "right_shift", "floor_divide", "remainder", "gcd", "lcm"):
                y = np.abs(np.roll(x, 1)) % 7 + 1 if x.dtype.kind in "iu" else np.roll(x, 1)
            else:
                y = np.roll(x, 1)
            args = (x,) if name in unary + ["invert", "bitwise_not"] else (x, y)
            try:
                with np.errstate(all="ignore"):
                    getattr(np, name)(*args)
            except TypeError:
                continue  # numpy refuses (bool negative, complex signbit): compiled instead
            yield pytest.param(name, args, id=f"{name}-{dtype}")


ELEMENTWISE_CASES = {p.id: p.values for p in _elementwise_cases()}


@pytest.fixture(scope="module")
def jitted_elementwise():
    return _jitted_table({k: (getattr(anp, name), args)
                          for k, (name, args) in ELEMENTWISE_CASES.items()})


@pytest.mark.parametrize("case", sorted(ELEMENTWISE_CASES))
def test_host_elementwise_is_jit_bit_for_bit(case, jitted_elementwise, no_compile):
    name, args = ELEMENTWISE_CASES[case]
    got = getattr(anp, name)(*args)
    assert isinstance(got, Array)
    _same_bits(got, jitted_elementwise[case])  # (no_compile patches the eager route only)


SHAPE_CASES = {
    "reshape": (lambda: (np.arange(12.0), (3, 4)), "reshape"),
    "transpose": (lambda: (np.arange(24).reshape(2, 3, 4), (2, 0, 1)), "transpose"),
    "concatenate": (lambda: ([F32[:4], F32[4:]],), "concatenate"),
    "stack": (lambda: ([I32, I32 * 2], 1), "stack"),
    "flip": (lambda: (np.arange(6).reshape(2, 3), 1), "flip"),
    "roll": (lambda: (F64, 3), "roll"),
    "tile": (lambda: (U8[:3], (2, 2)), "tile"),
    "repeat": (lambda: (BOOL[:4], 2), "repeat"),
    "pad": (lambda: (F32[:3], (1, 2)), "pad"),
    "where": (lambda: (BOOL, F32, np.float32(-1)), "where"),
    "take": (lambda: (F64, np.array([0, 8, 3])), "take"),
    "sort": (lambda: (F32,), "sort"),
    "argsort": (lambda: (np.array([3, 1, 3, 0, 1, 3]),), "argsort"),
    "cumsum-int": (lambda: (I32,), "cumsum"),
    "sum-int": (lambda: (I32.reshape(3, 3), 0), "sum"),
    "max": (lambda: (F32[~np.isnan(F32)],), "max"),
    "argmax": (lambda: (F64,), "argmax"),
    "clip": (lambda: (F64, -1.0, 2.0), "clip"),
    "zeros": (lambda: ((2, 3), np.int16), "zeros"),
    "arange": (lambda: (0.5, 7.0, 1.25), "arange"),
    "linspace": (lambda: (0.0, 1.0, 11), "linspace"),
    "eye": (lambda: (3, 4, 1), "eye"),
    "tril": (lambda: (np.arange(9.0).reshape(3, 3),), "tril"),
    "array": (lambda: ([[1, 2], [3, 4]],), "array"),
}


@pytest.fixture(scope="module")
def jitted_shape_cases():
    return _jitted_table({k: (getattr(anp, name), make())
                          for k, (make, name) in SHAPE_CASES.items()})


@pytest.mark.parametrize("case", sorted(SHAPE_CASES))
def test_host_data_movement_and_creation_is_jit_bit_for_bit(case, jitted_shape_cases,
                                                           no_compile):
    make, name = SHAPE_CASES[case]
    got = getattr(anp, name)(*make())
    assert isinstance(got, Array), type(got)
    _same_bits(got, jitted_shape_cases[case])


NUMERIC_CASES = {
    "tanh-f32": (lambda: (F32[np.isfinite(F32)],), "tanh", 2e-7),
    "exp-f64": (lambda: (F64,), "exp", 1e-15),
    "sin-f64": (lambda: (F64 * 100,), "sin", 1e-15),
    "sum-f32": (lambda: (RNG.standard_normal((64, 33)).astype(np.float32), 1), "sum", 1e-6),
    "mean-f64": (lambda: (RNG.standard_normal((5, 7)),), "mean", 1e-15),
    "std-f32": (lambda: (RNG.standard_normal(100).astype(np.float32),), "std", 1e-6),
    "matmul-f32": (lambda: (RNG.standard_normal((8, 5)).astype(np.float32),
                            RNG.standard_normal((5, 3)).astype(np.float32)), "matmul", 1e-6),
    "cumsum-f64": (lambda: (F64[np.isfinite(F64)],), "cumsum", 1e-15),
}


@pytest.fixture(scope="module")
def numeric_inputs():
    return {k: make() for k, (make, _, _) in NUMERIC_CASES.items()}


@pytest.fixture(scope="module")
def jitted_numeric(numeric_inputs):
    return _jitted_table({k: (getattr(anp, NUMERIC_CASES[k][1]), args)
                          for k, args in numeric_inputs.items()})


@pytest.mark.parametrize("case", sorted(NUMERIC_CASES))
def test_host_math_matches_jit_to_numpy_accuracy(case, numeric_inputs, jitted_numeric,
                                                 no_compile):
    _, name, rtol = NUMERIC_CASES[case]
    got = getattr(anp, name)(*numeric_inputs[case])
    want = np.asarray(jitted_numeric[case])
    assert np.asarray(got).dtype == want.dtype and np.shape(got) == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("case", ["tanh-f32", "sum-f32", "matmul-f32", "sin-f64"])
def test_eager_exact_compiles_what_numpy_rounds_differently(case, numeric_inputs,
                                                            jitted_numeric):
    _, name, _ = NUMERIC_CASES[case]
    with config.override(eager_exact=True):
        got = getattr(anp, name)(*numeric_inputs[case])
    _same_bits(got, jitted_numeric[case])


def test_numeric_host_route_is_refused_under_eager_exact(no_compile):
    with config.override(eager_exact=True):
        with pytest.raises(AssertionError, match="must run on the host was compiled"):
            anp.tanh(F32)
        anp.add(F32, 1.0)  # bit-exact ops stay on the host


# ---- route 2: functions that need no trace ----------------------------------------------

def test_functions_that_need_no_trace_run_directly(no_compile):
    assert anp.shape(F32) == (9,)
    assert anp.ndim(np.ones((2, 3))) == 2
    key = arandom.PRNGKey(7)
    assert isinstance(key, Array) and key.dtype == np.uint32
    np.testing.assert_array_equal(np.asarray(key), [0, 7])


# ---- route 3: compiled per call signature -----------------------------------------------

def test_lax_and_nn_run_compiled_and_cache_per_signature():
    x = np.arange(6.0, dtype=np.float32)
    got = lax.cumsum(x)
    _same_bits(got, _jitted(lax.cumsum, x))
    relu = nn.relu(x - 2)
    np.testing.assert_array_equal(np.asarray(relu), np.maximum(x - 2, 0))
    out = lax.fori_loop(0, 3, lambda i, v: v * 2, x)
    np.testing.assert_array_equal(np.asarray(out), x * 8)
    # the same signature again: no new program
    before = sum(len(op.programs) for op in _ops_of(lax.cumsum))
    lax.cumsum(x + 1)
    assert sum(len(op.programs) for op in _ops_of(lax.cumsum)) == before


def _ops_of(fn):
    """The EagerOp behind a public function (created by its first eager call)."""
    return [eager._public_ops[fn.__wrapped__]]


def test_a_numpy_scalar_size_is_retraced_as_a_static_value():
    # A float reduction (compiled under eager_exact) with a numpy integer axis.
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    with config.override(eager_exact=True):
        got = anp.sum(x, axis=np.int64(1))
    np.testing.assert_allclose(np.asarray(got), x.sum(axis=1), rtol=1e-6)
    got = lax.iota(np.int32, np.int64(5))
    np.testing.assert_array_equal(np.asarray(got), np.arange(5))


def test_eager_errors_are_aotc_errors_naming_the_problem():
    with pytest.raises(aotc.TracingError, match="reshape"):
        anp.reshape(np.ones(6), (4,))
    with pytest.raises(aotc.AotcError, match="expected an array"):
        anp.tanh(object())


# ---- random: the bits jit draws, any shape from one program -----------------------------

SAMPLERS = {
    "bits": lambda k, s: arandom.bits(k, s),
    "uniform": lambda k, s: arandom.uniform(k, s, minval=-2.0, maxval=3.0),
    "normal": lambda k, s: arandom.normal(k, s),
    "normal-f64": lambda k, s: arandom.normal(k, s, np.float64),
    "bernoulli": lambda k, s: arandom.bernoulli(k, 0.3, s),
    "randint": lambda k, s: arandom.randint(k, s, -5, 17),
    "split": lambda k, s: arandom.split(k, s),
    "permutation": lambda k, s: arandom.permutation(k, int(np.prod(s))),
}


RANDOM_SHAPES = [(5,), (3, 7), (2, 1, 4)]


@pytest.fixture(scope="module")
def jitted_draws():
    key = np.array([0, 1234], np.uint32)
    return {shape: aotc.jit(lambda k: {n: d(k, shape) for n, d in SAMPLERS.items()})(key)
            for shape in RANDOM_SHAPES}


@pytest.mark.parametrize("sampler", sorted(SAMPLERS))
def test_random_eager_draws_the_bits_of_jit(sampler, jitted_draws):
    for shape in RANDOM_SHAPES:
        got = SAMPLERS[sampler](arandom.PRNGKey(1234), shape)
        _same_bits(got, jitted_draws[shape][sampler])


def test_random_eager_compiles_once_for_every_shape():
    from aotc import random_eager

    key = arandom.PRNGKey(0)
    arandom.normal(key, (2, 3))
    count = len(random_eager._programs)
    for shape in [(784, 256), (10,), (3, 3, 3)]:
        arandom.normal(key, shape)
    assert len(random_eager._programs) == count


def test_random_keys_match_jax():
    jax = pytest.importorskip("jax")
    key = arandom.PRNGKey(42)
    _same_bits(arandom.split(key, 5), np.asarray(jax.random.split(jax.random.PRNGKey(42), 5)))
    _same_bits(arandom.fold_in(key, 9),
               np.asarray(jax.random.fold_in(jax.random.PRNGKey(42), 9)))
    _same_bits(arandom.uniform(key, (4, 4)),
               np.asarray(jax.random.uniform(jax.random.PRNGKey(42), (4, 4))))


def test_random_eager_errors_are_the_traced_ones():
    with pytest.raises(aotc.AotcError, match="uniform"):
        arandom.uniform(arandom.PRNGKey(0), (3,), np.int32)


# ---- Array: operators, methods, protocols -----------------------------------------------

def test_array_operators_methods_and_properties_return_arrays():
    host = np.arange(12.0).reshape(3, 4)
    x = anp.asarray(host)
    cases = {
        "x + 1": (x + 1, host + 1), "2 * x": (2 * x, 2 * host), "x / 4": (x / 4, host / 4),
        "-x": (-x, -host), "x > 5": (x > 5, host > 5), "x @ x.T": (x @ x.T, host @ host.T),
        "x.T": (x.T, host.T), "x.mT": (x.mT, host.swapaxes(-1, -2)),
        "x[1]": (x[1], host[1]), "x[:, ::2]": (x[:, ::2], host[:, ::2]),
        "x.sum(0)": (x.sum(0), host.sum(0)), "x.mean()": (x.mean(), host.mean()),
        "x.max(1)": (x.max(axis=1), host.max(axis=1)), "x.reshape(4, 3)": (
            x.reshape(4, 3), host.reshape(4, 3)), "x.reshape((2, 6))": (
            x.reshape((2, 6)), host.reshape(2, 6)),
        "x.astype(int32)": (x.astype(np.int32), host.astype(np.int32)),
        "x.transpose()": (x.transpose(), host.T), "x.flatten()": (x.flatten(), host.ravel()),
        "x.ravel()": (x.ravel(), host.ravel()), "x.squeeze()": (x[None].squeeze(), host),
        "x.dot(v)": (x.dot(np.ones(4)), host @ np.ones(4)),
        "x.clip(2, 5)": (x.clip(2, 5), host.clip(2, 5)), "x.round()": (
            (x / 3).round(2), (host / 3).round(2)),
        "x.argmax()": (x.argmax(), host.argmax()), "x.any()": (x.any(), host.any()),
        "x.all()": (x.all(), host.all()), "x.sort(0)": (x[::-1].sort(axis=0), host),
        "x.trace()": (x.trace(), np.trace(host)), "x.cumsum()": (x.cumsum(), host.cumsum()),
        "ndarray + x": (np.ones((3, 4)) + x, 1 + host),
        "x.at[0, 1].set(7)": (x.at[0, 1].set(7.0), np.where(
            (np.arange(3)[:, None] == 0) & (np.arange(4) == 1), 7.0, host)),
        "x.at[0].add(1)": (x.at[0].add(1.0), host + (np.arange(3)[:, None] == 0)),
    }
    for label, (got, want) in cases.items():
        assert isinstance(got, Array), f"{label}: {type(got)}"
        np.testing.assert_allclose(np.asarray(got), want, err_msg=label)
        assert np.asarray(got).dtype == np.asarray(want).dtype, label
    assert x.size == 12 and x.ndim == 2 and x.nbytes == 96 and x.itemsize == 8


def test_array_python_protocols():
    x = anp.asarray(np.array([1.5, -2.0]))
    one = x[0]
    assert float(one) == 1.5 and int(one) == 1 and complex(one) == 1.5 and bool(one)
    assert operator.index(anp.asarray(3)) == 3
    assert f"{one:.2f}" == "1.50" and f"{x}" == str(np.asarray(x))
    with pytest.raises(TypeError, match="unsupported format"):
        f"{x:.2f}"
    assert len(x) == 2
    rows = list(anp.asarray(np.eye(2)))
    assert all(isinstance(r, Array) for r in rows)
    np.testing.assert_array_equal(np.asarray(rows[1]), [0.0, 1.0])
    with pytest.raises(TypeError, match=r"immutable.*\.at\[index\]\.set"):
        x[0] = 3.0
    assert x.item(1) == -2.0 and x.tolist() == [1.5, -2.0]
    assert x.devices() == {x.device} and x.copy_to_host_async() is None
    assert not x.is_deleted() and x.block_until_ready() is x and x.weak_type is False


def test_array_pickles_and_copies_by_value():
    x = anp.asarray(np.arange(5, dtype=np.int16))
    for clone in (pickle.loads(pickle.dumps(x)), copy.copy(x), copy.deepcopy(x)):
        assert isinstance(clone, Array) and clone is not x
        assert clone.device is x.device
        _same_bits(clone, np.arange(5, dtype=np.int16))
    big = anp.asarray(RNG.standard_normal((300, 300)))  # a zero-copy host view
    _same_bits(pickle.loads(pickle.dumps(big)), np.asarray(big))


def test_jax_accepts_arrays():
    jnp = pytest.importorskip("jax.numpy")
    x = anp.asarray(np.arange(4.0, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x)), np.arange(4.0))
    import jax

    # DLPack (zero-copy on the CPU). jax.device_put takes JAX types only since JAX
    # removed __jax_array__ from abstractification: jax.device_put(np.asarray(x)).
    np.testing.assert_array_equal(np.asarray(jax.dlpack.from_dlpack(x)), np.arange(4.0))
    np.testing.assert_array_equal(np.asarray(jax.device_put(np.asarray(x))), np.arange(4.0))


def test_an_eager_array_captured_by_a_jitted_function_is_a_constant():
    w = anp.arange(3.0)
    f = aotc.jit(lambda v: v * w + w.sum())
    np.testing.assert_array_equal(np.asarray(f(np.ones(3))), np.arange(3.0) + 3.0)


def test_runtime_alone_computes_array_methods_with_numpy(monkeypatch):
    monkeypatch.setattr(runtime_array, "_engine", runtime_array._on_host)
    x = aotc.runtime.device_put(np.arange(6.0).reshape(2, 3), "local-sync")
    host = np.arange(6.0).reshape(2, 3)
    for got, want in [(x + 1, host + 1), (x.T, host.T), (x.sum(axis=1), [3.0, 12.0]),
                      (x.sort(axis=0), host), (x.mT, host.T)]:
        assert isinstance(got, np.ndarray)
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ImportError, match="needs the compiler"):
        x.at[0].set(1.0)


def test_eager_warm_calls_reuse_their_program():
    x = anp.asarray(np.ones(8, np.float32))
    with config.override(eager_exact=True):
        anp.tanh(x)
        ops = _ops_of(anp.tanh)
        programs = {id(p) for op in ops for p in op.programs.values()}
        for _ in range(3):
            anp.tanh(x)
        assert {id(p) for op in ops for p in op.programs.values()} == programs


def test_eager_results_go_to_the_device_a_function_runs_on():
    """As JAX's uncommitted arrays: an eager result passed to a function loaded on another
    device (here Vulkan) is copied there; an array put on a device explicitly is not."""
    from aotc.runtime import targets as rt_targets

    if not rt_targets.available_devices("vulkan"):
        pytest.skip("no Vulkan device: install Mesa's software one (apt-get install "
                    "mesa-vulkan-drivers libvulkan1)")
    def double(v):
        return v * 2

    double = aotc.export(double, aotc.ShapeDtypeStruct((3,), "float32"),
                         target="vulkan").load().double
    eager_result = anp.arange(3, dtype=np.float32) + 1
    np.testing.assert_array_equal(np.asarray(double(eager_result)), [2.0, 4.0, 6.0])
    committed = aotc.runtime.device_put(np.ones(3, np.float32), "local-task")
    with pytest.raises(aotc.runtime.DeviceMismatchError, match="expected an array on vulkan"):
        double(committed)
