"""A runtime-only install (iree-base-runtime without iree-base-compiler), simulated in a
subprocess where importing ``iree.compiler`` fails: the compiler side of aotc raises
``CompilerNotInstalledError`` at first use, saying what to install, while
``aotc.runtime`` still loads and runs a saved ``.vmfb``."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib import metadata

import pytest

import aotc

SCRIPT = textwrap.dedent("""
    import sys

    sys.modules["iree.compiler"] = None  # importing it now raises ImportError

    import numpy as np
    import aotc
    from aotc.errors import CompilerNotInstalledError

    def failure(use):
        try:
            use()
        except CompilerNotInstalledError as e:
            assert isinstance(e, ImportError) and e.name == "iree.compiler", (e, e.name)
            return str(e)
        raise AssertionError(f"{use} did not raise")

    def use_numpy():
        import aotc.numpy  # noqa: F401

    messages = {failure(lambda: aotc.jit), failure(lambda: aotc.export), failure(use_numpy),
                failure(lambda: aotc.jit)}  # again: the same error, not a half-imported module
    assert len(messages) == 1, messages
    print(messages.pop())

    from aotc import runtime

    module = runtime.load(sys.argv[1])
    out = module.add_one(np.arange(3, dtype=np.float32))
    print(np.asarray(out).tolist())
    assert not [m for m in sys.modules if m.startswith(("aotc.api", "aotc.core", "aotc._mlir"))]
""")


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    path = tmp_path_factory.mktemp("no_compiler") / "add_one.vmfb"
    aotc.export({"add_one": (lambda x: x + 1, aotc.ShapeDtypeStruct((3,), "float32"))}).save(path)
    return path


def test_compiler_side_says_what_to_install_and_the_runtime_still_runs(artifact, tmp_path):
    script = tmp_path / "runtime_only.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script), str(artifact)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    message, values = done.stdout.strip().splitlines()
    version = metadata.version("iree-base-runtime")
    assert message.startswith(
        f"the compiler is not installed: pip install iree-base-compiler=={version}; the "
        f"runtime (aotc.runtime) can still load .vmfb files (importing iree.compiler failed:")
    assert values == "[1.0, 2.0, 3.0]"
    assert done.stderr == ""


def test_the_error_is_an_import_error_naming_the_module():
    error = aotc.errors.CompilerNotInstalledError.from_import_error(
        ModuleNotFoundError("No module named 'iree.compiler'", name="iree.compiler"))
    assert isinstance(error, ImportError) and isinstance(error, aotc.errors.AotcError)
    assert error.name == "iree.compiler" and "No module named 'iree.compiler'" in str(error)


def test_aotc_compile_says_so(tmp_path):
    (tmp_path / "model.py").write_text("def f(x):\n    return x + 1\n")
    code = ("import sys; sys.modules['iree.compiler'] = None; from aotc.cli import main; "
            "sys.exit(main(['compile', 'model.py:f', '--arg', 'f32[3]']))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("aotc compile: error: the compiler is not installed: pip "
                                  "install iree-base-compiler==")
    assert "aotc run, inspect and targets work here" in done.stderr
    assert "Traceback" not in done.stderr
