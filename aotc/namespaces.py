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
import sys

from .core import traced_at_user_line
from .ops import views

MODULES = (
    "aotc.ops.elementwise",
    "aotc.ops.reductions",
    "aotc.ops.shape",
    "aotc.ops.creation",
    "aotc.ops.indexing",
    "aotc.ops.dynamic_slicing",
    "aotc.ops.selection",
    "aotc.ops.updates",
    "aotc.ops.sorting",
    "aotc.ops.cumulative",
    "aotc.ops.contraction",
    "aotc.ops.rearrange",
    "aotc.ops.matrix",
    "aotc.ops.control",
    "aotc.ops.scan",
    "aotc.ops.convolution",
    "aotc.ops.pooling",
    "aotc.ops.nn",
    "aotc.ops.statistics",
    "aotc.ops.views",
    "aotc.ops.complex_parts",
    "aotc.ops.float_parts",
    "aotc.ops.predicates",
    "aotc.ops.differences",
    "aotc.ops.polynomials",
    "aotc.ops.histograms",
    "aotc.ops.covariance",
    "aotc.ops.lax_names",
    "aotc.ops.array_api",
    "aotc.ops.windows",
    "aotc.ops.constructors",
    "aotc.ops.index_tricks",
    "aotc.ops.choosing",
    "aotc.ops.setops",
    "aotc.ops.nan_statistics",
    "aotc.ops.partitioning",
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
                traced = _with_numpy_aliasing(namespace, name, fn)
                found[name] = traced_at_user_line(traced, (namespace, name))
            else:
                found[name] = fn
    return found


SUPPORTED_DOC = "docs/supported.md"

# The library each aotc namespace follows, by its module name: where a name missing from
# aotc may exist (the error says so).
REFERENCES = {
    "aotc.numpy": ("numpy", "jax.numpy"),
    "aotc.numpy.linalg": ("numpy.linalg", "jax.numpy.linalg"),
    "aotc.linalg": ("numpy.linalg", "jax.numpy.linalg"),
    "aotc.scipy.linalg": ("scipy.linalg", "jax.scipy.linalg"),
    "aotc.lax": ("jax.lax",),
    "aotc.lax.linalg": ("jax.lax.linalg",),
    "aotc.nn": ("jax.nn",),
    "aotc.random": ("jax.random",),
}


def _has(module_name: str, name: str) -> bool:
    """Whether the reference module has ``name``: numpy is asked always, JAX only when it is
    already imported (a missing-name lookup must stay cheap: ``hasattr`` runs it)."""
    if module_name.split(".")[0] == "numpy":
        import numpy  # noqa: F401  (numpy.linalg is a submodule numpy imports itself)
    module = sys.modules.get(module_name)
    # (not aotc's own namespace standing in for the reference under an import alias)
    return (module is not None and getattr(module, "__name__", None) == module_name
            and hasattr(module, name))


def missing_name(namespace: str, name: str) -> AttributeError:
    """The error of a module ``__getattr__`` for a name ``namespace`` does not define: aotc
    does not support it yet, which reference library has it, where the supported list is.
    Private and dunder names get Python's plain message (tools probe those)."""
    plain = f"module {namespace!r} has no attribute {name!r}"
    if name.startswith("_"):
        return AttributeError(plain)
    public = {"aotc.linalg": "aotc.numpy.linalg"}.get(namespace, namespace)
    found = [ref for ref in REFERENCES.get(namespace, ()) if _has(ref, name)]
    where = (f"{' and '.join(f'{ref}.{name}' for ref in found)} exists, but " if found else "")
    return AttributeError(
        f"{plain}: {where}aotc does not support {public}.{name} yet; {SUPPORTED_DOC} lists "
        f"what aotc supports (or compute this step outside the traced function and pass "
        f"the result in)"
    )
