"""``aotc.lax``: structured control flow and lower-level array ops, with ``jax.lax``'s names.

Use them inside functions traced by ``aotc.jit`` or ``aotc.export``.
"""

from __future__ import annotations

from . import namespaces as _namespaces

globals().update(_namespaces.collect("lax"))


def supported_functions() -> list[str]:
    """Every public function of aotc.lax."""
    return sorted(_namespaces.collect("lax"))


def __getattr__(name: str):
    """A name aotc does not define: an AttributeError saying so (aotc/namespaces.py)."""
    raise _namespaces.missing_name('aotc.lax', name)
