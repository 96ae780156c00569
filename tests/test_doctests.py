"""The ``>>>`` examples in the docstrings of aotc/, passes/ (``aotc.passes``) and
runtime/ (``aotc.runtime``) run as doctests, one test per module (so a failure names it).

Examples may use these names without importing them: ``np`` (numpy), ``aotc``, ``anp``
(``aotc.numpy``), ``alax`` (``aotc.lax``), ``ann`` (``aotc.nn``), ``arandom``
(``aotc.random``) and ``runtime`` (``aotc.runtime``). They run in a directory holding
``double.vmfb``, the artifact of the ``aotc.runtime`` package example, exported once here
(one compile for all the runtime examples).
"""

from __future__ import annotations

import doctest
import gc
import importlib
import io
from pathlib import Path

import numpy as np
import pytest

import aotc
import aotc.lax as alax
import aotc.nn as ann
import aotc.numpy as anp
import aotc.passes
import aotc.random as arandom
from aotc import runtime
from aotc.runtime import allocator

PACKAGES = {
    "aotc": Path(aotc.__file__).resolve().parent,
    "aotc.passes": Path(aotc.passes.__file__).resolve().parent,
    "aotc.runtime": Path(runtime.__file__).resolve().parent,
}
EXTRAGLOBS = {"np": np, "aotc": aotc, "anp": anp, "alax": alax, "ann": ann,
              "arandom": arandom, "runtime": runtime}
OPTIONFLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
# Fewer examples than this means the collection broke, not that the docs lost them.
MIN_EXAMPLES = 100


def _module_names() -> list[str]:
    """Every module with an example (aotc/ holds aotc.passes and aotc.runtime only as the
    installed remap: they are collected from their own folders)."""
    names = []
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            if ">>>" not in path.read_text(encoding="utf-8"):
                continue
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names.append(".".join((package,) + parts))
    return names


MODULES = _module_names()


def _tests(module_name: str) -> list[doctest.DocTest]:
    module = importlib.import_module(module_name)
    finder = doctest.DocTestFinder()
    return [t for t in finder.find(module, module_name, extraglobs=EXTRAGLOBS) if t.examples]


@pytest.fixture(scope="module")
def artifact_dir(tmp_path_factory) -> Path:
    """A directory holding ``double.vmfb``, as the ``aotc.runtime`` example saves it."""
    directory = tmp_path_factory.mktemp("doctest-artifacts")
    art = aotc.export(lambda x: 2 * x, aotc.ShapeDtypeStruct((3,), "float32"), name="double")
    art.save(directory / "double.vmfb")
    return directory


@pytest.fixture
def in_artifact_dir(artifact_dir, monkeypatch):
    """Runs in ``artifact_dir`` and restores the reuse configuration examples change."""
    monkeypatch.chdir(artifact_dir)
    saved = allocator._config
    gc.collect()  # arrays of earlier tests die now, not inside a measured example
    yield
    allocator._config = saved


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples(module_name, in_artifact_dir):
    runner = doctest.DocTestRunner(optionflags=OPTIONFLAGS)
    report = io.StringIO()
    for test in _tests(module_name):
        runner.run(test, out=report.write)
    results = runner.summarize(verbose=False)
    assert results.attempted > 0, f"{module_name}: no doctest examples found"
    assert results.failed == 0, (
        f"{module_name}: {results.failed} of {results.attempted} doctest examples failed\n"
        f"{report.getvalue()}")


def test_examples_are_collected():
    counts = {name: sum(len(t.examples) for t in _tests(name)) for name in MODULES}
    assert sum(counts.values()) >= MIN_EXAMPLES, counts
    assert {"aotc.passes.donation.pairing", "aotc.runtime", "aotc.ops.updates"} <= set(counts)
