"""aotc: compile numpy-style Python functions ahead of time with IREE.

    import aotc, aotc.numpy as anp

    @aotc.jit
    def f(x):
        return anp.tanh(x) * 2

    art = aotc.export(f, aotc.ShapeDtypeStruct((4,), "float32"))
    art.save("f.vmfb")                    # run it later with aotc.runtime.load("f.vmfb")

The compiler-side names are imported lazily, so ``import aotc.runtime`` works on a
machine that has only the IREE runtime (no compiler).
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_LAZY = {
    "jit": ("aotc.api", "jit"),
    "clear_caches": ("aotc.jit_cache", "clear_caches"),
    "vmap": ("aotc.vmapping", "vmap"),
    **{name: ("aotc.autodiff", name) for name in (
        "grad", "value_and_grad", "vjp", "jvp", "linearize", "float0")},
    **{name: ("aotc.jacobians", name) for name in ("jacrev", "jacfwd", "hessian")},
    **{name: ("aotc.custom_derivatives", name) for name in (
        "custom_vjp", "custom_jvp", "checkpoint", "remat")},
    "Lowered": ("aotc.api", "Lowered"),
    "Compiled": ("aotc.api", "Compiled"),
    "export": ("aotc.export", "export"),
    "Artifact": ("aotc.export", "Artifact"),
    "ShapeDtypeStruct": ("aotc.core", "ShapeDtypeStruct"),
    "CompileError": ("aotc.errors", "CompileError"),
    "AotcError": ("aotc.errors", "AotcError"),
    "TracerConversionError": ("aotc.errors", "TracerConversionError"),
    "UnsupportedOpError": ("aotc.errors", "UnsupportedOpError"),
    "UnsupportedDtypeError": ("aotc.errors", "UnsupportedDtypeError"),
    "TracingError": ("aotc.errors", "TracingError"),
    "ScalarOverflowError": ("aotc.errors", "ScalarOverflowError"),
    "DonationWarning": ("aotc.errors", "DonationWarning"),
    "DonationError": ("aotc.errors", "DonationError"),
    "device_put": ("aotc.runtime", "device_put"),
    "device_get": ("aotc.eager_values", "device_get"),
    "block_until_ready": ("aotc.eager_values", "block_until_ready"),
    "Array": ("aotc.runtime", "Array"),
}

_DIFFERENTIATION = ("aotc.autodiff", "aotc.jacobians", "aotc.custom_derivatives")

__all__ = sorted(_LAZY) + ["numpy", "lax", "nn", "random", "scipy", "runtime", "config",
                          "tree_util", "checkpoint_policies", "__version__"]


def __getattr__(name: str):
    if name in _LAZY:
        module, attr = _LAZY[name]
        if module in _DIFFERENTIATION:
            # the linalg factorizations and the ufuncs computed on bits get their
            # derivatives (custom_jvp rules, which the kernels and ops cannot import
            # themselves: they import them).
            importlib.import_module("aotc.linalg_derivatives")
            importlib.import_module("aotc.ufunc_derivatives")
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    if name in ("numpy", "lax", "nn", "random", "scipy", "runtime", "passes", "errors", "targets",
                "config", "tree_util", "checkpoint_policies"):
        return importlib.import_module(f"aotc.{name}")
    raise AttributeError(f"module 'aotc' has no attribute {name!r}")
