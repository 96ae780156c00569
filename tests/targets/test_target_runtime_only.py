"""The runtime-only install README.md documents for devices, on this machine: a fresh
virtual environment with numpy and iree-base-runtime only (no iree-base-compiler), plus
aotc's wheel installed without dependencies. Saved artifacts load and run there, from
Python and with the ``aotc`` command."""

from __future__ import annotations

import json
import subprocess
import textwrap

import numpy as np
import pytest
import target_edge as edge
from target_programs import MLP_INPUT, mlp


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    try:
        venv = edge.host_runtime_venv()
        edge.install_aotc(venv, tmp_path_factory.mktemp("wheel"))
    except RuntimeError as e:
        edge.require(False, f"could not make the runtime-only environment: {e}")
    return venv


def run(venv, *args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300,
                          check=False, env={"PATH": f"{venv}/bin:/usr/bin:/bin"}, **kwargs)


def test_the_environment_has_no_compiler(venv):
    done = run(venv, venv / "bin" / "python", "-m", "pip", "list", "--format=json")
    installed = {p["name"].lower().replace("_", "-") for p in json.loads(done.stdout)}
    assert {"aotc", "numpy", "iree-base-runtime", "ml-dtypes"} <= installed
    assert "iree-base-compiler" not in installed
    done = run(venv, venv / "bin" / "python", "-c", "import iree.compiler")
    assert done.returncode != 0 and "No module named 'iree.compiler'" in done.stderr


SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from aotc import runtime

    module = runtime.load(sys.argv[1])
    probs, classes = module.predict(np.load(sys.argv[2]))
    np.save(sys.argv[3], np.asarray(probs))
    print(module.device.uri, module.metadata["predict"].target,
          any(m.startswith("iree.compiler") for m in sys.modules))
""")


@pytest.mark.parametrize("target", ["cpu", "cpu,aarch64,vulkan"])
def test_artifacts_run_from_python(venv, artifacts, tmp_path, target):
    np.save(tmp_path / "x.npy", MLP_INPUT)
    (tmp_path / "run.py").write_text(SCRIPT)
    done = run(venv, venv / "bin" / "python", tmp_path / "run.py", artifacts.path("mlp", target),
               tmp_path / "x.npy", tmp_path / "probs.npy", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == ["local-task", target, "False"]
    np.testing.assert_allclose(np.load(tmp_path / "probs.npy"), mlp.predict_numpy(MLP_INPUT)[0],
                               rtol=1e-4, atol=1e-4)


def test_the_aotc_command_runs_inspects_and_lists_targets(venv, artifacts, tmp_path):
    path = artifacts.path("mlp", "cpu,aarch64,vulkan")
    np.save(tmp_path / "x.npy", MLP_INPUT)
    done = run(venv, venv / "bin" / "aotc", "run", path, "--input", tmp_path / "x.npy",
               "--output", tmp_path / "out{}.npy")
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out1.npy"), mlp.predict_numpy(MLP_INPUT)[1])
    done = run(venv, venv / "bin" / "aotc", "inspect", path)
    assert done.returncode == 0 and "target: cpu,aarch64,vulkan" in done.stdout, done.stderr
    done = run(venv, venv / "bin" / "aotc", "targets", "--json")
    assert done.returncode == 0, done.stderr
    runs = {row["target"]: row["runs_here"] for row in json.loads(done.stdout)}
    assert runs["cpu"] and not runs["cuda:sm_90"] and not runs["riscv64"]


def test_compiling_there_says_the_compiler_is_missing(venv, tmp_path):
    (tmp_path / "model.py").write_text("def f(x):\n    return x + 1\n")
    done = run(venv, venv / "bin" / "aotc", "compile", "model.py:f", "--arg", "f32[3]",
               cwd=tmp_path)
    assert done.returncode == 1
    assert "the compiler is not installed: pip install iree-base-compiler==" in done.stderr
    assert "aotc run, inspect and targets work here" in done.stderr


WRITES = textwrap.dedent("""
    import sys
    import numpy as np
    from aotc import runtime

    relax = runtime.load(sys.argv[1])["relax"]
    u, f = np.load(sys.argv[2]), np.load(sys.argv[3])
    host = u.copy()
    assert relax(host, f) is None          # a numpy argument, updated after the call
    dev = runtime.device_put(u.copy())
    relax(dev, f)                          # a device Array, updated in its own buffer
    relax(dev, f)
    np.save(sys.argv[4], np.stack([host, np.asarray(dev)]))
    print(relax.metadata.mutated, relax.metadata.donated)
""")


def _relax(u, f):
    u[1:-1] = 0.5 * (u[:-2] + u[2:]) - f[1:-1]


def test_an_artifact_that_writes_into_its_arguments(venv, tmp_path):
    import aotc

    n = 5000
    art = aotc.export({"relax": (_relax, aotc.ShapeDtypeStruct((n,), "float64"),
                                 aotc.ShapeDtypeStruct((n,), "float64"))})
    art.save(tmp_path / "relax.vmfb")
    rng = np.random.default_rng(1)
    u, f = rng.standard_normal(n), rng.standard_normal(n)
    np.save(tmp_path / "u.npy", u)
    np.save(tmp_path / "f.npy", f)
    (tmp_path / "writes.py").write_text(WRITES)
    done = run(venv, venv / "bin" / "python", tmp_path / "writes.py", tmp_path / "relax.vmfb",
               tmp_path / "u.npy", tmp_path / "f.npy", tmp_path / "out.npy", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split("\n")[0] == "{'u': 0} {'u': 0}"
    once, twice = u.copy(), u.copy()
    _relax(once, f)
    _relax(twice, f)
    _relax(twice, f)
    host, dev = np.load(tmp_path / "out.npy")
    np.testing.assert_array_equal(host, once)
    np.testing.assert_array_equal(dev, twice)
