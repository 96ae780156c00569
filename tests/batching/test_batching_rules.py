"""The batching rules for tensor shape ops, scalars and scf control flow, checked by
running them: each hand-written per-example function in ``programs/`` is compiled
as it is and batched by ``aotc-batch`` for several ``in-axes``, all in one module and
one IREE compile; the batched function must equal the per-example function run in a
Python loop and stacked (batch sizes 0, 1 and 7 for a dynamic batch, 3 for a static one).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from aotc._mlir import ir
from aotc.compiler import compile_bytecode
from aotc.passes import Batch, run_pipeline
from aotc.cpu_paths import compile_flags
from aotc.targets import get_target

iree_rt = pytest.importorskip("iree.runtime")

PROGRAMS = Path(__file__).parent / "programs"

# (function, per-example inputs (shape, dtype, low, high), in_axes of each batching)
CASES = {
    "slices": ([((6, 4), "float32"), ((), "int64", 0, 6)], [(0, None), (0, 0), (None, 0)]),
    "joins": ([((3,), "float32"), ((2,), "float32"), ((2, 3, 4), "float32"),
               ((2, 4, 5), "float32")],
              [(0, None, 0, None), (None, 0, None, 0), (0, 0, 0, 0)]),
    "branch": ([((), "bool"), ((4,), "float32")], [(0, 0), (None, 0), (0, None)]),
    "loop": ([((4,), "float32"), ((), "int32", 0, 5)], [(0, None), (0, 0)]),
    "count": ([((), "int32", 0, 9)], [(0,)]),
    "pick": ([((), "int32", 0, 2), ((4,), "float32")], [(0, None), (None, 0), (0, 0)]),
    "conv": ([((1, 6, 6, 2), "float32"), ((3, 3, 2, 4), "float32")],
             [(0, None), (None, 0), (0, 0)]),
}
SIZES = {None: (0, 1, 7), 3: (3,)}


def _batchings():
    for name, (_, axes_list) in CASES.items():
        for k, axes in enumerate(axes_list):
            for size in SIZES:
                yield name, axes, size, f"{name}_b{k}_{'dyn' if size is None else size}"


@pytest.fixture(scope="module")
def module_functions():
    text = "\n".join(p.read_text() for p in sorted(PROGRAMS.glob("*.mlir")))
    with ir.Context():
        module = ir.Module.parse(text)
        run_pipeline(module, [Batch(func=n, batched=b, in_axes=a, size=s)
                              for n, a, s, b in _batchings()] + ["canonicalize", "cse"])
        vmfb = compile_bytecode(module.operation.get_asm(binary=True),
                                compile_flags(get_target("cpu"), []))
    config = iree_rt.Config("local-task")
    ctx = iree_rt.SystemContext(config=config)
    ctx.add_vm_module(iree_rt.VmModule.copy_buffer(config.vm_instance, vmfb))
    return ctx.modules.module


def _example(spec, rng, lead=()):
    shape, dtype = spec[0], spec[1]
    shape = tuple(lead) + shape
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if len(spec) > 2:
        return rng.integers(spec[2], spec[3], shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _run(fn, args):
    out = fn(*args)
    out = out if isinstance(out, (tuple, list)) else (out,)
    return [np.asarray(o.to_host()) for o in out]


@pytest.mark.parametrize("name,axes,size,batched", list(_batchings()), ids=lambda v: str(v))
def test_batched_equals_loop(module_functions, name, axes, size, batched):
    specs = CASES[name][0]
    rng = np.random.default_rng(abs(hash(batched)) % 2**32)
    for n in SIZES[size]:
        args = [_example(s, rng, (n,) if a is not None else ()) for s, a in zip(specs, axes)]
        per_example = [_run(module_functions[name],
                            [a[i] if ax is not None else a for a, ax in zip(args, axes)])
                       for i in range(n)]
        got = _run(module_functions[batched], args)
        if n == 0:
            examples = [_example(s, rng) for s in specs]
            shapes = [r.shape for r in _run(module_functions[name], examples)]
            assert [g.shape for g in got] == [(0,) + s for s in shapes]
            continue
        want = [np.stack([r[k] for r in per_example]) for k in range(len(got))]
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_batched_loop_keeps_its_device_affinity():
    # Without stream.affinity IREE copies every loop-carried tensor on each iteration.
    import aotc
    import aotc.lax as lax
    import aotc.numpy as anp

    def running_sums(xs):
        return lax.scan(lambda c, r: (c + r, c * r), anp.zeros(5, np.float32), xs)

    lowered = aotc.jit(aotc.vmap(running_sums)).lower(
        aotc.ShapeDtypeStruct((3, 4, 5), "float32"))
    text = lowered.as_text()
    loops = [line for line in text.splitlines() if "scf.for" in line or "stream.affinity" in line]
    assert any("tensor<3x" in line for line in loops), text
    assert sum("stream.affinity" in line for line in loops) >= 1, text


def test_a_failing_rule_is_the_cause_of_the_error(monkeypatch):
    # A bug inside a rule (an exception that is not a refusal) is reported with the op,
    # its source line and the rule, chained to the bug, whose traceback shows the rule.
    import traceback

    import aotc
    import aotc.numpy as anp
    from aotc.passes import PassError
    from aotc.passes.batching import structured

    bug = RuntimeError("a bug in the rule")

    def broken(region):
        raise bug

    monkeypatch.setattr(structured, "_shift_indices", broken)
    f = aotc.jit(aotc.vmap(lambda x: anp.tanh(x) * 2.0))
    with pytest.raises(aotc.AotcError) as info:
        f.lower(aotc.ShapeDtypeStruct((3, 4), "float32"))
    chain = [info.value]
    while chain[-1].__cause__ is not None:
        chain.append(chain[-1].__cause__)
    pass_error = next(e for e in chain if isinstance(e, PassError))
    assert pass_error.__cause__ is bug
    message = str(pass_error)
    assert "internal error in the batching rule" in message, message
    assert "linalg.generic at test_batching_rules.py:" in message, message
    frames = traceback.extract_tb(bug.__traceback__)
    assert any(frame.filename == structured.__file__ and frame.name == "_generic"
               for frame in frames), frames


def test_rules_are_attached_to_their_rows_of_the_vocabulary():
    from aotc.passes import opset
    from aotc.passes.batching import SCALAR, batch_rule, rule

    for name in ("linalg.generic", "tensor.pad", "linalg.conv_2d_nhwc_hwcf", "scf.while"):
        assert batch_rule(name) is not None
        assert opset.rule_of("batch", name) is batch_rule(name)
    assert batch_rule(SCALAR) is not None and batch_rule("linalg.matvec") is None
    with pytest.raises(KeyError, match=r"add a row Op\('linalg.no_such_op', <group>\)"):
        rule("linalg.no_such_op")(lambda bt, op, operands: [])
    assert batch_rule("linalg.no_such_op") is None
