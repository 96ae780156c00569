"""Differential tests of ``aotc.numpy`` against numpy: shared inputs, tolerances, helpers.

Each test compiles a few batched functions with ``aotc.jit`` -- one per (op family,
dtype, shape case), returning a dict with many ops' results -- and compares every entry
with numpy on the same inputs. An op is written once, as ``lambda m, *xs: ...`` over a
module ``m``, and evaluated with ``m = aotc.numpy`` (traced) and ``m = numpy``.

Every entry must have numpy's dtype and shape, and values within these tolerances,
chosen by the result dtype and the kind of op (rtol, atol):

    result dtype  "exact" ops              "transcendental" ops     "accumulate" ops
    float16       rtol 2e-3,  atol 1e-3    rtol 2e-3,  atol 2e-3    rtol 1e-2,  atol 1e-2
    float32       rtol 2e-6,  atol 1e-6    rtol 1e-5,  atol 1e-6    rtol 1e-5,  atol 1e-5
    float64       rtol 1e-12, atol 1e-12   rtol 1e-12, atol 1e-12   rtol 1e-12, atol 1e-12
    bool, ints    exact equality

"exact" ops are those both sides round once (+ - * / sqrt, comparisons, rounding,
casts, shape ops); "transcendental" ones (exp, log, sin, tanh, power, ...) are
approximations on both sides; "accumulate" ops (reductions, contractions) may sum in a
different order. NaN positions must match exactly, and so must infinities and their
signs (``np.testing.assert_allclose(..., equal_nan=True)``).
"""

from __future__ import annotations

import collections
import re
import warnings

import numpy as np
import pytest

import aotc
import aotc.numpy as anp

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64"]
FLOATS = ["float16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8"]
SIGNED = ["int8", "int16", "int32", "int64"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]

TOLERANCES = {
    "float16": {"exact": (2e-3, 1e-3), "transcendental": (2e-3, 2e-3), "accumulate": (1e-2, 1e-2)},
    "float32": {"exact": (2e-6, 1e-6), "transcendental": (1e-5, 1e-6), "accumulate": (1e-5, 1e-5)},
    "float64": {
        "exact": (1e-12, 1e-12),
        "transcendental": (1e-12, 1e-12),
        "accumulate": (1e-12, 1e-12),
    },
}

# numpy ufuncs that are approximations (not correctly rounded) in numpy and in aotc.
TRANSCENDENTAL = frozenset(
    """
    exp exp2 log log2 log10 log1p expm1 cbrt sin cos tan arcsin arccos arctan arctan2
    asin acos atan atan2 sinh cosh tanh arcsinh arccosh arctanh power pow
""".split()
)

# Compiles and cache hits of every jitted function the tests ran (reported at the end).
COMPILE_STATS: collections.Counter = collections.Counter()
# Random programs of test_properties.py: how many ran, how many disagreed (and how).
PROPERTY_STATS: dict = {"programs": 0, "disagreements": 0, "details": []}


def tolerance(dtype, kind: str = "exact") -> tuple[float, float]:
    return TOLERANCES[np.dtype(dtype).name][kind]


# ---- running ------------------------------------------------------------------------


def to_numpy(tree):
    if isinstance(tree, dict):
        return {k: to_numpy(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(to_numpy(v) for v in tree)
    return np.asarray(tree)


def jit_call(fn, *args, **jit_kwargs):
    """Compiles ``fn`` with aotc.jit, calls it on ``args``, returns numpy results."""
    jitted = aotc.jit(fn, **jit_kwargs)
    try:
        out = jitted(*args)
    finally:
        COMPILE_STATS.update(jitted.stats)
    return to_numpy(out)


def _entries(name: str, value) -> dict:
    """An op's result as named entries: a list or tuple of arrays (split, broadcast_arrays)
    becomes ``name[0]``, ``name[1]``, ..."""
    if isinstance(value, (list, tuple)):
        return {f"{name}[{i}]": v for i, v in enumerate(value)}
    return {name: value}


def numpy_ops(ops: dict, *args) -> tuple[dict, dict]:
    """numpy's results of ``ops`` ({name: lambda m, *args}) and the names numpy rejects
    (with their exception)."""
    results, rejected = {}, {}
    for name, op in ops.items():
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # mean of empty, ddof <= 0
                value = op(np, *args)
        except (TypeError, ValueError, OverflowError) as e:
            rejected[name] = e
            continue
        results.update({k: np.asarray(v) for k, v in _entries(name, value).items()})
    return results, rejected


# The dtypes a per-dtype test runs only ``in_own_dtype``'s ops for.
NARROW_DTYPES = ("bool", "int8", "int16", "uint8", "float16")


def ops_for(ops: dict, dtype, *args) -> dict:
    """``ops`` for a full dtype; for a narrow one (NARROW_DTYPES), ``in_own_dtype``'s."""
    return in_own_dtype(ops, dtype, *args) if str(dtype) in NARROW_DTYPES else ops


def in_own_dtype(ops: dict, dtype, *args) -> dict:
    """The ops of which some numpy result has ``dtype``: the others convert their input
    to another dtype first (float64, int64) and then compute as for every input of their
    kind, which a run with a full dtype (int32, float32, float64) checks; a test's
    narrow dtypes (float16, uint8, bool) need only these. Ops numpy rejects stay (their
    rejection is checked)."""
    results, rejected = numpy_ops(ops, *args)

    def computes_in_dtype(name: str) -> bool:  # its entries: name, or name[0], name[1], ...
        return any(v.dtype == np.dtype(dtype) for k, v in results.items()
                   if k == name or (k.startswith(f"{name}[") and k[len(name) + 1:-1].isdigit()))
    return {name: op for name, op in ops.items() if name in rejected or computes_in_dtype(name)}


def traced_ops(ops: dict):
    """A function computing ``ops`` with aotc.numpy, returning a dict of their results."""

    def batch(*args):
        out = {}
        for name, op in ops.items():
            out.update(_entries(name, op(anp, *args)))
        return out

    return batch


def compare_ops(ops: dict, *args, kinds=None, check_rejected: bool = True, where: str = ""):
    """Runs ``ops`` on ``args`` in one compiled function and with numpy; asserts every
    result matches. Ops numpy rejects for these inputs must be rejected by aotc too (at
    trace time, so it costs no compile). Returns the aotc results."""
    want, rejected = numpy_ops(ops, *args)
    supported = {n: op for n, op in ops.items() if n in want or f"{n}[0]" in want}
    got = jit_call(traced_ops(supported), *args) if supported else {}
    assert_all(got, want, kinds, where)
    if check_rejected:
        accepted = []
        for name, err in rejected.items():
            try:
                aotc.jit(traced_ops({name: ops[name]})).lower(*args)
            except (aotc.AotcError, TypeError, ValueError):
                continue
            accepted.append(f"[{name}] numpy raises {type(err).__name__}: {err}")
        assert not accepted, f"{where}: aotc accepts what numpy rejects:\n" + "\n".join(accepted)
    return got


# ---- comparing ----------------------------------------------------------------------


def kind_of_base(name: str) -> str:
    return name.split("[")[0].split("(")[0].strip()


def kind_of(name: str) -> str:
    """The tolerance kind of a result named like "exp", "x ** 2.5" or "arctan2(x, y)"."""
    words = set(re.findall(r"[a-z_0-9]+", name))
    return "transcendental" if words & TRANSCENDENTAL or "**" in name else "exact"


def assert_same(got, want, kind: str = "exact", name: str = "result") -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype}, numpy gives {want.dtype}"
    assert got.shape == want.shape, f"{name}: shape {got.shape}, numpy gives {want.shape}"
    if want.dtype.kind in "fc":
        # complex: each part within its float dtype's tolerance of |want|
        rtol, atol = tolerance(want.real.dtype, kind)
        np.testing.assert_allclose(
            got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{name} ({kind} tolerance)"
        )
        # assert_allclose compares infinities only by value; also require equal signs of
        # zero-vs-inf and NaN positions explicitly (cheap and clearer when it fails).
        np.testing.assert_array_equal(
            np.isnan(got), np.isnan(want), err_msg=f"{name}: NaN positions"
        )
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


def assert_all(got: dict, want: dict, kinds=None, where: str = "") -> None:
    """Compares every entry; one AssertionError listing all ops that disagree."""
    failures = []
    assert set(got) == set(want), f"{where}: result names differ: {set(got) ^ set(want)}"
    for name in want:
        kind = (kinds(name) if callable(kinds) else kinds) or kind_of(name)
        try:
            assert_same(got[name], want[name], kind, name)
        except AssertionError as e:
            failures.append(f"[{name}] {e}")
    if failures:
        raise AssertionError(
            f"{where}: {len(failures)} of {len(want)} ops disagree with numpy:\n"
            + "\n".join(failures)
        )


# ---- inputs -------------------------------------------------------------------------

FLOAT_SPECIALS = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    1.5,
    2.5,
    -2.5,
    3.0,
    1e-3,
    100.0,
    np.nan,
    np.inf,
    -np.inf,
]


def int_specials(dtype) -> list[int]:
    info = np.iinfo(dtype)
    base = [0, 1, 2, 3, 7, info.max, info.max - 1]
    if info.min < 0:
        base += [-1, -2, -3, -7, info.min, info.min + 1]
    else:
        base += [128, 255]
    return base


def specials(dtype) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return np.array([False, True])
    if dt.kind == "f":
        return np.array(FLOAT_SPECIALS, dtype=dt)
    return np.array(int_specials(dt), dtype=dt)


def sample(dtype, shape, seed: int = 0, with_specials: bool = True, low=-5, high=5) -> np.ndarray:
    """Deterministic data: the dtype's special values first (if they fit), then random."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    if dt == np.bool_:
        rand = rng.integers(0, 2, n).astype(bool)
    elif dt.kind == "f":
        rand = rng.uniform(low, high, n).astype(dt)
    else:
        info = np.iinfo(dt)
        rand = rng.integers(max(low * 4, info.min), min(high * 4, info.max) + 1, n).astype(dt)
    if with_specials:
        sp = specials(dt)
        k = min(len(sp), n)
        rand[:k] = sp[:k]
        rng.shuffle(rand)
    return rand.reshape(shape)


def cross(dtype) -> tuple[np.ndarray, np.ndarray]:
    """Two same-shape arrays holding every pair of the dtype's special values."""
    sp = specials(dtype)
    x, y = np.meshgrid(sp, sp, indexing="ij")
    return np.ascontiguousarray(x), np.ascontiguousarray(y)


def param_dtypes(names):
    return pytest.mark.parametrize("dtype", names, ids=names)


def shape_id(shape) -> str:
    return "x".join(map(str, shape)) if shape else "0d"


# ---- error messages -------------------------------------------------------------------


def raises_match(exc, *fragments):
    """pytest.raises requiring every fragment (plain text) in the message."""
    return pytest.raises(exc, match="(?s)" + "".join(f"(?=.*{re.escape(f)})" for f in fragments))


# ---- reporting ----------------------------------------------------------------------


def pytest_terminal_summary(terminalreporter):
    if COMPILE_STATS:
        s = COMPILE_STATS
        terminalreporter.write_line(
            f"aotc (tests/ops): {s['traces']} traces, {s['compiles']} IREE compiles, "
            f"{s['disk_hits']} disk-cache hits"
        )
    if PROPERTY_STATS["programs"]:
        p = PROPERTY_STATS
        terminalreporter.write_line(
            f"aotc (tests/ops): {p['programs']} random programs, {p['disagreements']} "
            f"disagreed with numpy"
        )
