"""``aotc.lax``: structured control flow and lower-level array ops, with ``jax.lax``'s names.

Use them inside functions traced by ``aotc.jit`` or ``aotc.export``.
"""

from __future__ import annotations

import sys as _sys

from . import lax_linalg as linalg
from . import namespaces as _namespaces

globals().update(_namespaces.collect("lax"))
_sys.modules[__name__ + ".linalg"] = linalg  # ``import aotc.lax.linalg``, as jax.lax.linalg


def supported_functions() -> list[str]:
    """Every public function of aotc.lax."""
    return sorted(_namespaces.collect("lax"))


def __getattr__(name: str):
    """A name aotc does not define: an AttributeError saying so (aotc/namespaces.py)."""
    raise _namespaces.missing_name('aotc.lax', name)
