"""``aotc.nn``: neural-network functions (activations, normalization, convolution,
pooling), with ``jax.nn``'s names where JAX has them.

Use them inside functions traced by ``aotc.jit`` or ``aotc.export``.
"""

from __future__ import annotations

from . import namespaces as _namespaces

globals().update(_namespaces.collect("nn"))


def supported_functions() -> list[str]:
    """Every public function of aotc.nn."""
    return sorted(_namespaces.collect("nn"))


def __getattr__(name: str):
    """A name aotc does not define: an AttributeError saying so (aotc/namespaces.py)."""
    raise _namespaces.missing_name('aotc.nn', name)
