"""Which ops module supplies which public names of ``aotc.numpy``, ``aotc.lax`` and ``aotc.nn``.

Every module in ``MODULES`` declares a table ``EXPORTS = {"numpy": [...], "lax": [...],
"nn": [...]}`` of the functions it defines for each namespace; the namespace modules
collect them from here, so adding an op never means editing a second file's import list.
"""

from __future__ import annotations

import importlib

MODULES = (
    "aotc.ops.indexing",
    "aotc.ops.updates",
    "aotc.ops.sorting",
    "aotc.ops.cumulative",
    "aotc.ops.contraction",
    "aotc.ops.rearrange",
    "aotc.ops.matrix",
    "aotc.ops.control",
    "aotc.ops.convolution",
    "aotc.ops.nn",
    "aotc.ops.statistics",
)


def collect(namespace: str) -> dict:
    """``{name: function}`` of every op the modules export to ``namespace``."""
    found: dict = {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in getattr(module, "EXPORTS", {}).get(namespace, ()):
            if name in found:
                raise ImportError(f"{namespace}.{name} is exported by two modules: "
                                  f"{found[name].__module__} and {module_name}")
            found[name] = getattr(module, name)
    return found
