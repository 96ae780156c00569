"""``aotc.jit`` as ``jax.jit``: jitted methods (self as an ordinary or a static argument,
staticmethod and classmethod), the stages' text, cost and memory analyses, one-line
reprs, and ``aotc.config``."""

from __future__ import annotations

import os
import subprocess
import sys
from functools import partial

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.errors import AotcError, ConfigError, TracingError


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("AOTC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


X = np.arange(3, dtype=np.float32)


# ---- methods ---------------------------------------------------------------------------

class Scale:
    def __init__(self, k: float):
        self.k = k

    @partial(aotc.jit, static_argnums=0)
    def static_self(self, x):
        return x * self.k

    @partial(aotc.jit, static_argnames="self")
    def named_static(self, x, *, bias=0.0):
        return x * self.k + bias

    @aotc.jit
    def dynamic_self(self, x):
        return x

    @staticmethod
    @aotc.jit
    def outer_static(x):
        return x - 1

    @aotc.jit
    @staticmethod
    def inner_static(x):
        return x - 2

    @classmethod
    @partial(aotc.jit, static_argnums=0)
    def from_class(cls, x):
        return x * len(cls.__name__)


def test_static_self_compiles_once_per_instance_and_shares_the_cache():
    a, b = Scale(2.0), Scale(3.0)
    np.testing.assert_array_equal(np.asarray(a.static_self(X)), X * 2)
    np.testing.assert_array_equal(np.asarray(b.static_self(X)), X * 3)
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(a.static_self(X)), X * 2)
    jitted = Scale.static_self  # on the class: the jitted function itself
    assert isinstance(jitted, aotc.api.JittedFunction)
    assert jitted.stats["compiles"] == 2 and a.static_self.stats is jitted.stats
    # Unbound, self is passed like any argument.
    np.testing.assert_array_equal(np.asarray(Scale.static_self(a, X)), X * 2)
    assert jitted.stats["traces"] == 2
    assert "x: float32[3]" in repr(a.static_self.lower(X))


def test_static_argnames_self_and_keyword_arguments():
    s = Scale(4.0)
    np.testing.assert_array_equal(np.asarray(s.named_static(X, bias=1.0)), X * 4 + 1)
    np.testing.assert_array_equal(np.asarray(s.named_static(X, bias=1.0)), X * 4 + 1)
    assert Scale.named_static.stats["compiles"] == 1


def test_jitted_call_method():
    class Affine:
        def __init__(self, w):
            self.w = w

        @partial(aotc.jit, static_argnums=0)
        def __call__(self, x):
            return x * self.w + 1

    np.testing.assert_array_equal(np.asarray(Affine(2.0)(X)), X * 2 + 1)


def test_unarrayable_self_is_an_error_with_the_fix():
    with pytest.raises(TracingError, match=r"argument self.*static_argnums=0"):
        Scale(1.0).dynamic_self(X)


def test_unhashable_static_self_is_an_error_with_the_fix():
    class Unhashable:
        def __eq__(self, other):  # __eq__ without __hash__: unhashable
            return True

        @partial(aotc.jit, static_argnums=0)
        def f(self, x):
            return x

    with pytest.raises(AotcError, match=r"hashable.*__hash__ and __eq__"):
        Unhashable().f(X)


def test_staticmethod_and_classmethod():
    s = Scale(1.0)
    for f in (s.outer_static, Scale.outer_static):
        np.testing.assert_array_equal(np.asarray(f(X)), X - 1)
    for f in (s.inner_static, Scale.inner_static):
        np.testing.assert_array_equal(np.asarray(f(X)), X - 2)
    for f in (s.from_class, Scale.from_class):
        np.testing.assert_array_equal(np.asarray(f(X)), X * 5)
    with pytest.raises(AotcError, match="Put @classmethod outside"):
        aotc.jit(classmethod(lambda cls, x: x))


# ---- stages ----------------------------------------------------------------------------

def test_as_text_abbreviates_the_metadata_and_shows_the_traced_module():
    lowered = aotc.jit(lambda x: anp.sin(x) * 2).lower(aotc.ShapeDtypeStruct((3,), "float32"))
    text = lowered.as_text()
    assert "(aotc metadata, " in text and "\\22args\\22" not in text
    assert "math.sin" not in text and "arith.extf" in text  # aotc's float32 sin on CPU
    full = lowered.as_text(metadata=True)
    assert "\\22args\\22" in full and "\\22args\\22" in str(lowered.compiler_ir())
    traced = lowered.as_text("traced")
    assert "math.sin" in traced and "(aotc metadata, " in traced
    assert lowered.as_text("linalg") == text
    assert "loc(" in lowered.as_text(debug_info=True) and "loc(" not in text
    with pytest.raises(ValueError, match="'traced'"):
        lowered.as_text("stablehlo")
    compiled = lowered.compile()
    assert compiled.as_text() == text
    assert compiled.as_text(metadata=True) == full


def test_work_estimate_tells_matrix_vector_products_from_matmuls():
    """The driver choice weighs a matmul's flops at about a tenth of elementwise work and
    a matrix-vector product's at half (runtime/device.py): the trace tells them apart,
    and vmap over the vector of a shared matrix makes the products one matmul."""
    m = aotc.ShapeDtypeStruct((64, 32), "float32")
    v = aotc.ShapeDtypeStruct((32,), "float32")
    b = aotc.ShapeDtypeStruct((32, 16), "float32")

    def estimates(fn, *specs):
        meta = aotc.jit(fn).lower(*specs).metadata  # estimated when tracing: no compile
        return meta.work_estimate, meta.contraction_estimate, meta.matvec_estimate

    assert estimates(lambda m, v: m @ v, m, v) == (2 * 64 * 32, 0, 2 * 64 * 32)
    assert estimates(lambda v, b: v @ b, v, b) == (2 * 32 * 16, 0, 2 * 32 * 16)
    row = aotc.ShapeDtypeStruct((1, 32), "float32")  # a batch-1 layer
    assert estimates(lambda x, b: x @ b, row, b) == (2 * 32 * 16, 0, 2 * 32 * 16)
    assert estimates(lambda v, w: anp.dot(v, w), v, v) == (2 * 32, 0, 2 * 32)
    assert estimates(lambda m, b: m @ b, m, b) == (2 * 64 * 32 * 16, 2 * 64 * 32 * 16, 0)
    batch = aotc.ShapeDtypeStruct((8, 32), "float32")
    flops = 8 * 2 * 64 * 32
    assert estimates(aotc.vmap(lambda v, m: m @ v, in_axes=(0, None)), batch, m) == (
        flops, flops, 0)


def test_gradient_work_estimates_count_what_runs():
    """Reverse mode counts the primal ops and twice them for their derivative, and a
    custom-derivative call's rule once, where the call is differentiated, not the rules
    of custom calls a custom_jvp rule applies to primal values: the gradient of a solve
    is estimated at a few solves (it had been thousands, which sent it to the worker
    pool: 6.7x slower at n = 64), and runs on one thread."""
    from aotc import runtime

    a = aotc.ShapeDtypeStruct((64, 64), "float32")
    b = aotc.ShapeDtypeStruct((64, 16), "float32")

    def work(fn, *specs):  # estimated when tracing: Compiled keeps Lowered's metadata
        return aotc.jit(fn).lower(*specs).metadata

    def loss(a, b):
        return anp.sum((a @ b) ** 2)

    assert work(aotc.grad(loss), a, b).work_estimate == 3 * work(loss, a, b).work_estimate
    for primal, grad, specs in (
            (lambda a, b: anp.linalg.solve(a, b),
             aotc.grad(lambda a, b: anp.sum(anp.linalg.solve(a, b) ** 2)), (a, b)),
            (lambda a: anp.linalg.slogdet(a)[1], aotc.grad(lambda a: anp.linalg.slogdet(a)[1]),
             (a,)),
            (anp.linalg.eigh,  # eigenvalues' derivatives need the eigenvectors
             aotc.grad(lambda a: anp.sum(anp.linalg.eigvalsh(a) ** 2)), (a,))):
        meta = work(grad, *specs)
        assert meta.work_estimate < 12 * work(primal, *specs).work_estimate
        assert runtime.default_device_uri([meta]) == "local-sync"


def test_cost_and_memory_analysis():
    spec = aotc.ShapeDtypeStruct((4, 8), "float32")
    w = aotc.ShapeDtypeStruct((8, 2), "float32")
    lowered = aotc.jit(lambda x, w: anp.tanh(x @ w)).lower(spec, w)
    compiled = lowered.compile()
    cost = compiled.cost_analysis()
    assert cost == lowered.cost_analysis()
    assert cost["flops"] == compiled.metadata.work_estimate >= 2 * 4 * 8 * 2
    assert cost["bytes accessed0{}"] == 128 and cost["bytes accessed1{}"] == 64
    assert cost["bytes accessedout{}"] == 32 and cost["bytes accessed"] == 224
    memory = compiled.memory_analysis()
    assert (memory.argument_size_in_bytes, memory.output_size_in_bytes,
            memory.alias_size_in_bytes) == (192, 32, 0)
    assert memory.generated_code_size_in_bytes == len(compiled.vmfb)
    assert isinstance(memory.temp_size_in_bytes, int) and memory.temp_size_in_bytes >= 0
    assert compiled.memory_analysis() is memory  # measured once


def test_donated_bytes_are_the_alias_size():
    compiled = aotc.jit(lambda s: s * 2 + 1, donate_argnums=0).lower(X).compile()
    assert compiled.memory_analysis().alias_size_in_bytes == X.nbytes


def test_reprs_are_one_short_line():
    jf = aotc.jit(lambda x, n: x * n, static_argnums=1)
    assert repr(jf) == "<aotc JittedFunction <lambda>(x, n static) for cpu, 0 signatures compiled>"
    jf(X, 2)
    lowered = jf.lower(X, 3)
    compiled = lowered.compile()
    art = aotc.export(lambda x: x + 1, aotc.ShapeDtypeStruct((3,), "float32"), name="inc")
    both = aotc.export({"a": (lambda x: x, X), "b": (lambda x: -x, X)})
    texts = {
        "jit": repr(jf), "lowered": repr(lowered), "compiled": repr(compiled),
        "artifact": repr(art), "artifacts": repr(both), "module": repr(art.load()),
        "modules": repr(both.load()),
    }
    assert texts["jit"].endswith("2 signatures compiled>")  # lower().compile() too
    assert texts["lowered"] == "<aotc Lowered _lambda_(x: float32[3]) -> (out: float32[3]) for cpu>"
    assert texts["compiled"].startswith("<aotc Compiled _lambda_(x: float32[3]) -> (out: ")
    assert texts["compiled"].endswith(" for cpu on local-sync>")
    assert texts["artifact"].startswith("<aotc Artifact inc(x: float32[3]) -> (out: float32[3])"
                                        " for cpu, ")
    assert texts["artifacts"].startswith("<aotc Artifact 2 functions (a, b) for cpu, ")
    assert texts["module"] == ("<aotc Module <%d bytes>: inc(x: float32[3]) -> (out: "
                               "float32[3]) on local-sync>" % len(art.vmfb))
    assert texts["modules"].endswith(": 2 functions (a, b) on local-sync>")
    for text in texts.values():
        assert "\n" not in text and len(text) < 160, text


# ---- aotc.config -----------------------------------------------------------------------

def test_config_table_update_and_errors(monkeypatch):
    monkeypatch.delenv("AOTC_LOG_COMPILES", raising=False)
    assert aotc.config.log_compiles is False
    monkeypatch.setenv("AOTC_LOG_COMPILES", "1")
    assert aotc.config.log_compiles is True
    with aotc.config.override(log_compiles=False):
        assert aotc.config.log_compiles is False
        aotc.config.update("aotc_explain_cache_misses", True)  # JAX-style prefixed name
        assert aotc.config.explain_cache_misses is True
    assert aotc.config.log_compiles is True  # the environment again
    aotc.config.update("explain_cache_misses", None)
    with pytest.raises(ConfigError, match="expected one of the options compile_progress, "
                                          ".*log_compiles, loop_dispatch_max_work, x64, got 'log'"):
        aotc.config.update("log", True)
    with pytest.raises(ConfigError, match="takes a bool, got str 'yes'"):
        aotc.config.update("log_compiles", "yes")
    with pytest.raises(AttributeError, match="no option 'enable_x64'"):
        aotc.config.enable_x64  # noqa: B018
    monkeypatch.setenv("AOTC_LOG_COMPILES", "maybe")
    with pytest.raises(ConfigError, match="AOTC_LOG_COMPILES='maybe': expected 1 or 0"):
        aotc.config.log_compiles  # noqa: B018
    assert set(aotc.config.OPTIONS) >= {"log_compiles", "explain_cache_misses"}


def test_config_is_imported_lazily():
    script = ("import sys, aotc; assert 'aotc.config' not in sys.modules; "
              "print(aotc.config.log_compiles)")
    env = {k: v for k, v in os.environ.items() if k != "AOTC_LOG_COMPILES"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "False", done.stderr
