"""The list of supported functions, rendered from the code as markdown.

    python -m aotc.supported > docs/supported.md

Each namespace lists its public functions with the first paragraph of their docstrings;
the ufunc-method and array-method sections come from the tables numpy calls are
dispatched with (``aotc/numpy_dispatch.py``). tests/test_supported_docs.py fails when
docs/supported.md is not what this module renders.
"""

from __future__ import annotations

import importlib
import inspect
import re
import types

from . import numpy as _numpy  # noqa: F401  (binds numpy_dispatch to aotc.numpy)
from . import numpy_dispatch

REGENERATE = "python -m aotc.supported > docs/supported.md"

# (module, what it holds, the reference a function without a docstring follows); a module
# that does not exist (yet) is left out.
NAMESPACES = (
    ("aotc.numpy", "numpy's functions, names and semantics; also what `np.<name>(x)` on a "
     "traced array runs", "numpy"),
    ("aotc.numpy.linalg", "numpy.linalg's functions; also what `np.linalg.<name>(x)` on a "
     "traced array runs", "numpy.linalg"),
    ("aotc.numpy.fft", "numpy.fft's transforms, frequencies and shifts; also what "
     "`np.fft.<name>(x)` on a traced array runs", "numpy.fft"),
    ("aotc.scipy.linalg", "scipy.linalg's triangular, Cholesky, LU, QR, symmetric eigen and "
     "singular value functions, for stacks of matrices as jax.scipy.linalg", "scipy.linalg"),
    ("aotc.lax", "structured control flow and lower-level ops, with jax.lax's names", "jax.lax"),
    ("aotc.lax.linalg", "jax.lax.linalg's factorizations, with JAX's result orders",
     "jax.lax.linalg"),
    ("aotc.nn", "neural-network functions, with jax.nn's names where JAX has them", "jax.nn"),
    ("aotc.random", "random numbers from explicit keys, with jax.random's names", "jax.random"),
)

HEADER = f"""# Supported functions

<!-- Generated from the code by `{REGENERATE}`; do not edit by hand. -->

These functions run inside a function traced by `aotc.jit` or `aotc.export`, and eagerly
(returning `aotc.runtime.Array`s) when called outside one. numpy's own
functions work on traced arrays too: `np.tanh(x)`, `np.sum(x, axis=0)` or
`np.linalg.norm(x)` is traced by the `aotc.numpy` function of the same name, so the
`aotc.numpy`, `aotc.numpy.linalg` and `aotc.numpy.fft` lists are also the numpy functions
that trace. Any
other numpy function raises `aotc.errors.UnsupportedOpError` naming it.
`aotc.numpy.supported_functions()` returns the `aotc.numpy` list.
"""


def import_optional(name: str) -> types.ModuleType | None:
    """The namespace module, or None where it does not exist. A namespace may be a module
    attribute rather than an importable path (``aotc.numpy.linalg`` is ``aotc.linalg``)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if not name.startswith(e.name or "\0"):  # it exists, but something it imports is missing
            raise
    parent, _, attribute = name.rpartition(".")
    found = getattr(import_optional(parent), attribute, None) if parent else None
    return found if isinstance(found, types.ModuleType) else None


def public_functions(module: types.ModuleType) -> list[str]:
    """The module's public functions: its own ``supported_functions()``, else its
    ``__all__``, else the functions defined in it (not the helpers it imports)."""
    own = getattr(module, "supported_functions", None)
    if callable(own) and getattr(own, "__module__", None) == module.__name__:
        return list(own())
    if hasattr(module, "__all__"):
        return sorted(module.__all__)
    return sorted(
        name for name, value in vars(module).items()
        if not name.startswith("_") and inspect.isfunction(value)
        and value.__module__ == module.__name__
    )


def summary(fn, reference: str) -> str:
    """The docstring's first sentence, on one line and safe in a markdown table; without a
    docstring, the reference function it follows."""
    doc = inspect.getdoc(fn)
    if not doc:
        return f"as `{reference}`"
    paragraph = " ".join(doc.split("\n\n")[0].split())
    return re.split(r"(?<=\.)\s+(?=[A-Z])", paragraph)[0].replace("|", "\\|")


def _table(rows) -> list[str]:
    return ["| function | summary |", "|---|---|"] + [f"| `{n}` | {s} |" for n, s in rows]


def render_namespace(name: str, about: str, reference: str) -> list[str]:
    module = import_optional(name)
    if module is None:
        return []
    names = public_functions(module)
    rows = [(n, summary(getattr(module, n), f"{reference}.{n}")) for n in names]
    return ["", f"## {name} ({len(names)} functions)", "", f"{about}.", ""] + _table(rows)


def render_ufunc_methods() -> list[str]:
    rows = []
    tables = (("reduce", numpy_dispatch.REDUCTIONS), ("accumulate", numpy_dispatch.ACCUMULATIONS))
    for method, table in tables:
        for ufunc, counterpart in sorted(table.items()):
            if numpy_dispatch.resolve(f"numpy.{counterpart}") is not None:
                rows.append(f"| `np.{ufunc}.{method}` | `aotc.numpy.{counterpart}` |")
    return [
        "", "## numpy ufunc methods", "",
        "`ufunc(...)` runs the `aotc.numpy` function of the ufunc's name; `ufunc.outer(a, b)`",
        "works for each of them. Reductions and accumulations (`axis` defaults to 0, as in",
        "numpy) run these functions; `ufunc.at` and `ufunc.reduceat` are not supported.", "",
        "| numpy | traced as |", "|---|---|",
    ] + rows


def render_array_methods() -> list[str]:
    from .core import Tracer

    methods = sorted(
        name for name, value in vars(Tracer).items()
        if not name.startswith("_") and callable(value)
        and name not in numpy_dispatch.IN_PLACE_METHODS
        and numpy_dispatch.resolve(f"numpy.{name}") is not None
    )
    in_place = sorted(n for n in numpy_dispatch.IN_PLACE_METHODS if not n.startswith("_"))
    refused = ", ".join(f"`x.{n}()`" for n in in_place)
    return [
        "", "## Array methods", "",
        "Methods of traced arrays, each running the `aotc.numpy` function of its name:", "",
        ", ".join(f"`x.{n}()`" for n in methods) + ".", "",
        "Also `x.view(dtype)` (the bytes read as another dtype, a view as in numpy), "
        "`x.T`, `x.mT`, `x.real`, `x.imag`, `x.at[...]` (JAX's updates and `get` with "
        "their `mode=`), `x.shape`, `x.ndim`, `x.size`, `x.dtype`, `x.itemsize`, "
        "`x.nbytes`, `x.strides`, and Python's `round(x)`, `divmod(x, y)`, `copy.copy(x)`.",
        "",
        "Writes work as in numpy (`x[i] = v`, `x += y` and the other augmented "
        "assignments, `x.sort()`, `x.fill(v)`, `x.partition(k)`, `x.put(i, v)`, `out=` of "
        "ufuncs, `np.add.at`), through views too; arguments written into are updated after "
        "the call (numpy arrays in place, runtime `Array`s in their own device buffer), "
        "also under `vmap` (each example writes its slice).",
        f"Other in-place methods ({refused}) raise an error naming the functional form.",
    ]


def render() -> str:
    lines = HEADER.rstrip("\n").split("\n")
    lines += render_ufunc_methods() + render_array_methods()
    for namespace in NAMESPACES:
        lines += render_namespace(*namespace)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
