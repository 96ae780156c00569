"""Runs the lit suite in tests/lit (IR snapshots of passes and lowering, checked with
FileCheck), so that one ``python -m pytest`` covers them too.

    lit -v tests/lit                    # the same suite, run directly
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

LIT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lit")


def _lit_command() -> list[str]:
    # lit has no ``python -m lit``; run its entry point with this interpreter, so the
    # tests see the same aotc, IREE and filecheck as pytest does.
    if importlib.util.find_spec("lit") is not None:
        return [sys.executable, "-c", "import sys; from lit.main import main; sys.exit(main())"]
    script = shutil.which("lit")
    if script is None:
        pytest.skip("lit is not installed: pip install -e '.[test]' (it brings lit and filecheck)")
    return [script]


def test_lit_suite():
    result = subprocess.run(
        _lit_command() + ["-v", LIT_DIR],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900,
    )
    assert result.returncode == 0, f"lit failed (exit {result.returncode}):\n{result.stdout}"
    assert "Passed" in result.stdout, f"lit ran no tests:\n{result.stdout}"
