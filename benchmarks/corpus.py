"""The numpy kernel corpus of tests/kernels/polybench.py, loaded as a module for the
benchmarks (benchmarks/ is not a package, and tests/ is not on their path)."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def polybench():
    """The module tests/kernels/polybench.py (its kernels, ``KERNELS``, inits)."""
    path = ROOT / "tests" / "kernels" / "polybench.py"
    spec = importlib.util.spec_from_file_location("polybench", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["polybench"] = module
    spec.loader.exec_module(module)
    return module
