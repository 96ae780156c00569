"""JAX programs in the style of JAX's tutorials, written once against ``jax`` (programs/)
and run twice: with JAX, and with ``jax`` replaced by ``aotc`` through an import alias
only (``sys.modules``); aotc must give JAX's results: the same pytree structure, leaves
that are arrays where JAX's are, JAX's values (float32 tolerance) and, under
``aotc.config.x64 = False``, JAX's dtypes."""

from __future__ import annotations

import contextlib
import importlib.util
import pathlib
import sys

import numpy as np
import pytest

import aotc
import aotc.lax
import aotc.nn
import aotc.numpy
import aotc.random
import aotc.tree_util

jax = pytest.importorskip("jax")

PROGRAMS = pathlib.Path(__file__).parent / "programs"
ALIASES = {"jax": aotc, "jax.numpy": aotc.numpy, "jax.lax": aotc.lax, "jax.nn": aotc.nn,
           "jax.random": aotc.random, "jax.tree_util": aotc.tree_util}

# Programs that need what aotc does not have yet, and the name they fail on.
# (Empty since aotc.grad landed: grad_training runs against JAX's results.)
LACKS: dict[str, tuple[str, str]] = {}
NAMES = sorted(p.stem for p in PROGRAMS.glob("*.py"))


@contextlib.contextmanager
def _aliased(aliases: dict):
    saved = {name: sys.modules.get(name) for name in aliases}
    sys.modules.update(aliases)
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def _run(name: str, aliases: dict):
    """Loads programs/<name>.py afresh (its imports resolved through ``aliases``) and
    returns its ``main()``."""
    spec = importlib.util.spec_from_file_location(f"jax_program_{name}", PROGRAMS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    with _aliased(aliases):
        spec.loader.exec_module(module)
        return module.main()


def _x64_off():
    """aotc under JAX's dtype rules (x64 disabled), where the option exists."""
    if "x64" in getattr(aotc.config, "OPTIONS", {}):
        return aotc.config.override(x64=False), True
    return contextlib.nullcontext(), False


@pytest.fixture(scope="module")
def jax_results():
    assert not jax.config.jax_enable_x64, "the reference is JAX's default, x64 disabled"
    return {}


@pytest.mark.parametrize("name", [n for n in NAMES if n not in LACKS])
def test_program_gives_jax_results(name, jax_results):
    want = _run(name, {})
    x64_off, dtypes_checked = _x64_off()
    with x64_off:
        got = _run(name, ALIASES)
    got_paths, got_leaves = _leaves(aotc.tree_util, got)
    want_paths, want_leaves = _leaves(jax.tree_util, want)
    assert got_paths == want_paths, f"{name}: structure {got_paths} vs JAX's {want_paths}"
    for path, g, w in zip(got_paths, got_leaves, want_leaves):
        where = f"{name} {path}"
        assert isinstance(g, aotc.numpy.ndarray) == isinstance(w, jax.Array), (
            f"{where}: {type(g).__name__} where JAX gives {type(w).__name__}")
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"{where}: shape {g.shape} vs JAX's {w.shape}"
        if dtypes_checked:
            assert g.dtype == w.dtype, f"{where}: dtype {g.dtype} vs JAX's {w.dtype}"
        else:
            assert g.dtype.kind == w.dtype.kind, f"{where}: dtype {g.dtype} vs JAX's {w.dtype}"
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g.astype(w.dtype), w, rtol=2e-5, atol=2e-5,
                                       err_msg=where)
        else:
            np.testing.assert_array_equal(g, w, err_msg=where)


def _leaves(tree_util, tree):
    pairs = tree_util.tree_flatten_with_path(tree)[0]
    return [tree_util.keystr(path) for path, _ in pairs], [leaf for _, leaf in pairs]


@pytest.mark.parametrize("name", sorted(LACKS))
def test_programs_that_need_what_aotc_lacks_say_so(name):
    """Listed with the reason; when the feature lands this fails: move the program up."""
    missing, reason = LACKS[name]
    _run(name, {})  # it is a working JAX program
    with pytest.raises(AttributeError, match=missing):
        _run(name, ALIASES)


def test_enough_programs():
    assert len([n for n in NAMES if n not in LACKS]) >= 15
