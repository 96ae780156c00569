"""The kernel corpus of ``polybench.py`` compiled by ``aotc.jit``, checked against numpy.

Every kernel runs three times from the same fresh inputs: with numpy, compiled by
``aotc.jit(kernel, static_argnums=<its sizes>)`` on numpy arrays, and exported by
``aotc.export`` and called through the runtime on device Arrays. The returned value and
every argument afterwards must match numpy's (rtol 1e-10, atol 1e-12): a kernel that
writes into its arguments must leave them as numpy does, and one that writes nothing
must leave them untouched.

``NOT_YET`` names the kernels expected to fail today. They are strict xfails: a kernel
that starts to pass fails its test until it is taken off the list.
"""

from __future__ import annotations

import numpy as np
import pytest

import aotc
from aotc import runtime
from kernels.polybench import KERNELS

# Kernels expected to fail today, and why (none: durbin's reversed-slice update, which
# IREE miscompiled in place, now goes through lowering.insert_slice's barrier).
NOT_YET: set[str] = set()
_WHY: dict[str, str] = {}
_NOT_YET_REASON = "in-place updates of traced arrays are not supported yet"

RTOL, ATOL = 1e-10, 1e-12


def _fresh(kernel):
    return kernel.init(kernel.sizes)


def _copies(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _leaves(out, path="result"):
    """(path, leaf) pairs of a returned pytree of tuples, lists and dicts."""
    if isinstance(out, (tuple, list)):
        return [pair for i, o in enumerate(out) for pair in _leaves(o, f"{path}[{i}]")]
    if isinstance(out, dict):
        return [pair for k, o in out.items() for pair in _leaves(o, f"{path}[{k!r}]")]
    return [(path, out)]


def _assert_close(got, want, what):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, numpy's {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, numpy's {want.dtype}"
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=what)


def _params():
    for name in KERNELS:
        marks = ()
        if name in NOT_YET:
            marks = pytest.mark.xfail(strict=True, reason=_WHY.get(name, _NOT_YET_REASON))
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", _params())
def test_kernel_matches_numpy(name):
    """jit on numpy arrays, then the exported artifact (the same program: a disk-cache
    hit) loaded by the runtime and called on device Arrays, which it updates."""
    kernel = KERNELS[name]
    pristine = _fresh(kernel)
    want_args = _copies(pristine)
    want = kernel.fn(*want_args)

    got_args = _copies(pristine)
    got = aotc.jit(kernel.fn, static_argnums=kernel.static)(*got_args)
    _check(kernel, pristine, want, want_args, got, got_args, "jit")

    art = aotc.export(kernel.fn, *pristine, static_argnums=kernel.static)
    exported = runtime.load(art.vmfb)[kernel.fn.__name__]
    arrays = tuple(aotc.device_put(a) if isinstance(a, np.ndarray) else a for a in pristine)
    got = exported(*(a for i, a in enumerate(arrays) if i not in kernel.static))
    _check(kernel, pristine, want, want_args, got, arrays, "exported, on device Arrays")


def _check(kernel, pristine, want, want_args, got, got_args, how):
    """The results and the arguments after the call are numpy's (a pure kernel leaves
    its arguments as they were)."""
    params = kernel.fn.__code__.co_varnames[:kernel.fn.__code__.co_argcount]
    want_leaves, got_leaves = _leaves(want), _leaves(got)
    assert [p for p, _ in got_leaves] == [p for p, _ in want_leaves], (
        f"{how}: returned {got!r}, numpy's kernel returned {want!r}")
    for (path, g), (_, w) in zip(got_leaves, want_leaves):
        if w is None:
            assert g is None, f"{how}: {path}: {g!r}, numpy's kernel returned None"
        else:
            _assert_close(g, w, f"{how}: {path}")
    for pos, (g, w) in enumerate(zip(got_args, want_args)):
        if isinstance(w, np.ndarray):
            _assert_close(g, w, f"{how}: argument {pos} ({params[pos]}) after the call")
    if not kernel.mutates:
        for pos, (g, p) in enumerate(zip(got_args, pristine)):
            if isinstance(p, np.ndarray):
                np.testing.assert_array_equal(
                    np.asarray(g), p,
                    err_msg=f"{how}: argument {pos} ({params[pos]}) of a pure kernel changed")


def test_kernels_match_their_numpy_definition_of_mutation():
    """``mutates`` lists exactly the arguments numpy's run of the kernel changes, and
    ``static`` exactly its integer size arguments; ``init`` gives fresh arrays."""
    assert len(KERNELS) >= 30
    wrong = {}
    for name, kernel in KERNELS.items():
        pristine = _fresh(kernel)
        again = _fresh(kernel)
        assert all(a is not b for a, b in zip(pristine, again) if isinstance(a, np.ndarray))
        sizes = tuple(i for i, a in enumerate(pristine) if isinstance(a, int))
        assert kernel.static == sizes, f"{name}: static {kernel.static}, sizes at {sizes}"
        args = _copies(pristine)
        kernel.fn(*args)
        changed = tuple(i for i, (a, p) in enumerate(zip(args, pristine))
                        if isinstance(p, np.ndarray) and not np.array_equal(a, p))
        if changed != kernel.mutates:
            wrong[name] = {"mutates": kernel.mutates, "changed": changed}
    assert not wrong, wrong
