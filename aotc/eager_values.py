"""What crosses the eager boundary (aotc/eager.py, aotc/random_eager.py): static values as
cache keys, and host results as runtime Arrays that are not committed to a device."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import x64
from .errors import AotcError
from .runtime import tree
from .runtime.array import Array, mark_uncommitted
from .runtime.array import device_put as _device_put


def device_put(x: np.ndarray) -> Array:
    """A host result on the default device, not committed to it (runtime/array.py)."""
    return mark_uncommitted(_device_put(x))


def to_arrays(out: Any) -> Any:
    """numpy arrays among a result's leaves become runtime Arrays (as jit returns); with
    the option x64 off, 64-bit ones 32-bit (aotc/x64.py)."""
    narrow = None if x64.enabled() else x64.NARROW
    if type(out) is np.ndarray and out.dtype.kind in "biufc":
        return device_put(_narrowed(out, narrow))
    leaves, structure = tree.flatten(out)
    if not any(isinstance(x, (np.ndarray, np.generic)) for x in leaves):
        return out
    return tree.unflatten(structure, [
        device_put(_narrowed(np.asarray(x), narrow)) if isinstance(x, (np.ndarray, np.generic))
        and x.dtype.kind in "biufc" else x for x in leaves])


def _narrowed(x: np.ndarray, narrow: dict | None) -> np.ndarray:
    return x if narrow is None or x.dtype not in narrow else x.astype(narrow[x.dtype])


def uncommitted(out: Any) -> Any:
    """``out``'s Arrays marked as eager results."""
    if isinstance(out, Array):
        return mark_uncommitted(out)
    leaves, _ = tree.flatten(out)
    for x in leaves:
        if isinstance(x, Array):
            mark_uncommitted(x)
    return out


def static_key(x: Any) -> Any:
    """A hashable stand-in for a static leaf that tells apart what traces differently
    (``1`` from ``1.0`` and ``True``, ``0.0`` from ``-0.0``)."""
    kind = type(x)
    if kind is float:
        return (kind, x, math.copysign(1.0, x)) if x == x else (kind, "nan")
    if kind is slice:
        return (kind, static_key(x.start), static_key(x.stop), static_key(x.step))
    if isinstance(x, Array):
        x = np.asarray(x)
    if isinstance(x, (np.ndarray, np.generic)):
        return (np.ndarray, x.shape, x.dtype.str, np.ascontiguousarray(x).tobytes())
    try:
        hash(x)
    except TypeError:
        raise AotcError(
            f"an eager call got a {kind.__name__} where a static value (a number, shape, "
            f"axis, dtype or function) was expected; static values key the cache of "
            f"compiled ops and must be hashable. Pass a tuple instead of a list, or an array"
        ) from None
    return (kind, x)


def block_until_ready(x: Any) -> Any:
    """``jax.block_until_ready``: waits for every array of the pytree ``x`` and returns it
    (calls are synchronous: it checks they are alive)."""
    for leaf in tree.flatten(x)[0]:
        getattr(leaf, "block_until_ready", lambda: None)()
    return x


def device_get(x: Any) -> Any:
    """``jax.device_get``: the pytree ``x`` with its Arrays as numpy arrays."""
    leaves, structure = tree.flatten(x)
    return tree.unflatten(structure, [np.asarray(v) if isinstance(v, Array) else v
                                      for v in leaves])
