"""The layering rules of the code base, checked on its source (no compile, no MLIR):

- no import circle among the modules of aotc/, passes/ (aotc.passes) and runtime/
  (aotc.runtime), counting imports inside functions too;
- no module over 600 lines unless its docstring says why ("Longer than 600 lines: ...");
- op-name sets live in the op vocabulary (passes/opset.py) only;
- every ops module exports through its ``EXPORTS`` table, and no exported name is
  defined by two modules.
"""

from __future__ import annotations

import ast
import collections
import importlib
import pathlib
import re

import pytest

from aotc import namespaces

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = {"aotc": "aotc", "passes": "aotc.passes", "runtime": "aotc.runtime"}
MAX_LINES = 600


def _modules() -> dict[str, pathlib.Path]:
    found = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = [p for p in path.relative_to(ROOT / folder).with_suffix("").parts
                     if p != "__init__"]
            found[".".join([package, *parts])] = path
    return found


MODULES = _modules()


def _imports(name: str, path: pathlib.Path) -> set[str]:
    """The project modules ``name`` imports (``from pkg import mod`` counts as ``pkg.mod``
    alone when ``mod`` is a module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            subs = [f"{base}.{a.name}" for a in node.names]
            if not all(s in MODULES for s in subs):
                out.add(base)
            out.update(subs)
    return {m for m in out if m in MODULES and m != name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles():
    graph = {name: _imports(name, path) for name, path in MODULES.items()}
    cycles = _cycles(graph)
    assert not cycles, "import circles:\n" + "\n".join(
        "  " + " <-> ".join(c) + "\n    " + "\n    ".join(
            f"{m} imports {sorted(graph[m] & set(c))}" for m in c) for c in cycles)


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_long_modules_say_why():
    long = []
    for name, path in MODULES.items():
        lines = path.read_text().count("\n")
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        if lines > MAX_LINES and "Longer than 600 lines:" not in doc:
            long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not long, (f"modules over {MAX_LINES} lines without 'Longer than 600 lines: <why>' "
                      f"in their docstring (split them, or say why):\n  " + "\n  ".join(long))


_OP_NAME = re.compile(
    r"^(arith|math|tensor|linalg|scf|func|util|flow|iree_linalg_ext)\.[a-z_0-9]+$")


def test_op_name_sets_come_from_the_vocabulary():
    """A set, tuple or list of two or more MLIR op names outside passes/opset.py is a
    second copy of a vocabulary set: derive it from passes/opset.py instead."""
    copies = []
    for name, path in MODULES.items():
        if name == "aotc.passes.opset":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
                names = [e.value for e in node.elts if isinstance(e, ast.Constant)
                         and isinstance(e.value, str) and _OP_NAME.match(e.value)]
                if len(names) >= 2:
                    copies.append(f"{path.relative_to(ROOT)}:{node.lineno}: {names[:4]}")
    assert not copies, "op-name sets outside passes/opset.py:\n  " + "\n  ".join(copies)


def _top_level_functions(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def test_exports_name_what_each_module_defines():
    defined_by = collections.defaultdict(list)
    for module_name in namespaces.MODULES:
        module = importlib.import_module(module_name)
        path = pathlib.Path(module.__file__)
        for name in _top_level_functions(path):
            defined_by[name].append(module_name)
        exports = getattr(module, "EXPORTS", None)
        assert isinstance(exports, dict), f"{module_name} has no EXPORTS table"
        for namespace, names in exports.items():
            for n in names:
                assert callable(getattr(module, n, None)), f"{module_name} exports {n}: undefined"
    exported = set().union(*(namespaces.collect(ns) for ns in ("numpy", "lax", "nn")))
    twice = {n: m for n, m in defined_by.items() if n in exported and len(m) > 1}
    assert not twice, f"exported names defined in two modules: {twice}"


@pytest.mark.parametrize("namespace", ["numpy", "lax", "nn", "methods"])
def test_namespaces_collect_without_clashes(namespace):
    assert namespaces.collect(namespace)


def test_lint_is_clean():
    """ruff with the project's rules (pyflakes, pycodestyle errors, 100 columns)."""
    ruff = pytest.importorskip("ruff")
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise",
                          str(ROOT)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, f"ruff {ruff.__name__}:\n{out.stdout}{out.stderr}"


def test_every_package_is_installed():
    """pyproject.toml lists every package (a wheel holds only those listed)."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    packages = {name for name, path in MODULES.items() if path.name == "__init__.py"}
    assert packages <= listed, f"add to [tool.setuptools] packages: {sorted(packages - listed)}"
