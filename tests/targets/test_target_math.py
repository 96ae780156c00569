"""aotc's math functions (passes/libm) on the edge CPU targets.

float64 and float32 math compiled for aarch64 runs under qemu-aarch64 and matches numpy
within 2 ulps (float32: 4), as on this CPU (tests/ops/test_libm.py); riscv64 and armv7 code compiles
(IREE's embedded ELF links no libm, so any libm call left would fail to link there).
One export per target family: the suite pays two compiles.
"""

from __future__ import annotations

import numpy as np
import pytest
from target_programs import archive, elf_header
from test_target_edge import aarch64, iree_run_module, value_flag  # noqa: F401 (a fixture)

import aotc
import aotc.numpy as anp
from aotc.targets import ELF_MACHINES

UNARY = ("sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arctanh exp exp2 expm1 "
         "log log2 log10 log1p sqrt cbrt").split()


def math_functions(x64, big64, x32, big32, m=anp):
    """Every function on arguments in (-1, 1), trig also on huge ones, in both widths;
    ``m`` is aotc.numpy (traced) or numpy (the reference)."""
    out = {}
    for suffix, x, big in (("f64", x64, big64), ("f32", x32, big32)):
        for name in UNARY:
            arg = m.abs(x) if name.startswith("log") or name == "sqrt" else x
            out[f"{name}_{suffix}"] = getattr(m, name)(arg)
        out[f"arccosh_{suffix}"] = m.arccosh(1 + m.abs(x) * 10)
        out[f"arctan2_{suffix}"] = m.arctan2(x, x[::-1])
        base = m.abs(x) * 4 + 0.5
        out[f"power_{suffix}"] = m.power(base, x * 50)
        out[f"power_negative_base_{suffix}"] = m.power(-base, m.round(x * 50))
        for name in ("sin", "cos", "tan"):
            out[f"{name}_big_{suffix}"] = getattr(m, name)(big)
    return out


def _reference(*inputs):
    return math_functions(*inputs, m=np)


_RNG = np.random.default_rng(3)
X64 = np.concatenate([_RNG.uniform(-0.99, 0.99, 14), [1e-300, -1e-12]])
# (Not 6381956970095103 * 2**797, the float64 closest to a multiple of pi/2: numpy's cos
# is 8 ulps off there; tests/ops/test_libm.py checks it against the exact value.)
BIG64 = np.array([1e22, -2.0 ** 797, 1.7e308, 1e6 * np.pi, 123456.75, -3e9,
                  2.0 ** 20 + 0.5])
INPUTS = (X64, BIG64, X64.astype(np.float32), np.array([1e30, -3e38, 1e6, 1e4, 2.0 ** 20, 8192,
                                                         -32768, 1e9], np.float32))
SPECS = [aotc.ShapeDtypeStruct(a.shape, a.dtype) for a in INPUTS]


# numpy's float64 functions are within an ulp of the exact values on these inputs, and
# aotc's within 1.4 (docs/accuracy.md); float32 tanh, IREE's own, is within 3.7.
ULPS = {np.dtype(np.float64): 2.0, np.dtype(np.float32): 4.0}


def _within_ulps(got: dict, want: dict) -> list[str]:
    problems = []
    for name, w in want.items():
        g, ulps = got[name], ULPS[w.dtype]
        spacing = np.spacing(np.abs(w).astype(w.dtype))
        with np.errstate(invalid="ignore"):  # inf - inf: equal infinities pass as `same`
            same = (g == w) | (np.isnan(g) & np.isnan(w))
            bad = ~(same | (np.abs(g - w) <= ulps * spacing))
        if g.dtype != w.dtype or bad.any():
            worst = int(np.argmax(bad))
            problems.append(f"{name}: {g.flat[worst]!r} != numpy's {w.flat[worst]!r}")
    return problems


def test_math_on_aarch64_matches_numpy(aarch64, tmp_path):  # noqa: F811
    artifact = aotc.export(math_functions, *SPECS, target="aarch64", name="math_functions")
    (tmp_path / "m.vmfb").write_bytes(artifact.vmfb)
    inputs = [value_flag("--input", a, tmp_path / f"in{i}") for i, a in enumerate(INPUTS)]
    results = artifact.functions["math_functions"].results
    outputs = [f"--output=@{tmp_path}/out{i}.npy" for i in range(len(results))]
    done = iree_run_module(aarch64, "--device=local-task", f"--module={tmp_path}/m.vmfb",
                           "--function=math_functions", *inputs, *outputs)
    assert done.returncode == 0, done.stdout + done.stderr
    got = {spec.name.removeprefix("out['").removesuffix("']"): np.load(tmp_path / f"out{i}.npy")
           for i, spec in enumerate(results)}
    with np.errstate(all="ignore"):
        want = _reference(*INPUTS)
    problems = _within_ulps(got, want)
    assert not problems, "aarch64 (qemu):\n  " + "\n  ".join(problems)


def test_math_on_this_cpu_matches_numpy():
    got = {k: np.asarray(v) for k, v in aotc.jit(math_functions)(*INPUTS).items()}
    with np.errstate(all="ignore"):
        want = _reference(*INPUTS)
    problems = _within_ulps(got, want)
    assert not problems, "this CPU:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("target", ["riscv64", "armv7"])
def test_math_compiles_for_riscv64_and_armv7(target):
    artifact = aotc.export(math_functions, *SPECS, target=target)
    elves = [elf_header(data) for name, data in archive(artifact.vmfb).items()
             if name.endswith(".so")]
    assert elves and {machine for _, machine, _ in elves} == {ELF_MACHINES[target]}
