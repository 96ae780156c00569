"""The names of ``ops/lax_ops.py``'s table ``LAX`` as module attributes, for ``aotc.lax``.

A module of its own: lax's names (``max``, ``slice``, ``reshape``, ``sort``, ...) shadow
builtins and numpy's functions, which the implementations in ``lax_ops.py`` use.
"""

from __future__ import annotations

from .lax_ops import LAX

globals().update(LAX)

EXPORTS: dict[str, list[str]] = {"lax": list(LAX)}
