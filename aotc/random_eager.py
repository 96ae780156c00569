"""The eager route of ``aotc.random``: draws of any shape without a compile per shape.

Element ``i`` (row-major) of every draw is a function of the key and the counter ``i``
only (the generator is counter-based, see aotc/random.py), so a draw of ``shape`` is a
draw of ``prod(shape)`` elements, reshaped:

- ``split`` and ``fold_in`` are the threefry hash words themselves: computed on the host
  by the same ``threefry2x32`` (its numpy word operations), bit for bit.
- ``bits``, ``uniform``, ``normal``, ``bernoulli`` and ``randint`` run one compiled
  program per sampler and static parameters (dtype, bounds, probability): the sampler
  traced for one element whose counter is an argument (``threefry.counting``), batched
  over a dynamic number of counters by ``aotc.vmap``. A script that draws weights of
  five shapes compiles ``normal`` once, where a compile per shape would cost ~0.5 s each.

Anything else (array-valued bounds or probabilities, ``permutation``, ``choice``, empty
or oversized draws, bad arguments) takes the general eager route: a program per call
signature, whose trace also reports argument errors.
"""

from __future__ import annotations

import inspect
import math
import threading
from typing import Any, Callable

import numpy as np

from .eager_values import device_put, static_key
from .ops.threefry import U32, counting, host_key_words
from .runtime.array import Array, mark_uncommitted, reshaped

# The samplers whose element i depends on the key and counter i alone, and the parameter
# that gives the draw's shape.
ELEMENTWISE = ("bits", "uniform", "normal", "bernoulli", "randint")

_programs: dict[tuple, Callable] = {}
_signatures: dict[Callable, inspect.Signature] = {}
_lock = threading.Lock()


def route(fn: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    """``aotc.random.<name>(*args, **kwargs)`` now, or ``NotImplemented`` to leave the call
    to the general eager route."""
    signature = _signatures.get(fn)
    if signature is None:
        signature = _signatures[fn] = inspect.signature(fn)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return NotImplemented
    bound.apply_defaults()
    params = dict(bound.arguments)
    key = _host_key(params.get("key"))
    if key is None:
        return NotImplemented
    if name == "split":
        num = params["num"]
        shape = tuple(num) if isinstance(num, (tuple, list)) else (num,)
        if not _valid_shape(shape):
            return NotImplemented
        counters = np.arange(math.prod(shape), dtype=U32)
        return device_put(host_key_words(key, counters).reshape(shape + (2,)))
    if name == "fold_in":
        data = params["data"]
        if isinstance(data, (bool, np.bool_)) or not isinstance(data, (int, np.integer)):
            return NotImplemented
        return device_put(host_key_words(key, np.uint32(int(data) & 0xFFFFFFFF)))
    if name in ELEMENTWISE:
        return _elementwise(fn, name, key, params)
    return NotImplemented


def _host_key(key: Any) -> np.ndarray | None:
    if isinstance(key, Array):
        key = key.to_host()
    if isinstance(key, np.ndarray) and key.shape == (2,) and key.dtype == U32:
        return key
    return None


def _valid_shape(shape: tuple) -> bool:
    return all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0
               for d in shape)


def _elementwise(fn: Callable, name: str, key: np.ndarray, params: dict) -> Any:
    shape = params.get("shape")
    if shape is None:  # bernoulli: p's shape
        shape = np.shape(params.get("p"))
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if not _valid_shape(shape):
        return NotImplemented
    count = math.prod(shape)
    if not 0 < count <= 2**32:
        return NotImplemented
    statics = {k: v for k, v in params.items() if k not in ("key", "shape")}
    for value in statics.values():
        if isinstance(value, (np.ndarray, Array)) and np.ndim(value) > 0:
            return NotImplemented  # per-element parameters: a program per shape
    cache_key = (name, tuple((k, static_key(v)) for k, v in sorted(statics.items())))
    program = _programs.get(cache_key)
    if program is None:
        with _lock:
            program = _programs.get(cache_key) or _compile(fn, name, statics)
            _programs[cache_key] = program
    drawn = program([key, np.arange(count, dtype=U32)])
    return mark_uncommitted(reshaped(drawn, shape))


def _compile(fn: Callable, name: str, statics: dict) -> Callable:
    """``flat(leaves)``: the sampler for one element, batched over a dynamic number of
    counters, compiled."""
    from .api import jit
    from .core import ShapeDtypeStruct
    from .vmapping import vmap

    def element(key, counter):
        with counting(counter):
            return fn(key, shape=(), **statics)

    element.__name__ = element.__qualname__ = f"random_{name}"
    program = jit(vmap(element, in_axes=(None, 0)))
    compiled = program.lower(ShapeDtypeStruct((2,), U32),
                             ShapeDtypeStruct((None,), U32)).compile()
    return compiled.call_flat
