"""jit's per-call fast path: the keys of calls whose trace is already compiled, and what
such a call runs.

A call's key holds what decides its trace and nothing else (docs/architecture.md,
"jit's per-call fast path keys on what decides the trace"): (shape, dtype) per array, the
type's name per Python bool, int or float (the runtime checks the value), the value of a
static argument; a call with keyword arguments or containers among its arguments (a
parameter dict) is flattened as the binding flattens it and keyed by its structure too
(``tree_key``). ``JittedFunction`` and ``Compiled`` (aotc/api.py) look
their calls up by it before binding arguments.
"""

from __future__ import annotations

from typing import Any, Callable

from . import tree_util, x64
from .signature import CallSignature, held_structure

# Python scalars in the fast path's key: a bool, int or float argument is a weak scalar
# whose abstract value its type alone decides (complex is left to the full binding: with
# x64 off it becomes a complex64 array before the call).
_SCALAR_KEYS = {bool: "bool", int: "int", float: "float"}


def key_with_scalars(args: tuple, static: frozenset | tuple) -> tuple | None:
    """The fast path's key of a call with Python scalars or static values among its
    arguments: (shape, dtype) per array, the type's name per scalar, the value of a
    static argument; None when an argument is none of these (a container: the full
    binding keys on its structure, ``tree_key``)."""
    key = []
    for i, a in enumerate(args):
        part = a if i in static else _leaf_key(a)
        if part is None and i not in static:
            return None
        key.append(part)
    return tuple(key)


def _leaf_key(a: Any):
    """An argument's part of a fast-path key: the type's name of a Python scalar, (shape,
    dtype) of an array; None for anything else."""
    kind = _SCALAR_KEYS.get(type(a))
    if kind is not None:
        return kind
    shape, dtype = getattr(a, "shape", None), getattr(a, "dtype", None)
    return None if shape is None or dtype is None else (shape, dtype)


def fast_call(call_flat: Callable, signature: CallSignature, args: tuple) -> Callable:
    """What the fast path calls with the dynamic arguments of calls like ``args``:
    ``call_flat``, or with x64 off and 64-bit arrays among them, ``call_flat`` of the
    arrays converted to the dtypes they were traced with."""
    if signature.x64 or not any(getattr(a, "dtype", None) in x64.NARROW for a in args):
        return call_flat
    from .signature import narrow_leaves

    avals = signature.avals
    return lambda leaves: call_flat(narrow_leaves(list(leaves), avals))


# Marks a fast-path key of a call flattened as a pytree.
_TREES = object()


def tree_key(args: tuple, kwargs: dict, static: frozenset,
             static_names: frozenset) -> tuple[tuple | None, list]:
    """(key, leaves) of a call with keyword arguments or containers, flattened as
    ``ArgumentBinder.bind`` flattens it (so ``leaves`` are what the compiled function
    takes): its structure, each leaf's part (``_leaf_key``) and the static values. The
    key is None when a leaf is neither an array nor a Python scalar."""
    dynamic = tuple(a for i, a in enumerate(args) if i not in static)
    statics = tuple(a for i, a in enumerate(args) if i in static)
    if kwargs and static_names:
        statics += tuple((k, kwargs[k]) for k in sorted(kwargs) if k in static_names)
        kwargs = {k: v for k, v in kwargs.items() if k not in static_names}
    leaves, spec = tree_util.tree_flatten((dynamic, kwargs))
    parts = []
    for leaf in leaves:
        part = _leaf_key(leaf)
        if part is None:
            return None, leaves
        parts.append(part)
    return (_TREES, spec, tuple(parts), statics), leaves


def held(key: tuple) -> tuple:
    """``key`` as the fast path's table keeps it: a pytree key's structure held as the
    signature caches hold theirs (``signature._Structure``, released at exit)."""
    if key and key[0] is _TREES:
        return (_TREES, held_structure(key[1]), *key[2:])
    return key
