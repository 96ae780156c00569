"""aotc.jit: compile once per signature, memory and disk caches, static arguments,
pytrees, the lower/compile stages, and errors raised while tracing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import aotc
import aotc.lax as alax
import aotc.numpy as anp
from aotc import cache
from aotc.runtime import ArgumentOverflowError


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("AOTC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_repeated_signature_neither_retraces_nor_recompiles(cache_dir):
    traced = []

    def f(x, y):
        traced.append(1)
        return anp.tanh(x) * y + 1.0

    jf = aotc.jit(f)
    x, y = np.linspace(-1, 1, 6, dtype=np.float32), np.full(6, 2.0, np.float32)
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(jf(x, y)), np.tanh(x) * y + 1.0, rtol=1e-6)
    assert len(traced) == 1
    assert jf.stats == {"traces": 1, "compiles": 1, "disk_hits": 0}


def test_new_shape_or_dtype_compiles_once_each(cache_dir):
    jf = aotc.jit(lambda x: x * 2)
    for shape in [(3,), (4,), (3,), (2, 2), (4,)]:
        np.testing.assert_array_equal(np.asarray(jf(np.ones(shape, np.float32))),
                                      np.full(shape, 2, np.float32))
    assert jf.stats["traces"] == 3 and jf.stats["compiles"] == 3
    out = jf(np.ones(3, np.int16))
    assert out.dtype == np.int16 and jf.stats["compiles"] == 4


def test_python_scalar_argument_is_weakly_typed(cache_dir):
    jf = aotc.jit(lambda x, s: x * s)
    out = jf(np.ones(3, np.float32), 2.5)
    assert out.dtype == np.float32  # as numpy: float32 array * Python float stays float32
    np.testing.assert_allclose(np.asarray(out), np.full(3, 2.5, np.float32))
    # A different value of the scalar reuses the compiled code: it is an argument.
    np.testing.assert_allclose(np.asarray(jf(np.ones(3, np.float32), 4.0)), np.full(3, 4.0))
    assert jf.stats["compiles"] == 1


def test_calls_with_python_scalars_skip_the_full_binding(cache_dir, monkeypatch):
    # A bool, int or float argument's type decides its abstract value: calls after the
    # first go straight to the compiled function (as all-array calls do), keyed by type,
    # so an int where a float was compiles anew and bool stays apart from int.
    def f(n, x, scale, offset, flag):
        return anp.where(flag, x * scale + offset, x) * n

    jf = aotc.jit(f, static_argnums=0)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(jf(2, x, 1.5, 1, True)), (x * 1.5 + 1) * 2)
    binds = []
    bind = jf._binder.bind
    monkeypatch.setattr(jf._binder, "bind", lambda *a: binds.append(1) or bind(*a))
    for scale, offset, flag in [(0.5, 3, True), (-2.0, 0, False), (1e30, -7, True)]:
        want = np.where(flag, x * np.float32(scale) + offset, x) * 2
        np.testing.assert_allclose(np.asarray(jf(2, x, scale, offset, flag)), want, rtol=1e-6)
    assert binds == [] and jf.stats["compiles"] == 1
    got = jf(2, x, 2, 0.5, True)  # int scale, float offset: another signature
    np.testing.assert_allclose(np.asarray(got), (x * 2 + 0.5) * 2)
    got = jf(2, x, 1.5, True, 1)  # bool offset, int flag: another one again
    np.testing.assert_allclose(np.asarray(got), (x * 1.5 + 1) * 2)
    assert len(binds) == 2 and jf.stats["compiles"] == 3
    with pytest.raises(ArgumentOverflowError, match="argument 'offset'"):
        jf(2, x, 1.5, 2**70, True)  # out of int64's range: refused by name, fast path too


def test_static_argnums_and_argnames(cache_dir):
    def f(x, n, *, mode="sum"):
        y = x
        for _ in range(n):  # Python loop over a static value
            y = y * 2
        return y.sum() if mode == "sum" else y.max()

    jf = aotc.jit(f, static_argnums=1, static_argnames="mode")
    x = np.arange(4, dtype=np.float32)
    assert float(np.asarray(jf(x, 3))) == pytest.approx((x * 8).sum())
    assert float(np.asarray(jf(x, 3, mode="max"))) == pytest.approx((x * 8).max())
    assert float(np.asarray(jf(x, 3))) == pytest.approx((x * 8).sum())
    assert jf.stats["compiles"] == 2
    with pytest.raises(aotc.AotcError, match="hashable"):
        jf(x, [1, 2])


def test_pytrees_in_and_out(cache_dir):
    def f(params, xs):
        w, b = params["w"], params["b"]
        return {"y": xs[0] @ w + b, "sum": (xs[1].sum(), None)}

    w = np.arange(6, dtype=np.float32).reshape(3, 2)
    b = np.ones(2, np.float32)
    xs = [np.ones((4, 3), np.float32), np.arange(5, dtype=np.float32)]
    out = aotc.jit(f)({"w": w, "b": b}, xs)
    assert set(out) == {"y", "sum"}
    np.testing.assert_allclose(np.asarray(out["y"]), xs[0] @ w + b)
    assert out["sum"][1] is None
    assert float(np.asarray(out["sum"][0])) == 10.0


def test_lower_as_text_and_compile(cache_dir):
    spec = aotc.ShapeDtypeStruct((2, 3), "float32")
    lowered = aotc.jit(lambda x: anp.exp(x).sum(axis=1)).lower(spec)
    text = lowered.as_text()
    assert "func.func public" in text and "math.exp" in text and "tensor<2x3xf32>" in text
    compiled = lowered.compile()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(np.asarray(compiled(x)), np.exp(x).sum(axis=1), rtol=1e-6)
    with pytest.raises(TypeError, match="takes"):
        compiled(np.ones((3, 3), np.float32))


def test_calls_with_keyword_arguments_skip_the_full_binding(cache_dir, monkeypatch):
    # Keyword arguments join the fast path's key by name (static ones by value) and its
    # leaves after the positional ones in name order, as the binding flattens them: in
    # any order and mixed with positional ones, each value lands on its parameter.
    def f(x, y, *, scale, offset=0.0, mode="add", flip=None):
        out = x + y if mode == "add" else x * y
        return out * scale + offset if flip is None else -out

    jf = aotc.jit(f, static_argnames=("mode", "flip"))
    x, y = np.arange(3.0), np.full(3, 2.0)
    np.testing.assert_allclose(np.asarray(jf(x, y=y, scale=2.0, offset=1.0)), (x + y) * 2 + 1)
    binds = []
    bind = jf._binder.bind
    monkeypatch.setattr(jf._binder, "bind", lambda *a: binds.append(1) or bind(*a))
    np.testing.assert_allclose(np.asarray(jf(x, offset=-1.0, scale=3.0, y=x)), (x + x) * 3 - 1)
    assert binds == []
    np.testing.assert_allclose(np.asarray(jf(x, y, scale=0.5, mode="mul")), x * y * 0.5)
    np.testing.assert_allclose(np.asarray(jf(x, y, scale=0.5, mode="mul", flip=True)), -x * y)
    np.testing.assert_allclose(np.asarray(jf(y, x, scale=1.0, mode="mul", flip=True)), -x * y)
    assert len(binds) == 2 and jf.stats["compiles"] == 3
    with pytest.raises(aotc.AotcError, match="hashable"):
        jf(x, y, scale=1.0, mode=["add"])


def test_calls_with_pytree_arguments_skip_the_full_binding(cache_dir, monkeypatch):
    # A parameter dict (and lists, None, scalars inside) is flattened as the binding
    # flattens it and keyed by its structure too: another structure, another leaf dtype
    # or a Python int where a float was binds again; with x64 off, a float64 leaf is
    # narrowed on the fast path as on the first call.
    def f(params, x, *, extra=None):
        h = x @ params["w"] + params["b"][0] * params["scale"]
        return h if extra is None else h + extra[1]

    jf = aotc.jit(f)
    rng = np.random.default_rng(0)
    params = {"w": rng.standard_normal((3, 2)), "b": [np.ones(2), None], "scale": 2.0}
    x = rng.standard_normal((4, 3))
    want = x @ params["w"] + 2.0
    np.testing.assert_allclose(np.asarray(jf(params, x)), want)
    binds = []
    bind = jf._binder.bind
    monkeypatch.setattr(jf._binder, "bind", lambda *a: binds.append(1) or bind(*a))
    other = {"w": params["w"] * 2, "b": [np.zeros(2), None], "scale": -1.0}
    np.testing.assert_allclose(np.asarray(jf(other, x)), x @ other["w"])
    assert binds == []
    np.testing.assert_allclose(np.asarray(jf(params, x, extra=(0, np.ones(2)))), want + 1)
    np.testing.assert_allclose(np.asarray(jf({**params, "scale": 2}, x)), want)
    np.testing.assert_allclose(np.asarray(jf({**params, "b": [np.ones(2), 1.0]}, x)), want)
    assert len(binds) == 3 and jf.stats["compiles"] == 4
    np.testing.assert_allclose(np.asarray(jf(params, x, extra=(5, np.zeros(2)))), want)
    assert len(binds) == 3
    with aotc.config.override(x64=False):
        for _ in range(2):
            got = jf(params, x)
            assert got.dtype == np.float32
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


def test_compiled_calls_skip_the_full_binding_and_still_refuse_other_arguments(
        cache_dir, monkeypatch):
    spec = aotc.ShapeDtypeStruct((3,), "float32")
    compiled = aotc.jit(lambda x, s, n: x * s + n, static_argnums=2).lower(spec, 2.0, 1).compile()
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(compiled(x, 2.0, 1)), x * 2 + 1)
    binds = []
    bind = compiled._binder.bind
    monkeypatch.setattr(compiled._binder, "bind", lambda *a: binds.append(1) or bind(*a))
    np.testing.assert_allclose(np.asarray(compiled(x, -0.5, 1)), x * -0.5 + 1)
    assert binds == []
    for args in [(np.ones(4, np.float32), 1.0, 1), (x, 1, 1), (x, 1.0, 2), (x.astype(int), 1.0, 1)]:
        with pytest.raises(TypeError, match="takes"):
            compiled(*args)
    assert len(binds) == 4


def test_nested_jit_is_inlined(cache_dir):
    inner = aotc.jit(lambda x: x + 1)
    outer = aotc.jit(lambda x: inner(x) * 2)
    np.testing.assert_array_equal(np.asarray(outer(np.zeros(2, np.float32))), [2, 2])
    assert inner.stats["compiles"] == 0


def test_disk_cache_serves_a_second_jit_and_corrupt_entry_is_rebuilt(cache_dir):
    f = lambda x: anp.sqrt(x) + 1  # noqa: E731
    x = np.arange(4, dtype=np.float32)
    first = aotc.jit(f)
    np.asarray(first(x))
    assert first.stats["compiles"] == 1
    entries = list(cache_dir.glob("*.vmfb"))
    assert len(entries) == 1

    second = aotc.jit(f)
    np.testing.assert_allclose(np.asarray(second(x)), np.sqrt(x) + 1)
    assert second.stats == {"traces": 1, "compiles": 0, "disk_hits": 1}

    entries[0].write_bytes(entries[0].read_bytes()[:100])  # truncated: corrupt
    third = aotc.jit(f)
    np.testing.assert_allclose(np.asarray(third(x)), np.sqrt(x) + 1)
    assert third.stats["compiles"] == 1 and third.stats["disk_hits"] == 0
    assert cache.load(entries[0].stem) is not None  # rebuilt entry is valid again


def test_second_process_reuses_disk_cache(cache_dir):
    script = textwrap.dedent(
        """
        import numpy as np, aotc, aotc.numpy as anp
        f = aotc.jit(lambda x: anp.maximum(x, 0.5) * 3)
        print(np.asarray(f(np.arange(3, dtype=np.float32))).tolist(), f.stats["compiles"],
              f.stats["disk_hits"])
        """
    )
    env = dict(os.environ, AOTC_CACHE_DIR=str(cache_dir))
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                           check=True).stdout.split("]")
            for _ in range(2)]
    assert runs[0][0] == runs[1][0] == "[1.5, 3.0, 6.0"
    assert runs[0][1].split() == ["1", "0"]  # first process compiles
    assert runs[1][1].split() == ["0", "1"]  # second takes it from disk


def test_cache_writes_are_atomic_files(cache_dir):
    cache.store("k" * 64, b"payload")
    assert cache.load("k" * 64) == b"payload"
    assert not [p for p in cache_dir.iterdir() if p.name.startswith(".tmp-")]


@pytest.mark.parametrize("construct, what", [
    ("if x > 0:\n        return x", "bool()"),
    ("while x.sum():\n        x = x - 1\n    return x", "bool()"),
    ("return int(x.sum())", "int()"),
    ("return float(x[0])", "float()"),
])
def test_python_control_flow_on_traced_value_names_function_and_line(construct, what, tmp_path,
                                                                     cache_dir):
    source = f"def branchy(x):\n    {construct}\n    return -x\n"
    path = tmp_path / "user_code.py"
    path.write_text(source)
    namespace: dict = {}
    exec(compile(source, str(path), "exec"), namespace)
    with pytest.raises(aotc.TracerConversionError) as info:
        aotc.jit(namespace["branchy"])(np.ones(3, np.float32))
    message = str(info.value)
    assert what in message and "'branchy'" in message
    assert f"{path}:2" in message  # the user's file and line
    assert "static_argnums" in message


def test_constants_made_while_tracing_have_values(cache_dir):
    """As JAX's concrete arrays inside jit: a constant made while tracing converts to
    Python values and serves where a static value is needed. (Unlike JAX, a value
    computed from constants, ``anp.array([1, 2]) + 1``, has none yet.)"""
    def f(x):
        n, k, every = anp.array(3), anp.array(2), anp.array([0, 2])
        scale = 2.0 if bool(anp.array(True)) else 1.0
        assert (int(n), float(k), anp.array([1, 2]).tolist(), n.item()) == (3, 2.0, [1, 2], 3)
        return {"slice": x[:n] * scale, "arange": anp.arange(n),
                "zeros": anp.zeros(anp.array([1, 3])),
                "delete": anp.delete(x, every), "partition": anp.partition(x * -1, k)[k],
                "index": x[range(6)[k]],
                "window": alax.reduce_window(x, anp.array(-np.inf), alax.max, (2,), (1,),
                                             "VALID")}

    x = np.arange(6.0)
    got = aotc.jit(f)(x)
    expected = {"slice": x[:3] * 2, "arange": np.arange(3), "zeros": np.zeros((1, 3)),
                "delete": np.delete(x, [0, 2]), "partition": np.partition(-x, 2)[2],
                "index": x[2], "window": np.maximum(x[:-1], x[1:])}
    for name in expected:
        np.testing.assert_array_equal(np.asarray(got[name]), expected[name], err_msg=name)
    with pytest.raises(aotc.TracerConversionError, match=r"int\(\) was asked"):
        aotc.jit(lambda x: anp.arange(int(x[0])))(x)  # computed from an argument: no value


def test_unsupported_dtype_argument_lists_supported(cache_dir):
    with pytest.raises(aotc.UnsupportedDtypeError, match="float128 is not supported.*float32"):
        aotc.jit(lambda x: x)(np.ones(2, np.longdouble))


def test_non_array_argument_says_to_make_it_static(cache_dir):
    with pytest.raises(aotc.TracingError, match="static"):
        aotc.jit(lambda x, s: x)(np.ones(2), "mode")


def test_unknown_target_lists_targets():
    with pytest.raises(aotc.AotcError, match="choose one of: cpu"):
        aotc.jit(lambda x: x, target="tpu")


def test_leaked_tracer_is_rejected(cache_dir):
    leaked = []

    def f(x):
        leaked.append(x)
        return x

    aotc.jit(f)(np.ones(2, np.float32))
    g = aotc.jit(lambda y: y + leaked[0])
    with pytest.raises(aotc.AotcError):
        g(np.ones(2, np.float32))
