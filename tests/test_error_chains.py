"""Errors keep their cause and place: a bug inside a pass or a rule reaches the user as
aotc's error chained to the original exception, whose traceback names the rule's file
and line; the error classes are proper subclasses of ``aotc.errors.AotcError``."""

from __future__ import annotations

import traceback
from dataclasses import dataclass

import numpy as np
import pytest

import aotc
from aotc import errors
from aotc.passes import ModulePass, PassError, opset, run_pipeline


def _chain(e: BaseException) -> list[BaseException]:
    out = []
    while e is not None and e not in out:
        out.append(e)
        e = e.__cause__
    return out


def _frames(e: BaseException) -> list[traceback.FrameSummary]:
    return traceback.extract_tb(e.__traceback__)


@dataclass(frozen=True)
class _BrokenPass(ModulePass):
    name = "test-broken"

    def run(self, module) -> None:
        {}["missing"]  # a bug in a pass


def test_a_bug_in_a_pass_is_chained_with_its_place():
    module = aotc.jit(lambda x: x + 1).lower(aotc.ShapeDtypeStruct((2,), "float32")).compiler_ir()
    with pytest.raises(PassError) as info:
        run_pipeline(module, [_BrokenPass()])
    message = str(info.value)
    assert "test-broken: internal error: KeyError: 'missing'" in message
    assert f"{__file__}:" in message  # where it was raised
    cause = info.value.__cause__
    assert isinstance(cause, KeyError)
    assert any(f.filename == __file__ and f.name == "run" for f in _frames(cause))


def test_a_broken_donation_rule_names_its_file_and_line(monkeypatch):
    def broken_placement(op, offset, views):
        raise ZeroDivisionError("placement bug")

    row = opset.row("tensor.insert_slice")
    monkeypatch.setitem(row.rules, "placement", broken_placement)
    step = aotc.jit(lambda state, v: state.at[1].set(v), donate_argnums=0)
    with pytest.raises(errors.AotcError) as info:
        step.lower(aotc.ShapeDtypeStruct((4, 3), "float32"), aotc.ShapeDtypeStruct((3,), "float32"))
    chain = _chain(info.value)
    original = chain[-1]
    assert isinstance(original, ZeroDivisionError), [type(e).__name__ for e in chain]
    line = broken_placement.__code__.co_firstlineno + 1
    assert any(f.filename == __file__ and f.lineno == line for f in _frames(original))
    assert "internal error: ZeroDivisionError: placement bug" in str(info.value)


def test_error_classes_are_aotc_errors():
    assert issubclass(errors.PassError, errors.AotcError)
    assert PassError is errors.PassError
    assert issubclass(errors.VmapError, errors.AotcError)
    assert issubclass(errors.VmapError, ValueError)  # jax.vmap raises ValueError


def test_vmap_argument_errors_are_vmap_errors():
    f = aotc.vmap(lambda a, b: a + b)
    with pytest.raises(errors.VmapError, match="batch"):
        f(np.ones((3, 2), np.float32), np.ones((4, 2), np.float32))
