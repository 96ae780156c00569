"""The runtime runs where the compiler is missing: a subprocess where importing
``iree.compiler`` fails loads a saved artifact and runs it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

BLOCKED = textwrap.dedent("""
    import sys

    class BlockCompiler:
        # Stands in for a machine without iree-base-compiler (an edge device).
        def find_spec(self, name, path=None, target=None):
            if name == "iree.compiler" or name.startswith("iree.compiler."):
                raise ImportError(f"{name} is not installed here (blocked by the test)")
            return None

    sys.meta_path.insert(0, BlockCompiler())
    try:
        import iree.compiler
    except ImportError:
        pass
    else:
        raise SystemExit("the blocker does not work")

    import numpy as np
    from aotc import runtime

    module = runtime.load(sys.argv[1], device=sys.argv[2])
    x = np.arange(4, dtype=np.float32)
    out = module.add(x, np.float32(10) + x)
    assert np.asarray(out).tolist() == [10.0, 12.0, 14.0, 16.0], out
    tree = module.tree((x[:2], x[2:]), {"u": x[:2], "v": np.arange(2, dtype=np.int32)})
    assert np.asarray(tree["sum"]).tolist() == [2.0, 4.0]
    assert not any(m.startswith("iree.compiler") for m in sys.modules), "compiler imported"
    print("ok", np.asarray(out).sum())
""")


def test_runs_without_the_compiler(main_path, tmp_path, device_uri):
    script = tmp_path / "no_compiler.py"
    script.write_text(BLOCKED)
    done = subprocess.run(
        [sys.executable, str(script), main_path, device_uri],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "ok 52.0"
    assert done.stderr == ""


def test_runtime_modules_import_no_compiler():
    """Source check: runtime modules import only the standard library, numpy, iree.runtime
    and each other."""
    import ast
    import pathlib

    import aotc.runtime

    allowed_third_party = {"numpy", "iree"}
    for path in pathlib.Path(aotc.runtime.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: a sibling runtime module
                    continue
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert not name.startswith("iree.compiler"), f"{path.name} imports {name}"
                assert name.split(".")[:2] == ["iree", "runtime"] or not name.startswith("iree"), (
                    path.name, name)
                assert top != "aotc", f"{path.name} imports {name}: use relative imports"
                assert top in allowed_third_party or top in sys.stdlib_module_names, (
                    f"{path.name} imports {name}")
