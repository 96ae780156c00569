"""How much of jax.numpy's, jax.lax's and jax.tree_util's public surface aotc has: prints
the callables aotc.numpy, aotc.lax and aotc.tree_util lack, and fails when coverage drops
below the figures reached (a ratchet: raise them as names are added). Skipped without
JAX."""

from __future__ import annotations

import pytest

import aotc.lax as alax
import aotc.numpy as anp
import aotc.tree_util as atu

# present / JAX's public callables, at least (jax 0.10)
MIN_COVERAGE = {"numpy": 364 / 402, "lax": 109 / 217, "tree_util": 34 / 34}


def _coverage(reference, ours) -> tuple[float, list[str]]:
    names = [n for n in dir(reference) if not n.startswith("_")
             and callable(getattr(reference, n))]
    missing = [n for n in names if not hasattr(ours, n)]
    return (len(names) - len(missing)) / len(names), missing


@pytest.mark.parametrize("namespace", ["numpy", "lax", "tree_util"])
def test_coverage_of_jax_does_not_drop(namespace):
    jax = pytest.importorskip("jax")
    reference = {"numpy": jax.numpy, "lax": jax.lax, "tree_util": jax.tree_util}[namespace]
    ours = {"numpy": anp, "lax": alax, "tree_util": atu}[namespace]
    coverage, missing = _coverage(reference, ours)
    print(f"\njax.{namespace}: {coverage:.1%} covered; missing ({len(missing)}): "
          f"{' '.join(missing)}")
    assert coverage >= MIN_COVERAGE[namespace] - 1e-9, (
        f"aotc.{namespace} covers {coverage:.1%} of jax.{namespace}, below "
        f"{MIN_COVERAGE[namespace]:.1%}; missing: {missing}")
