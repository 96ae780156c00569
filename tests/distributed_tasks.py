"""What the worker processes of ``test_distributed.py`` run. It imports only numpy and
the runtime, as a worker machine without the compiler would."""

from __future__ import annotations

import sys

import numpy as np

from aotc import runtime


class BlockCompiler:
    """Stands in for a worker without iree-base-compiler: importing it fails."""

    def find_spec(self, name, path=None, target=None):
        if name == "iree.compiler" or name.startswith("iree.compiler."):
            raise ImportError(f"{name} is not installed here (blocked by the test)")
        return None


def block_compiler() -> None:
    """A process pool's initializer: this worker cannot import the compiler."""
    sys.meta_path.insert(0, BlockCompiler())


def compiler_imported() -> bool:
    return any(name.startswith("iree.compiler") for name in sys.modules)


def run_block(block: np.ndarray, module: runtime.Module) -> np.ndarray:
    """One dask block through the artifact's ``mlp``."""
    return np.asarray(module.mlp(block))


def run_shipped(module: runtime.Module, function: runtime.Function, array: runtime.Array,
                block: np.ndarray) -> dict:
    """Calls a pickled module, function and array; reports what the worker saw."""
    by_module = np.asarray(module.mlp(block))
    by_function = np.asarray(function(block))
    return {
        "by_module": by_module,
        "by_function": by_function,
        "on_array": np.asarray(function(array)),
        "same_module": module["mlp"] is function,
        "devices": (module.device.uri, function._device.uri, array.device.uri),
        "where": module.where,
        "cache": runtime.unpickle_cache_info(),
        "compiler_imported": compiler_imported(),
    }
