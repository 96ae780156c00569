"""Which ops module supplies which public names of ``aotc.numpy``, ``aotc.lax`` and ``aotc.nn``.

Every module in ``MODULES`` declares a table ``EXPORTS = {"numpy": [...], "lax": [...],
"nn": [...], "methods": [...]}`` of the functions it defines for each namespace
(``methods``: the ndarray methods of traced arrays that call the numpy function of the
same name); the namespace modules collect them from here, so adding an op never means
editing a second file's import list. Each exported function is wrapped once so that the
MLIR ops it emits carry the location of the user's line that called it.
"""

from __future__ import annotations

import importlib

from .core import traced_at_user_line
from .ops import views

MODULES = (
    "aotc.ops.elementwise",
    "aotc.ops.reductions",
    "aotc.ops.shape",
    "aotc.ops.creation",
    "aotc.ops.indexing",
    "aotc.ops.selection",
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
    "aotc.ops.views",
)


def _with_numpy_aliasing(namespace: str, name: str, fn):
    """What numpy returns views of returns views (ops/views.py); every other function
    returns new arrays, never its argument object (numpy's ``asarray`` may)."""
    if namespace == "numpy" and name in views.VIEW_FUNCTIONS:
        return views.VIEW_FUNCTIONS[name]
    return fn if name in views.SAME_OBJECT else views.returns_new_arrays(fn)


def collect(namespace: str) -> dict:
    """``{name: function}`` of every op the modules export to ``namespace``."""
    found: dict = {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in getattr(module, "EXPORTS", {}).get(namespace, ()):
            if name in found:
                raise ImportError(f"{namespace}.{name} is exported by two modules: "
                                  f"{found[name].__module__} and {module_name}")
            fn = getattr(module, name)
            if namespace != "methods":
                found[name] = traced_at_user_line(_with_numpy_aliasing(namespace, name, fn))
            else:
                found[name] = fn
    return found
