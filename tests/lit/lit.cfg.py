"""lit configuration for aotc's IR snapshot tests: ``lit -v tests/lit``.

``*.mlir`` files run ``%aotc-opt`` (python -m aotc.passes.opt) over IR and check its output
with FileCheck; ``*.py`` files trace functions with aotc and check the MLIR they print.
"""

import importlib.util
import os
import shutil
import sys

import lit.formats

config.name = "aotc"
# lit's own shell, which has a builtin `not`, so no LLVM tools are needed.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "snapshot.py"]
config.test_source_root = os.path.dirname(__file__)

python = f'"{sys.executable}"'
# FileCheck from the `filecheck` package of this Python, else whichever is on PATH.
if importlib.util.find_spec("filecheck") is not None:
    filecheck = f"{python} -m filecheck"
else:
    filecheck = shutil.which("filecheck") or "filecheck"
config.substitutions.append(("%aotc-opt", f"{python} -m aotc.passes.opt"))
config.substitutions.append(("%python", python))
config.substitutions.append((r"\bfilecheck\b", filecheck))

# aotc is imported as installed (pip install -e .); pass on what Python and IREE read.
for name in ("HOME", "PATH", "PYTHONPATH", "TMPDIR", "IREE_PY_RUNTIME_FLAGS"):
    if name in os.environ:
        config.environment[name] = os.environ[name]
