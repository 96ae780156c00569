"""The op vocabulary (passes/opset.py) covers every MLIR op aotc emits, every op that can
reach the batching pass has a batching rule, and every op carries the user's location.

The programs: one per op family (tests/targets/target_ops_programs.py), the functions of
the lowering snapshots (tests/lit/lowering/*.py, imported with their ``run`` decorator
recording instead of printing), every ufunc over every dtype, and vmaps of some of them
(the batching pass emits ops of its own). They are lowered, not compiled: this is cheap.
"""

from __future__ import annotations

import collections
import pathlib
import re
import runpy
import sys
import types
import warnings

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.passes import opset

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE / "targets"))

import target_ops_programs  # noqa: E402

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]


def _snapshot_functions() -> list[tuple[str, object, tuple]]:
    """(name, fn, specs) of every function the lowering snapshots trace."""
    found = []
    fake = types.ModuleType("snapshot")
    fake.S = aotc.ShapeDtypeStruct

    def run(*specs):
        def record(f):
            found.append((f.__name__, f, specs))
            return f
        return record

    fake.run = run
    saved = sys.modules.get("snapshot")
    sys.modules["snapshot"] = fake
    try:
        for script in sorted((HERE / "lit" / "lowering").glob("*.py")):
            if script.name != "snapshot.py":
                runpy.run_path(str(script), run_name=f"snapshot_{script.stem}")
    finally:
        if saved is None:
            sys.modules.pop("snapshot", None)
        else:
            sys.modules["snapshot"] = saved
    return found


def _ufuncs_of(dtype: str):
    """Every aotc.numpy ufunc numpy accepts for ``dtype`` operands, in one function."""
    x = np.ones(3, dtype)
    names = []
    for name, np_name in anp.UFUNCS.items():
        ufunc = getattr(np, np_name)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                ufunc(*([x] * ufunc.nin))
        except TypeError:
            continue
        names.append((name, ufunc.nin))

    def every_ufunc(a):
        return {name: getattr(anp, name)(*([a] * nin)) for name, nin in names}

    every_ufunc.__name__ = f"ufuncs_{dtype}"
    return every_ufunc, (aotc.ShapeDtypeStruct((3,), dtype),)


def _programs():
    programs = [(name, p.fn, p.inputs) for name, p in target_ops_programs.PROGRAMS.items()]
    programs += _snapshot_functions()
    programs += [(f"ufuncs_{d}", *_ufuncs_of(d)) for d in DTYPES]
    return programs


def _vmapped():
    """vmaps over the first argument of some family programs: the batching pass's ops."""
    out = []
    for name in ("control", "gather_scatter", "rearrange", "sorting"):
        p = target_ops_programs.PROGRAMS[name]
        specs = [aotc.ShapeDtypeStruct((2, *np.shape(a)), np.asarray(a).dtype) if i == 0
                 else aotc.ShapeDtypeStruct(np.shape(a), np.asarray(a).dtype)
                 for i, a in enumerate(p.inputs)]
        in_axes = (0,) + (None,) * (len(specs) - 1)
        out.append((f"vmap_{name}", aotc.vmap(p.fn, in_axes=in_axes), tuple(specs)))
    return out


def _walk(op, visit, depth=0):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                visit(inner.operation, depth)
                _walk(inner.operation, visit, depth + 1)


@pytest.fixture(scope="module")
def lowered():
    """name -> the lowered ``ir.Module`` of every program."""
    modules = {}
    for name, fn, specs in _programs() + _vmapped():
        modules[name] = aotc.jit(fn).lower(*specs).compiler_ir()
    return modules


def _emitted(lowered) -> dict[str, set[str]]:
    """op name -> the programs that emit it."""
    seen = collections.defaultdict(set)
    for name, module in lowered.items():
        with module.context:
            _walk(module.operation, lambda op, _d, n=name: seen[op.name].add(n))
    return seen


def test_every_emitted_op_has_a_row(lowered):
    seen = _emitted(lowered)
    missing = sorted(op for op in seen if op not in opset.OPS)
    assert not missing, "ops without a row in passes/opset.py _ROWS (add Op(name, group)):\n" + \
        "\n".join(f"  {op} (emitted by {', '.join(sorted(seen[op])[:3])})" for op in missing)
    assert len(seen) > 60  # the programs do reach most of the vocabulary


# Ops that never reach a batching rule: functions and terminators, and what lives only
# inside the body of a linalg or LinalgExt op (the rule of that op batches its body).
# Sources (tensor.empty, constants) read no tensor, so they are never batched: copied.
# (aotc-loops-in-dispatch makes flow.dispatch.workgroups after any batching, at the end)
_NO_RULE_NEEDED = opset.of_group("function", "terminator", "source") | {
    "linalg.index", "flow.dispatch.workgroups"}


def test_every_op_outside_bodies_has_a_batching_rule(lowered):
    """The ops at function level or in scf regions, where the batching pass visits them."""
    seen = collections.defaultdict(set)

    def visit(op, name):
        if op.name in _NO_RULE_NEEDED:
            return
        seen[op.name].add(name)

    def walk(op, name):
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    inner = inner.operation
                    visit(inner, name)
                    if inner.name.startswith(("scf.", "func.")):
                        walk(inner, name)

    for name, module in lowered.items():
        with module.context:
            walk(module.operation, name)
    missing = sorted(
        op for op in seen
        if opset.rule_of("batch", op) is None and opset.row(op).dialect not in opset.SCALAR_DIALECTS
    )
    assert not missing, "ops without a batching rule (add @rule(name) in passes/batching):\n" + \
        "\n".join(f"  {op} (in {', '.join(sorted(seen[op])[:3])})" for op in missing)


_FILE_LINE = re.compile(r'"[^"]+":\d+:\d+')


def _located_by_mlir(op) -> bool:
    """Ops MLIR makes itself: the implicit body of a named linalg op (linalg.fill,
    matmul, ...: built by its C++ builder, never printed), and constants the folder
    hoists to the function's entry while canonicalizing (it merges equal constants from
    many lines, so they keep none)."""
    parent = op.parent
    if parent.name.startswith("linalg.") and parent.name != "linalg.generic":
        return True
    return op.name in ("arith.constant", "complex.constant") and parent.name == "func.func"


def test_every_op_has_a_source_location(lowered):
    """Each op names the user's file and line (the function, or the call that emitted it)."""
    unknown = collections.defaultdict(set)
    for name, module in lowered.items():
        with module.context:
            def visit(op, _depth, n=name):
                if not _FILE_LINE.search(str(op.location)) and not _located_by_mlir(op):
                    unknown[op.name].add(n)
            _walk(module.operation, visit)
    assert not unknown, "ops without a file:line location:\n" + "\n".join(
        f"  {op} (in {', '.join(sorted(names)[:4])})" for op, names in sorted(unknown.items()))


def test_ops_point_at_the_users_line():
    """An op's location is the line of the call that emitted it, not aotc's code."""
    def f(x):
        y = anp.exp(x)  # the generic computing exp: this line
        return y.sum()  # the reduction: this line

    module = aotc.jit(f).lower(aotc.ShapeDtypeStruct((4,), "float32")).compiler_ir()
    line = f.__code__.co_firstlineno
    with module.context:
        text = module.operation.get_asm(enable_debug_info=True)
    assert f'"{__file__}":{line + 1}:' in text
    assert f'"{__file__}":{line + 2}:' in text
    assert "aotc/ops" not in text


def test_attaching_a_rule_to_an_unknown_op_names_the_row_to_add():
    with pytest.raises(KeyError, match=r"add a row Op\('linalg.matvec', <group>\) to _ROWS"):
        opset.attach("batch", "linalg.matvec")(lambda *a: None)


def test_the_derived_sets_agree_with_their_rows():
    assert opset.VIEW_OPS <= opset.having("aliases_operand")
    assert opset.RESHAPE_OPS == opset.VIEW_OPS - {"tensor.extract_slice"}
    assert set(opset.OFFSETS_AT) == {"tensor.extract_slice", "tensor.insert_slice"}
    assert opset.SCALAR_DIALECTS == {"arith", "math", "complex"}
    assert {"math.sin", "math.atan2"} <= opset.CPU_MISSING_F64
    assert "math.exp" not in opset.CPU_MISSING_F64
    for name in opset.WIDENED:
        assert opset.row(name).group == "scalar"
