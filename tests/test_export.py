"""aotc.export: artifacts with one or several functions, their metadata, saving and
loading them, and compile errors that carry IREE's diagnostics."""

from __future__ import annotations

import json

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.compiler import compile_bytecode
from aotc.runtime import load
from aotc.targets import TARGETS

F32 = "float32"


def predict(x, w):
    return anp.maximum(x @ w, 0.0)


@pytest.fixture(scope="module")
def artifact():
    return aotc.export(predict, aotc.ShapeDtypeStruct((4, 3), F32),
                       aotc.ShapeDtypeStruct((3, 2), F32))


def test_artifact_has_vmfb_mlir_and_metadata(artifact):
    assert artifact.vmfb.startswith(b"PK")  # a .vmfb: flatbuffer module in a zip-compatible archive
    assert "func.func public @predict" in artifact.mlir and "linalg.matmul" in artifact.mlir
    meta = artifact.metadata["predict"]
    assert [a["name"] for a in meta["args"]] == ["x", "w"]
    assert [a["shape"] for a in meta["args"]] == [[4, 3], [3, 2]]
    assert meta["results"] == [{"name": "out", "shape": [4, 2], "dtype": F32}]
    assert meta["target"] == "cpu" and meta["aotc_version"] == aotc.__version__
    assert meta["iree_version"].startswith("3.13") and len(meta["source_hash"]) == 16
    assert meta["work_estimate"] > 0


def test_save_load_and_run(artifact, tmp_path):
    path = artifact.save(tmp_path / "predict.vmfb")
    module = load(path)
    x = np.arange(12, dtype=np.float32).reshape(4, 3) - 5
    w = np.ones((3, 2), np.float32)
    np.testing.assert_allclose(np.asarray(module.predict(x, w)), np.maximum(x @ w, 0))
    np.testing.assert_allclose(np.asarray(module["predict"](x, w)), np.maximum(x @ w, 0))
    assert "predict" in module.functions
    assert json.loads(load(artifact.vmfb).functions["predict"].to_json())["name"] == "predict"


def test_several_functions_in_one_artifact(tmp_path):
    spec = aotc.ShapeDtypeStruct((5,), F32)
    art = aotc.export({
        "double": (lambda x: x * 2, spec),
        "stats": (lambda x: (x.mean(), x.std()), spec),
    })
    module = load(art.save(tmp_path / "two.vmfb"))
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(module.double(x)), x * 2)
    mean, std = module.stats(x)
    assert float(np.asarray(mean)) == pytest.approx(2.0)
    assert float(np.asarray(std)) == pytest.approx(np.std(x))
    assert sorted(art.functions) == ["double", "stats"]


def test_export_with_example_arrays_and_static_arguments():
    def scale(x, factor):
        return x * factor

    art = aotc.export(scale, np.ones(3, np.float32), 3, static_argnums=1)
    assert art.functions["scale"].static_args == {"1": "3"}
    out = load(art.vmfb).scale(np.ones(3, np.float32))
    np.testing.assert_array_equal(np.asarray(out), [3, 3, 3])


def test_bad_export_arguments_are_clear():
    with pytest.raises(aotc.AotcError, match="identifier"):
        aotc.export({"not a name": (lambda x: x, np.ones(2))})
    with pytest.raises(aotc.AotcError, match=r"\(fn, \*specs\)"):
        aotc.export({"f": lambda x: x})


def test_compile_error_carries_iree_diagnostics():
    bad = b"""func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
      %0 = math.fpowi %a, %a : tensor<4xf32>, tensor<4xf32>
      return %0 : tensor<4xf32>
    }"""
    with pytest.raises(aotc.CompileError) as info:
        compile_bytecode(bad, TARGETS["cpu"].flags, "f")
    assert "math.fpowi" in info.value.diagnostics
    assert "must be signless-integer-like" in info.value.diagnostics
    assert "IREE could not compile 'f'" in str(info.value)


def test_target_that_cannot_compute_a_dtype_says_so_at_compile_time():
    def haversine(lat, lon):
        a = anp.sin(lat / 2) ** 2 + anp.cos(lat) * anp.cos(lon) * anp.sin(lon / 2) ** 2
        return 2 * anp.arcsin(anp.sqrt(a))

    spec = aotc.ShapeDtypeStruct((3,), "float64")
    with pytest.raises(aotc.CompileError, match=r"target 'vulkan' cannot compute") as info:
        aotc.export(haversine, spec, spec, target="vulkan")
    message = str(info.value)
    first = haversine.__code__.co_firstlineno
    # The arguments once, then each of the user's lines once, not a list of MLIR ops.
    assert "haversine: argument 0 is f64, argument 1 is f64" in message
    for line in (first + 1, first + 2):
        assert message.count(f"test_export.py:{line} (in haversine): computes in f64") == 1
    assert "arith." not in message and "linalg." not in message
    assert ".astype" in message


def test_softmax_returned_and_reduced_compiles_and_matches_numpy():
    # IREE 3.13 fails this program at dispatch-creation O2+; the driver retries with the
    # fallback flags from aotc.compiler.FALLBACKS.
    def f(x):
        e = anp.exp(x - anp.max(x, axis=1, keepdims=True))
        p = e / anp.sum(e, axis=1, keepdims=True)
        return p, anp.argmax(p, axis=1)

    x = np.random.default_rng(0).standard_normal((64, 10)).astype(np.float32)
    p, k = load(aotc.export(f, x).vmfb).f(x)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(np.asarray(p), e / e.sum(1, keepdims=True), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(np.asarray(k), np.argmax(e, axis=1))


def test_dynamic_dimensions_are_rejected_clearly():
    with pytest.raises(aotc.UnsupportedOpError,
                       match=r"argument x: expected static dimensions, got shape \(None, 3\)"):
        aotc.export(lambda x: x + 1, aotc.ShapeDtypeStruct((None, 3), F32))
