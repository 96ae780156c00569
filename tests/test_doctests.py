"""The ``>>>`` examples in the docstrings of ``aotc/*.py`` and ``aotc/ops/*.py`` run as
doctests, one test per module (so a failure names it).

Examples may use these names without importing them: ``np`` (numpy), ``aotc``, ``anp``
(``aotc.numpy``), ``alax`` (``aotc.lax``), ``ann`` (``aotc.nn``) and ``arandom``
(``aotc.random``). ``aotc.passes`` and ``aotc.runtime`` live outside ``aotc/`` and are
not collected here.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import numpy as np
import pytest

import aotc
import aotc.lax as alax
import aotc.nn as ann
import aotc.numpy as anp
import aotc.random as arandom

PACKAGE_DIR = Path(aotc.__file__).resolve().parent
EXTRAGLOBS = {"np": np, "aotc": aotc, "anp": anp, "alax": alax, "ann": ann, "arandom": arandom}
OPTIONFLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
# Fewer examples than this means the collection broke, not that the docs lost them.
MIN_EXAMPLES = 15


def _module_names() -> list[str]:
    names = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = path.relative_to(PACKAGE_DIR).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(("aotc",) + parts))
    return names


MODULES = _module_names()


def _tests(module_name: str) -> list[doctest.DocTest]:
    module = importlib.import_module(module_name)
    finder = doctest.DocTestFinder()
    return [t for t in finder.find(module, module_name, extraglobs=EXTRAGLOBS) if t.examples]


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples(module_name):
    runner = doctest.DocTestRunner(optionflags=OPTIONFLAGS)
    for test in _tests(module_name):
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{module_name}: {results.failed} of {results.attempted} " \
        f"doctest examples failed (the report is in the captured stdout)"


def test_examples_are_collected():
    counts = {name: sum(len(t.examples) for t in _tests(name)) for name in MODULES}
    assert sum(counts.values()) >= MIN_EXAMPLES, counts
